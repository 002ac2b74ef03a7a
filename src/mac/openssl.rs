//! OpenSSL 3 backend (libcrypto via `openssl-sys`): each entry is the call sequence an application that
//! tags many messages under one key would write, with key setup done once where the API allows it.
//!
//! Most entries use `EVP_MAC`: one `EVP_MAC_CTX` is created and keyed at key setup, and per message it is
//! re-initialised with a NULL key, which OpenSSL 3 documents as "reuse the key already set". What that
//! re-initialisation costs differs by MAC (cycles at 16 bytes measured in C on this machine, OpenSSL 3.0.22):
//!
//! - HMAC restores the precomputed ipad/opad digest states (a state copy, no compression): ~400 cycles for
//!   HMAC-SHA256. CMAC keeps the cipher schedule and subkeys and resets the chaining value: ~240 cycles.
//!   SipHash copies its keyed state: ~90 cycles. Nothing key-dependent is redone.
//! - KMAC re-absorbs `bytepad(encode_string("KMAC") || encode_string(S))` and `bytepad(encode_string(K))`,
//!   and keyed BLAKE2 re-compresses the key block: key-dependent work per message, which RustCrypto avoids
//!   by cloning a keyed state. OpenSSL 3.0 can snapshot a keyed state only through `EVP_MAC_CTX_dup`,
//!   which allocates a context (and a digest context) per message; that breaks [`KeyedMac`]'s
//!   no-allocation rule, so the re-initialisation stays. The price, for the record: dup, update, final
//!   and free cost ~1,070 cycles for KMAC128 at 16 bytes against ~2,150 re-initialising, ~400 against ~630
//!   for BLAKE2b and ~340 against ~520 for BLAKE2s; at 1500 bytes the two are within 10 %.
//! - Poly1305 is a one-time authenticator: OpenSSL refuses to re-initialise it without a key, so the key
//!   is passed again each message (32 bytes of setup, as a protocol with a fresh key per message does).
//!
//! GMAC is not taken from `EVP_MAC` but from the AES-GCM `EVP_CIPHER`s, as IPsec and TLS code computes
//! it (see [`GcmGmac`] for why). CBC-MAC is not an EVP_MAC either: it is built from the `aes-128-cbc`
//! cipher with a zero IV reset per message, keeping only the last ciphertext block; a scratch buffer of
//! fixed size receives the discarded ciphertext.

use super::{
    Accel, Availability, Backend, Capability, IsaLevels, KeyParams, KeyedMac, KeyedResult,
    MacError, ProcessSwitch, Refused, TagResult,
};
use libc::{c_char, c_int, c_void, size_t};
use openssl_sys as ffi;
use std::ffi::CStr;
use std::ptr;

pub static BACKEND: Backend = Backend {
    name: "openssl",
    description: "system OpenSSL 3 libcrypto, EVP_MAC API (contexts reused across messages); GMAC through the AES-GCM EVP_CIPHERs",
    version,
    availability,
    process_switch: Some(&PROCESS_SWITCH),
    isa_levels: IsaLevels::Offered(level_availability),
    key_limit,
    // Every algorithm's `hw`, `sw` and four ISA-level entries, keyed by [`new`]. All but `hw` differ only
    // in running where [`PROCESS_SWITCH`] is applied for their acceleration (`OPENSSL_ia32cap` clearing
    // the bits of [`LADDER`] above the level; on aarch64 only `sw`, `OPENSSL_armcap` without the Armv8
    // AES, PMULL, SHA and SVE bits), which the registry arranges through its isolation layer.
    entries: crate::accel_entries![
        [Hw, Sw, Sse, Avx, Avx2, Avx512]
        HMAC_ALL,
        CMAC_AES,
        "cbcmac-aes128",
        GMAC_AES,
        "poly1305",
        "kmac128",
        "kmac256",
        "blake2b-keyed",
        "blake2s-keyed",
        "siphash-2-4",
    ],
    ..Backend::DEFAULT_FACTS
};

/// Key setup of one of this backend's algorithms: the `EVP_MAC` and its digest or cipher, or GMAC and
/// CBC-MAC from the AES `EVP_CIPHER`s.
fn new(algorithm: &'static str, key: &[u8], params: KeyParams<'_>) -> KeyedResult {
    let (mac_name, setting) = match algorithm {
        "hmac-md5" => ("HMAC", Some(("digest", "MD5"))),
        "hmac-sha1" => ("HMAC", Some(("digest", "SHA1"))),
        "hmac-sha224" => ("HMAC", Some(("digest", "SHA2-224"))),
        "hmac-sha256" => ("HMAC", Some(("digest", "SHA2-256"))),
        "hmac-sha384" => ("HMAC", Some(("digest", "SHA2-384"))),
        "hmac-sha512" => ("HMAC", Some(("digest", "SHA2-512"))),
        "hmac-sha512-224" => ("HMAC", Some(("digest", "SHA2-512/224"))),
        "hmac-sha512-256" => ("HMAC", Some(("digest", "SHA2-512/256"))),
        "hmac-sha3-224" => ("HMAC", Some(("digest", "SHA3-224"))),
        "hmac-sha3-256" => ("HMAC", Some(("digest", "SHA3-256"))),
        "hmac-sha3-384" => ("HMAC", Some(("digest", "SHA3-384"))),
        "hmac-sha3-512" => ("HMAC", Some(("digest", "SHA3-512"))),
        "cmac-aes128" => ("CMAC", Some(("cipher", "AES-128-CBC"))),
        "cmac-aes192" => ("CMAC", Some(("cipher", "AES-192-CBC"))),
        "cmac-aes256" => ("CMAC", Some(("cipher", "AES-256-CBC"))),
        "cbcmac-aes128" => return CbcMac::new_aes128(key, params),
        "gmac-aes128" => return GcmGmac::keyed(algorithm, GCM_AES128, key),
        "gmac-aes192" => return GcmGmac::keyed(algorithm, GCM_AES192, key),
        "gmac-aes256" => return GcmGmac::keyed(algorithm, GCM_AES256, key),
        "poly1305" => ("POLY1305", None),
        "kmac128" => ("KMAC-128", None),
        "kmac256" => ("KMAC-256", None),
        "blake2b-keyed" => ("BLAKE2BMAC", None),
        "blake2s-keyed" => ("BLAKE2SMAC", None),
        "siphash-2-4" => ("SIPHASH", None),
        _ => {
            return Err(MacError::Backend {
                backend: "openssl",
                algorithm,
                reason: "not an algorithm of this backend".to_string(),
            })
        }
    };
    EvpMac::keyed(algorithm, mac_name, setting, key, params)
}

