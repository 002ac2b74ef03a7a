//! Every parameter the standards allow, through the command line: nonces of every length a
//! construction takes (VMAC 1–16 bytes below 2^127, GMAC any non-empty IV), and one `--tag-len` rule
//! for `tag` and `run` (a truncation as deployed, RFC 4868's HMAC-SHA-256-128; KMAC's output length L,
//! an input of the construction). Refusals are one line, exit 2, naming what is accepted.

#![allow(clippy::unwrap_used)]

mod common;

use assert_cmd::Command;
use macbench::mac::{self, Availability};

fn macbench() -> Command {
    Command::cargo_bin("macbench").unwrap()
}

/// `macbench tag` of `msg`: the hex tag, or (exit code, stderr).
fn tag(args: &[&str], msg: &[u8]) -> Result<String, (Option<i32>, String)> {
    let out = macbench()
        .arg("tag")
        .args(args)
        .write_stdin(msg.to_vec())
        .output()
        .unwrap();
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).unwrap().trim().to_string())
    } else {
        Err((
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ))
    }
}

fn backends_of(alg: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == alg && f.availability() == Availability::Available)
        .map(|f| f.backend.name)
        .collect();
    out.dedup();
    out
}

const KEY16: &str = "000102030405060708090a0b0c0d0e0f";

