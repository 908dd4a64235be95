//! What the write commands share: the confirmation a write needs, answered from the flags (`--yes
//! [--confirm T] [--destroy-data]`) or typed at the terminal after the library's prompt, and size options
//! read on the opened device.
//!
//! Terms:
//! - A **confirmation** is the library's one confirmation model ([`Confirmation`]): scripted, typed or absent;
//!   the library judges it, this module only collects it.

use std::io::{BufRead, IsTerminal, Write};

use afdisk::device::{self, access, access::Confirmation};
use afdisk::plan;
use afdisk::Error;

use super::args::ConfirmArgs;

/// A size option in bytes on the opened device (a sector count is in its logical sectors).
pub(crate) fn sized(
    a: &Option<afdisk::units::SizeArg>,
    opened: &device::Opened,
) -> Result<Option<u64>, Error> {
    a.as_ref()
        .map(|s| s.bytes(opened.info.logical_sector_size))
        .transpose()
}

/// The confirmation: `--yes [--confirm T]`, else typed at the terminal, else absent.
pub(crate) fn confirmation(c: &ConfirmArgs, info: &device::DeviceInfo, what: &str) -> Confirmation {
    confirmation_destroying(c, info, what, &[])
}

/// The confirmation of a write that destroys `losses` (none: the ordinary one): `--yes` answers it from the
/// flags, a terminal from what is typed after the library's [`access::Prompt`]; else it is absent.
pub(crate) fn confirmation_destroying(
    c: &ConfirmArgs,
    info: &device::DeviceInfo,
    what: &str,
    losses: &[plan::Loss],
) -> Confirmation {
    if c.yes {
        return Confirmation::Scripted {
            confirm: c.confirm.clone(),
            destroy_data: c.destroy_data,
        };
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Confirmation::Absent;
    }
    let prompt = access::Prompt::new(info, what, losses);
    let mut err = std::io::stderr().lock();
    let _ = write!(
        err,
        "{} to go on, anything else to stop: ",
        prompt.lines().join("\n")
    );
    let _ = err.flush();
    let mut line = String::new();
    match stdin.lock().read_line(&mut line) {
        Ok(_) => Confirmation::Typed(line),
        Err(_) => Confirmation::Absent,
    }
}
