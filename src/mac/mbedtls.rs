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

use super::{Accel, Availability, Backend, Entry, KeyParams, KeyedMac, MacError};

/// One line per algorithm, `hw` only (see the module comment).
macro_rules! entries {
    ($($alg:literal),* $(,)?) => {
        &[$(Entry { algorithm: $alg, accel: Accel::Hw, new: |k, p| imp::new($alg, k, p) },)*]
    };
}

pub static BACKEND: Backend = Backend {
    name: "mbedtls",
    description: "system Mbed TLS 2.28 (libmbedcrypto) through csrc/mbedtls_shim.c; contexts keyed once, reset per message",
    version,
    availability,
    software_only: None,
    entries: entries![
        "hmac-md5",
        "hmac-sha1",
        "hmac-sha256",
        "hmac-sha512",
        "cmac-aes128",
        "cmac-aes256",
        "gmac-aes128",
        "poly1305",
    ],
};

/// Why `list` shows the `sw` rows as unavailable ([`super::NO_SOFTWARE_ONLY`]).
pub const NO_SOFTWARE_ONLY: &str = "no run-time switch: Mbed TLS detects AES-NI/PCLMULQDQ once \
     (private statics in mbedtls_aesni_has_support); the portable code needs a library built without \
     MBEDTLS_AESNI_C";

/// Whether the shim was compiled and linked into this binary.
pub const BUILT: bool = cfg!(have_mbedtls);

fn availability() -> Availability {
    match option_env!("MACBENCH_MBEDTLS_MISSING") {
        Some(reason) if !BUILT => Availability::Unavailable(reason.to_string()),
        _ if !BUILT => Availability::Unavailable(
            "not built: install libmbedtls-dev (Mbed TLS) and rebuild".to_string(),
        ),
        _ => Availability::Available,
    }
}

/// `Mbed TLS 2.28.3 (AES-NI yes, PCLMULQDQ yes)`: the run-time library's version and the AES and
/// GHASH paths it picked on this CPU.
pub fn version() -> String {
    if !BUILT {
        return "Mbed TLS not built".to_string();
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

fn backend_error(algorithm: &'static str, reason: impl ToString) -> MacError {
    MacError::Backend {
        backend: "mbedtls",
        algorithm,
        reason: reason.to_string(),
    }
}

#[cfg(have_mbedtls)]
mod imp {
    use super::{backend_error, KeyParams, KeyedMac, MacError};
    use libc::{c_char, c_int, c_uint, c_void, size_t};
    use std::ffi::{CStr, CString};

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

    /// A keyed Mbed TLS context owned through the shim.
    struct MbedMac {
        handle: *mut c_void,
        /// GMAC cannot stream: 2.28 takes the additional data in one piece.
        streams: bool,
    }

    // SAFETY: the context behind `handle` is owned by this value alone and used by one thread at a
    // time; Mbed TLS contexts hold no thread-affine state.
    unsafe impl Send for MbedMac {}

    impl Drop for MbedMac {
        fn drop(&mut self) {
            // SAFETY: handle came from mbtls_new and is freed exactly once.
            unsafe { mbtls_free(self.handle) };
        }
    }

    fn describe(code: c_int) -> String {
        let mut out = [0 as c_char; 256];
        // SAFETY: out has out.len() bytes; the shim NUL-terminates (snprintf, mbedtls_strerror).
        unsafe {
            mbtls_strerror(code, out.as_mut_ptr(), out.len());
            CStr::from_ptr(out.as_ptr()).to_string_lossy().into_owned()
        }
    }

    pub fn new(
        algorithm: &'static str,
        key: &[u8],
        _: KeyParams<'_>,
    ) -> Result<Box<dyn KeyedMac>, MacError> {
        let tag_len = crate::mac::algorithm(algorithm)
            .map(|a| a.tag_len)
            .ok_or_else(|| backend_error(algorithm, "not a registered algorithm"))?;
        let name = CString::new(algorithm).map_err(|e| backend_error(algorithm, e))?;
        let mut handle: *mut c_void = std::ptr::null_mut();
        // SAFETY: all pointers are valid for the call; on success handle owns a new context.
        let status =
            unsafe { mbtls_new(name.as_ptr(), key.as_ptr(), key.len(), tag_len, &mut handle) };
        if status != 0 || handle.is_null() {
            return Err(backend_error(
                algorithm,
                format!("key setup: {}", describe(status)),
            ));
        }
        // SAFETY: handle is a live context.
        let streams = unsafe { mbtls_streams(handle) } != 0;
        Ok(Box::new(MbedMac { handle, streams }))
    }

    impl KeyedMac for MbedMac {
        #[inline]
        fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) {
            // SAFETY: handle is a live context; nonce, msg and tag are valid for their lengths.
            let status = unsafe {
                mbtls_tag(
                    self.handle,
                    nonce.as_ptr(),
                    nonce.len(),
                    msg.as_ptr(),
                    msg.len(),
                    tag.as_mut_ptr(),
                    tag.len(),
                )
            };
            if status != 0 {
                // A zero tag fails every vector instead of panicking inside a timed loop.
                tag.fill(0);
            }
        }

        fn tag_chunks(&mut self, nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) {
            if !self.streams {
                let joined: Vec<u8> = chunks.concat();
                self.tag_into(nonce, &joined, tag);
                return;
            }
            // SAFETY: as in tag_into, piece by piece; finish runs even after a failed update so the
            // context is reset for the next message.
            let ok = unsafe {
                let mut ok = mbtls_begin(self.handle) == 0;
                for c in chunks {
                    ok &= mbtls_update(self.handle, c.as_ptr(), c.len()) == 0;
                }
                ok & (mbtls_finish(self.handle, tag.as_mut_ptr(), tag.len()) == 0)
            };
            if !ok {
                tag.fill(0);
            }
        }

        fn streams(&self) -> bool {
            self.streams
        }
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
    use super::{availability, backend_error, KeyParams, KeyedMac, MacError};
    use crate::mac::Availability;

    pub fn new(
        algorithm: &'static str,
        _: &[u8],
        _: KeyParams<'_>,
    ) -> Result<Box<dyn KeyedMac>, MacError> {
        let reason = match availability() {
            Availability::Unavailable(why) => why,
            Availability::Available => "not built".to_string(),
        };
        Err(backend_error(algorithm, reason))
    }

    pub fn library_version() -> String {
        String::new()
    }

    pub fn aesni() -> (bool, bool) {
        (false, false)
    }
}
