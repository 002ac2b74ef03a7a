//! A sweep: scenarios run one after another, each repeated `r` times, reduced to medians, checked and —
//! with `--auto` — adjusted and re-run (Rashwan et al.'s Fig. 3 workflow). Produces the results document that
//! every exporter writes.

use crate::engine::{
    self, clock::ClockInfo, DataMode, KeyMode, Pinning, RawRun, Scenario, Series, SizeSource,
};
use crate::host::Host;
use crate::isolate;
use crate::mac::{FunctionId, VerifyMode};
use crate::metrics::{
    self, Context, Metrics, RunUncertainty, Spread, ThreadMetrics, Warning, WarningCode,
};
use crate::stats::{self, BatchEstimate, Interval};
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Version of the results JSON layout; bumped on incompatible change. Readers reject newer ones.
pub const SCHEMA_VERSION: u32 = 1;

/// A message size as reported: bytes, or the name of a size model (imix, a CSV, a capture, …).
///
/// In a result's JSON it is two fields, flattened into the entry: `"size"`, the fixed size in bytes or
/// `null` for a model, and `"size_model"`, the model's name or `null` — so `size` is always a number a
/// reader can plot or sort, as in the CSV's `size`/`size_model` columns, and the model's mean is beside
/// them in `mean_message_bytes`. Files written before `size_model` existed put the model's name in
/// `size` itself; they still read, and are written back in the new form.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "SizeFields")]
pub enum SizeLabel {
    Bytes(u32),
    Model(String),
}

/// The two JSON fields of a [`SizeLabel`] as a file may hold them.
#[derive(Deserialize)]
struct SizeFields {
    #[serde(default)]
    size: Option<SizeField>,
    #[serde(default)]
    size_model: Option<String>,
}

/// `size` as written now (bytes) or by older builds (bytes, or a model's name).
enum SizeField {
    Bytes(u32),
    Model(String),
}

impl<'de> Deserialize<'de> for SizeField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SizeField, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = SizeField;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a message size in bytes (0 to 4294967295), or a size model's name")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SizeField, E> {
                u32::try_from(v)
                    .map(SizeField::Bytes)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SizeField, E> {
                u64::try_from(v)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SizeField, E> {
                Ok(SizeField::Model(v.to_string()))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl TryFrom<SizeFields> for SizeLabel {
    type Error = String;

    fn try_from(f: SizeFields) -> Result<SizeLabel, String> {
        match (f.size, f.size_model) {
            (Some(SizeField::Bytes(n)), None) => Ok(SizeLabel::Bytes(n)),
            (None, Some(m)) => Ok(SizeLabel::Model(m)),
            // The older form: the model's name in `size`.
            (Some(SizeField::Model(m)), None) => Ok(SizeLabel::Model(m)),
            (Some(SizeField::Model(a)), Some(b)) if a == b => Ok(SizeLabel::Model(a)),
            (Some(SizeField::Bytes(n)), Some(m)) => Err(format!(
                "\"size\": {n} and \"size_model\": {m:?} contradict each other (a size model's \"size\" is null)"
            )),
            (Some(SizeField::Model(a)), Some(b)) => Err(format!(
                "\"size\": {a:?} and \"size_model\": {b:?} name different size models"
            )),
            (None, None) => Err(
                "a result needs \"size\" (bytes) or \"size_model\" (a size model's name)"
                    .to_string(),
            ),
        }
    }
}

/// Written only in the new form: `size` numeric or null, `size_model` a name or null.
impl Serialize for SizeLabel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let (size, model) = match self {
            SizeLabel::Bytes(n) => (Some(*n), None),
            SizeLabel::Model(m) => (None, Some(m.as_str())),
        };
        let mut fields = s.serialize_struct("SizeLabel", 2)?;
        fields.serialize_field("size", &size)?;
        fields.serialize_field("size_model", &model)?;
        fields.end()
    }
}

