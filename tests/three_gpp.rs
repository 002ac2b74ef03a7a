//! The 3GPP integrity functions (128-EIA2, 128-EIA3, UIA2, UIA1), which only ipsec-mb implements, so
//! the cross-backend test has nothing to compare them with. What stands in for it here:
//! - 128-EIA2 on whole bytes is AES-CMAC-128 of the 8-byte COUNT‖BEARER‖DIRECTION‖0^26 header and the
//!   message, cut to 32 bits: every available backend's `cmac-aes128` must give those tags, on random
//!   keys, parameters and messages and on the block boundaries, for every `eia2-aes128` row (hw and
//!   each ISA level), one message at a time and in batches;
//! - the nonce layout: only the defined bits of BEARER and DIRECTION count (the engine's slot index
//!   fills the nonce's first bytes), while every defined bit changes the tag;
//! - the accepted lengths (`Algorithm::message_bits`) are the library's: the longest accepted message
//!   is tagged, one bit more is refused, and so is the empty message where the range says so;
//! - a sweep leaves out, and says so, the sizes an algorithm does not take.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::mac::{self, ipsecmb, Accel, Availability, Batch, KeyParams};

const THREE_GPP: [&str; 4] = ["eia2-aes128", "eia3-zuc128", "uia2-snow3g", "uia1-kasumi"];

fn skip_unless_built() -> bool {
    common::skip_unless(
        ipsecmb::BUILT,
        "ipsecmb",
        "the 3GPP functions come only with the ipsec-mb backend, which is not built (libipsec-mb-dev, x86-64)",
    )
}

use common::{bytes, tag_with as tag};

fn available(alg: &str) -> Vec<mac::Function> {
    mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == alg && f.availability() == Availability::Available)
        .collect()
}

/// COUNT ‖ BEARER (5 bits) ‖ DIRECTION (1 bit) ‖ 0^26 from the 6-byte nonce (TS 33.401 B.2.3).
fn eia2_header(nonce: &[u8]) -> [u8; 8] {
    [
        nonce[0],
        nonce[1],
        nonce[2],
        nonce[3],
        ((nonce[4] & 0x1f) << 3) | ((nonce[5] & 1) << 2),
        0,
        0,
        0,
    ]
}

#[test]
fn every_3gpp_function_is_registered_with_a_4_byte_tag_and_its_parameters_as_nonce() {
    for name in THREE_GPP {
        let a = mac::algorithm(name).unwrap();
        assert_eq!(a.tag_len, 4, "{name}");
        let nonce = if name.starts_with("eia") { 6 } else { 9 };
        assert_eq!(a.nonce_len, Some(nonce), "{name}");
        // ipsec-mb registers hw and the four levels; a DPDK device takes EIA3 and UIA2 too (DPDK's
        // ops carry no EIA2 header, and UIA1's direction bit goes after the message, which would
        // need a copy); nothing else implements them.
        let backends: Vec<_> = mac::BACKENDS
            .iter()
            .filter(|b| b.entries.iter().any(|e| e.algorithm == name))
            .map(|b| b.name)
            .collect();
        let expected: &[&str] = match name {
            "eia3-zuc128" | "uia2-snow3g" => &["ipsecmb", "dpdk"],
            _ => &["ipsecmb"],
        };
        assert_eq!(backends, expected, "{name}");
    }
}

