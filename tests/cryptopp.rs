//! The Crypto++ backend: that it agrees with the other backends, and the two places where Crypto++ needed
//! care (CBC-MAC of the empty message, VMAC-64's pad cache). When the backend is not built, that its rows
//! say so. What it covers is its own declaration (`cryptopp::BACKEND`), walked by the known-answer and
//! cross-backend tests and pinned, with every backend's, in `tests/backends.rs`.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::mac::{self, cryptopp, Accel, Availability, KeyParams};

use common::{bytes, registered as function, tag_with as tag};

fn built() -> bool {
    cryptopp::BUILT
}

#[test]
fn built_where_the_library_is_installed() {
    let installed = std::path::Path::new("/usr/include/cryptopp/cryptlib.h").exists()
        || std::path::Path::new("/usr/include/crypto++/cryptlib.h").exists();
    let f = function("vmac-aes128-64", "cryptopp", Accel::Hw);
    if built() {
        assert_eq!(f.availability(), Availability::Available);
        assert!(
            mac::PLANNED.is_empty(),
            "VMAC is no longer planned once built"
        );
    } else {
        // Built without the feature or without the library: listed, unavailable, saying why.
        match f.availability() {
            Availability::Unavailable(why) => {
                assert!(why.starts_with("not built"), "{why}");
                assert!(why.contains("libcrypto++-dev"), "{why}");
            }
            Availability::Available => panic!("not built but available"),
        }
        assert!(mac::PLANNED.iter().any(|p| p.0 == "vmac-aes128-64"));
        assert!(
            !installed || cfg!(not(feature = "cryptopp")),
            "libcrypto++-dev is installed and the feature is on, but the backend was not built"
        );
    }
}

#[test]
fn cmac_over_twofish_serpent_rc6_equals_rustcrypto_on_random_inputs() {
    if common::skip_unless(
        built(),
        "cryptopp",
        "Crypto++ backend not built (install libcrypto++-dev)",
    ) {
        return;
    }
    for alg in ["cmac-twofish", "cmac-serpent", "cmac-rc6"] {
        let reference = function(alg, "rustcrypto", Accel::Hw);
        let ours = function(alg, "cryptopp", Accel::Hw);
        for (i, len) in [0usize, 1, 15, 16, 17, 64, 100, 1000, 4099]
            .into_iter()
            .enumerate()
        {
            let key = bytes(7 + i as u64, 16);
            let msg = bytes(1000 + i as u64, len);
            assert_eq!(
                tag(&ours, &key, &[], &msg),
                tag(&reference, &key, &[], &msg),
                "{alg} on {len} bytes"
            );
        }
    }
}

#[test]
fn cross_backend_property_test_sees_the_cryptopp_backend() {
    // tests/cross_backend.rs compares every available backend of each algorithm with two or more. Every
    // algorithm Crypto++ shares with another backend (all but VMAC: tests/backends.rs pins how many it
    // declares) has another available backend to compare with.
    if common::skip_unless(
        built(),
        "cryptopp",
        "Crypto++ backend not built (install libcrypto++-dev)",
    ) {
        return;
    }
    let mut shared = 0;
    for entry in cryptopp::BACKEND
        .entries
        .iter()
        .filter(|e| e.accel == Accel::Hw)
    {
        let declared_elsewhere = mac::BACKENDS
            .iter()
            .filter(|b| b.name != "cryptopp")
            .any(|b| b.entries.iter().any(|e| e.algorithm == entry.algorithm));
        let family = mac::algorithm(entry.algorithm).unwrap().family;
        assert_eq!(
            declared_elsewhere,
            family != mac::Family::Vmac,
            "{}: only VMAC is Crypto++'s alone",
            entry.algorithm
        );
        if !declared_elsewhere {
            continue;
        }
        let others = mac::functions()
            .into_iter()
            .filter(|f| f.algorithm.name == entry.algorithm && f.backend.name != "cryptopp")
            .filter(|f| f.availability() == Availability::Available)
            .count();
        assert!(
            others >= 1,
            "{} has nothing to compare Crypto++ with",
            entry.algorithm
        );
        shared += 1;
    }
    assert!(shared > 0);
}

