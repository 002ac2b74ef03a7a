//! Inputs that used to hang or end in exit 0 with nothing done, each now one line and a code a script
//! can use: `tag --key-file /dev/zero` read without bound; `--max-repeat 4294967295 --target-ci 0.01`
//! never ended; `report` of a file without results and `diff` of files with nothing in common exited 0.

#![allow(clippy::unwrap_used)]

mod common;

use common::{macbench, macbench_line};

#[test]
fn a_key_file_without_end_is_refused_at_its_bound() {
    common::fails_with(
        macbench()
            .args("tag --alg hmac-sha256 --key-file /dev/zero".split_whitespace())
            .write_stdin("x")
            .timeout(std::time::Duration::from_secs(60)),
        2,
        "longer than 65536 bytes",
    );
}

#[test]
fn repeats_are_bounded() {
    common::fails_with(
        macbench_line("run --alg null --sizes 64 --max-repeat 4294967295 --target-ci 0.01")
            .timeout(std::time::Duration::from_secs(60)),
        2,
        "--max-repeat: 4294967295 is more than the maximum 1000",
    );
}

#[test]
fn a_report_of_no_results_and_a_diff_of_nothing_in_common_fail() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.json");
    std::fs::write(
        &empty,
        r#"{"schema_version":1,"tool":"macbench","results":[]}"#,
    )
    .unwrap();
    common::fails_with(
        macbench()
            .arg("report")
            .arg(&empty)
            .arg("-o")
            .arg(dir.path().join("r.html")),
        1,
        "nothing to report",
    );
    assert!(
        !dir.path().join("r.html").exists(),
        "no empty report written"
    );
    let fixture = "tests/fixtures/results-ecda402.json";
    let out = common::fails_with(
        macbench().arg("diff").arg(&empty).arg(fixture),
        1,
        "nothing was compared",
    );
    // The rows still say what is where, each named with its dispatch mode.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("hmac-sha256/openssl/hw burst:4") && stdout.contains("only in NEW"),
        "{stdout}"
    );
    common::fails_with(
        macbench().arg("diff").arg(&empty).arg(&empty),
        1,
        "no results in either file",
    );
}

#[test]
fn run_says_what_it_will_cost_and_refuses_a_budget_with_a_duration() {
    let plan = "run --alg null --sizes 64,128 --duration 20ms --repeat 2 --no-harness --cores 0";
    let out = common::fake_run(plan)
        .args(["--max-repeat", "3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    common::exited_0(&out); // on the fake engine: the flags were taken
                            // --repeat without --target-ci: exactly that many runs, said so.
    assert!(
        err.contains(
            "plan: 2 scenario(s) × 2 repeat(s) × 0.020 s ≈ 0.1 s of runs; no extra repeats"
        ),
        "{err}"
    );
    let out = common::fake_run(plan)
        .args("--target-ci 5 --max-repeat 3".split_whitespace())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    common::exited_0(&out); // on the fake engine: the flags were taken
    assert!(
        err.contains("≈ 0.1 s of runs; budget 52 s: what they leave goes to extra repeats (up to 3 a scenario) where the 95 % interval is widest against ±5 %"),
        "{err}"
    );
    common::fails_with(
        macbench().args("run --budget 10s --duration 1s".split_whitespace()),
        2,
        "--budget 10s and --duration 1s",
    );
}

#[test]
fn diff_summarises_and_fails_on_a_regression_beyond_noise() {
    // NEW is OLD with one result's cycles doubled and its intervals moved with them: slower beyond
    // noise by 100 %.
    let dir = tempfile::tempdir().unwrap();
    let old = "tests/fixtures/results-ecda402.json";
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(old).unwrap()).unwrap();
    let r = &mut doc["results"][0];
    for metric in ["absolute_cycles_per_byte", "apparent_cycles_per_byte"] {
        let v = r["metrics"][metric].as_f64().unwrap();
        r["metrics"][metric] = serde_json::json!(v * 2.0);
        for end in ["low", "high"] {
            if let Some(x) = r["ci95"][metric][end].as_f64() {
                r["ci95"][metric][end] = serde_json::json!(x * 2.0);
            }
        }
        for end in ["min", "max"] {
            if let Some(x) = r["spread"][metric][end].as_f64() {
                r["spread"][metric][end] = serde_json::json!(x * 2.0);
            }
        }
    }
    let new = dir.path().join("new.json");
    std::fs::write(&new, doc.to_string()).unwrap();
    let out = macbench().arg("diff").arg(old).arg(&new).output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("summary: 0 faster, 1 slower beyond noise, 3 within noise"),
        "{stdout}"
    );
    common::fails_with(
        macbench()
            .args(["diff", "--fail-on-regression", "50", old])
            .arg(&new),
        1,
        "1 result(s) slower beyond noise by more than 50 %, the worst first: hmac-sha256/openssl/hw 64: +100.0 %",
    );
    let out = macbench()
        .args(["diff", "--fail-on-regression", "150", old])
        .arg(&new)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "a 100 % regression passes a 150 % gate"
    );
}

