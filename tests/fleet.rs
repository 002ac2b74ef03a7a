//! Results of many machines: `run --label` and `-o DIR`, `validate` as a pipeline's gate, and `report`
//! and `diff` taking directories and globs with hosts side by side — on files written here or
//! constructed from the fixture, no timing anywhere.

#![allow(clippy::unwrap_used)]

mod common;

use common::macbench_process as macbench;

use common::{null_run, one_line_error};
use serde_json::Value;
use std::path::Path;

/// The fixture results file with its host labelled `label`, edited by `edit`, written to `path`.
fn results_file(path: &Path, label: &str, edit: impl Fn(&mut Value)) {
    let text = std::fs::read_to_string("tests/fixtures/results-ecda402.json").unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["host"]["label"] = Value::from(label);
    edit(&mut doc);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
}

/// A claims file of `study` on `host` with one claim whose verdict is `verdict`.
fn claims_file(dir: &Path, host: &str, verdict: &str, detail: &str) {
    let claims = serde_json::json!({
        "study": "mac-speeds-thread", "title": "MAC speeds (mailing-list thread)",
        "authors": "D. J. Bernstein, T. Kivinen", "host": host,
        "claims": [{"id": "per-message-overhead", "claim": "A fixed cost per message dominates short messages",
                    "tolerance": 0.5, "verdict": verdict, "detail": detail}],
        "caveat": null
    });
    std::fs::write(dir.join("claims.json"), claims.to_string()).unwrap();
}

#[test]
fn run_writes_a_labelled_directory_that_validates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("phone");
    // On the fake engine (null_run): the run passes its checks, so it exits 0 and validate agrees.
    let labelled = |engine: &str, dir: &Path| {
        null_run(&["--sizes", "64", "--duration", "50ms", "--repeat", "1", "-q"])
            .args(["--label", "pixel-7", "-o"])
            .arg(dir)
            .env(common::FAKE_ENGINE, engine)
            .output()
            .unwrap()
    };
    let out = labelled("valid", &dir);
    let doc = common::results_at(&dir.join("results.json"));
    common::ran(&out, &doc);
    assert_eq!(doc["host"]["label"], "pixel-7");
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let host = rows
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "host")
        .unwrap();
    assert_eq!(&rows.records().next().unwrap().unwrap()[host], "pixel-7");
    assert!(dir.join("results-threads.csv").is_file());
    let checked = macbench().arg("validate").arg(&dir).output().unwrap();
    let said = String::from_utf8_lossy(&checked.stdout);
    assert!(checked.status.success(), "{said}");
    assert!(said.contains("1 file(s), 1 result(s)"), "{said}");
    // A run whose result failed its checks (the fake engine's starved runs): exit 1, and validate
    // agrees, naming the failed result.
    let failed_dir = tmp.path().join("starved");
    common::failed_validity(&labelled("starved", &failed_dir), 1);
    let checked = macbench()
        .arg("validate")
        .arg(&failed_dir)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(1), "{said}");
    assert!(said.contains("null/null/hw: failed: "), "{said}");
    // The same directory again: refused before anything runs, the results kept.
    let again = null_run(&["--sizes", "64", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    one_line_error(&again, 2, "results.json, which this run would replace");
    // -o that is a file, -o with --json, and absurd labels: one-line usage errors.
    let file = dir.join("results.json");
    one_line_error(
        &null_run(&["-o"]).arg(&file).output().unwrap(),
        2,
        "not a directory",
    );
    let both = null_run(&["--json", "x.json", "-o"])
        .arg(tmp.path().join("y"))
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2));
    for label in ["", "   ", "a\tb", &"x".repeat(65)] {
        let out = null_run(&["--label", label]).output().unwrap();
        one_line_error(&out, 2, "--label");
    }
}

