//! A reproduction's paper figures: each [`PaperFigure`] a study declares, drawn from one host's
//! steps as a plain [`Figure`] (or a table), or the reason it cannot be drawn there.
//!
//! The study says what the paper plots and from which step (`crate::reproduce`); this module only
//! turns that into the series the renderer draws, so the same figure comes out for every host and a
//! test can check, on constructed results, that each figure reads the step it names. Each figure is
//! named after the paper's (`fig04-absolute-hw`), with the host's label added when a report shows
//! several hosts side by side.

use super::figures::{annotation, line_figure};
use super::plots::{Annotation, Figure, Kind, Reference, Series, XScale};
use crate::metrics::ThreadMetrics;
use crate::reproduce::{Evidence, PaperFigure, Plot, Point, Table};
use crate::results::{ResultEntry, SizeLabel};
use std::fmt::Write as _;

/// A paper figure as one host's results draw it.
#[derive(Debug, Clone)]
pub enum Drawn {
    Figure(Figure),
    Table(Table),
    /// Why this host's results cannot draw it: a step missing, nothing measured there, a machine
    /// without what the figure needs.
    CannotDraw(String),
}

/// One paper figure being drawn: its declaration, the host's steps it reads, and its id.
struct Drawing<'a> {
    decl: &'a PaperFigure,
    evidence: &'a Evidence,
    id: &'a str,
}

/// `decl` drawn from `evidence` (one host's steps), its figure given the id `id`.
pub fn draw(decl: &PaperFigure, evidence: &Evidence, id: &str) -> Drawn {
    let drawing = Drawing { decl, evidence, id };
    let drawn = match &decl.plot {
        Plot::AgainstSize {
            step,
            metric,
            accel,
            functions,
        } => against_size(&drawing, step, *metric, accel, functions),
        Plot::PerThread {
            step,
            algorithm,
            accel,
            size,
            min_cpus,
        } => {
            let point = Point::new(algorithm, accel, SizeLabel::Bytes(*size));
            per_thread(&drawing, step, &point, *min_cpus)
        }
        Plot::Table { build, .. } => build(evidence).map(Drawn::Table),
    };
    drawn.unwrap_or_else(Drawn::CannotDraw)
}

/// Why `step` has nothing to draw: missing, or no usable result.
fn missing(evidence: &Evidence, step: &str) -> String {
    evidence.missing(step).detail().to_string()
}

