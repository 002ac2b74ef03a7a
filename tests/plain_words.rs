//! Words that misled (issue 34): each message below said something the command did not do, or said it
//! in a way a reader took wrongly. Each test pins the fixed line where it stands, and the exit code.

#![allow(clippy::unwrap_used)]

mod common;

use common::macbench_process as macbench;

use common::one_line_error;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-ecda402.json")
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `reproduce --budget 12` of a study with shares 0.6/0.4 said "a budget of 12 s is too small for 2
/// steps of at least 5 s" — two steps of 5 s fit in 12 s. Issue 47 N31: `--budget 11` was then
/// accepted, a step refused its share and its claims could not be tested, exit 0. A budget below the
/// steps' real minimums is refused up front, in one line naming the minimum and each step's, and the
/// directory it named is not left behind.
#[test]
fn a_budget_below_the_steps_minimums_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = macbench()
        .current_dir(dir.path())
        .args("reproduce deepakumara-ipsec --budget 1 -o A".split_whitespace())
        .output()
        .unwrap();
    one_line_error(
        &out,
        2,
        "--budget 1: deepakumara-ipsec's steps to run need at least",
    );
    let err = stderr(&out);
    assert!(
        err.contains("(sweep ") && err.contains(", models "),
        "{err}"
    );
    // The minimum it names is taken.
    let need: String = err
        .split("give --budget ")
        .nth(1)
        .unwrap()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    assert!(need.parse::<u32>().unwrap() >= 10, "{err}");
    assert!(
        !dir.path().join("A").exists(),
        "a refused reproduction left its directory"
    );
    assert!(!err.contains("too small for"), "{err}");
}

/// `--resume afile` said "no such directory" of a file that exists.
#[test]
fn resume_of_a_file_says_it_is_a_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("afile"), "x").unwrap();
    let out = macbench()
        .current_dir(dir.path())
        .args("reproduce mac-speeds-thread --resume afile".split_whitespace())
        .output()
        .unwrap();
    one_line_error(&out, 2, "--resume afile: is a file, not a directory");
    let out = macbench()
        .current_dir(dir.path())
        .args("reproduce mac-speeds-thread --resume nothere".split_whitespace())
        .output()
        .unwrap();
    one_line_error(&out, 2, "--resume nothere: no such directory");
}

