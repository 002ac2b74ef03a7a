//! `macbench compare`: peer-output parsers on real captured outputs (tests/data/peers/, captured on an
//! AMD EPYC with Debian 12's openssl 3.0.19, botan 2.19.3 and libcrypto++-utils 8.7.0), a missing peer
//! reported as a row, and one short end-to-end run against openssl.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::peers::{self as compare, Peer};
use predicates::prelude::*;

fn data(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/data/peers/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn openssl_speed_mr_one_size_per_run() {
    let points = compare::parse_openssl_mr(&data("openssl-speed-mr.txt")).unwrap();
    assert_eq!(points.len(), 8);
    let hmac: Vec<_> = points
        .iter()
        .filter(|p| p.algorithm == "hmac(sha256)")
        .collect();
    assert_eq!(
        hmac.iter().map(|p| p.size.unwrap()).collect::<Vec<_>>(),
        [16, 64, 1024, 16384]
    );
    assert_eq!(hmac[1].bytes_per_second, 219863693.62);
    let cmac = points
        .iter()
        .find(|p| p.algorithm == "cmac(aes-128-cbc)" && p.size == Some(16384))
        .unwrap();
    assert_eq!(cmac.bytes_per_second, 961658052.53);
}

#[test]
fn openssl_speed_mr_default_sizes() {
    let points = compare::parse_openssl_mr(&data("openssl-speed-mr-default-sizes.txt")).unwrap();
    let sizes: Vec<u32> = points.iter().map(|p| p.size.unwrap()).collect();
    assert_eq!(sizes, [16, 64, 256, 1024, 8192, 16384]);
    assert_eq!(points[5].bytes_per_second, 1538273510.11);
}

#[test]
fn openssl_bad_output_is_an_error() {
    assert!(compare::parse_openssl_mr("").is_err());
    assert!(compare::parse_openssl_mr("+H:16:64\n+F:9:hmac(sha256):1.0\n").is_err());
}

#[test]
fn botan_speed_json() {
    let points = compare::parse_botan_json(&data("botan-speed.json")).unwrap();
    assert_eq!(points.len(), 8);
    let p = points
        .iter()
        .find(|p| p.algorithm == "CMAC(AES-128)" && p.size == Some(1024))
        .unwrap();
    assert_eq!(p.bytes_per_second, 525559049.0);
    assert!(compare::parse_botan_json("[]").is_err());
}

#[test]
fn cryptest_b2_html_rows() {
    let points = compare::parse_cryptest(&data("cryptest-b2.html.txt")).unwrap();
    let hmac = points
        .iter()
        .find(|p| p.algorithm == "HMAC(SHA-256)")
        .unwrap();
    assert_eq!(hmac.bytes_per_second, 1468.0 * 1024.0 * 1024.0);
    assert_eq!(hmac.size, None);
    assert!(points.iter().any(|p| p.algorithm == "CMAC(AES)"));
    assert!(points.iter().any(|p| p.algorithm == "VMAC(AES)-64"));
}

#[test]
fn names_and_conversion() {
    assert_eq!(
        Peer::Openssl.algorithm_name("cmac-aes128"),
        Some("aes-128-cbc")
    );
    assert_eq!(
        Peer::Botan.algorithm_name("hmac-sha256"),
        Some("HMAC(SHA-256)")
    );
    assert_eq!(
        Peer::Cryptopp.algorithm_name("cmac-aes128"),
        Some("CMAC(AES)")
    );
    assert_eq!(Peer::Openssl.algorithm_name("blake3-keyed"), None);
    assert_eq!(compare::cycles_per_byte(2.0e9, 1.0e9), Some(2.0));
    assert_eq!(compare::cycles_per_byte(2.0e9, 0.0), None);
}

/// A missing peer is a row saying how to install it, and exit 1: nothing was compared.
#[test]
fn missing_peer_is_a_row_and_exit_1() {
    for (peer, var, package) in [
        ("botan", "MACBENCH_BOTAN", "apt-get install botan"),
        (
            "cryptopp",
            "MACBENCH_CRYPTEST",
            "apt-get install libcrypto++-utils",
        ),
        ("openssl", "MACBENCH_OPENSSL", "apt-get install openssl"),
        ("ipsecmb", "MACBENCH_IPSEC_PERF", "tools/build-ipsec-perf"),
        ("dpdk", "MACBENCH_DPDK_CRYPTO_PERF", "apt-get install dpdk"),
    ] {
        common::macbench()
            .env(var, "/nonexistent/peer-binary")
            .args([
                "compare",
                "--against",
                peer,
                "--alg",
                "hmac-sha256",
                "--sizes",
                "64",
            ])
            .assert()
            .code(1)
            .stdout(
                predicate::str::contains(format!("{peer} not installed"))
                    .and(predicate::str::contains(package)),
            )
            .stderr(predicate::str::contains("nothing was compared"));
    }
}

#[test]
fn bad_flags_are_usage_errors() {
    for args in [
        vec!["compare", "--against", "wolfssl"],
        vec!["compare", "--against", "openssl", "--sizes", "imix"],
        vec!["compare", "--against", "openssl", "--alg", "nope"],
        vec!["compare", "--against", "openssl", "--seconds", "0"],
        // ISA levels pair only with ipsec_perf's --arch; ipsec_perf has no software-only path.
        vec!["compare", "--against", "openssl", "--accel", "avx2"],
        vec!["compare", "--against", "ipsecmb", "--accel", "sw"],
        vec!["compare", "--against", "ipsecmb", "--accel", "avx3"],
        vec!["compare", "--against", "ipsecmb", "--dispatch", "burst:257"],
    ] {
        common::macbench().args(&args).assert().code(2);
    }
}

/// An empty message is refused before anything runs, for every peer: openssl speed refuses
/// `-bytes 0`, and the refusal used to come after our side had been timed (exit 1).
#[test]
fn size_zero_is_refused_before_anything_runs() {
    for peer in ["openssl", "cryptopp", "botan", "ipsecmb"] {
        let out = common::fails_with(
            common::macbench()
                .args(["compare", "--against", peer, "--alg", "hmac-sha256"])
                .args(["--sizes", "64,0"]),
            2,
            "--sizes 0: compare takes sizes of 1 byte or more",
        );
        assert!(out.stdout.is_empty(), "{peer}: nothing measured");
    }
}

#[test]
fn against_openssl_end_to_end() {
    if common::skip_without_openssl_cli() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("compare.json");
    let out = common::macbench()
        .args("compare --against openssl --alg hmac-sha256 --sizes 1024 --seconds 1 --rounds 2 --basis wall --json".split_whitespace())
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("macbench: note: --rounds 2: the range of 2 round(s) holds the median ratio only 50 % of the time, so the rows get no verdict (5 rounds or more for one)"),
        "{err}"
    );
    let out = String::from_utf8(out.stdout).unwrap();
    let row = out
        .lines()
        .find(|l| l.starts_with("openssl") && l.contains("hmac-sha256/openssl/hw"))
        .unwrap_or_else(|| panic!("no row in\n{out}"));
    assert!(row.contains(" wall "), "the row states its basis: {row}");
    // openssl speed reads its time in clock ticks: the interval says it was widened by them.
    assert!(row.contains("(2 rounds, ±"), "{row}");
    assert!(row.contains(" % clock; "), "{row}");
    // Two rounds: the ratio and its range, which holds the median half the time, and no verdict.
    assert!(row.contains("holds the median 50 % of the time)"), "{row}");
    assert!(row.contains("too few rounds"), "{row}");
    let summary = "summary: no verdict; 1 row(s) from fewer than 5 rounds, whose range is no 95 % interval (--rounds 5 or more)";
    assert!(
        out.lines().any(|l| l == summary),
        "{summary:?} not in\n{out}"
    );
    // The written row: the basis, a positive median ratio inside its interval, and the peer's CPUs
    // read back as the one CPU our session used (no thresholds on the values).
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["schema"], macbench::results::compare::SCHEMA);
    let r = &doc["rows"][0];
    assert_eq!(r["basis"], "wall");
    assert_eq!(r["rounds"], 2);
    let (low, mid, high) = (
        r["ratio_ci95_low"].as_f64().unwrap(),
        r["ratio"].as_f64().unwrap(),
        r["ratio_ci95_high"].as_f64().unwrap(),
    );
    assert!(0.0 < low && low <= mid && mid <= high, "{r}");
    // No verdict from two rounds, in the file as in the table.
    assert_eq!(r["equal_within_noise"], serde_json::Value::Null, "{r}");
    assert_eq!(r["verdict"], serde_json::Value::Null, "{r}");
    // One tick (1/_SC_CLK_TCK s) over the one-second run, and the interval at least that wide about
    // the median.
    // SAFETY: sysconf takes a constant name and has no other effect.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let clock = r["peer_clock_share"].as_f64().unwrap();
    assert!((clock - 1.0 / ticks).abs() < 1e-12, "{r}");
    assert!(low <= mid * (1.0 - clock) + 1e-12, "{r}");
    assert!(high >= mid * (1.0 + clock) - 1e-12, "{r}");
    assert_eq!(r["peer_cpus"].as_str().unwrap(), r["ours_cpu"].to_string());
    assert!(
        r["harness_cycles_per_message"].as_f64().unwrap() > 0.0,
        "{r}"
    );
    // Each side's median lies within the lowest and highest of its rounds.
    for side in ["ours", "theirs"] {
        let at = |s: &str| r[format!("{side}_cycles_per_byte{s}")].as_f64().unwrap();
        assert!(at("_low") <= at("") && at("") <= at("_high"), "{r}");
    }
    // What `compare` writes, `validate` and `report` read back.
    read_back_by_validate_and_report(&json, dir.path());
}

