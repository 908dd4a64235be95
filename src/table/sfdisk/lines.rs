//! Reading a script line by line (see the parent module for the terms). Terms: a *header line* is `key: value`
//! before the first partition line; a *partition line* is either `key=value` fields, perhaps after a device
//! name and `:`, or the positional form `start, size, type, bootable`. Each line is handled as it is read and
//! dropped; only the headers and at most the table's capacity of entries are kept.

use std::io::BufRead;

use super::super::Label;
use super::values::{amount, fields, number_of, parse_attrs, unquote_name};
use super::{at, Amount, Entry, Script};
use crate::error::{Error, Result};

/// The longest line (in bytes, without its newline) that sfdisk reads: it reads a line with `fgets` into an
/// 8 KiB buffer and refuses a line that does not fit ("unsupported command").
pub const MAX_LINE: usize = 8190;

/// Reads a script held in memory (`file` names it in messages). Errors carry the line number, the key and the
/// fix.
pub fn parse(text: &str, file: &str) -> Result<Script> {
    parse_reader(text.as_bytes(), file)
}

/// Reads a script from `r`, one line at a time (see the module doc): linear in its size, and refusing a line
/// longer than [`MAX_LINE`], a line that is not UTF-8 or holds a NUL byte, and a partition line past the
/// table's capacity as soon as it is read.
pub fn parse_reader<R: BufRead>(mut r: R, file: &str) -> Result<Script> {
    let mut sc = Script {
        file: file.to_string(),
        ..Default::default()
    };
    let mut buf = Vec::with_capacity(256);
    let mut line = 0usize;
    loop {
        buf.clear();
        let n = std::io::Read::take(&mut r, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| {
                Error::usage(
                    format!("cannot read the sfdisk script {file}: {e}"),
                    "give a readable file (what `sfdisk -d` or `afdisk dump` prints)",
                )
            })?;
        if n == 0 {
            break;
        }
        line += 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
        } else if buf.len() > MAX_LINE {
            return Err(at(
                file,
                line,
                format!("the line is longer than {MAX_LINE} bytes (sfdisk refuses it: \"unsupported command\")"),
                "give an sfdisk script (what `sfdisk -d` prints): one short line per header and partition",
            ));
        }
        let text = std::str::from_utf8(&buf).map_err(|_| {
            at(
                file,
                line,
                "the line is not UTF-8 text".into(),
                "give an sfdisk script (what `sfdisk -d` prints); write bytes of a name as \\xNN",
            )
        })?;
        if text.contains('\0') {
            return Err(at(
                file,
                line,
                "the line holds a NUL byte (sfdisk refuses it: \"unsupported command\")".into(),
                "remove the NUL byte; write bytes of a name as \\xNN",
            ));
        }
        one_line(&mut sc, line, text.trim())?;
    }
    Ok(sc)
}

/// Handles one trimmed line of the script.
fn one_line(sc: &mut Script, line: usize, s: &str) -> Result<()> {
    if s.is_empty() || s.starts_with('#') {
        return Ok(());
    }
    let is_header = sc.entries.is_empty()
        && !s.contains('=')
        && s.find(':').is_some_and(|p| p > 0 && p + 1 < s.len());
    if is_header {
        let (k, v) = s.split_once(':').unwrap_or((s, ""));
        return header(sc, line, k.trim(), v.trim());
    }
    let file = sc.file.as_str();
    let Some(e) = entry(file, line, s)? else {
        return Ok(());
    };
    if sc.entries.len() >= sc.capacity() {
        return Err(too_many(sc, line));
    }
    sc.entries.push(e);
    Ok(())
}

/// The refusal of a partition line past the table's capacity.
fn too_many(sc: &Script, line: usize) -> Error {
    let cap = sc.capacity();
    let (what, fix) = match sc.label {
        Some(Label::Dos) => (
            format!(
                "a dos table holds at most {cap} partitions (4 primary and 56 logical, as libfdisk) and this is \
                 partition line {} (sfdisk refuses it: \"Failed to add #61 partition\")",
                cap + 1
            ),
            "use label: gpt for more partitions, or remove lines".to_string(),
        ),
        _ => (
            format!(
                "a GPT of {cap} entries holds at most {cap} partitions and this is partition line {} (sfdisk \
                 would write the first {cap} and drop the rest with \"All partitions used.\")",
                cap + 1
            ),
            format!(
                "remove the partition lines past the {cap}th, or give a larger table-length: header (at most \
                 4096) before them"
            ),
        ),
    };
    at(&sc.file, line, what, &fix)
}

