//! The Intel ipsec-mb backend: its two paths through the job manager agree (a batch submitted as jobs
//! then flushed, against one job submitted and flushed at a time), whatever the mix of lengths and
//! however many lanes the batch fills; the empty message, which the 1.3 job API refuses for HMAC and
//! reads through for CMAC, gets the right tag; the `list` line names the manager's path. The ISA
//! levels: each level this CPU runs keys a manager the library reports on that very path
//! (`used_arch`), passes the known answers and tags like `hw`; a level the CPU lacks is unavailable
//! with the missing features named (checked on fake feature sets, so no such CPU is needed); the
//! level masks are the header's. When the backend is not built, that its rows say so. The
//! known-answer and cross-backend tests walk its declaration (`ipsecmb::BACKEND`) like every other
//! backend's, levels included.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::mac::{
    self, ipsecmb, vectors, Accel, Availability, Batch, KeyParams, MAX_BATCH, MAX_TAG_LEN,
};

fn skip_unless_built() -> bool {
    common::skip_unless(
        ipsecmb::BUILT,
        "ipsecmb",
        if cfg!(target_arch = "x86_64") {
            "ipsec-mb backend not built (install libipsec-mb-dev)"
        } else {
            "ipsec-mb backend not built: Debian's libipsec-mb is x86-64 only"
        },
    )
}

/// Every ipsec-mb function that runs here: `hw` and each ISA level this CPU has.
fn functions() -> Vec<mac::Function> {
    mac::functions()
        .into_iter()
        .filter(|f| f.backend.name == "ipsecmb" && f.availability() == Availability::Available)
        .collect()
}

/// The ISA levels this CPU runs, by the library's own detection.
fn levels_here() -> Vec<Accel> {
    let features = ipsecmb::library_features().unwrap();
    Accel::LEVELS
        .into_iter()
        .filter(|&level| ipsecmb::level_reason(level, features).is_none())
        .collect()
}

use common::bytes;

/// `f` keyed with the bytes of `key_seed`, and a message of each of its lengths ([`lengths_of`]),
/// the `i`-th the bytes of `message_seed + i`.
fn keyed_with_messages(
    f: &mac::Function,
    key_seed: u64,
    message_seed: u64,
) -> (Box<dyn mac::KeyedMac>, Vec<Vec<u8>>) {
    let key = bytes(key_seed, f.algorithm.default_key_len);
    let keyed = macbench::isolate::key(f, &key, KeyParams::default()).unwrap();
    let messages = lengths_of(f)
        .iter()
        .enumerate()
        .map(|(i, &n)| bytes(message_seed + i as u64, n))
        .collect();
    (keyed, messages)
}

/// Assert that the tag of each message of `batch` (as the batch gave them) is the tag `k` gives that
/// message alone with its nonce, and not all zero; `what` names the batch in a failure.
fn each_alone(k: &mut dyn mac::KeyedMac, batch: &Batch, what: &str) {
    let (nonce_len, tag_len) = (batch.nonce_len, batch.tag_len);
    for (i, msg) in batch.msgs.iter().enumerate() {
        let nonce = &batch.nonces[i * nonce_len..(i + 1) * nonce_len];
        let one = common::tag_of(k, tag_len, nonce, msg);
        let len = msg.len();
        let tag = &batch.tags[i * tag_len..(i + 1) * tag_len];
        assert_eq!(tag, one, "{what}: message {i} ({len} bytes)");
        assert_ne!(one, vec![0u8; tag_len], "{what}: zero tag");
    }
}

/// Lengths around every block boundary the entries have (16, 64, 128), the empty message included.
const LENGTHS: [usize; 16] = [
    0, 1, 15, 16, 17, 31, 32, 55, 56, 63, 64, 65, 111, 112, 128, 1500,
];