/// `macbench validate FILE`.
fn validate(file: &std::path::Path) -> std::process::Output {
    common::macbench()
        .arg("validate")
        .arg(file)
        .output()
        .unwrap()
}

/// `macbench report -o HTML FILE`.
fn report(html: &std::path::Path, file: &std::path::Path) -> std::process::Output {
    common::macbench()
        .args(["report", "-o"])
        .arg(html)
        .arg(file)
        .output()
        .unwrap()
}

/// `validate` takes `file` (exit 0, its rows counted) and `report` shows it in its Compare section.
fn read_back_by_validate_and_report(file: &std::path::Path, dir: &std::path::Path) {
    let rows = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(file).unwrap())
        .unwrap()["rows"]
        .as_array()
        .unwrap()
        .len();
    let checked = validate(file);
    let said = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!("1 file(s), {rows} result(s)")),
        "{said}"
    );
    let html = dir.join("report.html");
    assert_eq!(report(&html, file).status.code(), Some(0));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Compare</h2>"), "no Compare section");
    assert!(page.contains("ratio (95 % interval)"));
}

/// A compare file as `compare` writes it (its one schema type, serialised as `--json` does), with
/// one row that compared and one that could not.
fn written_compare_file() -> serde_json::Value {
    use macbench::results::compare::{CompareFile, CompareRecord, SCHEMA};
    let compared = CompareRecord {
        peer: "openssl".into(),
        peer_version: "OpenSSL 3.0.19".into(),
        algorithm: "hmac-sha256".into(),
        size: Some(1024),
        size_label: "1024".into(),
        ours_function: Some("hmac-sha256/openssl/hw".into()),
        basis: "user".into(),
        reference_hz: 2.445e9,
        ours_cycles_per_byte: Some(2.9),
        ours_cycles_per_byte_low: Some(2.8),
        ours_cycles_per_byte_high: Some(3.0),
        theirs_cycles_per_byte: Some(2.95),
        theirs_cycles_per_byte_low: Some(2.9),
        theirs_cycles_per_byte_high: Some(3.1),
        ratio: Some(1.017),
        ratio_ci95_low: Some(0.98),
        ratio_ci95_high: Some(1.05),
        rounds: Some(5),
        equal_within_noise: Some(true),
        verdict: Some("equal within noise".into()),
        ours_cpu: Some(0),
        peer_cpus: "0".into(),
        ..CompareRecord::default()
    };
    let file = CompareFile {
        schema: SCHEMA.into(),
        rows: vec![compared],
        ..CompareFile::default()
    };
    serde_json::to_value(file).unwrap()
}

