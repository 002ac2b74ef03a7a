//! A standing guard against hostile input (issue 10): bad command lines, bad files for every reader, and
//! the output-file rules. Every bad command line must exit with code 2, print exactly one line on
//! standard error, never panic, and leave the files it was pointed at exactly as they were.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use macbench::mac::Accel;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use std::collections::BTreeMap;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("macbench")
}

/// A minimal valid results file: one function, one size.
const RESULTS: &str = r#"{"schema_version":1,"tool":"macbench","clock":{"reference_hz":2e9},
"results":[{"algorithm":"hmac-sha256","backend":"openssl","accel":"hw","size":64,"sessions":1,
"cores":"0","repeats":1,"metrics":{"absolute_cycles_per_byte":5.0,"apparent_cycles_per_byte":5.0,
"absolute_cycles_per_message":320.0,"apparent_cycles_per_message":320.0}}]}"#;

/// Files every case runs beside: whatever a command does, these must be unchanged afterwards and no
/// other file may appear.
fn seed_dir(dir: &Path) {
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();
    write("keep.json", RESULTS.as_bytes());
    write(
        "null-metrics.json",
        RESULTS
            .replace(
                r#""metrics":{"absolute_cycles_per_byte":5.0,"apparent_cycles_per_byte":5.0,
"absolute_cycles_per_message":320.0,"apparent_cycles_per_message":320.0}"#,
                r#""metrics":null"#,
            )
            .as_bytes(),
    );
    write("not-json.json", b"{ nope");
    write("empty.json", b"");
    write("overflow.csv", b"64,1e308\n1500,1e308\n");
    write("negative.csv", b"64,-1\n");
    write("empty.bin", b"");
    write("not-a-capture.pcap", b"hello, this is not a capture at all");
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.csv")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json")).unwrap();
    std::fs::create_dir(dir.join("adir")).unwrap();
}

/// Names and contents of every entry (symlinks by target), to compare before and after a command.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        let content = if meta.file_type().is_symlink() {
            std::fs::read_link(entry.path())
                .unwrap()
                .to_string_lossy()
                .into_owned()
                .into_bytes()
        } else if meta.is_file() {
            std::fs::read(entry.path()).unwrap()
        } else {
            b"<dir>".to_vec()
        };
        out.insert(entry.file_name().to_string_lossy().into_owned(), content);
    }
    out
}

/// Command lines that must be refused: exit 2, one line, no panic, no file created or changed.
const BAD_COMMAND_LINES: &[&[&str]] = &[
    // Values that used to panic, abort or allocate without bound.
    &["run", "--budget", "1e300"],
    &["run", "--cores", "0-18446744073709551615"],
    &["run", "--cores", "0-4294967295"],
    &["run", "--cores", "0-100000000"],
    &["run", "--repeat", "4294967296"],
    &["run", "--repeat", "0"],
    &["run", "--sessions", "100000000"],
    // One duration rule everywhere.
    &["run", "--duration", "0.0000001"],
    &["run", "--duration", "1ns"],
    &["run", "--duration", "1000h"],
    &["run", "--duration", "-1"],
    &["run", "--duration", "nan"],
    &["run", "--budget", "0"],
    &["net", "--rate", "1000", "--trial", "1e-9"],
    &[
        "net",
        "receive",
        "--listen",
        "127.0.0.1:0",
        "--timeout",
        "1000h",
    ],
    &["model", "--measure", "--duration", "1000h"],
    &["compare", "--against", "openssl", "--seconds", "4294967295"],
    // Bad size files.
    &["run", "--sizes", "zero.csv"],
    &["run", "--sizes", "overflow.csv"],
    &["run", "--sizes", "negative.csv"],
    &["run", "--sizes", "not-a-capture.pcap"],
    &["model", "--models", "overflow.csv"],
    &["model", "--models", "zero.csv"],
    &["net", "--sizes", "overflow.csv"],
    // Bad results files, for each reader.
    &["report", "not-json.json", "-o", "out.html"],
    &["report", "empty.json", "-o", "out.html"],
    &["report", "null-metrics.json", "-o", "out.html"],
    &["report", "zero.json", "-o", "out.html"],
    &["diff", "keep.json", "null-metrics.json"],
    &["diff", "not-json.json", "keep.json"],
    &["model", "--results", "null-metrics.json"],
    &["model", "--results", "not-json.json"],
    // Outputs that are inputs, each other, or cannot be written.
    &["report", "keep.json", "-o", "keep.json"],
    &["model", "--results", "keep.json", "--json", "keep.json"],
    &["run", "--json", "x.json", "--csv", "x.json"],
    &["run", "--csv", "x.csv", "--json", "x-threads.csv"],
    &["run", "--json", "-", "--csv", "-"],
    &["run", "--json", "no/such/dir/x.json"],
    &["run", "--json", "adir"],
    &["net", "--json", "no/such/dir/x.json"],
    &["report", "keep.json", "-o", "adir"],
    // tag.
    &["tag", "--alg", "null", "--key", "00", "empty.bin"],
    &["tag", "--alg", "hmac-sha256", "--key", "00", "/dev/zero"],
    &[
        "tag",
        "--alg",
        "hmac-sha256",
        "--backend",
        "null",
        "--key",
        "00",
        "empty.bin",
    ],
    &["tag", "--alg", "hmac-sha256", "--key", "0", "empty.bin"],
    // clap's own usage errors, folded to one line.
    &["run", "--no-such-flag"],
    &["run", "--repeat", "x"],
    &["run", "--accel"],
    &["tag"],
    &["no-such-command"],
    &["run", "--accel", "hw,quantum"],
];