#[test]
fn eia2_is_cmac_aes128_of_the_header_and_message_cut_to_32_bits() {
    if skip_unless_built() {
        return;
    }
    let eia2 = available("eia2-aes128");
    let cmac = available("cmac-aes128");
    assert!(eia2.len() >= 2, "hw and at least one level: {eia2:?}");
    assert!(
        cmac.iter().any(|f| f.backend.name != "ipsecmb"),
        "no other backend's cmac-aes128 to compare with: {cmac:?}"
    );
    let mut lengths: Vec<usize> = vec![0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 1500];
    lengths.extend((0..24).map(|i| bytes(90 + i, 2)[0] as usize * 8 + i as usize));
    let mut compared = 0;
    for (i, &len) in lengths.iter().enumerate() {
        let key = bytes(1000 + i as u64, 16);
        let nonce = bytes(2000 + i as u64, 6);
        let msg = bytes(3000 + i as u64, len);
        let framed = [&eia2_header(&nonce)[..], &msg].concat();
        for c in &cmac {
            let expected = &tag(c, &key, &[], &framed)[..4];
            for e in &eia2 {
                assert_eq!(
                    tag(e, &key, &nonce, &msg),
                    expected,
                    "{e:?} vs {c:?} at {len} bytes"
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= lengths.len() * 2 * cmac.len());
}

#[test]
fn eia2_in_a_batch_of_jobs_matches_cmac_too() {
    // The batch path copies each message behind its header in its own lane's buffer.
    if skip_unless_built() {
        return;
    }
    let cmac = available("cmac-aes128")
        .into_iter()
        .find(|f| f.backend.name == "openssl" || f.backend.name == "rustcrypto")
        .unwrap();
    for f in available("eia2-aes128") {
        let key = bytes(5, 16);
        let mut k = macbench::isolate::key(&f, &key, KeyParams::default()).unwrap();
        let messages: Vec<Vec<u8>> = (0..16).map(|i| bytes(40 + i, i as usize * 37)).collect();
        let msgs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
        let nonces = bytes(77, 16 * 6);
        let mut tags = vec![0u8; 16 * 4];
        k.tag_batch(&mut Batch {
            msgs: &msgs,
            nonces: &nonces,
            nonce_len: 6,
            tags: &mut tags,
            tag_len: 4,
        })
        .unwrap();
        for (i, msg) in msgs.iter().enumerate() {
            let framed = [&eia2_header(&nonces[i * 6..i * 6 + 6])[..], msg].concat();
            assert_eq!(
                &tags[i * 4..i * 4 + 4],
                &tag(&cmac, &key, &[], &framed)[..4],
                "{f:?}: message {i} of the batch"
            );
        }
    }
}

#[test]
fn only_the_defined_bits_of_the_parameters_count() {
    if skip_unless_built() {
        return;
    }
    for name in THREE_GPP {
        let f = available(name)
            .into_iter()
            .find(|f| f.accel == Accel::Hw)
            .unwrap();
        let n = f.algorithm.nonce_len.unwrap();
        // Which bits of each nonce byte are defined: BEARER is 5 bits, DIRECTION 1.
        let defined: Vec<u8> = if n == 6 {
            vec![0xff, 0xff, 0xff, 0xff, 0x1f, 0x01]
        } else {
            vec![0xff; 8].into_iter().chain([0x01]).collect()
        };
        let key = bytes(9, 16);
        let msg = bytes(10, 100);
        let nonce = bytes(11, n);
        let masked: Vec<u8> = nonce.iter().zip(&defined).map(|(b, m)| b & m).collect();
        let junk: Vec<u8> = masked.iter().zip(&defined).map(|(b, m)| b | !m).collect();
        let base = tag(&f, &key, &masked, &msg);
        assert_eq!(
            tag(&f, &key, &junk, &msg),
            base,
            "{name}: undefined bits changed the tag"
        );
        // Every defined bit is used.
        for (byte, &mask) in defined.iter().enumerate() {
            for bit in (0..8).filter(|b| mask >> b & 1 == 1) {
                let mut other = masked.clone();
                other[byte] ^= 1 << bit;
                assert_ne!(
                    tag(&f, &key, &other, &msg),
                    base,
                    "{name}: nonce byte {byte} bit {bit} is ignored"
                );
            }
        }
    }
}

#[test]
fn the_accepted_lengths_are_the_librarys() {
    if skip_unless_built() {
        return;
    }
    for name in THREE_GPP {
        for f in available(name) {
            let accepted = f.algorithm.message_bits;
            let mut k = macbench::isolate::key(&f, &bytes(12, 16), KeyParams::default()).unwrap();
            let nonce = bytes(13, f.algorithm.nonce_len.unwrap());
            let mut t = [0u8; 4];
            // UIA2's 2^32 − 1 bits are half a gigabyte: its top is the library's 32-bit length, the
            // lower end is checked like the others'.
            if accepted.max < 1 << 20 {
                let max = accepted.max;
                let msg = bytes(14, max.div_ceil(8) as usize);
                k.tag_bits(&nonce, &msg, max, &mut t)
                    .unwrap_or_else(|e| panic!("{f:?}: {max} bits refused: {e}"));
                assert_ne!(t, [0; 4], "{f:?}: {max} bits");
                let msg = bytes(14, (max + 1).div_ceil(8) as usize);
                assert!(
                    k.tag_bits(&nonce, &msg, max + 1, &mut t).is_err(),
                    "{f:?}: {} bits accepted, beyond {max}",
                    max + 1
                );
            }
            let empty = k.tag_bits(&nonce, &[], 0, &mut t);
            assert_eq!(
                empty.is_ok(),
                accepted.min == 0,
                "{f:?}: empty message: {empty:?}"
            );
            k.tag_bits(&nonce, &[0x80], 1, &mut t)
                .unwrap_or_else(|e| panic!("{f:?}: one bit refused: {e}"));
        }
    }
}

#[test]
fn a_whole_byte_only_backend_refuses_a_bit_length() {
    // The trait's default: any other backend fails a bit-length vector instead of skipping it.
    let f = common::first_of("cmac-aes128", "rustcrypto");
    let mut k = macbench::isolate::key(&f, &[0; 16], KeyParams::default()).unwrap();
    let mut t = [0u8; 16];
    let err = k.tag_bits(&[], &[0xff], 7, &mut t).unwrap_err();
    assert!(err.to_string().contains("7-bit message"), "{err}");
    assert!(k.tag_bits(&[], &[0xff], 8, &mut t).is_ok());
}

#[test]
fn a_sweep_leaves_out_sizes_the_algorithm_does_not_take() {
    if skip_unless_built() {
        return;
    }
    let out = common::macbench_process()
        .args("run --alg eia3-zuc128 --backend ipsecmb --sizes 0,64,9000 --duration 50ms --repeat 1 --sessions 1 --cores 0".split_whitespace())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains(
            "eia3-zuc128 takes messages of 1 … 8188 bytes: size(s) 0, 9000 left out of its sweep"
        ),
        "{text}"
    );
    // Only sizes outside: nothing left to run, said in one line.
    let out = common::macbench_process()
        .args("run --alg uia1-kasumi --backend ipsecmb --sizes 0,4096".split_whitespace())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no scenario left"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// `tag` and `net` refuse a length the function does not take, in one line, instead of the zero tag
/// a refused job leaves (which `net`'s receiver would even "verify").
#[test]
fn tag_and_net_refuse_lengths_the_function_does_not_take() {
    if skip_unless_built() {
        return;
    }
    let key = "00".repeat(16);
    for (input, needle) in [
        (0usize, "this one has 0 bytes"),
        (9000, "this one has 9000 bytes"),
    ] {
        let out = common::macbench()
            .args([
                "tag",
                "--alg",
                "eia3-zuc128",
                "--key",
                &key,
                "--nonce",
                "000000000000",
            ])
            .write_stdin(vec![0u8; input])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(needle) && err.contains("1 … 8188 bytes"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "no tag printed");
    }
    let out = common::macbench_process()
        .args(
            "net --alg eia3-zuc128 --sizes 9000 --tag-len 4 --rate 100 --trial 1s"
                .split_whitespace(),
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("8996 bytes under its 4-byte tag"), "{err}");
}

#[test]
fn block_counts_follow_each_construction() {
    // docs/methodology.md §6: what one message of i bytes costs in block operations.
    let blocks = |name: &str, i: u64| mac::algorithm(name).unwrap().block_rule.blocks(i);
    // 128-EIA2: CMAC over the 8-byte header and the message.
    assert_eq!(
        [0, 8, 9, 24, 25].map(|i| blocks("eia2-aes128", i)),
        [1, 1, 2, 2, 3]
    );
    // 128-EIA3: ceil(LENGTH / 32) + 2 keystream words.
    assert_eq!([1, 4, 5].map(|i| blocks("eia3-zuc128", i)), [3, 3, 4]);
    // UIA2: one multiplication per 64-bit block plus the length block.
    assert_eq!([1, 8, 9].map(|i| blocks("uia2-snow3g", i)), [2, 2, 3]);
    // UIA1: KASUMI over COUNT-I‖FRESH‖message‖DIRECTION‖1‖0*, then the final call. 7 bytes: 64 + 56
    // + 2 bits are two blocks; 8 bytes: 130 bits, three.
    assert_eq!([1, 7, 8].map(|i| blocks("uia1-kasumi", i)), [3, 3, 4]);
}