/// Issue 47: `diff --fail-on-regression` put every regressed cell on its one line (144 cells: ~7,000
/// characters). Now the count, the worst ten (worst first), and how many more `--json` lists.
#[test]
fn fail_on_regression_names_the_worst_ten_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("tests/fixtures/results-ecda402.json").unwrap(),
    )
    .unwrap();
    // Twelve sizes of one function; in NEW, size k is (2 + k/10)× slower, its intervals moved along.
    let sweep = |slower: bool| {
        let mut doc = fixture.clone();
        let template = doc["results"][0].clone();
        let results: Vec<serde_json::Value> = (1..=12u64)
            .map(|k| {
                let mut r = template.clone();
                let size = 64 * k;
                r["size"] = serde_json::json!(size);
                r["mean_message_bytes"] = serde_json::json!(size as f64);
                r["scenario"]["size"]["size"] = serde_json::json!(size);
                let messages = r["metrics"]["messages"].as_u64().unwrap();
                r["metrics"]["bytes"] = serde_json::json!(messages * size);
                let factor = if slower { 2.0 + k as f64 / 10.0 } else { 1.0 };
                for metric in ["absolute_cycles_per_byte", "apparent_cycles_per_byte"] {
                    let v = r["metrics"][metric].as_f64().unwrap();
                    r["metrics"][metric] = serde_json::json!(v * factor);
                    for end in ["low", "high"] {
                        let x = r["ci95"][metric][end].as_f64().unwrap();
                        r["ci95"][metric][end] = serde_json::json!(x * factor);
                    }
                    for end in ["min", "max"] {
                        let x = r["spread"][metric][end].as_f64().unwrap();
                        r["spread"][metric][end] = serde_json::json!(x * factor);
                    }
                }
                r
            })
            .collect();
        doc["results"] = serde_json::json!(results);
        doc
    };
    let old = dir.path().join("old.json");
    let new = dir.path().join("new.json");
    std::fs::write(&old, sweep(false).to_string()).unwrap();
    std::fs::write(&new, sweep(true).to_string()).unwrap();
    let out = macbench()
        .args(["diff", "--fail-on-regression", "50"])
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    common::fails_with(
        macbench()
            .args(["diff", "--fail-on-regression", "50"])
            .arg(&old)
            .arg(&new),
        1,
        "12 result(s) slower beyond noise by more than 50 %, the worst first: hmac-sha256/openssl/hw 768: +220.0 %; hmac-sha256/openssl/hw 704: +210.0 %;",
    );
    assert!(err.trim_end().ends_with("; and 2 more (--json)"), "{err}");
    assert_eq!(err.matches("hmac-sha256/openssl/hw").count(), 10, "{err}");
    assert!(!err.contains(" 64: ") && !err.contains(" 128: "), "{err}");
}

