//! The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched) that shows the
//! Rashwan et al.'s figures for one or more results files, with the table of numbers behind every figure, the host
//! facts, the scenario and every warning.
//!
//! This module is the page: [`build`] takes the figures [`super::figures`] builds from the results, renders
//! each to inline SVG (the same renderer `--png` uses), and writes around them the navigation, the notes on
//! figures left out, the table behind each figure (made from the very points drawn), and the sections of
//! host facts, scenario, all results and warnings. Numbers are shown rounded ([`num`]) with the full value
//! in a `data-` attribute, so the page reads well and a script can still check it.
//!
//! The page is written with maud's `html!` templates rather than by joining strings: every value spliced
//! into one is escaped, so a results file cannot put markup into the page through a CPU model, a library
//! version, a warning or a file name. The only text that goes in unescaped (`PreEscaped`) is markup that
//! is already markup — the SVG figures and this file's own style sheet — each with its reason beside it.

use super::paper::Drawn;
use super::plots::{self, Annotation, BarKind, Figure, Kind, XScale};
use super::read::Loaded;
use crate::metrics::{known, Headline, Per, Spread, HEADLINE};
use crate::results::SizeLabel;
use maud::{html, Escaper, Markup, PreEscaped, DOCTYPE};
use std::fmt::Write as _;

pub use super::figures::{
    figures, num, FigureSet, ReportError, ReportOptions, Reproduction, MAX_SESSIONS_FOR_BARS,
};

/// A finished report: the page and the figures drawn in it.
#[derive(Debug, Clone)]
pub struct Report {
    pub html: String,
    pub figures: Vec<Figure>,
    pub notes: Vec<String>,
}

/// A number's full value for a `data-` attribute: Rust's shortest text that reads back as the same f64
/// (`{:?}`, so `2.0` stays `2.0` and a script sees a float, where maud's own rendering would print `2`).
fn exact(x: f64) -> String {
    format!("{x:?}")
}

/// A table cell holding a number: the full value in `data-value` (machine-readable), rounded as text.
fn cell(v: Option<f64>) -> Markup {
    html! {
        @match v {
            Some(x) if x.is_finite() => td.n data-value=(exact(x)) { (num(x)) },
            _ => td.n { "-" },
        }
    }
}

fn spread_cell(v: Option<Spread>) -> Markup {
    html! {
        @match v {
            Some(i) => td.n data-min=(exact(i.min)) data-max=(exact(i.max)) { (num(i.min)) "…" (num(i.max)) },
            None => td.n { "-" },
        }
    }
}

/// A result's size: bytes as an integer (with `data-value`), or a size model's name and mean.
fn size_cell(r: &crate::results::ResultEntry) -> Markup {
    html! {
        @match &r.size {
            SizeLabel::Bytes(n) => td.n data-value=(n) { (n) },
            SizeLabel::Model(m) => td data-size-model=(m) data-mean=(exact(r.mean_message_bytes)) {
                (m) " (mean " (num(r.mean_message_bytes)) " B)"
            },
        }
    }
}

/// The error bar and warning cells of a point in an annotated figure's table.
fn annotation_cells(a: Option<&Annotation>) -> Markup {
    let warnings = a.map(|a| a.warnings.join(", ")).unwrap_or_default();
    html! {
        @match a.and_then(|a| a.bar) {
            Some(b) => td.n data-low=(exact(b.low)) data-high=(exact(b.high))
                data-kind=(match b.kind { BarKind::Ci95 => "ci95", BarKind::MinMax => "min-max" })
                title=(b.kind.describe()) { (num(b.low)) "…" (num(b.high)) },
            None => td.n { "-" },
        }
        td.warned[!warnings.is_empty()] { (warnings) }
    }
}

