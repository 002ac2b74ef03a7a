//! Metrics: pure arithmetic from raw counters to the docs/methodology.md §3 table, and the §4 validity checks.
//!
//! Nothing here reads a clock or starts a thread, so every formula is tested on synthetic counters and any
//! result can be recomputed from the raw counters stored in the JSON. `f` (reference cycles per second) is
//! passed in; `W` is the coordinator's window wall time; per thread `c_i` is CPU time, `b_i` bytes, `m_i`
//! messages between the coordinator's samples of that thread at the window's start and end. The tick
//! series adds the trend test and the batch means behind the confidence intervals (`stats`).
//!
//! The headline metrics are described once ([`Headline`], the list [`HEADLINE`]): key, labels, unit,
//! direction, format, interval and spread, and how to read each. The tables, the exporters, the
//! checks and `diff` walk that list, and the per-metric sets a result records ([`Ci95Set`],
//! [`SpreadSet`], [`RunUncertainty`]) are generated from it, so none of them names a metric.

use crate::engine::{RawRun, Series, ThreadCounters};
use crate::stats::{self, BatchEstimate, Trend};
use serde::{Deserialize, Serialize};

/// Messages every session should process in a window; fewer is `window-too-short` (seed 000's check).
pub const MIN_WINDOW_MESSAGES: u64 = 1000;

/// Aggregate metrics of one run (or the median of several).
///
/// This one type is written to the results JSON and read back from it (`report::read`); fields missing
/// in older files take their default. Adding a metric touches this file only — a field here, its
/// formula in [`compute`]; its median over repeats ([`Metrics::median`]), the JSON, the CSV columns
/// and every reader follow from serde. A headline metric also gets its descriptor ([`HEADLINE`]),
/// which puts it in the tables, exporters and checks, and with an interval its per-batch formula.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Metrics {
    /// f·Σc_i / Σb_i
    pub absolute_cycles_per_byte: Option<f64>,
    /// f·W / Σb_i
    pub apparent_cycles_per_byte: Option<f64>,
    /// f·Σc_i / Σm_i
    pub absolute_cycles_per_message: Option<f64>,
    /// f·W / Σm_i
    pub apparent_cycles_per_message: Option<f64>,
    /// Σb_i / W
    #[serde(default = "unknown", deserialize_with = "null_as_nan")]
    pub bytes_per_second: f64,
    /// Σm_i / W
    #[serde(default = "unknown", deserialize_with = "null_as_nan")]
    pub messages_per_second: f64,
    /// absolute / apparent ≈ cores effectively used.
    pub parallelism: Option<f64>,
    /// Jain's index of b_i: 1 = perfectly fair, 1/n = one thread got everything.
    pub fairness: Option<f64>,
    pub min_thread_apparent_cycles_per_byte: Option<f64>,
    pub max_thread_apparent_cycles_per_byte: Option<f64>,
    /// Σc_i / (W·|C|): share of the core set's time spent in session threads.
    #[serde(default = "unknown", deserialize_with = "null_as_nan")]
    pub cpu_utilisation: f64,
    /// Hardware core cycles per byte (perf counters), when every thread had them.
    pub core_cycles_per_byte: Option<f64>,
    /// absolute cycles/byte × (estimated core clock / f): labelled estimated, see `ClockInfo`.
    pub core_cycles_per_byte_estimated: Option<f64>,
    /// One key setup, in reference cycles.
    #[serde(default = "unknown", deserialize_with = "null_as_nan")]
    pub key_setup_cycles: f64,
    /// Messages and bytes in the window, all threads.
    pub messages: u64,
    pub bytes: u64,
    #[serde(default = "unknown", deserialize_with = "null_as_nan")]
    pub window_seconds: f64,
    /// Per-message latency, submission to tag (sampled one batch in 64, in the window), ns: what
    /// batching trades for throughput (`--dispatch`).
    pub latency_p50_ns: Option<f64>,
    pub latency_p99_ns: Option<f64>,
    /// What a look-aside device's driver cost the submitting cores per op in the window, reference
    /// cycles (the `dpdk` backend's own account; `None` for a library, which computes in the call):
    /// building ops, enqueue calls, dequeue calls (empty polls included). Their sum is the CPU the
    /// offload still costs; the rest of `absolute_cycles_per_message` is the harness and, on a
    /// software device, the device's own work.
    pub offload_build_cycles_per_op: Option<f64>,
    pub offload_enqueue_cycles_per_op: Option<f64>,
    pub offload_dequeue_cycles_per_op: Option<f64>,
    /// Dequeue polls that returned nothing, per op: how long the core waited on the device.
    pub offload_empty_polls_per_op: Option<f64>,
}

/// [`Metrics`]' offload figures from the sessions' accounts: every session must have one, or there
/// are none (a mix would be a per-op cost of some sessions only).
fn offload_per_op(raw: &RawRun, f: f64) -> [Option<f64>; 4] {
    let accounts: Option<Vec<crate::mac::OffloadCounters>> =
        raw.threads.iter().map(|t| t.offload).collect();
    let Some(total) = accounts.filter(|a| !a.is_empty()).map(|a| {
        a.iter()
            .fold(Default::default(), |acc: crate::mac::OffloadCounters, c| {
                acc.plus(c)
            })
    }) else {
        return [None; 4];
    };
    let ops = total.ops as f64;
    let cycles =
        |ticks: u64| ratio(ticks as f64 * f, total.tick_hz as f64).and_then(|c| ratio(c, ops));
    [
        cycles(total.build_cycles),
        cycles(total.enqueue_cycles),
        cycles(total.dequeue_cycles),
        ratio(total.empty_polls as f64, ops),
    ]
}

