//! The keyed object of a C-library backend: a handle to a context owned by the backend's C shim.
//!
//! Every shim — Crypto++, Mbed TLS, Nettle, Intel ipsec-mb — fills the one table of
//! `csrc/macbench_shim.h` (create / destroy / tag / begin / update / finish / streams / reason /
//! describe, one status convention), exported as `macbench_shim_<backend>`. This module is the Rust
//! side of that table, written once: [`ShimTable`] mirrors it, [`c_shim!`] finds a backend's table
//! when its shim was built, [`keyed`] keys a function through it, and [`ShimMac`] owns the context and
//! checks every status. Entries a library may lack are optional in the table: bit-length messages and
//! batches (ipsec-mb's lanes), which [`ShimMac`] uses when present and otherwise does without. A
//! backend is then its entry list and what it alone knows (a process switch, ipsec-mb's levels); its
//! version and facts come from the shim's `describe`.
//!
//! Per message the call goes through the table's function pointer: one indirect call into the shim,
//! the same cost as the `dyn KeyedMac` call above it (measured side by side: see the closing note of
//! the change and docs/architecture.md).

use super::{Availability, Batch, KeyedMac, KeyedResult, MacError, Refused, TagResult};
use libc::{c_char, c_int, c_uint, c_void, size_t};
use std::ffi::{CStr, CString};

/// `MACBENCH_SHIM_ABI` in `csrc/macbench_shim.h`.
pub const ABI: c_uint = 4;

/// `macbench_shim` of `csrc/macbench_shim.h`, field for field.
#[repr(C)]
pub struct ShimTable {
    pub abi: c_uint,
    pub backend: *const c_char,
    pub create: unsafe extern "C" fn(
        algorithm: *const c_char,
        level: c_int,
        key: *const u8,
        key_len: size_t,
        tag_len: size_t,
        out: *mut *mut c_void,
        why: *mut c_char,
        why_len: size_t,
    ) -> c_int,
    pub destroy: unsafe extern "C" fn(ctx: *mut c_void),
    pub tag: unsafe extern "C" fn(
        ctx: *mut c_void,
        nonce: *const u8,
        nonce_len: size_t,
        msg: *const u8,
        len: size_t,
        tag: *mut u8,
        tag_len: size_t,
    ) -> c_int,
    pub begin: unsafe extern "C" fn(ctx: *mut c_void, nonce: *const u8, nonce_len: size_t) -> c_int,
    pub update: unsafe extern "C" fn(ctx: *mut c_void, data: *const u8, len: size_t) -> c_int,
    pub finish: unsafe extern "C" fn(ctx: *mut c_void, tag: *mut u8, tag_len: size_t) -> c_int,
    pub streams: Option<unsafe extern "C" fn(ctx: *const c_void) -> c_int>,
    pub reason:
        unsafe extern "C" fn(ctx: *const c_void, status: c_int, out: *mut c_char, out_len: size_t),
    pub describe: unsafe extern "C" fn(out: *mut c_char, out_len: size_t),
    pub tag_bits: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            nonce: *const u8,
            nonce_len: size_t,
            msg: *const u8,
            bits: u64,
            tag: *mut u8,
            tag_len: size_t,
        ) -> c_int,
    >,
    pub tag_batch: Option<TagBatchFn>,
    pub tag_inflight: Option<TagInflightFn>,
    pub software_only: Option<unsafe extern "C" fn(why: *mut c_char, why_len: size_t) -> c_int>,
    /// The most messages a batch call takes; 0: [`SHIM_MAX_BATCH`].
    pub max_batch: size_t,
    pub tag_prebuilt: Option<TagBatchFn>,
    pub counters:
        Option<unsafe extern "C" fn(ctx: *const c_void, out: *mut u64, n: size_t) -> size_t>,
    pub rekey:
        Option<unsafe extern "C" fn(ctx: *mut c_void, key: *const u8, key_len: size_t) -> c_int>,
}

/// The table's `tag_batch` entry.
type TagBatchFn = unsafe extern "C" fn(
    ctx: *mut c_void,
    n: size_t,
    msgs: *const *const u8,
    lens: *const size_t,
    nonces: *const u8,
    nonce_len: size_t,
    tags: *mut u8,
    tag_len: size_t,
) -> c_int;

