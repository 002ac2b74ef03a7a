//! All backends of an algorithm agree: on the block-boundary lengths as fixed cases, and on random keys,
//! nonces and messages of 0 … 5000 bytes in a property test with a fixed seed (so a run is repeatable and
//! CI cannot pass one day and fail the next). Failures found by the property test are kept in
//! `tests/cross_backend.proptest-regressions` and replayed first on every run.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::mac::{self, Availability, KeyParams, MAX_TAG_LEN};
use proptest::prelude::*;

/// Message lengths where padding and block handling change: empty, around one and two 16-byte cipher
/// blocks, and around one and two 64-byte (SHA-1/SHA-256) and 128-byte (SHA-512) hash blocks.
const BOUNDARY_LENGTHS: &[usize] = &[
    0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
];

/// The tag of every available function of `alg` (backends, and ISA levels of one backend); none for a
/// length the function does not take (the 3GPP functions' bounded lengths, ipsec-mb's 65,534-byte
/// jobs), where it would refuse the message.
fn tags_of_all_backends(alg: &str, key: &[u8], nonce: &[u8], msg: &[u8]) -> Vec<(String, Vec<u8>)> {
    mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == alg && f.availability() == Availability::Available)
        .filter(|f| f.accepts_bytes(msg.len() as u64))
        .map(|f| {
            let mut keyed = macbench::isolate::key(&f, key, KeyParams::default()).unwrap();
            let mut tag = [0u8; MAX_TAG_LEN];
            let tag = &mut tag[..f.algorithm.tag_len];
            keyed.tag_into(nonce, msg, tag).unwrap();
            (f.id(), tag.to_vec())
        })
        .collect()
}

/// Backends that can run here (the null backend has nothing to agree on).
fn available_backends() -> Vec<&'static mac::Backend> {
    mac::BACKENDS
        .iter()
        .copied()
        .filter(|b| (b.availability)() == Availability::Available)
        .filter(|b| {
            b.entries
                .iter()
                .any(|e| mac::algorithm(e.algorithm).unwrap().family != mac::Family::Null)
        })
        .collect()
}

/// Algorithms that two or more available backends declare: what the tests below compare.
fn multi_backend_algorithms() -> Vec<&'static mac::Algorithm> {
    let backends = available_backends();
    mac::ALGORITHMS
        .iter()
        .filter(|a| {
            backends
                .iter()
                .filter(|b| b.entries.iter().any(|e| e.algorithm == a.name))
                .count()
                >= 2
        })
        .collect()
}

#[test]
fn every_available_backend_shares_algorithms_with_another() {
    // Guards the tests below from passing vacuously: each backend that runs here is compared with
    // another on every algorithm they share, and it shares most of its algorithms (all but what only
    // it implements, e.g. VMAC in Crypto++). How many each declares is pinned in tests/backends.rs.
    let backends = available_backends();
    assert!(backends.len() >= 2, "nothing to compare");
    let multi: Vec<_> = multi_backend_algorithms().iter().map(|a| a.name).collect();
    for b in backends {
        let mut mine: Vec<_> = b.entries.iter().map(|e| e.algorithm).collect();
        mine.dedup();
        let shared = mine.iter().filter(|a| multi.contains(a)).count();
        assert!(
            2 * shared > mine.len(),
            "{} shares only {shared} of {} algorithms with another available backend",
            b.name,
            mine.len()
        );
    }
}

/// The property tests' configuration, from this file's own seed.
fn fixed_seed_config(cases: u32) -> ProptestConfig {
    common::fixed_seed_config(cases, 0x6d61_6362_656e_6368)
}

/// Assert that every available backend of every algorithm gives the first one's tag of the message
/// `byte(0), byte(1), …` at each of `lengths` (key and nonce cut from `key` and `nonce`); the
/// (algorithm, length) pairs where two or more backends were compared.
fn all_agree(
    lengths: &[usize],
    key: &[u8],
    nonce: &[u8],
    byte: impl Fn(usize) -> u8,
) -> std::collections::BTreeSet<(&'static str, usize)> {
    let mut compared = std::collections::BTreeSet::new();
    for a in mac::ALGORITHMS {
        for &len in lengths {
            let msg: Vec<u8> = (0..len).map(&byte).collect();
            let key = &key[..a.default_key_len];
            let nonce = &nonce[..a.nonce_len.unwrap_or(0)];
            let tags = tags_of_all_backends(a.name, key, nonce, &msg);
            for (id, tag) in tags.iter().skip(1) {
                assert_eq!(tag, &tags[0].1, "{id} vs {} on {len} bytes", tags[0].0);
                compared.insert((a.name, len));
            }
        }
    }
    compared
}

