//! libsodium backend: the system libsodium (Debian's libsodium-dev), the crypto library of many phone
//! apps, messengers and embedded projects, through `csrc/sodium_shim.c` and the one shim table of
//! `csrc/macbench_shim.h` ([`super::shim`]).
//!
//! Its MACs: HMAC-SHA-256 and HMAC-SHA-512 (`crypto_auth_hmacsha256/512`), Poly1305
//! (`crypto_onetimeauth_poly1305`), keyed BLAKE2b (`crypto_generichash_blake2b`) and SipHash-2-4
//! (`crypto_shorthash_siphash24`). Key setup happens once in the shim's `create`; per message the keyed
//! state is copied and the message run through it (the shim's comment says why). libsodium's
//! `crypto_auth_hmacsha512256` is HMAC-SHA-512 cut to 32 bytes, not HMAC over SHA-512/256, so it is not
//! registered as `hmac-sha512-256`.
//!
//! `hw` only: libsodium picks its BLAKE2b and Poly1305 code (AVX2, SSE4.1, SSSE3 or portable C) once,
//! in `sodium_init`, with no switch to turn them off, and its SHA-2 is portable C everywhere. The
//! version line says which CPU features it detected.
//!
//! Built only with `cfg(have_sodium)` (build.rs found the library and compiled the shim); otherwise
//! every entry is listed as unavailable with the reason build.rs recorded.

use super::{Backend, IsaLevels};

pub static BACKEND: Backend = Backend {
    name: "sodium",
    description:
        "system libsodium through csrc/sodium_shim.c; keyed states made once, copied per message",
    version,
    availability,
    isa_levels: IsaLevels::NotOffered(
        "sodium: only hw (sodium_init picks its code paths once, with no switch)",
    ),
    key_limit,
    entries: crate::hw_entries![
        "hmac-sha256",
        "hmac-sha512",
        "poly1305",
        "blake2b-keyed",
        "siphash-2-4",
    ],
    ..Backend::DEFAULT_FACTS
};

/// libsodium's keyed BLAKE2b (`crypto_generichash`) takes keys of 16 to 64 bytes, not RFC 7693's 1 to
/// 64: a shorter one fails key setup with the library's bare -1, so the registry says it first.
fn key_limit(algorithm: &str) -> Option<super::KeyLimit> {
    (algorithm == "blake2b-keyed").then_some(super::KeyLimit {
        min: 16,
        max: 64,
        max_customization: None,
        source: "libsodium's crypto_generichash_KEYBYTES_MIN and _MAX",
    })
}

crate::c_backend!(
    name: "sodium",
    cfg: have_sodium,
    table: macbench_shim_sodium,
    missing: "MACBENCH_SODIUM_MISSING",
);

/// `libsodium 1.0.18 (cpu +avx2 -avx512f +sse4.1 +ssse3)`, as the shim describes the library loaded.
pub fn version() -> String {
    super::shim::version(shim(), "libsodium", |s| {
        s.fact("cpu").map(|cpu| format!("cpu {cpu}"))
    })
}
