//! `run --baseline ROW`: the paired arithmetic on synthetic numbers with known answers, the order a
//! round runs a group's rows in, which row is the baseline and when `ROW` is refused, and the ratio
//! end to end on the fake engine (JSON, CSV, report, validate).

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::{fake_run, usage_error_line};
use macbench::engine::{RawRun, Sample, ThreadCounters};
use macbench::metrics;
use macbench::results::baseline::{self, BaselineError, BaselineRow};
use macbench::results::{Document, ScenarioKey, SizeLabel};
use macbench::stats::{self, Interval};
use macbench::sweep;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-12)
}

// ---- The paired arithmetic (stats), on numbers with known answers.

#[test]
fn a_slow_down_common_to_both_sides_of_a_round_cancels_exactly() {
    // Each round's host state multiplies both rows alike; the row costs 1.5 × the baseline.
    let host: [f64; 5] = [1.0, 1.7, 0.8, 1.3, 1.05];
    let d: Vec<f64> = host.iter().map(|s| (1.5 * s / s).ln()).collect();
    let p = stats::paired_log_ratio(&d).unwrap();
    assert!(close(p.ratio, 1.5, 1e-12), "{p:?}");
    let ci = p.ci95.unwrap();
    assert!(
        close(ci.low, 1.5, 1e-12) && close(ci.high, 1.5, 1e-12),
        "{ci:?}"
    );
    assert_eq!(p.pairs, 5);
    // The same figures unpaired: each cell's spread is the host's, and the ratio's interval wide.
    let a: Vec<f64> = host.iter().map(|s| 1.5 * s).collect();
    let spread = |v: &[f64]| {
        let m = stats::mean(v).unwrap();
        let half = stats::t95(v.len() - 1) * (stats::variance(v).unwrap() / v.len() as f64).sqrt();
        (
            m,
            Interval {
                low: m - half,
                high: m + half,
            },
        )
    };
    let ((ma, ca), (mb, cb)) = (spread(&a), spread(&host));
    let unpaired = stats::unpaired_ratio(ma, ca, mb, cb).unwrap();
    assert!(unpaired.low < 1.3 && unpaired.high > 1.7, "{unpaired:?}");
}

#[test]
fn a_known_ratio_with_known_noise_gives_the_textbook_t_interval() {
    // d = ln 2 + (−0.1, 0, 0.1): mean ln 2, s_d = 0.1, r = 3, t(0.975, 2) = 4.303.
    let d = [2f64.ln() - 0.1, 2f64.ln(), 2f64.ln() + 0.1];
    let p = stats::paired_log_ratio(&d).unwrap();
    let half = 4.303 * 0.1 / 3f64.sqrt();
    assert!(close(p.ratio, 2.0, 1e-12), "{p:?}");
    let ci = p.ci95.unwrap();
    assert!(close(ci.low, 2.0 * (-half).exp(), 1e-4), "{ci:?}");
    assert!(close(ci.high, 2.0 * half.exp(), 1e-4), "{ci:?}");
    // Symmetric on the log scale, not on the ratio's.
    assert!(close((ci.high / 2.0).ln(), -(ci.low / 2.0).ln(), 1e-9));
}

#[test]
fn one_round_gives_a_ratio_without_an_interval_and_none_gives_nothing() {
    let p = stats::paired_log_ratio(&[0.5f64.ln()]).unwrap();
    assert!(close(p.ratio, 0.5, 1e-12));
    assert_eq!((p.ci95, p.pairs), (None, 1));
    assert_eq!(stats::paired_log_ratio(&[]), None);
    // A round that did not measure is left out, not counted.
    let p = stats::paired_log_ratio(&[f64::NAN, 0.0, 0.0]).unwrap();
    assert_eq!(p.pairs, 2);
}

#[test]
fn the_unpaired_interval_combines_the_cells_intervals_on_the_log_scale() {
    // Each cell ±0.1 in logs: se = 0.2 / (2·1.96) each, so the ratio's half-width is 0.1·√2.
    let cell = |m: f64| Interval {
        low: m * (-0.1f64).exp(),
        high: m * 0.1f64.exp(),
    };
    let ci = stats::unpaired_ratio(3.0, cell(3.0), 1.5, cell(1.5)).unwrap();
    let half = 0.1 * 2f64.sqrt();
    assert!(close(ci.low, 2.0 * (-half).exp(), 1e-9), "{ci:?}");
    assert!(close(ci.high, 2.0 * half.exp(), 1e-9), "{ci:?}");
    // An interval reaching zero or below has no log: no unpaired interval.
    let bad = Interval {
        low: -0.1,
        high: 3.0,
    };
    assert_eq!(stats::unpaired_ratio(3.0, bad, 1.5, cell(1.5)), None);
}