// Parameter constructors that openssl-sys does not declare (OpenSSL 3 public API, <openssl/params.h>).
extern "C" {
    fn OSSL_PARAM_construct_utf8_string(
        key: *const c_char,
        buf: *mut c_char,
        bsize: size_t,
    ) -> ffi::OSSL_PARAM;
    fn OSSL_PARAM_construct_size_t(key: *const c_char, buf: *mut size_t) -> ffi::OSSL_PARAM;
    // <openssl/crypto.h>; openssl-sys does not declare it.
    fn OPENSSL_info(kind: c_int) -> *const c_char;
}

/// `OPENSSL_INFO_CPU_SETTINGS` in <openssl/crypto.h>.
const OPENSSL_INFO_CPU_SETTINGS: c_int = 1008;

/// The libcrypto version string, e.g. "OpenSSL 3.0.19 27 Jan 2026". What it uses here and in the
/// switched processes is [`PROCESS_SWITCH`]'s capability, which host facts add.
pub fn version() -> String {
    openssl::version::version().to_string()
}

/// The environment variable libcrypto reads its CPU capabilities from on this architecture.
pub const CAP_ENV: &str = if cfg!(target_arch = "aarch64") {
    "OPENSSL_armcap"
} else {
    "OPENSSL_ia32cap"
};

/// libcrypto reads [`CAP_ENV`] once, when it initialises: each switched process is started with
/// [`mask_env`] for its acceleration (x86-64) or [`arm_software_only_env`] (aarch64, `sw` only) in its
/// environment, and refuses to run unless libcrypto then reports the level's bits as [`check_cpu_settings`]
/// requires.
pub static PROCESS_SWITCH: ProcessSwitch = ProcessSwitch {
    accels: SWITCHED_ACCELS,
    env: switch_env,
    apply: |_| {},
    check: |accel| check_cpu_settings(cpu_settings(), accel),
    capability: || capability_of(cpu_settings()),
    note: None,
};

/// What [`PROCESS_SWITCH`] gives: `sw` and the four ISA levels.
pub const SWITCHED_ACCELS: &[Accel] = &[
    Accel::Sw,
    Accel::Sse,
    Accel::Avx,
    Accel::Avx2,
    Accel::Avx512,
];

/// The environment of `accel`'s process: [`mask_env`] on x86-64, [`arm_software_only_env`] on aarch64.
/// Every library in that process that reads [`CAP_ENV`] (this libcrypto, the vendored `openssl4`,
/// AWS-LC) takes the same value.
pub fn switch_env(accel: Accel) -> Vec<(&'static str, String)> {
    let value = if cfg!(target_arch = "aarch64") {
        arm_software_only_env()
    } else {
        mask_env(accel)
    };
    vec![(CAP_ENV, value)]
}

/// A libcrypto's capability report for the record, from its `OPENSSL_INFO_CPU_SETTINGS` text.
pub fn capability_of(settings: Option<String>) -> Option<Capability> {
    let settings = settings?;
    if cfg!(target_arch = "aarch64") {
        ArmCap::parse(&settings).map(|cap| capability(cap.describe(), &cap))
    } else {
        Ia32Cap::parse(&settings).map(|cap| capability(cap.describe(), &cap))
    }
}

/// A capability report: the one-line summary and the word(s) themselves for the record.
fn capability(summary: String, detail: &impl serde::Serialize) -> Capability {
    Capability {
        summary,
        detail: serde_json::to_value(detail).unwrap_or_default(),
    }
}

/// The switch for `accel` is in effect: libcrypto reports none of the bits [`cleared`] clears and,
/// for a level, still reports the level's own extension ([`level_top`]); on aarch64 (`sw` only)
/// none of [`ARM_SOFTWARE_ONLY_MASK`]; elsewhere there is no capability vector to mask.
///
/// `settings` is a libcrypto's `OPENSSL_INFO_CPU_SETTINGS` text: this one's ([`cpu_settings`]) or the
/// vendored copy's, which reads the same variable.
pub fn check_cpu_settings(settings: Option<String>, accel: Accel) -> Result<(), String> {
    if cfg!(target_arch = "x86_64") {
        let cap = settings
            .as_deref()
            .and_then(Ia32Cap::parse)
            .ok_or("libcrypto reports no capability vector")?;
        let left = cap.still_set(accel);
        if !left.is_empty() {
            return Err(format!(
                "the {accel} mask is not in effect: libcrypto still reports {} \
                 ({CAP_ENV} must be {} in the environment; this command is internal)",
                left.join(", "),
                mask_env(accel)
            ));
        }
        return match level_top(accel) {
            Some((name, lv, bit)) if !cap.has(lv, bit) => Err(format!(
                "the {accel} process lost {name} ({}): libcrypto would not run its {accel} code",
                cap.describe()
            )),
            _ => Ok(()),
        };
    }
    if cfg!(target_arch = "aarch64") {
        if accel != Accel::Sw {
            return Err(super::NO_ISA_LEVELS_HERE.to_string());
        }
        let cap = settings
            .as_deref()
            .and_then(ArmCap::parse)
            .ok_or("libcrypto reports no capability vector")?;
        let left = cap.extensions_left();
        if left.is_empty() {
            return Ok(());
        }
        return Err(format!(
            "the sw mask is not in effect: libcrypto still reports {} \
             ({CAP_ENV} must be the detected bits without them; this command is internal)",
            left.join(", ")
        ));
    }
    Ok(())
}

