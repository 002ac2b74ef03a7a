//! One scenario from its runs to its result ([`Pending`]): each run's counters turned into metrics, the
//! repeats reduced to medians and 95 % intervals (with the sweep's pooled host spread as a floor),
//! checked and — with `--auto` — adjusted and re-run (Rashwan et al.'s Fig. 3 workflow). The sweep
//! (`sweep`) decides which scenario runs next, interleaved or one after another, and gathers the
//! [`ResultEntry`]s into the results document; the entry's shape is `results`'.

use crate::engine::{self, clock::ClockInfo, RawRun, Scenario};
use crate::isolate;
use crate::metrics::{
    self, Context, Metrics, RunUncertainty, Warning, WarningCode, MIN_WINDOW_MESSAGES,
};
use crate::results::{Ci95Set, ResultEntry, SizeLabel, SpreadSet};
use crate::stats::HostSpread;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Bounds for `--auto` and for the confidence-interval target.
#[derive(Debug, Clone, Copy)]
pub struct AutoPolicy {
    pub enabled: bool,
    pub max_duration: Duration,
    /// Repeats allowed in all, including those added to reach `target_ci`.
    pub max_repeats: usize,
    pub max_rounds: usize,
    /// `--target-ci`: the widest relative half-width of the 95 % interval accepted (0.05 = ±5 %).
    /// Repeats are added up to `max_repeats` until it is met; otherwise the result is flagged `noisy`.
    pub target_ci: Option<f64>,
    /// The planner chose the run's length (no `--duration`, `--window auto`): a scenario whose first
    /// run gave a session fewer than [`MIN_WINDOW_MESSAGES`] messages in its window gets a window long
    /// enough for them, and that first run is its calibration, not a repeat ([`Pending::step`]).
    pub fit_window: bool,
}

/// The longest window the first-run fit chooses: three of the planner's shortest. 1,000 messages
/// of 64 KiB at 15 cycles/byte (software Serpent) would need 430 ms at 2.3 GHz; the main job's
/// 144 scenarios then need 83 s for 12 rounds, against 50 s with 60 ms (19 results keep their
/// `window-too-short`, each with ≥ 180 messages a session).
pub const MAX_FITTED_WINDOW: Duration = Duration::from_millis(60);

impl Default for AutoPolicy {
    fn default() -> Self {
        AutoPolicy {
            enabled: false,
            max_duration: Duration::from_secs(10),
            max_repeats: 9,
            max_rounds: 4,
            target_ci: None,
            fit_window: false,
        }
    }
}

/// Shortest scheduling slice assumed when sizing runs for many sessions (CFS min granularity and the
/// EEVDF base slice are 0.75–3 ms).
pub const MIN_SCHEDULING_SLICE: Duration = Duration::from_millis(3);

/// The slice a runnable session gets before the next: at least [`MIN_SCHEDULING_SLICE`], and at least
/// the kernel's tick (1/HZ), since without high-resolution preemption the scheduler switches only on a
/// tick. The tick is the resolution of `CLOCK_MONOTONIC_COARSE`. Measured here (HZ = 250): 1000
/// sessions on 2 cores each ran ~3.7 ms at a time, and a round of 500 per core took 2 s.
pub fn scheduling_slice() -> Duration {
    let tick = crate::system::kernel::clock_resolution(libc::CLOCK_MONOTONIC_COARSE)
        .filter(|t| *t < Duration::from_secs(1))
        .unwrap_or(Duration::ZERO);
    MIN_SCHEDULING_SLICE.max(tick.min(Duration::from_millis(10)))
}
/// Scheduling rounds every session should get inside the window when nothing constrains the run.
pub const ROUNDS_PER_WINDOW: u32 = 10;
/// Scheduling rounds every session must get inside the window: no budget plans a window shorter.
/// Measured on the 2-core KVM guest (kernel 6.18, EEVDF, HZ = 250, 3 ms mean slice; docs/methodology.md
/// §2 "Run length"): below ~3 rounds some of 10–100 sessions on one core ran nothing in the window;
/// at ~5 every session ran at least 3–4 slices and Jain's fairness was 0.98–0.99.
pub const MIN_ROUNDS_PER_WINDOW: u32 = 5;
/// Messages every session must process in the window (below this `metrics` flags
/// `window-too-short`).
pub const MIN_MESSAGES_PER_SESSION: u32 = MIN_WINDOW_MESSAGES as u32;
/// Longest duration the load-fitted default chooses (an explicit `--duration` is obeyed), unless the
/// load's [`minimum_window`] needs more.
pub const MAX_FITTED_DURATION: Duration = Duration::from_secs(30);

