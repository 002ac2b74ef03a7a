//! Outputs that are streams, and file names without an extension (issue: `--json /dev/stdout` emitted
//! one document per finished scenario, concatenated; `--csv /dev/null` created `/dev/null-threads`;
//! `--csv out` wrote `out-threads` without its extension).

#![allow(clippy::unwrap_used)]

use assert_cmd::Command;

fn run_args() -> Vec<&'static str> {
    vec![
        "run",
        "--alg",
        "hmac-sha256,cmac-aes128",
        "--sizes",
        "64",
        "--sessions",
        "1",
        "--cores",
        "0",
        "--duration",
        "30ms",
        "--repeat",
        "1",
        "--max-repeat",
        "1",
        "--target-ci",
        "0",
        "--no-harness",
    ]
}

#[test]
fn json_to_dev_stdout_is_one_document_at_the_end() {
    let out = Command::cargo_bin("macbench")
        .unwrap()
        .args(run_args())
        .args(["--json", "/dev/stdout", "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("\"schema_version\"").count(), 1, "{text}");
}

#[test]
fn csv_without_extension_gets_a_csv_sibling_for_threads() {
    let dir = tempfile::tempdir().unwrap();
    Command::cargo_bin("macbench")
        .unwrap()
        .current_dir(dir.path())
        .args(run_args())
        .args(["--csv", "out"])
        .assert()
        .success();
    assert!(dir.path().join("out").is_file());
    assert!(dir.path().join("out-threads.csv").is_file());
    assert!(!dir.path().join("out-threads").exists());
}

#[test]
fn csv_to_a_fifo_derives_no_sibling_file() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.csv");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo (coreutils)");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    Command::cargo_bin("macbench")
        .unwrap()
        .args(run_args())
        .arg("--csv")
        .arg(&fifo)
        .assert()
        .success();
    let text = reader.join().unwrap();
    assert_eq!(text.lines().count(), 3, "header and two rows, once: {text}");
    assert!(!dir.path().join("pipe-threads.csv").exists());
}

/// A FIFO nobody reads: the write gives up after its bound with one line, instead of blocking in
/// open(2) forever (where Ctrl-C could not end it).
#[test]
fn a_fifo_without_a_reader_fails_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("nobody.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo (coreutils)");
    let out = Command::cargo_bin("macbench")
        .unwrap()
        .args(run_args())
        .arg("--json")
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("a FIFO no process read within 10 s"), "{err}");
}
