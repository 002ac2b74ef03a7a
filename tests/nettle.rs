//! The Nettle backend: the places its shim needed care (GMAC's associated data fed in blocks, UMAC's pad
//! cache across nonces, nonce lengths refused as return codes, not as Nettle's assertions), and that UMAC
//! and Poly1305-AES, which only Nettle implements, behave as their definitions say where no second backend
//! can cross-check them. When the backend is not built, that its rows say so. What it covers is its own
//! declaration (`nettle::BACKEND`), walked by the known-answer and cross-backend tests and pinned in
//! `tests/backends.rs`.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::mac::{self, nettle, Accel, Availability, KeyParams, MAX_TAG_LEN};

use common::{bytes, tag_of as tag};

fn function(alg: &str) -> mac::Function {
    common::registered(alg, "nettle", Accel::Hw)
}

fn keyed(alg: &str, key: &[u8]) -> Box<dyn mac::KeyedMac> {
    function(alg).with_key(key, KeyParams::default()).unwrap()
}

fn skip_unless_built() -> bool {
    common::skip_unless(
        nettle::BUILT,
        "nettle",
        "Nettle backend not built (install nettle-dev)",
    )
}

const UMACS: [(&str, usize); 4] = [
    ("umac32-aes128", 4),
    ("umac64-aes128", 8),
    ("umac96-aes128", 12),
    ("umac128-aes128", 16),
];

#[test]
fn umac_on_one_key_matches_a_fresh_key_for_every_nonce() {
    // UMAC-32/64 share one AES pad among nonces that differ in their low bits, cached in the context;
    // a stale cache after set_nonce would give wrong tags only on a reused key (as Crypto++'s VMAC-64
    // did). Nonces: the RFC's, neighbours in the low bits, a different last byte, and slot indices.
    if skip_unless_built() {
        return;
    }
    let key = b"abcdefghijklmnop";
    let mut nonces: Vec<[u8; 8]> = vec![
        *b"bcdefghi",
        *b"bcdefghh",
        *b"bcdefghj",
        *b"bcdefghk",
        *b"zzzzzzzz",
    ];
    nonces.extend((0u64..6).map(u64::to_le_bytes));
    nonces.push(*b"bcdefghi");
    for (alg, len) in UMACS {
        let mut reused = keyed(alg, key);
        for nonce in &nonces {
            let msg = bytes(u64::from(nonce[0]), 100);
            let got = tag(reused.as_mut(), len, nonce, &msg);
            let fresh = tag(keyed(alg, key).as_mut(), len, nonce, &msg);
            assert_eq!(got, fresh, "{alg} nonce {}", hex::encode(nonce));
        }
        // And the published 'abc' vector after all that (RFC 4418 appendix A; UMAC-128 on UMAC-96's).
        let t = tag(reused.as_mut(), len, b"bcdefghi", b"abc");
        let published = match len {
            4 => "abf3a3a0",
            8 => "d4d7b9f6bd4fbfcf",
            _ => "883c3d4b97a61976ffcf2323",
        };
        assert_eq!(hex::encode(&t[..published.len() / 2]), published, "{alg}");
    }
}

#[test]
fn umac_tags_are_prefixes_of_longer_ones_when_the_pad_is_not_split() {
    // UHASH's iterations are independent, and the pad is AES_k'(nonce): UMAC-96 and UMAC-128 use it
    // from its first byte, so UMAC-96 is UMAC-128's prefix for every nonce. UMAC-32/64 take their pad
    // from the part of the block the nonce's low 2 (1) bits select, so with those bits zero they are
    // prefixes too. With no second UMAC backend to cross-check, this ties the four entries together on
    // random inputs.
    if skip_unless_built() {
        return;
    }
    for seed in 0..8u64 {
        let key = bytes(seed, 16);
        let mut nonce = bytes(seed + 100, 8);
        for len in [0, 1, 31, 32, 33, 1023, 1024, 1025, 3000] {
            let msg = bytes(seed + 200 + len as u64, len);
            let t96 = tag(keyed("umac96-aes128", &key).as_mut(), 12, &nonce, &msg);
            let t128 = tag(keyed("umac128-aes128", &key).as_mut(), 16, &nonce, &msg);
            assert_eq!(t96[..], t128[..12], "{len} bytes");
            nonce[7] &= !3;
            let t128 = tag(keyed("umac128-aes128", &key).as_mut(), 16, &nonce, &msg);
            for (alg, tag_len) in UMACS {
                let t = tag(keyed(alg, &key).as_mut(), tag_len, &nonce, &msg);
                assert_eq!(t[..], t128[..tag_len], "{alg}, {len} bytes");
            }
        }
    }
}

#[test]
fn umac_distinct_slot_nonces_give_distinct_tags() {
    // The hot loop writes the schedule slot into the nonce; it must reach the pad.
    for (alg, _) in UMACS {
        assert_eq!(mac::algorithm(alg).unwrap().nonce_len, Some(8), "{alg}");
    }
    if skip_unless_built() {
        return;
    }
    for (alg, len) in UMACS {
        let mut k = keyed(alg, &bytes(3, 16));
        let a = tag(k.as_mut(), len, &0u64.to_le_bytes(), b"same message");
        let b = tag(k.as_mut(), len, &1u64.to_le_bytes(), b"same message");
        assert_ne!(a, b, "{alg}");
    }
}

