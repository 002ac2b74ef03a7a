//! Packet-size models, Γ, the cost model, seed 001's analysis, and the CSV/pcap readers
//! (METHODOLOGY §6). No timing anywhere: everything here is arithmetic or parsing.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use macbench::mac::{algorithm, Algorithm, BlockRule, Family};
use macbench::traffic::paper::{self, Agreement};
use macbench::traffic::{
    builtin, builtins, fit_cost_model, frame_ip_length, hmac_compressions, model_rows, packet_work,
    read_capture, read_capture_from, read_csv, resolve_model, CostModel, CostPoint, FitError,
    FitWeighting, FrameSize, HmacPads, SizeDistribution, BUILTIN_NAMES,
};

fn alg(name: &str) -> &'static Algorithm {
    algorithm(name).unwrap_or_else(|| panic!("registry has no {name}"))
}

fn rule(name: &str) -> BlockRule {
    alg(name).block_rule
}

fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance
}

// ---------------------------------------------------------------- §6 reference values

/// METHODOLOGY §6 table: model, mean bytes, Γ SHA-256, Γ SHA-512, Γ AES.
const REFERENCE: &[(&str, f64, f64, f64, f64)] = &[
    ("uniform", 770.00, 12.665, 6.639, 48.593),
    ("rule-of-thumb", 598.67, 10.000, 5.333, 37.667),
    ("three-impulse", 492.80, 8.300, 4.400, 31.100),
    ("caida", 431.78, 7.277, 3.965, 27.384),
    ("imix", 340.33, 5.917, 3.250, 21.583),
];

#[test]
fn builtin_models_match_methodology_reference_table() {
    let (sha256, sha512, aes) = (
        rule("hmac-sha256"),
        rule("hmac-sha512"),
        rule("cmac-aes128"),
    );
    for &(name, mean, g256, g512, gaes) in REFERENCE {
        let model = builtin(name).expect("built-in");
        assert_eq!(model.name(), name);
        let got = (
            model.mean(),
            model.gamma(sha256),
            model.gamma(sha512),
            model.gamma(aes),
        );
        assert!(close(got.0, mean, 0.005), "{name} mean {}", got.0);
        assert!(close(got.1, g256, 0.0005), "{name} Γ SHA-256 {}", got.1);
        assert!(close(got.2, g512, 0.0005), "{name} Γ SHA-512 {}", got.2);
        assert!(close(got.3, gaes, 0.0005), "{name} Γ AES {}", got.3);
    }
}

#[test]
fn builtin_names_are_listed_in_order_and_all_resolve() {
    assert_eq!(
        BUILTIN_NAMES,
        &["uniform", "rule-of-thumb", "three-impulse", "caida", "imix"]
    );
    let all = builtins();
    assert_eq!(all.len(), 5);
    for (model, name) in all.iter().zip(BUILTIN_NAMES) {
        assert_eq!(model.name(), *name);
        assert!(!model.provenance().is_empty());
        let total: f64 = model.points().iter().map(|p| p.1).sum();
        assert!(close(total, 1.0, 1e-12), "{name} sums to {total}");
        assert!(model.points().windows(2).all(|w| w[0].0 < w[1].0));
    }
    let uniform = builtin("uniform").unwrap();
    assert_eq!(
        (uniform.len(), uniform.min_size(), uniform.max_size()),
        (1461, 40, 1500)
    );
    assert_eq!(builtin("caida").unwrap().len(), 1461);
}

#[test]
fn unknown_model_error_lists_valid_names() {
    let message = builtin("imx").unwrap_err().to_string();
    assert!(message.contains("`imx`"), "{message}");
    for name in BUILTIN_NAMES {
        assert!(message.contains(name), "{message} lacks {name}");
    }
    assert!(!message.contains('\n'));
    let message = resolve_model("no-such-model").unwrap_err().to_string();
    assert!(message.contains("imix") && message.contains("no-such-model"));
}

#[test]
fn nblk_for_sha1_and_sha256_equals_seed_001_formula_for_every_size() {
    for name in ["hmac-sha1", "hmac-sha256", "hmac-md5"] {
        let r = rule(name);
        for size in 1..=65_536u64 {
            assert_eq!(
                r.blocks(size),
                paper::paper_nblk_mac(size),
                "{name} at {size}"
            );
        }
    }
    let aes = rule("cmac-aes128");
    for size in 1..=65_536u64 {
        assert_eq!(
            aes.blocks(size),
            paper::paper_nblk_aes(size),
            "AES at {size}"
        );
    }
    assert_eq!(
        paper::SHA1_RULE,
        rule("hmac-sha1"),
        "paper module uses the registry's rule"
    );
    assert_eq!(paper::AES_RULE, rule("cmac-aes128"));
}

#[test]
fn hmac_compressions_and_block_ops_per_family() {
    assert_eq!(hmac_compressions(5.0, HmacPads::Precomputed), 6.0);
    assert_eq!(hmac_compressions(5.0, HmacPads::Rehashed), 8.0);
    let hmac = packet_work(Family::Hmac, 7.25);
    assert_eq!(
        (hmac.block_ops, hmac.hmac_precomputed, hmac.hmac_rehashed),
        (8.25, Some(8.25), Some(10.25))
    );
    for family in [Family::Cmac, Family::CbcMac] {
        let work = packet_work(family, 27.5);
        assert_eq!(
            (work.block_ops, work.hmac_precomputed, work.hmac_rehashed),
            (27.5, None, None)
        );
    }
}

#[test]
fn model_rows_are_flat_snake_case_and_hmac_only_where_it_applies() {
    let models = [builtin("imix").unwrap(), builtin("caida").unwrap()];
    let algorithms = [alg("hmac-sha256"), alg("cmac-aes128"), alg("hmac-sha512")];
    let rows = model_rows(&models, &algorithms);
    assert_eq!(rows.len(), 6);
    assert_eq!(
        (rows[0].model.as_str(), rows[0].algorithm.as_str()),
        ("imix", "hmac-sha256")
    );
    assert_eq!(
        (rows[5].model.as_str(), rows[5].algorithm.as_str()),
        ("caida", "hmac-sha512")
    );
    let sha = &rows[0];
    assert!(close(sha.gamma, 5.917, 0.0005));
    assert!(close(sha.mean_bytes, 340.33, 0.005));
    assert!(close(
        sha.compressions_per_packet_precomputed.unwrap(),
        sha.gamma + 1.0,
        1e-12
    ));
    assert!(close(
        sha.compressions_per_packet_rehashed.unwrap(),
        sha.gamma + 3.0,
        1e-12
    ));
    let cmac = &rows[1];
    assert!(close(cmac.gamma, 21.583, 0.0005));
    assert_eq!(cmac.block_ops_per_packet, cmac.gamma);
    assert_eq!(cmac.compressions_per_packet_precomputed, None);

    let json = serde_json::to_value(&rows[1]).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "model",
        "mean_bytes",
        "algorithm",
        "gamma",
        "compressions_per_packet_precomputed",
        "compressions_per_packet_rehashed",
        "block_ops_per_packet",
    ] {
        assert!(keys.contains(&key), "missing {key} in {keys:?}");
    }
    assert_eq!(keys.len(), 7);
    assert!(json
        .as_object()
        .unwrap()
        .values()
        .all(|v| !v.is_object() && !v.is_array()));
}

