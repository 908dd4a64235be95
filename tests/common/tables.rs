//! Blank partition tables and bare entries for the tests of the layout code, shared by the unit tests of
//! `plan::edit` and `plan::custom` and by tests/hand_editor.rs and tests/sfdisk_interop.rs (`plan` and each
//! test file include this one file with `#[path]`; the includer has the `table` module in scope).
//!
//! Terms: a *blank* table has no partitions and the usable range a fresh table of its label has on a disk of
//! `bytes` bytes with `ss`-byte logical sectors (GPT: 128 entries of 128 bytes at both ends; dos: everything
//! after the MBR); a *bare* entry has a number, a place and a type, and nothing else (no GUID, name,
//! attribute or boot flag).
#![allow(dead_code)]

use super::table::{Label, PartKind, Partition, Table};

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

/// A bare GPT entry: partition `number` at `start`, `size` sectors, of type `ty` (a GUID, or an MBR byte
/// such as "83" for a dos layout).
pub fn entry(number: u32, start: u64, size: u64, ty: &str) -> Partition {
    Partition {
        number,
        start,
        size,
        type_code: ty.into(),
        type_name: String::new(),
        uuid: None,
        name: None,
        kind: PartKind::Gpt,
        attributes: 0,
        bootable: false,
        ebr_lba: None,
    }
}
