//! Rendering of the bench screen: the options, the confirm dialog for `--write all`, live per-class latency
//! sparklines with the median so far and the running verdict, and the final per-class table and verdicts, or
//! (d) the latency distributions of the aligned and the misaligned class: the core's plot
//! (`afdisk::bench::plot`, one bin per column on a log time axis) drawn as one histogram strip per class with
//! block characters, the time axis with its ticks, and each class's median, p90 and p99. Block characters and
//! `µ` become ASCII on terminals without them (see `term`).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Sparkline, Table, Wrap};
use ratatui::Frame;

use afdisk::bench::plot::{self, Plot, Side};
use afdisk::bench::{BenchReport, WriteMode};

use super::bench_state::{BenchScreen, BenchState, Live};
use super::dialog::{choice_description, choice_line, Styles};

use afdisk::present::latency as us;

/// The screen's head: what is benchmarked (the partition or the whole disk, `p`), the options and what the
/// write mode does, each wrapped at spaces to `width` (its height is theirs: nothing is cut at 80 columns).
fn head_lines(b: &BenchState, width: usize, st: &Styles) -> Vec<Line<'static>> {
    let part = match (b.partition, b.offered) {
        (Some(n), _) => format!("partition {n} as its filesystem sees it (p: whole disk)"),
        (None, Some(n)) => format!("whole disk (p: partition {n})"),
        (None, None) => "whole disk".to_string(),
    };
    let mode = if b.mode() == WriteMode::All {
        st.bad
    } else {
        Style::default()
    };
    let text = [
        (format!("Benchmark {} — {part}", b.path.display()), st.title),
        (
            format!(
                "{}, probe: {} (o)",
                choice_line("write", &b.write, 'w'),
                if b.probe { "on" } else { "off" }
            ),
            Style::default(),
        ),
        (choice_description(&b.write), mode),
    ];
    text.into_iter()
        .flat_map(|(t, s)| {
            super::dialog::wrap_words(&t, width)
                .into_iter()
                .map(move |l| Line::from(Span::styled(l, s)))
        })
        .collect()
}

/// What the setup screen says before a run, as paragraphs: the method, the keys, and on an image file why no
/// run can show a drive's read-modify-write penalty there.
fn setup_paragraphs(b: &BenchState) -> Vec<&'static str> {
    let mut text = vec![
        "Aligned against misaligned I/O, one I/O in flight, O_DIRECT, classes interleaved in random order at \
         fresh random slots; stops as soon as the verdict is decided (at most 10 s).",
        "Press r to run. Write modes free and all add write classes, which pay read-modify-write on a \
         drive; free runs on the whole disk, in its unallocated space. The probe (o, with writes) finds the \
         real physical sector size.",
    ];
    if b.image {
        text.push(
            "An image file's I/O goes through the host filesystem: a run here shows what the host costs, \
             never a drive's read-modify-write penalty (benchmark a disk to see one).",
        );
    }
    text
}

/// The setup text in `width` × `height` cells: the paragraphs with a blank row between them; in a window too
/// small for them (60x15) the blank rows go first, then the method; what still does not fit scrolls
/// (from row `scroll`, Up/Dn), its last row saying how many rows are hidden.
fn setup_lines(b: &BenchState, width: usize, height: usize, scroll: u16) -> Vec<Line<'static>> {
    let paragraphs = setup_paragraphs(b);
    let wrap = |ps: &[&str], blank: bool| -> Vec<String> {
        let mut out = Vec::new();
        for (i, p) in ps.iter().enumerate() {
            if blank && i > 0 {
                out.push(String::new());
            }
            out.extend(super::dialog::wrap_words(p, width));
        }
        out
    };
    let tries = [
        wrap(&paragraphs, true),
        wrap(&paragraphs, false),
        wrap(&paragraphs[1..], false),
    ];
    let mut rows = match tries.iter().find(|t| t.len() <= height) {
        Some(t) => t.clone(),
        None => tries[2].clone(),
    };
    b.scroll_max.set(0);
    if rows.len() > height {
        let shown = height.saturating_sub(1);
        b.scroll_max
            .set(u16::try_from(rows.len() - shown).unwrap_or(u16::MAX));
        let from = usize::from(scroll).min(rows.len() - shown);
        let hidden = rows.len() - shown;
        rows = rows.split_off(from);
        rows.truncate(shown);
        if height > 0 {
            let more = format!("… {hidden} more row(s): Up/Dn scroll");
            rows.push(super::text::cut(&more, width));
        }
    }
    rows.into_iter().map(Line::from).collect()
}

