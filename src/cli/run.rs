//! `macbench run` (and `macbench` with no arguments): the flags turned into a sweep, checked whole
//! before anything starts, and handed to the session (`session::run_sweep`), which runs it and rewrites
//! the JSON/CSV after each scenario; this file prints a line per scenario as it comes, and the tables.

use super::CliError;
use crate::bench::AutoPolicy;
use crate::engine::{self, DataMode, KeyMode, Pinning, Scenario};
use crate::mac::VerifyMode;
use crate::report::table;
use crate::results::{self, Document};
use crate::session;
use crate::spec;
use crate::sweep::{self, SweepSpec};
use crate::table::{Style, Table};
use std::path::PathBuf;

/// The finest `--target-ci` taken, percent: the host's own repeat-to-repeat spread (docs/methodology.md,
/// "The host's floor") keeps intervals at a few tenths of a percent at best, so a finer target only
/// runs every scenario to --max-repeat.
pub const MIN_TARGET_CI_PERCENT: f64 = 0.01;

/// Default `--target-ci`, percent: see docs/benchmark.md's figures for how it was chosen.
pub const DEFAULT_TARGET_CI_PERCENT: f64 = 5.0;
/// Default `--max-repeat`: room for the budget's extra repeats where intervals are wide (the budget
/// bounds their time).
pub const DEFAULT_MAX_REPEAT: usize = 40;
/// Default `--repeat`.
pub const DEFAULT_REPEAT: usize = 3;

