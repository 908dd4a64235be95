//! The type picker: a list of the partition types a table type takes, filtered as one types (cfdisk's
//! "Select partition type" list, with gdisk's search). Nothing here checks a type: what is picked is handed to
//! the editor, which accepts it or says why not in the library's words.
//!
//! Terms:
//! - an **item** is one type: the text handed to the editor (a GPT type GUID, an MBR type byte `0x0c`), the
//!   name the library gives it (`table::types`), and its aliases (`plan::preset::TYPES`);
//! - the **filter** is what has been typed: an item matches when its code, name or an alias contains every
//!   word of it (case ignored); an MBR type byte typed bare (`c`, `0c`, `0x0c`) matches its code exactly
//!   first, then the item the editor itself reads the filter as (its **reading**: sfdisk's shortcuts such as
//!   `uefi`, `U`, `L`, a bare byte `83`), so that what Enter would give is always listed;
//! - **picked** is what Enter hands back: the selected match, or the typed text itself when nothing matches
//!   (a GUID not in the list, an alias the editor knows), as sfdisk's `type=` takes it.

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, List, ListItem, ListState, Paragraph};
use ratatui::Frame;

use afdisk::plan::edit::{Editor, Op};
use afdisk::table::Label;

use super::dialog::{centred, Styles};

/// One type of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What the editor is given.
    pub code: String,
    /// The library's name for it.
    pub name: String,
    /// Its aliases, space separated.
    pub aliases: String,
}

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    Open,
    Cancelled,
    Picked(String),
}

/// The open picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypePicker {
    pub title: String,
    pub items: Vec<Item>,
    pub filter: String,
    /// Indices into `items` of the matches, in list order.
    pub matches: Vec<usize>,
    /// The selected match (an index into `matches`).
    pub selected: usize,
    /// Why the editor refused the type last picked: shown under the search line while the list stays open.
    pub error: Option<String>,
    /// A copy of the editor and the partition whose type is picked: what it reads the filter as (the reading).
    reader: Option<(Editor, u32)>,
    /// The rows the list showed when last drawn: what PgUp/PgDn move by (10 before the first draw).
    pub page: std::cell::Cell<usize>,
}

/// One of the presets' type aliases: (alias, GPT type GUID, MBR type byte).
type PresetType = (&'static str, &'static str, Option<u8>);

