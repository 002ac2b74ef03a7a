//! Mbed TLS backend: the system libmbedcrypto 2.28 (Debian's libmbedtls-dev) through a small C shim,
//! `csrc/mbedtls_shim.c`: key an object by algorithm name, tag a message (nonce, message → tag) or
//! stream it (begin/update/finish) for the chunked self-test, and free it: the one table of
//! `csrc/macbench_shim.h`, wrapped by [`super::shim`]. Errors come back as statuses the shim puts in
//! words (its own, and Mbed TLS's through `mbedtls_strerror`).
//!
//! Key setup happens once in the shim's `create`: HMAC's ipad/opad blocks (`mbedtls_md_hmac_starts`), CMAC's
//! AES key schedule and subkeys (`mbedtls_cipher_cmac_starts`), GCM's key schedule and GHASH table
//! (`mbedtls_gcm_setkey`), Poly1305's clamped `r` and `s` (`mbedtls_poly1305_starts`). Per message the
//! shim runs only the documented cheap paths: HMAC and CMAC update, finish and reset; for GMAC
//! `mbedtls_gcm_starts` with the nonce and the message as additional data, then `mbedtls_gcm_finish`;
//! for Poly1305 a copy of the keyed context, update and finish.
//!
//! Mbed TLS 2.28's HMAC keeps the padded key blocks, not the hashed ipad/opad states: `hmac_reset`
//! hashes the ipad block again and `hmac_finish` the opad block, so a message costs `Γ + 3`
//! compressions (docs/methodology.md §6), like Crypto++ and unlike OpenSSL's `Γ + 1`. That is the
//! library as shipped, and what this backend measures.
//!
//! No `sw` variants: Mbed TLS asks CPUID once for AES-NI and PCLMULQDQ and keeps the answer in private
//! statics inside `mbedtls_aesni_has_support`, with no run-time switch (portable code needs a build
//! without `MBEDTLS_AESNI_C`); the registry lists its `sw` rows as unavailable with that reason. Its
//! SHA code is portable C either way.
//!
//! Built only with `cfg(have_mbedtls)` (build.rs found the library); otherwise every entry is listed as
//! unavailable with the reason build.rs recorded.

use super::{Backend, IsaLevels};

/// Why `list` shows this backend's ISA-level rows (`sse` … `avx512`) as unavailable.
pub const NO_ISA_LEVELS: &str =
    "mbedtls: only hw (AES-NI/PCLMULQDQ use is decided once, with no run-time switch)";

pub static BACKEND: Backend = Backend {
    name: "mbedtls",
    description: "system Mbed TLS 2.28 (libmbedcrypto) through csrc/mbedtls_shim.c; contexts keyed once, reset per message",
    version,
    availability,
    isa_levels: IsaLevels::NotOffered(NO_ISA_LEVELS),
    entries: crate::hw_entries![
        "hmac-md5",
        "hmac-sha1",
        HMAC_SHA2,
        CMAC_AES,
        GMAC_AES,
        "poly1305",
    ],
    no_software_only: Some(NO_SOFTWARE_ONLY),
    ..Backend::DEFAULT_FACTS
};

/// Why `list` shows the `sw` rows as unavailable ([`Backend::no_software_only`]).
#[cfg(not(target_arch = "aarch64"))]
pub const NO_SOFTWARE_ONLY: &str = "no run-time switch: Mbed TLS detects AES-NI/PCLMULQDQ once \
     (private statics in mbedtls_aesni_has_support); the portable code needs a library built without \
     MBEDTLS_AESNI_C";
/// On aarch64 there is nothing to switch: 2.28 has no Armv8 code at all (MBEDTLS_AESCE_C came in 3.5).
#[cfg(target_arch = "aarch64")]
pub const NO_SOFTWARE_ONLY: &str = "no separate sw variant: Mbed TLS 2.28 has no Armv8 \
     cryptographic code (its AES extension support, MBEDTLS_AESCE_C, came in 3.5), so the hw rows \
     already run its portable C here";

crate::c_backend!(
    name: "mbedtls",
    cfg: have_mbedtls,
    table: macbench_shim_mbedtls,
    missing: "MACBENCH_MBEDTLS_MISSING",
);

/// `Mbed TLS 2.28.3 (AES-NI yes, PCLMULQDQ yes)`: the run-time library's version and the AES and
/// GHASH paths it picked on this CPU, as the shim describes them.
pub fn version() -> String {
    let Some(shim) = shim() else {
        return "Mbed TLS not built".to_string();
    };
    let version = shim.fact("version").unwrap_or_default();
    match (shim.fact("aesni"), shim.fact("pclmulqdq")) {
        (Some(aes), Some(clmul)) => format!("Mbed TLS {version} (AES-NI {aes}, PCLMULQDQ {clmul})"),
        // 2.28's only accelerated paths are AES-NI and PCLMULQDQ.
        _ => format!(
            "Mbed TLS {version} (portable C: no {} code in 2.28)",
            std::env::consts::ARCH
        ),
    }
}
