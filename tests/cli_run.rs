//! `macbench run` end to end: the JSON schema documented in the README, the CSVs, and bad input.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::{fake_run, macbench, macbench_line, usage_error_line};

#[test]
fn bad_scenarios_are_one_line_usage_errors() {
    for (line, needle) in [
        ("run --alg null --cores 4095", "CPU 4095 is not online"),
        ("run --alg null --cores 1-0", "--cores"),
        (
            "run --alg null --sessions 0",
            "--sessions must be at least 1",
        ),
        (
            "run --alg null --duration 100ms --window 50ms..200ms",
            "--window",
        ),
        (
            "run --alg null --duration 1s --window 0.5..2",
            "must lie inside the run",
        ),
        ("run --alg null --sizes -5", "negative"),
        ("run --alg null --sizes 99999999999", "not a byte count"),
        (
            "run --alg null --sizes 134217728",
            "larger than the engine's limit",
        ),
        ("run --alg null --sizes notamodel", "--sizes"),
        ("run --alg hmac-sha256 --accel fast", "--accel"),
        ("run --alg hmac-sha256 --verify maybe", "--verify"),
        ("run --alg hmac-sha256 --duration -1", "--duration"),
        ("run --alg hmac-shaa256", "did you mean hmac-sha256"),
    ] {
        usage_error_line(line, needle);
    }
    common::usage_error(
        &["run", "--alg", "null", "--sizes", ""],
        "--sizes names no size",
    );
}

/// The headline metrics that carry a 95 % interval.
const INTERVAL_METRICS: [&str; 5] = [
    "absolute_cycles_per_byte",
    "apparent_cycles_per_byte",
    "absolute_cycles_per_message",
    "apparent_cycles_per_message",
    "bytes_per_second",
];

/// What names a result, in the JSON and the CSV alike.
const SCENARIO_COLUMNS: [&str; 6] = ["algorithm", "backend", "accel", "size", "sessions", "cores"];

#[test]
fn json_and_csv_follow_the_documented_schema() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    // On the fake engine: the schema is under test, not the machine, so the run must exit 0.
    let out = fake_run("run --alg hmac-sha256,null --backend openssl,null --sizes 64,1500")
        .args(
            "--sessions 3 --duration 500ms --window 20%..90% --repeat 2 --target-ci 0"
                .split_whitespace(),
        )
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    common::ran(&out, &doc);
    assert_eq!(doc["tool"], "macbench");
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["partial"], false);
    for key in [
        "cpu_model",
        "cpu_features",
        "online_cpus",
        "kernel",
        "library_versions",
        "macbench_version",
    ] {
        assert!(!doc["host"][key].is_null(), "host.{key}");
    }
    assert!(doc["clock"]["reference_hz"].as_f64().unwrap() > 0.0);
    assert!(
        doc["clock"]["reference_source"]
            .as_str()
            .unwrap()
            .contains("TSC")
            || cfg!(not(target_arch = "x86_64"))
    );
    assert!(doc["scenario"].is_object());
    assert!(doc["harness"]["absolute_cycles_per_message"].is_number());
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        for key in SCENARIO_COLUMNS
            .iter()
            .chain(&["metrics", "threads", "warnings", "raw"])
        {
            assert!(!r[*key].is_null(), "results[].{key}");
        }
        let m = &r["metrics"];
        for key in
            INTERVAL_METRICS
                .iter()
                .chain(&["messages_per_second", "parallelism", "fairness"])
        {
            assert!(m.get(key).is_some(), "metrics.{key}");
        }
        assert_eq!(r["sessions"], 3);
        assert_eq!(r["threads"].as_array().unwrap().len(), 3);
        // --repeat 2, and --target-ci 0 adds none.
        let repeats = r["repeats"].as_u64().unwrap() as usize;
        assert_eq!(repeats, 2, "{repeats} repeats");
        assert_eq!(
            r["raw"].as_array().unwrap().len(),
            repeats,
            "raw counters of every repeat"
        );
        // The tick series of the median repeat and the 95 % intervals, beside the medians.
        let series = &r["series"];
        let t = series["t_ns"].as_array().unwrap();
        assert!(t.len() > 2, "a point per tick");
        assert_eq!(series["bytes"].as_array().unwrap().len(), t.len());
        assert!(series["window_first"].as_u64() < series["window_last"].as_u64());
        for key in INTERVAL_METRICS {
            let ci = &r["ci95"][key];
            let (low, high) = (ci["low"].as_f64().unwrap(), ci["high"].as_f64().unwrap());
            assert!(low <= high, "ci95.{key}");
        }
        // Recompute the aggregate from the raw counters of one repeat: f·W/Σb.
        let raw = &r["raw"][0];
        let f = doc["clock"]["reference_hz"].as_f64().unwrap();
        let w = raw["window_wall_ns"].as_f64().unwrap() / 1e9;
        let bytes: f64 = raw["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["window_end"]["bytes"].as_f64().unwrap()
                    - t["window_start"]["bytes"].as_f64().unwrap()
            })
            .sum();
        assert!(bytes > 0.0);
        let apparent = f * w / bytes;
        let spread = &r["spread"]["apparent_cycles_per_byte"];
        assert!(
            apparent >= spread["min"].as_f64().unwrap() * 0.999999
                && apparent <= spread["max"].as_f64().unwrap() * 1.000001
        );
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    for col in SCENARIO_COLUMNS.iter().chain(&[
        "absolute_cycles_per_byte",
        "apparent_cycles_per_byte",
        "parallelism",
        "fairness",
        "absolute_cycles_per_byte_ci95_low",
        "apparent_cycles_per_byte_ci95_high",
        "scenario_id",
        "host",
        "macbench_version",
        "reference_hz",
        "size_model",
    ]) {
        assert!(header.contains(col), "csv column {col}");
    }
    assert_eq!(text.lines().count(), 5, "header + 4 scenario rows");
    let threads = std::fs::read_to_string(dir.path().join("r-threads.csv")).unwrap();
    assert_eq!(
        threads.lines().count(),
        1 + 4 * 3,
        "one row per thread per scenario"
    );
    // No temporary files left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn run_help_lists_the_agreed_flags() {
    let out = macbench().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--alg",
        "--backend",
        "--accel",
        "--sizes",
        "--sessions",
        "--cores",
        "--float",
        "--duration",
        "--window",
        "--repeat",
        "--data",
        "--keys",
        "--verify",
        "--rekey",
        "--auto",
        "--json",
        "--csv",
        "--tick",
        "--target-ci",
        "--max-repeat",
        "--order",
        "--baseline",
        "--quiet-check",
    ] {
        assert!(help.contains(flag), "{flag}");
    }
}

