//! A vendor tool's version, as its version output prints it.
//!
//! Terms:
//! - A **version** is the first dotted `N.N[.N]` in the output (`3.3.2`, `9.65`, `2.3`), kept as printed too.

use serde::Serialize;

/// A dotted version (`3.3.2`, `9.65`, `2.3`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// As printed.
    pub text: String,
}

impl Version {
    /// The first `N.N[.N]` in `s`.
    pub fn find(s: &str) -> Option<Version> {
        for (i, c) in s.char_indices() {
            if !c.is_ascii_digit()
                || (i > 0 && s[..i].ends_with(|p: char| p.is_ascii_digit() || p == '.'))
            {
                continue;
            }
            let rest = &s[i..];
            let end = rest
                .find(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
                .unwrap_or(rest.len());
            let text = rest[..end].trim_end_matches('.');
            let parts: Vec<&str> = text.split('.').collect();
            if parts.len() < 2 {
                continue;
            }
            let num = |k: usize| parts.get(k).and_then(|p| p.parse::<u32>().ok());
            if let (Some(major), Some(minor)) = (num(0), num(1)) {
                return Some(Version {
                    major,
                    minor,
                    patch: num(2).unwrap_or(0),
                    text: text.to_string(),
                });
            }
        }
        None
    }
}