#[test]
fn a_compare_file_is_read_back_by_validate_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("compare.json");
    std::fs::write(&path, written_compare_file().to_string()).unwrap();
    read_back_by_validate_and_report(&path, dir.path());
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(page.contains("2.90 (2.80–3.00)"), "ours with its range");
    assert!(
        page.contains("1.017 (0.980–1.050)"),
        "the ratio with its interval"
    );
    assert!(page.contains("equal within noise"));
}

/// A row where nothing was compared is a problem for `validate` (exit 1), named with its reason, and
/// `report` shows the reason where the verdict would be.
#[test]
fn a_row_where_nothing_was_compared_is_a_problem_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("compare.json");
    let mut file = written_compare_file();
    let mut empty = file["rows"][0].clone();
    for field in [
        "ratio",
        "ratio_ci95_low",
        "ratio_ci95_high",
        "rounds",
        "verdict",
    ] {
        empty[field] = serde_json::Value::Null;
    }
    empty["theirs_cycles_per_byte"] = serde_json::Value::Null;
    empty["size_label"] = "64".into();
    empty["note"] = "openssl printed no result for hmac(sha256) at this size".into();
    file["rows"].as_array_mut().unwrap().push(empty);
    std::fs::write(&path, file.to_string()).unwrap();
    let out = validate(&path);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("hmac-sha256 @ 64 against openssl: nothing compared: openssl printed no result for hmac(sha256) at this size"),
        "{said}"
    );
    let html = dir.path().join("report.html");
    assert_eq!(report(&html, &path).status.code(), Some(0));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("nothing compared: openssl printed no result"));
}

