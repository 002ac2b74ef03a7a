//! Nettle backend: the system libnettle (GnuTLS's crypto library; Debian's nettle-dev) through a small C
//! shim, `csrc/nettle_shim.c`: key a context by algorithm name, tag a message (nonce, message → tag), or
//! stream it (begin/update/finish) for the chunked self-test, and free it: the one table of
//! `csrc/macbench_shim.h`, wrapped by [`super::shim`]. The shim puts its statuses in words itself.
//!
//! Key setup happens once in the shim's `create`; per message the shim does only what the library must:
//! - HMAC-MD5/SHA-1/SHA-256/SHA-512: `hmac_*_update` and `hmac_*_digest`. Nettle keeps the hashed
//!   ipad/opad states from `hmac_*_set_key`, and the digest resets the context to the keyed state, so a
//!   message costs `Γ + 1` compressions (docs/methodology.md §6), like OpenSSL.
//! - CMAC-AES128/256: `cmac_aes*_update` and `_digest` (subkeys and AES schedule from key setup; the
//!   digest restarts the chain).
//! - GMAC-AES128: `gcm_aes128_set_iv` with the nonce (which restarts GHASH), `gcm_aes128_update` with the
//!   message as associated data, `gcm_aes128_digest`; the GHASH table is built at key setup.
//! - UMAC-32/64/96/128 (RFC 4418, AES-128): `umacXX_set_nonce` with the 8-byte nonce, `umacXX_update`,
//!   `umacXX_digest`; NH, L2 and L3 keys come from key setup, and the digest computes the pad (one AES
//!   call on the nonce, since setting a nonce drops Nettle's pad cache).
//! - Poly1305-AES (Bernstein's, as Nettle defines it: key = AES key k || r): `poly1305_aes_set_nonce`,
//!   `poly1305_aes_update`, `poly1305_aes_digest` (which encrypts the nonce with k for the pad).
//!
//! No `sw` entries yet: Nettle's fat build picks AES-NI, SHA-NI and PCLMULQDQ code when the library
//! loads and honours `NETTLE_FAT_OVERRIDE`, but nothing here can yet check from inside the process that
//! an override took effect (the [`super::ProcessSwitch`] contract), so the backend registers `hw` only.
//!
//! Built only with `cfg(have_nettle)` (build.rs found the library and compiled the shim); otherwise every
//! entry is listed as unavailable with the reason build.rs recorded.

use super::{Backend, IsaLevels};

/// Why `list` shows this backend's ISA-level rows (`sse` … `avx512`) as unavailable.
pub const NO_ISA_LEVELS: &str =
    "nettle: only hw (its fat build picks its code paths when it loads)";

pub static BACKEND: Backend = Backend {
    name: "nettle",
    description: "system Nettle (libnettle) through csrc/nettle_shim.c; contexts keyed once, nonce set per message where the construction takes one",
    version,
    availability,
    isa_levels: IsaLevels::NotOffered(NO_ISA_LEVELS),
    entries: crate::hw_entries![
        "hmac-md5",
        "hmac-sha1",
        HMAC_SHA2,
        HMAC_SHA512_T,
        "hmac-sha3-224",
        "hmac-sha3-384",
        "hmac-sha3-512",
        CMAC_AES,
        GMAC_AES,
        "umac32-aes128",
        "umac64-aes128",
        "umac96-aes128",
        "umac128-aes128",
        "poly1305-aes",
    ],
    ..Backend::DEFAULT_FACTS
};

crate::c_backend!(
    name: "nettle",
    cfg: have_nettle,
    table: macbench_shim_nettle,
    missing: "MACBENCH_NETTLE_MISSING",
);

/// `Nettle 3.8`: the library loaded at run time, as the shim describes it.
pub fn version() -> String {
    super::shim::version(shim(), "Nettle", |_| None)
}
