//! DPDK cryptodev backend: a look-aside crypto device through its driver (Debian's libdpdk-dev,
//! DPDK 22.11), through `csrc/dpdk_shim.c` and the one shim table of `csrc/macbench_shim.h`.
//!
//! Why a device framework among libraries: the embedded study macbench reproduces is about how to
//! measure an accelerator through its driver, and DPDK's cryptodev is how Linux programs drive one
//! (Intel QAT, AMD CCP, Marvell cnxk, NXP CAAM and DPAA2 SEC, virtio-crypto) with the same API as its
//! software devices (`crypto_aesni_mb` over Intel ipsec-mb, `crypto_openssl`, `crypto_null`). A
//! message is an op (a descriptor) on a queue pair, the key is a session, and the device hands ops
//! back when it has done them; the dispatch modes map onto that (`single` = build op n + 1 after op n
//! returned; `burst:N`; `inflight:N`; `all` = descriptors built before the window, dispatched at once:
//! the shim's comment).
//!
//! The device is `MACBENCH_DPDK_DEVICE` (`--dpdk-device`; default `crypto_aesni_mb`); a software
//! device needs no hugepages and no PCI (EAL gets `--no-huge --no-pci --vdev …`), anything else is a
//! PCI address given to EAL with `--allow`, plus `MACBENCH_DPDK_EAL`'s arguments. EAL starts once per
//! process, at the first key setup or the first `list`; each keyed object holds one queue pair and one
//! session, so a run has at most as many sessions as the device has queue pairs (the refusal says so).
//! Which functions a device offers is its capability list: a function the device does not list is
//! refused at key setup, naming the device and its driver.
//!
//! What an offload costs the submitting core: the shim counts TSC cycles spent building ops, in
//! enqueue calls and in dequeue calls (polls included), and the engine reads them at the window's
//! edges ([`super::KeyedMac::offload`]).
//!
//! Built only with `cfg(have_dpdk)` (build.rs found libdpdk); otherwise every entry is listed as
//! unavailable with the reason build.rs recorded.

use super::{
    Backend, Batch, IsaLevels, KeyParams, KeyedMac, KeyedResult, MacError, Refused, TagResult,
};

pub static BACKEND: Backend = Backend {
    name: "dpdk",
    description: "a DPDK cryptodev device (default crypto_aesni_mb; --dpdk-device) through csrc/dpdk_shim.c: one op per message on the session's own queue pair",
    version,
    availability,
    isa_levels: IsaLevels::NotOffered(
        "dpdk: only hw (the device's driver picks its own code; a software device's library is the ipsec-mb or openssl backend)",
    ),
    length_limit,
    nonce_limit,
    key_limit,
    entries: crate::hw_entries![
        "hmac-md5",
        "hmac-sha1",
        HMAC_SHA2,
        "cmac-aes128",
        "xcbc-aes128-96",
        GMAC_AES,
        "eia3-zuc128",
        "uia2-snow3g",
    ],
    ..Backend::DEFAULT_FACTS
};

/// An op's data is one mbuf segment, whose length field is 16 bits; and `crypto_aesni_mb` runs
/// Intel ipsec-mb's jobs, which refuse HMAC, CMAC and XCBC messages over 2^16 − 2 bytes.
pub const MAX_MESSAGE: u64 = (1 << 16) - 2;

fn length_limit(_algorithm: &str) -> Option<super::LengthLimit> {
    Some(super::LengthLimit {
        max_bytes: MAX_MESSAGE,
        source: "one mbuf segment per op (16-bit data length), and crypto_aesni_mb's ipsec-mb \
                 job check (2^16 - 2 bytes); longer messages would need chained mbufs",
    })
}

/// AES-GMAC through cryptodev takes the 12-byte IV only (`iv.length` of the session; the other GCM
/// IV lengths need GHASH of the IV, which the auth-only op does not offer).
fn nonce_limit(algorithm: &str) -> Option<super::NonceLimit> {
    algorithm.starts_with("gmac-").then_some(super::NonceLimit {
        min: 12,
        max: 12,
        source: "DPDK cryptodev's AES-GMAC auth op: a 12-byte IV",
    })
}