/// Runnable sessions per core: `ceil(sessions / cores)`, at least 1.
fn per_core(sessions: usize, cores: usize) -> u32 {
    u32::try_from(sessions.div_ceil(cores.max(1)).max(1)).unwrap_or(u32::MAX)
}

/// The shortest window in which each of `sessions` on `cores` is scheduled several times:
/// [`MIN_ROUNDS_PER_WINDOW`] rounds of `ceil(sessions / cores)` slices of `slice`. Zero when every
/// session has a core of its own.
pub fn minimum_window(sessions: usize, cores: usize, slice: Duration) -> Duration {
    match per_core(sessions, cores) {
        1 => Duration::ZERO,
        q => slice
            .saturating_mul(q)
            .saturating_mul(MIN_ROUNDS_PER_WINDOW),
    }
}

/// The shortest window in which each of `sessions` on `cores` processes
/// [`MIN_MESSAGES_PER_SESSION`] messages of `seconds_per_message` (its largest): a session has
/// `1 / ceil(sessions / cores)` of its core.
pub fn window_for_messages(sessions: usize, cores: usize, seconds_per_message: f64) -> Duration {
    let need = f64::from(MIN_MESSAGES_PER_SESSION)
        * f64::from(per_core(sessions, cores))
        * seconds_per_message.max(0.0);
    Duration::try_from_secs_f64(need).unwrap_or(Duration::MAX)
}

/// `window` over the share `window_fraction` of the run it sits in: the run that holds it.
pub fn run_holding(window: Duration, window_fraction: f64) -> Duration {
    window.div_f64(window_fraction.clamp(0.05, 1.0))
}

/// Default run duration for `sessions` on `cores` with a window covering `window_fraction` of the run:
/// `base` when every session has a core; else long enough that each session gets
/// [`ROUNDS_PER_WINDOW`] scheduling slices of `slice` inside the window (with `q` runnable sessions per
/// core, a round takes ~`q` slices), capped at [`MAX_FITTED_DURATION`] but never below the run that
/// holds the [`minimum_window`]. Returns the duration and, when it grew, why.
pub fn fitted_duration(
    base: Duration,
    sessions: usize,
    cores: usize,
    window_fraction: f64,
    slice: Duration,
) -> (Duration, Option<String>) {
    let per_core = per_core(sessions, cores);
    if per_core <= 1 {
        return (base, None);
    }
    let window = slice * per_core * ROUNDS_PER_WINDOW;
    let needed = run_holding(window, window_fraction);
    if needed <= base {
        return (base, None);
    }
    let floor = run_holding(minimum_window(sessions, cores, slice), window_fraction);
    let chosen = needed.min(MAX_FITTED_DURATION).max(floor);
    let why = format!(
        "{sessions} sessions on {cores} core(s) ({per_core} runnable per core): duration {:.2} s so that each session gets ~{} scheduling slices of ~{} ms inside the window{} (give --duration to override)",
        chosen.as_secs_f64(),
        if needed > chosen { MIN_ROUNDS_PER_WINDOW } else { ROUNDS_PER_WINDOW },
        slice.as_millis(),
        if needed > chosen {
            format!(
                ", the fewest every session needs (capped at {} s for {})",
                MAX_FITTED_DURATION.as_secs(),
                ROUNDS_PER_WINDOW
            )
        } else {
            String::new()
        }
    );
    (chosen, Some(why))
}

/// Scheduling rounds a session can expect inside a window of `window` with `sessions` on `cores`
/// (a round: every runnable session of a core runs one slice). Below [`MIN_ROUNDS_PER_WINDOW`] some
/// session may get no slice, or too few, in the window, since the kernel does not keep one order
/// from round to round.
pub fn rounds_in_window(window: Duration, sessions: usize, cores: usize, slice: Duration) -> f64 {
    window.as_secs_f64() / (f64::from(per_core(sessions, cores)) * slice.as_secs_f64())
}

