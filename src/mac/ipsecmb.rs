//! Intel ipsec-mb backend: the system libIPSec_MB (1.x, Debian's libipsec-mb-dev; the multi-buffer
//! library DPDK and VPP use) through a small C shim, `csrc/ipsecmb_shim.c`, over its job API.
//!
//! Each keyed object owns one `IMB_MGR` (`alloc_mb_mgr` + `init_mb_mgr_auto`, which picks the fastest
//! code path this CPU runs: SSE, AVX, AVX2 or AVX-512) and the key material its jobs point at, prepared
//! once at key setup: for HMAC the inner and outer starting states (key xor ipad/opad run through
//! `IMB_SHAx_ONE_BLOCK`, the header's documented HMAC key preparation; keys longer than a block hashed
//! first), for CMAC the AES key schedule and subkeys K1/K2 (`IMB_AES_KEYEXP_128`,
//! `IMB_AES_CMAC_SUBKEY_GEN_128`), for XCBC K1's schedule and K2/K3 (`IMB_AES_XCBC_KEYEXP`), for GMAC the
//! AES schedule and GHASH table (`IMB_AES128_GCM_PRE`). Per message the shim only fills in a job
//! (pointers and lengths) and hands it to the manager.
//!
//! Two ways through the manager, and why both are measured:
//! - `tag_into` submits one job and flushes at once: one message at a time, as a caller with a single
//!   packet in hand would. The multi-buffer code then runs with one lane busy, so a message costs at
//!   least what a single-buffer implementation costs, plus the job bookkeeping.
//! - `tag_batch` (the engine's hot loop, up to [`super::MAX_BATCH`] messages) submits every message of
//!   the batch as its own job and flushes only after the last. The manager queues jobs until a SIMD
//!   lane set is full (4 to 16 lanes depending on the path and the hash) and computes those messages
//!   side by side: what makes ipsec-mb fast for a gateway that has many packets in flight. Jobs may come
//!   back out of order; each carries its index and writes into its own scratch slot.
//!
//! Two gaps of the 1.3 job API, worked around in the shim: an XCBC job writes only the 12-byte tag
//! (any other `auth_tag_output_len_in_bytes` is rejected), so this backend implements
//! `xcbc-aes128-96` and not the full 16-byte `xcbc-aes128`; and an HMAC job of length 0 is rejected,
//! so the empty message is hashed with the whole-hash calls (`IMB_SHAx`) over the stored key blocks.
//!
//! The job API is one-shot (no streaming for these MACs), so `tag_chunks` keeps the trait's default
//! and `streams()` is false. No HMAC-MD5: keys longer than a block must be hashed first and ipsec-mb
//! exposes MD5 only as a one-block compression, not a whole hash.
//!
//! No `sw` variants: `init_mb_mgr_auto` picks an SSE/AVX/AVX2/AVX-512 path from CPUID. The only
//! switches are `alloc_mb_mgr` flags (`IMB_FLAG_AESNI_OFF`, `IMB_FLAG_SHANI_OFF`) that select the
//! no-AES-NI path, which still needs SSE4.2 and PCLMULQDQ and emulates AES with SSE: not the portable
//! code docs/methodology.md §1 compares. The registry lists the `sw` rows as unavailable with that
//! reason.
//!
//! Built only with `cfg(have_ipsecmb)` (build.rs found the library); otherwise every entry is listed as
//! unavailable with the reason build.rs recorded.

use super::{Accel, Availability, Backend, Entry, IsaLevels, KeyParams, KeyedMac, MacError};

/// One line per algorithm, `hw` only (see the module comment).
macro_rules! entries {
    ($($alg:literal),* $(,)?) => {
        &[$(Entry { algorithm: $alg, accel: Accel::Hw, new: |k, p| imp::new($alg, k, p) },)*]
    };
}

pub static BACKEND: Backend = Backend {
    name: "ipsecmb",
    description: "system Intel ipsec-mb (libIPSec_MB) through csrc/ipsecmb_shim.c; job API, a batch submitted as jobs then flushed (SIMD lanes)",
    version,
    availability,
    software_only: None,
    isa_levels: IsaLevels::NotOffered(NO_ISA_LEVELS),
    entries: entries![
        "hmac-sha1",
        "hmac-sha256",
        "hmac-sha512",
        "cmac-aes128",
        "xcbc-aes128-96",
        "gmac-aes128",
    ],
};

/// Why `list` shows the ISA-level rows as unavailable (until the levels are wired to the manager).
pub const NO_ISA_LEVELS: &str = "ipsecmb: only hw so far";

