//! What every measuring command does around its measurements, below the CLI: the machine's state
//! before and after (read from `/proc`), the energy policy, the harness, the results document's
//! header, and the results files written while a sweep runs and at its end — `run`'s document, and
//! `net`'s, rewritten after each result the protocol test finishes.
//!
//! Why a module of its own: `run`, `reproduce` (through `run`), `compare` and `model --measure` each
//! did some of this in their CLI files, each a little differently. Kept here, a CLI file parses
//! arguments, calls these, and prints; the rules (when a file is rewritten, when an earlier file is
//! kept under a dated name, when a busy machine refuses a run) live in one place and are tested
//! without a terminal.

pub mod reproduction;

use crate::energy;
use crate::engine::clock::ClockInfo;
use crate::host::Host;
use crate::net::bench::NetPlan;
use crate::net::report::{NetDocument, NetResult};
use crate::net::NetError;
use crate::report::{self, csv_export, JsonExporter};
use crate::results::{self, Document, Harness, Header, Planned, SweepOptions};
use crate::sweep;
use crate::system::conditions::{Probe, Recorder, RunConditions, BEFORE_SAMPLE, BUSY_SHARE};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Why a session cannot go on: a request this machine or these files cannot serve (`usage`, exit 2),
/// or a failure while measuring or writing (exit 1).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionError {
    pub message: String,
    pub usage: bool,
}

impl SessionError {
    pub fn usage(message: impl Into<String>) -> SessionError {
        SessionError {
            message: message.into(),
            usage: true,
        }
    }