/// The table's `tag_inflight` entry.
type TagInflightFn = unsafe extern "C" fn(
    ctx: *mut c_void,
    n: size_t,
    msgs: *const *const u8,
    lens: *const size_t,
    nonces: *const u8,
    nonce_len: size_t,
    tags: *mut u8,
    tag_len: size_t,
    depth: size_t,
) -> c_int;

/// How [`ShimMac::tag_jobs`] hands a batch over: chosen once per batch, from the entries the table has.
#[derive(Clone, Copy)]
enum Submit {
    All(TagBatchFn),
    Inflight(TagInflightFn, usize),
}

/// `MACBENCH_SHIM_MAX_BATCH`: the most messages one `tag_batch` / `tag_inflight` call takes, unless
/// the table's `max_batch` says more.
const SHIM_MAX_BATCH: usize = 16;

/// The most messages any shim's batch call takes here (the engine's [`super::MAX_DEPTH`]).
const LARGEST_SHIM_BATCH: usize = super::MAX_DEPTH;

// SAFETY: the table is immutable static data in the shim (function pointers and a string literal).
unsafe impl Sync for ShimTable {}

/// The backend's shim table when `cfg($built)` (build.rs compiled and linked the shim), else `None`:
/// `c_shim!(have_nettle, macbench_shim_nettle)` defines `fn shim() -> Option<&'static ShimTable>`.
#[macro_export]
#[doc(hidden)]
macro_rules! c_shim {
    ($built:ident, $symbol:ident) => {
        #[cfg($built)]
        fn shim() -> Option<&'static $crate::mac::shim::ShimTable> {
            extern "C" {
                static $symbol: $crate::mac::shim::ShimTable;
            }
            // SAFETY: an immutable static the linked shim defines, of the layout ShimTable mirrors.
            Some(unsafe { &*std::ptr::addr_of!($symbol) })
        }
        #[cfg(not($built))]
        fn shim() -> Option<&'static $crate::mac::shim::ShimTable> {
            None
        }
    };
}

/// The registry entries of a backend that keys every algorithm, at every acceleration it registers,
/// through its module's `fn new(algorithm, key, params)`: `accel_entries!([Hw, Sw] "hmac-md5",
/// HMAC_SHA2, …)` gives every algorithm's `hw` entry, then every algorithm's `sw` entry, in the order
/// written. Algorithms are names or the families of [`algorithm_names!`]. The accelerations other than
/// `hw` run where the backend's process switch is applied, which the registry arranges.
#[macro_export]
#[doc(hidden)]
macro_rules! accel_entries {
    ([$($accel:ident),*] $($item:tt),* $(,)?) => {
        $crate::algorithm_names!([$crate::accel_entries] (@names [$($accel),*]) [] $($item),*)
    };
    (@names [$($accel:ident),*] $($alg:literal),*) => {
        $crate::accel_entries!(@each [] [$($accel),*] [$($alg),*])
    };
    (@each [$($done:tt)*] [] [$($alg:literal),*]) => {
        &[$($done)*]
    };
    (@each [$($done:tt)*] [$accel:ident $(, $rest:ident)*] [$($alg:literal),*]) => {
        $crate::accel_entries!(
            @each
            [$($done)* $($crate::mac::Entry {
                algorithm: $alg,
                accel: $crate::mac::Accel::$accel,
                new: |k, p| new($alg, k, p),
            },)*]
            [$($rest),*]
            [$($alg),*]
        )
    };
}

/// [`accel_entries!`] of a backend that registers `hw` only: `hw_entries!["hmac-sha256", …]`.
#[macro_export]
#[doc(hidden)]
macro_rules! hw_entries {
    ($($item:tt),* $(,)?) => {
        $crate::accel_entries!([Hw] $($item),*)
    };
}

/// [`accel_entries!`] of a backend whose `sw` runs in the software-only child: all `hw`, then all
/// `sw`.
#[macro_export]
#[doc(hidden)]
macro_rules! hw_sw_entries {
    ($($item:tt),* $(,)?) => {
        $crate::accel_entries!([Hw, Sw] $($item),*)
    };
}

/// Up to `N` bytes a C function NUL-terminates, as a string.
fn c_text<const N: usize>(fill: impl FnOnce(*mut c_char, size_t)) -> String {
    let mut out = [0 as c_char; N];
    fill(out.as_mut_ptr(), N);
    out[N - 1] = 0;
    // SAFETY: out is NUL-terminated (the last byte forced to 0).
    unsafe { CStr::from_ptr(out.as_ptr()) }
        .to_string_lossy()
        .trim()
        .to_string()
}

