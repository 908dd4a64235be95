//! The confirmation of a switch: the drive's serial (or kernel name) typed, then [`CONFIRM_WORD`]; in
//! scripts `--yes --confirm TOKEN`. The core checks every answer; front ends only collect them.
//!
//! Terms:
//! - **token**: what `--confirm` must be and the first step asks for (the serial, else the kernel name).
//! - **step**: one typed answer (0: the token, 1: the word), each with its [`access::Prompt`].

use serde::Serialize;

use super::{SwitchPlan, NOTHING_FOUND};
use crate::device::access;
use crate::error::{Error, Result};

/// What must be confirmed: the token (serial) typed, then [`CONFIRM_WORD`]; `--yes --confirm TOKEN` in
/// scripts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ConfirmationRequest {
    pub token: String,
    pub token_kind: &'static str,
    pub word: &'static str,
}

/// The answers to a [`ConfirmationRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Typed at a prompt: the token, then the word.
    Typed {
        token: String,
        word: String,
    },
    /// `--yes` with `--confirm`.
    Scripted {
        confirm: Option<String>,
    },
    Absent,
}

impl ConfirmationRequest {
    /// The number of typed steps: the token, then the word.
    pub const STEPS: usize = 2;

    /// Checks what was typed at `step` (0: the token, 1: the word): `Ok` when it is what the step asks for;
    /// a `Refused` error naming what was expected otherwise. Front ends ask step 1 only after step 0 passed.
    pub fn check_step(&self, step: usize, typed: &str) -> Result<()> {
        let nothing = "nothing was run";
        let typed = typed.trim();
        if step == 0 && typed != self.token {
            Err(Error::refused(
                format!(
                    "{typed:?} is not the {} ({}): {nothing}",
                    self.token_kind, self.token
                ),
                format!("type the {} exactly: {}", self.token_kind, self.token),
            ))
        } else if step != 0 && typed != self.word {
            Err(Error::refused(
                format!("{typed:?} is not {}: {nothing}", self.word),
                format!("type {} (capitals) to confirm the erase", self.word),
            ))
        } else {
            Ok(())
        }
    }

    /// `Ok` when the answer confirms; a `Refused` error naming what was expected otherwise.
    pub fn check(&self, a: &Answer) -> Result<()> {
        let nothing = "nothing was run";
        match a {
            Answer::Typed { token, word } => {
                self.check_step(0, token)?;
                self.check_step(1, word)
            }
            Answer::Scripted { confirm: Some(c) } if *c == self.token => Ok(()),
            Answer::Scripted { confirm: Some(c) } => Err(Error::refused(
                format!(
                    "--confirm {c} does not match the {} ({}): {nothing}",
                    self.token_kind, self.token
                ),
                format!(
                    "check that you are pointing at the right drive; its token is {}",
                    self.token
                ),
            )),
            Answer::Scripted { confirm: None } => Err(Error::refused(
                format!("--yes without --confirm: {nothing}"),
                format!("add --confirm {} (the {})", self.token, self.token_kind),
            )),
            Answer::Absent => Err(Error::refused(
                format!("no terminal to confirm on and no --yes: {nothing}"),
                format!(
                    "run it interactively, or pass --yes --confirm {}",
                    self.token
                ),
            )),
        }
    }
}

impl SwitchPlan {
    /// The confirmation as the front ends ask it, one [`Prompt`] per step (the CLI's terminal prompt and
    /// the TUI's one dialog show these lines): step 1 names the switch, the device and everything lost, and
    /// asks for the token (the serial); step 2 asks for [`CONFIRM_WORD`]. [`ConfirmationRequest::check_step`]
    /// checks each answer.
    pub fn prompts(&self) -> Vec<access::Prompt> {
        let c = &self.confirmation;
        let what = format!(
            "switch the logical sector size from {} to {} bytes",
            self.from, self.to
        );
        let described = format!(
            "{} drive{}",
            self.bus.label(),
            self.id
                .serial
                .as_deref()
                .map(|s| format!(", serial {s}"))
                .unwrap_or_default()
        );
        let path = self.device.display().to_string();
        let lost = if self.lost.is_empty() {
            vec![NOTHING_FOUND.to_string()]
        } else {
            self.lost.clone()
        };
        let step = |losses: Vec<String>, detail: String, answer: &str| access::Prompt {
            what: what.clone(),
            path: path.clone(),
            described: described.clone(),
            detail: Some(detail),
            losses,
            answer: answer.to_string(),
            fs_label: None,
        };
        vec![
            step(
                lost,
                format!(
                    "Step 1 of 2: type the {}; then {}.",
                    c.token_kind, c.word
                ),
                &c.token,
            ),
            step(
                Vec::new(),
                format!(
                    "Step 2 of 2: everything on the drive is lost, and once the tool runs it cannot be stopped. Type {} (capitals) to switch.",
                    c.word
                ),
                c.word,
            ),
        ]
    }
}