    pub fn failure(message: impl Into<String>) -> SessionError {
        SessionError {
            message: message.into(),
            usage: false,
        }
    }
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A new results document: this host (with `label`), the clock, and the header; no result yet.
pub fn new_document(
    header: Header,
    label: Option<&str>,
    functions: &[crate::mac::Function],
    clock: &ClockInfo,
) -> Document {
    Document {
        schema_version: results::SCHEMA_VERSION,
        tool: results::TOOL.to_string(),
        host: Host {
            label: label.unwrap_or_default().to_string(),
            ..crate::isolate::host_for_functions(functions)
        },
        clock: clock.clone(),
        scenario: header,
        harness: None,
        results: Vec::new(),
        partial: true,
        conditions: None,
        sweep: None,
        // Marked when the fake engine makes the counters; a bad value has been refused up front
        // (cli::main), so here it reads as unset.
        fake_engine: crate::engine::fake::chosen()
            .ok()
            .flatten()
            .map(|v| v.name().to_string()),
    }
}

/// The machine's state before a run that measures on `cores` (sampled while nothing of ours runs),
/// said in one line; with `quiet_check`, a busy machine — or one whose share cannot be read — refuses
/// the run (exit 1) before anything is measured.
pub fn machine_before(cores: &[usize], quiet_check: bool) -> Result<Recorder, SessionError> {
    let recorder = Recorder::before(Probe::system(), cores, BEFORE_SAMPLE);
    let before = &recorder.conditions.before;
    let cpus = &recorder.conditions.cpus;
    let load = before
        .load_average
        .map_or("unknown".into(), |l| format!("{:.2}", l[0]));
    let share = before.other_cpu_share;
    let share_text = share.map_or("unknown".into(), |s| format!("{:.0} %", s * 100.0));
    if quiet_check && !share.is_some_and(|s| s <= BUSY_SHARE) {
        return Err(SessionError::failure(format!(
            "--quiet-check: other processes used {share_text} of CPU(s) {cpus} over {:.2} s (load average {load}); the limit is {:.0} %: run when the machine is quiet, or without --quiet-check",
            BEFORE_SAMPLE.as_secs_f64(),
            BUSY_SHARE * 100.0
        )));
    }
    crate::errln!(
        "macbench: before the run: load average {load}, other processes {share_text} of CPU(s) {cpus}"
    );
    Ok(recorder)
}

/// The machine's state after the run, and the one warning line when it was busy.
pub fn machine_after(recorder: &mut Recorder) -> RunConditions {
    let conditions = recorder.after().clone();
    if let Some(warning) = conditions.busy_warning() {
        crate::errln!("macbench: {warning}");
    }
    conditions
}

/// The harness cost (the null function), said before the sweep.
pub fn measure_harness(
    core: usize,
    clock: &ClockInfo,
    cancel: &AtomicBool,
) -> Result<Harness, SessionError> {
    let harness = sweep::measure_harness(core, clock, cancel)
        .map_err(|e| SessionError::failure(e.to_string()))?;
    crate::errln!(
        "macbench: harness overhead (null function, 64 B, 1 session): {} cycles/message",
        harness
            .absolute_cycles_per_message
            .map_or("-".into(), |v| format!("{v:.1}"))
    );
    Ok(harness)
}

/// A window the clock cannot resolve measures nothing: refused, not timed and printed.
pub fn check_window(
    window_flag: &str,
    plan: &sweep::Plan,
    clock: &ClockInfo,
) -> Result<(), SessionError> {
    let window = plan.window_end.saturating_sub(plan.window_start);
    let shortest = Duration::from_nanos(1000 * clock.timer_resolution_ns.max(1));
    if window < shortest {
        return Err(SessionError::usage(format!(
            "--window {window_flag}: a {} ns window is under 1000 × the timer's resolution ({} ns); give at least {} µs",
            window.as_nanos(),
            clock.timer_resolution_ns,
            shortest.as_micros().max(1)
        )));
    }
    Ok(())
}

/// `--energy` refused: no meter is readable, each one tried said with its reason, on one line.
fn no_energy_meter(probe: &energy::Probe) -> SessionError {
    SessionError::usage(format!(
        "--energy: no energy meter is readable here: {}",
        probe.reasons_line()
    ))
}

/// `--energy`'s check before anything runs (`reproduce --energy`): a meter is readable, or why not.
pub fn check_energy_meter() -> Result<(), SessionError> {
    let mut probe = energy::probe(&energy::system_root());
    match probe.preferred() {
        Some(mut meter) => match energy::stands_still(meter.as_mut()) {
            Some(still) => Err(SessionError::usage(format!(
                "--energy: {}: {still}",
                meter.name()
            ))),
            None => Ok(()),
        },
        None => Err(no_energy_meter(&probe)),
    }
}

/// The energy phase with the preferred meter, said before the run; refused with every meter's reason
/// when none is readable (exit 2: the flag asks for what this machine cannot give).
pub fn energy_phase(
    repeat: usize,
    cancel: &AtomicBool,
) -> Result<sweep::EnergyPhase, SessionError> {
    let mut probe = energy::probe(&energy::system_root());
    let Some(chosen) = probe.preferred_with_parts() else {
        return Err(no_energy_meter(&probe));
    };
    // At least two rounds, so the figure comes with an interval.
    let mut phase = sweep::EnergyPhase::new(chosen.meter, chosen.parts, repeat.max(2));
    crate::errln!(
        "macbench: energy: {} ({} scope, unit {:.3e} J); after each scenario {} round(s) of idle, null-function and MAC windows of {:.0} s",
        phase.meter.name(),
        phase.meter.scope(),
        phase.meter.resolution_joules(),
        phase.rounds,
        phase.window.as_secs_f64()
    );
    for part in &phase.parts {
        crate::errln!(
            "macbench: energy: {} ({} scope) read at the same instants",
            part.name(),
            part.scope()
        );
    }
    // Before any file is locked: an interrupt here leaves nothing behind.
    let observed = phase
        .observe_meter(cancel)
        .map_err(|e| SessionError::failure(format!("--energy: {}: {e}", phase.meter.name())))?;
    let update = phase.meter.update_interval();
    if !cancel.load(Ordering::SeqCst)
        && energy::method::constant_while_observed(observed, phase.window, update)
    {
        // Listed and opened, yet still: it would give "0 nJ/byte" for every function.
        return Err(SessionError::usage(format!(
            "--energy: {} read the same over {:.0} s idle though it updates every {:.0} ms: it is listed but does not count here ({}){}",
            phase.meter.name(),
            phase.window.as_secs_f64(),
            update.as_secs_f64() * 1e3,
            energy::method::NOT_COUNTING_WHERE,
            match probe.reasons_line() {
                others if others.is_empty() => String::new(),
                others => format!("; the other meters: {others}"),
            }
        )));
    }
    crate::errln!(
        "macbench: energy: over {:.0} s idle the meter {}",
        phase.window.as_secs_f64(),
        match observed {
            Some(o) => format!(
                "moved in steps of {:.3e} J or more{}",
                o.step_j,
                o.update_s
                    .map(|s| format!(", every {:.1} ms", s * 1e3))
                    .unwrap_or_default()
            ),
            None => "never changed: its step is unknown and the unit is used".to_string(),
        }
    );
    Ok(phase)
}

/// The files are rewritten after a result once the time since the last rewrite is this many times
/// what that rewrite took: so rewrites cost at most ~5 % of a run. A small file is rewritten after
/// every result; the full matrix's (6,216 results, 23 MB, ~0.1 s a write) every ~2 s, where a rewrite
/// per result had made the writes grow with the square of the results. The final write is always made.
const REWRITE_SPACING: u32 = 20;

/// A sweep's results files (`--json`, `--csv` and its per-thread sibling), rewritten as results come
/// in, and bare `macbench`'s earlier results kept under a dated name before the first write.
pub struct ResultsFiles {
    json: Option<PathBuf>,
    csv: Option<PathBuf>,
    previous: Option<Previous>,
    /// When the files were last rewritten and how long that took.
    written: Option<(Instant, Duration)>,
}

/// An earlier results file at bare `macbench`'s default output: kept under a dated name just before
/// the first write would replace it, so yesterday's run stays beside today's for `diff`, and a run
/// that finishes nothing leaves it as it was.
struct Previous {
    path: PathBuf,
    kept: bool,
}

impl ResultsFiles {
    /// The files to write. With `keep_previous`, checked once the outputs are locked, before anything
    /// runs: nothing at the JSON path, earlier macbench results (kept at the first write), or a file
    /// that is not macbench results — refused, exit 2: the user never named it, so it is not ours to
    /// replace. An explicit `--json FILE` is the user's choice and is not checked.
    pub fn new(
        json: Option<&Path>,
        csv: Option<&Path>,
        keep_previous: bool,
    ) -> Result<ResultsFiles, SessionError> {
        let previous = match json.filter(|_| keep_previous) {
            Some(path) => previous_results(path)?,
            None => None,
        };
        Ok(ResultsFiles {
            json: json.map(Path::to_path_buf),
            csv: csv.map(Path::to_path_buf),
            previous,
            written: None,
        })
    }

