//! Figure data for the HTML report and `--png`: which figures one or more results files support, built
//! as plain [`Figure`] values (series, references, statistics, notes) and tested without any drawing.
//! [`super::html`] renders them and writes the page around them; `--png` renders the same figures.
//!
//! Which figures, and why:
//! - cycles/byte against message size, absolute and apparent, one series per function and file (Rashwan et al.
//!   Figs. 4–7). Several files from different machines simply add series, labelled by file.
//! - per-thread cycles/byte of one scenario, with Jain's fairness index (Figs. 8–11). By default the
//!   scenario with the most sessions, at its largest message size: that is where scheduling unfairness shows.
//!   Up to [`MAX_SESSIONS_FOR_BARS`] sessions, one bar per session; beyond that, bars shrink to slivers and
//!   the question becomes "how are the sessions spread", so the report draws the distribution instead: the
//!   empirical CDF of per-thread absolute and apparent cycles/byte, with quantiles, fairness and the sessions
//!   that processed nothing stated beside it.
//! - scaling: throughput and parallelism factor against sessions (or cores), for functions measured at
//!   several session counts on one host — usually several files from `run --sessions N`.
//! - hardware-assisted against software-only, where both accelerations of a function were measured.
//! - cycles/byte against ISA level (sw < sse < avx < avx2 < avx512, with hw, the library's own choice,
//!   as a marker of its own at the end), where a function was measured at an ISA level and at least
//!   one other acceleration: one line per function at one size, dispatch and session count, so what
//!   each rung of the ladder buys is read along the line.
//!
//! A figure without data is left out, and [`FigureSet::notes`] says why.
//!
//! Every point drawn from a result carries that result's uncertainty and warnings
//! ([`plots::Annotation`]): the 95 % confidence interval of the metric drawn (`ci95`), or, in a file
//! without one, the min–max of the repeats; and the codes of its validity warnings. A median without
//! its interval invites reading differences that are noise, and a `noisy` or `over-utilised` result
//! drawn like any other invites trusting it.

use super::plots::{
    self, Annotation, BarKind, ErrorBar, Figure, Kind, Reference, Series, Statistic, XScale,
};
use super::read::{host_key, Loaded};
use crate::mac::{Accel, FunctionId};
use crate::metrics::{known, Spread, ThreadMetrics};
use crate::results::ResultEntry;
use crate::stats::Interval;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// What the user chose.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// `ALG/BACKEND/ACCEL@SIZE` for the per-thread figures.
    pub scenario: Option<String>,
    /// Reproductions (`reproduce -o DIR`), one per host and study: their claims tables shown side by
    /// side, one column per host, and the paper's figures drawn from each host's steps.
    pub reproductions: Vec<Reproduction>,
    /// `macbench net` results files, each with its label: shown as a table of their own.
    pub net: Vec<(String, crate::results::net::NetFile)>,
    /// `macbench compare` results files, each with its label: shown as a table of their own.
    pub compare: Vec<(String, crate::results::compare::CompareFile)>,
}

/// One host's reproduction of a study: its claims table (`claims.json`, `host` naming its column) and
/// the directory whose results files are its steps (`sizes.json` is the step `sizes`).
#[derive(Debug, Clone)]
pub struct Reproduction {
    pub claims: crate::results::claims::ClaimsFile,
    pub dir: std::path::PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("--scenario {given:?} matches no result; valid: {valid}")]
    UnknownScenario { given: String, valid: String },
    #[error("--scenario {0:?} is not ALG/BACKEND/ACCEL@SIZE, e.g. hmac-sha256/openssl/hw@1024")]
    BadScenario(String),
    #[error("{0}")]
    Plot(#[from] plots::PlotError),
}

/// Figures and the notes that explain what was left out.
#[derive(Debug, Clone)]
pub struct FigureSet {
    pub figures: Vec<Figure>,
    pub notes: Vec<String>,
    /// The scenario of the per-thread figures: file label and result.
    pub chosen: Option<(String, ResultEntry)>,
}

const SIZE_AXIS: &str = "message size (bytes, log₂ scale)";

/// Most sessions drawn as one bar each. The plot pane is about 700 px wide and the apparent figure puts two
/// bars per session: at 32 sessions a bar is about 10 px, still a bar, and the table behind it still fits
/// on a screen. Past that the per-thread figures become a distribution.
pub const MAX_SESSIONS_FOR_BARS: usize = 32;

fn usable(r: &ResultEntry) -> bool {
    r.measured()
}

/// A metric drawn against message size, with where its uncertainty is recorded.
#[derive(Clone, Copy)]
struct SizeMetric {
    value: fn(&ResultEntry) -> Option<f64>,
    ci95: fn(&ResultEntry) -> Option<Interval>,
    spread: fn(&ResultEntry) -> Option<Spread>,
    /// A flag the metric itself raises beyond the result's warnings (energy on few meter steps).
    flag: fn(&ResultEntry) -> Option<&'static str>,
}

