//! `macbench run` (and `macbench` with no arguments): the flags converted into one typed value,
//! [`RunOptions`] ([`options`], the only place a flag's spelling is known), which becomes a sweep
//! checked whole before anything starts ([`run_options`], which a reproduction step's value goes
//! through too) and is handed to the session (`session::run_sweep`), which runs it and rewrites the
//! JSON/CSV after each scenario; this file prints a line per scenario as it comes, and the tables.

use super::CliError;
use crate::engine::{self, DataMode, KeyMode, Pinning, Scenario};
use crate::mac::VerifyMode;
use crate::report::table;
use crate::results::options::{Output, Timing};
use crate::results::{self, Document, RunOptions};
use crate::session;
use crate::spec;
use crate::sweep::{self, SweepSpec};
use crate::table::{Style, Table};
use std::path::PathBuf;

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
    /// Given without --target-ci, exactly this many run [default: as many as 75 % of the budget holds
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
    /// The most reference cycles per byte a function of the sweep takes (a bound you know, with a
    /// margin): each scenario's window then holds 1,000 messages a session of its own size at that
    /// cost, a run of larger messages lengthened for them, so no result is `window-too-short` and no
    /// first run goes to fitting a window. `reproduce` sizes its steps so [default: a window too
    /// short for 1,000 messages is fitted after a first run, up to 60 ms; docs/methodology.md §4]
    #[arg(long, value_name = "CYCLES_PER_BYTE", allow_hyphen_values = true)]
    pub slowest: Option<f64>,
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
    /// Time for the command (`90`, `90s`, `10m`), from its start to its last write — plan,
    /// pre-flight checks and extra repeats included: the planned repeats are sized to take 75 % of
    /// it (shorter runs, down to a 20 ms window) and the rest goes to windows fitted to slow
    /// functions and extra repeats where intervals are widest [default: 52 s, or what the planned
    /// repeats need].
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

/// The run's options the flags give, each value parsed (nothing runs yet, and the rules between
/// options are [`RunOptions::check`]'s, which the sweep applies): the only place that knows a
/// flag's spelling.
pub(super) fn options(args: &RunArgs) -> Result<RunOptions, CliError> {
    let cores = match &args.cores {
        Some(c) => spec::parse_cpus("--cores", c)?,
        None => crate::system::online_cpus(),
    };
    let budget = match &args.budget {
        Some(text) => Some((parse_duration("--budget", text)?, text.clone())),
        None => None,
    };
    let tick = match args.tick.as_str() {
        sweep::AUTO => None,
        text => Some(spec::parse_duration_within(
            "--tick",
            text,
            engine::MIN_TICK,
            engine::MAX_TICK,
        )?),
    };
    Ok(RunOptions {
        alg: args.alg.clone(),
        backend: args.backend.clone(),
        accel: args.accel.clone(),
        sizes: args.sizes.clone(),
        sessions: args.sessions.unwrap_or(cores.len().max(1)),
        cores,
        pinning: match args.float {
            true => Pinning::Float,
            false => Pinning::RoundRobin,
        },
        data: args.data,
        keys: args.keys,
        verify: args.verify,
        rekey_every: args.rekey,
        tag_len: args.tag_len,
        auto: args.auto,
        seed: args.seed,
        dispatch: spec::parse_dispatches(&args.dispatch)?,
        energy: args.energy,
        baseline: args.baseline.clone(),
        timing: Timing {
            duration: args
                .duration
                .as_deref()
                .map(|d| parse_duration("--duration", d))
                .transpose()?,
            budget,
            window: args.window.clone(),
            tick,
            repeat: args.repeat,
            target_ci: args.target_ci,
            max_repeat: args.max_repeat,
            order: args.order,
            slowest: args.slowest,
        },
        output: Output {
            json: args.json.clone(),
            csv: args.csv.clone(),
            dir: args.output_dir.clone(),
            keep_previous: args.keep_previous,
            label: args.label.clone(),
            quiet_check: args.quiet_check,
            harness: !args.no_harness,
        },
    })
}

