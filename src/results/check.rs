//! The invariants of a results document, checked once for every reader (`validate`, `report`, `diff`,
//! `export`, `model --results`, `reproduce --resume`: all through `report::read`).
//!
//! Why here and not in serde: the types are lenient on purpose (STYLE §10) — a field an older build or a
//! hand-made file does not hold takes its default — so serde alone accepts a result with no `metrics`,
//! `sessions: 0`, an interval whose low end is above its high end, or a null cost in a result that
//! says it measured (issue 34: `validate` called such files "complete and measured", and `export`
//! turned them into `{}`). The rule drawn from what `run` writes ([`crate::bench`]):
//!
//! - **Every result** has a known algorithm, backend and acceleration, 1 to `engine::MAX_SESSIONS`
//!   sessions, at most `MAX_REPEAT` repeats (what `--repeat` allows), a `metrics` object, no cost
//!   beside zero messages (`messages: 0` and a positive cost contradict each other), ordered intervals
//!   and spreads (`low ≤ high`, `min ≤ max`, finite), and figures that can be: latency p50 ≤ p99,
//!   fairness ≤ 1, parallelism and utilisation within what its sessions (one thread each) can use.
//!   A file holds each scenario ([`super::ScenarioKey`]) once.
//! - **A measured result** ([`ResultEntry::measured`]: not `failed`, no fatal warning) also has at
//!   least one repeat, at least one cost, the cost its size calls for (per byte, or per message for
//!   empty messages) not `null`, a window of some length, not every cost 0 over its messages,
//!   `bytes` = messages × size for a fixed size, a rate beside its cost, intervals when it has 3
//!   repeats or more, spreads that hold its medians, and a 95 % interval that holds its median. The
//!   interval is centred on the repeats' mean, the metric is their median, and |median − mean| ≤ σ ≤
//!   half-width · √(r − 1) / 1.96 (the interval uses at least t ≥ 1.96 over s/√r), so the check allows
//!   that much and no more: up to 4 repeats the interval itself (which is why the repeats are bounded
//!   first: 10¹⁵ of them would allow anything).
//! - **A result that did not measure** (`failed`, or a fatal warning: a refused job, a starved window,
//!   a wrong tag) may hold nulls and zeros — `run` writes it so, with its reason — and is read.
//!
//! A field a file leaves out is unknown, not wrong: the checks of presence (`metrics`, a `null` cost,
//! `repeats: 0`, `messages: 0`) look at the JSON as written, the others at the typed document. Every
//! refusal names its field as a path (`results[0].ci95.absolute_cycles_per_byte`), and serde's own
//! errors are given the same path ([`parse`]).

use super::{Document, ResultEntry, SizeLabel, MAX_REPEAT, SCHEMA_VERSION};
use crate::engine::MAX_SESSIONS;
use crate::metrics::{Headline, Kind, Metrics, Per, HEADLINE};
use crate::number::compact;
use crate::stats::Interval;
use serde_json::Value;

/// A results document that breaks an invariant: the field at fault, as a path, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct Invalid {
    /// `results[3].metrics.absolute_cycles_per_byte`, `schema_version`.
    pub field: String,
    pub why: String,
}

fn invalid(field: impl Into<String>, why: impl Into<String>) -> Invalid {
    Invalid {
        field: field.into(),
        why: why.into(),
    }
}

/// The headline costs (`metrics::Kind::Cost`): what a measured result reports, by their JSON names.
fn costs() -> impl Iterator<Item = &'static Headline> {
    HEADLINE.iter().filter(|h| matches!(h.kind, Kind::Cost(_)))
}

/// The headline costs paid `per` byte or message, by their JSON names.
fn costs_per(per: Per) -> impl Iterator<Item = &'static str> {
    costs()
        .filter(move |h| h.kind == Kind::Cost(per))
        .map(|h| h.key)
}

/// The document in `value` (a JSON object whose `tool` and `schema_version` the reader has checked),
/// typed and checked: every invariant above, serde's errors named by their path.
pub fn parse(value: Value) -> Result<Document, Invalid> {
    check_written(&value)?;
    let doc: Document = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let why = e.into_inner().to_string();
        if path == "." {
            invalid("document", why)
        } else {
            invalid(path, why)
        }
    })?;
    check(&doc)?;
    Ok(doc)
}

