//! All backends of an algorithm agree on random keys, nonces and messages of 0 … 5000 bytes.

use macbench::mac::{self, Availability, KeyParams, MAX_TAG_LEN};
use proptest::prelude::*;

fn tags_of_all_backends(alg: &str, key: &[u8], nonce: &[u8], msg: &[u8]) -> Vec<(String, Vec<u8>)> {
    mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == alg && f.availability() == Availability::Available)
        .map(|f| {
            let mut keyed = f.with_key(key, KeyParams::default()).unwrap();
            let mut tag = [0u8; MAX_TAG_LEN];
            let tag = &mut tag[..f.algorithm.tag_len];
            keyed.tag_into(nonce, msg, tag);
            (f.id(), tag.to_vec())
        })
        .collect()
}

fn multi_backend_algorithms() -> Vec<&'static mac::Algorithm> {
    mac::ALGORITHMS
        .iter()
        .filter(|a| {
            mac::functions()
                .iter()
                .filter(|f| f.algorithm.name == a.name)
                .count()
                >= 2
        })
        .collect()
}

#[test]
fn most_algorithms_have_two_backends_to_compare() {
    // Guards the property test below from passing vacuously.
    assert!(
        multi_backend_algorithms().len() >= 14,
        "{:?}",
        multi_backend_algorithms()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn backends_agree(seed in any::<[u8; 64]>(), nonce in any::<[u8; 16]>(), msg in proptest::collection::vec(any::<u8>(), 0..5000)) {
        for a in multi_backend_algorithms() {
            let key = &seed[..a.default_key_len];
            let nonce = &nonce[..a.nonce_len.unwrap_or(0)];
            let tags = tags_of_all_backends(a.name, key, nonce, &msg);
            if tags.is_empty() {
                continue; // e.g. VMAC in a build without Crypto++
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
        let mut keyed = f.with_key(&key, KeyParams::default()).unwrap();
        let mut full = [0u8; MAX_TAG_LEN];
        let full = &mut full[..f.algorithm.tag_len];
        keyed.tag_into(&nonce, &msg, full);
        let mut short = [0u8; 8];
        keyed.tag_into(&nonce, &msg, &mut short);
        assert_eq!(&short[..], &full[..8], "{}", f.id());
        checked += 1;
    }
    assert!(checked > 20);
}
