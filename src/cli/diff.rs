//! `macbench diff OLD.json NEW.json`: per function and size, the change and whether it beats the noise.

use super::files::RowOutputs;
use super::report::load_all;
use super::CliError;
use crate::report::diff;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, clap::Args)]
pub struct DiffArgs {
    /// The earlier results file, or a directory of them (`run -o`, `reproduce -o`: files are paired
    /// with NEW's by name).
    #[arg(value_name = "OLD.json|DIR")]
    pub old: PathBuf,
    /// The later results file, or a directory of them.
    #[arg(value_name = "NEW.json|DIR")]
    pub new: PathBuf,
    /// Exit 1 when a result is slower beyond noise by more than this many percent (absolute or
    /// apparent cycles/byte), as a CI gate: `--fail-on-regression 5` (`5%` alike).
    #[arg(long, value_name = "PCT", allow_hyphen_values = true, value_parser = crate::spec::parse_percent)]
    pub fail_on_regression: Option<f64>,
    #[command(flatten)]
    pub outputs: RowOutputs,
}

/// The columns of `diff --json`/`--csv`.
pub fn diff(args: &DiffArgs) -> Result<(), CliError> {
    if let Some(p) = args.fail_on_regression {
        if !(p.is_finite() && p >= 0.0) {
            return Err(CliError::usage(format!(
                "--fail-on-regression {p}: give a percentage of 0 or more"
            )));
        }
    }
    let pairs = pairs(&args.old, &args.new)?;
    let inputs: Vec<(&str, &Path)> = pairs
        .iter()
        .flat_map(|(o, n)| [("OLD.json", o.as_path()), ("NEW.json", n.as_path())])
        .collect();
    let outputs: Vec<(&str, &Path)> =
        [("--json", &args.outputs.json), ("--csv", &args.outputs.csv)]
            .into_iter()
            .filter_map(|(flag, p)| Some((flag, p.as_deref()?)))
            .collect();
    super::files::not_into_inputs(&outputs, &[args.old.clone(), args.new.clone()])?;
    let _locked = args.outputs.prepare(&inputs)?;
    let mut rows = Vec::new();
    let mut rates = Vec::new();
    for (old, new) in &pairs {
        let files = load_all(&[old.clone(), new.clone()])?;
        let mut these = diff::diff(&files[0].doc, &files[1].doc);
        if pairs.len() > 1 {
            let stem = old.file_stem().unwrap_or_default().to_string_lossy();
            for r in &mut these {
                r.function = format!("{stem}: {}", r.function);
            }
        }
        rows.extend(these);
        rates.push((
            files[0].doc.clock.reference_hz,
            files[1].doc.clock.reference_hz,
        ));
    }
    if rows.is_empty() {
        return Err(CliError::failure(
            "no results in either file: nothing was compared",
        ));
    }
    // Written whatever the verdict below: a CI gate that fails keeps the rows that made it fail.
    args.outputs.write(&diff::records(&rows))?;
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
    let differ = |(old_hz, new_hz): &(f64, f64)| {
        *old_hz > 0.0 && *new_hz > 0.0 && (old_hz / new_hz - 1.0).abs() > 0.01
    };
    if let Some((old_hz, new_hz)) = rates.iter().find(|r| differ(r)) {
        crate::outln!(
            "note: the runs used different reference rates f ({:.3} and {:.3} GHz): cycles are not the same unit",
            old_hz / 1e9,
            new_hz / 1e9
        );
    }
    if let Some(percent) = args.fail_on_regression {
        let slower = diff::regressions(&rows, percent);
        if !slower.is_empty() {
            // One line a reader can take in: the count and the worst ten (144 cells made one line of
            // ~7,000 characters); every row is in the table and in `--json`.
            const NAMED: usize = 10;
            let more = match slower.len().saturating_sub(NAMED) {
                0 => String::new(),
                n => format!("; and {n} more (--json)"),
            };
            return Err(CliError::failure(format!(
                "{} result(s) slower beyond noise by more than {percent} %, the worst first: {}{more}",
                slower.len(),
                slower[..slower.len().min(NAMED)].join("; ")
            )));
        }
    }
    Ok(())
}

/// The results files to compare: OLD and NEW themselves, or, when either is a directory, their files
/// paired by name (one file on each side pairs whatever the names). Names on one side only are said.
fn pairs(old: &Path, new: &Path) -> Result<Vec<(PathBuf, PathBuf)>, CliError> {
    let old_files = super::report::expand(&[old.to_path_buf()])?.results;
    let new_files = super::report::expand(&[new.to_path_buf()])?.results;
    if let ([o], [n]) = (old_files.as_slice(), new_files.as_slice()) {
        return Ok(vec![(o.clone(), n.clone())]);
    }
    let name = |p: &PathBuf| p.file_name().map(|n| n.to_os_string());
    let mut pairs = Vec::new();
    for o in &old_files {
        match new_files.iter().find(|n| name(n) == name(o)) {
            Some(n) => pairs.push((o.clone(), n.clone())),
            None => crate::outln!(
                "note: {} has no counterpart in {}",
                o.display(),
                new.display()
            ),
        }
    }
    for n in new_files
        .iter()
        .filter(|n| !old_files.iter().any(|o| name(o) == name(n)))
    {
        crate::outln!(
            "note: {} has no counterpart in {}",
            n.display(),
            old.display()
        );
    }
    if pairs.is_empty() {
        return Err(CliError::failure(format!(
            "{} and {} have no results file of the same name: nothing was compared",
            old.display(),
            new.display()
        )));
    }
    Ok(pairs)
}