impl SizeLabel {
    /// The size in bytes; `None` for a size model.
    pub fn bytes(&self) -> Option<u64> {
        match self {
            SizeLabel::Bytes(n) => Some(u64::from(*n)),
            SizeLabel::Model(_) => None,
        }
    }
}

impl std::fmt::Display for SizeLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SizeLabel::Bytes(n) => write!(f, "{n}"),
            SizeLabel::Model(m) => f.write_str(m),
        }
    }
}

// The results schema. These types are written by `run` and read back by `report`, `diff` and
// `model --results` (through `report::read`, which only checks the file first): one definition both
// ways. Fields that files from older builds may lack carry `#[serde(default)]`.

/// One scenario's reported result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultEntry {
    /// With `backend` and `accel`, the function ([`ResultEntry::function`]); flat in the JSON.
    pub algorithm: String,
    pub backend: String,
    pub accel: String,
    /// `"size"` and `"size_model"` in the JSON (see [`SizeLabel`]).
    #[serde(flatten)]
    pub size: SizeLabel,
    /// Mean message size (equals `size` for fixed sizes; a size model's mean).
    #[serde(default)]
    pub mean_message_bytes: f64,
    pub sessions: usize,
    #[serde(default)]
    pub cores: String,
    #[serde(default)]
    pub scenario: ScenarioSpec,
    #[serde(default)]
    pub repeats: usize,
    /// Medians over repeats.
    #[serde(default = "Metrics::missing")]
    pub metrics: Metrics,
    /// Min/max over repeats of the headline metrics.
    #[serde(default)]
    pub spread: SpreadSet,
    /// 95 % confidence intervals of the headline metrics (batch means within runs, spread over
    /// repeats; see `stats::confidence_interval`).
    #[serde(default)]
    pub ci95: Ci95Set,
    /// The tick series of the median repeat (every repeat's is in `raw`).
    #[serde(default)]
    pub series: Series,
    /// Per-thread metrics of the median repeat.
    #[serde(default)]
    pub threads: Vec<ThreadMetrics>,
    /// Which repeat (0-based index into `raw`) the per-thread metrics come from.
    #[serde(default)]
    pub threads_repeat: usize,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// What `--auto` changed, in order.
    #[serde(default)]
    pub adjustments: Vec<String>,
    /// A fatal warning: the numbers must not be used.
    #[serde(default)]
    pub failed: bool,
    /// Raw counters of every repeat, so the metrics can be recomputed.
    #[serde(default)]
    pub raw: Vec<RawRun>,
}

impl ResultEntry {
    /// `algorithm/backend/accel`.
    pub fn function(&self) -> FunctionId {
        FunctionId {
            algorithm: self.algorithm.clone(),
            backend: self.backend.clone(),
            accel: self.accel.clone(),
        }
    }

    /// `algorithm/backend/accel`, and the dispatch after a space when it is not `single`, and the
    /// tag length when `--tag-len` set one: how the terminal tables and `diff` name a result, so a
    /// run over several `--dispatch` modes keeps its rows apart (`hmac-sha256/ipsecmb/hw burst:16`,
    /// `kmac128/openssl/hw tag:20`).
    pub fn label(&self) -> String {
        let mut label = self.function().to_string();
        if self.scenario.dispatch != crate::engine::Dispatch::Single {
            label = format!("{label} {}", self.scenario.dispatch);
        }
        if let Some(n) = self.scenario.tag_len {
            label = format!("{label} tag:{n}");
        }
        label
    }

    /// `algorithm/backend/accel@size`: what `macbench report --scenario` takes.
    pub fn scenario_key(&self) -> String {
        format!("{}@{}", self.function(), self.size)
    }

    /// Number of cores in the core set (`cores` is a CPU list such as `0-3,8`).
    pub fn core_count(&self) -> usize {
        crate::host::parse_cpu_list(&self.cores).map_or(0, |c| c.len())
    }

    /// Metrics that may be used: `None` for a failed result.
    pub fn usable(&self) -> Option<&Metrics> {
        (!self.failed).then_some(&self.metrics)
    }
}

