//! Ratios to a baseline row (`run --baseline ROW`): which row of a run is each row's baseline, and
//! the paired ratio of their costs.
//!
//! A shared host slows a core by 10–70 % in level shifts lasting seconds, and two windows adjacent
//! in time on one core share that state while the two cores do not move together
//! (docs/methodology.md §4, "Ratios to a baseline row"). So the ratio of two rows measured in
//! adjacent windows on the same core is far more precise than the ratio of their medians, each of
//! which carries the host's wander whole. The sweep runs the rows of a [`PairGroup`] back to back
//! within each round (`sweep::run`), so repeat `j` of a row and repeat `j` of its baseline are
//! neighbours; here the rounds are paired by index, each round gives one log ratio
//! ([`metrics::paired_log_ratio`]: per core, then the mean over cores) and the ratio is their
//! exponentiated mean with a paired t interval ([`stats::paired_log_ratio`]). The unpaired
//! interval (the two cells' own intervals combined) is kept beside it, so a reader sees what the
//! pairing bought.
//!
//! The rule, once: rows pair when they differ only in backend, acceleration (or ISA level) and
//! dispatch mode — same algorithm, size, sessions and tag length (the run shares everything else).
//! `ROW` picks the baseline in each such group by one of those three, or by the function as the
//! table prints it; a group with two candidates is an error before anything runs, a group with none
//! gets no ratio and says why. Selection and arithmetic live here, below the runner and the
//! exporters, so a results file is judged the same by whoever reads it.

use super::{Document, ResultEntry, ScenarioKey, SizeLabel};
use crate::engine::{Scenario, SizeSource};
use crate::metrics;
use crate::stats;
use serde::{Deserialize, Serialize};

/// `--baseline ROW` as given: which row of each group the others are divided by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineRow(String);

impl BaselineRow {
    /// `ROW` as typed; its grammar is applied when matched against rows ([`BaselineRow::matches`]).
    pub fn new(text: &str) -> Result<BaselineRow, BaselineError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(BaselineError::Empty);
        }
        Ok(BaselineRow(text.to_string()))
    }

    /// As given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the row `key` is what `ROW` names: a backend (`openssl`), an acceleration or ISA
    /// level (`hw`, `sw`, `avx2`), a dispatch mode (`single`, `burst:8`), `backend/accel`
    /// (`openssl/hw`), or the function as the table prints it (`hmac-sha256/openssl/hw`, with its
    /// dispatch mode after a space when not `single`: `hmac-sha256/ipsecmb/hw burst:8`).
    pub fn matches(&self, key: &ScenarioKey) -> bool {
        let row = self.0.as_str();
        let f = &key.function;
        match row.split('/').count() {
            1 => row == f.backend || row == f.accel || row == key.dispatch.to_string(),
            2 => row == format!("{}/{}", f.backend, f.accel),
            // The function alone names its `single` row; another mode follows after a space.
            _ if row.contains(char::is_whitespace) => row == key.label(),
            _ => row == f.to_string() && key.dispatch == crate::engine::Dispatch::Single,
        }
    }

    /// Check `ROW` against the rows a run will have, before anything runs: it must name at least one
    /// row, and at most one in each [`PairGroup`].
    pub fn check(&self, keys: &[ScenarioKey]) -> Result<(), BaselineError> {
        if !keys.iter().any(|k| self.matches(k)) {
            return Err(BaselineError::NoRow {
                row: self.0.clone(),
                accepted: accepted(keys),
            });
        }
        let mut groups: Vec<(PairGroup, Vec<String>)> = Vec::new();
        for k in keys.iter().filter(|k| self.matches(k)) {
            let g = PairGroup::of(k);
            match groups.iter_mut().find(|(x, _)| *x == g) {
                Some((_, rows)) => rows.push(k.label()),
                None => groups.push((g, vec![k.label()])),
            }
        }
        if let Some((group, rows)) = groups.into_iter().find(|(_, rows)| rows.len() > 1) {
            return Err(BaselineError::Ambiguous {
                row: self.0.clone(),
                group: group.to_string(),
                rows,
            });
        }
        Ok(())
    }
}