/// A headline metric, whose median, 95 % interval and spread a result records under its descriptor.
macro_rules! headline_metric {
    ($h:ident) => {
        SizeMetric {
            value: |r| (crate::metrics::$h.value)(&r.metrics),
            ci95: |r| r.ci95.get(&crate::metrics::$h),
            spread: |r| r.spread.get(&crate::metrics::$h),
            flag: |_| None,
        }
    };
}

const ABSOLUTE: SizeMetric = headline_metric!(ABSOLUTE_CYCLES_PER_BYTE);

/// Per-message latency p99, submission to tag, in µs (sampled; no interval is recorded for it).
const LATENCY_P99: SizeMetric = SizeMetric {
    value: |r| r.metrics.latency_p99_ns.map(|ns| ns / 1e3),
    ci95: |_| None,
    spread: |_| None,
    flag: |_| None,
};

const APPARENT: SizeMetric = headline_metric!(APPARENT_CYCLES_PER_BYTE);

/// Net energy per byte (`run --energy`, docs/methodology.md §9): the median of rounds with its 95 %
/// interval; a result on few meter steps is ringed like a warned one.
const ENERGY_PER_BYTE: SizeMetric = SizeMetric {
    value: |r| r.energy.as_ref()?.nj_per_byte.map(|e| e.median),
    ci95: |r| r.energy.as_ref()?.nj_per_byte?.ci95,
    spread: |_| None,
    flag: |r| {
        r.energy
            .as_ref()
            .filter(|e| e.few_steps)
            .map(|_| "few-energy-steps")
    },
};

/// What a point drawn from `r` carries: the bar of its 95 % interval, else of its repeats' min–max
/// (both multiplied by `scale`, the unit of the axis), and its warning codes.
pub(super) fn annotation(
    r: &ResultEntry,
    ci95: Option<Interval>,
    spread: Option<Spread>,
    scale: f64,
) -> Annotation {
    let interval = ci95
        .filter(|i| i.low.is_finite() && i.high.is_finite())
        .map(|i| ErrorBar {
            low: i.low * scale,
            high: i.high * scale,
            kind: BarKind::Ci95,
        });
    let range = spread.map(|s| ErrorBar {
        low: s.min * scale,
        high: s.max * scale,
        kind: BarKind::MinMax,
    });
    let mut warnings: Vec<String> = r
        .warnings
        .iter()
        .map(|w| w.code.as_str().to_string())
        .collect();
    warnings.sort();
    warnings.dedup();
    Annotation {
        bar: interval.or(range),
        warnings,
    }
}

/// A sentence under a figure on what its bars and rings mean, when it draws any.
fn explain_marks(fig: &mut Figure) {
    let kinds = fig.bar_kinds();
    let warned = fig.warning_counts();
    let mut sentences = Vec::new();
    match kinds.as_slice() {
        [] => {}
        [BarKind::Ci95] => sentences.push("Error bars: each result's 95 % confidence interval.".to_string()),
        [BarKind::MinMax] => sentences.push(
            "Error bars: the min–max of each result's repeats (these files record no 95 % confidence interval).".to_string(),
        ),
        _ => sentences.push(
            "Error bars: each result's 95 % confidence interval, or the min–max of its repeats where it has none.".to_string(),
        ),
    }
    if !warned.is_empty() {
        let codes: Vec<String> = warned.iter().map(|(c, n)| format!("{c} ×{n}")).collect();
        sentences.push(format!(
            "Ringed in red: results that carry a validity warning ({}; see Warnings).",
            codes.join(", ")
        ));
    }
    if !sentences.is_empty() {
        fig.notes.push(sentences.join(" "));
    }
}

