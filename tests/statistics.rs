//! The statistics behind `ci95`, `noisy` and `not-steady`, on synthetic series with known answers.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

use macbench::engine::{RawRun, Sample, Series, ThreadCounters};
use macbench::metrics::{self, compute, Context, Metrics, RunMetrics};
use macbench::results::Ci95Set;
use macbench::stats::{self, BatchEstimate, Interval};
use std::time::Duration;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-12)
}

#[test]
fn student_t_quantiles_match_the_table() {
    assert_eq!(stats::t95(0), f64::INFINITY);
    assert!(close(stats::t95(1), 12.706, 1e-4));
    assert!(close(stats::t95(2), 4.303, 1e-4));
    assert!(close(stats::t95(9), 2.262, 1e-4));
    assert!(close(stats::t95(30), 2.042, 1e-4));
    // Beyond the table: t_{0.975,60} = 2.000, t_{0.975,120} = 1.980, → 1.960.
    assert!(close(stats::t95(60), 2.000, 1e-3));
    assert!(close(stats::t95(120), 1.980, 1e-3));
    assert!(close(stats::t95(1_000_000), 1.960, 1e-3));
    // Monotonic: more degrees of freedom, a narrower interval.
    assert!((1..200).all(|df| stats::t95(df) >= stats::t95(df + 1)));
}

#[test]
fn between_repeat_interval_is_mean_plus_minus_t_s_over_root_r() {
    // 10, 12, 14: mean 12, s² = 4, SE = √(4/3), t_{0.975,2} = 4.303.
    let ci = stats::confidence_interval(&[(10.0, None), (12.0, None), (14.0, None)]).unwrap();
    let half = 4.303 * (4.0f64 / 3.0).sqrt();
    assert!(close(ci.low, 12.0 - half, 1e-9), "{ci:?}");
    assert!(close(ci.high, 12.0 + half, 1e-9), "{ci:?}");
}

#[test]
fn within_run_batches_set_a_floor_when_repeats_agree_by_luck() {
    // Two identical repeats (between-repeat variance 0), each with SE 1 from 10 batches:
    // variance of the mean 1/2, 18 degrees of freedom, t = 2.101.
    let b = BatchEstimate {
        batches: 10,
        standard_error: 1.0,
    };
    let ci = stats::confidence_interval(&[(10.0, Some(b)), (10.0, Some(b))]).unwrap();
    let half = 2.101 * 0.5f64.sqrt();
    assert!(close(ci.high - 10.0, half, 1e-9), "{ci:?}");
    assert!(close(10.0 - ci.low, half, 1e-9), "{ci:?}");
    // One run: its own batches, 9 degrees of freedom.
    let ci = stats::confidence_interval(&[(10.0, Some(b))]).unwrap();
    assert!(close(ci.high - 10.0, 2.262, 1e-9), "{ci:?}");
    // One run too short to batch: no interval rather than a false one.
    assert_eq!(stats::confidence_interval(&[(10.0, None)]), None);
    assert_eq!(stats::confidence_interval(&[]), None);
}

#[test]
fn batch_estimate_is_sd_over_root_k() {
    // 1..=5: sd = √2.5, SE = √2.5/√5 = √0.5.
    let b = BatchEstimate::from_batches(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    assert_eq!(b.batches, 5);
    assert!(close(b.standard_error, 0.5f64.sqrt(), 1e-12));
    assert!(BatchEstimate::from_batches(&[1.0]).is_none());
    assert!(BatchEstimate::from_batches(&[f64::NAN, 1.0]).is_none());
}

#[test]
fn a_significant_large_slope_is_a_trend_and_noise_is_not() {
    let times: Vec<f64> = (0..10).map(f64::from).collect();
    // Rising 2 per step from 100: fitted change over 9 steps = 18 on a mean of 109 → +16.5 %.
    let rising: Vec<f64> = times.iter().map(|t| 100.0 + 2.0 * t).collect();
    let t = stats::trend(&times, &rising, 0.05).unwrap();
    assert!(t.significant);
    assert!(close(t.relative_change, 18.0 / 109.0, 1e-9), "{t:?}");
    // Flat with alternating noise: no slope.
    let flat: Vec<f64> = times
        .iter()
        .map(|t| if *t as i32 % 2 == 0 { 99.0 } else { 101.0 })
        .collect();
    let t = stats::trend(&times, &flat, 0.05).unwrap();
    assert!(!t.significant, "{t:?}");
    // A perfectly clean 1 % drift is significant statistically but below the practical threshold.
    let drift: Vec<f64> = times.iter().map(|t| 100.0 + 0.1 * t).collect();
    let t = stats::trend(&times, &drift, 0.05).unwrap();
    assert!(t.t.abs() > 100.0 && !t.significant, "{t:?}");
    // Too few points to say.
    assert!(stats::trend(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0], 0.05).is_none());
}

