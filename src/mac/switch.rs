//! Switched variants: `--accel sw` and the ISA levels a library is masked to (docs/methodology.md §1,
//! §5): what a backend declares, and the one place such a function is keyed.
//!
//! The libraries choose their instruction-set paths once per process (OpenSSL reads `OPENSSL_ia32cap`
//! when libcrypto loads; Crypto++ reads process-wide globals), so a switched function runs in a separate
//! process with the switches applied, one process per acceleration (`sw`, `sse`, `avx`, …): a mask is
//! a property of the process, not of an object. Two halves, so the registry imports nothing above it
//! (STYLE §11):
//!
//! - A backend *declares* its switch as data, one [`ProcessSwitch`] on [`super::Backend`] for `sw` and
//!   every level it masks to: the environment each acceleration's process must start with, what to
//!   clear at that process's start, how to check it took effect, and what the library reports using.
//!   The registry only describes; it starts no process.
//! - The process machinery (start a child per acceleration, the pipe protocol, the proxy objects)
//!   belongs to the isolation layer above the registry and the engine (`src/isolate/`), which keys a
//!   switched function through `isolate::key` and runs its scenarios through its child runner. The
//!   registry holds one fact about the process, set by that layer's child once its switches are
//!   applied and checked ([`enter_switched_process`]): in that process, and only there, a switched
//!   function keys itself ([`super::Function::with_key`]). Anywhere else its key setup is refused with
//!   the reason: never a hook up the stack, never silently run with the extensions on.
//!
//! A level a library keys in-process (ipsec-mb initialises a manager per level) needs no switch: its
//! backend declares no [`ProcessSwitch`] for it, and its key function selects the path itself.

use super::{Accel, Availability, Function, KeyFn, KeyParams, KeyedResult, MacError};
use std::sync::OnceLock;

/// How a backend switches instruction-set extensions off for a whole process: `sw` and each ISA
/// level it offers by masking. Each function takes the acceleration of the process it serves.
pub struct ProcessSwitch {
    /// The accelerations this switch gives (never `hw`, the library's default).
    pub accels: &'static [Accel],
    /// Environment variables that acceleration's process must start with, for libraries that read
    /// them when they load (`OPENSSL_ia32cap`).
    pub env: fn(Accel) -> Vec<(&'static str, String)>,
    /// Switch off what can still be switched off in a running process (Crypto++'s globals). Called
    /// once, first thing in that acceleration's process, before anything is keyed.
    pub apply: fn(Accel),
    /// Whether the switch for that acceleration is in effect in this process: what it clears is off
    /// and, for a level, the level's own extension is still on. `Err` names what is wrong.
    pub check: fn(Accel) -> Result<(), String>,
    /// What the library uses now (capability vector, code paths); `None` when it cannot say.
    pub capability: fn() -> Option<Capability>,
    /// What `list` should say of the levels beyond the capability reports (levels that run the same
    /// code for every registered MAC), or `None`.
    pub note: Option<&'static str>,
}

/// What a process switched to `accel` clears, given a library's ladder: each capability with the
/// lowest acceleration that keeps it (`None`: none does, `sw` and every level clear it). A capability
/// is cleared when it is kept only from a higher rung than `accel` (`sw` < `sse` < … < `avx512`);
/// `hw` clears nothing. The one rule every masked library's table follows.
pub fn cleared_at<T: Copy>(ladder: &[(T, Option<Accel>)], accel: Accel) -> Vec<T> {
    let Some(rank) = accel.ladder_rank() else {
        return Vec::new();
    };
    ladder
        .iter()
        .filter(|(_, kept_from)| {
            kept_from
                .and_then(Accel::ladder_rank)
                .is_none_or(|k| k > rank)
        })
        .map(|&(capability, _)| capability)
        .collect()
}

impl ProcessSwitch {
    /// Whether this switch gives `accel` (its functions then run in that acceleration's process).
    /// The ISA levels are x86-64 code paths: elsewhere no switch gives them, so nothing (`list`, a
    /// run's host facts) starts a level's child only to hear it refuse.
    pub fn covers(&self, accel: Accel) -> bool {
        self.accels.contains(&accel) && (!accel.is_isa_level() || cfg!(target_arch = "x86_64"))
    }
}

/// What one library reports using, for the record (`list`, host facts) and for the tests.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Capability {
    /// One line for people: `OPENSSL_ia32cap=0x…:0x… (+ssse3 -aesni …)`, or Crypto++'s code paths.
    pub summary: String,
    /// The backend's own detail (libcrypto's capability vector, Crypto++'s feature bits).
    pub detail: serde_json::Value,
}

/// The acceleration this process is switched to, once its switches are applied and checked.
static SWITCHED_PROCESS: OnceLock<Accel> = OnceLock::new();

/// Record that every switch for `accel` is applied and checked in this process (the isolation layer's
/// child, first thing). The first call wins: a process is switched once.
pub fn enter_switched_process(accel: Accel) {
    let _ = SWITCHED_PROCESS.set(accel);
}

/// The acceleration this process is switched to: `Some` inside a switched child only.
pub fn switched_process() -> Option<Accel> {
    SWITCHED_PROCESS.get().copied()
}

/// Whether functions switched to `accel` can run from this process: in that acceleration's own
/// process; elsewhere on the architectures whose capability bits the switches mask, and never from
/// another acceleration's child (a child starts no children).
pub(super) fn availability(accel: Accel) -> Availability {
    if let Some(here) = switched_process() {
        return if here == accel {
            Availability::Available
        } else {
            Availability::Unavailable(format!(
                "this is the {here} child; {accel} functions run in their own child"
            ))
        };
    }
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return Availability::Unavailable(format!(
            "software-only variants mask x86-64 or aarch64 capability bits \
             (OPENSSL_ia32cap, OPENSSL_armcap); this is {}",
            std::env::consts::ARCH
        ));
    }
    Availability::Available
}

/// Key setup of a switched function: `own` (the backend's key function) in the process switched to
/// its acceleration; elsewhere refused with the way to key it.
pub(super) fn key(
    function: &Function,
    own: KeyFn,
    key: &[u8],
    params: KeyParams<'_>,
) -> KeyedResult {
    match switched_process() {
        Some(here) if here == function.accel => own(key, params),
        here => Err(MacError::Backend {
            backend: function.backend.name,
            algorithm: function.algorithm.name,
            reason: match here {
                Some(here) => format!(
                    "this is the {here} child; {} keys only in the {} child",
                    function.id(),
                    function.accel
                ),
                None => format!(
                    "{} keys only in a process switched to {} (macbench::isolate::key keys it there)",
                    function.id(),
                    function.accel
                ),
            },
        }),
    }
}