/// What `OPENSSL_info(OPENSSL_INFO_CPU_SETTINGS)` reports: `[CPUINFO: ]OPENSSL_ia32cap=…` on x86,
/// `OPENSSL_armcap=0x…` on ARM, each followed by ` env:<value>` when the variable was set.
fn cpu_settings() -> Option<String> {
    // SAFETY: OPENSSL_info returns NULL or a pointer to a static NUL-terminated string.
    unsafe {
        let p = OPENSSL_info(OPENSSL_INFO_CPU_SETTINGS);
        if p.is_null() {
            return None;
        }
        Some(CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

/// The ARM capability word libcrypto uses (`OPENSSL_armcap_P`, after any `OPENSSL_armcap` value).
pub fn armcap() -> Option<ArmCap> {
    ArmCap::parse(&cpu_settings()?)
}

/// libcrypto's ARM capability word, `OPENSSL_armcap_P` (bits of OpenSSL's `crypto/arm_arch.h`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArmCap {
    pub bits: u32,
    /// The `OPENSSL_armcap` environment value libcrypto applied, if any.
    pub env: Option<String>,
}

/// What `--accel sw` switches off on ARM, with `crypto/arm_arch.h`'s bit numbers: the Armv8
/// cryptographic extensions and the wide vector units (as AVX is on x86). NEON (ASIMD, bit 0) stays:
/// it is the baseline of every aarch64 core, as SSE2/SSSE3 are of x86-64, and OpenSSL's bit-sliced
/// and vector-permute AES use it without any AES instruction.
pub const ARM_SOFTWARE_ONLY_MASK: &[(&str, u32)] = &[
    ("aes", 2),
    ("sha1", 3),
    ("sha256", 4),
    ("pmull", 5),
    ("sha512", 6),
    ("sm3", 9),
    ("sm4", 10),
    ("sha3", 11),
    ("unroll8-eor3", 12),
    ("sve", 13),
    ("sve2", 14),
    ("sha3-worth-using", 15),
    ("unroll12-eor3", 16),
];

/// Bits shown by [`ArmCap::describe`].
const ARM_SHOWN: &[(&str, u32)] = &[
    ("neon", 0),
    ("aes", 2),
    ("pmull", 5),
    ("sha1", 3),
    ("sha256", 4),
    ("sha512", 6),
    ("sha3", 11),
];

/// The bit the software-only word keeps: NEON (ASIMD), the aarch64 baseline.
pub const ARM_SOFTWARE_ONLY_KEEPS: u32 = 1 << 0;

/// The `OPENSSL_armcap` value for the software-only process: libcrypto takes the variable as the
/// whole word (not a mask), so it is this process's word reduced to NEON, or 0 (nothing, not even
/// NEON) when this process cannot read its word.
///
/// Why NEON alone and not "the word without [`ARM_SOFTWARE_ONLY_MASK`]": AWS-LC, linked into the same
/// child, reads the same variable with the same syntax but its own bit layout. The two agree on bits
/// 0–6 and 11 (NEON, AES, SHA-1, SHA-256, PMULL, SHA-512, SHA-3) only; OpenSSL's bit 7 (`ARMV8_CPUID`,
/// "may read MIDR" for micro-architecture tuning) is AWS-LC's `ARMV8_NEOVERSE_N1`, and AWS-LC aborts the
/// process when the word asks for a bit its own detection did not find ("Fatal Error: HW capability
/// found: 0x2087D, but HW capability requested: 0x81"). The tuning bits only choose among the
/// extension code paths this word switches off, so nothing software-only is lost, and both libraries
/// run their NEON/scalar code.
pub fn arm_software_only_env() -> String {
    format!(
        "{:#x}",
        armcap().map_or(0, |cap| cap.bits & ARM_SOFTWARE_ONLY_KEEPS)
    )
}

/// The words after `name` (`OPENSSL_armcap=`) in a `[CPUINFO: ]name…[ env:…]` line, and the
/// ` env:` setting if there is one: what [`ArmCap::parse`] and [`Ia32Cap::parse`] both read.
fn capability_line<'a>(text: &'a str, name: &str) -> Option<(&'a str, Option<String>)> {
    let rest = &text[text.find(name)? + name.len()..];
    Some(match rest.split_once(" env:") {
        Some((words, env)) => (words, Some(env.trim().to_string())),
        None => (rest.trim(), None),
    })
}

impl ArmCap {
    /// Parse `[CPUINFO: ]OPENSSL_armcap=0x…[ env:…]`.
    pub fn parse(text: &str) -> Option<ArmCap> {
        let (word, env) = capability_line(text, "OPENSSL_armcap=")?;
        Some(ArmCap {
            bits: u32::from_str_radix(word.trim().trim_start_matches("0x"), 16).ok()?,
            env,
        })
    }

    pub fn has(&self, bit: u32) -> bool {
        self.bits & (1 << bit) != 0
    }

    /// Names of the [`ARM_SOFTWARE_ONLY_MASK`] bits still set (empty when the sw switch took effect).
    pub fn extensions_left(&self) -> Vec<&'static str> {
        ARM_SOFTWARE_ONLY_MASK
            .iter()
            .filter(|&&(_, bit)| self.has(bit))
            .map(|&(name, _)| name)
            .collect()
    }

    /// `OPENSSL_armcap=0x… (+neon +aes -sha512 …)`.
    pub fn describe(&self) -> String {
        let flags: Vec<String> = ARM_SHOWN
            .iter()
            .map(|&(name, bit)| format!("{}{name}", if self.has(bit) { "+" } else { "-" }))
            .collect();
        format!("OPENSSL_armcap={:#x} ({})", self.bits, flags.join(" "))
    }
}

/// The x86 capability vector libcrypto uses, as `OPENSSL_info(OPENSSL_INFO_CPU_SETTINGS)` reports it:
/// `OPENSSL_ia32cap=0x<LV0>:0x<LV1>` (after any `OPENSSL_ia32cap` environment mask) ` env:<mask>`.
/// This is the public API over the internal `OPENSSL_ia32cap_P`, which Debian's libcrypto does not export.
pub fn ia32cap() -> Option<Ia32Cap> {
    Ia32Cap::parse(&cpu_settings()?)
}

/// OpenSSL's first two logical capability vectors (OPENSSL_ia32cap(3)): LV0 = CPUID(1).EDX | ECX << 32,
/// LV1 = CPUID(7,0).EBX | ECX << 32.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ia32Cap {
    pub lv0: u64,
    pub lv1: u64,
    /// The `OPENSSL_ia32cap` environment value libcrypto applied, if any.
    pub env: Option<String>,
}

