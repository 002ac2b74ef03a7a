//! `macbench validate FILE|DIR…`: whether results are fit to use, as a pipeline's gate (a fleet's
//! fetched directories, a CI artefact): exit 0 when every file is a complete macbench results file
//! whose results all measured; else exit 1 with one line per problem. What makes a file malformed —
//! a result without metrics, an inverted interval, `sessions: 0` — is `results::check`'s, the same for
//! every reader; `net`'s and `compare`'s files are checked by their own rules. An input that is not a regular file (a FIFO, a device) is refused up front, exit 2.

use super::CliError;
use crate::report::read;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, clap::Args)]
pub struct ValidateArgs {
    /// Results files, directories of them (`run -o`, `reproduce -o`, with their claims files), or
    /// quoted globs.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub paths: Vec<PathBuf>,
    /// Count non-fatal validity warnings (a busy core, a short window) as problems too.
    #[arg(long)]
    pub strict: bool,
}

pub fn validate(args: &ValidateArgs) -> Result<(), CliError> {
    let mut problems: Vec<String> = Vec::new();
    let (mut files, mut results) = (0, 0);
    let mut expanded = Vec::new();
    for path in &args.paths {
        // Each path on its own, so one missing directory does not hide the others' problems.
        match read::expand_inputs(std::slice::from_ref(path)) {
            Ok(i) => expanded.push((path, i)),
            Err(e) => problems.push(e.to_string()),
        }
    }
    // A FIFO or a device among the inputs is bad input, not a finding: refused before any is read
    // (a FIFO's read would block for ever).
    for (_, inputs) in &expanded {
        for file in inputs.results.iter().chain(&inputs.claims) {
            read::regular_file(file).map_err(|e| CliError::usage(e.to_string()))?;
        }
    }
    for (path, inputs) in &expanded {
        // A claims file judges results beside it; alone it is no evidence that anything measured.
        if inputs.results.is_empty() {
            problems.push(format!(
                "{}: a claims file holds no results; give the directory that holds it and the results it judges",
                path.display()
            ));
        }
        for file in &inputs.results {
            files += 1;
            results += check_results(file, args.strict, &mut problems);
        }
        for file in &inputs.claims {
            files += 1;
            if let Err(e) = read::read_claims(file) {
                problems.push(e.to_string());
            }
        }
    }
    for p in &problems {
        crate::outln!("{p}");
    }
    if problems.is_empty() {
        crate::outln!("validate: {files} file(s), {results} result(s): all complete and measured");
        Ok(())
    } else {
        Err(CliError::failure(format!(
            "{} problem(s) in {files} file(s)",
            problems.len()
        )))
    }
}

/// The problems of one results file, pushed one line each; returns how many results it holds.
fn check_results(file: &Path, strict: bool, problems: &mut Vec<String>) -> usize {
    let loaded = match read::read_written(file) {
        Ok(read::Written::Results(l)) => l,
        Ok(read::Written::Net { file: net, .. }) => {
            return check_net(file, &net, strict, problems);
        }
        Ok(read::Written::Compare { file: compared, .. }) => {
            return check_compare(file, &compared, problems);
        }
        Err(e) => {
            problems.push(e.to_string());
            return 0;
        }
    };
    let shown = file.display();
    let doc = &loaded.doc;
    let n = doc.results.len();
    let partial = format!(
        "a partial run (interrupted, or still running): {n} result(s) of an unfinished plan"
    );
    check_finished(file, doc.partial.then_some(partial), n, problems);
    // Counters the fake engine made up are complete but not measured: a problem where only
    // measurements may pass (`--strict`), a note otherwise (macbench's own tests gate on them).
    if let Some(verdict) = &doc.fake_engine {
        let made_up = format!(
            "{shown}: made up by the fake engine (MACBENCH_FAKE_ENGINE={verdict}), not measured"
        );
        if strict {
            problems.push(made_up);
        } else {
            crate::outln!("{made_up}");
        }
    }
    for r in &doc.results {
        let fatal: Vec<&str> = r
            .warnings
            .iter()
            .filter(|w| w.fatal || strict)
            .map(|w| w.message.as_str())
            .collect();
        if r.failed || !fatal.is_empty() {
            let what = if r.failed { "failed" } else { "warned" };
            let why = if fatal.is_empty() {
                "no reason recorded".to_string()
            } else {
                fatal.join("; ")
            };
            problems.push(format!("{shown}: {}: {what}: {why}", r.label()));
        }
    }
    n
}

/// What any results file may lack, whatever wrote it: an end (`partial` says what was cut short,
/// when it was) and any result at all.
fn check_finished(
    file: &Path,
    partial: Option<String>,
    results: usize,
    problems: &mut Vec<String>,
) {
    let shown = file.display();
    if let Some(partial) = partial {
        problems.push(format!("{shown}: {partial}"));
    }
    if results == 0 {
        problems.push(format!("{shown}: no results"));
    }
}

/// The problems of one `net` results file: unfinished, empty, or a row that found no passing rate
/// (with `strict`, any row with a warning); returns how many results it holds.
fn check_net(
    file: &Path,
    net: &crate::results::net::NetFile,
    strict: bool,
    problems: &mut Vec<String>,
) -> usize {
    let shown = file.display();
    let n = net.results.len();
    let partial = format!("a partial net run (interrupted, or still running): {n} result(s)");
    check_finished(file, net.partial.then_some(partial), n, problems);
    for r in &net.results {
        let at = format!("{shown}: {} @ {}", r.function, r.size_label());
        if r.rate_pps().is_none() {
            problems.push(format!("{at}: no trial passed: no rate was measured"));
        } else if strict && !r.warnings.is_empty() {
            problems.push(format!("{at}: warned: {}", r.warnings.join("; ")));
        }
    }
    n
}

/// The problems of one `compare` results file: no rows, or a row where nothing was compared (no
/// round had both figures); returns how many rows it holds. A row without a verdict (too few rounds,
/// unlike sides) compared what it could and is no problem: its file says why.
fn check_compare(
    file: &Path,
    compared: &crate::results::compare::CompareFile,
    problems: &mut Vec<String>,
) -> usize {
    let shown = file.display();
    if compared.rows.is_empty() {
        problems.push(format!("{shown}: no rows"));
    }
    for r in &compared.rows {
        if r.ratio.is_none() {
            problems.push(format!(
                "{shown}: {} @ {} against {}: {}",
                r.algorithm,
                r.size_label,
                r.peer,
                r.no_verdict_reason().unwrap_or_default()
            ));
        }
    }
    compared.rows.len()
}