// ---------------------------------------------------------------- distribution and sampler

#[test]
fn from_weights_normalises_merges_and_rejects_bad_input() {
    let d =
        SizeDistribution::from_weights("t", "test", [(100, 2.0), (50, 1.0), (100, 1.0), (70, 0.0)])
            .unwrap();
    assert_eq!(d.points(), &[(50, 0.25), (100, 0.75)]);
    assert!(close(d.mean(), 87.5, 1e-12));
    assert!(SizeDistribution::from_weights("t", "", []).is_err());
    assert!(SizeDistribution::from_weights("t", "", [(1, -1.0)]).is_err());
    assert!(SizeDistribution::from_weights("t", "", [(1, f64::NAN)]).is_err());
    assert!(SizeDistribution::from_weights("t", "", [(1, 0.0), (2, 0.0)]).is_err());
}

#[test]
fn sample_sequence_is_reproducible_and_follows_the_distribution() {
    let imix = builtin("imix").unwrap();
    let a = imix.sample_sequence(42, 120_000);
    assert_eq!(
        a,
        imix.sample_sequence(42, 120_000),
        "same seed, same sequence"
    );
    assert_ne!(a[..64], imix.sample_sequence(43, 64)[..], "seed matters");
    assert_eq!(a.len(), 120_000);
    for (size, p) in imix.points() {
        let share = a.iter().filter(|&&s| s == *size).count() as f64 / a.len() as f64;
        assert!(close(share, *p, 0.01), "size {size}: {share} vs {p}");
    }
    assert!(a.iter().all(|s| [40, 576, 1500].contains(s)));

    // A wide distribution: the sample mean tracks the model mean.
    let caida = builtin("caida").unwrap();
    let seq = caida.sample_sequence(7, 200_000);
    let mean = seq.iter().map(|&s| f64::from(s)).sum::<f64>() / seq.len() as f64;
    assert!(close(mean, caida.mean(), 5.0), "{mean} vs {}", caida.mean());
    assert!(seq.iter().all(|&s| (40..=1500).contains(&s)));

    let one = SizeDistribution::from_weights("one", "", [(576, 1.0)]).unwrap();
    assert!(one.sample_sequence(1, 100).iter().all(|&s| s == 576));
    assert!(imix.sample_sequence(1, 0).is_empty());
}

// ---------------------------------------------------------------- cost model

fn synthetic_sweep(rule: BlockRule, a: f64, b: f64) -> Vec<(u64, f64)> {
    let mut sizes: Vec<u64> = (4..=16).map(|k| 1u64 << k).collect();
    sizes.extend([40, 576, 1500]);
    sizes
        .into_iter()
        .map(|s| (s, a + b * rule.blocks(s) as f64))
        .collect()
}

#[test]
fn cost_fit_recovers_exact_line_and_predicts_with_gamma() {
    let sha = rule("hmac-sha256");
    let model = fit_cost_model(sha, &synthetic_sweep(sha, 450.0, 210.0)).unwrap();
    assert!(close(model.fixed_cycles, 450.0, 1e-6), "{model:?}");
    assert!(close(model.cycles_per_block, 210.0, 1e-9));
    assert!(model.quality.rms_relative_error < 1e-12);
    assert!(model.quality.max_relative_error < 1e-12);
    assert!(close(model.quality.r_squared, 1.0, 1e-12));
    assert_eq!(model.quality.points, 16);

    let imix = builtin("imix").unwrap();
    let predicted = model.predict(&imix);
    assert!(close(predicted, 450.0 + 210.0 * imix.gamma(sha), 1e-9));
    let f = 3.0e9;
    assert!(close(
        model.packets_per_second(&imix, f),
        f / predicted,
        1e-6
    ));
    // A 40-byte forgery costs one block: f / (a + b).
    assert!(close(model.rejection_capacity(40, f), f / 660.0, 1e-6));
    assert!(close(
        model.cycles_for_size(1500),
        450.0 + 210.0 * 24.0,
        1e-9
    ));
}

#[test]
fn cost_fit_reports_error_of_a_noisy_sweep() {
    let aes = rule("cmac-aes128");
    let mut points = synthetic_sweep(aes, 100.0, 20.0);
    // Deterministic ±2 % wobble.
    for (k, p) in points.iter_mut().enumerate() {
        p.1 *= if k % 2 == 0 { 1.02 } else { 0.98 };
    }
    let model = fit_cost_model(aes, &points).unwrap();
    assert!(model.quality.max_relative_error > 0.015 && model.quality.max_relative_error < 0.05);
    assert!(model.quality.rms_relative_error <= model.quality.max_relative_error);
    assert!(model.quality.r_squared > 0.99 && model.quality.r_squared < 1.0);
    assert!(close(model.cycles_per_block, 20.0, 1.0));

    let absolute = CostModel::fit(
        aes,
        &points
            .iter()
            .map(|&(size, cycles_per_message)| CostPoint {
                size,
                cycles_per_message,
            })
            .collect::<Vec<_>>(),
        FitWeighting::Absolute,
    )
    .unwrap();
    assert!(close(absolute.cycles_per_block, 20.0, 1.0));
}

#[test]
fn cost_fit_rejects_degenerate_sweeps() {
    let sha = rule("hmac-sha256");
    assert_eq!(
        fit_cost_model(sha, &[(64, 900.0)]),
        Err(FitError::TooFewPoints(1))
    );
    // 16 and 40 bytes are both one SHA-256 block.
    assert_eq!(
        fit_cost_model(sha, &[(16, 600.0), (40, 610.0)]),
        Err(FitError::OneBlockCount(1))
    );
    let err = fit_cost_model(sha, &[(16, 600.0), (4096, f64::NAN)]).unwrap_err();
    assert!(err.to_string().contains("4096"), "{err}");
    assert!(fit_cost_model(sha, &[(16, 600.0), (4096, 0.0)]).is_err());
}