#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Algorithms, comma-separated, or the presets `paper` (the nine functions of Rashwan et al.'s paper) and `all`.
    #[arg(long, default_value = "paper")]
    pub alg: String,
    /// Backends, comma-separated, or `all`; default: the first available backend of each algorithm.
    #[arg(long)]
    pub backend: Option<String>,
    /// Acceleration, comma-separated: `hw` (the library's default), `sw` (extensions off), or an x86-64
    /// ISA level the backend offers (`sse`, `avx`, `avx2`, `avx512`: ipsecmb), e.g. `hw,sw` or
    /// `sse,avx2,avx512`.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "hw")]
    pub accel: Vec<crate::mac::Accel>,
    /// Message sizes: `default`, numbers, power-of-two ranges `16..65536`, or a size model
    /// (`imix`, `uniform`, `rule-of-thumb`, `three-impulse`, `caida`, a `.csv` of size,weight, a pcap).
    #[arg(long, default_value = "default", allow_hyphen_values = true)]
    pub sizes: String,
    /// Concurrent sessions (threads); default: one per core of --cores.
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_count::<usize>)]
    pub sessions: Option<usize>,
    /// Core set, e.g. `0,1` or `0-7`; default: all online CPUs.
    #[arg(long, allow_hyphen_values = true)]
    pub cores: Option<String>,
    /// Let sessions float within the core set instead of pinning them round-robin.
    #[arg(long)]
    pub float: bool,
    /// Run duration per scenario: `0.15`, `150ms`, `2s` [default: chosen by the budget, from a 21 ms
    /// run up to 150 ms, longer when sessions outnumber cores so that each gets enough scheduling
    /// rounds in the window; the choice is printed].
    #[arg(long, allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// Measurement window inside the run: `auto` (a 1 ms warm-up, longer when sessions outnumber
    /// cores, then to the run's end), `0.03..0.135` (seconds) or `20%..90%`.
    #[arg(long, default_value = sweep::AUTO, allow_hyphen_values = true)]
    pub window: String,
    /// Repeats per scenario; the median is reported with min/max and a 95 % confidence interval.
    /// Given without --target-ci, exactly this many run [default: as many as 80 % of the budget holds
    /// at the shortest run, at least 3, and extra repeats where the interval misses --target-ci while
    /// the budget lasts].
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_count::<usize>)]
    pub repeat: Option<usize>,
    /// Target precision: the 95 % confidence interval's half-width, in percent of the median
    /// cycles/byte. Extra repeats go to the scenarios whose intervals are widest against it (up to
    /// --max-repeat each) while the --budget lasts; a result still wider is flagged `noisy`. `0`
    /// turns the target off. `5` and `5%` mean the same [default: 5, or off when --repeat is given].
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_percent)]
    pub target_ci: Option<f64>,
    /// Most repeats per scenario, those added for --target-ci included [default: 40, or --repeat
    /// when that is more].
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_count::<usize>)]
    pub max_repeat: Option<usize>,
    /// How messages reach the backend, comma-separated, each a scenario of its own: `single` (one at
    /// a time), `burst:N` (N per call; multi-buffer backends compute them in SIMD lanes) or
    /// `inflight:N` (N kept queued), N from 1 to 16: `single,burst:16,inflight:16`; or `stream`
    /// (each size is one update of a long message finalised once per MiB: the bulk rate a file or
    /// stream authenticator sees; backends without an incremental interface refuse it;
    /// docs/benchmark.md "Streaming").
    #[arg(long, default_value = "single", allow_hyphen_values = true)]
    pub dispatch: String,
    /// Tag bytes: a truncation as deployed (HMAC-SHA-256-128 is 16, HMAC-SHA1-96 is 12; RFC 4868),
    /// or for KMAC its output length L, an input of the construction. The same rule as `tag
    /// --tag-len` and `net --tag-len`; default: each algorithm's own tag.
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_tag_len)]
    pub tag_len: Option<usize>,
    /// The coordinator's sampling tick (time series, batch means): `auto` (an eighth of the window,
    /// 1–10 ms), or `10ms`, `1ms` … `1s`.
    #[arg(long, default_value = sweep::AUTO, allow_hyphen_values = true)]
    pub tick: String,
    /// Time for the sweep's runs (`90`, `90s`, `10m`), extra repeats included: the planned repeats
    /// are sized to take 80 % of it (shorter runs, down to a 20 ms window) and the rest goes to extra
    /// repeats where intervals are widest [default: 50 s, or what the planned repeats need].
    #[arg(long, allow_hyphen_values = true)]
    pub budget: Option<String>,
    /// Message data: `unique` (pool larger than L2) or `same` (one cache-hot buffer).
    #[arg(long, value_enum, default_value_t = DataMode::Unique)]
    pub data: DataMode,
    /// Keys: one random key per session, or one shared key.
    #[arg(long, value_enum, default_value_t = KeyMode::PerSession)]
    pub keys: KeyMode,
    /// Verification: `none` (sender), `inline` (receiver, inside the timer) or `after` (checked after).
    #[arg(long, value_enum, default_value_t = VerifyMode::None)]
    pub verify: VerifyMode,
    /// Re-key every N messages (key setup then counts in the per-byte metrics).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_count::<u64>)]
    pub rekey: Option<u64>,
    /// Check validity and adjust and re-run until valid or a bound is hit (Rashwan et al., Fig. 3).
    #[arg(long)]
    pub auto: bool,
    /// Write results JSON here (default for the default run: macbench-results.json).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per scenario here, and per-thread rows to NAME-threads.csv.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write this host's results into DIR (created if missing): results.json, results.csv and
    /// results-threads.csv — one directory per host, as `reproduce -o` writes one per study; refused if
    /// DIR already holds results.
    #[arg(short = 'o', long = "output-dir", value_name = "DIR", conflicts_with_all = ["json", "csv"])]
    pub output_dir: Option<PathBuf>,
    /// This host's name in the results, tables and figures [default: its hostname]: with results of
    /// many machines side by side (`report a/ b/`), each is named by its label.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Seed for data, keys and size sequences.
    #[arg(long, default_value_t = 1, allow_hyphen_values = true, value_parser = crate::spec::parse_whole::<u64>)]
    pub seed: u64,
    /// Skip measuring the harness overhead (null function) first.
    #[arg(long)]
    pub no_harness: bool,
    /// Also measure energy per byte and per message with this machine's meter (RAPL, a battery):
    /// after each scenario's repeats, rounds of idle, null-function and MAC windows (≥ 1 s for RAPL,
    /// ≥ 30 s for a battery). Refused, with each meter's reason, where none is readable.
    #[arg(long)]
    pub energy: bool,
    /// In what order repeats run: `interleaved` (one repeat of each scenario in a span of about 20 s
    /// of runs, then the next …: a neighbour's burst is spread over scenarios rather than sinking
    /// one, and a slow drift stays out of each scenario's repeats) or `sequential` (each scenario's
    /// repeats back to back) [default: interleaved when --repeat > 1].
    #[arg(long, value_enum, allow_hyphen_values = true)]
    pub order: Option<sweep::Order>,
    /// Each row's cost as a ratio to one row of its group (same algorithm and size, differing in
    /// backend, acceleration or dispatch mode), with a paired 95 % interval: the group's rows run
    /// back to back within each round, so their repeats share the host's state. ROW is a backend
    /// (`openssl`), an acceleration or ISA level (`hw`, `sw`, `avx2`), a dispatch mode (`single`,
    /// `burst:8`), `backend/accel`, or a function as the table prints it (`hmac-sha256/openssl/hw`);
    /// it must name one row in each group (docs/methodology.md §4, "Ratios to a baseline row").
    #[arg(long, value_name = "ROW")]
    pub baseline: Option<String>,
    /// Refuse to start when other processes use more than 10 % of the chosen cores (sampled for
    /// 0.25 s first) or when that cannot be read: one line, exit 1.
    #[arg(long)]
    pub quiet_check: bool,
    /// Set for bare `macbench` only (its default `macbench-results.json`, which the user did not
    /// name): an earlier results file there is kept under a dated name, and any other file refused,
    /// rather than replaced. An explicit `--json FILE` is the user's choice and is replaced.
    #[arg(skip)]
    pub keep_previous: bool,
}