/// The runs of one scenario: raw counters, their metrics and within-run uncertainty, in order.
struct Repeats {
    raws: Vec<RawRun>,
    computed: Vec<metrics::RunMetrics>,
    within: Vec<RunUncertainty>,
    interrupted: bool,
}

impl Repeats {
    fn empty() -> Repeats {
        Repeats {
            raws: Vec::new(),
            computed: Vec::new(),
            within: Vec::new(),
            interrupted: false,
        }
    }

    /// Keep one run: its counters, their metrics and within-run uncertainty at `ctx`.
    fn keep(&mut self, raw: RawRun, ctx: Context) {
        self.computed.push(metrics::compute(&raw, ctx));
        self.within.push(metrics::uncertainty(&raw, ctx.f));
        self.interrupted |= raw.interrupted;
        self.raws.push(raw);
    }

    fn metrics(&self) -> Vec<Metrics> {
        self.computed.iter().map(|c| c.metrics.clone()).collect()
    }

    /// The repeat whose apparent cycles/byte is nearest the median: it supplies the per-thread view.
    fn median_index(&self, all: &[Metrics], median: &Metrics) -> usize {
        let d = |i: usize| {
            (all[i].apparent_cycles_per_byte.unwrap_or(f64::MAX)
                - median.apparent_cycles_per_byte.unwrap_or(0.0))
            .abs()
        };
        (0..all.len())
            .min_by(|&a, &b| d(a).total_cmp(&d(b)))
            .unwrap_or(0)
    }
}

/// The `noisy` warning when the interval stays wider than the target after the allowed repeats.
fn noisy_warning(ci95: &Ci95Set, median: &Metrics, target: f64, repeats: usize) -> Option<Warning> {
    match ci95.precision(median) {
        Some(p) if p <= target => None,
        Some(p) => Some(Warning::new(
            WarningCode::Noisy,
            format!(
                "the 95 % interval is ±{:.1} % after {repeats} repeat(s), wider than the target ±{:.1} % (--target-ci): more --repeat, a longer --duration, or a quieter machine",
                p * 100.0,
                target * 100.0
            ),
        )),
        None => Some(Warning::new(
            WarningCode::Noisy,
            "no confidence interval: the window holds too few ticks for batch means and there is one repeat (lengthen --duration or --repeat ≥ 2)".to_string(),
        )),
    }
}

/// `--auto`: lengthen the run (and start the window later when not steady) for the warnings a longer
/// run can fix. Returns what changed, or `None` when nothing can be fixed; `Err` names what is still
/// flagged when the duration bound is reached.
fn auto_adjust(
    scenario: &mut Scenario,
    warnings: &[Warning],
    auto: &AutoPolicy,
) -> Option<Result<String, String>> {
    let mut fixable: Vec<WarningCode> = warnings
        .iter()
        .filter(|w| !w.fatal)
        .map(|w| w.code)
        .filter(|c| {
            matches!(
                c,
                WarningCode::WindowTooShort | WarningCode::Starvation | WarningCode::NotSteady
            )
        })
        .collect();
    fixable.dedup();
    if fixable.is_empty() {
        return None;
    }
    let names = fixable
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if scenario.duration * 2 > auto.max_duration {
        return Some(Err(names));
    }
    scenario.duration *= 2;
    scenario.window_end *= 2;
    scenario.window_start *= 2;
    if fixable.contains(&WarningCode::NotSteady) {
        // A later start, keeping the window inside the run.
        let quarter = (scenario.window_end - scenario.window_start) / 4;
        scenario.window_start += quarter;
    }
    Some(Ok(format!(
        "duration → {:.3} s, window {:.3}..{:.3} s because of {names}",
        scenario.duration.as_secs_f64(),
        scenario.window_start.as_secs_f64(),
        scenario.window_end.as_secs_f64(),
    )))
}