fn figure_table(fig: &Figure) -> Markup {
    let x_head = match fig.kind {
        Kind::Lines(XScale::Log2) => "size (bytes)",
        Kind::Lines(XScale::Integer) => fig.x_label.split(' ').next().unwrap_or("x"),
        Kind::Lines(XScale::Categories(_)) => fig.x_label.split(" (").next().unwrap_or("x"),
        Kind::Bars => "session",
        Kind::Cdf => "statistic",
    };
    // A CDF's table holds statistics (cycles/byte, an index, a count), not its y fractions.
    let y_head = if fig.kind == Kind::Cdf {
        "value"
    } else {
        fig.y_label.as_str()
    };
    // Columns for what the points carry, when any does: the bar drawn and the warnings ringed.
    let annotated = fig.series.iter().any(|s| !s.annotations.is_empty());
    // A CDF has a point per session, which is what it replaces; its statistics summarise them, and every
    // per-session value is in the results JSON.
    let points = fig.series.iter().filter(|_| fig.kind != Kind::Cdf);
    html! {
        table.data data-figure=(fig.id) {
            caption { "Numbers behind the figure" }
            thead {
                tr {
                    th { "series" }
                    th { (x_head) }
                    th { (y_head) }
                    @if annotated { th { "error bar" } th { "warnings" } }
                }
            }
            tbody {
                @for s in points {
                    @for (i, &(x, y)) in s.points.iter().enumerate() {
                        tr {
                            td { (s.name) }
                            // A step of a categorical axis by its name; data-value keeps its index.
                            td.n data-value=(exact(x)) {
                                @match fig.kind {
                                    Kind::Lines(scale) => (scale.category(x).map_or_else(|| num(x), str::to_string)),
                                    _ => (num(x)),
                                }
                            }
                            (cell(Some(y)))
                            @if annotated { (annotation_cells(s.annotation(i))) }
                        }
                    }
                }
                @for r in &fig.references {
                    tr {
                        td { (r.name) }
                        td { "all" }
                        (cell(Some(r.y)))
                        @if annotated { td {} td {} }
                    }
                }
                @for st in &fig.statistics {
                    tr.statistic {
                        td { (st.of) }
                        td { (st.name) }
                        @if st.count {
                            td.n data-value=(exact(st.value)) { (format!("{:.0}", st.value)) }
                        } @else {
                            (cell(Some(st.value)))
                        }
                        @if annotated { td {} td {} }
                    }
                }
            }
        }
    }
}

fn kv_table(rows: &[(&str, String)]) -> Markup {
    html! {
        table.kv {
            tbody {
                @for (k, v) in rows {
                    tr { th { (k) } td { (v) } }
                }
            }
        }
    }
}

/// The host facts and clock of one results file, as (name, value) rows.
fn host_rows(f: &Loaded) -> Vec<(&'static str, String)> {
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
    let mut rows = vec![
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
    ];
    match &f.doc.conditions {
        Some(c) => {
            rows.extend(crate::system::conditions::describe(c));
            rows.extend(c.busy_warning().map(|w| ("machine busy", w)));
        }
        None => rows.push(("machine during the run", "not recorded".into())),
    }
    rows.push((
        "complete",
        if f.doc.partial {
            "NO: the run was interrupted; the file holds what finished".into()
        } else {
            "yes".into()
        },
    ));
    rows
}

/// One table per host (its label), from its first file; a host's other files are named under it.
fn host_section(files: &[Loaded]) -> Markup {
    let mut hosts: Vec<(&str, Vec<&Loaded>)> = Vec::new();
    for f in files {
        let label = f.doc.host_label();
        match hosts.iter_mut().find(|(l, _)| *l == label) {
            Some((_, group)) => group.push(f),
            None => hosts.push((label, vec![f])),
        }
    }
    html! {
        section #hosts {
            h2 { "Hosts and clocks" }
            @for (label, group) in &hosts {
                h3 { (label) }
                (kv_table(&host_rows(group[0])))
                @if group.len() > 1 {
                    p.note {
                        "Also from this host: "
                        (group[1..].iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>().join(", "))
                    }
                }
            }
        }
    }
}

/// The studies the reproductions hold, in the order first met.
fn studies(reproductions: &[Reproduction]) -> Vec<&str> {
    let mut studies: Vec<&str> = Vec::new();
    for r in reproductions {
        if !studies.contains(&r.claims.study.as_str()) {
            studies.push(&r.claims.study);
        }
    }
    studies
}

/// A host's column heading.
fn host_name(host: &str) -> &str {
    if host.is_empty() {
        "unknown"
    } else {
        host
    }
}

