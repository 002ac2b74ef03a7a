//! Exit codes a script can trust (issue 22): output lost to a full disk, a function the peer lacks,
//! flags a command does not use, negative numbers, and the other ways a command used to end in exit 0
//! or in someone else's words.

#![allow(clippy::unwrap_used)]

mod common;

use common::macbench_process as macbench;

use common::one_line_error;
use std::process::{Command, Output, Stdio};

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

/// A run of the null function at 64 bytes, one session on CPU 0, one repeat, no harness measurement;
/// its duration is added.
fn null_run(duration: &str) -> Command {
    let mut cmd = macbench();
    cmd.args("run --alg null --sizes 64 --sessions 1 --cores 0 --repeat 1".split_whitespace())
        .args(["--no-harness", "--duration", duration]);
    cmd
}

#[test]
fn printed_output_lost_to_a_full_disk_exits_1() {
    let fixture = "tests/fixtures/results-ecda402.json";
    let dir = tempfile::tempdir().unwrap();
    let mut tag = macbench();
    tag.args(["tag", "--alg", "hmac-sha256", "--key", "00", fixture]);
    let mut list = macbench();
    list.arg("list");
    // On the fake engine, whose run passes its checks: the lost output is then the one error.
    let mut run = null_run("0.05");
    run.env(common::FAKE_ENGINE, "valid");
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
    let out = null_run("0.05")
        .args(["--json", "/dev/full"])
        .env(common::FAKE_ENGINE, "valid")
        .output()
        .unwrap();
    ends_with_one_error(&out, 1, "No space left on device");
}

#[test]
fn compare_refuses_what_the_peer_or_the_engine_cannot_do_before_the_peer_runs() {
    // The peer "binary" does not exist: each refusal must come before it is looked for.
    let compare = |alg: &str, sizes: &str| {
        macbench()
            .env("MACBENCH_OPENSSL", "/nonexistent/peer-binary")
            .args(["compare", "--against", "openssl", "--alg", alg])
            .args(["--sizes", sizes, "--duration", "1s"])
            .output()
            .unwrap()
    };
    one_line_error(
        &compare("blake3-keyed", "64"),
        2,
        "--alg blake3-keyed: not offered by openssl's benchmark",
    );
    one_line_error(
        &compare("hmac-sha256", "70000000"),
        2,
        "--sizes: 70000000 is larger than the engine's limit of 67108864 bytes",
    );
}

