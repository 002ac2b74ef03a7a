//! Crypto++ backend: the system libcrypto++ (Debian's libcrypto++-dev) through a small C++ shim,
//! `csrc/cryptopp_shim.cpp`, through the one table of `csrc/macbench_shim.h` ([`super::shim`]): key a MAC
//! object by algorithm name, tag a message (nonce, message → tag), or stream it (begin/update/finish)
//! for the chunked self-test, and free it.
//!
//! Key setup happens once in the shim's `create` (AES key schedule, CMAC subkeys, VMAC's NH/poly/L3 keys, GHASH
//! tables); per message the shim only restarts the object — or, for VMAC and GMAC, resynchronises it with
//! the message's nonce. The benchmark's nonce is the schedule slot index (little-endian, see
//! the engine's hot loop), so every VMAC message derives a fresh pad (one AES call).
//!
//! Crypto++'s HMAC keeps the padded key, not the hashed ipad/opad states: it hashes both key blocks again
//! for every message (`Γ + 3` compressions per message in docs/methodology.md §6 terms, against OpenSSL's `Γ + 1`).
//! That is the library as shipped, and what this backend measures.
//!
//! `sw` and the ISA levels: Crypto++ picks AES-NI, CLMUL, SHA-NI and AVX code at each call from
//! exported globals (`CryptoPP::g_hasAESNI`, …). [`PROCESS_SWITCH`] clears those above the process's
//! rung ([`LADDER`]) first thing in that acceleration's child process, before it keys anything, so `sw`
//! and the levels `sse`, `avx`, `avx2` are run-time switches here too, with no second build of the
//! shim. Crypto++ 8.x has no AVX-512 code, so its `avx512` rows are unavailable ([`NO_AVX512`]); and
//! it tests AVX and AVX2 only outside the MACs macbench registers (see [`LEVELS_NOTE`]).
//!
//! Built only with `cfg(have_cryptopp)` (build.rs found the library); otherwise every entry is listed as
//! unavailable with the reason build.rs recorded.

use super::{
    Accel, Availability, Backend, Capability, Entry, IsaLevels, KeyParams, KeyedResult, MacError,
    ProcessSwitch,
};

/// One line per algorithm: `hw`, `sw` and the levels `sse`, `avx`, `avx2` (the same key function, run
/// where [`PROCESS_SWITCH`] is applied for that acceleration), and `avx512`, which refuses to key
/// ([`NO_AVX512`]). Its own macro, not [`crate::accel_entries!`], for that `avx512` entry; algorithm
/// families are expanded by [`crate::algorithm_names!`] as there.
macro_rules! entries {
    (@names $($alg:literal),*) => {
        &[
            $(Entry { algorithm: $alg, accel: Accel::Hw, new: |k, p| new($alg, k, p) },)*
            $(Entry { algorithm: $alg, accel: Accel::Sw, new: |k, p| new($alg, k, p) },)*
            $(Entry { algorithm: $alg, accel: Accel::Sse, new: |k, p| new($alg, k, p) },)*
            $(Entry { algorithm: $alg, accel: Accel::Avx, new: |k, p| new($alg, k, p) },)*
            $(Entry { algorithm: $alg, accel: Accel::Avx2, new: |k, p| new($alg, k, p) },)*
            $(Entry { algorithm: $alg, accel: Accel::Avx512, new: |_, _| no_avx512($alg) },)*
        ]
    };
    ($($item:tt),* $(,)?) => {
        $crate::algorithm_names!([entries] (@names) [] $($item),*)
    };
}

/// Why the `avx512` rows are unavailable: there is nothing to keep or clear.
pub const NO_AVX512: &str = "cryptopp: Crypto++ 8.x has no AVX-512 code (its cpu.h exports no \
     AVX-512 flag), so avx512 would be avx2 under another name; avx2 is its top level";

/// What `list` says of the levels: they are proven masks, and for these MACs they change nothing.
pub const LEVELS_NOTE: &str = "cryptopp: Crypto++ 8.7 tests AVX and AVX2 only in ChaCha and LSH \
     (libcrypto++.so.8 exports ChaCha_OperateKeystream_AVX2, LSH*_AVX2), none of them a MAC macbench \
     registers: its sse, avx and avx2 levels run the same code as hw (AES-NI, CLMUL, SHA-NI, SSE4.1 \
     BLAKE2); only sw differs";

fn no_avx512(algorithm: &'static str) -> KeyedResult {
    Err(MacError::Backend {
        backend: "cryptopp",
        algorithm,
        reason: NO_AVX512.to_string(),
    })
}