#[test]
fn engine_flags_out_of_range_are_one_line_usage_errors() {
    for (line, needle) in [
        ("run --alg null --tick 10us", "--tick"),
        ("run --alg null --tick 5s", "maximum"),
        ("run --alg null --target-ci 150", "--target-ci"),
        (
            "run --alg null --repeat 5 --max-repeat 3",
            "--max-repeat 3 is below --repeat 5",
        ),
        // More sessions than this machine may run: refused up front, naming the limit, before any thread.
        (
            "run --alg null --sessions 900000",
            "is more than this process may run",
        ),
    ] {
        usage_error_line(line, needle);
    }
}

/// The results of one short HMAC-SHA256 run on RustCrypto (one session on CPU 0) in the dispatch
/// modes `dispatch`, on the real engine: the modes' own code paths are under test.
fn short_rustcrypto_run(dispatch: &str) -> serde_json::Value {
    let out = macbench_line("run --alg hmac-sha256 --backend rustcrypto --sizes 64 --sessions 1")
        .args("--cores 0 --duration 60ms --repeat 1 --max-repeat 1 --json - -q".split_whitespace())
        .args(["--dispatch", dispatch])
        .output()
        .unwrap();
    common::stdout_doc(&out)
}

/// `--dispatch` takes a list: each mode is a scenario of its own (a repeat collapses), recorded in the
/// result, named in the terminal rows, and the sweep's own record lists the modes as given.
#[test]
fn dispatch_modes_are_scenarios_of_their_own() {
    let doc = short_rustcrypto_run("single,burst:4,single");
    let modes: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["scenario"]["dispatch"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["single", "burst:4"]);
    assert_eq!(doc["scenario"]["dispatch"], "single,burst:4");
    usage_error_line("run --alg null --dispatch single,,burst:4", "empty item");
    usage_error_line(
        "run --alg null --dispatch single,burst:257",
        "N from 1 to 256",
    );
}

/// A window in which no message completes measures nothing: exit 1 and `failed: true`, never a
/// confident empty result. One message of 256 KiB through RustCrypto's bit-serial Twofish takes
/// ~200 M cycles (~80 ms at 2.5 GHz optimised, far longer in a debug build), so none completes
/// inside a 5 ms window that closes 10 ms after the start.
#[test]
fn a_window_that_measured_nothing_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out =
        macbench_line("run --alg cmac-twofish --backend rustcrypto --sizes 262144 --sessions 1")
            .args(
                "--duration 15ms --window 5ms..10ms --repeat 1 --target-ci 0 --no-harness --json"
                    .split_whitespace(),
            )
            .arg(&json)
            .output()
            .unwrap();
    common::failed_validity(&out, 1);
    let doc = common::results_at(&json);
    measured_nothing(&doc["results"][0]);
}

