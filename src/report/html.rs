//! The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched) that shows the
//! Rashwan et al.'s figures for one or more results files, with the table of numbers behind every figure, the host
//! facts, the scenario and every warning.
//!
//! This module is the page: [`build`] takes the figures [`super::figures`] builds from the results, renders
//! each to inline SVG (the same renderer `--png` uses), and writes around them the navigation, the notes on
//! figures left out, the table behind each figure (made from the very points drawn), and the sections of
//! host facts, scenario, all results and warnings. Numbers are shown rounded ([`num`]) with the full value
//! in a `data-` attribute, so the page reads well and a script can still check it.

use super::plots::{self, BarKind, Figure, Kind, XScale};
use super::read::Loaded;
use crate::bench::SizeLabel;
use crate::metrics::{known, Spread};
use std::fmt::Write as _;

pub use super::figures::{
    figures, num, FigureSet, ReportError, ReportOptions, MAX_SESSIONS_FOR_BARS,
};

/// A finished report: the page and the figures drawn in it.
#[derive(Debug, Clone)]
pub struct Report {
    pub html: String,
    pub figures: Vec<Figure>,
    pub notes: Vec<String>,
}

/// Escape text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A table cell holding a number: the full value in `data-value` (machine-readable), rounded as text.
fn cell(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("<td class=\"n\" data-value=\"{x:?}\">{}</td>", num(x)),
        _ => "<td class=\"n\">-</td>".into(),
    }
}

fn spread_cell(v: Option<Spread>) -> String {
    match v {
        Some(i) => format!(
            "<td class=\"n\" data-min=\"{:?}\" data-max=\"{:?}\">{}…{}</td>",
            i.min,
            i.max,
            num(i.min),
            num(i.max)
        ),
        None => "<td class=\"n\">-</td>".into(),
    }
}

/// A result's size: bytes as an integer (with `data-value`), or a size model's name and mean.
fn size_cell(r: &crate::bench::ResultEntry) -> String {
    match &r.size {
        SizeLabel::Bytes(n) => format!("<td class=\"n\" data-value=\"{n}\">{n}</td>"),
        SizeLabel::Model(m) => format!(
            "<td data-size-model=\"{}\" data-mean=\"{:?}\">{} (mean {} B)</td>",
            esc(m),
            r.mean_message_bytes,
            esc(m),
            num(r.mean_message_bytes)
        ),
    }
}

fn figure_table(fig: &Figure) -> String {
    let x_head = match fig.kind {
        Kind::Lines(XScale::Log2) => "size (bytes)",
        Kind::Lines(XScale::Integer) => fig.x_label.split(' ').next().unwrap_or("x"),
        Kind::Lines(XScale::Categories(_)) => fig.x_label.split(" (").next().unwrap_or("x"),
        Kind::Bars => "session",
        Kind::Cdf => "statistic",
    };
    // Columns for what the points carry, when any does: the bar drawn and the warnings ringed.
    let annotated = fig.series.iter().any(|s| !s.annotations.is_empty());
    let mut t = format!(
        "<table class=\"data\" data-figure=\"{}\"><caption>Numbers behind the figure</caption><thead><tr><th>series</th><th>{}</th><th>{}</th>{}</tr></thead><tbody>",
        esc(&fig.id),
        esc(x_head),
        // A CDF's table holds statistics (cycles/byte, an index, a count), not its y fractions.
        esc(if fig.kind == Kind::Cdf {
            "value"
        } else {
            &fig.y_label
        }),
        if annotated {
            "<th>error bar</th><th>warnings</th>"
        } else {
            ""
        }
    );
    let blank = if annotated { "<td></td><td></td>" } else { "" };
    // A CDF has a point per session, which is what it replaces; its statistics summarise them, and every
    // per-session value is in the results JSON.
    let points = fig.series.iter().filter(|_| fig.kind != Kind::Cdf);
    for s in points {
        for (i, &(x, y)) in s.points.iter().enumerate() {
            let marks = if annotated {
                let a = s.annotation(i);
                let bar = match a.and_then(|a| a.bar) {
                    Some(b) => format!(
                        "<td class=\"n\" data-low=\"{:?}\" data-high=\"{:?}\" data-kind=\"{}\" title=\"{}\">{}…{}</td>",
                        b.low,
                        b.high,
                        match b.kind {
                            BarKind::Ci95 => "ci95",
                            BarKind::MinMax => "min-max",
                        },
                        esc(b.kind.describe()),
                        num(b.low),
                        num(b.high)
                    ),
                    None => "<td class=\"n\">-</td>".into(),
                };
                let warnings = a.map(|a| a.warnings.join(", ")).unwrap_or_default();
                format!(
                    "{bar}<td class=\"{}\">{}</td>",
                    if warnings.is_empty() { "" } else { "warned" },
                    esc(&warnings)
                )
            } else {
                String::new()
            };
            let _ = write!(
                t,
                "<tr><td>{}</td><td class=\"n\" data-value=\"{x:?}\">{}</td>{}{marks}</tr>",
                esc(&s.name),
                match fig.kind {
                    // A step of a categorical axis by its name; data-value keeps its index.
                    Kind::Lines(scale) => scale.category(x).map_or_else(|| num(x), esc),
                    _ => num(x),
                },
                cell(Some(y))
            );
        }
    }
    for r in &fig.references {
        let _ = write!(
            t,
            "<tr><td>{}</td><td>all</td>{}{blank}</tr>",
            esc(&r.name),
            cell(Some(r.y))
        );
    }
    for st in &fig.statistics {
        let _ = write!(
            t,
            "<tr class=\"statistic\"><td>{}</td><td>{}</td>{}{blank}</tr>",
            esc(&st.of),
            esc(&st.name),
            if st.count {
                format!(
                    "<td class=\"n\" data-value=\"{:?}\">{:.0}</td>",
                    st.value, st.value
                )
            } else {
                cell(Some(st.value))
            }
        );
    }
    t.push_str("</tbody></table>");
    t
}