/// The key lengths the device lists for the function (its capability list, read once): HMAC keys
/// longer than the block are not hashed by every driver (`crypto_aesni_mb` takes HMAC-MD5 keys of
/// 1–64 bytes), and none takes an empty key.
fn key_limit(algorithm: &str) -> Option<super::KeyLimit> {
    static KEYS: std::sync::OnceLock<Vec<(String, usize, usize)>> = std::sync::OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        let Some(shim) = shim() else {
            return Vec::new();
        };
        // The capability list is the device's: asking for it starts the device, as the key setup
        // this limit is checked before would (a device that does not start has no list, and its
        // key setup says why).
        if start().is_err() {
            return Vec::new();
        }
        shim.facts()
            .into_iter()
            .filter_map(|(k, v)| {
                let name = k.strip_prefix("key.")?.to_string();
                let (min, max) = v.split_once('-')?;
                Some((name, min.parse().ok()?, max.parse().ok()?))
            })
            .collect()
    });
    let &(_, min, max) = keys.iter().find(|(name, _, _)| name == algorithm)?;
    Some(super::KeyLimit {
        min,
        max,
        max_customization: None,
        source: "the device's capability list (rte_cryptodev_sym_capability_get)",
    })
}

crate::c_backend!(
    own_new,
    name: "dpdk",
    cfg: have_dpdk,
    table: macbench_shim_dpdk,
    missing: "MACBENCH_DPDK_MISSING",
);

/// Key setup through the shim; for HMAC the tag of the empty message comes from RustCrypto when
/// asked for: `crypto_aesni_mb` returns a wrong HMAC for it (the shim refuses the empty message on
/// that driver, [`WithEmptyTag`]). As ipsec-mb's HMAC-MD5 does, the empty message is then a constant
/// of the key; every non-empty message is the device's work, and the engine never times an empty one.
fn new(
    algorithm: &'static str,
    key: &[u8],
    // No function of a device takes parameters (KMAC's are the only ones).
    _params: KeyParams<'_>,
) -> KeyedResult {
    let device = super::shim::keyed(shim(), "dpdk", availability, algorithm, key)?;
    if !algorithm.starts_with("hmac-") {
        return Ok(device);
    }
    // Found at key setup, so a missing reference is said here, not at the first empty message.
    let reference = super::rustcrypto::BACKEND
        .entries
        .iter()
        .find(|e| e.algorithm == algorithm && e.accel == super::Accel::Hw)
        .ok_or_else(|| MacError::Backend {
            backend: "dpdk",
            algorithm,
            reason: "no RustCrypto HMAC for the empty message's tag".to_string(),
        })?;
    Ok(Box::new(WithEmptyTag {
        device,
        reference,
        key: key.to_vec(),
    }))
}

/// A device's keyed HMAC object with its key at hand: `tag_into` (known answers, `tag`,
/// verification) answers an empty message the device refuses with the key's constant, computed
/// through RustCrypto when asked; every other message, and every batch the engine times, goes to
/// the device. A new key ([`KeyedMac::rekey`]) replaces the device's session and the key kept here.
struct WithEmptyTag {
    device: Box<dyn KeyedMac>,
    /// RustCrypto's HMAC of the same algorithm.
    reference: &'static super::Entry,
    key: Vec<u8>,
}

impl WithEmptyTag {
    /// The empty message's tag under the current key into `tag` (a prefix for a shorter tag).
    fn empty_tag(&self, tag: &mut [u8]) -> Result<(), MacError> {
        let algorithm = self.reference.algorithm;
        (self.reference.new)(&self.key, KeyParams::default())?
            .tag_into(&[], &[], tag)
            .map_err(|e| MacError::Backend {
                backend: "dpdk",
                algorithm,
                reason: format!("the empty message's tag: {e}"),
            })
    }
}

