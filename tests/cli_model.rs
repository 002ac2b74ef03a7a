//! `macbench model`: the analytic table, the fit on constructed results, --paper, and bad input.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use macbench::mac;
use serde_json::json;

/// A results document whose HMAC-SHA256 costs exactly 500 + 100·Nblk reference cycles per message,
/// with an `imix` entry measured at exactly the model's prediction + 10 %.
fn constructed_results() -> serde_json::Value {
    let rule = mac::algorithm("hmac-sha256").unwrap().block_rule;
    let mut results: Vec<serde_json::Value> = [16u64, 64, 256, 1024, 4096, 16384]
        .iter()
        .map(|&size| {
            json!({"algorithm": "hmac-sha256", "backend": "openssl", "accel": "hw", "sessions": 1,
                   "size": size, "failed": false,
                   "metrics": {"absolute_cycles_per_message": 500.0 + 100.0 * rule.blocks(size) as f64}})
        })
        .collect();
    let imix = macbench::traffic::builtin("imix").unwrap();
    let predicted = 500.0 + 100.0 * imix.gamma(rule);
    results.push(
        json!({"algorithm": "hmac-sha256", "backend": "openssl", "accel": "hw", "sessions": 1,
                        "size": "imix", "failed": false,
                        "metrics": {"absolute_cycles_per_message": predicted / 1.1}}),
    );
    json!({"tool": "macbench", "schema_version": 1, "clock": {"reference_hz": 2.0e9}, "results": results})
}

#[test]
fn fit_recovers_the_constructed_cost_and_compares_with_the_measured_model() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.json");
    std::fs::write(&results, constructed_results().to_string()).unwrap();
    let out_json = dir.path().join("model.json");
    let out_csv = dir.path().join("model.csv");
    common::exits_0(
        macbench()
            .args(
                "model --models imix,uniform --alg hmac-sha256 --reject-size 64 --results"
                    .split_whitespace(),
            )
            .arg(&results)
            .arg("--json")
            .arg(&out_json)
            .arg("--csv")
            .arg(&out_csv),
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out_json).unwrap()).unwrap();
    let fit = &v["fits"][0];
    assert!(
        (fit["fixed_cycles"].as_f64().unwrap() - 500.0).abs() < 1e-6,
        "{fit}"
    );
    assert!((fit["cycles_per_block"].as_f64().unwrap() - 100.0).abs() < 1e-6);
    // 64 bytes = 2 SHA-256 blocks: 700 cycles at 2 GHz.
    assert!((fit["rejection_packets_per_second"].as_f64().unwrap() - 2.0e9 / 700.0).abs() < 1e-3);
    let imix = v["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["model"] == "imix")
        .unwrap();
    assert!(
        (imix["predicted_cycles_per_packet"].as_f64().unwrap() - (500.0 + 100.0 * 5.917)).abs()
            < 0.1
    );
    assert!((imix["relative_difference"].as_f64().unwrap() - 0.1).abs() < 1e-9);
    let uniform = v["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["model"] == "uniform")
        .unwrap();
    assert!(
        uniform["measured_cycles_per_packet"].is_null(),
        "not measured, not invented"
    );
    let csv = std::fs::read_to_string(&out_csv).unwrap();
    assert!(csv
        .starts_with("model,algorithm,backend,accel,mean_bytes,gamma,predicted_cycles_per_packet"));
}

#[test]
fn analytic_table_shows_the_reference_values() {
    let out = macbench()
        .args(["model", "--alg", "hmac-sha256,cmac-aes128"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for needle in [
        "12.665", "48.593", "10.000", "37.667", "5.917", "21.583", "431.78",
    ] {
        assert!(text.contains(needle), "{needle} missing in\n{text}");
    }
}

#[test]
fn paper_mode_explains_the_errata() {
    let out = macbench().args(["model", "--paper"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in ["6.34", "12.665", "24.31", "48.593", "27.51", "27.384"] {
        assert!(text.contains(needle), "{needle} missing");
    }
}

#[test]
fn bad_results_files_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("empty.json", "", "the file is empty"),
        (
            "other.json",
            "{\"hello\": 1}",
            "not a macbench results file",
        ),
        (
            "newer.json",
            "{\"tool\":\"macbench\",\"schema_version\":99,\"results\":[]}",
            "newer than this macbench",
        ),
    ];
    for (name, content, needle) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let out = macbench()
            .args(["model", "--results"])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(needle) && stderr.contains(name),
            "{name}: {stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1);
    }
    let out = macbench()
        .args(["model", "--models", "nosuchmodel"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("imix"),
        "lists valid names"
    );
}

#[test]
fn run_accepts_a_size_model_and_reports_it_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let v = common::fake_run_to(
        "run --alg null --sizes imix,64 --sessions 1 --duration 200ms --repeat 1 --target-ci 0 --no-harness",
        &json,
    );
    let field = |key: &str| -> Vec<&serde_json::Value> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r.get(key)
                    .unwrap_or_else(|| panic!("results[].{key} missing"))
            })
            .collect()
    };
    // `size` is numeric or null, never a name: the model's name is in `size_model`.
    assert_eq!(field("size"), [&json!(null), &json!(64)]);
    assert_eq!(field("size_model"), [&json!("imix"), &json!(null)]);
    assert!((v["results"][0]["mean_message_bytes"].as_f64().unwrap() - 340.333).abs() < 0.01);
    assert_eq!(v["results"][1]["mean_message_bytes"], 64.0);

    // What a script does with the file (a pandas user's `df["size"]` must be numeric): every size is
    // a number or null, a null one comes with its model's name and mean, and fixed sizes sort as numbers.
    let script = r#"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
