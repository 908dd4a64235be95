//! Signals, in one place (on signal-hook, which crossterm already uses): what afdisk does when it is sent
//! one, for its three needs.
//!
//! Terms:
//! - **ending signals** ([`ENDING`]): SIGHUP (the terminal closed, ssh dropped), SIGTERM (a `kill`), SIGINT
//!   (Ctrl-C): by default each ends the process at once.
//! - **terminal signals** ([`TERMINAL`]): what a terminal sends by keys or by closing: SIGINT (Ctrl-C),
//!   SIGQUIT (Ctrl-\\), SIGTSTP (Ctrl-Z), SIGHUP.
//! - **ignored** ([`ignore_terminal_signals`]): while a sector-size switch runs, the terminal signals do
//!   nothing (SIG_IGN; the tool runs in its own process group, so they do not reach it either), and the
//!   guard puts back what was there when it is dropped. signal-hook registers handlers and cannot restore a
//!   disposition, so this one uses `sigaction` directly.
//! - **stop flag** ([`stop_flag`]): for a data move: each ending signal sets one flag (signal-hook's
//!   `flag::register`) instead of ending the process; the move stops at its next commit point.
//! - **waiter** ([`Waiter`]): for the TUI: once made, the ending signals no longer end the process; each one
//!   is recorded, taken by [`Waiter::take_pending`] (work done before the UI) or handed to a callback on a
//!   thread of its own ([`Waiter::spawn`]) that turns it into a message.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use nix::libc::c_int;
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

/// The signals that end afdisk unless it says otherwise.
pub const ENDING: [c_int; 3] = [nix::libc::SIGHUP, nix::libc::SIGTERM, nix::libc::SIGINT];

/// What a terminal sends: Ctrl-C, Ctrl-\\, Ctrl-Z, and the hang-up when it closes.
pub const TERMINAL: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGQUIT,
    Signal::SIGTSTP,
    Signal::SIGHUP,
];

/// While it lives, the terminal signals are ignored; dropping it restores the dispositions it replaced.
#[must_use = "the signals are ignored only while the guard lives"]
pub struct Ignored(Vec<(Signal, SigAction)>);

/// Ignores the terminal signals (see [`Ignored`]): for a sector-size switch, which must never be interrupted.
pub fn ignore_terminal_signals() -> Ignored {
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    Ignored(
        TERMINAL
            .into_iter()
            // SAFETY: SIG_IGN runs no handler code.
            .filter_map(|s| unsafe { sigaction(s, &ignore) }.ok().map(|old| (s, old)))
            .collect(),
    )
}

impl Drop for Ignored {
    fn drop(&mut self) {
        for (s, old) in self.0.drain(..) {
            // SAFETY: puts back the disposition that was installed before.
            let _ = unsafe { sigaction(s, &old) };
        }
    }
}

/// The flag each ending signal sets from now on (registered once per process; the signals then no longer
/// end the process). A data move checks it at its commit points.
pub fn stop_flag() -> &'static AtomicBool {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for sig in ENDING {
            // Registration fails only for a forbidden signal (SIGKILL, SIGSTOP): none of these.
            let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
        }
        flag
    })
}

/// The TUI's waiter for the ending signals (see the module's terms).
pub struct Waiter(signal_hook::iterator::Signals);

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Waiter(SIGHUP, SIGTERM, SIGINT)")
    }
}

impl Waiter {
    /// Registers the ending signals: from now on they are recorded instead of ending the process. `None`
    /// when they cannot be registered (then they end it as before).
    pub fn new() -> Option<Waiter> {
        signal_hook::iterator::Signals::new(ENDING).ok().map(Waiter)
    }

    /// An ending signal that arrived since the last call, taken: its number.
    pub fn take_pending(&mut self) -> Option<c_int> {
        self.0.pending().next()
    }

    /// Hands every ending signal from now on to `f`, on a thread of its own, until `f` returns false.
    pub fn spawn(mut self, mut f: impl FnMut(c_int) -> bool + Send + 'static) {
        std::thread::spawn(move || {
            for sig in self.0.forever() {
                if !f(sig) {
                    return;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::libc;
    use std::sync::atomic::Ordering;

    fn disposition(s: i32) -> libc::sighandler_t {
        // SAFETY: reads the disposition (no new action is installed); `old` is a valid out-pointer.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(s, std::ptr::null(), &mut old);
            old.sa_sigaction
        }
    }

    /// One test, so that nothing else in this process changes these dispositions meanwhile: an ending signal
    /// sets the stop flag instead of ending the process, and a waiter has it pending; while a switch runs the
    /// terminal's signals are ignored (a hang-up must not end afdisk and with it the tool's pipes), and
    /// afterwards what was there before is back (the stop flag's handler included).
    #[test]
    fn stop_flag_waiter_and_ignored_terminal_signals() {
        let flag = stop_flag();
        let mut waiter = Waiter::new().expect("the ending signals register");
        assert_eq!(waiter.take_pending(), None);
        nix::sys::signal::raise(Signal::SIGTERM).expect("raise");
        assert!(flag.load(Ordering::Relaxed));
        assert_eq!(waiter.take_pending(), Some(libc::SIGTERM));
        assert_eq!(waiter.take_pending(), None, "taken once");
        let (tx, rx) = std::sync::mpsc::channel();
        waiter.spawn(move |sig| tx.send(sig).is_ok());
        nix::sys::signal::raise(Signal::SIGHUP).expect("raise");
        let got = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(got, Ok(libc::SIGHUP), "handed to the waiter's thread");
        let before: Vec<_> = TERMINAL.iter().map(|s| disposition(*s as i32)).collect();
        {
            let _quiet = ignore_terminal_signals();
            for s in TERMINAL {
                assert_eq!(disposition(s as i32), libc::SIG_IGN, "{s}");
            }
        }
        let after: Vec<_> = TERMINAL.iter().map(|s| disposition(*s as i32)).collect();
        assert_eq!(after, before);
        assert_ne!(
            disposition(libc::SIGINT),
            libc::SIG_DFL,
            "the stop flag's handler is back"
        );
    }
}
