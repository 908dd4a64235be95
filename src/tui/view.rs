//! Rendering (the "view" half of the UI): the device list, the disk view (map, partition table, findings;
//! the partitions that unwritten edits change marked `*`, a line under the table saying how many changes
//! are pending; a whole-disk filesystem shown as the disk's content), the sector zoom, the help overlay and
//! the key bar (or the question before quitting with unwritten edits). Meaning never depends on colour alone: every badge also
//! carries a word or symbol, and NO_COLOR drops colours entirely.
//!
//! Terminal fit: nothing is cut off at 80x24 — the key bar (or a status or error there) wraps onto up to
//! three lines, the disk title wraps, and a device that failed in the list shows its whole error (problem and
//! fix) when selected. **Terminal kinds** ([`TermKind`], from `TERM`, in `term`): `linux` (the console) gets
//! ASCII in place of box-drawing and block characters and only the 16 named colours; `dumb` (or no `TERM`)
//! gets ASCII and no colour. The ASCII pass ([`fit_to`]) runs over the finished frame, so every screen (pages
//! included) gets it. The list is drawn by `list_view`, the zoom by `zoom_view`, a page by itself. An
//! image file shows a banner with the physical sector size it is judged against (assumed 4096 bytes) and the
//! key that switches it (a: 512/4096; everything is read and recomputed with the new size).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Clear, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use afdisk::finding::Severity;
use afdisk::present::Badge;
use afdisk::report::Report;
use afdisk::units::human;

use super::app::{App, Screen};
use super::list_view::draw_list;
use super::model::{self, SegKind};
pub use super::model::{disk_rows, DiskRow};
use super::model::{DiskState, Panel};
use super::page::key_bar;
pub use super::term::{fit_to, TermKind};
use super::theme::{rows_of, Theme};
use super::zoom_view::draw_zoom;

pub fn draw(f: &mut Frame, app: &App) {
    draw_screen(f, app);
    fit_to(f.buffer_mut(), app.term);
}

fn draw_screen(f: &mut Frame, app: &App) {
    let th = Theme::new(app.no_color || app.term == TermKind::Dumb);
    let area = f.area();
    if area.width < 20 || area.height < 6 {
        f.render_widget(Paragraph::new("afdisk: window too small"), area);
        return;
    }
    let bar_h = rows_of(&keybar_text(app, area.width), area.width).min(4);
    let banner_h = app
        .banner
        .as_ref()
        .map_or(0, |b| rows_of(b, area.width).min(3));
    let [banner, body, bar] = Layout::vertical([
        Constraint::Length(banner_h),
        Constraint::Min(1),
        Constraint::Length(bar_h),
    ])
    .areas(area);
    if let Some(b) = &app.banner {
        f.render_widget(
            Paragraph::new(b.as_str())
                .style(th.warn.add_modifier(Modifier::REVERSED))
                .wrap(Wrap { trim: true }),
            banner,
        );
    }
    let styles = th.styles();
    match app.screen {
        Screen::List => draw_list(f, app, body, &th),
        Screen::Disk => draw_disk(f, app, body, &th),
        Screen::Zoom => draw_zoom(f, app, body, &th),
        Screen::Page(name) => match app.page(name) {
            Some(p) => p.draw(f, body, &styles),
            None => f.render_widget(Paragraph::new("Nothing here."), body),
        },
    }
    draw_keybar(f, app, bar);
    if app.help {
        draw_help(f, app, area, &th);
    }
}

/// The key bar's text at `width` columns: a running job's status, the disk view's error, or the screen's
/// commands, whole ones to a row ([`key_rows`]).
fn keybar_text(app: &App, width: u16) -> String {
    if app.asking_quit {
        app.quit_question()
    } else if let Some(b) = &app.busy {
        b.clone()
    } else if let (Some(e), Screen::Disk) = (&app.error, app.screen) {
        format!("error: {e}")
    } else {
        let status = match app.screen {
            Screen::Page(name) => app.page(name).and_then(|p| p.status()),
            _ => None,
        };
        status.unwrap_or_else(|| key_rows(&app.commands(), width))
    }
}