/// A negative number gets our own line naming the flag (exit 2), not clap's "unexpected argument '-3'".
#[test]
fn negative_numbers_name_their_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--duration", "-1"], "--duration"),
        (&["run", "--sessions", "-3"], "--sessions"),
        (&["run", "--repeat", "-1"], "--repeat"),
        (&["run", "--max-repeat", "-1"], "--max-repeat"),
        (&["run", "--window", "-1..2"], "--window"),
        (&["run", "--budget", "-1"], "--budget"),
        (&["run", "--rekey", "-1"], "--rekey"),
        (&["run", "--cores", "-1"], "--cores"),
        (&["run", "--seed", "-1"], "--seed"),
        (&["net", "--duration", "-1"], "--duration"),
        (&["net", "--rcvbuf", "-1"], "--rcvbuf"),
        (&["net", "--replay-window", "-1"], "--replay-window"),
        (&["net", "--inject-bad", "-1"], "--inject-bad"),
        (&["net", "--sender-core", "-1"], "--sender-core"),
        (&["net", "--receiver-core", "-1"], "--receiver-core"),
        (
            &["compare", "--against", "openssl", "--cores", "-1"],
            "--cores",
        ),
        (
            &["compare", "--against", "openssl", "--sizes", "-5"],
            "--sizes",
        ),
        (&["model", "--measure", "--cores", "-1"], "--cores"),
        (
            &["model", "--measure", "--reject-size", "-1"],
            "--reject-size",
        ),
    ];
    for (args, flag) in cases {
        let out = macbench().args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(
            err.contains("negative") || err.contains("positive"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

/// `--rcvbuf` takes binary suffixes in any case (`1G` and `4m` were refused) and says what it takes
/// for anything else.
#[test]
fn rcvbuf_takes_binary_suffixes_in_any_case() {
    use macbench::spec::net::parse_rcvbuf;
    for (text, bytes) in [
        ("1G", 1usize << 30),
        ("1g", 1 << 30),
        ("4m", 4 << 20),
        ("4M", 4 << 20),
        ("256k", 256 << 10),
        ("256K", 256 << 10),
        ("4MiB", 4 << 20),
        ("212992", 212_992),
    ] {
        assert_eq!(parse_rcvbuf(text).unwrap(), Some(bytes), "{text}");
    }
    assert_eq!(parse_rcvbuf("default").unwrap(), None);
    for (text, needle) in [
        ("2G", "1073741824"),
        ("lots", "not a buffer size"),
        ("4x", "not a buffer size"),
        ("-1", "negative"),
    ] {
        let e = parse_rcvbuf(text).unwrap_err().to_string();
        assert!(
            e.starts_with("--rcvbuf") && e.contains(needle),
            "{text}: {e}"
        );
    }
    // The range `net --duration` states is the range it takes.
    let help = macbench().args(["net", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("from 10 ms to 24 h"), "{help}");
    let out = macbench()
        .args(["net", "--duration", "5ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("minimum 10 ms"));
}

/// OpenSSL's KMAC takes a customization string of at most 512 bytes: one line naming the limit, exit 2
/// (it was OpenSSL's error string, "invalid custom length", with exit 1).
#[test]
fn kmac_customization_limit_is_named() {
    let tag = |custom_bytes: usize| {
        let mut cmd = macbench();
        cmd.args("tag --alg kmac128 --backend openssl".split_whitespace())
            .args(["--key", "000102030405060708090a0b0c0d0e0f", "--custom"])
            .arg("00".repeat(custom_bytes))
            .arg("tests/fixtures/results-ecda402.json");
        cmd.output().unwrap()
    };
    let out = tag(512);
    common::exited_0(&out);
    one_line_error(
        &tag(513),
        2,
        "--custom: 513 bytes; openssl's kmac128 takes a customization string of at most 512 bytes",
    );
}

/// A results file with a UTF-8 byte-order mark loads; `NaN` (not JSON) and a negative cost are each one
/// line naming the field (they were "not JSON (expected value at line 1 column 2627)" and exit 0).
#[test]
fn results_files_with_a_bom_load_and_bad_numbers_name_their_field() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("tests/fixtures/results-ecda402.json").unwrap();
    let bom = dir.path().join("bom.json");
    std::fs::write(&bom, format!("\u{feff}{text}")).unwrap();
    common::succeeds(macbench().arg("diff").arg(&bom).arg(&bom));

    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["results"][0]["metrics"]["absolute_cycles_per_byte"] = serde_json::json!(-3.0);
    let negative = dir.path().join("negative.json");
    std::fs::write(&negative, doc.to_string()).unwrap();
    let nan = dir.path().join("nan.json");
    std::fs::write(
        &nan,
        doc.to_string().replacen(
            "\"absolute_cycles_per_byte\":-3.0",
            "\"absolute_cycles_per_byte\":NaN",
            1,
        ),
    )
    .unwrap();
    let report = |file: &std::path::Path| {
        macbench()
            .arg("report")
            .arg(file)
            .arg("-o")
            .arg(dir.path().join("r.html"))
            .output()
            .unwrap()
    };
    one_line_error(
        &report(&negative),
        2,
        // One form for every invariant a reader checks (results::check): the field, a colon, why.
        "results[0].metrics.absolute_cycles_per_byte: -3; a measured cost, rate or count is 0 or more",
    );
    one_line_error(
        &report(&nan),
        2,
        "\"absolute_cycles_per_byte\" is NaN (line 1), which JSON cannot hold",
    );
    assert!(!dir.path().join("r.html").exists());
}

/// `selftest -v` says every vector it checked, per function (it printed the same as without -v).
#[test]
fn selftest_verbose_names_every_vector_checked() {
    let selftest = |verbose: bool| {
        let mut cmd = macbench();
        cmd.args("selftest --alg hmac-sha256 --backend openssl".split_whitespace());
        if verbose {
            cmd.arg("-v");
        }
        let out = cmd.output().unwrap();
        common::exited_0(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let (plain, verbose) = (selftest(false), selftest(true));
    // One table row per function, each "pass N/N": every one of those vectors gets its own line.
    let rows: Vec<(&str, usize)> = plain
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let function = words.next()?;
            let count = words.nth(1)?.split('/').next()?.parse().ok()?;
            Some((function, count))
        })
        .collect();
    assert!(!rows.is_empty(), "{plain}");
    for (function, count) in rows {
        let lines = verbose
            .lines()
            .filter(|l| {
                l.trim_start().starts_with(&format!("{function}: vectors/")) && l.ends_with(": ok")
            })
            .count();
        assert_eq!(lines, count, "{function}:\n{verbose}");
    }
    assert!(!plain.contains(": ok"), "{plain}");
}

/// `report --png` where no directory can be: refused before anything is written (the HTML was
/// written, then the command failed).
#[test]
fn report_png_that_cannot_be_written_leaves_no_html() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("afile");
    std::fs::write(&not_a_dir, "keep").unwrap();
    let html = dir.path().join("r.html");
    let out = macbench()
        .args(["report", "tests/fixtures/results-ecda402.json", "-o"])
        .arg(&html)
        .arg("--png")
        .arg(&not_a_dir)
        .output()
        .unwrap();
    one_line_error(&out, 2, "is not a directory");
    assert!(!html.exists(), "no HTML written");
    assert_eq!(std::fs::read_to_string(&not_a_dir).unwrap(), "keep");
}

/// SIGTERM (what `timeout`, systemd and containers send) ends a run as Ctrl-C does: exit 130, the lock
/// and temporary files removed (it killed the process and left `.out.json.lock` behind).
#[test]
fn sigterm_ends_a_run_like_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let child = null_run("60s")
        .current_dir(dir.path())
        .args(["--json", "out.json"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    terminated_once_locked(child, dir.path());
}

/// SIGTERM `child` once its `out.json` is locked (the lock appears after the signal handler is
/// set), then check it ended as interrupted (130, one line) leaving nothing but `out.json` behind.
fn terminated_once_locked(mut child: std::process::Child, dir: &std::path::Path) {
    let lock = dir.join(".out.json.lock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !lock.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never locked its output"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the command ended early"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{:?}: {err}", out.status);
    assert!(err.contains("interrupted"), "{err}");
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.iter().all(|name| name == "out.json"),
        "left behind: {left:?}"
    );
}

/// A command that does not stop at a safe point (`model --measure`, `compare`, `report`, `diff`)
/// still ends on SIGTERM as interrupted and removes its lock and temporary files.
#[test]
fn sigterm_ends_every_command_without_leaving_locks() {
    let dir = tempfile::tempdir().unwrap();
    let child = measuring_model(dir.path(), Stdio::piped());
    terminated_once_locked(child, dir.path());
}

/// `model --measure` for seconds, writing `out.json` in `dir` (a command that ends on a signal
/// rather than at a safe point), started with its standard error to `stderr`.
fn measuring_model(dir: &std::path::Path, stderr: Stdio) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("macbench"))
        .current_dir(dir)
        .args("model --measure --duration 5s --json out.json".split_whitespace())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// A SIGTERM at any moment of a command's start — before its handler is set, while it makes its
/// lock, just after — leaves no lock behind: the handler's removal and the making of a lock cannot
/// interleave (a SIGTERM just before `model` listed its new lock used to leave it). Each of 100 kills
/// lands at a different point of the first ~30 ms; the exit is 130 or death by the signal, never a
/// lock left.
#[test]
fn sigterm_at_any_moment_of_the_start_leaves_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..100u64 {
        let child = measuring_model(dir.path(), Stdio::null());
        std::thread::sleep(std::time::Duration::from_micros(i * 300));
        // SAFETY: a signal to the child this test started.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let out = child.wait_with_output().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert!(
            out.status.code() == Some(130) || out.status.signal() == Some(libc::SIGTERM),
            "kill {i}: {:?}",
            out.status
        );
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            left.is_empty(),
            "kill {i} after {} µs left: {left:?}",
            i * 300
        );
    }
}

