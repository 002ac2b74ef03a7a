//! The DPDK cryptodev backend on the software device `crypto_aesni_mb`: each of its four ways of
//! handing ops to the device (one at a time, a burst, a queue kept full, ops built at key setup)
//! gives the tags another library gives, for every function it registers and lengths from empty to
//! the largest it takes; the driver's own account counts every op, and says that dispatch `all`
//! built none in the call; a device has as many keyed objects as queue pairs and says so; the
//! results of a run carry the account and the driver's name. Bad input — an unknown device, a
//! device without the function, EAL refusing its arguments or its memory — is one line and exit 2,
//! with no runtime directory left behind. The known-answer and cross-backend tests walk the
//! backend's declaration like every other backend's.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::bytes;
use macbench::mac::{self, dpdk, Availability, Batch, KeyParams, MAX_DEPTH};
use std::sync::Mutex;

/// The device's queue pairs are shared by the tests of this binary, which run in parallel: a test
/// that keys many holds this.
static DEVICE: Mutex<()> = Mutex::new(());

fn skip_unless_built() -> bool {
    common::skip_unless(
        dpdk::BUILT,
        "dpdk",
        "dpdk backend not built (install libdpdk-dev)",
    )
}

fn functions() -> Vec<mac::Function> {
    mac::functions()
        .into_iter()
        .filter(|f| f.backend.name == "dpdk" && f.availability() == Availability::Available)
        .collect()
}

/// Another library's function of the same algorithm (the reference the tags must equal).
fn reference(f: &mac::Function) -> mac::Function {
    mac::functions()
        .into_iter()
        .find(|g| {
            g.algorithm.name == f.algorithm.name
                && g.backend.name != "dpdk"
                && g.accel == mac::Accel::Hw
                && g.availability() == Availability::Available
        })
        .unwrap_or_else(|| panic!("no reference for {}", f.id()))
}

/// The device's four ways of handing ops over, by name: one at a time, a burst, at most `depth`
/// queued, or ops built at key setup (dispatch `all`).
const MODES: [&str; 4] = ["single", "burst", "inflight", "all"];

/// `batch`'s tags through `keyed` by one of [`MODES`].
fn tag_by(
    keyed: &mut dyn mac::KeyedMac,
    mode: &str,
    batch: &mut Batch<'_>,
    depth: usize,
) -> Result<(), mac::Refused> {
    match mode {
        "single" => keyed.tag_each(batch),
        "burst" => keyed.tag_batch(batch),
        "inflight" => keyed.tag_inflight(batch, depth),
        _ => keyed.tag_prebuilt(batch),
    }
}

/// Lengths across the op's range: 1 byte, block edges, and the longest one mbuf segment takes.
const LENGTHS: &[usize] = &[1, 15, 16, 17, 63, 64, 65, 1000, 1500, 16384, 65534];

