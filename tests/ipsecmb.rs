//! The Intel ipsec-mb backend: its two paths through the job manager agree (a batch submitted as jobs
//! then flushed, against one job submitted and flushed at a time), whatever the mix of lengths and
//! however many lanes the batch fills; the empty message, which the 1.3 job API refuses for HMAC and
//! reads through for CMAC, gets the right tag; the `list` line names the manager's path. When the
//! backend is not built, that its rows say so. The known-answer and cross-backend tests walk its
//! declaration (`ipsecmb::BACKEND`) like every other backend's.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::mac::{self, ipsecmb, Accel, Availability, Batch, KeyParams, MAX_BATCH, MAX_TAG_LEN};

fn skip_unless_built() -> bool {
    common::skip_unless(
        ipsecmb::BUILT,
        "ipsecmb",
        if cfg!(target_arch = "x86_64") {
            "ipsec-mb backend not built (install libipsec-mb-dev)"
        } else {
            "ipsec-mb backend not built: Debian's libipsec-mb is x86-64 only"
        },
    )
}

fn functions() -> Vec<mac::Function> {
    mac::functions()
        .into_iter()
        .filter(|f| f.backend.name == "ipsecmb" && f.accel == Accel::Hw)
        .collect()
}

/// A deterministic byte stream (xorshift), so failures reproduce.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect()
}

/// Lengths around every block boundary the entries have (16, 64, 128), the empty message included.
const LENGTHS: [usize; 16] = [
    0, 1, 15, 16, 17, 31, 32, 55, 56, 63, 64, 65, 111, 112, 128, 1500,
];

#[test]
fn a_batch_of_jobs_gives_the_tags_of_one_job_at_a_time() {
    if skip_unless_built() {
        return;
    }
    let fs = functions();
    assert_eq!(fs.len(), ipsecmb::BACKEND.entries.len());
    for f in fs {
        let key = bytes(7, f.algorithm.default_key_len);
        let nonce_len = f.algorithm.nonce_len.unwrap_or(0);
        let tag_len = f.algorithm.tag_len;
        let mut k = f.with_key(&key, KeyParams::default()).unwrap();
        let messages: Vec<Vec<u8>> = LENGTHS
            .iter()
            .enumerate()
            .map(|(i, &n)| bytes(100 + i as u64, n))
            .collect();
        // Every batch size, so the flush runs with the lanes full, partly full and with one job.
        for n in 1..=MAX_BATCH {
            let msgs: Vec<&[u8]> = messages[..n].iter().map(Vec::as_slice).collect();
            let nonces = bytes(900 + n as u64, n * nonce_len);
            let mut tags = vec![0u8; n * tag_len];
            k.tag_batch(&mut Batch {
                msgs: &msgs,
                nonces: &nonces,
                nonce_len,
                tags: &mut tags,
                tag_len,
            });
            for (i, msg) in msgs.iter().enumerate() {
                let mut one = [0u8; MAX_TAG_LEN];
                k.tag_into(
                    &nonces[i * nonce_len..(i + 1) * nonce_len],
                    msg,
                    &mut one[..tag_len],
                );
                assert_eq!(
                    &tags[i * tag_len..(i + 1) * tag_len],
                    &one[..tag_len],
                    "{f:?}: message {i} ({} bytes) of a batch of {n}",
                    msg.len()
                );
                assert_ne!(
                    &one[..tag_len],
                    &[0u8; MAX_TAG_LEN][..tag_len],
                    "{f:?}: zero tag"
                );
            }
        }
    }
}

#[test]
fn the_empty_message_matches_rustcrypto() {
    if skip_unless_built() {
        return;
    }
    for f in functions() {
        let other = mac::functions()
            .into_iter()
            .find(|g| {
                g.algorithm.name == f.algorithm.name
                    && g.backend.name == "rustcrypto"
                    && g.accel == Accel::Hw
            })
            .unwrap();
        let key = bytes(3, f.algorithm.default_key_len);
        let nonce = bytes(4, f.algorithm.nonce_len.unwrap_or(0));
        let len = f.algorithm.tag_len;
        let (mut a, mut b) = ([0u8; MAX_TAG_LEN], [0u8; MAX_TAG_LEN]);
        f.with_key(&key, KeyParams::default())
            .unwrap()
            .tag_into(&nonce, &[], &mut a[..len]);
        other
            .with_key(&key, KeyParams::default())
            .unwrap()
            .tag_into(&nonce, &[], &mut b[..len]);
        assert_eq!(a[..len], b[..len], "{f:?}: empty message");
    }
}

#[test]
fn the_list_line_names_the_managers_path_or_why_not_built() {
    let version = (ipsecmb::BACKEND.version)();
    match (ipsecmb::BACKEND.availability)() {
        Availability::Available => {
            assert!(version.starts_with("Intel ipsec-mb 1."), "{version}");
            assert!(version.contains(" path;"), "{version}");
        }
        Availability::Unavailable(why) => {
            assert!(why.starts_with("not built: "), "{why}");
            assert!(why.contains("libipsec-mb-dev"), "{why}");
        }
    }
}

/// `inflight:N`: with at most N jobs in the manager (one flush forcing the oldest out at the bound),
/// every tag is still the tag of that message alone.
#[test]
fn jobs_kept_in_flight_give_the_tags_of_one_job_at_a_time() {
    if skip_unless_built() {
        return;
    }
    for f in functions() {
        let key = bytes(11, f.algorithm.default_key_len);
        let nonce_len = f.algorithm.nonce_len.unwrap_or(0);
        let tag_len = f.algorithm.tag_len;
        let mut k = f.with_key(&key, KeyParams::default()).unwrap();
        let messages: Vec<Vec<u8>> = LENGTHS
            .iter()
            .enumerate()
            .map(|(i, &n)| bytes(300 + i as u64, n))
            .collect();
        let msgs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
        let nonces = bytes(77, msgs.len() * nonce_len);
        for depth in [1, 2, 3, 4, 8, 16] {
            let mut tags = vec![0u8; msgs.len() * tag_len];
            k.tag_inflight(
                &mut Batch {
                    msgs: &msgs,
                    nonces: &nonces,
                    nonce_len,
                    tags: &mut tags,
                    tag_len,
                },
                depth,
            );
            for (i, msg) in msgs.iter().enumerate() {
                let mut one = [0u8; MAX_TAG_LEN];
                k.tag_into(
                    &nonces[i * nonce_len..(i + 1) * nonce_len],
                    msg,
                    &mut one[..tag_len],
                );
                assert_eq!(
                    &tags[i * tag_len..(i + 1) * tag_len],
                    &one[..tag_len],
                    "{f:?}: message {i} with {depth} in flight"
                );
            }
        }
    }
}
