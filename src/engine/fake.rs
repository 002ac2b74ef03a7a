//! A deterministic stand-in for [`super::run`], for the CLI's own tests (STYLE 16, hyperfine's mock
//! executor): it measures nothing — it waits out the run's duration and returns the counters a
//! perfectly steady machine would — so a test of
//! `run`'s exit codes, files and messages can pin one outcome instead of accepting "0, or 1 when the
//! machine was busy". [`super::run`] asks [`chosen`] first, the one place [`FAKE_ENGINE_VAR`] is
//! read; a run without that variable never meets the fake. Everything around the engine stays real:
//! the sweep, the switched child (it inherits the variable), the pre-flight, the files.
//!
//! The fake's costs are known: a message costs [`NS_PER_MESSAGE`] plus [`NS_PER_BYTE`] per byte of
//! CPU time, the sessions share their cores fairly (each gets `cores / sessions` of a core, at most a
//! whole one), and throughput is the same in every tick. [`Verdict::Starved`] makes every session
//! process nothing in the window: the fatal `starvation` warning a loaded machine can cause, so the
//! failure path (exit 1, "failed their validity checks") is pinned too.

use super::{check_limits, preflight, session_keys, validate, Workload};
use super::{EngineError, RawRun, Sample, Scenario, Series, SizeSource, ThreadCounters};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The environment variable that swaps the engine for this fake: `valid` or `starved`. Hidden on
/// purpose (not a flag, never in `--help`): it exists for the tests, and docs/architecture.md says so.
pub const FAKE_ENGINE_VAR: &str = "MACBENCH_FAKE_ENGINE";

/// CPU time a message costs, before its bytes.
pub const NS_PER_MESSAGE: f64 = 20.0;
/// CPU time each byte of a message costs.
pub const NS_PER_BYTE: f64 = 0.25;
/// Points of the fake's tick series: enough for the window's batches and trend test.
const POINTS: u64 = 100;
/// The key setup the fake reports, ns.
const KEY_SETUP_NS: f64 = 100.0;

/// What the fake's runs look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Steady, every session busy all the window: a run that passes every validity check.
    Valid,
    /// No session processes anything in the window: a run that fails the starvation check.
    Starved,
}

impl Verdict {
    /// The verdict [`FAKE_ENGINE_VAR`]'s value names; an unknown value is an error naming both.
    pub fn parse(value: &str) -> Result<Verdict, String> {
        match value {
            "valid" => Ok(Verdict::Valid),
            "starved" => Ok(Verdict::Starved),
            other => Err(format!(
                "{FAKE_ENGINE_VAR}={other:?}: expected \"valid\" or \"starved\""
            )),
        }
    }
}

/// The verdict [`FAKE_ENGINE_VAR`] asks for, `None` when it is not set (the real engine runs). A value
/// it does not know fails the run with the reason rather than falling back to the real engine, so a
/// misspelt switch cannot quietly time the machine.
pub fn chosen() -> Result<Option<Verdict>, EngineError> {
    match std::env::var(FAKE_ENGINE_VAR) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        // Set, but not Unicode: set on purpose all the same, so it is no reason to time the real
        // machine (it once did, silently).
        Err(std::env::VarError::NotUnicode(raw)) => Err(EngineError::FakeEngine(format!(
            "{FAKE_ENGINE_VAR}={raw:?} is not UTF-8: expected \"valid\" or \"starved\", or leave it unset"
        ))),
        Ok(value) => Verdict::parse(&value)
            .map(Some)
            .map_err(EngineError::FakeEngine),
    }
}

impl Verdict {
    /// How results files record it ([`crate::results::Document::fake_engine`]).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Starved => "starved",
        }
    }
}

