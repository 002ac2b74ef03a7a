//! A reproduction's directory: where it goes, what it may already hold, and which of its step files
//! are complete. The rules a user relies on: a user's file is never replaced, two studies never share
//! a directory, and `--resume` continues only what it can read.

use crate::report::{output, read};
use crate::reproduce::{self, Study};
use crate::results::claims::CLAIMS_FILE;
use std::path::{Path, PathBuf};

/// The report a reproduction writes in its directory, and the directory of its figures as PNGs.
pub const REPORT: &str = "report.html";
pub const FIGURES: &str = "figures";

/// The results file of a step in the reproduction's directory.
pub fn step_file(dir: &Path, step: &str) -> PathBuf {
    dir.join(format!("{step}.json"))
}

/// Where the reproduction goes: `--resume DIR` (which must exist and hold this study's reproduction,
/// if any), `-o DIR` or `reproduce-STUDY`, which must hold neither a reproduction nor a file a
/// reproduction writes (`report.html`, `figures/`): a user's file is never replaced, and two studies
/// never share a directory. Under `--resume` the report and figures are the reproduction's own and are
/// rewritten.
pub fn output_dir(
    study: &Study,
    resume: Option<&Path>,
    output: Option<&Path>,
) -> Result<PathBuf, String> {
    match resume {
        Some(dir) => resumed_dir(study, dir),
        None => fresh_dir(study, output),
    }
}

/// `--resume DIR`: a directory, holding this study's reproduction if any, whose files a
/// reproduction rewrites are regular files.
fn resumed_dir(study: &Study, dir: &Path) -> Result<PathBuf, String> {
    match std::fs::metadata(dir) {
        Err(_) => {
            return Err(format!(
                "--resume {}: no such directory",
                dir.display()
            ))
        }
        Ok(m) if !m.is_dir() => {
            return Err(format!(
                "--resume {}: {}; give the directory a reproduction was written to (`reproduce -o DIR`)",
                dir.display(),
                if m.is_file() {
                    "is a file, not a directory"
                } else {
                    "is not a directory"
                }
            ))
        }
        Ok(_) => {}
    }
    if let Some(other) = held_study(dir).filter(|held| held.id != study.id) {
        return Err(format!(
            "--resume {}: holds a reproduction of {}, not {}: `macbench reproduce {} --resume {}` continues it, or give {} another directory",
            dir.display(),
            other.id,
            study.id,
            other.id,
            dir.display(),
            study.id
        ));
    }
    own_files_are_regular(dir)?;
    no_other_results("--resume", study, dir)?;
    output::output_dir("--resume", dir, "the reproduction's files")?;
    Ok(dir.to_path_buf())
}

/// `-o DIR` or `reproduce-STUDY`: a directory (or none yet) holding no reproduction and no file a
/// reproduction would write.
fn fresh_dir(study: &Study, output: Option<&Path>) -> Result<PathBuf, String> {
    let dir = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(format!("reproduce-{}", study.id)));
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "-o {}: not a directory; give a directory for the reproduction's files",
            dir.display()
        ));
    }
    if let Some(other) = held_study(&dir).filter(|held| held.id != study.id) {
        return Err(format!(
            "-o {}: holds a reproduction of {}; give {} another directory",
            dir.display(),
            other.id,
            study.id
        ));
    }
    let taken = study
        .steps
        .iter()
        .map(|s| step_file(&dir, s.name))
        .chain([dir.join("claims.md"), dir.join(CLAIMS_FILE)])
        .find(|p| p.exists());
    if let Some(file) = taken {
        return Err(format!(
            "{} already holds a reproduction ({}): `--resume {}` continues it, or give another -o",
            dir.display(),
            file.display(),
            dir.display()
        ));
    }
    no_report_in_the_way(&dir)?;
    no_other_results("-o", study, &dir)?;
    output::output_dir("-o", &dir, "the reproduction's files")?;
    Ok(dir)
}

/// `report.html` or anything in `figures/` already in `dir`: a reproduction would write over it.
fn no_report_in_the_way(dir: &Path) -> Result<(), String> {
    let figures = dir.join(FIGURES);
    let written = [dir.join(REPORT)].into_iter().chain(
        std::fs::read_dir(&figures)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default(),
    );
    if let Some(file) = written
        .into_iter()
        .find(|p| std::fs::symlink_metadata(p).is_ok())
    {
        // Any file in figures/ is in the way, but only report.html is one a reproduction writes by
        // name: "holiday.png, which a reproduction writes" was untrue (issue 47 M39).
        let why = if file == dir.join(REPORT) {
            "which a reproduction writes".to_string()
        } else {
            format!(
                "in {}, the directory a reproduction writes its figures into",
                figures.display()
            )
        };
        return Err(format!(
            "-o {}: already holds {}, {why}; give another -o or move it away",
            dir.display(),
            file.display()
        ));
    }
    Ok(())
}