/// A line per function (and dispatch mode, where there are several) of `metric` against size.
fn against_size(
    drawing: &Drawing,
    step: &str,
    metric: crate::reproduce::Metric,
    accel: &str,
    functions: &[&str],
) -> Result<Drawn, String> {
    let Drawing { decl, evidence, id } = *drawing;
    let results = evidence.results(step);
    if results.is_empty() {
        return Err(missing(evidence, step));
    }
    let wanted: Vec<&ResultEntry> = results
        .into_iter()
        .filter(|r| r.accel == accel && functions.contains(&r.algorithm.as_str()))
        .filter(|r| r.size.bytes().is_some() && metric.of(r).is_some())
        .collect();
    if wanted.is_empty() {
        return Err(format!(
            "no usable result at {accel} of {} in the `{step}` runs (see the warnings and the run's list of functions unavailable here)",
            functions.join(", ")
        ));
    }
    let mut dispatches: Vec<String> = wanted
        .iter()
        .map(|r| r.scenario.dispatch.to_string())
        .collect();
    dispatches.sort();
    dispatches.dedup();
    let mut series = Vec::new();
    for (color, algorithm) in functions.iter().enumerate() {
        for (variant, dispatch) in dispatches.iter().enumerate() {
            let mut points: Vec<((f64, f64), Annotation)> = wanted
                .iter()
                .filter(|r| {
                    r.algorithm == *algorithm && r.scenario.dispatch.to_string() == *dispatch
                })
                .filter_map(|r| {
                    let point = (r.size.bytes()? as f64, metric.of(r)?);
                    Some((point, marks(r, metric)))
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            points.sort_by(|a, b| a.0 .0.total_cmp(&b.0 .0));
            let mut name = (*algorithm).to_string();
            if dispatches.len() > 1 {
                let _ = write!(name, " {dispatch}");
            }
            let (points, annotations) = points.into_iter().unzip();
            series.push(Series {
                name,
                points,
                color,
                variant,
                annotations,
            });
        }
    }
    let mut fig = line_figure(
        id,
        format!("{} — {}", decl.paper, decl.title),
        &format!("from the {step} step, {accel}: {}", backends(&wanted)),
        ("message size (bytes, log₂ scale)", metric.axis()),
        XScale::Log2,
        series,
    );
    fig.notes.extend(absent(functions, &wanted));
    Ok(Drawn::Figure(fig))
}

/// What a point of `metric` from `r` carries: its 95 % interval (else its repeats' min–max) and its
/// warnings, as the report's other figures mark them.
fn marks(r: &ResultEntry, metric: crate::reproduce::Metric) -> Annotation {
    use crate::reproduce::Metric;
    match metric {
        Metric::AbsoluteCyclesPerByte => annotation(
            r,
            r.ci95.absolute_cycles_per_byte,
            r.spread.absolute_cycles_per_byte,
            1.0,
        ),
        Metric::AbsoluteCyclesPerMessage => {
            annotation(r, r.ci95.absolute_cycles_per_message, None, 1.0)
        }
    }
}

/// The backends the results were measured with, for a subtitle.
fn backends(results: &[&ResultEntry]) -> String {
    let mut names: Vec<&str> = results.iter().map(|r| r.backend.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    format!("backend {}", names.join(", "))
}

/// A sentence naming the functions the paper draws that these results do not have.
fn absent(functions: &[&str], results: &[&ResultEntry]) -> Option<String> {
    let gone: Vec<&str> = functions
        .iter()
        .copied()
        .filter(|f| !results.iter().any(|r| r.algorithm == *f))
        .collect();
    (!gone.is_empty()).then(|| {
        format!(
            "Not measured here, so not drawn: {} (see the run's list of functions unavailable).",
            gone.join(", ")
        )
    })
}

/// Why `step` has no usable result at `point`: the step missing, or the result there failed its
/// validity checks (which ones), or not measured.
fn unusable(evidence: &Evidence, step: &str, point: &Point) -> String {
    let Some(doc) = evidence.steps.get(step) else {
        return missing(evidence, step);
    };
    let at = format!("{}/{} at {}", point.algorithm, point.accel, point.size);
    let failed = doc.results.iter().find(|r| {
        !r.measured()
            && r.algorithm == point.algorithm
            && r.accel == point.accel
            && r.size == point.size
    });
    match failed {
        Some(r) => {
            let mut codes: Vec<&str> = r
                .warnings
                .iter()
                .filter(|w| w.fatal)
                .map(|w| w.code.as_str())
                .collect();
            codes.dedup();
            format!(
                "{at} in the {step} step failed its validity checks ({}): its numbers are in the results table, and a quieter machine gives a figure",
                if codes.is_empty() { "see Warnings".to_string() } else { codes.join(", ") }
            )
        }
        None => format!("{at} is not among the usable results of the {step} step"),
    }
}

/// Bars per thread: each session's wall-clock, absolute and apparent cycles/byte.
fn per_thread(
    drawing: &Drawing,
    step: &str,
    point: &Point,
    min_cpus: usize,
) -> Result<Drawn, String> {
    let r = per_thread_result(drawing.evidence, step, point, min_cpus)?;
    Ok(Drawn::Figure(Figure {
        id: drawing.id.into(),
        title: format!("{} — {}", drawing.decl.paper, drawing.decl.title),
        subtitle: format!(
            "from the {step} step: {}, {} sessions on cores {}",
            r.scenario_key(),
            r.sessions,
            r.cores
        ),
        x_label: "thread (session)".into(),
        y_label: "cycles/byte".into(),
        kind: Kind::Bars,
        series: per_thread_series(r),
        references: aggregate_references(r),
        notes: per_thread_notes(r),
        statistics: vec![],
    }))
}

/// The result of `step` at `point` that a per-thread figure draws: refused on a host with fewer
/// than `min_cpus` online CPUs, where it would be the one-core figure again, and when the result
/// is missing or records no per-thread numbers.
fn per_thread_result<'e>(
    evidence: &'e Evidence,
    step: &str,
    point: &Point,
    min_cpus: usize,
) -> Result<&'e ResultEntry, String> {
    if let Some(doc) = evidence.steps.get(step) {
        let cpus = doc.host.online_cpus.len();
        if cpus > 0 && cpus < min_cpus {
            return Err(format!(
                "needs at least {min_cpus} online CPUs and this host has {cpus}: all its cores are the one core of the one-core figure"
            ));
        }
    }
    let Some(r) = evidence.find_point(step, point) else {
        return Err(unusable(evidence, step, point));
    };
    if r.threads.is_empty() {
        return Err(format!(
            "{} in the `{step}` runs records no per-thread numbers",
            r.scenario_key()
        ));
    }
    Ok(r)
}

/// One series per cost of a session (wall-clock, absolute, apparent cycles/byte), a bar per
/// session that has it.
fn per_thread_series(r: &ResultEntry) -> Vec<Series> {
    type PerThread = fn(&ThreadMetrics) -> Option<f64>;
    let metrics: [(&str, PerThread); 3] = [
        ("wall-clock (f·W / b_i)", |t| t.wall_clock_cycles_per_byte),
        ("absolute (f·c_i / b_i)", |t| t.absolute_cycles_per_byte),
        ("apparent (f·W / (n·b_i))", |t| t.apparent_cycles_per_byte),
    ];
    metrics
        .iter()
        .enumerate()
        .map(|(i, (name, value))| {
            Series::new(
                *name,
                r.threads
                    .iter()
                    .filter_map(|t| value(t).map(|y| (t.session as f64, y)))
                    .filter(|(_, y)| y.is_finite() && *y > 0.0)
                    .collect(),
                i,
            )
        })
        .collect()
}

/// The result's aggregate absolute and apparent cycles/byte, as lines across the bars.
fn aggregate_references(r: &ResultEntry) -> Vec<Reference> {
    [
        ("aggregate absolute", r.metrics.absolute_cycles_per_byte),
        ("aggregate apparent", r.metrics.apparent_cycles_per_byte),
    ]
    .into_iter()
    .filter_map(|(name, y)| {
        y.map(|y| Reference {
            name: name.into(),
            y,
        })
    })
    .collect()
}

/// What to read the bars with: the axis and the fairness, the result's warnings, and the sessions
/// without a bar.
fn per_thread_notes(r: &ResultEntry) -> Vec<String> {
    let fairness = r
        .metrics
        .fairness
        .map_or("-".to_string(), |f| format!("{f:.3}"));
    let idle = r
        .threads
        .iter()
        .filter(|t| t.absolute_cycles_per_byte.is_none())
        .count();
    let mut notes = vec![format!(
        "Wall-clock cycles/byte is n × apparent, so the axis is logarithmic where they differ by more than a decade. Jain's fairness index of bytes per session: {fairness}."
    )];
    let mut codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    codes.sort_unstable();
    codes.dedup();
    if !codes.is_empty() {
        notes.push(format!(
            "The result carries validity warnings ({}; see Warnings): read its bars with them in mind.",
            codes.join(", ")
        ));
    }
    if idle > 0 {
        notes.push(format!(
            "{idle} of {} sessions processed nothing in the window: they have no bar.",
            r.threads.len()
        ));
    }
    notes
}