/// A named capability bit: (name, logical vector, bit).
pub type CapBit = (&'static str, usize, u32);

/// The one definition of what each switched process clears (docs/methodology.md §5): every bit
/// OpenSSL's x86-64 code tests above the baseline, with OPENSSL_ia32cap(3)'s numbers, and the lowest
/// acceleration that keeps it. A process switched to `accel` clears each bit kept only from a higher
/// rung (`sw` < `sse` < `avx` < `avx2` < `avx512`); `None` is cleared at every rung (only `hw` keeps it).
///
/// - The crypto extensions (AES-NI, PCLMULQDQ, SHA) are kept from `sse` up, as ipsec-mb's SSE manager
///   uses AES-NI and SHA-NI: a level is a vector width, and only `sw` is the portable code.
/// - BMI1 and BMI2 belong to the `avx2` rung: they came with AVX2 (Haswell, x86-64-v3), ipsec-mb's
///   AVX2 manager needs BMI2, and OpenSSL's AVX2 SHA-1/SHA-256 code is taken only with AVX2, BMI1 and
///   BMI2 together, so an `avx2` without them would fall back to the AVX code. FMA likewise (AVX2
///   generation); F16C with AVX. OpenSSL's MAC code uses neither; they are cleared so a level looks
///   like a CPU of that generation.
/// - ADX, MOVBE, RDRAND/RDSEED are kept everywhere, `sw` included: scalar extensions, used by
///   OpenSSL's bignum and RNG code, which no MAC reaches.
/// - SSE2, SSSE3 and SSE4.x stay everywhere (x86-64's baseline and OpenSSL's constant-time
///   vector-permute AES, which uses no AES instruction).
/// - VAES and VPCLMULQDQ go with AVX-512: OpenSSL uses them only together with it (its VAES AES-GCM
///   code, from 3.1 on, needs AVX512F, BW and VL as well).
/// - XOP (AMD family 15h) is an alternative to the ladder's paths, not a rung: off at every level.
pub const LADDER: &[(CapBit, Option<Accel>)] = &[
    (("pclmulqdq", 0, 33), Some(Accel::Sse)),
    (("aesni", 0, 57), Some(Accel::Sse)),
    (("sha", 1, 29), Some(Accel::Sse)),
    (("avx", 0, 60), Some(Accel::Avx)),
    (("f16c", 0, 61), Some(Accel::Avx)),
    (("fma", 0, 44), Some(Accel::Avx2)),
    (("bmi1", 1, 3), Some(Accel::Avx2)),
    (("avx2", 1, 5), Some(Accel::Avx2)),
    (("bmi2", 1, 8), Some(Accel::Avx2)),
    (("avx512f", 1, 16), Some(Accel::Avx512)),
    (("avx512dq", 1, 17), Some(Accel::Avx512)),
    (("avx512ifma", 1, 21), Some(Accel::Avx512)),
    (("avx512pf", 1, 26), Some(Accel::Avx512)),
    (("avx512er", 1, 27), Some(Accel::Avx512)),
    (("avx512cd", 1, 28), Some(Accel::Avx512)),
    (("avx512bw", 1, 30), Some(Accel::Avx512)),
    (("avx512vl", 1, 31), Some(Accel::Avx512)),
    (("avx512vbmi", 1, 32 + 1), Some(Accel::Avx512)),
    (("avx512vbmi2", 1, 32 + 6), Some(Accel::Avx512)),
    (("vaes", 1, 32 + 9), Some(Accel::Avx512)),
    (("vpclmulqdq", 1, 32 + 10), Some(Accel::Avx512)),
    (("avx512vnni", 1, 32 + 11), Some(Accel::Avx512)),
    (("avx512bitalg", 1, 32 + 12), Some(Accel::Avx512)),
    (("avx512vpopcntdq", 1, 32 + 14), Some(Accel::Avx512)),
    (("xop", 0, 43), None),
];

/// Each level's own extension, as OpenSSL's code paths test it: what the CPU must have for the
/// level to be available, and what the level's process must still report. SSSE3 for `sse` (OpenSSL's
/// SSE SHA and vector-permute AES paths test it; it has no SSE4 path).
const LEVEL_TOPS: &[(Accel, CapBit)] = &[
    (Accel::Sse, ("ssse3", 0, 41)),
    (Accel::Avx, ("avx", 0, 60)),
    (Accel::Avx2, ("avx2", 1, 5)),
    (Accel::Avx512, ("avx512f", 1, 16)),
];

/// The bits a process switched to `accel` clears ([`LADDER`]); none for `hw`.
pub fn cleared(accel: Accel) -> Vec<CapBit> {
    super::switch::cleared_at(LADDER, accel)
}

/// The extension a level's process must still report; `None` for `hw` and `sw`.
pub fn level_top(accel: Accel) -> Option<CapBit> {
    LEVEL_TOPS
        .iter()
        .find(|(level, _)| *level == accel)
        .map(|&(_, bit)| bit)
}

/// Bits shown by `describe` (the ones MAC code paths test).
const SHOWN: &[CapBit] = &[
    ("ssse3", 0, 41),
    ("pclmulqdq", 0, 33),
    ("aesni", 0, 57),
    ("avx", 0, 60),
    ("avx2", 1, 5),
    ("bmi2", 1, 8),
    ("sha", 1, 29),
    ("avx512f", 1, 16),
    ("vaes", 1, 32 + 9),
    ("vpclmulqdq", 1, 32 + 10),
];

/// The `OPENSSL_ia32cap` value that clears [`cleared`]`(accel)`: `~LV0mask:~LV1mask` (OpenSSL ANDs
/// the detected vectors with a `~`-prefixed value, so nothing the CPU lacks is switched on).
pub fn mask_env(accel: Accel) -> String {
    let mut mask = [0u64; 2];
    for (_, lv, bit) in cleared(accel) {
        mask[lv] |= 1 << bit;
    }
    format!("~{:#x}:~{:#x}", mask[0], mask[1])
}

/// Whether this CPU runs ISA level `level`, by libcrypto's own view (this process's capability
/// vector): the level's own extension must be there, or the row names what is missing.
fn level_availability(level: Accel) -> Availability {
    level_availability_of(cpu_settings(), level)
}

/// [`level_availability`] by a given libcrypto's report (`OPENSSL_INFO_CPU_SETTINGS` text).
pub fn level_availability_of(settings: Option<String>, level: Accel) -> Availability {
    let Some((name, lv, bit)) = level_top(level) else {
        return Availability::Unavailable(format!("{level} is no ISA level of openssl"));
    };
    match settings.as_deref().and_then(Ia32Cap::parse) {
        Some(cap) if cap.has(lv, bit) => Availability::Available,
        Some(cap) => Availability::Unavailable(format!(
            "{level}: this CPU lacks {name} (libcrypto reports {})",
            cap.describe()
        )),
        None => Availability::Unavailable("libcrypto reports no capability vector".to_string()),
    }
}

impl Ia32Cap {
    /// Parse `[CPUINFO: ]OPENSSL_ia32cap=0x…:0x…[ env:…]`.
    pub fn parse(text: &str) -> Option<Ia32Cap> {
        let (vectors, env) = capability_line(text, "OPENSSL_ia32cap=")?;
        let mut parts = vectors.split(':');
        let hex =
            |s: Option<&str>| u64::from_str_radix(s?.trim().trim_start_matches("0x"), 16).ok();
        Some(Ia32Cap {
            lv0: hex(parts.next())?,
            lv1: hex(parts.next()).unwrap_or(0),
            env,
        })
    }

    pub fn has(&self, lv: usize, bit: u32) -> bool {
        let v = if lv == 0 { self.lv0 } else { self.lv1 };
        v & (1 << bit) != 0
    }

    /// Names of the bits a process switched to `accel` must have cleared that are still set (empty
    /// when the switch took effect).
    pub fn still_set(&self, accel: Accel) -> Vec<&'static str> {
        cleared(accel)
            .into_iter()
            .filter(|&(_, lv, bit)| self.has(lv, bit))
            .map(|(name, _, _)| name)
            .collect()
    }

    /// `OPENSSL_ia32cap=0x…:0x… (+aesni -avx2 …)`.
    pub fn describe(&self) -> String {
        let flags: Vec<String> = SHOWN
            .iter()
            .map(|&(name, lv, bit)| format!("{}{name}", if self.has(lv, bit) { "+" } else { "-" }))
            .collect();
        format!(
            "OPENSSL_ia32cap={:#x}:{:#x} ({})",
            self.lv0,
            self.lv1,
            flags.join(" ")
        )
    }
}

