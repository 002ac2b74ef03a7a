//! A benchmark never times a wrong answer: a job the library refuses is an error on every path.
//!
//! Regression for Intel ipsec-mb 1.3 refusing HMAC jobs of 65,535 bytes or more while the hot loop
//! timed the refusals as 0.00 cycles/byte. Three lines of defence, each tested here:
//! 1. the registry knows the library's limit: a run leaves the sizes out, `tag` refuses up front;
//! 2. the pre-flight tags at the scenario's own lengths and dispatch mode before timing: with the
//!    registry's limit lifted, the scenario fails with the library's reason and a fatal warning;
//! 3. the hot loop checks every batch's status: each C backend's refused job (an over-long message, a
//!    nonce the library does not take) stops it in every dispatch mode with the library's reason.

#![allow(clippy::unwrap_used)]

mod common;

use macbench::bench::{self, AutoPolicy};
use macbench::engine::hot_loop::{Progress, SessionLoop};
use macbench::engine::{clock, Dispatch, Scenario};
use macbench::mac::{self, Accel, Availability, Function, VerifyMode};
use std::sync::atomic::{AtomicBool, AtomicU32};

fn function(alg: &str, backend: &str) -> Option<Function> {
    mac::functions().into_iter().find(|f| {
        f.algorithm.name == alg
            && f.backend.name == backend
            && f.accel == Accel::Hw
            && f.availability() == Availability::Available
    })
}

fn scenario(function: Function, size: u32, dispatch: Dispatch) -> Scenario {
    common::scenario(function, size, dispatch)
}

fn test_clock() -> clock::ClockInfo {
    clock::ClockInfo {
        reference_hz: 2e9,
        reference_source: "test".into(),
        timer_resolution_ns: 1,
        ..Default::default()
    }
}

const DISPATCHES: [Dispatch; 3] = [Dispatch::Single, Dispatch::Burst(4), Dispatch::Inflight(2)];