/// Why `list` shows the `sw` rows as unavailable ([`super::NO_SOFTWARE_ONLY`]).
pub const NO_SOFTWARE_ONLY: &str = "not offered yet: alloc_mb_mgr's IMB_FLAG_AESNI_OFF and \
     IMB_FLAG_SHANI_OFF select ipsec-mb's no-AES-NI path, which still runs SSE4.2 and PCLMULQDQ and \
     emulates AES in SSE: not the portable code docs/methodology.md §1 compares, and the library has no \
     switch for the rest";

/// Whether the shim was compiled and linked into this binary.
pub const BUILT: bool = cfg!(have_ipsecmb);

fn availability() -> Availability {
    super::shim::availability(
        BUILT,
        option_env!("MACBENCH_IPSECMB_MISSING"),
        "libipsec-mb-dev",
        "Intel ipsec-mb",
    )
}

/// `Intel ipsec-mb 1.3.0 (avx512 path; AES-NI, SHA-NI, VAES, …)`: the run-time library's version and
/// the path `init_mb_mgr_auto` chose on this CPU.
pub fn version() -> String {
    if !BUILT {
        return "Intel ipsec-mb not built".to_string();
    }
    let path = match imp::arch() {
        Some((arch, features)) => {
            let name = match arch {
                1 => "no-aesni",
                2 => "sse",
                3 => "avx",
                4 => "avx2",
                5 => "avx512",
                _ => "unknown",
            };
            let flags: Vec<&str> = FEATURES
                .iter()
                .filter(|(bit, _)| features & bit != 0)
                .map(|(_, name)| *name)
                .collect();
            format!("{name} path; {}", flags.join(", "))
        }
        None => "no manager: init_mb_mgr_auto failed".to_string(),
    };
    format!("Intel ipsec-mb {} ({path})", imp::library_version())
}

/// The manager's feature bits worth naming (`IMB_FEATURE_*` in intel-ipsec-mb.h).
const FEATURES: &[(u64, &str)] = &[
    (1 << 1, "AES-NI"),
    (1 << 0, "SHA-NI"),
    (1 << 2, "PCLMULQDQ"),
    (1 << 6, "AVX2"),
    (1 << 7, "AVX512F"),
    (1 << 12, "VAES"),
    (1 << 13, "VPCLMULQDQ"),
];

fn backend_error(algorithm: &'static str, reason: impl ToString) -> MacError {
    MacError::Backend {
        backend: "ipsecmb",
        algorithm,
        reason: reason.to_string(),
    }
}

#[cfg(have_ipsecmb)]
mod imp {
    use super::{backend_error, KeyParams, KeyedMac, MacError};
    use crate::mac::{Batch, MAX_BATCH};
    use libc::{c_char, c_int, c_void, size_t};
    use std::ffi::{CStr, CString};

    extern "C" {
        fn imb_shim_new(
            algorithm: *const c_char,
            key: *const u8,
            key_len: size_t,
            out: *mut *mut c_void,
        ) -> c_int;
        fn imb_shim_free(handle: *mut c_void);
        fn imb_shim_tag(
            handle: *mut c_void,
            nonce: *const u8,
            nonce_len: size_t,
            msg: *const u8,
            len: size_t,
            tag: *mut u8,
            tag_len: size_t,
        ) -> c_int;
        fn imb_shim_tag_batch(
            handle: *mut c_void,
            n: size_t,
            msgs: *const *const u8,
            lens: *const size_t,
            nonces: *const u8,
            nonce_len: size_t,
            tags: *mut u8,
            tag_len: size_t,
        ) -> c_int;
        #[allow(clippy::too_many_arguments)]
        fn imb_shim_tag_inflight(
            handle: *mut c_void,
            n: size_t,
            msgs: *const *const u8,
            lens: *const size_t,
            nonces: *const u8,
            nonce_len: size_t,
            tags: *mut u8,
            tag_len: size_t,
            depth: size_t,
        ) -> c_int;
        fn imb_shim_strerror(handle: *mut c_void, code: c_int, out: *mut c_char, out_len: size_t);
        fn imb_shim_version() -> *const c_char;
        fn imb_shim_arch(features: *mut u64) -> c_int;
    }

    /// A keyed ipsec-mb manager and its key material, owned through the shim.
    struct IpsecMbMac {
        handle: *mut c_void,
    }

    // SAFETY: the manager and key material behind `handle` are owned by this value alone and used by
    // one thread at a time; an IMB_MGR holds no thread-affine state.
    unsafe impl Send for IpsecMbMac {}

    impl Drop for IpsecMbMac {
        fn drop(&mut self) {
            // SAFETY: handle came from imb_shim_new and is freed exactly once.
            unsafe { imb_shim_free(self.handle) };
        }
    }