/// The window in which the slowest session, which processed `fewest` messages in `window`, would
/// process [`MIN_WINDOW_MESSAGES`] with a quarter to spare, at most [`MAX_FITTED_WINDOW`]; `None`
/// when `window` holds enough already, or when the cap is no longer. Nothing processed is one of
/// two things: a session that `ran_through` the window on its CPU was in the middle of a message
/// longer than the window (RustCrypto's CMAC-Twofish takes ~24 ms for 64 KiB here), so the cap;
/// one that did not was starved, which a longer window of the same load may not cure: `None`,
/// left to the checks.
pub fn fitted_window(window: Duration, fewest: u64, ran_through: bool) -> Option<Duration> {
    if fewest == 0 && ran_through {
        return (MAX_FITTED_WINDOW > window).then_some(MAX_FITTED_WINDOW);
    }
    if fewest == 0 || fewest >= MIN_WINDOW_MESSAGES {
        return None;
    }
    let wanted = window
        .mul_f64(MIN_WINDOW_MESSAGES as f64 / fewest as f64 * 1.25)
        .min(MAX_FITTED_WINDOW);
    (wanted > window).then_some(wanted)
}

/// One scenario on its way to a result: its runs so far, what `--auto` changed, and — once no more
/// runs are wanted — its result. A sweep steps several of these in turn (`--order interleaved`) or one
/// after another; either way each scenario's repeats, intervals and adjustments follow the same rules.
pub struct Pending {
    scenario: Scenario,
    runner: &'static dyn isolate::Runner,
    ctx: Context,
    repeats: usize,
    /// The repeats planned at the start, before any budget cap: what its `budget:` line names.
    planned: usize,
    auto: AutoPolicy,
    runs: Repeats,
    adjustments: Vec<String>,
    round: usize,
    result: Option<ResultEntry>,
    /// The sweep's pooled repeat-to-repeat spread, a floor under this scenario's intervals.
    host: HostSpread,
}

impl Pending {
    pub fn new(scenario: Scenario, repeats: usize, auto: AutoPolicy, clock: &ClockInfo) -> Pending {
        let ctx = Context {
            f: clock.reference_hz,
            cores: scenario.cores.len(),
            core_ratio: clock.core_to_reference_ratio,
            timer_resolution_ns: clock.timer_resolution_ns,
        };
        Pending {
            // Switched functions (`sw`, a masked ISA level) run in their acceleration's child, the
            // same engine there; chosen here, once for every repeat and adjustment of this scenario
            // (the sweep's energy windows choose theirs by the same `runner_for`).
            runner: isolate::runner_for(&scenario),
            scenario,
            ctx,
            repeats: repeats.max(1),
            planned: repeats.max(1),
            auto,
            runs: Repeats::empty(),
            adjustments: Vec::new(),
            round: 0,
            result: None,
            host: HostSpread::default(),
        }
    }

    /// The scenario as it now stands (`--auto` may have lengthened it).
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Whether the result is ready ([`Pending::take`]).
    pub fn is_done(&self) -> bool {
        self.result.is_some()
    }

    /// The result, once done.
    pub fn take(&mut self) -> Option<ResultEntry> {
        self.result.take()
    }

    /// Runs so far (since the last `--auto` adjustment).
    pub fn runs(&self) -> usize {
        self.runs.raws.len()
    }

    /// The repeats planned before any extra ones.
    pub fn planned_repeats(&self) -> usize {
        self.repeats
    }

    /// The budget cannot hold the rest of its planned repeats: the runs it has are all it gets
    /// (at least one), and its result says so (`adjustments`: "budget: 1 of 3 planned repeats").
    pub fn cap_planned_repeats(&mut self) {
        self.cap_planned_repeats_at(self.runs.raws.len());
    }

    /// The budget holds `most` of its planned repeats (never fewer than it has, nor than one): its
    /// result says how many of how many it got (one `adjustments` line, the last cap's).
    pub fn cap_planned_repeats_at(&mut self, most: usize) {
        let most = most.max(self.runs.raws.len()).max(1);
        if most < self.repeats && !self.is_done() {
            self.adjustments.retain(|a| !a.starts_with("budget:"));
            self.adjustments.push(format!(
                "budget: {most} of {} planned repeats",
                self.planned
            ));
            self.repeats = most;
        }
    }

