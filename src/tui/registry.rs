//! The one list of pages: the only module that names every page. The app opens a page through [`OPENERS`] (the
//! disk view's key for it) or, for a data move confirmed on the plan screen, through [`open_move`]; no page
//! imports another page, the app, or this list. Adding a page: its module and one line here.

use super::page::{Command, MoveOrder, Offered, Opener, Page, ReviewOrder};
use super::{bench, disk_edit, moving, plan, restore, sector_size};

/// Every page the disk view opens, in the order of the key bar.
pub const OPENERS: &[Opener] = &[
    Opener {
        name: "plan",
        key: 'p',
        command: Command {
            keys: "p",
            bar: "plan",
            help: "propose a plan (realign, or a preset on an empty disk)",
        },
        offered: Offered::Always,
        open: plan::open,
    },
    Opener {
        name: "bench",
        key: 'b',
        command: Command {
            keys: "b",
            bar: "bench",
            help: "disk or plan: benchmark (w write mode, o probe, r run, Esc/s stop a run)",
        },
        offered: Offered::Always,
        open: bench::open,
    },
    Opener {
        name: sector_size::NAME,
        key: 's',
        command: Command {
            keys: "s",
            bar: "4Kn",
            help: "sector-size wizard: switch the drive between 512e and 4Kn (erases it)",
        },
        offered: Offered::Always,
        open: sector_size::open,
    },
    Opener {
        name: moving::NAME,
        key: 'r',
        command: moving::RESUME_KEY,
        offered: Offered::When(|d| moving::interrupted(&d.report)),
        open: |d, _| moving::open_resume(d, false),
    },
    Opener {
        name: moving::NAME,
        key: 'u',
        command: moving::ROLLBACK_KEY,
        offered: Offered::When(|d| moving::rollback_offered(&d.report)),
        open: |d, _| moving::open_resume(d, true),
    },
    // After the data move's r and u: a disk with an interrupted move is resumed first, never edited.
    disk_edit::opener('n'),
    disk_edit::opener('d'),
    disk_edit::opener('r'),
    disk_edit::opener('t'),
    disk_edit::opener('m'),
    disk_edit::opener('N'),
    disk_edit::opener('f'),
    disk_edit::opener('A'),
    Opener {
        name: restore::NAME,
        key: 'R',
        command: restore::KEY,
        offered: Offered::Always,
        open: restore::open,
    },
];

/// The plan screen on a layout edited on the disk view (its Enter: review).
pub fn open_review(order: ReviewOrder) -> Box<dyn Page> {
    plan::open_review(order)
}

/// The data-move page for a plan confirmed on another page (the plan screen's apply of a plan that moves data).
pub fn open_move(order: MoveOrder) -> Box<dyn Page> {
    moving::open_apply(order.path, order.plan, order.typed)
}