/// The claims of each study reproduced, one row per claim and one column per host: the verdict and
/// the numbers it rests on, and a link to each paper figure that decides the claim.
fn claims_section(reproductions: &[Reproduction]) -> Markup {
    html! {
        @if !reproductions.is_empty() {
            section #claims {
                h2 { "Claims" }
                @for study in studies(reproductions) {
                    @let hosts: Vec<_> = reproductions.iter().map(|r| &r.claims).filter(|c| c.study == study).collect();
                    @let declared: &[crate::reproduce::PaperFigure] = crate::reproduce::study(study).map_or(&[], |s| s.figures);
                    h3 { (hosts[0].authors) ", \u{201c}" (hosts[0].title) "\u{201d} (" code { (study) } ")" }
                    table.claims {
                        tr {
                            th { "claim" }
                            th { "decided by" }
                            @for h in &hosts { th { (host_name(&h.host)) } }
                        }
                        @for row in &hosts[0].claims {
                            tr id=(format!("claim-{study}-{}", row.id)) {
                                td { (row.claim) }
                                td.figures {
                                    @let deciding: Vec<_> = declared.iter().filter(|f| f.decides.contains(&row.id.as_str())).collect();
                                    @if deciding.is_empty() { "no figure of the paper" }
                                    @for (k, f) in deciding.iter().enumerate() {
                                        @if k > 0 { ", " }
                                        a href={ "#" (f.id) } { (f.paper) }
                                    }
                                }
                                @for h in &hosts {
                                    @match h.claims.iter().find(|r| r.id == row.id) {
                                        Some(r) => td class=(r.verdict) { strong { (r.verdict.replace('-', " ")) } br; (r.detail) },
                                        None => td { "not checked" },
                                    }
                                }
                            }
                        }
                    }
                    @for h in &hosts {
                        @if let Some(caveat) = &h.caveat {
                            p.note { (host_name(&h.host)) ": " (caveat) }
                        }
                    }
                }
            }
        }
    }
}

/// One paper figure of a study, as each host that reproduced the study draws it.
struct PaperRow {
    decl: &'static crate::reproduce::PaperFigure,
    study: &'static str,
    /// (host, what its results draw).
    hosts: Vec<(String, Drawn)>,
}

