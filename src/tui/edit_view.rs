//! Rendering of the hand editor: the working layout with its free regions (those inside a dos table's extended
//! partition typed `free (logical)`; the selected row reversed and marked `>`; `!`
//! marks a partition carried over from the disk that is off the grain, `*` one that differs from the
//! table on the disk now), the
//! last edit's words (what snapped, where and why, or the refusal), the open input field, the open type picker,
//! and the primary/extended question of a new dos partition.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Row as TRow, Table, TableState, Wrap};
use ratatui::Frame;

use afdisk::plan::edit::flags;
use afdisk::units::human;

use super::dialog::Styles;
use super::edit_state::{EditState, KindChoice, Row};

pub fn draw(f: &mut Frame, es: &EditState, device: &str, area: Rect, st: &Styles) {
    let (text, style) = match &es.message {
        Some((m, true)) => (m.clone(), st.bad),
        Some((m, false)) => (m.clone(), st.ok),
        None => (
            "n makes a partition in the selected free region; Enter makes the plan of this layout."
                .into(),
            Style::default(),
        ),
    };
    // The message as tall as its words wrapped (an error is never cut mid-sentence), at most 6 rows.
    let msg_rows = super::dialog::wrap_words(&text, usize::from(area.width.max(1))).len();
    let msg_h = u16::try_from(msg_rows).unwrap_or(6).clamp(1, 6);
    let [head, list, msg] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(4),
        Constraint::Length(msg_h),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(header(es, device))
            .style(st.title)
            .wrap(Wrap { trim: true }),
        head,
    );
    let changed: Vec<u32> = es.changes().into_iter().map(|(n, _)| n).collect();
    let head = ["  #", "start", "end", "size", "type", "name, flags"];
    let cells: Vec<(Vec<String>, Style)> = es
        .rows()
        .into_iter()
        .map(|r| row(es, r, &changed, st))
        .collect();
    let texts: Vec<Vec<String>> = cells.iter().map(|(c, _)| c.clone()).collect();
    // Inside the borders, less the selection's mark and one space between the columns; the type and the
    // name share what is left.
    let room = usize::from(list.width).saturating_sub(2 + 1 + head.len() - 1);
    let w = super::text::column_widths(&head, &texts, &[4, 5], room);
    let rows: Vec<TRow> = cells
        .into_iter()
        .map(|(c, style)| {
            TRow::new(
                c.iter()
                    .zip(&w)
                    .map(|(x, w)| super::text::cut(x, *w))
                    .collect::<Vec<_>>(),
            )
            .style(style)
        })
        .collect();
    let widths: Vec<Constraint> = w
        .iter()
        .map(|x| Constraint::Length(u16::try_from(*x).unwrap_or(u16::MAX)))
        .collect();
    let table = Table::new(rows, widths)
        .header(
            TRow::new(vec!["  #", "start", "end", "size", "type", "name, flags"]).style(st.title),
        )
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        // `>` marks the selected row too, as on the disk view, for terminals that show no reverse video.
        .highlight_symbol(">")
        .block(Block::bordered().title(Line::from(" Layout (Up/Dn select) ")));
    // The rows shown inside the borders, under the header: PgUp/PgDn's page.
    es.page
        .set(usize::from(list.height.saturating_sub(3)).max(1));
    let mut state = TableState::default().with_selected(Some(es.selected));
    f.render_stateful_widget(table, list, &mut state);
    f.render_widget(
        Paragraph::new(text).style(style).wrap(Wrap { trim: true }),
        msg,
    );
    if let Some((_, input)) = &es.field {
        input.draw(f, area, st);
    }
    if let Some((_, picker)) = &es.picker {
        picker.draw(f, area, st);
    }
    if let Some(k) = &es.kind {
        draw_kind(f, k, area, st);
    }
}

/// The primary/extended question (cfdisk's): the two answers side by side, the highlighted one reversed, and
/// the free slots under them, in a box that wraps its words to the terminal.
fn draw_kind(f: &mut Frame, k: &KindChoice, area: Rect, st: &Styles) {
    let on = Style::default().add_modifier(Modifier::REVERSED);
    let (p, e) = if k.extended {
        (Style::default(), on)
    } else {
        (on, Style::default())
    };
    let size = if k.size == "rest" {
        "all of the free region".to_string()
    } else {
        k.size.clone()
    };
    // `>` marks the highlighted answer too, for terminals that show no reverse video.
    let mark = |on: bool| if on { "> " } else { "  " };
    let answers = vec![Line::from(vec![
        Span::raw(mark(!k.extended)),
        Span::styled("[ primary ]", p),
        Span::raw(" "),
        Span::raw(mark(k.extended)),
        Span::styled("[ extended ]", e),
    ])];
    let slots = afdisk::units::plural(u64::from(k.free_slots), "primary slot", "primary slots");
    super::dialog::question_box(
        f,
        area,
        st,
        " New partition: primary or extended ",
        &format!("A primary partition of {size}, or an extended one to hold logical partitions?"),
        |_| answers,
        &format!(
            "{slots} free, no extended partition yet. p primary, e extended, Enter ok, Esc cancel"
        ),
    );
}

/// The editor's header: the device, the table type, the sector size and the grain edits snap to; never
/// "every start and end on the grain" above a row that is not (issue 25, item 5).
fn header(es: &EditState, device: &str) -> String {
    let e = &es.editor;
    let t = &e.layout.table;
    let ss = t.sector_size.max(1);
    format!(
        "Edit by hand: {device} ({}, {}-byte sectors), edits snap to the {} grain{}",
        t.label.as_str(),
        ss,
        human(e.grain),
        if e.layout.partitions.iter().any(|p| !e.aligned(p)) {
            "; ! marks a partition off it"
        } else {
            ""
        }
    )
}

/// One row of the layout: a partition (`!` when it is off the grain, else `*` when it differs from the table
/// on the disk now) or a free region.
fn row(es: &EditState, r: Row, changed: &[u32], st: &Styles) -> (Vec<String>, Style) {
    let e = &es.editor;
    let ss = e.layout.table.sector_size.max(1);
    match r {
        Row::Part(i) => {
            let p = &e.layout.partitions[i];
            let held = e.content.get(&p.number).map(String::as_str).unwrap_or("");
            let name = p.name.clone().unwrap_or_default();
            let aligned = e.aligned(p);
            (
                vec![
                    format!(
                        "{}{:>2}",
                        match (aligned, changed.contains(&p.number)) {
                            (false, _) => '!',
                            (true, true) => '*',
                            (true, false) => ' ',
                        },
                        p.number
                    ),
                    p.start.to_string(),
                    p.end().to_string(),
                    human(p.size * ss),
                    p.type_name.clone(),
                    [name.as_str(), flags(p).as_str(), held]
                        .iter()
                        .filter(|s| !s.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join(" "),
                ],
                if aligned { Style::default() } else { st.bad },
            )
        }
        Row::Free(r) => (
            vec![
                "  -".to_string(),
                r.start.to_string(),
                (r.end - 1).to_string(),
                human(r.sectors() * ss),
                // Inside the extended partition: n makes a logical partition there.
                if r.logical { "free (logical)" } else { "free" }.to_string(),
                String::new(),
            ],
            st.warn,
        ),
    }
}