/// Series of one metric against message size: one per (file, function, sessions/cores). A function keeps
/// its colour across files and configurations; line style and marker tell those apart.
fn per_size_series(files: &[Loaded], metric: SizeMetric) -> Vec<Series> {
    let many_files = files.len() > 1;
    // Orders follow first appearance, so legends list functions as the run did. A series is one
    // function in one file at one session/core configuration and one dispatch mode: results of the
    // same function under `single` and `burst:16` are different curves, never one zig-zag line.
    let mut functions: Vec<FunctionId> = Vec::new();
    let mut groups: Vec<(usize, usize, String, String)> = Vec::new();
    let mut keys: Vec<(FunctionId, usize)> = Vec::new();
    let mut points: Vec<Vec<(f64, f64, Annotation)>> = Vec::new();
    for (fi, file) in files.iter().enumerate() {
        for r in file.doc.results.iter().filter(|r| usable(r)) {
            let (Some(x), Some(y)) = (r.size.bytes(), (metric.value)(r)) else {
                continue;
            };
            let group = (
                fi,
                r.sessions,
                r.cores.clone(),
                r.scenario.dispatch.to_string(),
            );
            let gi = groups.iter().position(|g| *g == group).unwrap_or_else(|| {
                groups.push(group);
                groups.len() - 1
            });
            if !functions.contains(&r.function()) {
                functions.push(r.function());
            }
            let key = (r.function(), gi);
            let idx = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
                keys.push(key);
                points.push(Vec::new());
                keys.len() - 1
            });
            let mut marks = annotation(r, (metric.ci95)(r), (metric.spread)(r), 1.0);
            marks.warnings.extend((metric.flag)(r).map(String::from));
            points[idx].push((x as f64, y, marks));
        }
    }
    let mut configs: Vec<(usize, String)> = groups.iter().map(|g| (g.1, g.2.clone())).collect();
    configs.sort();
    configs.dedup();
    let show_config = configs.len() > 1;
    let mut dispatches: Vec<&str> = groups.iter().map(|g| g.3.as_str()).collect();
    dispatches.sort();
    dispatches.dedup();
    let show_dispatch = dispatches.len() > 1;
    keys.into_iter()
        .zip(points)
        .map(|((function, gi), mut pts)| {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (fi, sessions, cores, dispatch) = &groups[gi];
            let mut name = function.to_string();
            if show_dispatch {
                let _ = write!(name, " {dispatch}");
            }
            if show_config {
                let _ = write!(name, " n={sessions} C={cores}");
            }
            if many_files {
                let _ = write!(name, " [{}]", files[*fi].label);
            }
            let (points, annotations) = pts.into_iter().map(|(x, y, a)| ((x, y), a)).unzip();
            Series {
                name,
                points,
                color: functions.iter().position(|f| *f == function).unwrap_or(0),
                variant: gi,
                annotations,
            }
        })
        .collect()
}

fn size_figure(
    files: &[Loaded],
    id: &str,
    title: &str,
    y_label: &str,
    metric: SizeMetric,
) -> Figure {
    line_figure(
        id,
        title,
        "one colour per function; line style and marker tell files, session/core configurations and dispatch modes apart",
        (SIZE_AXIS, y_label),
        XScale::Log2,
        per_size_series(files, metric),
    )
}

/// A line figure of `series`, its axes labelled `(x, y)`, with a note on what its bars and rings
/// mean ([`explain_marks`]).
pub(super) fn line_figure(
    id: &str,
    title: impl Into<String>,
    subtitle: &str,
    (x_label, y_label): (&str, &str),
    scale: XScale,
    series: Vec<Series>,
) -> Figure {
    let mut fig = Figure {
        id: id.into(),
        title: title.into(),
        subtitle: subtitle.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        kind: Kind::Lines(scale),
        series,
        references: vec![],
        notes: vec![],
        statistics: vec![],
    };
    explain_marks(&mut fig);
    fig
}

/// Pick the per-thread scenario: the user's, or the one with most sessions at its largest size.
fn choose_scenario(
    files: &[Loaded],
    wanted: Option<&str>,
) -> Result<Option<(String, ResultEntry)>, ReportError> {
    let candidates = files.iter().flat_map(|f| {
        f.doc
            .results
            .iter()
            .filter(|r| usable(r) && !r.threads.is_empty())
            .map(move |r| (f.label.clone(), r))
    });
    match wanted {
        Some(w) => {
            let (function, size) = w
                .split_once('@')
                .ok_or_else(|| ReportError::BadScenario(w.to_string()))?;
            if function.split('/').count() != 3 || size.is_empty() {
                return Err(ReportError::BadScenario(w.to_string()));
            }
            let found = candidates
                .clone()
                .filter(|(_, r)| r.scenario_key() == w)
                .max_by_key(|(_, r)| r.sessions);
            match found {
                Some((label, r)) => Ok(Some((label, r.clone()))),
                None => {
                    let mut valid: Vec<String> =
                        candidates.map(|(_, r)| r.scenario_key()).collect();
                    valid.sort();
                    valid.dedup();
                    let shown = if valid.len() > 12 {
                        format!("{}, … ({} in all)", valid[..12].join(", "), valid.len())
                    } else if valid.is_empty() {
                        "none (no result has per-thread data)".to_string()
                    } else {
                        valid.join(", ")
                    };
                    Err(ReportError::UnknownScenario {
                        given: w.to_string(),
                        valid: shown,
                    })
                }
            }
        }
        None => {
            // Most sessions first, then the largest fixed size; the first such result on ties.
            let mut best: Option<(String, &ResultEntry)> = None;
            for (label, r) in candidates {
                let rank = |r: &ResultEntry| (r.sessions, r.size.bytes().unwrap_or(0));
                if best.as_ref().is_none_or(|(_, b)| rank(r) > rank(b)) {
                    best = Some((label, r));
                }
            }
            Ok(best.map(|(l, r)| (l, r.clone())))
        }
    }
}

