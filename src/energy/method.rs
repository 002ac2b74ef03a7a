//! The arithmetic of an energy measurement, pure so that every step is tested on recorded numbers.
//!
//! A meter gives cumulative joules; a measurement alternates three windows of the same length per
//! round: **idle** (nothing runs), **null** (the harness with the null function: thread wake-ups, the
//! hot loop, the message counters) and **MAC** (the scenario itself). The idle window gives the
//! machine's background power, subtracted from the others scaled to their own duration; the null
//! window's net energy per message is the harness's, subtracted per MAC message. What is left is the
//! MAC's own energy, divided by bytes and by messages. Rounds are repeats: the median over rounds is
//! reported with a 95 % interval (`stats::confidence_interval`, the between-round spread), and the
//! number of meter steps the net energy stands on says how far to trust it (docs/methodology.md §9).

use crate::stats::{self, Interval};
use serde::{Deserialize, Serialize};

/// Fewer meter steps than this in a window's net energy: the result is flagged, not printed as precise.
pub const FEW_STEPS: f64 = 10.0;

/// The energy a wrapping counter advanced from `before` to `after`, for a counter that counts from 0
/// to `max_range` inclusive and then starts again at 0 (powercap's `max_energy_range_uj`). Assumes at
/// most one wrap between the readings, which the window lengths keep true (a 32-bit RAPL counter at
/// 15.3 µJ wraps after ~65 kJ, minutes at full power).
pub fn counter_delta(before: u64, after: u64, max_range: u64) -> u64 {
    let modulus = u128::from(max_range) + 1;
    let delta = (u128::from(after) + modulus - u128::from(before) % modulus) % modulus;
    // The result is below `modulus` ≤ 2^64, so it fits a u64.
    u64::try_from(delta).unwrap_or(u64::MAX)
}

/// Counts of a meter in joules: `counts × scale` (perf's `energy-pkg.scale`, 1e-6 for µJ files).
pub fn counts_to_joules(counts: u64, scale: f64) -> f64 {
    counts as f64 * scale
}

/// Microwatt-hours (`energy_now`) in joules: 1 µWh = 3.6 mJ.
pub fn microwatt_hours_to_joules(uwh: f64) -> f64 {
    uwh * 3.6e-3
}

/// Energy drawn while charge fell from `before_uah` to `after_uah` (µAh) at voltages `before_uv`
/// and `after_uv` (µV), in joules: the charge times the mean voltage (trapezoid rule). Positive while
/// discharging.
pub fn charge_to_joules(before_uah: f64, after_uah: f64, before_uv: f64, after_uv: f64) -> f64 {
    let coulombs = (before_uah - after_uah) * 1e-6 * 3600.0;
    let volts = (before_uv + after_uv) / 2.0 * 1e-6;
    coulombs * volts
}

/// One window: the meter's energy over it, its wall time, and the work done in it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub joules: f64,
    pub seconds: f64,
    pub messages: u64,
    pub bytes: u64,
}

/// One round: idle, null-function and MAC windows of the same planned length.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub idle: Window,
    pub null: Window,
    pub mac: Window,
}

impl Round {
    /// The machine's power with nothing of ours running, in watts; `None` for an empty window.
    pub fn idle_watts(&self) -> Option<f64> {
        (self.idle.seconds > 0.0).then(|| self.idle.joules / self.idle.seconds)
    }

    /// The harness's energy per message: the null window minus idle power over its duration, per
    /// message; `None` when the null window did no work.
    pub fn harness_joules_per_message(&self) -> Option<f64> {
        let idle = self.idle_watts()?;
        (self.null.messages > 0)
            .then(|| (self.null.joules - idle * self.null.seconds) / self.null.messages as f64)
    }

    /// The MAC's own energy in its window: the MAC window minus idle power over its duration, minus
    /// the harness's energy for each of its messages.
    pub fn net_mac_joules(&self) -> Option<f64> {
        let idle = self.idle_watts()?;
        let harness = self.harness_joules_per_message()?;
        Some(self.mac.joules - idle * self.mac.seconds - harness * self.mac.messages as f64)
    }

