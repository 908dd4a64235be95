//! Rendering of the sector-size wizard: the core's texts (status, plan, warnings, prompts, outcome; the
//! running switch's events and progress as `afdisk::present` words them), styled by their kind: what is lost and refusals as bad, the vendor's warnings as warnings, the verdict by
//! its tone. No wording of its own beyond the section headings the core does not give.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph, Wrap};
use ratatui::Frame;

use afdisk::present;
use afdisk::reformat::{self, Verdict};

use super::state::{WizardState, WizardStep};
use crate::tui::dialog::Styles;

fn plain(s: impl Into<String>) -> Line<'static> {
    Line::from(s.into())
}

fn styled(s: impl Into<String>, st: Style) -> Line<'static> {
    Line::from(Span::styled(s.into(), st))
}

pub fn draw(f: &mut Frame, w: &WizardState, area: Rect, st: &Styles) {
    let title = styled(format!("Sector size — {}", w.path.display()), st.title);
    match &w.phase {
        WizardStep::Loading => {
            let l = vec![title, plain("Reading the drive and the tools on PATH…")];
            f.render_widget(Paragraph::new(l), area);
        }
        WizardStep::Overview | WizardStep::Confirm(..) => {
            let mut l = vec![title];
            l.extend(overview(w, st));
            draw_scrolled(f, w, l, area);
            if let WizardStep::Confirm(_, c) = &w.phase {
                c.draw(f, area, st);
            }
        }
        WizardStep::Running => running(f, w, title, area, st),
        WizardStep::Done(o) => {
            let mut l = vec![title];
            let tone = match o.verdict {
                Verdict::Switched => st.ok,
                Verdict::SwitchedKernelStale => st.warn,
                Verdict::NotSwitched | Verdict::Unknown => st.bad,
            };
            for (i, line) in o.render().lines().enumerate() {
                l.push(if i == 0 {
                    styled(line, tone)
                } else if line.starts_with("Do: ") {
                    styled(line, st.warn)
                } else {
                    plain(line)
                });
            }
            draw_scrolled(f, w, l, area);
        }
        WizardStep::Failed(e) => {
            let l = vec![title, styled(afdisk::error::failure_text(e), st.bad)];
            f.render_widget(Paragraph::new(l).wrap(Wrap { trim: true }), area);
        }
    }
}

/// The wizard's text `l` wrapped in `area`, scrolled from row `w.scroll` (at most to its last row: the last
/// row it can start at is put in `w.scroll_max`, where Down stops).
fn draw_scrolled(f: &mut Frame, w: &WizardState, l: Vec<Line<'static>>, area: Rect) {
    let rows: u16 = l
        .iter()
        .map(|x| crate::tui::theme::rows_of(&x.to_string(), area.width))
        .sum();
    w.scroll_max.set(rows.saturating_sub(area.height));
    f.render_widget(
        Paragraph::new(l)
            .wrap(Wrap { trim: false })
            .scroll((w.scroll.min(w.scroll_max.get()), 0)),
        area,
    );
}

/// The status (what the drive supports, which tool), then the plan (command, what is lost, the warnings),
/// or why there is none; the last refused answer first.
fn overview(w: &WizardState, st: &Styles) -> Vec<Line<'static>> {
    let mut l = Vec::new();
    if let Some(e) = &w.refusal {
        l.push(styled(afdisk::error::failure_text(e), st.bad));
    }
    let Some(f) = &w.facts else {
        return l;
    };
    if let Some(s) = &f.status {
        l.extend(s.render().lines().map(plain));
    }
    match &f.plan {
        Some(Ok(p)) => {
            let lost: Vec<String> = p.lost.iter().map(|x| format!("  - {x}")).collect();
            let warned: Vec<String> = p
                .warnings
                .iter()
                .map(|x| format!("  ! {}", x.text))
                .collect();
            for line in p.render().lines() {
                l.push(
                    if lost.iter().any(|x| x == line) || line.trim() == reformat::NOTHING_FOUND {
                        styled(line, st.bad)
                    } else if warned.iter().any(|x| x == line) {
                        styled(line, st.warn)
                    } else if line.starts_with("Switch ") {
                        styled(line, st.title)
                    } else {
                        plain(line)
                    },
                );
            }
        }
        Some(Err(e)) => l.push(styled(afdisk::error::failure_text(e), st.bad)),
        None => {}
    }
    l
}

fn running(f: &mut Frame, w: &WizardState, title: Line<'static>, area: Rect, st: &Styles) {
    let [head, gauge, out, why] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(5),
    ])
    .areas(area);
    let cmd = w
        .live
        .command
        .clone()
        .unwrap_or_else(|| "Starting the tool…".to_string());
    f.render_widget(Paragraph::new(vec![title, plain(cmd)]), head);
    let label = w
        .live
        .ended
        .clone()
        .unwrap_or_else(|| present::switch_progress(w.live.percent, None));
    f.render_widget(
        Gauge::default()
            .gauge_style(st.ok)
            .ratio(w.live.percent.map_or(0.0, |p| (p / 100.0).clamp(0.0, 1.0)))
            .label(label),
        gauge,
    );
    let rows = usize::from(out.height);
    let start = w.live.lines.len().saturating_sub(rows);
    let lines: Vec<Line> = w.live.lines[start..]
        .iter()
        .map(|s| plain(s.clone()))
        .collect();
    f.render_widget(Paragraph::new(lines), out);
    // The core's warning about power, and where it is safe to stop (nowhere); a key that did nothing says so.
    let power = w
        .plan()
        .and_then(|p| p.warnings.iter().find(|x| x.key == "power"))
        .map(|x| styled(x.text.clone(), st.warn));
    let mut reason: Vec<Line> = power.into_iter().collect();
    reason.push(match &w.notice {
        Some(n) => styled(n.clone(), st.bad),
        None => plain(format!("Safe to stop: {}", reformat::SAFE_STOP)),
    });
    f.render_widget(Paragraph::new(reason).wrap(Wrap { trim: true }), why);
}
