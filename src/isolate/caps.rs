//! `caps` mode: what the software-only child's libraries report using, asked once per process.
//!
//! Starting a child is not free, so nothing asks merely to collect host facts: `list` asks (it prints
//! the sw child's capability vectors next to each backend's version), and so does a run that has `sw`
//! functions, to record what the child it ran them in saw.

use super::{command, switches};
use crate::mac::Capability;
use serde::{Deserialize, Serialize};
use std::process::Stdio;
use std::sync::OnceLock;

/// What the software-only child's libraries report, one entry per backend with a switch.
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

    /// What the libraries of this process report.
    fn here() -> Capabilities {
        Capabilities {
            backends: switches()
                .map(|(backend, switch)| BackendCapability {
                    backend: backend.to_string(),
                    capability: (switch.capability)(),
                })
                .collect(),
        }
    }
}

/// The software-only child's capabilities, asked once per process (starts `macbench __child caps`).
pub fn capabilities() -> Result<Capabilities, String> {
    static CAPS: OnceLock<Result<Capabilities, String>> = OnceLock::new();
    CAPS.get_or_init(|| {
        let out = command("caps")?
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cannot start the sw child: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "sw child failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("sw child caps: {e}"))
    })
    .clone()
}

/// Child side: print this (switched) process's capabilities.
pub(super) fn child_caps() -> Result<(), String> {
    println!(
        "{}",
        serde_json::to_string(&Capabilities::here()).map_err(|e| e.to_string())?
    );
    Ok(())
}