#[test]
fn backends_agree_at_block_boundaries() {
    let key: Vec<u8> = (0..64u8).collect();
    let nonce: Vec<u8> = (0xa0..0xb0u8).collect();
    let compared = all_agree(BOUNDARY_LENGTHS, &key, &nonce, |i| (i * 7 + 3) as u8);
    // Every algorithm two available backends declare was compared at every length it takes (the
    // 3GPP functions take no empty message).
    for a in multi_backend_algorithms() {
        for &len in BOUNDARY_LENGTHS {
            if !a.message_bits.accepts_bytes(len as u64) {
                continue;
            }
            assert!(compared.contains(&(a.name, len)), "{} at {len}", a.name);
        }
    }
}

/// The sizes a run times by default (docs/methodology.md §5: 16 … 65536 bytes and the IP sizes): every
/// function of an algorithm gives the same tag at each, so no backend is timed at a length where it
/// disagrees with the others. The property test below stops at 5000 bytes; these reach 64 KiB.
#[test]
fn backends_agree_at_the_timed_lengths() {
    let key: Vec<u8> = (0..64u8).map(|b| b ^ 0x5c).collect();
    let nonce: Vec<u8> = (0x10..0x20u8).collect();
    let lengths: Vec<usize> = macbench::spec::DEFAULT_SIZES
        .iter()
        .map(|&len| len as usize)
        .collect();
    let compared = all_agree(&lengths, &key, &nonce, |i| (i * 13 + 5) as u8);
    // Every length two available backends take was compared.
    for a in multi_backend_algorithms() {
        for &len in macbench::spec::DEFAULT_SIZES {
            let takers: std::collections::BTreeSet<_> = mac::functions()
                .into_iter()
                .filter(|f| {
                    f.algorithm.name == a.name && f.availability() == Availability::Available
                })
                .filter(|f| f.accepts_bytes(u64::from(len)))
                .map(|f| f.backend.name)
                .collect();
            if takers.len() >= 2 {
                assert!(
                    compared.contains(&(a.name, len as usize)),
                    "{} at {len}",
                    a.name
                );
            }
        }
    }
}

#[test]
fn cbcmac_of_the_empty_message_is_one_encrypted_zero_block() {
    // macbench's CBC-MAC has at least one block: the empty message is tagged as one zero block, i.e.
    // AES-128(K, 0^128). The RustCrypto backend used to return the zero IV (16 zero bytes) instead.
    // Expected value: AES-128 of the zero block under key 000102…0f (OpenSSL and Crypto++ agree).
    let key: Vec<u8> = (0..16u8).collect();
    let tags = tags_of_all_backends("cbcmac-aes128", &key, &[], &[]);
    assert!(tags.len() >= 2, "{tags:?}");
    for (id, tag) in &tags {
        assert_eq!(hex::encode(tag), "c6a13b37878f5b826f4f8162a1c8d879", "{id}");
    }
}

proptest! {
    #![proptest_config(fixed_seed_config(48))]
    #[test]
    fn backends_agree(seed in any::<[u8; 64]>(), nonce in any::<[u8; 16]>(), msg in proptest::collection::vec(any::<u8>(), 0..5000)) {
        // Every algorithm with two available functions: two backends, or hw and sw of one (VMAC).
        for a in mac::ALGORITHMS {
            let key = &seed[..a.default_key_len];
            let nonce = &nonce[..a.nonce_len.unwrap_or(0)];
            let tags = tags_of_all_backends(a.name, key, nonce, &msg);
            if tags.len() < 2 {
                continue; // e.g. VMAC in a build without Crypto++, BLAKE3 (RustCrypto only)
            }
            for (id, tag) in &tags[1..] {
                prop_assert_eq!(tag, &tags[0].1, "{} vs {} on {} bytes", id, tags[0].0, msg.len());
            }
        }
    }
}

#[test]
fn a_shorter_tag_buffer_gets_the_prefix_of_the_full_tag() {
    // The wire format of `macbench net` truncates tags (e.g. HMAC-SHA256 to 16 bytes); every backend
    // must then write exactly the leading bytes of its full tag.
    let msg: Vec<u8> = (0..300u32).map(|i| (i * 13 % 256) as u8).collect();
    let mut checked = 0;
    for f in mac::functions() {
        if f.availability() != Availability::Available || f.algorithm.tag_len <= 8 {
            continue;
        }
        let key: Vec<u8> = (0..f.algorithm.default_key_len as u8).collect();
        let nonce = vec![7u8; f.algorithm.nonce_len.unwrap_or(0)];
        let mut keyed = macbench::isolate::key(&f, &key, KeyParams::default()).unwrap();
        let mut full = [0u8; MAX_TAG_LEN];
        let full = &mut full[..f.algorithm.tag_len];
        keyed.tag_into(&nonce, &msg, full).unwrap();
        let mut short = [0u8; 8];
        keyed.tag_into(&nonce, &msg, &mut short).unwrap();
        assert_eq!(&short[..], &full[..8], "{}", f.id());
        checked += 1;
    }
    assert!(checked > 20);
}