/// A malformed compare file: one line naming the field at fault, non-zero exit, from `validate`
/// (exit 1: a problem found) and `report` (exit 2: bad input), and no report written.
#[test]
fn a_malformed_compare_file_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, serde_json::Value, &str); 3] = [
        (
            "ratio",
            serde_json::Value::from("fast"),
            "rows[0].ratio: invalid type: string \"fast\", expected f64",
        ),
        (
            "ratio_ci95_high",
            serde_json::Value::from(0.5),
            "rows[0].ratio_ci95_high: 0.5 is below the median 1.017",
        ),
        (
            "ours_cycles_per_byte_low",
            serde_json::Value::from(-1.0),
            "rows[0].ours_cycles_per_byte_low: -1 is not a positive number",
        ),
    ];
    for (field, value, needle) in cases {
        let mut file = written_compare_file();
        file["rows"][0][field] = value;
        let path = dir.path().join("bad.json");
        std::fs::write(&path, file.to_string()).unwrap();
        let out = validate(&path);
        assert_eq!(out.status.code(), Some(1), "{field}");
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(said.contains(needle), "{field}: {said}");
        let html = dir.path().join("report.html");
        let out = report(&html, &path);
        common::one_line_error(&out, 2, needle);
        assert!(!html.exists(), "{field}: no report from a malformed file");
    }
    // A newer schema than this build reads.
    let mut file = written_compare_file();
    file["schema"] = "macbench-compare/99".into();
    let path = dir.path().join("newer.json");
    std::fs::write(&path, file.to_string()).unwrap();
    let out = report(&dir.path().join("report.html"), &path);
    common::one_line_error(
        &out,
        2,
        "schema: \"macbench-compare/99\" is not one this macbench reads",
    );
}

/// `diff` and `export` compare and convert run results: a compare file is refused in one line that
/// says what it is, exit 2.
#[test]
fn diff_and_export_refuse_a_compare_file_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("compare.json");
    std::fs::write(&path, written_compare_file().to_string()).unwrap();
    common::fails_with(
        common::macbench().arg("diff").args([&path, &path]),
        2,
        "a `macbench compare` results file, not a run's results",
    );
    common::fails_with(
        common::macbench()
            .args(["export", "--format", "bmf"])
            .arg(&path),
        2,
        "a `macbench compare` results file, not a run's results",
    );
}

#[test]
fn parses_ipsec_perf_one_and_several_code_paths() {
    // `--arch-best`: one column (captured on the development machine, AVX-512 path).
    let points = compare::parse_ipsec_perf(&data("ipsec-perf-arch-best.txt")).unwrap();
    let sizes: Vec<u32> = points.iter().map(|p| p.size).collect();
    assert_eq!(sizes, [16, 64, 1500]);
    assert!(points.iter().all(|p| p.arch == "AVX512" && p.cycles > 0.0));
    assert_eq!(points[0].cycles, 223.0);
    // No --arch: a column per code path, each row one value per column.
    let points = compare::parse_ipsec_perf(&data("ipsec-perf-all-arches.txt")).unwrap();
    assert_eq!(points.len(), 8);
    let at = |arch: &str, size: u32| {
        points
            .iter()
            .find(|p| p.arch == arch && p.size == size)
            .map(|p| p.cycles)
    };
    assert_eq!(at("SSE", 16), Some(84.0));
    assert_eq!(at("AVX512", 1500), Some(292.0));
}

#[test]
fn malformed_ipsec_perf_output_is_an_error() {
    for text in [
        "",
        "16\t84\n",                         // a result before the ARCH line
        "ARCH\tSSE\tAVX\n16\t84\n",         // one value for two paths
        "ARCH\tSSE\n16\tfast\n",            // not a number
        "ARCH\tSSE\n16\t0\n",               // no cycles at all
        "ARCH\tSSE\nCIPHER\tNULL_CIPHER\n", // headers only
    ] {
        assert!(compare::parse_ipsec_perf(text).is_err(), "{text:?}");
    }
    assert_eq!(Peer::parse("ipsec-mb"), Some(Peer::IpsecMb));
    assert_eq!(
        Peer::IpsecMb.algorithm_name("cmac-aes128"),
        Some("aes-cmac")
    );
    assert_eq!(Peer::IpsecMb.algorithm_name("blake3-keyed"), None);
    assert_eq!(
        compare::ipsec_perf_arch(macbench::mac::Accel::Avx2).unwrap(),
        ["--arch", "AVX2"]
    );
    assert!(compare::ipsec_perf_arch(macbench::mac::Accel::Sw).is_err());
}