/// `macbench ARGS` in `dir`, asserted refused with exit 2 and one line on standard error within
/// `seconds`; that line.
fn refused_in(dir: &Path, args: &[&str], seconds: u64) -> String {
    let out = macbench()
        .current_dir(dir)
        .args(args)
        .timeout(std::time::Duration::from_secs(seconds))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr:?}");
    stderr
}

#[test]
fn bad_command_lines_exit_2_with_one_line_and_touch_no_file() {
    for args in BAD_COMMAND_LINES {
        let dir = tempfile::tempdir().unwrap();
        seed_dir(dir.path());
        let before = snapshot(dir.path());
        let stderr = refused_in(dir.path(), args, 120);
        assert!(stderr.starts_with("macbench: "), "{args:?}: {stderr:?}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(snapshot(dir.path()), before, "{args:?} changed the files");
    }
}

#[test]
fn messages_name_what_is_wrong() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--duration", "0.0000001"], "minimum 10 ms"),
        (&["run", "--duration", "1000h"], "maximum 24 h"),
        (&["run", "--repeat", "4294967296"], "maximum 1000"),
        (&["run", "--cores", "0-4294967295"], "(8191)"),
        (
            &["run", "--sizes", "overflow.csv"],
            "more than the largest number",
        ),
        (&["run", "--sizes", "zero.csv"], "larger than 64 MiB"),
        // Not a regular file: refused before it is opened (issue 34), not read up to the bound.
        (
            &["report", "zero.json"],
            "a character device, not a regular file",
        ),
        (
            &["tag", "--alg", "null", "--key", "00", "empty.bin"],
            "not a MAC",
        ),
        (
            &["tag", "--alg", "hmac-sha256", "--key", "00", "/dev/zero"],
            "256 MiB",
        ),
        (
            &["report", "keep.json", "-o", "keep.json"],
            "is also the input",
        ),
        (
            &["run", "--no-such-flag"],
            "unexpected argument '--no-such-flag'",
        ),
    ];
    for (args, needle) in cases {
        let dir = tempfile::tempdir().unwrap();
        seed_dir(dir.path());
        let out = macbench()
            .current_dir(dir.path())
            .args(*args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(needle),
            "{args:?}: {stderr:?} lacks {needle:?}"
        );
    }
}

#[test]
fn help_and_version_keep_clap_output_and_exit_0() {
    let out = macbench().arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("macbench "));
    let out = macbench().args(["run", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("Usage: macbench run") && help.lines().count() > 10);
    assert!(out.stderr.is_empty());
}