/// The processes whose parent is `parent`, each with its command name and command line (from
/// /proc/PID/stat and /proc/PID/cmdline).
fn children_of(parent: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces, so split at the last ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if rest.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(parent) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let words: Vec<String> = cmdline
                .split(|&b| b == 0)
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            found.push((
                pid,
                format!("{} {}", &stat[open + 1..close], words.join(" ")),
            ));
        }
    }
    found
}

/// Whether `pid` still runs: present in /proc and not a zombie (a zombie has ended; its new parent
/// reaps it when it will).
fn still_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rfind(')').and_then(|close| {
            stat[close + 1..]
                .split_whitespace()
                .next()
                .map(str::to_string)
        });
        state.as_deref() != Some("Z")
    })
}

/// SIGTERM to `compare` while `openssl speed -seconds 20` ran left openssl running with parent 1 for
/// the rest of its 20 s. The tool now dies with macbench.
#[test]
fn sigterm_to_compare_leaves_no_peer_tool_running() {
    if common::skip_without_openssl_cli() {
        return;
    }
    let mut child = macbench()
        .args("compare --against openssl --alg hmac-sha256".split_whitespace())
        .args("--sizes 64 --rounds 1 --duration 20".split_whitespace())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    // `openssl version` (the probe) comes and goes first; the harness is measured; then `openssl speed`.
    let tool = loop {
        if let Some((pid, _)) = children_of(child.id())
            .into_iter()
            .find(|(_, command)| command.starts_with("openssl ") && command.contains(" speed"))
        {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "compare never started openssl speed"
        );
        assert!(child.try_wait().unwrap().is_none(), "compare ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gone_by = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while still_running(tool) {
        assert!(
            std::time::Instant::now() < gone_by,
            "openssl (pid {tool}) still runs after compare ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `compare --rounds 100 --duration 86400` announced "about ~4800.0 h" and started: the whole
/// comparison is bounded as a run's `--budget` is, 24 h.
#[test]
fn compare_refuses_more_than_24_hours_in_all() {
    let out = macbench()
        .args("compare --against openssl --alg hmac-sha256".split_whitespace())
        .args("--sizes 64 --rounds 100 --duration 86400".split_whitespace())
        .output()
        .unwrap();
    one_line_error(
        &out,
        2,
        "--rounds 100 × --duration 86400 s × 2 sides × 1 algorithm(s) × 1 size(s) is ~4800.0 h of runs, more than the 24 h a comparison may take",
    );
}

/// Issue 47, L6: `run … --json sp.json --csv sp.csv | head -1` died at its next printed line, with a
/// finished scenario written nowhere and three `.lock` files left. A closed standard output is now an
/// interrupt: the run stops at its safe point, keeps what finished in the named files (marked
/// partial), removes its locks, and only then ends by SIGPIPE as a pipeline expects.
#[test]
fn a_closed_stdout_interrupts_a_run_and_keeps_what_finished() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    // Twenty scenarios: far more than can finish between the test reading a row and closing the pipe.
    let sizes: Vec<String> = (1..=20).map(|i| (i * 64).to_string()).collect();
    let mut child = macbench()
        .current_dir(dir.path())
        .env(common::FAKE_ENGINE, "valid")
        .args("run --alg hmac-sha256 --sessions 1 --cores 0 --duration 200ms --repeat 1 --max-repeat 1 --target-ci 0 --no-harness --json sp.json --csv sp.csv".split_whitespace())
        .args(["--sizes", &sizes.join(",")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The table's header, then the first row (printed once the first scenario finished); then the
    // reader goes away, as `head -2` would.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for _ in 0..2 {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "ended early");
    }
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {err}",
        out.status
    );
    assert!(err.contains("interrupted"), "{err}");
    let doc = common::results_at(&dir.path().join("sp.json"));
    let kept = doc["results"].as_array().unwrap().len();
    assert!((1..20).contains(&kept), "{kept} results kept");
    assert_eq!(doc["partial"], true);
    let csv = std::fs::read_to_string(dir.path().join("sp.csv")).unwrap();
    assert_eq!(csv.lines().count(), kept + 1, "{csv}");
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["sp-threads.csv", "sp.csv", "sp.json"], "left behind");
}

/// Issue 47, M37: `list --json ro/l.json` ran seven seconds of self-tests before refusing the path.
/// `list` and `selftest` now check and lock `--json` first: exit 2, one line naming the directory.
#[test]
fn list_and_selftest_refuse_an_unwritable_json_up_front() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["list", "selftest"] {
        let out = macbench()
            .current_dir(dir.path())
            .args([command, "--json", "missing/l.json"])
            .output()
            .unwrap();
        one_line_error(
            &out,
            2,
            "--json missing/l.json: directory missing does not exist",
        );
        assert!(out.stdout.is_empty(), "{command} printed a table");
    }
}

/// Issue 47 (M32): `run --duration 1s --window 0.2..0.9` was refused "must lie inside the run
/// (0..0.15 s)": the window was checked against the default run length before `--duration` was read.
/// Now against the run it was given for; a window beyond that run is still refused.
#[test]
fn a_window_in_seconds_is_checked_against_the_given_duration() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("r.json");
    let window = |window: &str| {
        common::null_run(&["--sizes", "64", "--repeat", "1", "-q", "--duration", "1s"])
            .args(["--window", window, "--json"])
            .arg(&json)
            .output()
            .unwrap()
    };
    let out = window("0.2..0.9");
    let doc = common::results_at(&json);
    common::ran(&out, &doc);
    let scenario = &doc["results"][0]["scenario"];
    assert_eq!(
        (&scenario["window_start_s"], &scenario["window_end_s"]),
        (&serde_json::json!(0.2), &serde_json::json!(0.9))
    );
    one_line_error(&window("0.2..1.5"), 2, "must lie inside the run (0..1 s)");
}

