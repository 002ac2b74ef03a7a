//! Outputs that are streams, and file names without an extension (issue: `--json /dev/stdout` emitted
//! one document per finished scenario, concatenated; `--csv /dev/null` created `/dev/null-threads`;
//! `--csv out` wrote `out-threads` without its extension), and `compare` and `diff` writing `--json`/`--csv`
//! by the same rules (they had no such flags).

#![allow(clippy::unwrap_used)]

mod common;

use assert_cmd::Command;

/// Two short one-session runs, on the fake engine: the outputs are under test, not the machine.
fn run() -> Command {
    common::fake_run("run --alg hmac-sha256,cmac-aes128 --sizes 64 --sessions 1 --cores 0 --duration 30ms --repeat 1 --max-repeat 1 --target-ci 0 --no-harness")
}

#[test]
fn json_to_dev_stdout_is_one_document_at_the_end() {
    let out = run()
        .args(["--json", "/dev/stdout", "-q"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.matches("\"schema_version\"").count(), 1, "{text}");
    // The table follows the document on the same stream: read the document alone.
    let doc = serde_json::Deserializer::from_str(&text)
        .into_iter::<serde_json::Value>()
        .next()
        .unwrap()
        .unwrap();
    common::ran(&out, &doc);
}

#[test]
fn csv_without_extension_gets_a_csv_sibling_for_threads() {
    let dir = tempfile::tempdir().unwrap();
    let out = run()
        .current_dir(dir.path())
        .args("--csv out --json r.json".split_whitespace())
        .output()
        .unwrap();
    common::ran(&out, &common::results_at(&dir.path().join("r.json")));
    assert!(dir.path().join("out").is_file());
    assert!(dir.path().join("out-threads.csv").is_file());
    assert!(!dir.path().join("out-threads").exists());
}

/// Make a FIFO at `path` (coreutils' mkfifo).
fn mkfifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo (coreutils)");
}

#[test]
fn csv_to_a_fifo_derives_no_sibling_file() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.csv");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let json = dir.path().join("r.json");
    let out = run()
        .arg("--csv")
        .arg(&fifo)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    common::ran(&out, &common::results_at(&json));
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
    mkfifo(&fifo);
    let out = run()
        .arg("--json")
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("a FIFO no process read within 10 s"), "{err}");
}

/// Run `cmd` with `--json` and `--csv` into `dir` and return the rows, checking they agree: the JSON is
/// an array of flat objects, the CSV's header is their keys in the same order and it has one line per
/// object (what pandas' `read_json` and `read_csv` need to give the same frame).
fn written_rows(mut cmd: Command, dir: &std::path::Path) -> Vec<serde_json::Value> {
    let (json, csv) = (dir.join("rows.json"), dir.join("rows.csv"));
    cmd.arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .assert()
        .success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    // `diff` writes an array of rows; `compare` a results document whose `rows` are the CSV's.
    let rows = match doc.get("schema") {
        Some(schema) => {
            assert_eq!(schema, macbench::results::compare::SCHEMA);
            doc["rows"].as_array().expect("the document's rows").clone()
        }
        None => doc.as_array().expect("an array of rows").clone(),
    };
    assert!(!rows.is_empty());
    let text = std::fs::read_to_string(csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    for row in &rows {
        let keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, header);
        assert!(row
            .as_object()
            .unwrap()
            .values()
            .all(|v| !v.is_object() && !v.is_array()));
    }
    assert_eq!(text.lines().count(), rows.len() + 1, "{text}");
    rows
}

#[test]
fn diff_writes_json_and_csv_and_never_over_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = "tests/fixtures/results-ecda402.json";
    let mut diff = common::macbench();
    diff.args(["diff", fixture, fixture]);
    let rows = written_rows(diff, dir.path());
    assert_eq!(rows[0]["function"], "hmac-sha256/openssl/hw");
    assert_eq!(rows[0]["size"], 64);
    assert_eq!(rows[0]["absolute_ratio"], 1.0);
    assert_eq!(rows[0]["verdict"], "within noise");
    // `-` is standard output: one document there, the table moves to standard error.
    let out = common::macbench()
        .args(["diff", fixture, fixture, "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc.as_array().unwrap().len(), rows.len());
    // An output that is an input is refused before anything is read or written.
    let before = std::fs::read(fixture).unwrap();
    let out = common::macbench()
        .args(["diff", fixture, fixture, "--csv", fixture])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is also the input"));
    assert_eq!(std::fs::read(fixture).unwrap(), before);
}

#[test]
fn compare_writes_json_and_csv() {
    // Refused before the peer is looked for: two outputs at one path.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let compare = || {
        let mut cmd = common::macbench();
        cmd.args("compare --against openssl --alg hmac-sha256".split_whitespace())
            .args("--sizes 64 --duration 1s".split_whitespace());
        cmd
    };
    let out = compare()
        .env("MACBENCH_OPENSSL", "/nonexistent/peer-binary")
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is also the output"));
    if common::skip_without_openssl_cli() {
        return;
    }
    let rows = written_rows(compare(), dir.path());
    assert_eq!(rows[0]["peer"], "openssl");
    assert_eq!(rows[0]["size"], 64);
    assert!(rows[0]["ratio"].as_f64().unwrap() > 0.0, "{rows:?}");
}