/// `--fail-on-regression 5%` was refused while `--target-ci 5%` worked; `1e309` was echoed as "inf".
#[test]
fn percentages_take_one_form_everywhere_and_must_be_finite() {
    let f = fixture();
    let f = f.to_str().unwrap();
    let out = macbench()
        .args(["diff", f, f, "--fail-on-regression", "5%"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for args in [
        &["diff", f, f, "--fail-on-regression", "1e309"][..],
        &["run", "--alg", "null", "--target-ci", "1e309"][..],
        &["run", "--alg", "null", "--target-ci", "nan%"][..],
    ] {
        let out = macbench().args(args).output().unwrap();
        one_line_error(&out, 2, "is not a finite percentage");
        assert!(!stderr(&out).contains("inf "), "{args:?}: {}", stderr(&out));
    }
}

/// Issue 47 (N33, M34): `--tick 1s` in a 20 ms run, `--target-ci 5%%` and `--target-ci 1e-300` were
/// accepted silently (the last only spent --max-repeat repeats on every scenario), and `--target-ci
/// 1e308` was echoed as 309 digits. Each is refused in one line, its number in a compact form.
#[test]
fn ticks_and_targets_no_run_can_use_are_refused() {
    for (args, needle) in [
        (
            "run --alg null --sizes 64 --duration 20ms --tick 1s",
            "s measurement window of a 0.02 s run: no sample would fall inside it",
        ),
        (
            "run --alg null --target-ci 5%%",
            "\"5%%\" is not a percentage",
        ),
        (
            "run --alg null --target-ci 1e-300",
            "--target-ci 1e-300: below 0.01 %",
        ),
        (
            "run --alg null --target-ci 1e308",
            "--target-ci 1e308: give a percentage between 0 (off) and 100",
        ),
    ] {
        let out = macbench()
            .args(args.split_whitespace())
            .env(common::FAKE_ENGINE, "valid")
            .output()
            .unwrap();
        one_line_error(&out, 2, needle);
    }
}

/// `compare --rounds -1` said "give a whole number, 0 or more", and then 0 was refused.
#[test]
fn counts_that_start_at_1_say_so() {
    for args in [
        &["compare", "--against", "openssl", "--rounds", "-1"][..],
        &["run", "--alg", "null", "--repeat", "-1"][..],
        &["run", "--alg", "null", "--sessions", "-1"][..],
    ] {
        let out = macbench().args(args).output().unwrap();
        one_line_error(&out, 2, "1 or more");
        assert!(!stderr(&out).contains("0 or more"), "{args:?}");
    }
    let out = macbench()
        .args("compare --against openssl --rounds 0".split_whitespace())
        .output()
        .unwrap();
    one_line_error(&out, 2, "--rounds must be at least 1");
}

/// Two reproductions of one host read as claims columns `vm | vm`: each is now named by its directory.
#[test]
fn two_reproductions_of_one_host_get_columns_apart() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        let d = dir.path().join(name);
        std::fs::create_dir(&d).unwrap();
        std::fs::copy(fixture(), d.join("lengths.json")).unwrap();
        std::fs::write(
            d.join("claims.json"),
            r#"{"study":"mac-speeds-thread","title":"t","authors":"au","host":"vm","claims":[{"id":"c","claim":"a claim","tolerance":0.1,"verdict":"holds","detail":"d"}]}"#,
        )
        .unwrap();
    }
    let out = macbench()
        .current_dir(dir.path())
        .args("report a b -o page.html".split_whitespace())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    assert!(page.contains("<th>vm (a)</th>"), "no column vm (a)");
    assert!(page.contains("<th>vm (b)</th>"), "no column vm (b)");
}

/// A plan under a second read "up to ~0 s".
#[test]
fn durations_under_a_second_are_said_in_milliseconds() {
    assert_eq!(macbench::cli::human_duration(0.3), "~300 ms");
    assert_eq!(macbench::cli::human_duration(0.0004), "~1 ms");
    assert_eq!(macbench::cli::human_duration(40.0), "~40 s");
}

/// `--label` took a zero-width space and a right-to-left override: two labels that look alike, and a
/// legend whose text runs backwards.
#[test]
fn labels_with_invisible_or_reordering_characters_are_refused() {
    for label in ["vm\u{200b}", "vm\u{202e}1", "\u{feff}vm", "a\u{2066}b"] {
        let out = macbench()
            .args(["run", "--alg", "null", "--label", label])
            .output()
            .unwrap();
        one_line_error(&out, 2, "--label");
        assert!(stderr(&out).contains("invisible"), "{label:?}");
        let out = macbench()
            .args(["reproduce", "mac-speeds-thread", "--label", label])
            .output()
            .unwrap();
        one_line_error(&out, 2, "--label");
    }
}

