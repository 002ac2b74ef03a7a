//! Intel ipsec-mb backend: the system libIPSec_MB (1.x, Debian's libipsec-mb-dev; the multi-buffer
//! library DPDK and VPP use) through a small C shim, `csrc/ipsecmb_shim.c`, over its job API.
//!
//! Each keyed object owns one `IMB_MGR` (`alloc_mb_mgr`, then `init_mb_mgr_auto`, which picks the
//! fastest code path this CPU runs: SSE, AVX, AVX2 or AVX-512, or one ISA level's init, below) and the
//! key material its jobs point at, prepared once at key setup: for HMAC the inner and outer starting
//! states (key xor ipad/opad run through `IMB_SHAx_ONE_BLOCK`, the header's documented HMAC key
//! preparation; keys longer than a block hashed first), for CMAC the AES key schedule and subkeys
//! K1/K2 (`IMB_AES_KEYEXP_128/256`, `IMB_AES_CMAC_SUBKEY_GEN_128/256`), for XCBC K1's schedule and
//! K2/K3 (`IMB_AES_XCBC_KEYEXP`), for GMAC the AES schedule and GHASH table
//! (`IMB_AES128/192/256_GCM_PRE`); Poly1305's job reads the 32-byte key itself. Per message the shim
//! only fills in a job (pointers and lengths) and hands it to the manager.
//!
//! Two ways through the manager, and why both are measured:
//! - `tag_into` submits one job and flushes at once: one message at a time, as a caller with a single
//!   packet in hand would. The multi-buffer code then runs with one lane busy, so a message costs at
//!   least what a single-buffer implementation costs, plus the job bookkeeping.
//! - `tag_batch` (the engine's hot loop, up to [`super::MAX_BATCH`] messages) submits every message of
//!   the batch as its own job and flushes only after the last (at most 16 a shim call,
//!   `MACBENCH_SHIM_MAX_BATCH`: a larger batch is submitted and drained 16 at a time). The manager queues jobs until a SIMD
//!   lane set is full (4 to 16 lanes depending on the path and the hash) and computes those messages
//!   side by side: what makes ipsec-mb fast for a gateway that has many packets in flight. Jobs may come
//!   back out of order; each carries its index and writes its tag into its own slot.
//!
//! Either way every tag is back when the call returns, so the jobs still in the lanes after the last
//! submit come back through `IMB_FLUSH_JOB` (the drain: 15 of a 16-job CMAC burst on the 16-lane
//! AVX-512 path), which Intel's `ipsec_perf`, submitting jobs back to back, pays once a run;
//! [`flushes_per_call`] counts them for `compare`. The library's job check (`IMB_SUBMIT_JOB`) runs on
//! the first job of each shape (length and nonce length; every other field is fixed at key setup) a
//! context sees; later jobs of a shape it accepted go through `IMB_SUBMIT_JOB_NOCHECK`, as
//! `ipsec_perf` submits, so a refused length is still refused with the library's reason and the timed
//! jobs, whose lengths the pre-flight has sent through first, do not pay the check each.
//!
//! Two gaps of the 1.3 job API, worked around in the shim: an XCBC job writes only the 12-byte tag
//! (any other `auth_tag_output_len_in_bytes` is rejected), so this backend implements
//! `xcbc-aes128-96` and not the full 16-byte `xcbc-aes128`; and an HMAC job of length 0 is rejected,
//! so the empty message is hashed with the whole-hash calls (`IMB_SHAx`) over the stored key blocks.
//!
//! The 3GPP integrity functions (128-EIA2, 128-EIA3, UIA2, UIA1; docs/methodology.md §5 for the
//! nonce layout and bit lengths). Each message's COUNT/BEARER/DIRECTION (or COUNT-I/FRESH/DIRECTION)
//! arrive as its nonce, and the shim turns them into what the library takes, per job and per lane:
//! - 128-EIA2 is `IMB_AUTH_AES_CMAC_BITLEN` over a buffer the caller builds, the 8-byte header and
//!   the message. The shim copies each message behind its header in a per-lane scratch buffer, so that
//!   copy is part of what 128-EIA2 costs through this API (a protocol stack that leaves 8 bytes of
//!   headroom in front of its PDU would not pay it). The 1.3 job check caps the length field at
//!   2^16 − 2, which for a bit-length job counts bits: at most 8,183 message bytes.
//! - 128-EIA3 (`IMB_AUTH_ZUC_EIA3_BITLEN`) and UIA2 (`IMB_AUTH_SNOW3G_UIA2_BITLEN`) take a 16-byte IV,
//!   built per lane with the library's own `zuc_eia3_iv_gen` / `snow3g_f9_iv_gen`; both go through the
//!   manager's lanes like the other jobs. Neither takes an empty message.
//! - UIA1 uses `IMB_KASUMI_F9_1_BUFFER_USER`, not the job API: 1.3's `IMB_AUTH_KASUMI_UIA1` job is the
//!   same one-buffer KASUMI f9 (ipsec-mb has no KASUMI lanes) over an input the caller must first frame
//!   at bit level; the direct call frames it itself. A batch of UIA1 messages is therefore computed
//!   one after another, whatever the dispatch.
//!
//! Lengths that are not whole bytes (the published vectors) go through [`KeyedMac::tag_bits`], which
//! the shim table's optional `tag_bits` serves; the hot path (`tag_into`, `tag_batch`) passes no bit
//! lengths.
//!
//! The shim fills the one table of `csrc/macbench_shim.h` like every C backend, with the optional
//! entries only it has (`tag_bits`, `tag_batch`, `tag_inflight`) and a `level` at `create` (the
//! `IMB_ARCH_*` value of the ISA level, 0 for `init_mb_mgr_auto`); [`super::shim::ShimMac`] wraps it.
//! What no table holds stays here: the levels' features and proof, and HMAC-MD5's empty tag.
//!
//! The job API is one-shot (no streaming for these MACs): the table's `streams` says so, and a message
//! in pieces is joined and tagged whole.
//!
//! HMAC-MD5 has a third gap: ipsec-mb exposes MD5 only as a one-block compression
//! (`IMB_MD5_ONE_BLOCK`), not a whole hash. Two things need the whole hash, and both happen at key
//! setup, outside any timed loop, with RustCrypto's `md-5` (the maintained library macbench already
//! links): a key longer than the 64-byte block is shortened to its MD5 (RFC 2104 §2) before the shim
//! prepares the pads, and the tag of the *empty* message (a constant of the key, which the job API
//! rejects) is computed and handed to the shim. So every non-empty HMAC-MD5 message is ipsec-mb's
//! work, and the empty one is RustCrypto's; the engine never times an empty message.
//!
//! ISA levels (`--accel sse|avx|avx2|avx512`, docs/methodology.md §5): ipsec-mb has one code path per
//! x86 architecture and a manager is initialised for one of them, so a level needs no second process,
//! only another init call: `init_mb_mgr_sse` / `_avx` / `_avx2` / `_avx512` instead of
//! `init_mb_mgr_auto`, which stays `hw` ("the library's default"). Each level is an entry of its own.
//! Whether this CPU runs a level is the library's own answer: the features `alloc_mb_mgr` detected
//! (`mgr->features`) must hold the level's `IMB_CPUFLAGS_*` bits, the test `init_mb_mgr_auto` itself
//! makes; otherwise the row is unavailable with the missing features named ([`level_reason`]). And a
//! level is proven, not assumed: after init the manager's `used_arch` must be the level asked for, or
//! key setup fails ([`prove_arch`]); `list`'s version line shows what each level's manager reported.
//!
//! No `sw` variants: the only switches are `alloc_mb_mgr` flags (`IMB_FLAG_AESNI_OFF`,
//! `IMB_FLAG_SHANI_OFF`) that select the no-AES-NI path, which still needs SSE4.2 and PCLMULQDQ and
//! emulates AES with SSE: not the portable code docs/methodology.md §1 compares (and on this 1.3
//! build `alloc_mb_mgr(IMB_FLAG_AESNI_OFF)` returns no manager at all). The registry lists the `sw`
//! rows as unavailable with that reason.
//!
//! Built only with `cfg(have_ipsecmb)` (build.rs found the library); otherwise every entry is listed as
//! unavailable with the reason build.rs recorded.

