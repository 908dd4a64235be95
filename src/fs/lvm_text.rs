//! LVM2's metadata text: the volume group description each metadata area holds (lvm2 `lib/config/config.c`,
//! `lib/format_text/export.c`), read into a tree so that the used-block map can find the extents allocated on a PV.
//!
//! Terms:
//! - A **setting** is `name = value`; a **section** is `name { … }` holding settings and sections.
//! - A **value** is an integer, a float (kept as text), a quoted string (`\` escapes the next character) or a list
//!   `[v, v, …]` of values. `#` starts a comment to the end of the line.
//! - The text is bounded by its metadata area (at most [`MAX_TEXT`] bytes are read) and nesting by [`MAX_DEPTH`],
//!   so a damaged or hostile text costs time and memory in proportion to its size, and ends in an error, never a
//!   panic.
//!
//! Written by hand: no maintained crate reads LVM's configuration format.

/// The longest metadata text read (lvm2's default metadata area is 1 MiB; 16 MiB is far above any real VG).
pub const MAX_TEXT: usize = 16 << 20;

/// The deepest nesting of sections and lists accepted (real metadata nests 5 deep).
pub const MAX_DEPTH: usize = 32;

/// A value of the metadata text.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    /// A number with a fraction or exponent, as written.
    Float(String),
    Str(String),
    List(Vec<Value>),
    Section(Vec<(String, Value)>),
}

impl Value {
    /// The value named `name` in a section (the first one, as lvm2 reads duplicates).
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Section(items) => items.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A section's items (name, value); empty for other values.
    pub fn items(&self) -> &[(String, Value)] {
        match self {
            Value::Section(items) => items,
            _ => &[],
        }
    }

    /// The integer `name` of a section.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The string `name` of a section.
    pub fn str(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Name(String),
    Int(i64),
    Float(String),
    Str(String),
    Eq,
    Open,
    Close,
    ListOpen,
    ListClose,
    Comma,
}

/// Reads a whole metadata text (the top level is a section without braces).
pub fn parse(text: &[u8]) -> Result<Value, String> {
    if text.len() > MAX_TEXT {
        return Err(format!("metadata text of {} bytes is too long", text.len()));
    }
    let tokens = tokenize(text)?;
    let mut p = Parser { tokens, at: 0 };
    let top = p.items(0, false)?;
    Ok(Value::Section(top))
}

fn tokenize(text: &[u8]) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        match c {
            b' ' | b'\t' | b'\r' | b'\n' | 0 => i += 1,
            b'#' => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
            }
            b'=' | b'{' | b'}' | b'[' | b']' | b',' => {
                out.push(match c {
                    b'=' => Token::Eq,
                    b'{' => Token::Open,
                    b'}' => Token::Close,
                    b'[' => Token::ListOpen,
                    b']' => Token::ListClose,
                    _ => Token::Comma,
                });
                i += 1;
            }
            b'"' => {
                let (s, next) = string(text, i + 1)?;
                out.push(Token::Str(s));
                i = next;
            }
            _ => {
                let start = i;
                while i < text.len() && !b" \t\r\n\0#={}[],\"".contains(&text[i]) {
                    i += 1;
                }
                out.push(word(&text[start..i])?);
            }
        }
    }
    Ok(out)
}

/// A quoted string starting after its opening quote at `i`: the string and the index after its closing quote.
fn string(text: &[u8], mut i: usize) -> Result<(String, usize), String> {
    let mut s = Vec::new();
    while i < text.len() {
        match text[i] {
            b'"' => return Ok((String::from_utf8_lossy(&s).into_owned(), i + 1)),
            b'\\' if i + 1 < text.len() => {
                s.push(text[i + 1]);
                i += 2;
            }
            c => {
                s.push(c);
                i += 1;
            }
        }
    }
    Err("a quoted string has no end".into())
}