impl Metrics {
    /// Each metric's median over `runs`, field by field, through the type's serde shape: so no list
    /// of the metrics is written out here. A metric no run has (or only as NaN) takes its default —
    /// `None`, or 0 for the counters and rates every run computes; whole counts stay whole.
    pub fn median(runs: &[Metrics]) -> Metrics {
        use serde_json::{Map, Value};
        let fields = |m: &Metrics| match serde_json::to_value(m) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let runs: Vec<Map<String, Value>> = runs.iter().map(fields).collect();
        let mut out = fields(&Metrics::default());
        for (name, value) in out.iter_mut() {
            let numbers: Vec<&Value> = runs.iter().filter_map(|r| r.get(name)).collect();
            let values: Vec<f64> = numbers.iter().filter_map(|v| v.as_f64()).collect();
            let Some(mid) = median(&values) else {
                continue;
            };
            let whole = !numbers.is_empty() && numbers.iter().all(|v| v.is_u64());
            *value = if whole {
                Value::from(mid as u64)
            } else {
                Value::from(mid)
            };
        }
        serde_json::from_value(Value::Object(out)).unwrap_or_default()
    }

    /// The metrics of a result whose file records none: every measured value missing (NaN or `None`),
    /// as each field reads when absent, so it follows any metric added.
    pub fn missing() -> Metrics {
        serde_json::from_value(serde_json::Value::Object(serde_json::Map::new()))
            .unwrap_or_default()
    }
}

/// Per-thread metrics (the data of Rashwan et al.'s Figs. 8–11).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ThreadMetrics {
    pub session: usize,
    pub messages: u64,
    pub bytes: u64,
    #[serde(deserialize_with = "null_as_nan")]
    pub cpu_seconds: f64,
    /// The thread's sampled interval (the coordinator's end sample − start sample of this thread).
    #[serde(deserialize_with = "null_as_nan")]
    pub interval_seconds: f64,
    /// f·c_i / b_i
    pub absolute_cycles_per_byte: Option<f64>,
    /// f·W / (n·b_i)
    pub apparent_cycles_per_byte: Option<f64>,
    /// f·W / b_i
    pub wall_clock_cycles_per_byte: Option<f64>,
    pub absolute_cycles_per_message: Option<f64>,
    pub apparent_cycles_per_message: Option<f64>,
    pub cpu_at_start: Option<usize>,
    pub cpu_at_end: Option<usize>,
}

/// serde_json writes a non-finite `f64` as `null`: read that back as NaN, so every file written loads.
fn null_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A metric an older file does not hold reads as NaN (not 0): readers show it as missing.
fn unknown() -> f64 {
    f64::NAN
}

/// A read metric that may be shown: `None` when it is missing (NaN) or not finite.
pub fn known(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// The stable, machine-readable code of a validity warning, serialised in kebab case
/// (`window-too-short`); docs/methodology.md §4 says when each is raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WarningCode {
    WindowTooShort,
    NotSteady,
    OverUtilised,
    Impossible,
    Starvation,
    Noisy,
    ThreadInterval,
    VerifyFailed,
    OffCore,
    Interrupted,
    /// The library refused a job of the scenario (a length or parameter it does not take): nothing
    /// was timed.
    Refused,
    /// The pre-flight's tags disagreed with the reference implementation: nothing was timed.
    WrongTag,
    /// A code this build does not know, read from a file a newer build wrote: shown, never raised.
    #[serde(other)]
    Unknown,
}

impl WarningCode {
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::WindowTooShort => "window-too-short",
            WarningCode::NotSteady => "not-steady",
            WarningCode::OverUtilised => "over-utilised",
            WarningCode::Impossible => "impossible",
            WarningCode::Starvation => "starvation",
            WarningCode::Noisy => "noisy",
            WarningCode::ThreadInterval => "thread-interval",
            WarningCode::VerifyFailed => "verify-failed",
            WarningCode::OffCore => "off-core",
            WarningCode::Interrupted => "interrupted",
            WarningCode::Refused => "refused",
            WarningCode::WrongTag => "wrong-tag",
            WarningCode::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for WarningCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compare with the serialised name, as scripts and tests read it.
impl PartialEq<&str> for WarningCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A validity warning (docs/methodology.md §4) attached to the result it concerns.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Warning {
    pub code: WarningCode,
    #[serde(default)]
    pub message: String,
    /// The session concerned, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<usize>,
    /// A fatal warning fails the result: its numbers must not be used.
    #[serde(default)]
    pub fatal: bool,
}

impl Warning {
    pub fn new(code: WarningCode, message: String) -> Warning {
        Warning {
            code,
            message,
            session: None,
            fatal: false,
        }
    }
}

/// Inputs besides the raw counters.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// Reference cycles per second.
    pub f: f64,
    /// |C|: cores in the core set.
    pub cores: usize,
    /// Estimated core clock / f, if measured.
    pub core_ratio: Option<f64>,
    /// Resolution of the wall clock in ns.
    pub timer_resolution_ns: u64,
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0 && num.is_finite()).then(|| num / den)
}

/// Jain's fairness index (Σx)² / (n·Σx²); `None` for no threads or all zero.
pub fn jain_index(values: &[f64]) -> Option<f64> {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|v| v * v).sum();
    ratio(sum * sum, values.len() as f64 * squares)
}

fn window_of(t: &ThreadCounters) -> (u64, u64, u64, u64) {
    let (a, b) = (&t.window_start, &t.window_end);
    (
        b.cpu_ns.saturating_sub(a.cpu_ns),
        b.bytes.saturating_sub(a.bytes),
        b.messages.saturating_sub(a.messages),
        b.wall_ns.saturating_sub(a.wall_ns),
    )
}