use super::{
    Accel, Availability, Backend, Entry, IsaLevels, KeyParams, KeyedMac, KeyedResult, MacError,
};

/// One line per algorithm: `hw` (`init_mb_mgr_auto`) and each ISA level (see the module comment),
/// grouped by algorithm and keyed with the level, hence not [`crate::accel_entries!`]; algorithm
/// families are expanded by [`crate::algorithm_names!`] as there.
macro_rules! entries {
    (@names $($alg:literal),*) => {
        &[$(
            Entry { algorithm: $alg, accel: Accel::Hw, new: |k, p| new($alg, Accel::Hw, k, p) },
            Entry { algorithm: $alg, accel: Accel::Sse, new: |k, p| new($alg, Accel::Sse, k, p) },
            Entry { algorithm: $alg, accel: Accel::Avx, new: |k, p| new($alg, Accel::Avx, k, p) },
            Entry { algorithm: $alg, accel: Accel::Avx2, new: |k, p| new($alg, Accel::Avx2, k, p) },
            Entry {
                algorithm: $alg,
                accel: Accel::Avx512,
                new: |k, p| new($alg, Accel::Avx512, k, p),
            },
        )*]
    };
    ($($item:tt),* $(,)?) => {
        $crate::algorithm_names!([entries] (@names) [] $($item),*)
    };
}

