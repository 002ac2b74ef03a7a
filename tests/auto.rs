//! `--auto` (seed 000, Fig. 3): a flagged result is adjusted and re-run, and what changed is reported.
//! The scenario is chosen so the flag is certain on any machine: 64 KiB HMAC-SHA512 messages in a window
//! of a few tens of milliseconds cannot reach 1000 messages per thread (that would need > 2 GB/s of
//! SHA-512 on one core).

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::bench::{self, AutoPolicy};
use macbench::engine::{clock, DataMode, SizeSource};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[test]
fn auto_lengthens_the_run_until_a_bound_and_says_so() {
    let function = common::first_of("hmac-sha512", "rustcrypto");
    // 20 ms, its window 4..18 ms.
    let scenario = macbench::sweep::one_session(
        function,
        SizeSource::Fixed { size: 65_536 },
        macbench::host::online_cpus()[0],
        Duration::from_millis(20),
        DataMode::Unique,
    );
    let clock = clock::ClockInfo {
        reference_hz: 2e9,
        reference_source: "test".into(),
        core_hz_estimated: None,
        core_to_reference_ratio: None,
        hardware_cycles: "test".into(),
        timer_resolution_ns: 1,
        ..Default::default()
    };
    let policy = AutoPolicy {
        enabled: true,
        max_duration: Duration::from_millis(40),
        max_repeats: 3,
        max_rounds: 3,
        target_ci: None,
        fit_window: false,
    };
    let r =
        bench::run_scenario(scenario.clone(), 1, policy, &clock, &AtomicBool::new(false)).unwrap();
    assert!(
        r.warnings.iter().any(|w| w.code == "window-too-short"),
        "{:?}",
        r.warnings
    );
    assert!(
        r.adjustments[0].starts_with("round 1: duration → 0.040 s"),
        "{:?}",
        r.adjustments
    );
    assert!(
        r.adjustments.last().unwrap().contains("bound reached"),
        "{:?}",
        r.adjustments
    );
    // The result records the adjusted scenario.
    assert_eq!(r.scenario.duration, Duration::from_millis(40));
    assert!(r.scenario.window_end <= r.scenario.duration);

    // Without --auto nothing is adjusted.
    let mut off = policy;
    off.enabled = false;
    let r = bench::run_scenario(scenario, 1, off, &clock, &AtomicBool::new(false)).unwrap();
    assert!(r.adjustments.is_empty());
}
