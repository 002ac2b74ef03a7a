//! `macbench diff OLD NEW`: per function and size, how cycles/byte changed and whether the change is larger
//! than the noise the two runs recorded.
//!
//! Each result carries a 95 % confidence interval (`ci95`) and the min/max of its repeats (`spread`). A
//! change is called significant when the two runs' 95 % intervals do not overlap — conservative (two
//! non-overlapping 95 % intervals mean a difference well beyond 5 % chance) and meaningful even with one
//! repeat, since a run's own batch means give it an interval. Files written before intervals existed
//! fall back to the [min, max] of the repeats, which with one repeat each are points, so every difference
//! counts; the table says so.
//!
//! A validity flag (`noisy`, `not-steady`, `over-utilised`) says how far to trust a cell; it hides
//! nothing: a result made 3× slower is slower whatever its flags, and its interval already carries the
//! noise. The regression gate (`--fail-on-regression`) judges a whole run at once, so its false alarms
//! are controlled for the family of cells compared, not per cell: 144 cells each tested at 5 % would
//! raise a false alarm on most identical pairs. Each change is tested at the level 5 % / m for m
//! comparisons (Bonferroni), its z taken from the two intervals ([`family_z`]).

use super::rows::Records;
use crate::metrics::{Headline, Spread, HEADLINE};
use crate::results::{Document, ResultEntry};
use crate::table::{Style, Table};

/// One metric's change between the runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub old: f64,
    pub new: f64,
    /// new / old: below 1 is faster (fewer cycles per byte).
    pub ratio: f64,
    /// `Some(true)` when the repeat intervals do not overlap; `None` when a spread is missing.
    pub significant: Option<bool>,
    /// The intervals judged (95 %, or the repeats' [min, max] in files without intervals).
    pub old_interval: Option<Spread>,
    pub new_interval: Option<Spread>,
}

/// The metrics a diff judges, in [`HEADLINE`]'s order: those whose descriptor says `judged`, named
/// in its columns as their descriptors label them.
pub fn judged() -> impl Iterator<Item = &'static Headline> {
    HEADLINE.iter().filter(|h| h.judged)
}

/// One row: a function × size × sessions present in either run.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffRow {
    pub function: String,
    pub size: String,
    pub sessions: usize,
    /// Each [`judged`] metric's change, in its order; `None` where it has none.
    pub changes: Vec<Option<Change>>,
    /// Net energy per byte (`run --energy`), when both runs measured it; not part of the verdict,
    /// which is about cycles.
    pub energy: Option<Change>,
    /// Why a change is missing (only in one run, failed), or what to keep in mind (single repeats).
    pub note: String,
}

impl DiffRow {
    /// The change of judged metric `h`.
    pub fn change(&self, h: &Headline) -> Option<&Change> {
        judged()
            .position(|j| j.key == h.key)
            .and_then(|i| self.changes.get(i)?.as_ref())
    }

    /// Whether the row has no partner in the other run ("only in OLD", "only in NEW").
    pub fn unpaired(&self) -> bool {
        self.note.starts_with("only in")
    }

    /// Over both metrics: "faster" or "slower" when every significant change points that way, "mixed"
    /// when they disagree, "within noise" when none is significant, "no spread" without min/max, "-".
    pub fn verdict(&self) -> &'static str {
        let changes: Vec<&Change> = self.changes.iter().flatten().collect();
        if changes.is_empty() {
            return "-";
        }
        if changes.iter().all(|c| c.significant.is_none()) {
            return "no spread";
        }
        let significant: Vec<&&Change> = changes
            .iter()
            .filter(|c| c.significant == Some(true))
            .collect();
        let faster = significant.iter().filter(|c| c.ratio < 1.0).count();
        let slower = significant.iter().filter(|c| c.ratio > 1.0).count();
        match (faster, slower) {
            (0, 0) => "within noise",
            (_, 0) => "faster",
            (0, _) => "slower",
            _ => "mixed",
        }
    }
}

