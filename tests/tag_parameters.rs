//! Every parameter the standards allow, through the command line: nonces of every length a
//! construction takes (VMAC 1–16 bytes below 2^127, GMAC any non-empty IV), and one `--tag-len` rule
//! for `tag` and `run` (a truncation as deployed, RFC 4868's HMAC-SHA-256-128; KMAC's output length L,
//! an input of the construction). Refusals are one line, exit 2, naming what is accepted.

#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use macbench::mac::{self, Availability};

/// [`tag`] with the words of `line` as its arguments.
fn tag_line(line: &str, msg: &[u8]) -> Result<String, (Option<i32>, String)> {
    tag(&line.split_whitespace().collect::<Vec<_>>(), msg)
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
        let short = tag_line(
            &format!("--alg vmac-aes128-64 --backend {b} --key {KEY16} --nonce 00"),
            b"abc",
        )
        .unwrap();
        let padded = tag_line(&format!("--alg vmac-aes128-64 --backend {b} --key {KEY16} --nonce 00000000000000000000000000000000"),
            b"abc",
        )
        .unwrap();
        assert_eq!(
            short, padded,
            "{b}: the nonce is a number, padded on the left"
        );
        tag_line(&format!("--alg vmac-aes128-64 --backend {b} --key {KEY16} --nonce 7fffffffffffffffffffffffffffffff"),
            b"abc",
        )
        .unwrap();
        let (code, err) = tag_line(&format!("--alg vmac-aes128-64 --backend {b} --key {KEY16} --nonce 80000000000000000000000000000000"),
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
                    // RustCrypto's aes-gcm types and aws-lc-rs's `aead::Nonce` are 96-bit only,
                    // and so is DPDK cryptodev's AES-GMAC auth op.
                    assert!(["rustcrypto", "aws-lc", "dpdk"].contains(&b), "{err}");
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
        let kmac = |extra: &str| {
            tag_line(
                &format!("--alg kmac128 --backend {b} --key {key} {extra}"),
                &msg,
            )
            .unwrap()
        };
        let default = kmac("");
        // NIST SP 800-185 KMAC_samples.pdf Sample #1 (L = 256).
        assert_eq!(
            default,
            "e5780b0d3ea6f7d3a429c5706aa43a00fadbd7d49628839e3187243f456ee14e"
        );
        let twenty = kmac("--tag-len 20");
        assert_eq!(twenty.len(), 40);
        assert_ne!(
            twenty,
            default[..40],
            "{b}: KMAC with L = 160 is not a cut of L = 256"
        );
        let long = kmac("--tag-len 64");
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
    let cut = tag_line(
        &format!("--alg hmac-sha256 --key {KEY16} --tag-len 16"),
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
    let out = common::fake_run("run --alg kmac128,hmac-sha256 --sizes 64 --sessions 1 --cores 0")
        .args(
            "--duration 40ms --repeat 1 --target-ci 0 --tag-len 16 --dispatch single,burst:4"
                .split_whitespace(),
        )
        .arg("--csv")
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    common::ran(&out, &common::results_at(&json));
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

/// Issue 34: tiny-keccak's KMAC, the rustcrypto row before, returned `d41310d6…` for a 163-byte key
/// (its padded prefix exactly one 168-byte block), exit 0. OpenSSL and pycryptodome give `aa2db3e9…`.
#[test]
fn kmac_keys_and_customizations_at_rate_multiples_tag_correctly() {
    let key = "00".repeat(163);
    let got = tag_line(
        &format!("--alg kmac128 --backend rustcrypto --key {key}"),
        b"abc",
    )
    .unwrap();
    assert_eq!(
        got,
        "aa2db3e9357cbe17e319351c6d67aa514ac921b66a586da88f19bcb6f2509fa2"
    );
    // Every KMAC backend agrees with every other at each rate-multiple length the issue names, for
    // the key and for S (where the library takes it: OpenSSL's key and S are at most 512 bytes).
    let seq = |n: usize| -> String { (0..n).map(|i| format!("{:02x}", i % 256)).collect() };
    for (alg, keys, customs) in [
        (
            "kmac128",
            &[163, 331, 499, 667, 835, 1003][..],
            &[157, 325, 493, 661][..],
        ),
        (
            "kmac256",
            &[131, 267, 403, 539, 675, 811, 947][..],
            &[125, 261, 397, 533, 669][..],
        ),
    ] {
        let cases = keys
            .iter()
            .map(|&k| (k, 0))
            .chain(customs.iter().map(|&s| (32, s)));
        for (key_len, custom_len) in cases {
            let key = seq(key_len);
            let custom = seq(custom_len);
            let mut tags = Vec::new();
            for b in backends_of(alg) {
                let f = mac::functions()
                    .into_iter()
                    .find(|f| f.algorithm.name == alg && f.backend.name == b)
                    .unwrap();
                let max_custom = f.key_limit().and_then(|l| l.max_customization);
                if !f.accepts_key_len(key_len) || max_custom.is_some_and(|m| custom_len > m) {
                    continue;
                }
                let mut args = vec!["--alg", alg, "--backend", b, "--key", &key];
                if custom_len > 0 {
                    args.extend(["--custom", &custom]);
                }
                tags.push((b, tag(&args, b"abc").unwrap()));
            }
            assert!(
                tags.iter().any(|(b, _)| *b == "rustcrypto"),
                "{alg} key {key_len} S {custom_len}: rustcrypto did not run"
            );
            assert!(
                tags.windows(2).all(|w| w[0].1 == w[1].1),
                "{alg} key {key_len} S {custom_len}: {tags:?}"
            );
        }
    }
}

/// Issue 34: OpenSSL's KMAC keys above 512 bytes and libsodium's BLAKE2b keys below 16 failed with
/// exit 1 and the library's raw message while `list` advertised 1024 and 1–64. Now the registry holds
/// each library's range: `list` shows it, `tag` refuses outside it up front, one line, exit 2.
#[test]
fn library_key_limits_are_registry_facts_refused_up_front() {
    let cases: &[(&str, &str, usize, &str)] = &[
        ("kmac128", "openssl", 513, "16–512 bytes"),
        ("kmac256", "openssl", 600, "32–512 bytes"),
        ("blake2b-keyed", "sodium", 15, "16–64 bytes"),
        ("blake2b-keyed", "sodium", 1, "16–64 bytes"),
    ];
    let mut ran = 0;
    for &(alg, backend, key_len, range) in cases {
        if !backends_of(alg).contains(&backend) {
            common::skip(
                backend,
                &format!("{alg} through {backend} is not built here"),
            );
            continue;
        }
        ran += 1;
        let key = "00".repeat(key_len);
        let (code, stderr) = tag_line(
            &format!("--alg {alg} --backend {backend} --key {key}"),
            b"abc",
        )
        .unwrap_err();
        assert_eq!(code, Some(2), "{alg}/{backend} {key_len}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "macbench: {alg}/{backend}/hw: key is {key_len} bytes; this library takes {range}"
            )),
            "{stderr}"
        );
        // The edge itself is taken.
        let edge = if key_len > 64 { 512 } else { 16 };
        tag(
            &[
                "--alg",
                alg,
                "--backend",
                backend,
                "--key",
                &"00".repeat(edge),
            ],
            b"abc",
        )
        .unwrap();
    }
    if ran == 0 {
        return;
    }
    let out = macbench().args(["list", "--json", "-"]).output().unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let key_bytes = |alg: &str, backend: &str| -> Vec<String> {
        doc["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["algorithm"] == alg && r["backend"] == backend && r["available"] == true)
            .map(|r| r["key_bytes"].as_str().unwrap().to_string())
            .collect()
    };
    for &(alg, backend, _, range) in cases {
        let shown = key_bytes(alg, backend);
        let want = range.trim_end_matches(" bytes");
        if backends_of(alg).contains(&backend) {
            assert!(
                !shown.is_empty() && shown.iter().all(|k| k == want),
                "{alg}/{backend}: {shown:?}"
            );
        }
    }
    // The other backends still take the algorithm's whole range.
    assert!(key_bytes("kmac128", "rustcrypto")
        .iter()
        .all(|k| k == "16–1024"));
}

/// `run` and `net` key every function with its algorithm's default length: a library key limit
/// (`Backend::key_limit`) must never exclude it, or every such run would fail at key setup.
#[test]
fn every_functions_default_key_is_one_its_library_takes() {
    for f in mac::functions() {
        assert!(
            f.accepts_key_len(f.algorithm.default_key_len),
            "{}: default key of {} bytes outside {}",
            f.id(),
            f.algorithm.default_key_len,
            f.describe_key_lengths()
        );
    }
}
