//! Software-only (`--accel sw`) variants: the child process really has the extensions switched off —
//! proved from the capability vectors its libraries report, not from timings — and sw functions run,
//! self-test and benchmark through it.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use macbench::isolate;
use macbench::mac::{self, cryptopp, openssl, Accel, Availability};

/// Whether the CPU has a feature, by the names `/proc/cpuinfo` uses on x86 ("aes", "sha_ni") and the
/// kernel's hardware capabilities on aarch64 ("aes", "pmull", "sha2"; right under qemu-user too).
fn cpu_has(flag: &str) -> bool {
    if cfg!(target_arch = "aarch64") {
        return macbench::system::topology::aarch64_features()
            .iter()
            .any(|f| f == flag);
    }
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == flag))
}

const NO_SWITCH: &str =
    "the software-only switches (OPENSSL_ia32cap, OPENSSL_armcap) exist on x86_64 and aarch64 only";
const CRYPTOPP_NOT_BUILT: &str = "Crypto++ backend not built (install libcrypto++-dev)";

/// An architecture with software-only switches.
/// Why the bit-for-bit comparison of the child's capability word with this process's is left out.
const CAP_SET_HERE: &str = "OPENSSL_ia32cap or OPENSSL_armcap is set in this environment, so this process's word is not the detected one and the sw child's cannot be compared with it bit for bit";

fn has_switch() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
}

fn x86_64() -> bool {
    cfg!(target_arch = "x86_64")
}

#[test]
fn sw_child_libcrypto_reports_the_masked_bits_cleared() {
    if common::skip_unless(has_switch(), "sw-switch", NO_SWITCH) {
        return;
    }
    let caps = isolate::capabilities(Accel::Sw).expect("sw child starts");
    if !x86_64() {
        return arm_child_libcrypto_reports_the_masked_bits_cleared(&caps);
    }
    let sw: openssl::Ia32Cap = serde_json::from_value(
        caps.of("openssl")
            .expect("libcrypto reports its capability vector")
            .detail
            .clone(),
    )
    .unwrap();
    assert!(
        sw.still_set(Accel::Sw).is_empty(),
        "still set in the child: {:?}",
        sw.still_set(Accel::Sw)
    );
    assert_eq!(
        sw.env.as_deref(),
        Some(openssl::mask_env(Accel::Sw).as_str())
    );
    // Against this (hw) process: exactly the masked bits differ, everything else is as detected.
    let hw = openssl::ia32cap().expect("capability vector here");
    let mut mask = [0u64; 2];
    for (_, lv, bit) in openssl::cleared(Accel::Sw) {
        mask[lv] |= 1 << bit;
    }
    if std::env::var_os("OPENSSL_ia32cap").is_none() {
        assert_eq!(sw.lv0, hw.lv0 & !mask[0], "LV0 hw {:#x}", hw.lv0);
        assert_eq!(sw.lv1, hw.lv1 & !mask[1], "LV1 hw {:#x}", hw.lv1);
    } else {
        common::skip("openssl-cap-unset", CAP_SET_HERE);
    }
    // On a CPU that has them, the switch visibly removed AES-NI and PCLMULQDQ.
    if cpu_has("aes") {
        assert!(hw.has(0, 57) && !sw.has(0, 57), "AES-NI (LV0 bit 57)");
    }
    if cpu_has("pclmulqdq") {
        assert!(hw.has(0, 33) && !sw.has(0, 33), "PCLMULQDQ (LV0 bit 33)");
    }
    if cpu_has("sha_ni") {
        assert!(hw.has(1, 29) && !sw.has(1, 29), "SHA (LV1 bit 29)");
    }
    if cpu_has("avx2") {
        assert!(hw.has(1, 5) && !sw.has(1, 5), "AVX2 (LV1 bit 5)");
    }
}

