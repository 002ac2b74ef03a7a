//! AWS-LC backend: the `aws-lc-rs` crate over `aws-lc-sys` (AWS-LC, BoringSSL's line with its
//! hand-tuned assembly, compiled from source by the crate), rustls' default crypto provider, behind
//! cargo feature `aws-lc`.
//!
//! Through aws-lc-rs's own API, as a rustls or QUIC stack calls it: HMAC (`aws_lc_rs::hmac`: SHA-1,
//! SHA-224, SHA-256, SHA-384, SHA-512; a message starts from a stack copy of the keyed `HMAC_CTX`, whose
//! pad states were hashed at key setup), CMAC-AES (`aws_lc_rs::cmac`; note that aws-lc-rs copies the
//! keyed `CMAC_CTX` into a newly allocated one for every message — `CMAC_CTX_new` + `CMAC_CTX_copy` —
//! which is the crate's cost and is measured as such), and GMAC as AES-GCM with the message as
//! associated data and no plaintext (`aead::LessSafeKey::seal_in_place_separate_tag`; aws-lc-rs's
//! `Nonce` is 96 bits, so only 12-byte IVs: a [`super::NonceLimit`]). Poly1305 is AWS-LC's own
//! `CRYPTO_poly1305_*` (its public `poly1305.h`), called through `aws-lc-sys` since aws-lc-rs offers it
//! only inside ChaCha20-Poly1305.
//!
//! `sw` through the same switch as `openssl`'s: AWS-LC reads `OPENSSL_ia32cap` (x86-64; the same
//! syntax and word layout as OpenSSL's, `~`-masks included) or `OPENSSL_armcap` (aarch64) once, when it
//! sets up its CPU capabilities, so the software-only child's one variable masks it with libcrypto.
//! Its capability words are internal (aws-lc-sys exports them only under a version-prefixed name), so
//! the check asks the public question that depends on them: `EVP_has_aes_hardware()` (AES-NI and
//! PCLMULQDQ on x86-64, the Armv8 AES and PMULL instructions on aarch64) must be 0 in the child. The
//! same word clears SHA-NI and AVX, so a word that took for AES took for those. On a CPU without AES
//! instructions the check passes trivially, and `hw` and `sw` run the same code. No ISA levels.

use super::{
    Accel, Availability, Backend, Capability, IsaLevels, KeyParams, KeyedResult, ProcessSwitch,
};

/// `sw` only: the software-only child's environment (`openssl`'s), checked by AWS-LC's own answer.
pub static PROCESS_SWITCH: ProcessSwitch = ProcessSwitch {
    accels: &[Accel::Sw],
    env: super::openssl::switch_env,
    apply: |_| {},
    check: check_switch,
    capability: || {
        let aes = imp::aes_hardware()?;
        Some(Capability {
            summary: format!(
                "AWS-LC: AES and carry-less multiply instructions {}",
                if aes { "in use" } else { "off" }
            ),
            detail: serde_json::json!({ "evp_has_aes_hardware": aes }),
        })
    },
    note: None,
};

fn check_switch(accel: Accel) -> Result<(), String> {
    if accel != Accel::Sw {
        return Err(format!("aws-lc offers sw only, not {accel}"));
    }
    match imp::aes_hardware() {
        Some(false) => Ok(()),
        Some(true) => Err(format!(
            "the sw mask is not in effect: AWS-LC still uses its AES instructions              (EVP_has_aes_hardware() = 1; {} must be {} in the environment; this command is internal)",
            super::openssl::CAP_ENV,
            super::openssl::switch_env(accel)
                .first()
                .map_or(String::new(), |(_, v)| v.clone())
        )),
        None => Err("AWS-LC is not built".to_string()),
    }
}

pub static BACKEND: Backend = Backend {
    name: "aws-lc",
    description: "AWS-LC through the aws-lc-rs crate (hmac, cmac, AES-GCM as GMAC) and aws-lc-sys (CRYPTO_poly1305); keys made once",
    version,
    availability,
    process_switch: Some(&PROCESS_SWITCH),
    isa_levels: IsaLevels::NotOffered(
        "aws-lc: hw and sw only (its capability word is internal, so a level's own extension could not be checked)",
    ),
    nonce_limit,
    entries: crate::hw_sw_entries![
        "hmac-sha1",
        HMAC_SHA2,
        CMAC_AES,
        GMAC_AES,
        "poly1305",
    ],
    ..Backend::DEFAULT_FACTS
};

/// Whether the `aws-lc` feature compiled the crates in.
pub const BUILT: bool = cfg!(feature = "aws-lc");

fn availability() -> Availability {
    super::built_or(
        BUILT,
        "not built: the `aws-lc` cargo feature is off (build with --features aws-lc; it compiles AWS-LC from source)",
    )
}

