//! The TUI's one confirmation dialog: it shows the library's [`Prompt`] (what will be done on which device,
//! the filesystems lost, what must be typed), takes the typed answer, and hands it back on Enter. Every screen
//! that writes uses this component; the check of the answer is the library's. Also the one choice component
//! (a library [`Choice`] on one line and its current option's description), the styles screens share and the
//! centred box of every overlay. A typed line is edited by `line_edit` (a cursor, readline's keys).
//! A **question box** ([`question_box`]) is the one layout of a question with fixed answers: the question,
//! the answers, the keys, in a centred bordered box.
//!
//! Terms: the **label question** ([`LabelQuestion`]) is cfdisk's "Select label type", asked on a blank disk (no
//! table, not even a foreign one afdisk reads) before its first edit, wherever that edit starts (the disk
//! view's editing keys, the plan screen's `e`): which table the edits create, gpt (the default) or dos.

use std::cell::Cell;

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use afdisk::device::access::Prompt;
use afdisk::present::{Choice, Tone};
use afdisk::table::Label;

use super::line_edit::LineEdit;

/// The one choice component's line: "LABEL: CURRENT (KEY)"; the screen's KEY steps the choice
/// (`Choice::next`).
pub fn choice_line<T: Clone + PartialEq>(label: &str, c: &Choice<T>, key: char) -> String {
    let name = c.option().map_or("?", |o| o.name);
    format!("{label}: {name} ({key})")
}

/// What the current option of a choice does, in the library's words.
pub fn choice_description<T: Clone + PartialEq>(c: &Choice<T>) -> String {
    c.option()
        .map(|o| o.description.clone())
        .unwrap_or_default()
}

/// Styles the screens use (from the main view's theme).
pub struct Styles {
    pub ok: Style,
    pub bad: Style,
    pub warn: Style,
    pub title: Style,
}

impl Styles {
    /// Every style the default one: what the screens' tests draw with (their text, not their colours).
    #[cfg(test)]
    pub fn plain() -> Styles {
        Styles {
            ok: Style::default(),
            bad: Style::default(),
            warn: Style::default(),
            title: Style::default(),
        }
    }

    /// The style of a value's tone.
    pub fn of(&self, t: Tone) -> Style {
        match t {
            Tone::Plain => Style::default(),
            Tone::Good => self.ok,
            Tone::Warning => self.warn,
            Tone::Bad => self.bad,
        }
    }
}

/// A box of at most `w`×`h` cells, centred in `area`.
pub fn centred(area: Rect, w: u16, h: u16) -> Rect {
    let (w, h) = (w.min(area.width), h.min(area.height));
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// The label question while it is open: the highlighted answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelQuestion {
    pub on: Label,
}

/// What a key did to the label question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelAnswer {
    /// Still asking (the highlight may have moved).
    Asking,
    /// Esc: no table chosen.
    Cancelled,
    /// The table the edits create.
    Chosen(Label),
}

impl Default for LabelQuestion {
    fn default() -> Self {
        LabelQuestion { on: Label::Gpt }
    }
}

impl LabelQuestion {
    /// The key bar's line while the question is open.
    pub const STATUS: &'static str = "g gpt  d dos (MBR)  Up/Dn choose  Enter ok  Esc back";

    /// `g` or `d` answer, Up/Dn/Left/Right/Tab move the highlight, Enter takes it, Esc cancels.
    pub fn key(&mut self, code: KeyCode) -> LabelAnswer {
        match code {
            KeyCode::Up
            | KeyCode::Down
            | KeyCode::Left
            | KeyCode::Right
            | KeyCode::Tab
            | KeyCode::BackTab => {
                self.on = if self.on == Label::Gpt {
                    Label::Dos
                } else {
                    Label::Gpt
                };
                LabelAnswer::Asking
            }
            KeyCode::Esc => LabelAnswer::Cancelled,
            KeyCode::Char('g' | 'G') => LabelAnswer::Chosen(Label::Gpt),
            KeyCode::Char('d' | 'D' | 'm' | 'M') => LabelAnswer::Chosen(Label::Dos),
            KeyCode::Enter => LabelAnswer::Chosen(self.on),
            _ => LabelAnswer::Asking,
        }
    }