/// What could name a baseline among `keys`: their backends, accelerations and dispatch modes, and
/// the functions as the table prints them.
fn accepted(keys: &[ScenarioKey]) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut add = |w: String| {
        if !words.contains(&w) {
            words.push(w);
        }
    };
    for k in keys {
        add(k.function.backend.clone());
    }
    for k in keys {
        add(k.function.accel.clone());
    }
    for k in keys {
        add(k.dispatch.to_string());
    }
    for k in keys {
        add(k.label());
    }
    words.join(", ")
}

/// Why `--baseline` was refused (exit 2, before anything runs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaselineError {
    #[error("--baseline needs a row: a backend, an acceleration, a dispatch mode or a function")]
    Empty,
    #[error("--baseline {row}: names no row of this run; give one of: {accepted}")]
    NoRow { row: String, accepted: String },
    #[error("--baseline {row}: matches {} rows of {group} ({}); name one, by its function as the table prints it ({}) or by what sets it apart", rows.len(), rows.join(", "), rows.first().map_or("", String::as_str))]
    Ambiguous {
        row: String,
        group: String,
        rows: Vec<String>,
    },
}

/// The rows that are compared with each other: the same algorithm, size, sessions and tag length,
/// differing in backend, acceleration or dispatch mode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PairGroup {
    pub algorithm: String,
    pub size: SizeLabel,
    pub sessions: usize,
    pub tag_len: Option<usize>,
}

impl PairGroup {
    /// The group of the row `key`.
    pub fn of(key: &ScenarioKey) -> PairGroup {
        PairGroup {
            algorithm: key.function.algorithm.clone(),
            size: key.size.clone(),
            sessions: key.sessions,
            tag_len: key.tag_len,
        }
    }
}

/// `hmac-sha256 at 64 bytes`, `hmac-sha256 at imix, tag:16`.
impl std::fmt::Display for PairGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}", self.algorithm, self.size)?;
        if matches!(self.size, SizeLabel::Bytes(_)) {
            f.write_str(" bytes")?;
        }
        if let Some(n) = self.tag_len {
            write!(f, ", tag:{n}")?;
        }
        Ok(())
    }
}

/// The row a scenario will be in its results file ([`ResultEntry::key`]), before it runs.
pub fn scenario_key(scenario: &Scenario) -> ScenarioKey {
    ScenarioKey {
        function: scenario.function.function_id(),
        size: match &scenario.size {
            SizeSource::Fixed { size } => SizeLabel::Bytes(*size),
            SizeSource::Model { name, .. } => SizeLabel::Model(name.clone()),
        },
        sessions: scenario.sessions,
        dispatch: scenario.dispatch,
        tag_len: scenario.tag_len,
    }
}

/// A row's cost against its group's baseline row (`"baseline"` in a result's JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineRatio {
    /// The baseline row, as the table names it; `None` when its group has none.
    pub function: Option<String>,
    /// This row's absolute cycles/byte over the baseline's: exp(mean of the paired rounds' log
    /// ratios); 1 for the baseline row itself.
    pub ratio: Option<f64>,
    /// The paired 95 % interval; `None` for the baseline row and below two pairs.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Rounds paired.
    #[serde(default)]
    pub pairs: usize,
    /// For comparison: the interval of the ratio of the two medians from the cells' own 95 %
    /// intervals, as if measured independently.
    pub unpaired_low: Option<f64>,
    pub unpaired_high: Option<f64>,
    /// Why there is no ratio or no interval (no baseline row in the group, a failed row), or that
    /// this row is the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// [`BaselineRatio::note`] of the baseline row itself.
pub const IS_BASELINE: &str = "the baseline";

impl BaselineRatio {
    /// Whether this is the baseline row's own entry.
    pub fn is_baseline(&self) -> bool {
        self.note.as_deref() == Some(IS_BASELINE)
    }

    fn without(function: Option<String>, note: String) -> BaselineRatio {
        BaselineRatio {
            function,
            ratio: None,
            low: None,
            high: None,
            pairs: 0,
            unpaired_low: None,
            unpaired_high: None,
            note: Some(note),
        }
    }
}

