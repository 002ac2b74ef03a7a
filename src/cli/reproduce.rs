//! `macbench reproduce STUDY`: a study's experiments in one command, its claims checked on this machine.
//!
//! The plan is the study's steps (`crate::reproduce`), each one `macbench run` given its share of the
//! budget and its own results file in the output directory, printed before anything runs. A step whose
//! file is complete is kept, so an interrupted reproduction (Ctrl-C, SIGTERM) loses only the step it
//! was in, and `--resume DIR` runs what is missing. Then the claims are judged on the files, and the
//! directory gets `claims.md`, `claims.json`, `report.html` and its figures as PNGs.

use super::CliError;
use crate::reproduce::{self, Evidence, Study};
use crate::results::RunOptions;
use crate::session::reproduction::{self as directory, FIGURES, REPORT};
use crate::spec::values::parse_duration;
use crate::sweep;
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

pub fn reproduce(args: &ReproduceArgs) -> Result<(), CliError> {
    if args.list {
        print_list();
        return Ok(());
    }
    let id = args.study.as_deref().unwrap_or_default();
    let study = reproduce::study(id).map_err(CliError::usage)?;
    let given_budget_s = match &args.budget {
        Some(text) => Some(
            parse_duration("--budget", text)
                .map_err(|e| CliError::usage(e.to_string()))?
                .as_secs_f64(),
        ),
        None => None,
    };
    super::run::check_label(args.label.as_deref())?;
    if args.energy {
        super::run::check_energy_meter()?;
    }
    // Whether the directory was there before: one this reproduction makes and then refuses to
    // fill is taken away again.
    let existed = args.resume.is_some()
        || args
            .output
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("reproduce-{}", study.id)))
            .exists();
    let (dir, held) = locked_dir(study, args)?;
    let one_core = *crate::system::online_cpus()
        .last()
        .ok_or_else(|| CliError::failure("no online CPU".to_string()))?;
    let lines = step_sweeps(study, one_core, args);
    let pending = pending_steps(study, &dir, &lines)?;
    // Issue 47 N31: each step's real minimum (its shortest runs that hold its window, and at least
    // MIN_STEP_BUDGET_S), and a budget below their sum refused up front rather than stretched in
    // silence, or its steps refused their share one by one.
    let planner = Planner::new();
    let minimums: Vec<Option<f64>> = lines
        .iter()
        .zip(&pending)
        .map(|(line, &pending)| match line {
            Ok(line) if pending => planner
                .plan(line, 0.0)
                .ok()
                .map(|p| p.seconds.max(reproduce::MIN_STEP_BUDGET_S)),
            _ => None,
        })
        .collect();
    let budget_s = match budget(study, args, given_budget_s, &minimums, &pending) {
        Ok(b) => b,
        Err(refusal) => {
            drop(held);
            if !existed {
                // Nothing was written: the directory this refused reproduction made goes too.
                let _ = std::fs::remove_dir(&dir);
            }
            return Err(CliError::usage(refusal));
        }
    };
    let budgets = reproduce::step_budgets(study, budget_s, &minimums);
    let plans: Vec<StepLine> = lines
        .iter()
        .zip(&budgets)
        .map(|(line, budget)| {
            let line = line.as_ref().map_err(Clone::clone)?;
            let plan = planner.plan(line, *budget)?;
            let mut options = line.spec.options.clone();
            // The smallest messages' run and the repeats the step's share holds; runs of larger
            // messages are lengthened by the sweep (`--slowest`, set by the step).
            options.timing.duration = Some(plan.duration);
            options.timing.repeat = Some(plan.repeats);
            Ok((options, plan))
        })
        .collect();
    let raised = given_budget_s.is_none() && budget_s > study.default_budget_s * 1.001;
    let said = PlanBudget {
        seconds: budget_s,
        raised,
    };
    print_plan(study, &plans, &pending, said, &dir, one_core);
    let not_run = run_steps(study, &dir, &plans, &pending)?;
    let concluded = conclude(study, &dir);
    drop(held);
    if let Err(e) = concluded {
        // The steps that did not run explain an empty reproduction.
        for (step, why) in &not_run {
            crate::errln!("reproduce: step {step} did not run: {why}");
        }
        return Err(e);
    }
    steps_not_run(&not_run)
}

