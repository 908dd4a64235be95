//! How the CLI ends a command: its output on stdout ([`emit`], whose write errors other than a closed pipe
//! [`finish`] reports), its errors on stderr (`afdisk: error:` and a `fix:` line) and, for a `--json` command,
//! also as the JSON error object on stdout ([`fail`]). Terms: a *closed pipe* is EPIPE (`afdisk list | head`),
//! which is quiet; the *exit status* of a failure is 3 when refused for safety, else 2.

use std::io::Write;

use afdisk::Error;

use super::{error_text, EXIT_ERROR, EXIT_REFUSED};

pub(crate) fn print_error(e: &Error) {
    let (problem, fix) = error_text(e);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "afdisk: error: {problem}");
    if !fix.is_empty() {
        let _ = writeln!(err, "  fix: {fix}");
    }
}

/// The exit status of a command that failed with `e`: 3 when refused for safety, else 2.
fn exit_code(e: &Error) -> i32 {
    if e.kind == afdisk::ErrorKind::Refused {
        EXIT_REFUSED
    } else {
        EXIT_ERROR
    }
}

/// A command failed with `e`: the error on stderr, and with `--json` (`as_json`) also as one JSON object on
/// stdout (`contract::ErrorJson`, afdisk-json(5)), since a `--json` command always prints one. The exit status.
pub(crate) fn fail(e: &Error, as_json: bool) -> i32 {
    print_error(e);
    let code = exit_code(e);
    if as_json {
        emit(&json_error(e, code));
    }
    code
}

/// `e` as the JSON error object, ending the command with `code`.
pub(crate) fn json_error(e: &Error, code: i32) -> String {
    let (problem, fix) = error_text(e);
    json(&afdisk::contract::ErrorJson::new(e, problem, fix, code))
}

/// The first error writing to stdout other than a closed pipe (see [`emit`]), until taken.
static STDOUT_FAILURE: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);

/// Writes to stdout. A closed pipe (`afdisk list | head`) is quiet: the reader wanted no more. Any other
/// failure (`>/dev/full`, a full disk) is kept for [`finish`], which reports it and makes the exit status an
/// error: output that did not arrive is no success.
pub(crate) fn emit(text: &str) {
    let bytes = text.as_bytes();
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let mut f = STDOUT_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
            f.get_or_insert(e);
        }
    }
}

/// The failure to write to stdout since the last call, if any (taken: reported once).
pub(crate) fn take_stdout_failure() -> Option<std::io::Error> {
    STDOUT_FAILURE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
}

/// The error for output lost on stdout (`cause`), `done` being what the command did all the same (none
/// when it only read).
pub(crate) fn stdout_error(cause: &std::io::Error, done: Option<&str>) -> Error {
    let problem = format!("cannot write the output to standard output: {cause}");
    match done {
        Some(d) => Error::io(
            format!("{d}; but {problem}"),
            "the disk was written as said above; send the output somewhere it fits next time",
        ),
        None => Error::io(
            problem,
            "send the output somewhere it can be written (a file on a filesystem with room, or a pipe)",
        ),
    }
}

/// The exit status `code` of a command whose output may not have reached stdout: a write failure (not a
/// closed pipe) is reported on stderr and makes it an error (exit 2, an I/O failure), unless the command
/// was already refused or failed.
pub fn finish(code: i32) -> i32 {
    match take_stdout_failure() {
        Some(e) => {
            print_error(&stdout_error(&e, None));
            if code == EXIT_REFUSED {
                code
            } else {
                EXIT_ERROR
            }
        }
        None => code,
    }
}

pub(crate) fn json<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_string_pretty(v) {
        Ok(s) => s + "\n",
        Err(e) => format!("{{\"error\": \"cannot serialise: {e}\"}}\n"),
    }
}
