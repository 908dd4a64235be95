//! The editor's fields and flags: what an input field asks for, partition names and attribute bits as typed,
//! and the flags column.
//!
//! Terms:
//! - A **field** is one input of the editor (size, start, type, name, attribute bit); its **hint** names what
//!   may be typed for the table type.
//! - A GPT **name** is at most [`GPT_NAME_UNITS`] UTF-16 code units; a dos table has no names.

use crate::error::{Error, Result};
use crate::table::{Label, Partition};

/// The GPT attribute bits the editor toggles: (bit, name, only for Microsoft basic data).
pub const GPT_ATTRIBUTES: &[(u8, &str, bool)] = &[
    (0, "required (platform)", false),
    (1, "no block I/O protocol", false),
    (2, "legacy BIOS bootable", false),
    (60, "read-only", true),
    (62, "hidden", true),
    (63, "no automount", true),
];

/// Longest GPT partition name, in UTF-16 code units.
pub const GPT_NAME_UNITS: usize = 36;

/// What an editor's input field asks for (its hint names what may be typed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The size of a new partition, or a new size.
    Size,
    /// A new start.
    Start,
    Type,
    Name,
    Attribute,
}

impl Field {
    /// What may be typed in this field, for a table of `label`.
    pub fn hint(self, label: Label) -> String {
        match (self, label) {
            (Field::Size, _) => {
                "a size (+20G, 20GiB, 512MiB), a percentage of the free room (50%), or rest; it is rounded to the grain".into()
            }
            (Field::Start, _) => {
                "an offset from the disk's start (1GiB, 2048s); it moves up to the next grain boundary".into()
            }
            (Field::Type, label) => {
                let d = crate::table::driver(label);
                let aliases = super::preset::TYPES
                    .iter()
                    .filter(|t| d.type_code(Some(t.1), t.2).is_some())
                    .map(|t| t.0)
                    .collect::<Vec<_>>()
                    .join(", ");
                // What sfdisk's `type=` takes besides (the editor takes it too, `plan::edit`).
                let sfdisk = if d.has_logicals() {
                    "a bare hex byte (83, c, 7, 5 extended), L, S swap, E extended"
                } else {
                    "L, S swap, H home, U uefi, R raid, V lvm"
                };
                format!("{}; or as sfdisk takes it: {sfdisk}", d.type_prompt(&aliases))
            }
            (Field::Name, _) => format!(
                "at most {GPT_NAME_UNITS} UTF-16 units: one per character, two for an emoji (empty: no name)"
            ),
            (Field::Attribute, _) => format!(
                "the bit to toggle: {}",
                GPT_ATTRIBUTES
                    .iter()
                    .map(|(b, n, ms)| if *ms {
                        format!("{b} {n} (Microsoft basic data)")
                    } else {
                        format!("{b} {n}")
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// A GPT attribute bit as typed (see [`GPT_ATTRIBUTES`]).
pub fn attribute_bit(text: &str) -> Result<u8> {
    let t = text.trim();
    t.parse::<u8>()
        .ok()
        .filter(|b| GPT_ATTRIBUTES.iter().any(|a| a.0 == *b))
        .ok_or_else(|| {
            Error::usage(
                format!("'{t}' is not an attribute bit the editor sets"),
                "type 0, 1, 2, or for Microsoft basic data 60, 62 or 63",
            )
        })
}

/// The attributes of `p` in a few words ("boot", "ro hidden"), for a list.
pub fn flags(p: &Partition) -> String {
    let mut v: Vec<&str> = Vec::new();
    if p.bootable {
        v.push("boot");
    }
    for (bit, word) in [
        (0u8, "req"),
        (1, "noblk"),
        (2, "legacy-boot"),
        (60, "ro"),
        (62, "hidden"),
        (63, "noauto"),
    ] {
        if p.attributes & (1u64 << bit) != 0 {
            v.push(word);
        }
    }
    v.join(" ")
}

/// A GPT partition name as typed, if it fits the entry.
pub(super) fn check_name(name: &str) -> Result<String> {
    if name.chars().any(char::is_control) {
        return Err(Error::usage(
            "a partition name cannot hold control characters",
            "type letters, digits, spaces and punctuation",
        ));
    }
    let units = name.encode_utf16().count();
    if units > GPT_NAME_UNITS {
        return Err(Error::usage(
            format!("the name '{name}' is {units} UTF-16 units long; a GPT entry holds {GPT_NAME_UNITS}"),
            format!(
                "type a shorter name: at most {GPT_NAME_UNITS} UTF-16 units, where most characters take one and \
                 those outside the Basic Multilingual Plane (emoji, some CJK) take two"
            ),
        ));
    }
    Ok(name.to_string())
}