/// `macbench` with standard output sent to `stdout` (a file the test opened), on the fake engine.
fn to_file(line: &str, stdout: std::fs::File) -> std::process::Output {
    common::macbench_process()
        .args(line.split_whitespace())
        .env(common::FAKE_ENGINE, "valid")
        .stdout(stdout)
        .output()
        .unwrap()
}

/// Issue 47, C5: `--json /dev/stdout > so.json` renamed a temporary file over so.json at the first
/// rewrite, so every later result (and the table) went to the unlinked inode the shell still held:
/// exit 0 with 1 of 3 results and `"partial": true`. Every name of standard output, and so.json's own
/// name, now writes descriptor 1 once at the end: the file the shell made holds every result.
#[test]
fn an_output_naming_standard_output_redirected_to_a_file_keeps_every_result() {
    let dir = tempfile::tempdir().unwrap();
    let so = dir.path().join("so.json");
    let own_name = so.to_str().unwrap().to_string();
    let line = "run --alg hmac-sha256 --sizes 64,128,256 --sessions 1 --cores 0 --duration 30ms --repeat 1 --max-repeat 1 --target-ci 0 --no-harness -q";
    for name in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", &own_name] {
        let file = std::fs::File::create(&so).unwrap();
        let out = to_file(&format!("{line} --json {name}"), file);
        let doc = common::results_at(&so);
        common::ran(&out, &doc);
        assert_eq!(doc["results"].as_array().unwrap().len(), 3, "{name}");
        assert_eq!(doc["partial"], false, "{name}");
    }
    // --csv by the same rule: one document, its three rows, no per-thread sibling of /dev/stdout.
    let csv = dir.path().join("so.csv");
    let out = to_file(
        &format!("{line} --csv /dev/stdout"),
        std::fs::File::create(&csv).unwrap(),
    );
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 4, "a header and three rows: {text}");
}

/// Issue 47, C5: with `>>`, `export … -o /dev/stdout` replaced the file and its earlier contents were
/// gone. Every command that writes an output now writes through the shell's descriptor, which
/// appends: the earlier bytes stay, the document follows them, and the file is the same inode.
#[test]
fn appending_to_standard_output_keeps_the_earlier_bytes_for_every_command() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.json");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/results-ecda402.json"),
        &results,
    )
    .unwrap();
    let r = results.to_str().unwrap();
    let run = "run --alg hmac-sha256 --sizes 64,128 --sessions 1 --cores 0 --duration 30ms --repeat 1 --max-repeat 1 --target-ci 0 --no-harness -q";
    let lines = [
        format!("export --format lava {r} -o /dev/stdout"),
        format!("diff {r} {r} --json /dev/fd/1"),
        format!("report {r} -o /proc/self/fd/1"),
        "model --models imix --json /dev/stdout".to_string(),
        "selftest --alg hmac-sha256 --json /dev/stdout".to_string(),
        "list --json /dev/stdout".to_string(),
        format!("{run} --json /dev/stdout"),
        format!("{run} --csv /dev/fd/1"),
        "net --alg siphash-2-4 --sizes 128 --trial 0.1s --resolution 25% --no-null --json /dev/stdout"
            .to_string(),
    ];
    for line in &lines {
        let log = dir.path().join("log");
        std::fs::write(&log, "previous\n").unwrap();
        let inode = std::fs::metadata(&log).unwrap().ino();
        let append = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let out = to_file(line, append);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{line}: {err}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.starts_with("previous\n"), "{line}: {text:.200}");
        assert!(text.len() > "previous\n".len() + 10, "{line}: {text:.200}");
        assert_eq!(std::fs::metadata(&log).unwrap().ino(), inode, "{line}");
    }
}