/// The rows' verdicts counted, as CI users read a benchmark comparison: "3 faster, 1 slower beyond
/// noise, 12 within noise, 2 only in one run".
pub fn summary(rows: &[DiffRow]) -> String {
    let count = |v: &str| rows.iter().filter(|r| r.verdict() == v).count();
    let only = rows.iter().filter(|r| r.unpaired()).count();
    let mut parts = vec![format!(
        "{} faster, {} slower beyond noise",
        count("faster"),
        count("slower")
    )];
    for (n, what) in [
        (count("mixed"), "mixed"),
        (count("within noise"), "within noise"),
        (count("no spread"), "without a spread to judge"),
        (only, "only in one run"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.join(", ")
}

/// The error rate of the regression gate over a whole comparison: at most one identical pair in 20
/// fails it.
pub const FAMILY_ALPHA: f64 = 0.05;

/// The z a change must reach for `m` comparisons together to keep a false alarm rate of
/// [`FAMILY_ALPHA`] (Bonferroni): z(1 − α/2m), e.g. 3.58 for 144 comparisons, 1.96 for one.
pub fn family_z(m: usize) -> f64 {
    crate::stats::normal_quantile(1.0 - FAMILY_ALPHA / (2.0 * m.max(1) as f64))
}

/// The standard error of ln(value) a 95 % interval implies ([`crate::stats::log_standard_error`];
/// for an interval from few degrees of freedom, whose t exceeds 1.96, this overstates it: the test
/// errs towards "within noise").
fn log_standard_error(interval: Spread) -> Option<f64> {
    crate::stats::log_standard_error(crate::stats::Interval {
        low: interval.min,
        high: interval.max,
    })
}

/// The z of a change: ln(new / old) over the standard error of that difference, from the two
/// intervals; `None` without two intervals of positive ends.
fn change_z(c: &Change) -> Option<f64> {
    let se_old = log_standard_error(c.old_interval?)?;
    let se_new = log_standard_error(c.new_interval?)?;
    let se = (se_old * se_old + se_new * se_new).sqrt();
    (se > 0.0).then(|| c.ratio.ln() / se)
}

/// The rows slower beyond noise by more than `percent` % (absolute or apparent cycles/byte): what
/// `diff --fail-on-regression PCT` fails on. Slower beyond noise, flagged or not: the change's z
/// (from the two intervals) exceeds [`family_z`] of every comparison made, so that an identical pair
/// fails the gate at most [`FAMILY_ALPHA`] of the time however many cells it holds. Each as
/// `function size: +12.3 %`, the worst first (a gate's message names the worst few of many).
pub fn regressions(rows: &[DiffRow], percent: f64) -> Vec<String> {
    let judged = |c: &&Change| change_z(c).is_some();
    let m = rows
        .iter()
        .flat_map(|r| r.changes.iter().flatten())
        .filter(judged)
        .count();
    let z = family_z(m);
    let mut slower: Vec<(f64, String)> = rows
        .iter()
        .filter_map(|r| {
            let worst = r
                .changes
                .iter()
                .flatten()
                .filter(|c| change_z(c).is_some_and(|cz| cz > z))
                .map(|c| (c.ratio - 1.0) * 100.0)
                .fold(f64::NEG_INFINITY, f64::max);
            (worst > percent).then(|| (worst, format!("{} {}: +{worst:.1} %", r.function, r.size)))
        })
        .collect();
    slower.sort_by(|a, b| b.0.total_cmp(&a.0));
    slower.into_iter().map(|(_, line)| line).collect()
}

fn change(
    old: Option<f64>,
    new: Option<f64>,
    a: Option<Spread>,
    b: Option<Spread>,
) -> Option<Change> {
    let (old, new) = (old?, new?);
    if !(old > 0.0 && new.is_finite()) {
        return None;
    }
    Some(Change {
        old,
        new,
        ratio: new / old,
        significant: match (a, b) {
            (Some(a), Some(b)) => Some(!a.overlaps(&b)),
            _ => None,
        },
        old_interval: a,
        new_interval: b,
    })
}

/// Pair results of two runs by their [`ScenarioKey`] (function, size, dispatch mode, tag length, and
/// sessions where a file holds several), in the old run's order, then the new-only ones. Runs at
/// different session counts still pair, with a note. Results are indexed by key once, so pairing is
/// linear in the files' sizes.
pub fn diff(old: &Document, new: &Document) -> Vec<DiffRow> {
    use crate::results::ScenarioKey;
    use std::collections::HashMap;
    let mut used = vec![false; new.results.len()];
    let mut new_at: HashMap<ScenarioKey, Vec<usize>> = HashMap::new();
    for (i, n) in new.results.iter().enumerate() {
        new_at
            .entry(n.key().without_sessions())
            .or_default()
            .push(i);
    }
    let mut old_count: HashMap<ScenarioKey, usize> = HashMap::new();
    for o in &old.results {
        *old_count.entry(o.key().without_sessions()).or_default() += 1;
    }
    let mut rows = Vec::new();
    for o in &old.results {
        let point = o.key().without_sessions();
        let candidates: Vec<usize> = new_at
            .get(&point)
            .map(|at| at.iter().copied().filter(|&i| !used[i]).collect())
            .unwrap_or_default();
        let pick = candidates
            .iter()
            .copied()
            .find(|&i| new.results[i].sessions == o.sessions)
            .or_else(|| {
                // Only an unambiguous pairing across session counts.
                let old_twins = old_count.get(&point).copied().unwrap_or(0);
                (candidates.len() == 1 && old_twins == 1).then(|| candidates[0])
            });
        rows.push(match pick {
            None => row_without_changes(o, "only in OLD"),
            Some(i) => {
                used[i] = true;
                paired_row(o, &new.results[i])
            }
        });
    }
    for (i, n) in new.results.iter().enumerate() {
        if !used[i] {
            rows.push(row_without_changes(n, "only in NEW"));
        }
    }
    rows
}

/// The row of a result with no changes to show: `note` says why (no partner, or a failed result).
fn row_without_changes(r: &ResultEntry, note: &str) -> DiffRow {
    DiffRow {
        function: r.label(),
        size: r.size.to_string(),
        sessions: r.sessions,
        changes: judged().map(|_| None).collect(),
        energy: None,
        note: note.into(),
    }
}

/// The row of an old result `o` and its partner `n`: both metrics' changes, judged by the two runs'
/// 95 % intervals (or, in files without them, their repeats' spread), and what to keep in mind.
fn paired_row(o: &ResultEntry, n: &ResultEntry) -> DiffRow {
    if !o.measured() {
        return row_without_changes(o, "OLD result failed its validity checks");
    }
    if !n.measured() {
        return row_without_changes(o, "NEW result failed its validity checks");
    }
    let intervals = judged().all(|h| o.ci95.range(h).is_some() && n.ci95.range(h).is_some());
    let judged = |h: &Headline| {
        let (oi, ni) = if intervals {
            (o.ci95.range(h), n.ci95.range(h))
        } else {
            (o.spread.get(h), n.spread.get(h))
        };
        change((h.value)(&o.metrics), (h.value)(&n.metrics), oi, ni)
    };
    let mut row = row_without_changes(o, "");
    row.changes = self::judged().map(judged).collect();
    let mut notes = Vec::new();
    row.energy = energy_change(o, n, &mut notes);
    if !intervals && (o.repeats <= 1 || n.repeats <= 1) {
        notes.push("single repeat: no noise estimate".to_string());
    }
    let flagged = validity_flags(o, n);
    if !flagged.is_empty() {
        notes.push(format!("{}: judged by its interval", flagged.join(", ")));
    }
    if o.sessions != n.sessions {
        notes.push(format!("sessions {} → {}", o.sessions, n.sessions));
    }
    if o.cores != n.cores {
        notes.push(format!("cores {} → {}", o.cores, n.cores));
    }
    row.note = notes.join("; ");
    row
}

/// The change of net nJ/byte between two results that both measured energy, judged by their 95 %
/// intervals; a result on few meter steps is never called significant (said in `notes`).
fn energy_change(o: &ResultEntry, n: &ResultEntry, notes: &mut Vec<String>) -> Option<Change> {
    let (a, b) = (o.energy.as_ref()?, n.energy.as_ref()?);
    let (ea, eb) = (a.nj_per_byte?, b.nj_per_byte?);
    let interval = |ci: Option<crate::stats::Interval>| {
        ci.map(|i| Spread {
            min: i.low,
            max: i.high,
        })
    };
    let mut c = change(
        Some(ea.median),
        Some(eb.median),
        interval(ea.ci95),
        interval(eb.ci95),
    )?;
    if a.few_steps || b.few_steps {
        c.significant = c.significant.map(|_| false);
        notes.push("energy on few meter steps: not called significant".to_string());
    }
    if a.meter != b.meter {
        notes.push(format!("energy meters differ: {} → {}", a.meter, b.meter));
    }
    Some(c)
}

/// The warnings of either result that say to trust it less, as `OLD flagged noisy`: a result measured
/// while something else took the cores, or whose interval stayed wide, or that drifted. Said beside
/// the change; the change is still judged by the intervals, which carry that noise.
fn validity_flags(o: &ResultEntry, n: &ResultEntry) -> Vec<String> {
    [("OLD", o), ("NEW", n)]
        .iter()
        .flat_map(|(which, r)| {
            let mut codes: Vec<&str> = r
                .warnings
                .iter()
                .map(|w| w.code.as_str())
                .filter(|c| matches!(*c, "over-utilised" | "noisy" | "not-steady"))
                .collect();
            codes.dedup();
            codes
                .into_iter()
                .map(move |c| format!("{which} flagged {c}"))
        })
        .collect()
}

fn cpb(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn change_text(c: &Option<Change>) -> (String, String, String) {
    match c {
        None => ("-".into(), "-".into(), "-".into()),
        Some(c) => (
            format!("{} → {}", cpb(c.old), cpb(c.new)),
            format!("{:.3}", c.ratio),
            match c.significant {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => "?".into(),
            },
        ),
    }
}

/// The terminal table, with what its columns mean below it; energy columns only when some row has one.
pub fn render(rows: &[DiffRow], style: Style) -> String {
    let energy = rows.iter().any(|r| r.energy.is_some());
    let mut table = Table::new(style).left("function").right("size").right("n");
    for h in judged() {
        table = table
            .right(h.label.unwrap_or(h.key))
            .right("ratio")
            .right("sig");
    }
    if energy {
        table = table.right("nJ/B").right("ratio").right("sig");
    }
    let table = table.left("verdict").left("note");
    let mut out = table.render_each(rows, |r| {
        let mut cells = vec![
            r.function.clone(),
            r.size.to_string(),
            r.sessions.to_string(),
        ];
        for c in &r.changes {
            let (value, ratio, sig) = change_text(c);
            cells.extend([value, ratio, sig]);
        }
        if energy {
            let (e, er, esig) = change_text(&r.energy);
            cells.extend([e, er, esig]);
        }
        cells.extend([r.verdict().to_string(), r.note.clone()]);
        cells
    });
    out.push_str("ratio = NEW / OLD cycles per byte (below 1: faster). sig = significant: the two runs' 95 % confidence intervals do not overlap (for files without intervals, their repeats' [min, max]).\n");
    out.push_str("Flags (noisy, not-steady, over-utilised) say how far to trust a cell and hide nothing. --fail-on-regression tests each change at 5 % / (the number of changes compared), so an identical pair of runs fails it at most 5 % of the time.\n");
    if energy {
        out.push_str("nJ/B = net energy per byte (run --energy; median of rounds), NEW / OLD the same way; not part of the verdict.\n");
    }
    out
}

/// `diff --json` and `--csv`'s columns, in order: the row's names, then per judged metric its old and
/// new value under its key and its ratio and significance under the key's first word
/// (`absolute_ratio`), then the verdict and the note.
fn columns() -> Vec<String> {
    let mut out: Vec<String> = ["function", "size", "size_label", "sessions"]
        .map(String::from)
        .into();
    for h in judged() {
        let short = h.key.split('_').next().unwrap_or(h.key);
        out.extend([
            format!("old_{}", h.key),
            format!("new_{}", h.key),
            format!("{short}_ratio"),
            format!("{short}_significant"),
        ]);
    }
    out.extend(["verdict", "note"].map(String::from));
    out
}

/// The energy columns of `diff --json`/`--csv`, added only when some row compares energy.
const ENERGY_COLUMNS: &[&str] = &[
    "old_nj_per_byte",
    "new_nj_per_byte",
    "nj_per_byte_ratio",
    "nj_per_byte_significant",
];

/// The rows as `diff --json` and `--csv` write them: one record per row, energy's columns only when
/// a row has energy.
pub fn records(rows: &[DiffRow]) -> Records {
    use serde_json::Value;
    let change = |c: &Option<Change>| match c {
        Some(c) => [
            Value::from(c.old),
            Value::from(c.new),
            Value::from(c.ratio),
            c.significant.map_or(Value::Null, Value::from),
        ],
        None => [Value::Null, Value::Null, Value::Null, Value::Null],
    };
    let energy = rows.iter().any(|r| r.energy.is_some());
    let mut out = Records::new(&[]);
    out.columns = columns();
    if energy {
        out.columns
            .extend(ENERGY_COLUMNS.iter().map(|c| c.to_string()));
    }
    for r in rows {
        let mut row = vec![Value::from(r.function.as_str())];
        row.extend(Records::size_cells(&r.size));
        row.push(Value::from(r.sessions));
        for c in &r.changes {
            row.extend(change(c));
        }
        row.push(Value::from(r.verdict()));
        row.push(Value::from(r.note.as_str()));
        if energy {
            row.extend(change(&r.energy));
        }
        out.rows.push(row);
    }
    out
}