/// A series of `ticks` equal intervals of 10 ms whose throughput per tick is `rate(k)` bytes of 100-byte
/// messages, with CPU time equal to wall time (one busy core), window from tick `first` to `last`.
fn series(ticks: usize, first: usize, last: usize, rate: impl Fn(usize) -> u64) -> Series {
    let mut s = Series {
        tick_ns: 10_000_000,
        window_first: first,
        window_last: last,
        ..Series::default()
    };
    let (mut b, mut m) = (0u64, 0u64);
    for k in 0..=ticks {
        if k > 0 {
            b += rate(k);
            m += rate(k) / 100;
        }
        s.t_ns.push(k as u64 * 10_000_000);
        s.bytes.push(b);
        s.messages.push(m);
        s.cpu_ns.push(k as u64 * 10_000_000);
    }
    s
}

#[test]
fn batches_partition_the_window_exactly() {
    let s = series(30, 5, 28, |_| 1_000_000);
    let b = metrics::batches(&s);
    assert_eq!(b.len(), metrics::MAX_BATCHES);
    let bytes: u64 = b.iter().map(|x| x.bytes).sum();
    assert_eq!(bytes, s.bytes[28] - s.bytes[5]);
    let wall: f64 = b.iter().map(|x| x.wall_s).sum();
    assert!(close(wall, 0.23, 1e-12));
    assert!(b.windows(2).all(|w| w[0].mid_s < w[1].mid_s));
    // Fewer intervals than batches: one batch per interval; under two intervals: none.
    assert_eq!(metrics::batches(&series(10, 2, 6, |_| 1)).len(), 4);
    assert!(metrics::batches(&series(10, 2, 3, |_| 1)).is_empty());
    // Indices outside the series: none rather than a panic.
    assert!(metrics::batches(&series(10, 2, 40, |_| 1)).is_empty());
}

/// A one-thread run whose window counters agree with `series`.
fn raw_with(series: Series) -> RawRun {
    let (a, z) = (series.window_first, series.window_last);
    let sample = |k: usize| Sample {
        wall_ns: series.t_ns[k],
        cpu_ns: series.cpu_ns[k],
        messages: series.messages[k],
        bytes: series.bytes[k],
        hw_cycles: None,
        cpu: Some(0),
    };
    RawRun {
        window_wall_ns: series.t_ns[z] - series.t_ns[a],
        first_half_wall_ns: (series.t_ns[z] - series.t_ns[a]) / 2,
        threads: vec![ThreadCounters {
            session: 0,
            allowed_cpus: vec![0],
            window_start: sample(a),
            window_mid: sample((a + z) / 2),
            window_end: sample(z),
            total_messages: *series.messages.last().unwrap(),
            ..ThreadCounters::default()
        }],
        key_setup_ns: 0.0,
        series,
        ..RawRun::default()
    }
}

const CTX: Context = Context {
    f: 1e9,
    cores: 1,
    core_ratio: None,
    timer_resolution_ns: 1,
};

#[test]
fn a_rising_series_is_not_steady_and_says_the_warm_up_has_not_ended() {
    let raw = raw_with(series(40, 10, 35, |k| 1_000_000 + 40_000 * k as u64));
    let RunMetrics { warnings, .. } = compute(&raw, CTX);
    let w = warnings
        .iter()
        .find(|w| w.code == "not-steady")
        .expect("not-steady");
    assert!(w.message.contains("warm-up has not ended"), "{}", w.message);
    // A steady series is not flagged.
    let raw = raw_with(series(40, 10, 35, |_| 1_000_000));
    let RunMetrics { warnings, .. } = compute(&raw, CTX);
    assert!(!warnings.iter().any(|w| w.code == "not-steady"));
}

