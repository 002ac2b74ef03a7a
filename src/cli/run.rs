//! `macbench run` (and `macbench` with no arguments): parse a sweep, validate all of it before starting,
//! run scenario after scenario, print a line per scenario, rewrite the JSON/CSV after each one.

use super::{resolve_algorithms, CliError};
use crate::bench::{self, AutoPolicy, Document, Harness};
use crate::engine::{self, clock, DataMode, KeyMode, Pinning, Scenario, SizeSource};
use crate::host::{self, Host};
use crate::mac::{self, Accel, Availability, Function, VerifyMode};
use crate::report::{self, csv_export, table, Exporter, JsonExporter};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Default run duration per scenario when sessions do not outnumber cores.
pub const DEFAULT_DURATION: Duration = Duration::from_millis(150);
/// Default `--target-ci`, percent: see the README's benchmark figures for how it was chosen.
pub const DEFAULT_TARGET_CI_PERCENT: f64 = 5.0;
/// Default `--max-repeat`.
pub const DEFAULT_MAX_REPEAT: usize = 4;

/// METHODOLOGY §5 default sizes: powers of two 16 … 65536 plus the IP sizes 40, 576 and 1500.
pub const DEFAULT_SIZES: &[u32] = &[
    16, 32, 40, 64, 128, 256, 512, 576, 1024, 1500, 2048, 4096, 8192, 16384, 32768, 65536,
];

#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Algorithms, comma-separated, or the presets `paper` (seed-000 set) and `all`.
    #[arg(long, default_value = "paper")]
    pub alg: String,
    /// Backends, comma-separated, or `all`; default: the first available backend of each algorithm.
    #[arg(long)]
    pub backend: Option<String>,
    /// Acceleration: `hw`, `sw` or `hw,sw`.
    #[arg(long, default_value = "hw")]
    pub accel: String,
    /// Message sizes: `default`, numbers, power-of-two ranges `16..65536`, or a size model
    /// (`imix`, `uniform`, `rule-of-thumb`, `three-impulse`, `caida`, a `.csv` of size,weight, a pcap).
    #[arg(long, default_value = "default", allow_hyphen_values = true)]
    pub sizes: String,
    /// Concurrent sessions (threads); default: one per core of --cores.
    #[arg(long)]
    pub sessions: Option<usize>,
    /// Core set, e.g. `0,1` or `0-7`; default: all online CPUs.
    #[arg(long)]
    pub cores: Option<String>,
    /// Let sessions float within the core set instead of pinning them round-robin.
    #[arg(long)]
    pub float: bool,
    /// Run duration per scenario: `0.15`, `150ms`, `2s` [default: 150ms, longer when sessions outnumber
    /// cores so that each gets enough scheduling rounds in the window; the choice is printed].
    #[arg(long, allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// Measurement window inside the run: `0.03..0.135` (seconds) or `20%..90%`.
    #[arg(long, default_value = "20%..90%")]
    pub window: String,
    /// Repeats per scenario; the median is reported with min/max and a 95 % confidence interval.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Target precision: the 95 % confidence interval's half-width, in percent of the median
    /// cycles/byte. Repeats are added (up to --max-repeat) until it is met, else the result is
    /// flagged `noisy`. `0` turns the target off.
    #[arg(long, default_value_t = DEFAULT_TARGET_CI_PERCENT)]
    pub target_ci: f64,
    /// Most repeats per scenario, those added for --target-ci included.
    #[arg(long, default_value_t = DEFAULT_MAX_REPEAT)]
    pub max_repeat: usize,
    /// The coordinator's sampling tick (time series, batch means): `10ms`, `1ms` … `1s`.
    #[arg(long, default_value = "10ms")]
    pub tick: String,
    /// Total time budget for the sweep (`90`, `90s`, `10m`): sets the duration per scenario.
    #[arg(long, allow_hyphen_values = true)]
    pub budget: Option<String>,
    /// Message data: `unique` (pool larger than L2) or `same` (one cache-hot buffer).
    #[arg(long, default_value = "unique")]
    pub data: String,
    /// Keys: `per-session` or `shared`.
    #[arg(long, default_value = "per-session")]
    pub keys: String,
    /// Verification: `none` (sender), `inline` (receiver, inside the timer) or `after` (checked after).
    #[arg(long, default_value = "none")]
    pub verify: String,
    /// Re-key every N messages (key setup then counts in the per-byte metrics).
    #[arg(long)]
    pub rekey: Option<u64>,
    /// Check validity and adjust and re-run until valid or a bound is hit (seed 000, Fig. 3).
    #[arg(long)]
    pub auto: bool,
    /// Write results JSON here (default for the default run: macbench-results.json).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write one CSV row per scenario here, and per-thread rows to NAME-threads.csv.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Seed for data, keys and size sequences.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip measuring the harness overhead (null function) first.
    #[arg(long)]
    pub no_harness: bool,
    /// Print only the final matrix, not a line per scenario.
    #[arg(long, short)]
    pub quiet: bool,
}