fn thread_figures(label: &str, r: &ResultEntry, many_files: bool) -> Vec<Figure> {
    if r.threads.len() > MAX_SESSIONS_FOR_BARS {
        return vec![thread_distribution(label, r, many_files)];
    }
    let fairness = r
        .metrics
        .fairness
        .map_or("-".to_string(), |f| format!("{f:.3}"));
    let head = format!(
        "{} session{} on cores {}, Jain's fairness {fairness}",
        r.sessions,
        if r.sessions == 1 { "" } else { "s" },
        r.cores
    );
    let series = |name: &str, index: usize, f: fn(&ThreadMetrics) -> Option<f64>| {
        Series::new(
            name,
            r.threads
                .iter()
                .filter_map(|t| f(t).map(|y| (t.session as f64, y)))
                .collect(),
            index,
        )
    };
    let subtitle = format!("{}{}: {head}", r.scenario_key(), source(label, many_files));
    let reference = |name: &str, v: Option<f64>| {
        v.map(|y| Reference {
            name: name.into(),
            y,
        })
    };
    vec![
        Figure {
            id: "threads-absolute".into(),
            title: "Per-thread absolute cycles/byte (thread CPU time)".into(),
            subtitle: subtitle.clone(),
            x_label: "session (thread)".into(),
            y_label: "absolute cycles/byte (f·c_i / b_i)".into(),
            kind: Kind::Bars,
            series: vec![series("absolute (thread CPU time)", 0, |t| {
                t.absolute_cycles_per_byte
            })],
            references: reference("aggregate absolute", r.metrics.absolute_cycles_per_byte)
                .into_iter()
                .collect(),
            notes: vec![],
            statistics: vec![],
        },
        Figure {
            id: "threads-apparent".into(),
            title: "Per-thread wall-clock and apparent cycles/byte (window wall time)".into(),
            subtitle,
            x_label: "session (thread)".into(),
            y_label: "cycles/byte (window wall time)".into(),
            kind: Kind::Bars,
            series: vec![
                series("wall-clock (f·W / b_i)", 0, |t| {
                    t.wall_clock_cycles_per_byte
                }),
                series("apparent (f·W / (n·b_i))", 1, |t| {
                    t.apparent_cycles_per_byte
                }),
            ],
            references: reference("aggregate apparent", r.metrics.apparent_cycles_per_byte)
                .into_iter()
                .collect(),
            notes: vec![],
            statistics: vec![],
        },
    ]
}

/// The quantiles stated for a distribution, as (name, q).
const QUANTILES: [(&str, f64); 5] = [
    ("min", 0.0),
    ("p10", 0.1),
    ("median", 0.5),
    ("p90", 0.9),
    ("max", 1.0),
];

/// Per-thread figure of many sessions: the empirical CDF of per-thread absolute and apparent cycles/byte.
/// Apparent rather than wall-clock: wall-clock is exactly n × apparent, so it has the same shape, and
/// apparent sits on the same scale as absolute, so both fit one axis.
fn thread_distribution(label: &str, r: &ResultEntry, many_files: bool) -> Figure {
    type Metric = fn(&ThreadMetrics) -> Option<f64>;
    let metrics: [(&str, Metric); 2] = [
        ("absolute (thread CPU time, f·c_i / b_i)", |t| {
            t.absolute_cycles_per_byte
        }),
        ("apparent (window wall time, f·W / (n·b_i))", |t| {
            t.apparent_cycles_per_byte
        }),
    ];
    let sessions = r.threads.len();
    // The recorded index is the one the results table and the bar figures show; an older file without it
    // still gets one, from the bytes per session drawn here.
    let fairness = r.metrics.fairness.or_else(|| {
        crate::metrics::jain_index(&r.threads.iter().map(|t| t.bytes as f64).collect::<Vec<_>>())
    });
    let fairness_text = fairness.map_or("-".to_string(), |f| format!("{f:.3}"));
    let mut series = Vec::new();
    let mut statistics = Vec::new();
    let mut notes = Vec::new();
    let mut idle_counts = Vec::new();
    for (i, (name, metric)) in metrics.into_iter().enumerate() {
        let mut values: Vec<f64> = r
            .threads
            .iter()
            .filter_map(metric)
            .filter(|v| v.is_finite())
            .collect();
        values.sort_by(f64::total_cmp);
        idle_counts.push(sessions - values.len());
        notes.extend(state_quantiles(name, &values, &mut statistics));
        series.push(cdf_series(name, i, &values));
    }
    let all = "all sessions";
    if let Some(f) = fairness {
        statistics.push(Statistic {
            of: all.into(),
            name: "Jain's fairness index (bytes per session)".into(),
            value: f,
            count: false,
        });
    }
    notes.push(format!(
        "Jain's fairness index of bytes per session: {fairness_text}."
    ));
    // Sessions without a value would otherwise just be missing from the curves: say how many.
    let idle = idle_counts.iter().copied().max().unwrap_or(0);
    statistics.push(Statistic {
        of: all.into(),
        name: format!("sessions that processed nothing (of {sessions})"),
        value: idle as f64,
        count: true,
    });
    notes.push(idle_note(sessions, &idle_counts));
    Figure {
        id: "threads-cdf".into(),
        title: "Distribution of per-thread cycles/byte across sessions".into(),
        subtitle: format!(
            "{}{}: {sessions} sessions on cores {}, Jain's fairness {fairness_text}; {idle} processed nothing",
            r.scenario_key(),
            source(label, many_files),
            r.cores
        ),
        x_label: "cycles/byte of one session".into(),
        y_label: "fraction of sessions ≤ x".into(),
        kind: Kind::Cdf,
        series,
        references: vec![],
        notes,
        statistics,
    }
}