#[test]
fn a_constant_series_has_a_zero_width_interval_at_its_value() {
    // 1 MB per 10 ms tick on one busy core: 1e9 cycles/s × 0.01 s / 1e6 B = 10 cycles/byte.
    let raw = raw_with(series(40, 10, 35, |_| 1_000_000));
    let RunMetrics { metrics: m, .. } = compute(&raw, CTX);
    assert!(close(m.apparent_cycles_per_byte.unwrap(), 10.0, 1e-9));
    let u = metrics::uncertainty(&raw, CTX.f);
    let se = u.apparent_cycles_per_byte.unwrap();
    assert_eq!(se.batches, 10);
    assert!(se.standard_error < 1e-15);
    let ci = Ci95Set::from_runs(std::slice::from_ref(&m), &[u]);
    let a = ci.apparent_cycles_per_byte.unwrap();
    assert!(
        close(a.low, 10.0, 1e-9) && close(a.high, 10.0, 1e-9),
        "{a:?}"
    );
    assert!(ci.precision(&m).unwrap() < 1e-9);
}

#[test]
fn alternating_batches_give_the_textbook_interval() {
    // A 10-tick window, one tick per batch, alternating 1 MB and 3 MB per 10 ms: bytes/s per batch
    // 1e8 and 3e8, mean 2e8, sd = √(10/9)·1e8, SE = sd/√10, half-width = t_{0.975,9}·SE.
    let raw = raw_with(series(20, 5, 15, |k| {
        if k % 2 == 0 {
            1_000_000
        } else {
            3_000_000
        }
    }));
    let u = metrics::uncertainty(&raw, CTX.f);
    let se = u.bytes_per_second.unwrap();
    let expected_se = (10.0f64 / 9.0).sqrt() * 1e8 / 10f64.sqrt();
    assert!(close(se.standard_error, expected_se, 1e-9), "{se:?}");
    let m = Metrics {
        bytes_per_second: 2e8,
        ..Metrics::default()
    };
    let ci = Ci95Set::from_runs(&[m], &[u]).bytes_per_second.unwrap();
    let half = 2.262 * expected_se;
    assert!(
        close(ci.high - 2e8, half, 1e-9) && close(2e8 - ci.low, half, 1e-9),
        "{ci:?}"
    );
}

#[test]
fn relative_half_width() {
    let i = Interval {
        low: 95.0,
        high: 105.0,
    };
    assert!(close(i.relative_half_width(100.0).unwrap(), 0.05, 1e-12));
    assert_eq!(i.relative_half_width(0.0), None);
}

#[test]
fn a_fitted_duration_gives_every_session_its_rounds() {
    use macbench::bench::{
        fitted_duration, rounds_in_window, MAX_FITTED_DURATION, MIN_ROUNDS_PER_WINDOW,
        ROUNDS_PER_WINDOW,
    };
    use std::time::Duration;
    let base = Duration::from_millis(150);
    let slice = Duration::from_millis(4);
    // One session per core: the default stands, and nothing is said.
    assert_eq!(fitted_duration(base, 2, 2, 0.7, slice), (base, None));
    // 100 sessions on 2 cores: 50 per core × 4 ms × 10 rounds = 2 s of window, 2/0.7 s of run.
    let (d, why) = fitted_duration(base, 100, 2, 0.7, slice);
    assert!((d.as_secs_f64() - 2.0 / 0.7).abs() < 1e-9, "{d:?}");
    assert!(why.unwrap().contains("100 sessions on 2 core(s)"));
    assert!(
        (rounds_in_window(d.mul_f64(0.7), 100, 2, slice) - f64::from(ROUNDS_PER_WINDOW)).abs()
            < 1e-9
    );
    // 2,000 sessions: 1,000 per core × 4 ms × 10 rounds = 40 s of window, capped at 30 s of run
    // (which still holds the 5 rounds' 20 s).
    let (d, why) = fitted_duration(base, 2000, 2, 0.7, slice);
    assert_eq!(d, MAX_FITTED_DURATION);
    assert!(why.unwrap().contains("capped"));
    // 10,000 sessions: the cap would leave a window of 2 rounds; the minimum of 5 rounds (5,000 per
    // core × 4 ms × 5 = 100 s of window) stands above it, and the cap is said.
    let (d, why) = fitted_duration(base, 10_000, 2, 0.7, slice);
    assert!((d.as_secs_f64() - 100.0 / 0.7).abs() < 1e-9, "{d:?}");
    assert!(
        (rounds_in_window(d.mul_f64(0.7), 10_000, 2, slice) - f64::from(MIN_ROUNDS_PER_WINDOW))
            .abs()
            < 1e-9
    );
    assert!(why.unwrap().contains("capped"));
}

