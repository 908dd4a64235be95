//! Rendering of the plan screen: the old layout (Now; Before once the plan is written) and the new one side
//! by side (moved entries marked `~`, blocked and unfixable ones `!`, new ones `+`), each change's reason, the
//! exact sectors to be written, the result of a write, and the confirm dialog where the device name must be
//! typed. The tables get their rows first (the Changes pane keeps two lines of text, and is dropped when it
//! would keep none); when a table's rows do not all fit, it shows a **window** of them starting at the
//! **focus**: the partition whose change is at the top of the Changes pane, so Up/Dn scrolls both, its
//! bottom border counting the rows hidden.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use afdisk::plan::{Action, DiffKind, Layout as PlanLayout, Plan};
use afdisk::units::human;

use super::plan_state::PlanState;

pub use super::dialog::Styles;

fn mark(plan: &Plan, number: u32) -> &'static str {
    match plan
        .changes
        .iter()
        .find(|c| c.number == number)
        .map(|c| c.action)
    {
        Some(Action::Create) => "+",
        Some(Action::Move) | Some(Action::Resize) => "~",
        Some(Action::Blocked) | Some(Action::Unfixable) => "!",
        _ => " ",
    }
}

/// One side of the plan (`title`: Now or Plan) as a table in `area`: its columns keep their widths (start and
/// end 10 cells) while they fit, and shrink to their content in a narrow window (`text::preferred_widths`), so
/// a size is never cut silently. When its rows do not all fit, it shows the window of them that starts at the
/// partition `focus` ([`window`]), its bottom border saying how many are hidden.
fn layout_table<'a>(
    plan: &Plan,
    l: Option<&PlanLayout>,
    title: &'a str,
    (area, focus): (Rect, Option<u32>),
    st: &Styles,
) -> Table<'a> {
    let width = area.width;
    let ss = plan.device.logical_sector_size;
    let head = ["  #", "start", "end", "size"];
    let cells: Vec<(Vec<String>, Style)> = match l {
        None => vec![(vec![String::new(), "(no table)".into()], Style::default())],
        Some(l) => l
            .partitions
            .iter()
            .map(|p| {
                let m = mark(plan, p.number);
                let style = match m {
                    "~" | "+" => st.ok,
                    "!" => st.bad,
                    _ => Style::default(),
                };
                let row = vec![
                    format!("{m}{:>3}", p.number),
                    p.start.to_string(),
                    p.end().to_string(),
                    human(p.size * ss),
                ];
                (row, style)
            })
            .collect(),
    };
    let texts: Vec<Vec<String>> = cells
        .iter()
        .filter(|(c, _)| c.len() == head.len())
        .map(|(c, _)| c.clone())
        .collect();
    let room = usize::from(width.saturating_sub(2));
    let w = super::text::preferred_widths(&[4, 10, 10, 6], &head, &texts, room);
    // The rows the table has room for: its height less the borders and the header.
    let room_rows = usize::from(area.height.saturating_sub(3)).max(1);
    let at = l.map_or(0, |l| {
        let n = focus.unwrap_or(0);
        l.partitions
            .iter()
            .position(|p| p.number >= n)
            .unwrap_or(l.partitions.len())
    });
    let (skip, hidden) = window(cells.len(), room_rows, at);
    let rows: Vec<Row> = cells
        .into_iter()
        .skip(skip)
        .take(room_rows)
        .map(|(c, style)| {
            let c: Vec<String> = c
                .iter()
                .zip(&w)
                .map(|(x, w)| super::text::cut(x, *w))
                .collect();
            Row::new(c).style(style)
        })
        .collect();
    let label = l.map(|l| l.table.label.as_str()).unwrap_or("none");
    let mut widths: Vec<Constraint> = w
        .iter()
        .map(|x| Constraint::Length(u16::try_from(*x).unwrap_or(u16::MAX)))
        .collect();
    if let (Some(last), Some(x)) = (widths.last_mut(), w.last()) {
        *last = Constraint::Min(u16::try_from(*x).unwrap_or(u16::MAX));
    }
    let mut block = Block::bordered().title(Line::from(format!(" {title} ({label}) ")));
    if hidden > 0 {
        block = block.title_bottom(Line::from(format!(" {hidden} more: Up/Dn ")));
    }
    Table::new(rows, widths)
        .header(Row::new(head.to_vec()).style(st.title))
        .block(block)
}

/// The rows of a table of `len` rows shown in `room`: (how many to skip, how many are hidden), the window
/// starting at row `at` and ending at the last row at most (so it is full while there are rows to fill it).
fn window(len: usize, room: usize, at: usize) -> (usize, usize) {
    let skip = at.min(len.saturating_sub(room));
    (skip, len.saturating_sub(room))
}