// ---------------------------------------------------------------- seed 001

#[test]
fn seed_001_gammas_printed_paper_method_and_correct() {
    let a = paper::analysis();
    let g: Vec<_> = a.gammas.iter().collect();
    let models: Vec<&str> = g.iter().map(|r| r.model).collect();
    assert_eq!(
        models,
        ["uniform", "rule-of-thumb", "three-impulse", "caida"]
    );
    // As printed.
    let printed: Vec<(f64, f64)> = g.iter().map(|r| (r.hmac_printed, r.aes_printed)).collect();
    assert_eq!(
        printed,
        [(6.34, 24.34), (10.0, 38.0), (8.3, 31.4), (7.28, 27.51)]
    );
    // What its own method gives (density 0.5/1460, 17 and 37 AES blocks).
    let method = [(6.337, 24.313), (10.0, 38.0), (8.3, 31.4), (7.277, 27.499)];
    // Correct (METHODOLOGY §6).
    let correct = [
        (12.665, 48.593),
        (10.0, 37.667),
        (8.3, 31.1),
        (7.277, 27.384),
    ];
    for (k, row) in g.iter().enumerate() {
        assert!(close(row.hmac_paper_method, method[k].0, 0.0005), "{row:?}");
        assert!(close(row.aes_paper_method, method[k].1, 0.0005), "{row:?}");
        assert!(close(row.hmac_correct, correct[k].0, 0.0005), "{row:?}");
        assert!(close(row.aes_correct, correct[k].1, 0.0005), "{row:?}");
        // Rounded to the printed precision, its method reproduces the HMAC column exactly.
        assert!(
            close(row.hmac_paper_method, row.hmac_printed, 0.005),
            "{row:?}"
        );
    }
    // Its printed partial sums for case (iv) are right.
    for (lo, hi, sum) in paper::PRINTED_CASE_IV_SUMS {
        let got: u64 = (lo..=hi).map(|i| paper::paper_nblk_mac(u64::from(i))).sum();
        assert_eq!(got, sum, "Σ Nblk_MAC {lo}…{hi}");
    }
    // Its printed block counts: all right except AES at 256 and 576.
    for &(size, mac, aes) in paper::PRINTED_BLOCK_COUNTS {
        assert_eq!(mac, rule("hmac-sha1").blocks(u64::from(size)), "MAC {size}");
        let right = rule("cmac-aes128").blocks(u64::from(size));
        if size == 256 || size == 576 {
            assert_eq!(aes, right + 1, "AES {size} is the paper's miscount");
        } else {
            assert_eq!(aes, right, "AES {size}");
        }
    }
}

fn times(cells: &[paper::TimeCell], pick: fn(&paper::TimeCell) -> f64) -> Vec<f64> {
    cells
        .iter()
        .map(|c| (pick(c) * 100.0).round() / 100.0)
        .collect()
}

#[test]
fn seed_001_table_1_fpga_recomputed() {
    let a = paper::analysis();
    assert!(
        close(a.fpga_hash_us, 0.90056, 0.00001),
        "{}",
        a.fpga_hash_us
    );
    assert!(close(a.fpga_hash_us_per_case[0], 0.8790, 0.0001));
    assert!(a.fpga_hash_us_per_case[1..]
        .iter()
        .all(|t| close(*t, a.fpga_hash_us, 0.0011)));
    let t = &a.table1;
    assert_eq!(t.aes_block_us, 0.30708);
    assert_eq!(
        times(&t.hmac_sha1, |c| c.time_printed_us),
        [8.21, 11.71, 10.18, 9.25]
    );
    assert_eq!(
        times(&t.hmac_sha1, |c| c.time_recomputed_us),
        [8.41, 11.71, 10.18, 9.26]
    );
    assert_eq!(
        t.hmac_sha1.iter().map(|c| c.agreement).collect::<Vec<_>>(),
        [
            Agreement::Discrepancy,
            Agreement::Exact,
            Agreement::Exact,
            Agreement::Rounding
        ]
    );
    assert_eq!(
        times(&t.cbc_mac_aes, |c| c.time_recomputed_us),
        [7.47, 11.67, 9.64, 8.45]
    );
    assert_eq!(t.cbc_mac_aes[0].agreement, Agreement::Rounding);
    assert!(t.cbc_mac_aes[1..]
        .iter()
        .all(|c| c.agreement == Agreement::Exact));
    // With the correct Γ.
    assert_eq!(
        times(&t.hmac_sha1, |c| c.time_correct_us),
        [14.11, 11.71, 10.18, 9.25]
    );
    assert_eq!(
        times(&t.hmac_sha1, |c| c.time_correct_precomputed_us.unwrap()),
        [12.31, 9.91, 8.38, 7.45]
    );
    assert_eq!(
        times(&t.cbc_mac_aes, |c| c.time_correct_us),
        [14.92, 11.57, 9.55, 8.41]
    );
}

#[test]
fn seed_001_table_2_software_recomputed() {
    let t = paper::analysis().table2;
    assert_eq!((t.hash_block_us, t.aes_block_us), (3.001, 1.14));
    assert_eq!(
        times(&t.hmac_sha1, |c| c.time_recomputed_us),
        [28.03, 39.01, 33.91, 30.85]
    );
    assert_eq!(
        times(&t.hmac_sha1, |c| c.time_printed_us),
        [28.03, 39.01, 33.91, 30.84]
    );
    assert_eq!(t.hmac_sha1[3].agreement, Agreement::Rounding);
    assert_eq!(
        times(&t.cbc_mac_aes, |c| c.time_recomputed_us),
        [27.75, 43.32, 35.80, 31.36]
    );
    assert!(t
        .cbc_mac_aes
        .iter()
        .all(|c| c.agreement == Agreement::Exact));
    assert_eq!(
        times(&t.hmac_sha1, |c| c.time_correct_us),
        [47.01, 39.01, 33.91, 30.84]
    );
    assert_eq!(
        times(&t.cbc_mac_aes, |c| c.time_correct_us),
        [55.40, 42.94, 35.45, 31.22]
    );
}

#[test]
fn seed_001_report_is_readable_and_names_the_errata() {
    let report = paper::paper_report();
    for needle in [
        "0.5/1460",
        "12.665",
        "48.593",
        "6.34",
        "24.31",
        "37.667",
        "31.100",
        "27.384",
        "17 blocks for 256",
        "Table 1",
        "Table 2",
        "8.41!",
        "0.9006",
        "Γ + 1",
    ] {
        assert!(
            report.contains(needle),
            "report lacks {needle:?}:\n{report}"
        );
    }
    assert_eq!(
        paper::analysis().errata.len(),
        7,
        "errata changed: update the report test"
    );
}

