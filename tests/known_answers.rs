//! Every registry entry runs every published vector of its algorithm (whole, repeated on one key, and in
//! several chunkings where the backend streams), and every algorithm the project promises is available.
//! The tests walk the registry (`mac::functions()`), naming no backend's list of algorithms; what each
//! backend declares is pinned once, in `tests/backends.rs`.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::mac::{self, vectors, Availability};

#[test]
fn every_available_function_passes_every_vector_of_its_algorithm() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for f in mac::functions() {
        if f.availability() != Availability::Available {
            continue;
        }
        let result = vectors::self_test(&f, macbench::isolate::key);
        ran += result.vectors;
        if !result.ok() {
            failures.push(format!("{}: {:?}", result.function, result.failures));
        }
        // Every MAC ran vectors: a note ("no vector file") passes `ok()` but is no known answer.
        if f.algorithm.family != mac::Family::Null && result.vectors == 0 {
            failures.push(format!(
                "{}: no vector ran ({:?})",
                result.function, result.note
            ));
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
    assert!(ran > 200, "only {ran} vectors ran: vector files missing?");
}

#[test]
fn every_mac_algorithm_has_a_nonempty_vector_file_with_sources() {
    for a in mac::ALGORITHMS {
        if a.family == mac::Family::Null {
            continue; // null is no MAC.
        }
        let file = a
            .vectors
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no vector file", a.name));
        let vs = vectors::parse_vectors(file.path, file.text).unwrap();
        assert!(!vs.is_empty(), "{} is empty", file.path);
        for v in &vs {
            assert!(
                !v.source.trim().is_empty(),
                "{}:{} has no source",
                file.path,
                v.line
            );
        }
    }
}

#[test]
fn every_listed_algorithm_is_available_in_at_least_one_backend() {
    // Unless every backend declaring it is an optional library this build left out (VMAC without
    // Crypto++): then `list` says what to install.
    for a in mac::ALGORITHMS {
        let declaring: Vec<_> = mac::BACKENDS
            .iter()
            .filter(|b| b.entries.iter().any(|e| e.algorithm == a.name))
            .collect();
        assert!(!declaring.is_empty(), "{} has no backend", a.name);
        let available = mac::functions()
            .iter()
            .any(|f| f.algorithm.name == a.name && f.availability() == Availability::Available);
        if available {
            continue;
        }
        for b in declaring {
            match (b.availability)() {
                Availability::Unavailable(why) if why.starts_with("not built") => {}
                other => panic!("{} has no available backend; {}: {other:?}", a.name, b.name),
            }
        }
    }
}

#[test]
fn streaming_backends_are_exercised_in_chunks() {
    // A test that could fail: if tag_chunks silently fell back to joining, `chunked` would be false.
    let f = common::first_of("hmac-sha256", "openssl");
    assert!(vectors::self_test(&f, macbench::isolate::key).chunked);
}

#[test]
fn a_wrong_vector_is_reported_with_file_line_and_source() {
    let f = common::first_of("hmac-sha256", "rustcrypto");
    let text = "source = deliberately wrong\nkey = 00\nmsg = 00\ntag = @repeat(00,32)\n";
    let v = &vectors::parse_vectors("bad.vec", text).unwrap()[0];
    let err = vectors::check_vector(&f, v, macbench::isolate::key).unwrap_err();
    assert!(err.contains("expected 0000"), "{err}");
}

#[test]
fn vector_generators_and_parse_errors() {
    assert_eq!(
        vectors::decode_bytes("@seq(5,3)").unwrap(),
        vec![0, 1, 2, 0, 1]
    );
    assert_eq!(
        vectors::decode_bytes("@repeat(ab01,2)").unwrap(),
        vec![0xab, 1, 0xab, 1]
    );
    assert_eq!(vectors::decode_bytes("").unwrap(), Vec::<u8>::new());
    assert!(vectors::decode_bytes("zz").is_err());
    let err = vectors::parse_records("x.vec", "key = 00\nnonsense\n").unwrap_err();
    assert_eq!(err.line, 2);
    assert!(err.to_string().starts_with("x.vec:2:"), "{err}");
    let err = vectors::parse_vectors("x.vec", "key = 00\nmsg = 00\n").unwrap_err();
    assert!(err.to_string().contains("missing field `source`"), "{err}");
}
