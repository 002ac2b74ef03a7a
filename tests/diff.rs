//! `macbench diff`: ratios of absolute and apparent cycles/byte per function and size, significant when
//! the two runs' 95 % intervals (or, in older files, [min, max] over repeats) do not overlap. Constructed results.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::metrics::{
    Headline, ABSOLUTE_CYCLES_PER_BYTE as ABSOLUTE, APPARENT_CYCLES_PER_BYTE as APPARENT,
};
use macbench::report::{diff, read};
use predicates::prelude::*;
use serde_json::{json, Value};

/// `row`'s change in `metric`, which it has.
fn change<'r>(row: &'r diff::DiffRow, metric: &Headline) -> &'r diff::Change {
    row.change(metric).expect("a change")
}

/// A result with median `v` and repeats spread `v·(1 ± half_width)`, apparent = v / 2.
fn result(function: &str, size: u64, v: f64, half_width: f64, repeats: usize) -> Value {
    let p: Vec<&str> = function.split('/').collect();
    let spread = |m: f64| json!({"min": m * (1.0 - half_width), "max": m * (1.0 + half_width)});
    json!({
        "algorithm": p[0], "backend": p[1], "accel": p[2], "size": size, "sessions": 2, "cores": "0-1",
        "repeats": repeats,
        "metrics": {"absolute_cycles_per_byte": v, "apparent_cycles_per_byte": v / 2.0, "bytes_per_second": 1e9},
        "spread": {"absolute_cycles_per_byte": spread(v), "apparent_cycles_per_byte": spread(v / 2.0)},
        "threads": [], "warnings": [], "failed": false
    })
}

fn doc(results: Vec<Value>) -> Value {
    json!({"schema_version": 1, "tool": "macbench", "results": results})
}

fn old_new() -> (Value, Value) {
    let old = doc(vec![
        result("hmac-sha256/openssl/hw", 64, 10.0, 0.01, 3),
        result("hmac-sha256/openssl/hw", 1024, 2.0, 0.05, 3),
        result("cmac-aes128/openssl/hw", 64, 8.0, 0.01, 3),
        result("poly1305/openssl/hw", 64, 3.0, 0.01, 3),
    ]);
    let new = doc(vec![
        // 20 % fewer cycles, tight spreads: significant, faster.
        result("hmac-sha256/openssl/hw", 64, 8.0, 0.01, 3),
        // 2 % more, wide spreads overlapping: within noise.
        result("hmac-sha256/openssl/hw", 1024, 2.04, 0.05, 3),
        // 50 % more: significant, slower.
        result("cmac-aes128/openssl/hw", 64, 12.0, 0.01, 3),
        result("siphash-2-4/openssl/hw", 64, 5.0, 0.01, 3),
    ]);
    (old, new)
}

#[test]
fn ratios_and_significance_from_the_spreads() {
    let (old, new) = old_new();
    let old = read::parse("old", &old.to_string()).unwrap();
    let new = read::parse("new", &new.to_string()).unwrap();
    let rows = diff::diff(&old, &new);
    assert_eq!(rows.len(), 5);
    let faster = &rows[0];
    let a = change(faster, &ABSOLUTE);
    assert!((a.ratio - 0.8).abs() < 1e-12);
    assert_eq!(a.significant, Some(true));
    assert!((change(faster, &APPARENT).ratio - 0.8).abs() < 1e-12);
    assert_eq!(faster.verdict(), "faster");
    let noise = &rows[1];
    assert!((change(noise, &ABSOLUTE).ratio - 1.02).abs() < 1e-12);
    assert_eq!(change(noise, &ABSOLUTE).significant, Some(false));
    assert_eq!(noise.verdict(), "within noise");
    assert_eq!(rows[2].verdict(), "slower");
    assert!((change(&rows[2], &ABSOLUTE).ratio - 1.5).abs() < 1e-12);
    assert_eq!(
        (rows[3].function.as_str(), rows[3].note.as_str()),
        ("poly1305/openssl/hw", "only in OLD")
    );
    assert_eq!(
        (rows[4].function.as_str(), rows[4].note.as_str()),
        ("siphash-2-4/openssl/hw", "only in NEW")
    );
}

#[test]
fn touching_intervals_overlap_and_single_repeats_are_flagged() {
    let old = doc(vec![result("hmac-sha1/openssl/hw", 64, 10.0, 0.0, 1)]);
    // [10, 10] against [9.9, 10.1]: overlap.
    let new = doc(vec![result("hmac-sha1/openssl/hw", 64, 10.0, 0.01, 3)]);
    let rows = diff::diff(
        &read::parse("o", &old.to_string()).unwrap(),
        &read::parse("n", &new.to_string()).unwrap(),
    );
    assert_eq!(change(&rows[0], &ABSOLUTE).significant, Some(false));
    assert!(rows[0].note.contains("single repeat"));
}