/// [`LENGTHS`] that the function's algorithm takes: the 3GPP functions refuse the empty message
/// (all but 128-EIA2); in their place, so that a batch still fills 16 lanes, a length just past the
/// 8-byte block of UIA1/UIA2.
fn lengths_of(f: &mac::Function) -> Vec<usize> {
    let accepted = f.algorithm.message_bits;
    let mut out: Vec<usize> = LENGTHS
        .into_iter()
        .filter(|&n| accepted.accepts_bytes(n as u64))
        .collect();
    if out.len() < LENGTHS.len() {
        out.push(9);
    }
    out
}

#[test]
fn a_batch_of_jobs_gives_the_tags_of_one_job_at_a_time() {
    if skip_unless_built() {
        return;
    }
    let fs = functions();
    // Every entry of hw and of each level this CPU runs, so no level's lanes go untested.
    let expected = ipsecmb::BACKEND
        .entries
        .iter()
        .filter(|e| e.accel == Accel::Hw || levels_here().contains(&e.accel))
        .count();
    assert_eq!(fs.len(), expected);
    for f in fs {
        let (nonce_len, tag_len) = (f.algorithm.nonce_len.unwrap_or(0), f.algorithm.tag_len);
        let (mut k, messages) = keyed_with_messages(&f, 7, 100);
        // Every batch size, so the flush runs with the lanes full, partly full and with one job.
        for n in 1..=MAX_BATCH.min(messages.len()) {
            let msgs: Vec<&[u8]> = messages[..n].iter().map(Vec::as_slice).collect();
            let nonces = bytes(900 + n as u64, n * nonce_len);
            let mut tags = vec![0u8; n * tag_len];
            let mut batch = Batch {
                msgs: &msgs,
                nonces: &nonces,
                nonce_len,
                tags: &mut tags,
                tag_len,
            };
            k.tag_batch(&mut batch).unwrap();
            each_alone(k.as_mut(), &batch, &format!("{f:?}: a batch of {n}"));
        }
    }
}

#[test]
fn the_empty_message_matches_rustcrypto() {
    if skip_unless_built() {
        return;
    }
    for f in functions() {
        // The 3GPP functions have no RustCrypto counterpart: tests/three_gpp.rs checks 128-EIA2's
        // empty message against every backend's CMAC, and the others refuse an empty message.
        if f.algorithm
            .vectors
            .as_ref()
            .is_some_and(|v| THREE_GPP_FILES.contains(&v.path))
        {
            continue;
        }
        let other = common::registered(f.algorithm.name, "rustcrypto", Accel::Hw);
        let key = bytes(3, f.algorithm.default_key_len);
        let nonce = bytes(4, f.algorithm.nonce_len.unwrap_or(0));
        let len = f.algorithm.tag_len;
        let (mut a, mut b) = ([0u8; MAX_TAG_LEN], [0u8; MAX_TAG_LEN]);
        macbench::isolate::key(&f, &key, KeyParams::default())
            .unwrap()
            .tag_into(&nonce, &[], &mut a[..len])
            .unwrap();
        other
            .with_key(&key, KeyParams::default())
            .unwrap()
            .tag_into(&nonce, &[], &mut b[..len])
            .unwrap();
        assert_eq!(a[..len], b[..len], "{f:?}: empty message");
    }
}

/// The 3GPP functions' vector files: what only ipsec-mb implements.
const THREE_GPP_FILES: [&str; 4] = [
    "vectors/eia2-aes128.vec",
    "vectors/eia3-zuc128.vec",
    "vectors/uia2-snow3g.vec",
    "vectors/uia1-kasumi.vec",
];

#[test]
fn the_list_line_names_the_managers_path_or_why_not_built() {
    let version = (ipsecmb::BACKEND.version)();
    match (ipsecmb::BACKEND.availability)() {
        Availability::Available => {
            assert!(version.starts_with("Intel ipsec-mb 1."), "{version}");
            assert!(version.contains(" path;"), "{version}");
            // What each level's manager reported, as `list` shows it.
            for level in Accel::LEVELS {
                let shown = if levels_here().contains(&level) {
                    format!("{level}={level}")
                } else {
                    format!("{level}=unavailable")
                };
                assert!(version.contains(&shown), "{shown} not in {version}");
            }
        }
        Availability::Unavailable(why) => {
            assert!(why.starts_with("not built: "), "{why}");
            assert!(why.contains("libipsec-mb-dev"), "{why}");
        }
    }
}