#[test]
fn repeated_accel_runs_each_function_once() {
    let once = macbench::spec::resolve_functions("hmac-sha256", None, &[Accel::Hw]).unwrap();
    let twice =
        macbench::spec::resolve_functions("hmac-sha256", None, &[Accel::Hw, Accel::Hw]).unwrap();
    assert_eq!(once.functions.len(), 1);
    assert_eq!(once.functions.len(), twice.functions.len());
}

/// `macbench … | head` with the reader gone: no panic, nothing on stderr, ended by SIGPIPE.
#[test]
fn closed_stdout_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    seed_dir(dir.path());
    let cases: &[&[&str]] = &[
        &["list"],
        &["tag", "--alg", "hmac-sha256", "--key", "00", "empty.bin"],
        &["model"],
        &["diff", "keep.json", "keep.json"],
        &["report", "keep.json", "-o", "-"],
    ];
    for args in cases {
        let mut child = std::process::Command::new(binary())
            .current_dir(dir.path())
            .args(*args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
        assert!(
            out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?}",
            out.status
        );
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// As root, writing to /dev/null used to rename a regular file over the device node.
#[test]
fn dev_null_output_is_written_through_and_stays_a_device() {
    if common::skip_unless(is_root(), "root", "needs root (the bug only bit root)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    seed_dir(dir.path());
    let cases = [
        "report keep.json -o /dev/null",
        "model --json /dev/null",
        "run --alg hmac-sha256 --sizes 64 --sessions 1 --duration 300ms --repeat 1 --target-ci 0 --no-harness -q --json /dev/null",
    ];
    for line in cases {
        // The run on the fake engine: the output file is under test, so it must pass its checks.
        let out = common::fake_run(line)
            .current_dir(dir.path())
            .output()
            .unwrap();
        common::exited_0(&out);
        let meta = std::fs::symlink_metadata("/dev/null").unwrap();
        assert!(
            meta.file_type().is_char_device(),
            "{line} replaced /dev/null"
        );
    }
}

#[test]
fn dev_full_is_a_one_line_write_failure() {
    let dir = tempfile::tempdir().unwrap();
    seed_dir(dir.path());
    let out = macbench()
        .current_dir(dir.path())
        .args("report keep.json -o /dev/full".split_whitespace())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("/dev/full"), "{stderr}");
    assert!(std::fs::symlink_metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn symlinked_output_is_written_through_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    seed_dir(dir.path());
    std::fs::write(dir.path().join("target.html"), "old").unwrap();
    std::os::unix::fs::symlink("target.html", dir.path().join("link.html")).unwrap();
    common::exits_0(
        macbench()
            .current_dir(dir.path())
            .args("report keep.json -o link.html".split_whitespace()),
    );
    let link = std::fs::symlink_metadata(dir.path().join("link.html")).unwrap();
    assert!(link.file_type().is_symlink());
    let html = std::fs::read_to_string(dir.path().join("target.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
}

#[test]
fn dash_means_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    seed_dir(dir.path());
    let out = macbench()
        .current_dir(dir.path())
        // No results: a results file with no size sweep fits nothing, which is exit 1 (N10).
        .args("model --json -".split_whitespace())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // The tables move to stderr, so standard output is one parseable document.
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["models"].is_array());
    assert!(!dir.path().join("-").exists());
}

#[test]
fn an_output_another_macbench_is_writing_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    seed_dir(dir.path());
    let out_path = dir.path().join("busy.html");
    let _held = macbench::report::output::prepare(&[("-o", out_path.as_path())], &[]).unwrap();
    let out = macbench()
        .current_dir(dir.path())
        .args("report keep.json -o busy.html".split_whitespace())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1);
    assert!(stderr.contains("another macbench"), "{stderr}");
    assert!(!out_path.exists());
}

/// Ctrl-C before the first scenario finished used to replace the results file with an empty document.
#[test]
fn interrupt_before_the_first_result_keeps_existing_results() {
    let dir = tempfile::tempdir().unwrap();
    seed_dir(dir.path());
    let mut child = std::process::Command::new(binary())
        .current_dir(dir.path())
        .args("run --alg hmac-sha256 --sizes 64 --duration 30s --repeat 1 --no-harness -q --json keep.json".split_whitespace())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (_stderr, line) = common::interrupt_once_running(&mut child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{line}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.json")).unwrap(),
        RESULTS
    );
}