/// The partition whose change is at the top of the Changes pane scrolled by `scroll` rows, its text wrapped
/// to `width`: each change is two lines of the diff (the change and its reason), after the title.
fn change_at(
    plan: &Plan,
    lines: &[afdisk::plan::DiffLine],
    scroll: u16,
    width: usize,
) -> Option<u32> {
    let mut row = 0;
    let line = lines
        .iter()
        .skip(1)
        .position(|l| {
            row += wrapped_rows(&l.text, width);
            row > usize::from(scroll)
        })
        .unwrap_or(usize::MAX);
    let last = plan.changes.len().checked_sub(1)?;
    plan.changes.get((line / 2).min(last)).map(|c| c.number)
}

/// The heights of the plan screen's tables and its Changes pane in `avail` rows, the tables needing `need`:
/// the tables get their rows first, the Changes pane keeping 4 rows (two lines of text), and half the rows
/// at most while the Changes pane needs more than that. A Changes pane left without a row of text (its
/// borders alone, as at 60x15 after an undo, the status taking five rows) is dropped: the tables take its rows.
fn table_height(need: u16, avail: u16) -> u16 {
    let h = need.min(avail.saturating_sub(4).max(avail / 2)).max(4);
    if avail.saturating_sub(h) < 3 {
        need.min(avail).max(4)
    } else {
        h
    }
}

/// A diff line's style, by its kind: changes that fix something are good, blocked ones and losses bad, notes
/// a warning.
fn diff_style(k: DiffKind, st: &Styles) -> Style {
    match k {
        DiffKind::Change(a) | DiffKind::Reason(a) => match a {
            Action::Create | Action::Move | Action::Resize if matches!(k, DiffKind::Change(_)) => {
                st.ok
            }
            Action::Blocked | Action::Unfixable if matches!(k, DiffKind::Change(_)) => st.bad,
            _ => Style::default(),
        },
        DiffKind::Destroys => st.bad,
        DiffKind::Note | DiffKind::Wipe => st.warn,
        DiffKind::Title | DiffKind::Removed | DiffKind::Sectors => Style::default(),
    }
}

/// How many rows `text` takes wrapped at word boundaries to `width` columns, its spaces counted as they are
/// (a reason's indent on its first row, two between words).
fn wrapped_rows(text: &str, width: usize) -> usize {
    let width = width.max(1);
    let (mut rows, mut col) = (1, 0);
    for (i, (gap, len)) in super::theme::words(text).into_iter().enumerate() {
        let need = match (i, col) {
            (0, _) => gap + len,
            (_, 0) => len,
            _ => col + gap + len,
        };
        if need <= width {
            col = need;
        } else {
            // On a new row (unless this row is still empty), long words taking several.
            rows += usize::from(col > 0) + len.saturating_sub(1) / width;
            col = (len - 1) % width + 1;
        }
    }
    rows
}

/// The status line's text and style: the failure, what the write did, or what `a` would write.
fn status_text(ps: &PlanState, st: &Styles) -> (String, Style) {
    let plan = &ps.plan;
    match (&ps.error, &ps.written) {
        // The text says what kind of failure it was (see `plan::failure_text`).
        (Some(e), _) => (e.clone(), st.bad),
        (None, Some(w)) => (w.message.clone(), st.ok),
        (None, None) if plan.is_noop() => ("Nothing to write.".to_string(), st.warn),
        (None, None) => match afdisk::apply::moves::confirmation_what(plan) {
            // A data move is more than its table sectors: the line names it and how it is undone.
            Some(what) => (
                format!(
                    "Press a to {what} ({} sector(s)); the dialog says how it is undone.",
                    plan.writes.len()
                ),
                Style::default(),
            ),
            None => (
                format!(
                    "Press a to write {} sector(s); a backup is taken first.",
                    plan.writes.len()
                ),
                Style::default(),
            ),
        },
    }
}

