//! The plan's text for its wipe list ([`super::wipe::Wipe`]): one line per signature, except that a **run** —
//! consecutive entries of the list of the same kind, in the same place (the same partition, or the whole
//! disk) and with the same fate (wiped, or kept for the same reason) — is one line with its count and the
//! sectors it is spread over. A ZFS member has 128 uberblocks in each of its four labels, each a signature to
//! libblkid: hundreds of lines of one fact. The plan's JSON keeps every entry.
//!
//! Terms: a run's **spread** is the sectors its magics lie in, as ranges; a gap of more than [`GAP`] bytes
//! between one magic's end and the next one's start begins a new range.

use super::wipe::Wipe;

/// The largest gap between two magics of one range of a run's spread (bytes).
pub const GAP: u64 = 64 << 10;

/// The text of each line of the wipe list `wipes`, on a disk of `ss`-byte sectors (without the "Signature: "
/// the diff puts before each).
pub fn lines(wipes: &[Wipe], ss: u64) -> Vec<String> {
    let same = |a: &Wipe, b: &Wipe| {
        a.kind == b.kind && a.partition == b.partition && a.wiped == b.wiped && a.reason == b.reason
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < wipes.len() {
        let mut j = i + 1;
        while j < wipes.len() && same(&wipes[i], &wipes[j]) {
            j += 1;
        }
        out.push(match &wipes[i..j] {
            [one] => one.line(),
            run => run_line(run, ss),
        });
        i = j;
    }
    out
}

/// The line of a run of two or more signatures: "partition 1 holds 253 old zfs_member signatures (8 bytes
/// each) spread over sectors 2312–2558 and 2816–3070: wiped".
fn run_line(run: &[Wipe], ss: u64) -> String {
    let w = &run[0];
    let (whose, fate) = (w.whose(), w.fate());
    let lengths: std::collections::BTreeSet<u64> = run.iter().map(|w| w.length).collect();
    let length = match (lengths.first(), lengths.len()) {
        (Some(l), 1) => format!("{l} bytes each"),
        _ => "of different lengths".to_string(),
    };
    format!(
        "{whose} holds {} old {} signatures ({length}) spread over sectors {}: {fate}",
        run.len(),
        w.kind,
        spread(run, ss.max(1))
    )
}

/// The sectors the magics of `run` lie in, as ranges (see the module doc): "2312–2558 and 2816–3070".
fn spread(run: &[Wipe], ss: u64) -> String {
    let mut spans: Vec<(u64, u64)> = run
        .iter()
        .map(|w| (w.offset, w.offset + w.length.max(1)))
        .collect();
    spans.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(GAP) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    let ranges: Vec<String> = merged
        .iter()
        .map(|&(a, b)| {
            let (first, last) = (a / ss, (b - 1) / ss);
            if first == last {
                first.to_string()
            } else {
                format!("{first}–{last}")
            }
        })
        .collect();
    match ranges.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blkid::Usage;

    fn wipe(kind: &str, offset: u64, partition: Option<u32>) -> Wipe {
        Wipe {
            kind: kind.into(),
            usage: Usage::Filesystem,
            offset,
            length: 8,
            partition,
            wiped: true,
            reason: String::new(),
        }
    }

    /// A ZFS member's uberblocks (in two labels' rings, listed from the last down, as libblkid finds them) are
    /// one line; a swap signature after them, and a lone one, keep theirs.
    #[test]
    fn a_run_of_one_kind_is_one_line() {
        let ring = |label: u64| {
            (0..128u64)
                .rev()
                .map(move |n| (1 << 20) + label + (128 << 10) + n * 1024)
        };
        let mut wipes: Vec<Wipe> = ring(0)
            .chain(ring(256 << 10))
            .map(|o| wipe("zfs_member", o, Some(1)))
            .collect();
        wipes.push(wipe("swap", 4086, None));
        wipes.push(wipe("zfs_member", 5 << 20, Some(1)));
        let l = lines(&wipes, 512);
        assert_eq!(
            l[0],
            "partition 1 holds 256 old zfs_member signatures (8 bytes each) spread over sectors 2304–2558 and \
             2816–3070: wiped"
        );
        assert_eq!(l[1], wipes[256].line());
        assert_eq!(l[2], wipes[257].line());
        assert_eq!(l.len(), 3);
    }
}