    /// Keep the earlier results (once, before the first write); the line that says where they went.
    pub fn keep_previous(&mut self) -> Result<Option<String>, SessionError> {
        let Some(p) = self.previous.as_mut().filter(|p| !p.kept) else {
            return Ok(None);
        };
        let kept = report::output::keep_dated(&p.path).map_err(|e| {
            SessionError::failure(format!(
                "{}: cannot keep the earlier results before replacing them ({e}); nothing was replaced",
                p.path.display()
            ))
        })?;
        p.kept = true;
        Ok(Some(format!(
            "macbench: the earlier results in {} are kept as {}",
            p.path.display(),
            kept.display()
        )))
    }

    /// Rewrite the files with a sweep's results so far, when due ([`REWRITE_SPACING`]).
    pub fn update(&mut self, doc: &Document) -> Result<(), SessionError> {
        let due = self
            .written
            .is_none_or(|(at, took)| at.elapsed() >= took * REWRITE_SPACING);
        if due {
            let at = Instant::now();
            self.write(doc, false)?;
            self.written = Some((at, at.elapsed()));
        }
        Ok(())
    }

    /// Write the results files; `last` marks the final write (standard output takes only that one).
    pub fn write(&self, doc: &Document, last: bool) -> Result<(), SessionError> {
        // Nothing finished (Ctrl-C during the first scenario): an existing file from an earlier run
        // stays.
        if doc.results.is_empty() {
            return Ok(());
        }
        // A stream (standard output, a device, a FIFO) takes one document, at the end.
        let now = |p: &PathBuf| last || !report::output::is_stream(p);
        if let Some(path) = self.json.as_ref().filter(|p| now(p)) {
            report::export(&JsonExporter, doc, path).map_err(SessionError::failure)?;
        }
        if let Some(path) = self.csv.as_ref().filter(|p| now(p)) {
            report::export(&csv_export::ScenarioCsv, doc, path).map_err(SessionError::failure)?;
            // The per-thread CSV is a sibling file: none for a stream (`-`, /dev/null, a FIFO).
            if report::output::is_stream(path) {
                return Ok(());
            }
            report::export(
                &csv_export::ThreadsCsv,
                doc,
                &csv_export::threads_path(path),
            )
            .map_err(SessionError::failure)?;
        }
        Ok(())
    }
}

/// The earlier results at `path`, if any, or why they may not be replaced.
fn previous_results(path: &Path) -> Result<Option<Previous>, SessionError> {
    use crate::report::read::{self, ReadError};
    // Nothing there yet: a new file.
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    // A FIFO, a device or a directory the user did not name: bare `macbench` would run its whole
    // sweep and then wait on it or fail (a FIFO without a reader failed only at the end). Refused
    // before anything runs; `--json` names such a file on purpose.
    if !meta.is_file() {
        return Err(SessionError::usage(format!(
            "{}: {}, not a regular file; bare `macbench` writes its results to a regular file here: move it away, or give --json FILE",
            path.display(),
            read::file_kind(&meta)
        )));
    }
    match read::read(path) {
        Err(
            e @ (ReadError::Io { .. }
            | ReadError::TooLarge { .. }
            | ReadError::Empty { .. }
            | ReadError::NotJson { .. }
            | ReadError::NotOurs { .. }),
        ) => Err(SessionError::usage(format!(
            "{e}; bare `macbench` replaces only its own earlier results (keeping them under a dated name): move the file away, or give --json FILE"
        ))),
        // macbench's, even if damaged or from a newer version: kept, never lost.
        _ => Ok(Some(Previous {
            path: path.to_path_buf(),
            kept: false,
        })),
    }
}

/// `model --measure`: every function at the default sizes and at each model's drawn sizes, one
/// session pinned to `core`, 3 repeats of `duration`; `done` is called after each scenario. The same
/// document type a results file reads into, so it is fitted exactly as a file would be.
pub fn measure_cost_sweep(
    functions: &[crate::mac::Function],
    models: &[crate::traffic::SizeDistribution],
    core: usize,
    duration: Duration,
    mut done: impl FnMut(),
) -> Result<Document, SessionError> {
    use crate::engine::{DataMode, SizeSource};
    let clock = crate::engine::clock::clock_info();
    let mut sources: Vec<SizeSource> = crate::spec::DEFAULT_SIZES
        .iter()
        .map(|&size| SizeSource::Fixed { size })
        .collect();
    sources.extend(models.iter().map(|d| SizeSource::Model {
        name: d.name().to_string(),
        mean_bytes: d.mean(),
        sequence: std::sync::Arc::new(d.sample_sequence(1, 65_536)),
    }));
    let cancel = AtomicBool::new(false);
    let header = Header::Other(serde_json::json!({"command": "model --measure"}));
    let mut doc = new_document(header, None, functions, &clock);
    for f in functions {
        for size in &sources {
            let scenario = sweep::one_session(*f, size.clone(), core, duration, DataMode::Unique);
            let auto = crate::bench::AutoPolicy::default();
            let r = crate::bench::run_scenario(scenario, 3, auto, &clock, &cancel)
                .map_err(|e| SessionError::failure(e.to_string()))?;
            doc.results.push(r);
            done();
        }
    }
    doc.partial = false;
    Ok(doc)
}

/// A new `net` results document: this host, the run-wide facts of `plan` over `path`, no result yet,
/// and partial until the run ends uncancelled (as in `macbench run`: the file is rewritten after each
/// result, so a reader of a file from an unfinished run sees that it is unfinished).
pub fn net_document(plan: &NetPlan, path: &crate::net::bench::Path) -> NetDocument {
    NetDocument {
        schema: crate::net::report::SCHEMA,
        host: crate::isolate::host_for_functions(&plan.config.functions),
        config: plan.config_report(path),
        results: Vec::new(),
        partial: true,
    }
}

/// Where `net` writes its results: `--json` and `--csv`.
pub struct NetFiles<'a> {
    pub json: Option<&'a Path>,
    pub csv: Option<&'a Path>,
}