// ---------------------------------------------------------------- CSV models

fn temp_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn csv_model_with_header_comments_and_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_file(
        &dir,
        "mix.csv",
        b"# my link\r\nsize,weight\r\n40, 7\r\n\r\n576,3\n1500,1\n576,1\n",
    );
    let d = read_csv(&path).unwrap();
    assert_eq!(d.name(), "mix");
    let imix = builtin("imix").unwrap();
    assert_eq!(d.len(), 3);
    for ((s1, p1), (s2, p2)) in d.points().iter().zip(imix.points()) {
        assert_eq!(s1, s2);
        assert!(close(*p1, *p2, 1e-12));
    }
    assert!(d.provenance().contains("mix.csv"));

    // No header, float sizes that are whole numbers, scientific weights.
    let path = temp_file(&dir, "bare.csv", b"1500.0,1e-1\n40,0.9");
    let d = read_csv(&path).unwrap();
    assert_eq!(d.points(), &[(40, 0.9), (1500, 0.1)]);
    assert_eq!(resolve_model(path.to_str().unwrap()).unwrap(), d);
}

fn csv_error(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_file(&dir, name, text.as_bytes());
    let message = read_csv(&path).unwrap_err().to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(message.contains(name), "names the file: {message}");
    message
}

#[test]
fn csv_errors_name_file_and_line() {
    let m = csv_error("empty.csv", "");
    assert!(m.contains("empty.csv:1:") && m.contains("empty"), "{m}");
    let m = csv_error("blank.csv", "\n# only a comment\n\n");
    assert!(m.contains("blank.csv:4:") && m.contains("empty"), "{m}");
    let m = csv_error("header.csv", "size,weight\n");
    assert!(
        m.contains("header.csv:2:") && m.contains("no data rows"),
        "{m}"
    );
    let m = csv_error("neg.csv", "size,weight\n40,1\n576,-0.5\n");
    assert!(
        m.contains("neg.csv:3:") && m.contains("-0.5") && m.contains("negative"),
        "{m}"
    );
    let m = csv_error("zero.csv", "40,0\n576,0\n1500,0\n");
    assert!(m.contains("zero.csv:3:") && m.contains("sum to 0"), "{m}");
    let m = csv_error("word.csv", "40,1\nbig,2\n");
    assert!(m.contains("word.csv:2:") && m.contains("`big`"), "{m}");
    let m = csv_error("weight.csv", "40,1\n576,lots\n");
    assert!(m.contains("weight.csv:2:") && m.contains("`lots`"), "{m}");
    let m = csv_error("nan.csv", "40,NaN\n");
    assert!(m.contains("nan.csv:1:") && m.contains("NaN"), "{m}");
    let m = csv_error("size0.csv", "0,1\n");
    assert!(m.contains("size0.csv:1:") && m.contains("1…65535"), "{m}");
    let m = csv_error("huge.csv", "40,1\n65535,1\n65536,1\n");
    assert!(m.contains("huge.csv:3:") && m.contains("65536"), "{m}");
    let m = csv_error("frac.csv", "40.5,1\n");
    assert!(
        m.contains("frac.csv:1:") && m.contains("whole number"),
        "{m}"
    );
    let m = csv_error("fields.csv", "40,1,2\n");
    assert!(m.contains("fields.csv:1:") && m.contains("found 3"), "{m}");
    let m = csv_error("semi.csv", "40;1\n");
    assert!(m.contains("semi.csv:1:") && m.contains("found 1"), "{m}");

    let missing = Path::new("/nonexistent/dir/model.csv");
    let m = read_csv(missing).unwrap_err().to_string();
    assert!(m.contains("model.csv") && m.contains("cannot read"), "{m}");
}

// ---------------------------------------------------------------- captures: hand-made bytes

/// A legacy pcap file: little-endian (or big-endian) header, then records.
fn pcap(link_type: u32, frames: &[Vec<u8>], big_endian: bool) -> Vec<u8> {
    let u32b = |v: u32| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u16b = |v: u16| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut out = Vec::new();
    out.extend(u32b(0xa1b2_c3d4));
    out.extend(u16b(2));
    out.extend(u16b(4));
    out.extend(u32b(0)); // thiszone
    out.extend(u32b(0)); // sigfigs
    out.extend(u32b(65_535)); // snaplen
    out.extend(u32b(link_type));
    for (k, frame) in frames.iter().enumerate() {
        out.extend(u32b(1_700_000_000 + k as u32));
        out.extend(u32b(0));
        out.extend(u32b(frame.len() as u32)); // caplen
        out.extend(u32b(frame.len() as u32 + 1000)); // origlen: the wire had more
        out.extend(frame);
    }
    out
}

fn pad4(data: &[u8]) -> Vec<u8> {
    let mut v = data.to_vec();
    while v.len() % 4 != 0 {
        v.push(0);
    }
    v
}

fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let total = 12 + body.len() as u32;
    let mut out = kind.to_le_bytes().to_vec();
    out.extend(total.to_le_bytes());
    out.extend(body);
    out.extend(total.to_le_bytes());
    out
}

/// A little-endian pcapng: one section, interfaces of the given link types, then packets as
/// (interface, frame) in Enhanced Packet Blocks, or a Simple Packet Block for `None`.
fn pcapng(link_types: &[u16], packets: &[(Option<u32>, Vec<u8>)]) -> Vec<u8> {
    let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
    shb.extend(1u16.to_le_bytes());
    shb.extend(0u16.to_le_bytes());
    shb.extend((-1i64).to_le_bytes());
    let mut out = block(0x0a0d_0d0a, &shb);
    for &lt in link_types {
        let mut idb = lt.to_le_bytes().to_vec();
        idb.extend(0u16.to_le_bytes());
        idb.extend(262_144u32.to_le_bytes());
        out.extend(block(1, &idb));
    }
    for (interface, frame) in packets {
        match interface {
            Some(id) => {
                let mut epb = id.to_le_bytes().to_vec();
                epb.extend(0u32.to_le_bytes());
                epb.extend(0u32.to_le_bytes());
                epb.extend((frame.len() as u32).to_le_bytes());
                epb.extend((frame.len() as u32).to_le_bytes());
                epb.extend(pad4(frame));
                out.extend(block(6, &epb));
            }
            None => {
                let mut spb = (frame.len() as u32).to_le_bytes().to_vec();
                spb.extend(pad4(frame));
                out.extend(block(3, &spb));
            }
        }
    }
    out
}

