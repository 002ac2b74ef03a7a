//! Files a command must keep or refuse rather than replace or mix (issue 34, "Files replaced or
//! mixed"): bare `macbench`'s earlier results, a host directory holding another run's files, a
//! reproduction's directory holding a user's report or another study, and an export written where its
//! own inputs are read. docs/robustness.md states the rules; each test pins one row of its table.
//!
//! Every refusal is exit 2 and one line naming the file, and leaves the directory exactly as it was.

#![allow(clippy::unwrap_used)]

mod common;

use common::macbench_process as macbench;

use common::one_line_error;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// A complete results file macbench wrote (4 results).
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-ecda402.json")
}

/// Every file under `dir` (recursively, hidden ones included) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.insert(path.clone(), b"<dir>".to_vec());
            out.extend(snapshot(&path));
        } else {
            out.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    out
}

/// Run `args` in `dir`: refused with exit 2 in one line containing every needle, nothing changed.
fn refused_untouched(dir: &Path, line: &str, needles: &[&str]) {
    let before = snapshot(dir);
    let args: Vec<&str> = line.split_whitespace().collect();
    let out = macbench().current_dir(dir).args(&args).output().unwrap();
    one_line_error(&out, 2, needles[0]);
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    }
    assert_eq!(snapshot(dir), before, "{args:?} changed the files");
}

/// Bare `macbench` used to replace an existing `macbench-results.json` at its first scenario (Ctrl-C at
/// 12 s turned 4 results into a 14-result partial file). Now the earlier file is kept, byte for byte,
/// under a dated name said on stderr, and the new partial file takes its place.
#[test]
fn bare_macbench_keeps_earlier_results_under_a_dated_name() {
    let dir = tempfile::tempdir().unwrap();
    let old = std::fs::read(fixture()).unwrap();
    std::fs::write(dir.path().join("macbench-results.json"), &old).unwrap();
    let mut child = macbench()
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The table's header, then the first row: printed once the first scenario is written.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut rows = 0;
    while rows < 2 {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "bare macbench ended before its first result"
        );
        rows += 1;
    }
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Interleaved repeats span the whole sweep, so results are kept near its end: the signal can
    // land after the last one (exit 0, a complete file) as well as before (exit 130, a partial one).
    // Either way the earlier file must have been kept.
    let code = out.status.code();
    assert!(matches!(code, Some(130) | Some(0)), "{code:?}: {err}");
    let kept: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("macbench-results.2") && name.ends_with(".json")
        })
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}: {err}");
    assert_eq!(
        std::fs::read(&kept[0]).unwrap(),
        old,
        "the earlier results changed"
    );
    let name = kept[0].file_name().unwrap().to_string_lossy().into_owned();
    // macbench-results.YYYY-MM-DDTHH-MM-SS.json
    assert_eq!(
        name.len(),
        "macbench-results.2026-11-27T01-23-45.json".len(),
        "{name}"
    );
    assert!(
        err.contains(&format!(
            "the earlier results in macbench-results.json are kept as {name}"
        )),
        "{err}"
    );
    let new = std::fs::read(dir.path().join("macbench-results.json")).unwrap();
    assert_ne!(new, old, "the new run's results were not written");
    let doc: serde_json::Value = serde_json::from_slice(&new).unwrap();
    // `partial: true` in an interrupted run's file; a finished one carries no such field.
    assert_eq!(doc["partial"] == true, code == Some(130), "{err}");
}

/// A file at bare `macbench`'s default output that is not macbench results was never its to replace.
#[test]
fn bare_macbench_refuses_to_replace_a_file_that_is_not_results() {
    for (what, content) in [
        ("notes", &b"my notes, not results\n"[..]),
        ("other JSON", &br#"{"tool":"hyperfine","results":[]}"#[..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("macbench-results.json"), content).unwrap();
        let before = snapshot(dir.path());
        let out = macbench().current_dir(dir.path()).output().unwrap();
        one_line_error(&out, 2, "macbench-results.json");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("bare `macbench` replaces only its own earlier results"),
            "{what}: {err}"
        );
        assert_eq!(snapshot(dir.path()), before, "{what}: files changed");
    }
}