impl NetFiles<'_> {
    /// Rewrite the files with `doc`; a stream only once, `last`.
    fn write(&self, doc: &NetDocument, last: bool) -> Result<(), NetError> {
        use crate::report::output::write_now;
        if let Some(p) = self.json.filter(|p| write_now(p, last)) {
            report::export(&crate::net::report::NetJson, doc, p).map_err(NetError::Failure)?;
        }
        if let Some(p) = self.csv.filter(|p| write_now(p, last)) {
            report::export(&crate::net::report::NetCsv, doc, p).map_err(NetError::Failure)?;
        }
        Ok(())
    }
}

/// Run `plan` over `path` (released when the trials end), each finished result shown, added to
/// `doc` and the files rewritten; a result that ends after `cancel` was set was cut short and is
/// dropped, like `macbench run` keeps only what finished. At the end the files get their last
/// document (standard output its one), marked partial if cancelled; nothing finished leaves an
/// existing file as it was. Ok(true) when cancelled.
pub fn run_net(
    plan: &NetPlan,
    doc: &mut NetDocument,
    mut path: crate::net::bench::Path,
    files: &NetFiles<'_>,
    cancel: &AtomicBool,
    mut shown: impl FnMut(&NetResult),
) -> Result<bool, NetError> {
    let outcome = crate::net::bench::run(&plan.config, &mut path, |r: &NetResult| {
        if cancel.load(Ordering::SeqCst) {
            return Ok(());
        }
        shown(r);
        doc.results.push(r.clone());
        files.write(doc, false)
    });
    drop(path);
    let interrupted = cancel.load(Ordering::SeqCst);
    if !doc.results.is_empty() && (outcome.is_ok() || interrupted) {
        doc.partial = interrupted;
        files.write(doc, true)?;
    }
    if interrupted {
        return Ok(true);
    }
    outcome.map(|_| false)
}