#[test]
fn gmac_fed_in_odd_pieces_matches_the_whole_message() {
    // Nettle's gcm_update asserts that every call but the last brings whole 16-byte blocks of
    // associated data; the shim gathers pieces into blocks. Pieces straddling block edges, empty
    // pieces, and a message that ends on a block edge.
    if skip_unless_built() {
        return;
    }
    let key = bytes(5, 16);
    let nonce = bytes(6, 12);
    let mut k = keyed("gmac-aes128", &key);
    for len in [0usize, 5, 16, 33, 48, 100] {
        let msg = bytes(7 + len as u64, len);
        let whole = tag(k.as_mut(), 16, &nonce, &msg);
        for cuts in [
            &[0usize, 0][..],
            &[1, 15],
            &[7, 7, 7],
            &[16, 0, 1],
            &[15, 2, 20],
        ] {
            let mut pieces: Vec<&[u8]> = Vec::new();
            let mut rest = &msg[..];
            for &c in cuts {
                let (head, tail) = rest.split_at(c.min(rest.len()));
                pieces.push(head);
                rest = tail;
            }
            pieces.push(rest);
            let mut t = [0u8; 16];
            k.tag_chunks(&nonce, &pieces, &mut t).unwrap();
            assert_eq!(t[..], whole[..], "{len} bytes cut at {cuts:?}");
        }
    }
}

#[test]
fn a_nonce_nettle_would_assert_on_is_refused_not_an_abort() {
    // The registry checks nonce lengths before the backend sees them; the shim checks again and
    // answers with a status (UMAC takes 1..=16 bytes, Poly1305-AES exactly 16), never with Nettle's
    // assert(). tag_into turns the status into a refusal with the shim's reason, never a tag.
    if skip_unless_built() {
        return;
    }
    let mut out = [0u8; MAX_TAG_LEN];
    let mut umac = keyed("umac64-aes128", &bytes(8, 16));
    for nonce in [&[][..], &[1u8; 17][..]] {
        let refused = umac.tag_into(nonce, b"abc", &mut out[..8]).unwrap_err();
        assert!(refused.reason.contains("nonce"), "{refused}");
    }
    let mut poly = keyed("poly1305-aes", &bytes(9, 32));
    let refused = poly
        .tag_into(&[1u8; 8], b"abc", &mut out[..16])
        .unwrap_err();
    assert!(refused.reason.contains("nonce"), "{refused}");
    // …and the context still works afterwards.
    let t = tag(umac.as_mut(), 8, b"bcdefghi", b"abc");
    let fresh = tag(
        keyed("umac64-aes128", &bytes(8, 16)).as_mut(),
        8,
        b"bcdefghi",
        b"abc",
    );
    assert_eq!(t, fresh);
}

#[test]
fn poly1305_aes_is_poly1305_of_r_plus_aes_k_of_the_nonce() {
    // Nettle's key layout (k || r) against the RFC 8439 Poly1305 of the other backends: with
    // s = AES_k(n) computed by OpenSSL, poly1305(r || s) must equal poly1305-aes(k || r, n).
    if skip_unless_built() {
        return;
    }
    let poly = mac::functions()
        .into_iter()
        .find(|f| {
            f.algorithm.name == "poly1305"
                && f.accel == Accel::Hw
                && f.availability() == Availability::Available
        })
        .expect("an available poly1305 backend");
    for seed in 0..6u64 {
        let k = bytes(seed + 10, 16);
        let r = bytes(seed + 20, 16);
        let n = bytes(seed + 30, 16);
        let msg = bytes(seed + 40, 17 * seed as usize);
        let aes = openssl::symm::Cipher::aes_128_ecb();
        let mut s = openssl::symm::encrypt(aes, &k, None, &n).unwrap();
        s.truncate(16);
        let expected = tag(
            macbench::isolate::key(&poly, &[r.clone(), s].concat(), KeyParams::default())
                .unwrap()
                .as_mut(),
            16,
            &[],
            &msg,
        );
        let got = tag(
            keyed("poly1305-aes", &[k, r].concat()).as_mut(),
            16,
            &n,
            &msg,
        );
        assert_eq!(got, expected, "seed {seed}");
    }
}

#[test]
fn without_the_library_every_row_says_what_to_install() {
    if nettle::BUILT {
        assert_eq!((nettle::BACKEND.availability)(), Availability::Available);
        assert!(
            nettle::version().starts_with("Nettle 3."),
            "{}",
            nettle::version()
        );
        return;
    }
    for f in mac::functions()
        .iter()
        .filter(|f| f.backend.name == "nettle")
    {
        match f.availability() {
            Availability::Unavailable(why) => {
                assert!(why.starts_with("not built"), "{}: {why}", f.id());
                assert!(why.contains("nettle-dev"), "{}: {why}", f.id());
            }
            Availability::Available => panic!("{} available although not built", f.id()),
        }
    }
}