/// Issue 47 N21: labels made only of combining marks, of U+3164 (Hangul filler) or of U+2800
/// (braille blank) were taken as visible host names: a column headed by nothing. Refused like an
/// empty label; a letter with its combining mark is a label.
#[test]
fn labels_with_nothing_visible_are_refused_like_an_empty_one() {
    for label in [
        "\u{301}\u{302}",
        "\u{3164}",
        "\u{2800}",
        " \u{3164}\u{2800} ",
        "\u{20dd}",
    ] {
        let out = macbench()
            .args(["run", "--alg", "null", "--label", label])
            .output()
            .unwrap();
        one_line_error(&out, 2, "--label");
        assert!(stderr(&out).contains("one at least visible"), "{label:?}");
        let out = macbench()
            .args(["reproduce", "mac-speeds-thread", "--label", label])
            .output()
            .unwrap();
        one_line_error(&out, 2, "--label");
    }
    let out = macbench()
        .env(common::FAKE_ENGINE, "valid")
        .args("run --alg null --sizes 64 --sessions 1 --repeat 1 --duration 30ms --target-ci 0 --no-harness".split_whitespace())
        .args(["--label", "e\u{301}-\u{d55c}"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `run --json /dev/stdout` put the table on the same stream as the document; as for `--json -`, the
/// table moves to standard error and standard output is one parseable document.
#[test]
fn json_to_dev_stdout_moves_the_table_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = macbench()
        .current_dir(dir.path())
        .env(common::FAKE_ENGINE, "valid")
        .args("run --alg null --sizes 64 --sessions 1".split_whitespace())
        .args("--repeat 1 --duration 100ms --no-harness".split_whitespace())
        .args("--target-ci 0 --json /dev/stdout".split_whitespace())
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "standard output is not one document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    common::ran(&out, &doc);
    assert!(
        stderr(&out).contains("absolute cycles/byte"),
        "{}",
        stderr(&out)
    );
}

/// A run interrupted before any scenario finished said `results: r.json`, a file it never wrote.
#[test]
fn a_run_that_kept_nothing_names_no_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = macbench()
        .current_dir(dir.path())
        .args("run --alg null --sizes 64 --duration 30s".split_whitespace())
        .args("--repeat 1 --no-harness --json r.json".split_whitespace())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (_stderr, _) = common::interrupt_once_running(&mut child);
    let out = child.wait_with_output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{printed}");
    assert!(!printed.contains("results: r.json"), "{printed}");
    assert!(
        printed.contains("results: none written (no scenario finished); r.json left as it was"),
        "{printed}"
    );
    assert!(!dir.path().join("r.json").exists());
}

/// `tag … adir` was exit 1 ("reading adir: Is a directory") while a missing file was exit 2.
#[test]
fn tag_of_a_directory_is_bad_input_like_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("adir")).unwrap();
    for (file, needle) in [("adir", "adir: is a directory"), ("missing", "missing: ")] {
        let out = macbench()
            .current_dir(dir.path())
            .args(["tag", "--alg", "hmac-sha256", "--key", "00", file])
            .output()
            .unwrap();
        one_line_error(&out, 2, needle);
    }
}

/// A `$MACBENCH_EXE` that is not macbench and never stops printing (`/bin/yes`): `list` read the
/// `caps` child's output without end, `selftest` took its bytes for a ~170 MB reply field and waited
/// for them, and the run child's lines were read without bound. Each now ends with the child named
/// and what was expected (the 300 s is a guard against the old hang, not a measurement).
#[test]
fn a_child_that_prints_without_end_is_refused_not_read_for_ever() {
    // `macbench ARGS` with `/bin/yes` as the child, ended by then or killed (the old hang).
    let with_yes = |args: &[&str]| {
        common::macbench()
            .env("MACBENCH_EXE", "/bin/yes")
            .args(args)
            .timeout(std::time::Duration::from_secs(300))
            .output()
            .unwrap()
    };
    let expected = "expected a macbench executable's reply ($MACBENCH_EXE)";
    let list = with_yes(&["list"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert_eq!(list.status.code(), Some(0), "{}", stderr(&list));
    let said = format!("sw child: /bin/yes printed more than 64 MiB; {expected}");
    assert!(text.contains(&said), "{text}");
    let selftest = with_yes(&["selftest", "--alg", "hmac-sha256", "--backend", "openssl"]);
    let text = String::from_utf8_lossy(&selftest.stdout);
    let code = selftest.status.code();
    assert_eq!(code, Some(1), "{text}{}", stderr(&selftest));
    let said = format!("sw child /bin/yes: not a macbench reply; {expected}");
    assert!(text.contains(&said), "{text}");
    let line =
        "run --alg hmac-sha256 --backend openssl --accel sw --sizes 64 --sessions 1 --repeat 1 \
                --duration 50ms --no-harness --target-ci 0";
    let run = with_yes(&line.split_whitespace().collect::<Vec<_>>());
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{err}");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.contains(&format!(
            "sw child /bin/yes gave no result (expected value at line 1 column 1): \"__child run sw\"; {expected}"
        )),
        "{err}"
    );
}

