//! `caps` mode: what a switched child's libraries report using, asked once per acceleration per process.
//!
//! Starting a child is not free, so nothing asks merely to collect host facts: `list` asks (it prints
//! each child's capability vectors next to each backend's version), and so does a run that has
//! switched functions, to record what the children it ran them in saw.

use super::{command, switches};
use crate::mac::{Accel, Capability};
use serde::{Deserialize, Serialize};
use std::process::Stdio;
use std::sync::OnceLock;

/// What one switched child's libraries report, one entry per backend whose switch covers its
/// acceleration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Capabilities {
    pub backends: Vec<BackendCapability>,
}

/// One backend's report from the child; `None` when the library cannot say (not built, not x86).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackendCapability {
    pub backend: String,
    pub capability: Option<Capability>,
}

impl Capabilities {
    /// What `backend` reports in the child.
    pub fn of(&self, backend: &str) -> Option<&Capability> {
        self.backends
            .iter()
            .find(|b| b.backend == backend)
            .and_then(|b| b.capability.as_ref())
    }

    /// What the libraries of this process (switched to `accel`) report.
    fn here(accel: Accel) -> Capabilities {
        Capabilities {
            backends: switches(accel)
                .map(|(backend, switch)| BackendCapability {
                    backend: backend.to_string(),
                    capability: (switch.capability)(),
                })
                .collect(),
        }
    }
}

/// How long a `caps` child may take: it starts, loads every library and prints a line (well under a
/// second here, seconds under emulation).
const CAPS_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// The capabilities of `accel`'s child, asked once per process and acceleration (starts
/// `macbench __child caps ACCEL`). `Err` for `hw`, which has no child.
pub fn capabilities(accel: Accel) -> Result<Capabilities, String> {
    static CAPS: [OnceLock<Result<Capabilities, String>>; Accel::ALL.len()] =
        [const { OnceLock::new() }; Accel::ALL.len()];
    let Some(rank) = accel.ladder_rank() else {
        return Err(format!("{accel} runs in no child"));
    };
    CAPS[rank]
        .get_or_init(|| {
            let mut cmd = command(super::ChildMode::Caps, accel)?;
            cmd.stdin(Stdio::null());
            // Bounded: a `$MACBENCH_EXE` that is not macbench may print without end, or never end.
            let (status, stdout, stderr) =
                super::bounded_output(cmd, CAPS_WITHIN).map_err(|e| {
                    format!(
                        "{} {e}; {}",
                        super::executable_name(),
                        super::EXPECTED_REPLY
                    )
                })?;
            if !status.success() {
                // Its words when it said any; never a line ending in a dangling ": ".
                let said = String::from_utf8_lossy(&stderr);
                return Err(match said.trim() {
                    "" => format!(
                        "{} failed ({status}) and said nothing",
                        super::executable_name()
                    ),
                    said => format!("{} failed ({status}): {said}", super::executable_name()),
                });
            }
            serde_json::from_slice(&stdout).map_err(|e| {
                format!(
                    "{} gave no capabilities ({e}); {}",
                    super::executable_name(),
                    super::EXPECTED_REPLY
                )
            })
        })
        .clone()
}

/// Child side: print this (switched) process's capabilities.
pub(super) fn child_caps(accel: Accel) -> Result<(), String> {
    println!(
        "{}",
        serde_json::to_string(&Capabilities::here(accel)).map_err(|e| e.to_string())?
    );
    Ok(())
}