/// The floors the planner keeps: a window of 5 scheduling rounds, and 1,000 messages per session.
#[test]
fn the_minimum_window_is_five_rounds_and_a_thousand_messages() {
    use macbench::bench::{minimum_window, window_for_messages};
    use std::time::Duration;
    let slice = Duration::from_millis(4);
    // A core per session: no rounds to wait for.
    assert_eq!(minimum_window(2, 2, slice), Duration::ZERO);
    // 100 sessions on one core: 100 × 4 ms × 5 = 2 s; on two cores, 1 s; 101 on two: 51 per core.
    assert_eq!(minimum_window(100, 1, slice), Duration::from_secs(2));
    assert_eq!(minimum_window(100, 2, slice), Duration::from_secs(1));
    assert_eq!(minimum_window(101, 2, slice), Duration::from_millis(1020));
    // 1,000 messages of 0.5 ms for one session on its own core: 0.5 s; with 50 per core, 25 s.
    assert!((window_for_messages(1, 1, 0.5e-3).as_secs_f64() - 0.5).abs() < 1e-9);
    assert!((window_for_messages(100, 2, 0.5e-3).as_secs_f64() - 25.0).abs() < 1e-9);
}

#[test]
fn the_tick_grows_with_sessions_to_bound_the_sampler() {
    use macbench::engine::{effective_tick, TICK_PER_SESSION};
    use std::time::Duration;
    let ten = Duration::from_millis(10);
    assert_eq!(effective_tick(ten, 1), ten);
    assert_eq!(effective_tick(ten, 1000), ten);
    assert_eq!(effective_tick(ten, 10_000), TICK_PER_SESSION * 10_000);
    assert_eq!(
        effective_tick(Duration::from_millis(200), 10_000),
        Duration::from_millis(200)
    );
}

// The paired-rounds ratio of `compare` (stats::paired_ratio): constructed rounds with known answers.

fn ratio_of(pairs: &[(f64, f64)]) -> macbench::stats::RatioEstimate {
    macbench::stats::paired_ratio(
        pairs,
        macbench::stats::BOOTSTRAP_RESAMPLES,
        macbench::stats::BOOTSTRAP_SEED,
    )
    .unwrap()
}

#[test]
fn paired_ratio_of_identical_rounds_is_that_ratio_exactly() {
    let r = ratio_of(&[(5.0, 4.0); 5]);
    assert_eq!(r.median, 1.25);
    assert_eq!((r.ci95.low, r.ci95.high), (1.25, 1.25));
    assert_eq!(r.pairs, 5);
    assert!(!r.equal_within_noise());
    // One round: the ratio, with nothing to resample.
    let one = ratio_of(&[(2.0, 1.0)]);
    assert_eq!((one.median, one.ci95.low, one.ci95.high), (2.0, 2.0, 2.0));
}

#[test]
fn paired_ratio_of_two_rounds_spans_both() {
    // Resampled medians are 0.9, 1.0 or 1.1 with probabilities ¼, ½, ¼: the 2.5 % and 97.5 % quantiles
    // are the two ratios themselves, and the interval holds 1.
    let r = ratio_of(&[(0.9, 1.0), (1.1, 1.0)]);
    assert!((r.median - 1.0).abs() < 1e-12);
    assert_eq!((r.ci95.low, r.ci95.high), (0.9, 1.1));
    assert!(r.equal_within_noise());
}

#[test]
fn paired_ratio_of_five_rounds_reaches_the_extremes() {
    // With 5 rounds a resampled median is the smallest ratio when 3 or more of the 5 draws are it:
    // probability 0.058 > 0.025, so each end of the interval is an extreme ratio; 1 lies outside.
    let pairs: Vec<(f64, f64)> = [1.1, 1.2, 1.3, 1.4, 1.5]
        .iter()
        .map(|r| (r * 2.0, 2.0))
        .collect();
    let r = ratio_of(&pairs);
    assert!((r.median - 1.3).abs() < 1e-12);
    assert!((r.ci95.low - 1.1).abs() < 1e-12, "{r:?}");
    assert!((r.ci95.high - 1.5).abs() < 1e-12, "{r:?}");
    assert!(!r.equal_within_noise());
    // The same rounds give the same interval (fixed seed); the pairs' order is ours / theirs.
    assert_eq!(r, ratio_of(&pairs));
    let inverse: Vec<(f64, f64)> = pairs.iter().map(|&(a, b)| (b, a)).collect();
    assert!((ratio_of(&inverse).median - 1.0 / 1.3).abs() < 1e-12);
}