pub static BACKEND: Backend = Backend {
    name: "ipsecmb",
    description: "system Intel ipsec-mb (libIPSec_MB) through csrc/ipsecmb_shim.c; job API, a batch submitted as jobs then flushed (SIMD lanes); ISA levels by init_mb_mgr_sse/avx/avx2/avx512",
    version,
    availability,
    isa_levels: IsaLevels::Offered(level_availability),
    length_limit,
    entries: entries![
        "hmac-md5",
        "hmac-sha1",
        HMAC_SHA2,
        "cmac-aes128",
        "cmac-aes256",
        "xcbc-aes128-96",
        GMAC_AES,
        "poly1305",
        "eia2-aes128",
        "eia3-zuc128",
        "uia2-snow3g",
        "uia1-kasumi",
    ],
    no_software_only: Some(NO_SOFTWARE_ONLY),
    ..Backend::DEFAULT_FACTS
};

/// Intel ipsec-mb 1.x refuses HMAC (MD5, SHA-1, SHA-2), AES-CMAC and AES-XCBC jobs longer than
/// `MB_MAX_LEN16`, (1 << 16) − 2 = 65,534 bytes: its job check (`lib/include/mb_mgr_job_check.h`,
/// `is_job_invalid`) returns `IMB_ERR_JOB_AUTH_LEN` and the job comes back with status
/// `IMB_STATUS_INVALID_ARGS`. The constant is internal to the library, not in the public header, so it
/// is kept here by version (1.x); `tests/ipsecmb.rs` pins it against the installed library (a job of
/// exactly the limit completes, one byte more is refused).
pub const JOB_MAX_LEN16: u64 = (1 << 16) - 2;

/// Where [`JOB_MAX_LEN16`] comes from, as `list` and every refusal say it.
const JOB_LIMIT_SOURCE: &str = "Intel ipsec-mb 1.x's job check, MB_MAX_LEN16 = 2^16 - 2 \
     (lib/include/mb_mgr_job_check.h); longer jobs are refused";

/// The library's own limit on message length for `algorithm` ([`super::LengthLimit`]): the job-API
/// HMAC, CMAC and XCBC functions. GMAC (up to 2^39 − 256 bits), Poly1305 and the 3GPP functions (whose
/// algorithm rules already hold ipsec-mb's bit-length bounds) have none below the algorithm's.
fn length_limit(algorithm: &str) -> Option<super::LengthLimit> {
    let limited = ["hmac-", "cmac-", "xcbc-"]
        .iter()
        .any(|prefix| algorithm.starts_with(prefix));
    limited.then_some(super::LengthLimit {
        max_bytes: JOB_MAX_LEN16,
        source: JOB_LIMIT_SOURCE,
    })
}

/// Why `list` shows the `sw` rows as unavailable ([`Backend::no_software_only`]).
pub const NO_SOFTWARE_ONLY: &str = "not offered yet: alloc_mb_mgr's IMB_FLAG_AESNI_OFF and \
     IMB_FLAG_SHANI_OFF select ipsec-mb's no-AES-NI path, which still runs SSE4.2 and PCLMULQDQ and \
     emulates AES in SSE: not the portable code docs/methodology.md §1 compares, and the library has no \
     switch for the rest";

crate::c_backend!(
    own_new,
    name: "ipsecmb",
    cfg: have_ipsecmb,
    table: macbench_shim_ipsecmb,
    missing: "MACBENCH_IPSECMB_MISSING",
);

