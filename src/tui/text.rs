//! How the TUI words what the core names: a **setting** (the core's `Setting`: a write mode, a partition, a
//! confirmation) by the key or the dialog that sets it on screen, never by a command-line option (the screens
//! have none), and a **failure** in one line (kind, problem and fix) in those words; and how a table's
//! **cells** fit their columns (sized by content, a **cut** cell ending in `…`; a table with **preferred**
//! widths keeps them while its cells fit them, and falls back to content widths in a narrow window); and a
//! **target's kind** ("image file", "loop device", "block device"), the one word every screen, header and
//! confirmation uses for what kind of thing a disk is.

use afdisk::device::TargetKind;
use afdisk::error::Setting;

/// What kind of target the disk `name` of `kind` is, in the one word every screen uses for it.
pub fn target_kind(kind: TargetKind, name: &str) -> &'static str {
    kind.words(name)
}

/// A setting the core names, as the TUI sets it: by its key on the screen that has one, else in words
/// (never a command-line option: the screens have none).
pub fn key_name(s: Setting, value: Option<&str>) -> String {
    match (s, value) {
        (Setting::WriteMode, Some(v)) => format!("write mode {v} (w)"),
        (Setting::WriteMode, None) => "the write mode (w)".into(),
        (Setting::Probe, _) => "the probe (o)".into(),
        (Setting::Partition, Some(v)) => format!("partition {v} (selected in the disk view)"),
        // The bench screen's p switches between the partition and the whole disk.
        (Setting::Partition, None) => "the partition: press p".into(),
        (Setting::Confirm, _) => "the device name typed in the dialog".into(),
        (Setting::DestroyData, _) => "DESTROY typed in the dialog".into(),
        // The screens never replace a table or a whole-disk filesystem: the command line does.
        (Setting::Replace, _) => {
            "`afdisk plan --preset NAME --replace TARGET` after quitting (the screens do not replace)"
                .into()
        }
        (s, v) => s.neutral(v),
    }
}

/// A failure in one line as the screens show it: kind, problem and fix, settings named by their keys.
pub fn failure_text(e: &afdisk::Error) -> String {
    afdisk::error::failure_text_in(e, &key_name)
}

/// `s` in at most `w` columns: whole, or cut with `…` as its last column.
pub fn cut(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else if w == 0 {
        String::new()
    } else {
        let mut t: String = s.chars().take(w - 1).collect();
        t.push('…');
        t
    }
}

/// Column widths sized by content: every column as wide as its widest cell, except the `flex` ones (type,
/// name), which share what is left of `room` (the name at most a third) and are cut with `…` to it.
pub fn column_widths(
    head: &[&str],
    cells: &[Vec<String>],
    flex: &[usize],
    room: usize,
) -> Vec<usize> {
    let mut w: Vec<usize> = head
        .iter()
        .enumerate()
        .map(|(c, h)| {
            cells
                .iter()
                .filter_map(|r| r.get(c).map(|x| x.chars().count()))
                .chain([h.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let fixed: usize = (0..w.len())
        .filter(|c| !flex.contains(c))
        .map(|c| w[c])
        .sum();
    let mut left = room.saturating_sub(fixed);
    // The name (the second flexible column) gets at most a third when both do not fit.
    let wanted: usize = flex.iter().map(|c| w[*c]).sum();
    if wanted > left {
        if let [ty, name] = flex {
            w[*name] = w[*name].min(left / 3).max(4);
            left = left.saturating_sub(w[*name]);
            w[*ty] = w[*ty].min(left).max(4);
        } else if let [ty] = flex {
            w[*ty] = w[*ty].min(left).max(4);
        }
    }
    w
}

/// The widths of a table's columns in `room` cells (one space between columns): the `preferred` widths while
/// every cell fits them and they fit `room` (the last column may take more: its cells' widest), else each
/// column as wide as its widest cell or header, the last cut to what is left (its cells then end in `…`).
pub fn preferred_widths(
    preferred: &[usize],
    head: &[&str],
    cells: &[Vec<String>],
    room: usize,
) -> Vec<usize> {
    let content = column_widths(head, cells, &[], room);
    let gaps = content.len().saturating_sub(1);
    let fits = |w: &[usize]| w.iter().sum::<usize>() + gaps <= room;
    let mut wanted: Vec<usize> = preferred
        .iter()
        .zip(&content)
        .map(|(p, c)| (*p).max(*c))
        .collect();
    if let (Some(last), Some(c)) = (wanted.last_mut(), content.last()) {
        *last = (*c).max(preferred.last().copied().unwrap_or(0));
    }
    let cells_fit = preferred
        .iter()
        .zip(&content)
        .take(preferred.len().saturating_sub(1))
        .all(|(p, c)| c <= p);
    if cells_fit && fits(&wanted) {
        return wanted;
    }
    let mut w = content;
    let fixed: usize = w.iter().rev().skip(1).sum::<usize>() + gaps;
    if let Some(last) = w.last_mut() {
        *last = (*last).min(room.saturating_sub(fixed)).max(1);
    }
    w
}