pub fn draw(f: &mut Frame, b: &BenchState, area: Rect, st: &Styles) {
    let head_lines = head_lines(b, usize::from(area.width.max(1)), st);
    let head_h = u16::try_from(head_lines.len()).unwrap_or(u16::MAX);
    let [head, body] =
        Layout::vertical([Constraint::Length(head_h), Constraint::Min(1)]).areas(area);
    f.render_widget(Paragraph::new(head_lines), head);
    match &b.phase {
        BenchScreen::Setup | BenchScreen::Confirm(_) => {
            let (w, h) = (usize::from(body.width.max(1)), usize::from(body.height));
            f.render_widget(Paragraph::new(setup_lines(b, w, h, b.scroll)), body);
            if let BenchScreen::Confirm(c) = &b.phase {
                c.draw(f, area, st);
            }
        }
        BenchScreen::Running(live) => draw_live(f, live, body, st),
        BenchScreen::Done(r) if b.plot => draw_plot(f, r, body, st),
        BenchScreen::Done(r) => draw_done(f, r, (b.scroll, &b.scroll_max), body, st),
        BenchScreen::Failed(e) => {
            f.render_widget(
                Paragraph::new(super::text::failure_text(e))
                    .style(st.bad)
                    .wrap(Wrap { trim: true }),
                body,
            );
        }
    }
}

fn draw_live(f: &mut Frame, l: &Live, area: Rect, st: &Styles) {
    let [status, rows, verdict] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(2),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(format!(
            "running {}",
            afdisk::present::progress::bench_round(l.elapsed_secs, l.cap_secs, l.rounds, l.warmup)
        )),
        status,
    );
    let n = l.classes.len().min(rows.height as usize);
    for (i, c) in l.classes.iter().take(n).enumerate() {
        let r = Rect {
            x: rows.x,
            y: rows.y + i as u16,
            width: rows.width,
            height: 1,
        };
        let [name, spark, med] = Layout::horizontal([
            Constraint::Length(18),
            Constraint::Min(4),
            Constraint::Length(12),
        ])
        .areas(r);
        f.render_widget(Paragraph::new(format!("{:<17}", c.name)), name);
        f.render_widget(Sparkline::default().data(&c.recent).style(st.ok), spark);
        let m = c.median_ns.map_or("—".to_string(), us);
        f.render_widget(Paragraph::new(format!("{m:>11}")), med);
    }
    f.render_widget(
        Paragraph::new(
            l.verdict
                .clone()
                .unwrap_or_else(|| "verdict: collecting samples…".into()),
        )
        .style(st.warn)
        .wrap(Wrap { trim: true }),
        verdict,
    );
}

fn draw_done(
    f: &mut Frame,
    r: &BenchReport,
    scroll: (u16, &std::cell::Cell<u16>),
    area: Rect,
    st: &Styles,
) {
    let cells: Vec<Vec<String>> = r
        .classes
        .iter()
        .map(|c| match &c.summary {
            Some(s) => vec![
                c.spec.name.clone(),
                s.samples.to_string(),
                us(s.median_ns),
                us(s.p90_ns as f64),
                us(s.p99_ns as f64),
                format!("{:.0}", s.iops),
            ],
            None => vec![c.spec.name.clone(), "0".into()],
        })
        .collect();
    // The columns keep their widths at 80 columns and shrink to their content in a narrow window, so a
    // number is never cut.
    let head = ["class", "samples", "median", "p90", "p99", "IOPS"];
    let w = super::text::preferred_widths(
        &[17, 7, 10, 10, 10, 6],
        &head,
        &cells,
        usize::from(area.width),
    );
    let rows: Vec<Row> = cells
        .iter()
        .map(|c| Row::new(c.iter().zip(&w).map(|(x, w)| super::text::cut(x, *w))))
        .collect();
    let mut widths: Vec<Constraint> = w
        .iter()
        .map(|x| Constraint::Length(u16::try_from(*x).unwrap_or(u16::MAX)))
        .collect();
    if let (Some(last), Some(x)) = (widths.last_mut(), w.last()) {
        *last = Constraint::Min(u16::try_from(*x).unwrap_or(u16::MAX));
    }
    let table_h = (rows.len() as u16 + 1).min(area.height.saturating_sub(4));
    let [table, text] =
        Layout::vertical([Constraint::Length(table_h), Constraint::Min(1)]).areas(area);
    f.render_widget(
        Table::new(rows, widths).header(Row::new(head.to_vec()).style(st.title)),
        table,
    );
    draw_verdicts(f, r, scroll, text, st);
}