/// aarch64: libcrypto takes `OPENSSL_armcap` as the whole word, so the child's word is this process's
/// reduced to NEON (AWS-LC reads the same word and aborts on a bit its detection did not find).
fn arm_child_libcrypto_reports_the_masked_bits_cleared(caps: &isolate::Capabilities) {
    let sw: openssl::ArmCap = serde_json::from_value(
        caps.of("openssl")
            .expect("libcrypto reports its capability word")
            .detail
            .clone(),
    )
    .unwrap();
    assert!(
        sw.extensions_left().is_empty(),
        "still set in the child: {:?}",
        sw.extensions_left()
    );
    let hw = openssl::armcap().expect("capability word here");
    if std::env::var_os("OPENSSL_armcap").is_none() {
        assert_eq!(
            sw.bits,
            hw.bits & openssl::ARM_SOFTWARE_ONLY_KEEPS,
            "hw {:#x}",
            hw.bits
        );
        assert_eq!(sw.env.as_deref(), Some(format!("{:#x}", sw.bits).as_str()));
    } else {
        common::skip("openssl-cap-unset", CAP_SET_HERE);
    }
    if cpu_has("asimd") {
        assert!(hw.has(0) && sw.has(0), "NEON (bit 0) stays");
    }
    if cpu_has("aes") {
        assert!(hw.has(2) && !sw.has(2), "AES (bit 2)");
    }
    if cpu_has("pmull") {
        assert!(hw.has(5) && !sw.has(5), "PMULL (bit 5)");
    }
    if cpu_has("sha2") {
        assert!(hw.has(4) && !sw.has(4), "SHA256 (bit 4)");
    }
}

#[test]
fn arm_mask_has_the_documented_bit_positions() {
    // crypto/arm_arch.h: ARMV8_AES 1<<2, SHA1 1<<3, SHA256 1<<4, PMULL 1<<5, SHA512 1<<6, SHA3 1<<11.
    let bit = |name: &str| {
        openssl::ARM_SOFTWARE_ONLY_MASK
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, b)| b)
    };
    assert_eq!(
        ["aes", "sha1", "sha256", "pmull", "sha512", "sha3"].map(bit),
        [Some(2), Some(3), Some(4), Some(5), Some(6), Some(11)]
    );
    assert_eq!(bit("neon"), None, "NEON is the aarch64 baseline and stays");
    let parsed = openssl::ArmCap::parse("CPUINFO: OPENSSL_armcap=0xbd env:0x81").unwrap();
    assert_eq!(parsed.bits, 0xbd);
    assert_eq!(parsed.env.as_deref(), Some("0x81"));
    assert_eq!(
        parsed.extensions_left(),
        vec!["aes", "sha1", "sha256", "pmull"]
    );
    assert_eq!(
        openssl::ArmCap::parse("OPENSSL_armcap=0x81")
            .unwrap()
            .describe(),
        "OPENSSL_armcap=0x81 (+neon -aes -pmull -sha1 -sha256 -sha512 -sha3)"
    );
}

#[test]
fn mask_has_the_documented_bit_positions() {
    // OPENSSL_ia32cap(3): LV0 bit 33 PCLMULQDQ, 57 AES-NI, 60 AVX; LV1 bit 5 AVX2, 16 AVX512F, 29 SHA,
    // 32+9 VAES, 32+10 VPCLMULQDQ.
    let env = openssl::mask_env(Accel::Sw);
    let (lv0, lv1) = env.split_once(':').unwrap();
    let lv0 = u64::from_str_radix(lv0.trim_start_matches("~0x"), 16).unwrap();
    let lv1 = u64::from_str_radix(lv1.trim_start_matches("~0x"), 16).unwrap();
    for bit in [33, 57, 60] {
        assert_ne!(lv0 & (1 << bit), 0, "LV0 bit {bit}");
    }
    for bit in [5, 16, 29, 41, 42] {
        assert_ne!(lv1 & (1 << bit), 0, "LV1 bit {bit}");
    }
    // SSE2 (26), SSSE3 (41) and the CPUID/XSAVE bits stay.
    for bit in [26, 41, 58, 59] {
        assert_eq!(lv0 & (1 << bit), 0, "LV0 bit {bit} must stay");
    }
    let parsed =
        openssl::Ia32Cap::parse("CPUINFO: OPENSSL_ia32cap=0x2:0x20000000 env:~0x2").unwrap();
    assert_eq!((parsed.lv0, parsed.lv1), (2, 0x2000_0000));
    assert_eq!(parsed.still_set(Accel::Sw), vec!["sha"]);
}