/// `run -o d` replaced `d/results.csv` and `d/results-threads.csv` without a word (only
/// `results.json` made it refuse), and wrote beside another results file that `validate d` and
/// `report d` then read as one run.
#[test]
fn run_output_dir_refuses_files_it_would_replace_or_mix_with() {
    for (name, needle) in [
        ("results.json", "which this run would replace"),
        ("results.csv", "which this run would replace"),
        ("results-threads.csv", "which this run would replace"),
        ("yesterday.json", "would read beside this run's results"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("d");
        std::fs::create_dir(&d).unwrap();
        std::fs::copy(fixture(), d.join(name)).unwrap();
        refused_untouched(
            dir.path(),
            "run --alg null --sizes 64 -o d",
            &[&format!("-o d: already holds d/{name}"), needle],
        );
    }
}

/// A directory `run -o` and `reproduce -o` cannot make or write: exit 2, one line naming it once (it
/// was exit 1 when the directory had to be made, and exit 2 with the path said twice — the output's and
/// its lock file's — when it existed). `/proc` refuses new files even to root.
#[test]
fn unwritable_output_dirs_are_one_usage_error() {
    let cases: [(&[&str], &str, &str); 4] = [
        (
            &["run", "--alg", "null", "-o", "/proc"],
            "-o /proc: cannot write there",
            "/proc",
        ),
        (
            &["run", "--alg", "null", "-o", "/proc/macbench/new"],
            "-o /proc/macbench/new: cannot make the directory",
            "/proc",
        ),
        (
            &["reproduce", "mac-speeds-thread", "-o", "/proc"],
            "-o /proc: cannot write there",
            "/proc",
        ),
        (
            &["reproduce", "mac-speeds-thread", "-o", "/proc/macbench/new"],
            "-o /proc/macbench/new: cannot make the directory",
            "/proc",
        ),
    ];
    check_unwritable(Path::new("/"), &cases);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if common::skip_unless(
        !root,
        "not-root",
        "root writes into a directory without write permission (the /proc cases above ran)",
    ) {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let cases: [(&[&str], &str, &str); 2] = [
        (
            &["run", "--alg", "null", "-o", "ro"],
            "-o ro: cannot write there",
            " ro",
        ),
        (
            &["reproduce", "mac-speeds-thread", "-o", "ro/new"],
            "-o ro/new: cannot make the directory",
            " ro",
        ),
    ];
    check_unwritable(dir.path(), &cases);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Each case refused with exit 2 in one line holding `needle`, the directory (`once`) said once.
fn check_unwritable(dir: &Path, cases: &[(&[&str], &str, &str)]) {
    for (args, needle, once) in cases {
        let out = macbench().current_dir(dir).args(*args).output().unwrap();
        one_line_error(&out, 2, needle);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.matches(once).count(),
            1,
            "{args:?}: the path said twice: {err}"
        );
    }
}

/// `reproduce -o d` replaced a user's `d/report.html` and `d/figures/*.png`: refused, naming the file.
#[test]
fn reproduce_output_dir_refuses_a_users_report_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("report.html"), "my report").unwrap();
    refused_untouched(
        dir.path(),
        "reproduce mac-speeds-thread --budget 5 -o d",
        &["-o d: already holds d/report.html, which a reproduction writes"],
    );
    std::fs::remove_file(d.join("report.html")).unwrap();
    std::fs::create_dir(d.join("figures")).unwrap();
    // Issue 47 (M39): not "holiday.png, which a reproduction writes" — it writes into figures/.
    std::fs::write(d.join("figures/holiday.png"), "my figure").unwrap();
    refused_untouched(
        dir.path(),
        "reproduce mac-speeds-thread --budget 5 -o d",
        &["-o d: already holds d/figures/holiday.png, in d/figures, the directory a reproduction writes its figures into"],
    );
}