/// An IPv4 header claiming `total` bytes; only the header is captured (a small snap length).
fn ipv4(total: u16) -> Vec<u8> {
    let mut h = vec![0u8; 20];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[8] = 64;
    h[9] = 6;
    h
}

/// An IPv6 header with `payload` bytes of payload (total = payload + 40).
fn ipv6(payload: u16) -> Vec<u8> {
    let mut h = vec![0u8; 40];
    h[0] = 0x60;
    h[4..6].copy_from_slice(&payload.to_be_bytes());
    h[6] = 17;
    h[7] = 64;
    h
}

fn ethernet(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xaa; 6];
    f.extend([0xbb; 6]);
    f.extend(ethertype.to_be_bytes());
    f.extend(payload);
    f
}

fn vlan(tags: &[u16], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xaa; 6];
    f.extend([0xbb; 6]);
    for &tpid in tags {
        f.extend(tpid.to_be_bytes());
        f.extend(0x0064u16.to_be_bytes()); // VLAN 100
    }
    f.extend(ethertype.to_be_bytes());
    f.extend(payload);
    f
}

fn arp() -> Vec<u8> {
    ethernet(
        0x0806,
        &[0, 1, 8, 0, 6, 4, 0, 1, 1, 2, 3, 4, 5, 6, 10, 0, 0, 1],
    )
}

fn sll(protocol: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0];
    f.extend(protocol.to_be_bytes());
    f.extend(payload);
    f
}

fn sll2(protocol: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = protocol.to_be_bytes().to_vec();
    f.extend([0, 0, 0, 0, 0, 2, 0, 1, 0, 6]);
    f.extend([1, 2, 3, 4, 5, 6, 0, 0]);
    f.extend(payload);
    assert_eq!(f.len(), 20 + payload.len());
    f
}

fn null_le(family: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = family.to_le_bytes().to_vec();
    f.extend(payload);
    f
}

fn loop_be(family: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = family.to_be_bytes().to_vec();
    f.extend(payload);
    f
}

#[test]
fn pcap_ethernet_with_vlans_and_a_skipped_arp_frame() {
    let dir = tempfile::tempdir().unwrap();
    let frames = vec![
        ethernet(0x0800, &ipv4(40)),
        vlan(&[0x8100], 0x0800, &ipv4(576)),
        vlan(&[0x88a8, 0x8100], 0x86dd, &ipv6(1460)),
        arp(),
        ethernet(0x0800, &ipv4(40)),
    ];
    for big_endian in [false, true] {
        let path = temp_file(&dir, "eth.pcap", &pcap(1, &frames, big_endian));
        let capture = read_capture(&path).unwrap();
        let s = &capture.summary;
        assert_eq!(s.format, "pcap");
        assert_eq!(s.link_types, [1]);
        assert_eq!(
            (s.records, s.ipv4_packets, s.ipv6_packets, s.skipped_non_ip),
            (5, 3, 1, 1)
        );
        assert_eq!(s.skipped_malformed, 0);
        assert_eq!(
            capture.distribution.points(),
            &[(40, 0.5), (576, 0.25), (1500, 0.25)]
        );
        assert_eq!(capture.distribution.name(), "eth");
        assert!(capture.distribution.provenance().contains("1 non-IP"));
    }
}

#[test]
fn pcap_every_supported_link_type() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(u32, Vec<Vec<u8>>)> = vec![
        (
            113,
            vec![
                sll(0x0800, &ipv4(100)),
                sll(0x86dd, &ipv6(60)),
                sll(0x0806, &[0; 28]),
            ],
        ),
        (
            276,
            vec![
                sll2(0x0800, &ipv4(100)),
                sll2(0x86dd, &ipv6(60)),
                sll2(0x88cc, &[0; 10]),
            ],
        ),
        (101, vec![ipv4(100), ipv6(60)]),
        (12, vec![ipv4(100), ipv6(60)]),
        (14, vec![ipv4(100), ipv6(60)]),
        (228, vec![ipv4(100), ipv4(100)]),
        (229, vec![ipv6(60), ipv6(60)]),
        (
            0,
            vec![
                null_le(2, &ipv4(100)),
                null_le(30, &ipv6(60)),
                null_le(10, &ipv6(60)),
            ],
        ),
        (
            108,
            vec![
                loop_be(2, &ipv4(100)),
                loop_be(24, &ipv6(60)),
                loop_be(7, &[1, 2]),
            ],
        ),
    ];
    for (link_type, frames) in cases {
        let path = temp_file(
            &dir,
            &format!("lt{link_type}.pcap"),
            &pcap(link_type, &frames, false),
        );
        let capture = read_capture(&path).unwrap_or_else(|e| panic!("link type {link_type}: {e}"));
        assert_eq!(capture.summary.link_types, [link_type as u16]);
        let points = capture.distribution.points();
        assert!(
            points.iter().all(|&(s, _)| s == 100),
            "link type {link_type}: {points:?}"
        );
        assert_eq!(
            capture.summary.ip_packets() + capture.summary.skipped_non_ip,
            frames.len() as u64,
            "link type {link_type}: {:?}",
            capture.summary
        );
    }
}

#[test]
fn ip_length_comes_from_the_header_not_the_captured_bytes() {
    // Truncated captures: only 20 bytes of a 1500-byte packet; and a 40-byte IPv6 header only.
    assert_eq!(
        frame_ip_length(101, &ipv4(1500)),
        Some(FrameSize::Ipv4(1500))
    );
    assert_eq!(
        frame_ip_length(101, &ipv6(1460)),
        Some(FrameSize::Ipv6(1500))
    );
    assert_eq!(
        frame_ip_length(101, &ipv6(65_535)),
        Some(FrameSize::Ipv6(65_575))
    );
    // Malformed: IHL below 5, total shorter than the header, empty, wrong version for the type.
    let mut bad = ipv4(100);
    bad[0] = 0x44;
    assert_eq!(frame_ip_length(228, &bad), Some(FrameSize::Malformed));
    assert_eq!(frame_ip_length(228, &ipv4(0)), Some(FrameSize::Malformed));
    assert_eq!(frame_ip_length(1, &[0; 5]), Some(FrameSize::Malformed));
    assert_eq!(frame_ip_length(229, &ipv4(100)), Some(FrameSize::Malformed));
    // IPv6 jumbogram: payload length 0 with a hop-by-hop header.
    let mut jumbo = ipv6(0);
    jumbo[6] = 0;
    assert_eq!(frame_ip_length(229, &jumbo), Some(FrameSize::Malformed));
    assert_eq!(
        frame_ip_length(1, &vlan(&[0x8100], 0x0800, &[])),
        Some(FrameSize::Malformed)
    );
    assert_eq!(frame_ip_length(1, &arp()), Some(FrameSize::NotIp));
    assert_eq!(frame_ip_length(105, &ipv4(100)), None);
}