/// One paired round's log ratio of absolute cost, `run` against `baseline` (`run --baseline`,
/// docs/methodology.md §4): per core, ln of the run's CPU time per byte over the baseline's, both
/// from the coordinator's window samples (`f·c/b`; `f` cancels), then the mean over the cores both
/// runs used. A pinned session runs on one core (its `allowed_cpus`), and sessions are pinned
/// round-robin in both runs alike, so each core's term compares windows on one core, where a host's
/// slow-down is shared; the cores' slow-downs are not shared, so each core is paired with itself
/// only. Floating sessions (`--float`) form one group of all cores. With empty messages the cost is
/// per message. `None` when no core has work in both runs.
pub fn paired_log_ratio(run: &RawRun, baseline: &RawRun) -> Option<f64> {
    let a = cost_per_core(run);
    let b = cost_per_core(baseline);
    let per_byte = a.iter().chain(&b).all(|(_, _, bytes, _)| *bytes > 0);
    let cost = |&(_, cpu, bytes, messages): &(Option<usize>, u64, u64, u64)| {
        let units = if per_byte { bytes } else { messages };
        ratio(cpu as f64, units as f64).filter(|c| *c > 0.0)
    };
    let logs: Vec<f64> = a
        .iter()
        .filter_map(|x| {
            let y = b.iter().find(|y| y.0 == x.0)?;
            Some((cost(x)? / cost(y)?).ln())
        })
        .collect();
    stats::mean(&logs)
}

/// Per core a run's sessions were pinned to (`None`: sessions allowed on several cores), the CPU
/// time, bytes and messages of its sessions in the window; cores in the order first met.
fn cost_per_core(raw: &RawRun) -> Vec<(Option<usize>, u64, u64, u64)> {
    let mut cores: Vec<(Option<usize>, u64, u64, u64)> = Vec::new();
    for t in &raw.threads {
        let core = match t.allowed_cpus.as_slice() {
            [one] => Some(*one),
            _ => None,
        };
        let (c, b, m, _) = window_of(t);
        match cores.iter_mut().find(|x| x.0 == core) {
            Some(x) => {
                x.1 += c;
                x.2 += b;
                x.3 += m;
            }
            None => cores.push((core, c, b, m)),
        }
    }
    cores
}

/// What one run's raw counters give: its aggregate metrics, per-thread metrics and warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMetrics {
    pub metrics: Metrics,
    pub threads: Vec<ThreadMetrics>,
    pub warnings: Vec<Warning>,
}

/// Compute all metrics and warnings of one run.
pub fn compute(raw: &RawRun, ctx: Context) -> RunMetrics {
    let f = ctx.f;
    let n = raw.threads.len();
    let w_s = raw.window_wall_ns as f64 / 1e9;
    let mut warnings = Vec::new();
    let mut threads = Vec::with_capacity(n);
    let (mut sum_c, mut sum_b, mut sum_m) = (0f64, 0u64, 0u64);
    let mut hw_cycles: Option<u64> = Some(0);
    for t in &raw.threads {
        let (c_ns, b, m, interval_ns) = window_of(t);
        let c_s = c_ns as f64 / 1e9;
        sum_c += c_s;
        sum_b += b;
        sum_m += m;
        hw_cycles = match (hw_cycles, t.window_start.hw_cycles, t.window_end.hw_cycles) {
            (Some(acc), Some(a), Some(z)) => Some(acc + z.saturating_sub(a)),
            _ => None,
        };
        let (bf, mf) = (b as f64, m as f64);
        threads.push(ThreadMetrics {
            session: t.session,
            messages: m,
            bytes: b,
            cpu_seconds: c_s,
            interval_seconds: interval_ns as f64 / 1e9,
            absolute_cycles_per_byte: ratio(f * c_s, bf),
            apparent_cycles_per_byte: ratio(f * w_s, n as f64 * bf),
            wall_clock_cycles_per_byte: ratio(f * w_s, bf),
            absolute_cycles_per_message: ratio(f * c_s, mf),
            apparent_cycles_per_message: ratio(f * w_s, n as f64 * mf),
            cpu_at_start: t.window_start.cpu,
            cpu_at_end: t.window_end.cpu,
        });
        thread_warnings(t, m, interval_ns, raw.window_wall_ns, &mut warnings);
    }
    let sum_bf = sum_b as f64;
    let absolute = ratio(f * sum_c, sum_bf);
    let apparent = ratio(f * w_s, sum_bf);
    let apparent_per_thread: Vec<f64> = threads
        .iter()
        .filter_map(|t| t.apparent_cycles_per_byte)
        .collect();
    let utilisation = ratio(sum_c, w_s * ctx.cores as f64).unwrap_or(0.0);
    let latencies: Vec<f64> = raw
        .threads
        .iter()
        .flat_map(|t| t.latency_ns.iter().map(|&l| l as f64))
        .collect();
    let offload = offload_per_op(raw, f);
    let metrics = Metrics {
        absolute_cycles_per_byte: absolute,
        apparent_cycles_per_byte: apparent,
        absolute_cycles_per_message: ratio(f * sum_c, sum_m as f64),
        apparent_cycles_per_message: ratio(f * w_s, sum_m as f64),
        bytes_per_second: ratio(sum_bf, w_s).unwrap_or(0.0),
        messages_per_second: ratio(sum_m as f64, w_s).unwrap_or(0.0),
        parallelism: match (absolute, apparent) {
            (Some(a), Some(p)) => ratio(a, p),
            _ => None,
        },
        fairness: jain_index(&threads.iter().map(|t| t.bytes as f64).collect::<Vec<_>>()),
        min_thread_apparent_cycles_per_byte: apparent_per_thread.iter().copied().reduce(f64::min),
        max_thread_apparent_cycles_per_byte: apparent_per_thread.iter().copied().reduce(f64::max),
        cpu_utilisation: utilisation,
        core_cycles_per_byte: hw_cycles
            .filter(|_| n > 0)
            .and_then(|c| ratio(c as f64, sum_bf)),
        core_cycles_per_byte_estimated: match (absolute, ctx.core_ratio) {
            (Some(a), Some(r)) => Some(a * r),
            _ => None,
        },
        key_setup_cycles: raw.key_setup_ns * f / 1e9,
        messages: sum_m,
        bytes: sum_b,
        window_seconds: w_s,
        latency_p50_ns: stats::quantile(&latencies, 0.5),
        latency_p99_ns: stats::quantile(&latencies, 0.99),
        offload_build_cycles_per_op: offload[0],
        offload_enqueue_cycles_per_op: offload[1],
        offload_dequeue_cycles_per_op: offload[2],
        offload_empty_polls_per_op: offload[3],
    };

    aggregate_warnings(raw, ctx, &metrics, &mut warnings);
    RunMetrics {
        metrics,
        threads,
        warnings,
    }
}

