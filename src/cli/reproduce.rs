//! `macbench reproduce STUDY`: a study's experiments in one command, its claims checked on this machine.
//!
//! The plan is the study's steps (`crate::reproduce`), each one `macbench run` given its share of the
//! budget and its own results file in the output directory, printed before anything runs. A step whose
//! file is complete is kept, so an interrupted reproduction (Ctrl-C, SIGTERM) loses only the step it
//! was in, and `--resume DIR` runs what is missing. Then the claims are judged on the files, and the
//! directory gets `claims.md`, `claims.json`, `report.html` and its figures as PNGs.

use super::CliError;
use crate::reproduce::{self, Evidence, Study};
use crate::results::claims::CLAIMS_FILE;
use crate::spec::values::parse_duration;
use clap::Parser;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, clap::Args)]
pub struct ReproduceArgs {
    /// The study, by its id (`macbench reproduce --list` names each by title and authors).
    #[arg(required_unless_present = "list")]
    pub study: Option<String>,
    /// List the studies: id, title, authors, what each runs.
    #[arg(long, conflicts_with_all = ["study", "budget", "output", "resume", "label"])]
    pub list: bool,
    /// Total time for the runs (`300`, `300s`, `10m`), shared among the study's steps [default: the
    /// study's, about 10 minutes on 2 cores].
    #[arg(long, allow_hyphen_values = true)]
    pub budget: Option<String>,
    /// Output directory [default: reproduce-STUDY]; refused if it already holds a reproduction. (A
    /// directory, so not `--output`, which names a file elsewhere.)
    #[arg(
        short = 'o',
        long = "output-dir",
        value_name = "DIR",
        conflicts_with = "resume"
    )]
    pub output: Option<PathBuf>,
    /// Continue the reproduction in DIR: run only the steps without a complete results file.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// This host's name in the results and claims tables [default: its hostname] (`run --label`):
    /// `report A/ B/` names each host's column by it.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Also measure energy per byte in every step (`run --energy`; outside --budget: 3 windows of 1 s
    /// per round for RAPL, 30 s for a battery, after each scenario). Refused with each meter's reason
    /// where none is readable.
    #[arg(long, conflicts_with = "list")]
    pub energy: bool,
}

/// The report a reproduction writes in its directory, and the directory of its figures as PNGs.
const REPORT: &str = "report.html";
const FIGURES: &str = "figures";

/// `run`'s flags parsed as `run` parses them.
#[derive(Parser)]
#[command(no_binary_name = true)]
struct RunLine {
    #[command(flatten)]
    run: super::run::RunArgs,
}

pub fn reproduce(args: &ReproduceArgs) -> Result<(), CliError> {
    if args.list {
        print_list();
        return Ok(());
    }
    let id = args.study.as_deref().unwrap_or_default();
    let study = reproduce::study(id).map_err(CliError::usage)?;
    let budget_s = match &args.budget {
        Some(text) => parse_duration("--budget", text)
            .map_err(|e| CliError::usage(e.to_string()))?
            .as_secs_f64(),
        None => study.default_budget_s,
    };
    super::run::check_label(args.label.as_deref())?;
    if args.energy {
        super::run::check_energy_meter()?;
    }
    let dir = output_dir(study, args)?;
    check_step_files(study, &dir)?;
    let budgets = reproduce::step_budgets(study, budget_s);
    let one_core = *crate::system::online_cpus()
        .last()
        .ok_or_else(|| CliError::failure("no online CPU".to_string()))?;
    print_plan(study, &budgets, budget_s, &dir, one_core);
    for (step, budget) in study.steps.iter().zip(&budgets) {
        let json = dir.join(format!("{}.json", step.name));
        if complete(&json) {
            crate::errln!("reproduce: {}: kept ({})", step.name, json.display());
            continue;
        }
        crate::errln!("reproduce: {}: {}", step.name, step.what);
        let mut line = reproduce::step_args(step, one_core);
        if let Some(label) = &args.label {
            line.extend(["--label".to_string(), label.clone()]);
        }
        if args.energy {
            line.push("--energy".to_string());
        }
        line.extend([
            "--budget".to_string(),
            format!("{budget:.1}"),
            "--target-ci".to_string(),
            "0".to_string(),
            "--json".to_string(),
            json.display().to_string(),
        ]);
        let run = RunLine::try_parse_from(&line)
            .map_err(|e| CliError::failure(format!("{}: {e}", step.name)))?;
        let outcome = super::run::run(&run.run);
        if super::run::cancelled() {
            return Err(CliError::interrupted(format!(
                "interrupted in step {}; what finished is kept in {} and `macbench reproduce {} --resume {}` continues",
                step.name,
                dir.display(),
                study.id,
                dir.display()
            )));
        }
        // A failed result fails its claims (they say which), not the whole reproduction.
        if let Err(e) = outcome {
            crate::errln!("reproduce: {}: {e}", step.name);
        }
    }
    conclude(study, &dir)
}