/// A real capture cut at every byte offset: never a panic; an error is one line; a success counts
/// every record and yields sizes within the documented bounds.
#[test]
fn capture_truncated_at_every_offset() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/loopback-http-snap64.pcapng");
    let bytes = std::fs::read(&path).unwrap();
    for cut in 0..bytes.len() {
        check_capture(&bytes[..cut]);
    }
}

fn check_capture(bytes: &[u8]) {
    let shown = Path::new("cut.pcapng");
    match macbench::traffic::read_capture_from(shown, bytes, Some(bytes.len() as u64)) {
        Ok(c) => {
            let s = &c.summary;
            assert_eq!(
                s.records,
                s.ip_packets()
                    + s.skipped_non_ip
                    + s.skipped_malformed
                    + s.skipped_unsupported_link
            );
            let points = c.distribution.points();
            assert!(!points.is_empty());
            for &(size, p) in points {
                assert!(
                    (macbench::traffic::MIN_CAPTURE_SIZE..=macbench::traffic::MAX_CAPTURE_SIZE)
                        .contains(&size),
                    "size {size}"
                );
                assert!(p > 0.0 && p <= 1.0);
            }
            let total: f64 = points.iter().map(|p| p.1).sum();
            assert!((total - 1.0).abs() < 1e-9);
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
}

fn fixed_runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        rng_seed: RngSeed::Fixed(10),
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn capture_reader_never_panics_on_arbitrary_bytes() {
    fixed_runner(512)
        .run(&proptest::collection::vec(any::<u8>(), 0..4096), |bytes| {
            check_capture(&bytes);
            Ok(())
        })
        .unwrap();
}

#[test]
fn capture_reader_never_panics_on_mutated_real_captures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for name in ["loopback-http-snap64.pcapng", "loopback-http.pcap"] {
        let original = std::fs::read(dir.join(name)).unwrap();
        let len = original.len();
        let edits = proptest::collection::vec((0..len, any::<u8>()), 1..32);
        fixed_runner(256)
            .run(&(edits, 0..=len), |(edits, cut)| {
                let mut bytes = original.clone();
                for (at, value) in edits {
                    bytes[at] = value;
                }
                bytes.truncate(cut);
                check_capture(&bytes);
                Ok(())
            })
            .unwrap();
    }
}

#[test]
fn empty_capture_is_an_error_not_a_model() {
    assert!(macbench::traffic::read_capture_from(Path::new("e.pcap"), &[][..], Some(0)).is_err());
}

/// Issue 34: `mkfifo f; macbench validate f` (also `export`, `report`, `diff`, `model --results`) blocked
/// for ever, waiting for a writer. An input that is not a regular file once links are followed — a
/// FIFO, a device — is refused before it is opened: one line, exit 2, nothing written.
#[test]
fn inputs_that_are_not_regular_files_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    seed_dir(dir.path());
    let fifo = dir.path().join("fifo.json");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and a mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let before = snapshot(dir.path());
    let cases: &[(&[&str], &str)] = &[
        (&["validate", "fifo.json"], "a FIFO"),
        (&["validate", "keep.json", "fifo.json"], "a FIFO"),
        (&["validate", "zero.json"], "a character device"),
        (&["export", "--format", "bmf", "fifo.json"], "a FIFO"),
        (
            &["export", "--format", "lava", "zero.json"],
            "a character device",
        ),
        (&["report", "fifo.json", "-o", "x.html"], "a FIFO"),
        (&["diff", "keep.json", "fifo.json"], "a FIFO"),
        (&["model", "--results", "fifo.json"], "a FIFO"),
    ];
    for (args, needle) in cases {
        let stderr = refused_in(dir.path(), args, 30);
        assert!(
            stderr.contains(needle) && stderr.contains("not a regular file"),
            "{args:?}: {stderr}"
        );
        assert_eq!(snapshot(dir.path()), before, "{args:?} changed the files");
    }
}