impl ShimTable {
    /// The shim's `describe` lines as (key, value) pairs.
    pub fn facts(&self) -> Vec<(String, String)> {
        // SAFETY: describe writes at most out_len bytes, NUL-terminated.
        let text = c_text::<1024>(|out, len| unsafe { (self.describe)(out, len) });
        text.lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect()
    }

    /// Switch the library's instruction-set extensions off for this process (the `sw` child, first
    /// thing): `Err` with the shim's reason, or when the shim has no such switch.
    pub fn software_only(&self) -> Result<(), String> {
        let Some(switch_off) = self.software_only else {
            return Err("this shim has no software-only switch".to_string());
        };
        let mut status = 0;
        // SAFETY: the entry writes at most why_len bytes, NUL-terminated, into the buffer c_text gives.
        let why = c_text::<512>(|out, len| status = unsafe { switch_off(out, len) });
        if status == 0 {
            Ok(())
        } else {
            Err(why)
        }
    }

    /// One fact of `describe` (`version`, …).
    pub fn fact(&self, key: &str) -> Option<String> {
        self.facts()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// A keyed context owned through a backend's shim table.
pub struct ShimMac {
    handle: *mut c_void,
    shim: &'static ShimTable,
    /// What keyed it (`create`'s arguments), to key a fresh context after a refused stream update.
    keyed: Keyed,
}

/// `create`'s arguments, kept by the context they made.
struct Keyed {
    algorithm: CString,
    level: c_int,
    key: Vec<u8>,
    tag_len: size_t,
}

impl Keyed {
    /// A new context of the shim keyed as this one was: `Err` with the shim's status and words.
    fn create(&self, shim: &'static ShimTable) -> Result<*mut c_void, CreateFailure> {
        let mut handle: *mut c_void = std::ptr::null_mut();
        let mut status = 0;
        let why = c_text::<512>(|why, why_len| {
            // SAFETY: algorithm is NUL-terminated, key valid for its length, handle writable, why
            // has why_len bytes; on success the shim has put a new context in handle, which the
            // caller owns.
            status = unsafe {
                (shim.create)(
                    self.algorithm.as_ptr(),
                    self.level,
                    self.key.as_ptr(),
                    self.key.len(),
                    self.tag_len,
                    &mut handle,
                    why,
                    why_len,
                )
            };
        });
        if status != 0 || handle.is_null() {
            let why = if why.is_empty() {
                "no context".to_string()
            } else {
                why
            };
            return Err(CreateFailure { status, why });
        }
        Ok(handle)
    }
}

impl ShimMac {
    /// The live context, for a backend's own entry points beyond the table (ipsec-mb's batches).
    pub fn handle(&self) -> *mut c_void {
        self.handle
    }

    /// The shim's status in words, with the status itself.
    pub fn reason(&self, status: c_int) -> String {
        // SAFETY: handle is a live context of this shim; reason writes at most out_len bytes.
        let why =
            c_text::<512>(|out, len| unsafe { (self.shim.reason)(self.handle, status, out, len) });
        format!("{why} (shim status {status})")
    }
}

impl ShimMac {
    /// Put the context back in its keyed state after a refused stream update, by keying a fresh one
    /// the way this one was keyed. The header's contract was "finish after a refused update resets",
    /// called with a tag length of 0; the gcrypt, nettle, openssl4, sodium and wolfSSL shims refuse
    /// that length before resetting anything, and nettle's and wolfSSL's HMAC `begin` do not reset,
    /// so the next message was tagged on top of the refused one's bytes (issue 47). A fresh context
    /// is a reset whatever the shim does; where even that fails the old one stays, and the refusal
    /// already returned says the message was not tagged.
    fn reset(&mut self) {
        if let Ok(fresh) = self.keyed.create(self.shim) {
            // SAFETY: the old handle came from this shim's create and is freed exactly once; the
            // fresh one replaces it.
            unsafe { (self.shim.destroy)(self.handle) };
            self.handle = fresh;
        }
    }

    /// A streaming call's status as a result; `len` is the piece it was given.
    fn stream_status(&self, status: c_int, len: usize) -> TagResult {
        if status == 0 {
            return Ok(());
        }
        Err(Refused {
            what: format!("a stream update of {len} bytes"),
            reason: self.reason(status),
        })
    }

    /// The batch through the shim's `tag_batch` (`depth` `None`) or `tag_inflight`, at most the
    /// table's `max_batch` messages a call. A message the library refuses refuses the batch.
    fn tag_jobs(&mut self, batch: &mut Batch<'_>, submit: Submit) -> TagResult {
        let most = match self.shim.max_batch {
            0 => SHIM_MAX_BATCH,
            n => n.min(LARGEST_SHIM_BATCH),
        };
        let mut start = 0;
        while start < batch.msgs.len() {
            let n = (batch.msgs.len() - start).min(most);
            let mut ptrs = [std::ptr::null::<u8>(); LARGEST_SHIM_BATCH];
            let mut lens = [0usize; LARGEST_SHIM_BATCH];
            for (i, msg) in batch.msgs[start..start + n].iter().enumerate() {
                ptrs[i] = msg.as_ptr();
                lens[i] = msg.len();
            }
            let nonces = &batch.nonces[start * batch.nonce_len..(start + n) * batch.nonce_len];
            let tags = &mut batch.tags[start * batch.tag_len..(start + n) * batch.tag_len];
            let (np, tp) = (nonces.as_ptr(), tags.as_mut_ptr());
            let (nl, tl) = (batch.nonce_len, batch.tag_len);
            let (h, p, l) = (self.handle, ptrs.as_ptr(), lens.as_ptr());
            // SAFETY: handle is a live context; ptrs/lens hold n messages valid for their lengths
            // (borrowed from batch.msgs for the call); nonces holds n × nonce_len bytes and tags
            // n × tag_len writable bytes; n ≤ the shim's limit.
            let status = unsafe {
                match submit {
                    Submit::All(all) => all(h, n, p, l, np, nl, tp, tl),
                    Submit::Inflight(inflight, depth) => {
                        inflight(h, n, p, l, np, nl, tp, tl, depth)
                    }
                }
            };
            if status != 0 {
                let why = self.reason(status);
                return Err(Refused::batch(&batch.msgs[start..start + n], why));
            }
            start += n;
        }
        Ok(())
    }
}

// SAFETY: the context behind `handle` is owned by this value alone and used by one thread at a time;
// the libraries' contexts are plain structs with no thread-affine state.
unsafe impl Send for ShimMac {}

impl Drop for ShimMac {
    fn drop(&mut self) {
        // SAFETY: handle came from this shim's create and is freed exactly once.
        unsafe { (self.shim.destroy)(self.handle) };
    }
}

impl KeyedMac for ShimMac {
    #[inline]
    fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        let (n, m, t) = (nonce, msg, tag);
        // SAFETY: handle is a live context of this shim; the slices are valid for their lengths.
        let status = unsafe {
            (self.shim.tag)(
                self.handle,
                n.as_ptr(),
                n.len(),
                m.as_ptr(),
                m.len(),
                t.as_mut_ptr(),
                t.len(),
            )
        };
        if status != 0 {
            return Err(Refused::message(msg.len(), self.reason(status)));
        }
        Ok(())
    }

    fn tag_chunks(&mut self, nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        if !self.streams() {
            let joined: Vec<u8> = chunks.concat();
            return self.tag_into(nonce, &joined, tag);
        }
        let s = self.shim;
        // SAFETY: as in tag_into, piece by piece; finish runs even after a failed update, so the
        // context is reset for the next message. The first refusal is the one reported.
        let status = unsafe {
            let mut status = (s.begin)(self.handle, nonce.as_ptr(), nonce.len());
            for c in chunks {
                let update = (s.update)(self.handle, c.as_ptr(), c.len());
                status = if status != 0 { status } else { update };
            }
            let finish = (s.finish)(self.handle, tag.as_mut_ptr(), tag.len());
            if status != 0 {
                status
            } else {
                finish
            }
        };
        if status != 0 {
            let len = chunks.iter().map(|c| c.len()).sum();
            let refused = Refused::message(len, self.reason(status));
            // Whatever state the refusal left, the next message starts from the key.
            self.reset();
            return Err(refused);
        }
        Ok(())
    }

    fn stream_begin(&mut self, nonce: &[u8]) -> TagResult {
        if !self.streams() {
            return Err(Refused::no_stream());
        }
        // SAFETY: handle is a live context of this shim; nonce is valid for its length.
        let status = unsafe { (self.shim.begin)(self.handle, nonce.as_ptr(), nonce.len()) };
        self.stream_status(status, 0)
    }

    fn stream_update(&mut self, chunks: &[&[u8]]) -> TagResult {
        for c in chunks {
            // SAFETY: handle is a live context with a message begun; c is valid for its length.
            let status = unsafe { (self.shim.update)(self.handle, c.as_ptr(), c.len()) };
            if status != 0 {
                // The words first (the reason may read the context), then a fresh keyed context.
                let refused = self.stream_status(status, c.len());
                self.reset();
                return refused;
            }
        }
        Ok(())
    }

    fn stream_finish(&mut self, tag: &mut [u8]) -> TagResult {
        // SAFETY: handle is a live context with a message begun; tag is writable for its length.
        let status = unsafe { (self.shim.finish)(self.handle, tag.as_mut_ptr(), tag.len()) };
        self.stream_status(status, 0)
    }

    /// The first `bits` bits of `msg`, where the shim takes bit lengths (the 3GPP functions).
    fn tag_bits(
        &mut self,
        nonce: &[u8],
        msg: &[u8],
        bits: u64,
        tag: &mut [u8],
    ) -> Result<(), MacError> {
        let Some(tag_bits) = self.shim.tag_bits else {
            return super::tag_whole_bytes(self, nonce, msg, bits, tag);
        };
        if bits.div_ceil(8) != msg.len() as u64 {
            let need = bits.div_ceil(8);
            return Err(
                Refused::message(msg.len(), format!("{bits} bits need {need} bytes")).into(),
            );
        }
        // SAFETY: handle is a live context; msg holds ceil(bits / 8) bytes (checked above), nonce
        // and tag are valid for their lengths.
        let status = unsafe {
            tag_bits(
                self.handle,
                nonce.as_ptr(),
                nonce.len(),
                msg.as_ptr(),
                bits,
                tag.as_mut_ptr(),
                tag.len(),
            )
        };
        if status != 0 {
            return Err(Refused::message(msg.len(), self.reason(status)).into());
        }
        Ok(())
    }

    /// The shim's own batch (a multi-buffer library fills its lanes), else one message at a time.
    fn tag_batch(&mut self, batch: &mut Batch<'_>) -> TagResult {
        match self.shim.tag_batch {
            Some(all) => self.tag_jobs(batch, Submit::All(all)),
            None => self.tag_each(batch),
        }
    }

    /// Descriptors built before, dispatched at once (`--dispatch all`), where the shim keeps them;
    /// else its batch.
    fn tag_prebuilt(&mut self, batch: &mut Batch<'_>) -> TagResult {
        match self.shim.tag_prebuilt {
            Some(prebuilt) => self.tag_jobs(batch, Submit::All(prebuilt)),
            None => self.tag_batch(batch),
        }
    }

    fn rekey(&mut self, key: &[u8]) -> Option<TagResult> {
        let rekey = self.shim.rekey?;
        // SAFETY: handle is a live context of this shim; key is valid for its length.
        let status = unsafe { rekey(self.handle, key.as_ptr(), key.len()) };
        Some(if status == 0 {
            // A fresh context after a refused stream update is keyed with the key it has now.
            self.keyed.key.clear();
            self.keyed.key.extend_from_slice(key);
            Ok(())
        } else {
            Err(Refused {
                what: format!("a new {}-byte key", key.len()),
                reason: self.reason(status),
            })
        })
    }

    fn offload(&self) -> Option<super::OffloadCounters> {
        let counters = self.shim.counters?;
        let mut out = [0u64; super::OffloadCounters::FIELDS];
        // SAFETY: handle is a live context of this shim; counters writes at most n values into out.
        let n = unsafe { counters(self.handle, out.as_mut_ptr(), out.len()) };
        (n == out.len()).then(|| super::OffloadCounters::from_array(out))
    }

    /// At most `depth` messages in the library at a time (`--dispatch inflight:N`).
    fn tag_inflight(&mut self, batch: &mut Batch<'_>, depth: usize) -> TagResult {
        match self.shim.tag_inflight {
            Some(inflight) => self.tag_jobs(batch, Submit::Inflight(inflight, depth.max(1))),
            None => self.tag_each(batch),
        }
    }

    fn streams(&self) -> bool {
        // SAFETY: handle is a live context of this shim.
        self.shim
            .streams
            .is_none_or(|streams| unsafe { streams(self.handle) } != 0)
    }
}

/// Key a context for `algorithm` through `shim` on the library's default path (`None`: the shim is
/// not built, and `availability` says why). The registered tag length goes to the shim, which refuses
/// a longer one.
pub fn keyed(
    shim: Option<&'static ShimTable>,
    backend: &'static str,
    availability: fn() -> Availability,
    algorithm: &'static str,
    key: &[u8],
) -> KeyedResult {
    let Some(shim) = shim else {
        return Err(super::not_built(backend, availability, algorithm));
    };
    let mac = create(shim, algorithm, 0, key).map_err(|f| MacError::Backend {
        backend,
        algorithm,
        reason: format!("key setup: {}", f.why),
    })?;
    Ok(Box::new(mac))
}

/// Why a shim made no context: its status and its words.
#[derive(Debug)]
pub struct CreateFailure {
    pub status: c_int,
    pub why: String,
}

/// The shim's `create` for `algorithm` on code path `level` (0: the library's default).
pub fn create(
    shim: &'static ShimTable,
    algorithm: &str,
    level: c_int,
    key: &[u8],
) -> Result<ShimMac, CreateFailure> {
    let fail = |why: String| CreateFailure { status: -1, why };
    if shim.abi != ABI {
        return Err(fail(format!(
            "the shim speaks interface {} of csrc/macbench_shim.h, this build {ABI}",
            shim.abi
        )));
    }
    let tag_len = super::algorithm(algorithm)
        .map(|a| a.tag_len)
        .ok_or_else(|| fail("not a registered algorithm".to_string()))?;
    let keyed = Keyed {
        algorithm: CString::new(algorithm).map_err(|e| fail(e.to_string()))?,
        level,
        key: key.to_vec(),
        tag_len,
    };
    let handle = keyed.create(shim)?;
    Ok(ShimMac {
        handle,
        shim,
        keyed,
    })
}

/// A C-library backend's availability: available when its shim was built in, else the reason
/// `build.rs` recorded (`MACBENCH_<NAME>_MISSING`, passed in as `option_env!` gives it: build.rs sets it
/// whenever it does not build the shim, with the package to install or the feature to turn on).
pub fn availability(built: bool, missing: Option<&'static str>) -> Availability {
    match missing {
        _ if built => Availability::Available,
        Some(reason) => Availability::Unavailable(reason.to_string()),
        None => Availability::Unavailable("not built".to_string()),
    }
}

/// A C-library backend's version line: the `version` fact its shim describes, followed by
/// `detail` in parentheses where the library says which code it picked (`libsodium 1.0.18 (cpu
/// +avx2 …)`); `<library> not built` without the shim.
pub fn version(
    shim: Option<&'static ShimTable>,
    library: &str,
    detail: impl Fn(&ShimTable) -> Option<String>,
) -> String {
    let Some(shim) = shim else {
        return format!("{library} not built");
    };
    let version = shim.fact("version").unwrap_or_default();
    match detail(shim) {
        Some(detail) => format!("{version} ({detail})"),
        None => version,
    }
}

/// What every C-library backend module shares, written once: `BUILT`, the shim table (`shim()`, by
/// [`c_shim!`]), `availability()` from build.rs's reason, and, unless the module keys its own
/// (`own_new`: ipsec-mb's and Crypto++'s levels), `new(algorithm, key, params)` through [`keyed`]. A
/// C backend module is then its facts: its entries, its version line and what it alone knows.
#[macro_export]
#[doc(hidden)]
macro_rules! c_backend {
    (name: $name:literal, cfg: $built:ident, table: $symbol:ident, missing: $missing:literal $(,)?) => {
        $crate::c_backend!(own_new, name: $name, cfg: $built, table: $symbol, missing: $missing);

        fn new(
            algorithm: &'static str,
            key: &[u8],
            _: $crate::mac::KeyParams<'_>,
        ) -> $crate::mac::KeyedResult {
            $crate::mac::shim::keyed(shim(), $name, availability, algorithm, key)
        }
    };
    (own_new, name: $name:literal, cfg: $built:ident, table: $symbol:ident, missing: $missing:literal $(,)?) => {
        /// Whether the shim was compiled and linked into this binary.
        pub const BUILT: bool = cfg!($built);

        $crate::c_shim!($built, $symbol);

        fn availability() -> $crate::mac::Availability {
            $crate::mac::shim::availability(BUILT, option_env!($missing))
        }
    };
}