fn availability() -> Availability {
    if openssl::version::number() >= 0x3000_0000 {
        Availability::Available
    } else {
        Availability::Unavailable(format!(
            "EVP_MAC needs OpenSSL 3; this is {}",
            openssl::version::version()
        ))
    }
}

/// The last OpenSSL error as text (drains the thread's error queue).
fn last_error() -> String {
    let stack = openssl::error::ErrorStack::get();
    if stack.errors().is_empty() {
        "unknown OpenSSL error".to_string()
    } else {
        stack.to_string()
    }
}

fn error(algorithm: &'static str, what: &str) -> MacError {
    MacError::Backend {
        backend: "openssl",
        algorithm,
        reason: format!("{what}: {}", last_error()),
    }
}

/// The refusal of one `len`-byte message, with the library's reason (its error queue, drained here so
/// it does not grow). Out of line: the hot paths only branch to it.
#[cold]
#[inline(never)]
fn refused_message(len: usize) -> Refused {
    Refused::message(len, format!("EVP_MAC: {}", last_error()))
}

/// A new `EVP_CIPHER_CTX` for `algorithm`'s key setup (CBC-MAC's and GMAC's), or the error naming
/// the call that failed. The caller owns it and frees it (their `Drop`).
fn new_cipher_ctx(algorithm: &'static str) -> Result<*mut ffi::EVP_CIPHER_CTX, MacError> {
    // SAFETY: EVP_CIPHER_CTX_new takes nothing and returns a new context or NULL.
    let ctx = unsafe { ffi::EVP_CIPHER_CTX_new() };
    if ctx.is_null() {
        return Err(error(algorithm, "EVP_CIPHER_CTX_new"));
    }
    Ok(ctx)
}

/// A keyed `EVP_MAC_CTX`.
struct EvpMac {
    ctx: *mut ffi::EVP_MAC_CTX,
    /// Kept only for MACs OpenSSL will not re-initialise without it (Poly1305).
    rekey_each_message: Option<Vec<u8>>,
    tag_len: usize,
}

// SAFETY: an EVP_MAC_CTX is not shared; each EvpMac owns its context and is used by one thread at a time
// (`Send` moves ownership, it never aliases).
unsafe impl Send for EvpMac {}

impl Drop for EvpMac {
    fn drop(&mut self) {
        // SAFETY: ctx came from EVP_MAC_CTX_new and is freed exactly once.
        unsafe { ffi::EVP_MAC_CTX_free(self.ctx) };
    }
}

/// The longest KMAC customization string `S` OpenSSL's provider takes (`KMAC_MAX_CUSTOM`, bytes).
const KMAC_MAX_CUSTOM: usize = 512;

/// The longest KMAC key OpenSSL's provider takes (`KMAC_MAX_KEY`, bytes): a longer one
/// fails in `EVP_MAC_init` with only "invalid key length", so the registry says it first.
const KMAC_MAX_KEY: usize = 512;

/// OpenSSL's KMAC takes keys of at most 512 bytes and S of at most 512, below the 1024 and the
/// unbounded S that the algorithm (and the other backends) take.
fn key_limit(algorithm: &str) -> Option<super::KeyLimit> {
    matches!(algorithm, "kmac128" | "kmac256").then_some(super::KeyLimit {
        min: 0,
        max: KMAC_MAX_KEY,
        max_customization: Some(KMAC_MAX_CUSTOM),
        source: "OpenSSL 3's KMAC provider: KMAC_MAX_KEY and KMAC_MAX_CUSTOM, 512 bytes each",
    })
}

/// OpenSSL's KMAC refuses a longer S in EVP_MAC_CTX_set_params with only "invalid custom length":
/// say the limit, as bad input, before asking.
fn check_customization(algorithm: &'static str, params: KeyParams<'_>) -> Result<(), MacError> {
    if params.customization.len() > KMAC_MAX_CUSTOM {
        return Err(MacError::Customization {
            backend: "openssl",
            algorithm,
            got: params.customization.len(),
            max: KMAC_MAX_CUSTOM,
            why: "KMAC_MAX_CUSTOM in its kmac provider; SP 800-185 itself has no such limit",
        });
    }
    Ok(())
}

