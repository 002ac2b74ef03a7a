//! Mbed TLS backend: the system libmbedcrypto 2.28 (Debian's libmbedtls-dev) through a small C shim,
//! `csrc/mbedtls_shim.c`: key an object by algorithm name, tag a message (nonce, message → tag) or
//! stream it (begin/update/finish) for the chunked self-test, and free it. Errors come back as return
//! codes, described by `mbtls_strerror`.
//!
//! Key setup happens once in `mbtls_new`: HMAC's ipad/opad blocks (`mbedtls_md_hmac_starts`), CMAC's
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

use super::{Accel, Availability, Backend, Entry, IsaLevels, KeyParams, KeyedMac, MacError};

/// One line per algorithm, `hw` only (see the module comment).
macro_rules! entries {
    ($($alg:literal),* $(,)?) => {
        &[$(Entry { algorithm: $alg, accel: Accel::Hw, new: |k, p| imp::new($alg, k, p) },)*]
    };
}

/// Why `list` shows this backend's ISA-level rows (`sse` … `avx512`) as unavailable.
pub const NO_ISA_LEVELS: &str =
    "mbedtls: only hw (AES-NI/PCLMULQDQ use is decided once, with no run-time switch); ISA levels are offered by ipsecmb, openssl and cryptopp";

pub static BACKEND: Backend = Backend {
    name: "mbedtls",
    description: "system Mbed TLS 2.28 (libmbedcrypto) through csrc/mbedtls_shim.c; contexts keyed once, reset per message",
    version,
    availability,
    process_switch: None,
    isa_levels: IsaLevels::NotOffered(NO_ISA_LEVELS),
    length_limit: super::no_length_limit,
    nonce_limit: super::no_nonce_limit,
    entries: entries![
        "hmac-md5",
        "hmac-sha1",
        "hmac-sha224",
        "hmac-sha256",
        "hmac-sha384",
        "hmac-sha512",
        "cmac-aes128",
        "cmac-aes192",
        "cmac-aes256",
        "gmac-aes128",
        "gmac-aes192",
        "gmac-aes256",
        "poly1305",
    ],
};

/// Why `list` shows the `sw` rows as unavailable ([`super::NO_SOFTWARE_ONLY`]).
#[cfg(not(target_arch = "aarch64"))]
pub const NO_SOFTWARE_ONLY: &str = "no run-time switch: Mbed TLS detects AES-NI/PCLMULQDQ once \
     (private statics in mbedtls_aesni_has_support); the portable code needs a library built without \
     MBEDTLS_AESNI_C";
/// On aarch64 there is nothing to switch: 2.28 has no Armv8 code at all (MBEDTLS_AESCE_C came in 3.5).
#[cfg(target_arch = "aarch64")]
pub const NO_SOFTWARE_ONLY: &str = "no separate sw variant: Mbed TLS 2.28 has no Armv8 \
     cryptographic code (its AES extension support, MBEDTLS_AESCE_C, came in 3.5), so the hw rows \
     already run its portable C here";

/// Whether the shim was compiled and linked into this binary.
pub const BUILT: bool = cfg!(have_mbedtls);

fn availability() -> Availability {
    super::shim::availability(
        BUILT,
        option_env!("MACBENCH_MBEDTLS_MISSING"),
        "libmbedtls-dev",
        "Mbed TLS",
    )
}

/// `Mbed TLS 2.28.3 (AES-NI yes, PCLMULQDQ yes)`: the run-time library's version and the AES and
/// GHASH paths it picked on this CPU.
pub fn version() -> String {
    if !BUILT {
        return "Mbed TLS not built".to_string();
    }
    if !cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        // 2.28's only accelerated paths are AES-NI and PCLMULQDQ.
        return format!(
            "Mbed TLS {} (portable C: no {} code in 2.28)",
            imp::library_version(),
            std::env::consts::ARCH
        );
    }
    let (aes, clmul) = imp::aesni();
    let yes = |b: bool| if b { "yes" } else { "no" };
    format!(
        "Mbed TLS {} (AES-NI {}, PCLMULQDQ {})",
        imp::library_version(),
        yes(aes),
        yes(clmul)
    )
}

#[cfg(have_mbedtls)]
mod imp {
    use super::{KeyParams, KeyedMac, MacError};
    use crate::mac::shim::Shim;
    use libc::{c_char, c_int, c_uint, c_void, size_t};
    use std::ffi::CStr;