#[test]
fn every_level_this_cpu_runs_is_the_path_the_library_reports() {
    if skip_unless_built() {
        return;
    }
    let here = levels_here();
    if here.is_empty() {
        common::skip(
            "ipsecmb-levels",
            "this CPU runs none of ipsec-mb's ISA levels",
        );
        return;
    }
    for &level in &here {
        // A manager initialised for the level: its used_arch is that level's IMB_ARCH_*.
        let arch = ipsecmb::manager_arch(level).unwrap();
        assert_eq!(Some(arch), ipsecmb::level_arch(level), "{level}");
        assert_eq!(ipsecmb::arch_name(arch), level.to_string());
        // And every entry of the level keys (key setup refuses any other path).
        for f in functions().iter().filter(|f| f.accel == level) {
            let key = bytes(5, f.algorithm.default_key_len);
            assert!(
                macbench::isolate::key(f, &key, KeyParams::default()).is_ok(),
                "{f:?}"
            );
        }
    }
    // `hw` is the library's own choice, one of the paths above or the no-AES-NI one.
    let auto = ipsecmb::manager_arch(Accel::Hw).unwrap();
    assert!(ipsecmb::prove_arch(Accel::Hw, auto).is_ok(), "{auto}");
}

#[test]
fn a_manager_on_another_path_than_asked_is_refused() {
    assert!(ipsecmb::prove_arch(Accel::Avx2, 4).is_ok());
    let err = ipsecmb::prove_arch(Accel::Avx2, 2).unwrap_err();
    assert!(err.contains("init_mb_mgr_avx2"), "{err}");
    assert!(err.contains("used_arch 2 (sse)"), "{err}");
    assert!(ipsecmb::prove_arch(Accel::Avx512, 4).is_err());
    assert!(
        ipsecmb::prove_arch(Accel::Sse, 1).is_err(),
        "no-aesni is not sse"
    );
    // hw takes whatever real path the library chose, but not none.
    assert!(ipsecmb::prove_arch(Accel::Hw, 5).is_ok());
    assert!(ipsecmb::prove_arch(Accel::Hw, 0).is_err());
}

/// `IMB_FEATURE_*` bits, as intel-ipsec-mb.h numbers them, for fake feature sets.
const SHANI: u64 = 1 << 0;
const AESNI: u64 = 1 << 1;
const PCLMULQDQ: u64 = 1 << 2;
const CMOV: u64 = 1 << 3;
const SSE4_2: u64 = 1 << 4;
const AVX: u64 = 1 << 5;
const AVX2: u64 = 1 << 6;
const AVX512F: u64 = 1 << 7;
const AVX512DQ: u64 = 1 << 8;
const AVX512CD: u64 = 1 << 9;
const AVX512BW: u64 = 1 << 10;
const AVX512VL: u64 = 1 << 11;
const BMI2: u64 = 1 << 18;