/// `IMB_ARCH_*` of intel-ipsec-mb.h: what `mgr->used_arch` reports.
const ARCHES: &[(i32, &str)] = &[
    (0, "none"),
    (1, "no-aesni"),
    (2, "sse"),
    (3, "avx"),
    (4, "avx2"),
    (5, "avx512"),
];

/// The name of an `IMB_ARCH_*` value: `avx2`.
pub fn arch_name(arch: i32) -> &'static str {
    ARCHES
        .iter()
        .find(|(a, _)| *a == arch)
        .map_or("unknown", |(_, name)| name)
}

/// Each ISA level's manager: its `IMB_ARCH_*` path, the init function that selects it, and the
/// `IMB_CPUFLAGS_*` features of intel-ipsec-mb.h 1.3 that init needs (`tests/ipsecmb.rs` checks
/// these masks against the header the shim was compiled with). One row per level, so the three
/// questions below cannot disagree.
const LEVEL_PATHS: &[(Accel, i32, &str, u64)] = {
    const SSE: u64 = (1 << 4) | (1 << 3) | (1 << 1) | (1 << 2); // SSE4.2, CMOV, AES-NI, PCLMULQDQ
    const AVX: u64 = SSE | (1 << 5);
    const AVX2: u64 = AVX | (1 << 6) | (1 << 18); // + AVX2, BMI2
    const AVX512: u64 = AVX2 | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11); // + F/DQ/CD/BW/VL
    &[
        (Accel::Sse, 2, "init_mb_mgr_sse", SSE),
        (Accel::Avx, 3, "init_mb_mgr_avx", AVX),
        (Accel::Avx2, 4, "init_mb_mgr_avx2", AVX2),
        (Accel::Avx512, 5, "init_mb_mgr_avx512", AVX512),
    ]
};

fn level_path(level: Accel) -> Option<&'static (Accel, i32, &'static str, u64)> {
    LEVEL_PATHS.iter().find(|row| row.0 == level)
}

/// The `IMB_ARCH_*` value of an ISA level (its init function's path); `None` for `hw` and `sw`.
pub fn level_arch(level: Accel) -> Option<i32> {
    level_path(level).map(|row| row.1)
}

/// The `init_mb_mgr_*` function a level's manager is initialised with (`hw`: `init_mb_mgr_auto`).
pub fn init_function(level: Accel) -> &'static str {
    level_path(level).map_or("init_mb_mgr_auto", |row| row.2)
}

/// The proof that a manager runs the level asked for: its `used_arch` after init must be that level's
/// `IMB_ARCH_*` (for `hw`, any real path). `Err` says what was asked and what the library reports.
pub fn prove_arch(level: Accel, used_arch: i32) -> Result<(), String> {
    let ok = match level_arch(level) {
        Some(wanted) => used_arch == wanted,
        None => used_arch > 0 && arch_name(used_arch) != "unknown",
    };
    if ok {
        return Ok(());
    }
    if level_arch(level).is_none() {
        return Err(format!(
            "init_mb_mgr_auto left the manager on no code path (used_arch {used_arch}, {})",
            arch_name(used_arch)
        ));
    }
    Err(format!(
        "{level}: {} left the manager on used_arch {used_arch} ({}), not the {level} path; \
         refusing to time a path other than the one asked for",
        init_function(level),
        arch_name(used_arch)
    ))
}

/// `IMB_FEATURE_*` bits of intel-ipsec-mb.h that the levels need, by the names the header uses.
const FEATURE_NAMES: &[(u64, &str)] = &[
    (1 << 0, "SHA-NI"),
    (1 << 1, "AES-NI"),
    (1 << 2, "PCLMULQDQ"),
    (1 << 3, "CMOV"),
    (1 << 4, "SSE4.2"),
    (1 << 5, "AVX"),
    (1 << 6, "AVX2"),
    (1 << 7, "AVX512F"),
    (1 << 8, "AVX512DQ"),
    (1 << 9, "AVX512CD"),
    (1 << 10, "AVX512BW"),
    (1 << 11, "AVX512VL"),
    (1 << 12, "VAES"),
    (1 << 13, "VPCLMULQDQ"),
    (1 << 16, "GFNI"),
    (1 << 17, "AVX512-IFMA"),
    (1 << 18, "BMI2"),
];

/// The features the library's `init_mb_mgr_*` of a level needs ([`LEVEL_PATHS`]); `None` for `hw`
/// and `sw`.
pub fn level_flags(level: Accel) -> Option<u64> {
    level_path(level).map(|row| row.3)
}