/// The file names `run -o DIR` writes in DIR.
pub const RESULTS_JSON: &str = "results.json";
pub const RESULTS_CSV: &str = "results.csv";

/// The results files of `run -o DIR`, `DIR/results.json` and `DIR/results.csv`, DIR made; refused
/// (a usage error, one line naming the file) when DIR is a file, cannot be written, or already holds a file
/// this run would write or a reader of DIR would read beside it (any `*.json`): a host's results are
/// never mixed with another run's, nor a user's file replaced.
pub fn output_dir_files(dir: &Path) -> Result<(PathBuf, PathBuf), SessionError> {
    let json = dir.join(RESULTS_JSON);
    let csv = dir.join(RESULTS_CSV);
    let threads = csv_export::threads_path(&csv);
    if let Some(taken) = [&json, &csv, &threads]
        .into_iter()
        .find(|p| std::fs::symlink_metadata(p).is_ok())
    {
        return Err(SessionError::usage(format!(
            "-o {}: already holds {}, which this run would replace; give another directory or move it away",
            dir.display(),
            taken.display()
        )));
    }
    if let Some(other) = report::output::json_files_in(dir).into_iter().next() {
        return Err(SessionError::usage(format!(
            "-o {}: already holds {}, which `report`, `validate` and `diff` of the directory would read beside this run's results; give another directory or move it away",
            dir.display(),
            other.display()
        )));
    }
    report::output::output_dir("-o", dir, "this host's results").map_err(SessionError::usage)?;
    Ok((json, csv))
}