impl Default for RunArgs {
    fn default() -> Self {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: RunArgs,
        }
        let mut args = Wrapper::parse_from(["macbench"]).args;
        args.json = Some(PathBuf::from("macbench-results.json"));
        args
    }
}

/// The one duration rule (kept here as well, for callers that import it from `run`).
pub use super::values::parse_duration;

/// Parse a window against the run duration: `a..b` in seconds, or `a%..b%`.
pub fn parse_window(text: &str, duration: Duration) -> Result<(Duration, Duration), CliError> {
    let bad = || {
        CliError::usage(format!(
            "--window: {text:?} is not START..END (seconds, e.g. 0.03..0.135, or percent, e.g. 20%..90%)"
        ))
    };
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let point = |s: &str| -> Result<f64, CliError> {
        let s = s.trim();
        let (v, scale) = if let Some(p) = s.strip_suffix('%') {
            (p, duration.as_secs_f64() / 100.0)
        } else if let Some(ms) = s.strip_suffix("ms") {
            (ms, 1e-3)
        } else {
            (s.strip_suffix('s').unwrap_or(s), 1.0)
        };
        let v: f64 = v.trim().parse().map_err(|_| bad())?;
        if !v.is_finite() || v < 0.0 {
            return Err(bad());
        }
        Ok(v * scale)
    };
    let (start, end) = (point(a)?, point(b)?);
    if start >= end || end > duration.as_secs_f64() + 1e-12 {
        return Err(CliError::usage(format!(
            "--window {text}: the window {start}..{end} s must lie inside the run (0..{} s) and end after it starts",
            duration.as_secs_f64()
        )));
    }
    Ok((
        Duration::from_secs_f64(start),
        Duration::from_secs_f64(end.min(duration.as_secs_f64())),
    ))
}

/// Parse `--sizes` into size sources.
pub fn parse_sizes(text: &str, seed: u64) -> Result<Vec<SizeSource>, CliError> {
    let mut out: Vec<SizeSource> = Vec::new();
    let push_fixed = |out: &mut Vec<SizeSource>, n: u32| {
        if !out
            .iter()
            .any(|s| matches!(s, SizeSource::Fixed { size } if *size == n))
        {
            out.push(SizeSource::Fixed { size: n });
        }
    };
    for token in text.split(',').map(str::trim) {
        if token.is_empty() {
            continue;
        }
        if token == "default" {
            DEFAULT_SIZES.iter().for_each(|&n| push_fixed(&mut out, n));
        } else if let Some((a, b)) = token.split_once("..") {
            let (a, b) = (parse_size(a)?, parse_size(b)?);
            if a == 0 || a > b {
                return Err(CliError::usage(format!(
                    "--sizes: range {token:?} must run from a positive size up to a larger one"
                )));
            }
            let mut n = u64::from(a);
            while n <= u64::from(b) {
                push_fixed(&mut out, n as u32);
                n *= 2;
            }
        } else if token.bytes().all(|c| c.is_ascii_digit()) {
            push_fixed(&mut out, parse_size(token)?);
        } else if token.starts_with('-') {
            return Err(CliError::usage(format!(
                "--sizes: {token:?} is negative; sizes are byte counts ≥ 0"
            )));
        } else {
            let model = crate::traffic::resolve_model(token)
                .map_err(|e| CliError::usage(format!("--sizes: {e}")))?;
            let sequence = model.sample_sequence(seed, 65_536);
            out.push(SizeSource::Model {
                name: model.name().to_string(),
                mean_bytes: model.mean(),
                sequence: Arc::new(sequence),
            });
        }
    }
    if out.is_empty() {
        return Err(CliError::usage(
            "--sizes names no size; give e.g. 64,1500 or 16..65536 or default",
        ));
    }
    Ok(out)
}

