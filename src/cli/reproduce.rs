//! `macbench reproduce STUDY`: a study's experiments in one command, its claims checked on this machine.
//!
//! The plan is the study's steps (`crate::reproduce`), each one `macbench run` given its share of the
//! budget and its own results file in the output directory, printed before anything runs. A step whose
//! file is complete is kept, so an interrupted reproduction (Ctrl-C, SIGTERM) loses only the step it
//! was in, and `--resume DIR` runs what is missing. Then the claims are judged on the files, and the
//! directory gets `claims.md`, `claims.json`, `report.html` and its figures as PNGs.

use super::CliError;
use crate::reproduce::{self, Evidence, Study};
use crate::session::reproduction::{self as directory, FIGURES, REPORT};
use crate::spec::values::parse_duration;
use crate::sweep;
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
    let dir = directory::output_dir(study, args.resume.as_deref(), args.output.as_deref())
        .map_err(CliError::usage)?;
    directory::check_step_files(study, &dir).map_err(CliError::usage)?;
    // One reproduction per directory at a time, refused up front as any output another macbench
    // writes is (a second `--resume` used to run, fail its steps' locks and end with exit 1).
    let flag = if args.resume.is_some() {
        "--resume"
    } else {
        "-o"
    };
    let claims_path = dir.join(crate::results::claims::CLAIMS_FILE);
    let _held = crate::report::output::prepare(&[(flag, claims_path.as_path())], &[]).map_err(
        |e| match e {
            crate::report::output::OutputError::Locked { lock, .. } => CliError::usage(format!(
                "{flag} {}: another macbench is running this reproduction (lock {lock} is held); wait for it to end",
                dir.display()
            )),
            other => CliError::usage(other.to_string()),
        },
    )?;
    let budgets = reproduce::step_budgets(study, budget_s);
    let one_core = *crate::system::online_cpus()
        .last()
        .ok_or_else(|| CliError::failure("no online CPU".to_string()))?;
    let plans = plan_steps(study, &budgets, one_core, args)?;
    print_plan(study, &plans, budget_s, &dir, one_core);
    for (step, plan) in study.steps.iter().zip(&plans) {
        let json = directory::step_file(&dir, step.name);
        if directory::complete(&json) {
            crate::errln!("reproduce: {}: kept ({})", step.name, json.display());
            continue;
        }
        let (line, _) = match plan {
            Ok(p) => p,
            // Refused up front with its reason (in the plan): never run starved. Its claims say
            // its results are missing.
            Err(_) => continue,
        };
        crate::errln!("reproduce: {}: {}", step.name, step.what);
        let mut line = line.clone();
        line.extend(["--json".to_string(), json.display().to_string()]);
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

/// Each step's `run` line and run plan, or why it is refused: its share of the budget, with runs
/// long enough that every session is scheduled in the window several times and processes 1,000
/// messages there (`sweep::plan_runs`), each run's duration given as `--duration`.
type StepLine = Result<(Vec<String>, sweep::RunPlan), String>;

fn plan_steps(
    study: &Study,
    budgets: &[f64],
    one_core: usize,
    args: &ReproduceArgs,
) -> Result<Vec<StepLine>, CliError> {
    let slice = crate::bench::scheduling_slice();
    // Cycles per byte are reference cycles: f converts a step's slowest cost into time.
    let (reference_hz, _) =
        crate::system::clock::calibrate_reference(std::time::Duration::from_millis(30));
    let mut plans = Vec::with_capacity(study.steps.len());
    for (step, budget) in study.steps.iter().zip(budgets) {
        let mut line = reproduce::step_args(step, one_core);
        if let Some(label) = &args.label {
            line.extend(["--label".to_string(), label.clone()]);
        }
        if args.energy {
            line.push("--energy".to_string());
        }
        line.extend(["--target-ci".to_string(), "0".to_string()]);
        let parsed = RunLine::try_parse_from(&line)
            .map_err(|e| CliError::failure(format!("{}: {e}", step.name)))?;
        let load = super::run::sweep_spec(&parsed.run)
            .and_then(|spec| spec.load().map_err(CliError::from))
            .map_err(|e| CliError::failure(format!("{}: {e}", step.name)))?;
        let plan = sweep::plan_runs(
            *budget,
            &load,
            step.max_cycles_per_byte / reference_hz,
            slice,
        )
        .map(|plan| {
            line.extend([
                "--duration".to_string(),
                format!("{}ms", plan.duration.as_millis()),
            ]);
            (line, plan)
        })
        .map_err(|why| format!("{}: refused: {why}", step.name));
        plans.push(plan);
    }
    Ok(plans)
}

/// Judge the claims on the steps' files and write the claims table, its JSON and the report.
fn conclude(study: &Study, dir: &Path) -> Result<(), CliError> {
    let mut evidence = Evidence {
        smt_siblings: crate::system::topology::smt_siblings(),
        ..Evidence::default()
    };
    let mut files = Vec::new();
    for step in study.steps {
        let path = directory::step_file(dir, step.name);
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
    let claims = reproduce::claims_file(study, &evidence, &outcomes);
    directory::write_claims(dir, &table, &claims).map_err(CliError::failure)?;
    crate::out!("\n{table}");
    // The directory itself: its steps' results and its claims table, as `report DIR` reads any host's.
    let report = super::report::ReportArgs {
        files: vec![dir.to_path_buf()],
        output: dir.join(REPORT),
        scenario: None,
        png: Some(dir.join(FIGURES)),
        // `output_dir` refused a user's figures up front; what is there now is this reproduction's.
        replaces_own_figures: true,
    };
    super::report::report(&report)?;
    crate::outln!(
        "reproduce: {} — claims.md, claims.json, report.html and figures/ in {}",
        study.id,
        dir.display()
    );
    Ok(())
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

fn print_plan(study: &Study, plans: &[StepLine], budget_s: f64, dir: &Path, one_core: usize) {
    crate::errln!(
        "reproduce: {} — {}, \"{}\"",
        study.id,
        study.authors,
        study.title
    );
    let mut total = 0.0;
    let mut lengthened = false;
    for (step, plan) in study.steps.iter().zip(plans) {
        match plan {
            Ok((_, p)) => {
                total += p.seconds;
                lengthened |= p.lengthened();
                crate::errln!(
                    "reproduce:   {:<14} ≈ {:>5.0} s  {} (one core = CPU {one_core}); runs of {:.2} s, window ≥ {:.2} s: {}{}",
                    step.name,
                    p.seconds,
                    step.what,
                    p.duration.as_secs_f64(),
                    p.minimum_window.as_secs_f64(),
                    p.why,
                    if p.lengthened() {
                        format!(" (more than its share, {:.0} s)", p.share_s)
                    } else {
                        String::new()
                    }
                );
            }
            Err(why) => crate::errln!("reproduce:   {why}"),
        }
    }
    if lengthened {
        // Said as what is needed: a window too short measures nothing, so the step takes longer.
        crate::errln!(
            "reproduce: a budget of {budget_s:.0} s cannot give every step the window its sessions and messages need (docs/methodology.md §2), so the plan takes ≈ {total:.0} s"
        );
    } else if total > budget_s * 1.01 {
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
