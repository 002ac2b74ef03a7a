//! Exit codes a script can trust (issue 22): output lost to a full disk, a function the peer lacks,
//! flags a command does not use, negative numbers, and the other ways a command used to end in exit 0
//! or in someone else's words.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output, Stdio};

fn macbench() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("macbench"))
}

/// `output()` with standard output sent to `/dev/full` (every write fails with ENOSPC).
fn to_full_disk(cmd: &mut Command) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// Exit `code`, and exactly one line of standard error mentions `needle`: the last one.
fn ends_with_one_error(out: &Output, code: i32, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert_eq!(err.matches(needle).count(), 1, "{err}");
    assert!(
        err.trim_end()
            .lines()
            .last()
            .unwrap_or_default()
            .contains(needle),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

const TINY_RUN: [&str; 14] = [
    "run",
    "--alg",
    "null",
    "--sizes",
    "64",
    "--sessions",
    "1",
    "--cores",
    "0",
    "--duration",
    "0.05",
    "--repeat",
    "1",
    "--no-harness",
];

#[test]
fn printed_output_lost_to_a_full_disk_exits_1() {
    let fixture = "tests/fixtures/results-ecda402.json";
    let dir = tempfile::tempdir().unwrap();
    let mut tag = macbench();
    tag.args(["tag", "--alg", "hmac-sha256", "--key", "00", fixture]);
    let mut list = macbench();
    list.arg("list");
    let mut run = macbench();
    run.args(TINY_RUN);
    let mut report = macbench();
    report
        .args(["report", fixture, "-o"])
        .arg(dir.path().join("r.html"));
    let mut diff = macbench();
    diff.args(["diff", fixture, fixture]);
    for cmd in [&mut tag, &mut list, &mut run, &mut report, &mut diff] {
        let out = to_full_disk(cmd);
        ends_with_one_error(&out, 1, "standard output: No space left on device");
    }
}

#[test]
fn a_results_file_on_a_full_disk_exits_1() {
    let out = macbench()
        .args(TINY_RUN)
        .args(["--json", "/dev/full"])
        .output()
        .unwrap();
    ends_with_one_error(&out, 1, "No space left on device");
}
