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
//! `hw` only: libgcrypt chooses its code paths from its hardware-feature detection when it initialises.
//! It has a switch (`GCRYCTL_DISABLE_HWF`, or `/etc/gcrypt/hwf.deny`), but one that must be set before
//! the library initialises in a process and cannot be undone; a `sw` variant would be a
//! [`super::ProcessSwitch`] whose `apply` calls it in the child before anything else touches
//! libgcrypt. Not done yet; the version line says which features libgcrypt uses.
//!
//! Built only with `cfg(have_gcrypt)` (build.rs found the library and compiled the shim); otherwise
//! every entry is listed as unavailable with the reason build.rs recorded.

use super::{Availability, Backend, IsaLevels, KeyParams, KeyedMac, MacError};

pub static BACKEND: Backend = Backend {
    name: "gcrypt",
    description: "system libgcrypt through csrc/gcrypt_shim.c (gcry_mac); handles keyed once, reset per message",
    version,
    availability,
    process_switch: None,
    isa_levels: IsaLevels::NotOffered(
        "gcrypt: only hw (libgcrypt fixes its code paths when it initialises); ISA levels are offered by ipsecmb, openssl and cryptopp",
    ),
    length_limit: super::no_length_limit,
    nonce_limit: super::no_nonce_limit,
    key_limit: super::no_key_limit,
    entries: crate::hw_entries![
        "hmac-md5",
        "hmac-sha1",
        "hmac-sha224",
        "hmac-sha256",
        "hmac-sha384",
        "hmac-sha512",
        "hmac-sha512-224",
        "hmac-sha512-256",
        "hmac-sha3-224",
        "hmac-sha3-256",
        "hmac-sha3-384",
        "hmac-sha3-512",
        "cmac-aes128",
        "cmac-aes192",
        "cmac-aes256",
        "cmac-twofish",
        "cmac-serpent",
        "gmac-aes128",
        "gmac-aes192",
        "gmac-aes256",
        "poly1305",
        "poly1305-aes",
    ],
};

/// Whether the shim was compiled and linked into this binary.
pub const BUILT: bool = cfg!(have_gcrypt);

crate::c_shim!(have_gcrypt, macbench_shim_gcrypt);

fn availability() -> Availability {
    super::shim::availability(
        BUILT,
        option_env!("MACBENCH_GCRYPT_MISSING"),
        "libgcrypt20-dev",
        "libgcrypt",
    )
}

/// `libgcrypt 1.10.1 (hwf intel-cpu:…:intel-aesni:…)`, as the shim describes the library loaded.
pub fn version() -> String {
    let Some(shim) = shim() else {
        return "libgcrypt not built".to_string();
    };
    let version = shim.fact("version").unwrap_or_default();
    match shim.fact("hwf") {
        Some(hwf) if !hwf.is_empty() => format!("{version} (hwf {hwf})"),
        _ => format!("{version} (hwf none)"),
    }
}

fn new(
    algorithm: &'static str,
    key: &[u8],
    _: KeyParams<'_>,
) -> Result<Box<dyn KeyedMac>, MacError> {
    super::shim::keyed(shim(), "gcrypt", availability, algorithm, key)
}
