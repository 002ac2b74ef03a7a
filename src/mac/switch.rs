//! Software-only variants (`--accel sw`, docs/methodology.md §1): what a backend declares, and the one place a
//! `sw` function is keyed.
//!
//! The libraries choose their instruction-set paths once per process (OpenSSL reads `OPENSSL_ia32cap`
//! when libcrypto loads; Crypto++ reads process-wide globals), so a `sw` function runs in a separate
//! process with the switches applied. Two halves, so the registry imports nothing above it (STYLE §11):
//!
//! - A backend *declares* its switch as data, a [`SoftwareSwitch`] on [`super::Backend`]: the environment
//!   the child must start with, what to clear at the child's start, how to check it took effect, and what
//!   the library reports using. The registry only describes; it starts no process.
//! - The process machinery (start the child, the pipe protocol, the proxy objects) belongs to the
//!   isolation layer above the registry and the engine (`src/isolate/`). It gives the registry an
//!   [`Isolation`] at start-up ([`install_isolation`], before `main` in every executable linking
//!   macbench); every `sw` key setup and availability question goes through it. Were none installed,
//!   `sw` functions would be unavailable and refuse to key, never silently run with the extensions on.

use super::{Availability, Function, KeyFn, KeyParams, KeyedMac, MacError};
use std::sync::OnceLock;

/// How a backend switches its instruction-set extensions off for a whole process.
pub struct SoftwareSwitch {
    /// Environment variables the software-only process must start with, for libraries that read them
    /// when they load (`OPENSSL_ia32cap`).
    pub env: fn() -> Vec<(&'static str, String)>,
    /// Switch off what can still be switched off in a running process (Crypto++'s globals). Called once,
    /// first thing in the software-only process, before anything is keyed.
    pub apply: fn(),
    /// Whether the switch is in effect in this process; `Err` names what the library still uses.
    pub check: fn() -> Result<(), String>,
    /// What the library uses now (capability vector, code paths); `None` when it cannot say.
    pub capability: fn() -> Option<Capability>,
}

/// What one library reports using, for the record (`list`, host facts) and for the tests.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Capability {
    /// One line for people: `OPENSSL_ia32cap=0x…:0x… (+ssse3 -aesni …)`, or Crypto++'s code paths.
    pub summary: String,
    /// The backend's own detail (libcrypto's capability vector, Crypto++'s feature bits).
    pub detail: serde_json::Value,
}

/// The isolation layer as the registry sees it: installed once per process, at start-up.
pub trait Isolation: Sync {
    /// Whether `sw` functions can run here at all (the platform, a process to start).
    fn availability(&self) -> Availability;
    /// Key setup of a `sw` function. `own` is the backend's key function, which is right only in a
    /// process whose switches are applied; elsewhere the isolation layer keys the object over there.
    fn key(
        &self,
        function: &Function,
        own: KeyFn,
        key: &[u8],
        params: KeyParams<'_>,
    ) -> Result<Box<dyn KeyedMac>, MacError>;
}

static ISOLATION: OnceLock<&'static dyn Isolation> = OnceLock::new();

/// Give the registry its isolation layer. The first call wins; later ones change nothing.
pub fn install_isolation(isolation: &'static dyn Isolation) {
    let _ = ISOLATION.set(isolation);
}

const NOT_INSTALLED: &str = "software-only isolation is not set up in this process \
                             (macbench::isolate::install)";

pub(super) fn availability() -> Availability {
    match ISOLATION.get() {
        Some(isolation) => isolation.availability(),
        None => Availability::Unavailable(NOT_INSTALLED.to_string()),
    }
}

pub(super) fn key(
    function: &Function,
    own: KeyFn,
    key: &[u8],
    params: KeyParams<'_>,
) -> Result<Box<dyn KeyedMac>, MacError> {
    match ISOLATION.get() {
        Some(isolation) => isolation.key(function, own, key, params),
        None => Err(MacError::Backend {
            backend: function.backend.name,
            algorithm: function.algorithm.name,
            reason: NOT_INSTALLED.to_string(),
        }),
    }
}
