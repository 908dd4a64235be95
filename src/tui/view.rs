//! Rendering (the "view" half of the UI): the device list, the disk view (map, partition table, findings),
//! the sector zoom, the help overlay and the key bar. Meaning never depends on colour alone: every badge also
//! carries a word or symbol, and NO_COLOR drops colours entirely.
//!
//! Terminal fit: nothing is cut off at 80x24 — the key bar (or a status or error there) wraps onto up to
//! three lines, the disk title wraps, and a device that failed in the list shows its whole error (problem and
//! fix) when selected. **Terminal kinds** ([`TermKind`], from `TERM`): `linux` (the console) gets ASCII in
//! place of box-drawing and block characters and only the 16 named colours; `dumb` (or no `TERM`) gets ASCII
//! and no colour. The ASCII pass runs over the finished frame, so every screen (pages included) gets it. An
//! image file shows a banner with the physical sector size it is judged against (assumed 4096 bytes) and the
//! key that switches it (a: 512/4096; everything is read and recomputed with the new size).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use afdisk::finding::Severity;
use afdisk::present::{Badge, ListStatus};
use afdisk::report::Report;
use afdisk::units::human;

use super::app::{App, DiskState, ListItem, Panel, Screen};
use super::dialog::Styles;
use super::model::{self, SegKind};
use super::page::key_bar;
pub use super::term::{fit_to, TermKind};

struct Theme {
    ok: Style,
    bad: Style,
    warn: Style,
    dim: Style,
    sel: Style,
    title: Style,
}