/// One header line.
fn header(sc: &mut Script, line: usize, k: &str, v: &str) -> Result<()> {
    let file = sc.file.clone();
    let num = |what: &str| -> Result<u64> {
        v.parse().map_err(|_| {
            at(
                &file,
                line,
                format!("{what}: '{v}' is not a number"),
                "give a whole number",
            )
        })
    };
    match k.to_ascii_lowercase().as_str() {
        "label" => sc.label = Some(label(&file, line, v)?),
        "label-id" => {
            sc.label_id = Some(v.to_string());
            sc.label_id_line = line;
        }
        "device" => sc.device = Some(v.to_string()),
        "unit" if v == "sectors" => {}
        "unit" => {
            return Err(at(
                &file,
                line,
                format!("unit: '{v}' is not supported"),
                "use unit: sectors (the only unit sfdisk accepts)",
            ))
        }
        "first-lba" => {
            sc.first_lba = Some(num("first-lba")?);
            sc.range_line = line;
        }
        "last-lba" => {
            sc.last_lba = Some(num("last-lba")?);
            sc.range_line = line;
        }
        "table-length" => sc.table_length = Some(table_length(&file, line, num("table-length")?)?),
        "sector-size" => sc.sector_size = Some(sector_size(&file, line, num("sector-size")?)?),
        "grain" => {
            sc.grain = Some(grain(&file, line, v)?);
            sc.grain_line = line;
        }
        _ => {
            return Err(at(
                &file,
                line,
                format!("unknown header '{k}'"),
                "headers are label, label-id, device, unit, first-lba, last-lba, table-length, sector-size and \
                 grain; partition lines use key=value",
            ))
        }
    }
    Ok(())
}

/// `label:` — sfdisk reads the label's name in any case (`label: DOS`).
fn label(file: &str, line: usize, v: &str) -> Result<Label> {
    match v.to_ascii_lowercase().as_str() {
        "gpt" => Ok(Label::Gpt),
        "dos" | "mbr" => Ok(Label::Dos),
        _ => Err(at(
            file,
            line,
            format!("label: '{v}' is not a table type afdisk writes"),
            "use label: gpt or label: dos",
        )),
    }
}

/// `table-length:` — sfdisk refuses 0 ("out of range") and an array larger than the disk; 4096 entries
/// (512 KiB) is as far as afdisk goes.
fn table_length(file: &str, line: usize, n: u64) -> Result<u32> {
    match u32::try_from(n) {
        Ok(n) if (1..=4096).contains(&n) => Ok(n),
        _ => Err(at(
            file,
            line,
            format!("table-length: {n} is not a GPT entry count afdisk writes"),
            "give 128 (the usual count), at most 4096, or leave the line out",
        )),
    }
}

fn sector_size(file: &str, line: usize, n: u64) -> Result<u64> {
    if n.is_power_of_two() && (512..=65536).contains(&n) {
        return Ok(n);
    }
    Err(at(
        file,
        line,
        format!("sector-size: {n} is not a sector size"),
        "use 512 or 4096",
    ))
}

/// `grain:` in bytes. sfdisk refuses a grain that is not a whole number of sectors ("Failed to apply script
/// headers"); every sector size is a multiple of 512, so one that is not a multiple of 512 is refused here, the
/// rest when the device's sector size is known.
fn grain(file: &str, line: usize, v: &str) -> Result<u64> {
    let g = match super::values::strtosize(v) {
        Some((n, _)) => n,
        None => crate::units::parse_size(v)
            .map_err(|e| at(file, line, format!("grain: {}", e.problem), &e.fix))?,
    };
    if g == 0 || g % 512 != 0 {
        return Err(at(
            file,
            line,
            format!("grain: {v} is not a whole number of sectors (sfdisk refuses it too)"),
            "give a grain such as 1MiB (a multiple of the sector size), or leave the line out",
        ));
    }
    Ok(g)
}