/// Set by Ctrl-C, SIGTERM (what `timeout`, systemd and containers send) and SIGHUP during a sweep:
/// the run ends as interrupted, keeping what finished. One flag for the process, so `reproduce` stops
/// at the step it was in.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether a sweep in this process was interrupted.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The flag itself, for what runs before the sweep and must stop with it (the energy phase).
pub fn interrupt_flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// A sweep as its options describe it, checked and planned: what [`run_sweep`] runs.
pub struct SweepRequest<'a> {
    /// The sweep, with the run's options it was built from (`spec.options`): recorded as the
    /// results header, and where the results go.
    pub spec: &'a sweep::SweepSpec,
    pub plan: sweep::Plan,
    /// The energy phase ([`energy_phase`]), when energy is measured.
    pub energy: Option<sweep::EnergyPhase>,
    /// `--baseline ROW`, checked against the plan: each result gets its ratio to that row of its
    /// group once the sweep ends.
    pub baseline: Option<crate::results::baseline::BaselineRow>,
    /// When the command began (before its plan and pre-flight checks): the budget counts from it.
    pub started: Instant,
}

impl SweepRequest<'_> {
    /// The results header: the options as they are, with what the plan made of them.
    fn header(&self) -> Header {
        let (options, plan) = (&self.spec.options, &self.plan);
        Header::Sweep(Box::new(SweepOptions {
            options: options.clone(),
            planned: Planned {
                duration_s: plan.duration.as_secs_f64(),
                window_start_s: plan.window_start.as_secs_f64(),
                window_end_s: plan.window_end.as_secs_f64(),
                repeat: plan.repeats,
                tick_s: plan.tick.as_secs_f64(),
                target_ci_percent: options.target_ci_percent(),
                max_repeat: options.max_repeats(),
                budget_s: plan.budget.as_secs_f64(),
                order: options.order(plan.repeats),
                interleave_span_s: sweep::INTERLEAVE_SPAN.as_secs_f64(),
                slowest_cycles_per_byte: options.timing.slowest,
            },
        }))
    }

    /// `--auto` and `--target-ci`'s bounds.
    fn auto(&self) -> crate::bench::AutoPolicy {
        let options = &self.spec.options;
        let target = options.target_ci_percent();
        crate::bench::AutoPolicy {
            enabled: options.auto,
            max_repeats: options.max_repeats(),
            target_ci: (target > 0.0).then_some(target / 100.0),
            fit_window: options.timing.duration.is_none() && options.timing.window == sweep::AUTO,
            ..crate::bench::AutoPolicy::default()
        }
    }

    /// How the planned repeats run.
    fn repetition(&self) -> sweep::Repetition {
        sweep::Repetition {
            repeats: self.plan.repeats,
            order: self.spec.options.order(self.plan.repeats),
            span: sweep::INTERLEAVE_SPAN,
            budget: Some(self.plan.budget),
            started: self.started,
            paired: self.baseline.is_some(),
        }
    }
}