impl EvpMac {
    fn keyed(
        algorithm: &'static str,
        mac_name: &str,
        setting: Option<(&str, &str)>,
        key: &[u8],
        params: KeyParams<'_>,
    ) -> KeyedResult {
        let descriptor = super::algorithm(algorithm).expect("registered algorithm");
        check_customization(algorithm, params)?;
        // KMAC's output length L is a parameter of the construction (KeyParams::output_len).
        let tag_len = match params.output_len {
            Some(l) if descriptor.tag_len_is_input() => l,
            _ => descriptor.tag_len,
        };
        let mac_cname = std::ffi::CString::new(mac_name).expect("static name");
        // SAFETY: plain FFI calls; every pointer passed is valid for the call, every object created is
        // freed on all paths (the EVP_MAC after the context holds its own reference).
        unsafe {
            let mac = ffi::EVP_MAC_fetch(ptr::null_mut(), mac_cname.as_ptr(), ptr::null());
            if mac.is_null() {
                return Err(error(algorithm, &format!("EVP_MAC_fetch({mac_name})")));
            }
            let ctx = ffi::EVP_MAC_CTX_new(mac);
            ffi::EVP_MAC_free(mac);
            if ctx.is_null() {
                return Err(error(algorithm, "EVP_MAC_CTX_new"));
            }
            let this = EvpMac {
                ctx,
                rekey_each_message: None,
                tag_len,
            };

            // Parameters: digest/cipher name, output size where the MAC has a variable one, KMAC's S.
            let mut name_buf: Vec<u8>;
            let mut out_size: size_t = tag_len;
            let mut custom: Vec<u8> = params.customization.to_vec();
            let mut list: Vec<ffi::OSSL_PARAM> = Vec::new();
            let (key_digest, key_cipher) = (c"digest", c"cipher");
            if let Some((kind, value)) = setting {
                name_buf = value.as_bytes().to_vec();
                name_buf.push(0);
                let k = if kind == "digest" {
                    key_digest
                } else {
                    key_cipher
                };
                list.push(OSSL_PARAM_construct_utf8_string(
                    k.as_ptr(),
                    name_buf.as_mut_ptr() as *mut c_char,
                    0,
                ));
            }
            let sized = matches!(
                mac_name,
                "KMAC-128" | "KMAC-256" | "BLAKE2BMAC" | "BLAKE2SMAC" | "SIPHASH"
            );
            if sized {
                list.push(OSSL_PARAM_construct_size_t(c"size".as_ptr(), &mut out_size));
            }
            if !custom.is_empty() {
                list.push(ffi::OSSL_PARAM_construct_octet_string(
                    c"custom".as_ptr(),
                    custom.as_mut_ptr() as *mut c_void,
                    custom.len(),
                ));
            }
            list.push(ffi::OSSL_PARAM_construct_end());
            if ffi::EVP_MAC_CTX_set_params(this.ctx, list.as_ptr()) != 1 {
                return Err(error(algorithm, "EVP_MAC_CTX_set_params"));
            }
            if ffi::EVP_MAC_init(this.ctx, key.as_ptr(), key.len(), ptr::null()) != 1 {
                return Err(error(algorithm, "EVP_MAC_init"));
            }
            // Set the size again after the key: BLAKE2 MACs reset their output size on init in some
            // 3.0 releases; KMAC and SipHash take it either way.
            if sized {
                let again = [
                    OSSL_PARAM_construct_size_t(c"size".as_ptr(), &mut out_size),
                    ffi::OSSL_PARAM_construct_end(),
                ];
                if ffi::EVP_MAC_CTX_set_params(this.ctx, again.as_ptr()) != 1 {
                    return Err(error(algorithm, "EVP_MAC_CTX_set_params(size)"));
                }
            }
            let mut this = this;
            if mac_name == "POLY1305" {
                this.rekey_each_message = Some(key.to_vec());
            }
            let produced = ffi::EVP_MAC_CTX_get_mac_size(this.ctx);
            if produced != tag_len {
                return Err(MacError::Backend {
                    backend: "openssl",
                    algorithm,
                    reason: format!("OpenSSL produces {produced}-byte tags, expected {tag_len}"),
                });
            }
            Ok(Box::new(this))
        }
    }

    /// Re-initialise for a new message (reusing the key), feed the pieces, write the tag. None of the
    /// `EVP_MAC` entries takes a nonce (GMAC, the one that did, is [`GcmGmac`]).
    #[inline]
    fn run(&mut self, chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        // The common case (a full-length tag) is finalised straight into the caller's buffer; a truncated
        // tag goes through a scratch buffer, left uninitialised because OpenSSL writes it before we read.
        let mut scratch = std::mem::MaybeUninit::<[u8; super::MAX_TAG_LEN]>::uninit();
        let direct = tag.len() == self.tag_len;
        let (out, out_len) = if direct {
            (tag.as_mut_ptr(), tag.len())
        } else {
            (scratch.as_mut_ptr() as *mut u8, super::MAX_TAG_LEN)
        };
        // SAFETY: ctx is a valid, keyed context owned by self; the key, when passed again, is owned by
        // self; `out` is valid for `out_len` ≥ tag_len bytes.
        let ok = unsafe {
            let (key_ptr, key_len) = match &self.rekey_each_message {
                Some(k) => (k.as_ptr(), k.len()),
                None => (ptr::null(), 0),
            };
            let mut ok: c_int = ffi::EVP_MAC_init(self.ctx, key_ptr, key_len, ptr::null());
            for chunk in chunks {
                ok &= ffi::EVP_MAC_update(self.ctx, chunk.as_ptr(), chunk.len());
            }
            let mut written: size_t = 0;
            ok &= ffi::EVP_MAC_final(self.ctx, out, &mut written, out_len);
            ok == 1 && written == self.tag_len
        };
        if !ok {
            return Err(refused_message(chunks.iter().map(|c| c.len()).sum()));
        }
        if !direct {
            // SAFETY: EVP_MAC_final wrote tag_len > tag.len() bytes of scratch (checked above).
            let full = unsafe { std::slice::from_raw_parts(out, self.tag_len) };
            tag.copy_from_slice(&full[..tag.len()]);
        }
        Ok(())
    }
}