#[test]
fn a_level_the_cpu_lacks_is_unavailable_naming_the_missing_features() {
    // An AVX2 machine without AVX-512 (a Haswell, say), with SHA-NI.
    let avx2_machine = SSE4_2 | CMOV | AESNI | PCLMULQDQ | SHANI | AVX | AVX2 | BMI2;
    for level in [Accel::Sse, Accel::Avx, Accel::Avx2] {
        assert_eq!(ipsecmb::level_reason(level, avx2_machine), None, "{level}");
    }
    let why = ipsecmb::level_reason(Accel::Avx512, avx2_machine).unwrap();
    assert!(
        why.starts_with("avx512: this CPU lacks AVX512F, AVX512DQ, AVX512CD, AVX512BW, AVX512VL ("),
        "{why}"
    );
    assert!(why.contains("init_mb_mgr_avx512"), "{why}");
    assert!(why.contains(&format!("{avx2_machine:#x}")), "{why}");
    assert_eq!(why.lines().count(), 1);
    // With the five AVX-512 subsets of IMB_CPUFLAGS_AVX512 (a Skylake-SP) every level runs.
    let skx = avx2_machine | AVX512F | AVX512DQ | AVX512CD | AVX512BW | AVX512VL;
    for level in Accel::LEVELS {
        assert_eq!(ipsecmb::level_reason(level, skx), None, "{level}");
    }
    // AVX-512 F, DQ and CD but not BW and VL: only what lacks is named.
    let partial = avx2_machine | AVX512F | AVX512DQ | AVX512CD;
    let why = ipsecmb::level_reason(Accel::Avx512, partial).unwrap();
    assert!(why.contains("lacks AVX512BW, AVX512VL ("), "{why}");
    // A machine without AES-NI runs none of the levels; the first lacks exactly AES-NI.
    let no_aes = avx2_machine & !AESNI;
    for level in Accel::LEVELS {
        let why = ipsecmb::level_reason(level, no_aes).unwrap();
        assert!(
            why.starts_with(&format!("{level}: this CPU lacks AES-NI")),
            "{why}"
        );
    }
    // AVX2 needs BMI2 as well (IMB_CPUFLAGS_AVX2).
    let why = ipsecmb::level_reason(Accel::Avx2, avx2_machine & !BMI2).unwrap();
    assert!(why.contains("lacks BMI2 ("), "{why}");
    // hw and sw are no ISA levels of ipsec-mb.
    assert_eq!(ipsecmb::level_reason(Accel::Hw, 0), None);
    assert_eq!(ipsecmb::level_flags(Accel::Sw), None);
}

#[test]
fn a_level_row_says_what_the_library_reports() {
    if skip_unless_built() {
        return;
    }
    let features = ipsecmb::library_features().unwrap();
    for f in mac::functions()
        .iter()
        .filter(|f| f.backend.name == "ipsecmb" && f.accel.is_isa_level())
    {
        let expected = match ipsecmb::level_reason(f.accel, features) {
            Some(why) => Availability::Unavailable(why),
            None => Availability::Available,
        };
        assert_eq!(f.availability(), expected, "{}", f.id());
    }
}

#[test]
fn the_level_masks_are_the_headers() {
    if skip_unless_built() {
        return;
    }
    for level in Accel::LEVELS {
        let ours = ipsecmb::level_flags(level).unwrap();
        assert_eq!(
            Some(ours),
            ipsecmb::header_level_flags(level),
            "{level}: IMB_CPUFLAGS_* differs from intel-ipsec-mb.h"
        );
        assert_ne!(ours, 0);
    }
    // Each level needs all of the one below it.
    for pair in Accel::LEVELS.windows(2) {
        let (lower, upper) = (
            ipsecmb::level_flags(pair[0]).unwrap(),
            ipsecmb::level_flags(pair[1]).unwrap(),
        );
        assert_eq!(upper & lower, lower, "{} ⊄ {}", pair[0], pair[1]);
        assert_ne!(upper, lower);
    }
}

#[test]
fn every_level_row_passes_the_vectors_and_tags_like_hw() {
    if skip_unless_built() {
        return;
    }
    let levels: Vec<_> = functions()
        .into_iter()
        .filter(|f| f.accel.is_isa_level())
        .collect();
    if levels.is_empty() {
        common::skip(
            "ipsecmb-levels",
            "this CPU runs none of ipsec-mb's ISA levels",
        );
        return;
    }
    for f in levels {
        let result = vectors::self_test(&f, macbench::isolate::key);
        assert!(result.ok(), "{}: {:?}", result.function, result.failures);
        assert!(result.vectors > 0, "{}: no vector ran", result.function);
        let hw = common::registered(f.algorithm.name, "ipsecmb", Accel::Hw);
        let key = bytes(21, f.algorithm.default_key_len);
        let nonce = bytes(22, f.algorithm.nonce_len.unwrap_or(0));
        let tag_len = f.algorithm.tag_len;
        let mut a = macbench::isolate::key(&f, &key, KeyParams::default()).unwrap();
        let mut b = macbench::isolate::key(&hw, &key, KeyParams::default()).unwrap();
        for (i, &n) in lengths_of(&f).iter().enumerate() {
            let msg = bytes(500 + i as u64, n);
            let (mut x, mut y) = ([0u8; MAX_TAG_LEN], [0u8; MAX_TAG_LEN]);
            a.tag_into(&nonce, &msg, &mut x[..tag_len]).unwrap();
            b.tag_into(&nonce, &msg, &mut y[..tag_len]).unwrap();
            assert_eq!(x[..tag_len], y[..tag_len], "{f:?} against hw at {n} bytes");
        }
    }
}