/// The checks of one thread: starvation, too few messages, its sampled interval, its cores, its tags.
fn thread_warnings(
    t: &ThreadCounters,
    m: u64,
    interval_ns: u64,
    window_wall_ns: u64,
    warnings: &mut Vec<Warning>,
) {
    if m == 0 {
        warnings.push(Warning {
            session: Some(t.session),
            ..Warning::new(
                WarningCode::Starvation,
                format!(
                    "session {} processed nothing in the window: lengthen --duration",
                    t.session
                ),
            )
        });
    } else if m < MIN_WINDOW_MESSAGES {
        warnings.push(Warning {
            session: Some(t.session),
            ..Warning::new(
                WarningCode::WindowTooShort,
                format!("session {} processed only {m} messages in the window (< {MIN_WINDOW_MESSAGES}): lengthen --duration", t.session),
            )
        });
    }
    if window_wall_ns > 0 {
        let off = (interval_ns as f64 - window_wall_ns as f64).abs() / window_wall_ns as f64;
        if off > 0.01 {
            warnings.push(Warning {
                session: Some(t.session),
                ..Warning::new(
                WarningCode::ThreadInterval,
                    format!(
                        "session {}'s sampled interval differs from the window by {:.1} % (descheduled across a phase change)",
                        t.session,
                        off * 100.0
                    ),
                )
            });
        }
    }
    for sample in [&t.window_start, &t.window_end] {
        if let Some(cpu) = sample.cpu {
            if !t.allowed_cpus.contains(&cpu) {
                warnings.push(Warning {
                    session: Some(t.session),
                    fatal: true,
                    ..Warning::new(
                        WarningCode::OffCore,
                        format!(
                            "session {} ran on CPU {cpu}, outside its allowed set {:?}",
                            t.session, t.allowed_cpus
                        ),
                    )
                });
            }
        }
    }
    if t.verify_failures > 0 || t.verify_after_failures > 0 {
        warnings.push(Warning {
            session: Some(t.session),
            fatal: true,
            ..Warning::new(
                WarningCode::VerifyFailed,
                format!(
                    "session {}: {} inline and {} after-window tag mismatches",
                    t.session, t.verify_failures, t.verify_after_failures
                ),
            )
        });
    }
}

/// The checks of the whole run: window length, core-set utilisation, steadiness, fatal starvation,
/// interruption.
fn aggregate_warnings(raw: &RawRun, ctx: Context, metrics: &Metrics, warnings: &mut Vec<Warning>) {
    let n = raw.threads.len();
    let (sum_m, sum_b, w_s) = (metrics.messages, metrics.bytes, metrics.window_seconds);
    let utilisation = metrics.cpu_utilisation;
    if (raw.window_wall_ns as f64) < 1000.0 * ctx.timer_resolution_ns as f64 {
        warnings.push(Warning::new(
            WarningCode::WindowTooShort,
            format!(
                "window of {} ns is under 1000 × the timer resolution",
                raw.window_wall_ns
            ),
        ));
    }
    let runnable = n >= ctx.cores;
    if runnable && utilisation < 0.90 && sum_b > 0 {
        warnings.push(Warning::new(
                    WarningCode::OverUtilised,
            format!(
                "sessions got {:.0} % of the core set's time (< 90 %): something else ran there, or fewer sessions would measure better",
                utilisation * 100.0
            ),
        ));
    }
    if utilisation > 1.02 {
        warnings.push(Warning {
            fatal: true,
            ..Warning::new(
                    WarningCode::Impossible,
                format!(
                    "sessions used {:.1} % of the core set's time (> 102 %): measurement error, result failed",
                    utilisation * 100.0
                ),
            )
        });
    }
    if let Some(w) = steadiness_warning(raw) {
        warnings.push(w);
    }
    // A window in which nothing, or too few of the sessions, ran measures nothing: fail, never warn.
    let ran = raw
        .threads
        .iter()
        .filter(|t| t.window_end.messages > t.window_start.messages)
        .count();
    if n > 0 && !raw.interrupted && (sum_m == 0 || (ran as f64) < MIN_THREADS_RAN * n as f64) {
        warnings.push(Warning {
            fatal: true,
            ..Warning::new(
                    WarningCode::Starvation,
                format!(
                    "only {ran} of {n} sessions processed anything in the {:.3} s window (at least {:.0} % must): the result measures nothing; lengthen --duration or use fewer sessions",
                    w_s,
                    MIN_THREADS_RAN * 100.0
                ),
            )
        });
    }
    if raw.interrupted {
        warnings.push(Warning {
            fatal: true,
            ..Warning::new(
                WarningCode::Interrupted,
                "run interrupted before the window closed".to_string(),
            )
        });
    }
}

/// Relative difference of aggregate throughput between the window's halves: |r1 − r2| / max(r1, r2).
/// The check of results without a tick series (files written before the coordinator kept one).
pub fn steadiness(raw: &RawRun) -> Option<f64> {
    let first_ns = raw.first_half_wall_ns as f64;
    let second_ns = raw.window_wall_ns.saturating_sub(raw.first_half_wall_ns) as f64;
    let (mut b1, mut b2) = (0u64, 0u64);
    for t in &raw.threads {
        b1 += t.window_mid.bytes.saturating_sub(t.window_start.bytes);
        b2 += t.window_end.bytes.saturating_sub(t.window_mid.bytes);
    }
    let r1 = ratio(b1 as f64, first_ns)?;
    let r2 = ratio(b2 as f64, second_ns)?;
    ratio((r1 - r2).abs(), r1.max(r2))
}