/// What shows a sweep to its user (the terminal's table and progress bar): each scenario as
/// [`sweep::Observer`] sees it, and the session's notes. Writing the files is the session's.
pub trait SweepDisplay: sweep::Observer {
    /// The sweep is about to start (after the plan, the machine check and the harness).
    fn begin(&mut self) {}
    /// A note for the user, not a row of the table (an earlier file kept under a new name).
    fn note(&mut self, line: &str);
    /// The sweep is over (finished or interrupted), before the final write.
    fn end(&mut self) {}
}

/// The display, with the results files rewritten after each scenario it is shown.
struct Recording<'a> {
    display: &'a mut dyn SweepDisplay,
    files: ResultsFiles,
}

impl sweep::Observer for Recording<'_> {
    fn starting(&mut self, scenario: &crate::engine::Scenario) {
        self.display.starting(scenario);
    }

    fn finished(&mut self, doc: &Document) -> Result<(), String> {
        self.display.finished(doc)?;
        if !doc.results.is_empty() {
            if let Some(line) = self.files.keep_previous().map_err(|e| e.message)? {
                self.display.note(&line);
            }
        }
        self.files.update(doc).map_err(|e| e.message)
    }

    fn energy_not_measured(&mut self, scenario: &crate::engine::Scenario, reason: &str) {
        self.display.energy_not_measured(scenario, reason);
    }

    /// Twice the latest write: the closing one writes the largest document, and may be a full one
    /// after writes that were skipped as not yet due ([`REWRITE_SPACING`]).
    fn closing_cost(&self) -> std::time::Duration {
        self.files
            .written
            .map_or(std::time::Duration::ZERO, |(_, took)| took * 2)
    }
}