/// The reproduction's directory ([`directory::output_dir`]), its step files checked, and held: one
/// reproduction per directory at a time, refused up front as any output another macbench writes
/// is (a second `--resume` used to run, fail its steps' locks and end with exit 1).
fn locked_dir(
    study: &Study,
    args: &ReproduceArgs,
) -> Result<(PathBuf, crate::report::output::Prepared), CliError> {
    let dir = directory::output_dir(study, args.resume.as_deref(), args.output.as_deref())
        .map_err(CliError::usage)?;
    directory::check_step_files(study, &dir).map_err(CliError::usage)?;
    let flag = if args.resume.is_some() {
        "--resume"
    } else {
        "-o"
    };
    let claims_path = dir.join(crate::results::claims::CLAIMS_FILE);
    let held = crate::report::output::prepare(&[(flag, claims_path.as_path())], &[]).map_err(
        |e| match e {
            crate::report::output::OutputError::Locked { lock, .. } => CliError::usage(format!(
                "{flag} {}: another macbench is running this reproduction (lock {lock} is held); wait for it to end",
                dir.display()
            )),
            other => CliError::usage(other.to_string()),
        },
    )?;
    Ok((dir, held))
}

/// Which steps still have to run: those without a complete results file. Issue 47 N30: a step file
/// counts as the step's only when its scenarios are the step's; another run's results there (valid,
/// but of other functions, sizes, sessions, cores …) were kept as the step's output and its claims
/// then "could not be tested". Such a file is not this reproduction's to overwrite (it may be the
/// only copy of someone's run), so it is refused up front, left as it is, as an unreadable step
/// file is.
fn pending_steps(
    study: &Study,
    dir: &Path,
    lines: &[Result<StepSweep, String>],
) -> Result<Vec<bool>, CliError> {
    let mut pending = Vec::with_capacity(study.steps.len());
    for (step, line) in study.steps.iter().zip(lines) {
        let json = directory::step_file(dir, step.name);
        if let (Ok(loaded), Ok(line)) = (crate::report::read::read(&json), line) {
            if let Err(why) = line.holds_the_steps(&loaded.doc) {
                return Err(CliError::usage(format!(
                    "--resume: step {}: {} {why}; left as it is (move it away to run the step again)",
                    step.name,
                    json.display()
                )));
            }
        }
        pending.push(!directory::complete(&json));
    }
    Ok(pending)
}

/// The reproduction's budget in seconds: `--budget` if it holds the steps still to run (each its
/// `minimums`), else the refusal's words; without one, the study's default for those steps, or
/// what they need where that is more.
fn budget(
    study: &Study,
    args: &ReproduceArgs,
    given_s: Option<f64>,
    minimums: &[Option<f64>],
    pending: &[bool],
) -> Result<f64, String> {
    let needed: f64 = minimums.iter().flatten().sum();
    // Whole seconds, rounded up, so the budget the refusal names is one that is taken.
    let needed_s = (needed - 1e-9).ceil().max(0.0);
    match given_s {
        Some(b) if b < needed_s => {
            let each: Vec<String> = study
                .steps
                .iter()
                .zip(minimums)
                .filter_map(|(s, m)| m.map(|m| format!("{} {m:.0} s", s.name)))
                .collect();
            Err(format!(
                "--budget {}: {}'s steps to run need at least {needed_s:.0} s here ({}: each step's shortest runs that hold its window, at least {:.0} s a step); give --budget {needed_s:.0} or more",
                args.budget.as_deref().unwrap_or_default(),
                study.id,
                each.join(", "),
                reproduce::MIN_STEP_BUDGET_S
            ))
        }
        Some(b) => Ok(b),
        None => {
            let shares: f64 = study
                .steps
                .iter()
                .zip(pending)
                .filter(|(_, &p)| p)
                .map(|(s, _)| s.share)
                .sum();
            Ok((study.default_budget_s * shares).max(needed_s))
        }
    }
}