/// The sweep `options` describe, their functions resolved (saying on stderr which cannot run here)
/// and every rule checked.
pub(super) fn sweep_spec(options: &RunOptions) -> Result<SweepSpec, CliError> {
    let functions = super::functions(&options.alg, options.backend.as_deref(), &options.accel)?;
    Ok(SweepSpec::new(options, functions)?)
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

/// `options` with `-o DIR` turned into `DIR/results.json` and `DIR/results.csv`, DIR made
/// ([`session::output_dir_files`]: refused with exit 2 when DIR is unfit).
fn into_output_dir(options: &RunOptions) -> Result<RunOptions, CliError> {
    let mut options = options.clone();
    let Some(dir) = options.output.dir.take() else {
        return Ok(options);
    };
    let (json, csv) = session::output_dir_files(&dir)?;
    options.output.json = Some(json);
    options.output.csv = Some(csv);
    Ok(options)
}

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    run_options(&options(args)?)
}

/// A run from its options: `run`'s flags converted, or a reproduction step's value.
pub(super) fn run_options(options: &RunOptions) -> Result<(), CliError> {
    // The budget counts from here: the plan and its pre-flight checks are part of the command.
    let started = std::time::Instant::now();
    // Check and plan everything before anything runs or any file is written.
    let mut spec = sweep_spec(options)?;
    let plan = spec.plan(&crate::system::online_cpus())?;
    // A switched function runs in a child macbench: a `$MACBENCH_EXE` that is not a file is the
    // user's input, refused before anything runs (it was each scenario's failure, exit 1).
    if plan.scenarios.iter().any(crate::isolate::needed) {
        crate::isolate::executable().map_err(CliError::usage)?;
    }
    let baseline = baseline_row(options, &plan)?;
    check_label(options.output.label.as_deref())?;
    let energy = match options.energy {
        true => Some(session::energy_phase(
            options.repeats(),
            session::interrupt_flag(),
        )?),
        false => None,
    };
    // `-o DIR` made last, once every check passed; the sweep's options then name its files.
    spec.options = into_output_dir(options)?;
    let mut terminal = Terminal {
        progress: super::progress_bar(plan.scenarios.len()),
        table: match energy {
            Some(_) => table::scenario_table_with_energy(Style::detect()),
            None => table::scenario_table(Style::detect()),
        },
    };
    let request = session::SweepRequest {
        spec: &spec,
        plan,
        energy,
        baseline,
        started,
    };
    let (doc, interrupted) = session::run_sweep(request, &mut terminal)?;
    summary(&doc, &spec.options, interrupted)
}

/// `--baseline ROW` checked against the planned rows: it names at least one, and at most one in
/// each group; and repeats are interleaved, or no two rows' repeats would be neighbours.
fn baseline_row(
    options: &RunOptions,
    plan: &sweep::Plan,
) -> Result<Option<results::baseline::BaselineRow>, CliError> {
    let Some(text) = &options.baseline else {
        return Ok(None);
    };
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
fn summary(doc: &Document, options: &RunOptions, interrupted: bool) -> Result<(), CliError> {
    let output = &options.output;
    crate::out!(
        "{}",
        crate::report::summary::run_summary(doc, output.json.as_deref(), output.csv.as_deref())
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
    if options.energy && without_energy > 0 {
        return Err(CliError::failure(format!(
            "--energy: {without_energy} of {} timed result(s) got no energy figure (each one's `energy:` line says why)",
            timed.count()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `run`'s flags left at their defaults give `RunOptions::default()`, the value a reproduction
    /// step starts from: the two cannot drift apart (bare `macbench` differs only in its output).
    #[test]
    fn the_flags_defaults_are_the_default_options() {
        let mut from_flags = options(&RunArgs::default()).unwrap();
        assert_eq!(from_flags.output.json, Some(PathBuf::from(DEFAULT_RESULTS)));
        assert!(from_flags.output.keep_previous);
        from_flags.output.json = None;
        from_flags.output.keep_previous = false;
        assert_eq!(from_flags, RunOptions::default());
    }
}