#[test]
fn every_dispatch_tags_like_another_library_and_the_driver_counts_every_op() {
    if skip_unless_built() {
        return;
    }
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let fs = functions();
    assert_eq!(fs.len(), 13, "the dpdk functions on crypto_aesni_mb");
    for f in fs {
        let key = bytes(7, f.algorithm.default_key_len);
        let nonce_len = f.algorithm.nonce_len.unwrap_or(0);
        let tag_len = f.algorithm.tag_len;
        // The 3GPP functions take up to their bit limit (EIA3: 8,188 bytes).
        let msgs: Vec<Vec<u8>> = LENGTHS
            .iter()
            .filter(|&&n| f.accepts_bytes(n as u64))
            .enumerate()
            .map(|(i, &n)| bytes(100 + i as u64, n))
            .collect();
        let nonces: Vec<u8> = bytes(3, nonce_len * msgs.len());
        let mut want = Vec::new();
        let mut reference = macbench::isolate::key(&reference(&f), &key, KeyParams::default())
            .unwrap_or_else(|e| panic!("{e}"));
        for (i, m) in msgs.iter().enumerate() {
            let nonce = &nonces[i * nonce_len..(i + 1) * nonce_len];
            want.extend(common::tag_of(reference.as_mut(), tag_len, nonce, m));
        }
        let slices: Vec<&[u8]> = msgs.iter().map(|m| m.as_slice()).collect();
        for mode in MODES {
            let mut keyed = macbench::isolate::key(&f, &key, KeyParams::default())
                .unwrap_or_else(|e| panic!("{}: {e}", f.id()));
            let mut tags = vec![0u8; tag_len * msgs.len()];
            let mut batch = Batch {
                msgs: &slices,
                nonces: &nonces,
                nonce_len,
                tags: &mut tags,
                tag_len,
            };
            tag_by(keyed.as_mut(), mode, &mut batch, 4)
                .unwrap_or_else(|e| panic!("{} {mode}: {e}", f.id()));
            assert_eq!(tags, want, "{} {mode}", f.id());
            let account = keyed.offload().expect("the driver keeps an account");
            assert_eq!(account.ops, msgs.len() as u64, "{} {mode}", f.id());
            assert!(account.tick_hz > 0, "{} {mode}", f.id());
            let built = if mode == "all" { 0 } else { msgs.len() as u64 };
            assert_eq!(
                account.built,
                built,
                "{} {mode}: ops built in the call",
                f.id()
            );
        }
    }
}

#[test]
fn a_tag_shorter_than_the_digest_is_its_prefix_and_a_batch_beyond_one_call_is_split() {
    if skip_unless_built() {
        return;
    }
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let f = common::registered("hmac-sha256", "dpdk", mac::Accel::Hw);
    let key = bytes(9, 32);
    let msgs: Vec<Vec<u8>> = (0..MAX_DEPTH + 3)
        .map(|i| bytes(i as u64, 40 + i))
        .collect();
    let slices: Vec<&[u8]> = msgs.iter().map(|m| m.as_slice()).collect();
    let mut tags = vec![0u8; 16 * msgs.len()];
    let mut keyed = macbench::isolate::key(&f, &key, KeyParams::default()).unwrap();
    let mut batch = Batch {
        msgs: &slices,
        nonces: &[],
        nonce_len: 0,
        tags: &mut tags,
        tag_len: 16,
    };
    keyed.tag_prebuilt(&mut batch).unwrap();
    let reference = reference(&f);
    for (i, m) in msgs.iter().enumerate() {
        let full = common::tag_with(&reference, &key, &[], m);
        assert_eq!(&tags[i * 16..(i + 1) * 16], &full[..16], "message {i}");
    }
}

#[test]
fn a_device_keys_as_many_objects_as_it_has_queue_pairs_and_says_so() {
    if skip_unless_built() {
        return;
    }
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let f = common::registered("cmac-aes128", "dpdk", mac::Accel::Hw);
    let mut held = Vec::new();
    let refusal = loop {
        match f.with_key(&[1u8; 16], KeyParams::default()) {
            Ok(k) => held.push(k),
            Err(e) => break e.to_string(),
        }
        assert!(held.len() <= 256, "no queue pair limit met");
    };
    assert!(refusal.contains("queue pairs"), "{refusal}");
    assert!(
        refusal.contains(&format!("has {} queue pairs", held.len())),
        "{refusal}"
    );
    // Given back, a queue pair keys again.
    held.pop();
    assert!(f.with_key(&[1u8; 16], KeyParams::default()).is_ok());
}