#[test]
fn validate_names_each_problem_on_its_own_line() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good/results.json");
    results_file(&good, "a", |_| {});
    let truncated = tmp.path().join("bad/truncated.json");
    std::fs::create_dir_all(truncated.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(&good).unwrap();
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    results_file(&tmp.path().join("bad/partial.json"), "a", |d| {
        d["partial"] = Value::from(true);
    });
    results_file(&tmp.path().join("bad/fatal.json"), "a", |d| {
        d["results"][0]["failed"] = Value::from(true);
        d["results"][0]["warnings"] = serde_json::json!([{
            "code": "impossible", "message": "absolute exceeds the cores' time", "fatal": true
        }]);
    });
    let out = macbench()
        .arg("validate")
        .arg(tmp.path().join("good"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = macbench()
        .arg("validate")
        .arg(tmp.path().join("good"))
        .arg(tmp.path().join("bad"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("fatal.json: hmac-sha256/")
                && l.contains("failed: absolute exceeds")),
        "{stdout}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("partial.json: a partial run")),
        "{stdout}"
    );
    assert!(
        lines.iter().any(|l| l.contains("truncated.json: not JSON")),
        "{stdout}"
    );
    one_line_error(&out, 1, "3 problem(s) in 4 file(s)");
    // A directory without results and a glob matching nothing are problems too.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = macbench()
        .arg("validate")
        .arg(&empty)
        .arg(tmp.path().join("nothing*"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("a directory without results files"),
        "{stdout}"
    );
    assert!(
        stdout.contains("no file or directory matches this pattern"),
        "{stdout}"
    );
}

#[test]
fn report_puts_hosts_and_their_claims_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    for (host, verdict, detail) in [
        ("server", "holds", "hmac-md5 10.00×"),
        ("board", "does-not-hold", "hmac-md5 1.20×"),
    ] {
        let dir = tmp.path().join(host);
        results_file(&dir.join("lengths.json"), host, |_| {});
        claims_file(&dir, host, verdict, detail);
    }
    let html = tmp.path().join("report.html");
    // Directories, one as a quoted glob (the shell did not expand it).
    common::succeeds(
        macbench()
            .arg("report")
            .arg(tmp.path().join("server"))
            .arg(tmp.path().join("bo?rd"))
            .arg("-o")
            .arg(&html),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    let claims = &page[page
        .find("<section id=\"claims\">")
        .expect("a claims section")..];
    let claims = &claims[..claims.find("</section>").unwrap()];
    // One column per host, in the order given, each with its verdict and numbers.
    let server = claims.find("<th>server</th>").unwrap();
    let board = claims.find("<th>board</th>").unwrap();
    assert!(server < board, "{claims}");
    assert!(
        claims.contains("<td class=\"holds\"><strong>holds</strong><br>hmac-md5 10.00×</td>"),
        "{claims}"
    );
    assert!(
        claims.contains(
            "<td class=\"does-not-hold\"><strong>does not hold</strong><br>hmac-md5 1.20×</td>"
        ),
        "{claims}"
    );
    // The claim links to the paper figure that decides it, which is drawn once per host, side by
    // side in the order given, each named after the figure and its host.
    assert!(
        claims.contains("<a href=\"#thread-cycles-per-byte\">"),
        "{claims}"
    );
    let paper = &page[page
        .find("<div class=\"paper\" id=\"thread-cycles-per-byte\">")
        .expect("the thread's figure")..];
    let paper = &paper[..paper.find("</section>").unwrap()];
    let server = paper
        .find("data-host=\"server\" data-figure=\"thread-cycles-per-byte-server\"")
        .expect("server's figure");
    let board = paper
        .find("data-host=\"board\" data-figure=\"thread-cycles-per-byte-board\"")
        .expect("board's figure");
    assert!(server < board);
    assert_eq!(paper.matches("<figure ").count(), 2, "{paper}");
    assert!(
        page.find("<section id=\"claims\">") < page.find("<section id=\"paper\">")
            && page.find("<section id=\"paper\">") < page.find("<section id=\"figures\">")
    );
    // The hosts table has one entry per host, by label; the series are named by host.
    let hosts = &page[page.find("<section id=\"hosts\">").unwrap()..];
    assert!(
        hosts.contains("<h3>server</h3>") && hosts.contains("<h3>board</h3>"),
        "{hosts}"
    );
    assert!(page.contains(">server<") && page.contains(">board<"));
}

#[test]
fn diff_pairs_two_directories_file_by_file() {
    let tmp = tempfile::tempdir().unwrap();
    for side in ["old", "new"] {
        results_file(&tmp.path().join(side).join("sizes.json"), side, |_| {});
    }
    results_file(&tmp.path().join("old/only-old.json"), "old", |_| {});
    let out = macbench()
        .arg("diff")
        .arg(tmp.path().join("old"))
        .arg(tmp.path().join("new"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    common::exited_0(&out);
    assert!(
        stdout.contains("only-old.json has no counterpart"),
        "{stdout}"
    );
    assert!(
        stdout.contains("summary: 0 faster, 0 slower beyond noise"),
        "{stdout}"
    );
    // Nothing of the same name (and not one file a side): nothing compared, exit 1.
    results_file(&tmp.path().join("other/else.json"), "x", |_| {});
    results_file(&tmp.path().join("other/more.json"), "x", |_| {});
    let out = macbench()
        .arg("diff")
        .arg(tmp.path().join("new"))
        .arg(tmp.path().join("other"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// `benchstat` where installed: on PATH, or where `go install` puts it.
fn benchstat() -> Option<std::path::PathBuf> {
    let home = std::env::var("HOME").unwrap_or_default();
    ["benchstat".to_string(), format!("{home}/go/bin/benchstat")]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|p| std::process::Command::new(p).arg("-h").output().is_ok())
}

#[test]
fn export_writes_bencher_json_and_benchstat_text_that_their_tools_read() {
    let tmp = tempfile::tempdir().unwrap();
    results_file(&tmp.path().join("a/results.json"), "a", |_| {});
    results_file(&tmp.path().join("b/results.json"), "b", |_| {});
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string("tests/fixtures/results-ecda402.json").unwrap(),
    )
    .unwrap();
    let results = fixture["results"].as_array().unwrap();

    // BMF: one benchmark per result, each metric with its value inside its 95 % interval.
    let out = common::succeeds(
        macbench()
            .args(["export", "--format", "bmf"])
            .arg(tmp.path().join("a")),
    );
    let bmf: Value = serde_json::from_slice(&out.stdout).unwrap();
    let benchmarks = bmf.as_object().unwrap();
    let first = &results[0];
    let name = format!(
        "{}/{}/{}@{}/{}",
        first["algorithm"].as_str().unwrap(),
        first["backend"].as_str().unwrap(),
        first["accel"].as_str().unwrap(),
        first["size"],
        first["sessions"]
    );
    let m = &benchmarks[&name]["absolute-cycles-per-byte"];
    assert_eq!(m["value"], first["metrics"]["absolute_cycles_per_byte"]);
    assert_eq!(
        m["lower_value"],
        first["ci95"]["absolute_cycles_per_byte"]["low"]
    );
    for measures in benchmarks.values() {
        for (measure, v) in measures.as_object().unwrap() {
            let (value, low, high) = (
                v["value"].as_f64(),
                v["lower_value"].as_f64(),
                v["upper_value"].as_f64(),
            );
            if let (Some(value), Some(low), Some(high)) = (value, low, high) {
                assert!(low <= value && value <= high, "{measure}: {v}");
            }
        }
    }
    // Two hosts: each benchmark named after its host.
    let out = macbench()
        .args(["export", "--format", "bmf"])
        .arg(tmp.path().join("a"))
        .arg(tmp.path().join("b"))
        .output()
        .unwrap();
    let both: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(both.get(format!("a/{name}")).is_some() && both.get(format!("b/{name}")).is_some());

    // benchstat: one line per repeat (the raw runs), the host in a configuration line.
    let text = tmp.path().join("a.txt");
    common::succeeds(
        macbench()
            .args("export --format benchstat -o".split_whitespace())
            .arg(&text)
            .arg(tmp.path().join("a")),
    );
    let lines = std::fs::read_to_string(&text).unwrap();
    let repeats: usize = results
        .iter()
        .map(|r| r["raw"].as_array().unwrap().len())
        .sum();
    assert_eq!(
        lines
            .lines()
            .filter(|l| l.starts_with("BenchmarkMAC/"))
            .count(),
        repeats,
        "{lines}"
    );
    assert!(lines.contains("\nhost: a\n"), "{lines}");
    // The output never overwrites an input.
    let clobber = macbench()
        .args("export --format bmf -o".split_whitespace())
        .arg(tmp.path().join("a/results.json"))
        .arg(tmp.path().join("a"))
        .output()
        .unwrap();
    assert_eq!(clobber.status.code(), Some(2));
    let Some(tool) = benchstat() else {
        common::skip(
            "benchstat",
            "benchstat not installed (CI installs it with `go install`)",
        );
        return;
    };
    let read = std::process::Command::new(tool)
        .arg(&text)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&read.stdout);
    common::exited_0(&read);
    assert!(
        table.contains("abs-cycles/B") && table.contains("MAC/alg="),
        "{table}"
    );
}

/// Issue 34: `validate`, what a fleet's CI trusts, said "all complete and measured" for each of these
/// files, and `report`, `diff` and `export` took the first (BMF got `{}`). Now one check of a result's
/// invariants (`results::check`) runs in every reader: `validate` lists the problem naming the field
/// (exit 1), every other reader refuses the file in one line naming it (exit 2).
#[test]
fn every_reader_refuses_results_that_break_their_invariants() {
    type Edit = fn(&mut Value);
    let cases: &[(&str, Edit, &str)] = &[
        (
            "no-metrics",
            |d| {
                d["results"][0].as_object_mut().unwrap().remove("metrics");
            },
            "results[0].metrics: missing",
        ),
        (
            "inverted-interval",
            |d| {
                let ci = &mut d["results"][0]["ci95"]["absolute_cycles_per_byte"];
                let (low, high) = (ci["low"].clone(), ci["high"].clone());
                ci["low"] = high;
                ci["high"] = low;
            },
            "results[0].ci95.absolute_cycles_per_byte: low",
        ),
        (
            "interval-without-its-median",
            |d| {
                d["results"][0]["ci95"]["absolute_cycles_per_byte"] =
                    serde_json::json!({"low": 100.0, "high": 200.0});
            },
            "results[0].ci95.absolute_cycles_per_byte: [100, 200] does not hold the median",
        ),
        (
            "null-cost-at-64",
            |d| d["results"][0]["metrics"]["absolute_cycles_per_byte"] = Value::Null,
            "results[0].metrics.absolute_cycles_per_byte: null at size 64",
        ),
        (
            "zero-messages-positive-cost",
            |d| d["results"][0]["metrics"]["messages"] = Value::from(0),
            "over 0 messages",
        ),
        (
            "zero-sessions",
            |d| d["results"][0]["sessions"] = Value::from(0),
            "results[0].sessions: 0",
        ),
        (
            "zero-repeats",
            |d| d["results"][0]["repeats"] = Value::from(0),
            "results[0].repeats: 0",
        ),
        (
            "schema-version-0",
            |d| d["schema_version"] = Value::from(0),
            "schema_version: 0",
        ),
        (
            "unknown-algorithm",
            |d| d["results"][0]["algorithm"] = Value::from("hmac-sha999"),
            "results[0].algorithm: \"hmac-sha999\" is no algorithm",
        ),
        (
            "cost-as-a-string",
            |d| d["results"][0]["metrics"]["absolute_cycles_per_byte"] = Value::from("9.7"),
            "results[0].metrics.absolute_cycles_per_byte: invalid type: string \"9.7\"",
        ),
    ];
    refused_by_every_reader(cases);
}

/// Issue 47 (N24–N27): results no run can write, each read as measured by every reader before. Now
/// the same one check refuses them, naming the field; the checks that need a measured result's
/// intervals out of the way take them away, so each case meets the refusal it is about.
#[test]
fn every_reader_refuses_impossible_results() {
    type Edit = fn(&mut Value);
    /// The first result without its intervals and spreads (still a valid file with 2 repeats).
    fn bare(d: &mut Value) -> &mut Value {
        let r = &mut d["results"][0];
        r.as_object_mut().unwrap().remove("ci95");
        r.as_object_mut().unwrap().remove("spread");
        r
    }
    let cases: &[(&str, Edit, &str)] = &[
        (
            "spread-without-its-median",
            |d| {
                d["results"][0]["spread"]["absolute_cycles_per_byte"] =
                    serde_json::json!({"min": 100.0, "max": 200.0});
            },
            "results[0].spread.absolute_cycles_per_byte: [100, 200] does not hold the median",
        ),
        (
            "repeats-1001",
            |d| d["results"][0]["repeats"] = Value::from(1001),
            "results[0].repeats: 1001; a run makes at most 1000 repeats",
        ),
        (
            // Huge enough that the interval's allowance would hold any median.
            "repeats-1e15",
            |d| {
                d["results"][0]["repeats"] = Value::from(1_000_000_000_000_000_u64);
                d["results"][0]["ci95"]["absolute_cycles_per_byte"] =
                    serde_json::json!({"low": 100.0, "high": 200.0});
            },
            "results[0].repeats: 1000000000000000",
        ),
        (
            "every-cost-0",
            |d| {
                let r = bare(d);
                for c in [
                    "absolute_cycles_per_byte",
                    "apparent_cycles_per_byte",
                    "absolute_cycles_per_message",
                    "apparent_cycles_per_message",
                ] {
                    r["metrics"][c] = Value::from(0.0);
                }
            },
            "results[0].metrics: every cost 0 over 106560 messages",
        ),
        (
            "bytes-not-messages-times-size",
            |d| d["results"][0]["metrics"]["bytes"] = Value::from(12345),
            "results[0].metrics.bytes: 12345 is not messages × size",
        ),
        (
            "no-throughput-beside-a-cost",
            |d| bare(d)["metrics"]["bytes_per_second"] = Value::from(0.0),
            "results[0].metrics.bytes_per_second: 0 beside a cost",
        ),
        (
            "median-latency-above-p99",
            |d| d["results"][0]["metrics"]["latency_p50_ns"] = Value::from(500.0),
            "results[0].metrics.latency_p50_ns: 500 is above latency_p99_ns",
        ),
        (
            "fairness-5",
            |d| d["results"][0]["metrics"]["fairness"] = Value::from(5.0),
            "results[0].metrics.fairness: 5;",
        ),
        (
            "utilisation-50",
            |d| d["results"][0]["metrics"]["cpu_utilisation"] = Value::from(50.0),
            "results[0].metrics.cpu_utilisation: 50;",
        ),
        (
            "window-0",
            |d| d["results"][0]["metrics"]["window_seconds"] = Value::from(0.0),
            "results[0].metrics.window_seconds: 0 in a result that measured",
        ),
        (
            "ten-million-sessions",
            |d| d["results"][0]["sessions"] = Value::from(10_000_000),
            "results[0].sessions: 10000000; a run has at most 1000000 sessions",
        ),
        (
            "no-interval-beside-3-repeats",
            |d| {
                d["results"][0]["repeats"] = Value::from(3);
                d["results"][0]["ci95"] = serde_json::json!({});
            },
            "results[0].ci95: no interval beside 3 repeats",
        ),
        (
            "one-scenario-twice",
            |d| {
                let again = d["results"][0].clone();
                d["results"].as_array_mut().unwrap().push(again);
            },
            "results[4]: the scenario hmac-sha256/openssl/hw@64/1 again (first at results[0])",
        ),
        (
            "unknown-backend",
            |d| d["results"][0]["backend"] = Value::from("opensssl"),
            "results[0].backend: \"opensssl\" is no backend",
        ),
        (
            "unknown-acceleration",
            |d| d["results"][0]["accel"] = Value::from("turbo"),
            "results[0].accel: \"turbo\" is no acceleration",
        ),
    ];
    refused_by_every_reader(cases);
}

/// A case of [`refused_by_every_reader`]: its name, its edit of the fixture, and what the refusal says.
type Case<'a> = (&'a str, fn(&mut Value), &'a str);

/// Each case's edit of the fixture, refused by every reader: `validate` lists the problem naming
/// the field (exit 1), every other reader refuses in one line naming it (exit 2), writes nothing
/// and leaves the file as it was.
fn refused_by_every_reader(cases: &[Case]) {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.json");
    results_file(&good, "a", |_| {});
    for (name, edit, needle) in cases {
        let dir = tmp.path().join(name);
        let bad = dir.join("results.json");
        results_file(&bad, "a", edit);
        let before = std::fs::read(&bad).unwrap();
        // validate: the problem, on its own line, naming the field; exit 1.
        let out = macbench().arg("validate").arg(&dir).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{name}: {stdout}");
        assert!(
            stdout.contains(needle) && !stdout.contains("all complete"),
            "{name}: {stdout}"
        );
        // Every other reader: one line naming the field, exit 2.
        let html = tmp.path().join(format!("{name}.html"));
        let model_json = tmp.path().join(format!("{name}-model.json"));
        let readers: Vec<Vec<std::ffi::OsString>> = vec![
            vec![
                "report".into(),
                bad.clone().into(),
                "-o".into(),
                html.clone().into(),
            ],
            vec!["diff".into(), good.clone().into(), bad.clone().into()],
            vec!["diff".into(), bad.clone().into(), good.clone().into()],
            vec![
                "export".into(),
                "--format".into(),
                "bmf".into(),
                bad.clone().into(),
            ],
            vec![
                "export".into(),
                "--format".into(),
                "benchstat".into(),
                dir.clone().into(),
            ],
            vec![
                "model".into(),
                "--results".into(),
                bad.clone().into(),
                "--json".into(),
                model_json.clone().into(),
            ],
        ];
        for args in readers {
            let out = macbench().args(&args).output().unwrap();
            one_line_error(&out, 2, needle);
            assert!(
                out.stdout.is_empty(),
                "{name} {args:?}: wrote {:?}",
                out.stdout
            );
        }
        assert!(!html.exists() && !model_json.exists(), "{name}");
        assert_eq!(
            std::fs::read(&bad).unwrap(),
            before,
            "{name}: the file changed"
        );
    }
}

/// Issue 47 (N28): a result with a fatal warning but `"failed": false` and a cost of 1e300 was
/// exported as LAVA `pass` with a 301-digit value and BMF `1e+300`, drawn by `report` and called
/// "slower" by `diff`. A fatal warning fails a result for every consumer (`ResultEntry::measured`, the
/// notion `results::check` holds the numbers of).
#[test]
fn a_fatal_warning_fails_a_result_for_every_consumer() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.json");
    results_file(&good, "a", |_| {});
    let bad = tmp.path().join("warned.json");
    results_file(&bad, "a", |d| {
        let r = &mut d["results"][0];
        r["failed"] = Value::from(false);
        r["metrics"]["absolute_cycles_per_byte"] = Value::from(1e300);
        r["warnings"] = serde_json::json!([{
            "code": "starvation", "message": "no session tagged a message in the window", "fatal": true
        }]);
    });
    let name = "hmac-sha256/openssl/hw@64/1";
    let export = |format: &str| {
        let out = macbench()
            .args(["export", "--format", format])
            .arg(&bad)
            .output()
            .unwrap();
        common::exited_0(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let lava = export("lava");
    assert!(
        lava.contains("hmac-sha256_openssl_hw_64_1 fail 0 cycles/B"),
        "{lava}"
    );
    assert!(!lava.contains("1000000000"), "{lava}");
    let bmf: Value = serde_json::from_str(&export("bmf")).unwrap();
    assert!(bmf.get(name).is_none(), "{bmf}");
    let benchstat = export("benchstat");
    assert!(
        !benchstat.contains("alg=hmac-sha256/backend=openssl/accel=hw/size=64/sessions=1 "),
        "{benchstat}"
    );
    // diff: no change, the reason instead.
    let out = macbench()
        .args(["diff", "--json", "-"])
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    let diff: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = diff.to_string();
    assert!(
        text.contains("NEW result failed its validity checks"),
        "{text}"
    );
    // report: the row marked failed, and its cost in no figure.
    let html = tmp.path().join("r.html");
    let out = macbench()
        .arg("report")
        .arg(&bad)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    common::exited_0(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    // One row in the results table, one in the warnings table.
    assert_eq!(page.matches("<tr class=\"failed\">").count(), 2);
    assert!(page.contains(">FAILED<"), "no FAILED status");
    // Listed in "All results" with its numbers, but in no figure (nor the table behind one).
    let figures = &page[..page.find("<section id=\"results\"").unwrap()];
    assert!(!figures.contains("1e300"), "a figure drew the cost");
}

/// Issue 47 (N29): results of `MACBENCH_FAKE_ENGINE=valid` carried no mark and passed `validate
/// --strict`; a value that was not UTF-8 silently timed the real machine. Now the file says
/// `"fake_engine": "valid"`, `validate` notes it (`--strict`: a problem), `export` refuses it,
/// `report` says so at the top, and a bad value is refused before anything runs.
#[test]
fn results_of_the_fake_engine_are_marked_and_never_pass_for_measurements() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("fake.json");
    let out = null_run(&["--sizes", "64", "--duration", "50ms", "--repeat", "1", "-q"])
        .arg("--json")
        .arg(&file)
        .output()
        .unwrap();
    let doc = common::results_at(&file);
    common::ran(&out, &doc);
    assert_eq!(doc["fake_engine"], "valid");
    let note = "made up by the fake engine (MACBENCH_FAKE_ENGINE=valid), not measured";
    let out = macbench().arg("validate").arg(&file).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(note), "{stdout}");
    let out = macbench()
        .args(["validate", "--strict"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(note), "{stdout}");
    for format in ["bmf", "benchstat", "lava"] {
        let out = macbench()
            .args(["export", "--format", format])
            .arg(&file)
            .output()
            .unwrap();
        one_line_error(&out, 2, note);
        assert!(out.stdout.is_empty(), "{format}");
    }
    let html = tmp.path().join("r.html");
    let out = macbench()
        .arg("report")
        .arg(&file)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    common::exited_0(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Not measured: </strong>fake"), "no note");
    // A value the fake does not take, or not UTF-8: refused before anything, even a report.
    use std::os::unix::ffi::OsStrExt;
    for value in [std::ffi::OsStr::from_bytes(b"val\xffid"), "yes".as_ref()] {
        let out = macbench()
            .arg("report")
            .arg(&file)
            .arg("-o")
            .arg(tmp.path().join("other.html"))
            .env(common::FAKE_ENGINE, value)
            .output()
            .unwrap();
        one_line_error(&out, 2, "MACBENCH_FAKE_ENGINE=");
        assert!(!tmp.path().join("other.html").exists());
    }
}

/// Issue 47 (M34): a measured cost of 1e300 went to LAVA as 301 digits; now as `1e300`, which the
/// definition's pattern takes.
#[test]
fn lava_prints_a_huge_cost_compactly() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("huge.json");
    results_file(&file, "a", |d| {
        let r = d["results"][0].as_object_mut().unwrap();
        r.remove("ci95");
        r.remove("spread");
        r["metrics"]["absolute_cycles_per_byte"] = Value::from(1e300);
    });
    let out = macbench()
        .args(["export", "--format", "lava"])
        .arg(&file)
        .output()
        .unwrap();
    common::exited_0(&out);
    let lava = String::from_utf8_lossy(&out.stdout);
    assert!(
        lava.contains("hmac-sha256_openssl_hw_64_1 pass 1e300 cycles/B\n"),
        "{lava}"
    );
}

/// What `run` writes for a scenario it did not time (a refused job, a starved window: `failed`, a
/// fatal warning, null costs, no repeats) is still read by every reader, and `validate` calls it
/// failed with its reason, not malformed.
#[test]
fn results_that_measured_nothing_are_read_with_their_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("untimed/results.json");
    results_file(&file, "a", |d| {
        let r = &mut d["results"][0];
        for v in r["metrics"].as_object_mut().unwrap().values_mut() {
            *v = if v.is_u64() {
                Value::from(0)
            } else {
                Value::Null
            };
        }
        r["repeats"] = Value::from(0);
        r["failed"] = Value::from(true);
        r["ci95"] = serde_json::json!({});
        r["spread"] = serde_json::json!({});
        r["raw"] = serde_json::json!([]);
        r["warnings"] = serde_json::json!([{
            "code": "starvation", "message": "no session tagged a message in the window", "fatal": true
        }]);
    });
    let out = macbench().arg("validate").arg(&file).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("failed: no session tagged a message") && !stdout.contains("malformed"),
        "{stdout}"
    );
    let html = tmp.path().join("r.html");
    common::succeeds(macbench().arg("report").arg(&file).arg("-o").arg(&html));
    common::succeeds(
        macbench()
            .args(["export", "--format", "benchstat"])
            .arg(&file),
    );
    common::succeeds(macbench().arg("diff").arg(&file).arg(&file));
}

/// A claims file alone is no evidence that anything measured: `validate DIR/claims.json` used to say
/// "0 result(s): all complete and measured".
#[test]
fn validate_of_a_claims_file_alone_is_a_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repro");
    results_file(&dir.join("lengths.json"), "a", |_| {});
    claims_file(&dir, "a", "holds", "hmac-md5 10.00×");
    let out = macbench()
        .arg("validate")
        .arg(dir.join("claims.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("claims file holds no results"), "{stdout}");
    // With its directory, the claims file is checked beside the results it judges.
    let out = macbench().arg("validate").arg(&dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
