//! How the TUI words what the core names: a **setting** (the core's `Setting`: a write mode, a partition, a
//! confirmation) by the key or the dialog that sets it on screen, never by a command-line option (the screens
//! have none), and a **failure** in one line (kind, problem and fix) in those words.

use afdisk::error::Setting;

/// A setting the core names, as the TUI sets it: by its key on the screen that has one, else in words
/// (never a command-line option: the screens have none).
pub fn key_name(s: Setting, value: Option<&str>) -> String {
    match (s, value) {
        (Setting::WriteMode, Some(v)) => format!("write mode {v} (w)"),
        (Setting::WriteMode, None) => "the write mode (w)".into(),
        (Setting::Probe, _) => "the probe (o)".into(),
        (Setting::Partition, Some(v)) => format!("partition {v} (selected in the disk view)"),
        (Setting::Partition, None) => "a partition (selected in the disk view)".into(),
        (Setting::Confirm, _) => "the device name typed in the dialog".into(),
        (Setting::DestroyData, _) => "DESTROY typed in the dialog".into(),
        (s, v) => s.neutral(v),
    }
}

/// A failure in one line as the screens show it: kind, problem and fix, settings named by their keys.
pub fn failure_text(e: &afdisk::Error) -> String {
    afdisk::error::failure_text_in(e, &key_name)
}