pub fn draw(f: &mut Frame, ps: &PlanState, area: Rect, st: &Styles) {
    let plan = &ps.plan;
    let n = plan
        .new
        .partitions
        .len()
        .max(plan.old.as_ref().map_or(1, |o| o.partitions.len())) as u16;
    let (msg, style) = status_text(ps, st);
    // The status gets the rows its text wraps to (the backup's path and the undo key after a write), 2 to 8;
    // in a short window (60x15) one row is enough for a one-row text, and the changes get the other.
    let rows: usize = msg
        .lines()
        .map(|l| wrapped_rows(l, usize::from(area.width)))
        .sum();
    let least = if area.height < 20 { 1 } else { 2 };
    let status_h = u16::try_from(rows.clamp(least, 8)).unwrap_or(2);
    // The title whole: as many rows as its words wrap to (2 at 80 columns, more in a narrow window).
    let lines = plan.diff();
    let title = lines.first().map(|l| l.text.clone()).unwrap_or_default();
    let title = super::dialog::wrap_words(&title, usize::from(area.width.max(1)));
    let head_h = u16::try_from(title.len()).unwrap_or(2).clamp(2, 4);
    let table_h = table_height(n + 3, area.height.saturating_sub(head_h + status_h));
    let [head, tables, body, status] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Length(table_h),
        Constraint::Min(0),
        Constraint::Length(status_h),
    ])
    .areas(area);
    let title: Vec<Line> = title.into_iter().map(Line::from).collect();
    f.render_widget(Paragraph::new(title).style(st.title), head);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(tables);
    // Once the plan is on the disk, its old layout is what the disk was before it.
    let old = if ps.on_disk() { "Before" } else { "Now" };
    // The changes scroll as far as their last row (Down stops there, so Up moves them at once).
    let inner = usize::from(body.width.saturating_sub(2));
    let total: usize = lines
        .iter()
        .skip(1)
        .map(|l| wrapped_rows(&l.text, inner))
        .sum();
    let max = total.saturating_sub(usize::from(body.height.saturating_sub(2)));
    ps.scroll_max.set(u16::try_from(max).unwrap_or(u16::MAX));
    let scroll = ps.scroll.min(ps.scroll_max.get());
    // The tables follow the Changes pane: their rows from the change at its top.
    let focus = change_at(plan, &lines, scroll, inner);
    let now = layout_table(plan, plan.old.as_ref(), old, (left, focus), st);
    f.render_widget(now, left);
    let new = layout_table(plan, Some(&plan.new), "Plan", (right, focus), st);
    f.render_widget(new, right);
    // Reasons, sectors and notes: the diff without its title.
    let text: Vec<Line> = lines
        .iter()
        .skip(1)
        .map(|l| Line::from(Span::styled(l.text.clone(), diff_style(l.kind, st))))
        .collect();
    if body.height >= 3 {
        f.render_widget(
            Paragraph::new(text)
                .wrap(Wrap { trim: false })
                .scroll((scroll, 0))
                .block(Block::bordered().title(" Changes (Up/Dn scroll) ")),
            body,
        );
    }
    f.render_widget(
        Paragraph::new(msg).style(style).wrap(Wrap { trim: true }),
        status,
    );
    if let Some(d) = &ps.dialog {
        d.confirm.draw(f, area, st);
    }
}

#[cfg(test)]
mod tests {
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    use super::*;

    fn screen(ps: &PlanState) -> String {
        let st = Styles::plain();
        let mut t = Terminal::new(TestBackend::new(120, 30)).expect("terminal");
        t.draw(|f| draw(f, ps, f.area(), &st)).expect("draw");
        t.backend().to_string()
    }

    /// The diff is styled by each line's kind, not by its first character: a loss (text "DESTROYS …") is
    /// bad, a blocked change bad, its reason plain, a note a warning.
    #[test]
    fn diff_lines_are_styled_by_kind() {
        use ratatui::style::Color;
        let st = Styles {
            ok: Style::default().fg(Color::Green),
            bad: Style::default().fg(Color::Red),
            warn: Style::default().fg(Color::Yellow),
            title: Style::default(),
        };
        assert_eq!(diff_style(DiffKind::Destroys, &st), st.bad);
        assert_eq!(diff_style(DiffKind::Change(Action::Blocked), &st), st.bad);
        assert_eq!(
            diff_style(DiffKind::Reason(Action::Blocked), &st),
            Style::default()
        );
        assert_eq!(diff_style(DiffKind::Change(Action::Move), &st), st.ok);
        assert_eq!(diff_style(DiffKind::Note, &st), st.warn);
    }