/// `crypto_aesni_mb` returns a wrong HMAC for the empty message (the shim refuses it there), so
/// the backend answers a lone empty message with the key's constant computed at key setup (known
/// answers, `tag`), while a timed batch holding one is refused. CMAC's empty message (RFC 4493 example 1) is the device's own.
#[test]
fn the_empty_message_gets_the_right_tag_and_is_never_timed_though_the_device_gets_hmac_wrong() {
    if skip_unless_built() {
        return;
    }
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let f = common::registered("hmac-sha256", "dpdk", mac::Accel::Hw);
    let key = [2u8; 16];
    let want = common::tag_with(&reference(&f), &key, &[], &[]);
    assert_eq!(common::tag_with(&f, &key, &[], &[]), want);
    // A batch the engine would time goes to the device, which refuses the empty message: a run of
    // 0-byte messages is refused, never timed on the key's constant.
    let mut keyed = f.with_key(&key, KeyParams::default()).unwrap();
    let msgs: [&[u8]; 3] = [b"abc", b"", b"de"];
    let mut tags = vec![0u8; 96];
    let refused = keyed
        .tag_prebuilt(&mut Batch {
            msgs: &msgs,
            nonces: &[],
            nonce_len: 0,
            tags: &mut tags,
            tag_len: 32,
        })
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("wrong HMAC for an empty message"),
        "{refused}"
    );
    let run = common::macbench_line(
        "run --backend dpdk --alg hmac-sha256 --sizes 0 --sessions 1 --duration 30ms --repeat 1 -q --json -",
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    let doc = common::stdout_doc(&run);
    let result = &doc["results"][0];
    assert_eq!(result["failed"], true, "{doc}");
    assert!(
        result["warnings"]
            .to_string()
            .contains("wrong HMAC for an empty message"),
        "{doc}"
    );
    let cmac = common::registered("cmac-aes128", "dpdk", mac::Accel::Hw);
    let key = hex("2b7e151628aed2a6abf7158809cf4f3c");
    let mut keyed = cmac.with_key(&key, KeyParams::default()).unwrap();
    let mut tag = [0u8; 16];
    keyed.tag_into(&[], &[], &mut tag).unwrap();
    assert_eq!(tag.to_vec(), hex("bb1d6929e95937287fa37d129b756746"));
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn list_names_dpdk_its_version_device_and_driver() {
    if skip_unless_built() {
        return;
    }
    let out = common::macbench_line("list --backend dpdk")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("backend dpdk:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("DPDK 2"), "{line}");
    assert!(
        line.contains("device crypto_aesni_mb, driver crypto_aesni_mb"),
        "{line}"
    );
}

#[test]
fn a_run_records_the_offload_account_and_the_driver() {
    if skip_unless_built() {
        return;
    }
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let out = common::macbench_line(
        "run --backend dpdk --alg cmac-aes128 --sizes 64,1024 --dispatch single,burst:32,all \
         --sessions 1 --duration 30ms --repeat 1 -q --json -",
    )
    .output()
    .unwrap();
    // Exit 1 is a validity check failing on a busy host; the account is there either way.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = common::stdout_doc(&out);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    for r in results {
        let m = &r["metrics"];
        for field in [
            "offload_build_cycles_per_op",
            "offload_enqueue_cycles_per_op",
            "offload_dequeue_cycles_per_op",
        ] {
            let v = m[field].as_f64();
            assert!(v.is_some_and(|v| v.is_finite() && v >= 0.0), "{field}: {r}");
        }
    }
    let versions = doc["host"]["library_versions"].to_string();
    assert!(versions.contains("driver crypto_aesni_mb"), "{versions}");
    // The summary prints the account as a matrix, and the HTML report as a section.
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(summary.contains("build+enqueue+dequeue"), "{summary}");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    std::fs::write(&json, &out.stdout).unwrap();
    let html = dir.path().join("r.html");
    common::succeeds(
        common::macbench_process()
            .arg("report")
            .arg(&json)
            .arg("-o")
            .arg(&html),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("What the offload costs the CPU"));
    assert!(page.contains("enqueue c/op"));
}

/// Runtime directories DPDK made for macbench processes and left (EAL makes one per process).
fn litter() -> Vec<String> {
    std::fs::read_dir("/var/run/dpdk")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("macbench-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_device_that_cannot_serve_is_one_line_and_exit_2_with_nothing_left() {
    if skip_unless_built() {
        return;
    }
    let before = litter();
    let run =
        "run --backend dpdk --alg hmac-sha256 --sizes 64 --sessions 1 --duration 30ms --repeat 1";
    let cases: &[(&str, Option<&str>, &str)] = &[
        (
            "--dpdk-device crypto_bogus",
            None,
            "no DPDK crypto driver is named crypto_bogus",
        ),
        (
            "--dpdk-device crypto_null",
            None,
            "device crypto_null (driver crypto_null) does not list hmac-sha256",
        ),
        (
            "",
            Some("--no-such-eal-option"),
            "DPDK's EAL refused to start",
        ),
        ("", Some("-m 2"), "Cannot allocate memory"),
        ("--dpdk-device a;b", None, "--dpdk-device \"a;b\""),
    ];
    for (flags, eal, needle) in cases {
        let mut cmd = common::macbench_line(&format!("{flags} {run}"));
        if let Some(eal) = eal {
            cmd.env("MACBENCH_DPDK_EAL", eal);
        }
        let out = cmd.output().unwrap();
        common::one_line_error(&out, 2, needle);
    }
    let after = litter();
    let new: Vec<&String> = after.iter().filter(|d| !before.contains(d)).collect();
    assert!(new.is_empty(), "left behind: {new:?}");
}

#[test]
fn without_the_backend_by_name_an_unserved_device_skips_its_rows() {
    if skip_unless_built() {
        return;
    }
    // `--backend all` meets dpdk among the others: a device that does not start costs its rows only.
    let out = common::macbench_line(
        "run --backend all --alg xcbc-aes128-96 --sizes 64 --sessions 1 --duration 30ms --repeat 1 -q --json -",
    )
    .env("MACBENCH_DPDK_EAL", "--no-such-eal-option")
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unavailable, skipped: dpdk: DPDK's EAL refused to start"),
        "{err}"
    );
    let doc = common::stdout_doc(&out);
    let backends: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["backend"].as_str())
        .collect();
    assert!(!backends.contains(&"dpdk"), "{backends:?}");
    assert!(!backends.is_empty());
}