impl Theme {
    fn new(no_color: bool) -> Self {
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
    fn styles(&self) -> Styles {
        Styles {
            ok: self.ok,
            bad: self.bad,
            warn: self.warn,
            title: self.title,
        }
    }
}

/// Rows `text` takes when word-wrapped at `width` as a wrapping paragraph does (at least 1).
fn rows_of(text: &str, width: u16) -> u16 {
    let w = usize::from(width.max(1));
    let mut n = 0usize;
    for line in text.lines() {
        let mut rows = 1usize;
        let mut used = 0usize;
        for word in line.split_whitespace() {
            let len = word.chars().count();
            let need = if used == 0 { len } else { used + 1 + len };
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
    let bar_h = rows_of(&keybar_text(app), area.width).min(4);
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

/// The key bar's text: a running job's status, the disk view's error, or the screen's commands.
fn keybar_text(app: &App) -> String {
    if let Some(b) = &app.busy {
        b.clone()
    } else if let (Some(e), Screen::Disk) = (&app.error, app.screen) {
        format!("error: {e}")
    } else {
        let status = match app.screen {
            Screen::Page(name) => app.page(name).and_then(|p| p.status()),
            _ => None,
        };
        status.unwrap_or_else(|| key_bar(&app.commands()))
    }
}

/// The key bar, wrapped onto the lines it was given (a long status or error is never cut at the edge).
fn draw_keybar(f: &mut Frame, app: &App, area: Rect) {
    f.render_widget(
        Paragraph::new(keybar_text(app))
            .style(Style::default().add_modifier(Modifier::REVERSED))
            .wrap(Wrap { trim: true }),
        area,
    );
}

fn draw_help(f: &mut Frame, app: &App, area: Rect, th: &Theme) {
    let w = area.width.min(70);
    let keys = app.commands();
    // Each command's line as wrapped in the box, plus the border and a spare line.
    let rows: u16 = keys
        .iter()
        .map(|c| {
            let help = if c.help.is_empty() { c.bar } else { c.help };
            rows_of(&format!("{:<12}{help}", c.keys), w.saturating_sub(2))
        })
        .sum();
    let h = (rows + 3).min(area.height);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    f.render_widget(Clear, r);
    let lines: Vec<Line> = keys
        .iter()
        .map(|c| {
            Line::from(vec![
                Span::styled(format!("{:<12}", c.keys), th.title),
                Span::raw(if c.help.is_empty() { c.bar } else { c.help }),
            ])
        })
        .collect();
    let block = Block::bordered().title(Line::from(" Keys (Esc or ? closes) "));
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        r,
    );
}

fn draw_list(f: &mut Frame, app: &App, area: Rect, th: &Theme) {
    let l = &app.list;
    let progress = match (l.done, l.total) {
        (true, _) => format!(" Disks ({}) ", l.items.len()),
        (false, Some(t)) => format!(" Disks: probing {}/{t}... ", l.items.len()),
        (false, None) => " Disks: looking... ".to_string(),
    };
    let wide = area.width >= 100;
    let header = Row::new(if wide {
        vec![
            "NAME",
            "MODEL",
            "SIZE",
            "LOG/PHYS",
            "TRANSPORT",
            "TABLE",
            "PARTS",
            "STATUS",
        ]
    } else {
        vec![
            "NAME", "SIZE", "LOG/PHYS", "BUS", "TABLE", "PARTS", "STATUS",
        ]
    })
    .style(th.title);
    let rows: Vec<Row> = l.items.iter().map(|it| list_row(it, wide, th)).collect();
    let widths: Vec<Constraint> = if wide {
        let mut w: Vec<Constraint> = [10, 24, 10, 10, 10, 6, 6]
            .iter()
            .map(|&w| Constraint::Length(w))
            .collect();
        w.push(Constraint::Min(30));
        w
    } else {
        // 80 columns: a 13-character name (xp-dos-63.img), sizes up to "1023.9 GiB", and 21 columns left
        // for the status ("MISALIGNED 1, in use").
        vec![
            Constraint::Length(13),
            Constraint::Length(10),
            Constraint::Length(9),
            Constraint::Length(7),
            Constraint::Length(5),
            Constraint::Length(5),
            Constraint::Min(10),
        ]
    };
    let table = Table::new(rows, widths)
        .header(header)
        .block(Block::bordered().title(Line::from(progress).style(th.title)))
        .row_highlight_style(th.sel)
        .highlight_symbol("> ");
    let mut st = TableState::default().with_selected(if l.items.is_empty() {
        None
    } else {
        Some(l.selected)
    });
    // Under the table, in full: the selected device's error (a row shows only its start), and the error of
    // the disk that could not be opened.
    let mut notes: Vec<(String, String)> = Vec::new();
    if let Some(ListItem::Failed { name, error }) = l.items.get(l.selected) {
        notes.push((format!(" {name}: cannot be read "), error.clone()));
    }
    if let Some(e) = &app.error {
        notes.push((" Error ".to_string(), e.clone()));
    }
    let inner_w = area.width.saturating_sub(2);
    let note_h: u16 = notes
        .iter()
        .map(|(_, e)| rows_of(e, inner_w) + 2)
        .sum::<u16>()
        .min(area.height / 2);
    let [table_area, note_area] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(note_h)]).areas(area);
    f.render_stateful_widget(table, table_area, &mut st);
    let mut y = note_area.y;
    for (title, e) in notes {
        let h = (rows_of(&e, inner_w) + 2).min(note_area.bottom().saturating_sub(y));
        if h < 3 {
            break;
        }
        let r = Rect {
            y,
            height: h,
            ..note_area
        };
        f.render_widget(
            Paragraph::new(e)
                .style(th.bad)
                .wrap(Wrap { trim: true })
                .block(Block::bordered().title(Line::from(title))),
            r,
        );
        y += h;
    }
}

/// One row of the device list: the disk's cells and its status (styled by its tone), or why it failed.
fn list_row<'a>(it: &ListItem, wide: bool, th: &Theme) -> Row<'a> {
    match it {
        ListItem::Disk(r) => {
            let d = &r.device;
            let status = ListStatus::of(r);
            let mut cells = vec![d.name.clone()];
            if wide {
                cells.push(d.model.clone().unwrap_or_else(|| "-".into()));
            }
            cells.extend([
                human(d.size_bytes),
                format!("{}/{}", d.logical_sector_size, d.physical_sector_size),
                d.transport.clone(),
                r.summary
                    .label
                    .map(|x| x.as_str().to_string())
                    .unwrap_or_else(|| "-".into()),
                r.summary.partitions.to_string(),
                // A loop device's backing file ends its row, as in `afdisk list`.
                match afdisk::present::backing_file(d) {
                    Some(f) => format!("{status}  {f}"),
                    None => status.to_string(),
                },
            ]);
            Row::new(cells).style(th.styles().of(status.tone()))
        }
        ListItem::Failed { name, error } => {
            let mut cells = vec![name.clone()];
            if wide {
                cells.push(String::new());
            }
            cells.extend([
                "".into(),
                "".into(),
                "".into(),
                "".into(),
                "".into(),
                format!("ERROR: {error}"),
            ]);
            Row::new(cells).style(th.warn)
        }
    }
}

fn disk_title(r: &Report) -> Vec<Line<'static>> {
    let d = &r.device;
    let table = match &r.table {
        Some(t) => format!("{} ({}-byte sectors)", t.label.as_str(), t.sector_size),
        None => "no table".into(),
    };
    let assumed = if d.geometry_source.physical_sector_size == afdisk::device::Source::Assumed {
        " phys assumed (image file)"
    } else {
        ""
    };
    let l1 = format!(
        " {}  {}  {}  log/phys {}/{}{assumed}  {}",
        d.path.display(),
        human(d.size_bytes),
        d.transport,
        d.logical_sector_size,
        d.physical_sector_size,
        table
    );
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
    let l2 = format!(
        " {}  serial {}  align offset {}  {}",
        d.model
            .clone()
            .or_else(|| afdisk::present::backing_file(d))
            .unwrap_or_else(|| "-".into()),
        d.serial.as_deref().unwrap_or("-"),
        d.alignment_offset,
        drive
    );
    vec![Line::from(l1), Line::from(l2)]
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
        " image file: physical sector size {how} {} bytes ({key})",
        d.physical_sector_size
    ))
}