#[test]
fn cli_prints_a_row_per_function_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = old_new();
    let (o, n) = (dir.path().join("old.json"), dir.path().join("new.json"));
    std::fs::write(&o, old.to_string()).unwrap();
    std::fs::write(&n, new.to_string()).unwrap();
    let out = common::stdout_of(common::macbench().args([
        "diff",
        o.to_str().unwrap(),
        n.to_str().unwrap(),
    ]));
    let line = |f: &str, s: &str| {
        out.lines()
            .find(|l| l.starts_with(f) && l.split_whitespace().nth(1) == Some(s))
            .unwrap_or_else(|| panic!("no row {f} {s} in\n{out}"))
            .to_string()
    };
    let faster = line("hmac-sha256/openssl/hw", "64");
    assert!(
        faster.contains("10.00 → 8.00") && faster.contains("0.800") && faster.contains("faster"),
        "{faster}"
    );
    assert!(line("hmac-sha256/openssl/hw", "1024").contains("within noise"));
    assert!(line("cmac-aes128/openssl/hw", "64").contains("slower"));
    assert!(line("poly1305/openssl/hw", "64").contains("only in OLD"));
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, doc(vec![]).to_string()).unwrap();
    let foreign = dir.path().join("foreign.json");
    std::fs::write(&foreign, r#"{"tool": "criterion", "schema_version": 1}"#).unwrap();
    for bad in [foreign.clone(), dir.path().join("missing.json")] {
        let a = common::macbench()
            .args(["diff", good.to_str().unwrap(), bad.to_str().unwrap()])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(bad.to_str().unwrap()));
        assert_eq!(
            String::from_utf8_lossy(&a.get_output().stderr)
                .lines()
                .count(),
            1
        );
    }
}

/// Where both runs carry 95 % intervals, significance follows them, not the repeats' min–max: here the
/// repeats barely spread (their ranges do not overlap) but each run's interval is ±10 %, so a 5 % change
/// is within noise; and a single repeat with an interval is no longer "no noise estimate".
#[test]
fn confidence_intervals_decide_significance_when_present() {
    let with_ci = |v: f64, half: f64, repeats: usize| {
        let mut r = result("hmac-sha256/openssl/hw", 64, v, 0.001, repeats);
        let ci = |m: f64| json!({"low": m * (1.0 - half), "high": m * (1.0 + half)});
        r["ci95"] =
            json!({"absolute_cycles_per_byte": ci(v), "apparent_cycles_per_byte": ci(v / 2.0)});
        r
    };
    let old = read::parse("old", &doc(vec![with_ci(10.0, 0.10, 1)]).to_string()).unwrap();
    let new = read::parse("new", &doc(vec![with_ci(10.5, 0.10, 1)]).to_string()).unwrap();
    let rows = diff::diff(&old, &new);
    assert_eq!(change(&rows[0], &ABSOLUTE).significant, Some(false));
    assert_eq!(change(&rows[0], &APPARENT).significant, Some(false));
    assert!(!rows[0].note.contains("single repeat"), "{}", rows[0].note);
    // Tight intervals: the same 5 % is significant.
    let old = read::parse("old", &doc(vec![with_ci(10.0, 0.01, 3)]).to_string()).unwrap();
    let new = read::parse("new", &doc(vec![with_ci(10.5, 0.01, 3)]).to_string()).unwrap();
    assert_eq!(
        change(&diff::diff(&old, &new)[0], &ABSOLUTE).significant,
        Some(true)
    );
}

/// A result flagged over-utilised, noisy or not-steady is judged by its interval like any other: a
/// flag says how far to trust the cell, it hides nothing (issue 33: a result made 3 × slower passed
/// the gate when flagged). The note names the flag.
#[test]
fn flagged_results_are_judged_by_their_intervals() {
    let (old, new) = old_new();
    let mut new = new;
    new["results"][0]["warnings"] =
        json!([{"code": "over-utilised", "message": "sessions got 60 %", "fatal": false}]);
    let old = read::parse("old", &old.to_string()).unwrap();
    let new = read::parse("new", &new.to_string()).unwrap();
    let rows = diff::diff(&old, &new);
    // Row 0 is "faster" (20 % fewer cycles, tight spreads), flag or not.
    assert_eq!(change(&rows[0], &ABSOLUTE).significant, Some(true));
    assert_eq!(rows[0].verdict(), "faster");
    assert!(
        rows[0]
            .note
            .contains("NEW flagged over-utilised: judged by its interval"),
        "{}",
        rows[0].note
    );
    // Unflagged rows keep their verdicts.
    assert_eq!(rows[2].verdict(), "slower");
}
