//! End-to-end tests of `list`, `selftest` and `tag`, including every bad-input path: one line on stderr,
//! exit code 2 for usage errors, never a panic or a backtrace.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use predicates::prelude::*;
use std::io::Write;

/// Assert a usage error: exit 2, exactly one line on stderr containing `needle`, no panic text.
fn assert_usage_error(args: &[&str], stdin: Option<&[u8]>, needle: &str) {
    let mut cmd = macbench();
    cmd.args(args);
    if let Some(input) = stdin {
        cmd.write_stdin(input.to_vec());
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "args {args:?}: stderr {stderr}");
    assert!(
        stderr.contains(needle),
        "args {args:?}: {stderr:?} lacks {needle:?}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "not one line: {stderr:?}"
    );
}

const KEY16: &str = "000102030405060708090a0b0c0d0e0f";

#[test]
fn unknown_algorithm_names_it_and_suggests_the_nearest() {
    assert_usage_error(
        &["tag", "--alg", "hmac-sha265", "--key", KEY16],
        Some(b""),
        "did you mean hmac-sha256",
    );
    assert_usage_error(
        &["tag", "--alg", "nope", "--key", KEY16],
        Some(b""),
        "unknown algorithm \"nope\"",
    );
}

#[test]
fn unknown_backend_is_a_usage_error() {
    assert_usage_error(
        &common::words(&format!(
            "tag --alg hmac-sha256 --backend opensll --key {KEY16}"
        )),
        Some(b""),
        "did you mean openssl",
    );
    assert_usage_error(
        &common::words(&format!(
            "tag --alg blake3-keyed --backend openssl --key {KEY16}"
        )),
        Some(b""),
        "backends that do: rustcrypto",
    );
}

#[test]
fn wrong_key_length_says_what_is_accepted() {
    assert_usage_error(
        &["tag", "--alg", "cmac-aes128", "--key", "0011"],
        Some(b""),
        "key is 2 bytes; accepted: 16 bytes",
    );
}

#[test]
fn malformed_hex_names_the_flag() {
    assert_usage_error(
        &["tag", "--alg", "hmac-sha256", "--key", "xyz"],
        Some(b""),
        "--key: not valid hex",
    );
}

#[test]
fn missing_input_file_is_named() {
    assert_usage_error(
        &common::words(&format!(
            "tag --alg hmac-sha256 --key {KEY16} /no/such/file"
        )),
        None,
        "/no/such/file",
    );
    assert_usage_error(
        &["tag", "--alg", "hmac-sha256", "--key-file", "/no/such/key"],
        Some(b""),
        "--key-file /no/such/key",
    );
}

#[test]
fn nonce_rules_are_enforced() {
    assert_usage_error(
        &common::words(&format!("tag --alg hmac-sha256 --key {KEY16} --nonce 00")),
        Some(b""),
        "takes no nonce",
    );
    assert_usage_error(
        &["tag", "--alg", "gmac-aes128", "--key", KEY16],
        Some(b""),
        "takes a nonce of 1–128 bytes (--nonce HEX); none given",
    );
    assert_usage_error(
        &[
            "tag",
            "--alg",
            "gmac-aes128",
            "--key",
            KEY16,
            "--nonce",
            &"00".repeat(129),
        ],
        Some(b""),
        "got 129 bytes",
    );
}

