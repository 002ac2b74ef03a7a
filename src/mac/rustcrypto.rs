//! RustCrypto backend: pure-Rust crates, with the CPU-feature dispatch those crates do themselves
//! (AES-NI/VAES in `aes`, SHA-NI in `sha2`, AVX2 in `blake3`, CLMUL in `ghash`/`polyval`).
//!
//! Most MACs here follow the `digest::Mac` shape, so one generic wrapper ([`Template`]) serves them: the
//! keyed state is built once and cloned per message (a copy of a few hundred bytes, no allocation), which is
//! how the HMAC ipad/opad states and the CMAC subkeys are precomputed once. The others are one-shot APIs.

use super::{
    Accel, Availability, Backend, Entry, IsaLevels, KeyParams, KeyedMac, KeyedResult, MacError,
    Refused, TagResult,
};
use aes_gcm::aead::AeadInOut;
use digest::{KeyInit, Mac};

/// Why `list` shows this backend's ISA-level rows (`sse` … `avx512`) as unavailable.
pub const NO_ISA_LEVELS: &str =
    "rustcrypto: only hw (the crates pick their code paths through `cpufeatures`)";

/// Why `list` shows the `sw` rows as unavailable ([`Backend::no_software_only`]).
#[cfg(not(target_arch = "aarch64"))]
pub const NO_SOFTWARE_ONLY: &str =
    "no run-time switch: RustCrypto picks AES-NI/SHA-NI/CLMUL via `cpufeatures`; the portable code \
     needs a rebuild (RUSTFLAGS --cfg aes_backend=\"soft\" …; see docs/backends.md)";
/// Why `list` shows the `sw` rows as unavailable ([`Backend::no_software_only`]).
#[cfg(target_arch = "aarch64")]
pub const NO_SOFTWARE_ONLY: &str =
    "no run-time switch: RustCrypto picks the Armv8 AES/PMULL/SHA-2 instructions via `cpufeatures`; \
     the portable code needs a rebuild (RUSTFLAGS --cfg aes_backend=\"soft\" …; see docs/backends.md)";

pub static BACKEND: Backend = Backend {
    name: "rustcrypto",
    description: "RustCrypto crates (hmac, cmac, cbc-mac, aes-gcm, poly1305, blake2, blake3, siphasher), KMAC per SP 800-185 over the keccak crate, AES-XCBC over the aes crate",
    version,
    availability: || Availability::Available,
    isa_levels: IsaLevels::NotOffered(NO_ISA_LEVELS),
    nonce_limit,
    entries: &[
        hw("hmac-md5", template::<hmac::Hmac<md5::Md5>>),
        hw("hmac-sha1", template::<hmac::Hmac<sha1::Sha1>>),
        hw("hmac-sha224", template::<hmac::Hmac<sha2::Sha224>>),
        hw("hmac-sha256", template::<hmac::Hmac<sha2::Sha256>>),
        hw("hmac-sha384", template::<hmac::Hmac<sha2::Sha384>>),
        hw("hmac-sha512", template::<hmac::Hmac<sha2::Sha512>>),
        hw("hmac-sha512-224", template::<hmac::Hmac<sha2::Sha512_224>>),
        hw("hmac-sha512-256", template::<hmac::Hmac<sha2::Sha512_256>>),
        // SHA-3 exposes no block-level core, so HMAC over it is `SimpleHmac`: the ipad state is still
        // precomputed, but the opad block is hashed again for every message (one extra permutation).
        hw("hmac-sha3-224", template::<hmac::SimpleHmac<sha3::Sha3_224>>),
        hw("hmac-sha3-256", template::<hmac::SimpleHmac<sha3::Sha3_256>>),
        hw("hmac-sha3-384", template::<hmac::SimpleHmac<sha3::Sha3_384>>),
        hw("hmac-sha3-512", template::<hmac::SimpleHmac<sha3::Sha3_512>>),
        hw("cmac-aes128", resetting::<cmac::Cmac<aes::Aes128>>),
        hw("cmac-aes192", resetting::<cmac::Cmac<aes::Aes192>>),
        hw("cmac-aes256", resetting::<cmac::Cmac<aes::Aes256>>),
        hw("cmac-twofish", resetting::<cmac::Cmac<twofish::Twofish>>),
        hw("cmac-serpent", resetting::<cmac::Cmac<serpent::Serpent>>),
        hw("cmac-rc6", resetting::<cmac::Cmac<rc6::RC6_32_20_16>>),
        hw("cbcmac-aes128", cbcmac_aes128),
        hw("xcbc-aes128", xcbc_aes128),
        hw("xcbc-aes128-96", xcbc_aes128),
        hw("gmac-aes128", |k, _| gmac::<aes_gcm::Aes128Gcm>("gmac-aes128", k)),
        hw("gmac-aes192", |k, _| gmac::<Aes192Gcm>("gmac-aes192", k)),
        hw("gmac-aes256", |k, _| gmac::<aes_gcm::Aes256Gcm>("gmac-aes256", k)),
        hw("poly1305", poly1305_new),
        hw("kmac128", |k, p| kmac(k, p, false)),
        hw("kmac256", |k, p| kmac(k, p, true)),
        hw("blake2b-keyed", template::<blake2::Blake2bMac512>),
        hw("blake2s-keyed", template::<blake2::Blake2sMac256>),
        hw("blake3-keyed", blake3_new),
        hw("siphash-2-4", siphash_new),
    ],
    no_software_only: Some(NO_SOFTWARE_ONLY),
    ..Backend::DEFAULT_FACTS
};