#[test]
fn cbcmac_of_the_empty_message_is_one_encrypted_zero_block() {
    // Crypto++'s CBC_MAC returns its zero register for the empty message without encrypting; macbench's
    // definition zero-pads to one block. The shim feeds the zero block; OpenSSL's CBC-MAC is the referee.
    if common::skip_unless(
        built(),
        "cryptopp",
        "Crypto++ backend not built (install libcrypto++-dev)",
    ) {
        return;
    }
    let ours = function("cbcmac-aes128", "cryptopp", Accel::Hw);
    let openssl = function("cbcmac-aes128", "openssl", Accel::Hw);
    let key = bytes(3, 16);
    let empty = tag(&ours, &key, &[], &[]);
    assert_ne!(empty, vec![0u8; 16]);
    assert_eq!(empty, tag(&openssl, &key, &[], &[]));
    for len in [1usize, 15, 16, 17, 33] {
        let msg = bytes(len as u64, len);
        assert_eq!(
            tag(&ours, &key, &[], &msg),
            tag(&openssl, &key, &[], &msg),
            "{len} bytes"
        );
    }
    // Zero padding, not 10* padding: a partial block equals the same block with explicit zeros.
    let short = [0xabu8; 5];
    let mut padded = [0u8; 16];
    padded[..5].copy_from_slice(&short);
    assert_eq!(
        tag(&ours, &key, &[], &short),
        tag(&ours, &key, &[], &padded)
    );
}

#[test]
fn vmac64_pad_is_recomputed_after_a_nonce_with_a_different_last_byte() {
    // Regression: Crypto++ 8.7 kept a stale cached pad when the new nonce's last byte differed from the
    // cached one in more than bit 0. Key once, tag under other nonces, then the published vector.
    if common::skip_unless(
        built(),
        "cryptopp",
        "Crypto++ backend not built (install libcrypto++-dev)",
    ) {
        return;
    }
    let f = function("vmac-aes128-64", "cryptopp", Accel::Hw);
    let key = b"abcdefghijklmnop";
    let mut keyed = macbench::isolate::key(&f, key, KeyParams::default()).unwrap();
    let mut t = [0u8; 8];
    for nonce in [*b"\0\0\0\0\0\0\0\x01", *b"\0\0\0\0\0\0\0\x80", *b"zzzzzzzz"] {
        keyed.tag_into(&nonce, b"abc", &mut t).unwrap();
    }
    keyed.tag_into(b"bcdefghi", b"abc", &mut t).unwrap();
    assert_eq!(
        hex::encode(t),
        "2d376cf5b1813ce5",
        "draft-krovetz-vmac-01 'abc'"
    );
    // Nonces differing only in the low bit share one AES call (the draft's pad halves): still right.
    let fresh = |nonce: &[u8]| {
        let mut k = macbench::isolate::key(&f, key, KeyParams::default()).unwrap();
        let mut out = [0u8; 8];
        k.tag_into(nonce, b"abc", &mut out).unwrap();
        out
    };
    keyed.tag_into(b"bcdefghh", b"abc", &mut t).unwrap();
    assert_eq!(t, fresh(b"bcdefghh"));
    keyed.tag_into(b"bcdefghi", b"abc", &mut t).unwrap();
    assert_eq!(t, fresh(b"bcdefghi"));
}

#[test]
fn vmac_benchmark_nonces_are_the_slot_index_and_all_valid() {
    // The hot loop writes the schedule slot into the first 8 bytes of the nonce; VMAC's nonce is exactly
    // those 8 bytes, left-padded to the block by the library, so its leading bit is always 0.
    for alg in ["vmac-aes128-64", "vmac-aes128-128"] {
        let a = mac::algorithm(alg).unwrap();
        assert_eq!(a.nonce_len, Some(8), "{alg}");
        let file = a.vectors.as_ref().expect("VMAC vectors");
        let vs = mac::vectors::parse_vectors(file.path, file.text).unwrap();
        assert_eq!(vs.len(), 10, "{}", file.path);
        assert!(vs
            .iter()
            .all(|v| v.nonce.as_deref() == Some(&b"bcdefghi"[..])));
    }
    if common::skip_unless(
        built(),
        "cryptopp",
        "Crypto++ backend not built (install libcrypto++-dev)",
    ) {
        return;
    }
    // Distinct slots give distinct tags for one message (the nonce reaches the pad).
    let f = function("vmac-aes128-128", "cryptopp", Accel::Hw);
    let key = bytes(11, 16);
    let a = tag(&f, &key, &0u64.to_le_bytes(), b"same message");
    let b = tag(&f, &key, &1u64.to_le_bytes(), b"same message");
    assert_ne!(a, b);
}