// ---- One round's log ratio from raw counters (metrics), per core.

/// A run whose sessions are pinned to `cores` (session i on the i-th entry) and spend `cpu_ns` on
/// `bytes` each in the window.
fn raw(sessions: &[(Vec<usize>, u64, u64)]) -> RawRun {
    let threads = sessions
        .iter()
        .enumerate()
        .map(|(i, (allowed, cpu_ns, bytes))| ThreadCounters {
            session: i,
            allowed_cpus: allowed.clone(),
            window_start: Sample::default(),
            window_end: Sample {
                cpu_ns: *cpu_ns,
                bytes: *bytes,
                messages: bytes / 64,
                ..Sample::default()
            },
            ..ThreadCounters::default()
        })
        .collect();
    RawRun {
        window_wall_ns: 1_000_000,
        threads,
        ..RawRun::default()
    }
}

#[test]
fn a_round_pairs_each_core_with_itself_and_averages_the_cores_logs() {
    // Core 0 is slowed 1.4 × in this round, core 1 not; the row costs 1.25 × the baseline.
    let base = raw(&[(vec![0], 1_400, 1_000), (vec![1], 1_000, 1_000)]);
    let row = raw(&[(vec![0], 1_750, 1_000), (vec![1], 1_250, 1_000)]);
    let d = metrics::paired_log_ratio(&row, &base).unwrap();
    assert!(close(d, 1.25f64.ln(), 1e-12), "{d}");
    // Two sessions on each core: their sums per core, the same answer.
    let base2 = raw(&[
        (vec![0], 700, 500),
        (vec![1], 500, 500),
        (vec![0], 700, 500),
        (vec![1], 500, 500),
    ]);
    let d2 = metrics::paired_log_ratio(&row, &base2).unwrap();
    assert!(close(d2, 1.25f64.ln(), 1e-12), "{d2}");
    // Unequal shifts per core: the mean of the cores' log ratios, ln(1.2·1.5)/2.
    let row3 = raw(&[(vec![0], 1_680, 1_000), (vec![1], 1_500, 1_000)]);
    let d3 = metrics::paired_log_ratio(&row3, &base).unwrap();
    assert!(close(d3, (1.2f64 * 1.5).ln() / 2.0, 1e-12), "{d3}");
    // A core only one run used is left out; no shared core, no value.
    let only0 = raw(&[(vec![0], 2_800, 1_000)]);
    assert!(close(
        metrics::paired_log_ratio(&only0, &base).unwrap(),
        2f64.ln(),
        1e-12
    ));
    let only1 = raw(&[(vec![1], 2_000, 1_000)]);
    assert_eq!(metrics::paired_log_ratio(&only0, &only1), None);
}

#[test]
fn floating_sessions_form_one_group_and_empty_messages_count_per_message() {
    let both = vec![0, 1];
    let base = raw(&[(both.clone(), 1_000, 1_000), (both.clone(), 1_000, 1_000)]);
    let row = raw(&[(both.clone(), 3_000, 1_000), (both.clone(), 1_000, 1_000)]);
    let d = metrics::paired_log_ratio(&row, &base).unwrap();
    assert!(close(d, 2f64.ln(), 1e-12), "{d}");
    // 0-byte messages: cost per message (64 messages here against 32).
    let mut empty_base = raw(&[(vec![0], 1_000, 0)]);
    empty_base.threads[0].window_end.messages = 64;
    let mut empty_row = raw(&[(vec![0], 1_000, 0)]);
    empty_row.threads[0].window_end.messages = 32;
    let d = metrics::paired_log_ratio(&empty_row, &empty_base).unwrap();
    assert!(close(d, 2f64.ln(), 1e-12), "{d}");
}

// ---- The order of a round (sweep).