/// One partition line; `None` for an empty slot (`start=0, size=0`, as old dumps list unused entries).
fn entry(file: &str, line: usize, s: &str) -> Result<Option<Entry>> {
    let mut e = Entry {
        line,
        ..Default::default()
    };
    if s.contains('=') {
        // "[DEVICE :] key=value ..."
        let first_eq = s.find('=').unwrap_or(s.len());
        let body = match s[..first_eq].rfind(':') {
            Some(c) => {
                let dev = s[..c].trim();
                e.number = number_of(dev);
                if e.number.is_none() && !dev.is_empty() {
                    let shown: String = dev.chars().flat_map(char::escape_debug).take(60).collect();
                    return Err(at(
                        file,
                        line,
                        format!("'{shown}' names no partition number"),
                        "write the partition's device name (disk.img5 :) or leave it out",
                    ));
                }
                &s[c + 1..]
            }
            None => s,
        };
        for (k, v) in fields(file, line, body)? {
            key_value(file, line, &mut e, &k, v)?;
        }
    } else {
        positional(file, line, &mut e, s)?;
    }
    let zero = Some(Amount::Sectors(0));
    Ok((e.start != zero || e.size != zero).then_some(e))
}

/// One `key=value` field of a partition line.
fn key_value(file: &str, line: usize, e: &mut Entry, k: &str, v: Option<String>) -> Result<()> {
    let need = |v: Option<String>| {
        v.ok_or_else(|| {
            at(
                file,
                line,
                format!("'{k}' needs a value ({k}=…)"),
                "write key=value",
            )
        })
    };
    let place = |v: &str, key: &str| -> Result<Option<Amount>> {
        if v == "+" || v == "-" || v.is_empty() {
            return Ok(None);
        }
        amount(file, line, key, v).map(Some)
    };
    match k.to_ascii_lowercase().as_str() {
        "start" => e.start = place(&need(v)?, "start")?,
        "size" => e.size = place(&need(v)?, "size")?,
        "type" | "id" => e.type_spec = Some(need(v)?),
        "uuid" => e.uuid = Some(need(v)?),
        "name" => e.name = Some(unquote_name(file, line, &need(v)?)?),
        "attrs" => e.attrs = Some(parse_attrs(file, line, &need(v)?)?),
        "bootable" => e.bootable = true,
        _ => {
            let shown: String = k.chars().flat_map(char::escape_debug).take(40).collect();
            return Err(at(
                file,
                line,
                format!("unknown key '{shown}'"),
                "partition keys are start, size, type, uuid, name, attrs and bootable",
            ));
        }
    }
    Ok(())
}

/// The positional form: start, size, type, bootable.
fn positional(file: &str, line: usize, e: &mut Entry, s: &str) -> Result<()> {
    let items: Vec<&str> = if s.contains(',') || s.contains(';') {
        s.split([',', ';']).map(str::trim).collect()
    } else {
        s.split_whitespace().collect()
    };
    for (k, v) in items.iter().enumerate() {
        if v.is_empty() {
            continue;
        }
        match (k, *v) {
            (0 | 1, "+" | "-") => {}
            (0, v) => e.start = Some(amount(file, line, "start", v)?),
            (1, v) => e.size = Some(amount(file, line, "size", v)?),
            (2, v) => e.type_spec = Some(v.to_string()),
            (3, "*") => e.bootable = true,
            (3, "-") => {}
            (3, v) => {
                let shown: String = v.chars().flat_map(char::escape_debug).take(40).collect();
                return Err(at(
                    file,
                    line,
                    format!("the fourth field '{shown}' is not * (bootable) or -"),
                    "write * to mark the partition bootable, - or nothing otherwise",
                ));
            }
            (_, v) => {
                let shown: String = v.chars().flat_map(char::escape_debug).take(40).collect();
                return Err(at(
                    file,
                    line,
                    format!("too many fields ('{shown}')"),
                    "the short form is: start, size, type, bootable",
                ));
            }
        }
    }
    Ok(())
}