/// The key bar of `commands` in `width` columns: as many whole commands to a row as fit, two spaces apart,
/// so a command is never split between its key and its word ("q" on one row, "quit" on the next).
fn key_rows(commands: &[super::page::Command], width: u16) -> String {
    let w = usize::from(width.max(1));
    let mut rows: Vec<String> = Vec::new();
    for item in key_bar(commands).split("  ") {
        match rows.last_mut() {
            Some(r) if r.chars().count() + 2 + item.chars().count() <= w => {
                r.push_str("  ");
                r.push_str(item);
            }
            _ => rows.push(item.to_string()),
        }
    }
    rows.join("\n")
}

/// The key bar, wrapped onto the lines it was given (a long status or error is never cut at the edge).
fn draw_keybar(f: &mut Frame, app: &App, area: Rect) {
    f.render_widget(
        Paragraph::new(keybar_text(app, area.width))
            .style(Style::default().add_modifier(Modifier::REVERSED))
            .wrap(Wrap { trim: true }),
        area,
    );
}

fn draw_help(f: &mut Frame, app: &App, area: Rect, th: &Theme) {
    // The page's details (a write's paths in full) under the keys.
    let details = match app.screen {
        super::app::Screen::Page(name) => app.page(name).map(|p| p.details()).unwrap_or_default(),
        _ => Vec::new(),
    };
    let w = area.width.min(if details.is_empty() { 70 } else { 100 });
    let lines = help_lines(
        &app.commands(),
        &details,
        usize::from(w.saturating_sub(2)),
        th,
    );
    // The lines are wrapped here, so their count is the box's height: nothing is cut off, and a box taller
    // than the terminal scrolls to its very last line.
    let rows = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let h = rows.saturating_add(3).min(area.height);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    f.render_widget(Clear, r);
    // Taller than the terminal: it scrolls (Up/Dn), and its title says so.
    let hidden = rows.saturating_add(2).saturating_sub(h);
    app.help_max.set(hidden);
    let title = if hidden > 0 {
        " Keys (Up/Dn scroll, Esc or ? closes) "
    } else {
        " Keys (Esc or ? closes) "
    };
    let block = Block::bordered().title(Line::from(title));
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .scroll((app.help_scroll.min(hidden), 0)),
        r,
    );
}

/// The help's lines wrapped at `width` columns: each command's keys in a column of 12, its words wrapped
/// beside them (under them when the line is too narrow for the column); then the page's `details` (a write's
/// paths in full), each wrapped at spaces, a word longer than the line split.
fn help_lines(
    keys: &[super::page::Command],
    details: &[String],
    width: usize,
    th: &Theme,
) -> Vec<Line<'static>> {
    const KEYS: usize = 12;
    let width = width.max(1);
    let mut lines: Vec<Line> = Vec::new();
    for c in keys {
        let help = if c.help.is_empty() { c.bar } else { c.help };
        if width > KEYS + 8 && c.keys.chars().count() < KEYS {
            let rows = super::dialog::wrap_words(help, width - KEYS);
            for (i, row) in rows.into_iter().enumerate() {
                let key = if i == 0 { c.keys } else { "" };
                lines.push(Line::from(vec![
                    Span::styled(format!("{key:<KEYS$}"), th.title),
                    Span::raw(row),
                ]));
            }
        } else {
            lines.push(Line::from(Span::styled(c.keys.to_string(), th.title)));
            lines.extend(
                super::dialog::wrap_words(help, width)
                    .into_iter()
                    .map(Line::from),
            );
        }
    }
    if !details.is_empty() {
        lines.push(Line::from(Span::styled("Last write:", th.title)));
        for d in details {
            lines.extend(
                super::dialog::wrap_words(d, width)
                    .into_iter()
                    .map(Line::from),
            );
        }
    }
    lines
}