#[test]
fn a_groups_rows_run_back_to_back_and_turn_round_each_round() {
    // Span-relative pair groups: rows 0, 2, 5 are one group, 1 and 4 another, 3 alone.
    let groups = [0, 1, 0, 2, 1, 0];
    assert_eq!(sweep::round_order(&groups, 0), [0, 2, 5, 1, 4, 3]);
    assert_eq!(sweep::round_order(&groups, 1), [5, 2, 0, 4, 1, 3]);
    assert_eq!(sweep::round_order(&groups, 2), [0, 2, 5, 1, 4, 3]);
    for round in 0..4 {
        let order = sweep::round_order(&groups, round);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2, 3, 4, 5], "a permutation");
        // Each group's rows adjacent: once a group is left it never comes back.
        let seq: Vec<usize> = order.iter().map(|&i| groups[i]).collect();
        for (k, g) in seq.iter().enumerate() {
            if k > 0 && seq[k - 1] != *g {
                assert!(!seq[..k].contains(g), "group {g} split in {seq:?}");
            }
        }
    }
    // Without --baseline every scenario is a group of its own: scenario order, every round.
    assert_eq!(sweep::round_order(&[0, 1, 2, 3], 1), [0, 1, 2, 3]);
}

#[test]
fn a_span_takes_every_group_it_touches_whole() {
    // Groups 0 and 1 have members at 3 and 4; taking them brings group 2's last member (5).
    let groups = [0, 1, 2, 0, 1, 2, 3];
    assert_eq!(sweep::whole_groups_end(&groups, 0, 2), 6);
    assert_eq!(sweep::whole_groups_end(&groups, 6, 7), 7);
    assert_eq!(sweep::whole_groups_end(&[0, 1, 2], 0, 1), 1);
}

// ---- Which row is the baseline, and when ROW is refused (results::baseline).

fn key(alg: &str, backend: &str, accel: &str, size: u32, dispatch: &str) -> ScenarioKey {
    ScenarioKey {
        function: format!("{alg}/{backend}/{accel}").parse().unwrap(),
        size: SizeLabel::Bytes(size),
        sessions: 2,
        dispatch: dispatch.parse().unwrap(),
        tag_len: None,
    }
}

#[test]
fn row_names_a_backend_an_acceleration_a_dispatch_mode_or_a_function() {
    let k = key("hmac-sha256", "ipsecmb", "avx2", 64, "burst:8");
    for row in [
        "ipsecmb",
        "avx2",
        "burst:8",
        "ipsecmb/avx2",
        "hmac-sha256/ipsecmb/avx2 burst:8",
    ] {
        assert!(BaselineRow::new(row).unwrap().matches(&k), "{row}");
    }
    for row in [
        "openssl",
        "hw",
        "single",
        "openssl/avx2",
        "hmac-sha256/ipsecmb/avx2",
    ] {
        assert!(!BaselineRow::new(row).unwrap().matches(&k), "{row}");
    }
    let single = key("hmac-sha256", "openssl", "hw", 64, "single");
    assert!(BaselineRow::new("hmac-sha256/openssl/hw")
        .unwrap()
        .matches(&single));
    assert_eq!(BaselineRow::new(" "), Err(BaselineError::Empty));
}

#[test]
fn row_must_name_a_row_and_at_most_one_in_each_group() {
    let keys = [
        key("hmac-sha256", "openssl", "hw", 64, "single"),
        key("hmac-sha256", "openssl", "sw", 64, "single"),
        key("hmac-sha256", "gcrypt", "hw", 64, "single"),
    ];
    let none = BaselineRow::new("wolfssl")
        .unwrap()
        .check(&keys)
        .unwrap_err();
    let text = none.to_string();
    assert!(matches!(none, BaselineError::NoRow { .. }), "{text}");
    assert!(
        text.contains("names no row") && text.contains("openssl, gcrypt, hw, sw, single"),
        "{text}"
    );
    let two = BaselineRow::new("openssl")
        .unwrap()
        .check(&keys)
        .unwrap_err();
    let text = two.to_string();
    assert!(
        text.contains("matches 2 rows of hmac-sha256 at 64 bytes")
            && text.contains("hmac-sha256/openssl/hw, hmac-sha256/openssl/sw"),
        "{text}"
    );
    assert!(!text.contains('\n'), "one line: {text}");
    for fine in ["gcrypt", "sw", "openssl/hw", "hmac-sha256/openssl/hw"] {
        assert_eq!(
            BaselineRow::new(fine).unwrap().check(&keys),
            Ok(()),
            "{fine}"
        );
    }
}