    /// Its planned repeats are not all run yet (and nothing ended it early).
    pub fn needs_base(&self) -> bool {
        !self.is_done() && !self.runs.interrupted && self.runs.raws.len() < self.repeats
    }

    /// How far its 95 % interval is from `target` (the relative half-width over the target: above 1
    /// is wider), for a sweep deciding where extra repeats go. Infinite when no interval can be
    /// formed yet; `None` when none ever can (a fatal warning) or it is done or cut short.
    pub fn gap(&self, target: f64) -> Option<f64> {
        let r = &self.runs;
        if self.is_done() || r.interrupted || r.raws.is_empty() {
            return None;
        }
        if r.computed
            .iter()
            .any(|c| c.warnings.iter().any(|w| w.fatal))
        {
            return None;
        }
        let all = r.metrics();
        match self.intervals(&all).precision(&Metrics::median(&all)) {
            Some(p) => Some(p / target.max(f64::MIN_POSITIVE)),
            None => Some(f64::INFINITY),
        }
    }

    /// The 95 % intervals of `all` (this scenario's runs' metrics), with the host's floor.
    fn intervals(&self, all: &[Metrics]) -> Ci95Set {
        let median = Metrics::median(all);
        Ci95Set::from_runs(all, &self.runs.within).with_host_floor(&median, &self.host, all.len())
    }

    /// This scenario's absolute cycles/byte in each run so far: what it adds to a sweep's
    /// [`HostSpread`].
    pub fn absolute_values(&self) -> Vec<f64> {
        self.runs
            .computed
            .iter()
            .filter_map(|c| c.metrics.absolute_cycles_per_byte)
            .collect()
    }

    /// The sweep's pooled spread, as a floor under this scenario's intervals from now on.
    pub fn set_host_spread(&mut self, host: HostSpread) {
        self.host = host;
    }

    /// Whether one more repeat is allowed: base repeats done, fewer than `--max-repeat`.
    pub fn can_extend(&self) -> bool {
        !self.needs_base()
            && !self.is_done()
            && !self.runs.interrupted
            && self.runs.raws.len() < self.auto.max_repeats.max(self.repeats)
    }

    /// Run once more. A job the library refused, or a wrong tag in the pre-flight, makes the
    /// scenario's result a failed one with the reason (nothing of it timed). The runs are reduced
    /// only by [`Pending::settle`] (or [`run_scenario`]), so a sweep can add repeats first.
    pub fn step(&mut self, cancel: &AtomicBool) -> Result<(), engine::EngineError> {
        if self.is_done() {
            return Ok(());
        }
        let raw = match self.runner.run(&self.scenario, cancel) {
            Ok(raw) => raw,
            Err(engine::EngineError::Refused { function, reason }) => {
                let why = format!("{function}: {reason}");
                self.result = Some(untimed_entry(&self.scenario, WarningCode::Refused, why));
                return Ok(());
            }
            Err(engine::EngineError::WrongTag { function, reason }) => {
                let why = format!("{function}: {reason}");
                self.result = Some(untimed_entry(&self.scenario, WarningCode::WrongTag, why));
                return Ok(());
            }
            Err(other) => return Err(other),
        };
        if self.fit_window(&raw) {
            return Ok(());
        }
        self.runs.keep(raw, self.ctx);
        Ok(())
    }