pub static BACKEND: Backend = Backend {
    name: "cryptopp",
    description: "system Crypto++ (libcrypto++) through csrc/cryptopp_shim.cpp; objects keyed once, restarted or resynchronised per message",
    version,
    availability,
    process_switch: Some(&PROCESS_SWITCH),
    isa_levels: IsaLevels::Offered(level_availability),
    entries: entries![
        "hmac-md5",
        "hmac-sha1",
        HMAC_SHA2,
        HMAC_SHA3,
        CMAC_AES,
        "cmac-twofish",
        "cmac-serpent",
        "cmac-rc6",
        "cbcmac-aes128",
        GMAC_AES,
        "poly1305",
        "blake2b-keyed",
        "blake2s-keyed",
        "siphash-2-4",
        "vmac-aes128-64",
        "vmac-aes128-128",
    ],
    ..Backend::DEFAULT_FACTS
};

crate::c_backend!(
    own_new,
    name: "cryptopp",
    cfg: have_cryptopp,
    table: macbench_shim_cryptopp,
    missing: "MACBENCH_CRYPTOPP_MISSING",
);

/// `Crypto++ 8.7.0`. Which code paths it picks here and in the switched processes is
/// [`PROCESS_SWITCH`]'s capability, which host facts add.
pub fn version() -> String {
    shim()
        .and_then(|s| s.fact("version"))
        .unwrap_or_else(|| "Crypto++ not built".to_string())
}

/// Crypto++ needs nothing in the environment: its globals are cleared in the running process, those
/// [`cleared`] names for the process's acceleration.
pub static PROCESS_SWITCH: ProcessSwitch = ProcessSwitch {
    accels: &[Accel::Sw, Accel::Sse, Accel::Avx, Accel::Avx2],
    env: |_| Vec::new(),
    apply: |accel| {
        let _ = clear_features(&cleared(accel));
    },
    check: check_switch,
    capability: || {
        BUILT.then(|| Capability {
            summary: imp::paths(),
            detail: serde_json::Value::from(imp::features().0),
        })
    },
    note: Some(LEVELS_NOTE),
};

/// The one definition of what each switched process clears (docs/methodology.md §5): Crypto++'s
/// feature flags ([`Features::NAMES`]) above the baseline, with the lowest acceleration that keeps
/// each; a process switched to `accel` clears every flag kept only from a higher rung. The crypto
/// extensions stay from `sse` up, as in OpenSSL's [`super::openssl::LADDER`]; SSE2, SSSE3, SSE4.1
/// and SSE4.2 stay everywhere, `sw` included (the baseline, and the SSE4.1 BLAKE2 code `sw` has always
/// run). No AVX-512 flag exists to clear. On aarch64 there are no levels: `sw` clears the Armv8
/// extensions, NEON stays.
#[cfg(not(target_arch = "aarch64"))]
pub const LADDER: &[(&str, Option<Accel>)] = &[
    ("aesni", Some(Accel::Sse)),
    ("clmul", Some(Accel::Sse)),
    ("sha", Some(Accel::Sse)),
    ("avx", Some(Accel::Avx)),
    ("avx2", Some(Accel::Avx2)),
];
#[cfg(target_arch = "aarch64")]
pub const LADDER: &[(&str, Option<Accel>)] = &[
    ("pmull", None),
    ("aes", None),
    ("sha1", None),
    ("sha2", None),
    ("sha512", None),
    ("sha3", None),
    ("sm3", None),
    ("sm4", None),
];

/// Each level's own flag: what the CPU must have for the level, and what its process must keep.
/// SSSE3 for `sse`, as for OpenSSL (Crypto++'s SSE paths below AES-NI test SSSE3 and SSE4.1).
const LEVEL_TOPS: &[(Accel, &str)] = &[
    (Accel::Sse, "ssse3"),
    (Accel::Avx, "avx"),
    (Accel::Avx2, "avx2"),
];

/// The flags a process switched to `accel` clears ([`LADDER`]); none for `hw`.
pub fn cleared(accel: Accel) -> Vec<&'static str> {
    super::switch::cleared_at(LADDER, accel)
}

/// The flag a level's process must still report; `None` for `hw`, `sw` and `avx512`.
pub fn level_top(accel: Accel) -> Option<&'static str> {
    LEVEL_TOPS
        .iter()
        .find(|(level, _)| *level == accel)
        .map(|&(_, name)| name)
}

/// Whether this CPU runs ISA level `level`, by Crypto++'s own detection in this process.
fn level_availability(level: Accel) -> Availability {
    if level == Accel::Avx512 {
        return Availability::Unavailable(NO_AVX512.to_string());
    }
    let Some(top) = level_top(level) else {
        return Availability::Unavailable(format!("{level} is no ISA level of cryptopp"));
    };
    let features = imp::features();
    if features.has(top) {
        Availability::Available
    } else {
        Availability::Unavailable(format!(
            "{level}: this CPU lacks {top} (Crypto++ reports {})",
            features.describe()
        ))
    }
}