/// Judge the claims on the steps' files and write the claims table, its JSON and the report.
fn conclude(study: &Study, dir: &Path) -> Result<(), CliError> {
    let mut evidence = Evidence {
        smt_siblings: smt_siblings(),
        ..Evidence::default()
    };
    let mut files = Vec::new();
    for step in study.steps {
        let path = dir.join(format!("{}.json", step.name));
        if let Ok(loaded) = crate::report::read::read(&path) {
            evidence.steps.insert(step.name.to_string(), loaded.doc);
            files.push(path);
        }
    }
    // Before any file is written: a reproduction with no results has no claims to state either (a
    // claims file of "cannot be tested" everywhere would read as a finished reproduction).
    if files.is_empty() {
        return Err(CliError::failure(format!(
            "no step of {} left results in {}: no claims and no report written",
            study.id,
            dir.display()
        )));
    }
    let outcomes = reproduce::evaluate(study, &evidence);
    let table = reproduce::claims_markdown(study, &evidence, &outcomes);
    let write = |name: &str, bytes: &[u8]| {
        crate::report::output::write_atomic(&dir.join(name), bytes)
            .map_err(|e| CliError::failure(format!("{}: {e}", dir.join(name).display())))
    };
    write("claims.md", table.as_bytes())?;
    let claims = reproduce::claims_file(study, &evidence, &outcomes);
    let text =
        serde_json::to_string_pretty(&claims).map_err(|e| CliError::failure(e.to_string()))?;
    write(CLAIMS_FILE, text.as_bytes())?;
    crate::out!("\n{table}");
    // The directory itself: its steps' results and its claims table, as `report DIR` reads any host's.
    let report = super::report::ReportArgs {
        files: vec![dir.to_path_buf()],
        output: dir.join(REPORT),
        scenario: None,
        png: Some(dir.join(FIGURES)),
    };
    super::report::report(&report)?;
    crate::outln!(
        "reproduce: {} — claims.md, claims.json, report.html and figures/ in {}",
        study.id,
        dir.display()
    );
    Ok(())
}

/// Where the reproduction goes: `--resume DIR` (which must exist and hold this study's reproduction,
/// if any), `-o DIR` or `reproduce-STUDY`, which must hold neither a reproduction nor a file a
/// reproduction writes (`report.html`, `figures/`): a user's file is never replaced, and two studies
/// never share a directory. Under `--resume` the report and figures are the reproduction's own and are
/// rewritten.
fn output_dir(study: &Study, args: &ReproduceArgs) -> Result<PathBuf, CliError> {
    if let Some(dir) = &args.resume {
        match std::fs::metadata(dir) {
            Err(_) => {
                return Err(CliError::usage(format!(
                    "--resume {}: no such directory",
                    dir.display()
                )))
            }
            Ok(m) if !m.is_dir() => {
                return Err(CliError::usage(format!(
                    "--resume {}: {}; give the directory a reproduction was written to (`reproduce -o DIR`)",
                    dir.display(),
                    if m.is_file() {
                        "is a file, not a directory"
                    } else {
                        "is not a directory"
                    }
                )))
            }
            Ok(_) => {}
        }
        if let Some(other) = held_study(dir).filter(|held| held.id != study.id) {
            return Err(CliError::usage(format!(
                "--resume {}: holds a reproduction of {}, not {}: `macbench reproduce {} --resume {}` continues it, or give {} another directory",
                dir.display(),
                other.id,
                study.id,
                other.id,
                dir.display(),
                study.id
            )));
        }
        super::files::output_dir("--resume", dir, "the reproduction's files")?;
        return Ok(dir.clone());
    }
    let dir = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("reproduce-{}", study.id)));
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::usage(format!(
            "-o {}: not a directory; give a directory for the reproduction's files",
            dir.display()
        )));
    }
    if let Some(other) = held_study(&dir).filter(|held| held.id != study.id) {
        return Err(CliError::usage(format!(
            "-o {}: holds a reproduction of {}; give {} another directory",
            dir.display(),
            other.id,
            study.id
        )));
    }
    let taken = study
        .steps
        .iter()
        .map(|s| dir.join(format!("{}.json", s.name)))
        .chain([dir.join("claims.md"), dir.join(CLAIMS_FILE)])
        .find(|p| p.exists());
    if let Some(file) = taken {
        return Err(CliError::usage(format!(
            "{} already holds a reproduction ({}): `--resume {}` continues it, or give another -o",
            dir.display(),
            file.display(),
            dir.display()
        )));
    }
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
        return Err(CliError::usage(format!(
            "-o {}: already holds {}, which a reproduction writes; give another -o or move it away",
            dir.display(),
            file.display()
        )));
    }
    super::files::output_dir("-o", &dir, "the reproduction's files")?;
    Ok(dir)
}

