//! Blank partition tables for the hand editor's tests, shared by the unit tests of `plan::edit` and
//! tests/adversarial_edit.rs (both include this one file with `#[path]`; the includer has `Label` and `Table`
//! in scope).
//!
//! Terms: a *blank* table has no partitions and the usable range a fresh table of its label has on a disk of
//! `bytes` bytes with `ss`-byte logical sectors (GPT: 128 entries of 128 bytes at both ends; dos: everything
//! after the MBR).
#![allow(dead_code)]

use super::{Label, Table};

/// A blank GPT on a disk of `bytes` bytes with `ss`-byte sectors.
pub fn gpt(ss: u64, bytes: u64) -> Table {
    let total = bytes / ss;
    let arr = (128 * 128u64).div_ceil(ss);
    Table {
        label: Label::Gpt,
        sector_size: ss,
        id: "00000000-0000-0000-0000-000000000001".into(),
        first_usable: 2 + arr,
        last_usable: total - 2 - arr,
        header_used: None,
        max_partitions: 128,
    }
}

/// A blank dos (MBR) table on a disk of `bytes` bytes with `ss`-byte sectors.
pub fn dos(ss: u64, bytes: u64) -> Table {
    Table {
        label: Label::Dos,
        sector_size: ss,
        id: "0x12345678".into(),
        first_usable: 1,
        last_usable: bytes / ss - 1,
        header_used: None,
        max_partitions: 4,
    }
}
