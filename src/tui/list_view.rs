//! The device list as drawn: one row per disk (its name, size, sector sizes, bus, table, partitions and status,
//! in more columns when the terminal is wide, the fixed ones as wide as their content under 80 columns, a
//! long name cut with `…`), the probe's progress in the title, and under the table, in full,
//! the selected device's error and the error of a disk that could not be opened.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use afdisk::present::ListStatus;
use afdisk::units::human;

use super::app::App;
use super::model::ListItem;
use super::theme::{rows_of, Theme};

pub fn draw_list(f: &mut Frame, app: &App, area: Rect, th: &Theme) {
    let l = &app.list;
    let progress = match (l.done, l.total) {
        (true, _) => format!(" Disks ({}) ", l.items.len()),
        (false, Some(t)) => format!(" Disks: probing {}/{t}... ", l.items.len()),
        (false, None) => " Disks: looking... ".to_string(),
    };
    let wide = area.width >= 100;
    let cols = Columns::of(&l.items, wide, area.width);
    let rows: Vec<Row> = l.items.iter().map(|it| list_row(it, &cols, th)).collect();
    let table = Table::new(rows, widths(&cols))
        .header(header(wide, th))
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
fn list_row<'a>(it: &ListItem, cols: &Columns, th: &Theme) -> Row<'a> {
    let wide = cols.wide;
    match it {
        ListItem::Disk(r) => {
            let d = &r.device;
            let status = ListStatus::of(r);
            let mut cells = vec![cut(&d.name, cols.name)];
            if wide {
                cells.push(cut(d.model.as_deref().unwrap_or("-"), cols.model));
            }
            cells.extend([
                human(d.size_bytes),
                format!("{}/{}", d.logical_sector_size, d.physical_sector_size),
                d.transport.clone(),
                r.summary.table_text().to_string(),
                r.summary.partitions.to_string(),
                // A loop device's backing file ends its row, as in `afdisk list`.
                match afdisk::present::backing_file(d) {
                    // A path too long keeps its end (the file's name): its start is cut and marked.
                    Some(f) => {
                        let head = format!("{status}  ");
                        let room = cols.status.saturating_sub(head.chars().count());
                        if room >= 8 {
                            format!("{head}{}", cut_start(&f, room))
                        } else {
                            cut(&format!("{head}{f}"), cols.status)
                        }
                    }
                    None => cut(&status.to_string(), cols.status),
                },
            ]);
            Row::new(cells).style(th.styles().of(status.tone()))
        }
        ListItem::Failed { name, error } => {
            let mut cells = vec![cut(name, cols.name)];
            if wide {
                cells.push(String::new());
            }
            cells.extend([
                "".into(),
                "".into(),
                "".into(),
                "".into(),
                "".into(),
                cut(&format!("ERROR: {error}"), cols.status),
            ]);
            Row::new(cells).style(th.warn)
        }
    }
}

/// The list's header: more columns (the model) when the terminal is wide.
fn header(wide: bool, th: &Theme) -> Row<'static> {
    Row::new(if wide {
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
    .style(th.title)
}

/// The list's column widths in cells: the name and the model as wide as the longest one (at 80 columns the
/// name takes at most 13, at 100 and more at most 40), the fixed columns, and the status the rest.
struct Columns {
    wide: bool,
    name: usize,
    model: usize,
    /// Size, sector sizes, bus, table, partitions.
    fixed: [u16; 5],
    status: usize,
}

/// The fixed columns' widths: size, sector sizes, bus, table, partitions.
const FIXED_WIDE: [u16; 5] = [10, 10, 10, 6, 6];
const FIXED_NARROW: [u16; 5] = [10, 9, 7, 5, 5];

impl Columns {
    fn of(items: &[ListItem], wide: bool, width: u16) -> Columns {
        let longest = |f: &dyn Fn(&ListItem) -> usize| items.iter().map(f).max().unwrap_or(0);
        let name = longest(&|it| match it {
            ListItem::Disk(r) => r.device.name.chars().count(),
            ListItem::Failed { name, .. } => name.chars().count(),
        })
        .clamp(4, if wide { 40 } else { 13 });
        let model = if wide {
            longest(&|it| match it {
                ListItem::Disk(r) => r.device.model.as_deref().map_or(1, |m| m.chars().count()),
                ListItem::Failed { .. } => 0,
            })
            .clamp(5, 24)
        } else {
            0
        };
        let fixed = if wide {
            FIXED_WIDE
        } else {
            narrow_fixed(items, width)
        };
        let ncols = if wide { 8 } else { 7 };
        // Borders, the highlight symbol and one space between columns.
        let used = usize::from(fixed.iter().sum::<u16>()) + model + 2 + 2 + (ncols - 1);
        // A narrow window (60 columns): the name gives up its cells to keep the status 12 wide (the name was
        // cut by the table itself, without its `…`).
        let name = name
            .min(usize::from(width).saturating_sub(used + 12))
            .max(4);
        let status = usize::from(width).saturating_sub(used + name).max(10);
        Columns {
            wide,
            name,
            model,
            fixed,
            status,
        }
    }
}

/// The fixed columns' widths below 100 columns: [`FIXED_NARROW`], or under 80 columns each as wide as its
/// header or its widest cell.
fn narrow_fixed(items: &[ListItem], width: u16) -> [u16; 5] {
    if width >= 80 {
        return FIXED_NARROW;
    }
    let mut w = [4u16, 8, 3, 5, 5];
    for it in items {
        if let ListItem::Disk(r) = it {
            let d = &r.device;
            let cells = [
                human(d.size_bytes),
                format!("{}/{}", d.logical_sector_size, d.physical_sector_size),
                d.transport.clone(),
                r.summary.table_text().to_string(),
                r.summary.partitions.to_string(),
            ];
            for (w, c) in w.iter_mut().zip(&cells) {
                *w = (*w).max(u16::try_from(c.chars().count()).unwrap_or(u16::MAX));
            }
        }
    }
    w
}

/// `text` in at most `w` cells: whole, or cut and marked `…`.
fn cut(text: &str, w: usize) -> String {
    if text.chars().count() <= w {
        return text.to_string();
    }
    let mut s: String = text.chars().take(w.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// `text` in at most `w` cells: whole, or its end with the start cut and marked `…`.
fn cut_start(text: &str, w: usize) -> String {
    let n = text.chars().count();
    if n <= w {
        return text.to_string();
    }
    let tail: String = text.chars().skip(n + 1 - w.max(1)).collect();
    format!("…{tail}")
}

/// The widths of the list's columns (see [`Columns`]).
fn widths(c: &Columns) -> Vec<Constraint> {
    let len = |n: usize| Constraint::Length(u16::try_from(n).unwrap_or(u16::MAX));
    let mut w = vec![len(c.name)];
    if c.wide {
        w.push(len(c.model));
    }
    w.extend(c.fixed.iter().map(|&n| Constraint::Length(n)));
    w.push(Constraint::Min(10));
    w
}
