//! Botan backend: the system Botan 2 (Debian's libbotan-2-dev) through `csrc/botan_shim.cpp` and the
//! one shim table of `csrc/macbench_shim.h` ([`super::shim`]).
//!
//! Why Botan: `botan speed` is one of `macbench compare`'s reference tools, and a verdict on the
//! harness needs the same library on both sides (docs/methodology.md §7). The shim makes each MAC by
//! the very name `botan speed` takes (`HMAC(SHA-256)`, `CMAC(Twofish)`), keyed once in `create`;
//! per message Botan's own reset does the rest for HMAC, CMAC and CBC-MAC (back in their keyed state
//! after `final`). Botan 2 forgets the key of Poly1305, GMAC and SipHash in `final`, so for those the
//! shim sets the kept key again per message (for GMAC the AES key schedule and GHASH's H count in
//! every message: the library as shipped), and GMAC then takes the message's nonce. Every context streams
//! (`begin`/`update`/`finish`), so `--dispatch stream` times what `botan speed` 2.x times.
//!
//! `hw` only: Botan picks AES-NI, SHA-NI and CLMUL per call from its own CPUID, with no switch a
//! child process could use short of the `BOTAN_CLEAR_CPUID` environment variable, not wired here.
//!
//! Built only with `cfg(have_botan)` (build.rs found the library and compiled the shim); otherwise
//! every entry is listed as unavailable with the reason build.rs recorded.

use super::{Backend, IsaLevels};

pub static BACKEND: Backend = Backend {
    name: "botan",
    description: "system Botan 2 through csrc/botan_shim.cpp; MACs made by botan speed's names, keyed once, reset by Botan per message",
    version,
    availability,
    isa_levels: IsaLevels::NotOffered(
        "botan: only hw (Botan picks its code paths per call from its own CPUID)",
    ),
    entries: crate::hw_entries![
        "hmac-md5",
        "hmac-sha1",
        HMAC_SHA2,
        "hmac-sha512-256",
        HMAC_SHA3,
        CMAC_AES,
        "cmac-twofish",
        "cmac-serpent",
        "cbcmac-aes128",
        GMAC_AES,
        "poly1305",
        "siphash-2-4",
    ],
    ..Backend::DEFAULT_FACTS
};

crate::c_backend!(
    name: "botan",
    cfg: have_botan,
    table: macbench_shim_botan,
    missing: "MACBENCH_BOTAN_MISSING",
);

/// `Botan 2.19.3`, as the shim describes the library loaded.
pub fn version() -> String {
    super::shim::version(shim(), "Botan", |_| None)
}