/// Run the steps still `pending`, each as `run` with its planned line and its own results file; the
/// steps that did not run, and why (each makes the exit 1 once the claims are written). An
/// interrupt, or a step whose own file could not be written, ends the reproduction there.
fn run_steps<'s>(
    study: &'s Study,
    dir: &Path,
    plans: &[StepLine],
    pending: &[bool],
) -> Result<Vec<(&'s str, String)>, CliError> {
    let mut not_run: Vec<(&str, String)> = Vec::new();
    for ((step, plan), &pending) in study.steps.iter().zip(plans).zip(pending) {
        let json = directory::step_file(dir, step.name);
        if !pending {
            crate::errln!("reproduce: {}: kept ({})", step.name, json.display());
            continue;
        }
        let (options, _) = match plan {
            Ok(p) => p,
            // Refused up front with its reason (in the plan): never run starved. Its claims say
            // its results are missing.
            Err(why) => {
                not_run.push((step.name, why.clone()));
                continue;
            }
        };
        crate::errln!("reproduce: {}: {}", step.name, step.what);
        let mut options = options.clone();
        options.output.json = Some(json.clone());
        let outcome = super::run::run_options(&options);
        if super::run::cancelled() {
            return Err(interrupted(study, dir, step.name));
        }
        match outcome {
            // A failed result fails its claims (they say which), not the whole reproduction.
            Err(e) if directory::complete(&json) => {
                crate::errln!("reproduce: {}: {e}", step.name)
            }
            // Its own results file could not be written (a full disk, issue 47 M36): the next
            // steps and the claims could not be either, and claims on a torn step would say "all
            // failed or unmeasured". Stop here, in one line naming the file and the reason.
            Err(e) if e.message.contains(&json.display().to_string()) => {
                return Err(CliError::failure(format!(
                    "step {}: {e}; the reproduction stops there (what finished is kept in {}; `macbench reproduce {} --resume {}` continues once it can be written)",
                    step.name,
                    dir.display(),
                    study.id,
                    dir.display()
                )));
            }
            Err(e) => {
                crate::errln!("reproduce: {}: {e}", step.name);
                not_run.push((step.name, e.to_string()));
            }
            Ok(()) if !directory::complete(&json) => {
                not_run.push((step.name, "it left no complete results file".to_string()))
            }
            Ok(()) => {}
        }
    }
    Ok(not_run)
}

/// Issue 47 N31: a reproduction with a step that did not run is not a success, whatever its other
/// steps made of their claims (they say which ones cannot be tested).
fn steps_not_run(not_run: &[(&str, String)]) -> Result<(), CliError> {
    match not_run {
        [] => Ok(()),
        [(step, why)] => Err(CliError::failure(format!(
            "step {step} did not run ({why}); its claims cannot be tested"
        ))),
        several => {
            for (step, why) in several {
                crate::errln!("reproduce: step {step} did not run: {why}");
            }
            let names: Vec<&str> = several.iter().map(|(s, _)| *s).collect();
            Err(CliError::failure(format!(
                "{} steps did not run ({}); their claims cannot be tested",
                several.len(),
                names.join(", ")
            )))
        }
    }
}

/// The error of a reproduction interrupted in `step`: what was kept, or — issue 47 M1, as `net`
/// says it — that nothing was, rather than "what finished is kept" of a directory holding nothing.
fn interrupted(study: &Study, dir: &Path, step: &str) -> CliError {
    let kept = study.steps.iter().any(|s| {
        crate::report::read::read(&directory::step_file(dir, s.name))
            .is_ok_and(|l| !l.doc.results.is_empty())
    });
    if kept {
        CliError::interrupted(format!(
            "interrupted in step {step}; what finished is kept in {} and `macbench reproduce {} --resume {}` continues",
            dir.display(),
            study.id,
            dir.display()
        ))
    } else {
        CliError::interrupted(format!(
            "interrupted before any result finished: nothing kept (step {step} had not finished a scenario); `macbench reproduce {} --resume {}` starts it again",
            study.id,
            dir.display()
        ))
    }
}

/// The sweep of a step's run options (its own, the label, energy and no `--target-ci`; the plan
/// adds the duration), and what that sweep runs, as its results record it.
#[derive(Clone)]
pub struct StepSweep {
    spec: sweep::SweepSpec,
    max_cycles_per_byte: f64,
}

/// Each step's options with its run plan, or why it is refused: its share of the budget, with runs
/// long enough that every session is scheduled in the window several times and processes 1,000
/// messages there (`sweep::plan_runs`), each run's duration set.
type StepLine = Result<(RunOptions, sweep::RunPlan), String>;