impl KeyedMac for EvpMac {
    /// One message, the common case kept as lean as `openssl speed`'s own loop (init with the kept
    /// key, update, final straight into the caller's buffer, one status test): this is the per-message
    /// code `compare` sets beside `openssl speed`, so anything more here reads as the library's cost.
    #[inline(always)]
    fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        if tag.len() != self.tag_len || self.rekey_each_message.is_some() {
            return self.run(&[msg], tag);
        }
        let mut written: size_t = 0;
        // SAFETY: ctx is a valid, keyed context owned by self; msg and tag are valid for their lengths,
        // and tag holds the whole tag (checked above).
        let ok = unsafe {
            ffi::EVP_MAC_init(self.ctx, ptr::null(), 0, ptr::null()) == 1
                && ffi::EVP_MAC_update(self.ctx, msg.as_ptr(), msg.len()) == 1
                && ffi::EVP_MAC_final(self.ctx, tag.as_mut_ptr(), &mut written, tag.len()) == 1
        };
        if ok && written == self.tag_len {
            Ok(())
        } else {
            Err(refused_message(msg.len()))
        }
    }

    fn tag_chunks(&mut self, _nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        self.run(chunks, tag)
    }

    fn streams(&self) -> bool {
        true
    }

    fn stream_begin(&mut self, _nonce: &[u8]) -> TagResult {
        let (key_ptr, key_len) = match &self.rekey_each_message {
            Some(k) => (k.as_ptr(), k.len()),
            None => (ptr::null(), 0),
        };
        // SAFETY: ctx is a valid, keyed context owned by self; the key, when passed again, too.
        let ok = unsafe { ffi::EVP_MAC_init(self.ctx, key_ptr, key_len, ptr::null()) } == 1;
        if ok {
            Ok(())
        } else {
            Err(refused_message(0))
        }
    }

    fn stream_update(&mut self, chunks: &[&[u8]]) -> TagResult {
        for chunk in chunks {
            // SAFETY: ctx is a valid context with a message begun; chunk is valid for its length.
            if unsafe { ffi::EVP_MAC_update(self.ctx, chunk.as_ptr(), chunk.len()) } != 1 {
                return Err(refused_message(chunk.len()));
            }
        }
        Ok(())
    }

    fn stream_finish(&mut self, tag: &mut [u8]) -> TagResult {
        let mut full = [0u8; super::MAX_TAG_LEN];
        let mut written: size_t = 0;
        // SAFETY: ctx is a valid context with a message begun; full holds MAX_TAG_LEN ≥ tag_len bytes.
        let ok = unsafe {
            ffi::EVP_MAC_final(self.ctx, full.as_mut_ptr(), &mut written, full.len()) == 1
        };
        if !ok || written != self.tag_len {
            return Err(refused_message(0));
        }
        tag.copy_from_slice(&full[..tag.len()]);
        Ok(())
    }
}

/// CBC-MAC (zero IV, zero-padded final block) over `EVP_aes_128_cbc`.
struct CbcMac {
    ctx: *mut ffi::EVP_CIPHER_CTX,
    /// Receives the ciphertext we do not keep; fixed size so messages are processed in slices.
    scratch: Box<[u8; CBC_SCRATCH]>,
}

const CBC_SCRATCH: usize = 4096;

// SAFETY: as for EvpMac — one owner, no aliasing.
unsafe impl Send for CbcMac {}

impl Drop for CbcMac {
    fn drop(&mut self) {
        // SAFETY: ctx came from EVP_CIPHER_CTX_new and is freed exactly once.
        unsafe { ffi::EVP_CIPHER_CTX_free(self.ctx) };
    }
}

impl CbcMac {
    fn new_aes128(key: &[u8], _: KeyParams<'_>) -> KeyedResult {
        let algorithm = "cbcmac-aes128";
        // SAFETY: FFI calls with valid pointers; the context is freed by Drop on every path.
        unsafe {
            let ctx = new_cipher_ctx(algorithm)?;
            let this = CbcMac {
                ctx,
                scratch: Box::new([0u8; CBC_SCRATCH]),
            };
            let iv = [0u8; 16];
            if ffi::EVP_EncryptInit_ex(
                ctx,
                ffi::EVP_aes_128_cbc(),
                ptr::null_mut(),
                key.as_ptr(),
                iv.as_ptr(),
            ) != 1
                || ffi::EVP_CIPHER_CTX_set_padding(ctx, 0) != 1
            {
                return Err(error(algorithm, "EVP_EncryptInit_ex(aes-128-cbc)"));
            }
            Ok(Box::new(this))
        }
    }

    /// Encrypt whole blocks of `data` (a multiple of 16 bytes); the chaining value carries over.
    /// Returns where the last ciphertext written ends in `scratch` (0 if nothing was written), or `None`
    /// on a library error.
    fn absorb(&mut self, mut data: &[u8]) -> Option<usize> {
        let mut end = 0;
        while !data.is_empty() {
            let n = data.len().min(CBC_SCRATCH);
            let mut outl: c_int = 0;
            // SAFETY: scratch holds CBC_SCRATCH ≥ n bytes; padding is off, so the output is exactly n.
            let ok = unsafe {
                ffi::EVP_EncryptUpdate(
                    self.ctx,
                    self.scratch.as_mut_ptr(),
                    &mut outl,
                    data.as_ptr(),
                    n as c_int,
                ) == 1
            };
            if !ok || outl as usize != n {
                return None;
            }
            end = n;
            data = &data[n..];
        }
        Some(end)
    }
}

impl KeyedMac for CbcMac {
    fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        let iv = [0u8; 16];
        // SAFETY: restarting with NULL cipher and key keeps the key schedule and resets the IV.
        let ok = unsafe {
            ffi::EVP_EncryptInit_ex(
                self.ctx,
                ptr::null(),
                ptr::null_mut(),
                ptr::null(),
                iv.as_ptr(),
            ) == 1
        };
        let full = msg.len() / 16 * 16;
        let mut end = if ok { self.absorb(&msg[..full]) } else { None };
        let rest = &msg[full..];
        // An empty message is one all-zero block, as is the zero padding of a final partial block.
        if end.is_some() && (!rest.is_empty() || msg.is_empty()) {
            let mut last = [0u8; 16];
            last[..rest.len()].copy_from_slice(rest);
            end = self.absorb(&last);
        }
        // The tag is the last ciphertext block written.
        match end {
            Some(end) if end >= 16 => {
                tag.copy_from_slice(&self.scratch[end - 16..end][..tag.len()]);
                Ok(())
            }
            _ => Err(Refused::message(
                msg.len(),
                format!("EVP_EncryptUpdate(aes-128-cbc): {}", last_error()),
            )),
        }
    }
}

/// GMAC as IPsec (AH/ESP with `AES-GMAC`) and TLS stacks compute it with OpenSSL: an `EVP_CIPHER`
/// AES-128-GCM context keyed once, then per message only the IV, the message as AAD, the final and
/// `EVP_CTRL_GCM_GET_TAG`.
///
/// Why not `EVP_MAC` "GMAC": it wraps this same cipher context, and re-initialising it with a NULL key
/// keeps the key schedule and GHASH table too, but the per-message IV has to travel as an `OSSL_PARAM`,
/// which the GMAC provider turns into an IV-length control and a cipher re-init, and its final reads the
/// tag through one more parameter call. In OpenSSL 3.0.22 those name lookups cost ~550 cycles per 16-byte
/// message against ~350 for this sequence (C, this machine; ~730 if the key were set again each
/// message). Packet code (IPsec ESP/AH AES-GMAC, TLS AES-GCM) drives the cipher; benchmarking the MAC
/// wrapper would charge OpenSSL for a layer its users do not run, so the wrapper is not kept.
struct GcmGmac {
    ctx: *mut ffi::EVP_CIPHER_CTX,
    /// The IV length the context is set to (GCM's default is 12); changed only when a nonce of another
    /// length arrives, since `EVP_CTRL_GCM_SET_IVLEN` invalidates the IV and costs a parameter call.
    iv_len: usize,
}