/// The registry's limit: ipsec-mb's HMAC at 65,536 bytes is refused by validation with the limit
/// named, and 65,534 bytes (the limit itself) is taken.
#[test]
fn ipsecmb_limit_is_a_registry_fact_that_validation_names() {
    let Some(f) = function("hmac-sha256", "ipsecmb") else {
        common::skip("ipsecmb", "Intel ipsec-mb is not built here");
        return;
    };
    assert_eq!(f.length_limit().map(|l| l.max_bytes), Some(65_534));
    assert!(f.accepts_bytes(65_534) && !f.accepts_bytes(65_535));
    let e = macbench::engine::validate(
        &scenario(f, 65_536, Dispatch::Single),
        &macbench::host::online_cpus(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("at most 65534 bytes") && e.contains("MB_MAX_LEN16"),
        "{e}"
    );
    // GMAC has no such limit in ipsec-mb.
    let gmac = function("gmac-aes128", "ipsecmb").unwrap();
    assert!(gmac.length_limit().is_none() && gmac.accepts_bytes(65_536));
}

/// With the registry's limit lifted, the pre-flight meets the library's refusal: the scenario is a
/// failed result with a fatal `refused` warning naming the library's reason, in every dispatch mode,
/// and carries no number.
#[test]
fn a_refused_job_fails_the_scenario_with_the_library_reason_not_zero_cycles() {
    let Some(f) = function("hmac-sha256", "ipsecmb") else {
        common::skip("ipsecmb", "Intel ipsec-mb is not built here");
        return;
    };
    for dispatch in DISPATCHES {
        let s = scenario(f.without_length_limit(), 65_536, dispatch);
        let r = bench::run_scenario(
            s,
            1,
            AutoPolicy::default(),
            &test_clock(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(r.failed, "{dispatch}");
        let w = &r.warnings[0];
        assert!(
            w.fatal && w.code == "refused",
            "{dispatch}: {:?}",
            r.warnings
        );
        assert!(
            w.message.contains("hmac-sha256/ipsecmb/hw")
                && (w.message.contains("65536 bytes") || w.message.contains("65536-byte")),
            "{dispatch}: {}",
            w.message
        );
        assert!(
            w.message.contains("IMB_STATUS_INVALID_ARGS"),
            "{dispatch}: {}",
            w.message
        );
        assert_eq!(r.metrics.absolute_cycles_per_byte, None, "{dispatch}");
        assert_eq!(r.metrics.apparent_cycles_per_byte, None, "{dispatch}");
        assert!(r.raw.is_empty(), "nothing was timed");
    }
}

/// Each C backend's refusal reaches the hot loop as an error with the library's reason, in every
/// dispatch mode, and the refused batch is not counted.
#[test]
fn the_hot_loop_stops_at_every_c_backends_refusal_in_every_dispatch_mode() {
    // (algorithm, backend, message length, nonce length given, what the reason must mention)
    let cases: &[(&str, &str, u32, usize, &str)] = &[
        (
            "hmac-sha256",
            "ipsecmb",
            65_536,
            0,
            "Invalid authentication message length",
        ),
        (
            "cmac-aes128",
            "ipsecmb",
            70_000,
            0,
            "Invalid authentication message length",
        ),
        // GMAC without an IV: each library refuses it in its own words.
        ("gmac-aes128", "mbedtls", 64, 0, "non-empty IV"),
        ("gmac-aes128", "nettle", 64, 0, "nonce"),
        ("gmac-aes128", "cryptopp", 64, 0, "Crypto++"),
        ("gmac-aes128", "openssl", 64, 0, "IV"),
    ];
    for &(alg, backend, len, nonce_len, says) in cases {
        let Some(f) = function(alg, backend) else {
            common::skip(backend, &format!("{backend} is not built here"));
            continue;
        };
        for dispatch in DISPATCHES {
            let pool = vec![0x5au8; len as usize * 2];
            let schedule = vec![(0u32, len), (len, len)];
            let phase = AtomicU32::new(1);
            let progress = Progress::default();
            let mut latency = Vec::new();
            let mut work = SessionLoop {
                pool: &pool,
                schedule: &schedule,
                next: 0,
                nonce_len,
                tag_len: f.algorithm.tag_len,
                batch: 1,
                dispatch,
                latency: &mut latency,
                verify: VerifyMode::None,
                expected: &[],
                kept: &mut [],
                kept_slots: &mut [],
                phase: &phase,
                seen: 1,
                progress: &progress,
                messages: 0,
                verify_failures: 0,
                stream: Default::default(),
            };
            let key = vec![7u8; f.algorithm.default_key_len];
            let mut mac = macbench::isolate::key(&f, &key, Default::default()).unwrap();
            let refused = work.run(mac.as_mut(), 8).expect_err(&format!(
                "{alg}/{backend} {dispatch}: a refused job was timed"
            ));
            assert!(
                refused.to_string().contains(says),
                "{alg}/{backend} {dispatch}: {refused}"
            );
            assert_eq!(
                work.messages, 0,
                "{alg}/{backend} {dispatch}: refusals counted"
            );
        }
    }
}

/// The pre-flight checks every length of the scenario against an independent backend when there is
/// one, and records what it checked and what it cost.
#[test]
fn the_preflight_names_its_reference_and_its_cost() {
    let f = function("hmac-sha256", "openssl").unwrap();
    let r = bench::run_scenario(
        scenario(f, 1500, Dispatch::Burst(4)),
        1,
        AutoPolicy::default(),
        &test_clock(),
        &AtomicBool::new(false),
    )
    .unwrap();
    let p = r.raw[0].preflight.as_ref().unwrap();
    assert_ne!(p.reference, "self", "another backend has HMAC-SHA256");
    assert!(p.reference.starts_with("hmac-sha256/") && !p.reference.contains("openssl"));
    assert_eq!(p.lengths, 1);
    assert_eq!(p.messages, 4, "one burst of four");
    assert_eq!(p.bytes, 4 * 1500);
    assert!(p.ns > 0);
    // The only backend of an algorithm is checked against its own one-at-a-time path.
    let blake3 = function("blake3-keyed", "rustcrypto").unwrap();
    assert!(macbench::engine::preflight::reference_for(&blake3).is_none());
}

/// The registry's ipsec-mb limit is the installed library's: for every function it limits, a message
/// of exactly the limit is tagged (and agrees with another backend where one exists), one byte more
/// is refused by the library itself.
#[test]
fn ipsecmb_limit_matches_the_installed_library() {
    let limited: Vec<Function> = mac::functions()
        .into_iter()
        .filter(|f| {
            f.backend.name == "ipsecmb"
                && f.accel == Accel::Hw
                && f.availability() == Availability::Available
                && f.length_limit().is_some()
        })
        .collect();
    if common::skip_unless(
        !limited.is_empty(),
        "ipsecmb",
        "Intel ipsec-mb is not built here",
    ) {
        return;
    }
    for f in limited {
        let limit = f.length_limit().unwrap().max_bytes as usize;
        let key = vec![3u8; f.algorithm.default_key_len];
        let mut mac = macbench::isolate::key(&f, &key, Default::default()).unwrap();
        let msg = vec![0xa5u8; limit + 1];
        let mut tag = vec![0u8; f.algorithm.tag_len];
        mac.tag_into(&[], &msg[..limit], &mut tag)
            .unwrap_or_else(|e| panic!("{}: {limit} bytes: {e}", f.id()));
        if let Some(other) = macbench::engine::preflight::reference_for(&f) {
            let mut want = vec![0u8; f.algorithm.tag_len];
            let mut r = macbench::isolate::key(&other, &key, Default::default()).unwrap();
            r.tag_into(&[], &msg[..limit], &mut want).unwrap();
            assert_eq!(
                tag,
                want,
                "{} against {} at {limit} bytes",
                f.id(),
                other.id()
            );
        }
        let e = mac.tag_into(&[], &msg, &mut tag).expect_err(&format!(
            "{}: {} bytes were taken",
            f.id(),
            limit + 1
        ));
        assert!(
            e.reason.contains("Invalid authentication message length"),
            "{}: {e}",
            f.id()
        );
    }
}

/// `tag` refuses a message longer than the library's limit up front, in one line naming the limit,
/// and `run` leaves such sizes out of a sweep with a note (refusing when nothing is left).
#[test]
fn tag_and_run_refuse_beyond_the_library_limit_in_one_line() {
    if function("hmac-sha256", "ipsecmb").is_none() {
        common::skip("ipsecmb", "Intel ipsec-mb is not built here");
        return;
    }
    let out = common::macbench()
        .args("tag --alg hmac-sha256 --backend ipsecmb --key 00".split_whitespace())
        .write_stdin(vec![0u8; 70_000])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("at most 65534 bytes") && err.contains("70000"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1);
    let out = common::macbench()
        .args(
            "run --alg hmac-sha256 --backend ipsecmb --sizes 65536 --sessions 1 --cores 0"
                .split_whitespace(),
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no scenario left") && err.contains("at most 65534 bytes"),
        "{err}"
    );
}

/// The full matrix failed `xcbc-aes128-96/rustcrypto` at 65,536 bytes: its pre-flight reference was
/// Intel ipsec-mb, which refuses jobs over 65,534 bytes. A reference must take the longest message
/// it will tag; where none of another backend can, the function checks its own one-at-a-time path.
#[test]
fn a_preflight_reference_takes_the_longest_message_it_will_tag() {
    use macbench::engine::preflight::reference_taking;
    let mut checked = 0;
    for f in macbench::mac::functions() {
        if f.availability() != macbench::mac::Availability::Available || !f.accepts_bytes(65536) {
            continue;
        }
        if let Some(other) = reference_taking(&f, 65536) {
            assert!(
                other.accepts_bytes(65536),
                "{} would be checked at 64 KiB against {}, which refuses it",
                f.id(),
                other.id()
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no function had a reference at 64 KiB");
}