    /// Net nanojoules per byte of the MAC window.
    pub fn nanojoules_per_byte(&self) -> Option<f64> {
        let net = self.net_mac_joules()?;
        (self.mac.bytes > 0).then(|| net * 1e9 / self.mac.bytes as f64)
    }

    /// Net microjoules per message of the MAC window.
    pub fn microjoules_per_message(&self) -> Option<f64> {
        let net = self.net_mac_joules()?;
        (self.mac.messages > 0).then(|| net * 1e6 / self.mac.messages as f64)
    }
}

/// Whether the meter read exactly the same at both ends of every window of `rounds` — idle, harness
/// and MAC alike. A meter that counts moves in some window of a second or more (a package at 1 W is a
/// million µJ a second; a discharging battery moves within minutes); one that never does is listed but
/// not counting — a virtual machine's `power` PMU that reads zero — and its "0 nJ/byte" would be a
/// wrong number, not a small one. `false` for no rounds.
pub fn never_moved(rounds: &[Round]) -> bool {
    !rounds.is_empty()
        && rounds
            .iter()
            .all(|r| [r.idle, r.null, r.mac].iter().all(|w| w.joules == 0.0))
}

/// How many of a meter's declared updates a look must span before a meter that stood still through it
/// is judged not to count: the one rule of [`constant_while_observed`] and [`super::quick_look_span`].
pub const UPDATES_TO_JUDGE: u32 = 100;

/// Where a meter that opens but stands still is seen, in the words every refusal of one uses.
pub const NOT_COUNTING_WHERE: &str = "as on virtual machines whose PMU or zone reads a constant";

/// Whether a meter that never changed while observed (`observed` is `None`) for `window` is thereby
/// shown not to count: only when the window held at least 100 of its declared updates (RAPL through
/// perf or powercap: 1 ms against 1 s), since a package draws watts and moves at every update. A
/// battery gauge (updates of a second or more, coarse steps) may stand still for a 30 s idle window,
/// so it is not judged here; [`never_moved`] judges it after its rounds.
pub fn constant_while_observed(
    observed: Option<Observed>,
    window: std::time::Duration,
    update: std::time::Duration,
) -> bool {
    observed.is_none() && !update.is_zero() && window >= update * UPDATES_TO_JUDGE
}

/// How many meter steps an energy is: `|joules| / resolution`; `None` without a resolution.
pub fn meter_steps(joules: f64, resolution_joules: f64) -> Option<f64> {
    (resolution_joules > 0.0 && joules.is_finite()).then(|| joules.abs() / resolution_joules)
}

/// What a meter showed when read often: its smallest change and how often it changed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    /// The smallest non-zero change between two consecutive readings, joules: the step a window's
    /// two readings can be off by, whatever the counter's unit.
    pub step_j: f64,
    /// Mean time between changes, seconds; absent with fewer than two changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_s: Option<f64>,
}

/// The step and update interval of a meter from readings `(seconds, joules)` taken in time order, at
/// least as often as it updates; `None` when the readings never changed.
pub fn observe(samples: &[(f64, f64)]) -> Option<Observed> {
    let changes: Vec<(f64, f64)> = samples
        .windows(2)
        .filter(|w| w[1].1 != w[0].1)
        .map(|w| (w[1].0, (w[1].1 - w[0].1).abs()))
        .collect();
    let step_j = changes.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
    if !step_j.is_finite() {
        return None;
    }
    let update_s = match (changes.first(), changes.last()) {
        (Some(first), Some(last)) if changes.len() >= 2 => {
            Some((last.0 - first.0) / (changes.len() - 1) as f64)
        }
        _ => None,
    };
    Some(Observed { step_j, update_s })
}

/// A median over rounds with its 95 % interval (between-round spread, Student t).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub median: f64,
    /// Absent with fewer than two rounds: one round shows no spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<Interval>,
}

/// The median and 95 % interval of the finite `values`; `None` when there is none.
pub fn estimate(values: &[f64]) -> Option<Estimate> {
    let median = stats::quantile(values, 0.5)?;
    let runs: Vec<(f64, Option<stats::BatchEstimate>)> =
        values.iter().map(|v| (*v, None)).collect();
    Some(Estimate {
        median,
        ci95: stats::confidence_interval(&runs),
    })
}