/// A size is read only from a whole IP header (etherparse's header slices): a header cut short by
/// the snap length is malformed, not half-read.
#[test]
fn an_ip_header_cut_short_is_malformed() {
    assert_eq!(
        frame_ip_length(101, &ipv4(1500)[..19]),
        Some(FrameSize::Malformed)
    );
    assert_eq!(
        frame_ip_length(229, &ipv6(1460)[..39]),
        Some(FrameSize::Malformed)
    );
    // IHL 6: a 24-byte header, of which 20 bytes were captured; with its options it counts.
    let mut with_options = ipv4(1500);
    with_options[0] = 0x46;
    assert_eq!(
        frame_ip_length(228, &with_options),
        Some(FrameSize::Malformed)
    );
    with_options.extend([1, 1, 1, 0]);
    assert_eq!(
        frame_ip_length(228, &with_options),
        Some(FrameSize::Ipv4(1500))
    );
    assert_eq!(
        frame_ip_length(1, &ethernet(0x0800, &ipv4(1500)[..10])),
        Some(FrameSize::Malformed)
    );
}

/// What the hand-read link headers are kept for (src/traffic/capture.rs): SLL from `tcpdump -i any`
/// on loopback and tun devices, whose hardware types etherparse's SLL reader refuses, and VLAN
/// stacks deeper than etherparse's packet slicers follow.
#[test]
fn sll_from_loopback_and_tun_devices_and_deep_vlan_stacks_give_sizes() {
    for hardware_type in [1u16, 772, 0xfffe, 512] {
        let mut frame = sll(0x0800, &ipv4(100));
        frame[2..4].copy_from_slice(&hardware_type.to_be_bytes());
        assert_eq!(
            frame_ip_length(113, &frame),
            Some(FrameSize::Ipv4(100)),
            "ARPHRD {hardware_type}"
        );
    }
    let deep = vlan(&[0x88a8, 0x8100, 0x8100, 0x9100, 0x8100], 0x86dd, &ipv6(60));
    assert_eq!(frame_ip_length(1, &deep), Some(FrameSize::Ipv6(100)));
    assert_eq!(
        frame_ip_length(1, &deep[..deep.len() - 42]),
        Some(FrameSize::Malformed),
        "the innermost tag cut"
    );
}

#[test]
fn pcapng_interfaces_simple_packets_and_unsupported_interfaces() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = pcapng(
        &[1, 147, 113],
        &[
            (Some(0), ethernet(0x0800, &ipv4(52))),
            (Some(1), ipv4(999)), // USER0: skipped, counted
            (Some(2), sll(0x86dd, &ipv6(100))),
            (None, ethernet(0x0800, &ipv4(1500))), // SPB: interface 0
            (Some(0), arp()),
        ],
    );
    let path = temp_file(&dir, "mixed.pcapng", &bytes);
    let capture = read_capture(&path).unwrap();
    let s = &capture.summary;
    assert_eq!(s.format, "pcapng");
    assert_eq!(s.link_types, [1, 113, 147]);
    assert_eq!(
        (
            s.records,
            s.ipv4_packets,
            s.ipv6_packets,
            s.skipped_non_ip,
            s.skipped_unsupported_link
        ),
        (5, 2, 1, 1, 1)
    );
    let third = 1.0 / 3.0;
    let points = capture.distribution.points();
    assert_eq!(
        points.iter().map(|p| p.0).collect::<Vec<_>>(),
        [52, 140, 1500]
    );
    assert!(points.iter().all(|p| close(p.1, third, 1e-12)));
}

#[test]
fn pcap_records_larger_than_the_read_buffer() {
    // A 300,000-byte record (e.g. a GRO super-frame captured with a huge snap length) forces the
    // streaming buffer to grow; the IP header still says 1500.
    let mut big = ethernet(0x0800, &ipv4(1500));
    big.resize(300_000, 0x5a);
    let frames = vec![big, ethernet(0x0800, &ipv4(40))];
    let dir = tempfile::tempdir().unwrap();
    let path = temp_file(&dir, "big.pcap", &pcap(1, &frames, false));
    let capture = read_capture(&path).unwrap();
    assert_eq!(capture.distribution.points(), &[(40, 0.5), (1500, 0.5)]);
    assert_eq!(
        resolve_model(path.to_str().unwrap()).unwrap(),
        capture.distribution
    );
}

fn capture_error(name: &str, bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_file(&dir, name, bytes);
    let message = read_capture(&path).unwrap_err().to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(message.contains(name), "names the file: {message}");
    message
}