    /// With [`AutoPolicy::fit_window`], a scenario's first run whose slowest session had fewer
    /// than [`MIN_WINDOW_MESSAGES`] in the window (the planner's 20 ms windows hold ~140 messages of
    /// 64 KiB at 5 cycles/byte and 2.3 GHz) lengthens its window for every later run, by what that session's
    /// rate says it needs and a quarter more; the run itself is not kept (its window is known to be
    /// too short) and the change is said in `adjustments`. Returns whether the run was used so.
    fn fit_window(&mut self, raw: &RawRun) -> bool {
        if !self.auto.fit_window || !self.runs.raws.is_empty() || raw.interrupted || self.round > 0
        {
            return false;
        }
        let fewest = raw
            .threads
            .iter()
            .map(|t| {
                t.window_end
                    .messages
                    .saturating_sub(t.window_start.messages)
            })
            .min()
            .unwrap_or(0);
        // On its CPU for at least half the window, every session: busy, not starved.
        let ran_through = raw.threads.iter().all(|t| {
            t.window_end.cpu_ns.saturating_sub(t.window_start.cpu_ns) * 2 >= raw.window_wall_ns
        });
        let s = &mut self.scenario.spec;
        let window = s.window_end.saturating_sub(s.window_start);
        let Some(wanted) = fitted_window(window, fewest, ran_through) else {
            return false;
        };
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        self.adjustments.push(format!(
            "window {:.1} → {:.1} ms after a first run in which a session processed {fewest} messages ({MIN_WINDOW_MESSAGES} wanted); that run is not a repeat",
            ms(window),
            ms(wanted)
        ));
        let tail = s.duration.saturating_sub(s.window_end);
        s.window_end = s.window_start + wanted;
        s.duration = s.window_end + tail;
        true
    }

    /// No more runs: reduce to the result, or with `--auto` adjust the scenario and start its
    /// repeats over (then it is not done, and [`Pending::needs_base`] says so).
    pub fn settle(&mut self) {
        // A scenario whose planned repeats did not all run (cancelled between runs) is no result.
        if !self.is_done() && !self.runs.raws.is_empty() && !self.needs_base() {
            self.reduce();
        }
    }

    /// More runs are wanted: fewer than `repeats`, or the 95 % interval still wider than
    /// `auto.target_ci` with repeats left (up to `auto.max_repeats`); none once cut short.
    fn wants_more(&self) -> bool {
        let r = &self.runs;
        if r.interrupted {
            return false;
        }
        if r.raws.len() < self.repeats {
            return true;
        }
        let Some(target) = self.auto.target_ci else {
            return false;
        };
        self.can_extend() && self.gap(target).is_some_and(|g| g > 1.0)
    }

    /// The runs reduced to medians, intervals and warnings; with `--auto`, a fixable warning adjusts
    /// the scenario and starts its repeats over instead (bounded by `auto.max_rounds`).
    fn reduce(&mut self) {
        let all = self.runs.metrics();
        let ci95 = self.intervals(&all);
        let runs = std::mem::replace(&mut self.runs, Repeats::empty());
        let median = Metrics::median(&all);
        let median_index = runs.median_index(&all, &median);
        let mut warnings = runs.computed[median_index].warnings.clone();
        // Fatal warnings of any repeat fail the result.
        for (i, c) in runs.computed.iter().enumerate() {
            if i != median_index {
                warnings.extend(c.warnings.iter().filter(|w| w.fatal).cloned());
            }
        }
        if let Some(target) = self.auto.target_ci {
            // Flagged only where the cell is noisier than the host: a cell whose interval misses the
            // target because the host's own spread allows no better is the host's story, said once
            // in the run's summary (docs/methodology.md, "The host's floor").
            let own: Vec<f64> = all
                .iter()
                .filter_map(|m| m.absolute_cycles_per_byte)
                .collect();
            let beyond_host = self.host.exceeded_by(&own).unwrap_or(true);
            if !runs.interrupted && !warnings.iter().any(|w| w.fatal) && beyond_host {
                warnings.extend(noisy_warning(&ci95, &median, target, runs.raws.len()));
            }
        }
        if self.auto.enabled && !runs.interrupted && self.round < self.auto.max_rounds {
            match auto_adjust(&mut self.scenario, &warnings, &self.auto) {
                Some(Ok(change)) => {
                    self.round += 1;
                    self.adjustments
                        .push(format!("round {}: {change}", self.round));
                    return;
                }
                Some(Err(flagged)) => self
                    .adjustments
                    .push(format!("bound reached; still flagged: {flagged}")),
                None => {}
            }
        }
        let reduction = Reduction {
            all,
            median,
            ci95,
            median_index,
        };
        self.result = Some(entry(
            &self.scenario,
            runs,
            reduction,
            warnings,
            std::mem::take(&mut self.adjustments),
        ));
    }
}