const fn hw(algorithm: &'static str, new: super::KeyFn) -> Entry {
    Entry {
        algorithm,
        accel: Accel::Hw,
        new,
    }
}

fn version() -> String {
    // Cargo resolves these at build time; build.rs is not worth it for a version string.
    "hmac 0.13, cmac 0.8, aes 0.9, aes-gcm 0.11, poly1305 0.9, blake2 0.11, blake3 1, siphasher 1, keccak 0.2 (KMAC)"
        .to_string()
}

fn backend_error(algorithm: &'static str, reason: impl ToString) -> MacError {
    MacError::Backend {
        backend: "rustcrypto",
        algorithm,
        reason: reason.to_string(),
    }
}

/// A stream fed or finished before `stream_begin`: a caller's error, refused rather than tagged.
fn not_begun() -> Refused {
    Refused {
        what: "a stream".to_string(),
        reason: "no stream begun".to_string(),
    }
}

/// A keyed `digest::Mac` state cloned per message.
struct Template<M> {
    keyed: M,
    /// The message begun by `stream_begin` (`--dispatch stream`), a clone of `keyed`.
    open: Option<M>,
}

/// RustCrypto's GMAC here is `aes_gcm::AesGcm<_, U12>`: the crate is generic over the nonce size,
/// but each size is a type of its own, so this backend registers the 96-bit IV that IPsec and TLS use;
/// other IV lengths go to the C backends ([`super::NonceLimit`]).
fn nonce_limit(algorithm: &str) -> Option<super::NonceLimit> {
    algorithm.starts_with("gmac-").then_some(super::NonceLimit {
        min: 12,
        max: 12,
        source: "RustCrypto's aes-gcm types are registered for 96-bit IVs only here",
    })
}

fn template<M>(key: &[u8], _: KeyParams<'_>) -> KeyedResult
where
    M: Mac + KeyInit + Clone + Send + 'static,
{
    let keyed = <M as KeyInit>::new_from_slice(key).map_err(|e| backend_error("mac", e))?;
    Ok(Box::new(Template { keyed, open: None }))
}

impl<M: Mac + Clone + Send> KeyedMac for Template<M> {
    #[inline]
    fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        let mut mac = self.keyed.clone();
        mac.update(msg);
        tag.copy_from_slice(&mac.finalize().into_bytes()[..tag.len()]);
        Ok(())
    }

    fn tag_chunks(&mut self, _nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        let mut mac = self.keyed.clone();
        for chunk in chunks {
            mac.update(chunk);
        }
        tag.copy_from_slice(&mac.finalize().into_bytes()[..tag.len()]);
        Ok(())
    }

    fn streams(&self) -> bool {
        true
    }

    fn stream_begin(&mut self, _nonce: &[u8]) -> TagResult {
        self.open = Some(self.keyed.clone());
        Ok(())
    }

    fn stream_update(&mut self, chunks: &[&[u8]]) -> TagResult {
        let mac = self.open.as_mut().ok_or_else(not_begun)?;
        for chunk in chunks {
            mac.update(chunk);
        }
        Ok(())
    }

    fn stream_finish(&mut self, tag: &mut [u8]) -> TagResult {
        let mac = self.open.take().ok_or_else(not_begun)?;
        tag.copy_from_slice(&mac.finalize().into_bytes()[..tag.len()]);
        Ok(())
    }
}

