//! ring backend: the `ring` crate (BoringSSL's assembly under a Rust API), one of rustls' two crypto
//! providers, behind cargo feature `ring`.
//!
//! ring offers HMAC as a MAC (`ring::hmac`: SHA-1, SHA-256, SHA-384, SHA-512) and nothing else: its
//! Poly1305 and GHASH exist only inside its AEADs (ChaCha20-Poly1305, AES-GCM), with no API for the
//! MAC alone, so GMAC and Poly1305 are not registered. `hmac::Key::new` hashes the ipad and opad
//! blocks once; `hmac::sign` starts each message from copies of those states (`Γ + 1` compressions,
//! docs/methodology.md §6), and `hmac::Context` streams.
//!
//! `hw` only: ring detects CPU features once with CPUID (aarch64: the auxiliary vector) and reads no
//! environment variable or other switch (ring 0.17 dropped BoringSSL's `OPENSSL_ia32cap` handling),
//! so there is no software-only ring to run.

use super::{Availability, Backend, IsaLevels, KeyParams, KeyedResult};

pub static BACKEND: Backend = Backend {
    name: "ring",
    description:
        "the ring crate (ring::hmac); keys made once, each message signed from the keyed pad states",
    version,
    availability,
    isa_levels: IsaLevels::NotOffered(
        "ring: only hw (it detects CPU features once and reads no switch)",
    ),
    entries: crate::hw_entries!["hmac-sha1", "hmac-sha256", "hmac-sha384", "hmac-sha512"],
    ..Backend::DEFAULT_FACTS
};

/// Whether the `ring` feature compiled the crate in.
pub const BUILT: bool = cfg!(feature = "ring");

fn availability() -> Availability {
    super::built_or(
        BUILT,
        "not built: the `ring` cargo feature is off (build with --features ring)",
    )
}

/// `ring 0.17.14`: the version Cargo.lock pins.
fn version() -> String {
    match (BUILT, super::locked::version("ring")) {
        (true, Some(v)) => format!("ring {v}"),
        (true, None) => "ring (version not in Cargo.lock)".to_string(),
        (false, _) => "ring not built".to_string(),
    }
}

#[cfg(feature = "ring")]
fn new(algorithm: &'static str, key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    use super::MacError;
    use ring::hmac;
    let which = match algorithm {
        "hmac-sha1" => hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
        "hmac-sha256" => hmac::HMAC_SHA256,
        "hmac-sha384" => hmac::HMAC_SHA384,
        "hmac-sha512" => hmac::HMAC_SHA512,
        _ => {
            return Err(MacError::Backend {
                backend: "ring",
                algorithm,
                reason: "not offered by ring".to_string(),
            })
        }
    };
    Ok(Box::new(RingHmac(hmac::Key::new(which, key))))
}

#[cfg(not(feature = "ring"))]
fn new(algorithm: &'static str, _: &[u8], _: KeyParams<'_>) -> KeyedResult {
    Err(super::not_built("ring", availability, algorithm))
}

/// A ring HMAC key: the hashed pad states, copied into each message's context by ring itself.
#[cfg(feature = "ring")]
struct RingHmac(ring::hmac::Key);

#[cfg(feature = "ring")]
crate::ring_api_hmac!(RingHmac, ring::hmac);