/// The [`QUANTILES`] of one metric's sorted `values`, added to `statistics`, and the sentence that
/// states them (none without values).
fn state_quantiles(name: &str, values: &[f64], statistics: &mut Vec<Statistic>) -> Option<String> {
    let mut stated = Vec::new();
    for (stat, q) in QUANTILES {
        if let Some(v) = crate::metrics::quantile(values, q) {
            stated.push(format!("{stat} {}", num(v)));
            statistics.push(Statistic {
                of: name.into(),
                name: stat.into(),
                value: v,
                count: false,
            });
        }
    }
    (!stated.is_empty()).then(|| {
        format!(
            "{name}: {} cycles/byte over {} sessions.",
            stated.join(", "),
            values.len()
        )
    })
}

/// The empirical distribution of sorted `values`: each paired with the fraction of values ≤ it.
fn cdf_series(name: &str, index: usize, values: &[f64]) -> Series {
    let count = values.len() as f64;
    Series {
        name: name.into(),
        points: values
            .iter()
            .enumerate()
            .map(|(k, &v)| (v, (k + 1) as f64 / count))
            .collect(),
        color: index,
        variant: index,
        annotations: Vec::new(),
    }
}

/// What the distribution leaves out: the sessions without a value, of `sessions`, per metric
/// (absolute, apparent).
fn idle_note(sessions: usize, idle_counts: &[usize]) -> String {
    let idle = idle_counts.iter().copied().max().unwrap_or(0);
    let idle_text = format!("{idle} of {sessions} sessions processed nothing in the window");
    if idle == 0 {
        format!("Every one of the {sessions} sessions processed data in the window.")
    } else if idle_counts.iter().all(|&c| c == idle) {
        format!(
            "{idle_text} (their cycles/byte is undefined): they are not drawn, and the fractions are of the {} that did.",
            sessions - idle
        )
    } else {
        format!(
            "{idle_text} (absolute: {}, apparent: {} without a value): they are not drawn, and each curve's fractions are of the sessions it draws.",
            idle_counts[0], idle_counts[1]
        )
    }
}

/// The file a per-thread figure's scenario comes from, as its subtitle names it when there are several.
fn source(label: &str, many_files: bool) -> String {
    if many_files {
        format!(" [{label}]")
    } else {
        String::new()
    }
}

/// One function's scaling at one size on one host: x (sessions or cores) → (throughput in bytes/s,
/// parallelism, what the result carries: the bar in bytes/s).
type ScalingPoints = BTreeMap<usize, (f64, Option<f64>, Annotation)>;

/// Every usable result with a throughput, by (host, function, size), as [`scaling_figures`] reads
/// them: against sessions and against cores.
struct ScalingData {
    /// Host keys, indexed by the host of each key.
    hosts: Vec<String>,
    /// Functions in order of first appearance: the colours.
    order: Vec<FunctionId>,
    by_sessions: BTreeMap<(usize, FunctionId, u64), ScalingPoints>,
    by_cores: BTreeMap<(usize, FunctionId, u64), ScalingPoints>,
}

impl ScalingData {
    fn collect(files: &[Loaded]) -> ScalingData {
        let mut data = ScalingData {
            hosts: Vec::new(),
            order: Vec::new(),
            by_sessions: BTreeMap::new(),
            by_cores: BTreeMap::new(),
        };
        for f in files {
            let host = host_key(&f.doc);
            let hi = match data.hosts.iter().position(|h| *h == host) {
                Some(i) => i,
                None => {
                    data.hosts.push(host);
                    data.hosts.len() - 1
                }
            };
            for r in f.doc.results.iter().filter(|r| usable(r)) {
                let (Some(size), Some(bps)) = (r.size.bytes(), known(r.metrics.bytes_per_second))
                else {
                    continue;
                };
                if !data.order.contains(&r.function()) {
                    data.order.push(r.function());
                }
                let key = (hi, r.function(), size);
                let marks = annotation(r, r.ci95.bytes_per_second, r.spread.bytes_per_second, 1.0);
                data.by_sessions
                    .entry(key.clone())
                    .or_default()
                    .entry(r.sessions)
                    .or_insert((bps, r.metrics.parallelism, marks.clone()));
                data.by_cores
                    .entry(key)
                    .or_default()
                    .entry(r.core_count())
                    .or_insert((bps, r.metrics.parallelism, marks));
            }
        }
        data
    }
}

