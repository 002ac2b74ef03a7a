//! `macbench report`: the HTML holds one SVG per expected figure and the numbers of the JSON in its
//! tables; PNGs decode at the figure size; bad input gives a one-line error with exit code 2.
//! Results are constructed (no timing), plus one real short run to pin the file format.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use predicates::prelude::*;
use scraper::{Html, Selector};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn result(
    function: &str,
    size: u64,
    sessions: usize,
    cores: &str,
    absolute: f64,
    apparent: f64,
) -> Value {
    let parts: Vec<&str> = function.split('/').collect();
    let threads: Vec<Value> = (0..sessions)
        .map(|i| {
            let bytes = 1_000_000 + 1000 * i as u64;
            json!({
                "session": i, "messages": bytes / size.max(1), "bytes": bytes, "cpu_seconds": 0.01,
                "interval_seconds": 0.01,
                "absolute_cycles_per_byte": absolute * (1.0 + i as f64 / 100.0),
                "apparent_cycles_per_byte": apparent * (1.0 + i as f64 / 50.0),
                "wall_clock_cycles_per_byte": apparent * sessions as f64 * (1.0 + i as f64 / 50.0),
                "absolute_cycles_per_message": absolute * size as f64,
                "apparent_cycles_per_message": apparent * size as f64,
                "cpu_at_start": i % 2, "cpu_at_end": i % 2
            })
        })
        .collect();
    // Figures a run could write (results::check refuses the impossible): bytes are messages × size,
    // each session is one thread, the spreads hold the medians.
    let cores_n = cores
        .split(',')
        .map(|part| match part.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum::<usize>();
    let bytes_per_second = 2.4e9 / apparent;
    json!({
        "algorithm": parts[0], "backend": parts[1], "accel": parts[2], "size": size,
        "mean_message_bytes": size as f64, "sessions": sessions, "cores": cores,
        "scenario": {"size": {"kind": "fixed", "size": size}},
        "repeats": 3,
        "metrics": {
            "absolute_cycles_per_byte": absolute, "apparent_cycles_per_byte": apparent,
            "absolute_cycles_per_message": absolute * size as f64,
            "apparent_cycles_per_message": apparent * size as f64,
            "bytes_per_second": bytes_per_second, "messages_per_second": bytes_per_second / size as f64,
            "parallelism": (absolute / apparent).min(sessions as f64), "fairness": 0.9876,
            "min_thread_apparent_cycles_per_byte": apparent, "max_thread_apparent_cycles_per_byte": apparent * 1.1,
            "cpu_utilisation": 0.97 * (sessions as f64 / cores_n as f64).min(1.0),
            "core_cycles_per_byte": null, "core_cycles_per_byte_estimated": null,
            "key_setup_cycles": 1000.0, "messages": 1000, "bytes": 1000 * size, "window_seconds": 0.07
        },
        "spread": {
            "absolute_cycles_per_byte": {"min": absolute * 0.99, "max": absolute * 1.01},
            "apparent_cycles_per_byte": {"min": apparent * 0.98, "max": apparent * 1.02},
            "bytes_per_second": {"min": bytes_per_second * 0.98, "max": bytes_per_second * 1.02}
        },
        "threads": threads,
        "warnings": [{"code": "noisy", "message": format!("synthetic warning for {function}@{size}"), "fatal": false}],
        "adjustments": [], "failed": false, "raw": []
    })
}

fn document(results: Vec<Value>, sessions: usize) -> Value {
    json!({
        "schema_version": 1, "tool": "macbench",
        "host": {"cpu_model": "Test CPU", "cpu_features": ["aes"], "online_cpus": [0, 1], "kernel": "6.0",
                 "governor": null, "library_versions": [["openssl", "OpenSSL 3.0"]],
                 "macbench_version": "0.1.0", "git_commit": null,
                 "core_types": [
                     {"cpus": [0], "design": "Cortex-A55", "capacity": 446, "max_khz": 1800000},
                     {"cpus": [1], "design": "Cortex-X1", "capacity": 1024, "max_khz": 2840000}]},
        "clock": {"reference_hz": 2.4e9, "reference_source": "test", "core_hz_estimated": null,
                  "core_to_reference_ratio": null, "hardware_cycles": "unavailable", "timer_resolution_ns": 42,
                  "timebase": "CNTVCT_EL0 at 24.000 MHz", "timebase_hz": 24e6},
        "scenario": {"alg": "hmac-sha256,cmac-aes128", "sessions": sessions},
        "harness": {"size": 64, "absolute_cycles_per_message": 14.0, "apparent_cycles_per_message": 14.0},
        "results": results, "partial": false
    })
}

const FUNCTIONS: [&str; 2] = ["hmac-sha256/openssl/hw", "cmac-aes128/rustcrypto/hw"];
const SIZES: [u64; 3] = [16, 256, 4096];

/// A sweep of FUNCTIONS × SIZES at `sessions` sessions on cores 0-1.
fn sweep(sessions: usize, scale: f64) -> Value {
    let mut results = Vec::new();
    for (k, f) in FUNCTIONS.iter().enumerate() {
        for s in SIZES {
            let absolute = scale * (2.0 + k as f64 + 400.0 / s as f64);
            results.push(result(f, s, sessions, "0-1", absolute, absolute / 2.0));
        }
    }
    document(results, sessions)
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    p
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// Figure ids in page order.
/// The text of the first element `selector` picks in `html`.
fn text_of(html: &Html, selector: &str) -> String {
    html.select(&sel(selector))
        .next()
        .unwrap_or_else(|| panic!("nothing matches {selector}"))
        .text()
        .collect()
}

fn figure_ids(html: &Html) -> Vec<String> {
    html.select(&sel("figure.plot"))
        .map(|f| f.value().attr("id").unwrap().to_string())
        .collect()
}

/// `data-value`s of the table behind figure `id`, as (series, x, y).
fn figure_numbers(html: &Html, id: &str) -> Vec<(String, f64, f64)> {
    let table = html
        .select(&sel(&format!("table[data-figure=\"{id}\"]")))
        .next()
        .unwrap_or_else(|| panic!("no table for {id}"));
    table
        .select(&sel("tbody tr"))
        .filter_map(|row| {
            let cells: Vec<_> = row.select(&sel("td")).collect();
            let name = cells[0].text().collect::<String>();
            let x = cells[1].value().attr("data-value")?.parse().ok()?;
            let y = cells[2].value().attr("data-value")?.parse().ok()?;
            Some((name, x, y))
        })
        .collect()
}

#[test]
fn html_has_one_svg_per_expected_figure_with_the_json_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let two = sweep(2, 1.0);
    let four = sweep(4, 1.3);
    let a = write(dir.path(), "two.json", &two);
    let b = write(dir.path(), "four.json", &four);
    let out = dir.path().join("report.html");
    macbench()
        .args([
            "report",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("6 figure(s)"));
    let text = std::fs::read_to_string(&out).unwrap();
    let html = Html::parse_document(&text);
    assert_eq!(
        figure_ids(&html),
        [
            "cpb-absolute",
            "cpb-apparent",
            "threads-absolute",
            "threads-apparent",
            "scaling-throughput",
            "scaling-parallelism"
        ]
    );
    for fig in html.select(&sel("figure.plot")) {
        assert_eq!(fig.select(&sel("svg")).count(), 1, "one svg per figure");
        assert_eq!(
            fig.select(&sel("table.data")).count(),
            1,
            "a table per figure"
        );
    }
    // Self-contained: nothing fetched, nothing scripted.
    assert!(html
        .select(&sel("script, link, img, iframe"))
        .next()
        .is_none());
    assert!(!text.contains("src=\"http"), "no external resource");

    // Every absolute and apparent cycles/byte of both files is in the tables behind the size figures.
    let absolute = figure_numbers(&html, "cpb-absolute");
    let apparent = figure_numbers(&html, "cpb-apparent");
    assert_eq!(absolute.len(), 2 * FUNCTIONS.len() * SIZES.len());
    for doc in [&two, &four] {
        for r in doc["results"].as_array().unwrap() {
            let size = r["size"].as_f64().unwrap();
            for (rows, key) in [
                (&absolute, "absolute_cycles_per_byte"),
                (&apparent, "apparent_cycles_per_byte"),
            ] {
                let want = r["metrics"][key].as_f64().unwrap();
                assert!(
                    rows.iter().any(|(_, x, y)| *x == size && *y == want),
                    "{key} {want} at {size} missing"
                );
            }
        }
    }
    // Default per-thread scenario: most sessions (4), largest size (4096); fairness in the subtitle.
    let threads = figure_numbers(&html, "threads-absolute");
    assert_eq!(
        threads
            .iter()
            .filter(|t| t.0.starts_with("absolute"))
            .count(),
        4
    );
    let chosen = &four["results"][2];
    assert_eq!(chosen["size"], 4096);
    for t in chosen["threads"].as_array().unwrap() {
        let want = t["absolute_cycles_per_byte"].as_f64().unwrap();
        assert!(threads.iter().any(|(_, _, y)| *y == want));
    }
    let subtitle = text_of(&html, "#threads-absolute svg");
    assert!(subtitle.contains("Jain's fairness 0.988"), "{subtitle}");
    // Scaling: sessions 2 and 4 for each function at the largest size.
    let scaling = figure_numbers(&html, "scaling-throughput");
    assert_eq!(scaling.len(), 2 * FUNCTIONS.len());
    assert!(scaling.iter().all(|(name, _, _)| name.contains("@4096 B")));
    // Host facts, scenario, every warning, the hw/sw note.
    assert!(text.contains("Test CPU"));
    // A phone's core types and its generic timer, as the host facts recorded them.
    assert!(
        text.contains("1× Cortex-A55 (capacity 446, 1.80 GHz): cpu 0; 1× Cortex-X1 (capacity 1024, 2.84 GHz): cpu 1"),
        "core types missing"
    );
    assert!(text.contains("CNTVCT_EL0 at 24.000 MHz, resolution 42 ns"));
    let warnings = html.select(&sel("#warnings-table tbody tr")).count();
    assert_eq!(warnings, 2 * FUNCTIONS.len() * SIZES.len());
    assert!(text.contains("synthetic warning for cmac-aes128/rustcrypto/hw@4096"));
    let notes: Vec<String> = html
        .select(&sel("p.note"))
        .map(|n| n.text().collect())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("software-only omitted")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("ISA level omitted")),
        "{notes:?}"
    );
    assert_eq!(
        html.select(&sel("#results-table tbody tr")).count(),
        2 * FUNCTIONS.len() * SIZES.len()
    );
}

