//! What the built-in views share to draw: the **theme** ([`Theme`]: the styles of ok, bad, warning, dimmed,
//! selected and title text, colourless for NO_COLOR and dumb terminals) and how many rows a wrapped text takes
//! ([`rows_of`], so that nothing is cut off at 80x24).

use ratatui::style::{Color, Modifier, Style};

use super::dialog::Styles;

/// The styles of the built-in views (colours, or none for NO_COLOR and dumb terminals).
pub struct Theme {
    pub ok: Style,
    pub bad: Style,
    pub warn: Style,
    pub dim: Style,
    pub sel: Style,
    pub title: Style,
}

impl Theme {
    pub fn new(no_color: bool) -> Self {
        if no_color {
            Theme {
                ok: Style::default(),
                bad: Style::default().add_modifier(Modifier::BOLD),
                warn: Style::default(),
                dim: Style::default(),
                sel: Style::default().add_modifier(Modifier::REVERSED),
                title: Style::default().add_modifier(Modifier::BOLD),
            }
        } else {
            Theme {
                ok: Style::default().fg(Color::Green),
                bad: Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
                warn: Style::default().fg(Color::Yellow),
                dim: Style::default().fg(Color::DarkGray),
                sel: Style::default().add_modifier(Modifier::REVERSED),
                title: Style::default()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            }
        }
    }
}

impl Theme {
    /// The styles the screens share.
    pub fn styles(&self) -> Styles {
        Styles {
            ok: self.ok,
            bad: self.bad,
            warn: self.warn,
            title: self.title,
        }
    }
}

/// Rows `text` takes when word-wrapped at `width` as a wrapping paragraph does (at least 1).
pub fn rows_of(text: &str, width: u16) -> u16 {
    let w = usize::from(width.max(1));
    let mut n = 0usize;
    for line in text.lines() {
        let mut rows = 1usize;
        let mut used = 0usize;
        for (gap, len) in words(line) {
            // The spaces between two words on a row count as they are (the key bar's are two).
            let need = if used == 0 { len } else { used + gap + len };
            if need <= w {
                used = need;
            } else if len <= w {
                rows += usize::from(used > 0);
                used = len;
            } else {
                // A word longer than the line is broken across rows.
                rows += usize::from(used > 0) + (len - 1) / w;
                used = (len - 1) % w + 1;
            }
        }
        n += rows;
    }
    u16::try_from(n.max(1)).unwrap_or(u16::MAX)
}

/// The words of `line`, each as (the spaces before it, its length in characters).
pub fn words(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut gap, mut len) = (0, 0);
    for c in line.chars() {
        if c.is_whitespace() {
            if len > 0 {
                out.push((gap, len));
                (gap, len) = (0, 0);
            }
            gap += 1;
        } else {
            len += 1;
        }
    }
    if len > 0 {
        out.push((gap, len));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::rows_of;

    /// Two spaces between words take two columns: a key bar of 64 columns with single-spaced words of 56
    /// takes two rows at 60 (it was given one, and its last key was cut to "q ").
    #[test]
    fn rows_of_counts_the_spaces_as_they_are() {
        let bar = "a apply  e edit  b bench  Up/Dn scroll  ? help  Esc back  q quit";
        assert_eq!(rows_of(bar, 60), 2);
        assert_eq!(rows_of(bar, 64), 1);
        assert_eq!(rows_of("ab cd", 5), 1);
        assert_eq!(rows_of("ab  cd", 5), 2);
        assert_eq!(rows_of("abcdefg", 3), 3);
    }
}