/// The counters of one run of `scenario` on the fake machine. Everything the engine checks before it
/// times anything is checked as the engine checks it (the scenario against this machine, the
/// process's limits, the pre-flight's tags), so refusals and errors are the real ones; only the
/// timing is made up.
pub fn run(
    scenario: &Scenario,
    verdict: Verdict,
    cancel: &AtomicBool,
) -> Result<RawRun, EngineError> {
    validate(scenario, &crate::system::online_cpus())?;
    check_limits(scenario)?;
    let workload = Workload::build(scenario);
    let keys = session_keys(scenario);
    let preflight = preflight::check(scenario, &workload, &keys[0])?;
    // A run lasts its duration, as the engine's does, so what is measured around runs (energy
    // windows, a budget) sees time pass; Ctrl-C cuts it short the same way.
    let deadline = Instant::now() + scenario.duration;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if cancel.load(Ordering::SeqCst) {
            return Ok(RawRun::cut_short(KEY_SETUP_NS));
        }
        std::thread::sleep(left.min(Duration::from_millis(10)));
    }
    let duration_ns = (scenario.duration.as_nanos() as u64).max(POINTS);
    let step_ns = duration_ns / POINTS;
    let point =
        |at: std::time::Duration| ((at.as_nanos() as u64 / step_ns) as usize).min(POINTS as usize);
    let first = point(scenario.window_start).min(POINTS as usize - 2);
    let last = point(scenario.window_end).max(first + 2);
    let sessions = scenario.sessions.max(1);
    let cores = scenario.cores.len().max(1);
    // A fair share of the core set, at most one core each.
    let share = (cores as f64 / sessions as f64).min(1.0);
    let message_ns = NS_PER_MESSAGE + NS_PER_BYTE * mean_bytes(&scenario.size);
    let bytes_per_message = mean_bytes(&scenario.size);
    // One session's cumulative counters at point `k`.
    let at = |k: usize| {
        let wall_ns = k as u64 * step_ns;
        let cpu_ns = (wall_ns as f64 * share) as u64;
        let working = match verdict {
            Verdict::Valid => k,
            // Nothing after the window opens.
            Verdict::Starved => k.min(first),
        };
        let messages = ((working as u64 * step_ns) as f64 * share / message_ns) as u64;
        let bytes = (messages as f64 * bytes_per_message) as u64;
        (wall_ns, cpu_ns, messages, bytes)
    };
    let mut series = Series {
        tick_ns: step_ns,
        window_first: first,
        window_last: last,
        ..Series::default()
    };
    for k in 0..=POINTS as usize {
        let (wall_ns, cpu_ns, messages, bytes) = at(k);
        series.t_ns.push(wall_ns);
        series.messages.push(messages * sessions as u64);
        series.bytes.push(bytes * sessions as u64);
        series.cpu_ns.push(cpu_ns * sessions as u64);
    }
    let threads = (0..sessions)
        .map(|session| {
            let cpu = scenario.cores.get(session % cores).copied();
            let sample = |k: usize| {
                let (wall_ns, cpu_ns, messages, bytes) = at(k);
                Sample {
                    wall_ns,
                    cpu_ns,
                    messages,
                    bytes,
                    hw_cycles: None,
                    cpu,
                }
            };
            ThreadCounters {
                session,
                allowed_cpus: scenario.cores.clone(),
                window_start: sample(first),
                window_mid: sample((first + last) / 2),
                window_end: sample(last),
                total_messages: at(POINTS as usize).2,
                ..ThreadCounters::default()
            }
        })
        .collect();
    Ok(RawRun {
        window_wall_ns: (last - first) as u64 * step_ns,
        first_half_wall_ns: ((first + last) / 2 - first) as u64 * step_ns,
        threads,
        key_setup_ns: KEY_SETUP_NS,
        series,
        preflight: Some(preflight),
        ..RawRun::default()
    })
}

/// The mean message length of a size source, in bytes.
fn mean_bytes(size: &SizeSource) -> f64 {
    let sizes = size.sizes();
    if sizes.is_empty() {
        return 0.0;
    }
    sizes.iter().map(|&s| f64::from(s)).sum::<f64>() / sizes.len() as f64
}

// What the fake's runs give the validity checks is tested where the metrics are (tests/metrics.rs):
// the engine sits below them.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fake_switch_takes_two_values_and_names_them_otherwise() {
        assert_eq!(Verdict::parse("valid"), Ok(Verdict::Valid));
        assert_eq!(Verdict::parse("starved"), Ok(Verdict::Starved));
        let err = Verdict::parse("yes").unwrap_err();
        assert!(err.contains("MACBENCH_FAKE_ENGINE=\"yes\""), "{err}");
    }
}
