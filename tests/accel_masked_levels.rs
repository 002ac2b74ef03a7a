//! The ISA levels OpenSSL and Crypto++ are masked to (`--accel sse,avx,avx2,avx512`): each level's
//! child process reports exactly that level's bits cleared and the level's own extension kept — proved
//! from what the libraries report, not from timings — refuses to run when the mask did not take, and
//! its functions pass the known-answer vectors, agree with `hw`, and run under the level's name.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use macbench::isolate;
use macbench::mac::{cryptopp, openssl, vectors, Accel, Availability, KeyParams};

const NOT_X86_64: &str = "the ISA levels are x86-64 code paths";
const CRYPTOPP_NOT_BUILT: &str = "Crypto++ backend not built (install libcrypto++-dev)";

use common::registered as function;

/// Whether `backend` runs `level` here; says why not (a visible skip) when it does not.
fn runs_level(backend: &str, level: Accel) -> bool {
    if common::skip_unless(cfg!(target_arch = "x86_64"), "x86_64", NOT_X86_64) {
        return false;
    }
    match function("hmac-sha256", backend, level).availability() {
        Availability::Available => true,
        Availability::Unavailable(why) => {
            common::skip(&format!("{backend}-{level}"), &why);
            false
        }
    }
}

#[test]
fn each_openssl_level_child_reports_exactly_its_bits_cleared_and_its_own_extension_kept() {
    if common::skip_unless(cfg!(target_arch = "x86_64"), "x86_64", NOT_X86_64) {
        return;
    }
    let hw = openssl::ia32cap().expect("libcrypto reports its capability vector");
    let mut ran = 0;
    for level in Accel::LEVELS {
        if !runs_level("openssl", level) {
            continue;
        }
        let caps = isolate::capabilities(level).expect("level child starts");
        let child: openssl::Ia32Cap = serde_json::from_value(
            caps.of("openssl")
                .expect("libcrypto reports its vector")
                .detail
                .clone(),
        )
        .unwrap();
        assert_eq!(
            child.env.as_deref(),
            Some(openssl::mask_env(level).as_str()),
            "{level}"
        );
        assert!(
            child.still_set(level).is_empty(),
            "{level}: {:?}",
            child.still_set(level)
        );
        // Exactly the level's bits differ from this (hw) process; the crypto extensions and
        // everything below the rung are as detected.
        if std::env::var_os(openssl::CAP_ENV).is_none() {
            let mut mask = [0u64; 2];
            for (_, lv, bit) in openssl::cleared(level) {
                mask[lv] |= 1 << bit;
            }
            assert_eq!(child.lv0, hw.lv0 & !mask[0], "{level} LV0 hw {:#x}", hw.lv0);
            assert_eq!(child.lv1, hw.lv1 & !mask[1], "{level} LV1 hw {:#x}", hw.lv1);
        }
        let (name, lv, bit) = openssl::level_top(level).unwrap();
        assert!(child.has(lv, bit), "{level} child lost {name}");
        // AES-NI (LV0 57), PCLMULQDQ (LV0 33) and SHA (LV1 29) stay wherever the CPU has them.
        for (lv, bit) in [(0, 57), (0, 33), (1, 29)] {
            assert_eq!(
                child.has(lv, bit),
                hw.has(lv, bit),
                "{level} LV{lv} bit {bit}"
            );
        }
        ran += 1;
    }
    if ran > 0 {
        eprintln!("checked {ran} OpenSSL level children");
    }
}

