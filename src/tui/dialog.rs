//! The TUI's one confirmation dialog: it shows the library's [`Prompt`] (what will be done on which device,
//! the filesystems lost, what must be typed), takes the typed answer, and hands it back on Enter. Every screen
//! that writes uses this component; the check of the answer is the library's. Also the one choice component
//! (a library [`Choice`] on one line and its current option's description), the styles screens share and the
//! centred box of every overlay.

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;

use afdisk::device::access::Prompt;
use afdisk::present::{Choice, Tone};

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

/// An open confirmation: the question and what has been typed so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    /// The box's title (" Confirm write ").
    pub title: &'static str,
    pub prompt: Prompt,
    pub input: String,
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
            input: String::new(),
        }
    }

    /// Every key is the dialog's while it is open (so `q` and `?` are letters, not commands).
    pub fn key(&mut self, code: KeyCode) -> Answer {
        type_key(&mut self.input, code)
    }

    pub fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        let text = self.prompt.lines();
        let (ask, facts) = text
            .split_last()
            .map_or((None, &text[..]), |(a, f)| (Some(a), f));
        let mut lines: Vec<Line> = facts
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let bad = i == 0 && !self.prompt.losses.is_empty();
                Line::from(Span::styled(
                    l.clone(),
                    if bad { st.bad } else { Style::default() },
                ))
            })
            .collect();
        lines.push(Line::from(vec![
            Span::styled(ask.cloned().unwrap_or_default(), st.title),
            Span::raw(" and press Enter (Esc cancels):"),
        ]));
        lines.push(typed_line(&self.input));
        draw_box(f, area, lines, Line::from(self.title).style(st.bad));
    }
}

/// A key typed into a dialog's text `input` (at most 128 characters): Esc cancels, Enter submits, Backspace
/// takes the last character back.
fn type_key(input: &mut String, code: KeyCode) -> Answer {
    match code {
        KeyCode::Esc => return Answer::Cancelled,
        KeyCode::Enter => return Answer::Submitted(input.clone()),
        KeyCode::Backspace => {
            input.pop();
        }
        KeyCode::Char(c) if input.chars().count() < 128 => input.push(c),
        _ => {}
    }
    Answer::Typing
}

/// The line of what has been typed so far, with its cursor.
fn typed_line(input: &str) -> Line<'static> {
    Line::from(Span::styled(
        format!("> {input}_"),
        Style::default().add_modifier(Modifier::BOLD),
    ))
}

/// Draws `lines` wrapped in a bordered box titled `title`, at most 72 columns wide, centred in `area` and as
/// tall as the wrapped lines.
fn draw_box(f: &mut Frame, area: Rect, lines: Vec<Line>, title: Line) {
    let w = area.width.min(72);
    let inner = usize::from(w.saturating_sub(2)).max(1);
    // Wrapped height: each line takes ceil(len / inner) rows, plus the borders.
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum();
    let r = centred(area, w, u16::try_from(rows + 2).unwrap_or(u16::MAX));
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(title)),
        r,
    );
}

/// The one typed-input field: a question, a hint of what may be typed, and the text typed so far (a size, a
/// type, a name). Enter hands the text back for the library to check; Esc cancels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The box's title (" New partition ").
    pub title: String,
    /// What to type ("Size of the new partition").
    pub label: String,
    /// What may be typed, in the library's terms ("+20G, 20GiB, 50% of the free region, rest").
    pub hint: String,
    pub input: String,
}

impl Input {
    pub fn new(
        title: impl Into<String>,
        label: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Input {
            title: title.into(),
            label: label.into(),
            hint: hint.into(),
            input: String::new(),
        }
    }

    /// The field, with `text` already typed (an edit of the current value).
    pub fn with(mut self, text: &str) -> Self {
        self.input = text.to_string();
        self
    }

    /// Every key is the field's while it is open (so `q` and `?` are letters).
    pub fn key(&mut self, code: KeyCode) -> Answer {
        type_key(&mut self.input, code)
    }

    pub fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        let lines = vec![
            Line::from(vec![
                Span::styled(self.label.clone(), st.title),
                Span::raw(" (Enter ok, Esc cancel):"),
            ]),
            Line::from(Span::raw(self.hint.clone())),
            typed_line(&self.input),
        ];
        draw_box(
            f,
            area,
            lines,
            Line::from(self.title.clone()).style(st.title),
        );
    }
}