/// Under the per-class table: the verdicts, warnings and notes, scrolled from row `scroll` (at most to the
/// last row they can start at, put in `max`), and what to do next on the last rows.
fn draw_verdicts(
    f: &mut Frame,
    r: &BenchReport,
    (scroll, max): (u16, &std::cell::Cell<u16>),
    text: Rect,
    st: &Styles,
) {
    let mut lines = vec![Line::from(Span::styled(
        r.verdict.message.clone(),
        if r.verdict.rmw { st.bad } else { st.ok },
    ))];
    if let Some(p) = &r.partition {
        lines.push(Line::from(Span::styled(
            p.message.clone(),
            if p.penalty { st.bad } else { st.ok },
        )));
    }
    // What to do next stays on the last rows, whatever the verdicts, warnings and notes above it take (they
    // scroll with Up/Dn).
    let next = format!(
        "{:.1} s, {} rounds. r runs again, d shows the latency distributions, Up/Dn scrolls.",
        r.elapsed_secs, r.rounds
    );
    let next_rows = super::dialog::wrap_words(&next, usize::from(text.width.max(1))).len();
    let [text, next_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(u16::try_from(next_rows).unwrap_or(1)),
    ])
    .areas(text);
    f.render_widget(Paragraph::new(next).wrap(Wrap { trim: true }), next_area);
    for w in &r.warnings {
        lines.push(Line::from(Span::styled(format!("Warning: {w}"), st.bad)));
    }
    for n in &r.notes {
        lines.push(Line::from(format!("Note: {n}")));
    }
    let rows: u16 = lines
        .iter()
        .map(|l| super::theme::rows_of(&l.to_string(), text.width))
        .sum();
    max.set(rows.saturating_sub(text.height));
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .scroll((scroll.min(max.get()), 0)),
        text,
    );
}

/// Width of the label column left of the histogram strips.
const LABEL_W: usize = 11;

/// The distributions of the run (see `afdisk::bench::plot::of_report`), drawn in the whole body.
fn draw_plot(f: &mut Frame, r: &BenchReport, area: Rect, st: &Styles) {
    let cols = (area.width as usize).saturating_sub(LABEL_W + 1).max(4);
    let lines = match plot::of_report(r, cols) {
        Some(p) => plot_lines(&p, area.height as usize, st),
        None => vec![Line::from(
            "No distribution to draw: the run kept no samples of the compared classes.",
        )],
    };
    f.render_widget(Paragraph::new(lines), area);
}

/// Eighths of a cell, bottom up.
const EIGHTHS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The plot as lines for a body `height` rows high: title, a strip per class (bars scaled to the largest share
/// of any bin of any class, so the strips compare), the time axis and its labels, the legend.
pub fn plot_lines(p: &Plot, height: usize, st: &Styles) -> Vec<Line<'static>> {
    let cols = p.edges_ns.len().saturating_sub(1);
    let n = p.series.len().max(1);
    // Title, axis, labels, per class a median line and a legend line.
    let fixed = 3 + 2 * n;
    let strip = (height.saturating_sub(fixed) / n).clamp(1, 8);
    let share = |s: &plot::Series, c: u64| c as f64 / s.samples.max(1) as f64;
    let top = p
        .series
        .iter()
        .flat_map(|s| s.counts.iter().map(move |&c| share(s, c)))
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut lines = vec![Line::from(Span::styled(p.title.clone(), st.title))];
    for s in &p.series {
        let style = match s.side {
            Side::Aligned => st.ok,
            Side::Misaligned => st.bad,
        };
        let median_col = plot::bin_of(s.median_ns, p.lo_ns, p.hi_ns, cols);
        for row in (0..strip).rev() {
            let label = if row + 1 == strip {
                s.side.as_str()
            } else {
                ""
            };
            let mut bar = String::with_capacity(cols * 3);
            for &c in &s.counts {
                // Height in eighths of a row, at least one eighth for a bin that has samples.
                let mut h = (share(s, c) / top * (strip * 8) as f64).round() as usize;
                if c > 0 {
                    h = h.max(1);
                }
                bar.push(EIGHTHS[h.saturating_sub(row * 8).min(8)]);
            }
            lines.push(Line::from(vec![
                Span::styled(format!("{label:<LABEL_W$}|"), style),
                Span::styled(bar, style),
            ]));
        }
        // Under the strip: the median's column.
        let text = format!("^ median {}", afdisk::present::latency(s.median_ns));
        let at = LABEL_W + 1 + median_col;
        let mark = if at + text.chars().count() <= LABEL_W + 1 + cols {
            format!("{}{text}", " ".repeat(at))
        } else {
            let t = format!("median {} ^", afdisk::present::latency(s.median_ns));
            format!(
                "{}{t}",
                " ".repeat((at + 1).saturating_sub(t.chars().count()))
            )
        };
        lines.push(Line::from(Span::styled(mark, style)));
    }
    lines.extend(axis_lines(p, cols));
    for s in &p.series {
        let style = match s.side {
            Side::Aligned => st.ok,
            Side::Misaligned => st.bad,
        };
        lines.push(Line::from(Span::styled(s.legend(), style)));
    }
    lines
}