/// Scaling figures: per host, per function, at the size with the most session (or core) counts.
fn scaling_figures(files: &[Loaded]) -> Result<Vec<Figure>, String> {
    let ScalingData {
        hosts,
        order,
        by_sessions,
        by_cores,
    } = ScalingData::collect(files);
    let varies =
        |m: &BTreeMap<(usize, FunctionId, u64), ScalingPoints>| m.values().any(|p| p.len() > 1);
    let (axis, data) = if varies(&by_sessions) {
        ("sessions (concurrent threads)", by_sessions)
    } else if varies(&by_cores) {
        ("cores in the core set", by_cores)
    } else {
        return Err("Scaling figures omitted: every function and size was measured at one session count and one core count. Run `macbench run --sessions N` for several N (or several --cores) and pass all the files.".into());
    };
    // Per (host, function): the size with the most x values, the largest on ties.
    let mut chosen: BTreeMap<(usize, FunctionId), (u64, &ScalingPoints)> = BTreeMap::new();
    for ((hi, function, size), pts) in &data {
        if pts.len() < 2 {
            continue;
        }
        let entry = chosen
            .entry((*hi, function.clone()))
            .or_insert((*size, pts));
        if (pts.len(), *size) > (entry.1.len(), entry.0) {
            *entry = (*size, pts);
        }
    }
    let mut keys: Vec<&(usize, FunctionId)> = chosen.keys().collect();
    keys.sort_by_key(|(hi, f)| (*hi, order.iter().position(|o| o == f)));
    let many_hosts = hosts.len() > 1;
    let mut throughput = Vec::new();
    let mut parallelism = Vec::new();
    for key in keys {
        let (size, pts) = chosen[key];
        let mut name = format!("{} @{size} B", key.1);
        if many_hosts {
            let _ = write!(name, " [{}]", hosts[key.0]);
        }
        let color = order.iter().position(|o| *o == key.1).unwrap_or(0);
        throughput.push(throughput_series(name.clone(), color, key.0, pts));
        parallelism.push(parallelism_series(name, color, key.0, pts));
    }
    let subtitle = "each function at the message size measured at the most session counts; one line style per host";
    let quantity = axis.split(' ').next().unwrap_or(axis);
    Ok(vec![
        line_figure(
            "scaling-throughput",
            format!("Throughput against {quantity}"),
            subtitle,
            (axis, "throughput, all sessions (MB/s)"),
            XScale::Integer,
            throughput,
        ),
        line_figure(
            "scaling-parallelism",
            format!("Parallelism factor against {quantity}"),
            subtitle,
            (axis, "parallelism (absolute / apparent ≈ cores used)"),
            XScale::Integer,
            parallelism,
        ),
    ])
}

/// Throughput against x in MB/s, each point with its bar (scaled to MB/s) and warnings.
fn throughput_series(name: String, color: usize, variant: usize, pts: &ScalingPoints) -> Series {
    Series {
        name,
        points: pts.iter().map(|(x, v)| (*x as f64, v.0 / 1e6)).collect(),
        color,
        variant,
        // The axis is in MB/s.
        annotations: pts
            .values()
            .map(|v| Annotation {
                bar: v.2.bar.map(|b| ErrorBar {
                    low: b.low / 1e6,
                    high: b.high / 1e6,
                    kind: b.kind,
                }),
                warnings: v.2.warnings.clone(),
            })
            .collect(),
    }
}

/// Parallelism against x, where the results have it. Parallelism has no interval of its own; its
/// points carry the warnings.
fn parallelism_series(name: String, color: usize, variant: usize, pts: &ScalingPoints) -> Series {
    let (points, annotations) = pts
        .iter()
        .filter_map(|(x, v)| {
            v.1.map(|p| {
                (
                    (*x as f64, p),
                    Annotation {
                        bar: None,
                        warnings: v.2.warnings.clone(),
                    },
                )
            })
        })
        .unzip();
    Series {
        name,
        points,
        color,
        variant,
        annotations,
    }
}

