//! Ctrl-C (SIGINT) during `macbench net` and `macbench net receive`: exit code 130, as `macbench run`,
//! and the results file says `"partial": true`. Loopback only; every wait is bounded.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn interrupt(child: &Child) {
    // SAFETY: kill(2) with a pid of our own child and a valid signal number has no memory effects.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
}

/// Wait for `child` to exit, at most `limit`; kill it and fail if it does not.
fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("macbench did not exit within {limit:?} of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Start macbench and read its stdout until a line containing `marker` (printed once the Ctrl-C handler
/// is installed and the work has begun).
fn spawn_until(
    args: &[&str],
    marker: &str,
) -> (
    Child,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("macbench"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.contains(marker) => break,
            Some(Ok(_)) => {}
            other => {
                let _ = child.kill();
                panic!("no {marker:?} line from macbench: {other:?}");
            }
        }
    }
    (child, lines)
}

#[test]
fn ctrl_c_during_net_exits_130_and_marks_json_partial() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("net.json");
    let json_arg = json.to_str().unwrap();
    // Short trials over many sizes: interrupt after the first result line, inside a later trial.
    let (mut child, _lines) = spawn_until(
        &[common::words("net --alg hmac-sha256 --sizes 64,128,256,512,1024,1280,1518 --rate 500 --trial 200ms --json"), vec![json_arg]].concat(),
        "hmac-sha256/",
    );
    interrupt(&child);
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    // The expected duration said up front, then the one-line error.
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    assert_eq!(lines.len(), 2, "{stderr:?}");
    assert!(
        lines[0].starts_with("macbench net: ") && lines[0].contains("up to"),
        "{stderr}"
    );
    assert!(lines[1].contains("interrupted"), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["partial"], true, "{doc}");
    // What finished is kept; the trial cut short by Ctrl-C is not reported as a result.
    let results = doc["results"].as_array().unwrap().len();
    assert!((1..7).contains(&results), "{doc}");
}

#[test]
fn ctrl_c_before_any_net_result_keeps_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("net.json");
    std::fs::write(&json, b"{\"kept\": true}").unwrap();
    let json_arg = json.to_str().unwrap();
    // Long trials, so the signal lands inside the first one.
    let (mut child, _lines) = spawn_until(
        &[
            common::words("net --alg hmac-sha256 --sizes 64 --rate 500 --trial 20s --json"),
            vec![json_arg],
        ]
        .concat(),
        "vs null",
    );
    interrupt(&child);
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130));
    assert_eq!(std::fs::read(&json).unwrap(), b"{\"kept\": true}");
    // Issue 47, M1: it said "0 finished result(s) kept" though it kept nothing.
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("interrupted before any result finished: nothing kept"),
        "{stderr}"
    );
    assert!(!stderr.contains("0 finished result(s) kept"), "{stderr}");
}

#[test]
fn ctrl_c_during_net_receive_exits_130() {
    let (mut child, _lines) = spawn_until(
        &[
            "net",
            "receive",
            "--listen",
            "127.0.0.1:0",
            "--timeout",
            "60s",
        ],
        "listening on",
    );
    interrupt(&child);
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
}
