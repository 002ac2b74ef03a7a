//! `macbench export --format bmf|benchstat FILE|DIR…`: results in the formats of the tools that keep
//! them over time (Bencher) or compare sets of runs (benchstat).

use super::CliError;
use crate::report::history::{self, Format};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// The format: `bmf` (Bencher Metric Format JSON), `benchstat` (Go's benchmark text format) or
    /// `lava` (LAVA's `name result value unit` lines).
    #[arg(long, value_enum)]
    pub format: Format,
    /// Results files, directories of them (`run -o`, `reproduce -o`), or quoted globs.
    #[arg(required = true, value_name = "RESULTS.json|DIR")]
    pub paths: Vec<PathBuf>,
    /// Write here (`-`: standard output).
    #[arg(short, long, default_value = "-")]
    pub output: PathBuf,
}

pub fn export(args: &ExportArgs) -> Result<(), CliError> {
    let inputs = super::report::expand(&args.paths)?;
    let files = super::report::load_all(&inputs.results)?;
    let docs: Vec<&crate::results::Document> = files.iter().map(|f| &f.doc).collect();
    // What an exporter writes is kept as measurements (a tracker's history, a LAVA verdict): counters
    // the fake engine made up must never get there.
    if let Some((file, verdict)) = files
        .iter()
        .find_map(|f| Some((&f.path, f.doc.fake_engine.as_ref()?)))
    {
        return Err(CliError::usage(format!(
            "{}: made up by the fake engine (MACBENCH_FAKE_ENGINE={verdict}), not measured; export takes measurements only",
            file.display()
        )));
    }
    if docs
        .iter()
        .all(|d| d.results.iter().all(|r| r.usable().is_none()))
    {
        return Err(CliError::failure(
            "no measured result in the inputs: nothing to export".to_string(),
        ));
    }
    let read: Vec<(&str, &std::path::Path)> = inputs
        .results
        .iter()
        .map(|p| ("RESULTS", p.as_path()))
        .collect();
    super::files::not_into_inputs(&[("-o", args.output.as_path())], &args.paths)?;
    let _locked = super::files::prepare(&[("-o", args.output.as_path())], &read)?;
    let exporter: &dyn crate::report::Exporter<[&crate::results::Document]> = match args.format {
        Format::Bmf => &history::Bmf,
        Format::Benchstat => &history::Benchstat,
        Format::Lava => &history::Lava,
    };
    crate::report::export(exporter, &docs[..], &args.output).map_err(CliError::failure)
}