    /// The two tables one under the other, the highlighted one reversed and marked `>`, each with what it is
    /// for.
    pub fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        let answers = |inner: usize| -> Vec<Line<'static>> {
            [
                (Label::Gpt, "gpt  GUID partition table (the default)"),
                (Label::Dos, "dos  MBR (old BIOS; at most 2^32 sectors)"),
            ]
            .into_iter()
            .map(|(label, what)| {
                let style = if label == self.on {
                    Style::default().add_modifier(Modifier::REVERSED)
                } else {
                    Style::default()
                };
                let mark = if label == self.on { "> " } else { "  " };
                let text: String = format!("{mark}{what}").chars().take(inner).collect();
                Line::from(Span::styled(text, style))
            })
            .collect()
        };
        question_box(
            f,
            area,
            st,
            " Select label type ",
            "The disk has no partition table. Which table do the edits create?",
            answers,
            "g gpt, d dos, Enter ok, Esc back",
        );
    }
}

/// A question's box (the label question, a new dos partition's primary or extended): bordered, titled
/// `title`, centred in `area`, as wide as the area less a margin (at least 30 columns, at most 64), as tall as
/// its rows: the `question` wrapped at spaces in the title style, the `answers` (made for the box's inner
/// width), then the `hint` (the keys) wrapped.
pub fn question_box(
    f: &mut Frame,
    area: Rect,
    st: &Styles,
    title: &str,
    question: &str,
    answers: impl FnOnce(usize) -> Vec<Line<'static>>,
    hint: &str,
) {
    let w = area.width.saturating_sub(4).clamp(area.width.min(30), 64);
    let inner = usize::from(w.saturating_sub(2)).max(1);
    let mut lines: Vec<Line> = wrap_words(question, inner)
        .into_iter()
        .map(|l| Line::from(Span::styled(l, st.title)))
        .collect();
    lines.extend(answers(inner));
    lines.extend(wrap_words(hint, inner).into_iter().map(Line::from));
    let h = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let r = centred(area, w, h);
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines)
            .block(Block::bordered().title(Line::from(title.to_string()).style(st.title))),
        r,
    );
}

/// An open confirmation: the question and what has been typed so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    /// The box's title (" Confirm write ").
    pub title: &'static str,
    pub prompt: Prompt,
    pub input: LineEdit,
    /// How far its text is scrolled (Up/Dn) when the terminal is too short for it.
    pub scroll: u16,
    /// How far its text scrolls: its rows past the box's, as last drawn (Down stops there).
    pub scroll_max: Cell<u16>,
}

/// What a key did to the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Still typing.
    Typing,
    /// Esc: nothing is done.
    Cancelled,
    /// Enter: the typed text, for the library to check.
    Submitted(String),
}

impl Confirm {
    pub fn new(title: &'static str, prompt: Prompt) -> Self {
        Confirm {
            title,
            prompt,
            input: LineEdit::default(),
            scroll: 0,
            scroll_max: Cell::new(u16::MAX),
        }
    }

    /// Every key is the dialog's while it is open (so `q` and `?` are letters, not commands); Up/Dn scroll
    /// its text when it does not fit.
    pub fn key(&mut self, code: KeyCode) -> Answer {
        scroll_key(&mut self.scroll, self.scroll_max.get(), code)
            .unwrap_or_else(|| type_key(&mut self.input, code))
    }

    /// The key bar's line while the dialog is open: what it wants typed, in the prompt's own words
    /// (`type "sdb DESTROY" or the label "data"`), never a paraphrase that could name the wrong thing.
    pub fn status(&self) -> String {
        let ask = self.prompt.ask();
        let ask = ask
            .strip_prefix("Type")
            .map_or(ask.clone(), |r| format!("type{r}"));
        format!("{ask}  Enter confirm  Esc cancel")
    }

