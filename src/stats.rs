//! Statistics of a benchmark's numbers: Student-t intervals, batch means and a trend test.
//!
//! Pure arithmetic like `metrics`, so every formula is tested on synthetic series with known answers.
//! The model is criterion's and hyperfine's: a figure comes with a 95 % confidence interval, and a run
//! whose throughput drifts is flagged rather than averaged.
//!
//! Why batch means: tick-to-tick throughput is autocorrelated (a thread descheduled for one tick catches
//! up in the next), so treating ticks as independent draws understates the uncertainty. Grouping the
//! window's ticks into a few consecutive batches and treating the batch values as the observations is the
//! standard remedy for steady-state simulation output (Law & Kelton, "Simulation Modeling and Analysis",
//! ch. 9); with batches long against the correlation time the batch values are nearly independent.

use serde::{Deserialize, Serialize};

/// A closed interval, e.g. a 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies inside (ends included).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Half the width relative to `centre` (0.03 = ±3 %); `None` when `centre` is not positive.
    pub fn relative_half_width(&self, centre: f64) -> Option<f64> {
        (centre > 0.0 && centre.is_finite()).then(|| (self.high - self.low) / 2.0 / centre)
    }
}

/// The two-sided 95 % quantile of Student's t with `df` degrees of freedom (t_{0.975, df}).
/// Tabulated to 30 degrees of freedom, then the Cornish–Fisher expansion around the normal quantile
/// (error < 1e-3 for df > 30). `df` = 0 has no quantile: infinity, so an interval from one point is
/// unbounded rather than falsely narrow.
pub fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            let z = 1.959_964f64;
            let n = df as f64;
            z + (z.powi(3) + z) / (4.0 * n)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
        }
    }
}

/// The standard normal quantile Φ⁻¹(p) for 0 < p < 1 (Acklam's rational approximation, relative
/// error below 1.2e-9); ±infinity at 0 and 1, NaN outside.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    const LOW: f64 = 0.024_25;
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Arithmetic mean; `None` when empty.
pub fn mean(x: &[f64]) -> Option<f64> {
    (!x.is_empty()).then(|| x.iter().sum::<f64>() / x.len() as f64)
}

/// Sample variance (n − 1 in the denominator); `None` for fewer than two values.
pub fn variance(x: &[f64]) -> Option<f64> {
    let m = mean(x)?;
    (x.len() >= 2).then(|| x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64)
}

/// Within-run uncertainty of one run's estimate, from batch means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchEstimate {
    /// Number of batches (≥ 2).
    pub batches: usize,
    /// Standard error of the run's value: sd(batch values) / √batches.
    pub standard_error: f64,
}

impl BatchEstimate {
    /// From the values of one metric in each batch; `None` below two finite values.
    pub fn from_batches(values: &[f64]) -> Option<BatchEstimate> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let var = variance(&v)?;
        Some(BatchEstimate {
            batches: v.len(),
            standard_error: (var / v.len() as f64).sqrt(),
        })
    }
}

