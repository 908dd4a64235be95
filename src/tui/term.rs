//! What the terminal can show and how a frame is fitted to it. Terms:
//! - **terminal kind** ([`TermKind`], from `TERM`): full (Unicode and colours), the Linux console (ASCII and the
//!   16 named colours) or dumb (ASCII, no colour);
//! - **fitting** a frame ([`fit_to`]): every symbol the kind cannot show replaced by its ASCII stand-in
//!   ([`ascii_symbol`]), and colours reduced to what it has.

use ratatui::buffer::Buffer;
use ratatui::style::Color;

/// What the terminal can show, from `TERM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TermKind {
    /// Unicode and colours.
    #[default]
    Full,
    /// The Linux console: ASCII, the 16 named colours.
    Linux,
    /// A dumb terminal (or none named): ASCII, no colour.
    Dumb,
}

impl TermKind {
    /// The kind of the terminal named by `TERM` (`None`: not set).
    pub fn of(term: Option<&std::ffi::OsStr>) -> Self {
        match term.map(|t| t.to_string_lossy()) {
            None => TermKind::Dumb,
            Some(t) if t.is_empty() || t == "dumb" => TermKind::Dumb,
            Some(t) if t == "linux" || t.starts_with("linux-") => TermKind::Linux,
            Some(_) => TermKind::Full,
        }
    }
}

/// The ASCII stand-in of a symbol the console fonts may lack (box drawing, blocks, arrows, `µ`).
pub fn ascii_symbol(sym: &str) -> &'static str {
    match sym {
        "─" | "━" | "═" | "╌" | "┄" => "-",
        "│" | "┃" | "║" | "╎" | "┆" => "|",
        "┌" | "┐" | "└" | "┘" | "╭" | "╮" | "╰" | "╯" | "├" | "┤" | "┬" | "┴" | "┼" | "╔" | "╗"
        | "╚" | "╝" | "┏" | "┓" | "┗" | "┛" => "+",
        "█" | "▉" | "▊" | "▌" => "#",
        "▁" | "▂" | "▃" => ".",
        "▄" | "▅" | "▆" | "▇" => ":",
        "µ" => "u",
        "…" | "·" => ".",
        "—" | "–" | "‐" => "-",
        "→" | "⇒" | "»" => ">",
        "←" | "«" => "<",
        "⇄" | "↔" => "=",
        "↑" => "^",
        "↓" => "v",
        "•" | "●" => "*",
        "✓" | "✔" => "v",
        "✗" | "✘" | "×" => "x",
        "≥" => ">",
        "≤" => "<",
        "≈" => "~",
        "“" | "”" => "\"",
        "‘" | "’" => "'",
        _ => "?",
    }
}

/// The frame as the terminal kind can show it: ASCII symbols, and no colour (dumb) or only the 16 named
/// colours (linux).
pub fn fit_to(buf: &mut Buffer, kind: TermKind) {
    if kind == TermKind::Full {
        return;
    }
    let area = buf.area;
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let Some(cell) = buf.cell_mut((x, y)) else {
                continue;
            };
            if !cell.symbol().is_ascii() {
                let a = ascii_symbol(cell.symbol());
                cell.set_symbol(a);
            }
            let named = |c: Color| match c {
                Color::Rgb(..) | Color::Indexed(_) => Color::Reset,
                c => c,
            };
            if kind == TermKind::Dumb {
                cell.fg = Color::Reset;
                cell.bg = Color::Reset;
            } else {
                cell.fg = named(cell.fg);
                cell.bg = named(cell.bg);
            }
        }
    }
}