/// A scenario's energy, as the results file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Energy {
    /// The meter used (`perf power/energy-pkg (cpu 0)`) and what it covers.
    pub meter: String,
    pub scope: super::Scope,
    /// The meter's smallest step in joules as its unit declares it.
    pub resolution_j: f64,
    /// Its step and update interval as observed before the rounds; the step counts below use the
    /// larger of the two steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
    /// Each window's planned length.
    pub window_s: f64,
    /// Net nanojoules per byte and microjoules per message over rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nj_per_byte: Option<Estimate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uj_per_message: Option<Estimate>,
    /// Median idle power and median MAC-window power, watts: the scale the net figure is a part of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac_w: Option<f64>,
    /// Meter steps in the median net energy of one MAC window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_steps: Option<f64>,
    /// Fewer than [`FEW_STEPS`] steps (or no net energy at all): not to be read as precise.
    #[serde(default)]
    pub few_steps: bool,
    /// Every round's windows, so each figure can be recomputed.
    #[serde(default)]
    pub rounds: Vec<Round>,
    /// The meter's parts read at the same instants (RAPL's core domain), each with its own figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Energy>,
}

impl Energy {
    /// The figures of `rounds` measured with a meter of `resolution_j` that showed `observed`.
    pub fn from_rounds(
        meter: String,
        scope: super::Scope,
        resolution_j: f64,
        observed: Option<Observed>,
        window_s: f64,
        rounds: Vec<Round>,
    ) -> Energy {
        let column = |f: fn(&Round) -> Option<f64>| -> Vec<f64> {
            rounds
                .iter()
                .filter_map(f)
                .filter(|v| v.is_finite())
                .collect()
        };
        let net = stats::quantile(&column(Round::net_mac_joules), 0.5);
        let step = observed.map_or(resolution_j, |o| o.step_j.max(resolution_j));
        let meter_steps = net.and_then(|j| meter_steps(j, step));
        let mac_power = |r: &Round| (r.mac.seconds > 0.0).then(|| r.mac.joules / r.mac.seconds);
        Energy {
            meter,
            scope,
            resolution_j,
            observed,
            window_s,
            nj_per_byte: estimate(&column(Round::nanojoules_per_byte)),
            uj_per_message: estimate(&column(Round::microjoules_per_message)),
            idle_w: stats::quantile(&column(Round::idle_watts), 0.5),
            mac_w: stats::quantile(&column(mac_power), 0.5),
            meter_steps,
            few_steps: meter_steps.is_none_or(|s| s < FEW_STEPS),
            rounds,
            parts: Vec::new(),
        }
    }

