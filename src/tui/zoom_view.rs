//! The sector zoom as drawn: around one boundary (start or end) of a partition, the logical sectors grouped into
//! physical sectors with the filesystem blocks laid over them (the model is `model::zoom`), and the verdict
//! whether the boundary costs read-modify-write. Its **prose** (the verdict, the geometry, the legend) wraps
//! in a narrow window, the grid giving up the rows it takes.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use afdisk::units::human;

use super::app::App;
use super::model;
use super::theme::Theme;

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

/// The zoom's prose wrapped at spaces to `width` columns: the verdict, the geometry (logical and physical
/// sector sizes, the filesystem block) and the legend.
fn zoom_prose(
    z: &model::Zoom,
    (at_end, ss, per_phys): (bool, u64, u64),
    width: u16,
    th: &Theme,
) -> [Vec<Line<'static>>; 3] {
    let bsz = human(z.per_block * ss);
    let wrap = |text: &str, style: Style| -> Vec<Line<'static>> {
        super::dialog::wrap_words(text, usize::from(width.max(1)))
            .into_iter()
            .map(|r| Line::from(Span::styled(r, style)))
            .collect()
    };
    let verdict = zoom_verdict(z, at_end, &bsz, th);
    let geometry = format!(
        "logical {} B, physical {} B ({} per physical), fs block {} ({} sectors)",
        ss,
        per_phys * ss,
        per_phys,
        bsz,
        z.per_block
    );
    // The legend's items two spaces apart, whole ones to a row.
    let mut legend: Vec<String> = Vec::new();
    for item in LEGEND {
        match legend.last_mut() {
            Some(r) if r.chars().count() + 2 + item.chars().count() <= usize::from(width) => {
                r.push_str("  ");
                r.push_str(item);
            }
            _ => legend.push(item.to_string()),
        }
    }
    [
        wrap(&verdict.content, verdict.style),
        wrap(&geometry, th.dim),
        legend
            .into_iter()
            .map(|r| Line::from(Span::styled(r, th.dim)))
            .collect(),
    ]
}

/// What the zoom's marks mean.
const LEGEND: [&str; 6] = [
    "> first",
    "# inside",
    ". outside",
    "|P physical",
    "[n fs block",
    "!! straddles (RMW)",
];

pub fn draw_zoom(f: &mut Frame, app: &App, area: Rect, th: &Theme) {
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
    let zoom_at = |rows: u64| {
        model::zoom(
            &topo,
            ss,
            p.start,
            p.size,
            app.zoom.at_end,
            app.zoom.block,
            (phys_per_row, rows),
        )
    };
    // The prose wraps in a narrow window (it was cut at the frame): the grid gives up the rows it takes.
    let prose_of =
        |z: &model::Zoom| zoom_prose(z, (app.zoom.at_end, ss, per_phys), inner.width, th);
    let extra: usize = prose_of(&zoom_at(1))
        .iter()
        .map(|l| l.len().saturating_sub(1))
        .sum();
    let taken = 5 + u16::try_from(extra).unwrap_or(u16::MAX);
    let rows = u64::from(inner.height.saturating_sub(taken) / 4).max(1);
    let z = zoom_at(rows);
    let which = if app.zoom.at_end { "end" } else { "start" };
    let [verdict, geometry, legend] = prose_of(&z);
    let mut lines: Vec<Line> = verdict.into_iter().chain(geometry).collect();
    for row in z.cells.chunks((per_phys * phys_per_row) as usize) {
        lines.extend(zoom_row(
            row,
            (&z, p.start),
            (ss, per_phys, cw),
            topo.alignment_offset,
            th,
        ));
    }
    lines.extend(legend);
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