/// aws-lc-rs's `aead::Nonce` is 96 bits: GMAC takes 12-byte IVs only here.
fn nonce_limit(algorithm: &str) -> Option<super::NonceLimit> {
    algorithm.starts_with("gmac-").then_some(super::NonceLimit {
        min: 12,
        max: 12,
        source: "aws-lc-rs's aead::Nonce is 96 bits",
    })
}

/// `AWS-LC 5.12.0 (aws-lc-rs 1.19.0, aws-lc-sys 0.47.0)`: the library's own version text and the
/// crates Cargo.lock pins.
fn version() -> String {
    if !BUILT {
        return "AWS-LC not built".to_string();
    }
    let crates = format!(
        "aws-lc-rs {}, aws-lc-sys {}",
        super::locked::version("aws-lc-rs").unwrap_or("?"),
        super::locked::version("aws-lc-sys").unwrap_or("?")
    );
    format!("{} ({crates})", imp::library_version())
}

#[cfg(feature = "aws-lc")]
fn backend_error(algorithm: &'static str, reason: impl ToString) -> super::MacError {
    super::MacError::Backend {
        backend: "aws-lc",
        algorithm,
        reason: reason.to_string(),
    }
}

#[cfg(not(feature = "aws-lc"))]
fn new(algorithm: &'static str, _: &[u8], _: KeyParams<'_>) -> KeyedResult {
    Err(super::not_built("aws-lc", availability, algorithm))
}

#[cfg(not(feature = "aws-lc"))]
mod imp {
    pub fn library_version() -> String {
        "AWS-LC not built".to_string()
    }

    pub fn aes_hardware() -> Option<bool> {
        None
    }
}

#[cfg(feature = "aws-lc")]
fn new(algorithm: &'static str, key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    use aws_lc_rs::{aead, cmac, hmac};
    let refused = |e: aws_lc_rs::error::Unspecified| backend_error(algorithm, e);
    Ok(match algorithm {
        "hmac-sha1" => imp::hmac(hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, key),
        "hmac-sha224" => imp::hmac(hmac::HMAC_SHA224, key),
        "hmac-sha256" => imp::hmac(hmac::HMAC_SHA256, key),
        "hmac-sha384" => imp::hmac(hmac::HMAC_SHA384, key),
        "hmac-sha512" => imp::hmac(hmac::HMAC_SHA512, key),
        "cmac-aes128" => imp::cmac(cmac::AES_128, key).map_err(refused)?,
        "cmac-aes192" => imp::cmac(cmac::AES_192, key).map_err(refused)?,
        "cmac-aes256" => imp::cmac(cmac::AES_256, key).map_err(refused)?,
        "gmac-aes128" => imp::gmac(&aead::AES_128_GCM, key).map_err(refused)?,
        "gmac-aes192" => imp::gmac(&aead::AES_192_GCM, key).map_err(refused)?,
        "gmac-aes256" => imp::gmac(&aead::AES_256_GCM, key).map_err(refused)?,
        "poly1305" => imp::poly1305(key)
            .ok_or_else(|| backend_error(algorithm, "Poly1305 takes a 32-byte key (r || s)"))?,
        _ => return Err(backend_error(algorithm, "not offered by this backend")),
    })
}

#[cfg(feature = "aws-lc")]
mod imp {
    use super::super::{KeyedMac, Refused, TagResult};
    use aws_lc_rs::{aead, cmac, error::Unspecified, hmac};

    /// `OpenSSL_version(OPENSSL_VERSION)`: "OpenSSL 1.1.1 (compatible; AWS-LC 5.12.0)" → "AWS-LC 5.12.0".
    pub fn library_version() -> String {
        // SAFETY: OpenSSL_version returns a pointer to a static NUL-terminated string (or NULL).
        let text = unsafe {
            let p = aws_lc_sys::OpenSSL_version(aws_lc_sys::OPENSSL_VERSION as _);
            if p.is_null() {
                return "AWS-LC (no version text)".to_string();
            }
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        };
        match text.split_once("AWS-LC ") {
            Some((_, rest)) => format!("AWS-LC {}", rest.trim_end_matches(')')),
            None => text,
        }
    }

    /// `EVP_has_aes_hardware()`: whether AWS-LC runs its AES and GHASH/PMULL instructions in this
    /// process (after any `OPENSSL_ia32cap` / `OPENSSL_armcap` mask it read).
    pub fn aes_hardware() -> Option<bool> {
        // SAFETY: a plain query of AWS-LC's capability words, no arguments; AWS-LC sets the words up
        // before answering.
        Some(unsafe { aws_lc_sys::EVP_has_aes_hardware() } != 0)
    }

