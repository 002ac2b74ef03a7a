//! libgcrypt backend: the system libgcrypt (Debian's libgcrypt20-dev), the crypto library of GnuPG,
//! systemd and cryptsetup, through `csrc/gcrypt_shim.c` and the one shim table of
//! `csrc/macbench_shim.h` ([`super::shim`]).
//!
//! Its MACs, all from the one `gcry_mac` API: HMAC over MD5, SHA-1, SHA-2 (with SHA-512/224 and
//! SHA-512/256) and SHA-3, CMAC over AES-128/192/256, Twofish and Serpent (with Crypto++ the only
//! second source for the paper's Twofish and Serpent rows), GMAC-AES and Poly1305 (plain and
//! Bernstein's Poly1305-AES). Key setup happens once in the shim's `create`; per message
//! `gcry_mac_reset` puts the handle back in its keyed state (HMAC restores its saved ipad state, so a
//! message costs `Γ + 1` compressions like OpenSSL and Nettle), then nonce, write, read.
//!
//! `hw` and `sw`: libgcrypt chooses its code paths from its hardware-feature detection when it
//! initialises, and its switch (`GCRYCTL_DISABLE_HWF`) must come before that and cannot be undone.
//! So `sw` runs in the software-only child, whose first act ([`super::ProcessSwitch::apply`]) is the
//! shim's `software_only` entry, before anything else touches libgcrypt; the child then checks the
//! features libgcrypt reports using (`hwf`, its `hwflist:`) hold no extension ([`EXTENSIONS`]). No ISA
//! levels: the switch names features, not the ladder's levels.
//!
//! Built only with `cfg(have_gcrypt)` (build.rs found the library and compiled the shim); otherwise
//! every entry is listed as unavailable with the reason build.rs recorded.

use super::{Accel, Backend, Capability, IsaLevels, ProcessSwitch};

/// Parts of libgcrypt's feature names (`intel-aesni`, `arm-pmull`, …) that `sw` must have switched
/// off: AES, carry-less multiply, SHA and SM instructions, AVX and above, BMI2, SVE.
pub const EXTENSIONS: &[&str] = &[
    "aes", "pclmul", "pmull", "sha", "avx", "vpclmul", "gfni", "bmi2", "sve", "sm3", "sm4",
];

/// `sw` only, switched by the shim before libgcrypt initialises.
pub static PROCESS_SWITCH: ProcessSwitch = ProcessSwitch {
    accels: &[Accel::Sw],
    env: |_| Vec::new(),
    apply: |_| {
        // A refusal leaves the features on, which `check` then reports with the list.
        if let Some(shim) = shim() {
            let _ = shim.software_only();
        }
    },
    check: check_switch,
    capability: || {
        let hwf = shim()?.fact("hwf").unwrap_or_default();
        Some(Capability {
            summary: format!("hwf {}", if hwf.is_empty() { "none" } else { &hwf }),
            detail: serde_json::json!({ "hwf": hwf }),
        })
    },
    note: None,
};

/// The extensions libgcrypt still uses in this process.
fn extensions_left() -> Option<Vec<String>> {
    let hwf = shim()?.fact("hwf")?;
    Some(
        hwf.split(':')
            .filter(|f| EXTENSIONS.iter().any(|e| f.contains(e)))
            .map(str::to_string)
            .collect(),
    )
}

fn check_switch(accel: Accel) -> Result<(), String> {
    if accel != Accel::Sw {
        return Err(format!("gcrypt offers sw only, not {accel}"));
    }
    match extensions_left() {
        Some(left) if left.is_empty() => Ok(()),
        Some(left) => Err(format!(
            "the sw switch is not in effect: libgcrypt still uses {} (GCRYCTL_DISABLE_HWF must \
             come before it initialises; this command is internal)",
            left.join(", ")
        )),
        None => Err("libgcrypt is not built or reports no features".to_string()),
    }
}

pub static BACKEND: Backend = Backend {
    name: "gcrypt",
    description: "system libgcrypt through csrc/gcrypt_shim.c (gcry_mac); handles keyed once, reset per message",
    version,
    availability,
    process_switch: Some(&PROCESS_SWITCH),
    isa_levels: IsaLevels::NotOffered(
        "gcrypt: hw and sw only (GCRYCTL_DISABLE_HWF names features, not levels)",
    ),
    entries: crate::hw_sw_entries![
        HMAC_ALL,
        CMAC_AES,
        "cmac-twofish",
        "cmac-serpent",
        GMAC_AES,
        "poly1305",
        "poly1305-aes",
    ],
    ..Backend::DEFAULT_FACTS
};

crate::c_backend!(
    name: "gcrypt",
    cfg: have_gcrypt,
    table: macbench_shim_gcrypt,
    missing: "MACBENCH_GCRYPT_MISSING",
);

/// `libgcrypt 1.10.1 (hwf intel-cpu:…:intel-aesni:…)`, as the shim describes the library loaded.
pub fn version() -> String {
    super::shim::version(shim(), "libgcrypt", |s| {
        Some(format!(
            "hwf {}",
            s.fact("hwf")
                .filter(|h| !h.is_empty())
                .as_deref()
                .unwrap_or("none")
        ))
    })
}