/// A bare word: an integer, a float or a name.
fn word(w: &[u8]) -> Result<Token, String> {
    let s = std::str::from_utf8(w).map_err(|_| "a name is not UTF-8".to_string())?;
    let numeric = s
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'-' || b == b'+');
    if numeric {
        if let Ok(i) = s.parse::<i64>() {
            return Ok(Token::Int(i));
        }
        if s.parse::<f64>().is_ok() {
            return Ok(Token::Float(s.to_string()));
        }
    }
    let name_ok = s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_.+-/".contains(&b));
    if !name_ok {
        return Err(format!("unexpected characters in {s:?}"));
    }
    Ok(Token::Name(s.to_string()))
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    /// Items up to the closing brace (`braced`) or the end of the text.
    fn items(&mut self, depth: usize, braced: bool) -> Result<Vec<(String, Value)>, String> {
        if depth > MAX_DEPTH {
            return Err("sections nest too deep".into());
        }
        let mut items = Vec::new();
        loop {
            let name = match self.next() {
                None if !braced => return Ok(items),
                None => return Err("a section has no closing brace".into()),
                Some(Token::Close) if braced => return Ok(items),
                Some(Token::Name(n)) => n,
                Some(t) => return Err(format!("expected a name, found {t:?}")),
            };
            let value = match self.next() {
                Some(Token::Open) => Value::Section(self.items(depth + 1, true)?),
                Some(Token::Eq) => self.value(depth + 1)?,
                t => return Err(format!("expected = or {{ after {name}, found {t:?}")),
            };
            items.push((name, value));
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("lists nest too deep".into());
        }
        match self.next() {
            Some(Token::Int(i)) => Ok(Value::Int(i)),
            Some(Token::Float(f)) => Ok(Value::Float(f)),
            Some(Token::Str(s)) => Ok(Value::Str(s)),
            Some(Token::ListOpen) => self.list(depth),
            t => Err(format!("expected a value, found {t:?}")),
        }
    }

    fn list(&mut self, depth: usize) -> Result<Value, String> {
        let mut out = Vec::new();
        if self.tokens.get(self.at) == Some(&Token::ListClose) {
            self.at += 1;
            return Ok(Value::List(out));
        }
        loop {
            out.push(self.value(depth + 1)?);
            match self.next() {
                Some(Token::Comma) => {}
                Some(Token::ListClose) => return Ok(Value::List(out)),
                t => return Err(format!("expected , or ] in a list, found {t:?}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const VG: &str = r#"vgq {
id = "i2x1VG-OW1H-eRON-xOzx-nfH8-a4A9-AsAqM3"
seqno = 4
status = ["RESIZEABLE", "READ", "WRITE"]
flags = []
extent_size = 2048
physical_volumes {
pv0 {
id = "94CJlU-S00m-pqw0-2oV7-hHev-8GnW-eEIUHW"
device = "/dev/loop1"	# a comment
pe_start = 2048
}
}
}
# Generated by LVM2
contents = "Text Format Volume Group"
version = 1
description = "a \"quoted\" word"
creation_time = 1795765258	# Fri Nov 27
ratio = 1.5e3
"#;

    #[test]
    fn reads_what_lvm_writes() {
        let v = parse(VG.as_bytes()).expect("parses");
        let vg = v.get("vgq").expect("the VG section");
        assert_eq!(vg.int("seqno"), Some(4));
        assert_eq!(vg.int("extent_size"), Some(2048));
        assert_eq!(
            vg.get("status"),
            Some(&Value::List(vec![
                Value::Str("RESIZEABLE".into()),
                Value::Str("READ".into()),
                Value::Str("WRITE".into())
            ]))
        );
        assert_eq!(vg.get("flags"), Some(&Value::List(vec![])));
        let pv0 = vg
            .get("physical_volumes")
            .and_then(|p| p.get("pv0"))
            .expect("pv0");
        assert_eq!(pv0.str("device"), Some("/dev/loop1"));
        assert_eq!(pv0.int("pe_start"), Some(2048));
        assert_eq!(v.str("description"), Some(r#"a "quoted" word"#));
        assert_eq!(v.get("ratio"), Some(&Value::Float("1.5e3".into())));
        assert_eq!(v.int("version"), Some(1));
    }

    #[test]
    fn damaged_texts_are_errors() {
        for bad in [
            "vg { a = 1",
            "vg { a = }",
            "a = [1, 2",
            "a = \"open",
            "= 3",
            "a 3",
            "a = [1 2]",
            "}",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad}");
        }
        let deep = "a { ".repeat(MAX_DEPTH + 2);
        assert!(parse(deep.as_bytes()).is_err());
        let deep_list = format!("a = {}", "[".repeat(MAX_DEPTH + 2));
        assert!(parse(deep_list.as_bytes()).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        /// Any bytes: an answer, never a panic; and a real text with one byte changed likewise.
        #[test]
        fn any_bytes_end_in_an_answer(b in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse(&b);
        }

        #[test]
        fn a_changed_byte_ends_in_an_answer(at in 0usize..VG.len(), byte in any::<u8>()) {
            let mut b = VG.as_bytes().to_vec();
            b[at] = byte;
            let _ = parse(&b);
        }
    }
}