/// ipsec_perf built by tools/build-ipsec-perf (CI builds it and sets $MACBENCH_IPSEC_PERF).
#[test]
fn against_ipsecmb_end_to_end_at_one_isa_level() {
    let binary = std::env::var("MACBENCH_IPSEC_PERF").unwrap_or_else(|_| "ipsec_perf".into());
    let installed = std::process::Command::new(&binary)
        .arg("-h")
        .output()
        .is_ok_and(|o| o.status.success());
    if common::skip_unless(
        installed && macbench::mac::ipsecmb::BUILT,
        "ipsec-perf",
        "ipsec_perf or the ipsecmb backend missing (tools/build-ipsec-perf; CI builds it)",
    ) {
        return;
    }
    let out = common::stdout_of(
        common::macbench_line(
            "compare --against ipsecmb --alg hmac-sha256,cmac-aes128 --sizes 64 --accel sse --duration 1s",
        )
        .env("MACBENCH_IPSEC_PERF", &binary),
    );
    for function in [
        "hmac-sha256/ipsecmb/sse burst:16",
        "cmac-aes128/ipsecmb/sse burst:16",
    ] {
        let row = out
            .lines()
            .find(|l| l.starts_with("ipsecmb") && l.contains(function))
            .unwrap_or_else(|| panic!("no {function} row in\n{out}"));
        assert!(row.contains("ipsec_perf SSE path"), "{row}");
        // size, ours, theirs, ratio: positive numbers (no thresholds on their values).
        let numbers: Vec<f64> = row
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        assert!(numbers.len() >= 4, "{row}");
        assert!(numbers[..4].iter().all(|v| *v > 0.0), "{row}");
    }
    // ipsec_perf never drains its manager; a burst of CMAC jobs is drained to return its tags, so the
    // row has its ratio and no verdict, the flushes named.
    let cmac = out
        .lines()
        .find(|l| l.starts_with("ipsecmb") && l.contains("cmac-aes128/ipsecmb/sse"))
        .unwrap();
    assert!(
        cmac.contains("no verdict: different quantity") && cmac.contains("IMB_FLUSH_JOB"),
        "{cmac}"
    );
}

/// `openssl speed -mr -elapsed` (wall basis), captured with openssl 3.0.22 on the development VM: the
/// same `+H`/`+F` lines, their figure divided by elapsed rather than user time.
#[test]
fn openssl_speed_mr_elapsed_output() {
    let points = compare::parse_openssl_mr(&data("openssl-speed-mr-elapsed.txt")).unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].algorithm, "hmac(sha256)");
    assert_eq!(points[0].size, Some(1024));
    assert_eq!(points[0].bytes_per_second, 895248384.00);
}

/// The wall basis asks openssl for `-elapsed`; its default (user CPU time) does not.
#[test]
fn openssl_arguments_follow_the_basis() {
    use compare::Basis;
    let wall = compare::openssl_speed_args("hmac-sha256", "sha256", 64, 2, Basis::Wall);
    assert_eq!(
        wall,
        ["speed", "-mr", "-elapsed", "-seconds", "2", "-bytes", "64", "-hmac", "sha256"]
    );
    let user = compare::openssl_speed_args("cmac-aes128", "aes-128-cbc", 16, 1, Basis::User);
    assert!(!user.contains(&"-elapsed".to_string()), "{user:?}");
    assert!(user.contains(&"-cmac".to_string()), "{user:?}");
    assert_eq!(Peer::Openssl.default_basis(), Basis::User);
    assert_eq!(Peer::Cryptopp.bases(), [Basis::Cpu]);
    assert_eq!(Peer::Botan.bases(), [Basis::Wall]);
    assert_eq!(Peer::IpsecMb.bases(), [Basis::Wall]);
}

/// `--rounds` and `--basis` with absurd values: one line, exit 2, before any peer runs.
#[test]
fn bad_rounds_and_basis_are_one_line_usage_errors() {
    for (args, says) in [
        (vec!["--rounds", "0"], "--rounds must be at least 1"),
        (vec!["--rounds", "-3"], "negative"),
        (vec!["--rounds", "abc"], "not a whole number"),
        (vec!["--rounds", "101"], "more than the maximum 100"),
        (
            vec!["--rounds", "99999999999999999999999"],
            "not a whole number",
        ),
        (vec!["--basis", "cycles"], "invalid value"),
        (
            vec!["--basis", "cpu"],
            "openssl measures on user or wall only",
        ),
    ] {
        let out = common::macbench()
            .args("compare --against openssl --alg hmac-sha256".split_whitespace())
            .args(&args)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // A peer that measures on wall time only refuses the user basis.
    common::macbench()
        .args("compare --against botan --basis user".split_whitespace())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("botan measures on wall only"));
}