    pub fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        let text = self.prompt.lines();
        let (ask, facts) = text
            .split_last()
            .map_or((None, &text[..]), |(a, f)| (Some(a), f));
        let body: Vec<(String, Style)> = facts
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let bad = i == 0 && !self.prompt.losses.is_empty();
                (l.clone(), if bad { st.bad } else { Style::default() })
            })
            .collect();
        let ask = format!(
            "{} and press Enter (Esc cancels):",
            ask.cloned().unwrap_or_default()
        );
        draw_box(
            f,
            area,
            body,
            vec![(ask, st.title)],
            &self.input,
            Line::from(self.title).style(st.bad),
            (self.scroll, &self.scroll_max),
        );
    }
}

/// Up/Dn (and PgUp/PgDn by 5) move a dialog's `scroll`, at most to `max` (the last row it can start at, as
/// last drawn: a key past it does nothing, so the next key back moves the text at once); `None` for every
/// other key.
fn scroll_key(scroll: &mut u16, max: u16, code: KeyCode) -> Option<Answer> {
    let from = (*scroll).min(max);
    match code {
        KeyCode::Up => *scroll = from.saturating_sub(1),
        KeyCode::Down => *scroll = from.saturating_add(1).min(max),
        KeyCode::PageUp => *scroll = from.saturating_sub(5),
        KeyCode::PageDown => *scroll = from.saturating_add(5).min(max),
        _ => return None,
    }
    Some(Answer::Typing)
}

/// A key typed into a dialog's text `input` (`line_edit`: the cursor's keys, Backspace, Delete, Ctrl-U,
/// Ctrl-W): Esc cancels, Enter submits.
fn type_key(input: &mut LineEdit, code: KeyCode) -> Answer {
    match code {
        KeyCode::Esc => Answer::Cancelled,
        KeyCode::Enter => Answer::Submitted(input.text().to_string()),
        _ => {
            input.key(code);
            Answer::Typing
        }
    }
}

/// The line of what has been typed so far in `width` cells (`> ` and the window around the cursor), and the
/// cursor's column in it: the character under the cursor is reversed (`_` past the end), and the terminal's
/// cursor is put there too.
fn typed_line(input: &LineEdit, width: usize) -> (Line<'static>, usize) {
    let (shown, col) = input.window(width.saturating_sub(2).max(3));
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let chars: Vec<char> = shown.chars().collect();
    let before: String = chars.iter().take(col).collect();
    let at = chars
        .get(col)
        .map_or_else(|| "_".to_string(), char::to_string);
    let after: String = chars.iter().skip(col + 1).collect();
    let line = Line::from(vec![
        Span::styled(format!("> {before}"), bold),
        Span::styled(at, bold.add_modifier(Modifier::REVERSED)),
        Span::styled(after, bold),
    ]);
    (line, col + 2)
}

/// `text` wrapped at spaces into lines of at most `width` characters; a word longer than a line is cut
/// (the only place a word is broken). Leading spaces (an indented line) are kept.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    // An indent takes at most half the line, so a fresh line always has room for a character.
    let indent_len = text
        .chars()
        .take_while(|c| *c == ' ')
        .count()
        .min(width / 2);
    let indent = " ".repeat(indent_len);
    let mut out: Vec<String> = Vec::new();
    let mut cur = indent.clone();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = cur.chars().count();
            let fresh = used == indent_len;
            if used + word.len() + usize::from(!fresh) <= width {
                if !fresh {
                    cur.push(' ');
                }
                cur.extend(word.iter());
                break;
            }
            if !fresh {
                out.push(std::mem::replace(&mut cur, indent.clone()));
                continue;
            }
            let room = width - used;
            cur.extend(word.drain(..room));
            out.push(std::mem::replace(&mut cur, indent.clone()));
        }
    }
    if cur.chars().count() > indent_len || out.is_empty() {
        out.push(cur);
    }
    out
}