/// The tags of every available function of `alg` that takes `nonce` (the library's own nonce rule:
/// RustCrypto's GMAC takes 96-bit IVs only), each of `tag_len` bytes: KMAC computed with that output
/// length, every other MAC truncated.
fn tags_with(
    alg: &str,
    key: &[u8],
    nonce: &[u8],
    msg: &[u8],
    tag_len: usize,
) -> Vec<(String, Vec<u8>)> {
    mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == alg && f.availability() == Availability::Available)
        .filter(|f| f.accepts_bytes(msg.len() as u64))
        .filter(|f| {
            f.nonce_rule()
                .map_or(nonce.is_empty(), |r| r.check(nonce).is_none())
        })
        .map(|f| {
            let params = KeyParams::default().for_tag_len(f.algorithm, tag_len);
            let mut keyed = macbench::isolate::key(&f, key, params).unwrap();
            let mut tag = vec![0u8; tag_len];
            keyed.tag_into(nonce, msg, &mut tag).unwrap();
            (f.id(), tag)
        })
        .collect()
}

proptest! {
    #![proptest_config(fixed_seed_config(48))]
    /// Every nonce length the standards allow (GMAC: any non-empty IV, VMAC and UMAC: 1–16 bytes;
    /// a 16-byte VMAC nonce below 2^127), on every backend that takes it.
    #[test]
    fn backends_agree_on_every_nonce_length(
        seed in any::<[u8; 32]>(),
        nonce in proptest::collection::vec(any::<u8>(), 1..=mac::algorithm::GMAC_MAX_IV),
        msg in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        for a in mac::ALGORITHMS.iter().filter(|a| a.nonce_rule().is_some_and(|r| r.min < r.max)) {
            let rule = a.nonce_rule().unwrap();
            let mut nonce = nonce[..nonce.len().min(rule.max)].to_vec();
            if rule.below_2_127 && nonce.len() == rule.max {
                nonce[0] &= 0x7f;
            }
            let tags = tags_with(a.name, &seed[..a.default_key_len], &nonce, &msg, a.tag_len);
            for (id, tag) in tags.iter().skip(1) {
                prop_assert_eq!(tag, &tags[0].1, "{} vs {}: {}-byte nonce, {} bytes", id, tags[0].0, nonce.len(), msg.len());
            }
        }
    }

    /// KMAC's output length L (1 … 64 bytes) is an input: both backends agree on it, and for any L
    /// but the default the tag is not the prefix of the default tag.
    #[test]
    fn kmac_output_lengths_agree_and_are_not_truncations(
        seed in any::<[u8; 32]>(),
        l in 1usize..=MAX_TAG_LEN,
        msg in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        for a in ["kmac128", "kmac256"].map(|n| mac::algorithm(n).unwrap()) {
            let tags = tags_with(a.name, &seed, &[], &msg, l);
            prop_assert!(tags.len() >= 2, "{}: {:?}", a.name, tags);
            for (id, tag) in tags.iter().skip(1) {
                prop_assert_eq!(tag, &tags[0].1, "{} vs {} at L = {} bytes", id, tags[0].0, l);
            }
            let default = tags_with(a.name, &seed, &[], &msg, a.tag_len);
            let n = l.min(a.tag_len);
            prop_assert_eq!(l == a.tag_len, tags[0].1[..n] == default[0].1[..n], "{} L = {}", a.name, l);
        }
    }
}

/// The nonce rules themselves: a VMAC nonce of one byte is taken (and is the 16-byte nonce it pads to
/// on the left), a 16-byte one with the top bit set is refused with the reason, and RustCrypto's GMAC
/// refuses IVs it is not registered for while the standard's rule takes them.
#[test]
fn nonce_rules_follow_the_standards_and_the_libraries() {
    let vmac: Vec<_> = mac::functions()
        .into_iter()
        .filter(|f| {
            f.algorithm.name == "vmac-aes128-64" && f.availability() == Availability::Available
        })
        .collect();
    for f in &vmac {
        f.check_nonce(Some(&[0])).unwrap();
        f.check_nonce(Some(&[0x7f; 16])).unwrap();
        let e = f.check_nonce(Some(&[0x80; 16])).unwrap_err().to_string();
        assert!(e.contains("top bit"), "{e}");
        assert!(f.check_nonce(Some(&[0; 17])).is_err());
        let key = [9u8; 16];
        let one = tags_with("vmac-aes128-64", &key, &[0x05], b"abc", 8);
        let mut padded = [0u8; 16];
        padded[15] = 0x05;
        let sixteen = tags_with("vmac-aes128-64", &key, &padded, b"abc", 8);
        assert_eq!(one, sixteen, "a short VMAC nonce is the number it writes");
    }
    let gmac = common::first_of("gmac-aes128", "rustcrypto");
    let e = gmac.check_nonce(Some(&[1; 16])).unwrap_err().to_string();
    assert!(e.contains("12 bytes") && e.contains("RustCrypto"), "{e}");
    assert!(mac::algorithm("gmac-aes128")
        .unwrap()
        .nonce_rule()
        .unwrap()
        .check(&[1; 16])
        .is_none());
}