/// Why this CPU cannot run `level`, given the features ipsec-mb detected (`mgr->features`), or
/// `None` when it can. One line: `avx512: this CPU lacks AVX512F, AVX512BW (ipsec-mb reports …)`.
pub fn level_reason(level: Accel, features: u64) -> Option<String> {
    let needed = level_flags(level)?;
    let missing = needed & !features;
    if missing == 0 {
        return None;
    }
    let names: Vec<&str> = FEATURE_NAMES
        .iter()
        .filter(|(bit, _)| missing & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    Some(format!(
        "{level}: this CPU lacks {} ({} needs them; ipsec-mb's alloc_mb_mgr reports features {features:#x})",
        names.join(", "),
        init_function(level)
    ))
}

/// The `IMB_CPUFLAGS_*` mask of a level as the compiled-in header defines it (`None` when not built),
/// to check [`level_flags`] against.
pub fn header_level_flags(level: Accel) -> Option<u64> {
    imp::header_level_flags(level)
}

/// The features ipsec-mb detects on this CPU (`mgr->features` after `alloc_mb_mgr`); `None` when the
/// backend is not built or no manager could be allocated.
pub fn library_features() -> Option<u64> {
    imp::features()
}

/// Whether this CPU runs ISA level `level`, by the features the library detected.
fn level_availability(level: Accel) -> Availability {
    if let Availability::Unavailable(why) = availability() {
        return Availability::Unavailable(why);
    }
    if level_flags(level).is_none() {
        return Availability::Unavailable(format!("{level} is no ISA level of ipsec-mb"));
    }
    match imp::features() {
        Some(features) => match level_reason(level, features) {
            Some(why) => Availability::Unavailable(why),
            None => Availability::Available,
        },
        None => Availability::Unavailable(
            "alloc_mb_mgr returned no manager, so ipsec-mb reports no CPU features".to_string(),
        ),
    }
}

/// What the library reports for a manager initialised for `level` (`hw`: `init_mb_mgr_auto`): its
/// `used_arch` (`IMB_ARCH_*`), or why no such manager could be made.
pub fn manager_arch(level: Accel) -> Result<i32, String> {
    imp::probe(level)
}

/// `Intel ipsec-mb 1.3.0 (avx512 path; levels by used_arch: sse=sse avx=avx avx2=avx2 avx512=avx512;
/// AES-NI, SHA-NI, …)`: the run-time library's version, the path `init_mb_mgr_auto` chose on this
/// CPU, what each level's manager reports running, and the features the library detected.
pub fn version() -> String {
    if !BUILT {
        return "Intel ipsec-mb not built".to_string();
    }
    let path = match (manager_arch(Accel::Hw), imp::features()) {
        (Ok(arch), Some(features)) => {
            let levels: Vec<String> = Accel::LEVELS
                .iter()
                .map(|&level| match manager_arch(level) {
                    Ok(arch) => format!("{level}={}", arch_name(arch)),
                    Err(_) => format!("{level}=unavailable"),
                })
                .collect();
            let flags: Vec<&str> = VERSION_LINE_FEATURES
                .iter()
                .copied()
                .filter(|name| {
                    FEATURE_NAMES
                        .iter()
                        .any(|(bit, n)| n == name && features & bit != 0)
                })
                .collect();
            format!(
                "{} path; levels by used_arch: {}; {}",
                arch_name(arch),
                levels.join(" "),
                flags.join(", ")
            )
        }
        (Err(why), _) => format!("no manager: {why}"),
        (_, None) => "no manager: alloc_mb_mgr failed".to_string(),
    };
    let library = shim().and_then(|s| s.fact("version")).unwrap_or_default();
    format!("Intel ipsec-mb {library} ({path})")
}

/// The manager's features worth naming on the version line, in that order (bits in [`FEATURE_NAMES`]).
const VERSION_LINE_FEATURES: &[&str] = &[
    "AES-NI",
    "SHA-NI",
    "PCLMULQDQ",
    "AVX2",
    "AVX512F",
    "VAES",
    "VPCLMULQDQ",
];

fn backend_error(algorithm: &'static str, reason: impl ToString) -> MacError {
    MacError::Backend {
        backend: "ipsecmb",
        algorithm,
        reason: reason.to_string(),
    }
}

/// HMAC-MD5's block: keys longer than this are hashed first (RFC 2104 §2).
const MD5_BLOCK: usize = 64;

/// The shim's code for `IMB_SHIM_ERR_LEVEL` (csrc/ipsecmb_shim.c): the CPU lacks the level's flags.
const ERR_LEVEL: i32 = -8;

/// Key setup through the shim's table at `level`'s path (`hw`: `init_mb_mgr_auto`), then the proof
/// that the manager runs that path; HMAC-MD5's two whole-hash steps first (module comment).
fn new(algorithm: &'static str, level: Accel, key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    let Some(table) = shim() else {
        return super::shim::keyed(None, "ipsecmb", availability, algorithm, key);
    };
    let md5 = algorithm == "hmac-md5";
    let shortened;
    let key = if md5 && key.len() > MD5_BLOCK {
        use md5::Digest;
        shortened = md5::Md5::digest(key);
        &shortened[..]
    } else {
        key
    };
    let mac = super::shim::create(table, algorithm, level_arch(level).unwrap_or(0), key).map_err(
        |f| {
            // The missing features by name, as `list` gives them.
            let why = match f.status {
                ERR_LEVEL => imp::features()
                    .and_then(|features| level_reason(level, features))
                    .unwrap_or(f.why),
                _ => f.why,
            };
            backend_error(algorithm, format!("key setup: {why}"))
        },
    )?;
    prove_arch(level, imp::used_arch(&mac)).map_err(|why| backend_error(algorithm, why))?;
    if md5 {
        use hmac::Mac;
        let empty = <hmac::Hmac<md5::Md5> as hmac::KeyInit>::new_from_slice(key)
            .map_err(|e| backend_error(algorithm, e))?
            .finalize()
            .into_bytes();
        imp::set_empty_tag(&mac, &empty).map_err(|why| backend_error(algorithm, why))?;
    }
    Ok(Box::new(mac))
}