/// Draws a bordered box titled `title`, centred in `area`, as wide as its longest line (at most 100 columns)
/// and as tall as its text wrapped at spaces: the `body`, then the `ask` lines and the typed `input`. The ask
/// and the input line are always inside the frame: when the terminal is too short the body scrolls (from
/// row `scroll`, clamped; the last row it can start at is put in `max`), its last row saying how many rows
/// are hidden and that Up/Dn scroll.
fn draw_box(
    f: &mut Frame,
    area: Rect,
    body: Vec<(String, Style)>,
    ask: Vec<(String, Style)>,
    input: &LineEdit,
    title: Line,
    (scroll, max): (u16, &Cell<u16>),
) {
    let longest = body
        .iter()
        .chain(&ask)
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(input.text().chars().count() + 3)
        .max(title.width() + 2);
    // As wide as the text, up to 100 columns with a margin on each side (the text under the box shows).
    let most = area.width.saturating_sub(4).clamp(area.width.min(30), 100);
    let w = most.min(u16::try_from(longest + 2).unwrap_or(u16::MAX).max(30));
    let inner = usize::from(w.saturating_sub(2)).max(1);
    let wrap = |v: &[(String, Style)]| -> Vec<Line<'static>> {
        v.iter()
            .flat_map(|(l, st)| {
                wrap_words(l, inner)
                    .into_iter()
                    .map(|r| Line::from(Span::styled(r, *st)))
            })
            .collect()
    };
    let mut body = wrap(&body);
    let mut tail = wrap(&ask);
    let (typed, cursor_col) = typed_line(input, inner);
    tail.push(typed);
    let room = usize::from(area.height.saturating_sub(2));
    // The tail first: what is typed is never below the frame.
    let tail_keep = tail.len().min(room);
    let tail = tail.split_off(tail.len() - tail_keep);
    let body_room = room - tail_keep;
    max.set(0);
    if body.len() > body_room {
        // One row says what is hidden; the others show the body from `scroll` on.
        let shown = body_room.saturating_sub(1);
        max.set(u16::try_from(body.len() - shown).unwrap_or(u16::MAX));
        let from = usize::from(scroll).min(body.len() - shown);
        let hidden = body.len() - shown;
        body = body.split_off(from);
        body.truncate(shown);
        if body_room > 0 {
            let more = format!("… {hidden} more row(s): Up/Dn scroll");
            body.push(Line::from(more.chars().take(inner).collect::<String>()));
        }
    }
    let rows = body.len() + tail.len();
    let r = centred(area, w, u16::try_from(rows + 2).unwrap_or(u16::MAX));
    body.extend(tail);
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(body).block(Block::bordered().title(title)),
        r,
    );
    // The typed line is the last inside the frame.
    if r.height >= 3 {
        let x = r.x + 1 + u16::try_from(cursor_col).unwrap_or(0);
        f.set_cursor_position((x.min(r.right().saturating_sub(2)), r.bottom() - 2));
    }
}

/// The one typed-input field: a question, a hint of what may be typed, and the text typed so far (a size, a
/// type, a name). Enter hands the text back for the library to check; Esc cancels. The screen that opened it
/// puts the library's refusal in `error` and keeps it open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The box's title (" New partition ").
    pub title: String,
    /// What to type ("Size of the new partition").
    pub prompt: String,
    /// What may be typed, in the library's terms ("+20G, 20GiB, 50% of the free region, rest").
    pub hint: String,
    pub input: LineEdit,
    /// How far its text is scrolled (Up/Dn) when the terminal is too short for it.
    pub scroll: u16,
    /// How far its text scrolls: its rows past the box's, as last drawn (Down stops there).
    pub scroll_max: Cell<u16>,
    /// Why the text last submitted was refused, shown under the hint (the field stays open with the text,
    /// to be corrected, as cfdisk does; Esc still cancels).
    pub error: Option<String>,
}