/// 95 % confidence interval of a scenario's metric from `r` repeats.
///
/// `runs` holds each repeat's value and, where the run had enough ticks, its batch-means estimate.
/// The variance of the mean over repeats is estimated twice — from the spread between repeats
/// (`s²/r`, `r − 1` degrees of freedom) and from the runs' own batch means (`mean SE² / r`,
/// `Σ(batches − 1)` degrees of freedom) — and the larger is used with its degrees of freedom. With few
/// repeats the between-repeat spread is itself uncertain; the within-run figure is then a floor that
/// keeps three lucky repeats from claiming a precision no single run showed, and the between-repeat
/// figure catches what batches cannot see (a run-to-run shift such as a different CPU frequency).
/// Centred on the mean of the repeats. `None` when neither estimate exists (one run too short to batch).
pub fn confidence_interval(runs: &[(f64, Option<BatchEstimate>)]) -> Option<Interval> {
    let values: Vec<f64> = runs.iter().map(|r| r.0).filter(|v| v.is_finite()).collect();
    let r = values.len();
    let centre = mean(&values)?;
    let between = variance(&values).map(|s2| (s2 / r as f64, r - 1));
    let batched: Vec<BatchEstimate> = runs
        .iter()
        .filter(|x| x.0.is_finite())
        .filter_map(|x| x.1)
        .collect();
    let within = (batched.len() == r).then(|| {
        let mean_se2 = batched
            .iter()
            .map(|b| b.standard_error * b.standard_error)
            .sum::<f64>()
            / r as f64;
        let df = batched.iter().map(|b| b.batches - 1).sum::<usize>();
        (mean_se2 / r as f64, df)
    });
    let (var, df) = match (between, within) {
        (Some(b), Some(w)) => {
            if b.0 >= w.0 {
                b
            } else {
                w
            }
        }
        (Some(b), None) => b,
        (None, Some(w)) => w,
        (None, None) => return None,
    };
    let half = t95(df) * var.sqrt();
    let around_mean = Interval {
        low: centre - half,
        high: centre + half,
    };
    // The headline is the median: where the repeats are two-moded (a host calm most of the time,
    // slow now and then), the median of 12 jumps between the modes more than the mean moves, and
    // an interval about the mean alone then claims more than the median can keep (on the fake host
    // of tests/honesty.rs with 0.1 s stretches, 2 of 4 identical pairs failed the gate). So the
    // interval also spans the median's own distribution-free one.
    Some(match median_interval(&values) {
        Some(m) => Interval {
            low: around_mean.low.min(m.low),
            high: around_mean.high.max(m.high),
        },
        None => around_mean,
    })
}

/// The distribution-free 95 % interval of the median of `values`: the order statistics
/// `[x(k), x(n+1−k)]` with the largest `k` for which P(Binomial(n, ½) < k) ≤ 2.5 % (n = 12: the 3rd
/// and 10th, 96.1 %). `None` below 6 values, where even the extremes hold the median less than
/// 95 % of the time.
pub fn median_interval(values: &[f64]) -> Option<Interval> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n < 6 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    // P(B ≤ j) for B ~ Binomial(n, ½), accumulated term by term.
    let mut term = 0.5f64.powi(n as i32);
    let mut below = 0.0;
    let mut k = 0;
    for j in 0..n {
        below += term;
        if below > 0.025 {
            break;
        }
        k = j + 1;
        term *= (n - j) as f64 / (j + 1) as f64;
    }
    let k = k.max(1);
    Some(Interval {
        low: v[k - 1],
        high: v[n - k],
    })
}

/// The host's repeat-to-repeat spread, pooled over every scenario of a sweep: the variance of the
/// logarithm of a repeat's value about its scenario's mean, each scenario weighted by its degrees of
/// freedom (the pooled variance of a one-way layout). A shared host slows every scenario alike now
/// and then (docs/methodology.md "What the wander is"), and three repeats of one scenario may all
/// fall in a slow stretch, or all outside one, and agree closely: their own spread then claims a
/// precision the host does not give. The pooled spread sees the stretches across all scenarios, so
/// it is a floor under each scenario's interval ([`HostSpread::floor`]); on a quiet host it is small
/// and changes nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostSpread {
    sum_squares: f64,
    df: usize,
}

impl HostSpread {
    /// Add one scenario's repeat values (positive; others are left out).
    pub fn add(&mut self, values: &[f64]) {
        if let Some((ss, df)) = log_sum_squares(values) {
            self.sum_squares += ss;
            self.df += df;
        }
    }

    /// The pooled standard deviation of ln(value) (0.05 ≈ ±5 % a repeat) and its degrees of freedom;
    /// `None` before any scenario had two repeats.
    pub fn sigma(&self) -> Option<(f64, usize)> {
        (self.df > 0).then(|| ((self.sum_squares / self.df as f64).sqrt(), self.df))
    }

