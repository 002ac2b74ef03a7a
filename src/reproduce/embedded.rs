//! "Understanding Crypto Performance in Embedded Systems: Part 2" (Embedded.com): the set-up variables
//! the article says decide a crypto benchmark's numbers — the same or unique data and keys, dispatch
//! all at once or one plus n, checking the result inside or after the timed loop, key setup per
//! message — and the difference each one makes on this machine.
//!
//! The plan: HMAC-SHA256 and CMAC-AES128 at 64 B and 1 KiB, one session on one core, once per
//! variable (the baseline is unique data, a key per session, no check, one message at a time); and
//! ipsec-mb's multi-buffer HMAC-SHA256 and CMAC-AES128 with all-at-once (`burst:16`) and one-plus-n
//! (`inflight:16`) dispatch; and a look-aside device through its driver (the `dpdk` backend's device),
//! `single` (n + 1) against `all` (descriptors built in advance, dispatched at once) from 64 B to
//! 4 KiB. Each claim says which way the variable moves the cost, with the
//! tolerance within which "no difference" is read.

use super::{
    num, Claim, Evidence, Metric, PaperFigure, Plot, Point, Step, StepRun, Study, Verdict,
};
use crate::mac::VerifyMode;
use crate::results::options::{DataMode, Dispatch, KeyMode};
use crate::results::SizeLabel;

/// The plan's functions and sizes, as each step's run names them.
const ALG: &str = "hmac-sha256,cmac-aes128";
const FUNCTIONS: &[&str] = &["hmac-sha256", "cmac-aes128"];
const SIZES: &[u64] = &[64, 1024];

macro_rules! variable_step {
    ($name:literal, $what:literal $(, $field:ident: $value:expr)?) => {
        Step {
            name: $name,
            what: $what,
            run: StepRun {
                alg: ALG,
                sizes: "64,1024",
                $($field: $value,)?
                ..StepRun::ONE_SESSION
            },
            share: 0.12,
            max_cycles_per_byte: 15.0,
        }
    };
}