/// Where bare `macbench` writes its results.
pub const DEFAULT_RESULTS: &str = "macbench-results.json";

impl Default for RunArgs {
    fn default() -> Self {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: RunArgs,
        }
        let mut args = Wrapper::parse_from(["macbench"]).args;
        args.json = Some(PathBuf::from(DEFAULT_RESULTS));
        args.keep_previous = true;
        args
    }
}

/// The one duration rule (kept here as well, for callers that import it from `run`).
pub use crate::spec::values::parse_duration;

/// Whether a run in this process was interrupted (Ctrl-C, SIGTERM): `reproduce` stops there too.
pub use crate::session::interrupted as cancelled;

/// The sweep the flags describe, every value parsed and checked (nothing runs yet).
pub(super) fn sweep_spec(args: &RunArgs) -> Result<SweepSpec, CliError> {
    let functions = super::functions(&args.alg, args.backend.as_deref(), &args.accel)?;
    let cores = match &args.cores {
        Some(c) => spec::parse_cpus("--cores", c)?,
        None => crate::system::online_cpus(),
    };
    let sessions = spec::check_count(
        "--sessions",
        args.sessions.unwrap_or(cores.len().max(1)),
        spec::values::MAX_SESSIONS,
    )?;
    // Each session keys its own queue pair on a device: more sessions than it has would fail at the
    // first key setup past them, after the plan and the table's header; refused here instead.
    if let Some(pairs) = crate::mac::dpdk::queue_pairs()
        .filter(|&pairs| sessions > pairs && functions.iter().any(crate::mac::dpdk::drives))
    {
        return Err(CliError::usage(format!(
            "--sessions {sessions}: the dpdk device has {pairs} queue pairs and macbench gives each session its own (at most --sessions {pairs}, or a device with more queue pairs)"
        )));
    }
    if args.rekey == Some(0) {
        return Err(CliError::usage("--rekey must be at least 1 message"));
    }
    spec::check_count("--repeat", args.repeats(), spec::values::MAX_REPEAT)?;
    let target = args.target_ci_percent();
    if !(0.0..=100.0).contains(&target) {
        return Err(CliError::usage(format!(
            "--target-ci {}: give a percentage between 0 (off) and 100",
            crate::number::compact(target)
        )));
    }
    // A target no run reaches would only spend --max-repeat repeats on every scenario, silently
    // (issue 47 N33: `--target-ci 1e-300`); the finest a run can hope for is well above this.
    if target > 0.0 && target < MIN_TARGET_CI_PERCENT {
        return Err(CliError::usage(format!(
            "--target-ci {}: below {MIN_TARGET_CI_PERCENT} %, finer than any run's interval gets (it would only spend --max-repeat repeats on every scenario); give 0 (off) or {MIN_TARGET_CI_PERCENT} to 100",
            crate::number::compact(target)
        )));
    }
    // One cap for both: a target no run can reach (`--target-ci 1e-300`) still ends.
    spec::check_count("--max-repeat", args.max_repeats(), spec::values::MAX_REPEAT)?;
    // Only two numbers the user gave can contradict each other; a default yields to the other.
    if let (Some(max), Some(repeat)) = (args.max_repeat, args.repeat) {
        if max < repeat {
            return Err(CliError::usage(format!(
                "--max-repeat {max} is below --repeat {repeat}"
            )));
        }
    }
    if let (Some(budget), Some(duration)) = (&args.budget, &args.duration) {
        return Err(CliError::usage(format!(
            "--budget {budget} and --duration {duration}: the budget sets the duration per run; give one of them"
        )));
    }
    let budget = match &args.budget {
        Some(text) => Some((parse_duration("--budget", text)?, text.clone())),
        None => None,
    };
    Ok(SweepSpec {
        functions,
        sizes: spec::parse_sizes(&args.sizes, args.seed)?,
        scenario: engine::ScenarioSpec {
            cores,
            sessions,
            pinning: if args.float {
                Pinning::Float
            } else {
                Pinning::RoundRobin
            },
            data: args.data,
            keys: args.keys,
            verify: args.verify,
            rekey_every: args.rekey,
            seed: args.seed,
            tag_len: args.tag_len,
            // Size, dispatch mode, duration and window are each scenario's own (`SweepSpec::plan`).
            ..engine::ScenarioSpec::default()
        },
        duration: args
            .duration
            .as_deref()
            .map(|d| parse_duration("--duration", d))
            .transpose()?,
        budget,
        window: args.window.clone(),
        tick: match args.tick.as_str() {
            sweep::AUTO => None,
            text => Some(spec::parse_duration_within(
                "--tick",
                text,
                engine::MIN_TICK,
                engine::MAX_TICK,
            )?),
        },
        repeat: args.repeats(),
        fill_budget: args.repeat.is_none() && args.duration.is_none(),
        max_repeat: args.max_repeats(),
        dispatches: spec::parse_dispatches(&args.dispatch)?,
    })
}

