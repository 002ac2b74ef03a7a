//! The keyed object of a C-library backend: a handle to a context owned by the backend's C shim.
//!
//! Crypto++, Mbed TLS and Nettle each expose the same per-message contract through their shim (tag a
//! whole message; or begin / update / finish for a message fed in pieces; free the context), so the
//! Rust side of that contract is written once here. A backend implements [`Shim`] with one thin line
//! per entry point; [`ShimMac`] is generic over it, so every call stays a direct call into that
//! backend's shim (no per-message indirection). A backend with more to offer (ipsec-mb's batches of
//! jobs) keeps its own type.

use super::{Availability, KeyedMac, MacError, Refused};
use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::os::raw::c_void;

/// One backend's shim entry points. Each takes a live handle made by that shim and slices valid for
/// their lengths and returns the shim's status: 0 for done, anything else "refused, no tag", which
/// [`Shim::reason`] puts in the library's words.
///
/// # Safety
/// Implementations must only forward to the shim's functions with the arguments given; callers pass a
/// handle the same shim made and have not freed.
// The trait's `# Safety` section covers every entry point: each has the same contract.
#[allow(clippy::missing_safety_doc)]
pub unsafe trait Shim: 'static {
    /// The backend's name, as errors name it.
    const BACKEND: &'static str;
    /// Make a context for algorithm `name` keyed with `key`, producing `tag_len`-byte tags, into
    /// `handle`; `Err` is the shim's own reason (its status in words, or its error text).
    unsafe fn create(
        name: &CStr,
        key: &[u8],
        tag_len: usize,
        handle: &mut *mut c_void,
    ) -> Result<(), String>;
    /// Tag one whole message into `tag`.
    unsafe fn tag(handle: *mut c_void, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> c_int;
    /// Start a message fed in pieces.
    unsafe fn begin(handle: *mut c_void, nonce: &[u8]) -> c_int;
    unsafe fn update(handle: *mut c_void, data: &[u8]) -> c_int;
    unsafe fn finish(handle: *mut c_void, tag: &mut [u8]) -> c_int;
    unsafe fn free(handle: *mut c_void);
    /// Why the shim returned `status` (non-zero) on this context, in the library's words.
    unsafe fn reason(handle: *mut c_void, status: c_int) -> String;
    /// Whether begin/update/finish really feed the library piece by piece for this context.
    unsafe fn streams(_handle: *mut c_void) -> bool {
        true
    }
}

/// A keyed context owned through a backend's shim.
pub struct ShimMac<S: Shim> {
    handle: *mut c_void,
    shim: PhantomData<S>,
}

impl<S: Shim> ShimMac<S> {
    /// Own `handle`, a context the shim `S` made; `None` for a null handle.
    pub fn new(handle: *mut c_void) -> Option<ShimMac<S>> {
        (!handle.is_null()).then_some(ShimMac {
            handle,
            shim: PhantomData,
        })
    }
}

// SAFETY: the context behind `handle` is owned by this value alone and used by one thread at a time;
// the three libraries' contexts are plain structs with no thread-affine state.
unsafe impl<S: Shim> Send for ShimMac<S> {}

impl<S: Shim> Drop for ShimMac<S> {
    fn drop(&mut self) {
        // SAFETY: handle came from S's shim and is freed exactly once.
        unsafe { S::free(self.handle) };
    }
}

impl<S: Shim> KeyedMac for ShimMac<S> {
    #[inline]
    fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> Result<(), Refused> {
        // SAFETY: handle is a live context of S; the slices are valid for their lengths.
        let status = unsafe { S::tag(self.handle, nonce, msg, tag) };
        if status != 0 {
            return Err(Refused::message(msg.len(), self.reason(status)));
        }
        Ok(())
    }

    fn tag_chunks(
        &mut self,
        nonce: &[u8],
        chunks: &[&[u8]],
        tag: &mut [u8],
    ) -> Result<(), Refused> {
        if !self.streams() {
            let joined: Vec<u8> = chunks.concat();
            return self.tag_into(nonce, &joined, tag);
        }
        // SAFETY: as in tag_into, piece by piece; finish runs even after a failed update, so the
        // context is reset for the next message. The first refusal is the one reported.
        let status = unsafe {
            let mut status = S::begin(self.handle, nonce);
            for c in chunks {
                let update = S::update(self.handle, c);
                status = if status != 0 { status } else { update };
            }
            let finish = S::finish(self.handle, tag);
            if status != 0 {
                status
            } else {
                finish
            }
        };
        if status != 0 {
            let len = chunks.iter().map(|c| c.len()).sum();
            return Err(Refused::message(len, self.reason(status)));
        }
        Ok(())
    }

    fn streams(&self) -> bool {
        // SAFETY: handle is a live context of S.
        unsafe { S::streams(self.handle) }
    }
}

impl<S: Shim> ShimMac<S> {
    /// The shim's status in words, with the status itself.
    fn reason(&self, status: c_int) -> String {
        // SAFETY: handle is a live context of S.
        let why = unsafe { S::reason(self.handle, status) };
        format!("{} (shim status {status})", why.trim())
    }
}

/// Key setup of a C-library backend's function: the registered tag length, the shim's context, the
/// object that owns it. One place for what the three backends did alike, so their errors read alike.
pub fn keyed<S: Shim>(algorithm: &'static str, key: &[u8]) -> Result<Box<dyn KeyedMac>, MacError> {
    let error = |reason: String| MacError::Backend {
        backend: S::BACKEND,
        algorithm,
        reason,
    };
    let tag_len = super::algorithm(algorithm)
        .map(|a| a.tag_len)
        .ok_or_else(|| error("not a registered algorithm".to_string()))?;
    let name = CString::new(algorithm).map_err(|e| error(e.to_string()))?;
    let mut handle: *mut c_void = std::ptr::null_mut();
    // SAFETY: name is NUL-terminated, key is valid for its length, handle is writable; on success
    // the shim has put a new context there, which ShimMac then owns.
    unsafe { S::create(&name, key, tag_len, &mut handle) }
        .map_err(|why| error(format!("key setup: {why}")))?;
    let mac =
        ShimMac::<S>::new(handle).ok_or_else(|| error("key setup: no context".to_string()))?;
    Ok(Box::new(mac))
}

/// Key setup in a build without the backend's shim: the reason it is unavailable, as the error.
pub fn not_built(
    backend: &'static str,
    algorithm: &'static str,
    availability: Availability,
) -> Result<Box<dyn KeyedMac>, MacError> {
    let reason = match availability {
        Availability::Unavailable(why) => why,
        Availability::Available => "not built".to_string(),
    };
    Err(MacError::Backend {
        backend,
        algorithm,
        reason,
    })
}

/// A C-library backend's availability: available when its shim was built in, else the reason
/// `build.rs` recorded (`MACBENCH_<NAME>_MISSING`, passed in as `option_env!` gives it), else
/// "not built" with the package to install.
pub fn availability(
    built: bool,
    missing: Option<&'static str>,
    package: &str,
    library: &str,
) -> Availability {
    match missing {
        _ if built => Availability::Available,
        Some(reason) => Availability::Unavailable(reason.to_string()),
        None => Availability::Unavailable(format!(
            "not built: install {package} ({library}) and rebuild"
        )),
    }
}