/// `items` on lines of at most `width` columns, two spaces apart, each line led by a space: a line breaks
/// only between items, so a label stays with its value ("log/phys 512/4096"); an item wider than the line
/// has a line of its own.
pub(super) fn pack(items: &[String], width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for it in items {
        let fits = cur.chars().count() + 2 + it.chars().count() <= width;
        if cur.is_empty() {
            cur = format!(" {it}");
        } else if fits {
            cur.push_str("  ");
            cur.push_str(it);
        } else {
            out.push(std::mem::replace(&mut cur, format!(" {it}")));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The disk view's header lines at `width` columns, packed item by item ([`pack`]); `table` names the
/// table ([`DiskState::table_words`]).
pub(super) fn disk_title(r: &Report, table: &str, width: u16) -> Vec<Line<'static>> {
    let d = &r.device;
    let assumed = if d.geometry_source.physical_sector_size == afdisk::device::Source::Assumed {
        " phys assumed"
    } else {
        ""
    };
    // What the disk is: an image file says so in the words the dialogs use; a drive, how it is attached.
    let kind = match d.kind {
        afdisk::device::TargetKind::Image => super::text::target_kind(d.kind, &d.name).to_string(),
        afdisk::device::TargetKind::Block => d.transport.clone(),
    };
    let l1 = [
        d.path.display().to_string(),
        human(d.size_bytes),
        kind,
        format!(
            "log/phys {}/{}{assumed}",
            d.logical_sector_size, d.physical_sector_size
        ),
        table.to_string(),
    ];
    let drive = match &d.drive {
        Some(dr) => format!(
            "drive says {}/{} offset {} ({})",
            dr.logical_sector_size,
            dr.physical_sector_size,
            dr.alignment_offset,
            serde_json::to_value(dr.source)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        ),
        None => "drive cannot be asked".into(),
    };
    // A loop device has no model: its backing file names it (as in `afdisk list`).
    // Only what is known is named: no unlabelled "-" (an image file has neither model nor serial).
    let who: Vec<String> = d
        .model
        .clone()
        .map(|m| format!("model {m}"))
        .or_else(|| afdisk::present::backing_file(d))
        .into_iter()
        .chain(d.serial.as_ref().map(|s| format!("serial {s}")))
        .collect();
    let who = if who.is_empty() {
        "no model or serial".to_string()
    } else {
        who.join("  ")
    };
    let l2 = [who, format!("align offset {}", d.alignment_offset), drive];
    let w = usize::from(width.max(1));
    pack(&l1, w)
        .into_iter()
        .chain(pack(&l2, w))
        .map(Line::from)
        .collect()
}

/// An image file's banner: the physical sector size it is judged against, and the key that switches it.
pub fn image_banner(r: &Report) -> Option<String> {
    let d = &r.device;
    if d.kind != afdisk::device::TargetKind::Image {
        return None;
    }
    let how = match d.geometry_source.physical_sector_size {
        afdisk::device::Source::Assumed => "assumed",
        _ => "set to",
    };
    let key = match super::app::next_physical(d.logical_sector_size, d.physical_sector_size) {
        Some(n) => format!("a: judge it as {n}-byte physical sectors"),
        None => format!(
            "its {}-byte logical sectors leave no smaller choice",
            d.logical_sector_size
        ),
    };
    Some(format!(
        " {}: physical sector size {how} {} bytes ({key})",
        super::text::target_kind(d.kind, &d.name),
        d.physical_sector_size
    ))
}

fn draw_map(f: &mut Frame, r: &Report, selected: Option<usize>, area: Rect, th: &Theme) {
    let inner_w = area.width.saturating_sub(2) as usize;
    let segs = model::segments(r);
    let widths = model::widths(&segs, inner_w, 3);
    let mut spans = Vec::new();
    for (s, &w) in segs.iter().zip(&widths) {
        if w == 0 {
            continue;
        }
        let (text, style) = match s.kind {
            SegKind::Table => ("T".repeat(w), th.dim),
            SegKind::Free => (".".repeat(w), th.dim),
            // Not free: what the whole disk holds, named.
            SegKind::Content => {
                let words = model::whole_disk_content(r).map(model::content_words);
                let mut t = format!("#{} (whole disk)", words.unwrap_or_default());
                while t.chars().count() < w {
                    t.push('#');
                }
                (t.chars().take(w).collect(), th.warn)
            }
            SegKind::Part(i) => {
                let p = &r.partitions[i];
                let bad = p.is_misaligned(false);
                let mut t = String::from(if bad { "!" } else { "|" });
                t.push_str(&p.number.to_string());
                while t.chars().count() < w {
                    t.push(if bad { '~' } else { '=' });
                }
                let t: String = t.chars().take(w).collect();
                let mut st = if bad { th.bad } else { th.ok };
                if Some(i) == selected {
                    st = st.add_modifier(Modifier::REVERSED);
                }
                (t, st)
            }
        };
        spans.push(Span::styled(text, style));
    }
    let legend = if model::whole_disk_content(r).is_some() {
        Line::from(" # whole-disk content (no table) ")
    } else {
        Line::from(" T table  . free  |N aligned  !N misaligned ")
    };
    let block = Block::bordered()
        .title(Line::from(" Disk map "))
        .title_bottom(legend);
    f.render_widget(Paragraph::new(Line::from(spans)).block(block), area);
}

fn draw_disk(f: &mut Frame, app: &App, area: Rect, th: &Theme) {
    let Some(d) = &app.disk else {
        let msg = app
            .error
            .clone()
            .or_else(|| app.busy.clone())
            .unwrap_or_else(|| "Loading...".into());
        f.render_widget(
            Paragraph::new(msg)
                .block(Block::bordered())
                .wrap(Wrap { trim: true }),
            area,
        );
        return;
    };
    let r = &d.report;
    let mut table_h = (disk_rows(r).len() as u16 + 3).clamp(4, (area.height / 2).max(4));
    let mut head = disk_title(r, &d.table_words(), area.width);
    let banner = image_banner(r);
    let mut head_h = head
        .iter()
        .map(|l| rows_of(&l.to_string(), area.width))
        .sum::<u16>()
        .min(4);
    let mut banner_h = banner.as_ref().map_or(0, |b| rows_of(b, area.width).min(2));
    let unwritten = app.unwritten();
    let pending = pending_line(&unwritten);
    let pending_h = pending
        .as_ref()
        .map_or(0, |p| rows_of(p, area.width).min(3));
    let mut findings_h = 3;
    let room = area.height.saturating_sub(3 + pending_h);
    if d.focus == Panel::Findings {
        // The findings have the focus (Tab): their text keeps its row, the table gives up its rows first.
        fit_rows(
            room,
            [&mut banner_h, &mut table_h, &mut head_h, &mut findings_h],
            [0, 4, 2, 2],
        );
    } else {
        fit_rows(
            room,
            [&mut banner_h, &mut findings_h, &mut head_h, &mut table_h],
            [0, 2, 2, 4],
        );
    }
    let [title, banner_area, map, parts, pending_area, findings] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Length(banner_h),
        Constraint::Length(3),
        Constraint::Length(table_h),
        Constraint::Length(pending_h),
        Constraint::Min(findings_h),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(std::mem::take(&mut head))
            .style(th.title)
            .wrap(Wrap { trim: false }),
        title,
    );
    if let Some(b) = banner {
        f.render_widget(
            Paragraph::new(b).style(th.warn).wrap(Wrap { trim: true }),
            banner_area,
        );
    }
    draw_map(f, r, d.selected_partition(), map, th);

    let changed: Vec<u32> = unwritten.iter().map(|(n, _)| *n).collect();
    draw_partitions(f, d, &changed, parts, th);
    if let Some(p) = pending {
        f.render_widget(
            Paragraph::new(p).style(th.warn).wrap(Wrap { trim: true }),
            pending_area,
        );
    }
    draw_findings(f, d, findings, th);
}

/// Shrinks the heights `h` (in the order given, each down to its floor in `least`) until they sum to at most
/// `room` rows, or all are at their floors. The disk view in a short terminal (60x15): the image banner goes
/// first (the title says "phys assumed" too), then the findings' text (their box's title keeps the count),
/// then the title's rows past two, then the partition table's rows down to one (the selected one, in view);
/// at 80x24 nothing shrinks. With the focus on the findings (Tab) the table's rows go before their text.
fn fit_rows(room: u16, h: [&mut u16; 4], least: [u16; 4]) {
    for (i, floor) in least.iter().enumerate() {
        let total: u16 = h.iter().map(|x| **x).sum();
        let over = total.saturating_sub(room);
        let cut = over.min(h[i].saturating_sub(*floor));
        *h[i] -= cut;
    }
}

/// The disk view's line under the table while edits are not written: how many, what they are, how to go on.
fn pending_line(unwritten: &[(u32, String)]) -> Option<String> {
    (!unwritten.is_empty()).then(|| {
        let what: Vec<String> = unwritten.iter().map(|(n, w)| format!("{n} {w}")).collect();
        format!(
            "* {} pending, not written ({}): an edit key (n d r t) goes on, Enter there reviews",
            afdisk::units::plural(unwritten.len() as u64, "change", "changes"),
            what.join(", ")
        )
    })
}

/// The disk view's partition table, each row styled by its alignment badge's tone; columns sized by content
/// and width (the name shown from 100 columns), a cut type or name marked `…`; the partitions numbered in
/// `changed` (by unwritten edits) marked `*`.
fn draw_partitions(f: &mut Frame, d: &DiskState, changed: &[u32], parts: Rect, th: &Theme) {
    let r = &d.report;
    let wide = parts.width >= 100;
    let mut head = vec!["#", "START", "END", "SIZE", "TYPE"];
    if wide {
        head.push("NAME");
    }
    head.extend(["FS", "ALIGNMENT"]);
    let ss = r.table.as_ref().map_or(512, |t| t.sector_size).max(1);
    let order = disk_rows(r);
    let mut cells = row_cells(r, &order, wide, ss);
    // A partition the pending edits change is marked `*` (as in the editor).
    for (row, c) in order.iter().zip(cells.iter_mut()) {
        if let DiskRow::Part(i) = *row {
            if changed.contains(&r.partitions[i].number) {
                c[0].insert(0, '*');
            }
        }
    }
    let flex: Vec<usize> = if wide { vec![4, 5] } else { vec![4] };
    // Inside the borders, less the highlight symbol and one space between columns.
    let room = usize::from(parts.width)
        .saturating_sub(3)
        .saturating_sub(head.len() - 1);
    let w = super::text::column_widths(&head, &cells, &flex, room);
    let rows: Vec<Row> = order
        .iter()
        .zip(&cells)
        .map(|(row, c)| {
            let style = match *row {
                DiskRow::Part(i) => th.styles().of(Badge::of(&r.partitions[i]).tone()),
                DiskRow::Free(..) => th.dim,
                DiskRow::Content => th.warn,
            };
            let cut_cells: Vec<String> = c
                .iter()
                .zip(&w)
                .map(|(x, w)| super::text::cut(x, *w))
                .collect();
            Row::new(cut_cells).style(style)
        })
        .collect();
    let widths: Vec<Constraint> = w
        .iter()
        .map(|x| Constraint::Length(u16::try_from(*x).unwrap_or(u16::MAX)))
        .collect();
    let title_text = match model::whole_disk_content(r) {
        Some(_) => " Partitions: none (no table: the whole disk is in use) ",
        None if r.partitions.is_empty() => " Partitions: none ",
        None => " Partitions ",
    };
    let table = Table::new(rows, widths)
        .header(Row::new(head).style(th.title))
        .block(
            Block::bordered().title(Line::from(title_text).style(focus_style(
                d,
                Panel::Partitions,
                th,
            ))),
        )
        .row_highlight_style(th.sel)
        .highlight_symbol(">");
    let selected = (!order.is_empty()).then(|| d.row());
    let mut st = TableState::default().with_selected(selected);
    f.render_stateful_widget(table, parts, &mut st);
}

/// The cells of the disk view's table rows (`ss`: the table's sector size; `wide`: with the NAME column).
fn row_cells(r: &Report, order: &[DiskRow], wide: bool, ss: u64) -> Vec<Vec<String>> {
    order
        .iter()
        .map(|row| match *row {
            DiskRow::Part(i) => {
                let p = &r.partitions[i];
                let mut c = vec![
                    p.number.to_string(),
                    p.start.to_string(),
                    p.end.to_string(),
                    human(p.size_bytes),
                    p.type_name.clone(),
                ];
                if wide {
                    c.push(p.name.clone().unwrap_or_default());
                }
                c.push(p.filesystem.clone().unwrap_or_else(|| "-".into()));
                c.push(Badge::of(p).short());
                c
            }
            DiskRow::Free(a, b) => {
                // Free space inside the extended partition takes logical partitions (as the editor says).
                let logical = r.partitions.iter().any(|p| {
                    p.kind == afdisk::table::PartKind::Extended
                        && p.start.saturating_mul(ss) <= a
                        && b <= p.start.saturating_add(p.size).saturating_mul(ss)
                });
                let mut c = vec![
                    "-".to_string(),
                    (a / ss).to_string(),
                    (b / ss).saturating_sub(1).to_string(),
                    human(b - a),
                    if logical { "free (logical)" } else { "free" }.to_string(),
                ];
                if wide {
                    c.push(String::new());
                }
                c.extend([String::new(), String::new()]);
                c
            }
            DiskRow::Content => {
                let sig = model::whole_disk_content(r);
                let size = r.device.size_bytes;
                let mut c = vec![
                    "-".to_string(),
                    "0".to_string(),
                    (size / r.device.logical_sector_size.max(1))
                        .saturating_sub(1)
                        .to_string(),
                    human(size),
                    format!(
                        "whole disk: {}",
                        sig.map(model::content_words).unwrap_or_default()
                    ),
                ];
                if wide {
                    c.push(String::new());
                }
                c.push(sig.map(|s| s.kind.clone()).unwrap_or_default());
                c.push("not free".into());
                c
            }
        })
        .collect()
}

/// The disk view's findings: the selected partition's first, then the rest, styled by severity.
fn draw_findings(f: &mut Frame, d: &DiskState, findings: Rect, th: &Theme) {
    let r = &d.report;
    // Findings: the selected partition's first, then the rest.
    let sel_no = d
        .selected_partition()
        .and_then(|i| r.partitions.get(i))
        .map(|p| p.number);
    let mut ordered: Vec<_> = r
        .findings
        .iter()
        .filter(|x| x.partition.is_some() && x.partition == sel_no)
        .collect();
    ordered.extend(
        r.findings
            .iter()
            .filter(|x| !(x.partition.is_some() && x.partition == sel_no)),
    );
    let mut lines: Vec<Line> = Vec::new();
    for fd in ordered {
        let st = match fd.severity {
            Severity::Error => th.bad,
            Severity::Warning => th.warn,
            Severity::Info => Style::default(),
        };
        lines.push(Line::from(Span::styled(fd.heading(), st)));
        // The core names the CLI's realign plan; here it is a key.
        lines.push(Line::from(
            fd.message
                .replace(afdisk::report::REALIGN_PLAN, "the realign plan (p)"),
        ));
    }
    if lines.is_empty() {
        lines.push(Line::from(
            "No findings: every partition starts and ends on physical and 1 MiB boundaries.",
        ));
    }
    // Taller than the panel: the title says how to read the rest (the text is cut at the panel's bottom).
    let inner = usize::from(findings.width.saturating_sub(2)).max(1);
    let rows: usize = lines
        .iter()
        .map(|l| super::dialog::wrap_words(&l.to_string(), inner).len())
        .sum();
    let room = usize::from(findings.height.saturating_sub(2));
    d.findings_max
        .set(u16::try_from(rows.saturating_sub(room)).unwrap_or(u16::MAX));
    let more = match d.focus {
        _ if rows <= room => "",
        Panel::Findings => ": Up/Dn scroll",
        Panel::Partitions => ": Tab, then Up/Dn for the rest",
    };
    let title = format!(" Findings ({}){more} ", r.findings.len());
    let fblock =
        Block::bordered().title(Line::from(title).style(focus_style(d, Panel::Findings, th)));
    f.render_widget(
        Paragraph::new(Text::from(lines))
            .block(fblock)
            .wrap(Wrap { trim: true })
            .scroll((d.findings_scroll.min(d.findings_max.get()), 0)),
        findings,
    );
}

/// A panel title's style: highlighted when the panel has the focus.
fn focus_style(d: &DiskState, p: Panel, th: &Theme) -> Style {
    if d.focus == p {
        th.title
    } else {
        Style::default()
    }
}