/// What was run, as recorded in a result: the engine's [`Scenario`] without its function (the entry
/// names that) and without a size model's generated sequence. Its JSON is the scenario's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct ScenarioSpec {
    pub size: SizeSource,
    pub sessions: usize,
    pub cores: Vec<usize>,
    pub pinning: Pinning,
    pub duration_s: f64,
    pub window_start_s: f64,
    pub window_end_s: f64,
    pub data: DataMode,
    pub keys: KeyMode,
    pub verify: VerifyMode,
    /// Re-key every N messages.
    pub rekey_every: Option<u64>,
    pub seed: u64,
    /// The coordinator's sampling tick.
    pub tick_s: f64,
    /// How messages were handed to the backend.
    #[serde(default)]
    pub dispatch: engine::Dispatch,
    /// `--tag-len`: tag bytes (a truncation, or KMAC's output length); absent for the algorithm's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag_len: Option<usize>,
}

impl From<&Scenario> for ScenarioSpec {
    fn from(s: &Scenario) -> ScenarioSpec {
        ScenarioSpec {
            size: s.size.clone(),
            sessions: s.sessions,
            cores: s.cores.clone(),
            pinning: s.pinning,
            duration_s: s.duration.as_secs_f64(),
            window_start_s: s.window_start.as_secs_f64(),
            window_end_s: s.window_end.as_secs_f64(),
            data: s.data,
            keys: s.keys,
            verify: s.verify,
            rekey_every: s.rekey_every,
            seed: s.seed,
            tick_s: s.tick.as_secs_f64(),
            dispatch: s.dispatch,
            tag_len: s.tag_len,
        }
    }
}