    struct Hmac(hmac::Key);

    pub fn hmac(algorithm: hmac::Algorithm, key: &[u8]) -> Box<dyn KeyedMac> {
        Box::new(Hmac(hmac::Key::new(algorithm, key)))
    }

    crate::ring_api_hmac!(Hmac, hmac);

    struct Cmac(cmac::Key);

    pub fn cmac(algorithm: cmac::Algorithm, key: &[u8]) -> Result<Box<dyn KeyedMac>, Unspecified> {
        Ok(Box::new(Cmac(cmac::Key::new(algorithm, key)?)))
    }

    fn refused(len: usize, what: &str) -> Refused {
        Refused::message(len, format!("aws-lc-rs refused {what}"))
    }

    impl KeyedMac for Cmac {
        #[inline]
        fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
            let full = cmac::sign(&self.0, msg).map_err(|_| refused(msg.len(), "CMAC"))?;
            tag.copy_from_slice(&full.as_ref()[..tag.len()]);
            Ok(())
        }

        fn tag_chunks(&mut self, _nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
            let len = chunks.iter().map(|c| c.len()).sum();
            let mut context = cmac::Context::with_key(&self.0);
            for chunk in chunks {
                context.update(chunk).map_err(|_| refused(len, "CMAC"))?;
            }
            let full = context.sign().map_err(|_| refused(len, "CMAC"))?;
            tag.copy_from_slice(&full.as_ref()[..tag.len()]);
            Ok(())
        }

        fn streams(&self) -> bool {
            true
        }
    }

    /// AES-GCM with the message as associated data and nothing to encrypt: GMAC (SP 800-38D).
    struct Gmac(aead::LessSafeKey);

    pub fn gmac(
        algorithm: &'static aead::Algorithm,
        key: &[u8],
    ) -> Result<Box<dyn KeyedMac>, Unspecified> {
        let key = aead::LessSafeKey::new(aead::UnboundKey::new(algorithm, key)?);
        Ok(Box::new(Gmac(key)))
    }

    impl KeyedMac for Gmac {
        #[inline]
        fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
            let nonce = aead::Nonce::try_assume_unique_for_key(nonce)
                .map_err(|_| refused(msg.len(), "an IV other than 12 bytes"))?;
            let full = self
                .0
                .seal_in_place_separate_tag(nonce, aead::Aad::from(msg), &mut [])
                .map_err(|_| refused(msg.len(), "GCM"))?;
            tag.copy_from_slice(&full.as_ref()[..tag.len()]);
            Ok(())
        }
    }

    /// A `poly1305_state` at a 64-byte boundary. AWS-LC aligns its working state inside the opaque
    /// 512-byte buffer by the buffer's address, so a keyed state copied to a buffer of another
    /// alignment is read at another offset and gives wrong tags (the self-test caught it); two
    /// buffers both at 64-byte boundaries keep the same offset, and the copy is exact.
    #[repr(C, align(64))]
    #[derive(Clone, Copy)]
    struct State(aws_lc_sys::poly1305_state);

    /// AWS-LC's Poly1305: the keyed state (clamped r, s) made once and copied per message, as
    /// libsodium's is in its shim.
    struct Poly1305 {
        keyed: Box<State>,
        work: Box<State>,
    }

    pub fn poly1305(key: &[u8]) -> Option<Box<dyn KeyedMac>> {
        if key.len() != 32 {
            return None;
        }
        let mut keyed = Box::new(State(
            [0u8; std::mem::size_of::<aws_lc_sys::poly1305_state>()],
        ));
        // SAFETY: keyed.0 is a whole poly1305_state; key holds the 32 bytes CRYPTO_poly1305_init reads.
        unsafe { aws_lc_sys::CRYPTO_poly1305_init(&mut keyed.0, key.as_ptr()) };
        Some(Box::new(Poly1305 {
            work: keyed.clone(),
            keyed,
        }))
    }

    impl Poly1305 {
        fn run(&mut self, _nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
            let mut full = [0u8; 16];
            *self.work = *self.keyed;
            for chunk in chunks {
                // SAFETY: work is a keyed poly1305_state at the keyed one's alignment; chunk is
                // chunk.len() readable bytes.
                unsafe {
                    aws_lc_sys::CRYPTO_poly1305_update(
                        &mut self.work.0,
                        chunk.as_ptr(),
                        chunk.len(),
                    )
                };
            }
            // SAFETY: as above; full has the 16 bytes finish writes.
            unsafe { aws_lc_sys::CRYPTO_poly1305_finish(&mut self.work.0, full.as_mut_ptr()) };
            tag.copy_from_slice(&full[..tag.len()]);
            Ok(())
        }
    }

    crate::keyed_by_pieces!(Poly1305, run);
}
