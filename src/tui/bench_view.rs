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

pub fn draw(f: &mut Frame, b: &BenchState, area: Rect, st: &Styles) {
    let [head, body] = Layout::vertical([Constraint::Length(3), Constraint::Min(1)]).areas(area);
    let part = b.partition.map_or("whole disk".to_string(), |n| {
        format!("partition {n} as its filesystem sees it")
    });
    let head_lines = vec![
        Line::from(Span::styled(
            format!("Benchmark {} — {part}", b.path.display()),
            st.title,
        )),
        Line::from(format!(
            "{}   probe: {} (o)",
            choice_line("write", &b.write, 'w'),
            if b.probe { "on" } else { "off" }
        )),
        Line::from(Span::styled(
            choice_description(&b.write),
            if b.mode() == WriteMode::All {
                st.bad
            } else {
                Style::default()
            },
        )),
    ];
    f.render_widget(Paragraph::new(head_lines).wrap(Wrap { trim: true }), head);
    match &b.phase {
        BenchScreen::Setup | BenchScreen::Confirm(_) => {
            let text = vec![
                Line::from(
                    "Aligned against misaligned I/O, one I/O in flight, O_DIRECT, classes interleaved in random \
                     order at fresh random slots; stops as soon as the verdict is decided (at most 10 s).",
                ),
                Line::from(""),
                Line::from(
                    "Press r to run. Write modes free and all add the write classes, which pay read-modify-write; \
                     the probe (o, with writes) finds the real physical sector size.",
                ),
            ];
            f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), body);
            if let BenchScreen::Confirm(c) = &b.phase {
                c.draw(f, area, st);
            }
        }
        BenchScreen::Running(live) => draw_live(f, live, body, st),
        BenchScreen::Done(r) if b.plot => draw_plot(f, r, body, st),
        BenchScreen::Done(r) => draw_done(f, r, b.scroll, body, st),
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

fn draw_done(f: &mut Frame, r: &BenchReport, scroll: u16, area: Rect, st: &Styles) {
    let rows: Vec<Row> = r
        .classes
        .iter()
        .map(|c| match &c.summary {
            Some(s) => Row::new(vec![
                c.spec.name.clone(),
                s.samples.to_string(),
                us(s.median_ns),
                us(s.p90_ns as f64),
                us(s.p99_ns as f64),
                format!("{:.0}", s.iops),
            ]),
            None => Row::new(vec![c.spec.name.clone(), "0".into()]),
        })
        .collect();
    let table_h = (rows.len() as u16 + 1).min(area.height.saturating_sub(4));
    let [table, text] =
        Layout::vertical([Constraint::Length(table_h), Constraint::Min(1)]).areas(area);
    f.render_widget(
        Table::new(
            rows,
            [
                Constraint::Length(17),
                Constraint::Length(7),
                Constraint::Length(10),
                Constraint::Length(10),
                Constraint::Length(10),
                Constraint::Min(6),
            ],
        )
        .header(Row::new(vec!["class", "samples", "median", "p90", "p99", "IOPS"]).style(st.title)),
        table,
    );
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
    // What to do next comes before the warnings and notes, which may run past the screen (Up/Dn scrolls).
    lines.push(Line::from(format!(
        "{:.1} s, {} rounds. r runs again, d shows the latency distributions, Up/Dn scrolls.",
        r.elapsed_secs, r.rounds
    )));
    for w in &r.warnings {
        lines.push(Line::from(Span::styled(format!("Warning: {w}"), st.bad)));
    }
    for n in &r.notes {
        lines.push(Line::from(format!("Note: {n}")));
    }
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .scroll((scroll, 0)),
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
