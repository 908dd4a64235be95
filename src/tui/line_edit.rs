//! The one-line text editor of every typed field (a size, a start, a name, a confirmation): the text and a
//! **cursor** (a position between characters, 0 to the text's length, counted in characters). Keys:
//! Left/Right move the cursor, Home/End (also Ctrl-A/Ctrl-E) go to the ends, Backspace deletes before it and
//! Delete at it, Ctrl-U clears the line, Ctrl-W deletes the word before the cursor and Ctrl-K the rest of the
//! line (readline's keys). A key typed with Ctrl reaches a field as its **control character** (Ctrl-U is
//! U+0015, as a terminal in raw mode sends it; the app translates crossterm's key events so), so a letter
//! typed with Ctrl never inserts the letter. The **window** is the part of a long text shown in a given width
//! around the cursor, each cut end marked `…`.

use crossterm::event::KeyCode;

/// The longest text a field takes, in characters.
pub const MAX_CHARS: usize = 128;

/// A Ctrl+letter key as its control character (Ctrl-A = U+0001 … Ctrl-Z = U+001A).
pub const fn ctrl(letter: char) -> char {
    ((letter as u8) & 0x1f) as char
}

/// A field's text and cursor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEdit {
    text: String,
    /// Characters before the cursor.
    cursor: usize,
}