fn draw_map(f: &mut Frame, r: &Report, selected: usize, area: Rect, th: &Theme) {
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
                if i == selected {
                    st = st.add_modifier(Modifier::REVERSED);
                }
                (t, st)
            }
        };
        spans.push(Span::styled(text, style));
    }
    let legend = Line::from(" T table  . free  |N aligned  !N misaligned ");
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
    let table_h = (r.partitions.len() as u16 + 3).clamp(4, (area.height / 2).max(4));
    let mut head = disk_title(r);
    let banner = image_banner(r);
    let head_h = head
        .iter()
        .map(|l| rows_of(&l.to_string(), area.width))
        .sum::<u16>()
        .min(4);
    let banner_h = banner.as_ref().map_or(0, |b| rows_of(b, area.width).min(2));
    let [title, banner_area, map, parts, findings] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Length(banner_h),
        Constraint::Length(3),
        Constraint::Length(table_h),
        Constraint::Min(3),
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
    draw_map(f, r, d.selected, map, th);

    draw_partitions(f, d, parts, th);
    draw_findings(f, d, findings, th);
}

/// The disk view's partition table, each row styled by its alignment badge's tone.
fn draw_partitions(f: &mut Frame, d: &DiskState, parts: Rect, th: &Theme) {
    let r = &d.report;
    let wide = parts.width >= 110;
    let mut head = vec!["#", "START", "END", "SIZE", "TYPE"];
    if wide {
        head.push("NAME");
    }
    head.extend(["FS", "ALIGNMENT"]);
    let rows: Vec<Row> = r
        .partitions
        .iter()
        .map(|p| {
            let badge = Badge::of(p);
            let mut cells = vec![
                p.number.to_string(),
                p.start.to_string(),
                p.end.to_string(),
                human(p.size_bytes),
                p.type_name.clone(),
            ];
            if wide {
                cells.push(p.name.clone().unwrap_or_default());
            }
            cells.push(p.filesystem.clone().unwrap_or_else(|| "-".into()));
            cells.push(badge.short());
            Row::new(cells).style(th.styles().of(badge.tone()))
        })
        .collect();
    let mut widths = vec![
        Constraint::Length(3),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(if wide { 22 } else { 14 }),
    ];
    if wide {
        widths.push(Constraint::Length(16));
    }
    widths.extend([Constraint::Length(7), Constraint::Min(14)]);
    let title_text = if r.partitions.is_empty() {
        " Partitions: none "
    } else {
        " Partitions "
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
    let mut st = TableState::default().with_selected(if r.partitions.is_empty() {
        None
    } else {
        Some(d.selected)
    });
    f.render_stateful_widget(table, parts, &mut st);
}

/// The disk view's findings: the selected partition's first, then the rest, styled by severity.
fn draw_findings(f: &mut Frame, d: &DiskState, findings: Rect, th: &Theme) {
    let r = &d.report;
    // Findings: the selected partition's first, then the rest.
    let sel_no = r.partitions.get(d.selected).map(|p| p.number);
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
        lines.push(Line::from(fd.message.clone()));
    }
    if lines.is_empty() {
        lines.push(Line::from(
            "No findings: every partition starts and ends on physical and 1 MiB boundaries.",
        ));
    }
    let fblock = Block::bordered().title(
        Line::from(format!(" Findings ({}) ", r.findings.len())).style(focus_style(
            d,
            Panel::Findings,
            th,
        )),
    );
    f.render_widget(
        Paragraph::new(Text::from(lines))
            .block(fblock)
            .wrap(Wrap { trim: true })
            .scroll((d.findings_scroll, 0)),
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

/// The zoom's verdict line: whether the boundary (start or end) costs read-modify-write.
fn zoom_verdict(z: &model::Zoom, at_end: bool, bsz: &str, th: &Theme) -> Span<'static> {
    if at_end {
        if z.offset_bytes == 0 {
            Span::styled("ok: the end is on a physical boundary.".to_string(), th.ok)
        } else {
            Span::styled(
                format!(
                    "!! the end is {} B into a physical sector (last one is shared)",
                    z.offset_bytes
                ),
                th.bad,
            )
        }
    } else if z.rmw == 0 {
        Span::styled(
            format!("ok: each {bsz} write fits whole physical sectors: no read-modify-write"),
            th.ok,
        )
    } else {
        Span::styled(
            format!(
                "!! each {bsz} write here costs {} read-modify-write cycles (+{} B)",
                z.rmw, z.offset_bytes
            ),
            th.bad,
        )
    }
}

/// One row of the zoom: physical sectors, logical sectors (marked, inside, outside), and filesystem blocks
/// (straddling ones marked), then a blank line.
fn zoom_row(
    row: &[model::Cell],
    (z, start): (&model::Zoom, u64),
    (ss, per_phys, cw): (u64, u64, u64),
    align_off: u64,
    th: &Theme,
) -> Vec<Line<'static>> {
    let Some(first) = row.first() else {
        return Vec::new();
    };
    let mut phys = vec![Span::raw(format!("{:<11}", format!("LBA {}", first.lba)))];
    let mut logical = vec![Span::raw(format!("{:<11}", "  sectors"))];
    let mut blocks = vec![Span::raw(format!("{:<11}", "  fs blocks"))];
    for group in row.chunks(per_phys as usize) {
        let Some(g0) = group.first() else { continue };
        let pidx = (g0.lba * ss).saturating_sub(align_off) / (per_phys * ss);
        let width = (per_phys * cw) as usize;
        let mut label = format!("|P{pidx}");
        while label.len() < width {
            label.push('-');
        }
        phys.push(Span::styled(
            label.chars().take(width).collect::<String>(),
            th.dim,
        ));
        for (k, c) in group.iter().enumerate() {
            let sep = if k == 0 { "|" } else { " " };
            let glyph = if c.marked {
                ">"
            } else if c.inside {
                "#"
            } else {
                "."
            };
            let pad = " ".repeat(cw as usize - 2);
            let st = if c.marked {
                th.title.add_modifier(Modifier::REVERSED)
            } else if c.inside {
                th.ok
            } else {
                th.dim
            };
            logical.push(Span::styled(format!("{sep}{glyph}{pad}"), st));
            let (bglyph, bst) = match c.block {
                None => (" ".to_string(), Style::default()),
                Some(b) => {
                    let starts = c.lba == start + b * z.per_block;
                    let ch = if c.straddles { '!' } else { '=' };
                    let s = if starts {
                        format!("[{}", b % 10)
                    } else {
                        format!("{ch}{ch}")
                    };
                    (
                        s,
                        if c.straddles {
                            th.bad.add_modifier(Modifier::REVERSED)
                        } else {
                            th.ok
                        },
                    )
                }
            };
            let mut t: String = bglyph.chars().take(2).collect();
            if t.chars().count() < 2 {
                t.push(' ');
            }
            t.push_str(&" ".repeat(cw as usize - 2));
            blocks.push(Span::styled(t, bst));
        }
    }
    vec![
        Line::from(phys),
        Line::from(logical),
        Line::from(blocks),
        Line::from(""),
    ]
}