#[test]
fn hw_against_sw_figure_when_both_exist_and_scenario_flag_chooses() {
    let dir = tempfile::tempdir().unwrap();
    let mut results = Vec::new();
    for accel in ["hw", "sw"] {
        for s in SIZES {
            let f = format!("cmac-aes128/openssl/{accel}");
            let base = if accel == "hw" { 1.0 } else { 9.0 };
            results.push(result(
                &f,
                s,
                1,
                "0",
                base + 100.0 / s as f64,
                base + 100.0 / s as f64,
            ));
        }
    }
    let p = write(dir.path(), "accel.json", &document(results, 1));
    let out = dir.path().join("r.html");
    macbench()
        .args(["report", p.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .args(["--scenario", "cmac-aes128/openssl/sw@256"])
        .assert()
        .success();
    let html = Html::parse_document(&std::fs::read_to_string(&out).unwrap());
    let ids = figure_ids(&html);
    assert!(ids.contains(&"accel-hw-sw".to_string()), "{ids:?}");
    assert!(
        !ids.iter().any(|i| i.starts_with("scaling")),
        "one session count: no scaling"
    );
    let accel = figure_numbers(&html, "accel-hw-sw");
    assert_eq!(accel.len(), 2 * SIZES.len());
    assert!(accel
        .iter()
        .any(|(n, _, _)| n.starts_with("cmac-aes128/openssl/sw")));
    let sub = text_of(&html, "#threads-absolute svg");
    assert!(sub.contains("cmac-aes128/openssl/sw@256"), "{sub}");

    macbench()
        .args(["report", p.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .args(["--scenario", "cmac-aes128/openssl/hw@999"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("matches no result")
                .and(predicate::str::contains("cmac-aes128/openssl/hw@256")),
        );
    macbench()
        .args([
            "report",
            p.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--scenario",
            "nonsense",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ALG/BACKEND/ACCEL@SIZE"));
}

/// `result` with its dispatch recorded, as `run` writes it.
fn with_dispatch(mut r: Value, dispatch: &str) -> Value {
    r["scenario"]["dispatch"] = json!(dispatch);
    r
}

#[test]
fn isa_ladder_figure_when_a_function_has_levels() {
    let dir = tempfile::tempdir().unwrap();
    // ipsec-mb at three levels and hw, two sizes, two dispatch modes; OpenSSL at hw and sw only (the
    // hw/sw figure's, not a ladder); RustCrypto at hw alone.
    let levels = [("sse", 1.0), ("avx2", 1.5), ("avx512", 1.25), ("hw", 1.25)];
    let mut results = Vec::new();
    for dispatch in ["single", "burst:16"] {
        for (accel, scale) in levels {
            for s in [64u64, 1500] {
                let f = format!("hmac-sha256/ipsecmb/{accel}");
                let v = scale * (4.0 + 400.0 / s as f64);
                results.push(with_dispatch(result(&f, s, 1, "1", v, v), dispatch));
            }
        }
    }
    for accel in ["hw", "sw"] {
        results.push(result(
            &format!("hmac-sha256/openssl/{accel}"),
            64,
            1,
            "1",
            9.0,
            9.0,
        ));
    }
    results.push(result("cmac-aes128/rustcrypto/hw", 64, 1, "1", 3.0, 3.0));
    let p = write(dir.path(), "ladder.json", &document(results, 1));
    let out = dir.path().join("r.html");
    let pngs = dir.path().join("png");
    macbench()
        .args(["report", p.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .args(["--png", pngs.to_str().unwrap()])
        .assert()
        .success();
    assert!(pngs.join("accel-ladder.png").is_file());
    let html = Html::parse_document(&std::fs::read_to_string(&out).unwrap());
    let ids = figure_ids(&html);
    assert!(ids.contains(&"accel-ladder".to_string()), "{ids:?}");
    let numbers = figure_numbers(&html, "accel-ladder");
    // 2 sizes × 2 dispatch modes: a ladder line of 3 points and an hw marker each; nothing else.
    assert_eq!(numbers.len(), 2 * 2 * levels.len(), "{numbers:?}");
    assert!(numbers
        .iter()
        .all(|(n, _, _)| n.starts_with("hmac-sha256/ipsecmb ")));
    let at = |name: &str, x: f64| {
        numbers
            .iter()
            .find(|(n, px, _)| n == name && *px == x)
            .map(|p| p.2)
            .unwrap_or_else(|| panic!("no {name} at {x}: {numbers:?}"))
    };
    // x is the step on the ladder: sse 1, avx2 3, avx512 4; hw apart at 5, in a series of its own.
    let line = "hmac-sha256/ipsecmb 64 B burst:16 n=1";
    assert_eq!(at(line, 1.0), 4.0 + 400.0 / 64.0);
    assert_eq!(at(line, 3.0), 1.5 * (4.0 + 400.0 / 64.0));
    assert_eq!(at(line, 4.0), 1.25 * (4.0 + 400.0 / 64.0));
    assert_eq!(at(&format!("{line} hw"), 5.0), 1.25 * (4.0 + 400.0 / 64.0));
    assert!(numbers
        .iter()
        .any(|(n, _, _)| n == "hmac-sha256/ipsecmb 1500 B single n=1"));
    // The table names the steps, not their indices.
    let cells: Vec<String> = html
        .select(&sel(
            "table[data-figure=\"accel-ladder\"] tbody tr td:nth-child(2)",
        ))
        .map(|c| c.text().collect())
        .collect();
    for label in ["sse", "avx2", "avx512", "hw"] {
        assert!(cells.iter().any(|c| c == label), "{label}: {cells:?}");
    }
}

/// A function run under several dispatch modes is a curve per mode in the cycles/byte figures (not
/// one line zig-zagging between modes at each size), and the latency each mode cost gets a figure of
/// its own; a file of `single` results alone gets neither the mode in its names nor that figure.
#[test]
fn dispatch_modes_are_curves_of_their_own_with_a_latency_figure() {
    let dir = tempfile::tempdir().unwrap();
    let mut results = Vec::new();
    for (dispatch, scale, latency_ns) in [("single", 4.0, 500.0), ("burst:16", 1.0, 2000.0)] {
        for s in [64u64, 1500] {
            let v = scale * (2.0 + 100.0 / s as f64);
            let mut r = with_dispatch(result("hmac-sha256/ipsecmb/hw", s, 1, "1", v, v), dispatch);
            r["metrics"]["latency_p50_ns"] = json!(latency_ns * s as f64 / 64.0 / 2.0);
            r["metrics"]["latency_p99_ns"] = json!(latency_ns * s as f64 / 64.0);
            results.push(r);
        }
    }
    let p = write(dir.path(), "modes.json", &document(results, 1));
    let out = dir.path().join("r.html");
    macbench()
        .args(["report", p.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .assert()
        .success();
    let html = Html::parse_document(&std::fs::read_to_string(&out).unwrap());
    let cpb = figure_numbers(&html, "cpb-absolute");
    let at = |numbers: &[(String, f64, f64)], name: &str, x: f64| {
        numbers
            .iter()
            .find(|(n, px, _)| n == name && *px == x)
            .map(|p| p.2)
            .unwrap_or_else(|| panic!("no {name} at {x}: {numbers:?}"))
    };
    assert_eq!(cpb.len(), 4, "{cpb:?}");
    assert_eq!(
        at(&cpb, "hmac-sha256/ipsecmb/hw single", 64.0),
        4.0 * (2.0 + 100.0 / 64.0)
    );
    assert_eq!(
        at(&cpb, "hmac-sha256/ipsecmb/hw burst:16", 64.0),
        2.0 + 100.0 / 64.0
    );
    let latency = figure_numbers(&html, "latency-p99");
    assert_eq!(
        at(&latency, "hmac-sha256/ipsecmb/hw burst:16", 1500.0),
        2000.0 * 1500.0 / 64.0 / 1e3
    );
    assert_eq!(at(&latency, "hmac-sha256/ipsecmb/hw single", 64.0), 0.5);
    // One mode only: names as before, no latency figure.
    let p = write(dir.path(), "single.json", &sweep(1, 1.0));
    macbench()
        .args(["report", p.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .assert()
        .success();
    let html = Html::parse_document(&std::fs::read_to_string(&out).unwrap());
    assert!(!figure_ids(&html).contains(&"latency-p99".to_string()));
    assert!(figure_numbers(&html, "cpb-absolute")
        .iter()
        .all(|(n, _, _)| !n.contains("single")));
}

#[test]
fn png_files_decode_at_the_figure_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "two.json", &sweep(2, 1.0));
    let pngs = dir.path().join("png");
    macbench()
        .args([
            "report",
            p.to_str().unwrap(),
            "-o",
            dir.path().join("r.html").to_str().unwrap(),
        ])
        .args(["--png", pngs.to_str().unwrap()])
        .assert()
        .success();
    let mut names: Vec<String> = std::fs::read_dir(&pngs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "cpb-absolute.png",
            "cpb-apparent.png",
            "threads-absolute.png",
            "threads-apparent.png"
        ]
    );
    for n in names {
        let decoder = png::Decoder::new(std::io::BufReader::new(
            std::fs::File::open(pngs.join(&n)).unwrap(),
        ));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(
            (info.width, info.height),
            (
                macbench::report::plots::WIDTH,
                macbench::report::plots::HEIGHT
            )
        );
        // Not blank: text and curves leave many non-white pixels.
        let dark = buf
            .chunks(info.line_size / info.width as usize)
            .filter(|px| px[0] < 128)
            .count();
        assert!(dark > 1000, "{n}: only {dark} dark pixels");
    }
}

#[test]
fn a_real_run_reports() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    // The file a run writes (on the fake engine: the report is under test, not the machine).
    let run = common::fake_run("run --alg hmac-sha256 --backend rustcrypto --sizes 64,1024")
        .args(
            "--sessions 2 --duration 400ms --repeat 1 --target-ci 0 --no-harness -q"
                .split_whitespace(),
        )
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    common::ran(&run, &common::results_at(&json));
    let out = dir.path().join("r.html");
    macbench()
        .args([
            "report",
            json.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .success();
    let html = Html::parse_document(&std::fs::read_to_string(&out).unwrap());
    assert!(html.select(&sel("#results-table tbody tr")).count() == 2);

    // One schema both ways: what `run` wrote reads into the writer's own types and writes back the
    // same JSON, every key in its place.
    let text = std::fs::read_to_string(&json).unwrap();
    let doc = macbench::report::read::parse("run.json", &text).unwrap();
    assert_eq!(
        serde_json::to_value(&doc).unwrap(),
        serde_json::from_str::<Value>(&text).unwrap()
    );
}

#[test]
fn bad_input_is_a_one_line_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let foreign = write(
        dir.path(),
        "hyperfine.json",
        &json!({"results": [{"command": "ls", "mean": 0.1}]}),
    );
    let mut newer = sweep(1, 1.0);
    newer["schema_version"] = json!(macbench::results::SCHEMA_VERSION + 1);
    let newer = write(dir.path(), "newer.json", &newer);
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "not json at all").unwrap();
    let missing = dir.path().join("missing.json");
    for (file, message) in [
        (&foreign, "not a macbench results file"),
        (&newer, "newer than this macbench reads"),
        (&empty, "is empty"),
        (&garbage, "not JSON"),
        (&missing, "no such file"),
    ] {
        let assert = macbench()
            .args([
                "report",
                file.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(stderr.starts_with("macbench: ") && stderr.contains(file.to_str().unwrap()));
    }
    assert!(!out.exists(), "no report written on bad input");
}

/// Render `doc` as a report and parse it.
fn report_of(doc: &Value) -> Html {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "r.json", doc);
    let out = dir.path().join("r.html");
    macbench()
        .args(["report", p.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .assert()
        .success();
    Html::parse_document(&std::fs::read_to_string(&out).unwrap())
}

/// One scenario with `sessions` per-thread entries.
fn one_scenario(sessions: usize) -> Value {
    document(
        vec![result(
            "hmac-sha256/openssl/hw",
            1024,
            sessions,
            "0-1",
            4.0,
            2.0,
        )],
        sessions,
    )
}

/// The statistic rows of the table behind figure `id`, as (of, statistic, value).
fn figure_statistics(html: &Html, id: &str) -> Vec<(String, String, f64)> {
    html.select(&sel(&format!(
        "table[data-figure=\"{id}\"] tbody tr.statistic"
    )))
    .map(|row| {
        let cells: Vec<_> = row.select(&sel("td")).collect();
        let value = cells[2]
            .value()
            .attr("data-value")
            .unwrap()
            .parse()
            .unwrap();
        (cells[0].text().collect(), cells[1].text().collect(), value)
    })
    .collect()
}

/// Linear interpolation between ranks, written out here rather than borrowed from the code under test.
fn quantile_of(sorted: &[f64], q: f64) -> f64 {
    let rank = q * (sorted.len() - 1) as f64;
    let i = rank.floor() as usize;
    match sorted.get(i + 1) {
        Some(next) => sorted[i] + (next - sorted[i]) * (rank - i as f64),
        None => sorted[i],
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn many_threads_show_a_distribution_not_bars() {
    const SESSIONS: usize = 200;
    let mut doc = one_scenario(SESSIONS);
    // Every 25th session from the 8th processed nothing: 8 of 200. The others have known, distinct values;
    // the last ten apparent ones are starved (hundreds of cycles/byte), so the x axis spans decades.
    let idle = |i: usize| i % 25 == 7;
    let mut bytes = Vec::new();
    let threads: Vec<Value> = (0..SESSIONS)
        .map(|i| {
            let b = if idle(i) { 0 } else { 100_000 + 500 * i as u64 };
            bytes.push(b as f64);
            let (absolute, apparent) = if idle(i) {
                (Value::Null, Value::Null)
            } else {
                let apparent = if i < 190 {
                    1.0 + i as f64 * 0.01
                } else {
                    100.0 * (i - 189) as f64
                };
                (json!(2.0 + i as f64 * 0.05), json!(apparent))
            };
            json!({
                "session": i, "messages": b / 1024, "bytes": b, "cpu_seconds": 0.01,
                "absolute_cycles_per_byte": absolute, "apparent_cycles_per_byte": apparent,
                "wall_clock_cycles_per_byte": if idle(i) { Value::Null } else { json!(SESSIONS as f64 * 3.0) },
            })
        })
        .collect();
    doc["results"][0]["threads"] = json!(threads);
    let sum: f64 = bytes.iter().sum();
    let squares: f64 = bytes.iter().map(|b| b * b).sum();
    let fairness = sum * sum / (SESSIONS as f64 * squares);
    doc["results"][0]["metrics"]["fairness"] = json!(fairness);

    let sorted = |key: &str| {
        let mut v: Vec<f64> = threads.iter().filter_map(|t| t[key].as_f64()).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let absolute = sorted("absolute_cycles_per_byte");
    let apparent = sorted("apparent_cycles_per_byte");
    assert_eq!(absolute.len(), SESSIONS - 8);

    let html = report_of(&doc);
    let ids = figure_ids(&html);
    assert!(ids.contains(&"threads-cdf".to_string()), "{ids:?}");
    assert!(
        !ids.iter()
            .any(|i| i == "threads-absolute" || i == "threads-apparent"),
        "no per-session bars at {SESSIONS} sessions: {ids:?}"
    );
    let stats = figure_statistics(&html, "threads-cdf");
    let stated = |of: &str, name: &str| -> f64 {
        let found: Vec<f64> = stats
            .iter()
            .filter(|(o, n, _)| o.starts_with(of) && n.starts_with(name))
            .map(|s| s.2)
            .collect();
        assert_eq!(found.len(), 1, "{of} {name} in {stats:?}");
        found[0]
    };
    for (of, values) in [("absolute", &absolute), ("apparent", &apparent)] {
        for (name, q) in [
            ("min", 0.0),
            ("p10", 0.1),
            ("median", 0.5),
            ("p90", 0.9),
            ("max", 1.0),
        ] {
            let want = quantile_of(values, q);
            let got = stated(of, name);
            assert!(close(got, want), "{of} {name}: stated {got}, data {want}");
        }
    }
    assert_eq!(
        stated("all sessions", "sessions that processed nothing"),
        8.0
    );
    assert!(close(stated("all sessions", "Jain's fairness"), fairness));

    let caption = text_of(&html, "#threads-cdf figcaption");
    assert!(
        caption.contains("8 of 200 sessions processed nothing in the window"),
        "{caption}"
    );
    assert!(
        caption.contains(&format!(
            "Jain's fairness index of bytes per session: {fairness:.3}"
        )),
        "{caption}"
    );
    let svg = text_of(&html, "#threads-cdf svg");
    assert!(svg.contains("(log scale)"), "apparent spans decades: {svg}");
    // Two curves, and the table summarises rather than listing a row per session.
    let rows = html
        .select(&sel("table[data-figure=\"threads-cdf\"] tbody tr"))
        .count();
    assert_eq!(rows, stats.len());
    assert_eq!(rows, 2 * 5 + 2);

    // An older file without the recorded index still states one, from the bytes per session.
    let mut older = doc.clone();
    older["results"][0]["metrics"]
        .as_object_mut()
        .unwrap()
        .remove("fairness");
    let html = report_of(&older);
    let stats = figure_statistics(&html, "threads-cdf");
    let recomputed = stats
        .iter()
        .find(|s| s.1.starts_with("Jain's fairness"))
        .unwrap()
        .2;
    assert!(close(recomputed, fairness), "{recomputed} vs {fairness}");
}

#[test]
fn few_threads_keep_one_bar_per_session() {
    let limit = macbench::report::html::MAX_SESSIONS_FOR_BARS;
    for (sessions, bars) in [(4, true), (limit, true), (limit + 1, false)] {
        let html = report_of(&one_scenario(sessions));
        let ids = figure_ids(&html);
        assert_eq!(
            ids.contains(&"threads-absolute".to_string()),
            bars,
            "{sessions}: {ids:?}"
        );
        assert_eq!(
            ids.contains(&"threads-apparent".to_string()),
            bars,
            "{sessions}: {ids:?}"
        );
        assert_eq!(
            ids.contains(&"threads-cdf".to_string()),
            !bars,
            "{sessions}: {ids:?}"
        );
        if bars {
            let drawn = figure_numbers(&html, "threads-absolute")
                .iter()
                .filter(|t| t.0.starts_with("absolute"))
                .count();
            assert_eq!(drawn, sessions, "one bar per session");
        }
    }
}

/// The error bar and warnings behind each point of figure `id`: (series, x, kind, low, high, warnings).
fn figure_marks(html: &Html, id: &str) -> Vec<(String, f64, String, f64, f64, String)> {
    html.select(&sel(&format!("table[data-figure=\"{id}\"] tbody tr")))
        .filter_map(|row| {
            let cells: Vec<_> = row.select(&sel("td")).collect();
            let bar = cells.get(3)?.value();
            let attr = |k: &str| bar.attr(k).map(str::to_string);
            Some((
                cells[0].text().collect(),
                cells[1].value().attr("data-value")?.parse().ok()?,
                attr("data-kind").unwrap_or_default(),
                attr("data-low")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(f64::NAN),
                attr("data-high")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(f64::NAN),
                cells.get(4)?.text().collect(),
            ))
        })
        .collect()
}

/// Red rings (the warning marker) in the SVG of figure `id`.
fn red_rings(html: &Html, id: &str) -> usize {
    html.select(&sel(&format!("#{id} svg circle")))
        .filter(|c| c.value().attr("stroke") == Some("#D00000"))
        .count()
}

#[test]
fn figures_draw_each_results_interval_and_ring_the_warned_ones() {
    // hmac-sha256 has 95 % intervals and no warnings; cmac-aes128 (as a file from before intervals)
    // only min–max spreads, and its 256-byte result is flagged noisy and over-utilised.
    let mut doc = sweep(2, 1.0);
    for r in doc["results"].as_array_mut().unwrap() {
        let hmac = r["algorithm"] == "hmac-sha256";
        if hmac {
            let a = r["metrics"]["absolute_cycles_per_byte"].as_f64().unwrap();
            let p = r["metrics"]["apparent_cycles_per_byte"].as_f64().unwrap();
            r["ci95"] = json!({
                "absolute_cycles_per_byte": {"low": a * 0.9, "high": a * 1.2},
                "apparent_cycles_per_byte": {"low": p * 0.95, "high": p * 1.05}
            });
        }
        r["warnings"] = if !hmac && r["size"] == 256 {
            json!([{"code": "noisy", "message": "m"}, {"code": "over-utilised", "message": "m"}])
        } else {
            json!([])
        };
    }
    let html = report_of(&doc);
    let marks = figure_marks(&html, "cpb-absolute");
    assert_eq!(marks.len(), FUNCTIONS.len() * SIZES.len());
    for r in doc["results"].as_array().unwrap() {
        let function =
            format!("{}/{}/{}", r["algorithm"], r["backend"], r["accel"]).replace('"', "");
        let size = r["size"].as_f64().unwrap();
        let (kind, want) = if r["ci95"].is_object() {
            ("ci95", &r["ci95"]["absolute_cycles_per_byte"])
        } else {
            ("min-max", &r["spread"]["absolute_cycles_per_byte"])
        };
        let (low, high) = if kind == "ci95" {
            (
                want["low"].as_f64().unwrap(),
                want["high"].as_f64().unwrap(),
            )
        } else {
            (want["min"].as_f64().unwrap(), want["max"].as_f64().unwrap())
        };
        let row = marks
            .iter()
            .find(|m| m.0 == function && m.1 == size)
            .unwrap_or_else(|| panic!("{function}@{size} in {marks:?}"));
        // Within an ulp or two: serde_json's default float parser is not always correctly rounded.
        assert_eq!(row.2, kind, "{function}@{size}");
        assert!(
            close(row.3, low) && close(row.4, high),
            "{function}@{size}: {row:?} against {low}…{high}"
        );
        let flagged = function.starts_with("cmac") && size == 256.0;
        assert_eq!(
            row.5,
            if flagged { "noisy, over-utilised" } else { "" },
            "{function}@{size}"
        );
    }
    // One flagged point in each size figure, plus the legend's sample ring.
    assert_eq!(red_rings(&html, "cpb-absolute"), 2);
    assert_eq!(red_rings(&html, "cpb-apparent"), 2);
    let caption = text_of(&html, "#cpb-absolute figcaption");
    assert!(
        caption
            .contains("95 % confidence interval, or the min–max of its repeats where it has none"),
        "{caption}"
    );
    assert!(caption.contains("noisy ×1, over-utilised ×1"), "{caption}");
    let svg = text_of(&html, "#cpb-absolute svg");
    for key in [
        "bar: 95 % confidence interval",
        "bar: min–max of repeats (no 95 % interval)",
        "red ring: the result carries a warning",
    ] {
        assert!(svg.contains(key), "legend: {key}");
    }

    // Nothing flagged, nothing ringed, and the legend does not mention rings.
    for r in doc["results"].as_array_mut().unwrap() {
        r["warnings"] = json!([]);
    }
    let html = report_of(&doc);
    assert_eq!(red_rings(&html, "cpb-absolute"), 0);
    let svg = text_of(&html, "#cpb-absolute svg");
    assert!(!svg.contains("red ring"));
}

#[test]
fn html_tables_print_whole_numbers_as_integers() {
    let mut doc = sweep(2, 1.0);
    // serde writes an f64 option as `5.0`; the page shows 5.
    doc["scenario"]["target_ci_percent"] = json!(5.0);
    doc["scenario"]["duration_s"] = json!(0.15);
    doc["scenario"]["rekey_every"] = json!(null);
    let html = report_of(&doc);
    let results: Vec<Vec<String>> = html
        .select(&sel("#results-table tbody tr"))
        .map(|row| row.select(&sel("td")).map(|c| c.text().collect()).collect())
        .collect();
    assert_eq!(results.len(), FUNCTIONS.len() * SIZES.len());
    for row in &results {
        // file, function, size, sessions, cores, repeats
        assert!(
            SIZES.iter().any(|s| row[2] == s.to_string()),
            "size {:?}",
            row[2]
        );
        assert_eq!(row[3], "2", "sessions");
        assert_eq!(row[5], "3", "repeats");
    }
    let scenario = kv_rows(&html, "#scenario table.kv tr");
    let value = |k: &str| {
        scenario
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("{k} in {scenario:?}"))
    };
    assert_eq!(value("target_ci_percent"), "5");
    assert_eq!(value("duration_s"), "0.15");
    assert_eq!(value("sessions"), "2");
    assert_eq!(value("rekey_every"), "none");
    // Sizes behind the figures are integers too.
    for (_, x, _) in figure_numbers(&html, "cpb-absolute") {
        let shown: Vec<String> = html
            .select(&sel(&format!(
                "table[data-figure=\"cpb-absolute\"] td[data-value=\"{x:?}\"]"
            )))
            .map(|c| c.text().collect())
            .collect();
        assert!(shown.iter().all(|t| *t == format!("{x:.0}")), "{shown:?}");
    }
}

/// The (header, value) rows of the host facts table.
fn host_facts(html: &Html) -> Vec<(String, String)> {
    kv_rows(html, "#hosts table.kv tr")
}

/// The (header, value) text of each row `rows` picks in `html`.
fn kv_rows(html: &Html, rows: &str) -> Vec<(String, String)> {
    let cell = |row: &scraper::ElementRef, tag: &str| -> String {
        row.select(&sel(tag)).next().unwrap().text().collect()
    };
    html.select(&sel(rows))
        .map(|row| (cell(&row, "th"), cell(&row, "td")))
        .collect()
}

#[test]
fn markup_in_a_results_file_is_shown_as_text_not_run() {
    // Any text a results file carries reaches the page; these three are spliced in different places
    // (a host fact, a joined list of library versions, a warnings table cell).
    const HOSTILE: &str = "<script>alert(1)</script> & \"quoted\" 'single'";
    let mut doc = sweep(2, 1.0);
    doc["host"]["cpu_model"] = json!(format!("CPU {HOSTILE}"));
    doc["host"]["library_versions"][0][1] = json!(format!("OpenSSL {HOSTILE}"));
    doc["results"][0]["warnings"][0]["message"] = json!(format!("warned {HOSTILE}"));
    let html = report_of(&doc);

    assert_eq!(html.select(&sel("script")).count(), 0, "a script element");
    let facts = host_facts(&html);
    let fact = |k: &str| {
        facts
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{k} in {facts:?}"))
    };
    assert_eq!(fact("CPU"), format!("CPU {HOSTILE}"));
    assert_eq!(fact("libraries"), format!("openssl: OpenSSL {HOSTILE}"));
    let messages: Vec<String> = html
        .select(&sel("#warnings-table tbody tr td:nth-child(6)"))
        .map(|c| c.text().collect())
        .collect();
    assert!(
        messages.contains(&format!("warned {HOSTILE}")),
        "{messages:?}"
    );
    // Shown as text, each once, and in full: no part of it was taken for markup.
    let body = text_of(&html, "body");
    assert_eq!(body.matches(HOSTILE).count(), 3, "each shown once");
}