/// A keyed `digest::Mac` reset after each message; the reset keeps key-derived state (CMAC subkeys,
/// cipher schedule), so nothing key-dependent is recomputed and the schedule is not copied.
struct Resetting<M> {
    keyed: M,
}

fn resetting<M>(key: &[u8], _: KeyParams<'_>) -> KeyedResult
where
    M: Mac + KeyInit + digest::FixedOutputReset + Send + 'static,
{
    let keyed = <M as KeyInit>::new_from_slice(key).map_err(|e| backend_error("mac", e))?;
    Ok(Box::new(Resetting { keyed }))
}

impl<M: Mac + digest::FixedOutputReset + Send> KeyedMac for Resetting<M> {
    #[inline]
    fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        Mac::update(&mut self.keyed, msg);
        tag.copy_from_slice(&Mac::finalize_reset(&mut self.keyed).into_bytes()[..tag.len()]);
        Ok(())
    }

    fn tag_chunks(&mut self, _nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        for chunk in chunks {
            Mac::update(&mut self.keyed, chunk);
        }
        tag.copy_from_slice(&Mac::finalize_reset(&mut self.keyed).into_bytes()[..tag.len()]);
        Ok(())
    }

    fn streams(&self) -> bool {
        true
    }

    /// The keyed state is always at a message's start (every path ends in `finalize_reset`).
    fn stream_begin(&mut self, _nonce: &[u8]) -> TagResult {
        Ok(())
    }

    fn stream_update(&mut self, chunks: &[&[u8]]) -> TagResult {
        for chunk in chunks {
            Mac::update(&mut self.keyed, chunk);
        }
        Ok(())
    }

    fn stream_finish(&mut self, tag: &mut [u8]) -> TagResult {
        tag.copy_from_slice(&Mac::finalize_reset(&mut self.keyed).into_bytes()[..tag.len()]);
        Ok(())
    }
}

/// CBC-MAC over AES-128 as macbench defines it: zero IV, final partial block zero-padded, and at least
/// one block, so the empty message is tagged as one all-zero block (as OpenSSL's and Crypto++'s are).
/// The `cbc-mac` crate processes no block at all for the empty message and returns the zero IV as the
/// tag, so the empty message is fed here as that zero block.
struct CbcMacAes128 {
    keyed: Resetting<cbc_mac::CbcMac<aes::Aes128>>,
}

const ZERO_BLOCK: [u8; 16] = [0; 16];

fn cbcmac_aes128(key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    let keyed = <cbc_mac::CbcMac<aes::Aes128> as KeyInit>::new_from_slice(key)
        .map_err(|e| backend_error("cbcmac-aes128", e))?;
    Ok(Box::new(CbcMacAes128 {
        keyed: Resetting { keyed },
    }))
}

impl KeyedMac for CbcMacAes128 {
    #[inline]
    fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        let msg = if msg.is_empty() { &ZERO_BLOCK[..] } else { msg };
        self.keyed.tag_into(nonce, msg, tag)
    }

    fn tag_chunks(&mut self, nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        if chunks.iter().all(|c| c.is_empty()) {
            self.keyed.tag_into(nonce, &ZERO_BLOCK, tag)
        } else {
            self.keyed.tag_chunks(nonce, chunks, tag)
        }
    }

    fn streams(&self) -> bool {
        true
    }
}