fn draw_zoom(f: &mut Frame, app: &App, area: Rect, th: &Theme) {
    let Some(d) = &app.disk else { return };
    let r = &d.report;
    let Some(p) = r.partitions.get(app.zoom.part) else {
        return;
    };
    let topo = r.device.topology();
    let ss = r
        .table
        .as_ref()
        .map(|t| t.sector_size)
        .unwrap_or(r.device.logical_sector_size);
    let label_w: u16 = 11;
    let inner = Block::bordered().inner(area);
    let per_phys = (topo.physical_unit() / ss).max(1);
    let cw: u64 = if per_phys == 1 { 8 } else { 2 };
    let avail = u64::from(inner.width.saturating_sub(label_w));
    let phys_per_row = (avail / (per_phys * cw)).max(1);
    let rows = u64::from(inner.height.saturating_sub(5) / 4).max(1);
    let z = model::zoom(
        &topo,
        ss,
        p.start,
        p.size,
        app.zoom.at_end,
        app.zoom.block,
        (phys_per_row, rows),
    );
    let which = if app.zoom.at_end { "end" } else { "start" };
    let mut lines: Vec<Line> = Vec::new();
    let bsz = human(z.per_block * ss);
    let verdict = zoom_verdict(&z, app.zoom.at_end, &bsz, th);
    lines.push(Line::from(verdict));
    lines.push(Line::from(Span::styled(
        format!(
            "logical {} B, physical {} B ({} per physical), fs block {} ({} sectors)",
            ss,
            per_phys * ss,
            per_phys,
            bsz,
            z.per_block
        ),
        th.dim,
    )));
    for row in z.cells.chunks((per_phys * phys_per_row) as usize) {
        lines.extend(zoom_row(
            row,
            (&z, p.start),
            (ss, per_phys, cw),
            topo.alignment_offset,
            th,
        ));
    }
    lines.push(Line::from(Span::styled(
        "> first  # inside  . outside  |P physical  [n fs block  !! straddles (RMW)",
        th.dim,
    )));
    let title = format!(
        " Sector zoom: partition {} {} (LBA {}) ",
        p.number,
        which,
        if app.zoom.at_end { p.end } else { p.start }
    );
    f.render_widget(
        Paragraph::new(Text::from(lines)).block(
            Block::bordered()
                .borders(Borders::ALL)
                .title(Line::from(title).style(th.title)),
        ),
        area,
    );
}
