//! `macbench compare`'s results file, one definition both ways: `compare --json` writes a
//! [`CompareFile`] and `validate` and `report` read the very same type back (`diff` and `export`
//! refuse it by name: they compare and convert `run`'s results).
//!
//! Why a document and flat rows: the rows are what a script wants (`compare --csv` writes the same
//! fields as its columns, in the same order, derived from [`CompareRecord`]'s serde shape), and the
//! document around them says what the file is (`schema`) and where it was measured (`host`), as every
//! other file macbench writes does. Lenient with defaults like the other schemas: a field added later
//! defaults in a file written before it (an `Option` by serde's own rule, as in `results`). What
//! serde cannot say — an interval that does not hold its median, a ratio of zero — [`read_back`]
//! checks, naming the field as a path (`rows[2].ratio`).

use crate::host::Host;
use serde::{Deserialize, Serialize};

/// The newest `macbench-compare/N` this macbench reads; `compare` writes it ([`SCHEMA`]).
pub const NEWEST: u32 = 1;

/// The schema `compare --json` writes.
/// 1: the rows (until then a bare JSON array with no schema) in a document with the host, each
/// side's lowest and highest round beside its median.
pub const SCHEMA: &str = "macbench-compare/1";

/// A `compare --json` file: what it is, the machine, and one row per algorithm and size.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CompareFile {
    pub schema: String,
    #[serde(default)]
    pub host: Host,
    #[serde(default)]
    pub rows: Vec<CompareRecord>,
}

/// One compared row: our figure and the peer's beside each other, their ratio and its verdict. The
/// CSV's columns are these fields, in this order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareRecord {
    /// `openssl`, `cryptopp`, `botan`, `ipsecmb`.
    pub peer: String,
    #[serde(default)]
    pub peer_version: String,
    pub algorithm: String,
    /// Bytes; `null` for cryptest's stream (named in `size_label`).
    pub size: Option<u64>,
    /// The size as the table prints it: `64`, `stream:1024`.
    #[serde(default)]
    pub size_label: String,
    /// Our function measured (`hmac-sha256/openssl/hw`).
    pub ours_function: Option<String>,
    /// What both sides divide by: `user`, `cpu` or `wall`.
    #[serde(default)]
    pub basis: String,
    #[serde(default)]
    pub reference_hz: f64,
    /// Our cycles/byte on the basis, median of the rounds.
    pub ours_cycles_per_byte: Option<f64>,
    /// The lowest and highest of our rounds.
    pub ours_cycles_per_byte_low: Option<f64>,
    pub ours_cycles_per_byte_high: Option<f64>,
    /// The peer's cycles/byte (its bytes/second at our reference rate), median of the rounds.
    pub theirs_cycles_per_byte: Option<f64>,
    pub theirs_cycles_per_byte_low: Option<f64>,
    pub theirs_cycles_per_byte_high: Option<f64>,
    /// Our throughput over theirs, median of the paired rounds: above 1, macbench measured faster.
    pub ratio: Option<f64>,
    pub ratio_ci95_low: Option<f64>,
    pub ratio_ci95_high: Option<f64>,
    /// Rounds with both figures.
    pub rounds: Option<usize>,
    pub equal_within_noise: Option<bool>,
    /// `equal within noise`, `peer faster` or `macbench faster`; `null` where there is none.
    pub verdict: Option<String>,
    /// Why a row with a ratio has no verdict because of what was paired: `no verdict: different
    /// library` or `no verdict: different quantity`.
    pub no_verdict_because: Option<String>,
    pub ours_cpu: Option<usize>,
    #[serde(default)]
    pub peer_cpus: String,
    pub harness_cycles_per_message: Option<f64>,
    pub harness_share: Option<f64>,
    pub peer_clock_share: Option<f64>,
    pub machine_other_cpu_share: Option<f64>,
    pub machine_load_average: Option<f64>,
    #[serde(default)]
    pub note: String,
}

impl CompareRecord {
    /// Why the row has no verdict, in the words the table uses: what was unlike, too few rounds, or
    /// nothing compared (with the row's note).
    pub fn no_verdict_reason(&self) -> Option<String> {
        if self.verdict.is_some() {
            return None;
        }
        Some(match (&self.no_verdict_because, self.ratio) {
            (Some(because), Some(_)) => because.clone(),
            (None, Some(_)) => format!(
                "too few rounds ({} of the {} a verdict needs)",
                self.rounds.unwrap_or(0),
                crate::stats::MIN_PAIRS_FOR_VERDICT
            ),
            (_, None) if self.note.is_empty() => "nothing compared".to_string(),
            (_, None) => format!("nothing compared: {}", self.note),
        })
    }
}

/// Whether a JSON value is a `compare` results file (its `schema` names the compare schema).
pub fn is_compare_file(value: &serde_json::Value) -> bool {
    value
        .get("schema")
        .and_then(|s| s.as_str())
        .is_some_and(|s| s.starts_with("macbench-compare/"))
}

/// Read back a compare results file's JSON: typed, then checked; the error names the field at fault
/// as a path in one line (`rows[0].ratio: invalid type: string "fast", expected f64`).
pub fn read_back(value: serde_json::Value) -> Result<CompareFile, String> {
    let file: CompareFile = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let why = e.into_inner().to_string();
        if path == "." {
            why
        } else {
            format!("{path}: {why}")
        }
    })?;
    match file
        .schema
        .rsplit('/')
        .next()
        .and_then(|n| n.parse::<u32>().ok())
    {
        Some(n) if (1..=NEWEST).contains(&n) => {}
        _ => {
            return Err(format!(
                "schema: {:?} is not one this macbench reads (up to macbench-compare/{NEWEST}); upgrade macbench",
                file.schema
            ))
        }
    }
    for (i, row) in file.rows.iter().enumerate() {
        check_row(row).map_err(|(field, why)| format!("rows[{i}].{field}: {why}"))?;
    }
    Ok(file)
}