pub static STUDY: Study = Study {
    id: "embedded-crypto-perf",
    title: "Understanding Crypto Performance in Embedded Systems: Part 2",
    authors: "Embedded.com",
    default_budget_s: 300.0,
    steps: &[
        variable_step!("baseline", "unique data, a key per session, no check, one at a time"),
        variable_step!("same-data", "one cache-hot buffer instead of unique data", data: DataMode::Same),
        variable_step!("shared-key", "one key shared by every session", keys: KeyMode::Shared),
        variable_step!("check-inside", "the tag compared inside the timed loop", verify: VerifyMode::Inline),
        variable_step!("check-after", "the tags kept and checked after the window", verify: VerifyMode::After),
        variable_step!("rekey", "key setup before every message", rekey_every: Some(1)),
        Step {
            name: "dispatch",
            what: "ipsec-mb, all at once (burst:16) against one plus n (inflight:16)",
            run: StepRun {
                alg: ALG,
                backend: Some("ipsecmb"),
                sizes: "64,1024",
                dispatch: &[Dispatch::Burst(16), Dispatch::Inflight(16)],
                ..StepRun::ONE_SESSION
            },
            share: 0.14,
            max_cycles_per_byte: 15.0,
        },
        Step {
            name: "device",
            what: "a look-aside device through its driver (DPDK's crypto_aesni_mb, or --dpdk-device): all at once (descriptors built before) against n + 1 (single)",
            run: StepRun {
                alg: ALG,
                backend: Some("dpdk"),
                sizes: "64,256,1024,4096",
                dispatch: &[Dispatch::Single, Dispatch::All],
                ..StepRun::ONE_SESSION
            },
            share: 0.14,
            max_cycles_per_byte: 80.0,
        },
    ],
    claims: &[
        Claim {
            id: "same-data-no-slower",
            text: "Reusing one cache-hot buffer is never slower than unique data (it hides the cost of fetching messages): cycles/byte with the same data at most 1 + tol times the baseline's",
            tolerance: 0.05,
            check: same_data_no_slower,
        },
        Claim {
            id: "shared-key-no-difference",
            text: "With one session, a shared key and a key per session cost the same (the key is set up once either way): within ± tol",
            tolerance: 0.05,
            check: shared_key_no_difference,
        },
        Claim {
            id: "checking-inside-costs",
            text: "Checking each tag inside the timed loop costs more than checking after it: cycles/message inside exceed those after by more than tol at 64 B",
            tolerance: 0.0,
            check: checking_inside_costs,
        },
        Claim {
            id: "rekey-costs-key-setup",
            text: "Setting the key up for every message adds about one key setup to each message: the extra cycles/message at 64 B are the measured key setup within a factor 1 + tol",
            tolerance: 1.0,
            check: rekey_costs_key_setup,
        },
        Claim {
            id: "all-at-once-faster",
            text: "For a multi-buffer library, handing messages over all at once is faster than one plus n: burst:16 cycles/byte below inflight:16's by more than tol at 64 B",
            tolerance: 0.0,
            check: all_at_once_faster,
        },
        Claim {
            id: "device-all-at-once-4x",
            text: "Through a look-aside device's driver, dispatching descriptors built in advance all at once is about 4× faster than building and dispatching descriptor n + 1 after n completes at small packets (64 B: single ÷ all within 4× ÷ (1 + tol) and 4× · (1 + tol)), and the gap narrows by 1 KiB (the ratio at 1 KiB below the one at 64 B)",
            tolerance: 1.0,
            check: device_all_at_once_4x,
        },
    ],
    figures: &[PaperFigure {
        id: "fig01-dispatch",
        paper: "Figure 1",
        title: "Driver benchmarks: cost per packet against packet size, all at once against one plus n",
        plot: Plot::AgainstSize {
            step: "dispatch",
            metric: Metric::AbsoluteCyclesPerMessage,
            accel: "hw",
            functions: FUNCTIONS,
        },
        decides: &["all-at-once-faster"],
        differs: "The article measured a look-aside accelerator's throughput (Mbps) against packet size; here ipsec-mb's multi-buffer functions on the CPU, in cycles per packet (lower is faster), burst:16 standing for all at once and inflight:16 for one plus n.",
    },
    PaperFigure {
        id: "fig01-device",
        paper: "Figure 1",
        title: "Driver benchmarks on a device: cost per packet against packet size, all at once against n + 1",
        plot: Plot::AgainstSize {
            step: "device",
            metric: Metric::AbsoluteCyclesPerMessage,
            accel: "hw",
            functions: FUNCTIONS,
        },
        decides: &["device-all-at-once-4x"],
        differs: "The article measured a hardware accelerator behind its driver; here DPDK's cryptodev with the device it has (crypto_aesni_mb, a software device over Intel ipsec-mb, unless --dpdk-device names another), in the submitting core's cycles per packet: `single` is n + 1, `all` the descriptors built at key setup and dispatched at once. On a software device the work runs on the submitting core, so no device works in parallel with it.",
    }],
};

/// `(function, size, metric in step)` for the plan's functions and sizes that `metric` measures.
fn pairs(
    e: &Evidence,
    a: &str,
    b: &str,
    metric: impl Fn(&Evidence, &str, &str, u64) -> Option<f64>,
) -> Vec<(String, f64, f64)> {
    FUNCTIONS
        .iter()
        .flat_map(|f| SIZES.iter().map(move |s| (f, s)))
        .filter_map(|(f, s)| {
            Some((
                format!("{f}@{s}"),
                metric(e, a, f, *s)?,
                metric(e, b, f, *s)?,
            ))
        })
        .collect()
}

fn cpb(e: &Evidence, step: &str, f: &str, size: u64) -> Option<f64> {
    e.absolute(step, f, "hw", size)
}

fn cpm(e: &Evidence, step: &str, f: &str, size: u64) -> Option<f64> {
    e.find(step, f, "hw", size)?
        .metrics
        .absolute_cycles_per_message
}