/// A file's directory, resolved, to tell which reproduction it belongs to.
fn resolved_dir(path: &std::path::Path) -> std::path::PathBuf {
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        std::path::Path::new(".")
    } else {
        dir
    };
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// A host label as a file-name part: letters, digits, `-` and `_`, the rest `_`.
fn file_part(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Every paper figure of every study reproduced, drawn from each host's steps: the results files in
/// the reproduction's directory, each the step its file stem names. With one host a figure's id is
/// the declared one (`fig04-absolute-hw`); with several, the host's label is added to it.
fn paper_rows(files: &[Loaded], reproductions: &[Reproduction]) -> Vec<PaperRow> {
    let mut rows = Vec::new();
    for study_id in studies(reproductions) {
        let Ok(study) = crate::reproduce::study(study_id) else {
            continue;
        };
        let hosts: Vec<&Reproduction> = reproductions
            .iter()
            .filter(|r| r.claims.study == study_id)
            .collect();
        let evidence: Vec<crate::reproduce::Evidence> = hosts
            .iter()
            .map(|r| {
                let steps = files
                    .iter()
                    .filter(|f| resolved_dir(&f.path) == r.dir)
                    .filter_map(|f| {
                        let stem = f.path.file_stem()?.to_str()?;
                        study
                            .steps
                            .iter()
                            .any(|s| s.name == stem)
                            .then(|| (stem.to_string(), f.doc.clone()))
                    })
                    .collect();
                crate::reproduce::Evidence::new(steps, Vec::new())
            })
            .collect();
        for decl in study.figures {
            let drawn = hosts
                .iter()
                .zip(&evidence)
                .map(|(r, e)| {
                    let host = host_name(&r.claims.host).to_string();
                    let id = if hosts.len() > 1 {
                        format!("{}-{}", decl.id, file_part(&host))
                    } else {
                        decl.id.to_string()
                    };
                    let mut drawn = super::paper::draw(decl, e, &id);
                    if let (Drawn::Figure(f), true) = (&mut drawn, hosts.len() > 1) {
                        f.subtitle = format!("{host}: {}", f.subtitle);
                    }
                    (host, drawn)
                })
                .collect();
            rows.push(PaperRow {
                decl,
                study: study.id,
                hosts: drawn,
            });
        }
    }
    rows
}

/// A paper's table as drawn for one host.
fn paper_table(t: &crate::reproduce::Table) -> Markup {
    html! {
        table.data.paper {
            thead { tr { @for h in &t.head { th { (h) } } } }
            tbody {
                @for row in &t.rows {
                    tr { @for c in row { td { (c) } } }
                }
            }
        }
    }
}

/// The paper's figures, each once per host side by side, with the claims it decides and how it
/// differs from the paper's.
fn paper_section(rows: &[PaperRow], svgs: &[PreEscaped<String>]) -> Markup {
    let mut svgs = svgs.iter();
    html! {
        @if !rows.is_empty() {
            section #paper {
                h2 { "The paper's figures, redrawn here" }
                @for row in rows {
                    div.paper id=(row.decl.id) {
                        h3 { (row.decl.paper) ": " (row.decl.title) }
                        p.decides {
                            "Decides: "
                            @for (k, claim) in row.decl.decides.iter().enumerate() {
                                @if k > 0 { ", " }
                                a href={ "#claim-" (row.study) "-" (claim) } { (claim) }
                            }
                        }
                        @if !row.decl.differs.is_empty() {
                            p.note { "Set-up: " (row.decl.differs) }
                        }
                        div.side {
                            @for (host, drawn) in &row.hosts {
                                @match drawn {
                                    Drawn::Figure(f) => figure.plot.paper data-host=(host) data-figure=(f.id) {
                                        (svgs.next().cloned().unwrap_or_else(|| PreEscaped(String::new())))
                                        figcaption {
                                            strong { (host) } ": " (row.decl.paper) " redrawn (" code { (f.id) ".png" } ")."
                                            @for n in &f.notes {
                                                span class="figure-note" { " " (n) }
                                            }
                                        }
                                        details {
                                            summary { "Numbers behind it" }
                                            (figure_table(f))
                                        }
                                    },
                                    Drawn::Table(t) => div.paper-table data-host=(host) {
                                        p { strong { (host) } }
                                        (paper_table(t))
                                    },
                                    Drawn::CannotDraw(why) => p.note.cannot-draw data-host=(host) {
                                        strong { (host) } ": not drawn here: " (why) "."
                                    },
                                }
                            }
                        }
                    }
                }
            }
        }
    }
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

/// `macbench net`'s results, a row per function and size: what limited each and the rate it passed.
fn net_section(nets: &[(String, crate::results::net::NetFile)]) -> Markup {
    let rate = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0}"));
    html! {
        @if !nets.is_empty() {
            section #net {
                h2 { "Protocol test (macbench net)" }
                p {
                    "Zero-loss rates over UDP (docs/net.md): a rate limited by the receiver is its                      zero-loss rate; one limited by the sender is a lower bound."
                }
                @for (label, net) in nets {
                    h3 { (label) " (" (net.host.hostname) ", " (net.schema) ")" }
                    @if net.partial {
                        p.note { "A partial run: interrupted, or still running." }
                    }
                    div.wide {
                        table {
                            thead { tr {
                                th { "function" } th { "size" } th { "mode" } th { "limited by" }
                                th { "packets/s" } th { "vs null" } th { "warnings" }
                            } }
                            tbody {
                                @for r in &net.results {
                                    tr {
                                        td { (r.function) }
                                        td.n { (r.size_label()) }
                                        td { (r.mode) }
                                        td { (r.limited_by) }
                                        td.n { (rate(r.rate_pps())) }
                                        td.n { (r.pps_vs_null.map_or("-".to_string(), |x| format!("{x:.3}"))) }
                                        td { (r.warnings.join("; ")) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A figure with the lowest and highest of its rounds or its interval: `2.01 (1.98–2.05)`.
fn with_interval(value: Option<f64>, low: Option<f64>, high: Option<f64>, digits: usize) -> String {
    match (value, low, high) {
        (Some(v), Some(l), Some(h)) => format!("{v:.digits$} ({l:.digits$}–{h:.digits$})"),
        (Some(v), _, _) => format!("{v:.digits$}"),
        (None, _, _) => "-".to_string(),
    }
}

/// `macbench compare`'s results, a row per algorithm and size: each side's cycles/byte with the
/// range of its rounds, their ratio with its 95 % interval, and the verdict or why there is none.
fn compare_section(compared: &[(String, crate::results::compare::CompareFile)]) -> Markup {
    html! {
        @if !compared.is_empty() {
            section #compare {
                h2 { "Compare" }
                p {
                    "Our figures beside a library's own benchmark (macbench compare, docs/reports.md): \
                     cycles/byte on the rows' basis, each the median of the rounds with their lowest \
                     and highest; the ratio is our throughput over the peer's (above 1: macbench \
                     measured faster) with its 95 % interval."
                }
                @for (label, file) in compared {
                    h3 { (label) " (" (file.host.hostname) ", " (file.schema) ")" }
                    div.wide {
                        table {
                            thead { tr {
                                th { "function" } th { "size" } th { "peer" } th { "basis" }
                                th { "macbench c/B" } th { "peer c/B" } th { "ratio (95 % interval)" }
                                th { "verdict" }
                            } }
                            tbody {
                                @for r in &file.rows {
                                    tr {
                                        td { (r.ours_function.as_deref().unwrap_or(&r.algorithm)) }
                                        td.n { (r.size_label) }
                                        td { (r.peer) " " (r.peer_version) }
                                        td { (r.basis) }
                                        td.n { (with_interval(r.ours_cycles_per_byte, r.ours_cycles_per_byte_low, r.ours_cycles_per_byte_high, 2)) }
                                        td.n { (with_interval(r.theirs_cycles_per_byte, r.theirs_cycles_per_byte_low, r.theirs_cycles_per_byte_high, 2)) }
                                        td.n { (with_interval(r.ratio, r.ratio_ci95_low, r.ratio_ci95_high, 3)) }
                                        td { (r.verdict.clone().or_else(|| r.no_verdict_reason()).unwrap_or_default()) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// An interval alone, `1.012–1.140`, or `-`.
fn interval_text(low: Option<f64>, high: Option<f64>) -> String {
    match (low, high) {
        (Some(l), Some(h)) => format!("{l:.3}–{h:.3}"),
        _ => "-".to_string(),
    }
}

/// `run --baseline`'s ratios, a row per result that has one: the paired ratio with its 95 %
/// interval, the pairs, the unpaired interval beside it, and the note (the baseline itself, or why
/// there is no ratio).
fn baseline_section(files: &[Loaded]) -> Markup {
    let any = files
        .iter()
        .flat_map(|f| &f.doc.results)
        .any(|r| r.baseline.is_some());
    html! {
        @if any {
            section #baseline {
                h2 { "Ratios to the baseline row" }
                p {
                    "Each row's absolute cycles/byte over its group's baseline row (run --baseline, \
                     docs/methodology.md §4): the geometric mean of the rounds' ratios, each round \
                     measuring both rows back to back on the same cores, with its paired 95 % interval; \
                     beside it the interval the two cells' own intervals give without pairing."
                }
                (tables_per_file(
                    files,
                    |r| r.baseline.is_some(),
                    html! {
                        th { "function" } th { "size" } th { "baseline" }
                        th { "ratio (paired 95 % interval)" } th { "pairs" }
                        th { "unpaired 95 % interval" } th { "note" }
                    },
                    |r| html! {
                        @if let Some(b) = &r.baseline {
                            tr {
                                td { (r.label()) }
                                (size_cell(r))
                                td { (b.function.as_deref().unwrap_or("-")) }
                                td.n { (with_interval(b.ratio, b.low, b.high, 3)) }
                                td.n { (b.pairs) }
                                td.n { (interval_text(b.unpaired_low, b.unpaired_high)) }
                                td { (b.note.as_deref().unwrap_or("")) }
                            }
                        }
                    },
                ))
            }
        }
    }
}

/// What each op cost the submitting core on a look-aside device (the `dpdk` backend's account), beside
/// throughput and latency: the embedded study's "CPU the offload still costs". Only when a result has it.
fn offload_section(files: &[Loaded]) -> Markup {
    let has = |r: &crate::results::ResultEntry| r.metrics.offload_dequeue_cycles_per_op.is_some();
    let any = files.iter().flat_map(|f| &f.doc.results).any(has);
    html! {
        @if any {
            section #offload {
                h2 { "What the offload costs the CPU" }
                p {
                    "Per op, the reference cycles the submitting core spent building ops, in enqueue \
                     calls and in dequeue calls (empty polls included), by the device driver's own \
                     account in the window (docs/benchmark.md); beside them the absolute cycles per \
                     message, the messages per second and the sampled latency."
                }
                (tables_per_file(
                    files,
                    has,
                    html! {
                        th { "function" } th { "size" } th { "build c/op" }
                        th { "enqueue c/op" } th { "dequeue c/op" } th { "empty polls/op" }
                        th { "abs. c/message" } th { "messages/s" }
                        th { "latency p50 (ns)" } th { "latency p99 (ns)" }
                    },
                    |r| {
                        let m = &r.metrics;
                        html! {
                            tr {
                                td { (r.label()) }
                                (size_cell(r))
                                (cell(m.offload_build_cycles_per_op))
                                (cell(m.offload_enqueue_cycles_per_op))
                                (cell(m.offload_dequeue_cycles_per_op))
                                (cell(m.offload_empty_polls_per_op))
                                (cell(m.absolute_cycles_per_message))
                                (cell(known(m.messages_per_second)))
                                (cell(m.latency_p50_ns))
                                (cell(m.latency_p99_ns))
                            }
                        }
                    },
                ))
            }
        }
    }
}

/// Under each file's label, a wide table of the results `keep` picks: `head` the header cells, `row`
/// each row. A file with none of them gets no heading. What the baseline and offload sections share.
fn tables_per_file(
    files: &[Loaded],
    keep: impl Fn(&crate::results::ResultEntry) -> bool,
    head: Markup,
    row: impl Fn(&crate::results::ResultEntry) -> Markup,
) -> Markup {
    html! {
        @for f in files {
            @let rows: Vec<&crate::results::ResultEntry> = f.doc.results.iter().filter(|r| keep(r)).collect();
            @if !rows.is_empty() {
                h3 { (f.label) }
                div.wide {
                    table.data {
                        thead { tr { (head) } }
                        tbody { @for r in rows { (row(r)) } }
                    }
                }
            }
        }
    }
}

fn scenario_section(files: &[Loaded]) -> Markup {
    html! {
        section #scenario {
            h2 { "Scenario" }
            @for f in files {
                @let header = serde_json::to_value(&f.doc.scenario).unwrap_or_default();
                @let rows: Vec<(&str, String)> = match header.as_object() {
                    Some(o) => o.iter().map(|(k, v)| (k.as_str(), json_text(v))).collect(),
                    None => vec![("scenario", header.to_string())],
                };
                h3 { (f.label) }
                (kv_table(&rows))
            }
        }
    }
}

/// A result's status cell: failed, ok, or the codes of its warnings.
fn status(r: &crate::results::ResultEntry) -> String {
    if !r.measured() {
        "FAILED".to_string()
    } else if r.warnings.is_empty() {
        "ok".to_string()
    } else {
        let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
        codes.join(", ")
    }
}

/// One metric cell of the results table: a headline metric's value, or the 95 % interval or spread
/// of one (a per-byte cost's, after the per-byte costs).
enum MetricCell {
    Value(&'static Headline),
    Interval(&'static Headline),
    Spread(&'static Headline),
}

/// The results table's metric cells, from the headline descriptors the report labels: their values
/// in order, with the per-byte costs' intervals, then their spreads, right after the last of them.
fn metric_cells() -> Vec<MetricCell> {
    let shown: Vec<&'static Headline> = HEADLINE.iter().filter(|h| h.label.is_some()).collect();
    let per_byte: Vec<&'static Headline> = shown
        .iter()
        .copied()
        .filter(|h| h.kind == crate::metrics::Kind::Cost(Per::Byte))
        .collect();
    let after = shown
        .iter()
        .rposition(|h| h.kind == crate::metrics::Kind::Cost(Per::Byte))
        .map_or(0, |i| i + 1);
    let mut cells: Vec<MetricCell> = shown.iter().map(|h| MetricCell::Value(h)).collect();
    let ranges = per_byte
        .iter()
        .filter(|h| h.interval)
        .map(|h| MetricCell::Interval(h))
        .chain(
            per_byte
                .iter()
                .filter(|h| h.spread)
                .map(|h| MetricCell::Spread(h)),
        );
    cells.splice(after..after, ranges);
    cells
}

impl MetricCell {
    fn heading(&self) -> String {
        match self {
            MetricCell::Value(h) => h.label.unwrap_or(h.key).to_string(),
            MetricCell::Interval(h) => format!("{} 95 % CI", h.label.unwrap_or(h.key)),
            MetricCell::Spread(h) => format!("{} min…max", h.label.unwrap_or(h.key)),
        }
    }

    fn cell(&self, r: &crate::results::ResultEntry) -> Markup {
        match self {
            MetricCell::Value(h) => cell((h.value)(&r.metrics)),
            MetricCell::Interval(h) => spread_cell(r.ci95.range(h)),
            MetricCell::Spread(h) => spread_cell(r.spread.get(h)),
        }
    }
}

fn results_section(files: &[Loaded]) -> Markup {
    let metrics = metric_cells();
    let headings: Vec<String> = ["file", "function", "size", "sessions", "cores", "repeats"]
        .into_iter()
        .map(String::from)
        .chain(metrics.iter().map(MetricCell::heading))
        .chain(["status".to_string()])
        .collect();
    html! {
        section #results {
            h2 { "All results" }
            div.wide {
                table.data #results-table {
                    thead { tr { @for h in &headings { th { (h) } } } }
                    tbody {
                        @for f in files {
                            @for r in &f.doc.results {
                                tr class=[(!r.measured()).then_some("failed")] {
                                    td { (f.label) }
                                    td { (r.label()) }
                                    (size_cell(r))
                                    td.n { (r.sessions) }
                                    td { (r.cores) }
                                    td.n { (r.repeats) }
                                    @for c in &metrics { (c.cell(r)) }
                                    td { (status(r)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn warnings_section(files: &[Loaded]) -> Markup {
    let count: usize = files
        .iter()
        .flat_map(|f| &f.doc.results)
        .map(|r| r.warnings.len())
        .sum();
    html! {
        section #warnings {
            h2 { "Warnings" }
            @if count == 0 {
                p { "No result carries a validity warning." }
            } @else {
                p {
                    (count)
                    " warning(s). Fatal warnings fail their result: its numbers are shown but not \
                     plotted. See docs/methodology.md §4 for each check."
                }
                div.wide {
                    table.data #warnings-table {
                        thead {
                            tr {
                                th { "file" } th { "scenario" } th { "session" } th { "code" }
                                th { "fatal" } th { "message" }
                            }
                        }
                        tbody {
                            @for f in files {
                                @for r in &f.doc.results {
                                    @for w in &r.warnings {
                                        tr class=[w.fatal.then_some("failed")] {
                                            td { (f.label) }
                                            td { (r.scenario_key()) }
                                            td { @match w.session { Some(n) => (n), None => "all" } }
                                            td { (w.code.as_str()) }
                                            td { @if w.fatal { "yes" } @else { "no" } }
                                            td { (w.message) }
                                        }
                                    }
                                    @for a in &r.adjustments {
                                        tr {
                                            td { (f.label) }
                                            td { (r.scenario_key()) }
                                            td { "all" }
                                            td { "auto" }
                                            td { "no" }
                                            td { (a) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

const STYLE: &str = "body{font-family:'DejaVu Sans',system-ui,sans-serif;margin:2rem auto;max-width:1180px;color:#222;line-height:1.4;padding:0 1rem}\
h1{font-size:1.6rem}h2{border-bottom:2px solid #4E79A7;padding-bottom:.2rem;margin-top:2.5rem}\
figure{margin:1.5rem 0}figure svg{max-width:100%;height:auto;border:1px solid #ddd}\
figcaption{font-size:.9rem;color:#555}\
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}th,td{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.warned{color:#D00000}\
td.holds{background:#e8f3ea}td.does-not-hold{background:#fbe9e7}td.cannot-test{background:#f1f1f1}\
.wide{overflow-x:auto}#results-table td:nth-child(2){white-space:nowrap}thead th{background:#f3f5f8}table.kv th{background:#f3f5f8;width:14rem}\
tr.failed td{background:#fde8e8}details{margin:.3rem 0 1rem}summary{cursor:pointer;color:#4E79A7}\
.note{background:#fff8e1;border-left:4px solid #EDC948;padding:.4rem .8rem;margin:.5rem 0}\
.side{display:flex;gap:1rem;align-items:flex-start}.side>*{flex:1 1 0;min-width:0}td.figures{white-space:nowrap}";

/// A figure as inline SVG, with its title as the SVG's accessible name.
///
/// The SVG text is plotters' output, already well-formed markup in which plotters escapes every piece of
/// text it writes (titles, legends, tick labels), so it goes into the page as it is (`PreEscaped`); escaping
/// it again would show the markup instead of the figure. The one attribute added here, the title, is
/// escaped with maud's escaper like every other value on the page.
fn labelled_svg(fig: &Figure) -> Result<PreEscaped<String>, ReportError> {
    let svg = plots::render_svg(fig)?;
    let mut open = String::from("<svg role=\"img\" aria-label=\"");
    // Writing into a String cannot fail; the Result is fmt::Write's signature, not an outcome.
    let _ = Escaper::new(&mut open).write_str(&fig.title);
    open.push_str("\" ");
    Ok(PreEscaped(svg.replacen("<svg ", &open, 1)))
}

/// Render the figures and write the page: the claims of any reproduction first, each linked to the
/// paper figures that decide it, then those figures, then the report's own figures and the rest.
pub fn build(files: &[Loaded], options: &ReportOptions) -> Result<Report, ReportError> {
    let set = figures(files, options)?;
    let rows = paper_rows(files, &options.reproductions);
    let paper = drawn_figures(&rows);
    let paper_svgs = paper
        .iter()
        .map(labelled_svg)
        .collect::<Result<Vec<_>, _>>()?;
    let svgs = set
        .figures
        .iter()
        .map(labelled_svg)
        .collect::<Result<Vec<_>, _>>()?;
    let labels = files
        .iter()
        .map(|f| f.label.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let page = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            (page_head(&labels))
            body {
                (introduction(files, &labels))
                (contents(files, options, &rows, &set))
                (claims_section(&options.reproductions))
                (paper_section(&rows, &paper_svgs))
                (figures_section(&set, &svgs))
                (net_section(&options.net))
                (compare_section(&options.compare))
                (baseline_section(files))
                (offload_section(files))
                (host_section(files))
                (scenario_section(files))
                (results_section(files))
                (warnings_section(files))
            }
        }
    };
    let mut html = page.into_string();
    html.push('\n');
    let mut all = paper;
    all.extend(set.figures);
    Ok(Report {
        html,
        figures: all,
        notes: set.notes,
    })
}

/// The paper figures the hosts' results could draw, row by row.
fn drawn_figures(rows: &[PaperRow]) -> Vec<Figure> {
    rows.iter()
        .flat_map(|r| &r.hosts)
        .filter_map(|(_, d)| match d {
            Drawn::Figure(f) => Some(f.clone()),
            _ => None,
        })
        .collect()
}

/// The page's head: its title names the results' labels.
fn page_head(labels: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { "macbench report: " (labels) }
            // The style sheet is a constant of this file, not data, and `<style>` is raw text in which
            // an entity such as `&gt;` would not be decoded: escaping it would break a selector, not
            // protect anything.
            style { (PreEscaped(STYLE)) }
        }
    }
}

/// The heading, what the page's numbers are, and a warning for each file of made-up counters.
fn introduction(files: &[Loaded], labels: &str) -> Markup {
    html! {
        h1 { "macbench report" }
        p {
            (files.len()) " results file(s): " (labels)
            ". Cycles are reference cycles at each file's " em { "f" }
            " (see Hosts). Absolute = CPU time of the sessions; apparent = window wall time, all \
             sessions together (docs/methodology.md §3). Failed results are listed but not plotted."
        }
        // A page drawn from made-up counters says so before anything else (issue 47 N29).
        @for f in files.iter().filter(|f| f.doc.fake_engine.is_some()) {
            p.note.fake-engine {
                strong { "Not measured: " } (f.label) "'s results were made up by the fake engine \
                (MACBENCH_FAKE_ENGINE=" (f.doc.fake_engine.as_deref().unwrap_or_default())
                "), which macbench's own tests use; its numbers describe no machine."
            }
        }
    }
}

/// The table of contents: the sections this page has, in its order.
fn contents(
    files: &[Loaded],
    options: &ReportOptions,
    rows: &[PaperRow],
    set: &FigureSet,
) -> Markup {
    html! {
        nav {
            ul {
                @if !options.reproductions.is_empty() {
                    li { a href="#claims" { "Claims" } }
                }
                @for r in rows {
                    li { a href={ "#" (r.decl.id) } { (r.decl.paper) ": " (r.decl.title) } }
                }
                @for f in &set.figures {
                    li { a href={ "#" (f.id) } { (f.title) } }
                }
                li { a href="#hosts" { "Hosts and clocks" } }
                @if files.iter().flat_map(|f| &f.doc.results).any(|r| r.baseline.is_some()) {
                    li { a href="#baseline" { "Ratios to the baseline row" } }
                }
                li { a href="#scenario" { "Scenario" } }
                li { a href="#results" { "All results" } }
                li { a href="#warnings" { "Warnings" } }
            }
        }
    }
}

/// The report's own figures (`svgs`, rendered from `set`), each with its notes and its numbers.
fn figures_section(set: &FigureSet, svgs: &[PreEscaped<String>]) -> Markup {
    html! {
        section #figures {
            h2 { "Figures" }
            @for n in &set.notes {
                p.note { (n) }
            }
            @for (i, (f, svg)) in set.figures.iter().zip(svgs).enumerate() {
                figure id=(f.id) class="plot" {
                    (svg)
                    figcaption {
                        "Figure " (i + 1) ": " (f.title) "."
                        @for n in &f.notes {
                            span class="figure-note" { " " (n) }
                        }
                    }
                    details open {
                        summary { "Numbers behind figure " (i + 1) }
                        (figure_table(f))
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_style_sheet_cannot_end_its_element() {
        // It goes into `<style>` unescaped: a `</` in it would close the element early.
        assert!(!STYLE.contains("</"));
    }

    #[test]
    fn cells_escape_what_they_splice_and_keep_the_exact_value() {
        let c = cell(Some(2.0)).into_string();
        assert_eq!(c, "<td class=\"n\" data-value=\"2.0\">2</td>");
        assert_eq!(cell(Some(f64::NAN)).into_string(), "<td class=\"n\">-</td>");
        let rows = [("k<&>\"", "v<script>&\"".to_string())];
        let t = kv_table(&rows).into_string();
        assert!(t.contains("<th>k&lt;&amp;&gt;&quot;</th>"), "{t}");
        assert!(t.contains("<td>v&lt;script&gt;&amp;&quot;</td>"), "{t}");
    }
}