    /// `interval` of a scenario's value `centre` from `repeats` runs, widened where it is narrower
    /// than the host's spread allows: at least centre × exp(±t·σ/√repeats).
    pub fn floor(&self, interval: Interval, centre: f64, repeats: usize) -> Interval {
        let Some((sigma, df)) = self.sigma() else {
            return interval;
        };
        if !(centre > 0.0 && centre.is_finite()) || repeats == 0 {
            return interval;
        }
        let half = t95(df) * sigma / (repeats as f64).sqrt();
        Interval {
            low: interval.low.min(centre * (-half).exp()),
            high: interval.high.max(centre * half.exp()),
        }
    }
}

impl HostSpread {
    /// Whether `values` (one scenario's repeats) spread significantly more than the host's pooled
    /// spread: their sample variance of ln(value) against σ², one-sided at 99 % (s²·(r−1)/σ² above
    /// the χ² quantile with r − 1 degrees of freedom). `None` without a host spread or two values.
    /// A cell that is only as noisy as the host says nothing of its own: the host is said once.
    pub fn exceeded_by(&self, values: &[f64]) -> Option<bool> {
        let (sigma, _) = self.sigma().filter(|(s, _)| *s > 0.0)?;
        let (ss, df) = log_sum_squares(values)?;
        Some(ss / (sigma * sigma) > chi_square_99(df as f64))
    }
}

/// The sum of squares of ln(value) about their mean and its degrees of freedom, over the positive
/// finite `values`; `None` below two.
fn log_sum_squares(values: &[f64]) -> Option<(f64, usize)> {
    let logs: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .map(|v| v.ln())
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let m = logs.iter().sum::<f64>() / logs.len() as f64;
    Some((
        logs.iter().map(|l| (l - m) * (l - m)).sum::<f64>(),
        logs.len() - 1,
    ))
}

/// The 99 % quantile of χ² with `k` degrees of freedom (Wilson–Hilferty: within 1 % for k ≥ 2, and
/// 6.64 against the exact 6.63 at k = 1).
pub fn chi_square_99(k: f64) -> f64 {
    const Z99: f64 = 2.326_347_874;
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + Z99 * a.sqrt()).powi(3)
}

/// Result of the trend test over a window's batches.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// Fitted change from the window's first batch to its last, relative to the mean (0.08 = +8 %).
    pub relative_change: f64,
    /// Student t statistic of the slope.
    pub t: f64,
    /// The slope differs from zero at 95 % *and* the fitted change exceeds the practical threshold.
    pub significant: bool,
}

/// Least-squares trend of `values` against `times`: is the series drifting?
///
/// A slope counts only when it is statistically significant (|t| > t_{0.975, n−2}) and large enough to
/// matter (|relative change over the window| > `threshold`): with hundreds of ticks a 0.1 % drift is
/// "significant" yet harmless, and a 10 % swing in two noisy batches is not evidence. Needs at least
/// four points; `None` otherwise.
pub fn trend(times: &[f64], values: &[f64], threshold: f64) -> Option<Trend> {
    let n = times.len();
    if n != values.len() || n < 4 {
        return None;
    }
    let tm = mean(times)?;
    let vm = mean(values)?;
    let sxx: f64 = times.iter().map(|t| (t - tm) * (t - tm)).sum();
    let sxy: f64 = times
        .iter()
        .zip(values)
        .map(|(t, v)| (t - tm) * (v - vm))
        .sum();
    if sxx <= 0.0 || vm == 0.0 || !vm.is_finite() {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = vm - slope * tm;
    let residual: f64 = times
        .iter()
        .zip(values)
        .map(|(t, v)| {
            let e = v - (intercept + slope * t);
            e * e
        })
        .sum();
    let se = (residual / (n - 2) as f64 / sxx).sqrt();
    let t = if se > 0.0 {
        slope / se
    } else if slope == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(slope)
    };
    let span = times[n - 1] - times[0];
    let relative_change = slope * span / vm;
    Some(Trend {
        relative_change,
        t,
        significant: t.abs() > t95(n - 2) && relative_change.abs() > threshold,
    })
}