/// Issue 47 M38: `compare --against cryptopp`'s 24 h bound counted sizes and 2 × `--duration` per
/// algorithm, which `cryptest b2` does not take: it times every algorithm it knows for a tenth of
/// `--duration`, once a round, whatever `--sizes`. The bound counts that, and its refusal says so.
#[test]
fn the_cryptopp_bound_counts_what_cryptest_runs() {
    use macbench::compare::check_total_time;
    use macbench::peers::Peer;
    // 13 sizes, 20 rounds of 300 s: 43 h as openssl runs it, 18 h as cryptest b2 does.
    assert!(check_total_time(Peer::Openssl, 1, 13, 20, 300).is_err());
    assert!(check_total_time(Peer::Cryptopp, 1, 13, 20, 300).is_ok());
    // Sizes do not change it; cryptest's own algorithms do.
    assert_eq!(
        check_total_time(Peer::Cryptopp, 1, 1, 30, 300).is_ok(),
        check_total_time(Peer::Cryptopp, 1, 13, 30, 300).is_ok()
    );
    let out = macbench()
        .args("compare --against cryptopp --alg hmac-sha256".split_whitespace())
        .args("--sizes 64,128 --rounds 100 --duration 86400".split_whitespace())
        .output()
        .unwrap();
    one_line_error(
        &out,
        2,
        "--rounds 100 × (ours: 1 algorithm(s) × --duration 86400 s, one stream row each; cryptest b2: its 98 algorithms × 8640 s, whatever --alg and --sizes) is",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("size(s)"), "{stderr}");
}