/// The types a table of `label` takes: every type its driver names, in the driver's order, then the presets'
/// types it has a code for that the driver does not name; each with the presets' aliases for it.
pub fn items(label: Label) -> Vec<Item> {
    let driver = afdisk::table::driver(label);
    // (alias, this table's code) for every preset type this table has a code for.
    let coded: Vec<(&str, String, String)> = afdisk::plan::preset::TYPES
        .iter()
        .filter_map(|t: &PresetType| {
            let (code, name) = driver.type_code(Some(t.1), t.2)?;
            Some((t.0, code, name))
        })
        .collect();
    let aliases = |code: &str| {
        coded
            .iter()
            .filter(|c| c.1.eq_ignore_ascii_case(code))
            .map(|c| c.0)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut items: Vec<Item> = driver
        .types()
        .into_iter()
        .map(|(code, name)| Item {
            aliases: aliases(&code),
            code,
            name,
        })
        .collect();
    for (_, code, name) in &coded {
        if !items.iter().any(|i| i.code.eq_ignore_ascii_case(code)) {
            items.push(Item {
                aliases: aliases(code),
                code: code.clone(),
                // A code the library has no name for is known by its alias only.
                name: if name == "unknown" {
                    String::new()
                } else {
                    name.clone()
                },
            });
        }
    }
    items
}

/// An MBR type byte as typed (`c`, `0c`, `0x0c`, `83`), or `None`.
fn type_byte(s: &str) -> Option<u8> {
    let h = s.strip_prefix("0x").unwrap_or(s);
    (!h.is_empty() && h.len() <= 2)
        .then(|| u8::from_str_radix(h, 16).ok())
        .flatten()
}

impl TypePicker {
    /// A picker over `label`'s types, opened on the type `current` (a code or a name) when it is listed.
    pub fn new(title: impl Into<String>, label: Label, current: &str) -> Self {
        let mut p = TypePicker {
            title: title.into(),
            items: items(label),
            filter: String::new(),
            matches: Vec::new(),
            selected: 0,
            error: None,
            reader: None,
            page: std::cell::Cell::new(10),
        };
        p.refilter();
        let cur = current.to_ascii_lowercase();
        if let Some(i) = p
            .items
            .iter()
            .position(|t| t.code.to_ascii_lowercase() == cur || t.name.to_ascii_lowercase() == cur)
        {
            p.selected = i;
        }
        p
    }

    /// The picker of partition `number`'s type in `editor`: what the editor reads the filter as is listed
    /// (first after an exact type byte), so an alias it takes is never "no match".
    pub fn reading_with(mut self, editor: &Editor, number: u32) -> Self {
        // Opened with nothing typed: no reading yet, the list as it is (on the current type).
        self.reader = Some((editor.clone(), number));
        self
    }

    /// The item the editor reads the filter as (a copy of it takes the type), if it is listed.
    fn reading(&self) -> Option<usize> {
        let (editor, number) = self.reader.as_ref()?;
        let spec = self.filter.trim();
        if spec.is_empty() {
            return None;
        }
        let mut copy = editor.clone();
        copy.apply(&Op::SetType {
            number: *number,
            type_spec: spec.to_string(),
        })
        .ok()?;
        let code = copy.partition(*number)?.type_code.clone();
        self.items
            .iter()
            .position(|t| t.code.eq_ignore_ascii_case(&code))
    }

    fn matches_filter(&self, t: &Item) -> bool {
        let hay = format!("{} {} {}", t.code, t.name, t.aliases).to_ascii_lowercase();
        self.filter
            .to_ascii_lowercase()
            .split_whitespace()
            .all(|w| hay.contains(w))
    }

    /// The matches of the filter; an exact type byte first, then the editor's reading of it.
    fn refilter(&mut self) {
        let exact = type_byte(&self.filter.trim().to_ascii_lowercase())
            .map(|b| format!("{b:#04x}"))
            .and_then(|c| self.items.iter().position(|t| t.code == c));
        let mut m: Vec<usize> = exact.into_iter().collect();
        m.extend(self.reading().filter(|r| !m.contains(r)));
        let first = m.clone();
        m.extend(
            (0..self.items.len())
                .filter(|i| !first.contains(i) && self.matches_filter(&self.items[*i])),
        );
        self.matches = m;
        self.selected = 0;
    }

    /// The selected item.
    pub fn current(&self) -> Option<&Item> {
        self.matches.get(self.selected).map(|i| &self.items[*i])
    }

    /// Up/Down, PgUp/PgDn, Home/End move; a character or Backspace changes the filter; Enter picks; Esc
    /// cancels.
    pub fn key(&mut self, code: KeyCode) -> Pick {
        let last = self.matches.len().saturating_sub(1);
        match code {
            KeyCode::Esc => return Pick::Cancelled,
            KeyCode::Enter => {
                return match self.current() {
                    Some(t) => Pick::Picked(t.code.clone()),
                    None if !self.filter.trim().is_empty() => {
                        Pick::Picked(self.filter.trim().to_string())
                    }
                    None => Pick::Open,
                }
            }
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(self.step()),
            KeyCode::PageDown => self.selected = (self.selected + self.step()).min(last),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = last,
            KeyCode::Backspace => {
                self.filter.pop();
                self.refilter();
            }
            KeyCode::Char(c) if c == super::line_edit::ctrl('u') => {
                self.filter.clear();
                self.refilter();
            }
            // Another Ctrl+letter is not text.
            KeyCode::Char(c) if c.is_control() => {}
            KeyCode::Char(c) if self.filter.chars().count() < 64 => {
                self.filter.push(c);
                self.refilter();
            }
            _ => {}
        }
        Pick::Open
    }

    /// PgUp/PgDn's step: the rows the list shows.
    fn step(&self) -> usize {
        self.page.get().max(1)
    }

    /// The key bar's line while it is open.
    pub fn status(&self) -> String {
        "type to search  Up/Dn select  Enter pick  Esc cancel".into()
    }

    /// A centred box: the filter line, then the matches (the selected one highlighted and kept in view).
    pub fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        let rows: Vec<ListItem> = self
            .matches
            .iter()
            .map(|i| {
                let t = &self.items[*i];
                let code = if t.code.len() > 8 {
                    format!("{}…", &t.code[..8])
                } else {
                    t.code.clone()
                };
                let alias = match (t.name.is_empty(), t.aliases.is_empty()) {
                    (_, true) => String::new(),
                    (true, false) => t.aliases.clone(),
                    (false, false) => format!("  ({})", t.aliases),
                };
                ListItem::new(format!("{code:<9} {}{alias}", t.name))
            })
            .collect();
        let w = area.width.saturating_sub(4).clamp(20, 72);
        // As tall as the whole list (it does not jump while filtering), at most the terminal less two rows.
        let want = u16::try_from(self.items.len() + 3).unwrap_or(u16::MAX);
        let h = want.min(area.height.saturating_sub(2)).max(5);
        let r = centred(area, w, h);
        f.render_widget(Clear, r);
        let block = Block::bordered().title(Line::from(self.title.clone()).style(st.title));
        let inner = block.inner(r);
        f.render_widget(block, r);
        if inner.height == 0 {
            return;
        }
        let search = Line::from(vec![
            Span::raw("search: "),
            Span::styled(
                format!("{}_", self.filter),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::raw(if self.matches.is_empty() {
                "  (no match: Enter uses what is typed)"
            } else {
                ""
            }),
        ]);
        f.render_widget(Paragraph::new(search), Rect { height: 1, ..inner });
        // The refusal of the last pick, wrapped under the search line, whole while a row of the list is left
        // (all the rows when nothing matches: the list is empty).
        let error: Vec<Line> = self
            .error
            .iter()
            .flat_map(|e| super::dialog::wrap_words(e, usize::from(inner.width)))
            .map(|l| Line::from(Span::styled(l, st.bad)))
            .collect();
        let err_h = u16::try_from(error.len()).unwrap_or(u16::MAX).min(
            inner
                .height
                .saturating_sub(if self.matches.is_empty() { 1 } else { 2 }),
        );
        f.render_widget(
            Paragraph::new(error),
            Rect {
                y: inner.y + 1,
                height: err_h,
                ..inner
            },
        );
        let list_area = Rect {
            y: inner.y + 1 + err_h,
            height: inner.height.saturating_sub(1 + err_h),
            ..inner
        };
        self.page.set(usize::from(list_area.height).max(1));
        let mut state = ListState::default().with_selected(Some(self.selected));
        f.render_stateful_widget(
            List::new(rows)
                .highlight_style(Style::default().add_modifier(Modifier::REVERSED))
                .highlight_symbol(">> "),
            list_area,
            &mut state,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(p: &mut TypePicker, s: &str) {
        for c in s.chars() {
            p.key(KeyCode::Char(c));
        }
    }

    /// A dos table lists the MBR types the library names; `c` (sfdisk's `type=c`) finds W95 FAT32 (LBA) first,
    /// `swap` finds Linux swap, and the list opens on the current type.
    #[test]
    fn dos_types_are_found_by_byte_name_and_alias() {
        let mut p = TypePicker::new(" Type ", Label::Dos, "0x07");
        assert_eq!(
            p.current().map(|t| t.name.as_str()),
            Some("HPFS/NTFS/exFAT")
        );
        typed(&mut p, "c");
        assert_eq!(p.key(KeyCode::Enter), Pick::Picked("0x0c".into()));
        let mut p = TypePicker::new(" Type ", Label::Dos, "");
        typed(&mut p, "swap");
        assert_eq!(p.current().map(|t| t.code.as_str()), Some("0x82"));
        p.key(KeyCode::Backspace);
        assert_eq!(p.filter, "swa");
        assert!(p.items.iter().all(|t| !t.code.starts_with("0x00")));
    }

    /// A GPT lists type GUIDs with their names; a search of two words narrows; a GUID not listed is handed on
    /// as typed, and Esc cancels.
    #[test]
    fn gpt_types_search_and_pass_on_what_is_not_listed() {
        let mut p = TypePicker::new(" Type ", Label::Gpt, "");
        assert!(p.items.iter().any(|t| t.name == "EFI System"));
        assert!(p.items.iter().all(|t| t.code.len() == 36));
        typed(&mut p, "linux lvm");
        assert_eq!(p.matches.len(), 1);
        assert_eq!(
            p.key(KeyCode::Enter),
            Pick::Picked("E6D6D379-F507-44C2-A23C-238F2A3DF928".into())
        );
        let mut p = TypePicker::new(" Type ", Label::Gpt, "");
        typed(&mut p, "0FC63DAF-8483-4772-8E79-3D69D8477DE5");
        assert!(p.matches.is_empty());
        assert_eq!(
            p.key(KeyCode::Enter),
            Pick::Picked("0FC63DAF-8483-4772-8E79-3D69D8477DE5".into())
        );
        assert_eq!(p.key(KeyCode::Esc), Pick::Cancelled);
    }
}