#[test]
fn the_ladder_clears_less_at_each_rung_and_keeps_the_crypto_extensions() {
    // OPENSSL_ia32cap(3): LV0 33 PCLMULQDQ, 57 AES-NI, 60 AVX; LV1 3 BMI1, 5 AVX2, 8 BMI2, 16 AVX512F,
    // 29 SHA, 32+9 VAES, 32+10 VPCLMULQDQ.
    let has = |accel: Accel, lv: usize, bit: u32| {
        openssl::cleared(accel)
            .iter()
            .any(|&(_, l, b)| (l, b) == (lv, bit))
    };
    let rungs = [
        Accel::Sw,
        Accel::Sse,
        Accel::Avx,
        Accel::Avx2,
        Accel::Avx512,
    ];
    for pair in rungs.windows(2) {
        let (lower, higher) = (openssl::cleared(pair[0]), openssl::cleared(pair[1]));
        assert!(
            higher.iter().all(|b| lower.contains(b)) && higher.len() < lower.len(),
            "{} must clear strictly less than {}",
            pair[1],
            pair[0]
        );
    }
    assert!(openssl::cleared(Accel::Hw).is_empty());
    for level in Accel::LEVELS {
        for (lv, bit) in [(0, 57), (0, 33), (1, 29)] {
            assert!(!has(level, lv, bit), "{level} clears LV{lv} bit {bit}");
        }
    }
    assert!(
        has(Accel::Sse, 0, 60) && !has(Accel::Avx, 0, 60),
        "AVX rung"
    );
    for bit in [3, 5, 8] {
        assert!(
            has(Accel::Avx, 1, bit) && !has(Accel::Avx2, 1, bit),
            "LV1 {bit}"
        );
    }
    for bit in [16, 32 + 9, 32 + 10] {
        assert!(
            has(Accel::Avx2, 1, bit) && !has(Accel::Avx512, 1, bit),
            "LV1 {bit}"
        );
    }
    assert_eq!(openssl::level_top(Accel::Avx2), Some(("avx2", 1, 5)));
    assert_eq!(openssl::level_top(Accel::Sw), None);
}