/// The results header: the sweep's options as given, with what the plan made of them.
fn sweep_header(args: &RunArgs, spec: &SweepSpec, plan: &sweep::Plan) -> results::Header {
    results::Header::Sweep(Box::new(results::SweepOptions {
        alg: args.alg.clone(),
        backend: args.backend.clone(),
        accel: spec::accel_list(&args.accel),
        sizes: args.sizes.clone(),
        sessions: spec.scenario.sessions,
        cores: engine::format_cpu_list(&spec.scenario.cores),
        pinning: spec.scenario.pinning,
        duration_s: plan.duration.as_secs_f64(),
        window_start_s: plan.window_start.as_secs_f64(),
        window_end_s: plan.window_end.as_secs_f64(),
        repeat: plan.repeats,
        data: args.data,
        keys: args.keys,
        verify: args.verify,
        rekey_every: args.rekey,
        auto: args.auto,
        seed: args.seed,
        tick_s: plan.tick.as_secs_f64(),
        target_ci_percent: args.target_ci_percent(),
        max_repeat: args.max_repeats(),
        budget_s: plan.budget.as_secs_f64(),
        dispatch: spec
            .dispatches
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(","),
        energy: args.energy,
        order: order(args, plan.repeats),
        baseline: args.baseline.clone(),
        interleave_span_s: sweep::INTERLEAVE_SPAN.as_secs_f64(),
    }))
}

/// Prints a line per finished scenario, under a progress bar.
struct Terminal {
    progress: Option<indicatif::ProgressBar>,
    table: Table,
}

impl Terminal {
    fn say(&self, line: String) {
        super::say(self.progress.as_ref(), &line);
    }
}