/// "name a/b" for each pair, for the verdict's numbers.
fn ratios(pairs: &[(String, f64, f64)]) -> String {
    pairs
        .iter()
        .map(|(n, a, b)| format!("{n} {}×", num(a / b)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A verdict on every pair of steps `a` and `b` where `ok(a ÷ b)`, or why none can be read.
fn compare(
    e: &Evidence,
    a: &str,
    b: &str,
    metric: impl Fn(&Evidence, &str, &str, u64) -> Option<f64>,
    ok: impl Fn(f64) -> bool,
) -> Verdict {
    let p = pairs(e, a, b, metric);
    if p.is_empty() {
        let missing = if e.results(a).is_empty() { a } else { b };
        return e.missing(missing);
    }
    Verdict::from(
        p.iter().all(|(_, x, y)| ok(x / y)),
        format!("{a} ÷ {b}: {}", ratios(&p)),
    )
}

fn same_data_no_slower(e: &Evidence, tol: f64) -> Verdict {
    compare(e, "same-data", "baseline", cpb, |r| r <= 1.0 + tol)
}

fn shared_key_no_difference(e: &Evidence, tol: f64) -> Verdict {
    compare(e, "shared-key", "baseline", cpb, |r| (r - 1.0).abs() <= tol)
}

fn checking_inside_costs(e: &Evidence, tol: f64) -> Verdict {
    let at_64 = |e: &Evidence, step: &str, f: &str, size: u64| {
        if size == 64 {
            cpm(e, step, f, size)
        } else {
            None
        }
    };
    compare(e, "check-inside", "check-after", at_64, |r| r > 1.0 + tol)
}

fn rekey_costs_key_setup(e: &Evidence, tol: f64) -> Verdict {
    let mut parts = Vec::new();
    let mut ok = true;
    for f in FUNCTIONS {
        let (Some(rekeyed), Some(base)) = (cpm(e, "rekey", f, 64), cpm(e, "baseline", f, 64))
        else {
            continue;
        };
        let Some(setup) = e
            .find("baseline", f, "hw", 64)
            .map(|r| r.metrics.key_setup_cycles)
            .filter(|c| c.is_finite() && *c > 0.0)
        else {
            continue;
        };
        let extra = rekeyed - base;
        ok &= extra >= setup / (1.0 + tol) && extra <= setup * (1.0 + tol);
        parts.push(format!(
            "{f}: +{} cycles/message, key setup {} cycles",
            num(extra),
            num(setup)
        ));
    }
    if parts.is_empty() {
        let step = if e.results("rekey").is_empty() {
            "rekey"
        } else {
            "baseline"
        };
        return e.missing(step);
    }
    Verdict::from(ok, format!("at 64 B, {}", parts.join("; ")))
}

fn device_all_at_once_4x(e: &Evidence, tol: f64) -> Verdict {
    let ratio = |f: &str, size: u32| {
        let at = |dispatch: &str| {
            let point = Point::new(f, "hw", SizeLabel::Bytes(size)).dispatched(dispatch);
            e.find_point("device", &point)?
                .metrics
                .absolute_cycles_per_message
        };
        Some(at("single")? / at("all")?)
    };
    let mut parts = Vec::new();
    let mut ok = true;
    for f in FUNCTIONS {
        let (Some(small), Some(large)) = (ratio(f, 64), ratio(f, 1024)) else {
            continue;
        };
        ok &= small >= 4.0 / (1.0 + tol) && small <= 4.0 * (1.0 + tol) && large < small;
        parts.push(format!(
            "{f}: single ÷ all {}× at 64 B, {}× at 1 KiB",
            num(small),
            num(large)
        ));
    }
    if parts.is_empty() {
        return e.missing("device");
    }
    Verdict::from(ok, parts.join("; "))
}

fn all_at_once_faster(e: &Evidence, tol: f64) -> Verdict {
    let by_dispatch = |f: &str, dispatch: &str| {
        let point = Point::new(f, "hw", SizeLabel::Bytes(64)).dispatched(dispatch);
        e.find_point("dispatch", &point)?
            .metrics
            .absolute_cycles_per_byte
    };
    let p: Vec<(String, f64, f64)> = FUNCTIONS
        .iter()
        .filter_map(|f| {
            Some((
                format!("{f}@64"),
                by_dispatch(f, "burst:16")?,
                by_dispatch(f, "inflight:16")?,
            ))
        })
        .collect();
    if p.is_empty() {
        return e.missing("dispatch");
    }
    Verdict::from(
        p.iter()
            .all(|(_, burst, inflight)| burst * (1.0 + tol) < *inflight),
        format!("burst:16 ÷ inflight:16: {}", ratios(&p)),
    )
}
