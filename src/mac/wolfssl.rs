//! wolfSSL backend: the system wolfSSL (Debian's libwolfssl-dev), the embedded TLS library, through
//! `csrc/wolfssl_shim.c` and the one shim table of `csrc/macbench_shim.h` ([`super::shim`]).
//!
//! Its MACs, all wolfCrypt's: HMAC over MD5, SHA-1, SHA-2 and SHA-3 (wolfSSL 5.5 has no HMAC over
//! SHA-512/224 or /256), CMAC-AES, GMAC-AES and Poly1305. Key setup happens once in the shim's
//! `create`. wolfCrypt's HMAC keeps the padded key rather than the hashed pad states, so each message
//! hashes the ipad and opad blocks again (`Γ + 3` compressions: docs/methodology.md §6); that is the
//! library's own cost and is what a wolfSSL user pays, so it is measured as such.
//!
//! `hw` only, and `hw` is portable C here: Debian builds wolfSSL without `--enable-intelasm` or
//! `--enable-aesni`, so the library holds no AES-NI, PCLMULQDQ, SHA-NI or AVX instruction and has no
//! code path to switch (wolfSSL's `cpuid_select_flags` only matters to an Intel-assembly build). The
//! version line says which code the build runs.
//!
//! Built only with `cfg(have_wolfssl)` (build.rs found the library and compiled the shim); otherwise
//! every entry is listed as unavailable with the reason build.rs recorded.

use super::{Backend, IsaLevels};

pub static BACKEND: Backend = Backend {
    name: "wolfssl",
    description: "system wolfSSL (wolfCrypt) through csrc/wolfssl_shim.c; contexts keyed once, keyed CMAC and Poly1305 states copied per message",
    version,
    availability,
    isa_levels: IsaLevels::NotOffered(
        "wolfssl: only hw (Debian's build is portable C, with no Intel assembly to switch)",
    ),
    entries: crate::hw_entries![
        "hmac-md5",
        "hmac-sha1",
        HMAC_SHA2,
        HMAC_SHA3,
        CMAC_AES,
        GMAC_AES,
        "poly1305",
    ],
    ..Backend::DEFAULT_FACTS
};

crate::c_backend!(
    name: "wolfssl",
    cfg: have_wolfssl,
    table: macbench_shim_wolfssl,
    missing: "MACBENCH_WOLFSSL_MISSING",
);

/// `wolfSSL 5.5.4 (portable-c)`, as the shim describes the library loaded.
pub fn version() -> String {
    super::shim::version(shim(), "wolfSSL", |s| s.fact("code"))
}
