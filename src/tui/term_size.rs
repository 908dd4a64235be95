//! The terminal's size when the kernel does not know it. A serial console starts with a 0x0 window: the kernel's
//! window size (TIOCGWINSZ, which crossterm's `size()` returns whenever the ioctl succeeds) says 0 rows and 0
//! columns, and ratatui would draw nothing.
//!
//! Terms: the *reported* size is the kernel's (columns, rows) of the terminal; the *answered* size is the
//! terminal's own, read by moving the cursor to the far corner and asking where it is (a cursor position report,
//! `ESC [ 6 n`, answered `ESC [ row ; col R`); the *fallback* is 80x24. [`choose`] picks one (pure); [`ensure`]
//! runs before the UI starts and, when the reported size is unusable, sets the kernel's window size to the chosen
//! one (TIOCSWINSZ, what `stty rows R cols C` does), so every later size query — ratatui's resize on each frame —
//! sees it.

use std::io::Write;
use std::os::fd::AsRawFd;

/// The size used when neither the kernel nor the terminal tells one: (columns, rows).
pub const FALLBACK: (u16, u16) = (80, 24);

/// A size is usable when it has at least 2 columns and 2 rows (0x0 is a serial console's; 1x1 is what a
/// terminal that ignores the cursor move answers).
fn usable(s: (u16, u16)) -> bool {
    s.0 >= 2 && s.1 >= 2
}

/// The size to draw at: the reported one when usable, else the answered one when usable, else [`FALLBACK`].
pub fn choose(reported: Option<(u16, u16)>, answered: Option<(u16, u16)>) -> (u16, u16) {
    [reported, answered]
        .into_iter()
        .flatten()
        .find(|s| usable(*s))
        .unwrap_or(FALLBACK)
}

/// The terminal's size from the cursor position it reports after a move to the far corner: crossterm gives the
/// position 0-based as (column, row), so the size is one more each way.
pub fn from_corner(pos: (u16, u16)) -> (u16, u16) {
    (pos.0.saturating_add(1), pos.1.saturating_add(1))
}

/// Asks the terminal for its size: saves the cursor, moves it as far right and down as the terminal allows,
/// reads the position report (crossterm waits up to 2 s for it), restores the cursor. None when unanswered.
fn ask_terminal() -> Option<(u16, u16)> {
    use crossterm::cursor::{position, MoveTo, RestorePosition, SavePosition};
    let mut out = std::io::stdout();
    crossterm::execute!(out, SavePosition, MoveTo(998, 998)).ok()?;
    let pos = position().ok();
    let _ = crossterm::execute!(out, RestorePosition);
    let _ = out.flush();
    pos.map(from_corner)
}

nix::ioctl_write_ptr_bad!(set_winsize, nix::libc::TIOCSWINSZ, nix::libc::winsize);
nix::ioctl_read_bad!(get_winsize, nix::libc::TIOCGWINSZ, nix::libc::winsize);

/// Sets the kernel's window size of the terminal `fd` to (columns, rows).
fn apply(fd: &impl AsRawFd, size: (u16, u16)) -> nix::Result<()> {
    let ws = nix::libc::winsize {
        ws_row: size.1,
        ws_col: size.0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: `ws` is a valid winsize that lives across the call; TIOCSWINSZ only reads it.
    unsafe { set_winsize(fd.as_raw_fd(), &ws) }.map(|_| ())
}

/// The kernel's window size of the terminal `fd` as (columns, rows).
fn read(fd: &impl AsRawFd) -> nix::Result<(u16, u16)> {
    let mut ws = nix::libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: `ws` is a valid, writable winsize for the call's duration.
    unsafe { get_winsize(fd.as_raw_fd(), &mut ws) }?;
    Ok((ws.ws_col, ws.ws_row))
}

/// Before the UI starts: when the kernel reports no usable size for the controlling terminal (a serial
/// console's 0x0), asks the terminal, else takes 80x24, and sets that as the terminal's window size.
pub fn ensure() {
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return;
    };
    let reported = read(&tty).ok();
    if reported.is_some_and(usable) {
        return;
    }
    let size = choose(reported, ask_terminal());
    let _ = apply(&tty, size);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_usable_reported_size_wins() {
        assert_eq!(choose(Some((132, 40)), Some((80, 25))), (132, 40));
        assert_eq!(choose(Some((132, 40)), None), (132, 40));
    }

    #[test]
    fn a_zero_window_takes_the_terminals_answer() {
        assert_eq!(choose(Some((0, 0)), Some((132, 40))), (132, 40));
        assert_eq!(choose(None, Some((100, 37))), (100, 37));
        assert_eq!(choose(Some((0, 24)), Some((90, 30))), (90, 30));
    }

    #[test]
    fn no_answer_or_a_nonsense_one_falls_back_to_80x24() {
        assert_eq!(choose(Some((0, 0)), None), FALLBACK);
        assert_eq!(choose(None, None), (80, 24));
        assert_eq!(choose(Some((0, 0)), Some((1, 1))), FALLBACK);
    }

    #[test]
    fn the_corner_position_is_zero_based() {
        assert_eq!(from_corner((131, 39)), (132, 40));
        assert_eq!(from_corner((u16::MAX, 0)), (u16::MAX, 1));
    }

    /// The window size set on a real pseudo-terminal is the one the kernel then reports (a new pty starts at
    /// 0x0, like a serial console).
    #[test]
    fn apply_sets_the_kernels_window_size_of_a_pty() {
        use std::ffi::CStr;
        let master = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/ptmx")
            .expect("open /dev/ptmx");
        let fd = master.as_raw_fd();
        let mut name = [0 as nix::libc::c_char; 128];
        // SAFETY: `fd` is an open pty master; `name` is a writable buffer of the length passed.
        let rc = unsafe {
            nix::libc::grantpt(fd)
                | nix::libc::unlockpt(fd)
                | nix::libc::ptsname_r(fd, name.as_mut_ptr(), name.len())
        };
        assert_eq!(rc, 0, "grantpt/unlockpt/ptsname_r");
        // SAFETY: ptsname_r wrote a NUL-terminated string into `name`.
        let path = unsafe { CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open the pty's slave");
        assert_eq!(read(&slave).expect("TIOCGWINSZ"), (0, 0));
        apply(&slave, choose(read(&slave).ok(), None)).expect("TIOCSWINSZ");
        assert_eq!(read(&slave).expect("TIOCGWINSZ"), (80, 24));
        assert_eq!(read(&master).expect("TIOCGWINSZ on the master"), (80, 24));
    }
}