/// A row's figures as `compare` writes them: positive and finite, each median within its low and
/// high, and a ratio only from at least one round.
fn check_row(row: &CompareRecord) -> Result<(), (&'static str, String)> {
    let triples = [
        (
            "ours_cycles_per_byte",
            row.ours_cycles_per_byte,
            ("ours_cycles_per_byte_low", row.ours_cycles_per_byte_low),
            ("ours_cycles_per_byte_high", row.ours_cycles_per_byte_high),
        ),
        (
            "theirs_cycles_per_byte",
            row.theirs_cycles_per_byte,
            ("theirs_cycles_per_byte_low", row.theirs_cycles_per_byte_low),
            (
                "theirs_cycles_per_byte_high",
                row.theirs_cycles_per_byte_high,
            ),
        ),
        (
            "ratio",
            row.ratio,
            ("ratio_ci95_low", row.ratio_ci95_low),
            ("ratio_ci95_high", row.ratio_ci95_high),
        ),
    ];
    for (name, median, (low_name, low), (high_name, high)) in triples {
        for (field, value) in [(name, median), (low_name, low), (high_name, high)] {
            if let Some(v) = value.filter(|v| !(v.is_finite() && *v > 0.0)) {
                return Err((field, format!("{v} is not a positive number")));
            }
        }
        if let (Some(m), Some(l)) = (median, low) {
            if l > m {
                return Err((low_name, format!("{l} is above the median {m}")));
            }
        }
        if let (Some(m), Some(h)) = (median, high) {
            if h < m {
                return Err((high_name, format!("{h} is below the median {m}")));
            }
        }
    }
    if row.ratio.is_some() && row.rounds.unwrap_or(0) == 0 {
        return Err((
            "rounds",
            "a ratio needs at least one round with both figures".to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> CompareRecord {
        CompareRecord {
            peer: "openssl".into(),
            algorithm: "hmac-sha256".into(),
            ours_cycles_per_byte: Some(2.0),
            ours_cycles_per_byte_low: Some(1.9),
            ours_cycles_per_byte_high: Some(2.1),
            ratio: Some(1.0),
            ratio_ci95_low: Some(0.9),
            ratio_ci95_high: Some(1.1),
            rounds: Some(5),
            ..CompareRecord::default()
        }
    }

    fn file(rows: Vec<CompareRecord>) -> serde_json::Value {
        serde_json::to_value(CompareFile {
            schema: SCHEMA.into(),
            host: Host::default(),
            rows,
        })
        .unwrap_or_default()
    }

    #[test]
    fn what_is_written_reads_back_unchanged() {
        let written = file(vec![row()]);
        assert!(is_compare_file(&written));
        let read = read_back(written.clone()).map(|f| serde_json::to_value(f).unwrap_or_default());
        assert_eq!(read, Ok(written));
    }

    #[test]
    fn a_refusal_names_the_field_as_a_path() {
        let mut bad = row();
        bad.ratio_ci95_low = Some(1.2);
        assert_eq!(
            read_back(file(vec![row(), bad])).err().as_deref(),
            Some("rows[1].ratio_ci95_low: 1.2 is above the median 1")
        );
        let mut typed = file(vec![row()]);
        typed["rows"][0]["ratio"] = serde_json::Value::from("fast");
        let err = read_back(typed).unwrap_err();
        assert!(err.starts_with("rows[0].ratio: invalid type"), "{err}");
        let mut newer = file(vec![]);
        newer["schema"] = serde_json::Value::from("macbench-compare/99");
        assert!(read_back(newer).unwrap_err().starts_with("schema: "));
    }

    #[test]
    fn a_row_of_an_older_build_reads_with_every_later_field_at_its_default() {
        // Only `peer` and `algorithm` are required; every other field, an `Option` among them,
        // takes its default when a file lacks it.
        let oldest = serde_json::json!({
            "schema": SCHEMA,
            "rows": [{"peer": "openssl", "algorithm": "hmac-sha256"}],
        });
        let read = read_back(oldest).map(|f| f.rows);
        let expected = CompareRecord {
            peer: "openssl".into(),
            algorithm: "hmac-sha256".into(),
            ..CompareRecord::default()
        };
        assert_eq!(read, Ok(vec![expected]));
        let without_peer = serde_json::json!({
            "schema": SCHEMA,
            "rows": [{"algorithm": "hmac-sha256"}],
        });
        let err = read_back(without_peer).unwrap_err();
        assert!(err.contains("missing field `peer`"), "{err}");
    }

    #[test]
    fn a_row_without_a_verdict_says_why() {
        let mut few = row();
        few.rounds = Some(2);
        assert_eq!(
            few.no_verdict_reason().as_deref(),
            Some("too few rounds (2 of the 5 a verdict needs)")
        );
        let none = CompareRecord {
            note: "botan printed no result".into(),
            ..CompareRecord::default()
        };
        assert_eq!(
            none.no_verdict_reason().as_deref(),
            Some("nothing compared: botan printed no result")
        );
    }
}