/// What a file that does not record its scenario reads as (fields the file has replace these).
impl Default for ScenarioSpec {
    fn default() -> ScenarioSpec {
        ScenarioSpec {
            size: SizeSource::Fixed { size: 0 },
            sessions: 0,
            cores: Vec::new(),
            pinning: Pinning::RoundRobin,
            duration_s: 0.0,
            window_start_s: 0.0,
            window_end_s: 0.0,
            data: DataMode::Unique,
            keys: KeyMode::PerSession,
            verify: VerifyMode::None,
            rekey_every: None,
            seed: 0,
            tick_s: 0.0,
            dispatch: engine::Dispatch::Single,
            tag_len: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct SpreadSet {
    pub absolute_cycles_per_byte: Option<Spread>,
    pub apparent_cycles_per_byte: Option<Spread>,
    pub bytes_per_second: Option<Spread>,
}

/// 95 % confidence intervals of the headline metrics; `None` where a run was too short to batch (and
/// in files written before they existed).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct Ci95Set {
    pub absolute_cycles_per_byte: Option<Interval>,
    pub apparent_cycles_per_byte: Option<Interval>,
    pub absolute_cycles_per_message: Option<Interval>,
    pub apparent_cycles_per_message: Option<Interval>,
    pub bytes_per_second: Option<Interval>,
}

impl Ci95Set {
    /// From each repeat's metrics and within-run uncertainty.
    pub fn from_runs(all: &[Metrics], within: &[RunUncertainty]) -> Ci95Set {
        let ci = |value: &dyn Fn(&Metrics) -> Option<f64>,
                  se: &dyn Fn(&RunUncertainty) -> Option<BatchEstimate>| {
            let runs: Vec<(f64, Option<BatchEstimate>)> = all
                .iter()
                .zip(within)
                .filter_map(|(m, u)| Some((value(m)?, se(u))))
                .collect();
            stats::confidence_interval(&runs)
        };
        Ci95Set {
            absolute_cycles_per_byte: ci(&|m| m.absolute_cycles_per_byte, &|u| {
                u.absolute_cycles_per_byte
            }),
            apparent_cycles_per_byte: ci(&|m| m.apparent_cycles_per_byte, &|u| {
                u.apparent_cycles_per_byte
            }),
            absolute_cycles_per_message: ci(&|m| m.absolute_cycles_per_message, &|u| {
                u.absolute_cycles_per_message
            }),
            apparent_cycles_per_message: ci(&|m| m.apparent_cycles_per_message, &|u| {
                u.apparent_cycles_per_message
            }),
            bytes_per_second: ci(&|m| Some(m.bytes_per_second), &|u| u.bytes_per_second),
        }
    }

    /// The widest relative half-width of the cycles figures (per byte, or per message when the
    /// messages are empty), against the medians: what `--target-ci` is compared with. `None` when no
    /// interval could be formed.
    pub fn precision(&self, median: &Metrics) -> Option<f64> {
        let pairs = if median.bytes > 0 {
            [
                (
                    self.absolute_cycles_per_byte,
                    median.absolute_cycles_per_byte,
                ),
                (
                    self.apparent_cycles_per_byte,
                    median.apparent_cycles_per_byte,
                ),
            ]
        } else {
            [
                (
                    self.absolute_cycles_per_message,
                    median.absolute_cycles_per_message,
                ),
                (
                    self.apparent_cycles_per_message,
                    median.apparent_cycles_per_message,
                ),
            ]
        };
        let mut widest: Option<f64> = None;
        for (ci, value) in pairs {
            let w = ci?.relative_half_width(value?)?;
            widest = Some(widest.map_or(w, |x: f64| x.max(w)));
        }
        widest
    }

    /// The absolute cycles/byte interval as a [min, max] range, for the same overlap test as a spread.
    pub fn absolute(&self) -> Option<Spread> {
        self.absolute_cycles_per_byte.map(Spread::from)
    }

    /// The apparent cycles/byte interval as a [min, max] range.
    pub fn apparent(&self) -> Option<Spread> {
        self.apparent_cycles_per_byte.map(Spread::from)
    }
}

/// Harness cost: the null function's cycles per message in one pinned session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Harness {
    pub size: u32,
    pub absolute_cycles_per_message: Option<f64>,
    pub apparent_cycles_per_message: Option<f64>,
}

/// The whole results file. `report::read` checks `tool` and `schema_version` before it reads one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    pub schema_version: u32,
    /// Always [`TOOL`].
    pub tool: String,
    #[serde(default)]
    pub host: Host,
    #[serde(default)]
    pub clock: ClockInfo,
    /// The sweep's options as given (common to all results).
    #[serde(default)]
    pub scenario: serde_json::Value,
    #[serde(default)]
    pub harness: Option<Harness>,
    #[serde(default)]
    pub results: Vec<ResultEntry>,
    /// True while a sweep is still running or was interrupted: the file holds what finished.
    #[serde(default)]
    pub partial: bool,
}

/// The `tool` of every results file.
pub const TOOL: &str = "macbench";

/// Host identity used to decide whether two files come from the same machine.
pub fn host_key(doc: &Document) -> String {
    format!(
        "{} ({} CPUs, {})",
        doc.host.cpu_model,
        doc.host.online_cpus.len(),
        doc.host.kernel
    )
}

/// Bounds for `--auto` and for the confidence-interval target.
#[derive(Debug, Clone, Copy)]
pub struct AutoPolicy {
    pub enabled: bool,
    pub max_duration: Duration,
    /// Repeats allowed in all, including those added to reach `target_ci`.
    pub max_repeats: usize,
    pub max_rounds: usize,
    /// `--target-ci`: the widest relative half-width of the 95 % interval accepted (0.05 = ±5 %).
    /// Repeats are added up to `max_repeats` until it is met; otherwise the result is flagged `noisy`.
    pub target_ci: Option<f64>,
}

impl Default for AutoPolicy {
    fn default() -> Self {
        AutoPolicy {
            enabled: false,
            max_duration: Duration::from_secs(10),
            max_repeats: 9,
            max_rounds: 4,
            target_ci: None,
        }
    }
}

/// Shortest scheduling slice assumed when sizing runs for many sessions (CFS min granularity and the
/// EEVDF base slice are 0.75–3 ms).
pub const MIN_SCHEDULING_SLICE: Duration = Duration::from_millis(3);

