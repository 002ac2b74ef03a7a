//! The command line's side of the output-file rules in [`crate::report::output`]: which paths each
//! subcommand writes and reads, checked together before anything runs (exit 2 when refused).

use super::CliError;
use crate::report::output::{self, Prepared};
use std::path::{Path, PathBuf};

/// Check outputs against each other and the inputs, and lock them; keep the result alive while writing.
pub fn prepare(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<Prepared, CliError> {
    output::prepare(outputs, inputs).map_err(|e| CliError::usage(e.to_string()))
}

/// The `*.json` files in `dir` that `report`, `validate`, `diff` and `export` of the directory read
/// (as [`crate::report::read::expand_inputs`] finds them), sorted; none when `dir` is no directory.
pub fn json_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The directories among `paths` as `report`, `diff`, `validate` and `export` read them: those named,
/// and those a quoted glob matches.
fn directories_read(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for path in paths {
        let text = path.to_string_lossy();
        if !path.exists() && text.contains(['*', '?', '[']) {
            if let Ok(matches) = glob::glob(&text) {
                dirs.extend(matches.filter_map(Result::ok).filter(|m| m.is_dir()));
            }
        } else if path.is_dir() {
            dirs.push(path.clone());
        }
    }
    dirs
}

/// Refuse an output named `*.json` inside a directory the command reads: every later reader of that
/// directory would take it for a results file (`export --format bmf DIR -o DIR/bmf.json` made
/// `validate DIR` and `report DIR` fail). Checked before anything is written; exit 2.
pub fn not_into_inputs(outputs: &[(&str, &Path)], paths: &[PathBuf]) -> Result<(), CliError> {
    // Compared canonically (`d/` and `./d` are one directory), named as the user gave it.
    let dirs: Vec<(PathBuf, PathBuf)> = directories_read(paths)
        .into_iter()
        .filter_map(|d| Some((std::fs::canonicalize(&d).ok()?, d)))
        .collect();
    for (flag, path) in outputs {
        if output::is_stream(path) || path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let Ok(parent) = std::fs::canonicalize(parent) else {
            continue;
        };
        if let Some((_, dir)) = dirs.iter().find(|(canonical, _)| *canonical == parent) {
            return Err(CliError::usage(format!(
                "{flag} {}: inside {}, a directory this command reads, where `validate`, `report` and `diff` would take it for results; write it elsewhere",
                path.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// An output directory (`run -o`, `reproduce -o`, `--resume`): made if missing, and proved writable
/// before anything runs. Every refusal is exit 2 and one line naming the flag and the directory once
/// (a read-only directory used to be exit 1 when it had to be made and exit 2, with its path twice,
/// when it existed).
pub fn output_dir(flag: &str, dir: &Path, what: &str) -> Result<(), CliError> {
    let shown = dir.display();
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::usage(format!(
            "{flag} {shown}: not a directory; give a directory for {what}"
        )));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("{flag} {shown}: cannot make the directory ({e})")))?;
    output::writable_dir(dir)
        .map_err(|e| CliError::usage(format!("{flag} {shown}: cannot write there ({e})")))
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

/// A table's rows as a script reads them: `--json` writes an array of flat objects (keys in column
/// order), `--csv` a header and one line per row, the same columns in both, so `pandas.read_json` and
/// `pandas.read_csv` give the same frame. Numbers stay numbers, a missing value is `null` (an empty
/// CSV cell), and a size is the `size` column (a number, or empty for a size model or a stream) with
/// the table's own text beside it in `size_label`.
pub struct Records {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<serde_json::Value>>,
}

impl Records {
    pub fn new(columns: &[&str]) -> Records {
        Records {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// The rows of a typed record, its fields the columns in their order (its serde shape: a new
    /// field is a new column by itself).
    pub fn from_serialized<T: serde::Serialize + Default>(rows: &[T]) -> Result<Records, String> {
        let object = |row: &T| match serde_json::to_value(row) {
            Ok(serde_json::Value::Object(map)) => Ok(map),
            Ok(other) => Err(format!("a row is not an object: {other}")),
            Err(e) => Err(e.to_string()),
        };
        let mut out = Records {
            columns: object(&T::default())?.keys().cloned().collect(),
            rows: Vec::new(),
        };
        for row in rows {
            out.rows
                .push(object(row)?.into_iter().map(|(_, v)| v).collect());
        }
        Ok(out)
    }

    /// The `size` and `size_label` cells of a size as a table prints it (`64`, `imix`, `stream~16384`).
    pub fn size_cells(label: &str) -> [serde_json::Value; 2] {
        let size = label
            .parse::<u64>()
            .map_or(serde_json::Value::Null, serde_json::Value::from);
        [size, serde_json::Value::from(label)]
    }

    fn json(&self) -> Result<Vec<u8>, String> {
        let objects: Vec<serde_json::Map<String, serde_json::Value>> = self
            .rows
            .iter()
            .map(|row| {
                self.columns
                    .iter()
                    .cloned()
                    .zip(row.iter().cloned())
                    .collect()
            })
            .collect();
        let mut out = serde_json::to_vec_pretty(&objects).map_err(|e| e.to_string())?;
        out.push(b'\n');
        Ok(out)
    }

    fn csv(&self) -> Result<Vec<u8>, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.columns).map_err(|e| e.to_string())?;
        for row in &self.rows {
            w.write_record(row.iter().map(|v| match v {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            }))
            .map_err(|e| e.to_string())?;
        }
        w.into_inner().map_err(|e| e.to_string())
    }
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

    /// Write the rows to whichever of the two were given.
    pub fn write(&self, records: &Records) -> Result<(), CliError> {
        if let Some(path) = &self.json {
            output::write_atomic(path, &records.json().map_err(CliError::failure)?)
                .map_err(CliError::failure)?;
        }
        self.write_csv(records)
    }

    /// A results document as `--json` (pretty, one trailing newline) and its rows as `--csv`.
    pub fn write_document<D: serde::Serialize>(
        &self,
        document: &D,
        records: &Records,
    ) -> Result<(), CliError> {
        if let Some(path) = &self.json {
            let mut bytes = serde_json::to_vec_pretty(document)
                .map_err(|e| CliError::failure(e.to_string()))?;
            bytes.push(b'\n');
            output::write_atomic(path, &bytes).map_err(CliError::failure)?;
        }
        self.write_csv(records)
    }

    fn write_csv(&self, records: &Records) -> Result<(), CliError> {
        if let Some(path) = &self.csv {
            output::write_atomic(path, &records.csv().map_err(CliError::failure)?)
                .map_err(CliError::failure)?;
        }
        Ok(())
    }
}