#[test]
fn missing_key_is_a_clap_usage_error() {
    let out = macbench()
        .args(["tag", "--alg", "hmac-sha256"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn every_subcommand_has_help() {
    for sub in ["list", "selftest", "tag"] {
        macbench()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Usage"));
    }
}

#[test]
fn selftest_passes_and_list_json_parses() {
    macbench()
        .arg("selftest")
        .assert()
        .success()
        .stdout(predicate::str::contains(" 0 failed"));
    let out = macbench().args(["list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let functions = v["functions"].as_array().unwrap();
    let vmac = functions
        .iter()
        .find(|f| f["algorithm"] == "vmac-aes128-64")
        .unwrap();
    // VMAC comes with the Crypto++ backend: available when it was built, otherwise a row saying why.
    assert_eq!(vmac["available"], macbench::mac::cryptopp::BUILT);
    if !macbench::mac::cryptopp::BUILT {
        assert!(vmac["reason"].as_str().unwrap().contains("Crypto++"));
    }
    assert!(v["host"]["cpu_model"].is_string());
}

/// In a pipe the tables are plain text (src/table.rs): the header names its columns, a row starts
/// with its first cell and splits on whitespace into its cells, and no box-drawing character appears.
#[test]
fn piped_tables_are_plain_columns() {
    let out = macbench().args(["list", "--all"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains(['│', '─', '┼']), "{text}");
    let header = text
        .lines()
        .find(|l| l.starts_with("algorithm "))
        .unwrap_or_else(|| panic!("no header in\n{text}"));
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        [
            "algorithm",
            "backend",
            "accel",
            "status",
            "key",
            "tag",
            "block",
            "nonce",
            "self-test",
            "/",
            "reason"
        ]
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("hmac-sha256 ") && l.contains(" rustcrypto "))
        .unwrap_or_else(|| panic!("no rustcrypto hmac-sha256 row in\n{text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[..8],
        [
            "hmac-sha256",
            "rustcrypto",
            "hw",
            "available",
            "0–1024",
            "32",
            "64",
            "-"
        ],
        "{row}"
    );
    // Numbers are right-aligned: the tag size ends where the header's "tag" ends (counted in
    // characters: the key sizes' en dash is three bytes).
    let end_of = |line: &str, needle: &str| {
        line.find(needle)
            .map(|i| line[..i].chars().count() + needle.trim_end().chars().count())
    };
    assert_eq!(
        end_of(header, " tag"),
        end_of(row, " 32 "),
        "{header}\n{row}"
    );

    let out = macbench()
        .args(["selftest", "--alg", "hmac-sha256"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("function "), "{text}");
    assert!(
        text.lines().any(|l| l
            .split_whitespace()
            .take(2)
            .eq(["hmac-sha256/rustcrypto/hw", "pass"])),
        "{text}"
    );
}

fn tempfile_with(data: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(data).unwrap();
    f
}

fn macbench_tag(
    alg: &str,
    backend: &str,
    key_hex: &str,
    path: &std::path::Path,
    extra: &[&str],
) -> String {
    let out = common::exits_0(
        macbench()
            .args(["tag", "--alg", alg, "--backend", backend, "--key", key_hex])
            .args(extra)
            .arg(path),
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// `openssl mac` is the reference; this test fails (not skips) when the openssl tool is missing.
fn openssl_mac(args: &[&str], path: &std::path::Path) -> String {
    let out = std::process::Command::new("openssl")
        .args(["mac", "-in"])
        .arg(path)
        .args(args)
        .output()
        .expect("the `openssl` command-line tool is needed (apt-get install openssl)");
    assert!(
        out.status.success(),
        "openssl mac {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_lowercase()
}

#[test]
fn tags_equal_openssl_mac_for_shared_algorithms() {
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 31 % 251) as u8).collect();
    let file = tempfile_with(&data);
    let key32 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    let cases: &[(&str, &str, Vec<&str>)] = &[
        (
            "hmac-md5",
            KEY16,
            vec![
                "-digest",
                "MD5",
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f",
                "HMAC",
            ],
        ),
        (
            "hmac-sha1",
            KEY16,
            vec![
                "-digest",
                "SHA1",
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f",
                "HMAC",
            ],
        ),
        (
            "hmac-sha256",
            key32,
            vec![
                "-digest",
                "SHA256",
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "HMAC",
            ],
        ),
        (
            "hmac-sha512",
            key32,
            vec![
                "-digest",
                "SHA512",
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "HMAC",
            ],
        ),
        (
            "hmac-sha3-256",
            key32,
            vec![
                "-digest",
                "SHA3-256",
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "HMAC",
            ],
        ),
        (
            "cmac-aes128",
            KEY16,
            vec![
                "-cipher",
                "AES-128-CBC",
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f",
                "CMAC",
            ],
        ),
        (
            "cmac-aes256",
            key32,
            vec![
                "-cipher",
                "AES-256-CBC",
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "CMAC",
            ],
        ),
        (
            "kmac128",
            key32,
            vec![
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "-macopt",
                "size:32",
                "KMAC128",
            ],
        ),
        (
            "poly1305",
            key32,
            vec![
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "Poly1305",
            ],
        ),
        (
            "blake2b-keyed",
            key32,
            vec![
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "BLAKE2BMAC",
            ],
        ),
        (
            "siphash-2-4",
            KEY16,
            vec![
                "-macopt",
                "hexkey:000102030405060708090a0b0c0d0e0f",
                "-macopt",
                "size:8",
                "SIPHASH",
            ],
        ),
    ];
    for (alg, key, openssl_args) in cases {
        let reference = openssl_mac(openssl_args, file.path());
        for backend in ["openssl", "rustcrypto"] {
            assert_eq!(
                macbench_tag(alg, backend, key, file.path(), &[]),
                reference,
                "{alg} via {backend}"
            );
        }
    }
    // GMAC: openssl mac takes the IV as a macopt.
    let reference = openssl_mac(
        &common::words("-cipher AES-128-GCM -macopt hexiv:000102030405060708090a0b -macopt hexkey:000102030405060708090a0b0c0d0e0f GMAC"),
        file.path(),
    );
    for backend in ["openssl", "rustcrypto"] {
        let ours = macbench_tag(
            "gmac-aes128",
            backend,
            KEY16,
            file.path(),
            &["--nonce", "000102030405060708090a0b"],
        );
        assert_eq!(ours, reference, "gmac via {backend}");
    }
}

#[test]
fn tags_equal_python_hmac_and_hashlib() {
    let data: Vec<u8> = (0..777u32).map(|i| (i * 7 % 256) as u8).collect();
    let file = tempfile_with(&data);
    let script = format!(
        "import hmac,hashlib,sys\nd=open({:?},'rb').read()\nk=bytes(range(32))\n\
         print(hmac.new(k[:16],d,'md5').hexdigest())\nprint(hmac.new(k,d,'sha256').hexdigest())\n\
         print(hmac.new(k,d,'sha3_256').hexdigest())\nprint(hashlib.blake2s(d,key=k).hexdigest())\n",
        file.path()
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3 is needed for this cross-check");
    assert!(out.status.success());
    let expected: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let key32 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    let ours = [
        macbench_tag("hmac-md5", "rustcrypto", KEY16, file.path(), &[]),
        macbench_tag("hmac-sha256", "openssl", key32, file.path(), &[]),
        macbench_tag("hmac-sha3-256", "rustcrypto", key32, file.path(), &[]),
        macbench_tag("blake2s-keyed", "openssl", key32, file.path(), &[]),
    ];
    assert_eq!(ours.to_vec(), expected);
}

#[test]
fn tag_reads_standard_input() {
    let out = macbench()
        .args("tag --alg hmac-sha256 --key 4a656665".split_whitespace())
        .write_stdin("what do ya want for nothing?")
        .output()
        .unwrap();
    // RFC 4231 test case 2.
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
}

/// `list` answers what runs here: one line per algorithm with its backends and accelerations, the
/// unavailable rows summarised once per backend and reason; `--all` has every row; `--alg` and
/// `--backend` filter.
#[test]
fn list_groups_what_runs_here_and_filters() {
    let out = macbench().arg("list").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let all =
        String::from_utf8(macbench().args(["list", "--all"]).output().unwrap().stdout).unwrap();
    assert!(
        text.lines().count() * 2 < all.lines().count(),
        "the default is much shorter: {} vs {} lines",
        text.lines().count(),
        all.lines().count()
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("hmac-sha256 "))
        .unwrap_or_else(|| panic!("no hmac-sha256 line in\n{text}"));
    assert!(row.contains("rustcrypto hw"), "{row}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("hmac-sha256 "))
            .count(),
        1
    );
    let filtered = String::from_utf8(
        macbench()
            .args("list --alg hmac-sha256 --backend rustcrypto".split_whitespace())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let lines: Vec<&str> = filtered
        .lines()
        .filter(|l| l.starts_with("hmac-") || l.starts_with("cmac-"))
        .collect();
    assert_eq!(lines.len(), 1, "{filtered}");
    assert!(lines[0].ends_with("rustcrypto hw"), "{}", lines[0]);
    assert!(
        filtered.contains("rustcrypto (1 rows): no run-time switch"),
        "{filtered}"
    );
    let out = macbench()
        .args(["list", "--alg", "hmac-sha265"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