/// The slice a runnable session gets before the next: at least [`MIN_SCHEDULING_SLICE`], and at least
/// the kernel's tick (1/HZ), since without high-resolution preemption the scheduler switches only on a
/// tick. The tick is the resolution of `CLOCK_MONOTONIC_COARSE`. Measured here (HZ = 250): 1000
/// sessions on 2 cores each ran ~3.7 ms at a time, and a round of 500 per core took 2 s.
pub fn scheduling_slice() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    let ok = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut ts) } == 0;
    let tick = if ok && ts.tv_sec == 0 {
        Duration::from_nanos(ts.tv_nsec as u64)
    } else {
        Duration::ZERO
    };
    MIN_SCHEDULING_SLICE.max(tick.min(Duration::from_millis(10)))
}
/// Scheduling rounds every session should get inside the window.
pub const ROUNDS_PER_WINDOW: u32 = 10;
/// Longest duration the load-fitted default chooses (an explicit `--duration` is obeyed).
pub const MAX_FITTED_DURATION: Duration = Duration::from_secs(30);

/// Default run duration for `sessions` on `cores` with a window covering `window_fraction` of the run:
/// `base` when every session has a core; else long enough that each session gets
/// [`ROUNDS_PER_WINDOW`] scheduling slices of `slice` inside the window (with `q` runnable sessions per core, a
/// round takes ~`q` slices). Returns the duration and, when it grew, why.
pub fn fitted_duration(
    base: Duration,
    sessions: usize,
    cores: usize,
    window_fraction: f64,
    slice: Duration,
) -> (Duration, Option<String>) {
    let per_core = sessions.div_ceil(cores.max(1)).max(1) as u32;
    if per_core <= 1 {
        return (base, None);
    }
    let window = slice * per_core * ROUNDS_PER_WINDOW;
    let needed = window.div_f64(window_fraction.clamp(0.05, 1.0));
    if needed <= base {
        return (base, None);
    }
    let chosen = needed.min(MAX_FITTED_DURATION);
    let why = format!(
        "{sessions} sessions on {cores} core(s) ({per_core} runnable per core): duration {:.2} s so that each session gets ~{} scheduling slices of ~{} ms inside the window{} (give --duration to override)",
        chosen.as_secs_f64(),
        ROUNDS_PER_WINDOW,
        slice.as_millis(),
        if needed > chosen {
            format!(", capped at {} s", MAX_FITTED_DURATION.as_secs())
        } else {
            String::new()
        }
    );
    (chosen, Some(why))
}

/// Scheduling rounds a session can expect inside a window of `window` with `sessions` on `cores`
/// (a round: every runnable session of a core runs one slice). Below ~2 a session may get no slice in
/// the window at all, since the kernel does not keep one order from round to round.
pub fn rounds_in_window(window: Duration, sessions: usize, cores: usize, slice: Duration) -> f64 {
    let per_core = sessions.div_ceil(cores.max(1)).max(1) as f64;
    window.as_secs_f64() / (per_core * slice.as_secs_f64())
}

fn spread(values: &[f64]) -> Option<Spread> {
    Some(Spread {
        min: values.iter().copied().reduce(f64::min)?,
        max: values.iter().copied().reduce(f64::max)?,
    })
}