/// Whether result `r` says it measured: not failed, and no fatal warning (which fails it).
fn measured(r: &Value) -> bool {
    let failed = r.get("failed").and_then(Value::as_bool).unwrap_or(false);
    let fatal = r
        .get("warnings")
        .and_then(Value::as_array)
        .is_some_and(|ws| {
            ws.iter()
                .any(|w| w.get("fatal").and_then(Value::as_bool) == Some(true))
        });
    !failed && !fatal
}

/// The checks that depend on what the file wrote, not on what serde fills in.
fn check_written(value: &Value) -> Result<(), Invalid> {
    let Some(results) = value.get("results").and_then(Value::as_array) else {
        return Ok(()); // absent: no results; of another type: serde names it
    };
    for (i, r) in results.iter().enumerate() {
        let at = |field: &str| format!("results[{i}].{field}");
        if !r.is_object() {
            continue; // serde names it
        }
        let metrics = match r.get("metrics") {
            None => {
                return Err(invalid(
                    at("metrics"),
                    "missing; every result records its metrics (a result that measured nothing is \"failed\": true, with its reason in \"warnings\")",
                ))
            }
            Some(Value::Object(m)) => m,
            Some(_) => continue, // serde names the type
        };
        // A cost, rate or count below zero, which no run writes.
        for (key, v) in metrics {
            if let Some(x) = v.as_f64().filter(|x| *x < 0.0) {
                return Err(invalid(
                    at(&format!("metrics.{key}")),
                    format!(
                        "{}; a measured cost, rate or count is 0 or more",
                        compact(x)
                    ),
                ));
            }
        }
        let cost = |name: &str| metrics.get(name).and_then(Value::as_f64);
        if metrics.get("messages").and_then(Value::as_u64) == Some(0) {
            if let Some(name) = costs()
                .map(|h| h.key)
                .find(|c| cost(c).is_some_and(|x| x > 0.0))
            {
                return Err(invalid(
                    at(&format!("metrics.{name}")),
                    format!(
                        "{} over 0 messages (\"messages\": 0); a cost needs messages measured",
                        compact(cost(name).unwrap_or_default())
                    ),
                ));
            }
        }
        if !measured(r) {
            continue;
        }
        if r.get("repeats").and_then(Value::as_u64) == Some(0) {
            return Err(invalid(
                at("repeats"),
                "0 in a result that measured; it has 1 repeat or more (one that ran none is \"failed\": true, with its reason)",
            ));
        }
        // Two finite repeats of a metric make an interval (`stats::confidence_interval`), and
        // bytes/s is finite in every measured repeat: a written `ci95` with none beside 3 repeats
        // or more was emptied by hand. (A file without `ci95` predates it and is read.)
        let repeats = r.get("repeats").and_then(Value::as_u64).unwrap_or(0);
        if let Some(Value::Object(ci95)) = r.get("ci95") {
            if repeats >= 3 && ci95.values().all(Value::is_null) {
                return Err(invalid(
                    at("ci95"),
                    format!("no interval beside {repeats} repeats; a measured result of 2 repeats or more has its 95 % intervals"),
                ));
            }
        }
        if costs().all(|h| cost(h.key).is_none()) {
            return Err(invalid(
                at("metrics"),
                format!(
                    "no cost ({}) in a result that measured; one without is \"failed\": true, with its reason",
                    costs().map(|h| h.key).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        // The cost its size calls for, written as null: per byte, or per message for empty messages.
        let empty = r.get("size").and_then(Value::as_u64) == Some(0);
        let per = if empty { Per::Message } else { Per::Byte };
        if let Some(name) = costs_per(per).find(|c| metrics.get(*c).is_some_and(Value::is_null)) {
            let size = r.get("size").map_or_else(String::new, |s| match s {
                Value::Null => r
                    .get("size_model")
                    .map_or_else(String::new, |m| format!(" for size model {m}")),
                other => format!(" at size {other}"),
            });
            return Err(invalid(
                at(&format!("metrics.{name}")),
                format!("null{size} in a result that measured; one without its cost is \"failed\": true, with its reason"),
            ));
        }
    }
    Ok(())
}

/// The checks of the typed document.
pub fn check(doc: &Document) -> Result<(), Invalid> {
    if !(1..=SCHEMA_VERSION).contains(&doc.schema_version) {
        return Err(invalid(
            "schema_version",
            format!(
                "{}; this macbench reads results files of version 1 to {SCHEMA_VERSION}",
                doc.schema_version
            ),
        ));
    }
    // A file holds each scenario once: every reader pairs, names and plots results by their key,
    // so a second one would silently replace or shadow the first.
    let mut seen = std::collections::HashMap::new();
    for (i, r) in doc.results.iter().enumerate() {
        check_result(r).map_err(|e| Invalid {
            field: format!("results[{i}].{}", e.field),
            why: e.why,
        })?;
        if let Some(first) = seen.insert(r.key(), i) {
            return Err(invalid(
                format!("results[{i}]"),
                format!(
                    "the scenario {} again (first at results[{first}]); a results file holds each scenario once",
                    r.key()
                ),
            ));
        }
    }
    Ok(())
}

/// One result's typed invariants; the field is relative to the result.
fn check_result(r: &ResultEntry) -> Result<(), Invalid> {
    // Both names must be ones the registry lists; the error words differ only in the field.
    let algorithm_known = crate::mac::algorithm(&r.algorithm).is_some();
    let backend_known = crate::mac::backend(&r.backend).is_some();
    let registered = [
        ("algorithm", &r.algorithm, algorithm_known),
        ("backend", &r.backend, backend_known),
    ];
    for (field, name, known) in registered {
        if !known {
            return Err(invalid(
                field,
                format!("{name:?} is no {field} this macbench knows (`macbench list` names them)"),
            ));
        }
    }
    if crate::mac::Accel::from_name(&r.accel).is_none() {
        let names: Vec<&str> = crate::mac::Accel::ALL.iter().map(|a| a.name()).collect();
        return Err(invalid(
            "accel",
            format!(
                "{:?} is no acceleration this macbench knows ({})",
                r.accel,
                names.join(", ")
            ),
        ));
    }
    if r.sessions == 0 {
        return Err(invalid("sessions", "0; a result has 1 session or more"));
    }
    if r.sessions > MAX_SESSIONS {
        return Err(invalid(
            "sessions",
            format!("{}; a run has at most {MAX_SESSIONS} sessions", r.sessions),
        ));
    }
    // Before the intervals: their median check widens with the repeats, so a made-up count
    // (10¹⁵) would switch it off.
    if r.repeats > MAX_REPEAT {
        return Err(invalid(
            "repeats",
            format!(
                "{}; a run makes at most {MAX_REPEAT} repeats (--repeat, --max-repeat)",
                r.repeats
            ),
        ));
    }
    if let SizeLabel::Model(name) = &r.size {
        if name.trim().is_empty() {
            return Err(invalid("size_model", "empty; a size model has a name"));
        }
    }
    let measured = r.measured();
    let m = &r.metrics;
    for h in HEADLINE {
        let Some(ci) = r.ci95.get(h) else { continue };
        let field = format!("ci95.{}", h.key);
        check_interval(&field, ci.low, ci.high, "low", "high")?;
        if let (true, Some(median)) = (measured, (h.value)(m)) {
            check_holds_median(&field, ci, median, r.repeats)?;
        }
    }
    for h in HEADLINE {
        if let Some(s) = r.spread.get(h) {
            let field = format!("spread.{}", h.key);
            check_interval(&field, s.min, s.max, "min", "max")?;
            // The spread is the repeats' range and the metric their median: inside it, always.
            if let (true, Some(median)) = (measured, (h.value)(m)) {
                let slack = 1e-9 * s.max.abs().max(median.abs());
                if median < s.min - slack || median > s.max + slack {
                    return Err(invalid(
                        field,
                        format!(
                            "[{}, {}] does not hold the median {}; the spread is the range of the repeats the median is taken from",
                            compact(s.min),
                            compact(s.max),
                            compact(median)
                        ),
                    ));
                }
            }
        }
    }
    check_metric_values(m)?;
    check_possible(r, measured)
}

/// What no run can measure, whatever the machine: each bound follows from how `metrics::compute`
/// derives the figure (Jain's index ≤ 1, a session is one thread, p50 ≤ p99 of one sample).
fn check_possible(r: &ResultEntry, measured: bool) -> Result<(), Invalid> {
    check_bounds(r)?;
    if !measured {
        return Ok(());
    }
    check_measured(r)
}

/// What holds of any result, measured or not: percentiles in order, Jain's index at most 1, no more
/// cores kept busy than there are sessions.
fn check_bounds(r: &ResultEntry) -> Result<(), Invalid> {
    let m = &r.metrics;
    if let (Some(p50), Some(p99)) = (m.latency_p50_ns, m.latency_p99_ns) {
        if p50 > p99 {
            return Err(invalid(
                "metrics.latency_p50_ns",
                format!(
                    "{} is above latency_p99_ns {}; the 50th percentile of a sample is at most its 99th",
                    compact(p50),
                    compact(p99)
                ),
            ));
        }
    }
    if let Some(fairness) = m.fairness.filter(|f| *f > 1.0 + 1e-9) {
        return Err(invalid(
            "metrics.fairness",
            format!(
                "{}; Jain's index runs from 1/sessions to 1",
                compact(fairness)
            ),
        ));
    }
    // Each session is one thread, so the sessions' CPU time is at most `sessions` × the window
    // (10 % allowed for the snapshots of CPU and wall time not being simultaneous): utilisation
    // (over the core set) at most sessions / cores, parallelism at most sessions.
    let sessions = r.sessions as f64;
    if let Some(p) = m.parallelism.filter(|p| *p > 1.1 * sessions) {
        return Err(invalid(
            "metrics.parallelism",
            format!(
                "{}; {} session(s) keep at most {} cores busy",
                compact(p),
                r.sessions,
                r.sessions
            ),
        ));
    }
    let cores = r.core_count();
    if let Some(u) = crate::metrics::known(m.cpu_utilisation)
        .filter(|u| cores > 0 && *u > 1.1 * sessions / cores as f64)
    {
        return Err(invalid(
            "metrics.cpu_utilisation",
            format!(
                "{}; {} session(s) on {cores} core(s) use at most {} of the core set's time",
                compact(u),
                r.sessions,
                compact(sessions / cores as f64)
            ),
        ));
    }
    Ok(())
}

/// What holds of a result that measured: a window of some length, costs that are not all 0,
/// bytes that are messages × size, and no zero rate beside a cost.
fn check_measured(r: &ResultEntry) -> Result<(), Invalid> {
    let m = &r.metrics;
    if crate::metrics::known(m.window_seconds) == Some(0.0) {
        return Err(invalid(
            "metrics.window_seconds",
            "0 in a result that measured; its costs and rates are taken over a window of some length",
        ));
    }
    if m.messages == 0 {
        return Ok(());
    }
    let present: Vec<f64> = costs().filter_map(|h| (h.value)(m)).collect();
    if !present.is_empty() && present.iter().all(|c| *c == 0.0) {
        return Err(invalid(
            "metrics",
            format!(
                "every cost 0 over {} messages; tagging a message takes time",
                m.messages
            ),
        ));
    }
    if let SizeLabel::Bytes(size) = r.size {
        // Medians of an even number of repeats are means of the middle two, each rounded down to a
        // whole count: off by less than one message's bytes.
        let expected = m.messages as f64 * f64::from(size);
        if (m.bytes as f64 - expected).abs() > f64::from(size) + 1e-9 * expected {
            return Err(invalid(
                "metrics.bytes",
                format!(
                    "{} is not messages × size ({} × {size} = {}); every message of a fixed size has that size",
                    m.bytes,
                    m.messages,
                    compact(expected)
                ),
            ));
        }
    }
    // The rate of what the messages carry: bytes, or messages when they are empty.
    let per = if r.size.bytes() == Some(0) {
        Per::Message
    } else {
        Per::Byte
    };
    let rates = HEADLINE.iter().filter(|h| h.kind == Kind::Rate(per));
    if let Some(rate) = rates
        .filter(|h| (h.value)(m) == Some(0.0))
        .find(|_| present.iter().any(|c| *c > 0.0))
    {
        return Err(invalid(
            format!("metrics.{}", rate.key),
            format!(
                "0 beside a cost over {} messages; what was tagged in a window took some time",
                m.messages
            ),
        ));
    }
    Ok(())
}

/// Both ends finite and in order.
fn check_interval(field: &str, low: f64, high: f64, lo: &str, hi: &str) -> Result<(), Invalid> {
    if !low.is_finite() || !high.is_finite() {
        return Err(invalid(
            field,
            format!(
                "{lo} {}, {hi} {}; both ends are finite numbers",
                compact(low),
                compact(high)
            ),
        ));
    }
    if low > high {
        return Err(invalid(
            field,
            format!(
                "{lo} {} is above {hi} {}; an interval runs from its {lo} up to its {hi}",
                compact(low),
                compact(high)
            ),
        ));
    }
    Ok(())
}

/// The median within the interval, widened by what skewed repeats allow (module docs): for `repeats`
/// r, |median − centre| ≤ half-width · max(1, √(r − 1) / 1.96). A file that does not say its repeats
/// (0) is held to the interval itself.
fn check_holds_median(
    field: &str,
    ci: Interval,
    median: f64,
    repeats: usize,
) -> Result<(), Invalid> {
    let centre = (ci.low + ci.high) / 2.0;
    let half = (ci.high - ci.low) / 2.0;
    let allowed = ((repeats.max(1) - 1) as f64).sqrt() / 1.96;
    let reach = half * allowed.max(1.0);
    // Rounding of a written and read number: a few ulps of the values involved.
    let slack = 1e-9 * centre.abs().max(median.abs());
    if (median - centre).abs() > reach + slack {
        return Err(invalid(
            field,
            format!(
                "[{}, {}] does not hold the median {}; a 95 % interval holds the result it belongs to",
                compact(ci.low),
                compact(ci.high),
                compact(median)
            ),
        ));
    }
    Ok(())
}

/// Metrics that are numbers are finite (serde_json reads no NaN; a number too large for f64 is not
/// read as one either, but a reader may be handed a document built in memory).
fn check_metric_values(m: &Metrics) -> Result<(), Invalid> {
    for h in costs() {
        if let Some(x) = (h.value)(m).filter(|x| !x.is_finite() || *x < 0.0) {
            return Err(invalid(
                format!("metrics.{}", h.key),
                format!("{}; a cost is a finite number, 0 or more", compact(x)),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_may_sit_off_centre_as_far_as_skewed_repeats_allow() {
        let ci = Interval {
            low: 9.0,
            high: 11.0,
        };
        assert!(check_holds_median("x", ci, 10.9, 3).is_ok());
        assert!(check_holds_median("x", ci, 11.2, 3).is_err());
        // Nine repeats: √8 / 1.96 ≈ 1.44 half-widths.
        assert!(check_holds_median("x", ci, 11.4, 9).is_ok());
        assert!(check_holds_median("x", ci, 11.5, 9).is_err());
    }

    /// The bound holds for what `stats::confidence_interval` writes: the most skewed repeats (one
    /// outlier) for r = 2 … 40.
    #[test]
    fn the_bound_holds_for_the_writers_intervals() {
        for r in 2..=40usize {
            for outliers in 1..r {
                let values: Vec<f64> = (0..r)
                    .map(|i| if i < outliers { 100.0 } else { 1.0 })
                    .collect();
                let runs: Vec<(f64, Option<crate::stats::BatchEstimate>)> =
                    values.iter().map(|&v| (v, None)).collect();
                let ci = crate::stats::confidence_interval(&runs).unwrap();
                let mut sorted = values.clone();
                sorted.sort_by(f64::total_cmp);
                let median = if r % 2 == 1 {
                    sorted[r / 2]
                } else {
                    (sorted[r / 2 - 1] + sorted[r / 2]) / 2.0
                };
                assert!(
                    check_holds_median("x", ci, median, r).is_ok(),
                    "r {r}, {outliers} outliers: {ci:?} vs {median}"
                );
            }
        }
    }
}
