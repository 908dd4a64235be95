//! The device list as drawn: one row per disk (its name, size, sector sizes, bus, table, partitions and status,
//! in more columns when the terminal is wide), the probe's progress in the title, and under the table, in full,
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
    let rows: Vec<Row> = l.items.iter().map(|it| list_row(it, wide, th)).collect();
    let table = Table::new(rows, widths(wide))
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

/// The widths of the list's columns.
fn widths(wide: bool) -> Vec<Constraint> {
    if wide {
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
    }
}