/// Median of each aggregate metric over repeats. A new field of [`Metrics`] gets its line here (the
/// compiler asks for it); nothing else outside `metrics.rs` changes.
fn median_metrics(all: &[Metrics]) -> Metrics {
    let pick = |f: &dyn Fn(&Metrics) -> Option<f64>| {
        metrics::median(&all.iter().filter_map(f).collect::<Vec<_>>())
    };
    let must = |f: &dyn Fn(&Metrics) -> f64| {
        metrics::median(&all.iter().map(f).collect::<Vec<_>>()).unwrap_or(0.0)
    };
    Metrics {
        absolute_cycles_per_byte: pick(&|m| m.absolute_cycles_per_byte),
        apparent_cycles_per_byte: pick(&|m| m.apparent_cycles_per_byte),
        absolute_cycles_per_message: pick(&|m| m.absolute_cycles_per_message),
        apparent_cycles_per_message: pick(&|m| m.apparent_cycles_per_message),
        bytes_per_second: must(&|m| m.bytes_per_second),
        messages_per_second: must(&|m| m.messages_per_second),
        parallelism: pick(&|m| m.parallelism),
        fairness: pick(&|m| m.fairness),
        min_thread_apparent_cycles_per_byte: pick(&|m| m.min_thread_apparent_cycles_per_byte),
        max_thread_apparent_cycles_per_byte: pick(&|m| m.max_thread_apparent_cycles_per_byte),
        cpu_utilisation: must(&|m| m.cpu_utilisation),
        core_cycles_per_byte: pick(&|m| m.core_cycles_per_byte),
        core_cycles_per_byte_estimated: pick(&|m| m.core_cycles_per_byte_estimated),
        key_setup_cycles: must(&|m| m.key_setup_cycles),
        messages: must(&|m| m.messages as f64) as u64,
        bytes: must(&|m| m.bytes as f64) as u64,
        window_seconds: must(&|m| m.window_seconds),
        latency_p50_ns: pick(&|m| m.latency_p50_ns),
        latency_p99_ns: pick(&|m| m.latency_p99_ns),
    }
}

/// The runs of one scenario: raw counters, their metrics and within-run uncertainty, in order.
struct Repeats {
    raws: Vec<RawRun>,
    computed: Vec<metrics::RunMetrics>,
    within: Vec<RunUncertainty>,
    interrupted: bool,
}

impl Repeats {
    fn metrics(&self) -> Vec<Metrics> {
        self.computed.iter().map(|c| c.metrics.clone()).collect()
    }

    /// The repeat whose apparent cycles/byte is nearest the median: it supplies the per-thread view.
    fn median_index(&self, all: &[Metrics], median: &Metrics) -> usize {
        let d = |i: usize| {
            (all[i].apparent_cycles_per_byte.unwrap_or(f64::MAX)
                - median.apparent_cycles_per_byte.unwrap_or(0.0))
            .abs()
        };
        (0..all.len())
            .min_by(|&a, &b| d(a).total_cmp(&d(b)))
            .unwrap_or(0)
    }
}

/// Run `scenario` `repeats` times, then more (up to `auto.max_repeats`) while the 95 % interval is
/// wider than `auto.target_ci`; stops at once when cancelled.
fn run_repeats(
    scenario: &Scenario,
    repeats: usize,
    auto: &AutoPolicy,
    ctx: Context,
    cancel: &AtomicBool,
) -> Result<Repeats, engine::EngineError> {
    let mut r = Repeats {
        raws: Vec::with_capacity(repeats),
        computed: Vec::with_capacity(repeats),
        within: Vec::with_capacity(repeats),
        interrupted: false,
    };
    loop {
        // Switched functions (`sw`, a masked ISA level) run in their acceleration's child (the same
        // engine there); see `isolate`.
        let raw = if isolate::needed(scenario) {
            isolate::run(scenario, cancel)
        } else {
            engine::run(scenario, cancel)
        }?;
        r.computed.push(metrics::compute(&raw, ctx));
        r.within.push(metrics::uncertainty(&raw, ctx.f));
        r.interrupted |= raw.interrupted;
        r.raws.push(raw);
        if r.interrupted {
            return Ok(r);
        }
        if r.raws.len() < repeats {
            continue;
        }
        let Some(target) = auto.target_ci else {
            return Ok(r);
        };
        if r.raws.len() >= auto.max_repeats.max(repeats) {
            return Ok(r);
        }
        let all = r.metrics();
        match Ci95Set::from_runs(&all, &r.within).precision(&median_metrics(&all)) {
            Some(p) if p <= target => return Ok(r),
            // No interval (a failed or empty run): more repeats cannot help.
            None if r
                .computed
                .iter()
                .any(|c| c.warnings.iter().any(|w| w.fatal)) =>
            {
                return Ok(r)
            }
            _ => {}
        }
    }
}