/// A row of `pairs` rounds whose ratio's interval is `low..high`, for the verdict and summary tests.
fn row_of(pairs: usize, low: f64, high: f64) -> compare::CompareRow {
    compare::CompareRow {
        peer: "openssl",
        algorithm: "hmac-sha256".into(),
        size: "64".into(),
        ours_function: Some("hmac-sha256/openssl/hw".into()),
        basis: compare::Basis::User,
        ours: Some(10.0),
        ours_range: Some((10.0, 10.0)),
        theirs: Some(10.0),
        theirs_range: Some((10.0, 10.0)),
        ratio: Some(macbench::stats::RatioEstimate {
            median: (low + high) / 2.0,
            ci95: macbench::stats::Interval { low, high },
            pairs,
        }),
        ours_cpu: Some(0),
        peer_cpus: "0".into(),
        harness_share: None,
        peer_clock: None,
        unlike: None,
        note: String::new(),
    }
}

/// A verdict needs 5 rounds: the range of fewer holds the true median less than 90 % of the time
/// (1 − 2^(1−n)), so it is shown with that figure and counted apart in the summary.
#[test]
fn a_verdict_needs_five_rounds_and_the_summary_counts_each_kind() {
    use compare::Verdict;
    assert_eq!(macbench::stats::MIN_PAIRS_FOR_VERDICT, 5);
    let coverage: Vec<f64> = (0..=6).map(macbench::stats::range_coverage).collect();
    assert_eq!(coverage, [0.0, 0.0, 0.5, 0.75, 0.875, 0.9375, 0.96875]);
    let rows = [
        row_of(5, 0.98, 1.02),
        row_of(5, 0.90, 0.95),
        row_of(6, 1.05, 1.10),
        row_of(4, 1.05, 1.10),
        compare::CompareRow {
            ratio: None,
            ..row_of(5, 1.0, 1.0)
        },
    ];
    let verdicts: Vec<Option<Verdict>> = rows.iter().map(|r| r.verdict()).collect();
    assert_eq!(
        verdicts,
        [
            Some(Verdict::EqualWithinNoise),
            Some(Verdict::PeerFaster),
            Some(Verdict::MacbenchFaster),
            None,
            None
        ]
    );
    let texts: Vec<&str> = rows.iter().map(|r| r.verdict_text()).collect();
    assert_eq!(
        texts,
        [
            "equal within noise",
            "peer faster",
            "macbench faster",
            "too few rounds",
            "-"
        ]
    );
    assert_eq!(
        compare::summary_line(&rows).unwrap(),
        "summary: 1 of 3 row(s) equal within noise, 1 peer faster, 1 macbench faster; \
         1 row(s) from fewer than 5 rounds, whose range is no 95 % interval (--rounds 5 or more); \
         1 row(s) without a ratio (their notes say why)"
    );
    // The table shows what a short range is worth; a full one is a plain interval.
    let table = compare::render(&rows, 2.0e9, macbench::table::Style::Plain);
    assert!(
        table.contains("(4 rounds; holds the median 88 % of the time)"),
        "{table}"
    );
    assert!(table.contains("(5 rounds)"), "{table}");
    assert!(compare::summary_line(&rows[4..]).is_none());
}

/// A row pairing another library, or another quantity, shows its ratio but gets no verdict, whatever
/// its interval; the summary counts it apart from the verdicts and says why (issue: `--against botan`
/// judged OpenSSL's per-message HMAC against Botan's stream as "peer faster").
#[test]
fn unlike_rows_show_their_ratio_but_no_verdict_and_are_counted_apart() {
    use compare::{Quantity, Unlike};
    let library = compare::CompareRow {
        unlike: Some(Unlike::Library {
            ours: "hmac-sha256/openssl/hw".into(),
            theirs: "botan",
        }),
        ..row_of(5, 0.20, 0.30)
    };
    let quantity = compare::CompareRow {
        unlike: Some(Unlike::Quantity {
            ours: Quantity::Messages,
            theirs: Quantity::Stream { chunk: 2048 },
            why: "hmac-sha256/ipsecmb/hw cannot stream".into(),
        }),
        ..row_of(5, 1.30, 1.50)
    };
    let rows = [row_of(5, 0.98, 1.02), library.clone(), quantity.clone()];
    assert_eq!(library.verdict(), None);
    assert_eq!(quantity.verdict(), None);
    assert_eq!(library.verdict_text(), "no verdict: different library");
    assert_eq!(quantity.verdict_text(), "no verdict: different quantity");
    assert!(
        quantity.unlike.as_ref().unwrap().note().contains(
            "ours whole messages, theirs a stream of 2048-byte updates (hmac-sha256/ipsecmb/hw cannot stream)"
        ),
        "{:?}",
        quantity.unlike
    );
    assert_eq!(
        compare::summary_line(&rows).unwrap(),
        "summary: 1 of 1 row(s) equal within noise, 0 peer faster, 0 macbench faster; \
         2 row(s) not judged, ratio shown (1 different library, 1 different quantity: not like with like)"
    );
    // With no like row at all there is no verdict, and the unlike rows are still counted.
    assert_eq!(
        compare::summary_line(&rows[1..]).unwrap(),
        "summary: no verdict; 2 row(s) not judged, ratio shown (1 different library, 1 different quantity: not like with like)"
    );
    let table = compare::render(&rows, 2.0e9, macbench::table::Style::Plain);
    assert!(table.contains("no verdict: different library"), "{table}");
}