    fn describe(handle: *mut c_void, code: c_int) -> String {
        let mut out = [0 as c_char; 256];
        // SAFETY: handle is null or a live object; out has out.len() bytes; the shim NUL-terminates
        // (snprintf).
        unsafe {
            imb_shim_strerror(handle, code, out.as_mut_ptr(), out.len());
            CStr::from_ptr(out.as_ptr()).to_string_lossy().into_owned()
        }
    }

    pub fn new(
        algorithm: &'static str,
        key: &[u8],
        _: KeyParams<'_>,
    ) -> Result<Box<dyn KeyedMac>, MacError> {
        let name = CString::new(algorithm).map_err(|e| backend_error(algorithm, e))?;
        let mut handle: *mut c_void = std::ptr::null_mut();
        // SAFETY: all pointers are valid for the call; on success handle owns a new object.
        let status = unsafe { imb_shim_new(name.as_ptr(), key.as_ptr(), key.len(), &mut handle) };
        if status != 0 || handle.is_null() {
            return Err(backend_error(
                algorithm,
                format!("key setup: {}", describe(std::ptr::null_mut(), status)),
            ));
        }
        Ok(Box::new(IpsecMbMac { handle }))
    }

    impl KeyedMac for IpsecMbMac {
        /// One job, submitted and flushed at once.
        #[inline]
        fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) {
            // SAFETY: handle is a live object; nonce, msg and tag are valid for their lengths.
            let status = unsafe {
                imb_shim_tag(
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

        /// Every message of the batch submitted as a job, then one flush: the lanes fill up.
        fn tag_batch(&mut self, batch: &mut Batch<'_>) {
            self.tag_jobs(batch, None);
        }

        /// At most `depth` jobs in the manager; when that many are in flight a flush forces the
        /// oldest out before the next is submitted (`--dispatch inflight:N`).
        fn tag_inflight(&mut self, batch: &mut Batch<'_>, depth: usize) {
            self.tag_jobs(batch, Some(depth.max(1)));
        }
    }

    impl IpsecMbMac {
        /// Submit the batch's messages as jobs: all then a flush (`None`), or with at most `depth`
        /// in flight.
        fn tag_jobs(&mut self, batch: &mut Batch<'_>, depth: Option<usize>) {
            let mut start = 0;
            while start < batch.msgs.len() {
                let n = (batch.msgs.len() - start).min(MAX_BATCH);
                let mut ptrs = [std::ptr::null::<u8>(); MAX_BATCH];
                let mut lens = [0usize; MAX_BATCH];
                for (i, msg) in batch.msgs[start..start + n].iter().enumerate() {
                    ptrs[i] = msg.as_ptr();
                    lens[i] = msg.len();
                }
                let nonces = &batch.nonces[start * batch.nonce_len..(start + n) * batch.nonce_len];
                let tags = &mut batch.tags[start * batch.tag_len..(start + n) * batch.tag_len];
                // SAFETY: handle is a live object; ptrs/lens hold n messages valid for their lengths
                // (borrowed from batch.msgs for the call); nonces holds n × nonce_len bytes and tags
                // n × tag_len writable bytes; n ≤ 16, the shim's limit.
                let status = unsafe {
                    match depth {
                        None => imb_shim_tag_batch(
                            self.handle,
                            n,
                            ptrs.as_ptr(),
                            lens.as_ptr(),
                            nonces.as_ptr(),
                            batch.nonce_len,
                            tags.as_mut_ptr(),
                            batch.tag_len,
                        ),
                        Some(depth) => imb_shim_tag_inflight(
                            self.handle,
                            n,
                            ptrs.as_ptr(),
                            lens.as_ptr(),
                            nonces.as_ptr(),
                            batch.nonce_len,
                            tags.as_mut_ptr(),
                            batch.tag_len,
                            depth,
                        ),
                    }
                };
                if status != 0 {
                    tags.fill(0);
                }
                start += n;
            }
        }
    }

    /// The run-time library's version, `1.3.0`.
    pub fn library_version() -> String {
        // SAFETY: imb_get_version_str returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(imb_shim_version()) }
            .to_string_lossy()
            .into_owned()
    }

    /// The path `init_mb_mgr_auto` picks here (`IMB_ARCH_*`) and the manager's feature bits.
    pub fn arch() -> Option<(c_int, u64)> {
        let mut features = 0u64;
        // SAFETY: features is a valid u64 to write; the shim makes and frees its own manager.
        let arch = unsafe { imb_shim_arch(&mut features) };
        (arch >= 0).then_some((arch, features))
    }
}

#[cfg(not(have_ipsecmb))]
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

    pub fn arch() -> Option<(i32, u64)> {
        None
    }
}