impl LineEdit {
    /// A field holding `text`, the cursor at its end.
    pub fn new(text: &str) -> Self {
        let text: String = text.chars().take(MAX_CHARS).collect();
        let cursor = text.chars().count();
        LineEdit { text, cursor }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor: how many characters are before it.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    fn len(&self) -> usize {
        self.text.chars().count()
    }

    /// The byte offset of character `i` (the text's length past the end).
    fn byte(&self, i: usize) -> usize {
        self.text
            .char_indices()
            .nth(i)
            .map_or(self.text.len(), |(b, _)| b)
    }

    /// Removes the characters from `a` to `b` (character positions, `a <= b`) and puts the cursor at `a`.
    fn remove(&mut self, a: usize, b: usize) {
        let (x, y) = (self.byte(a), self.byte(b));
        self.text.replace_range(x..y, "");
        self.cursor = a;
    }

    /// An editing key; false for a key that does not edit (Enter, Esc, Up, …), which the field's owner takes.
    pub fn key(&mut self, code: KeyCode) -> bool {
        let n = self.len();
        match code {
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(n),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = n,
            KeyCode::Char(c) if c == ctrl('a') => self.cursor = 0,
            KeyCode::Char(c) if c == ctrl('e') => self.cursor = n,
            KeyCode::Backspace if self.cursor > 0 => self.remove(self.cursor - 1, self.cursor),
            KeyCode::Delete if self.cursor < n => self.remove(self.cursor, self.cursor + 1),
            KeyCode::Backspace | KeyCode::Delete => {}
            KeyCode::Char(c) if c == ctrl('u') => self.remove(0, n),
            KeyCode::Char(c) if c == ctrl('k') => self.remove(self.cursor, n),
            KeyCode::Char(c) if c == ctrl('w') => {
                let before: Vec<char> = self.text.chars().take(self.cursor).collect();
                let mut at = before.len();
                while at > 0 && before[at - 1].is_whitespace() {
                    at -= 1;
                }
                while at > 0 && !before[at - 1].is_whitespace() {
                    at -= 1;
                }
                self.remove(at, self.cursor);
            }
            // Any other control character (another Ctrl+letter) is not text.
            KeyCode::Char(c) if c.is_control() => {}
            KeyCode::Char(c) => {
                if n < MAX_CHARS {
                    let at = self.byte(self.cursor);
                    self.text.insert(at, c);
                    self.cursor += 1;
                }
            }
            _ => return false,
        }
        true
    }

    /// The window of the text in `width` cells (at least 3) and the cursor's column in it: the cursor is
    /// always inside it (one cell past the text when it is at the end), and a cut end shows `…`.
    pub fn window(&self, width: usize) -> (String, usize) {
        let width = width.max(3);
        let chars: Vec<char> = self.text.chars().collect();
        let n = chars.len();
        // Cells 0..=n: the text and the end position.
        let start = if n < width {
            0
        } else {
            (self.cursor + 2).saturating_sub(width).min(n + 1 - width)
        };
        let end = (start + width).min(n);
        let mut shown: Vec<char> = chars[start..end].to_vec();
        if start > 0 {
            shown[0] = '…';
        }
        if end < n && end > start {
            let last = shown.len() - 1;
            if start + last != self.cursor {
                shown[last] = '…';
            }
        }
        (shown.into_iter().collect(), self.cursor - start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(keys: &[KeyCode]) -> LineEdit {
        let mut l = LineEdit::default();
        for k in keys {
            l.key(*k);
        }
        l
    }

    fn chars(s: &str) -> Vec<KeyCode> {
        s.chars().map(KeyCode::Char).collect()
    }

    /// Left/Right/Home/End move the cursor and typing inserts there; Backspace and Delete delete before and at
    /// it; Ctrl-U clears, Ctrl-W takes the word before the cursor, Ctrl-K the rest; another Ctrl+letter types
    /// nothing.
    #[test]
    fn the_cursor_moves_and_the_keys_edit_at_it() {
        let mut l = typed(&chars("1023M"));
        assert_eq!((l.text(), l.cursor()), ("1023M", 5));
        l.key(KeyCode::Left);
        l.key(KeyCode::Backspace);
        l.key(KeyCode::Backspace);
        l.key(KeyCode::Char('5'));
        assert_eq!((l.text(), l.cursor()), ("105M", 3));
        l.key(KeyCode::Home);
        l.key(KeyCode::Delete);
        l.key(KeyCode::Char('2'));
        assert_eq!((l.text(), l.cursor()), ("205M", 1));
        l.key(KeyCode::End);
        l.key(KeyCode::Delete);
        l.key(KeyCode::Right);
        assert_eq!((l.text(), l.cursor()), ("205M", 4));
        l.key(KeyCode::Char(ctrl('u')));
        assert_eq!((l.text(), l.cursor()), ("", 0));
        let mut l = typed(&chars("sdb  DESTROY"));
        l.key(KeyCode::Char(ctrl('w')));
        assert_eq!((l.text(), l.cursor()), ("sdb  ", 5));
        l.key(KeyCode::Char(ctrl('w')));
        assert_eq!(l.text(), "");
        let mut l = typed(&chars("abc def"));
        for _ in 0..4 {
            l.key(KeyCode::Left);
        }
        l.key(KeyCode::Char(ctrl('w')));
        assert_eq!((l.text(), l.cursor()), (" def", 0));
        l.key(KeyCode::Char(ctrl('e')));
        l.key(KeyCode::Char(ctrl('a')));
        l.key(KeyCode::Char(ctrl('k')));
        assert_eq!(l.text(), "");
        let mut l = typed(&chars("x"));
        for c in ['b', 'q', 'z'] {
            assert!(l.key(KeyCode::Char(ctrl(c))));
        }
        assert_eq!(l.text(), "x", "a Ctrl+letter types nothing");
        assert!(!l.key(KeyCode::Enter) && !l.key(KeyCode::Esc));
        // Multi-byte characters are edited by character.
        let mut l = typed(&chars("äöü"));
        l.key(KeyCode::Left);
        l.key(KeyCode::Backspace);
        assert_eq!((l.text(), l.cursor()), ("äü", 1));
    }

    /// A text wider than its window shows the part around the cursor, each cut end marked `…`.
    #[test]
    fn the_window_follows_the_cursor() {
        let mut l = LineEdit::new("0123456789");
        assert_eq!(l.window(20), ("0123456789".into(), 10));
        assert_eq!(l.window(6), ("…6789".into(), 5));
        l.key(KeyCode::Home);
        assert_eq!(l.window(6), ("01234…".into(), 0));
        for _ in 0..7 {
            l.key(KeyCode::Right);
        }
        let (shown, col) = l.window(6);
        assert_eq!(shown.chars().nth(col), Some('7'), "{shown} {col}");
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
    }
}
