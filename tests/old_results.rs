//! Results files written by an earlier release still load and report as they did.
//!
//! `tests/fixtures/results-ecda402.json` was written by macbench at commit ecda402 (the release before
//! the results schema moved into its own module): `run --alg hmac-sha256,cmac-aes128 --sizes 64
//! --dispatch single,burst:4 --sessions 1 --repeat 2`. `results-ecda402.diff.txt` is what that release's
//! `macbench diff FILE FILE` printed for it. Today's build must read the file, tell its two dispatch
//! modes apart everywhere, and print the same `diff` table (followed by the summary line added since).

#![allow(clippy::unwrap_used)]

mod common;

const FIXTURE: &str = "tests/fixtures/results-ecda402.json";

#[test]
fn a_file_from_the_previous_release_loads_with_its_dispatch_modes_apart() {
    let doc = macbench::report::read::read(std::path::Path::new(FIXTURE))
        .unwrap()
        .doc;
    assert_eq!(doc.results.len(), 4);
    let labels: Vec<String> = doc.results.iter().map(|r| r.label()).collect();
    assert_eq!(
        labels,
        [
            "hmac-sha256/openssl/hw",
            "hmac-sha256/openssl/hw burst:4",
            "cmac-aes128/openssl/hw",
            "cmac-aes128/openssl/hw burst:4"
        ]
    );
    let mut keys: Vec<String> = doc.results.iter().map(|r| r.key().to_string()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 4, "{keys:?}");
    assert!(doc.results.iter().all(|r| r.scenario.tag_len.is_none()));
    // Files of that release recorded no pre-flight: it reads as absent, not as a zero cost.
    assert!(doc
        .results
        .iter()
        .flat_map(|r| &r.raw)
        .all(|raw| raw.preflight.is_none()));
}

#[test]
fn diff_of_a_previous_release_file_prints_what_that_release_printed() {
    let out = common::exits_0(common::macbench().args(["diff", FIXTURE, FIXTURE]));
    let want = std::fs::read_to_string("tests/fixtures/results-ecda402.diff.txt").unwrap();
    let got = String::from_utf8(out.stdout).unwrap();
    // The table is the old release's to the byte; since then a line on flags and the gate, and a
    // summary line, follow it.
    let (table, added) = got.split_at(want.len().min(got.len()));
    assert_eq!(table, want);
    assert_eq!(
        added,
        "Flags (noisy, not-steady, over-utilised) say how far to trust a cell and hide nothing. --fail-on-regression tests each change at 5 % / (the number of changes compared), so an identical pair of runs fails it at most 5 % of the time.\nsummary: 0 faster, 0 slower beyond noise, 4 within noise\n"
    );
}

#[test]
fn report_and_csv_name_the_dispatch_modes_of_a_previous_release_file() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    common::exits_0(
        common::macbench()
            .args(["report", FIXTURE, "-o"])
            .arg(&html),
    );
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        text.contains("hmac-sha256/openssl/hw burst:4"),
        "the HTML table names the mode"
    );
    // The per-thread figures' scenario names the mode too.
    common::exits_0(
        common::macbench()
            .args([
                "report",
                FIXTURE,
                "--scenario",
                "cmac-aes128/openssl/hw@64/burst:4",
                "-o",
            ])
            .arg(dir.path().join("s.html")),
    );
    let doc = macbench::report::read::read(std::path::Path::new(FIXTURE))
        .unwrap()
        .doc;
    let csv = macbench::report::csv_export::ScenarioCsv;
    let bytes = macbench::report::Exporter::serialize(&csv, &doc).unwrap();
    let mut reader = csv::Reader::from_reader(&bytes[..]);
    let header = reader.headers().unwrap().clone();
    let dispatch = header.iter().position(|h| h == "dispatch").unwrap();
    let modes: Vec<String> = reader
        .records()
        .map(|r| r.unwrap()[dispatch].to_string())
        .collect();
    assert_eq!(modes, ["single", "burst:4", "single", "burst:4"]);
}
