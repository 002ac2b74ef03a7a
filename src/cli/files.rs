//! The command line's side of the output-file rules in [`crate::report::output`]: which paths each
//! subcommand writes and reads, checked together before anything runs (exit 2 when refused).

use super::CliError;
use crate::report::output::{self, Prepared};
pub use crate::report::rows::Records;
use std::path::{Path, PathBuf};

/// Check outputs against each other and the inputs, and lock them; keep the result alive while writing.
pub fn prepare(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<Prepared, CliError> {
    output::prepare(outputs, inputs).map_err(|e| CliError::usage(e.to_string()))
}

/// The files `run`, `net` and `model` write, for the CLI's callers.
pub use output::run_outputs;

/// [`output::not_into_inputs`]: refused with exit 2.
pub fn not_into_inputs(outputs: &[(&str, &Path)], paths: &[PathBuf]) -> Result<(), CliError> {
    output::not_into_inputs(outputs, paths).map_err(CliError::usage)
}

/// [`prepare`] for a list built by [`run_outputs`].
pub fn prepare_owned(
    outputs: &[(&'static str, PathBuf)],
    inputs: &[(&str, &Path)],
) -> Result<Prepared, CliError> {
    let borrowed: Vec<(&str, &Path)> = outputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    prepare(&borrowed, inputs)
}

/// `--json FILE` and `--csv FILE` of a command whose output is a table's rows ([`Records`]: `compare`,
/// `diff`), written by the output rules (`report::write_atomic`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RowOutputs {
    /// Write the rows as JSON here (an array of objects, one per row; `-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the rows as CSV here (the same columns as --json).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

impl RowOutputs {
    /// [`prepare`] the two outputs against each other and `inputs`, before any work starts.
    pub fn prepare(&self, inputs: &[(&str, &Path)]) -> Result<Prepared, CliError> {
        let outputs = run_outputs(self.json.as_deref(), self.csv.as_deref(), false);
        prepare_owned(&outputs, inputs)
    }

    /// Write the rows to whichever of the two were given ([`crate::report::rows::write_rows`]).
    pub fn write(&self, records: &Records) -> Result<(), CliError> {
        self.write_document::<()>(None, records)
    }

    /// A results document as `--json` and its rows as `--csv`.
    pub fn write_document<D: serde::Serialize>(
        &self,
        document: Option<&D>,
        records: &Records,
    ) -> Result<(), CliError> {
        let (json, csv) = (self.json.as_deref(), self.csv.as_deref());
        crate::report::rows::write_rows(json, csv, document, records).map_err(CliError::failure)
    }
}