/// `reproduce deepakumara-ipsec --resume A`, A holding a mac-speeds-thread reproduction, ran the other
/// study into A and rewrote its claims and report (exit 0). `-o A` mixed them the same way.
#[test]
fn resume_or_output_into_another_studys_reproduction_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("A");
    std::fs::create_dir(&a).unwrap();
    std::fs::copy(fixture(), a.join("lengths.json")).unwrap();
    refused_untouched(
        dir.path(),
        "reproduce deepakumara-ipsec --budget 10 --resume A",
        &[
            "--resume A: holds a reproduction of mac-speeds-thread, not deepakumara-ipsec",
            "macbench reproduce mac-speeds-thread --resume A",
        ],
    );
    refused_untouched(
        dir.path(),
        "reproduce deepakumara-ipsec --budget 10 -o A",
        &["-o A: holds a reproduction of mac-speeds-thread"],
    );
    // The claims file names the study when no step file says it.
    std::fs::remove_file(a.join("lengths.json")).unwrap();
    std::fs::write(
        a.join("claims.json"),
        r#"{"study":"mac-speeds-thread","title":"t","authors":"a","claims":[]}"#,
    )
    .unwrap();
    refused_untouched(
        dir.path(),
        "reproduce deepakumara-ipsec --budget 10 --resume A",
        &["holds a reproduction of mac-speeds-thread, not deepakumara-ipsec"],
    );
}

/// A `--resume` whose steps leave no results ends in error without writing claims or a report: a
/// claims file of "cannot be tested" everywhere would read as a finished reproduction.
#[test]
fn a_failed_resume_writes_no_claims() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("A");
    // The step's results file cannot be written (a directory stands where it goes): no step leaves
    // results.
    std::fs::create_dir_all(a.join("lengths.json")).unwrap();
    let out = macbench()
        .current_dir(dir.path())
        .args("reproduce mac-speeds-thread --budget 5 --resume A".split_whitespace())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    for name in ["claims.md", "claims.json", "report.html", "figures"] {
        assert!(!a.join(name).exists(), "{name} written: {err}");
    }
}