/// `MACBENCH_EXE` naming no file failed each switched scenario in turn, "session 0: MACBENCH_EXE=…
/// is not a file", exit 1: a user's input, refused before anything runs (exit 2, one line).
#[test]
fn a_macbench_exe_that_is_not_a_file_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let out = macbench()
        .env("MACBENCH_EXE", "/nonexistent/macbench")
        .args("run --alg hmac-sha256 --backend openssl --accel hw,sw".split_whitespace())
        .args("--sizes 64 --sessions 1 --repeat 1 --duration 50ms".split_whitespace())
        .args(["--no-harness", "--target-ci", "0", "--json", "never.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    one_line_error(&out, 2, "MACBENCH_EXE=/nonexistent/macbench is not a file");
    assert!(!dir.path().join("never.json").exists());
}

/// `MACBENCH_EXE=/bin/true … --accel sw` ended its error in a dangling `: ` (the child's empty output
/// quoted after a colon); it now says the child printed nothing and what was expected.
#[test]
fn a_child_that_printed_nothing_is_said_so() {
    let out = macbench()
        .env("MACBENCH_EXE", "/bin/true")
        .args("run --alg hmac-sha256 --backend openssl --accel sw".split_whitespace())
        .args("--sizes 64 --sessions 1 --repeat 1 --duration 50ms".split_whitespace())
        .args(["--no-harness", "--target-ci", "0"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(!last.trim_end().ends_with(':'), "{last:?}");
    assert!(
        last.contains(
            "sw child /bin/true (exit status: 0) printed nothing; expected a macbench executable's reply ($MACBENCH_EXE)"
        ),
        "{err}"
    );
}

/// `list`'s "ISA levels …: not offered by mbedtls (52 rows in --json): mbedtls: only hw …" named the
/// backend twice: where one backend gives the reason, its own name is not repeated after it.
#[test]
fn a_backend_without_isa_levels_is_named_once() {
    let out = macbench().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("ISA levels "))
        .collect();
    assert!(!lines.is_empty(), "no `ISA levels` line in:\n{text}");
    for line in lines {
        let Some((head, why)) = line.split_once(" rows in --json): ") else {
            panic!("{line:?}");
        };
        let backends = head
            .split_once("not offered by ")
            .and_then(|(_, rest)| rest.rsplit_once(" ("))
            .map(|(names, _)| names)
            .unwrap_or_else(|| panic!("{line:?}"));
        if !backends.contains(", ") {
            assert!(!why.starts_with(&format!("{backends}: ")), "{line:?}");
        }
    }
}

/// `unavailable, skipped: hmac-sha256/cryptopp/avx512: cryptopp: Crypto++ 8.7 tests …`: the function's
/// id names its backend, so a reason that opens with the backend's name does not repeat it.
#[test]
fn an_unavailable_function_names_its_backend_once() {
    use macbench::mac::Accel;
    let resolved = macbench::spec::resolve_functions(
        "hmac-sha256,cmac-aes128",
        Some("openssl,mbedtls,nettle,cryptopp"),
        &[Accel::Hw, Accel::Sse, Accel::Avx512],
    )
    .unwrap();
    for line in &resolved.unavailable {
        let (id, why) = line.split_once(": ").unwrap_or_else(|| panic!("{line:?}"));
        if let Some(backend) = id.split('/').nth(1) {
            assert!(!why.starts_with(&format!("{backend}: ")), "{line:?}");
        }
    }
}