#[test]
fn a_level_child_refuses_to_run_when_its_mask_did_not_take() {
    if !runs_level("openssl", Accel::Avx2) {
        return;
    }
    // No mask at all: AVX-512 still on.
    macbench()
        .args(["__child", "caps", "avx2"])
        .env_remove(openssl::CAP_ENV)
        .assert()
        .failure()
        .stderr(predicates::str::contains("the avx2 mask is not in effect"));
    // Too much masked: the level's own extension gone.
    macbench()
        .args(["__child", "caps", "avx2"])
        .env(openssl::CAP_ENV, openssl::mask_env(Accel::Sw))
        .assert()
        .failure()
        .stderr(predicates::str::contains("lost avx2"));
    // `hw` has no child.
    macbench()
        .args(["__child", "caps", "hw"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("no backend switches to hw"));
}

#[test]
fn each_cryptopp_level_child_clears_its_flags_and_keeps_its_own() {
    if common::skip_unless(cryptopp::BUILT, "cryptopp", CRYPTOPP_NOT_BUILT)
        || common::skip_unless(cfg!(target_arch = "x86_64"), "x86_64", NOT_X86_64)
    {
        return;
    }
    let hw = cryptopp::Features(
        serde_json::from_value::<u32>(
            (cryptopp::PROCESS_SWITCH.capability)()
                .unwrap()
                .detail
                .clone(),
        )
        .unwrap(),
    );
    for level in [Accel::Sse, Accel::Avx, Accel::Avx2] {
        if !runs_level("cryptopp", level) {
            continue;
        }
        let caps = isolate::capabilities(level).expect("level child starts");
        let reported = caps.of("cryptopp").expect("Crypto++ built");
        let child = cryptopp::Features(reported.detail.as_u64().unwrap() as u32);
        for name in cryptopp::Features::NAMES {
            let cleared = cryptopp::cleared(level).contains(name);
            assert_eq!(
                child.has(name),
                hw.has(name) && !cleared,
                "{level}: {name} ({})",
                reported.summary
            );
        }
        assert!(child.has(cryptopp::level_top(level).unwrap()), "{level}");
        // The crypto extensions stay: the providers Crypto++ picks are the accelerated ones.
        if hw.has("aesni") {
            assert!(
                reported.summary.contains("AES AESNI"),
                "{}",
                reported.summary
            );
        }
        if hw.has("sha") {
            assert!(
                reported.summary.contains("SHA-256 SHANI"),
                "{}",
                reported.summary
            );
        }
    }
    // No AVX-512 code: unavailable, with the reason, and never keyed.
    let f = function("hmac-sha256", "cryptopp", Accel::Avx512);
    assert_eq!(
        f.availability(),
        Availability::Unavailable(cryptopp::NO_AVX512.to_string())
    );
    assert!(macbench::isolate::key(&f, b"key", KeyParams::default()).is_err());
    assert!(!cryptopp::PROCESS_SWITCH.covers(Accel::Avx512));
}

#[test]
fn every_masked_level_row_passes_its_vectors_and_agrees_with_hw() {
    // The known-answer and cross-backend tests walk `mac::functions()`; this pins that the masked
    // level rows are among the available ones there (not skipped) and checks them here too.
    let mut checked = Vec::new();
    for backend in ["openssl", "cryptopp"] {
        for level in Accel::LEVELS {
            if backend == "cryptopp" && (level == Accel::Avx512 || !cryptopp::BUILT) {
                continue;
            }
            if !runs_level(backend, level) {
                continue;
            }
            for alg in ["hmac-sha256", "cmac-aes128", "gmac-aes128"] {
                let f = function(alg, backend, level);
                assert!(f.is_process_switched(), "{f:?}");
                let result = vectors::self_test(&f, macbench::isolate::key);
                assert!(result.ok(), "{f:?}: {:?}", result.failures);
                assert!(result.vectors > 0, "{f:?}: no vector ran");
                let key = vec![7u8; f.algorithm.default_key_len];
                let nonce = vec![3u8; f.algorithm.nonce_len.unwrap_or(0)];
                let msg: Vec<u8> = (0..1500u32).map(|i| (i * 31) as u8).collect();
                let tag = |accel: Accel| {
                    let mut keyed = macbench::isolate::key(
                        &function(alg, backend, accel),
                        &key,
                        KeyParams::default(),
                    )
                    .unwrap();
                    let mut tag = vec![0u8; f.algorithm.tag_len];
                    keyed.tag_into(&nonce, &msg, &mut tag).unwrap();
                    tag
                };
                let at_level = tag(level);
                assert_ne!(
                    at_level,
                    vec![0u8; f.algorithm.tag_len],
                    "{f:?}: proxy failed"
                );
                assert_eq!(at_level, tag(Accel::Hw), "{f:?}");
                checked.push(f.id());
            }
        }
    }
    if cfg!(target_arch = "x86_64") {
        assert!(!checked.is_empty(), "no masked level row ran");
    }
}

#[test]
fn an_openssl_avx2_run_goes_through_the_avx2_child_and_reports_avx2() {
    if !runs_level("openssl", Accel::Avx2) {
        return;
    }
    // On the fake engine, which the avx2 child inherits: the route through the child is under test,
    // and a busy machine cannot fail the run.
    let out = common::exits_0(&mut common::fake_run(
        "run --alg hmac-sha256 --backend openssl --accel avx2 --sizes 64 --sessions 1 --cores 0 --duration 60ms --repeat 1 --json -",
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let doc = common::stdout_doc(&out);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{stderr}");
    assert_eq!(results[0]["accel"], "avx2");
    assert_eq!(results[0]["backend"], "openssl");
    assert_eq!(results[0]["failed"], false, "{}", results[0]);
    assert!(results[0]["metrics"]["messages"].as_u64().unwrap() > 0);
    // The library versions record what the avx2 child saw: AVX2 on, AVX-512 off.
    let versions = doc["host"]["library_versions"].to_string();
    assert!(
        versions.contains("avx2 child: OPENSSL_ia32cap="),
        "{versions}"
    );
    assert!(versions.contains("+avx2 +bmi2 +sha -avx512f"), "{versions}");
    assert!(!versions.contains("sw child"), "{versions}");
}

#[test]
fn list_shows_the_masked_levels_available_with_each_childs_report() {
    if common::skip_unless(cfg!(target_arch = "x86_64"), "x86_64", NOT_X86_64) {
        return;
    }
    let out = macbench().args(["list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let line = |backend: &str| {
        doc["host"]["library_versions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|pair| pair[0] == backend)
            .and_then(|pair| pair[1].as_str())
            .unwrap_or_default()
            .to_string()
    };
    let rows = doc["functions"].as_array().unwrap();
    for level in Accel::LEVELS {
        let row = rows
            .iter()
            .find(|r| {
                r["algorithm"] == "hmac-sha256"
                    && r["backend"] == "openssl"
                    && r["accel"] == level.to_string()
            })
            .unwrap();
        let here =
            function("hmac-sha256", "openssl", level).availability() == Availability::Available;
        assert_eq!(row["available"], here, "{row}");
        if here {
            assert!(
                row["selftest"].as_str().unwrap().starts_with("pass"),
                "{row}"
            );
            assert!(
                line("openssl").contains(&format!("; {level} child: OPENSSL_ia32cap=")),
                "{}",
                line("openssl")
            );
        }
    }
    if cryptopp::BUILT {
        assert!(
            line("cryptopp").contains("; avx child: "),
            "{}",
            line("cryptopp")
        );
        assert!(
            !line("cryptopp").contains("avx512 child"),
            "{}",
            line("cryptopp")
        );
    }
}