/// Each step's [`StepSweep`], or why it cannot run here (a backend not built, a device that cannot
/// serve: `run` would refuse it the same way): that step is refused in the plan, the others run.
fn step_sweeps(
    study: &Study,
    one_core: usize,
    args: &ReproduceArgs,
) -> Vec<Result<StepSweep, String>> {
    study
        .steps
        .iter()
        .map(|step| {
            let mut options = step.options(one_core);
            options.output.label = args.label.clone();
            options.energy = args.energy;
            // Each step's repeats are planned from its share of the budget, not a target.
            options.timing.target_ci = Some(0.0);
            step_sweep_of(step, options)
        })
        .collect()
}

/// The [`StepSweep`] of `step` with its `options`; `Err`: why it cannot run here.
fn step_sweep_of(step: &reproduce::Step, options: RunOptions) -> Result<StepSweep, String> {
    super::run::sweep_spec(&options)
        .map(|spec| StepSweep {
            spec,
            max_cycles_per_byte: step.max_cycles_per_byte,
        })
        .map_err(|e| format!("cannot run here: {e}"))
}

/// What step `name` of `study` runs on this machine when "one core" is `one_core`: its sweep
/// (functions with their backends, sizes, dispatch modes, sessions and cores), as `reproduce`
/// plans it. For tests that construct a step's results file, which must hold the step's scenarios
/// to count as the step's (issue 47 N30).
pub fn step_sweep(study: &Study, name: &str, one_core: usize) -> Result<sweep::SweepSpec, String> {
    let step = study
        .steps
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("{} has no step {name}", study.id))?;
    let mut options = step.options(one_core);
    options.timing.target_ci = Some(0.0);
    step_sweep_of(step, options).map(|s| s.spec)
}

impl StepSweep {
    /// Whether `doc` holds this step's results: every result one of the step's scenarios (its
    /// functions, sizes, dispatch modes, sessions, cores, data, keys, verification, re-keying, tag
    /// length), and the header, which every `run` writes, naming the step's `--alg`, `--backend`,
    /// `--accel`, `--sizes` and `--dispatch`: a file of another run with a subset of the step's
    /// scenarios is not the step's either. `Err`: the first difference, as words.
    fn holds_the_steps(&self, doc: &crate::results::Document) -> Result<(), String> {
        let spec = &self.spec;
        let other = |what: String| Err(format!("holds another run's results ({what})"));
        if let crate::results::Header::Sweep(h) = &doc.scenario {
            let (theirs, ours) = (&h.options, &self.spec.options);
            let accel = |o: &RunOptions| crate::spec::accel_list(&o.accel);
            let dispatch = |o: &RunOptions| dispatches(&o.dispatch);
            let backend = |o: &RunOptions| o.backend.clone().unwrap_or("(default)".to_string());
            let given = [
                ("--alg", theirs.alg.clone(), ours.alg.clone()),
                ("--backend", backend(theirs), backend(ours)),
                ("--accel", accel(theirs), accel(ours)),
                ("--sizes", theirs.sizes.clone(), ours.sizes.clone()),
                ("--dispatch", dispatch(theirs), dispatch(ours)),
            ];
            if let Some((flag, theirs, ours)) = given.iter().find(|(_, a, b)| a != b) {
                return other(format!("{flag} {theirs}; the step runs {flag} {ours}"));
            }
        }
        let cores = crate::engine::format_cpu_list(&spec.scenario.cores);
        let sizes: Vec<String> = spec.sizes.iter().map(|s| s.label()).collect();
        let functions: Vec<String> = spec.functions.iter().map(|f| f.id().to_string()).collect();
        let s = &spec.scenario;
        for r in &doc.results {
            let at = format!("{}@{}", r.function(), r.size);
            let differs = if !functions.contains(&r.function().to_string()) {
                Some(format!("{at}: the step runs {}", functions.join(", ")))
            } else if !sizes.contains(&r.size.to_string()) {
                Some(format!("{at}: the step's sizes are {}", sizes.join(",")))
            } else if !spec.options.dispatch.contains(&r.scenario.dispatch) {
                Some(format!(
                    "{at} dispatched {}: the step's are {}",
                    r.scenario.dispatch,
                    dispatches(&spec.options.dispatch)
                ))
            } else if r.sessions != s.sessions {
                Some(format!(
                    "{at}: {} sessions, the step's {}",
                    r.sessions, s.sessions
                ))
            } else if r.cores != cores {
                Some(format!("{at}: on cores {}, the step's {cores}", r.cores))
            } else if (
                r.scenario.data,
                r.scenario.keys,
                r.scenario.verify,
                r.scenario.rekey_every,
                r.scenario.tag_len,
            ) != (s.data, s.keys, s.verify, s.rekey_every, s.tag_len)
            {
                Some(format!("{at}: its data, keys, verification, re-keying or tag length are not the step's"))
            } else {
                None
            };
            if let Some(what) = differs {
                return other(what);
            }
        }
        Ok(())
    }
}