/// A reproduction's directory holds its steps' results and its claims, nothing else a reader of the
/// directory would take for results: `report DIR` reads every `*.json` there, so a `run -o`
/// directory's `results.json` (or any other results file) would be mixed into the reproduction's
/// report and hosts (issue 47 N19). Refused up front, naming the file.
fn no_other_results(flag: &str, study: &Study, dir: &Path) -> Result<(), String> {
    let own: Vec<PathBuf> = study
        .steps
        .iter()
        .map(|s| step_file(dir, s.name))
        .chain([dir.join(CLAIMS_FILE)])
        .collect();
    let run_csv = dir.join(crate::session::RESULTS_CSV);
    let other = output::json_files_in(dir)
        .into_iter()
        .find(|p| !own.contains(p))
        .or_else(|| {
            std::fs::symlink_metadata(&run_csv)
                .is_ok()
                .then_some(run_csv)
        });
    let Some(file) = other else { return Ok(()) };
    let run = file
        .file_name()
        .is_some_and(|n| n == crate::session::RESULTS_JSON || n == crate::session::RESULTS_CSV);
    Err(format!(
        "{flag} {}: holds {}, {}; a reproduction's results would be mixed with it: give the reproduction a directory of its own",
        dir.display(),
        file.display(),
        if run {
            "a `run -o` directory's results"
        } else {
            "a file `report`, `validate` and `diff` of the directory would read beside the reproduction's results"
        }
    ))
}

/// The files `--resume` rewrites at the end (`claims.md`, `claims.json`, `report.html`) must be
/// regular files if they are there: a FIFO would make the last write wait for a reader after every
/// step had run, and fail. Refused up front, one line naming the file once.
fn own_files_are_regular(dir: &Path) -> Result<(), String> {
    for name in ["claims.md", CLAIMS_FILE, REPORT] {
        let path = dir.join(name);
        if let Ok(meta) = std::fs::metadata(&path) {
            if !meta.is_file() {
                return Err(format!(
                    "--resume {}: {} is {}, not a regular file; a reproduction rewrites it: move it away",
                    dir.display(),
                    path.display(),
                    read::file_kind(&meta)
                ));
            }
        }
    }
    Ok(())
}

/// Every step file already in `dir` (`--resume`) must be one this macbench can read: a file that is
/// not regular (a FIFO would block the read for ever, `/dev/zero` would run the step for its whole
/// budget before failing), or one it cannot read — truncated, `NaN`, `"results": "oops"`, a newer
/// `schema_version` — is refused before anything runs and left as it is, never rerun and replaced in
/// silence. A partial file (an interrupted step) reads, and its step runs again.
pub fn check_step_files(study: &Study, dir: &Path) -> Result<(), String> {
    for step in study.steps {
        let path = step_file(dir, step.name);
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        read::regular_file(&path)
            .and_then(|()| read::read(&path).map(drop))
            .map_err(|e| {
                format!(
                    "--resume: step {}: {e}; left as it is (move it away to run the step again)",
                    step.name
                )
            })?;
    }
    Ok(())
}

/// The study whose reproduction `dir` holds, if any: the one its claims file names, else the one whose
/// step files are there (step names are distinct across studies; `tests/reproduce.rs` keeps them so).
fn held_study(dir: &Path) -> Option<&'static Study> {
    let claims = dir.join(CLAIMS_FILE);
    // A regular file only: reading a FIFO would wait for a writer.
    if let Some(study) = Some(&claims)
        .filter(|c| c.is_file())
        .and_then(|c| read::read_claims(c).ok())
        .and_then(|c| reproduce::study(&c.study).ok())
    {
        return Some(study);
    }
    reproduce::STUDIES.iter().copied().find(|s| {
        s.steps
            .iter()
            .any(|step| step_file(dir, step.name).is_file())
    })
}

/// Whether a step's results file is there and complete (not the partial file of an interrupted run).
pub fn complete(path: &Path) -> bool {
    read::read(path).is_ok_and(|l| !l.doc.partial && !l.doc.results.is_empty())
}

/// Write the claims table (`claims.md`) and its JSON (`claims.json`) into the reproduction's
/// directory, each by the output rules; the JSON as every other macbench document is
/// ([`crate::stdio::pretty_json`]: it ended without a newline when written apart).
pub fn write_claims(dir: &Path, table: &str, claims: &impl serde::Serialize) -> Result<(), String> {
    // The output rules' error names the file already (it was said twice).
    let write = |name: &str, bytes: &[u8]| output::write_atomic(&dir.join(name), bytes);
    write("claims.md", table.as_bytes())?;
    write(CLAIMS_FILE, &crate::stdio::pretty_json(claims)?)
}
