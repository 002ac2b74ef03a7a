//! The Mbed TLS backend: where its shim needed care — contexts reset (not re-keyed) per message, and
//! GMAC, whose additional data Mbed TLS 2.28 takes in one piece — and its `sw` rows, which say why there
//! are none. Its known answers and agreement with the other backends come from the registry-walking
//! tests (`known_answers.rs`, `cross_backend.rs`); its entries are pinned in `tests/backends.rs`.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::mac::{self, mbedtls, Accel, Availability, KeyParams, MAX_TAG_LEN};

const NOT_BUILT: &str =
    "the mbedtls backend is not built (libmbedtls-dev or the `mbedtls` feature)";

fn function(alg: &str, accel: Accel) -> mac::Function {
    common::registered(alg, "mbedtls", accel)
}

fn algorithms() -> Vec<&'static str> {
    mbedtls::BACKEND
        .entries
        .iter()
        .map(|e| e.algorithm)
        .collect()
}

use common::bytes;

#[test]
fn one_keyed_context_tags_a_sequence_of_messages_like_fresh_ones() {
    if common::skip_unless(mbedtls::BUILT, "mbedtls", NOT_BUILT) {
        return;
    }
    for alg in algorithms() {
        let f = function(alg, Accel::Hw);
        let key = bytes(1, f.algorithm.default_key_len);
        let nonce = bytes(2, f.algorithm.nonce_len.unwrap_or(0));
        let tag_len = f.algorithm.tag_len;
        let mut reused = macbench::isolate::key(&f, &key, KeyParams::default()).unwrap();
        // Lengths around the 16-, 64- and 128-byte blocks, in an order that leaves partial state behind.
        for (i, len) in [0usize, 17, 64, 1, 129, 16, 0, 300].into_iter().enumerate() {
            let msg = bytes(10 + i as u64, len);
            let mut fresh = [0u8; MAX_TAG_LEN];
            macbench::isolate::key(&f, &key, KeyParams::default())
                .unwrap()
                .tag_into(&nonce, &msg, &mut fresh[..tag_len])
                .unwrap();
            let mut again = [0u8; MAX_TAG_LEN];
            reused
                .tag_into(&nonce, &msg, &mut again[..tag_len])
                .unwrap();
            assert_eq!(again[..tag_len], fresh[..tag_len], "{alg}, message {i}");
            assert_ne!(
                fresh[..tag_len],
                [0u8; MAX_TAG_LEN][..tag_len],
                "{alg}: zero tag"
            );
            // Streamed in pieces on the same context, then whole again: the same tag each time.
            let pieces: Vec<&[u8]> = msg.chunks(7).collect();
            let mut chunked = [0u8; MAX_TAG_LEN];
            reused
                .tag_chunks(&nonce, &pieces, &mut chunked[..tag_len])
                .unwrap();
            assert_eq!(
                chunked[..tag_len],
                fresh[..tag_len],
                "{alg}, message {i} in chunks"
            );
        }
    }
}

#[test]
fn every_entry_streams_except_gmac() {
    if common::skip_unless(mbedtls::BUILT, "mbedtls", NOT_BUILT) {
        return;
    }
    for alg in algorithms() {
        let keyed = common::keyed_with(&function(alg, Accel::Hw), 3);
        assert_eq!(keyed.streams(), !alg.starts_with("gmac-"), "{alg}");
    }
}

#[test]
fn the_version_names_the_library_and_its_aes_paths() {
    let version = mbedtls::version();
    if mbedtls::BUILT {
        assert!(version.starts_with("Mbed TLS 2."), "{version}");
        // x86: which of its two accelerated paths it took; elsewhere: that it has none.
        if cfg!(target_arch = "x86_64") {
            assert!(version.contains("AES-NI"), "{version}");
        } else {
            assert!(version.contains("portable C"), "{version}");
        }
    } else {
        assert_eq!(version, "Mbed TLS not built");
    }
}

#[test]
fn sw_rows_say_why_there_are_none() {
    for alg in algorithms() {
        let Availability::Unavailable(why) = function(alg, Accel::Sw).availability() else {
            panic!("{alg}/mbedtls/sw is available");
        };
        if mbedtls::BUILT {
            assert_eq!(why, mbedtls::NO_SOFTWARE_ONLY, "{alg}");
        } else {
            // Not built: the row says what to install first, like the hw row.
            assert!(why.starts_with("not built"), "{alg}: {why}");
            assert!(why.contains("libmbedtls-dev"), "{alg}: {why}");
        }
    }
}