/// Dispatch modes as a results header writes them.
fn dispatches(modes: &[crate::engine::Dispatch]) -> String {
    modes
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Sizes a step's runs (`sweep::plan_runs`) on this machine's scheduler and clock.
struct Planner {
    slice: std::time::Duration,
    reference_hz: f64,
}

impl Planner {
    fn new() -> Planner {
        // Cycles per byte are reference cycles: f converts a step's slowest cost into time.
        let (reference_hz, _) =
            crate::system::clock::calibrate_reference(std::time::Duration::from_millis(30));
        Planner {
            slice: crate::bench::scheduling_slice(),
            reference_hz,
        }
    }

    /// The runs of `step` within `budget` seconds, or why it is refused.
    fn plan(&self, step: &StepSweep, budget: f64) -> Result<sweep::RunPlan, String> {
        let load = step.spec.load().map_err(|e| e.to_string())?;
        sweep::plan_runs(
            budget,
            &load,
            step.max_cycles_per_byte / self.reference_hz,
            self.slice,
        )
        .map_err(|why| format!("refused: {why}"))
    }
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
    // Its steps have run by now: a report that cannot be written (a full disk) is a failure of
    // the work, exit 1, not a refusal before any (its message names the file and the reason).
    super::report::report(&report).map_err(|e| CliError::failure(e.message))?;
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

/// The budget the plan takes, in seconds, and whether it is more than the study's default because
/// its steps need that (no `--budget` given).
struct PlanBudget {
    seconds: f64,
    raised: bool,
}

fn print_plan(
    study: &Study,
    plans: &[StepLine],
    pending: &[bool],
    budget: PlanBudget,
    dir: &Path,
    one_core: usize,
) {
    let PlanBudget {
        seconds: budget_s,
        raised,
    } = budget;
    crate::errln!(
        "reproduce: {} — {}, \"{}\"",
        study.id,
        study.authors,
        study.title
    );
    let mut total = 0.0;
    for ((step, plan), &pending) in study.steps.iter().zip(plans).zip(pending) {
        match plan {
            _ if !pending => crate::errln!(
                "reproduce:   {:<14} kept: its results file is complete ({})",
                step.name,
                directory::step_file(dir, step.name).display()
            ),
            Ok((_, p)) => {
                total += p.seconds;
                let runs = if p.longest > p.duration {
                    format!(
                        "{:.3}–{:.2} s",
                        p.duration.as_secs_f64(),
                        p.longest.as_secs_f64()
                    )
                } else {
                    format!("{:.2} s", p.duration.as_secs_f64())
                };
                crate::errln!(
                    "reproduce:   {:<14} ≈ {:>5.0} s  {} (one core = CPU {one_core}); {} repeats of runs of {runs}, the longest window ≥ {:.2} s: {}",
                    step.name,
                    p.seconds,
                    step.what,
                    p.repeats,
                    p.minimum_window.as_secs_f64(),
                    p.why,
                );
            }
            Err(why) => crate::errln!("reproduce:   {}: {why}", step.name),
        }
    }
    if raised {
        // The default is a wish; what the steps need is a floor (docs/methodology.md §2).
        crate::errln!(
            "reproduce: the steps need ≈ {budget_s:.0} s here, more than {}'s default budget of {:.0} s, so the plan takes that (--budget below it is refused)",
            study.id,
            study.default_budget_s
        );
    }
    crate::errln!(
        "reproduce: ≈ {total:.0} s of runs, into {}; {} claims to check",
        dir.display(),
        study.claims.len()
    );
}