#[test]
fn capture_errors_name_file_and_offset() {
    let good = pcap(
        1,
        &[ethernet(0x0800, &ipv4(40)), ethernet(0x0800, &ipv4(576))],
        false,
    );
    // Record 1 is 16 + 34 bytes at byte 24; record 2 starts at byte 74.
    let m = capture_error("cut.pcap", &good[..good.len() - 10]);
    assert!(
        m.contains("truncated at byte 74") && m.contains("record"),
        "{m}"
    );
    let m = capture_error("cut-header.pcap", &good[..80]);
    assert!(m.contains("truncated at byte 74"), "{m}");
    let m = capture_error("short.pcap", &good[..10]);
    assert!(
        m.contains("truncated at byte 0") && m.contains("file header"),
        "{m}"
    );

    let mut garbage = good.clone();
    garbage[..4].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    let m = capture_error("garbage.pcap", &garbage);
    assert!(
        m.contains("not a pcap or pcapng file") && m.contains("deadbeef"),
        "{m}"
    );
    let m = capture_error("text.pcap", b"size,weight\n40,1\n");
    assert!(m.contains("not a pcap or pcapng file"), "{m}");

    let m = capture_error("wifi.pcap", &pcap(105, &[ipv4(40)], false));
    assert!(
        m.contains("unsupported link type 105 (IEEE802_11)") && m.contains("byte 20"),
        "{m}"
    );
    assert!(m.contains("1 ETHERNET"), "lists what is supported: {m}");
    let m = capture_error("usb.pcapng", &pcapng(&[220], &[(Some(0), vec![0; 64])]));
    assert!(
        m.contains("unsupported link type 220 (USB_LINUX_MMAPPED)"),
        "{m}"
    );
    // Section header 28 bytes + IDB 20 bytes: the packet block starts at byte 48.
    assert!(m.contains("at byte 48"), "{m}");

    let m = capture_error("arp-only.pcap", &pcap(1, &[arp(), arp()], false));
    assert!(
        m.contains("no IP packets") && m.contains("2 records") && m.contains("2 non-IP"),
        "{m}"
    );
    let m = capture_error("headers-only.pcap", &pcap(1, &[], false));
    assert!(m.contains("no IP packets: 0 records"), "{m}");
    let m = capture_error("empty.pcap", b"");
    assert!(m.contains("file is empty"), "{m}");

    // A record claiming a 4 GiB capture length.
    let mut huge = pcap(1, &[ethernet(0x0800, &ipv4(40))], false);
    huge[32..36].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    let m = capture_error("huge.pcap", &huge);
    assert!(m.contains("byte 24"), "{m}");

    // pcapng: packet on an interface that was never described.
    let m = capture_error(
        "noif.pcapng",
        &pcapng(&[1], &[(Some(3), ethernet(0x0800, &ipv4(40)))]),
    );
    assert!(
        m.contains("corrupt at byte 48") && m.contains("interface 3"),
        "{m}"
    );
    let ng = pcapng(&[1], &[(Some(0), ethernet(0x0800, &ipv4(40)))]);
    let m = capture_error("cut.pcapng", &ng[..ng.len() - 3]);
    assert!(m.contains("truncated at byte 48"), "{m}");
    let m = capture_error("cut-shb.pcapng", &ng[..12]);
    assert!(m.contains("cut-shb.pcapng") && m.contains("byte 0"), "{m}");

    let m = read_capture(Path::new("/nonexistent/x.pcap"))
        .unwrap_err()
        .to_string();
    assert!(m.contains("x.pcap") && m.contains("cannot read"), "{m}");
}

// ---------------------------------------------------------------- captures: a real one

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// tests/data/loopback-http.pcap: 80 packets of `python3 -m http.server` on 127.0.0.1 and ::1
/// fetched by curl, captured by tcpdump on `lo` (Ethernet link type). The reference sizes were
/// counted independently by tshark (tests/data/loopback-http.sizes.csv).
#[test]
fn real_capture_matches_tshark_reference() {
    let reference = read_csv(&data("loopback-http.sizes.csv")).unwrap();
    for file in [
        "loopback-http.pcap",
        "loopback-http.pcapng",
        "loopback-http-snap64.pcapng",
    ] {
        let capture = read_capture(&data(file)).unwrap();
        let s = &capture.summary;
        assert_eq!(s.link_types, [1], "{file}");
        assert_eq!(
            (s.records, s.ipv4_packets, s.ipv6_packets, s.skipped_non_ip),
            (80, 61, 19, 0),
            "{file}"
        );
        let got = capture.distribution.points();
        assert_eq!(got.len(), reference.len(), "{file}");
        for ((s1, p1), (s2, p2)) in got.iter().zip(reference.points()) {
            assert_eq!(s1, s2, "{file}");
            assert!(close(*p1, *p2, 1e-12), "{file} size {s1}");
        }
        assert_eq!(capture.distribution.max_size(), 20_052);
    }
    let via_cli = resolve_model(data("loopback-http.pcapng").to_str().unwrap()).unwrap();
    assert_eq!(via_cli.name(), "loopback-http");
}

// ---------------------------------------------------------------- never panic, and what holds

/// Hostile bytes give a capture that keeps every invariant, or a one-line error naming the file; the
/// property tests below assert this of every outcome, not only that nothing panicked.
mod never_panics {
    use super::*;
    use macbench::traffic::{
        Capture, CaptureError, CaptureErrorKind, MAX_CAPTURE_SIZE, MIN_CAPTURE_SIZE,
        SUPPORTED_LINK_TYPES,
    };
    use proptest::prelude::*;

    /// The property tests' configuration, from this file's own seed.
    fn fixed_seed_config(cases: u32) -> ProptestConfig {
        crate::common::fixed_seed_config(cases, 0x7472_6166_6669_6321)
    }

    const PCAP_MAGICS: [[u8; 4]; 5] = [
        [0xa1, 0xb2, 0xc3, 0xd4],
        [0xd4, 0xc3, 0xb2, 0xa1],
        [0xa1, 0xb2, 0x3c, 0x4d],
        [0x4d, 0x3c, 0xb2, 0xa1],
        [0x0a, 0x0d, 0x0d, 0x0a],
    ];

    /// What must hold of any outcome of reading `path`: an `Ok` capture is a distribution (weights
    /// sum to 1 within 1e-9, every weight in (0, 1], sizes strictly increasing and within the IP
    /// bounds) whose summary accounts for every record exactly once; an `Err` names the file in one
    /// line.
    fn check(path: &str, outcome: &Result<Capture, CaptureError>) -> Result<(), TestCaseError> {
        match outcome {
            Ok(capture) => {
                let d = &capture.distribution;
                let points = d.points();
                prop_assert!(!points.is_empty());
                let total: f64 = points.iter().map(|&(_, p)| p).sum();
                prop_assert!((total - 1.0).abs() <= 1e-9, "weights sum to {}", total);
                for &(size, p) in points {
                    prop_assert!(p > 0.0 && p <= 1.0, "weight {} at size {}", p, size);
                    prop_assert!(
                        (MIN_CAPTURE_SIZE..=MAX_CAPTURE_SIZE).contains(&size),
                        "size {} out of bounds",
                        size
                    );
                }
                prop_assert!(
                    points.windows(2).all(|w| w[0].0 < w[1].0),
                    "sizes not increasing"
                );
                let s = &capture.summary;
                prop_assert!(s.ip_packets() > 0);
                prop_assert_eq!(
                    s.records,
                    s.ip_packets()
                        + s.skipped_non_ip
                        + s.skipped_malformed
                        + s.skipped_unsupported_link,
                    "{:?}",
                    s
                );
                prop_assert!(
                    s.link_types.windows(2).all(|w| w[0] < w[1]),
                    "{:?}",
                    s.link_types
                );
                prop_assert_eq!(d.name(), "fuzz");
            }
            Err(e) => {
                prop_assert_eq!(e.path.as_path(), Path::new(path));
                let line = e.to_string();
                prop_assert!(line.starts_with(&format!("{path}: ")), "{}", line);
                prop_assert!(!line.contains('\n'), "{:?}", line);
            }
        }
        Ok(())
    }