impl session::SweepDisplay for Terminal {
    fn begin(&mut self) {
        if !super::quiet() {
            self.say(self.table.header());
        }
    }

    fn note(&mut self, line: &str) {
        // Standard error, above the progress bar: a note, not a row of the table.
        match &self.progress {
            Some(pb) => pb.suspend(|| crate::errln!("{line}")),
            None => crate::errln!("{line}"),
        }
    }

    fn end(&mut self) {
        if let Some(pb) = self.progress.take() {
            pb.finish_and_clear();
        }
    }
}

impl sweep::Observer for Terminal {
    fn energy_not_measured(&mut self, scenario: &Scenario, reason: &str) {
        self.say(format!(
            "    energy: {} not measured: {reason}",
            scenario.function.id()
        ));
    }

    fn starting(&mut self, scenario: &Scenario) {
        if let Some(pb) = &self.progress {
            pb.set_message(format!(
                "{} @ {}",
                scenario.function.id(),
                scenario.size.label()
            ));
        }
    }

    fn finished(&mut self, doc: &Document) -> Result<(), String> {
        let Some(result) = doc.results.last() else {
            return Ok(());
        };
        if !super::quiet() {
            self.say(table::line(&self.table, result));
            // `--auto`'s rounds, each said; the budget's cut repeats are counted in the summary.
            for a in result
                .adjustments
                .iter()
                .filter(|a| !a.starts_with("budget:"))
            {
                self.say(format!("    auto: {a}"));
            }
            // Said with the row: an energy figure resting on few meter steps is not a finding.
            if let Some(e) = result.energy.as_ref().filter(|e| e.few_steps) {
                self.say(format!(
                    "    energy: {} meter steps in the net energy of a window (under {}): not precise",
                    e.meter_steps.map_or("no".to_string(), |s| format!("{s:.1}")),
                    crate::energy::method::FEW_STEPS
                ));
            }
        }
        if let Some(pb) = &self.progress {
            pb.inc(1);
        }
        Ok(())
    }
}

/// `--energy`'s check before anything runs (`reproduce --energy`).
pub(super) use crate::session::check_energy_meter;

/// `--label`'s rule (`reproduce --label` too).
pub(super) fn check_label(label: Option<&str>) -> Result<(), CliError> {
    Ok(spec::check_label(label)?)
}

/// `args` with `-o DIR` turned into `--json DIR/results.json --csv DIR/results.csv`, DIR made
/// ([`session::output_dir_files`]: refused with exit 2 when DIR is unfit).
fn into_output_dir(args: &RunArgs) -> Result<RunArgs, CliError> {
    let mut args = args.clone();
    let Some(dir) = args.output_dir.take() else {
        return Ok(args);
    };
    let (json, csv) = session::output_dir_files(&dir)?;
    args.json = Some(json);
    args.csv = Some(csv);
    Ok(args)
}

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    // Parse and validate everything before anything runs or any file is written.
    let spec = sweep_spec(args)?;
    let plan = spec.plan(&crate::system::online_cpus())?;
    let baseline = baseline_row(args, &plan)?;
    check_label(args.label.as_deref())?;
    let energy = match args.energy {
        true => Some(session::energy_phase(
            args.repeats(),
            session::interrupt_flag(),
        )?),
        false => None,
    };
    let args = &into_output_dir(args)?;
    let header = sweep_header(args, &spec, &plan);
    let mut terminal = Terminal {
        progress: super::progress_bar(plan.scenarios.len()),
        table: match energy {
            Some(_) => table::scenario_table_with_energy(Style::detect()),
            None => table::scenario_table(Style::detect()),
        },
    };
    let request = session::SweepRequest {
        spec: &spec,
        header,
        label: args.label.as_deref(),
        json: args.json.as_deref(),
        csv: args.csv.as_deref(),
        keep_previous: args.keep_previous,
        window: &args.window,
        quiet_check: args.quiet_check,
        harness: !args.no_harness,
        auto: AutoPolicy {
            enabled: args.auto,
            max_repeats: args.max_repeats(),
            target_ci: (args.target_ci_percent() > 0.0).then_some(args.target_ci_percent() / 100.0),
            fit_window: args.duration.is_none() && args.window == sweep::AUTO,
            ..AutoPolicy::default()
        },
        repetition: sweep::Repetition {
            repeats: plan.repeats,
            order: order(args, plan.repeats),
            span: sweep::INTERLEAVE_SPAN,
            budget: Some(plan.budget),
            paired: baseline.is_some(),
        },
        plan,
        energy,
        baseline,
    };
    let (doc, interrupted) = session::run_sweep(request, &mut terminal)?;
    summary(&doc, args, interrupted)
}

