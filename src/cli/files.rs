//! The command line's side of the output-file rules in [`crate::report::output`]: which paths each
//! subcommand writes and reads, checked together before anything runs (exit 2 when refused).

use super::CliError;
use crate::report::output::{self, Prepared};
use std::path::{Path, PathBuf};

/// Check outputs against each other and the inputs, and lock them; keep the result alive while writing.
pub fn prepare(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<Prepared, CliError> {
    output::prepare(outputs, inputs).map_err(|e| CliError::usage(e.to_string()))
}

/// The files `run` (and `net`) write: `--json`, `--csv` and, beside the CSV, its per-thread file.
pub fn run_outputs(
    json: Option<&Path>,
    csv: Option<&Path>,
    threads: bool,
) -> Vec<(&'static str, PathBuf)> {
    let mut out: Vec<(&'static str, PathBuf)> = Vec::new();
    if let Some(p) = json {
        out.push(("--json", p.to_path_buf()));
    }
    if let Some(p) = csv {
        out.push(("--csv", p.to_path_buf()));
        if threads && !output::is_stream(p) {
            out.push((
                "--csv (per-thread file)",
                crate::report::csv_export::threads_path(p),
            ));
        }
    }
    out
}

/// [`prepare`] for a list built by [`run_outputs`].
pub fn prepare_owned(
    outputs: &[(&'static str, PathBuf)],
    inputs: &[(&str, &Path)],
) -> Result<Prepared, CliError> {
    let borrowed: Vec<(&str, &Path)> = outputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    prepare(&borrowed, inputs)
}

/// Whether a periodic rewrite of `path` should happen now: a stream (standard output, a device, a
/// FIFO) takes one document, at the end.
pub fn write_now(path: &Path, last: bool) -> bool {
    last || !output::is_stream(path)
}