impl Input {
    pub fn new(
        title: impl Into<String>,
        prompt: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Input {
            title: title.into(),
            prompt: prompt.into(),
            hint: hint.into(),
            input: LineEdit::default(),
            scroll: 0,
            scroll_max: Cell::new(u16::MAX),
            error: None,
        }
    }

    /// The field, with `text` already typed (an edit of the current value).
    pub fn with(mut self, text: &str) -> Self {
        self.input = LineEdit::new(text);
        self
    }

    /// Every key is the field's while it is open (so `q` and `?` are letters); Up/Dn scroll its text when it
    /// does not fit.
    pub fn key(&mut self, code: KeyCode) -> Answer {
        scroll_key(&mut self.scroll, self.scroll_max.get(), code)
            .unwrap_or_else(|| type_key(&mut self.input, code))
    }

    pub fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        let mut ask = vec![
            (format!("{} (Enter ok, Esc cancel):", self.prompt), st.title),
            (self.hint.clone(), Style::default()),
        ];
        // The refusal right above the typed line: the last rows are the ones kept on a short terminal.
        if let Some(e) = &self.error {
            ask.push((e.clone(), st.bad));
        }
        draw_box(
            f,
            area,
            Vec::new(),
            ask,
            &self.input,
            Line::from(self.title.clone()).style(st.title),
            (self.scroll, &self.scroll_max),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn screen(c: &Confirm, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        t.draw(|f| c.draw(f, f.area(), &Styles::plain()))
            .expect("draw");
        t.backend().to_string()
    }

    /// A confirmation longer than the terminal: the typed line stays inside the frame, a row says how much is
    /// hidden, Up/Dn scroll the text (never typed into the answer), and every loss can be brought into view.
    #[test]
    fn a_long_dialog_scrolls_and_keeps_its_input_line() {
        let losses: Vec<String> = (1..=12)
            .map(|i| format!("partition {i}: ext4 \"data{i}\" (64 MiB)"))
            .collect();
        let prompt = Prompt::named(("sdz", "/dev/sdz", "a disk"), "write", losses, None);
        let mut c = Confirm::new(" Confirm write ", prompt);
        for ch in "abc".chars() {
            c.key(KeyCode::Char(ch));
        }
        let s = screen(&c, 60, 12);
        assert!(s.contains("> abc_"), "{s}");
        assert!(s.contains("more row(s): Up/Dn scroll"), "{s}");
        assert!(!s.contains("data12"), "{s}");
        for _ in 0..30 {
            assert_eq!(c.key(KeyCode::Down), Answer::Typing);
        }
        let s = screen(&c, 60, 12);
        assert!(s.contains("data12"), "the last loss is reachable: {s}");
        assert!(s.contains("> abc_"), "{s}");
        assert_eq!(c.input.text(), "abc", "Up/Dn are not typed");
        let rows: Vec<&str> = s.lines().collect();
        let at = rows
            .iter()
            .position(|r| r.contains("> abc_"))
            .expect("input");
        assert!(
            rows[at + 1].contains('└'),
            "the frame's bottom is right below: {s}"
        );
        // At 80x24 the same dialog fits: nothing hidden.
        c.scroll = 0;
        let s = screen(&c, 80, 24);
        assert!(!s.contains("more row(s)") && s.contains("data12"), "{s}");
        // Down past the end does nothing: the first Up back moves the text at once (it took as many Ups as
        // Downs past the end before anything moved).
        screen(&c, 60, 12);
        for _ in 0..30 {
            c.key(KeyCode::Down);
        }
        let end = screen(&c, 60, 12);
        c.key(KeyCode::Up);
        assert_ne!(screen(&c, 60, 12), end, "one Up scrolls back");
    }
}
