//! The end of a `run` on the terminal: the cycles/byte matrices (and energy, when measured), the
//! pre-flight's cost, what the results carry (cut repeats, warnings), and where the files went.

use super::table;
use crate::report::csv_export;
use crate::results::Document;
use crate::table::Style;
use std::fmt::Write;
use std::path::Path;

/// The summary's text, every line ending in a newline.
pub fn run_summary(doc: &Document, json: Option<&Path>, csv: Option<&Path>) -> String {
    let mut out = String::new();
    out.push('\n');
    // A matrix of each headline metric that asks for one.
    for h in crate::metrics::HEADLINE {
        if let Some(title) = h.matrix {
            let _ = writeln!(
                out,
                "{}",
                table::matrix(doc, title, |r| (h.value)(&r.metrics), Style::detect())
            );
        }
    }
    // A look-aside device's driver: what each op cost the submitting core, split.
    if let Some(t) = table::offload_matrix(doc, Style::detect()) {
        let _ = writeln!(out, "{t}");
    }
    // Energy only when measured: a matrix of net nJ/byte (median of rounds) and the meter used.
    if let Some(e) = doc.results.iter().find_map(|r| r.energy.as_ref()) {
        let _ = writeln!(
            out,
            "{}",
            table::matrix(
                doc,
                &format!(
                    "net energy nJ/byte (median of rounds; {}, {} scope, windows of {:.0} s)",
                    e.meter, e.scope, e.window_s
                ),
                |r| r.energy.as_ref()?.nj_per_byte.map(|x| x.median),
                Style::detect()
            )
        );
    }
    // `run --baseline`: each row against its group's baseline row.
    if let crate::results::Header::Sweep(options) = &doc.scenario {
        if let Some(row) = &options.options.baseline {
            if let Some(t) = table::baseline_table(doc, row, Style::detect()) {
                let _ = writeln!(out, "{t}");
            }
        }
    }
    if let Some(line) = preflight_line(doc) {
        let _ = writeln!(out, "{line}");
    }
    for line in account_lines(doc) {
        let _ = writeln!(out, "{line}");
    }
    let warned = doc
        .results
        .iter()
        .filter(|r| !r.warnings.is_empty())
        .count();
    let cut = doc
        .results
        .iter()
        .filter(|r| r.adjustments.iter().any(|a| a.starts_with("budget:")))
        .count();
    if cut > 0 {
        let _ = writeln!(
 out,"{cut} result(s) ran fewer repeats than planned, to keep the --budget (their `adjustments` in the JSON say how many); a longer --budget gives them all.");
    }
    if warned > 0 {
        let _ = writeln!(
 out,"{warned} result(s) carry validity warnings (see flags above and `warnings` in the JSON); --auto adjusts and re-runs.");
    }
    // No scenario finished: nothing was written (an earlier file stays as it was), so name no file.
    let written: Vec<&Path> = json.iter().chain(&csv).copied().collect();
    if doc.results.is_empty() && !written.is_empty() {
        let _ = writeln!(
            out,
            "results: none written (no scenario finished); {} left as it was",
            written
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        );
    }
    for path in json.iter().filter(|_| !doc.results.is_empty()) {
        let _ = writeln!(out, "results: {}", path.display());
    }
    if let Some(path) = csv.filter(|_| !doc.results.is_empty()) {
        if super::output::is_stream(path) {
            let _ = writeln!(
                out,
                "results: {} (no per-thread file for a stream)",
                path.display()
            );
        } else {
            let _ = writeln!(
                out,
                "results: {} and {}",
                path.display(),
                csv_export::threads_path(path).display()
            );
        }
    }
    out
}

/// Where the sweep's time went, and the host once: its spread, the intervals it allowed, and what
/// budget would reach the target (docs/methodology.md, "The host's floor").
fn account_lines(doc: &Document) -> Vec<String> {
    let Some(a) = &doc.sweep else {
        return Vec::new();
    };
    let mut lines = vec![format!(
        "time: {:.0} % of the sweep's {:.1} s of runs was inside measurement windows ({} runs, {} repeats a result at the median)",
        a.in_window_share * 100.0,
        a.runs_seconds,
        a.runs,
        a.median_repeats
    )];
    if let (Some(sigma), Some(width)) = (a.host_spread, a.median_half_width) {
        let mut line = format!(
            "host: one repeat spreads ±{:.1} % here (pooled over {} degrees of freedom), so a result's 95 % interval is ±{:.1} % at the median",
            sigma * 100.0,
            a.host_spread_df,
            width * 100.0
        );
        if let crate::results::Header::Sweep(o) = &doc.scenario {
            let target = o.planned.target_ci_percent / 100.0;
            if target > 0.0 && width > target && o.planned.budget_s > 0.0 {
                // Half-widths shrink as 1/√repeats: (width/target)² times the repeats, and the time.
                let needed = o.planned.budget_s * (width / target).powi(2);
                line.push_str(&format!(
                    "; ±{:.0} % would take --budget {:.0}s or a quieter host",
                    o.planned.target_ci_percent,
                    needed.ceil()
                ));
            }
        }
        line.push_str("; `noisy` marks only results noisier than that");
        lines.push(line);
    }
    lines
}

/// The pre-flight's line for the summary: how many messages were checked against another backend
/// or their own one-at-a-time path before timing, and what that cost against the runs.
fn preflight_line(doc: &Document) -> Option<String> {
    let checks: Vec<&crate::engine::preflight::Preflight> = doc
        .results
        .iter()
        .flat_map(|r| r.raw.iter())
        .filter_map(|r| r.preflight.as_ref())
        .collect();
    if checks.is_empty() {
        return None;
    }
    let messages: usize = checks.iter().map(|p| p.messages).sum();
    let ns: u64 = checks.iter().map(|p| p.ns).sum();
    let own = checks.iter().filter(|p| p.reference == "self").count();
    let run_ns: f64 = doc
        .results
        .iter()
        .map(|r| r.scenario.duration.as_secs_f64() * r.raw.len() as f64 * 1e9)
        .sum();
    Some(format!(
        "pre-flight: {messages} messages tagged at the timed lengths and dispatch modes and checked against another backend ({} scenarios) or their own one-at-a-time path ({own}) before timing: {:.1} ms in all, {:.2} % of the runs' time",
        checks.len() - own,
        ns as f64 / 1e6,
        100.0 * ns as f64 / run_ns.max(1.0)
    ))
}