/// `export --format bmf DIR -o DIR/bmf.json` was accepted, and then `validate DIR` and `report DIR`
/// read the export as a broken results file. An output named `*.json` inside a directory the command
/// reads is refused, for every command that reads directories and writes a file.
#[test]
fn a_json_output_inside_a_directory_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::copy(fixture(), d.join("results.json")).unwrap();
    let cases = [
        "export --format bmf d -o d/bmf.json",
        "export --format bmf d/ -o ./d/bmf.json",
        "report d -o d/page.json",
        "diff d d --json d/diff.json",
    ];
    for args in cases {
        let named = if common::words(args)[3] == "d/" {
            "inside d/,"
        } else {
            "inside d,"
        };
        refused_untouched(dir.path(), args, &[named, "a directory this command reads"]);
    }
    // Elsewhere, and a format readers do not take for results, are written.
    for args in [
        &["export", "--format", "bmf", "d", "-o", "bmf.json"][..],
        &["export", "--format", "benchstat", "d", "-o", "d/bench.txt"][..],
    ] {
        let out = macbench()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = macbench()
        .current_dir(dir.path())
        .args(["validate", "d"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// docs/robustness.md's table of files kept, refused or replaced is the one the tests follow: every
/// test it names (`— \`name\``) exists in `tests/`, so a row cannot outlive the test that pins it.
#[test]
fn every_test_the_robustness_table_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/robustness.md")).unwrap();
    let mut sources = String::new();
    for entry in std::fs::read_dir(root.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "rs") {
            sources.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    let named: Vec<&str> = doc
        .lines()
        .filter(|l| l.starts_with('|'))
        .filter_map(|l| l.split(" — `").nth(1))
        .filter_map(|rest| rest.split('`').next())
        .collect();
    assert!(named.len() >= 15, "{named:?}");
    for name in named {
        assert!(
            sources.contains(&format!("fn {name}(")),
            "docs/robustness.md names {name}, which no test in tests/ defines"
        );
    }
}

/// Issue 47, C7, H10 and M42: whatever sits at an output's lock path and is not a macbench lock — a
/// user's file (it was deleted as a stale lock), a symbolic link (unlinked), a FIFO (the open blocked
/// forever, deaf to Ctrl-C) or a directory (reported as the output's fault) — is refused in one line
/// naming the lock, before anything runs, and left as it was.
#[test]
fn a_lock_path_holding_anything_but_a_macbench_lock_is_refused_and_left() {
    use std::os::unix::fs::FileTypeExt;
    let line = "run --alg hmac-sha256 --sizes 64 --sessions 1 --duration 30ms --repeat 1 --max-repeat 1 --target-ci 0 --no-harness --json x.json";
    type Make = fn(&Path);
    let cases: [(&str, Make); 4] = [
        ("a file holding something else", |p| {
            std::fs::write(p, "mine\n").unwrap()
        }),
        ("a symbolic link", |p| {
            std::os::unix::fs::symlink("elsewhere", p).unwrap()
        }),
        ("a FIFO", |p| {
            let made = std::process::Command::new("mkfifo").arg(p).status();
            assert!(made.unwrap().success(), "mkfifo (coreutils)");
        }),
        ("a directory", |p| std::fs::create_dir(p).unwrap()),
    ];
    for (what, make) in cases {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join(".x.json.lock");
        make(&lock);
        let out = common::fake_run(line)
            .current_dir(dir.path())
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        one_line_error(&out, 2, ".x.json.lock");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(what), "{what}: {err}");
        let kind = std::fs::symlink_metadata(&lock).unwrap().file_type();
        let kept = match what {
            "a symbolic link" => kind.is_symlink(),
            "a FIFO" => kind.is_fifo(),
            "a directory" => kind.is_dir(),
            _ => std::fs::read(&lock).unwrap() == b"mine\n",
        };
        assert!(kept, "{what} was not left as it was");
        assert!(!dir.path().join("x.json").exists(), "{what}: ran anyway");
    }
}

/// A lock left by a macbench killed outright (empty, as older versions left it, or marked) is stale
/// and taken over; the run writes its results and removes the lock.
#[test]
fn a_stale_macbench_lock_is_taken_over_and_removed() {
    let line = "run --alg hmac-sha256 --sizes 64 --sessions 1 --duration 30ms --repeat 1 --max-repeat 1 --target-ci 0 --no-harness --json x.json";
    for stale in ["", "macbench lock 4242\n"] {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join(".x.json.lock");
        std::fs::write(&lock, stale).unwrap();
        let out = common::fake_run(line)
            .current_dir(dir.path())
            .output()
            .unwrap();
        common::ran(&out, &common::results_at(&dir.path().join("x.json")));
        assert!(!lock.exists(), "{stale:?}: the lock was left");
    }
}

/// Issue 47, C6: `report r.json -o x.html --png A/figures` silently replaced a reproduction's
/// `cpb-absolute.png` and friends, and `report B --png B` wrote among its own inputs. `--png DIR`
/// follows `run -o DIR`'s rule: a PNG it would replace, or a directory it reads, is refused before
/// anything is written.
#[test]
fn report_png_refuses_figures_it_would_replace_and_its_input_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(), dir.path().join("r.json")).unwrap();
    std::fs::create_dir_all(dir.path().join("A/figures")).unwrap();
    std::fs::write(
        dir.path().join("A/figures/cpb-absolute.png"),
        "a study's figure",
    )
    .unwrap();
    refused_untouched(
        dir.path(),
        "report r.json -o x.html --png A/figures",
        &["--png A/figures: already holds A/figures/cpb-absolute.png, which this report would replace"],
    );
    std::fs::create_dir(dir.path().join("B")).unwrap();
    std::fs::copy(fixture(), dir.path().join("B/r.json")).unwrap();
    refused_untouched(
        dir.path(),
        "report B -o x.html --png B",
        &["--png B: is B, a directory this command reads"],
    );
    // Elsewhere, the PNGs are written.
    let out = macbench()
        .current_dir(dir.path())
        .args("report r.json -o x.html --png new".split_whitespace())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("new/cpb-absolute.png").is_file());
}

/// Issue 47, M37: `report --png DIR` where DIR cannot be made exited 1 after the work; it is bad
/// input, refused as `run -o`'s is (exit 2, one line).
#[test]
fn report_png_into_a_directory_that_cannot_be_made_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(), dir.path().join("r.json")).unwrap();
    std::fs::write(dir.path().join("afile"), "keep").unwrap();
    refused_untouched(
        dir.path(),
        "report r.json -o x.html --png afile/png",
        &["--png afile/png: cannot make the directory"],
    );
}

/// Make a FIFO at `path` (coreutils' mkfifo).
fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.unwrap().success(), "mkfifo (coreutils)");
}

