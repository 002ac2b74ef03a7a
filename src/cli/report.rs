//! `macbench report`: results JSON files → one self-contained HTML page (and PNGs with `--png`).

use super::CliError;
use crate::report::{self, html, plots, read};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// Results files written by `macbench run --json` (several: one series per file, e.g. per machine).
    #[arg(required = true, value_name = "RESULTS.json")]
    pub files: Vec<PathBuf>,
    /// Write the HTML report here (`-`: standard output).
    #[arg(short, long, default_value = "report.html")]
    pub output: PathBuf,
    /// Scenario of the per-thread figures, ALG/BACKEND/ACCEL@SIZE, then /DISPATCH and /tag:N when the
    /// run had them (`hmac-sha256/ipsecmb/hw@64/burst:16`; default: most sessions, largest size).
    #[arg(long, value_name = "ALG/BACKEND/ACCEL@SIZE")]
    pub scenario: Option<String>,
    /// Also write every figure as a PNG into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
}

/// Read every file, with the one-line error of the first bad one (exit 2: bad input).
pub fn load_all(files: &[PathBuf]) -> Result<Vec<read::Loaded>, CliError> {
    let mut loaded: Vec<read::Loaded> = Vec::with_capacity(files.len());
    for path in files {
        let mut l = read::read(path).map_err(|e| CliError::usage(e.to_string()))?;
        // Same stem twice (a/run.json, b/run.json): number the later ones so legends stay apart.
        let base = l.label.clone();
        let mut k = 2;
        while loaded.iter().any(|o| o.label == l.label) {
            l.label = format!("{base}#{k}");
            k += 1;
        }
        loaded.push(l);
    }
    Ok(loaded)
}

pub fn report(args: &ReportArgs) -> Result<(), CliError> {
    let files = load_all(&args.files)?;
    // A report of nothing is not a report: say so rather than write an empty page with exit 0.
    if files.iter().all(|f| f.doc.results.is_empty()) {
        return Err(CliError::failure(format!(
            "no results in {}: nothing to report",
            args.files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let inputs: Vec<(&str, &std::path::Path)> = args
        .files
        .iter()
        .map(|p| ("RESULTS", p.as_path()))
        .collect();
    let _locked = super::files::prepare(&[("-o", args.output.as_path())], &inputs)?;
    if let Some(dir) = args.png.as_deref().filter(|d| d.exists() && !d.is_dir()) {
        return Err(CliError::usage(format!(
            "--png {}: is not a directory; give a directory for the PNG files",
            dir.display()
        )));
    }
    let options = html::ReportOptions {
        scenario: args.scenario.clone(),
    };
    let built = html::build(&files, &options).map_err(|e| match e {
        html::ReportError::Plot(p) => CliError::failure(p.to_string()),
        other => CliError::usage(other.to_string()),
    })?;
    // The PNGs first, the HTML last: a PNG that cannot be written must not leave a report behind
    // that looks complete (it used to be written, then the command failed).
    let mut pngs = Vec::new();
    if let Some(dir) = &args.png {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::failure(format!("--png {}: {e}", dir.display())))?;
        let paths: Vec<PathBuf> = built
            .figures
            .iter()
            .map(|f| dir.join(format!("{}.png", f.id)))
            .collect();
        let outputs: Vec<(&str, &std::path::Path)> =
            paths.iter().map(|p| ("--png", p.as_path())).collect();
        let _png_locked = super::files::prepare(&outputs, &inputs)?;
        for (f, path) in built.figures.iter().zip(paths) {
            plots::render_png(f, &path).map_err(|e| CliError::failure(e.to_string()))?;
            pngs.push(path);
        }
    }
    report::write_atomic(&args.output, built.html.as_bytes()).map_err(CliError::failure)?;
    crate::outln!(
        "report: {} ({} figure(s))",
        args.output.display(),
        built.figures.len()
    );
    for note in &built.notes {
        crate::outln!("note: {note}");
    }
    for path in pngs {
        crate::outln!("png: {}", path.display());
    }
    Ok(())
}