#[test]
fn paired_ratio_leaves_out_unusable_rounds() {
    let r = ratio_of(&[(2.0, 1.0), (f64::NAN, 1.0), (1.0, 0.0), (-1.0, 1.0)]);
    assert_eq!((r.pairs, r.median), (1, 2.0));
    assert!(macbench::stats::paired_ratio(&[], 100, 1).is_none());
    assert!(macbench::stats::paired_ratio(&[(0.0, 1.0)], 100, 1).is_none());
}

#[test]
fn widening_for_a_coarse_peer_clock_moves_both_bounds_and_keeps_the_median() {
    // A peer timed with 10 ms ticks over 1 s: each of its figures is known to ±1 %, in every round
    // alike, so a 0.993 ratio whose rounds all agree is not told apart from 1.
    let r = ratio_of(&[(0.993, 1.0); 5]);
    assert!(!r.equal_within_noise());
    let w = r.widened(0.01);
    assert_eq!(w.median, r.median);
    assert_eq!(w.pairs, 5);
    assert!((w.ci95.low - 0.993 * 0.99).abs() < 1e-12, "{w:?}");
    assert!((w.ci95.high - 0.993 * 1.01).abs() < 1e-12, "{w:?}");
    assert!(w.equal_within_noise());
    // A gap larger than the clock's resolution still shows.
    assert!(!ratio_of(&[(0.95, 1.0); 5])
        .widened(0.01)
        .equal_within_noise());
    // No resolution, or a nonsense one, leaves the interval as it was.
    assert_eq!(r.widened(0.0), r);
    assert_eq!(r.widened(f64::NAN), r);
    assert_eq!(r.widened(-0.5), r);
}

#[test]
fn chi_square_quantiles_match_the_table() {
    // 99 % quantiles of χ² (any table): k = 1, 2, 5, 11, 30.
    for (k, exact) in [
        (1.0, 6.635),
        (2.0, 9.210),
        (5.0, 15.086),
        (11.0, 24.725),
        (30.0, 50.892),
    ] {
        let got = stats::chi_square_99(k);
        assert!(
            (got / exact - 1.0).abs() < 0.01,
            "k = {k}: {got} against {exact}"
        );
    }
}

#[test]
fn a_cell_is_noisier_than_the_host_only_beyond_its_spread() {
    // The host: many scenarios whose repeats spread ±10 % (ln values ±0.1 about their mean).
    let mut host = stats::HostSpread::default();
    for _ in 0..50 {
        host.add(&[(-0.1f64).exp(), (0.1f64).exp()]);
    }
    let (sigma, df) = host.sigma().expect("pooled");
    assert!(close(sigma, 0.1 * 2f64.sqrt(), 1e-9) && df == 50);
    // Twelve repeats as spread as the host: not beyond it.
    let like_host: Vec<f64> = (0..12)
        .map(|i| (if i % 2 == 0 { 0.14 } else { -0.14f64 }).exp())
        .collect();
    assert_eq!(host.exceeded_by(&like_host), Some(false));
    // Twelve repeats three times as spread: beyond it.
    let wide: Vec<f64> = like_host.iter().map(|v| v.powi(3)).collect();
    assert_eq!(host.exceeded_by(&wide), Some(true));
    // One repeat, or no host yet: nothing to say.
    assert_eq!(host.exceeded_by(&[1.0]), None);
    assert_eq!(stats::HostSpread::default().exceeded_by(&wide), None);
}