/// Give every result of `doc` its ratio to its group's `row` (replacing any earlier one).
pub fn attach(doc: &mut Document, row: &BaselineRow) {
    let ratios: Vec<BaselineRatio> = doc
        .results
        .iter()
        .map(|r| ratio_of(r, &doc.results, row))
        .collect();
    for (r, ratio) in doc.results.iter_mut().zip(ratios) {
        r.baseline = Some(ratio);
    }
}

/// `r`'s ratio to the row of `all` that `row` names in its group.
pub fn ratio_of(r: &ResultEntry, all: &[ResultEntry], row: &BaselineRow) -> BaselineRatio {
    let key = r.key();
    let group = PairGroup::of(&key);
    let candidates: Vec<&ResultEntry> = all
        .iter()
        .filter(|b| PairGroup::of(&b.key()) == group && row.matches(&b.key()))
        .collect();
    let base = match candidates.as_slice() {
        [one] => *one,
        [] => {
            return BaselineRatio::without(
                None,
                format!(
                    "no ratio: no row of {group} is --baseline {} in this run",
                    row.as_str()
                ),
            )
        }
        many => {
            let names: Vec<String> = many.iter().map(|b| b.label()).collect();
            return BaselineRatio::without(
                None,
                format!(
                    "no ratio: --baseline {} matches {} rows of {group} ({})",
                    row.as_str(),
                    many.len(),
                    names.join(", ")
                ),
            );
        }
    };
    let function = Some(base.label());
    if base.key() == key {
        return BaselineRatio {
            function,
            ratio: Some(1.0),
            low: None,
            high: None,
            pairs: r.raw.len(),
            unpaired_low: None,
            unpaired_high: None,
            note: Some(IS_BASELINE.to_string()),
        };
    }
    if !r.measured() || !base.measured() {
        let which = if !r.measured() {
            "this row"
        } else {
            "the baseline row"
        };
        return BaselineRatio::without(function, format!("no ratio: {which} failed"));
    }
    if let Some(auto) = [r, base]
        .iter()
        .find(|e| e.adjustments.iter().any(|a| a.starts_with("round ")))
    {
        return BaselineRatio::without(
            function,
            format!(
                "no ratio: --auto started the repeats of {} over, so its rounds no longer pair",
                auto.label()
            ),
        );
    }
    let rounds = r.raw.len().min(base.raw.len());
    let d: Vec<f64> = (0..rounds)
        .filter_map(|j| metrics::paired_log_ratio(&r.raw[j], &base.raw[j]))
        .collect();
    let Some(paired) = stats::paired_log_ratio(&d) else {
        return BaselineRatio::without(function, "no ratio: no round measured both".to_string());
    };
    let unpaired = unpaired(r, base);
    BaselineRatio {
        function,
        ratio: Some(paired.ratio),
        low: paired.ci95.map(|i| i.low),
        high: paired.ci95.map(|i| i.high),
        pairs: paired.pairs,
        unpaired_low: unpaired.map(|i| i.low),
        unpaired_high: unpaired.map(|i| i.high),
        note: paired
            .ci95
            .is_none()
            .then(|| "no interval: one round paired (--repeat 2 or more gives one)".to_string()),
    }
}

/// The unpaired interval of `r`'s median over `base`'s: absolute cycles per byte, or per message
/// for empty messages.
fn unpaired(r: &ResultEntry, base: &ResultEntry) -> Option<stats::Interval> {
    let per_byte = r.metrics.bytes > 0 && base.metrics.bytes > 0;
    let pick = |e: &ResultEntry| {
        if per_byte {
            Some((
                e.metrics.absolute_cycles_per_byte?,
                e.ci95.absolute_cycles_per_byte?,
            ))
        } else {
            Some((
                e.metrics.absolute_cycles_per_message?,
                e.ci95.absolute_cycles_per_message?,
            ))
        }
    };
    let (a, a_ci) = pick(r)?;
    let (b, b_ci) = pick(base)?;
    stats::unpaired_ratio(a, a_ci, b, b_ci)
}
