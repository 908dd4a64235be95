//! The table as `sfdisk -d` (util-linux 2.38) prints it. Terms, as sfdisk prints them: the label, label-id,
//! device (the path as given), `unit: sectors`, for a GPT first-lba, last-lba and (when not 128) table-length,
//! then sector-size; a blank line before the partition lines (none when there is no partition); per entry in
//! number order `NAME : start=%12u, size=%12u, type=T[, uuid=U][, name="N"][, attrs="A"][, bootable]`, where
//! NAME is the device path with the number appended (with a `p` when the path ends in a digit), T a GPT type
//! GUID or the MBR type in lower-case hex without a prefix, N the name with every byte outside printable ASCII,
//! `"` and `\` as `\xNN`, and A the attribute names sfdisk knows (`RequiredPartition`, `NoBlockIOProtocol`,
//! `LegacyBIOSBootable`, then the type-specific bits 48–63 as `GUID:48,60`; other bits are not named, so a
//! partition with only those prints `attrs=""`, as sfdisk does).

use super::super::{Label, Partition, Table};

/// The name sfdisk gives partition `n` of `device`: `/dev/sda1`, `/dev/loop0p1`, `disk.img1`.
pub fn part_name(device: &str, n: u32) -> String {
    if device.chars().last().is_some_and(|c| c.is_ascii_digit()) {
        format!("{device}p{n}")
    } else {
        format!("{device}{n}")
    }
}

/// A GPT name as sfdisk quotes it.
pub(super) fn quote_name(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        if b == b' ' || (b.is_ascii_graphic() && b != b'"' && b != b'\\') {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// GPT attribute bits as sfdisk names them; `None` when none is set (bits sfdisk has no name for leave the
/// list empty: `attrs=""`).
pub(super) fn attrs_string(bits: u64) -> Option<String> {
    let mut words = Vec::new();
    for (bit, name) in [
        (0, "RequiredPartition"),
        (1, "NoBlockIOProtocol"),
        (2, "LegacyBIOSBootable"),
    ] {
        if bits & (1 << bit) != 0 {
            words.push(name.to_string());
        }
    }
    let guid: Vec<String> = (48..64)
        .filter(|b| bits & (1u64 << b) != 0)
        .map(|b: u32| b.to_string())
        .collect();
    if !guid.is_empty() {
        words.push(format!("GUID:{}", guid.join(",")));
    }
    (bits != 0).then(|| words.join(" "))
}

/// One partition line of the dump.
fn part_line(label: Label, p: &Partition, device: &str) -> String {
    let ty = match label {
        // A foreign table's type is listed as read (afdisk never dumps one: no `Table` holds a foreign label).
        Label::Gpt | Label::Foreign(_) => p.type_code.clone(),
        Label::Dos => {
            let h = p.type_code.trim_start_matches("0x");
            u8::from_str_radix(h, 16)
                .map(|b| format!("{b:x}"))
                .unwrap_or_else(|_| h.to_string())
        }
    };
    let mut line = format!(
        "{} : start={:>12}, size={:>12}, type={ty}",
        part_name(device, p.number),
        p.start,
        p.size
    );
    if let Some(u) = &p.uuid {
        line.push_str(&format!(", uuid={u}"));
    }
    if let Some(n) = p.name.as_deref().filter(|n| !n.is_empty()) {
        line.push_str(&format!(", name=\"{}\"", quote_name(n)));
    }
    if let Some(a) = attrs_string(p.attributes) {
        line.push_str(&format!(", attrs=\"{a}\""));
    }
    if p.bootable {
        line.push_str(", bootable");
    }
    line
}

/// The table as `sfdisk -d DEVICE` prints it (`device` as the user named it).
pub fn dump(table: &Table, parts: &[Partition], device: &str) -> String {
    let mut out = String::new();
    out.push_str(&format!("label: {}\n", table.label.as_str()));
    out.push_str(&format!("label-id: {}\n", table.id));
    out.push_str(&format!("device: {device}\n"));
    out.push_str("unit: sectors\n");
    if table.label == Label::Gpt {
        out.push_str(&format!("first-lba: {}\n", table.first_usable));
        out.push_str(&format!("last-lba: {}\n", table.last_usable));
        if table.max_partitions != 128 {
            out.push_str(&format!("table-length: {}\n", table.max_partitions));
        }
    }
    out.push_str(&format!("sector-size: {}\n", table.sector_size));
    // sfdisk prints the blank line that separates the header from the partitions only when there are some.
    if !parts.is_empty() {
        out.push('\n');
    }
    let mut sorted: Vec<&Partition> = parts.iter().collect();
    sorted.sort_by_key(|p| p.number);
    for p in sorted {
        out.push_str(&part_line(table.label, p, device));
        out.push('\n');
    }
    out
}