/// A sweep of `scenarios` functions × one size, as `run` builds it, with the given budget and
/// repeats (None: the planner's).
fn sweep(
    scenarios: usize,
    repeat: Option<usize>,
    budget: Option<&str>,
) -> macbench::sweep::SweepSpec {
    let functions: Vec<_> =
        std::iter::repeat_n(macbench::mac::null::function(), scenarios).collect();
    let mut options = macbench::results::RunOptions {
        sizes: "64".to_string(),
        cores: vec![0],
        sessions: 1,
        ..macbench::results::RunOptions::default()
    };
    options.timing.budget = budget.map(|b| {
        (
            macbench::spec::values::parse_duration("--budget", b).unwrap(),
            b.to_string(),
        )
    });
    options.timing.repeat = repeat;
    macbench::sweep::SweepSpec::new(&options, functions).unwrap()
}

#[test]
fn the_planner_fills_its_share_of_the_budget_with_short_repeats() {
    let online = [0];
    // The main job's size: 144 scenarios in 52 s. 75 % of it at 21 ms + 1 ms a run: 12 repeats
    // (12.3), and the runs stay at the shortest (issue 44: the rest is for windows fitted to slow
    // functions' largest messages, then for extra repeats).
    let plan = sweep(144, None, None).plan(&online).unwrap();
    assert_eq!(plan.repeats, 12);
    assert_eq!(plan.duration, Duration::from_micros(21_000));
    assert_eq!(plan.window_start, macbench::sweep::WARM_UP);
    assert_eq!(plan.window_end, plan.duration, "no cool-down");
    assert_eq!(
        plan.tick,
        Duration::from_micros(2500),
        "an eighth of the 20 ms window"
    );
    let s = &plan.scenarios[0];
    assert_eq!(
        (s.window_start, s.window_end, s.tick),
        (plan.window_start, plan.window_end, plan.tick)
    );
    // Few scenarios: repeats stop at --max-repeat and runs grow instead, up to 150 ms.
    let small = sweep(2, None, None).plan(&online).unwrap();
    assert_eq!(small.repeats, 40);
    assert_eq!(small.duration, Duration::from_millis(150));
    // --repeat given: exactly that many, the runs as long as 80 % of the budget allows.
    let given = sweep(144, Some(3), None).plan(&online).unwrap();
    assert_eq!(given.repeats, 3);
    assert!(given.duration > plan.duration && given.duration <= Duration::from_millis(150));
    // A budget too small for the shortest runs is refused, naming it.
    let e = sweep(144, None, Some("2s"))
        .plan(&online)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("--budget 2s:"), "{e}");
}

#[test]
fn the_auto_tick_is_an_eighth_of_the_window_within_its_bounds() {
    use macbench::sweep::auto_tick;
    assert_eq!(
        auto_tick(Duration::from_millis(20)),
        Duration::from_micros(2500)
    );
    assert_eq!(
        auto_tick(Duration::from_millis(4)),
        Duration::from_millis(1)
    );
    assert_eq!(auto_tick(Duration::from_secs(1)), Duration::from_millis(10));
}

#[test]
fn a_window_too_short_for_1000_messages_is_fitted_with_a_quarter_to_spare_up_to_its_cap() {
    use macbench::bench::{fitted_window, MAX_FITTED_WINDOW};
    let w = Duration::from_millis(20);
    // 500 messages in 20 ms: 1,000 need 40 ms, and a quarter more: 50 ms.
    assert_eq!(fitted_window(w, 500, true), Some(Duration::from_millis(50)));
    // 100 messages would need 250 ms: the cap.
    assert_eq!(fitted_window(w, 100, true), Some(MAX_FITTED_WINDOW));
    // Enough already.
    assert_eq!(fitted_window(w, 1000, true), None);
    // Nothing processed by a session that ran through the window: a message longer than the
    // window (the full matrix's CMAC-Twofish of RustCrypto at 64 KiB failed `starvation` three
    // times in 20 ms windows): the cap. By one that did not run: starvation, the checks' to report.
    assert_eq!(fitted_window(w, 0, true), Some(MAX_FITTED_WINDOW));
    assert_eq!(fitted_window(w, 0, false), None);
    // A window already at the cap is not fitted again.
    assert_eq!(fitted_window(MAX_FITTED_WINDOW, 10, true), None);
    assert_eq!(fitted_window(MAX_FITTED_WINDOW, 0, true), None);
}