/// An error line repeats at most 100 characters of any one input token (a 5,000-character `--alg`
/// used to come back whole), and says how long it was.
#[test]
fn error_lines_cut_what_they_echo() {
    let long = "x".repeat(5000);
    let out = macbench().args(["run", "--alg", &long]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.len() < 2000, "{} bytes", err.len());
    assert!(err.contains("…(5003 characters)"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1);
}

/// A window below 1000 × the timer's resolution is refused before anything runs (a 1 ns window was
/// timed and printed).
#[test]
fn a_window_the_clock_cannot_resolve_is_refused() {
    common::fails_with(
        common::null_run(&["--sizes", "64", "--duration", "20ms", "--no-harness"])
            .args(["--window", "0.01..0.010000001"]),
        2,
        "window is under 1000 × the timer's resolution",
    );
}

#[test]
fn target_ci_takes_a_percent_sign() {
    let out = common::null_run(&["--sizes", "64", "--duration", "20ms", "--target-ci", "50%"])
        .args(["--no-harness", "--cores", "0"])
        .output()
        .unwrap();
    common::exited_0(&out); // on the fake engine: the flags were taken
    common::fails_with(
        macbench().args(["run", "--target-ci", "five%"]),
        2,
        "is not a percentage",
    );
}

/// A named backend that lacks a function says which backends have it, instead of "no available
/// backend offers it".
#[test]
fn a_backend_without_the_function_names_those_that_have_it() {
    common::fails_with(
        &mut macbench_line("run --alg kmac128 --backend nettle"),
        2,
        "kmac128/hw: --backend nettle does not offer it; backends that do here: openssl, rustcrypto",
    );
}

/// Negative numbers for the new flags get our own one line naming the flag, not clap's "unexpected
/// argument '-1' found".
#[test]
fn negative_values_of_the_new_flags_are_named() {
    for (args, needle) in [
        (
            vec![
                "tag",
                "--alg",
                "hmac-sha256",
                "--key",
                "00",
                "--tag-len",
                "-1",
            ],
            "is not a tag length",
        ),
        (vec!["run", "--tag-len", "-3"], "is not a tag length"),
        (vec!["net", "--tag-len", "-3"], "is not a tag length"),
        (
            vec!["run", "--target-ci", "-5%"],
            "--target-ci -5: give a percentage between 0",
        ),
        (
            vec!["diff", "--fail-on-regression", "-1", "a.json", "b.json"],
            "--fail-on-regression -1: give a percentage of 0 or more",
        ),
    ] {
        common::fails_with(macbench().args(&args).write_stdin("x"), 2, needle);
    }
}

/// Issue 47, H9: an input that is a FIFO nobody writes (`tag f`, `tag --key-file f`, `run --sizes
/// f.csv`, `model --sizes f.csv`, `net --sizes f.pcap`) blocked in open(2) for ever. Now each gives up
/// after its documented wait with one line naming the file (exit 2). The five run at once, so the test
/// takes one wait, not five; it asserts no duration.
#[test]
fn a_fifo_input_without_a_writer_is_refused_after_its_wait() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["f", "f.csv", "f.pcap"] {
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join(name))
            .status();
        assert!(made.unwrap().success(), "mkfifo (coreutils)");
    }
    let lines = [
        ("tag --alg hmac-sha256 --key 00 f", "f: a FIFO"),
        ("tag --alg hmac-sha256 --key-file f", "--key-file f: a FIFO"),
        ("run --alg hmac-sha256 --sizes f.csv --json o.json", "f.csv"),
        ("model --sizes f.csv", "f.csv"),
        ("net --alg hmac-sha256 --sizes f.pcap --no-null", "f.pcap"),
    ];
    let children: Vec<_> = lines
        .iter()
        .map(|(line, _)| {
            common::macbench_process()
                .args(line.split_whitespace())
                .env(common::FAKE_ENGINE, "valid")
                .current_dir(dir.path())
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (child, (line, needle)) in children.into_iter().zip(lines) {
        let out = child.wait_with_output().unwrap();
        common::one_line_error(&out, 2, needle);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("a FIFO no process opened for writing within 10 s"),
            "{line}: {err}"
        );
    }
}

/// A pipe that has its writer — bash's process substitution `<(…)` — is read as before, for the
/// message and for the key.
#[test]
fn process_substitution_inputs_are_read() {
    let exe = env!("CARGO_BIN_EXE_macbench");
    let script = format!(
        "{exe} tag --alg hmac-sha256 --key 00 <(printf abc) && {exe} tag --alg hmac-sha256 --key-file <(printf '\\000') <(printf abc) && printf abc | {exe} tag --alg hmac-sha256 --key 00"
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output();
    let Ok(out) = out else {
        common::skip("bash", "bash is not installed");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let tags: Vec<&str> = text.lines().collect();
    assert_eq!(tags.len(), 3, "{text}");
    assert!(tags.iter().all(|t| *t == tags[0]), "{text}");
}