fn parse_size(text: &str) -> Result<u32, CliError> {
    let t = text.trim();
    t.parse::<u32>().map_err(|_| {
        CliError::usage(format!(
            "--sizes: {t:?} is not a byte count (0 … {}); give numbers, ranges 16..65536 or a model name",
            engine::MAX_MESSAGE_LEN
        ))
    })
}

fn parse_choice<T: Copy>(flag: &str, text: &str, choices: &[(&str, T)]) -> Result<T, CliError> {
    choices
        .iter()
        .find(|(n, _)| *n == text)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            CliError::usage(format!(
                "{flag}: {text:?} is not one of {}",
                names.join(", ")
            ))
        })
}

/// Resolve algorithms × backends × accel to functions, reporting unavailable ones as errors with reasons.
pub fn resolve_functions(
    alg: &str,
    backend: Option<&str>,
    accel: &str,
) -> Result<Vec<Function>, CliError> {
    let algorithms = resolve_algorithms(alg)?;
    let accels: Vec<Accel> = super::values::dedup_list(accel)
        .into_iter()
        .map(|a| parse_choice("--accel", a, &[("hw", Accel::Hw), ("sw", Accel::Sw)]))
        .collect::<Result<_, _>>()?;
    let backends: Option<Vec<&str>> = match backend {
        None => None,
        Some("all") => Some(mac::BACKENDS.iter().map(|b| b.name).collect()),
        Some(list) => Some(
            list.split(',')
                .map(|b| super::resolve_backend(b.trim()).map(|b| b.name))
                .collect::<Result<_, _>>()?,
        ),
    };
    let all = mac::functions();
    let mut out = Vec::new();
    let mut unavailable = Vec::new();
    for name in &algorithms {
        for &acc in &accels {
            let candidates: Vec<&Function> = all
                .iter()
                .filter(|f| f.algorithm.name == *name && f.accel == acc)
                .filter(|f| {
                    backends
                        .as_ref()
                        .is_none_or(|b| b.contains(&f.backend.name))
                })
                .filter(|f| f.availability() == Availability::Available)
                .collect();
            let chosen: Vec<&Function> = if backends.is_some() {
                candidates
            } else {
                candidates.into_iter().take(1).collect()
            };
            if chosen.is_empty() {
                let why = mac::PLANNED
                    .iter()
                    .find(|(a, _, _)| a == name)
                    .map(|p| p.2.to_string())
                    .unwrap_or_else(|| match acc {
                        Accel::Sw => "no software-only variant in this build".to_string(),
                        Accel::Hw => {
                            "no available backend offers it (see `macbench list`)".to_string()
                        }
                    });
                unavailable.push(format!("{name}/{acc}: {why}"));
            }
            out.extend(chosen.into_iter().copied());
        }
    }
    Ok(out).and_then(|out: Vec<Function>| {
        if out.is_empty() {
            Err(CliError::usage(format!(
                "no function to run: {}",
                unavailable.join("; ")
            )))
        } else {
            for u in &unavailable {
                eprintln!("macbench: unavailable, skipped: {u}");
            }
            Ok(out)
        }
    })
}

