//! The **ending signals** of an interactive session (SIGHUP: the terminal closed; SIGTERM; SIGINT from outside
//! the terminal): blocked, so that one that arrives stays pending instead of killing the process in the middle
//! of work that leaves things to clean up, then taken by the session, which ends as asked (status 128 + the
//! signal). The terminal UI waits for them on a thread of its own; `afdisk demo` checks for one after making
//! its disks, and removes them.

/// The signals that end an interactive session cleanly rather than killing it mid-job.
const ENDING_SIGNALS: [nix::sys::signal::Signal; 3] = [
    nix::sys::signal::Signal::SIGHUP,
    nix::sys::signal::Signal::SIGTERM,
    nix::sys::signal::Signal::SIGINT,
];

/// The ending signals as a set (to block them, or to wait for one).
pub fn set() -> nix::sys::signal::SigSet {
    let mut set = nix::sys::signal::SigSet::empty();
    for s in ENDING_SIGNALS {
        set.add(s);
    }
    set
}

/// Blocks the ending signals in this thread (and so in every thread it starts from now on; child processes
/// start with an empty mask, which std's `Command` sets): one that arrives stays pending instead of killing the
/// process. For work before the UI that leaves things to clean up (the demo's disks): see
/// [`take_pending`]. Call it before any other thread is started.
pub fn block() -> bool {
    use nix::sys::signal::SigmaskHow;
    nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set()), None).is_ok()
}

/// An ending signal that arrived while they were blocked ([`block`]), taken: its number.
pub fn take_pending() -> Option<i32> {
    // SAFETY: an all-zero sigset_t is a valid value; sigpending only fills the set it is given, and
    // sigismember only reads it.
    let mut pending: nix::libc::sigset_t = unsafe { std::mem::zeroed() };
    if unsafe { nix::libc::sigpending(&mut pending) } != 0 {
        return None;
    }
    let sig = ENDING_SIGNALS
        .into_iter()
        .find(|s| unsafe { nix::libc::sigismember(&pending, *s as i32) } == 1)?;
    let mut one = nix::sys::signal::SigSet::empty();
    one.add(sig);
    // Pending, so sigwait returns at once and the signal is gone.
    one.wait().ok().map(|s| s as i32)
}