/// The `noisy` warning when the interval stays wider than the target after the allowed repeats.
fn noisy_warning(ci95: &Ci95Set, median: &Metrics, target: f64, repeats: usize) -> Option<Warning> {
    match ci95.precision(median) {
        Some(p) if p <= target => None,
        Some(p) => Some(Warning::new(
            WarningCode::Noisy,
            format!(
                "the 95 % interval is ±{:.1} % after {repeats} repeat(s), wider than the target ±{:.1} % (--target-ci): more --repeat, a longer --duration, or a quieter machine",
                p * 100.0,
                target * 100.0
            ),
        )),
        None => Some(Warning::new(
            WarningCode::Noisy,
            "no confidence interval: the window holds too few ticks for batch means and there is one repeat (lengthen --duration or --repeat ≥ 2)".to_string(),
        )),
    }
}

/// `--auto`: lengthen the run (and start the window later when not steady) for the warnings a longer
/// run can fix. Returns what changed, or `None` when nothing can be fixed; `Err` names what is still
/// flagged when the duration bound is reached.
fn auto_adjust(
    scenario: &mut Scenario,
    warnings: &[Warning],
    auto: &AutoPolicy,
) -> Option<Result<String, String>> {
    let mut fixable: Vec<WarningCode> = warnings
        .iter()
        .filter(|w| !w.fatal)
        .map(|w| w.code)
        .filter(|c| {
            matches!(
                c,
                WarningCode::WindowTooShort | WarningCode::Starvation | WarningCode::NotSteady
            )
        })
        .collect();
    fixable.dedup();
    if fixable.is_empty() {
        return None;
    }
    let names = fixable
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if scenario.duration * 2 > auto.max_duration {
        return Some(Err(names));
    }
    scenario.duration *= 2;
    scenario.window_end *= 2;
    scenario.window_start *= 2;
    if fixable.contains(&WarningCode::NotSteady) {
        // A later start, keeping the window inside the run.
        scenario.window_start += (scenario.window_end - scenario.window_start) / 4;
    }
    Some(Ok(format!(
        "duration → {:.3} s, window {:.3}..{:.3} s because of {names}",
        scenario.duration.as_secs_f64(),
        scenario.window_start.as_secs_f64(),
        scenario.window_end.as_secs_f64(),
    )))
}

/// Run one scenario `repeats` times and reduce; with `auto`, adjust and re-run until valid or bounded.
pub fn run_scenario(
    mut scenario: Scenario,
    repeats: usize,
    auto: AutoPolicy,
    clock: &ClockInfo,
    cancel: &AtomicBool,
) -> Result<ResultEntry, engine::EngineError> {
    let ctx = Context {
        f: clock.reference_hz,
        cores: scenario.cores.len(),
        core_ratio: clock.core_to_reference_ratio,
        timer_resolution_ns: clock.timer_resolution_ns,
    };
    let repeats = repeats.max(1);
    let mut adjustments = Vec::new();
    let mut round = 0;
    loop {
        let runs = match run_repeats(&scenario, repeats, &auto, ctx, cancel) {
            Ok(runs) => runs,
            // The library refused a job or the pre-flight caught a wrong tag: this scenario fails
            // with the reason and the sweep goes on; nothing of it was timed.
            Err(engine::EngineError::Refused { function, reason }) => {
                let why = format!("{function}: {reason}");
                return Ok(untimed_entry(&scenario, WarningCode::Refused, why));
            }
            Err(engine::EngineError::WrongTag { function, reason }) => {
                let why = format!("{function}: {reason}");
                return Ok(untimed_entry(&scenario, WarningCode::WrongTag, why));
            }
            Err(other) => return Err(other),
        };
        let all = runs.metrics();
        let median = median_metrics(&all);
        let ci95 = Ci95Set::from_runs(&all, &runs.within);
        let median_index = runs.median_index(&all, &median);
        let mut warnings = runs.computed[median_index].warnings.clone();
        // Fatal warnings of any repeat fail the result.
        for (i, c) in runs.computed.iter().enumerate() {
            if i != median_index {
                warnings.extend(c.warnings.iter().filter(|w| w.fatal).cloned());
            }
        }
        if let Some(target) = auto.target_ci {
            if !runs.interrupted && !warnings.iter().any(|w| w.fatal) {
                warnings.extend(noisy_warning(&ci95, &median, target, runs.raws.len()));
            }
        }
        if auto.enabled && !runs.interrupted && round < auto.max_rounds {
            match auto_adjust(&mut scenario, &warnings, &auto) {
                Some(Ok(change)) => {
                    round += 1;
                    adjustments.push(format!("round {round}: {change}"));
                    continue;
                }
                Some(Err(flagged)) => {
                    adjustments.push(format!("bound reached; still flagged: {flagged}"))
                }
                None => {}
            }
        }
        return Ok(entry(
            &scenario,
            runs,
            all,
            median,
            ci95,
            median_index,
            warnings,
            adjustments,
        ));
    }
}