/// Sessions key at once, each on its own queue pair: two contexts claiming one queue pair would
/// drive it from two threads (crypto_aesni_mb crashed so, before the claim moved under the lock).
#[test]
fn concurrent_sessions_each_drive_their_own_queue_pair() {
    if skip_unless_built() {
        return;
    }
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let out = common::macbench_line(
        "run --backend dpdk --alg cmac-aes128,hmac-sha1 --sizes 64 --dispatch single,all \
         --sessions 4 --duration 30ms --repeat 2 -q --json -",
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // It ran to its end (no crash: it died of SIGSEGV before the fix); exit 1 would be a validity
    // check failing on a busy host, which is not what this test is about.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {err}",
        out.status
    );
    let doc = common::stdout_doc(&out);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        // Every session keyed and tagged: no refusal, and tags checked against another library.
        assert!(!r["warnings"].to_string().contains("refused"), "{r}");
        assert!(r["metrics"]["messages"].as_u64() > Some(0), "{r}");
    }
}

/// `compare --against dpdk` on `crypto_aesni_mb`: beside our `all`, DPDK's own pmd-cyclecount with
/// the same ring, so five rounds give a verdict (whichever it is: no timing threshold), both
/// sides' per-op accounts in the note and no runtime directory left; beside a burst, its throughput
/// test, which never waits for a burst, so a ratio and no verdict. CI installs Debian's `dpdk`.
#[test]
fn compare_against_dpdk_judges_like_with_like_and_only_that() {
    if skip_unless_built() {
        return;
    }
    let binary = std::env::var("MACBENCH_DPDK_CRYPTO_PERF")
        .unwrap_or_else(|_| "dpdk-test-crypto-perf".into());
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|dir| dir.join(&binary).is_file())
        || std::path::Path::new(&binary).is_file();
    if common::skip_unless(
        found && macbench::system::online_cpus().len() >= 2,
        "dpdk-test-crypto-perf",
        "dpdk-test-crypto-perf missing (apt-get install dpdk) or fewer than two CPUs online",
    ) {
        return;
    }
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    common::exits_0(
        common::macbench_line("compare --against dpdk --alg cmac-aes128 --sizes 64 --rounds 5")
            .args(["--json", json.to_str().unwrap()]),
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let row = &file["rows"][0];
    assert_eq!(row["ours_function"], "cmac-aes128/dpdk/hw all", "{row}");
    assert!(
        row["theirs_cycles_per_byte"].as_f64().unwrap() > 0.0,
        "{row}"
    );
    assert!(row["verdict"].is_string(), "{row}");
    assert!(row["no_verdict_because"].is_null(), "{row}");
    let note = row["note"].as_str().unwrap();
    assert!(
        note.contains("pmd-cyclecount") && note.contains("ours: build"),
        "{note}"
    );
    assert!(litter().is_empty(), "{:?}", litter());

    let out = common::stdout_of(&mut common::macbench_line(
        "compare --against dpdk --alg cmac-aes128 --sizes 64 --rounds 1 --dispatch burst:32",
    ));
    let row = out.lines().find(|l| l.starts_with("dpdk")).unwrap();
    assert!(row.contains("no verdict: different quantity"), "{row}");
    assert!(row.contains("never waiting for a burst"), "{row}");
    assert!(litter().is_empty(), "{:?}", litter());
}