    /// One record's contents before framing: arbitrary bytes, or an IPv4/IPv6 header.
    #[derive(Debug, Clone)]
    enum Contents {
        Bytes(Vec<u8>),
        Ipv4(u16),
        Ipv6(u16),
    }

    impl Contents {
        /// The record as a capture of `link_type` holds it: IP headers in the link's framing.
        fn framed(&self, link_type: u32) -> Vec<u8> {
            let (ip, ethertype, family) = match self {
                Contents::Bytes(bytes) => return bytes.clone(),
                Contents::Ipv4(total) => (ipv4(*total), 0x0800, 2),
                Contents::Ipv6(payload) => (ipv6(*payload), 0x86dd, 10),
            };
            match link_type {
                0 => null_le(family, &ip),
                1 => ethernet(ethertype, &ip),
                108 => loop_be(family, &ip),
                113 => sll(ethertype, &ip),
                276 => sll2(ethertype, &ip),
                _ => ip,
            }
        }
    }

    fn frame_contents() -> impl Strategy<Value = Contents> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..80).prop_map(Contents::Bytes),
            any::<u16>().prop_map(Contents::Ipv4),
            any::<u16>().prop_map(Contents::Ipv6),
        ]
    }

    proptest! {
        #![proptest_config(fixed_seed_config(512))]

        #[test]
        fn on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let outcome = read_capture_from(Path::new("fuzz.pcap"), std::io::Cursor::new(bytes.clone()), None);
            check("fuzz.pcap", &outcome)?;
            if bytes.len() >= 4 && !PCAP_MAGICS.iter().any(|m| bytes[..4] == m[..]) {
                // Not a capture, and the error quotes the four bytes it found instead of a magic.
                match outcome {
                    Err(CaptureError { kind: CaptureErrorKind::NotACapture { magic }, .. }) => {
                        prop_assert_eq!(magic, hex::encode(&bytes[..4]));
                    }
                    other => prop_assert!(false, "expected NotACapture, got {:?}", other),
                }
            }
        }

        #[test]
        fn on_bytes_after_a_valid_pcap_header(
            link_type in prop::sample::select(vec![0u32, 1, 12, 14, 101, 108, 113, 228, 229, 276]),
            frames in proptest::collection::vec(frame_contents(), 0..4),
            junk in prop_oneof![Just(Vec::new()), proptest::collection::vec(any::<u8>(), 1..400)],
        ) {
            // Well-framed records (random bytes or an IP header in the link's framing), then maybe
            // junk: the reader gets past the header, and often past every record.
            let frames: Vec<Vec<u8>> = frames.iter().map(|f| f.framed(link_type)).collect();
            let mut bytes = pcap(link_type, &frames, false);
            bytes.extend(&junk);
            let outcome = read_capture_from(Path::new("fuzz.pcap"), std::io::Cursor::new(bytes), None);
            check("fuzz.pcap", &outcome)?;
            match outcome {
                // The header was valid: whatever went wrong came after it.
                Err(CaptureError { kind: kind @ (CaptureErrorKind::Empty | CaptureErrorKind::NotACapture { .. }), .. }) => {
                    prop_assert!(false, "a valid header read as {:?}", kind);
                }
                Err(CaptureError { kind: CaptureErrorKind::NoIpPackets { records, .. }, .. }) if junk.is_empty() => {
                    prop_assert_eq!(records, frames.len() as u64);
                }
                Err(e) => prop_assert!(!junk.is_empty(), "well-framed records only, yet {}", e),
                Ok(capture) => {
                    prop_assert_eq!(capture.summary.format, "pcap");
                    prop_assert_eq!(capture.summary.link_types, vec![link_type as u16]);
                    if junk.is_empty() {
                        prop_assert_eq!(capture.summary.records, frames.len() as u64);
                    }
                }
            }
        }

        #[test]
        fn on_mutated_pcapng(
            flips in proptest::collection::vec((0usize..200, any::<u8>()), 0..6),
            cut in prop_oneof![Just(usize::MAX), 0usize..240],
        ) {
            // 228 bytes whole: either kept whole or cut anywhere, after up to five flipped bytes.
            let mut bytes = pcapng(
                &[1, 276],
                &[(Some(0), ethernet(0x0800, &ipv4(40))), (Some(1), sll2(0x86dd, &ipv6(9)))],
            );
            let pristine = flips.is_empty() && cut >= bytes.len();
            for (at, value) in flips {
                if let Some(b) = bytes.get_mut(at) {
                    *b = value;
                }
            }
            bytes.truncate(cut.max(1));
            let outcome = read_capture_from(Path::new("fuzz.pcapng"), std::io::Cursor::new(bytes), None);
            check("fuzz.pcapng", &outcome)?;
            if let Ok(capture) = &outcome {
                prop_assert_eq!(capture.summary.format, "pcapng");
            }
            if pristine {
                let capture = outcome.map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(capture.distribution.points(), &[(40, 0.5), (49, 0.5)][..]);
            }
        }

        #[test]
        fn frame_parsing_on_arbitrary_frames(
            link_type in any::<u16>(),
            frame in proptest::collection::vec(any::<u8>(), 0..80),
        ) {
            let size = frame_ip_length(link_type, &frame);
            // `None` exactly for the link types macbench cannot read; sizes within the IP bounds.
            prop_assert_eq!(size.is_some(), SUPPORTED_LINK_TYPES.contains(&link_type));
            match size {
                Some(FrameSize::Ipv4(n)) => prop_assert!((20..=65_535).contains(&n), "IPv4 {}", n),
                Some(FrameSize::Ipv6(n)) => prop_assert!((40..=MAX_CAPTURE_SIZE).contains(&n), "IPv6 {}", n),
                Some(FrameSize::NotIp | FrameSize::Malformed) | None => {}
            }
        }
    }

    #[test]
    fn empty_input_and_empty_frames() {
        // Edge cases as fixed cases of their own (STYLE §12).
        let empty = read_capture_from(
            Path::new("fuzz.pcap"),
            std::io::Cursor::new(Vec::new()),
            None,
        );
        assert!(
            matches!(
                &empty,
                Err(CaptureError {
                    kind: CaptureErrorKind::Empty,
                    ..
                })
            ),
            "{empty:?}"
        );
        for &link_type in SUPPORTED_LINK_TYPES {
            assert_eq!(
                frame_ip_length(link_type, &[]),
                Some(FrameSize::Malformed),
                "link type {link_type}"
            );
        }
    }
}