/// Hardware-assisted against software-only: functions measured with both accelerations.
fn accel_figure(files: &[Loaded]) -> Option<Figure> {
    let many_files = files.len() > 1;
    let mut series = Vec::new();
    for f in files {
        let mut pairs: Vec<(String, String, usize)> = Vec::new();
        for r in f
            .doc
            .results
            .iter()
            .filter(|r| usable(r) && r.accel == "hw")
        {
            let has_sw = f.doc.results.iter().any(|s| {
                usable(s)
                    && s.accel == "sw"
                    && s.algorithm == r.algorithm
                    && s.backend == r.backend
                    && s.sessions == r.sessions
            });
            let key = (r.algorithm.clone(), r.backend.clone(), r.sessions);
            if has_sw && !pairs.contains(&key) {
                pairs.push(key);
            }
        }
        for (alg, backend, sessions) in pairs {
            for accel in ["hw", "sw"] {
                let mut pts: Vec<((f64, f64), Annotation)> = f
                    .doc
                    .results
                    .iter()
                    .filter(|r| {
                        usable(r)
                            && r.algorithm == alg
                            && r.backend == backend
                            && r.accel == accel
                            && r.sessions == sessions
                    })
                    .filter_map(|r| {
                        let point = (r.size.bytes()? as f64, (ABSOLUTE.value)(r)?);
                        let marks = annotation(r, (ABSOLUTE.ci95)(r), (ABSOLUTE.spread)(r), 1.0);
                        Some((point, marks))
                    })
                    .collect();
                pts.sort_by(|a, b| a.0 .0.total_cmp(&b.0 .0));
                let (pts, annotations): (Vec<(f64, f64)>, Vec<Annotation>) =
                    pts.into_iter().unzip();
                let mut name = format!("{alg}/{backend}/{accel} n={sessions}");
                if many_files {
                    let _ = write!(name, " [{}]", f.label);
                }
                let color = series.len() / 2;
                series.push(Series {
                    name,
                    points: pts,
                    color,
                    variant: usize::from(accel == "sw"),
                    annotations,
                });
            }
        }
    }
    (!series.is_empty()).then(|| {
        line_figure(
            "accel-hw-sw",
            "Hardware-assisted (hw) against software-only (sw): absolute cycles/byte",
            "solid: hw (the backend may use AES-NI, SHA-NI, …); dashed: sw (those extensions switched off)",
            (SIZE_AXIS, "absolute cycles/byte (CPU time)"),
            XScale::Log2,
            series,
        )
    })
}

/// The steps of the ISA-ladder figure's x axis: the ladder in order, then `hw` apart from it (it is
/// whichever path the library picks, not a rung).
pub const LADDER_AXIS: &[&str] = &["sw", "sse", "avx", "avx2", "avx512", "hw"];

/// Where an acceleration a results file names sits on [`LADDER_AXIS`]; `None` for one this build
/// does not know.
fn ladder_x(accel: &str) -> Option<f64> {
    let accel = Accel::from_name(accel)?;
    Some(accel.ladder_rank().unwrap_or(LADDER_AXIS.len() - 1) as f64)
}

/// Cycles/byte against ISA level: functions measured at an ISA level and at least one other
/// acceleration, each at one size, dispatch and session count.
fn ladder_figure(files: &[Loaded]) -> Option<Figure> {
    let many_files = files.len() > 1;
    let mut series = Vec::new();
    let mut color = 0;
    for f in files {
        type Key = (String, String, usize, u64, String);
        let mut groups: Vec<(Key, Vec<&ResultEntry>)> = Vec::new();
        for r in f.doc.results.iter().filter(|r| usable(r)) {
            let (Some(bytes), Some(_)) = (r.size.bytes(), ladder_x(&r.accel)) else {
                continue;
            };
            let key = (
                r.algorithm.clone(),
                r.backend.clone(),
                r.sessions,
                bytes,
                r.scenario.dispatch.to_string(),
            );
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push(r),
                None => groups.push((key, vec![r])),
            }
        }
        for ((alg, backend, sessions, bytes, dispatch), members) in groups {
            let accels: BTreeSet<&str> = members.iter().map(|r| r.accel.as_str()).collect();
            let on_a_level = accels
                .iter()
                .any(|a| Accel::from_name(a).is_some_and(Accel::is_isa_level));
            if accels.len() < 2 || !on_a_level {
                continue;
            }
            let point = |r: &&ResultEntry| {
                let x = ladder_x(&r.accel)?;
                let y = (ABSOLUTE.value)(r)?;
                let marks = annotation(r, (ABSOLUTE.ci95)(r), (ABSOLUTE.spread)(r), 1.0);
                Some(((x, y), marks))
            };
            let mut name = format!(
                "{alg}/{backend} {} B {dispatch} n={sessions}",
                plots::size_text(bytes as f64)
            );
            if many_files {
                let _ = write!(name, " [{}]", f.label);
            }
            // The rungs measured, joined by a line; hw beside them as a marker of its own.
            let mut ladder: Vec<_> = members
                .iter()
                .filter(|r| r.accel != "hw")
                .filter_map(point)
                .collect();
            ladder.sort_by(|a, b| a.0 .0.total_cmp(&b.0 .0));
            let hw: Vec<_> = members
                .iter()
                .filter(|r| r.accel == "hw")
                .filter_map(point)
                .collect();
            for (points, suffix, variant) in [(ladder, "", 0), (hw, " hw", 1)] {
                if points.is_empty() {
                    continue;
                }
                let (points, annotations): (Vec<(f64, f64)>, Vec<Annotation>) =
                    points.into_iter().unzip();
                series.push(Series {
                    name: format!("{name}{suffix}"),
                    points,
                    color,
                    variant,
                    annotations,
                });
            }
            color += 1;
        }
    }
    (!series.is_empty()).then(|| {
        line_figure(
            "accel-ladder",
            "Cycles/byte against ISA level: absolute cycles/byte",
            "a line per function, size, dispatch, sessions: sw < sse < avx < avx2 < avx512; triangle: hw (library's choice)",
            (
                "ISA level (ladder order; hw: the library's default)",
                "absolute cycles/byte (CPU time)",
            ),
            XScale::Categories(LADDER_AXIS),
            series,
        )
    })
}

