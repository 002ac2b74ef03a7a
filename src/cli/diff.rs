//! `macbench diff OLD.json NEW.json`: per function and size, the change and whether it beats the noise.

use super::files::{Records, RowOutputs};
use super::report::load_all;
use super::CliError;
use crate::report::diff::{self, Change, DiffRow};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct DiffArgs {
    /// The earlier results file.
    #[arg(value_name = "OLD.json")]
    pub old: PathBuf,
    /// The later results file.
    #[arg(value_name = "NEW.json")]
    pub new: PathBuf,
    /// Exit 1 when a result is slower beyond noise by more than this many percent (absolute or
    /// apparent cycles/byte), as a CI gate: `--fail-on-regression 5`.
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub fail_on_regression: Option<f64>,
    #[command(flatten)]
    pub outputs: RowOutputs,
}

/// The columns of `diff --json`/`--csv`.
const COLUMNS: &[&str] = &[
    "function",
    "size",
    "size_label",
    "sessions",
    "old_absolute_cycles_per_byte",
    "new_absolute_cycles_per_byte",
    "absolute_ratio",
    "absolute_significant",
    "old_apparent_cycles_per_byte",
    "new_apparent_cycles_per_byte",
    "apparent_ratio",
    "apparent_significant",
    "verdict",
    "note",
];

fn records(rows: &[DiffRow]) -> Records {
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
    let mut out = Records::new(COLUMNS);
    for r in rows {
        let mut row = vec![Value::from(r.function.as_str())];
        row.extend(Records::size_cells(&r.size));
        row.push(Value::from(r.sessions));
        row.extend(change(&r.absolute));
        row.extend(change(&r.apparent));
        row.push(Value::from(r.verdict()));
        row.push(Value::from(r.note.as_str()));
        out.rows.push(row);
    }
    out
}

pub fn diff(args: &DiffArgs) -> Result<(), CliError> {
    if let Some(p) = args.fail_on_regression {
        if !(p.is_finite() && p >= 0.0) {
            return Err(CliError::usage(format!(
                "--fail-on-regression {p}: give a percentage of 0 or more"
            )));
        }
    }
    let _locked = args
        .outputs
        .prepare(&[("OLD.json", &args.old), ("NEW.json", &args.new)])?;
    let files = load_all(&[args.old.clone(), args.new.clone()])?;
    let rows = diff::diff(&files[0].doc, &files[1].doc);
    if rows.is_empty() {
        return Err(CliError::failure(
            "no results in either file: nothing was compared",
        ));
    }
    // Written whatever the verdict below: a CI gate that fails keeps the rows that made it fail.
    args.outputs.write(&records(&rows))?;
    crate::out!("{}", diff::render(&rows, crate::table::Style::detect()));
    crate::outln!("summary: {}", diff::summary(&rows));
    // Nothing paired: a script must not read "no change" into it.
    if rows.iter().all(|r| r.unpaired()) {
        return Err(CliError::failure(format!(
            "{} and {} have no function and size in common: nothing was compared",
            args.old.display(),
            args.new.display()
        )));
    }
    let (old_hz, new_hz) = (
        files[0].doc.clock.reference_hz,
        files[1].doc.clock.reference_hz,
    );
    if old_hz > 0.0 && new_hz > 0.0 && (old_hz / new_hz - 1.0).abs() > 0.01 {
        crate::outln!(
            "note: the runs used different reference rates f ({:.3} and {:.3} GHz): cycles are not the same unit",
            old_hz / 1e9,
            new_hz / 1e9
        );
    }
    if let Some(percent) = args.fail_on_regression {
        let slower = diff::regressions(&rows, percent);
        if !slower.is_empty() {
            return Err(CliError::failure(format!(
                "{} result(s) slower beyond noise by more than {percent} %: {}",
                slower.len(),
                slower.join("; ")
            )));
        }
    }
    Ok(())
}