/// The `q`-quantile (0 ≤ q ≤ 1) of finite values, interpolated linearly between the two nearest ranks
/// (numpy's default), so `quantile(v, 0.5)` is `metrics::median` and `q` = 0 and 1 are the minimum and maximum;
/// `None` when there is no finite value.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = q * (v.len() - 1) as f64;
    let (below, above) = (rank.floor() as usize, rank.ceil() as usize);
    Some(v[below] + (v[above] - v[below]) * (rank - below as f64))
}

/// Resamples drawn by [`paired_ratio`]: enough that the 2.5 % and 97.5 % quantiles of the resampled
/// medians settle to the third digit, few enough to cost nothing beside the measurements.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// The seed of every bootstrap, so one set of rounds always gives the same interval.
pub const BOOTSTRAP_SEED: u64 = 0x6d61_6362_656e_6368;

/// Fewest paired rounds whose interval may decide a verdict. Up to 5 rounds the bootstrap interval of
/// [`paired_ratio`] is the rounds' range (a resampled median equals the smallest ratio with probability
/// above 2.5 %), and the range of `n` rounds holds the true median with probability 1 − 2^(1−n): each
/// round falls on either side of it with probability ½, and the range misses it only when all fall on
/// one side. That is 0, 50, 75 and 87.5 % for 1 to 4 rounds, 93.75 % for 5 and 96.9 % for 6: below 5,
/// calling the range a 95 % interval would overstate it.
pub const MIN_PAIRS_FOR_VERDICT: usize = 5;

/// The chance that the range of `pairs` rounds holds the true median, 1 − 2^(1−n) (see
/// [`MIN_PAIRS_FOR_VERDICT`]); 0 for none.
pub fn range_coverage(pairs: usize) -> f64 {
    if pairs == 0 {
        return 0.0;
    }
    1.0 - 0.5f64.powi(i32::try_from(pairs - 1).unwrap_or(i32::MAX))
}

/// A ratio measured in paired rounds: the median of the rounds' ratios and its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioEstimate {
    pub median: f64,
    pub ci95: Interval,
    /// Rounds that gave both figures.
    pub pairs: usize,
}

impl RatioEstimate {
    /// "Equal within noise": the interval holds 1.
    pub fn equal_within_noise(&self) -> bool {
        self.ci95.contains(1.0)
    }

    /// Whether enough rounds were paired for the interval to decide a verdict
    /// ([`MIN_PAIRS_FOR_VERDICT`]).
    pub fn has_verdict(&self) -> bool {
        self.pairs >= MIN_PAIRS_FOR_VERDICT
    }