/// The switch for `accel` took: none of [`cleared`] is left, and a level keeps its own flag.
fn check_switch(accel: Accel) -> Result<(), String> {
    if !BUILT {
        return Ok(());
    }
    let features = imp::features();
    let left: Vec<_> = cleared(accel)
        .into_iter()
        .filter(|n| features.has(n))
        .collect();
    if !left.is_empty() {
        return Err(format!(
            "Crypto++ still reports {left:?} after the {accel} switch"
        ));
    }
    match level_top(accel) {
        Some(top) if !features.has(top) => Err(format!(
            "Crypto++ lost {top} in the {accel} process ({}): it would not run its {accel} code",
            features.describe()
        )),
        _ => Ok(()),
    }
}

/// Instruction-set features Crypto++ uses now, and the AES/SHA code paths it selects ("AESNI", "C++"…).
pub fn code_paths() -> Option<String> {
    BUILT.then(imp::paths)
}

/// Clear Crypto++'s feature flags `names` ([`Features::NAMES`]) for this whole process. Only a
/// switched child calls it, before keying anything. Returns the features Crypto++ then reports.
pub fn clear_features(names: &[&str]) -> Option<Features> {
    let mask = Features::NAMES
        .iter()
        .enumerate()
        .filter(|(_, n)| names.contains(n))
        .fold(0u32, |m, (i, _)| m | 1 << i);
    BUILT.then(|| imp::clear_features(mask))
}

/// Crypto++'s view of this architecture's features (bits as `mbcpp_features` returns them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features(pub u32);

impl Features {
    /// Bit `i` is `NAMES[i]`.
    #[cfg(not(target_arch = "aarch64"))]
    pub const NAMES: &'static [&'static str] = &[
        "sse2", "ssse3", "sse4.1", "sse4.2", "aesni", "clmul", "sha", "avx", "avx2",
    ];
    #[cfg(target_arch = "aarch64")]
    pub const NAMES: &'static [&'static str] = &[
        "neon", "pmull", "aes", "sha1", "sha2", "sha512", "sha3", "sm3", "sm4",
    ];
    pub fn has(&self, name: &str) -> bool {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .is_some_and(|i| self.0 & (1 << i) != 0)
    }

    pub fn describe(&self) -> String {
        Self::NAMES
            .iter()
            .map(|n| format!("{}{n}", if self.has(n) { "+" } else { "-" }))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn new(algorithm: &'static str, key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    super::shim::keyed(shim(), "cryptopp", availability, algorithm, key)
}

/// The process switch's entry points, beyond the shim table: only this backend has them.
#[cfg(have_cryptopp)]
mod imp {
    use super::Features;
    use libc::{c_char, c_int, c_uint, size_t};
    use std::ffi::CStr;

    extern "C" {
        fn mbcpp_features() -> c_uint;
        fn mbcpp_clear_features(mask: c_uint) -> c_uint;
        fn mbcpp_provider(which: c_int, out: *mut c_char, out_len: size_t);
    }

    fn provider(which: c_int) -> String {
        let mut out = [0 as c_char; 64];
        // SAFETY: out has out.len() bytes; the shim NUL-terminates.
        unsafe {
            mbcpp_provider(which, out.as_mut_ptr(), out.len());
            CStr::from_ptr(out.as_ptr()).to_string_lossy().into_owned()
        }
    }

    pub fn paths() -> String {
        // SAFETY: no arguments; reads Crypto++'s feature globals (running detection if needed).
        let features = Features(unsafe { mbcpp_features() });
        format!(
            "{} (AES {}, SHA-1 {}, SHA-256 {}, SHA-512 {})",
            features.describe(),
            provider(0),
            provider(1),
            provider(2),
            provider(3)
        )
    }

    pub fn clear_features(mask: u32) -> Features {
        // SAFETY: writes Crypto++'s feature globals; called once, before any object is keyed.
        Features(unsafe { mbcpp_clear_features(mask) })
    }

    pub fn features() -> Features {
        // SAFETY: no arguments.
        Features(unsafe { mbcpp_features() })
    }
}

#[cfg(not(have_cryptopp))]
mod imp {
    use super::Features;

    pub fn paths() -> String {
        String::new()
    }

    pub fn clear_features(_: u32) -> Features {
        Features(0)
    }

    pub fn features() -> Features {
        Features(0)
    }
}