#[test]
fn sw_child_cryptopp_uses_no_aesni_clmul_sha_avx() {
    if common::skip_unless(has_switch(), "sw-switch", NO_SWITCH)
        || common::skip_unless(cryptopp::BUILT, "cryptopp", CRYPTOPP_NOT_BUILT)
    {
        return;
    }
    let caps = isolate::capabilities(Accel::Sw).expect("sw child starts");
    let reported = caps.of("cryptopp").expect("Crypto++ built");
    let features = cryptopp::Features(reported.detail.as_u64().expect("feature bits") as u32);
    for name in cryptopp::cleared(Accel::Sw) {
        assert!(
            !features.has(name),
            "Crypto++ in the sw child still has {name}"
        );
    }
    let paths = &reported.summary;
    // Crypto++'s provider names: AESNI, SHANI on x86-64; ARMv8 on aarch64.
    for accelerated in ["AESNI", "SHANI", "ARMv8"] {
        assert!(!paths.contains(accelerated), "{paths}");
    }
    // This process is hw: on a CPU with AES instructions, Crypto++ uses them here.
    if cpu_has("aes") {
        let here = cryptopp::code_paths().unwrap();
        let name = if x86_64() { "AES AESNI" } else { "AES ARMv8" };
        assert!(here.contains(name), "{here}");
    }
}

#[test]
fn the_child_refuses_to_run_without_the_mask() {
    if common::skip_unless(has_switch(), "sw-switch", NO_SWITCH)
        || common::skip_unless(
            cpu_has("aes"),
            "cpu-aes",
            "this CPU has no AES-NI, so no mask to miss",
        )
    {
        return;
    }
    macbench()
        .args(["__child", "caps"])
        .env_remove(openssl::CAP_ENV)
        .assert()
        .failure()
        .stderr(predicates::str::contains("not in effect"));
}

#[test]
fn sw_availability_per_backend() {
    let row = |alg: &str, backend: &str| {
        mac::functions()
            .into_iter()
            .find(|f| f.algorithm.name == alg && f.backend.name == backend && f.accel == Accel::Sw)
            .unwrap_or_else(|| panic!("no sw row for {alg}/{backend}"))
    };
    if has_switch() {
        assert_eq!(
            row("hmac-sha256", "openssl").availability(),
            Availability::Available
        );
    }
    match row("cmac-aes128", "rustcrypto").availability() {
        Availability::Unavailable(why) => assert!(why.contains("no run-time switch"), "{why}"),
        Availability::Available => panic!("rustcrypto has no software-only switch"),
    }
}

#[test]
fn paper_preset_has_all_nine_functions_in_hw_and_sw() {
    if common::skip_unless(has_switch(), "sw-switch", NO_SWITCH)
        || common::skip_unless(cryptopp::BUILT, "cryptopp", CRYPTOPP_NOT_BUILT)
    {
        return;
    }
    let functions = macbench::spec::resolve_functions("paper", None, &[Accel::Hw, Accel::Sw])
        .unwrap()
        .functions;
    assert_eq!(
        functions.len(),
        2 * mac::PAPER_PRESET.len(),
        "{functions:?}"
    );
    for accel in [Accel::Hw, Accel::Sw] {
        let names: Vec<_> = functions
            .iter()
            .filter(|f| f.accel == accel)
            .map(|f| f.algorithm.name)
            .collect();
        assert_eq!(names, mac::PAPER_PRESET, "{accel}");
    }
}