/// `inflight:N`: with at most N jobs in the manager (one flush forcing the oldest out at the bound),
/// every tag is still the tag of that message alone.
#[test]
fn jobs_kept_in_flight_give_the_tags_of_one_job_at_a_time() {
    if skip_unless_built() {
        return;
    }
    for f in functions() {
        let (nonce_len, tag_len) = (f.algorithm.nonce_len.unwrap_or(0), f.algorithm.tag_len);
        let (mut k, messages) = keyed_with_messages(&f, 11, 300);
        let msgs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
        let nonces = bytes(77, msgs.len() * nonce_len);
        for depth in [1, 2, 3, 4, 8, 16] {
            let mut tags = vec![0u8; msgs.len() * tag_len];
            let mut batch = Batch {
                msgs: &msgs,
                nonces: &nonces,
                nonce_len,
                tags: &mut tags,
                tag_len,
            };
            k.tag_inflight(&mut batch, depth).unwrap();
            each_alone(k.as_mut(), &batch, &format!("{f:?}: {depth} in flight"));
        }
    }
}

/// The job check runs once per job shape and later jobs of an accepted shape go unchecked (the shim's
/// `tag_jobs`): a length the library refuses is still refused with its reason after other lengths
/// were accepted, again on a second try (a refused shape is never remembered), and the accepted
/// length still tags.
#[test]
fn a_refused_length_stays_refused_after_accepted_ones() {
    if skip_unless_built() {
        return;
    }
    let f = functions()
        .into_iter()
        .find(|f| f.algorithm.name == "cmac-aes128" && f.accel == Accel::Hw)
        .unwrap();
    let key = bytes(3, f.algorithm.default_key_len);
    let mut k = macbench::isolate::key(&f, &key, KeyParams::default()).unwrap();
    let mut tag = [0u8; MAX_TAG_LEN];
    let tag = &mut tag[..f.algorithm.tag_len];
    let short = bytes(4, 64);
    let long = bytes(5, ipsecmb::JOB_MAX_LEN16 as usize + 1);
    k.tag_into(&[], &short, tag).unwrap();
    let first = tag.to_vec();
    for _ in 0..2 {
        let e = k.tag_into(&[], &long, tag).unwrap_err().to_string();
        assert!(e.contains("IMB_STATUS_INVALID_ARGS"), "{e}");
        k.tag_into(&[], &short, tag).unwrap();
        assert_eq!(tag, &first[..]);
    }
}

/// What `compare --against ipsecmb` asks before pairing with `ipsec_perf`: how many jobs of one call
/// came back through `IMB_FLUSH_JOB`. A burst of CMAC jobs fills the manager's lanes, and each call
/// must hand every tag back, so at least the last job needs a flush and never more than the burst.
#[test]
fn a_burst_of_multi_buffer_jobs_is_drained_by_flushes() {
    if skip_unless_built() {
        return;
    }
    for n in [1, 4, 16] {
        let flushes = ipsecmb::flushes_per_call("cmac-aes128", Accel::Hw, 64, n, None).unwrap();
        assert!(
            (1..=n as u64).contains(&flushes),
            "{n} jobs: {flushes} flushes"
        );
        let flushes = ipsecmb::flushes_per_call("cmac-aes128", Accel::Hw, 64, n, Some(2)).unwrap();
        assert!(
            (1..=n as u64).contains(&flushes),
            "{n} jobs, 2 in flight: {flushes} flushes"
        );
    }
}
