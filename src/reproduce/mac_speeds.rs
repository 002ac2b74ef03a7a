//! The "MAC speeds" mailing-list thread (D. J. Bernstein, T. Kivinen): how fast MACs are depends on the
//! message length, a fixed cost per message dominates short messages, and the universal-hash MACs
//! (Poly1305, UMAC, VMAC) outrun the hash-based HMACs — reproduced on this machine.
//!
//! The plan: HMAC-MD5, HMAC-SHA1, HMAC-SHA256, CMAC-AES128, Poly1305, UMAC-64 and VMAC-AES128-64, one
//! session on one core, at 64 B, 256 B, 2048 B (the thread's "typical packet" length) and 64 KiB.

use super::{num, Claim, Evidence, Metric, PaperFigure, Plot, Step, StepRun, Study, Verdict};

/// The functions of the plan, in its `--alg` order.
const FUNCTIONS: &[&str] = &[
    "hmac-md5",
    "hmac-sha1",
    "hmac-sha256",
    "cmac-aes128",
    "poly1305",
    "umac64-aes128",
    "vmac-aes128-64",
];

pub static STUDY: Study = Study {
    id: "mac-speeds-thread",
    title: "MAC speeds (mailing-list thread)",
    authors: "D. J. Bernstein, T. Kivinen",
    default_budget_s: 300.0,
    steps: &[Step {
        name: "lengths",
        what: "seven MACs, one session on one core, 64 B, 256 B, 2048 B and 64 KiB",
        run: StepRun {
                alg: "hmac-md5,hmac-sha1,hmac-sha256,cmac-aes128,poly1305,umac64-aes128,vmac-aes128-64",
                sizes: "64,256,2048,65536",
                ..StepRun::ONE_SESSION
            },
        share: 1.0,
        max_cycles_per_byte: 15.0,
    }],
    claims: &[
        Claim {
            id: "per-message-overhead",
            text: "A fixed cost per message dominates short messages: cycles/byte at 64 B exceed those at 64 KiB by more than a factor 1 + tol for every function",
            tolerance: 0.5,
            check: per_message_overhead,
        },
        Claim {
            id: "2048-close-to-long",
            text: "At 2048 bytes the universal-hash MACs (Poly1305, UMAC, VMAC) still pay visibly for the per-message cost: cycles/byte at 2048 B above those at 64 KiB by more than tol",
            tolerance: 0.1,
            check: universal_hash_at_2048,
        },
        Claim {
            id: "universal-hash-faster",
            text: "On long messages the universal-hash MACs (Poly1305, UMAC-64, VMAC) are faster than every HMAC: the fastest of them beats the fastest HMAC at 64 KiB by more than tol",
            tolerance: 0.0,
            check: universal_hash_faster,
        },
        Claim {
            id: "hmac-md5-fastest-hmac",
            text: "HMAC-MD5 is the fastest HMAC (within tol), as it was in the thread; SHA extensions (SHA-NI, Armv8 SHA2) can change that",
            tolerance: 0.05,
            check: hmac_md5_fastest_hmac,
        },
    ],
    figures: &[PaperFigure {
        id: "thread-cycles-per-byte",
        paper: "the thread's cycles/byte by length",
        title: "Cycles/byte against buffer length for the thread's MACs",
        plot: Plot::AgainstSize {
            step: "lengths",
            metric: Metric::AbsoluteCyclesPerByte,
            accel: "hw",
            functions: FUNCTIONS,
        },
        decides: &[
            "per-message-overhead",
            "2048-close-to-long",
            "universal-hash-faster",
            "hmac-md5-fastest-hmac",
        ],
        differs: "The thread gives numbers in its text, not a figure: HMAC-MD5 at 53 cycles/byte on 256 B, 34 on 2048 B and 16 on long buffers (a 500 MHz Alpha), the AES candidates at 40–60 cycles/byte.",
    }],
};

const STEP: &str = "lengths";

fn cpb(e: &Evidence, algorithm: &str, size: u64) -> Option<f64> {
    e.absolute(STEP, algorithm, "hw", size)
}

/// For each of `functions`, cycles/byte at `short` ÷ at 64 KiB; holds when every ratio exceeds
/// 1 + tol.
fn costlier_when_shorter(
    e: &Evidence,
    functions: &[&'static str],
    short: u64,
    tol: f64,
) -> Verdict {
    let ratios: Vec<(&str, f64)> = functions
        .iter()
        .filter_map(|a| Some((*a, cpb(e, a, short)? / cpb(e, a, 65536)?)))
        .collect();
    e.judge_ratios(
        STEP,
        &ratios,
        |r| r > 1.0 + tol,
        &format!("cycles/byte at {short} B ÷ at 64 KiB"),
        "×",
    )
}

fn per_message_overhead(e: &Evidence, tol: f64) -> Verdict {
    costlier_when_shorter(e, FUNCTIONS, 64, tol)
}

fn universal_hash_at_2048(e: &Evidence, tol: f64) -> Verdict {
    costlier_when_shorter(
        e,
        &["poly1305", "umac64-aes128", "vmac-aes128-64"],
        2048,
        tol,
    )
}

/// The fastest of `functions` at `size`: name and cycles/byte.
fn fastest(e: &Evidence, functions: &[&'static str], size: u64) -> Option<(&'static str, f64)> {
    functions
        .iter()
        .filter_map(|a| cpb(e, a, size).map(|v| (*a, v)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

fn universal_hash_faster(e: &Evidence, tol: f64) -> Verdict {
    let uh = fastest(e, &["poly1305", "umac64-aes128", "vmac-aes128-64"], 65536);
    let hmac = fastest(e, &["hmac-md5", "hmac-sha1", "hmac-sha256"], 65536);
    let (Some((u, uv)), Some((h, hv))) = (uh, hmac) else {
        return e.missing(STEP);
    };
    Verdict::from(
        uv * (1.0 + tol) < hv,
        format!(
            "at 64 KiB: fastest universal hash {u} {} c/B, fastest HMAC {h} {} c/B",
            num(uv),
            num(hv)
        ),
    )
}

fn hmac_md5_fastest_hmac(e: &Evidence, tol: f64) -> Verdict {
    let Some((h, hv)) = fastest(e, &["hmac-md5", "hmac-sha1", "hmac-sha256"], 65536) else {
        return e.missing(STEP);
    };
    let Some(md5) = cpb(e, "hmac-md5", 65536) else {
        return Verdict::CannotTest("HMAC-MD5 was not measured at 64 KiB".to_string());
    };
    Verdict::from(
        md5 <= hv * (1.0 + tol),
        format!(
            "at 64 KiB: fastest HMAC {h} {} c/B, HMAC-MD5 {} c/B",
            num(hv),
            num(md5)
        ),
    )
}