for r in rows:
    assert r["size"] is None or (isinstance(r["size"], int) and not isinstance(r["size"], bool)), r["size"]
    assert (r["size"] is None) == isinstance(r["size_model"], str), (r["size"], r["size_model"])
    assert isinstance(r["mean_message_bytes"], (int, float)), r["mean_message_bytes"]
fixed = sorted(r["size"] for r in rows if r["size"] is not None)
models = [(r["size_model"], round(r["mean_message_bytes"], 1)) for r in rows if r["size"] is None]
print(fixed, models)
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&json)
        .output()
        .expect("python3 is needed for this check of the file as a script reads it");
    common::exited_0(&out);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        "[64] [('imix', 340.3)]"
    );

    // `report` and `diff` read it back: the model's row is named by its model.
    let html = dir.path().join("r.html");
    common::exits_0(macbench().args([
        "report",
        json.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<td data-size-model=\"imix\" data-mean=\"340.3"),
        "the model named in the report's results table"
    );
    let out =
        common::exits_0(macbench().args(["diff", json.to_str().unwrap(), json.to_str().unwrap()]));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("null/null/hw") && l.contains(" imix ")),
        "{table}"
    );
}

/// A results file written before `size_model` existed named the model in `size`; `report` and `diff`
/// still read it, `diff` pairs it with the same model in a new-form file, and `model --results` finds
/// the measured model in the new form as in the old.
#[test]
fn older_results_with_the_model_name_in_size_still_load() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.json");
    let doc = constructed_results();
    assert_eq!(doc["results"][6]["size"], "imix", "the older form");
    std::fs::write(&old, doc.to_string()).unwrap();
    let mut new_form = doc.clone();
    new_form["results"][6]["size"] = json!(null);
    new_form["results"][6]["size_model"] = json!("imix");
    let new = dir.path().join("new.json");
    std::fs::write(&new, new_form.to_string()).unwrap();

    let out =
        common::exits_0(macbench().args(["diff", old.to_str().unwrap(), new.to_str().unwrap()]));
    let table = String::from_utf8(out.stdout).unwrap();
    let imix: Vec<&str> = table.lines().filter(|l| l.contains(" imix ")).collect();
    assert_eq!(imix.len(), 1, "{table}");
    assert!(
        !imix[0].contains("only in"),
        "paired across the two forms: {table}"
    );

    // `model --results` finds the measured model in either form (the fit test above reads the older).
    let out = common::exits_0(
        macbench()
            .args("model --sizes imix --alg hmac-sha256 --results".split_whitespace())
            .arg(&new)
            .args(["--json", "-"]),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let imix = &v["predictions"][0];
    assert_eq!(imix["model"], "imix");
    assert!((imix["relative_difference"].as_f64().unwrap() - 0.1).abs() < 1e-9);

    let html = dir.path().join("r.html");
    common::exits_0(macbench().args([
        "report",
        old.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("<td data-size-model=\"imix\""));
}

/// `--measure`'s flags are checked before anything is printed: a refused command prints no table.
#[test]
fn bad_measure_flags_are_refused_before_any_output() {
    let out = common::macbench()
        .args("model --measure --cores 99".split_whitespace())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("CPU 99 is not online"));
}

/// `model --sizes 64` takes `run --sizes`'s fixed sizes, each a model of one size (it was refused as
/// an unknown traffic model).
#[test]
fn fixed_sizes_are_models_of_one_size() {
    let out = macbench()
        .args("model --sizes 64,imix --alg hmac-sha256 --json -".split_whitespace())
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let rows = doc["models"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["model"], "fixed-64");
    assert_eq!(rows[0]["mean_bytes"], 64.0);
    // HMAC-SHA-256: 64 bytes and the 9 bytes of padding and length take two blocks.
    assert_eq!(rows[0]["gamma"], 2.0);
    assert_eq!(rows[1]["model"], "imix");
}

/// A flag `model` would ignore is refused in one line naming what it goes with (they were ignored).
#[test]
fn flags_model_would_ignore_are_refused() {
    for (args, needle) in [
        (
            &["model", "--backend", "openssl"][..],
            "--backend is used only with --measure",
        ),
        (
            &["model", "--duration", "1s"][..],
            "--duration is used only with --measure",
        ),
        (
            &["model", "--cores", "0"][..],
            "--cores is used only with --measure",
        ),
        (
            &["model", "--reject-size", "100"][..],
            "--reject-size is used only with --results or --measure",
        ),
        (
            &["model", "--paper", "--alg", "hmac-sha256"][..],
            "'--paper' cannot be used with '--alg <ALG>'",
        ),
        (
            &["model", "--measure", "--reject-size", "-4"][..],
            "--reject-size: \"-4\" is negative",
        ),
    ] {
        common::one_line_error(&macbench().args(args).output().unwrap(), 2, needle);
    }
}

/// Issue 47 (N10, N6): `model --results` on results with no size sweep printed "no function … to
/// fit" and exited 0; `--reject-size 0` sized the rejection capacity of a packet with nothing in it.
/// Now nothing fitted is exit 1 in one line (the Γ table still printed and written), and a reject
/// size of 0 is refused, exit 2.
#[test]
fn model_with_nothing_fitted_fails_and_reject_size_starts_at_1() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("model.json");
    let out = macbench()
        .args([
            "model",
            "--results",
            "tests/fixtures/results-ecda402.json",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("macbench: no function in the results has a size sweep to fit")
            && last.ends_with("nothing fitted"),
        "{err}"
    );
    assert_eq!(
        err.matches("no function in the results").count(),
        1,
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("imix"));
    assert!(json.exists(), "the Γ table is written");
    common::one_line_error(
        &macbench()
            .args(["model", "--measure", "--reject-size", "0"])
            .output()
            .unwrap(),
        2,
        "--reject-size 0: a forged packet carries at least 1 byte",
    );
}

/// Issue 47 (M40): `model --json` wrote no `tool`, so `validate` called macbench's own file "not a
/// macbench results file". It now says `"tool": "macbench", "kind": "model"`, and every reader names
/// it for what it is.
#[test]
fn a_model_report_says_it_is_macbenchs_and_readers_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("model.json");
    common::exits_0(
        macbench()
            .args(["model", "--sizes", "64", "--json"])
            .arg(&json),
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        (&doc["tool"], &doc["kind"]),
        (&json!("macbench"), &json!("model"))
    );
    let named = "a `macbench model` report (Γ, fits and predictions), not results";
    let out = macbench().arg("validate").arg(&json).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(named), "{stdout}");
    let out = macbench()
        .args(["export", "--format", "bmf"])
        .arg(&json)
        .output()
        .unwrap();
    common::one_line_error(&out, 2, named);
}