/// AES-XCBC-MAC (RFC 3566 §2): no RustCrypto crate implements it, so it is written out here over the
/// `aes` crate's block cipher. Key setup derives K1 = E(K, 0x01…), K2 = E(K, 0x02…), K3 = E(K, 0x03…)
/// and keys AES with K1 once; per message CBC over all blocks but the last, whose input is xored with
/// K2 when it is whole (and the message not empty) or padded with 0x80 0x00… and xored with K3. The
/// `-96` variant is the same MAC with the tag buffer cut to 12 bytes.
struct XcbcAes128 {
    k1: aes::Aes128,
    k2: [u8; 16],
    k3: [u8; 16],
}

fn xcbc_aes128(key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    use aes::cipher::BlockCipherEncrypt;
    let k = aes::Aes128::new_from_slice(key).map_err(|e| backend_error("xcbc-aes128", e))?;
    let derive = |byte: u8| -> [u8; 16] {
        let mut block = aes::Block::from([byte; 16]);
        k.encrypt_block(&mut block);
        block.into()
    };
    let k1 =
        aes::Aes128::new_from_slice(&derive(1)).map_err(|e| backend_error("xcbc-aes128", e))?;
    Ok(Box::new(XcbcAes128 {
        k1,
        k2: derive(2),
        k3: derive(3),
    }))
}

impl KeyedMac for XcbcAes128 {
    #[inline]
    fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        use aes::cipher::BlockCipherEncrypt;
        // The last block is the final whole one when the length is a non-zero multiple of 16.
        let whole = !msg.is_empty() && msg.len() % 16 == 0;
        let body = if whole {
            msg.len() - 16
        } else {
            msg.len() - msg.len() % 16
        };
        let mut state = aes::Block::default();
        for chunk in msg[..body].chunks_exact(16) {
            for (s, m) in state.iter_mut().zip(chunk) {
                *s ^= m;
            }
            self.k1.encrypt_block(&mut state);
        }
        let mut last = [0u8; 16];
        let tail = &msg[body..];
        last[..tail.len()].copy_from_slice(tail);
        let pad_key = if whole {
            &self.k2
        } else {
            last[tail.len()] = 0x80;
            &self.k3
        };
        for ((s, m), k) in state.iter_mut().zip(&last).zip(pad_key) {
            *s ^= m ^ k;
        }
        self.k1.encrypt_block(&mut state);
        let n = tag.len().min(16);
        tag[..n].copy_from_slice(&state[..n]);
        Ok(())
    }
}

/// GMAC: AES-GCM with the message as associated data and an empty plaintext (SP 800-38D §3), over
/// one of the crate's AES-GCM types (96-bit nonce).
struct Gmac<C> {
    cipher: C,
}

/// AES-192-GCM, which `aes-gcm` names no alias for.
type Aes192Gcm = aes_gcm::AesGcm<aes::Aes192, aes_gcm::aead::consts::U12>;

fn gmac<C>(algorithm: &'static str, key: &[u8]) -> KeyedResult
where
    C: AeadInOut<NonceSize = aes_gcm::aead::consts::U12> + aes_gcm::KeyInit + Send + 'static,
{
    let cipher = C::new_from_slice(key).map_err(|e| backend_error(algorithm, e))?;
    Ok(Box::new(Gmac { cipher }))
}

impl<C> KeyedMac for Gmac<C>
where
    C: AeadInOut<NonceSize = aes_gcm::aead::consts::U12> + Send,
{
    #[inline]
    fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        let Ok(nonce) = <&aes_gcm::Nonce<_>>::try_from(nonce) else {
            return Err(Refused::message(
                msg.len(),
                format!("aes-gcm takes a 12-byte nonce; got {} bytes", nonce.len()),
            ));
        };
        let empty: &mut [u8] = &mut [];
        let t = self
            .cipher
            .encrypt_inout_detached(nonce, msg, empty.into())
            .map_err(|e| Refused::message(msg.len(), format!("aes-gcm: {e}")))?;
        tag.copy_from_slice(&t[..tag.len()]);
        Ok(())
    }
}