/// `--order`, or its default: interleaved when there are repeats to interleave or rows to pair.
fn order(args: &RunArgs, repeats: usize) -> sweep::Order {
    match (args.order, &args.baseline) {
        (None, Some(_)) => sweep::Order::Interleaved,
        (order, _) => sweep::Order::or_default(order, repeats),
    }
}

/// `--baseline ROW` checked against the planned rows: it names at least one, and at most one in
/// each group; and repeats are interleaved, or no two rows' repeats would be neighbours.
fn baseline_row(
    args: &RunArgs,
    plan: &sweep::Plan,
) -> Result<Option<results::baseline::BaselineRow>, CliError> {
    let Some(text) = &args.baseline else {
        return Ok(None);
    };
    if args.order == Some(sweep::Order::Sequential) {
        return Err(CliError::usage(format!(
            "--baseline {text} with --order sequential: a row's repeats would all run before the next row's, so none would pair with its baseline's; leave --order out (interleaved)"
        )));
    }
    let row =
        results::baseline::BaselineRow::new(text).map_err(|e| CliError::usage(e.to_string()))?;
    let keys: Vec<results::ScenarioKey> = plan
        .scenarios
        .iter()
        .map(results::baseline::scenario_key)
        .collect();
    row.check(&keys)
        .map_err(|e| CliError::usage(e.to_string()))?;
    Ok(Some(row))
}

/// The matrices, where the results went, and the exit status.
fn summary(doc: &Document, args: &RunArgs, interrupted: bool) -> Result<(), CliError> {
    crate::out!(
        "{}",
        crate::report::summary::run_summary(doc, args.json.as_deref(), args.csv.as_deref())
    );
    if interrupted {
        return Err(CliError {
            code: 130,
            message: format!(
                "interrupted: {} finished scenario(s) kept",
                doc.results.len()
            ),
        });
    }
    let failed = doc.results.iter().filter(|r| !r.measured()).count();
    if failed > 0 {
        return Err(CliError::failure(format!(
            "{failed} result(s) failed their validity checks"
        )));
    }
    // Asked for energy and a timed result has none: a script must not read "no energy column" as
    // "no energy cost". Each such result's line said why.
    let timed = doc.results.iter().filter(|r| !r.raw.is_empty());
    let without_energy = timed.clone().filter(|r| r.energy.is_none()).count();
    if args.energy && without_energy > 0 {
        return Err(CliError::failure(format!(
            "--energy: {without_energy} of {} timed result(s) got no energy figure (each one's `energy:` line says why)",
            timed.count()
        )));
    }
    Ok(())
}

impl RunArgs {
    /// `--repeat`, or its default.
    pub fn repeats(&self) -> usize {
        let most = self.max_repeat.unwrap_or(DEFAULT_MAX_REPEAT);
        self.repeat.unwrap_or(DEFAULT_REPEAT.min(most))
    }

    /// `--max-repeat`, or its default (raised to `--repeat` when that asks for more).
    pub fn max_repeats(&self) -> usize {
        self.max_repeat
            .unwrap_or(DEFAULT_MAX_REPEAT.max(self.repeats()))
    }

    /// `--target-ci` in percent: as given, else off when `--repeat` was given (exactly that many
    /// runs), else [`DEFAULT_TARGET_CI_PERCENT`].
    pub fn target_ci_percent(&self) -> f64 {
        match (self.target_ci, self.repeat) {
            (Some(t), _) => t,
            (None, Some(_)) => 0.0,
            (None, None) => DEFAULT_TARGET_CI_PERCENT,
        }
    }
}