    /// After a write at 80x24 the whole outcome shows: the undo key first, then what was written, the
    /// backup's path and the kernel's note (the status used to be 2 rows and cut them off).
    #[test]
    fn a_long_write_outcome_shows_whole_at_80x24() {
        let dir = tempfile::tempdir().expect("tempdir");
        let img = dir.path().join("t.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(64 << 20))
            .expect("image");
        let o = afdisk::device::open(&img, &Default::default()).expect("open");
        let req = afdisk::plan::Request {
            preset: Some("data".into()),
            ..Default::default()
        };
        let plan = afdisk::plan::make(&o, &req).expect("plan");
        let mut ps = PlanState::new(img, plan, None);
        // Three lines, each wrapped at spaces: all of them show at 80x24.
        let message = String::from(
            "Wrote 5 sector(s) on hand.img, read back and verified.\nPress u to undo, b to benchmark the \
             result.\nBackup: hand.img-1795405022-before-apply.json (? shows its path and the END)",
        );
        ps.written = Some(super::super::plan_state::Written {
            backup_file: "/b.json".into(),
            message,
            details: Vec::new(),
            undone: false,
        });
        let st = Styles {
            ok: Style::default(),
            bad: Style::default(),
            warn: Style::default(),
            title: Style::default(),
        };
        let mut t = Terminal::new(TestBackend::new(80, 23)).expect("terminal");
        t.draw(|f| draw(f, &ps, f.area(), &st)).expect("draw");
        let text = t.backend().to_string();
        assert!(text.contains("Press u to undo"), "{text}");
        assert!(text.contains("before-apply.json"), "{text}");
        assert!(text.contains("the END"), "{text}");
        assert_eq!(wrapped_rows("aaa bbb", 3), 2);
        assert_eq!(wrapped_rows("abcdefg", 3), 3);
        assert_eq!(wrapped_rows("ab c", 4), 1);
    }

    /// Issue 25 item 9: before a data move (the demo's gpt-2049, ext4 at 2049) the status says what `a`
    /// does (moves the data, not only "write 4 sector(s)") and the confirmation says how it is undone: a
    /// stopped move rolled back (u) only before data is copied, else finished (r), and no table restore after.
    #[test]
    fn a_data_move_says_what_it_moves_and_how_it_is_undone_before_it_starts() {
        let dir = tempfile::tempdir().expect("tempdir");
        let samples = afdisk::demo::make(dir.path()).expect("demo samples");
        let Some(g) = samples.samples.iter().find(|s| s.name == "gpt-2049.img") else {
            panic!("no gpt-2049 sample (sgdisk missing?): {:?}", samples.notes);
        };
        let o = afdisk::device::open(&g.path, &Default::default()).expect("open");
        let req = afdisk::plan::Request {
            realign: true,
            ..Default::default()
        };
        let plan = afdisk::plan::make(&o, &req).expect("plan");
        assert!(afdisk::apply::moves::moves_data(&plan), "a data move");
        let mut ps = PlanState::new(g.path.clone(), plan, None);
        let s = screen(&ps);
        assert!(
            s.contains("Press a to move the data of partition 1 (ext4"),
            "{s}"
        );
        assert!(!s.contains("Press a to write"), "{s}");
        ps.key(crossterm::event::KeyCode::Char('a'));
        let c = &ps.dialog.as_ref().expect("the confirmation").confirm;
        // The dialog alone at 80x24, its frame taken away and its rows joined: every word shows.
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        t.draw(|f| c.draw(f, f.area(), &Styles::plain()))
            .expect("draw");
        let flat: String = t
            .backend()
            .to_string()
            .chars()
            .map(|ch| {
                if "\"│─┌┐└┘".contains(ch) {
                    ' '
                } else {
                    ch
                }
            })
            .collect();
        let flat: String = flat.split_whitespace().collect::<Vec<_>>().join(" ");
        for want in [
            "rolled back (u there",
            "resume --rollback",
            "before any data is copied",
            "no table restore undoes it",
        ] {
            assert!(flat.contains(want), "{want}: {flat}");
        }
    }

    #[test]
    fn a_failed_write_shows_as_an_io_failure_with_the_restore_command() {
        let dir = tempfile::tempdir().expect("tempdir");
        let img = dir.path().join("t.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(64 << 20))
            .expect("image");
        let o = afdisk::device::open(&img, &Default::default()).expect("open");
        let req = afdisk::plan::Request {
            preset: Some("data".into()),
            ..Default::default()
        };
        let plan = afdisk::plan::make(&o, &req).expect("plan");
        let mut ps = PlanState::new(img.clone(), plan, Some(afdisk::present::presets()));
        let cmd = afdisk::apply::restore_command(
            std::path::Path::new("/dev/x"),
            std::path::Path::new("/b/x.json"),
        );
        let io = afdisk::Error::io(
            "writing sector 1 of /dev/x failed",
            format!("put them back with: {cmd}"),
        );
        ps.error = Some(super::super::plan::failure_text(&io));
        let text = screen(&ps);
        assert!(text.contains("I/O failure: writing sector 1"), "{text}");
        assert!(!text.contains("Refused"), "{text}");
        assert!(text.contains("afdisk restore /dev/x"), "{text}");
        let refused = afdisk::Error::refused("confirmation does not name it", "type x");
        ps.error = Some(super::super::plan::failure_text(&refused));
        assert!(screen(&ps).contains("Refused: confirmation"));
    }
}