/// Poly1305: the crate's state is keyed once and cloned per message (one-time key reused for benchmarking).
struct Poly1305Mac {
    keyed: poly1305::Poly1305,
}

fn poly1305_new(key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    let keyed = <poly1305::Poly1305 as poly1305::universal_hash::KeyInit>::new_from_slice(key)
        .map_err(|e| backend_error("poly1305", e))?;
    Ok(Box::new(Poly1305Mac { keyed }))
}

impl KeyedMac for Poly1305Mac {
    #[inline]
    fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        let t = self.keyed.clone().compute_unpadded(msg);
        tag.copy_from_slice(&t[..tag.len()]);
        Ok(())
    }
}

/// KMAC as SP 800-185 writes it ([`super::kmac`]; tiny-keccak's got rate-multiple prefixes wrong):
/// the keyed sponge is cloned per message.
enum Kmac {
    V128(super::kmac::Kmac128),
    V256(super::kmac::Kmac256),
}

fn kmac(key: &[u8], params: KeyParams<'_>, wide: bool) -> KeyedResult {
    let default = if wide { 64 } else { 32 };
    // Output length L of the construction. KMAC binds L into its input, so a shorter tag must be the
    // truncation of the full-length output, not KMAC computed with a smaller L.
    let tag_len = params.output_len.unwrap_or(default);
    if !(1..=super::MAX_TAG_LEN).contains(&tag_len) {
        return Err(backend_error(
            if wide { "kmac256" } else { "kmac128" },
            format!(
                "output length {tag_len} bytes; give 1 to {}",
                super::MAX_TAG_LEN
            ),
        ));
    }
    Ok(Box::new(if wide {
        Kmac::V256(super::kmac::Kmac256::new(
            key,
            params.customization,
            tag_len,
        ))
    } else {
        Kmac::V128(super::kmac::Kmac128::new(
            key,
            params.customization,
            tag_len,
        ))
    }))
}

impl Kmac {
    fn tag(&self, _nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        let mut full = [0u8; super::MAX_TAG_LEN];
        match self {
            Kmac::V128(k) => k.tag_chunks(chunks, &mut full[..k.output_len()]),
            Kmac::V256(k) => k.tag_chunks(chunks, &mut full[..k.output_len()]),
        }
        tag.copy_from_slice(&full[..tag.len()]);
        Ok(())
    }
}

crate::keyed_by_pieces!(Kmac, tag);

/// BLAKE3 keyed hash: the one-shot `keyed_hash` picks the widest SIMD path for the whole input.
struct Blake3Keyed {
    key: [u8; 32],
}

fn blake3_new(key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    let key: [u8; 32] = key
        .try_into()
        .map_err(|_| backend_error("blake3-keyed", "key must be 32 bytes"))?;
    Ok(Box::new(Blake3Keyed { key }))
}

impl KeyedMac for Blake3Keyed {
    #[inline]
    fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        tag.copy_from_slice(&blake3::keyed_hash(&self.key, msg).as_bytes()[..tag.len()]);
        Ok(())
    }

    fn tag_chunks(&mut self, _nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        let mut h = blake3::Hasher::new_keyed(&self.key);
        for chunk in chunks {
            h.update(chunk);
        }
        tag.copy_from_slice(&h.finalize().as_bytes()[..tag.len()]);
        Ok(())
    }

    fn streams(&self) -> bool {
        true
    }
}

/// SipHash-2-4 with a 64-bit tag, output little-endian as in the reference implementation.
struct SipHash24 {
    hasher: siphasher::sip::SipHasher24,
}

fn siphash_new(key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    let key: &[u8; 16] = key
        .try_into()
        .map_err(|_| backend_error("siphash-2-4", "key must be 16 bytes"))?;
    Ok(Box::new(SipHash24 {
        hasher: siphasher::sip::SipHasher24::new_with_key(key),
    }))
}

impl KeyedMac for SipHash24 {
    #[inline]
    fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        tag.copy_from_slice(&self.hasher.hash(msg).to_le_bytes()[..tag.len()]);
        Ok(())
    }
}
