//! CMAC over Twofish, Serpent and RC6 has no published vectors. We pin it two ways:
//! 1. each block cipher passes its published known answers (`vectors/cipher-*.vec`);
//! 2. an independent CMAC written here from NIST SP 800-38B §6 (checked on RFC 4493's AES vectors first)
//!    agrees with every backend's CMAC over that cipher on random keys and messages.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

use aes::cipher::{Array, BlockCipherEncrypt, KeyInit};
use macbench::mac::{self, vectors, KeyParams};

/// SP 800-38B CMAC over any 128-bit block cipher: subkeys by doubling in GF(2^128), last block
/// XORed with K1 (complete) or padded 10* and XORed with K2.
fn reference_cmac<C: BlockCipherEncrypt + KeyInit>(key: &[u8], msg: &[u8]) -> [u8; 16] {
    let cipher = C::new_from_slice(key).unwrap();
    let encrypt = |block: [u8; 16]| -> [u8; 16] {
        let mut b = Array::try_from(&block[..]).unwrap();
        cipher.encrypt_block(&mut b);
        let mut out = [0u8; 16];
        out.copy_from_slice(&b);
        out
    };
    let double = |b: [u8; 16]| -> [u8; 16] {
        let v = u128::from_be_bytes(b);
        let d = (v << 1) ^ if v >> 127 == 1 { 0x87 } else { 0 };
        d.to_be_bytes()
    };
    let l = encrypt([0u8; 16]);
    let k1 = double(l);
    let k2 = double(k1);
    let n = msg.len().div_ceil(16).max(1);
    let complete = !msg.is_empty() && msg.len() % 16 == 0;
    let mut x = [0u8; 16];
    for i in 0..n {
        let mut block = [0u8; 16];
        let chunk = &msg[i * 16..msg.len().min(i * 16 + 16)];
        block[..chunk.len()].copy_from_slice(chunk);
        if i == n - 1 {
            let sub = if complete {
                k1
            } else {
                block[chunk.len()] = 0x80;
                k2
            };
            block.iter_mut().zip(sub).for_each(|(b, s)| *b ^= s);
        }
        x.iter_mut().zip(block).for_each(|(a, b)| *a ^= b);
        x = encrypt(x);
    }
    x
}

#[test]
fn reference_cmac_matches_rfc_4493() {
    let file = mac::algorithm("cmac-aes128")
        .unwrap()
        .vectors
        .as_ref()
        .unwrap();
    let vs = vectors::parse_vectors(file.path, file.text).unwrap();
    assert!(vs.len() >= 4);
    for v in vs {
        assert_eq!(
            reference_cmac::<aes::Aes128>(&v.key, &v.msg).to_vec(),
            v.tag,
            "{}",
            v.source
        );
    }
}

fn cipher_kats<C: BlockCipherEncrypt + KeyInit>(file: &str) {
    let path = format!("{}/vectors/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let records = vectors::parse_records(&path, &text).unwrap();
    assert!(!records.is_empty(), "{path} has no records");
    for r in records {
        let key = r.bytes(&path, "key").unwrap().unwrap();
        let pt = r.bytes(&path, "pt").unwrap().unwrap();
        let ct = r.bytes(&path, "ct").unwrap().unwrap();
        let cipher = C::new_from_slice(&key).unwrap();
        let mut block = Array::try_from(&pt[..]).unwrap();
        cipher.encrypt_block(&mut block);
        assert_eq!(
            block.to_vec(),
            ct,
            "{path}:{} ({})",
            r.line,
            r.fields["source"]
        );
    }
}

/// Twofish, Serpent and RC6 each pass their published known answers.
#[test]
fn the_block_ciphers_pass_published_kats() {
    cipher_kats::<twofish::Twofish>("cipher-twofish.vec");
    cipher_kats::<serpent::Serpent>("cipher-serpent.vec");
    cipher_kats::<rc6::RC6_32_20_16>("cipher-rc6.vec");
}

fn backends_equal_reference<C: BlockCipherEncrypt + KeyInit>(alg: &str) {
    let functions: Vec<_> = mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == alg)
        .filter(|f| f.availability() == mac::Availability::Available)
        .collect();
    assert!(!functions.is_empty());
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as u8
    };
    for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 100, 1000, 4099] {
        let key: Vec<u8> = (0..16).map(|_| next()).collect();
        let msg: Vec<u8> = (0..len).map(|_| next()).collect();
        let expected = reference_cmac::<C>(&key, &msg);
        for f in &functions {
            let mut keyed = macbench::isolate::key(f, &key, KeyParams::default()).unwrap();
            let mut tag = [0u8; 16];
            keyed.tag_into(&[], &msg, &mut tag).unwrap();
            assert_eq!(tag, expected, "{} on {len} bytes", f.id());
        }
    }
}

/// CMAC over Twofish, Serpent and RC6 equals the SP 800-38B reference on every backend.
#[test]
fn cmac_over_each_cipher_equals_sp800_38b_reference() {
    backends_equal_reference::<twofish::Twofish>("cmac-twofish");
    backends_equal_reference::<serpent::Serpent>("cmac-serpent");
    backends_equal_reference::<rc6::RC6_32_20_16>("cmac-rc6");
}
