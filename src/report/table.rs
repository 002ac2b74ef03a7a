//! Terminal output: a line per scenario as it finishes, then a functions × sizes matrix to read at a glance.

use crate::metrics::{self, Format, Headline, Kind, Metrics, Per};
use crate::results::{Document, ResultEntry};
use crate::table::{Style, Table};
use std::collections::{HashMap, HashSet};

fn num(v: Option<f64>) -> String {
    match v {
        None => "-".to_string(),
        Some(x) if x >= 1000.0 => format!("{x:.0}"),
        Some(x) if x >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// Human bytes/second: "812 MB/s", "3.41 GB/s".
pub fn rate(bytes_per_second: f64) -> String {
    if bytes_per_second >= 1e9 {
        format!("{:.2} GB/s", bytes_per_second / 1e9)
    } else if bytes_per_second >= 1e6 {
        format!("{:.0} MB/s", bytes_per_second / 1e6)
    } else {
        format!("{:.0} kB/s", bytes_per_second / 1e3)
    }
}

/// Human messages/second, beside the bytes: "1.23M", "845k", "912"; "-" when not measured.
pub fn messages_per_second(per_second: f64) -> String {
    if !per_second.is_finite() || per_second <= 0.0 {
        "-".to_string()
    } else if per_second >= 1e6 {
        format!("{:.2}M", per_second / 1e6)
    } else if per_second >= 1e3 {
        format!("{:.0}k", per_second / 1e3)
    } else {
        format!("{per_second:.0}")
    }
}

/// The energy column's header, present only when a meter measures (`run --energy`).
pub const ENERGY_COLUMN: &str = "nJ/B ±95%";

/// The per-scenario table: its columns are fixed up front because rows print as scenarios finish.
pub fn scenario_table(style: Style) -> Table {
    scenario_columns(style).left("flags")
}

/// The per-scenario table with the energy column before the flags.
pub fn scenario_table_with_energy(style: Style) -> Table {
    scenario_columns(style)
        .right(ENERGY_COLUMN)
        .min_width(14)
        .left("flags")
}

/// The header of the interval column, which follows the per-byte costs ([`columns`]).
const PRECISION_COLUMN: (&str, usize) = ("±95%", 5);

/// The scenario table's metric columns: each headline metric the table shows
/// ([`metrics::Headline::column`]), in their order, with the 95 % half-width (`None`) right after
/// the last per-byte cost, whose interval it sums up ([`precision`]).
fn columns() -> Vec<Option<&'static Headline>> {
    let shown: Vec<&Headline> = metrics::HEADLINE
        .iter()
        .filter(|h| h.column.is_some())
        .collect();
    let after = shown
        .iter()
        .rposition(|h| h.kind == Kind::Cost(Per::Byte))
        .map_or(0, |i| i + 1);
    let mut out: Vec<Option<&Headline>> = shown.into_iter().map(Some).collect();
    out.insert(after, None);
    out
}

/// The columns every scenario table has, up to the flags.
fn scenario_columns(style: Style) -> Table {
    let mut table = Table::new(style)
        .left("function")
        .min_width(30)
        .right("size")
        .min_width(8);
    for column in columns() {
        let (header, width) = column.and_then(|h| h.column).unwrap_or(PRECISION_COLUMN);
        table = table.right(header).min_width(width);
    }
    table.right("lat p50/p99").min_width(13)
}

/// A metric's value as the scenario table writes it ([`metrics::Format`]).
fn formatted(h: &Headline, m: &Metrics) -> String {
    let v = (h.value)(m);
    match h.format {
        Format::Number => num(v),
        // A rate a file does not hold reads as NaN, written as it always was.
        Format::BytesPerSecond => rate(v.unwrap_or(f64::NAN)),
        Format::PerSecond => messages_per_second(v.unwrap_or(f64::NAN)),
    }
}

/// The 95 % interval's half-width in percent of the median cycles/byte: "2.1%", or "-".
fn precision(r: &ResultEntry) -> String {
    match r.ci95.precision(&r.metrics) {
        Some(p) if p >= 0.995 => ">99%".to_string(),
        Some(p) => format!("{:.1}%", p * 100.0),
        None => "-".to_string(),
    }
}

/// One row of [`scenario_table`] for one finished scenario.
pub fn line(table: &Table, r: &ResultEntry) -> String {
    let m = &r.metrics;
    // Counted by code ("starvation×98"): at 1000 sessions a line per thread would bury the result.
    let mut flags = crate::metrics::summarise(&r.warnings);
    if !r.measured() {
        flags = format!("FAILED {flags}");
    }
    let mut cells = vec![r.label(), r.size.to_string()];
    cells.extend(columns().into_iter().map(|column| match column {
        Some(h) => formatted(h, m),
        None => precision(r),
    }));
    cells.push(latency(m.latency_p50_ns, m.latency_p99_ns));
    if table.has_column(ENERGY_COLUMN) {
        cells.push(r.energy.as_ref().map_or("-".to_string(), |e| e.cell()));
    }
    cells.push(flags);
    table.row(&cells)
}

/// Sampled per-message latency, submission to tag: "0.61/1.84µs", "-" when none was sampled.
fn latency(p50_ns: Option<f64>, p99_ns: Option<f64>) -> String {
    let (Some(p50), Some(p99)) = (p50_ns, p99_ns) else {
        return "-".to_string();
    };
    if p99 >= 1e6 {
        format!("{:.2}/{:.2}ms", p50 / 1e6, p99 / 1e6)
    } else if p99 >= 1e4 {
        format!("{:.1}/{:.1}µs", p50 / 1e3, p99 / 1e3)
    } else {
        format!("{:.2}/{:.2}µs", p50 / 1e3, p99 / 1e3)
    }
}

/// Matrix of one metric: functions as rows, sizes as columns, under a title line.
pub fn matrix(
    doc: &Document,
    title: &str,
    metric: impl Fn(&ResultEntry) -> Option<f64>,
    style: Style,
) -> String {
    let rows = cells(doc, |r| Some(num(metric(r))), true);
    render_matrix(title, rows, style)
}

/// Matrix of the submitting core's cost per op on a look-aside device, `build+enqueue+dequeue`
/// reference cycles (the driver's account), for the rows that have one; `None` when none has.
pub fn offload_matrix(doc: &Document, style: Style) -> Option<String> {
    let cell = |r: &ResultEntry| {
        let m = &r.metrics;
        Some(format!(
            "{:.0}+{:.0}+{:.0}",
            m.offload_build_cycles_per_op?,
            m.offload_enqueue_cycles_per_op?,
            m.offload_dequeue_cycles_per_op?
        ))
    };
    let rows = cells(doc, cell, false);
    (!rows.1.is_empty()).then(|| {
        render_matrix(
            "CPU cycles per op on the device's submitting core: build+enqueue+dequeue \
             (the driver's account, polls included; docs/benchmark.md)",
            rows,
            style,
        )
    })
}

/// The sizes (columns) and, per function, its label and a cell per size (`-` where the function
/// has no result or no value there); functions with no value anywhere are kept only with `keep_empty`.
fn cells(
    doc: &Document,
    cell: impl Fn(&ResultEntry) -> Option<String>,
    keep_empty: bool,
) -> (Vec<String>, Vec<Vec<String>>) {
    // Indexed once: looking each cell up among all results made the full matrix's summary (10,658
    // results, ~700 functions × 16 sizes) take 43 s after its last run.
    let mut sizes: Vec<String> = Vec::new();
    let mut functions: Vec<String> = Vec::new();
    let mut seen: (HashSet<String>, HashSet<String>) = Default::default();
    let mut at: HashMap<(String, String), &ResultEntry> = HashMap::new();
    for r in &doc.results {
        let (f, s) = (r.label(), r.size.to_string());
        if seen.0.insert(s.clone()) {
            sizes.push(s.clone());
        }
        if seen.1.insert(f.clone()) {
            functions.push(f.clone());
        }
        // The first result of a function and size, as a search from the start would find.
        at.entry((f, s)).or_insert(r);
    }
    let rows: Vec<Vec<String>> = functions
        .iter()
        .filter_map(|f| {
            let values: Vec<Option<String>> = sizes
                .iter()
                .map(|s| {
                    at.get(&(f.clone(), s.clone())).and_then(|r| {
                        if r.measured() {
                            cell(r)
                        } else {
                            None
                        }
                    })
                })
                .collect();
            (keep_empty || values.iter().any(Option::is_some)).then(|| {
                std::iter::once(f.clone())
                    .chain(
                        values
                            .into_iter()
                            .map(|v| v.unwrap_or_else(|| "-".to_string())),
                    )
                    .collect()
            })
        })
        .collect();
    (sizes, rows)
}

fn render_matrix(
    title: &str,
    (sizes, rows): (Vec<String>, Vec<Vec<String>>),
    style: Style,
) -> String {
    let table = sizes
        .iter()
        .fold(Table::new(style).left("function"), |t, s| t.right(s));
    format!("{title}\n{}", table.render(&rows))
}

/// `1.234 (1.201–1.268)`, `1` for the baseline row, `-` without a ratio.
fn ratio_cell(ratio: Option<f64>, low: Option<f64>, high: Option<f64>) -> String {
    match (ratio, low, high) {
        (Some(r), Some(l), Some(h)) => format!("{r:.3} ({l:.3}–{h:.3})"),
        (Some(r), _, _) => format!("{r:.3}"),
        (None, _, _) => "-".to_string(),
    }
}

/// The ratios to the baseline row (`run --baseline ROW`), a row per result that has one: the paired
/// ratio with its 95 % interval and half-width, the pairs, the unpaired interval beside it, and
/// what the note says (the baseline itself, or why there is no ratio). `None` when no result has
/// one.
pub fn baseline_table(doc: &Document, row: &str, style: Style) -> Option<String> {
    let rows: Vec<Vec<String>> = doc
        .results
        .iter()
        .filter_map(|r| {
            let b = r.baseline.as_ref()?;
            let half = match (b.ratio, b.low, b.high) {
                (Some(x), Some(l), Some(h)) if x > 0.0 => {
                    format!("±{:.1}%", (h - l) / 2.0 / x * 100.0)
                }
                _ => "-".to_string(),
            };
            let unpaired = match (b.ratio, b.unpaired_low, b.unpaired_high) {
                (Some(_), Some(l), Some(h)) => format!("{l:.3}–{h:.3}"),
                _ => "-".to_string(),
            };
            Some(vec![
                r.label(),
                r.size.to_string(),
                ratio_cell(b.ratio, b.low, b.high),
                half,
                b.pairs.to_string(),
                unpaired,
                b.note.clone().unwrap_or_default(),
            ])
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let table = Table::new(style)
        .left("function")
        .right("size")
        .right("ratio (paired 95%)")
        .right("±")
        .right("pairs")
        .right("unpaired 95%")
        .left("note");
    Some(format!(
        "ratio to {row} (absolute cycles/byte; paired 95 % interval)\n{}",
        table.render(&rows)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_per_second_read_at_a_glance() {
        assert_eq!(messages_per_second(3_940_000.0), "3.94M");
        assert_eq!(messages_per_second(30_400.0), "30k");
        assert_eq!(messages_per_second(912.4), "912");
        assert_eq!(messages_per_second(f64::NAN), "-");
        assert_eq!(messages_per_second(0.0), "-");
        let header = scenario_table(Style::Plain).header();
        assert!(
            header.contains("throughput") && header.contains("msg/s"),
            "{header}"
        );
    }
}