/// The result of a scenario that was not timed (a refused job, a wrong tag in the pre-flight): failed,
/// with one fatal warning saying why, and no numbers.
fn untimed_entry(scenario: &Scenario, code: WarningCode, why: String) -> ResultEntry {
    let runs = Repeats {
        raws: Vec::new(),
        computed: vec![metrics::RunMetrics {
            metrics: Metrics::default(),
            threads: Vec::new(),
            warnings: Vec::new(),
        }],
        within: Vec::new(),
        interrupted: false,
    };
    let warning = Warning {
        fatal: true,
        ..Warning::new(code, why)
    };
    entry(
        scenario,
        runs,
        vec![Metrics::default()],
        Metrics::default(),
        Ci95Set::default(),
        0,
        vec![warning],
        Vec::new(),
    )
}

/// The reported result of a scenario from its runs.
#[allow(clippy::too_many_arguments)]
fn entry(
    scenario: &Scenario,
    mut runs: Repeats,
    all: Vec<Metrics>,
    median: Metrics,
    ci95: Ci95Set,
    median_index: usize,
    warnings: Vec<Warning>,
    adjustments: Vec<String>,
) -> ResultEntry {
    let failed = warnings.iter().any(|w| w.fatal);
    let f = scenario.function;
    let (size, mean) = match &scenario.size {
        engine::SizeSource::Fixed { size } => (SizeLabel::Bytes(*size), f64::from(*size)),
        engine::SizeSource::Model {
            name, mean_bytes, ..
        } => (SizeLabel::Model(name.clone()), *mean_bytes),
    };
    let series = runs
        .raws
        .get(median_index)
        .map(|r| r.series.clone())
        .unwrap_or_default();
    let pick =
        |g: &dyn Fn(&Metrics) -> Option<f64>| spread(&all.iter().filter_map(g).collect::<Vec<_>>());
    ResultEntry {
        algorithm: f.algorithm.name.to_string(),
        backend: f.backend.name.to_string(),
        accel: f.accel.to_string(),
        size,
        mean_message_bytes: mean,
        sessions: scenario.sessions,
        cores: engine::format_cpu_list(&scenario.cores),
        repeats: runs.raws.len(),
        metrics: median,
        spread: SpreadSet {
            absolute_cycles_per_byte: pick(&|m| m.absolute_cycles_per_byte),
            apparent_cycles_per_byte: pick(&|m| m.apparent_cycles_per_byte),
            bytes_per_second: pick(&|m| Some(m.bytes_per_second)),
        },
        ci95,
        series,
        threads: runs.computed.swap_remove(median_index).threads,
        threads_repeat: median_index,
        warnings,
        adjustments,
        failed,
        raw: runs.raws,
        scenario: ScenarioSpec::from(scenario),
    }
}