/// Assert `r` is a failed result that measured no message, its fatal warning starvation.
fn measured_nothing(r: &serde_json::Value) {
    assert_eq!(r["failed"], true, "{r}");
    assert_eq!(r["metrics"]["messages"], 0, "{r}");
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "starvation" && w["fatal"] == true),
        "{r}"
    );
}

/// Results that fail their validity checks end the run with exit 1 and one line counting them; the
/// fake engine's starved runs fail every result, whatever this machine is doing.
#[test]
fn failed_results_exit_1_with_their_count() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let run = |engine: &str| {
        common::null_run(&common::words(
            "--sizes 64,128 --repeat 1 --no-harness --json",
        ))
        .arg(&json)
        .env(common::FAKE_ENGINE, engine)
        .output()
        .unwrap()
    };
    common::failed_validity(&run("starved"), 2);
    let doc = common::results_at(&json);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    results.iter().for_each(measured_nothing);
    // The same flags on the fake engine's valid runs: exit 0, nothing failed.
    let out = run("valid");
    common::ran(&out, &common::results_at(&json));
}

/// With more sessions than cores the default duration grows, and says why.
#[test]
fn many_sessions_get_a_fitted_duration_that_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = fake_run("run --alg null --sizes 64 --cores 0 --sessions 8 --repeat 1 --target-ci 0")
        .args(["--no-harness", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("8 sessions on 1 core(s)"), "{stderr}");
    let doc = common::results_at(&json);
    common::ran(&out, &doc);
    let d = doc["results"][0]["scenario"]["duration_s"]
        .as_f64()
        .unwrap();
    assert!(d > 0.15, "duration {d}");
}

#[test]
fn a_bad_order_is_a_one_line_usage_error() {
    for (line, needle) in [
        ("run --alg null --order random", "--order"),
        ("run --alg null --order -1", "--order"),
    ] {
        usage_error_line(line, needle);
    }
    common::usage_error(&["run", "--alg", "null", "--order", ""], "--order");
}

/// The scenarios' results of an interleaved and a sequential run: the same results in the same
/// order with the same repeats, and the order recorded.
#[test]
fn interleaved_and_sequential_runs_write_the_same_structure() {
    let dir = tempfile::tempdir().unwrap();
    let results = |order: &str| {
        let json = dir.path().join(format!("{order}.json"));
        fake_run("run --alg null --sizes 64,128,256 --repeat 2")
            .args("--target-ci 0 --duration 100ms --no-harness".split_whitespace())
            .args(["--sessions", "1", "--cores"])
            .arg(macbench::host::online_cpus()[0].to_string())
            .args(["--order", order, "--json"])
            .arg(&json)
            .assert()
            .success();
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        assert_eq!(doc["scenario"]["order"], order);
        assert_eq!(
            doc["scenario"]["interleave_span_s"].as_f64(),
            Some(macbench::sweep::INTERLEAVE_SPAN.as_secs_f64())
        );
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let keys: Vec<String> = r.as_object().unwrap().keys().cloned().collect();
                (
                    r["size"].clone(),
                    r["repeats"].clone(),
                    r["raw"].as_array().unwrap().len(),
                    keys,
                )
            })
            .collect::<Vec<_>>()
    };
    let interleaved = results("interleaved");
    assert_eq!(interleaved.len(), 3);
    assert_eq!(interleaved, results("sequential"));
}

/// `--dispatch stream` is a scenario of its own: each size is an update of one long message, timed
/// through the library's incremental interface (the result is named `stream`); a function without
/// one fails with the library's refusal rather than being timed as something else; per-message
/// verification, which a stream has no tags for, is refused up front.
#[test]
fn stream_dispatch_is_a_scenario_and_refuses_what_it_cannot_do() {
    let doc = short_rustcrypto_run("single,stream");
    let results = doc["results"].as_array().unwrap();
    let modes: Vec<&str> = results
        .iter()
        .map(|r| r["scenario"]["dispatch"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["single", "stream"]);
    let stream = &results[1];
    assert_eq!(stream["failed"], false, "{stream}");
    assert!(
        stream["metrics"]["absolute_cycles_per_byte"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // The null function has no incremental interface: refused, with the reason, exit 1.
    let out = macbench_line("run --alg null --sizes 64 --duration 60ms --repeat 1 --max-repeat 1")
        .args("--dispatch stream --json - -q".split_whitespace())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = doc["results"][0].to_string();
    assert!(text.contains("takes whole messages only here"), "{text}");
    usage_error_line(
        "run --alg null --dispatch stream --verify inline",
        "--dispatch stream has one tag per stream",
    );
    // An empty chunk would leave the stream open for ever: refused before anything runs.
    usage_error_line(
        "run --alg null --dispatch stream --sizes 0,64",
        "an empty chunk feeds the stream nothing",
    );
}