/// What each peer's figure is a rate of: whole messages for openssl, whole messages as an undrained
/// job stream for ipsec_perf, a stream of the size for botan 2.x (whole messages for botan 3), and
/// cryptest b2's fixed 2 KiB stream.
#[test]
fn each_peer_says_what_quantity_it_times() {
    use compare::Quantity;
    assert_eq!(
        Peer::Openssl.quantity("OpenSSL 3.0.22", 64, None),
        Quantity::Messages
    );
    assert_eq!(
        Peer::IpsecMb.quantity("ipsec_perf", 64, None),
        Quantity::JobStream
    );
    assert_eq!(
        Peer::Botan.quantity("2.19.3", 64, None),
        Quantity::Stream { chunk: 64 }
    );
    assert_eq!(Peer::Botan.quantity("3.2.0", 64, None), Quantity::Messages);
    assert_eq!(
        Peer::Cryptopp.quantity("8.7", 64, None),
        Quantity::Stream {
            chunk: compare::CRYPTEST_CHUNK
        }
    );
    // Run times the arguments fix, and those only a timed run tells.
    assert_eq!(Peer::Openssl.run_seconds(1, 1, 1), Some(1.1));
    assert_eq!(Peer::Botan.run_seconds(2, 3, 1), Some(6.1));
    assert_eq!(Peer::Cryptopp.run_seconds(2, 1, 1), None);
    assert_eq!(Peer::IpsecMb.run_seconds(2, 1, 1), None);
}

/// `dpdk-test-crypto-perf --csv-friendly` as DPDK 22.11.11 prints it (captured on the 2-core Xeon
/// VM, `crypto_aesni_mb`, HMAC-SHA-256 at 64 and 1024 B): the throughput test's cycles per buffer,
/// and pmd-cyclecount's enqueue + dequeue with its build cost kept apart.
#[test]
fn parses_dpdk_crypto_perf_throughput_and_pmd_cyclecount() {
    use compare::crypto_perf::parse;
    let points = parse(&data("dpdk-crypto-perf-throughput.txt")).unwrap();
    assert_eq!(
        points.iter().map(|p| (p.size, p.burst)).collect::<Vec<_>>(),
        [(64, 32), (1024, 32)]
    );
    assert_eq!(points[0].cycles, 845.388);
    assert_eq!(points[0].split, None);
    let points = parse(&data("dpdk-crypto-perf-pmd-cyclecount.txt")).unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0].split, Some([10.507, 2.043, 1121.821]));
    assert!((points[0].cycles - (2.043 + 1121.821)).abs() < 1e-9);
    assert_eq!(points[1].size, 1024);
}

#[test]
fn malformed_dpdk_crypto_perf_output_is_an_error() {
    use compare::crypto_perf::parse;
    let header = "#lcore id,Buffer Size(B),Burst Size,Enqueued,Dequeued,Failed Enq,Failed Deq,Ops(Millions),Throughput(Gbps),Cycles/Buf\n";
    for (text, says) in [
        ("", "no result line"),
        ("1,64,32,100,100,0,0,2.7,1.3,845.3\n", "before its header"),
        (
            &format!("{header}1,64,32,100,99,0,0,2.7,1.3,845.3\n"),
            "99 of 100 ops came back",
        ),
        (
            &format!("{header}1,64,32,100,100,0,0,2.7,1.3\n"),
            "9 values for 10 columns",
        ),
        (
            &format!("{header}1,64,32,100,100,0,0,2.7,1.3,nan\n"),
            "bad Cycles/Buf",
        ),
        (
            &format!("{header}1,64,32,100,100,0,0,2.7,1.3,0\n"),
            "0 cycles per op",
        ),
    ] {
        let err = parse(text).unwrap_err();
        assert!(err.contains(says), "{text:?}: {err}");
    }
}