/// How many of `n` messages of `size` bytes, tagged in one call (`depth` `None`: `tag_batch`, all
/// submitted then flushed, as `burst:N` and, with `n` 1, `single`; `Some(d)`: `tag_inflight` with at
/// most `d` in the manager), came back only through `IMB_FLUSH_JOB`: jobs still in the manager's
/// lanes when the call had to return every tag. A fresh context at `level`'s path with a fixed key;
/// nothing is timed. `compare --against ipsecmb` asks it before pairing our figure with
/// `ipsec_perf`'s, whose job loop never flushes before its run ends.
pub fn flushes_per_call(
    algorithm: &'static str,
    level: Accel,
    size: usize,
    n: usize,
    depth: Option<usize>,
) -> Result<u64, String> {
    let table = shim().ok_or_else(|| match availability() {
        Availability::Unavailable(why) => why,
        Availability::Available => "not built".to_string(),
    })?;
    let alg = super::algorithm(algorithm).ok_or("not a registered algorithm")?;
    let key = vec![0x5a; alg.default_key_len];
    let mut mac = super::shim::create(table, algorithm, level_arch(level).unwrap_or(0), &key)
        .map_err(|f| f.why)?;
    let message = vec![0xa5u8; size];
    let msgs = vec![&message[..]; n.max(1)];
    let nonce_len = alg.nonce_len.unwrap_or(0);
    let nonces = vec![0u8; msgs.len() * nonce_len];
    let mut tags = vec![0u8; msgs.len() * alg.tag_len];
    let mut batch = super::Batch {
        msgs: &msgs,
        nonces: &nonces,
        nonce_len,
        tags: &mut tags,
        tag_len: alg.tag_len,
    };
    let before = imp::flushes(&mac);
    match depth {
        None => mac.tag_batch(&mut batch),
        Some(d) => mac.tag_inflight(&mut batch, d),
    }
    .map_err(|r| r.to_string())?;
    Ok(imp::flushes(&mac) - before)
}

/// The library's entry points beyond the shim table: what only ipsec-mb has (levels, features, the
/// HMAC-MD5 empty tag, the flush count).
#[cfg(have_ipsecmb)]
mod imp {
    use super::{level_arch, Accel};
    use crate::mac::shim::ShimMac;
    use libc::{c_char, c_int, c_void, size_t};
    use std::ffi::CStr;
    use std::sync::OnceLock;