impl KeyedMac for WithEmptyTag {
    fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        match self.device.tag_into(nonce, msg, tag) {
            Err(refused) if msg.is_empty() => self.empty_tag(tag).map_err(|e| Refused {
                what: refused.what,
                reason: e.to_string(),
            }),
            other => other,
        }
    }

    // Every path the engine times goes to the device, which refuses an empty HMAC message there:
    // a run of 0-byte messages is refused with that reason, never timed on the key's constant.
    fn tag_each(&mut self, batch: &mut Batch<'_>) -> TagResult {
        self.device.tag_each(batch)
    }

    fn tag_batch(&mut self, batch: &mut Batch<'_>) -> TagResult {
        self.device.tag_batch(batch)
    }

    fn tag_inflight(&mut self, batch: &mut Batch<'_>, depth: usize) -> TagResult {
        self.device.tag_inflight(batch, depth)
    }

    fn tag_prebuilt(&mut self, batch: &mut Batch<'_>) -> TagResult {
        self.device.tag_prebuilt(batch)
    }

    fn offload(&self) -> Option<super::OffloadCounters> {
        self.device.offload()
    }

    fn rekey(&mut self, key: &[u8]) -> Option<TagResult> {
        let done = self.device.rekey(key)?;
        if done.is_ok() {
            // No allocation once the capacity is there: the engine rekeys with keys of one length.
            self.key.clear();
            self.key.extend_from_slice(key);
        }
        Some(done)
    }
}

/// Whether `function` runs on the look-aside device (this backend's), so that callers ask by the
/// registry's own value rather than by name.
pub fn drives(function: &super::Function) -> bool {
    std::ptr::eq(function.backend, &BACKEND)
}

/// Start DPDK's EAL and the device now, as the first key setup would: `list` and a run of dpdk
/// functions do, so that their host facts name the driver. `Err` with the reason it did not start;
/// `Ok` when the backend is not built (nothing to start).
pub fn start() -> Result<(), String> {
    imp::start()
}

#[cfg(have_dpdk)]
mod imp {
    extern "C" {
        fn macbench_dpdk_start(why: *mut libc::c_char, why_len: libc::size_t) -> libc::c_int;
    }

    pub fn start() -> Result<(), String> {
        let mut why = [0 as libc::c_char; 512];
        // SAFETY: the shim writes at most why_len bytes, NUL-terminated; setup is under its lock.
        let status = unsafe { macbench_dpdk_start(why.as_mut_ptr(), why.len()) };
        if status == 0 {
            return Ok(());
        }
        why[why.len() - 1] = 0;
        // SAFETY: NUL-terminated above.
        let text = unsafe { std::ffi::CStr::from_ptr(why.as_ptr()) };
        Err(text.to_string_lossy().into_owned())
    }
}

#[cfg(not(have_dpdk))]
mod imp {
    pub fn start() -> Result<(), String> {
        Ok(())
    }
}

/// The device's queue pairs, once it has started ([`start`]): at most that many sessions each key
/// their own. `None` when the backend is not built or the device did not start.
pub fn queue_pairs() -> Option<usize> {
    shim()?.fact("queue_pairs")?.parse().ok()
}

/// `DPDK 22.11.11 (device crypto_aesni_mb, driver crypto_aesni_mb, 8 queue pairs of 2048
/// descriptors)`, or the reason
/// the device did not start.
pub fn version() -> String {
    super::shim::version(shim(), "DPDK", |s| {
        let device = s.fact("device").unwrap_or_default();
        match (s.fact("driver"), s.fact("error")) {
            (Some(driver), _) => Some(format!(
                "device {device}, driver {driver}, {} queue pairs of {} descriptors",
                s.fact("queue_pairs").unwrap_or_default(),
                s.fact("queue_depth").unwrap_or_default()
            )),
            (None, Some(error)) => Some(format!("device {device} did not start: {error}")),
            (None, None) if s.fact("state").is_some() => Some(format!(
                "device {device}, not started in this process: no dpdk function keyed"
            )),
            (None, None) => Some(format!("device {device}")),
        }
    })
}
