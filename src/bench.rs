//! A sweep: scenarios run one after another, each repeated `r` times, reduced to medians, checked and —
//! with `--auto` — adjusted and re-run (seed 000's Fig. 3 workflow). Produces the results document that
//! every exporter writes.

use crate::engine::{self, clock::ClockInfo, RawRun, Scenario};
use crate::host::Host;
use crate::metrics::{self, Context, Metrics, Spread, ThreadMetrics, Warning};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Version of the results JSON layout; bumped on incompatible change. Readers reject newer ones.
pub const SCHEMA_VERSION: u32 = 1;

/// A message size as reported: bytes, or the name of a size model. Serialised untagged, so JSON and CSV
/// hold a plain number for fixed sizes.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum SizeLabel {
    Bytes(u32),
    Model(String),
}

/// One scenario's reported result.
#[derive(Debug, Clone, Serialize)]
pub struct ResultEntry {
    pub algorithm: &'static str,
    pub backend: &'static str,
    pub accel: String,
    pub size: SizeLabel,
    /// Mean message size (equals `size` for fixed sizes).
    pub mean_message_bytes: f64,
    pub sessions: usize,
    pub cores: String,
    pub scenario: Scenario,
    pub repeats: usize,
    /// Medians over repeats.
    pub metrics: Metrics,
    /// Min/max over repeats of the headline metrics.
    pub spread: SpreadSet,
    /// Per-thread metrics of the median repeat.
    pub threads: Vec<ThreadMetrics>,
    pub warnings: Vec<Warning>,
    /// What `--auto` changed, in order.
    pub adjustments: Vec<String>,
    /// A fatal warning: the numbers must not be used.
    pub failed: bool,
    /// Raw counters of every repeat, so the metrics can be recomputed.
    pub raw: Vec<RawRun>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct SpreadSet {
    pub absolute_cycles_per_byte: Option<Spread>,
    pub apparent_cycles_per_byte: Option<Spread>,
    pub bytes_per_second: Option<Spread>,
}

/// Harness cost: the null function's cycles per message in one pinned session.
#[derive(Debug, Clone, Serialize)]
pub struct Harness {
    pub size: u32,
    pub absolute_cycles_per_message: Option<f64>,
    pub apparent_cycles_per_message: Option<f64>,
}

/// The whole results file.
#[derive(Debug, Clone, Serialize)]
pub struct Document {
    pub schema_version: u32,
    pub tool: &'static str,
    pub host: Host,
    pub clock: ClockInfo,
    /// The sweep's options as given (common to all results).
    pub scenario: serde_json::Value,
    pub harness: Option<Harness>,
    pub results: Vec<ResultEntry>,
    /// True while a sweep is still running or was interrupted: the file holds what finished.
    pub partial: bool,
}

/// Bounds for `--auto`.
#[derive(Debug, Clone, Copy)]
pub struct AutoPolicy {
    pub enabled: bool,
    pub max_duration: Duration,
    pub max_repeats: usize,
    pub max_rounds: usize,
}

impl Default for AutoPolicy {
    fn default() -> Self {
        AutoPolicy {
            enabled: false,
            max_duration: Duration::from_secs(10),
            max_repeats: 9,
            max_rounds: 4,
        }
    }
}

fn spread(values: &[f64]) -> Option<Spread> {
    Some(Spread {
        min: values.iter().copied().reduce(f64::min)?,
        max: values.iter().copied().reduce(f64::max)?,
    })
}

/// Median of each aggregate metric over repeats.
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
    }
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
    let mut repeats = repeats.max(1);
    let mut adjustments = Vec::new();
    let mut round = 0;
    loop {
        let mut raws = Vec::with_capacity(repeats);
        let mut computed = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let raw = engine::run(&scenario, cancel)?;
            computed.push(metrics::compute(&raw, ctx));
            let stop = raw.interrupted;
            raws.push(raw);
            if stop {
                break;
            }
        }
        let all: Vec<Metrics> = computed.iter().map(|c| c.0.clone()).collect();
        let median = median_metrics(&all);
        let apparent: Vec<f64> = all
            .iter()
            .filter_map(|m| m.apparent_cycles_per_byte)
            .collect();
        // The repeat whose apparent cycles/byte is nearest the median supplies the per-thread view.
        let median_index = (0..computed.len())
            .min_by(|&a, &b| {
                let d = |i: usize| {
                    (all[i].apparent_cycles_per_byte.unwrap_or(f64::MAX)
                        - median.apparent_cycles_per_byte.unwrap_or(0.0))
                    .abs()
                };
                d(a).total_cmp(&d(b))
            })
            .unwrap_or(0);
        let mut warnings = computed[median_index].2.clone();
        // Fatal warnings of any repeat fail the result.
        for (i, c) in computed.iter().enumerate() {
            if i != median_index {
                warnings.extend(c.2.iter().filter(|w| w.fatal).cloned());
            }
        }
        warnings.extend(metrics::noisy(&apparent));
        let interrupted = raws.iter().any(|r| r.interrupted);

        let fixable: Vec<&str> = warnings
            .iter()
            .filter(|w| !w.fatal)
            .map(|w| w.code)
            .filter(|c| {
                matches!(
                    *c,
                    "window-too-short" | "starvation" | "not-steady" | "noisy"
                )
            })
            .collect();
        if auto.enabled && !interrupted && !fixable.is_empty() && round < auto.max_rounds {
            round += 1;
            let mut changed = Vec::new();
            if fixable
                .iter()
                .any(|c| matches!(*c, "window-too-short" | "starvation" | "not-steady"))
                && scenario.duration * 2 <= auto.max_duration
            {
                let scale = |d: Duration| d * 2;
                scenario.duration = scale(scenario.duration);
                scenario.window_end = scale(scenario.window_end);
                scenario.window_start = scale(scenario.window_start);
                if fixable.contains(&"not-steady") {
                    // A later start, keeping the window inside the run.
                    scenario.window_start += (scenario.window_end - scenario.window_start) / 4;
                }
                changed.push(format!(
                    "duration → {:.3} s, window {:.3}..{:.3} s",
                    scenario.duration.as_secs_f64(),
                    scenario.window_start.as_secs_f64(),
                    scenario.window_end.as_secs_f64()
                ));
            }
            if fixable.contains(&"noisy") && repeats < auto.max_repeats {
                repeats = (repeats + 2).min(auto.max_repeats);
                changed.push(format!("repeats → {repeats}"));
            }
            if !changed.is_empty() {
                adjustments.push(format!(
                    "round {round}: {} because of {}",
                    changed.join(", "),
                    fixable.join(", ")
                ));
                continue;
            }
            adjustments.push(format!(
                "bound reached; still flagged: {}",
                fixable.join(", ")
            ));
        }

        let failed = warnings.iter().any(|w| w.fatal);
        let f = scenario.function;
        let (size, mean) = match &scenario.size {
            engine::SizeSource::Fixed { size } => (SizeLabel::Bytes(*size), f64::from(*size)),
            engine::SizeSource::Model {
                name, mean_bytes, ..
            } => (SizeLabel::Model(name.clone()), *mean_bytes),
        };
        return Ok(ResultEntry {
            algorithm: f.algorithm.name,
            backend: f.backend.name,
            accel: f.accel.to_string(),
            size,
            mean_message_bytes: mean,
            sessions: scenario.sessions,
            cores: engine::format_cpu_list(&scenario.cores),
            repeats: raws.len(),
            metrics: median,
            spread: SpreadSet {
                absolute_cycles_per_byte: spread(
                    &all.iter()
                        .filter_map(|m| m.absolute_cycles_per_byte)
                        .collect::<Vec<_>>(),
                ),
                apparent_cycles_per_byte: spread(&apparent),
                bytes_per_second: spread(
                    &all.iter().map(|m| m.bytes_per_second).collect::<Vec<_>>(),
                ),
            },
            threads: computed.swap_remove(median_index).1,
            warnings,
            adjustments,
            failed,
            raw: raws,
            scenario,
        });
    }
}