/// Run one scenario `repeats` times and reduce; with `auto`, adjust and re-run until valid or bounded.
pub fn run_scenario(
    scenario: Scenario,
    repeats: usize,
    auto: AutoPolicy,
    clock: &ClockInfo,
    cancel: &AtomicBool,
) -> Result<ResultEntry, engine::EngineError> {
    let mut pending = Pending::new(scenario, repeats, auto, clock);
    loop {
        pending.step(cancel)?;
        if !pending.wants_more() {
            pending.settle();
        }
        if let Some(result) = pending.take() {
            return Ok(result);
        }
    }
}

/// The result `runs` of `scenario` reduce to, as a sweep reports them (medians, 95 % intervals with
/// `host`'s floor, warnings; `noisy` against `auto.target_ci`): the same reduction as a sweep's,
/// with the runs given rather than run, so a fake engine can feed known costs (tests/honesty.rs).
/// A sweep's pooled spread is [`HostSpread::add`] of every scenario's run values.
pub fn reduce_runs(
    scenario: Scenario,
    runs: Vec<RawRun>,
    auto: AutoPolicy,
    clock: &ClockInfo,
    host: HostSpread,
) -> Option<ResultEntry> {
    let repeats = runs.len();
    let mut pending = Pending::new(
        scenario,
        repeats,
        AutoPolicy {
            enabled: false,
            ..auto
        },
        clock,
    );
    pending.set_host_spread(host);
    for raw in runs {
        pending.runs.keep(raw, pending.ctx);
    }
    pending.settle();
    pending.take()
}

/// The result of a scenario that was not timed (a refused job, a wrong tag in the pre-flight): failed,
/// with one fatal warning saying why, and no numbers.
fn untimed_entry(scenario: &Scenario, code: WarningCode, why: String) -> ResultEntry {
    let runs = Repeats {
        raws: Vec::new(),
        computed: vec![metrics::RunMetrics {
            metrics: Metrics::default(),
            threads: Vec::new(),
            warnings: Vec::new(),
        }],
        within: Vec::new(),
        interrupted: false,
    };
    let warning = Warning {
        fatal: true,
        ..Warning::new(code, why)
    };
    let nothing = Reduction {
        all: vec![Metrics::default()],
        median: Metrics::default(),
        ci95: Ci95Set::default(),
        median_index: 0,
    };
    entry(scenario, runs, nothing, vec![warning], Vec::new())
}

/// A scenario's runs reduced: every run's metrics, their median, the 95 % intervals, and the run
/// nearest the median (it supplies the series and the per-thread view).
struct Reduction {
    all: Vec<Metrics>,
    median: Metrics,
    ci95: Ci95Set,
    median_index: usize,
}

/// The reported result of a scenario from its runs.
fn entry(
    scenario: &Scenario,
    mut runs: Repeats,
    reduction: Reduction,
    warnings: Vec<Warning>,
    adjustments: Vec<String>,
) -> ResultEntry {
    let Reduction {
        all,
        median,
        ci95,
        median_index,
    } = reduction;
    let failed = warnings.iter().any(|w| w.fatal);
    let f = scenario.function;
    let (size, mean) = match &scenario.size {
        engine::SizeSource::Fixed { size } => (SizeLabel::Bytes(*size), f64::from(*size)),
        engine::SizeSource::Model {
            name, mean_bytes, ..
        } => (SizeLabel::Model(name.clone()), *mean_bytes),
    };
    let series = runs
        .raws
        .get(median_index)
        .map(|r| r.series.clone())
        .unwrap_or_default();
    ResultEntry {
        algorithm: f.algorithm.name.to_string(),
        backend: f.backend.name.to_string(),
        accel: f.accel.to_string(),
        size,
        mean_message_bytes: mean,
        sessions: scenario.sessions,
        cores: engine::format_cpu_list(&scenario.cores),
        repeats: runs.raws.len(),
        metrics: median,
        spread: SpreadSet::from_runs(&all),
        ci95,
        series,
        threads: runs.computed.swap_remove(median_index).threads,
        threads_repeat: median_index,
        warnings,
        adjustments,
        failed,
        raw: runs.raws,
        scenario: scenario.spec.clone(),
        energy: None,
        baseline: None,
    }
}