/// Relative throughput change across the window that counts as "not steady" (with significance).
pub const STEADY_THRESHOLD: f64 = 0.05;
/// Batches the window's ticks are grouped into, for the trend test and batch means.
pub const MAX_BATCHES: usize = 10;
/// Fewer sessions than this share having run in the window fails the result.
pub const MIN_THREADS_RAN: f64 = 0.90;

/// One batch of consecutive ticks inside the window: differences of the cumulative series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Batch {
    /// Batch midpoint, seconds after t0.
    pub mid_s: f64,
    pub wall_s: f64,
    pub cpu_s: f64,
    pub messages: u64,
    pub bytes: u64,
}

/// Group the window's tick intervals into at most [`MAX_BATCHES`] consecutive batches of near-equal
/// tick counts; empty below two intervals.
pub fn batches(series: &Series) -> Vec<Batch> {
    let (first, last) = (series.window_first, series.window_last);
    let len = series.t_ns.len();
    if last <= first
        || last >= len
        || series.messages.len() != len
        || series.bytes.len() != len
        || series.cpu_ns.len() != len
    {
        return Vec::new();
    }
    let intervals = last - first;
    if intervals < 2 {
        return Vec::new();
    }
    let k = intervals.min(MAX_BATCHES);
    (0..k)
        .map(|j| {
            let a = first + j * intervals / k;
            let b = first + (j + 1) * intervals / k;
            let s = |v: &[u64]| v[b].saturating_sub(v[a]);
            Batch {
                mid_s: (series.t_ns[a] + series.t_ns[b]) as f64 / 2e9,
                wall_s: s(&series.t_ns) as f64 / 1e9,
                cpu_s: s(&series.cpu_ns) as f64 / 1e9,
                messages: s(&series.messages),
                bytes: s(&series.bytes),
            }
        })
        .collect()
}

/// The trend test over the window's batches (throughput in bytes/s, or messages/s for 0-byte messages).
pub fn trend(series: &Series) -> Option<Trend> {
    let b = batches(series);
    let by_bytes = b.iter().any(|x| x.bytes > 0);
    let rate: Vec<f64> = b
        .iter()
        .map(|x| {
            let amount = if by_bytes { x.bytes } else { x.messages } as f64;
            amount / x.wall_s
        })
        .collect();
    let times: Vec<f64> = b.iter().map(|x| x.mid_s).collect();
    stats::trend(&times, &rate, STEADY_THRESHOLD)
}

/// The not-steady check: the tick series' trend where there is one, else the two halves.
fn steadiness_warning(raw: &RawRun) -> Option<Warning> {
    if !batches(&raw.series).is_empty() {
        let t = trend(&raw.series)?;
        if !t.significant {
            return None;
        }
        let what = if t.relative_change > 0.0 {
            "rising: the warm-up has not ended; start the window later (--window) or run longer"
        } else {
            "falling: something took the cores during the window (frequency, other load)"
        };
        return Some(Warning::new(
            WarningCode::NotSteady,
            format!(
                "throughput changed {:+.1} % across the window (trend t = {:.1}), {what}",
                t.relative_change * 100.0,
                t.t
            ),
        ));
    }
    let change = steadiness(raw)?;
    (change > STEADY_THRESHOLD).then(|| {
        Warning::new(
                    WarningCode::NotSteady,
            format!(
                "throughput of the window's two halves differs by {:.1} % (> 5 %): later --window start or longer --duration",
                change * 100.0
            ),
        )
    })
}

/// Batch-means standard errors of one run's headline metrics: each metric with an interval, from its
/// descriptor's per-batch formula ([`Headline::batch`]).
pub fn uncertainty(raw: &RawRun, f: f64) -> RunUncertainty {
    let b = batches(&raw.series);
    let mut out = RunUncertainty::default();
    for h in HEADLINE {
        let (Some(per_batch), Some(slot)) = (h.batch, out.slot(h)) else {
            continue;
        };
        let v: Vec<f64> = b.iter().filter_map(|x| per_batch(x, f)).collect();
        // A batch without bytes has no cycles/byte: no interval rather than a biased one.
        *slot = if v.len() == b.len() {
            BatchEstimate::from_batches(&v)
        } else {
            None
        };
    }
    out
}

