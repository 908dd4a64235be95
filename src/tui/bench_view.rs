//! Rendering of the bench screen: the options, the confirm dialog for `--write all`, live per-class latency
//! sparklines with the median so far and the running verdict, and the final per-class table and verdicts.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Sparkline, Table, Wrap};
use ratatui::Frame;

use afdisk::bench::{BenchReport, WriteMode};

use super::bench::{BenchState, Live, Phase};
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
        Phase::Setup | Phase::Confirm(_) => {
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
            if let Phase::Confirm(c) = &b.phase {
                c.draw(f, area, st);
            }
        }
        Phase::Running(live) => draw_live(f, live, body, st),
        Phase::Done(r) => draw_done(f, r, body, st),
        Phase::Failed(e) => {
            f.render_widget(
                Paragraph::new(super::failure_text(e))
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
            "running {:.1} s of at most {:.0} s, {} rounds{}",
            l.elapsed_secs,
            l.cap_secs,
            l.rounds,
            if l.warmup {
                " (warm-up, discarded)"
            } else {
                ""
            }
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

fn draw_done(f: &mut Frame, r: &BenchReport, area: Rect, st: &Styles) {
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
    for w in &r.warnings {
        lines.push(Line::from(Span::styled(format!("Warning: {w}"), st.bad)));
    }
    for n in &r.notes {
        lines.push(Line::from(format!("Note: {n}")));
    }
    lines.push(Line::from(format!(
        "{:.1} s, {} rounds. r runs again.",
        r.elapsed_secs, r.rounds
    )));
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), text);
}