/// Every step file already in `dir` (`--resume`) must be one this macbench can read: a file that is
/// not regular (a FIFO would block the read for ever, `/dev/zero` would run the step for its whole
/// budget before failing), or one it cannot read — truncated, `NaN`, `"results": "oops"`, a newer
/// `schema_version` — is refused before anything runs and left as it is, never rerun and replaced in
/// silence. A partial file (an interrupted step) reads, and its step runs again.
fn check_step_files(study: &Study, dir: &Path) -> Result<(), CliError> {
    for step in study.steps {
        let path = dir.join(format!("{}.json", step.name));
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        crate::report::read::regular_file(&path)
            .and_then(|()| crate::report::read::read(&path).map(drop))
            .map_err(|e| {
                CliError::usage(format!(
                    "--resume: step {}: {e}; left as it is (move it away to run the step again)",
                    step.name
                ))
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
        .and_then(|c| crate::report::read::read_claims(c).ok())
        .and_then(|c| reproduce::study(&c.study).ok())
    {
        return Some(study);
    }
    reproduce::STUDIES.iter().copied().find(|s| {
        s.steps
            .iter()
            .any(|step| dir.join(format!("{}.json", step.name)).is_file())
    })
}

/// Whether a step's results file is there and complete (not the partial file of an interrupted run).
fn complete(path: &Path) -> bool {
    crate::report::read::read(path).is_ok_and(|l| !l.doc.partial && !l.doc.results.is_empty())
}

fn print_list() {
    for s in reproduce::STUDIES {
        crate::outln!("{:<22} {} — \"{}\"", s.id, s.authors, s.title);
        for step in s.steps {
            crate::outln!("{:<22}   {}: {}", "", step.name, step.what);
        }
        let figures: Vec<&str> = s.figures.iter().map(|f| f.paper).collect();
        crate::outln!("{:<22}   redraws: {}", "", figures.join("; "));
        crate::outln!(
            "{:<22}   {} claims checked; default budget {:.0} s",
            "",
            s.claims.len(),
            s.default_budget_s
        );
    }
}

fn print_plan(study: &Study, budgets: &[f64], budget_s: f64, dir: &Path, one_core: usize) {
    crate::errln!(
        "reproduce: {} — {}, \"{}\"",
        study.id,
        study.authors,
        study.title
    );
    let total: f64 = budgets.iter().sum();
    for (step, b) in study.steps.iter().zip(budgets) {
        crate::errln!(
            "reproduce:   {:<14} ≈ {:>5.0} s  {} (one core = CPU {one_core})",
            step.name,
            b,
            step.what
        );
    }
    if total > budget_s * 1.01 {
        // Said as what is needed: the shares of a budget below this leave some step under its floor.
        crate::errln!(
            "reproduce: a budget of {budget_s:.0} s gives some step less than the {:.0} s a step needs, so the plan takes ≈ {total:.0} s; --budget {:.0} or more keeps the study's shares",
            reproduce::MIN_STEP_BUDGET_S,
            (reproduce::budget_for_shares(study) - 1e-9).ceil()
        );
    }
    crate::errln!(
        "reproduce: ≈ {total:.0} s of runs, into {}; {} claims to check",
        dir.display(),
        study.claims.len()
    );
}

/// Each distinct group of SMT siblings among the online CPUs, as the kernel lists them.
fn smt_siblings() -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for cpu in crate::system::online_cpus() {
        let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(group) = crate::system::parse_cpu_list(text.trim()) else {
            continue;
        };
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups
}