/// Warnings summarised by code with counts, for one terminal line: "starvation×98, not-steady".
pub fn summarise(warnings: &[Warning]) -> String {
    let mut codes: Vec<(WarningCode, usize)> = Vec::new();
    for w in warnings {
        match codes.iter_mut().find(|c| c.0 == w.code) {
            Some(c) => c.1 += 1,
            None => codes.push((w.code, 1)),
        }
    }
    codes
        .iter()
        .map(|(c, k)| {
            if *k == 1 {
                c.to_string()
            } else {
                format!("{c}×{k}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

pub use crate::stats::quantile;

/// Median of values (mean of the middle two for an even count); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// Spread of a metric over repeats.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// The [min, max] of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Spread> {
        Some(Spread {
            min: values.iter().copied().reduce(f64::min)?,
            max: values.iter().copied().reduce(f64::max)?,
        })
    }

    /// Whether two [min, max] intervals share any point.
    pub fn overlaps(&self, other: &Spread) -> bool {
        self.min <= other.max && other.min <= self.max
    }
}

/// A confidence interval as a [min, max] range, for the same overlap test as a spread.
impl From<stats::Interval> for Spread {
    fn from(i: stats::Interval) -> Spread {
        Spread {
            min: i.low,
            max: i.high,
        }
    }
}

/// The user part of the sessions' CPU time inside the window: Σ Δuser_i / Σ (Δuser_i + Δsystem_i) over
/// the threads' own `getrusage` readings at the window's start and end. Multiplying an absolute figure
/// by it puts it on `openssl speed`'s basis (user time only). `None` when a thread did not record both
/// marks or no CPU time passed.
pub fn user_share(raw: &RawRun) -> Option<f64> {
    let (mut user, mut total) = (0u64, 0u64);
    for t in &raw.threads {
        let r = t.window_rusage?;
        let du = r.user_ns[2].checked_sub(r.user_ns[0])?;
        let ds = r.system_ns[2].checked_sub(r.system_ns[0])?;
        user += du;
        total += du + ds;
    }
    (total > 0).then(|| user as f64 / total as f64)
}

// The headline metrics: one descriptor each (hyperfine's `Metric`, STYLE §14). Every table, exporter,
// check and the diff walks [`HEADLINE`] instead of naming metrics, and the sets a result records per
// metric — its 95 % interval ([`Ci95Set`]), its spread over repeats ([`SpreadSet`]) and one run's
// batch-means uncertainty ([`RunUncertainty`]) — are generated from the same entries, keyed by them.
// Adding a headline metric is its field in [`Metrics`], its formula in [`compute`] and its entry in
// `headline_metrics!` below (with `ci95`, its per-batch formula too): this file only.

/// Which way a headline metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

/// What a cost is paid per, or a rate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    Byte,
    Message,
}

/// What a headline metric is: the checks treat costs and rates by what they count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Reference cycles per byte or per message.
    Cost(Per),
    /// Bytes or messages per second.
    Rate(Per),
    /// A dimensionless figure (parallelism, fairness, utilisation).
    Ratio,
}

/// How a terminal table writes a metric's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Three significant figures at most, `-` when missing.
    Number,
    /// Human bytes/second: `812 MB/s`.
    BytesPerSecond,
    /// Human count per second: `1.23M`, `-` when not measured.
    PerSecond,
}