/// Every figure the results support, in page order, and notes on those left out.
pub fn figures(files: &[Loaded], options: &ReportOptions) -> Result<FigureSet, ReportError> {
    let mut figs = Vec::new();
    let mut notes = Vec::new();
    let cpb = [
        size_figure(
            files,
            "cpb-absolute",
            "Absolute cycles/byte (CPU time of all sessions) against message size",
            "absolute cycles/byte (f·Σc_i / Σb_i)",
            ABSOLUTE,
        ),
        size_figure(
            files,
            "cpb-apparent",
            "Apparent cycles/byte (wall clock, all sessions together) against message size",
            "apparent cycles/byte (f·W / Σb_i)",
            APPARENT,
        ),
    ];
    for f in cpb {
        if f.is_empty() {
            notes.push(format!(
                "{}: omitted: no usable result with a fixed message size.",
                f.title
            ));
        } else {
            figs.push(f);
        }
    }
    // Energy only where a meter measured it: no figure and no note otherwise, since most machines
    // (and every VM) have none.
    let energy = size_figure(
        files,
        "energy-per-byte",
        "Net energy per byte (idle and harness subtracted) against message size",
        "net energy nJ/byte (median of rounds)",
        ENERGY_PER_BYTE,
    );
    if !energy.is_empty() {
        figs.push(energy);
    }
    // Batching trades latency for throughput (docs/methodology.md §5): where a file has a dispatch
    // mode other than `single`, the latency each mode cost beside the cycles it saved.
    let batched = files.iter().any(|f| {
        f.doc
            .results
            .iter()
            .any(|r| r.scenario.dispatch != crate::engine::Dispatch::Single)
    });
    let latency = size_figure(
        files,
        "latency-p99",
        "Per-message latency p99 (submission to tag) against message size",
        "latency p99 (µs; sampled, one batch in 64)",
        LATENCY_P99,
    );
    if batched && !latency.is_empty() {
        figs.push(latency);
    } else {
        notes.push("Latency against message size omitted: every result dispatched one message at a time (run with e.g. --dispatch single,burst:16,inflight:16).".into());
    }
    let chosen = choose_scenario(files, options.scenario.as_deref())?;
    match &chosen {
        Some((label, r)) => figs.extend(thread_figures(label, r, files.len() > 1)),
        None => {
            notes.push("Per-thread figures omitted: no usable result has per-thread data.".into())
        }
    }
    match scaling_figures(files) {
        Ok(f) => figs.extend(f),
        Err(note) => notes.push(note),
    }
    match accel_figure(files) {
        Some(f) => figs.push(f),
        None => notes.push("Hardware-assisted against software-only omitted: no function was measured with both --accel hw and sw (run with --accel hw,sw where a backend offers a software-only variant).".into()),
    }
    match ladder_figure(files) {
        Some(f) => figs.push(f),
        None => notes.push("Cycles/byte against ISA level omitted: no function was measured at an ISA level and another acceleration (run e.g. --backend ipsecmb --accel sse,avx,avx2,avx512,hw).".into()),
    }
    Ok(FigureSet {
        figures: figs,
        notes,
        chosen,
    })
}

/// Shown text of a number: 4 significant digits, at most 3 decimals, thousands without decimals.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        // Sizes, sessions, counts: an integer reads as one ("16", not "16.00").
        format!("{v:.0}")
    } else if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod ladder_tests {
    use super::{ladder_x, LADDER_AXIS};
    use crate::mac::Accel;

    #[test]
    fn every_acceleration_sits_on_its_own_labelled_step() {
        for accel in Accel::ALL {
            let x = ladder_x(accel.name()).unwrap();
            assert_eq!(LADDER_AXIS[x as usize], accel.name());
        }
        assert_eq!(ladder_x("turbo"), None);
    }
}

#[cfg(test)]
mod number_tests {
    use super::num;

    #[test]
    fn integers_print_as_integers_and_fractions_by_magnitude() {
        for (value, shown) in [
            (16.0, "16"),
            (65536.0, "65536"),
            (1.565, "1.565"),
            (40.49, "40.49"),
            (128.5, "128.5"),
            (f64::NAN, "-"),
        ] {
            assert_eq!(num(value), shown);
        }
    }
}