#[test]
fn selftest_runs_the_sw_variants_in_the_child() {
    if common::skip_unless(has_switch(), "sw-switch", NO_SWITCH) {
        return;
    }
    let mut expect = vec!["hmac-sha256/openssl/sw", "cmac-aes128/openssl/sw"];
    if cryptopp::BUILT {
        expect.extend(["cmac-twofish/cryptopp/sw", "vmac-aes128-64/cryptopp/sw"]);
    }
    let out = macbench()
        .args([
            "selftest",
            "--alg",
            "hmac-sha256,cmac-aes128,cmac-twofish,vmac-aes128-64",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for id in expect {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} missing:\n{stdout}"));
        assert!(line.contains("pass"), "{line}");
    }
}

#[test]
fn a_sw_run_goes_through_the_child_and_reports_sw() {
    if common::skip_unless(has_switch(), "sw-switch", NO_SWITCH) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sw.json");
    // On the fake engine, which the child inherits: the route through the child is under test, and
    // a starved run on a busy machine cannot change the exit code.
    let doc = common::fake_run_to(
        "run --alg hmac-sha256 --backend openssl --accel sw --sizes 64 --sessions 1 --cores 0 --duration 60ms --repeat 1",
        &json,
    );
    let result = &doc["results"][0];
    assert_eq!(result["accel"], "sw");
    assert_eq!(result["backend"], "openssl");
    assert!(
        result["metrics"]["messages"].as_u64().unwrap() > 0,
        "{result}"
    );
    // The library versions record what the sw child saw.
    let versions = doc["host"]["library_versions"].to_string();
    assert!(
        versions.contains(&format!("sw child: {}=", openssl::CAP_ENV)),
        "{versions}"
    );
    let no_aes = if x86_64() { "-aesni" } else { "-aes" };
    assert!(versions.contains(no_aes), "{versions}");
}

#[test]
fn every_backend_with_sw_entries_declares_its_switch() {
    for backend in mac::BACKENDS {
        let has_sw = backend.entries.iter().any(|e| e.accel == Accel::Sw);
        assert_eq!(
            has_sw,
            backend.process_switch.is_some(),
            "{}: sw entries and a software-only switch go together",
            backend.name
        );
    }
}

#[test]
fn sw_keys_through_the_isolation_layer_and_the_registry_refuses_to_key_it_here() {
    if common::skip_unless(has_switch(), "sw-switch", NO_SWITCH) {
        return;
    }
    let function = |accel: Accel| common::registered("hmac-sha256", "openssl", accel);
    // Nothing is installed before main: in this (unswitched) process the registry keys a switched
    // function nowhere, and says where it keys; a proxy would otherwise be timed as the function.
    let refused = function(Accel::Sw)
        .with_key(b"key", mac::KeyParams::default())
        .err()
        .expect("a sw function keyed in an unswitched process")
        .to_string();
    assert!(
        refused.contains("hmac-sha256/openssl/sw keys only in a process switched to sw")
            && refused.contains("isolate::key"),
        "{refused}"
    );
    let tag = |accel: Accel| {
        let mut keyed =
            macbench::isolate::key(&function(accel), b"key", mac::KeyParams::default()).unwrap();
        let mut tag = [0u8; 32];
        keyed.tag_into(&[], b"message", &mut tag).unwrap();
        tag
    };
    let sw = tag(Accel::Sw);
    assert_ne!(sw, [0u8; 32], "a failed proxy round trip gives a zero tag");
    assert_eq!(sw, tag(Accel::Hw));
}

#[test]
fn host_facts_start_no_child_and_list_adds_what_the_child_saw() {
    let host = macbench::host::Host::detect();
    let openssl = |h: &macbench::host::Host| {
        h.library_versions
            .iter()
            .find(|(name, _)| name == "openssl")
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    let here = openssl(&host);
    assert!(!here.contains("sw child"), "{here}");
    if common::skip_unless(has_switch(), "sw-switch", NO_SWITCH) {
        return;
    }
    let env = openssl::CAP_ENV;
    assert!(here.contains(&format!("; hw: {env}=")), "{here}");
    let with_child = openssl(&macbench::isolate::with_children(
        host.clone(),
        &[Accel::Sw],
    ));
    assert!(
        with_child.starts_with(&here) && with_child.contains(&format!("; sw child: {env}=")),
        "{with_child}"
    );
}

/// `--accel sw` works whatever the executable is called (renamed, symlinked, `cargo install`ed): the
/// child is this process's own executable, not "a file named macbench next to it". Regression: a
/// renamed copy dropped the sw rows (and exited 0).
#[test]
fn a_renamed_executable_runs_its_own_software_only_children() {
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("mb");
    let json = dir.path().join("r.json");
    std::fs::copy(assert_cmd::cargo::cargo_bin("macbench"), &renamed).unwrap();
    let out = std::process::Command::new(&renamed)
        .args("run --accel hw,sw --alg hmac-sha256 --sizes 64 --sessions 1 --cores 0 --duration 30ms --repeat 1 --max-repeat 1 --target-ci 0 --no-harness --json".split_whitespace())
        .arg(&json)
        .env_remove("MACBENCH_EXE")
        .env(common::FAKE_ENGINE, "valid")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // On the fake engine (the child inherits it): the route is under test, not the machine, so
    // both rows are valid and the run exits 0.
    let doc = common::results_at(&json);
    common::ran(&out, &doc);
    let versions = doc["host"]["library_versions"].to_string();
    assert!(
        versions.contains("sw child: "),
        "the sw child answered: {versions}"
    );
    assert!(stdout.contains("hmac-sha256/openssl/hw"), "{stdout}");
    assert!(stdout.contains("hmac-sha256/openssl/sw"), "{stdout}");
}

/// The runner is chosen where the scenario is planned: a switched function's scenario runs in its
/// acceleration's child, everything else in this process's engine.
#[test]
fn a_switched_scenario_runs_in_its_child_and_hw_in_this_process() {
    let scenario = |accel: Accel| {
        let function = common::registered("hmac-sha256", "openssl", accel);
        common::scenario(function, 64, macbench::engine::Dispatch::default())
    };
    assert_eq!(
        isolate::runner_for(&scenario(Accel::Hw)).place(),
        "this process"
    );
    let expected = if has_switch() {
        "child"
    } else {
        "this process"
    };
    assert_eq!(isolate::runner_for(&scenario(Accel::Sw)).place(), expected);
}

/// One `sw` child serves every switched run of its acceleration (starting one per run spent ~60 ms
/// of each run outside its window), and one that died between runs is replaced without losing the
/// next run.
#[test]
fn one_child_serves_every_run_of_its_acceleration_and_a_dead_one_is_replaced() {
    use isolate::Runner;
    if common::skip_unless(has_switch(), "sw-switch", NO_SWITCH) {
        return;
    }
    let function = common::registered("hmac-sha256", "openssl", Accel::Sw);
    let scenario = common::scenario(function, 64, macbench::engine::Dispatch::default());
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let measured = |raw: &macbench::engine::RawRun| {
        raw.threads
            .iter()
            .map(|t| t.window_end.messages - t.window_start.messages)
            .sum::<u64>()
    };
    let first = isolate::InChild.run(&scenario, &cancel).expect("a sw run");
    let pid = isolate::run::child_pid(Accel::Sw).expect("the sw child is kept");
    let second = isolate::InChild
        .run(&scenario, &cancel)
        .expect("a second sw run");
    assert_eq!(
        isolate::run::child_pid(Accel::Sw),
        Some(pid),
        "a second child started"
    );
    assert!(measured(&first) > 0 && measured(&second) > 0);
    // SAFETY: a signal to the child this process started.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    let third = isolate::InChild
        .run(&scenario, &cancel)
        .expect("a run after its child was killed goes to a new one");
    assert!(measured(&third) > 0);
    let new = isolate::run::child_pid(Accel::Sw).expect("the new child is kept");
    assert_ne!(new, pid);
}