static CANCEL: AtomicBool = AtomicBool::new(false);

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    // Parse and validate everything before anything runs or any file is written.
    let functions = resolve_functions(&args.alg, args.backend.as_deref(), &args.accel)?;
    let sizes = parse_sizes(&args.sizes, args.seed)?;
    let online = host::online_cpus();
    let cores = match &args.cores {
        Some(c) => super::values::parse_cpus("--cores", c)?,
        None => online.clone(),
    };
    let sessions = super::values::check_count(
        "--sessions",
        args.sessions.unwrap_or(cores.len().max(1)),
        super::values::MAX_SESSIONS,
    )?;
    let data = parse_choice(
        "--data",
        &args.data,
        &[("unique", DataMode::Unique), ("same", DataMode::Same)],
    )?;
    let keys = parse_choice(
        "--keys",
        &args.keys,
        &[
            ("per-session", KeyMode::PerSession),
            ("shared", KeyMode::Shared),
        ],
    )?;
    let verify = parse_choice(
        "--verify",
        &args.verify,
        &[
            ("none", VerifyMode::None),
            ("inline", VerifyMode::Inline),
            ("after", VerifyMode::After),
        ],
    )?;
    if args.rekey == Some(0) {
        return Err(CliError::usage("--rekey must be at least 1 message"));
    }
    super::values::check_count("--repeat", args.repeat, super::values::MAX_REPEAT)?;
    let scenario_count = functions.len() * sizes.len();
    let tick = super::values::parse_duration_within(
        "--tick",
        &args.tick,
        engine::MIN_TICK,
        engine::MAX_TICK,
    )?;
    if !(0.0..=100.0).contains(&args.target_ci) {
        return Err(CliError::usage(format!(
            "--target-ci {}: give a percentage between 0 (off) and 100",
            args.target_ci
        )));
    }
    if args.max_repeat < args.repeat {
        return Err(CliError::usage(format!(
            "--max-repeat {} is below --repeat {}",
            args.max_repeat, args.repeat
        )));
    }
    let mut duration = match &args.duration {
        Some(text) => parse_duration("--duration", text)?,
        None => DEFAULT_DURATION,
    };
    if let Some(text) = &args.budget {
        let budget = parse_duration("--budget", text)?.as_secs_f64();
        let per = budget / (scenario_count * args.repeat) as f64;
        if per < 0.02 {
            return Err(CliError::usage(format!(
                "--budget {budget} s leaves {:.1} ms per run for {scenario_count} scenarios × {} repeats; at least 20 ms is needed",
                per * 1e3,
                args.repeat
            )));
        }
        duration = super::values::duration_from_secs("--budget", text, per)?;
    }
    // Said once everything is validated, so that a refused command line stays one line.
    let mut notes: Vec<String> = Vec::new();
    if args.duration.is_none() && args.budget.is_none() {
        // The window's share of the run, from the default run length (the window may be in percent).
        let (a, b) = parse_window(&args.window, duration)?;
        let fraction = (b - a).as_secs_f64() / duration.as_secs_f64();
        let (fitted, why) = bench::fitted_duration(
            duration,
            sessions,
            cores.len(),
            fraction,
            bench::scheduling_slice(),
        );
        duration = fitted;
        notes.extend(why);
    }
    let (window_start, window_end) = parse_window(&args.window, duration)?;
    let rounds = bench::rounds_in_window(
        window_end - window_start,
        sessions,
        cores.len(),
        bench::scheduling_slice(),
    );
    if rounds < 2.0 {
        // Said before the run, not discovered after it: the window is likely to fail as starved.
        notes.push(format!(
            "warning: a {:.2} s window gives each of {sessions} sessions on {} core(s) ~{rounds:.1} scheduling slices; sessions may not run inside it at all (the result then fails); a longer --duration, or none for a fitted one, measures every session",
            (window_end - window_start).as_secs_f64(),
            cores.len()
        ));
    }
    let tick_used = engine::effective_tick(tick, sessions);
    if tick_used > tick {
        notes.push(format!(
            "tick {:.0} ms for {sessions} sessions (at least {} µs per session keeps the sampler near 1 % of a core)",
            tick_used.as_secs_f64() * 1e3,
            engine::TICK_PER_SESSION.as_micros()
        ));
    }
    let make = |function: Function, size: &SizeSource| Scenario {
        function,
        size: size.clone(),
        sessions,
        cores: cores.clone(),
        pinning: if args.float {
            Pinning::Float
        } else {
            Pinning::RoundRobin
        },
        duration,
        window_start,
        window_end,
        data,
        keys,
        verify,
        rekey_every: args.rekey,
        seed: args.seed,
        tick,
    };
    let mut scenarios = Vec::with_capacity(scenario_count);
    for f in &functions {
        for s in &sizes {
            let scenario = make(*f, s);
            engine::validate(&scenario, &online).map_err(|e| CliError::usage(e.to_string()))?;
            scenarios.push(scenario);
        }
    }
    // Thread, mapping and memory limits: refused before anything runs (they depend only on sessions
    // and the verify mode, so the first scenario speaks for all).
    if let Some(first) = scenarios.first() {
        engine::check_limits(first).map_err(|e| CliError::usage(e.to_string()))?;
    }
    let outputs = super::files::run_outputs(args.json.as_deref(), args.csv.as_deref(), true);
    let _locked = super::files::prepare_owned(&outputs, &[])?;
    for note in &notes {
        eprintln!("macbench: {note}");
    }

    let _ = ctrlc::set_handler(|| CANCEL.store(true, Ordering::SeqCst));
    let clock = clock::clock_info();
    let mut doc = Document {
        schema_version: bench::SCHEMA_VERSION,
        tool: bench::TOOL.to_string(),
        host: Host::for_functions(&functions),
        clock: clock.clone(),
        scenario: serde_json::json!({
            "alg": args.alg, "backend": args.backend, "accel": args.accel, "sizes": args.sizes,
            "sessions": sessions, "cores": engine::format_cpu_list(&cores),
            "pinning": if args.float { "float" } else { "round-robin" },
            "duration_s": duration.as_secs_f64(), "window_start_s": window_start.as_secs_f64(),
            "window_end_s": window_end.as_secs_f64(), "repeat": args.repeat, "data": args.data,
            "keys": args.keys, "verify": args.verify, "rekey_every": args.rekey, "auto": args.auto,
            "seed": args.seed, "tick_s": tick.as_secs_f64(),
            "target_ci_percent": args.target_ci, "max_repeat": args.max_repeat,
        }),
        harness: None,
        results: Vec::new(),
        partial: true,
    };
    let auto = AutoPolicy {
        enabled: args.auto,
        max_repeats: args.max_repeat,
        target_ci: (args.target_ci > 0.0).then_some(args.target_ci / 100.0),
        ..AutoPolicy::default()
    };

    let terminal = std::io::stderr().is_terminal();
    eprintln!(
        "macbench: {} scenario(s) × {} repeat(s), {sessions} session(s) on cores {}, f = {:.3} GHz ({}){}",
        scenarios.len(),
        args.repeat,
        engine::format_cpu_list(&cores),
        clock.reference_hz / 1e9,
        clock.reference_source,
        clock
            .core_to_reference_ratio
            .map(|r| format!("; core clock ≈ {r:.2} × f (estimated)"))
            .unwrap_or_default()
    );
    eprintln!(
        "macbench: hardware cycle counters {}",
        clock.hardware_cycles
    );

    if !args.no_harness {
        let null = mac::functions()
            .into_iter()
            .find(|f| f.algorithm.name == "null");
        if let Some(null) = null {
            let mut s = make(null, &SizeSource::Fixed { size: 64 });
            s.sessions = 1;
            s.cores = vec![cores[0]];
            s.duration = Duration::from_millis(100);
            s.window_start = Duration::from_millis(20);
            s.window_end = Duration::from_millis(90);
            s.verify = VerifyMode::None;
            s.rekey_every = None;
            let r = bench::run_scenario(s, 3, AutoPolicy::default(), &clock, &CANCEL)
                .map_err(|e| CliError::failure(e.to_string()))?;
            eprintln!(
                "macbench: harness overhead (null function, 64 B, 1 session): {} cycles/message",
                r.metrics
                    .absolute_cycles_per_message
                    .map_or("-".into(), |v| format!("{v:.1}"))
            );
            doc.harness = Some(Harness {
                size: 64,
                absolute_cycles_per_message: r.metrics.absolute_cycles_per_message,
                apparent_cycles_per_message: r.metrics.apparent_cycles_per_message,
            });
        }
    }

    let progress = if terminal {
        let pb = indicatif::ProgressBar::new(scenarios.len() as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:30} {pos}/{len} {elapsed_precise} eta {eta} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(pb)
    } else {
        None
    };
    let say = |line: String| match &progress {
        Some(pb) => pb.println(line),
        None => crate::outln!("{line}"),
    };
    if !args.quiet {
        say(table::HEADER.to_string());
    }
    for scenario in scenarios {
        if CANCEL.load(Ordering::SeqCst) {
            break;
        }
        if let Some(pb) = &progress {
            pb.set_message(format!(
                "{} @ {}",
                scenario.function.id(),
                scenario.size.label()
            ));
        }
        let result = bench::run_scenario(scenario, args.repeat, auto, &clock, &CANCEL)
            .map_err(|e| CliError::failure(e.to_string()))?;
        if result.raw.iter().any(|r| r.interrupted) {
            // Cut short by Ctrl-C: its window never closed, so it is not a result; keep only finished ones.
            break;
        }
        if !args.quiet {
            say(table::line(&result));
            for a in &result.adjustments {
                say(format!("    auto: {a}"));
            }
        }
        doc.results.push(result);
        write_outputs(&doc, args, false)?;
        if let Some(pb) = &progress {
            pb.inc(1);
        }
    }
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    let interrupted = CANCEL.load(Ordering::SeqCst);
    doc.partial = interrupted;
    write_outputs(&doc, args, true)?;

    crate::outln!();
    crate::outln!(
        "{}",
        table::matrix(
            &doc,
            "absolute cycles/byte (CPU time; median of repeats)",
            |r| r.metrics.absolute_cycles_per_byte
        )
    );
    crate::outln!(
        "{}",
        table::matrix(
            &doc,
            "apparent cycles/byte (wall clock, all sessions together)",
            |r| r.metrics.apparent_cycles_per_byte
        )
    );
    let warned: usize = doc
        .results
        .iter()
        .filter(|r| !r.warnings.is_empty())
        .count();
    if warned > 0 {
        crate::outln!("{warned} result(s) carry validity warnings (see flags above and `warnings` in the JSON); --auto adjusts and re-runs.");
    }
    for path in args.json.iter() {
        crate::outln!("results: {}", path.display());
    }
    if let Some(path) = &args.csv {
        crate::outln!(
            "results: {} and {}",
            path.display(),
            csv_export::threads_path(path).display()
        );
    }
    if interrupted {
        return Err(CliError {
            code: 130,
            message: format!(
                "interrupted: {} finished scenario(s) kept",
                doc.results.len()
            ),
        });
    }
    let failed = doc.results.iter().filter(|r| r.failed).count();
    if failed > 0 {
        return Err(CliError::failure(format!(
            "{failed} result(s) failed their validity checks"
        )));
    }
    Ok(())
}

/// Write the results files; `last` marks the final write (standard output takes only that one).
fn write_outputs(doc: &Document, args: &RunArgs, last: bool) -> Result<(), CliError> {
    use super::files::write_now;
    // Nothing finished (Ctrl-C during the first scenario): an existing file from an earlier run stays.
    if doc.results.is_empty() {
        return Ok(());
    }
    if let Some(path) = args.json.as_deref().filter(|p| write_now(p, last)) {
        report::export(&JsonExporter, doc, path).map_err(CliError::failure)?;
    }
    if let Some(path) = args.csv.as_deref().filter(|p| write_now(p, last)) {
        report::export(&csv_export::ScenarioCsv, doc, path).map_err(CliError::failure)?;
        if report::output::is_stdout(path) {
            return Ok(());
        }
        let threads = csv_export::ThreadsCsv
            .serialize(doc)
            .map_err(CliError::failure)?;
        report::write_atomic(&csv_export::threads_path(path), &threads)
            .map_err(CliError::failure)?;
    }
    Ok(())
}