    extern "C" {
        fn mbtls_new(
            algorithm: *const c_char,
            key: *const u8,
            key_len: size_t,
            tag_len: size_t,
            out: *mut *mut c_void,
        ) -> c_int;
        fn mbtls_free(handle: *mut c_void);
        fn mbtls_streams(handle: *const c_void) -> c_int;
        fn mbtls_tag(
            handle: *mut c_void,
            nonce: *const u8,
            nonce_len: size_t,
            msg: *const u8,
            len: size_t,
            tag: *mut u8,
            tag_len: size_t,
        ) -> c_int;
        fn mbtls_begin(handle: *mut c_void) -> c_int;
        fn mbtls_update(handle: *mut c_void, data: *const u8, len: size_t) -> c_int;
        fn mbtls_finish(handle: *mut c_void, tag: *mut u8, tag_len: size_t) -> c_int;
        fn mbtls_strerror(code: c_int, out: *mut c_char, out_len: size_t);
        fn mbtls_version(out: *mut c_char);
        fn mbtls_aesni() -> c_uint;
    }

    fn describe(code: c_int) -> String {
        let mut out = [0 as c_char; 256];
        // SAFETY: out has out.len() bytes; the shim NUL-terminates (snprintf, mbedtls_strerror).
        unsafe {
            mbtls_strerror(code, out.as_mut_ptr(), out.len());
            CStr::from_ptr(out.as_ptr()).to_string_lossy().into_owned()
        }
    }

    /// Mbed TLS's shim entry points for [`ShimMac`].
    struct MbedShim;

    // SAFETY: each function forwards to the shim with the given handle and slices.
    unsafe impl Shim for MbedShim {
        const BACKEND: &'static str = "mbedtls";
        unsafe fn create(
            name: &CStr,
            key: &[u8],
            tag_len: usize,
            handle: &mut *mut c_void,
        ) -> Result<(), String> {
            match mbtls_new(name.as_ptr(), key.as_ptr(), key.len(), tag_len, handle) {
                0 => Ok(()),
                status => Err(describe(status)),
            }
        }
        unsafe fn tag(h: *mut c_void, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> c_int {
            let (n, m, t) = (nonce, msg, tag);
            mbtls_tag(
                h,
                n.as_ptr(),
                n.len(),
                m.as_ptr(),
                m.len(),
                t.as_mut_ptr(),
                t.len(),
            )
        }
        unsafe fn begin(h: *mut c_void, _nonce: &[u8]) -> c_int {
            mbtls_begin(h)
        }
        unsafe fn update(h: *mut c_void, data: &[u8]) -> c_int {
            mbtls_update(h, data.as_ptr(), data.len())
        }
        // finish runs even after a failed update, so the context is reset for the next message.
        unsafe fn finish(h: *mut c_void, tag: &mut [u8]) -> c_int {
            mbtls_finish(h, tag.as_mut_ptr(), tag.len())
        }
        /// The shim's own codes and Mbed TLS's (`mbedtls_strerror`), in words.
        unsafe fn reason(_h: *mut c_void, status: c_int) -> String {
            describe(status)
        }
        unsafe fn free(h: *mut c_void) {
            mbtls_free(h)
        }
        /// GMAC cannot stream: 2.28 takes the additional data in one piece.
        unsafe fn streams(h: *mut c_void) -> bool {
            mbtls_streams(h) != 0
        }
    }

    pub fn new(
        algorithm: &'static str,
        key: &[u8],
        _: KeyParams<'_>,
    ) -> Result<Box<dyn KeyedMac>, MacError> {
        crate::mac::shim::keyed::<MbedShim>(algorithm, key)
    }

    /// The run-time library's version, `2.28.3`.
    pub fn library_version() -> String {
        let mut out = [0 as c_char; 32];
        // SAFETY: out has 32 bytes, more than the 9 mbedtls_version_get_string needs; it writes a
        // NUL-terminated string.
        unsafe {
            mbtls_version(out.as_mut_ptr());
            CStr::from_ptr(out.as_ptr()).to_string_lossy().into_owned()
        }
    }

    /// Whether Mbed TLS uses AES-NI and PCLMULQDQ on this CPU.
    pub fn aesni() -> (bool, bool) {
        // SAFETY: no arguments; runs CPUID once inside Mbed TLS.
        let bits = unsafe { mbtls_aesni() };
        (bits & 1 != 0, bits & 2 != 0)
    }
}

#[cfg(not(have_mbedtls))]
mod imp {
    use super::{availability, KeyParams, KeyedMac, MacError};

    pub fn new(
        algorithm: &'static str,
        _: &[u8],
        _: KeyParams<'_>,
    ) -> Result<Box<dyn KeyedMac>, MacError> {
        crate::mac::shim::not_built("mbedtls", algorithm, availability())
    }

    pub fn library_version() -> String {
        String::new()
    }

    pub fn aesni() -> (bool, bool) {
        (false, false)
    }
}
