//! Nettle backend: the system libnettle (GnuTLS's crypto library; Debian's nettle-dev) through a small C
//! shim, `csrc/nettle_shim.c`: key a context by algorithm name, tag a message (nonce, message → tag), or
//! stream it (begin/update/final) for the chunked self-test, and free it. The shim reports failures as
//! return codes only; [`reason`] turns them into words here.
//!
//! Key setup happens once in `mbnettle_new`; per message the shim does only what the library must:
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

use super::{Accel, Availability, Backend, Entry, IsaLevels, KeyParams, KeyedMac, MacError};

/// One `hw` line per algorithm, all keyed through the shim by name.
macro_rules! entries {
    ($($alg:literal),* $(,)?) => {
        &[$(Entry { algorithm: $alg, accel: Accel::Hw, new: |k, p| imp::new($alg, k, p) },)*]
    };
}

/// Why `list` shows this backend's ISA-level rows (`sse` … `avx512`) as unavailable.
pub const NO_ISA_LEVELS: &str =
    "nettle: only hw (its fat build picks its code paths when it loads); ISA levels are offered by ipsecmb, openssl and cryptopp";

pub static BACKEND: Backend = Backend {
    name: "nettle",
    description: "system Nettle (libnettle) through csrc/nettle_shim.c; contexts keyed once, nonce set per message where the construction takes one",
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
        "hmac-sha512-224",
        "hmac-sha512-256",
        "hmac-sha3-224",
        "hmac-sha3-384",
        "hmac-sha3-512",
        "cmac-aes128",
        "cmac-aes192",
        "cmac-aes256",
        "gmac-aes128",
        "gmac-aes192",
        "gmac-aes256",
        "umac32-aes128",
        "umac64-aes128",
        "umac96-aes128",
        "umac128-aes128",
        "poly1305-aes",
    ],
};

/// Whether the shim was compiled and linked into this binary.
pub const BUILT: bool = cfg!(have_nettle);

fn availability() -> Availability {
    super::shim::availability(
        BUILT,
        option_env!("MACBENCH_NETTLE_MISSING"),
        "nettle-dev",
        "Nettle",
    )
}

/// `Nettle 3.8` (the library loaded at run time).
pub fn version() -> String {
    if !BUILT {
        return "Nettle not built".to_string();
    }
    let v = imp::library_version();
    format!("Nettle {}.{}", v / 100, v % 100)
}

/// The shim's return codes (`MBNETTLE_*` in `csrc/nettle_shim.c`) in words.
pub fn reason(code: i32) -> &'static str {
    match code {
        0 => "ok",
        1 => "algorithm not implemented by the shim",
        2 => "key length not accepted by Nettle",
        3 => "tag length differs from Nettle's",
        4 => "nonce length not accepted by Nettle",
        5 => "out of memory",
        _ => "unknown shim status",
    }
}

#[cfg(have_nettle)]
mod imp {
    use super::{reason, KeyParams, KeyedMac, MacError};
    use crate::mac::shim::Shim;
    use libc::{c_char, c_int, c_void, size_t};
    use std::ffi::CStr;

    extern "C" {
        fn mbnettle_new(
            algorithm: *const c_char,
            key: *const u8,
            key_len: size_t,
            tag_len: size_t,
            out: *mut *mut c_void,
        ) -> c_int;
        fn mbnettle_free(handle: *mut c_void);
        fn mbnettle_tag(
            handle: *mut c_void,
            nonce: *const u8,
            nonce_len: size_t,
            msg: *const u8,
            len: size_t,
            tag: *mut u8,
            tag_len: size_t,
        ) -> c_int;
        fn mbnettle_begin(handle: *mut c_void, nonce: *const u8, nonce_len: size_t) -> c_int;
        fn mbnettle_update(handle: *mut c_void, data: *const u8, len: size_t);
        fn mbnettle_final(handle: *mut c_void, tag: *mut u8, tag_len: size_t) -> c_int;
        fn mbnettle_version() -> c_int;
    }

    /// Nettle's shim entry points for [`ShimMac`].
    struct NettleShim;

    // SAFETY: each function forwards to the shim with the given handle and slices.
    unsafe impl Shim for NettleShim {
        const BACKEND: &'static str = "nettle";
        // The shim checks the key length before reading a fixed-size key.
        unsafe fn create(
            name: &CStr,
            key: &[u8],
            tag_len: usize,
            handle: &mut *mut c_void,
        ) -> Result<(), String> {
            match mbnettle_new(name.as_ptr(), key.as_ptr(), key.len(), tag_len, handle) {
                0 => Ok(()),
                status => Err(reason(status).to_string()),
            }
        }
        unsafe fn tag(h: *mut c_void, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> c_int {
            let (n, m, t) = (nonce, msg, tag);
            mbnettle_tag(
                h,
                n.as_ptr(),
                n.len(),
                m.as_ptr(),
                m.len(),
                t.as_mut_ptr(),
                t.len(),
            )
        }
        unsafe fn begin(h: *mut c_void, nonce: &[u8]) -> c_int {
            mbnettle_begin(h, nonce.as_ptr(), nonce.len())
        }
        // Nettle's update functions cannot fail.
        unsafe fn update(h: *mut c_void, data: &[u8]) -> c_int {
            mbnettle_update(h, data.as_ptr(), data.len());
            0
        }
        unsafe fn finish(h: *mut c_void, tag: &mut [u8]) -> c_int {
            mbnettle_final(h, tag.as_mut_ptr(), tag.len())
        }
        unsafe fn reason(_h: *mut c_void, status: c_int) -> String {
            reason(status).to_string()
        }
        unsafe fn free(h: *mut c_void) {
            mbnettle_free(h)
        }
    }

    pub fn new(
        algorithm: &'static str,
        key: &[u8],
        _: KeyParams<'_>,
    ) -> Result<Box<dyn KeyedMac>, MacError> {
        crate::mac::shim::keyed::<NettleShim>(algorithm, key)
    }

    pub fn library_version() -> i32 {
        // SAFETY: no arguments; asks the loaded library for its version.
        unsafe { mbnettle_version() }
    }
}

#[cfg(not(have_nettle))]
mod imp {
    use super::{availability, KeyParams, KeyedMac, MacError};

    pub fn new(
        algorithm: &'static str,
        _: &[u8],
        _: KeyParams<'_>,
    ) -> Result<Box<dyn KeyedMac>, MacError> {
        crate::mac::shim::not_built("nettle", algorithm, availability())
    }

    pub fn library_version() -> i32 {
        0
    }
}