    /// The interval widened for a denominator-side clock that reads time only to within `relative`
    /// of the measured span (a 10 ms tick over 1 s: 0.01): the ratio's numerator is then known to
    /// within ×(1 ± relative) in every round alike, an error no resampling of rounds can show, so
    /// the bounds move out by it. The median stays.
    pub fn widened(self, relative: f64) -> RatioEstimate {
        let r = if relative.is_finite() {
            relative.clamp(0.0, 1.0)
        } else {
            0.0
        };
        RatioEstimate {
            ci95: Interval {
                low: self.ci95.low * (1.0 - r),
                high: self.ci95.high * (1.0 + r),
            },
            ..self
        }
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny generator kept here so the bootstrap's draws are fixed
/// by the seed alone, not by a dependency's version.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n ≥ 1; the modulo bias is below 2⁻⁵⁰ for the handful of rounds drawn from).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The ratio `a / b` of paired rounds (`(a, b)` measured side by side in one round): the median of the
/// per-round ratios, and a 95 % percentile-bootstrap interval — rounds drawn with replacement
/// `resamples` times, the 2.5 % and 97.5 % quantiles of the drawn sets' medians (Efron & Tibshirani,
/// "An Introduction to the Bootstrap", ch. 13). Pairing keeps a drift that hits both sides of a round
/// out of the ratio; resampling rounds, not figures, keeps each pair together. Pairs with a figure that
/// is not finite and positive are left out; `None` when none is left.
pub fn paired_ratio(pairs: &[(f64, f64)], resamples: usize, seed: u64) -> Option<RatioEstimate> {
    let ratios: Vec<f64> = pairs
        .iter()
        .filter(|(a, b)| a.is_finite() && b.is_finite() && *a > 0.0 && *b > 0.0)
        .map(|(a, b)| a / b)
        .collect();
    let median = quantile(&ratios, 0.5)?;
    let mut rng = SplitMix64(seed);
    let mut drawn = vec![0.0; ratios.len()];
    let medians: Vec<f64> = (0..resamples.max(1))
        .filter_map(|_| {
            for d in drawn.iter_mut() {
                *d = ratios[rng.below(ratios.len())];
            }
            quantile(&drawn, 0.5)
        })
        .collect();
    Some(RatioEstimate {
        median,
        ci95: Interval {
            low: quantile(&medians, 0.025)?,
            high: quantile(&medians, 0.975)?,
        },
        pairs: ratios.len(),
    })
}

/// A ratio of two figures measured in paired rounds, on the log scale: `exp(mean d)` of the rounds'
/// log ratios `d_j` and its Student-t 95 % interval (`run --baseline`, docs/methodology.md §4,
/// "Ratios to a baseline row").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedLogRatio {
    /// exp(mean d): the geometric mean of the rounds' ratios.
    pub ratio: f64,
    /// exp(mean d ± t(0.975, r − 1) · s_d / √r); `None` below two rounds (no spread to judge by).
    pub ci95: Option<Interval>,
    /// Rounds that gave a finite log ratio.
    pub pairs: usize,
}

/// The ratio and 95 % interval of paired rounds from their log ratios `d` (one per round, each
/// `ln(a_j / b_j)` of two figures measured side by side). A slow-down shared by both sides of a round
/// cancels in its `d_j`, so only what differs between the two sides within a round is left to
/// spread the interval: the paired t interval of the log ratio, taken back by `exp`. Values that
/// are not finite are left out; `None` when none is left.
pub fn paired_log_ratio(d: &[f64]) -> Option<PairedLogRatio> {
    let d: Vec<f64> = d.iter().copied().filter(|x| x.is_finite()).collect();
    let m = mean(&d)?;
    let r = d.len();
    let ci95 = variance(&d).map(|s2| {
        let half = t95(r - 1) * (s2 / r as f64).sqrt();
        Interval {
            low: (m - half).exp(),
            high: (m + half).exp(),
        }
    });
    Some(PairedLogRatio {
        ratio: m.exp(),
        ci95,
        pairs: r,
    })
}

/// The standard error of ln(value) a 95 % interval implies: its width in logs over 2 × 1.96.
/// `None` unless both ends are positive and in order.
pub fn log_standard_error(interval: Interval) -> Option<f64> {
    (interval.low > 0.0 && interval.high >= interval.low && interval.high.is_finite())
        .then(|| (interval.high / interval.low).ln() / (2.0 * normal_quantile(0.975)))
}

/// The 95 % interval of `a / b` from each figure's own 95 % interval, as if the two were measured
/// independently: `a/b · exp(±1.96 · √(se_a² + se_b²))` with each `se` from
/// [`log_standard_error`]. What a ratio of two cells is worth without pairing, shown beside the
/// paired interval. `None` without two positive figures and intervals.
pub fn unpaired_ratio(a: f64, a_ci: Interval, b: f64, b_ci: Interval) -> Option<Interval> {
    if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
        return None;
    }
    let (se_a, se_b) = (log_standard_error(a_ci)?, log_standard_error(b_ci)?);
    let half = normal_quantile(0.975) * (se_a * se_a + se_b * se_b).sqrt();
    let ratio = a / b;
    Some(Interval {
        low: ratio * (-half).exp(),
        high: ratio * half.exp(),
    })
}