#[test]
fn vmac_takes_nonces_of_1_to_16_bytes_below_2_127_on_every_backend() {
    let backends = backends_of("vmac-aes128-64");
    if backends.is_empty() {
        common::skip("cryptopp", "no backend with VMAC is built here");
        return;
    }
    for b in backends {
        let short = tag(
            &[
                "--alg",
                "vmac-aes128-64",
                "--backend",
                b,
                "--key",
                KEY16,
                "--nonce",
                "00",
            ],
            b"abc",
        )
        .unwrap();
        let padded = tag(
            &[
                "--alg",
                "vmac-aes128-64",
                "--backend",
                b,
                "--key",
                KEY16,
                "--nonce",
                "00000000000000000000000000000000",
            ],
            b"abc",
        )
        .unwrap();
        assert_eq!(
            short, padded,
            "{b}: the nonce is a number, padded on the left"
        );
        tag(
            &[
                "--alg",
                "vmac-aes128-64",
                "--backend",
                b,
                "--key",
                KEY16,
                "--nonce",
                "7fffffffffffffffffffffffffffffff",
            ],
            b"abc",
        )
        .unwrap();
        let (code, err) = tag(
            &[
                "--alg",
                "vmac-aes128-64",
                "--backend",
                b,
                "--key",
                KEY16,
                "--nonce",
                "80000000000000000000000000000000",
            ],
            b"abc",
        )
        .unwrap_err();
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("1–16 bytes") && err.contains("top bit"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn gmac_takes_any_non_empty_iv_where_the_library_does() {
    let nonces = ["00", "0001020304050607", "000102030405060708090a0b0c0d0e0f"];
    let mut want: Vec<Option<String>> = vec![None; nonces.len()];
    let mut agreed = 0;
    for b in backends_of("gmac-aes128") {
        for (i, n) in nonces.iter().enumerate() {
            let args = [
                "--alg",
                "gmac-aes128",
                "--backend",
                b,
                "--key",
                KEY16,
                "--nonce",
                n,
            ];
            match tag(&args, b"additional data") {
                Ok(t) => {
                    match &want[i] {
                        Some(w) => assert_eq!(&t, w, "{b} with a {}-byte IV", n.len() / 2),
                        None => want[i] = Some(t),
                    }
                    agreed += 1;
                }
                // Only a library registered for fewer IV lengths refuses, saying so in one line.
                Err((code, err)) => {
                    assert_eq!(code, Some(2), "{b}: {err}");
                    assert!(err.contains("takes a nonce of 12 bytes"), "{b}: {err}");
                    assert_eq!(b, "rustcrypto", "{err}");
                }
            }
        }
    }
    assert!(
        agreed >= 2 * nonces.len(),
        "at least two backends per IV length"
    );
    let (code, err) = tag(
        &["--alg", "gmac-aes128", "--key", KEY16, "--nonce", ""],
        b"x",
    )
    .unwrap_err();
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn kmac_tag_len_is_its_output_length_not_a_truncation() {
    let key = "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f";
    let msg = [0u8, 1, 2, 3];
    for b in backends_of("kmac128") {
        let default = tag(&["--alg", "kmac128", "--backend", b, "--key", key], &msg).unwrap();
        // NIST SP 800-185 KMAC_samples.pdf Sample #1 (L = 256).
        assert_eq!(
            default,
            "e5780b0d3ea6f7d3a429c5706aa43a00fadbd7d49628839e3187243f456ee14e"
        );
        let twenty = tag(
            &[
                "--alg",
                "kmac128",
                "--backend",
                b,
                "--key",
                key,
                "--tag-len",
                "20",
            ],
            &msg,
        )
        .unwrap();
        assert_eq!(twenty.len(), 40);
        assert_ne!(
            twenty,
            default[..40],
            "{b}: KMAC with L = 160 is not a cut of L = 256"
        );
        let long = tag(
            &[
                "--alg",
                "kmac128",
                "--backend",
                b,
                "--key",
                key,
                "--tag-len",
                "64",
            ],
            &msg,
        )
        .unwrap();
        assert_eq!(long.len(), 128);
    }
}

#[test]
fn truncated_tags_as_deployed_are_prefixes() {
    // RFC 4868 §2.1.1: HMAC-SHA-256-128 is HMAC-SHA-256 cut to its first 128 bits.
    let full = tag(
        &["--alg", "hmac-sha256", "--key", KEY16],
        b"what do ya want for nothing?",
    )
    .unwrap();
    let cut = tag(
        &["--alg", "hmac-sha256", "--key", KEY16, "--tag-len", "16"],
        b"what do ya want for nothing?",
    )
    .unwrap();
    assert_eq!(cut, full[..32]);
}

#[test]
fn one_tag_length_rule_refuses_in_one_line() {
    for (args, needle) in [
        (
            vec!["--alg", "hmac-sha256", "--tag-len", "33"],
            "takes tags of 1–32 bytes",
        ),
        (
            vec!["--alg", "siphash-2-4", "--tag-len", "9"],
            "truncation of its 8-byte tag",
        ),
        (
            vec!["--alg", "kmac128", "--tag-len", "65"],
            "output length L",
        ),
        (vec!["--alg", "hmac-sha256", "--tag-len", "0"], "got 0"),
    ] {
        let mut with_key = args.clone();
        with_key.extend(["--key", KEY16]);
        let (code, err) = tag(&with_key, b"x").unwrap_err();
        assert_eq!(code, Some(2), "tag {args:?}: {err}");
        assert!(err.contains(needle), "tag {args:?}: {err}");
        assert_eq!(err.lines().count(), 1);
        // The same rule in `run`.
        let out = macbench().arg("run").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "run {args:?}: {err}");
        assert!(err.contains(needle), "run {args:?}: {err}");
    }
}

#[test]
fn run_tag_len_names_its_rows_and_csv_columns() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let json = dir.path().join("r.json");
    let out = macbench()
        .args([
            "run",
            "--alg",
            "kmac128,hmac-sha256",
            "--sizes",
            "64",
            "--sessions",
            "1",
            "--cores",
            "0",
            "--duration",
            "40ms",
            "--repeat",
            "1",
            "--target-ci",
            "0",
            "--tag-len",
            "16",
            "--dispatch",
            "single,burst:4",
        ])
        .arg("--csv")
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    common::ran_or_starved(&out, &common::results_at(&json));
    assert!(stdout.contains("kmac128/openssl/hw tag:16"), "{stdout}");
    assert!(
        stdout.contains("hmac-sha256/openssl/hw burst:4 tag:16"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (id, dispatch, tag_len) = (col("scenario_id"), col("dispatch"), col("tag_len"));
    let records: Vec<csv::StringRecord> = rows.records().map(|r| r.unwrap()).collect();
    assert_eq!(records.len(), 4);
    let mut ids: Vec<&str> = records.iter().map(|r| &r[id]).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "scenario ids are unique: {ids:?}");
    assert!(records.iter().all(|r| &r[tag_len] == "16"));
    assert!(records.iter().any(|r| &r[dispatch] == "burst:4"));
}