/// What `compare --against dpdk` cannot pair is refused before either side runs: a stream (a device
/// takes whole messages), a PCI device (the tool is told a driver, not an address), a device that
/// does not start or does not serve the function. One line each, exit 2, nothing left behind.
#[test]
fn compare_against_dpdk_refuses_what_it_cannot_pair_up_front() {
    if skip_unless_built() {
        return;
    }
    for (line, says) in [
        (
            "compare --against dpdk --dispatch stream",
            "a device takes whole messages",
        ),
        (
            "--dpdk-device 0000:3d:00.0 compare --against dpdk",
            "runs software devices named by their driver",
        ),
        (
            "--dpdk-device crypto_bogus compare --against dpdk",
            "no DPDK crypto driver is named crypto_bogus",
        ),
        (
            "--dpdk-device crypto_null compare --against dpdk --alg cmac-aes128",
            "does not list cmac-aes128 among its capabilities",
        ),
    ] {
        let out = common::macbench_line(&format!("{line} --sizes 64 --rounds 1"))
            .output()
            .unwrap();
        common::one_line_error(&out, 2, says);
    }
    assert!(litter().is_empty(), "{:?}", litter());
}

/// More sessions than the device has queue pairs (each session keys its own) is refused before the
/// plan or the table: one line naming the device's count, exit 2.
#[test]
fn more_sessions_than_queue_pairs_is_refused_before_anything_runs() {
    if skip_unless_built() {
        return;
    }
    let out = common::macbench_line(
        "run --backend dpdk --alg cmac-aes128 --sizes 64 --sessions 20 --repeat 1 --duration 50ms",
    )
    .output()
    .unwrap();
    common::one_line_error(&out, 2, "--sessions 20: the dpdk device has");
    assert!(String::from_utf8_lossy(&out.stderr).contains("queue pairs"));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `--dpdk-queue-depth`: the device's queue depth is a flag, recorded with the device in the results;
/// a queue of 32 takes batches of 256 (`all`) and 64 (`inflight:64`) in parts, and the pre-flight's
/// tags at those modes still equal another library's. A depth DPDK cannot make is one line, exit 2.
#[test]
fn the_queue_depth_is_a_flag_recorded_with_the_device_and_a_short_queue_takes_a_batch_in_parts() {
    if skip_unless_built() {
        return;
    }
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let out = common::macbench_line(
        "--dpdk-queue-depth 32 run --backend dpdk --alg cmac-aes128 --sizes 64,1024 \
         --dispatch all,inflight:64 --sessions 1 --duration 30ms --repeat 1 --json -",
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Exit 1 is a validity check failing on a busy host; a tag that differs is exit 2.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{err}");
    assert!(err.contains("checked against another backend"), "{err}");
    let doc = common::stdout_doc(&out);
    assert_eq!(doc["results"].as_array().unwrap().len(), 4);
    let versions = doc["host"]["library_versions"].to_string();
    assert!(
        versions.contains("queue pairs of 32 descriptors"),
        "{versions}"
    );
    for bad in ["0", "100", "65536", "x", "-5"] {
        let out = common::macbench()
            .args(["--dpdk-queue-depth", bad, "list"])
            .output()
            .unwrap();
        common::one_line_error(&out, 2, "give a power of two from 32 to 32768");
    }
}

/// A new key in place (`--rekey`, the study's key per op): the device's session is replaced on the
/// same queue pair, every dispatch mode's next tags are the new key's (dispatch `all`'s ready ops
/// included), the empty HMAC message's constant follows the key, and the driver's account goes on.
#[test]
fn a_new_key_replaces_the_session_in_place_and_every_mode_tags_with_it() {
    if skip_unless_built() {
        return;
    }
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    for name in ["hmac-sha256", "cmac-aes128", "gmac-aes128"] {
        let f = functions()
            .into_iter()
            .find(|f| f.algorithm.name == name)
            .unwrap();
        let (a, tag_len) = (f.algorithm, f.algorithm.tag_len);
        let (old_key, new_key) = (bytes(21, a.default_key_len), bytes(22, a.default_key_len));
        let nonce_len = a.nonce_len.unwrap_or(0);
        let msgs: Vec<Vec<u8>> = [1usize, 64, 1000]
            .iter()
            .map(|&n| bytes(23 + n as u64, n))
            .collect();
        let nonces = bytes(24, nonce_len * msgs.len());
        let mut reference =
            macbench::isolate::key(&reference(&f), &new_key, KeyParams::default()).unwrap();
        let mut want = Vec::new();
        for (i, m) in msgs.iter().enumerate() {
            want.extend(common::tag_of(
                reference.as_mut(),
                tag_len,
                &nonces[i * nonce_len..(i + 1) * nonce_len],
                m,
            ));
        }
        let mut keyed = macbench::isolate::key(&f, &old_key, KeyParams::default()).unwrap();
        let slices: Vec<&[u8]> = msgs.iter().map(|m| m.as_slice()).collect();
        // The old key's tags first, so that the ready ops hold the old session.
        let mut tags = vec![0u8; tag_len * msgs.len()];
        let mut batch = Batch {
            msgs: &slices,
            nonces: &nonces,
            nonce_len,
            tags: &mut tags,
            tag_len,
        };
        keyed.tag_prebuilt(&mut batch).unwrap();
        assert_ne!(tags, want, "{name}: the old key's tags");
        let before = keyed.offload().unwrap().ops;
        keyed
            .rekey(&new_key)
            .expect("the device changes keys in place")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for mode in MODES {
            let mut tags = vec![0u8; tag_len * msgs.len()];
            let mut batch = Batch {
                msgs: &slices,
                nonces: &nonces,
                nonce_len,
                tags: &mut tags,
                tag_len,
            };
            tag_by(keyed.as_mut(), mode, &mut batch, 2)
                .unwrap_or_else(|e| panic!("{name} {mode}: {e}"));
            assert_eq!(tags, want, "{name} {mode}: the new key's tags");
        }
        assert_eq!(
            keyed.offload().unwrap().ops,
            before + 4 * msgs.len() as u64,
            "{name}"
        );
        if name.starts_with("hmac-") {
            let (mut got, mut expected) = (vec![0u8; tag_len], vec![0u8; tag_len]);
            keyed.tag_into(&[], &[], &mut got).unwrap();
            reference.tag_into(&[], &[], &mut expected).unwrap();
            assert_eq!(got, expected, "{name}: the empty message under the new key");
        }
    }
}