/// What the tool is asked: the device's driver, the algorithm's key, tag and IV lengths, our `all`
/// batch as pmd-cyclecount's ring and burst, or the throughput test's burst; its two lcores on two
/// CPUs, the worker on ours; op counts a whole number of rings.
#[test]
fn dpdk_crypto_perf_is_asked_for_our_device_algorithm_and_batch() {
    use compare::crypto_perf::{self as cperf, DeviceTest, Run};
    let run = Run {
        ours: "gmac-aes256",
        name: "aes-gmac",
        size: 1024,
        test: DeviceTest::Drained { depth: 256 },
        ops: 2560,
    };
    let args = cperf::args(&run, "crypto_aesni_mb", 1, 0)
        .unwrap()
        .join(" ");
    for part in [
        "--lcores=0@1,1@0",
        "--vdev=crypto_aesni_mb",
        "--devtype crypto_aesni_mb",
        "--auth-algo aes-gmac",
        "--auth-key-sz 32",
        "--digest-sz 16",
        "--auth-iv-sz 12",
        "--buffer-sz 1024",
        "--total-ops 2560",
        "--ptest pmd-cyclecount --desc-nb 256 --burst-sz 256",
    ] {
        assert!(args.contains(part), "{part:?} not in {args}");
    }
    let run = Run {
        ours: "hmac-sha256",
        name: "sha2-256-hmac",
        size: 64,
        test: DeviceTest::Bursts { burst: 32 },
        ops: 1000,
    };
    let args = cperf::args(&run, "crypto_aesni_mb0,max_nb_queue_pairs=2", 0, 1)
        .unwrap()
        .join(" ");
    assert!(args.contains("--ptest throughput --burst-sz 32"), "{args}");
    assert!(args.contains("--devtype crypto_aesni_mb "), "{args}");
    assert!(!args.contains("--auth-iv-sz"), "{args}");
    assert!(cperf::devtype("0000:3d:00.0").is_err());
    assert_eq!(cperf::main_lcore_cpu(1, &[0, 1]), Ok(0));
    assert!(cperf::main_lcore_cpu(0, &[0])
        .unwrap_err()
        .contains("only one online"));
    for (test, ring) in [
        (DeviceTest::Drained { depth: 256 }, 256),
        (DeviceTest::Bursts { burst: 7 }, 7),
    ] {
        for cycles in [1.0, 300.0, 1e7] {
            let ops = cperf::total_ops(test, 1.0, 2.3e9, cycles);
            assert_eq!(ops % ring, 0, "{test:?} {cycles}");
            assert!((1000..=100_000_000 + ring).contains(&ops), "{ops}");
        }
    }
    // A slower device gets fewer ops; pmd-cyclecount's three passes a third of throughput's.
    let drained = cperf::total_ops(DeviceTest::Drained { depth: 1 }, 1.0, 2.3e9, 300.0);
    let bursts = cperf::total_ops(DeviceTest::Bursts { burst: 1 }, 1.0, 2.3e9, 300.0);
    assert!(
        drained * 3 <= bursts + 3 && drained * 3 + 3 >= bursts,
        "{drained} {bursts}"
    );
}

/// The dpdk peer's figure is what its test times: drained rings beside our `all`, an undrained
/// stream of bursts otherwise.
#[test]
fn the_dpdk_peer_times_drained_rings_or_undrained_bursts() {
    use compare::{DeviceTest, Quantity};
    assert_eq!(
        Peer::Dpdk.quantity(
            "DPDK 22.11.11",
            64,
            Some(DeviceTest::Drained { depth: 256 })
        ),
        Quantity::Drained { depth: 256 }
    );
    assert_eq!(
        Peer::Dpdk.quantity("DPDK 22.11.11", 64, None),
        Quantity::Undrained { burst: 32 }
    );
    assert_eq!(Peer::parse("dpdk-test-crypto-perf"), Some(Peer::Dpdk));
    assert_eq!(
        Peer::Dpdk.algorithm_name("xcbc-aes128-96"),
        Some("aes-xcbc-mac")
    );
    assert_eq!(Peer::Dpdk.algorithm_name("poly1305"), None);
    // The 3GPP functions: the tool is told of the 16-byte IV the device gets, not our nonce.
    assert_eq!(
        Peer::Dpdk.algorithm_name("uia2-snow3g"),
        Some("snow3g-uia2")
    );
    let run = compare::crypto_perf::Run {
        ours: "eia3-zuc128",
        name: "zuc-eia3",
        size: 64,
        test: DeviceTest::Drained { depth: 256 },
        ops: 1024,
    };
    let args = compare::crypto_perf::args(&run, "crypto_aesni_mb", 1, 0)
        .unwrap()
        .join(" ");
    for part in [
        "--auth-algo zuc-eia3",
        "--auth-iv-sz 16",
        "--auth-key-sz 16",
        "--digest-sz 4",
    ] {
        assert!(args.contains(part), "{part:?} not in {args}");
    }
}