/// A results document of `rows` (algorithm, backend, size, the absolute cost per byte of each
/// round), two sessions pinned to cores 0 and 1, cells with a ±10 % interval.
fn document(rows: &[(&str, &str, u32, &[f64])]) -> Document {
    let results: Vec<serde_json::Value> = rows
        .iter()
        .map(|(alg, backend, size, _)| {
            serde_json::json!({
                "algorithm": alg, "backend": backend, "accel": "hw", "size": size,
                "mean_message_bytes": size, "sessions": 2,
                "metrics": {"absolute_cycles_per_byte": 1.0, "bytes": 1000, "messages": 10},
                "ci95": {"absolute_cycles_per_byte": {"low": 0.9, "high": 1.1}}
            })
        })
        .collect();
    let text = serde_json::json!({"tool": "macbench", "schema_version": 1, "results": results});
    let mut doc: Document = serde_json::from_value(text).unwrap();
    for (r, (_, _, _, rounds)) in doc.results.iter_mut().zip(rows) {
        r.raw = rounds
            .iter()
            .map(|c| {
                let cpu = (c * 1e6) as u64;
                raw(&[(vec![0], cpu, 1_000_000), (vec![1], cpu, 1_000_000)])
            })
            .collect();
        r.repeats = r.raw.len();
    }
    doc
}