/// Run a sweep with everything around it: the outputs locked, the window checked against the clock,
/// the machine's state before and after, the plan said, the harness measured, the files rewritten as
/// results come in and written at the end. Returns the document and whether it was interrupted.
pub fn run_sweep(
    mut request: SweepRequest<'_>,
    display: &mut dyn SweepDisplay,
) -> Result<(Document, bool), SessionError> {
    let cancel = &INTERRUPTED;
    let output = &request.spec.options.output;
    let (json, csv) = (output.json.as_deref(), output.csv.as_deref());
    let outputs = report::output::run_outputs(json, csv, true);
    // Set before the outputs are locked, so no signal finds a lock without its cleanup.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    // `run … | head -1`: a closed standard output stops the sweep as Ctrl-C does, so what finished
    // is kept in the named files and the locks are removed.
    crate::stdio::interrupt_on_closed_stdout(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let borrowed: Vec<(&str, &Path)> = outputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    let _locked =
        report::output::prepare(&borrowed, &[]).map_err(|e| SessionError::usage(e.to_string()))?;
    let files = ResultsFiles::new(json, csv, output.keep_previous)?;
    let clock = crate::engine::clock::clock_info();
    let (spec, plan) = (request.spec, &request.plan);
    check_window(&request.spec.options.timing.window, plan, &clock)?;
    let mut conditions = machine_before(&spec.scenario.cores, output.quiet_check)?;
    for note in &plan.notes {
        crate::errln!("macbench: {note}");
    }
    let (auto, repetition) = (request.auto(), request.repetition());
    let label = output.label.as_deref();
    let mut doc = new_document(request.header(), label, &spec.functions, &clock);
    doc.conditions = Some(conditions.conditions.clone());
    announce(spec, plan, &repetition, &clock, &auto);
    if output.harness {
        doc.harness = Some(measure_harness(spec.scenario.cores[0], &clock, cancel)?);
    }
    display.begin();
    let mut recording = Recording { display, files };
    let policy = sweep::SweepPolicy {
        repetition,
        auto,
        clock: &clock,
        cancel,
    };
    let outcome = sweep::run(
        request.plan.scenarios,
        policy,
        &mut doc,
        &mut recording,
        request.energy.as_mut(),
    );
    recording.display.end();
    let interrupted = outcome.map_err(|e| SessionError::failure(e.to_string()))?;
    doc.partial = interrupted;
    doc.conditions = Some(machine_after(&mut conditions));
    if let Some(row) = &request.baseline {
        crate::results::baseline::attach(&mut doc, row);
    }
    if !doc.results.is_empty() {
        if let Some(line) = recording.files.keep_previous()? {
            crate::errln!("{line}");
        }
    }
    recording.files.write(&doc, true)?;
    Ok((doc, interrupted))
}

/// What the sweep will run and cost, said before it starts: runs × duration, plus what --target-ci
/// may add; the order, sessions, cores and clocks.
fn announce(
    spec: &sweep::SweepSpec,
    plan: &sweep::Plan,
    repetition: &sweep::Repetition,
    clock: &ClockInfo,
    auto: &crate::bench::AutoPolicy,
) {
    let repeats = repetition.repeats;
    // Each scenario's own run (`--slowest` lengthens those of larger messages).
    let durations = plan.scenarios.iter().map(|s| s.spec.duration.as_secs_f64());
    let (shortest, longest) = durations
        .clone()
        .fold((f64::INFINITY, 0.0f64), |(a, b), d| (a.min(d), b.max(d)));
    let runs_s: f64 = durations.sum::<f64>() * repeats as f64;
    let each = if longest > shortest * 1.0001 {
        format!("{shortest:.3}–{longest:.3} s")
    } else {
        format!("{:.3} s", plan.duration.as_secs_f64())
    };
    let extra = match auto.target_ci {
        Some(target) if auto.max_repeats > repeats => format!(
            "; budget {}: what they leave goes to extra repeats (up to {} a scenario) where the 95 % interval is widest against ±{}",
            human_seconds(plan.budget.as_secs_f64()),
            auto.max_repeats,
            percent(target * 100.0)
        ),
        Some(_) => format!(
            "; no extra repeats (the planned repeats reach --max-repeat {})",
            auto.max_repeats
        ),
        None => "; no extra repeats (--repeat given without --target-ci, or --target-ci 0)"
            .to_string(),
    };
    crate::errln!(
        "macbench: plan: {} scenario(s) × {} repeat(s) × {each} ≈ {} of runs{extra}",
        plan.scenarios.len(),
        repeats,
        human_seconds(runs_s)
    );
    crate::errln!(
        "macbench: {} scenario(s) × {} repeat(s) ({}), {} session(s) on cores {}, f = {:.3} GHz ({}){}",
        plan.scenarios.len(),
        repeats,
        repetition.order.name(),
        spec.scenario.sessions,
        crate::engine::format_cpu_list(&spec.scenario.cores),
        clock.reference_hz / 1e9,
        clock.reference_source,
        clock
            .core_to_reference_ratio
            .map(|r| format!("; core clock ≈ {r:.2} × f (estimated)"))
            .unwrap_or_default()
    );
    crate::errln!(
        "macbench: hardware cycle counters {}",
        clock.hardware_cycles
    );
}

/// `45 s`, `3.2 min`, `1.5 h`: an estimate's size at a glance.
fn human_seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// `5 %`, `2.5 %`.
fn percent(p: f64) -> String {
    format!("{} %", (p * 1000.0).round() / 1000.0)
}

/// `model --json` (pretty, one trailing newline) and `--csv`, by the output rules.
pub fn write_model_report(
    model: &crate::traffic::fit::ModelReport,
    json: Option<&Path>,
    csv: Option<&Path>,
) -> Result<(), SessionError> {
    if let Some(path) = json {
        let bytes = crate::stdio::pretty_json(model).map_err(SessionError::failure)?;
        report::write_atomic(path, &bytes).map_err(SessionError::failure)?;
    }
    if let Some(path) = csv {
        let bytes = model.csv().map_err(SessionError::failure)?;
        report::write_atomic(path, &bytes).map_err(SessionError::failure)?;
    }
    Ok(())
}