    /// For a table cell: `0.84 nJ/B ±0.05`, with `(few steps)` when flagged; `-` without a figure.
    pub fn cell(&self) -> String {
        let Some(e) = &self.nj_per_byte else {
            return "-".to_string();
        };
        let mut text = format!("{:.3}", e.median);
        if let Some(ci) = e.ci95 {
            text.push_str(&format!(" ±{:.3}", (ci.high - ci.low) / 2.0));
        }
        if self.few_steps {
            text.push_str(" (few steps)");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// powercap's `max_energy_range_uj` on many Intel packages (2^32 counts of 61 µJ).
    const RAPL_RANGE_UJ: u64 = 262_143_328_850;

    #[test]
    fn a_still_meter_is_judged_up_front_only_over_a_hundred_updates() {
        use std::time::Duration;
        let ms = Duration::from_millis;
        let moved = Some(Observed {
            step_j: 6.1e-5,
            update_s: Some(1e-3),
        });
        // RAPL: 1 ms updates, 1 s window: still means not counting; moving means counting.
        assert!(constant_while_observed(None, ms(1000), ms(1)));
        assert!(!constant_while_observed(moved, ms(1000), ms(1)));
        // A gauge: 1 s updates over a 30 s window may stand still.
        assert!(!constant_while_observed(None, ms(30_000), ms(1000)));
        // Exactly a hundred updates is enough; 99 is not; no declared interval is never judged.
        assert!(constant_while_observed(None, ms(100), ms(1)));
        assert!(!constant_while_observed(None, ms(99), ms(1)));
        assert!(!constant_while_observed(None, ms(1000), Duration::ZERO));
    }

    #[test]
    fn a_meter_is_dead_only_when_no_window_of_any_round_moved() {
        let still = Round {
            idle: window(0.0, 1.0, 1000, 64_000),
            null: window(0.0, 1.0, 1000, 64_000),
            mac: window(0.0, 1.0, 1000, 64_000),
        };
        assert!(never_moved(&[still, still, still]));
        // One step in one window of one round: the meter counts (coarsely; `few_steps` says so).
        let one_step = Round {
            mac: window(2.3e-10, 1.0, 1000, 64_000),
            ..still
        };
        assert!(!never_moved(&[still, one_step, still]));
        assert!(!never_moved(&[Round {
            idle: window(1.5, 1.0, 0, 0),
            null: window(1.6, 1.0, 1000, 64_000),
            mac: window(1.8, 1.0, 1000, 64_000),
        }]));
        assert!(!never_moved(&[]));
    }

    #[test]
    fn a_counter_that_did_not_wrap_is_subtracted() {
        assert_eq!(counter_delta(100, 250, RAPL_RANGE_UJ), 150);
        assert_eq!(counter_delta(7, 7, RAPL_RANGE_UJ), 0);
    }

    #[test]
    fn a_wrapped_counter_counts_through_its_range_and_zero() {
        // From 10 below the top: 10 to the top, 1 to zero, 5 more.
        assert_eq!(counter_delta(RAPL_RANGE_UJ - 10, 5, RAPL_RANGE_UJ), 16);
        assert_eq!(counter_delta(RAPL_RANGE_UJ, 0, RAPL_RANGE_UJ), 1);
        assert_eq!(counter_delta(u64::MAX - 1, 1, u64::MAX), 3);
    }

    #[test]
    fn units_scale_to_joules() {
        // perf's energy-pkg.scale is 2^-32 J per count.
        assert_eq!(counts_to_joules(1 << 32, 2f64.powi(-32)), 1.0);
        assert_eq!(counts_to_joules(2_500_000, 1e-6), 2.5);
        assert!((microwatt_hours_to_joules(1_000.0) - 3.6).abs() < 1e-12);
        // 1000 µAh = 3.6 C, at a mean 3.8 V: 13.68 J.
        assert!(
            (charge_to_joules(5_000.0, 4_000.0, 3_900_000.0, 3_700_000.0) - 13.68).abs() < 1e-9
        );
    }

    fn window(joules: f64, seconds: f64, messages: u64, bytes: u64) -> Window {
        Window {
            joules,
            seconds,
            messages,
            bytes,
        }
    }

    /// Idle 10 W; the harness 0.5 µJ per message; the MAC window 22 J in 2 s for a million
    /// 1500-byte messages: 22 − 20 (idle) − 0.5 (harness) = 1.5 J net.
    fn known_round() -> Round {
        Round {
            idle: window(10.0, 1.0, 0, 0),
            null: window(10.5, 1.0, 1_000_000, 64_000_000),
            mac: window(22.0, 2.0, 1_000_000, 1_500_000_000),
        }
    }

    /// A RAPL package meter's figures: 1 µJ units, no observed step, 1 s windows.
    fn rapl_package(rounds: Vec<Round>) -> Energy {
        Energy::from_rounds(
            "m".into(),
            crate::energy::Scope::Package,
            1e-6,
            None,
            1.0,
            rounds,
        )
    }

    #[test]
    fn both_baselines_are_subtracted_idle_scaled_to_the_window() {
        let r = known_round();
        assert_eq!(r.idle_watts(), Some(10.0));
        assert!((r.harness_joules_per_message().unwrap() - 0.5e-6).abs() < 1e-15);
        assert!((r.net_mac_joules().unwrap() - 1.5).abs() < 1e-9);
        assert!((r.nanojoules_per_byte().unwrap() - 1.0).abs() < 1e-9);
        assert!((r.microjoules_per_message().unwrap() - 1.5).abs() < 1e-9);
    }

    #[test]
    fn a_window_without_work_has_no_per_message_figure() {
        let mut r = known_round();
        r.null.messages = 0;
        assert_eq!(r.net_mac_joules(), None);
        let mut r = known_round();
        r.idle.seconds = 0.0;
        assert_eq!(r.idle_watts(), None);
        let mut r = known_round();
        r.mac.bytes = 0;
        r.mac.messages = 0;
        assert_eq!(r.nanojoules_per_byte(), None);
        assert_eq!(r.microjoules_per_message(), None);
    }

    #[test]
    fn the_estimate_is_the_median_with_a_student_t_interval() {
        let e = estimate(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(e.median, 2.0);
        // Mean 2, s² = 1, t(0.975, 2) = 4.303: half-width 4.303 / √3.
        let ci = e.ci95.unwrap();
        let half = 4.303 / 3f64.sqrt();
        assert!((ci.low - (2.0 - half)).abs() < 1e-9 && (ci.high - (2.0 + half)).abs() < 1e-9);
        assert_eq!(estimate(&[5.0]).unwrap().ci95, None);
        assert_eq!(estimate(&[]), None);
    }

    #[test]
    fn a_result_on_few_meter_steps_is_flagged() {
        let rounds = vec![known_round(); 3];
        let fine = rapl_package(rounds.clone());
        assert!((fine.meter_steps.unwrap() - 1.5e6).abs() < 1e-3);
        assert!(!fine.few_steps);
        assert!((fine.nj_per_byte.unwrap().median - 1.0).abs() < 1e-9);
        assert_eq!(fine.idle_w, Some(10.0));
        assert_eq!(fine.mac_w, Some(11.0));
        // A 1 J step: the 1.5 J net energy is 1.5 steps.
        let coarse = Energy::from_rounds(
            "m".into(),
            crate::energy::Scope::Battery,
            1.0,
            None,
            30.0,
            rounds,
        );
        assert!((coarse.meter_steps.unwrap() - 1.5).abs() < 1e-9);
        assert!(coarse.few_steps);
        assert!(coarse.cell().ends_with("(few steps)"), "{}", coarse.cell());
        assert_eq!(meter_steps(-3.0, 0.5), Some(6.0));
        assert_eq!(meter_steps(3.0, 0.0), None);
    }

    #[test]
    fn a_meter_is_observed_to_step_and_update() {
        // Read every millisecond; the counter moves by 15.3 mJ or more every 3 ms.
        let samples: Vec<(f64, f64)> = (0..10)
            .map(|i| {
                (
                    i as f64 * 1e-3,
                    (i / 3) as f64 * 0.0153 + if i >= 9 { 0.01 } else { 0.0 },
                )
            })
            .collect();
        let seen = observe(&samples).unwrap();
        assert!((seen.step_j - 0.0153).abs() < 1e-12, "{seen:?}");
        // Changes at 3, 6 and 9 ms: every 3 ms.
        assert!((seen.update_s.unwrap() - 3e-3).abs() < 1e-12);
        assert_eq!(observe(&[(0.0, 1.0), (1.0, 1.0)]), None);
        assert_eq!(
            observe(&[(0.0, 1.0), (1.0, 1.5)]),
            Some(Observed {
                step_j: 0.5,
                update_s: None
            })
        );
        // A coarse observed step counts fewer steps than the declared unit would.
        let rounds = vec![known_round(); 3];
        let e = Energy::from_rounds(
            "m".into(),
            crate::energy::Scope::Battery,
            1e-3,
            Some(Observed {
                step_j: 0.5,
                update_s: Some(10.0),
            }),
            30.0,
            rounds,
        );
        assert!((e.meter_steps.unwrap() - 3.0).abs() < 1e-9);
        assert!(e.few_steps);
    }

    #[test]
    fn equal_idle_and_mac_power_nets_to_zero() {
        // A constant 8 W whatever runs: every baseline takes all of it.
        let r = Round {
            idle: window(8.0, 1.0, 0, 0),
            null: window(8.0, 1.0, 2_000_000, 128_000_000),
            mac: window(8.0, 1.0, 500_000, 32_000_000),
        };
        assert!(r.nanojoules_per_byte().unwrap().abs() < 1e-9);
        let e = rapl_package(vec![r]);
        assert!(e.few_steps, "a zero net energy stands on no steps");
    }
}