#[test]
fn each_row_gets_its_ratio_to_its_groups_baseline_and_a_group_without_one_says_why() {
    // The host moves every row of a round alike (×1, ×1.6, ×0.9); gcrypt costs 1.2 × openssl.
    let mut doc = document(&[
        ("hmac-sha256", "openssl", 64, &[2.0, 3.2, 1.8]),
        ("hmac-sha256", "gcrypt", 64, &[2.4, 3.84, 2.16]),
        ("hmac-sha256", "openssl", 1024, &[1.0, 1.6, 0.9]),
        ("cmac-aes128", "gcrypt", 64, &[1.0, 1.6, 0.9]),
    ]);
    baseline::attach(&mut doc, &BaselineRow::new("openssl").unwrap());
    let b: Vec<&baseline::BaselineRatio> = doc
        .results
        .iter()
        .map(|r| r.baseline.as_ref().unwrap())
        .collect();
    // The baseline row: ratio 1, no interval, marked.
    assert!(b[0].is_baseline() && b[2].is_baseline());
    assert_eq!((b[0].ratio, b[0].low, b[0].high), (Some(1.0), None, None));
    assert_eq!(b[0].function.as_deref(), Some("hmac-sha256/openssl/hw"));
    // gcrypt against openssl: exactly 1.2, the host's swings cancelled; the unpaired interval
    // (the cells' ±10 %) is wide beside it.
    let g = b[1];
    assert_eq!(g.function.as_deref(), Some("hmac-sha256/openssl/hw"));
    assert!(close(g.ratio.unwrap(), 1.2, 1e-9), "{g:?}");
    assert!(close(g.low.unwrap(), 1.2, 1e-9) && close(g.high.unwrap(), 1.2, 1e-9));
    assert_eq!(g.pairs, 3);
    assert!(
        g.unpaired_low.unwrap() < 0.9 && g.unpaired_high.unwrap() > 1.1,
        "{g:?}"
    );
    // No openssl row for CMAC: no ratio, and why.
    assert_eq!((b[3].function.as_deref(), b[3].ratio), (None, None));
    let note = b[3].note.as_deref().unwrap();
    assert!(
        note.contains("no row of cmac-aes128 at 64 bytes is --baseline openssl"),
        "{note}"
    );
    // Written and read back as it was; a file without the field reads as before.
    let text = serde_json::to_string(&doc).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let fields: Vec<&str> = json["results"][1]["baseline"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for f in [
        "function",
        "ratio",
        "low",
        "high",
        "pairs",
        "unpaired_low",
        "unpaired_high",
    ] {
        assert!(fields.contains(&f), "{f} in {fields:?}");
    }
    let back: Document = serde_json::from_str(&text).unwrap();
    assert_eq!(back.results[1].baseline.as_ref(), Some(g));
    let older = document(&[("hmac-sha256", "openssl", 64, &[1.0])]);
    let older = serde_json::to_string(&older).unwrap();
    assert!(!older.contains("\"baseline\""));
    let read: Document = serde_json::from_str(&older).unwrap();
    assert!(read.results[0].baseline.is_none());
}

// ---- End to end on the fake engine.

#[test]
fn run_baseline_writes_the_ratio_to_json_csv_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv, html) = (
        dir.path().join("r.json"),
        dir.path().join("r.csv"),
        dir.path().join("r.html"),
    );
    let out = fake_run(
        "run --alg hmac-sha256,cmac-aes128 --backend openssl,rustcrypto --sizes 64,1024 --repeat 3 --target-ci 0 --duration 50ms --baseline hmac-sha256/openssl/hw",
    )
    .arg("--json")
    .arg(&json)
    .arg("--csv")
    .arg(&csv)
    .output()
    .unwrap();
    let doc = common::results_at(&json);
    common::ran(&out, &doc);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "ratio to hmac-sha256/openssl/hw (absolute cycles/byte; paired 95 % interval)"
        ),
        "{stdout}"
    );
    assert_eq!(doc["scenario"]["baseline"], "hmac-sha256/openssl/hw");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    for r in results {
        let b = &r["baseline"];
        let function =
            format!("{}/{}/{}", r["algorithm"], r["backend"], r["accel"]).replace('"', "");
        match (
            r["algorithm"].as_str().unwrap(),
            r["backend"].as_str().unwrap(),
        ) {
            ("hmac-sha256", "openssl") => {
                assert_eq!(b["function"], function.as_str(), "{b}");
                assert_eq!(b["ratio"], 1.0, "{b}");
                assert!(b["low"].is_null() && b["high"].is_null(), "{b}");
            }
            ("hmac-sha256", _) => {
                // The fake's cost is 20 ns a message plus 0.25 ns a byte whatever the function,
                // so each round's ratio is 1 and so are its bounds.
                assert_eq!(b["function"], "hmac-sha256/openssl/hw", "{b}");
                assert_eq!(b["pairs"], 3, "{b}");
                for f in ["ratio", "low", "high"] {
                    assert!(close(b[f].as_f64().unwrap(), 1.0, 1e-9), "{f}: {b}");
                }
                assert!(b["unpaired_low"].as_f64().unwrap() <= 1.0 + 1e-9, "{b}");
                assert!(b["unpaired_high"].as_f64().unwrap() >= 1.0 - 1e-9, "{b}");
            }
            _ => {
                assert!(b["function"].is_null() && b["ratio"].is_null(), "{b}");
                assert!(
                    b["note"]
                        .as_str()
                        .unwrap()
                        .contains("no row of cmac-aes128"),
                    "{b}"
                );
            }
        }
    }
    // The CSV: the columns, and pandas-style reading (quoted notes, empty cells where none).
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let (function, ratio, low, high) = (
        col("baseline_function"),
        col("baseline_ratio"),
        col("baseline_low"),
        col("baseline_high"),
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 8);
    for row in &rows {
        assert_eq!(row.len(), header.len());
        match &row[col("backend")] {
            _ if &row[col("algorithm")] == "cmac-aes128" => {
                assert_eq!((&row[function], &row[ratio]), ("", ""));
            }
            "openssl" => {
                assert_eq!((&row[ratio], &row[low], &row[high]), ("1", "", ""));
            }
            _ => {
                assert_eq!(&row[function], "hmac-sha256/openssl/hw");
                assert!(close(row[ratio].parse::<f64>().unwrap(), 1.0, 1e-9));
            }
        }
    }
    // The report shows the ratios, and validate reads the file back.
    common::exits_0(
        common::macbench()
            .arg("report")
            .arg(&json)
            .arg("-o")
            .arg(&html),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("Ratios to the baseline row"),
        "report section"
    );
    common::exits_0(common::macbench().arg("validate").arg(&json));
}

#[test]
fn a_row_that_names_no_row_or_two_in_a_group_is_refused_before_anything_runs() {
    usage_error_line(
        "run --alg hmac-sha256 --backend openssl --sizes 64 --baseline nosuch",
        "--baseline nosuch: names no row of this run; give one of: openssl, hw, single, hmac-sha256/openssl/hw",
    );
    usage_error_line(
        "run --alg hmac-sha256 --backend openssl --accel hw,sw --sizes 64 --baseline openssl",
        "--baseline openssl: matches 2 rows of hmac-sha256 at 64 bytes (hmac-sha256/openssl/hw, hmac-sha256/openssl/sw)",
    );
    usage_error_line(
        "run --alg hmac-sha256 --backend openssl --sizes 64 --baseline openssl --order sequential",
        "--order sequential",
    );
}