    extern "C" {
        fn imb_shim_set_empty_tag(handle: *mut c_void, tag: *const u8, len: size_t) -> c_int;
        fn imb_shim_used_arch(handle: *const c_void) -> c_int;
        fn imb_shim_flushes(handle: *const c_void) -> u64;
        fn imb_shim_probe(
            level: c_int,
            features: *mut u64,
            used_arch: *mut c_int,
            detail: *mut c_int,
        ) -> c_int;
        fn imb_shim_level_flags(level: c_int) -> u64;
        fn imb_shim_errno_string(errnum: c_int) -> *const c_char;
    }

    /// The `IMB_ARCH_*` path the context's manager runs.
    pub fn used_arch(mac: &ShimMac) -> i32 {
        // SAFETY: mac's handle is a live ipsec-mb context (made through this backend's table).
        unsafe { imb_shim_used_arch(mac.handle()) }
    }

    /// `IMB_FLUSH_JOB` calls that handed a job back on the context since it was made.
    pub fn flushes(mac: &ShimMac) -> u64 {
        // SAFETY: mac's handle is a live ipsec-mb context (made through this backend's table).
        unsafe { imb_shim_flushes(mac.handle()) }
    }

    /// Hand HMAC-MD5's empty-message tag (computed at key setup) to the context.
    pub fn set_empty_tag(mac: &ShimMac, tag: &[u8]) -> Result<(), String> {
        // SAFETY: mac's handle is a live ipsec-mb context; tag holds tag.len() bytes.
        let status = unsafe { imb_shim_set_empty_tag(mac.handle(), tag.as_ptr(), tag.len()) };
        match status {
            0 => Ok(()),
            status => Err(mac.reason(status)),
        }
    }

    /// The features ipsec-mb detects on this CPU (`mgr->features` after `alloc_mb_mgr`), asked once:
    /// they do not change while the process runs.
    pub fn features() -> Option<u64> {
        static FEATURES: OnceLock<Option<u64>> = OnceLock::new();
        *FEATURES.get_or_init(|| {
            let (mut features, mut used_arch, mut detail) = (0u64, 0, 0);
            // SAFETY: the three outputs are valid to write; the shim makes and frees its managers.
            let status = unsafe { imb_shim_probe(0, &mut features, &mut used_arch, &mut detail) };
            // Features are read before any init, so they are good unless allocation failed.
            (status == 0 || features != 0).then_some(features)
        })
    }

    /// The `used_arch` of a manager initialised for `level`, or why there is none.
    pub fn probe(level: Accel) -> Result<c_int, String> {
        let (mut features, mut used_arch, mut detail) = (0u64, 0, 0);
        // SAFETY: the three outputs are valid to write; the shim makes and frees its own manager.
        let status = unsafe {
            imb_shim_probe(
                level_arch(level).unwrap_or(0),
                &mut features,
                &mut used_arch,
                &mut detail,
            )
        };
        if status == 0 {
            return Ok(used_arch);
        }
        let level_text = (status == super::ERR_LEVEL)
            .then(|| self::features().and_then(|f| super::level_reason(level, f)))
            .flatten();
        Err(level_text.unwrap_or_else(|| {
            // SAFETY: imb_get_strerror returns a static NUL-terminated string for any value.
            let text = unsafe { CStr::from_ptr(imb_shim_errno_string(detail)) };
            format!(
                "no manager (shim status {status}; imb_errno {detail}: {})",
                text.to_string_lossy()
            )
        }))
    }

    /// The `IMB_CPUFLAGS_*` mask of a level as the header the shim was compiled with defines it.
    pub fn header_level_flags(level: Accel) -> Option<u64> {
        let arch = level_arch(level)?;
        // SAFETY: a pure function of its argument.
        Some(unsafe { imb_shim_level_flags(arch) })
    }
}

#[cfg(not(have_ipsecmb))]
mod imp {
    use super::{availability, Accel};
    use crate::mac::shim::ShimMac;
    use crate::mac::Availability;

    fn not_built() -> String {
        match availability() {
            Availability::Unavailable(why) => why,
            Availability::Available => "not built".to_string(),
        }
    }

    pub fn used_arch(_: &ShimMac) -> i32 {
        0
    }

    pub fn flushes(_: &ShimMac) -> u64 {
        0
    }

    pub fn set_empty_tag(_: &ShimMac, _: &[u8]) -> Result<(), String> {
        Err(not_built())
    }

    pub fn features() -> Option<u64> {
        None
    }

    pub fn probe(_: Accel) -> Result<i32, String> {
        Err(not_built())
    }

    pub fn header_level_flags(_: Accel) -> Option<u64> {
        None
    }
}