/// One headline metric: its JSON key and how each output names, formats and reads it.
#[derive(Debug, Clone, Copy)]
pub struct Headline {
    /// The key in the results JSON (`metrics`, `ci95`, `spread`) and the CSV columns.
    pub key: &'static str,
    /// What its value counts (`cycles/B`, as LAVA's lines write it).
    pub unit: &'static str,
    /// Whether a smaller or a larger value is the better one.
    pub better: Better,
    /// A cost, a rate or a ratio, and per what: the checks' rules follow it.
    pub kind: Kind,
    /// How the terminal tables write it.
    pub format: Format,
    /// The terminal scenario table's column: header and minimum width; `None`: not shown there.
    pub column: Option<(&'static str, usize)>,
    /// The title of its functions × sizes matrix at the end of a run; `None`: no matrix.
    pub matrix: Option<&'static str>,
    /// The name in the HTML report's results table and `diff`'s columns; `None`: not shown there.
    pub label: Option<&'static str>,
    /// The unit in Go's benchmark format (`abs-cycles/B`); `Some` also puts the metric in BMF, under
    /// its key in kebab case.
    pub history: Option<&'static str>,
    /// Whether `diff` judges a change in it (its columns, its verdict and the regression gate):
    /// the cycles/byte figures, whose intervals every result has.
    pub judged: bool,
    /// Whether a result records its 95 % interval (`ci95`).
    pub interval: bool,
    /// Whether a result records its spread over repeats (`spread`).
    pub spread: bool,
    /// Its value in a result's metrics: `None` when missing or not finite where a missing value
    /// reads as NaN.
    pub value: fn(&Metrics) -> Option<f64>,
    /// Its value in one batch of a run's window at reference rate `f`, for the within-run
    /// uncertainty; present exactly for a metric with an interval.
    pub batch: Option<fn(&Batch, f64) -> Option<f64>>,
}

impl Headline {
    /// The BMF measure name: the key in kebab case.
    pub fn bmf_name(&self) -> String {
        self.key.replace('_', "-")
    }
}

/// One per-metric set of [`headline_metrics!`]: a struct with an `Option<item>` field per listed
/// metric (named by its key), `get` by descriptor, and `slot`, the field a descriptor fills.
macro_rules! headline_set {
    ($(#[$attr:meta])* $name:ident of $item:ty [$($field:ident)*] #[doc = $get_doc:literal]) => {
        $(#[$attr])*
        pub struct $name {
            $(pub $field: Option<$item>,)*
        }

        impl $name {
            #[doc = $get_doc]
            pub fn get(&self, h: &Headline) -> Option<$item> {
                $(if h.key == stringify!($field) { return self.$field; })*
                None
            }

            fn slot(&mut self, h: &Headline) -> Option<&mut Option<$item>> {
                $(if h.key == stringify!($field) { return Some(&mut self.$field); })*
                None
            }
        }
    };
}

/// Declares the headline descriptors and the per-metric sets keyed by them. An entry is
/// `CONST key [flags] { fields }`, flags `ci95` (a 95 % interval, so also a per-batch formula)
/// and `spread` (min/max over repeats); the sets' fields, and so their JSON, follow the entries' order.
macro_rules! headline_metrics {
    (@munch [$($ci:ident)*] [$($sp:ident)*] [$($all:ident)*]) => {
        /// Every headline metric, in the order every output lists them.
        pub const HEADLINE: &[Headline] = &[$($all),*];

        headline_set! {
            /// 95 % confidence intervals of the headline metrics that have one; `None` where a run was
            /// too short to batch (and in files written before they existed).
            #[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
            #[serde(default)]
            Ci95Set of stats::Interval [$($ci)*]
            /// The interval of `h`; `None` also for a metric without one.
        }

        headline_set! {
            /// Min/max over repeats of the headline metrics that record it.
            #[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
            #[serde(default)]
            SpreadSet of Spread [$($sp)*]
            /// The spread of `h`; `None` also for a metric without one.
        }

        headline_set! {
            /// Within-run uncertainty of each headline metric with an interval, of one run, from batch
            /// means ([`uncertainty`]).
            #[derive(Debug, Clone, Copy, Default, PartialEq)]
            RunUncertainty of BatchEstimate [$($ci)*]
            /// The estimate of `h`; `None` also for a metric without an interval.
        }
    };
    (@munch [$($ci:ident)*] [$($sp:ident)*] [$($all:ident)*]
        $(#[doc = $doc:literal])* $c:ident $key:ident [ci95 spread] { $($body:tt)* } $($rest:tt)*) => {
        headline_metrics!(@one $c $key true true [$($doc)*] { $($body)* });
        headline_metrics!(@munch [$($ci)* $key] [$($sp)* $key] [$($all)* $c] $($rest)*);
    };
    (@munch [$($ci:ident)*] [$($sp:ident)*] [$($all:ident)*]
        $(#[doc = $doc:literal])* $c:ident $key:ident [ci95] { $($body:tt)* } $($rest:tt)*) => {
        headline_metrics!(@one $c $key true false [$($doc)*] { $($body)* });
        headline_metrics!(@munch [$($ci)* $key] [$($sp)*] [$($all)* $c] $($rest)*);
    };
    (@munch [$($ci:ident)*] [$($sp:ident)*] [$($all:ident)*]
        $(#[doc = $doc:literal])* $c:ident $key:ident [spread] { $($body:tt)* } $($rest:tt)*) => {
        headline_metrics!(@one $c $key false true [$($doc)*] { $($body)* });
        headline_metrics!(@munch [$($ci)*] [$($sp)* $key] [$($all)* $c] $($rest)*);
    };
    (@munch [$($ci:ident)*] [$($sp:ident)*] [$($all:ident)*]
        $(#[doc = $doc:literal])* $c:ident $key:ident [] { $($body:tt)* } $($rest:tt)*) => {
        headline_metrics!(@one $c $key false false [$($doc)*] { $($body)* });
        headline_metrics!(@munch [$($ci)*] [$($sp)*] [$($all)* $c] $($rest)*);
    };
    (@one $c:ident $key:ident $interval:literal $spread:literal [$($doc:literal)*] { $($body:tt)* }) => {
        $(#[doc = $doc])*
        pub const $c: Headline = Headline {
            key: stringify!($key),
            interval: $interval,
            spread: $spread,
            $($body)*
        };
    };
    ($($entries:tt)*) => {
        headline_metrics!(@munch [] [] [] $($entries)*);
    };
}

headline_metrics! {
    /// f·Σc_i / Σb_i: the CPU time a byte costs.
    ABSOLUTE_CYCLES_PER_BYTE absolute_cycles_per_byte [ci95 spread] {
        unit: "cycles/B",
        better: Better::Lower,
        kind: Kind::Cost(Per::Byte),
        format: Format::Number,
        column: Some(("abs c/B", 8)),
        matrix: Some("absolute cycles/byte (CPU time; median of repeats)"),
        label: Some("absolute c/B"),
        history: Some("abs-cycles/B"),
        judged: true,
        value: |m| m.absolute_cycles_per_byte,
        batch: Some(|x, f| ratio(f * x.cpu_s, x.bytes as f64)),
    }
    /// f·W / Σb_i: the wall-clock time a byte costs, all sessions together.
    APPARENT_CYCLES_PER_BYTE apparent_cycles_per_byte [ci95 spread] {
        unit: "cycles/B",
        better: Better::Lower,
        kind: Kind::Cost(Per::Byte),
        format: Format::Number,
        column: Some(("app c/B", 8)),
        matrix: Some("apparent cycles/byte (wall clock, all sessions together)"),
        label: Some("apparent c/B"),
        history: Some("app-cycles/B"),
        judged: true,
        value: |m| m.apparent_cycles_per_byte,
        batch: Some(|x, f| ratio(f * x.wall_s, x.bytes as f64)),
    }
    /// f·Σc_i / Σm_i: the CPU time a message costs.
    ABSOLUTE_CYCLES_PER_MESSAGE absolute_cycles_per_message [ci95] {
        unit: "cycles/message",
        better: Better::Lower,
        kind: Kind::Cost(Per::Message),
        format: Format::Number,
        column: Some(("abs c/msg", 11)),
        matrix: None,
        label: Some("abs. c/message"),
        history: Some("abs-cycles/msg"),
        judged: false,
        value: |m| m.absolute_cycles_per_message,
        batch: Some(|x, f| ratio(f * x.cpu_s, x.messages as f64)),
    }
    /// f·W / Σm_i: the wall-clock time a message costs, all sessions together.
    APPARENT_CYCLES_PER_MESSAGE apparent_cycles_per_message [ci95] {
        unit: "cycles/message",
        better: Better::Lower,
        kind: Kind::Cost(Per::Message),
        format: Format::Number,
        column: None,
        matrix: None,
        label: None,
        history: None,
        judged: false,
        value: |m| m.apparent_cycles_per_message,
        batch: Some(|x, f| ratio(f * x.wall_s, x.messages as f64)),
    }
    /// Σb_i / W: throughput.
    BYTES_PER_SECOND bytes_per_second [ci95 spread] {
        unit: "B/s",
        better: Better::Higher,
        kind: Kind::Rate(Per::Byte),
        format: Format::BytesPerSecond,
        column: Some(("throughput", 13)),
        matrix: None,
        label: Some("throughput (B/s)"),
        history: Some("B/s"),
        judged: false,
        value: |m| known(m.bytes_per_second),
        batch: Some(|x, _| ratio(x.bytes as f64, x.wall_s)),
    }
    /// Σm_i / W.
    MESSAGES_PER_SECOND messages_per_second [] {
        unit: "messages/s",
        better: Better::Higher,
        kind: Kind::Rate(Per::Message),
        format: Format::PerSecond,
        column: Some(("msg/s", 8)),
        matrix: None,
        label: None,
        history: None,
        judged: false,
        value: |m| known(m.messages_per_second),
        batch: None,
    }
    /// absolute / apparent ≈ cores effectively used.
    PARALLELISM parallelism [] {
        unit: "cores",
        better: Better::Higher,
        kind: Kind::Ratio,
        format: Format::Number,
        column: Some(("par", 5)),
        matrix: None,
        label: Some("parallelism"),
        history: None,
        judged: false,
        value: |m| m.parallelism,
        batch: None,
    }
    /// Jain's index of the sessions' bytes.
    FAIRNESS fairness [] {
        unit: "Jain's index",
        better: Better::Higher,
        kind: Kind::Ratio,
        format: Format::Number,
        column: Some(("fair", 5)),
        matrix: None,
        label: Some("fairness"),
        history: None,
        judged: false,
        value: |m| m.fairness,
        batch: None,
    }
    /// Share of the core set's time spent in session threads.
    CPU_UTILISATION cpu_utilisation [] {
        unit: "share of the core set",
        better: Better::Higher,
        kind: Kind::Ratio,
        format: Format::Number,
        column: None,
        matrix: None,
        label: Some("CPU use"),
        history: None,
        judged: false,
        value: |m| known(m.cpu_utilisation),
        batch: None,
    }
}

impl Ci95Set {
    /// From each repeat's metrics and within-run uncertainty.
    pub fn from_runs(all: &[Metrics], within: &[RunUncertainty]) -> Ci95Set {
        let mut out = Ci95Set::default();
        for h in HEADLINE {
            let Some(slot) = out.slot(h) else { continue };
            let runs: Vec<(f64, Option<BatchEstimate>)> = all
                .iter()
                .zip(within)
                .filter_map(|(m, u)| Some(((h.value)(m)?, u.get(h))))
                .collect();
            *slot = stats::confidence_interval(&runs);
        }
        out
    }

    /// Each interval widened to at least what the host's pooled repeat-to-repeat spread implies for
    /// `repeats` runs about the median ([`stats::HostSpread::floor`]).
    pub fn with_host_floor(
        mut self,
        median: &Metrics,
        host: &stats::HostSpread,
        repeats: usize,
    ) -> Ci95Set {
        for h in HEADLINE {
            let centre = (h.value)(median);
            if let (Some(slot), Some(c)) = (self.slot(h), centre) {
                *slot = slot.map(|ci| host.floor(ci, c, repeats));
            }
        }
        self
    }

    /// The widest relative half-width of the cycles figures (per byte, or per message when the
    /// messages are empty), against the medians: what `--target-ci` is compared with. `None` when no
    /// interval could be formed.
    pub fn precision(&self, median: &Metrics) -> Option<f64> {
        let per = if median.bytes > 0 {
            Per::Byte
        } else {
            Per::Message
        };
        let mut widest: Option<f64> = None;
        for h in HEADLINE
            .iter()
            .filter(|h| h.interval && h.kind == Kind::Cost(per))
        {
            let w = self.get(h)?.relative_half_width((h.value)(median)?)?;
            widest = Some(widest.map_or(w, |x: f64| x.max(w)));
        }
        widest
    }

    /// The interval of `h` as a [min, max] range, for the same overlap test as a spread.
    pub fn range(&self, h: &Headline) -> Option<Spread> {
        self.get(h).map(Spread::from)
    }

    /// The absolute cycles/byte interval as a [min, max] range.
    pub fn absolute(&self) -> Option<Spread> {
        self.range(&ABSOLUTE_CYCLES_PER_BYTE)
    }

    /// The apparent cycles/byte interval as a [min, max] range.
    pub fn apparent(&self) -> Option<Spread> {
        self.range(&APPARENT_CYCLES_PER_BYTE)
    }
}

impl SpreadSet {
    /// The [min, max] over `all` repeats of each metric that records its spread.
    pub fn from_runs(all: &[Metrics]) -> SpreadSet {
        let mut out = SpreadSet::default();
        for h in HEADLINE {
            let Some(slot) = out.slot(h) else { continue };
            let values: Vec<f64> = all.iter().filter_map(h.value).collect();
            *slot = Spread::of(&values);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: serde_json::Value) -> Vec<String> {
        let mut keys: Vec<String> = v
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        keys.sort();
        keys
    }

    /// Each descriptor names a field of [`Metrics`] and has a per-batch formula exactly when it has
    /// an interval, and the generated sets hold exactly the descriptors that ask for them.
    #[test]
    fn the_descriptors_and_the_sets_they_key_agree() {
        let fields = keys(serde_json::to_value(Metrics::default()).unwrap());
        for h in HEADLINE {
            assert!(fields.iter().any(|k| k == h.key), "{} is no metric", h.key);
            assert_eq!(h.batch.is_some(), h.interval, "{}", h.key);
        }
        let wanted = |f: fn(&Headline) -> bool| {
            let mut keys: Vec<String> = HEADLINE
                .iter()
                .filter(|h| f(h))
                .map(|h| h.key.to_string())
                .collect();
            keys.sort();
            keys
        };
        let ci95 = keys(serde_json::to_value(Ci95Set::default()).unwrap());
        assert_eq!(ci95, wanted(|h| h.interval));
        let spread = keys(serde_json::to_value(SpreadSet::default()).unwrap());
        assert_eq!(spread, wanted(|h| h.spread));
        for h in HEADLINE {
            assert_eq!(
                Ci95Set::default().slot(h).is_some(),
                h.interval,
                "{}",
                h.key
            );
            assert_eq!(RunUncertainty::default().slot(h).is_some(), h.interval);
        }
    }
}