fn kv_table(rows: &[(&str, String)]) -> String {
    let mut t = String::from("<table class=\"kv\"><tbody>");
    for (k, v) in rows {
        let _ = write!(t, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    t.push_str("</tbody></table>");
    t
}

fn host_section(files: &[Loaded]) -> String {
    let mut s = String::from("<section id=\"hosts\"><h2>Hosts and clocks</h2>");
    for f in files {
        let h = &f.doc.host;
        let c = &f.doc.clock;
        let libs: Vec<String> = h
            .library_versions
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let harness = f
            .doc
            .harness
            .as_ref()
            .map_or("not measured".to_string(), |h| {
                format!(
                    "null function, {} B, 1 session: {} cycles/message",
                    h.size,
                    h.absolute_cycles_per_message.map_or("-".into(), num)
                )
            });
        let rows = [
            ("file", f.path.display().to_string()),
            ("CPU", h.cpu_model.clone()),
            ("CPU features", h.cpu_features.join(" ")),
            (
                "online CPUs",
                crate::engine::format_cpu_list(&h.online_cpus),
            ),
            (
                "core types",
                if h.core_types.is_empty() {
                    "not recorded".into()
                } else {
                    h.core_types
                        .iter()
                        .map(|t| t.describe())
                        .collect::<Vec<_>>()
                        .join("; ")
                },
            ),
            ("kernel", h.kernel.clone()),
            (
                "cpufreq governor",
                h.governor.clone().unwrap_or_else(|| "unknown".into()),
            ),
            ("libraries", libs.join("; ")),
            (
                "macbench",
                format!(
                    "{}{}",
                    h.macbench_version,
                    h.git_commit
                        .as_ref()
                        .map(|c| format!(" ({c})"))
                        .unwrap_or_default()
                ),
            ),
            (
                "f (reference cycles/s)",
                format!("{:.4} GHz: {}", c.reference_hz / 1e9, c.reference_source),
            ),
            (
                "core clock (estimated)",
                c.core_hz_estimated
                    .map_or("not measured".into(), |hz| format!("{:.3} GHz", hz / 1e9)),
            ),
            ("hardware cycle counters", c.hardware_cycles.clone()),
            (
                "timer",
                format!(
                    "{}, resolution {} ns",
                    c.timebase.as_deref().unwrap_or("time base not recorded"),
                    c.timer_resolution_ns
                ),
            ),
            ("harness overhead", harness),
            (
                "complete",
                if f.doc.partial {
                    "NO: the run was interrupted; the file holds what finished".into()
                } else {
                    "yes".into()
                },
            ),
        ];
        let _ = write!(s, "<h3>{}</h3>{}", esc(&f.label), kv_table(&rows));
    }
    s.push_str("</section>");
    s
}

/// A scenario value as text, as given: strings bare, whole numbers without a decimal point (`5`, not
/// the `5.0` serde writes for an f64), `null` as "none".
fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(t) => t.clone(),
        serde_json::Value::Null => "none".into(),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() && x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn scenario_section(files: &[Loaded]) -> String {
    let mut s = String::from("<section id=\"scenario\"><h2>Scenario</h2>");
    for f in files {
        let rows: Vec<(&str, String)> = match f.doc.scenario.as_object() {
            Some(o) => o.iter().map(|(k, v)| (k.as_str(), json_text(v))).collect(),
            None => vec![("scenario", f.doc.scenario.to_string())],
        };
        let _ = write!(s, "<h3>{}</h3>{}", esc(&f.label), kv_table(&rows));
    }
    s.push_str("</section>");
    s
}

fn results_section(files: &[Loaded]) -> String {
    let mut s = String::from(
        "<section id=\"results\"><h2>All results</h2><div class=\"wide\"><table class=\"data\" id=\"results-table\"><thead><tr>\
<th>file</th><th>function</th><th>size</th><th>sessions</th><th>cores</th><th>repeats</th>\
<th>absolute c/B</th><th>apparent c/B</th><th>absolute c/B 95 % CI</th><th>apparent c/B 95 % CI</th>\
<th>absolute c/B min…max</th><th>apparent c/B min…max</th>\
<th>abs. c/message</th><th>throughput (B/s)</th><th>parallelism</th><th>fairness</th><th>CPU use</th><th>status</th>\
</tr></thead><tbody>",
    );
    for f in files {
        for r in &f.doc.results {
            let m = &r.metrics;
            let status = if r.failed {
                "FAILED".to_string()
            } else if r.warnings.is_empty() {
                "ok".to_string()
            } else {
                let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
                codes.join(", ")
            };
            let _ = write!(
                s,
                "<tr{}><td>{}</td><td>{}</td>{}<td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td>{}{}{}{}{}{}{}{}{}{}{}<td>{}</td></tr>",
                if r.failed { " class=\"failed\"" } else { "" },
                esc(&f.label),
                esc(&r.function().to_string()),
                size_cell(r),
                r.sessions,
                esc(&r.cores),
                r.repeats,
                cell(m.absolute_cycles_per_byte),
                cell(m.apparent_cycles_per_byte),
                spread_cell(r.ci95.absolute()),
                spread_cell(r.ci95.apparent()),
                spread_cell(r.spread.absolute_cycles_per_byte),
                spread_cell(r.spread.apparent_cycles_per_byte),
                cell(m.absolute_cycles_per_message),
                cell(known(m.bytes_per_second)),
                cell(m.parallelism),
                cell(m.fairness),
                cell(known(m.cpu_utilisation)),
                esc(&status)
            );
        }
    }
    s.push_str("</tbody></table></div></section>");
    s
}

fn warnings_section(files: &[Loaded]) -> String {
    let mut s = String::from("<section id=\"warnings\"><h2>Warnings</h2>");
    let count: usize = files
        .iter()
        .flat_map(|f| &f.doc.results)
        .map(|r| r.warnings.len())
        .sum();
    if count == 0 {
        s.push_str("<p>No result carries a validity warning.</p></section>");
        return s;
    }
    let _ = write!(
        s,
        "<p>{count} warning(s). Fatal warnings fail their result: its numbers are shown but not plotted. \
See docs/methodology.md §4 for each check.</p><div class=\"wide\"><table class=\"data\" id=\"warnings-table\"><thead><tr><th>file</th><th>scenario</th>\
<th>session</th><th>code</th><th>fatal</th><th>message</th></tr></thead><tbody>"
    );
    for f in files {
        for r in &f.doc.results {
            for w in &r.warnings {
                let _ = write!(
                    s,
                    "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    if w.fatal { " class=\"failed\"" } else { "" },
                    esc(&f.label),
                    esc(&r.scenario_key()),
                    w.session.map_or("all".into(), |n| n.to_string()),
                    esc(w.code.as_str()),
                    if w.fatal { "yes" } else { "no" },
                    esc(&w.message)
                );
            }
            for a in &r.adjustments {
                let _ = write!(
                    s,
                    "<tr><td>{}</td><td>{}</td><td>all</td><td>auto</td><td>no</td><td>{}</td></tr>",
                    esc(&f.label),
                    esc(&r.scenario_key()),
                    esc(a)
                );
            }
        }
    }
    s.push_str("</tbody></table></div></section>");
    s
}

const STYLE: &str = "body{font-family:'DejaVu Sans',system-ui,sans-serif;margin:2rem auto;max-width:1180px;color:#222;line-height:1.4;padding:0 1rem}\
h1{font-size:1.6rem}h2{border-bottom:2px solid #4E79A7;padding-bottom:.2rem;margin-top:2.5rem}\
figure{margin:1.5rem 0}figure svg{max-width:100%;height:auto;border:1px solid #ddd}\
figcaption{font-size:.9rem;color:#555}\
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}th,td{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.warned{color:#D00000}\
.wide{overflow-x:auto}#results-table td:nth-child(2){white-space:nowrap}thead th{background:#f3f5f8}table.kv th{background:#f3f5f8;width:14rem}\
tr.failed td{background:#fde8e8}details{margin:.3rem 0 1rem}summary{cursor:pointer;color:#4E79A7}\
.note{background:#fff8e1;border-left:4px solid #EDC948;padding:.4rem .8rem;margin:.5rem 0}";

/// Render the figures and write the page.
pub fn build(files: &[Loaded], options: &ReportOptions) -> Result<Report, ReportError> {
    let set = figures(files, options)?;
    let mut body = String::new();
    let labels: Vec<&str> = files.iter().map(|f| f.label.as_str()).collect();
    let _ = write!(
        body,
        "<h1>macbench report</h1><p>{} results file(s): {}. Cycles are reference cycles at each file's <em>f</em> \
(see Hosts). Absolute = CPU time of the sessions; apparent = window wall time, all sessions together \
(docs/methodology.md §3). Failed results are listed but not plotted.</p>",
        files.len(),
        esc(&labels.join(", "))
    );
    body.push_str("<nav><ul>");
    for f in &set.figures {
        let _ = write!(
            body,
            "<li><a href=\"#{}\">{}</a></li>",
            esc(&f.id),
            esc(&f.title)
        );
    }
    body.push_str("<li><a href=\"#hosts\">Hosts and clocks</a></li><li><a href=\"#scenario\">Scenario</a></li><li><a href=\"#results\">All results</a></li><li><a href=\"#warnings\">Warnings</a></li></ul></nav>");
    body.push_str("<section id=\"figures\"><h2>Figures</h2>");
    for n in &set.notes {
        let _ = write!(body, "<p class=\"note\">{}</p>", esc(n));
    }
    for (i, f) in set.figures.iter().enumerate() {
        let svg = plots::render_svg(f)?;
        let svg = svg.replacen(
            "<svg ",
            &format!("<svg role=\"img\" aria-label=\"{}\" ", esc(&f.title)),
            1,
        );
        let _ = write!(
            body,
            "<figure id=\"{}\" class=\"plot\">{svg}<figcaption>Figure {}: {}.{}</figcaption>\
<details open><summary>Numbers behind figure {}</summary>{}</details></figure>",
            esc(&f.id),
            i + 1,
            esc(&f.title),
            f.notes
                .iter()
                .map(|n| format!("<span class=\"figure-note\"> {}</span>", esc(n)))
                .collect::<String>(),
            i + 1,
            figure_table(f)
        );
    }
    body.push_str("</section>");
    body.push_str(&host_section(files));
    body.push_str(&scenario_section(files));
    body.push_str(&results_section(files));
    body.push_str(&warnings_section(files));
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>macbench report: {}</title><style>{STYLE}</style></head><body>{body}</body></html>\n",
        esc(&labels.join(", "))
    );
    Ok(Report {
        html,
        figures: set.figures,
        notes: set.notes,
    })
}