#[test]
fn the_median_interval_is_the_order_statistics_of_the_binomial_table() {
    let v: Vec<f64> = (1..=12).map(f64::from).collect();
    // n = 12: P(B ≤ 2) = 1.9 % ≤ 2.5 %, P(B ≤ 3) = 7.3 %: the 3rd and 10th values.
    let m = stats::median_interval(&v).unwrap();
    assert_eq!((m.low, m.high), (3.0, 10.0));
    // n = 6: P(B ≤ 0) = 1.6 %: the extremes.
    let m = stats::median_interval(&v[..6]).unwrap();
    assert_eq!((m.low, m.high), (1.0, 6.0));
    // Fewer than 6: none (the extremes hold the median less than 95 % of the time).
    assert!(stats::median_interval(&v[..5]).is_none());
}

#[test]
fn an_interval_spans_the_medians_when_the_repeats_are_two_moded() {
    // Seven calm repeats and five slow ones: the mean's interval is narrow about 2.4, the median's
    // reaches from the calm 2.0 to the slow 3.0.
    let runs: Vec<(f64, Option<BatchEstimate>)> = [2.0; 7]
        .into_iter()
        .chain([3.0; 5])
        .map(|v| (v, None))
        .collect();
    let ci = stats::confidence_interval(&runs).unwrap();
    assert_eq!((ci.low, ci.high), (2.0, 3.0));
}

/// `--slowest C` (what `reproduce` sets for each step): every scenario's window holds 1,000 messages
/// a session of its own size at C reference cycles per byte, a run of larger messages lengthened by
/// what its window lacked, the warm-up as planned; small messages keep the planner's run. The budget
/// the plan takes counts each run at its own length.
#[test]
fn slowest_gives_each_size_the_window_its_messages_need() {
    let functions = macbench::mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == "hmac-sha256" && f.accel == macbench::mac::Accel::Hw)
        .take(1)
        .collect::<Vec<_>>();
    let mut options = macbench::results::RunOptions {
        sizes: "64,16384,65536".to_string(),
        cores: vec![0],
        sessions: 1,
        ..macbench::results::RunOptions::default()
    };
    options.timing.repeat = Some(3);
    options.timing.duration = Some(Duration::from_millis(21));
    options.timing.slowest = Some(36.0);
    let spec = macbench::sweep::SweepSpec::new(&options, functions).unwrap();
    let plan = spec.plan(&[0]).unwrap();
    assert_eq!(plan.scenarios.len(), 3);
    let f = macbench::sweep::reference_hz();
    let mut budget_runs = Duration::ZERO;
    for s in &plan.scenarios {
        let size = macbench::sweep::largest_of(&s.spec.size);
        let window = s.spec.window_end - s.spec.window_start;
        let needed = 1000.0 * 36.0 * f64::from(size) / f;
        assert_eq!(
            s.spec.window_start, plan.window_start,
            "the warm-up is kept"
        );
        assert_eq!(
            s.spec.duration - s.spec.window_end,
            plan.duration - plan.window_end,
            "the run's end after its window is kept"
        );
        if needed <= (plan.window_end - plan.window_start).as_secs_f64() {
            assert_eq!(s.spec.duration, plan.duration, "{size} B");
        } else {
            // Lengthened by what it lacked, to the next tenth of a millisecond.
            assert!(
                window.as_secs_f64() >= needed,
                "{size} B: {window:?} < {needed}"
            );
            assert!(window.as_secs_f64() < needed + 1e-4, "{size} B: {window:?}");
        }
        budget_runs += s.spec.duration + macbench::sweep::RUN_SETUP;
    }
    assert!(plan.scenarios[2].spec.duration > plan.scenarios[1].spec.duration);
    // No budget given: the default, or the planned runs' time where that is more (3 × ~3.5 s).
    assert!(
        plan.budget >= budget_runs * 3,
        "{:?} < {:?}",
        plan.budget,
        budget_runs * 3
    );
    // A bound that would plan runs of minutes: refused, naming the size and the run.
    options.timing.slowest = Some(1e5);
    let functions = macbench::mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == "hmac-sha256" && f.accel == macbench::mac::Accel::Hw)
        .take(1)
        .collect::<Vec<_>>();
    let e = macbench::sweep::SweepSpec::new(&options, functions)
        .unwrap()
        .plan(&[0])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--slowest 100000: messages of 16384 B would need runs of ")
            && e.contains("longer than the 30 s a run may be planned"),
        "{e}"
    );
    // Not a cost: refused in one line.
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 2e6] {
        options.timing.slowest = Some(bad);
        let e = macbench::sweep::SweepSpec::new(&options, Vec::new())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--slowest "), "{e}");
    }
}