/// Issue 47, M35: `reproduce --resume D` with a FIFO at `D/claims.json` ran every step and then
/// failed writing it, naming the path twice. Refused up front, the file named once.
#[test]
fn resume_refuses_a_claims_file_that_is_not_regular_up_front() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("A")).unwrap();
    mkfifo(&dir.path().join("A/claims.json"));
    let out = macbench()
        .current_dir(dir.path())
        .args("reproduce mac-speeds-thread --budget 5 --resume A".split_whitespace())
        .output()
        .unwrap();
    one_line_error(
        &out,
        2,
        "--resume A: A/claims.json is a FIFO, not a regular file; a reproduction rewrites it",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("A/claims.json").count(), 1, "{err}");
    assert_eq!(std::fs::read_dir(dir.path().join("A")).unwrap().count(), 1);
}

/// Issue 47, M41: a second `reproduce --resume D` while one runs exited 1 after its steps failed
/// their locks. The directory is locked for the whole reproduction; a second one is refused up front
/// (exit 2, one line). The test holds the lock as a running reproduction would.
#[test]
fn a_concurrent_resume_is_refused_up_front() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("A")).unwrap();
    let lock = std::fs::File::create(dir.path().join("A/.claims.json.lock")).unwrap();
    // SAFETY: flock on a descriptor this test owns; no memory is shared with the kernel.
    let held = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(held, 0);
    refused_untouched(
        dir.path(),
        "reproduce mac-speeds-thread --budget 5 --resume A",
        &["--resume A: another macbench is running this reproduction"],
    );
    drop(lock);
}

/// Issue 47, M43: bare `macbench` with a FIFO at its default output ran the whole sweep, then failed
/// waiting for a reader. Refused before anything runs; `--json FIFO` stays a choice the user makes.
#[test]
fn bare_macbench_refuses_a_default_output_that_is_not_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("macbench-results.json"));
    let out = common::macbench()
        .current_dir(dir.path())
        .env(common::FAKE_ENGINE, "valid")
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    one_line_error(
        &out,
        2,
        "macbench-results.json: a FIFO, not a regular file; bare `macbench` writes its results to a regular file",
    );
    assert!(out.stdout.is_empty(), "it ran");
}

/// Issue 47 N19: `reproduce -o DIR` into a `run -o` directory mixed the two: `report DIR` then read
/// the run's `results.json` beside the steps' results as another host's. Refused up front (also
/// `--resume`), naming the file, the directory untouched.
#[test]
fn reproduce_into_a_run_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::copy(fixture(), d.join("results.json")).unwrap();
    refused_untouched(
        dir.path(),
        "reproduce mac-speeds-thread -o d",
        &["-o d: holds d/results.json, a `run -o` directory's results"],
    );
    refused_untouched(
        dir.path(),
        "reproduce mac-speeds-thread --resume d",
        &["--resume d: holds d/results.json, a `run -o` directory's results"],
    );
    // Any other results file there would be read beside the reproduction's too.
    std::fs::rename(d.join("results.json"), d.join("mine.json")).unwrap();
    refused_untouched(
        dir.path(),
        "reproduce mac-speeds-thread -o d",
        &["-o d: holds d/mine.json, a file `report`, `validate` and `diff` of the directory would read"],
    );
}

/// Issue 47 N20: a quoted glob (`export 'd/*.json' -o d/out.json`) let an output land among its
/// inputs: the glob read d, and the next run read the output as an input. Inputs are resolved after
/// the glob's expansion: an output in a directory whose files it reads, or one the pattern matches,
/// is refused up front, nothing written.
#[test]
fn an_output_never_lands_among_a_globs_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::copy(fixture(), d.join("r.json")).unwrap();
    for out in ["d/out.json", "./d/out.json"] {
        refused_untouched(
            dir.path(),
            &format!("export --format lava d/*.json -o {out}"),
            &[&format!("-o {out}: the input pattern d/*.json matches it")],
        );
    }
    // A pattern that matches the output by another extension too.
    refused_untouched(
        dir.path(),
        "export --format lava d/* -o d/lava.txt",
        &["-o d/lava.txt: the input pattern d/* matches it"],
    );
    // Its directory is read: a results-named output there is refused though the pattern misses it.
    refused_untouched(
        dir.path(),
        "export --format lava d/r* -o d/bmf.json",
        &["-o d/bmf.json: inside d, a directory this command reads"],
    );
}