/// The time axis under the strips: a rule with a `+` at each tick, and the tick labels placed under them (a
/// label that would overlap the previous one is left out).
fn axis_lines(p: &Plot, cols: usize) -> [Line<'static>; 2] {
    let mut rule: Vec<char> = "-".repeat(cols).chars().collect();
    let mut labels: Vec<char> = vec![' '; cols + LABEL_W + 1];
    let mut free_from = 0usize;
    for (v, label) in &p.ticks {
        let x = (plot::position(*v, p.lo_ns, p.hi_ns) * cols as f64).round() as usize;
        let x = x.min(cols.saturating_sub(1));
        // The axis' corner already marks the first column.
        if x > 0 {
            rule[x] = '+';
        }
        let len = label.chars().count();
        let start = (LABEL_W + 1 + x)
            .saturating_sub(len / 2)
            .min(labels.len().saturating_sub(len));
        if start >= free_from {
            for (k, ch) in label.chars().enumerate() {
                labels[start + k] = ch;
            }
            free_from = start + len + 1;
        }
    }
    let head = format!("{:<LABEL_W$}+", "latency");
    [
        Line::from(format!("{head}{}", rule.into_iter().collect::<String>())),
        Line::from(
            labels
                .into_iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyCode;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn screen(b: &BenchState, w: u16, h: u16) -> String {
        let st = Styles {
            ok: Style::default(),
            bad: Style::default(),
            warn: Style::default(),
            title: Style::default(),
        };
        let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        t.draw(|f| draw(f, b, f.area(), &st)).expect("draw");
        t.backend().to_string()
    }

    /// Issue 25 item 7 at 80 columns, on a demo disk's long path: the head is as tall as its wrapped words, so
    /// the write mode's description is whole (it was cut at "(exclusive" under a title that wrapped), `p`
    /// says what it switches to, and an image file is told before a run that no run on it can show a drive's
    /// read-modify-write penalty, and what would.
    #[test]
    fn the_head_is_whole_at_80_columns_and_an_image_is_told_what_it_cannot_show() {
        let path = "/tmp/afdisk-demo-4716-791696037/xp-dos-63.img";
        let mut b = BenchState::new(path.into(), "xp-dos-63.img".into(), Some(1));
        b.image = true;
        b.key(KeyCode::Char('p'));
        b.key(KeyCode::Char('w'));
        let s = screen(&b, 80, 24);
        let flat = s
            .lines()
            .map(|l| l.trim_matches('"').trim_end())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(flat.contains("(exclusive open)"), "{s}");
        assert!(flat.contains("whole disk (p: partition 1)"), "{s}");
        assert!(
            flat.contains(
                "a run here shows what the host costs, never a drive's read-modify-write penalty"
            ),
            "{s}"
        );
        assert!(flat.contains("(benchmark a disk to see one)."), "{s}");
        b.image = false;
        let s = screen(&b, 80, 24);
        assert!(!s.contains("image file"), "{s}");
        assert!(!s.contains("host"), "{s}");
    }
}