// SAFETY: as for EvpMac — one owner, no aliasing.
unsafe impl Send for GcmGmac {}

impl Drop for GcmGmac {
    fn drop(&mut self) {
        // SAFETY: ctx came from EVP_CIPHER_CTX_new and is freed exactly once.
        unsafe { ffi::EVP_CIPHER_CTX_free(self.ctx) };
    }
}

/// An AES-GCM cipher GMAC runs over: its `EVP_aes_*_gcm`, and its name and key length for the checks.
type GcmCipher = (
    unsafe extern "C" fn() -> *const ffi::EVP_CIPHER,
    &'static str,
    usize,
);
const GCM_AES128: GcmCipher = (ffi::EVP_aes_128_gcm, "aes-128-gcm", 16);
const GCM_AES192: GcmCipher = (ffi::EVP_aes_192_gcm, "aes-192-gcm", 24);
const GCM_AES256: GcmCipher = (ffi::EVP_aes_256_gcm, "aes-256-gcm", 32);

/// GCM's tag size and its default IV size (SP 800-38D).
const GCM_TAG_LEN: usize = 16;
const GCM_DEFAULT_IV_LEN: usize = 12;

impl GcmGmac {
    /// Key setup of GMAC over one AES-GCM cipher, named and with its key length for the checks.
    fn keyed(
        algorithm: &'static str,
        (cipher, name, key_len): GcmCipher,
        key: &[u8],
    ) -> KeyedResult {
        // SAFETY: EVP_aes_*_gcm return static cipher descriptions.
        let cipher = unsafe { cipher() };
        if key.len() != key_len {
            return Err(MacError::Backend {
                backend: "openssl",
                algorithm,
                reason: format!("{name} takes a {key_len}-byte key; got {} bytes", key.len()),
            });
        }
        // SAFETY: FFI calls with valid pointers (the key is 16 bytes, checked above); the context is
        // freed by Drop on every path.
        unsafe {
            let ctx = new_cipher_ctx(algorithm)?;
            let this = GcmGmac {
                ctx,
                iv_len: GCM_DEFAULT_IV_LEN,
            };
            // Key setup, once: the AES key schedule and the GHASH table. No IV yet; each message sets its own.
            if ffi::EVP_EncryptInit_ex(ctx, cipher, ptr::null_mut(), key.as_ptr(), ptr::null()) != 1
            {
                return Err(error(algorithm, &format!("EVP_EncryptInit_ex({name})")));
            }
            Ok(Box::new(this))
        }
    }

    /// Set the IV (keeping the key), feed the pieces as AAD, finish, and read the tag.
    #[inline]
    fn run(&mut self, nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        let len = || chunks.iter().map(|c| c.len()).sum::<usize>();
        // GCM needs a non-empty IV, and hands out at most 16 tag bytes (a prefix when fewer are asked for).
        if nonce.is_empty()
            || c_int::try_from(nonce.len()).is_err()
            || tag.is_empty()
            || tag.len() > GCM_TAG_LEN
        {
            return Err(Refused::message(
                len(),
                format!(
                    "GCM takes a non-empty IV and 1–16 tag bytes; got a {}-byte IV and {} tag bytes",
                    nonce.len(),
                    tag.len()
                ),
            ));
        }
        // SAFETY: ctx is a valid context keyed for AES-128-GCM and owned by self; the IV pointer is valid
        // for nonce.len() bytes, which the context was told (SET_IVLEN) before it reads them; AAD updates
        // take a NULL output; `sink` receives the (empty) final output; `tag` is valid for tag.len() ≤ 16.
        let ok = unsafe {
            let mut ok = true;
            if nonce.len() != self.iv_len {
                ok = ffi::EVP_CIPHER_CTX_ctrl(
                    self.ctx,
                    ffi::EVP_CTRL_GCM_SET_IVLEN,
                    nonce.len() as c_int,
                    ptr::null_mut(),
                ) == 1;
                // Whatever happened, the context's IV length is unknown until a later call succeeds.
                self.iv_len = if ok { nonce.len() } else { 0 };
            }
            ok = ok
                && ffi::EVP_EncryptInit_ex(
                    self.ctx,
                    ptr::null(),
                    ptr::null_mut(),
                    ptr::null(),
                    nonce.as_ptr(),
                ) == 1;
            for chunk in chunks.iter().filter(|c| !c.is_empty()) {
                let Ok(len) = c_int::try_from(chunk.len()) else {
                    ok = false;
                    break;
                };
                let mut outl: c_int = 0;
                ok = ok
                    && ffi::EVP_EncryptUpdate(
                        self.ctx,
                        ptr::null_mut(),
                        &mut outl,
                        chunk.as_ptr(),
                        len,
                    ) == 1;
            }
            let mut sink = [0u8; GCM_TAG_LEN];
            let mut outl: c_int = 0;
            ok = ok && ffi::EVP_EncryptFinal_ex(self.ctx, sink.as_mut_ptr(), &mut outl) == 1;
            ok && ffi::EVP_CIPHER_CTX_ctrl(
                self.ctx,
                ffi::EVP_CTRL_GCM_GET_TAG,
                tag.len() as c_int,
                tag.as_mut_ptr() as *mut c_void,
            ) == 1
        };
        if !ok {
            // As in EvpMac::run: the library's reason, its error queue drained so it does not grow.
            return Err(Refused::message(
                len(),
                format!("EVP AES-GCM: {}", last_error()),
            ));
        }
        Ok(())
    }
}

// GCM accepts AAD in any number of updates of any length before the final.
crate::keyed_by_pieces!(GcmGmac, run);

/// Library facts for `list`: the version and where the providers live.
pub fn describe() -> String {
    // SAFETY: OpenSSL_version returns a static NUL-terminated string.
    let dir = unsafe {
        CStr::from_ptr(ffi::OpenSSL_version(4 /* OPENSSL_MODULES_DIR */))
    };
    format!("{} (modules: {})", version(), dir.to_string_lossy())
}
