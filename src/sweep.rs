//! The sweep: from typed choices to scenarios, and scenarios run one after another into a results document.
//!
//! `run`, `model --measure` and `compare` all measure, so what they share lives here rather than in the
//! command line or among the exporters: turning the user's choices into validated scenarios (with the
//! load-fitted duration and the warnings said *before* a run), the one-pinned-session scenario the
//! harness, model and comparison runs use, the harness measurement, and the loop that runs scenarios,
//! keeps only finished ones when cancelled and hands each result to an [`Observer`] (the session's, which
//! rewrites the output files and shows the result through the command's display). Nothing here prints;
//! the one text read here is `--window`'s, by `spec::parse_window`, since a window in percent becomes
//! times only once a run's duration is planned. Otherwise `spec` parses and `cli` prints.

use crate::bench::{self, AutoPolicy};
use crate::energy::{self, method::Observed, Energy, Meter, Round, Window};
use crate::engine::{self, clock::ClockInfo, DataMode, Scenario, ScenarioSpec, SizeSource};
use crate::mac::{self, Function};
use crate::results::{Document, Harness, ResultEntry, RunOptions, SweepAccount};
use crate::spec::{self, SpecError};
use crate::stats;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The largest message a size source tags, bytes (a size model's largest draw).
pub fn largest_of(size: &SizeSource) -> u32 {
    match size {
        SizeSource::Fixed { size } => *size,
        SizeSource::Model { sequence, .. } => sequence.iter().copied().max().unwrap_or(0),
    }
}

/// The reference rate `f` at which `--slowest`'s cycles become time: calibrated once per process
/// (30 ms), as the plan needs it before the session's own clock measurement.
pub fn reference_hz() -> f64 {
    static HZ: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *HZ.get_or_init(|| crate::system::clock::calibrate_reference(Duration::from_millis(30)).0)
}

/// Default run duration per scenario when sessions do not outnumber cores.
pub const DEFAULT_DURATION: Duration = Duration::from_millis(150);

/// A run's options resolved into a sweep ([`SweepSpec::new`], the one place that does it): the
/// functions `--alg`/`--backend`/`--accel` name on this build, the sizes read, what every scenario
/// shares, and the timing choices the plan resolves. Tests build one directly.
#[derive(Debug, Clone)]
pub struct SweepSpec {
    pub functions: Vec<Function>,
    pub sizes: Vec<SizeSource>,
    /// What every scenario of the sweep shares: its sessions, cores, pinning, data, keys, … . The
    /// sweep sets each scenario's size, dispatch mode, duration and window; the rest is copied, so a
    /// new setting of [`ScenarioSpec`] reaches every scenario without a line here.
    pub scenario: ScenarioSpec,
    /// The options it was built from: the timing choices the plan resolves (`--duration`,
    /// `--budget`, `--window`, `--tick`, the repeats) are read from them, never copied.
    pub options: RunOptions,
}

/// The scenarios of a sweep and what to say about them before running.
#[derive(Debug, Clone)]
pub struct Plan {
    pub scenarios: Vec<Scenario>,
    /// Planned repeats of each scenario (extra ones come from the budget).
    pub repeats: usize,
    pub duration: Duration,
    /// The coordinator's tick of every scenario.
    pub tick: Duration,
    /// The time for the command, counted from its start (plan and pre-flight checks inside it),
    /// extra repeats included ([`SweepSpec::run_duration`]).
    pub budget: Duration,
    pub window_start: Duration,
    pub window_end: Duration,
    /// Choices made for the user (a fitted duration, a longer tick) and warnings (a window too short
    /// for the sessions), to print once everything is validated.
    pub notes: Vec<String>,
}

/// Note that a function does not take `size` under its length `rule` (sizes kept once per rule, in the
/// order met).
fn leave_out(left_out: &mut Vec<(String, Vec<u32>)>, rule: String, size: u32) {
    match left_out.iter_mut().find(|(r, _)| *r == rule) {
        Some((_, sizes)) if !sizes.contains(&size) => sizes.push(size),
        Some(_) => {}
        None => left_out.push((rule, vec![size])),
    }
}

/// One note per length rule, naming the sizes left out under it.
fn left_out_notes(left_out: &[(String, Vec<u32>)]) -> Vec<String> {
    left_out
        .iter()
        .map(|(rule, sizes)| {
            let sizes: Vec<String> = sizes.iter().map(u32::to_string).collect();
            format!("{rule}: size(s) {} left out of its sweep", sizes.join(", "))
        })
        .collect()
}

impl SweepSpec {
    /// The sweep a run's options describe, their `functions` resolved (`--alg`/`--backend`/`--accel`,
    /// which the caller says are unavailable), the sizes read (a size model's file included) and every
    /// rule between options checked ([`RunOptions::check`]): the one place options become a sweep.
    pub fn new(options: &RunOptions, functions: Vec<Function>) -> Result<SweepSpec, SpecError> {
        options.check().map_err(SpecError::new)?;
        // Each session keys its own queue pair on a device: more sessions than it has would fail at
        // the first key setup past them, after the plan and the table's header; refused here instead.
        if let Some(pairs) = mac::dpdk::queue_pairs()
            .filter(|&pairs| options.sessions > pairs && functions.iter().any(mac::dpdk::drives))
        {
            return Err(SpecError::new(format!(
                "--sessions {}: the dpdk device has {pairs} queue pairs and macbench gives each session its own (at most --sessions {pairs}, or a device with more queue pairs)",
                options.sessions
            )));
        }
        Ok(SweepSpec {
            functions,
            sizes: spec::parse_sizes(&options.sizes, options.seed)?,
            scenario: ScenarioSpec {
                cores: options.cores.clone(),
                sessions: options.sessions,
                pinning: options.pinning,
                data: options.data,
                keys: options.keys,
                verify: options.verify,
                rekey_every: options.rekey_every,
                seed: options.seed,
                tag_len: options.tag_len,
                // Size, dispatch mode, duration and window are each scenario's own (`plan`).
                ..ScenarioSpec::default()
            },
            options: options.clone(),
        })
    }

    /// Scenarios for every function × size × dispatch mode, validated against the machine (cores, window, limits).
    pub fn plan(&self, online: &[usize]) -> Result<Plan, SpecError> {
        let mut notes = Vec::new();
        let (duration, budget, repeats) = self.run_duration(&mut notes)?;
        let (window_start, window_end) = self.window_in(duration)?;
        let window = window_end - window_start;
        // A tick given longer than the window samples nothing inside it: no series and no batch
        // means, so the run's own interval cannot be formed (issue 47 N33: `--tick 1s` in a 20 ms
        // run was accepted silently).
        if let Some(tick) = self.options.timing.tick.filter(|t| *t > window) {
            return Err(SpecError::new(format!(
                "--tick {} s is longer than the {} s measurement window of a {} s run: no sample would fall inside it; give a tick of at most the window, a longer --duration, or --tick auto",
                crate::number::compact(tick.as_secs_f64()),
                crate::number::compact(window.as_secs_f64()),
                crate::number::compact(duration.as_secs_f64())
            )));
        }
        let tick = self
            .options
            .timing
            .tick
            .unwrap_or_else(|| auto_tick(window));
        self.load_notes(window_end - window_start, tick, &mut notes);
        let mut scenarios = Vec::with_capacity(self.scenario_count());
        // Per length rule, the fixed sizes a function does not take (the 3GPP functions' bounded
        // lengths, a library's own limit such as ipsec-mb's 65,534-byte jobs): left out of its sweep and
        // said so, once per rule. A size model outside them is an error from `validate`, since part of
        // a model cannot be dropped.
        let mut left_out: Vec<(String, Vec<u32>)> = Vec::new();
        for &function in &self.functions {
            if let Some(asked) = self.scenario.tag_len {
                function
                    .algorithm
                    .check_tag_len(asked)
                    .map_err(|e| SpecError::new(format!("--tag-len: {e}")))?;
            }
            for size in &self.sizes {
                if let engine::SizeSource::Fixed { size } = *size {
                    if !function.accepts_bytes(size.into()) {
                        leave_out(&mut left_out, function.length_rule(), size);
                        continue;
                    }
                }
                // `--slowest`: a run of larger messages is lengthened so that its window holds
                // them, the warm-up and the rest of the run as planned.
                let (held_duration, held_window) =
                    self.held_for(largest_of(size), duration, window_end - window_start);
                // A bound that would hold runs for minutes or hours is a slip, not a plan.
                if held_duration > duration && held_duration > MAX_PLANNED_RUN {
                    return Err(SpecError::new(format!(
                        "--slowest {}: messages of {} B would need runs of {} s (1,000 messages a session at that cost), longer than the {} s a run may be planned; give a lower bound, smaller sizes, or --duration",
                        crate::number::compact(self.options.timing.slowest.unwrap_or_default()),
                        largest_of(size),
                        crate::number::compact(held_duration.as_secs_f64().round()),
                        MAX_PLANNED_RUN.as_secs()
                    )));
                }
                for &dispatch in &self.options.dispatch {
                    let scenario = Scenario {
                        function,
                        spec: ScenarioSpec {
                            size: size.clone(),
                            duration: held_duration,
                            window_start,
                            window_end: window_start + held_window,
                            dispatch,
                            tick,
                            ..self.scenario.clone()
                        },
                    };
                    engine::validate(&scenario, online)
                        .map_err(|e| SpecError::new(e.to_string()))?;
                    scenarios.push(scenario);
                }
            }
        }
        let left_out = left_out_notes(&left_out);
        if scenarios.is_empty() && !left_out.is_empty() {
            return Err(SpecError::new(format!(
                "no scenario left: {}",
                left_out.join("; ")
            )));
        }
        notes.extend(left_out);
        // Thread, mapping and memory limits depend only on sessions and the verify mode: the first
        // scenario speaks for all.
        if let Some(first) = scenarios.first() {
            engine::check_limits(first).map_err(|e| SpecError::new(e.to_string()))?;
        }
        Ok(Plan {
            scenarios,
            repeats,
            duration,
            tick,
            budget,
            window_start,
            window_end,
            notes,
        })
    }

    /// What to say about the load before the run: a window too short for every session to be
    /// scheduled in it (only an explicit `--duration` can plan one), and a tick lengthened for many
    /// sessions.
    fn load_notes(&self, window: Duration, tick: Duration, notes: &mut Vec<String>) {
        let slice = bench::scheduling_slice();
        let (sessions, cores) = (self.scenario.sessions, self.scenario.cores.len());
        let needed = bench::minimum_window(sessions, cores, slice);
        if window < needed {
            let rounds = bench::rounds_in_window(window, sessions, cores, slice);
            // Said before the run, not discovered after it: the window is likely to fail as starved.
            notes.push(format!(
                "warning: a {:.2} s window gives each of {sessions} sessions on {cores} core(s) ~{rounds:.1} scheduling rounds of ~{} ms, fewer than the {} every session needs ({:.2} s; docs/methodology.md §2): sessions may not run inside it at all (the result then fails); a longer --duration, or none for a fitted one, measures every session",
                window.as_secs_f64(),
                slice.as_millis(),
                bench::MIN_ROUNDS_PER_WINDOW,
                needed.as_secs_f64()
            ));
        }
        let tick_used = engine::effective_tick(tick, self.scenario.sessions);
        if tick_used > tick {
            notes.push(format!(
                "tick {:.0} ms for {} sessions (at least {} µs per session keeps the sampler near 1 % of a core)",
                tick_used.as_secs_f64() * 1e3,
                self.scenario.sessions,
                engine::TICK_PER_SESSION.as_micros()
            ));
        }
    }

    /// Scenarios the sweep runs, before repeats: functions × sizes × dispatch modes.
    fn scenario_count(&self) -> usize {
        self.functions.len() * self.sizes.len() * self.options.dispatch.len().max(1)
    }

    /// The window of a run `duration` long: with [`AUTO`], from the warm-up to the run's end; else
    /// `--window` as given. The warm-up is [`WARM_UP`] when every session has a core of its own;
    /// when sessions outnumber cores, a fifth of the run (as the `20%..90%` window had), which the
    /// load-fitted runs make several scheduling rounds, so every session has run before the first
    /// mark; and a fifth too in a run shorter than twice [`WARM_UP`] (an explicit `--duration`).
    pub fn window_in(&self, duration: Duration) -> Result<(Duration, Duration), SpecError> {
        if self.options.timing.window != AUTO {
            return spec::parse_window(&self.options.timing.window, duration);
        }
        let start = if self.sessions_share_cores() || WARM_UP * 2 > duration {
            duration / 5
        } else {
            WARM_UP
        };
        Ok((start, duration))
    }

    /// Whether sessions outnumber cores.
    fn sessions_share_cores(&self) -> bool {
        self.scenario.sessions > self.scenario.cores.len().max(1)
    }

    /// The run length, the sweep's budget and the planned repeats. `--duration` is obeyed as given
    /// (with `--repeat`'s repeats). Else the budget is `--budget`, or [`DEFAULT_BUDGET`], or for a
    /// sweep whose planned repeats alone take longer, their time (a budget never drops a planned run),
    /// and [`BASE_SHARE`] of it goes to planned repeats, the rest to extra ones where intervals are
    /// widest. Without `--repeat` the planned repeats are as many as that share holds at the shortest
    /// run ([`SHORTEST_WINDOW`] after the warm-up), up to `--max-repeat`: the host, not the window,
    /// sets a repeat's spread (level shifts of seconds), so more short repeats narrow an interval
    /// where fewer long ones do not. Runs are then lengthened only as far as the share allows, up to
    /// [`DEFAULT_DURATION`] (or the load-fitted length, [`bench::fitted_duration`], when sessions
    /// outnumber cores: never shorter than that).
    fn run_duration(
        &self,
        notes: &mut Vec<String>,
    ) -> Result<(Duration, Duration, usize), SpecError> {
        let scenarios = self.scenario_count().max(1) as u32;
        let base_time = |d: Duration, repeats: usize| self.runs_time(d, repeats);
        let fraction = self.window_fraction()?;
        let (fitted, why) = bench::fitted_duration(
            DEFAULT_DURATION,
            self.scenario.sessions,
            self.scenario.cores.len(),
            fraction,
            bench::scheduling_slice(),
        );
        if let Some(d) = self.options.timing.duration {
            let budget = match &self.options.timing.budget {
                Some((b, _)) => *b,
                None => DEFAULT_BUDGET.max(base_time(d, self.repeats())),
            };
            return Ok((d, budget, self.repeats()));
        }
        // The shortest run: its window SHORTEST_WINDOW, and never under a window every session is
        // scheduled in several times (a starved window measures nothing: the issue 44
        // reproduction's 425 ms windows for 100 sessions on one core failed 6 times in 9), nor under
        // the load-fitted length when sessions outnumber cores.
        let (sessions, cores) = (self.scenario.sessions, self.scenario.cores.len());
        let slice = bench::scheduling_slice();
        let scheduled = bench::run_holding(bench::minimum_window(sessions, cores, slice), fraction);
        let shortest = self
            .shortest_run()?
            .max(scheduled)
            .max(if fitted > DEFAULT_DURATION {
                fitted
            } else {
                Duration::ZERO
            });
        let longest = fitted.max(DEFAULT_DURATION).max(shortest);
        let budget = match &self.options.timing.budget {
            Some((b, _)) => *b,
            None => DEFAULT_BUDGET.max(base_time(shortest, self.repeats())),
        };
        let share = budget.mul_f64(BASE_SHARE);
        let (repeats, as_many_as_fit) = if self.options.fills_budget() {
            let fit = share.as_secs_f64() / (base_time(shortest, 1)).as_secs_f64();
            let most = self.options.max_repeats().max(self.repeats());
            let repeats = (fit.floor() as usize).clamp(self.repeats(), most);
            // The share holds them at the shortest run, and --max-repeat did not stop them.
            (repeats, fit.floor() as usize == repeats && repeats < most)
        } else {
            (self.repeats(), false)
        };
        // As long as the share allows for those repeats, between the shortest and the longest run;
        // all of the budget, not only its share, when even the shortest runs need more. Issue 44:
        // when the planned repeats are as many as the share holds at the shortest run, the runs
        // stay at the shortest: stretching them to fill the share took the slack that the windows
        // fitted to slow functions' largest messages need, and the costliest cells lost repeats
        // (29 of the main job's 144 had 10 of 12). Only repeats capped at --max-repeat stretch.
        // With `--slowest` the runs of large messages are already as long as their windows need:
        // the others stay at the shortest, and what the budget cannot hold is said below.
        let held = self.options.timing.slowest.is_some();
        let per = match as_many_as_fit {
            true => shortest,
            false if held && base_time(shortest, repeats) <= budget => shortest,
            false => (share / scenarios / repeats as u32).saturating_sub(RUN_SETUP),
        };
        let per = if per >= shortest || held {
            per
        } else {
            (budget / scenarios / repeats as u32).saturating_sub(RUN_SETUP)
        };
        if per < shortest {
            if let Some((given, text)) = &self.options.timing.budget {
                // The load's minimum window, not the planner's shortest, is what the budget cannot
                // hold: the runs keep that window and the budget grows, said so.
                if scheduled > self.shortest_run()? {
                    let needed = base_time(shortest, repeats);
                    notes.push(format!(
                        "--budget {text}: {sessions} sessions on {cores} core(s) need a window of at least {:.2} s ({} scheduling rounds of ~{} ms), so runs of {:.2} s: the planned repeats take ≈ {:.0} s",
                        bench::minimum_window(sessions, cores, slice).as_secs_f64(),
                        bench::MIN_ROUNDS_PER_WINDOW,
                        slice.as_millis(),
                        shortest.as_secs_f64(),
                        needed.as_secs_f64()
                    ));
                    return Ok((shortest, (*given).max(needed), repeats));
                }
                return Err(SpecError::new(format!(
                    "--budget {text}: {} scenario(s) × {} repeat(s) at the shortest run ({:.0} ms, and ~{:.1} ms of set-up each) need at least {:.1} s",
                    self.scenario_count(),
                    repeats,
                    shortest.as_secs_f64() * 1e3,
                    RUN_SETUP.as_secs_f64() * 1e3,
                    base_time(shortest, repeats).as_secs_f64().max(0.1)
                )));
            }
        }
        let chosen = per.clamp(shortest, longest);
        // Whole tenths of a millisecond, so the plan line and the results say what ran.
        let chosen = Duration::from_micros(chosen.as_micros().div_ceil(100) as u64 * 100);
        let text = self
            .options
            .timing
            .budget
            .as_ref()
            .map_or("50s", |(_, t)| t.as_str());
        let chosen = spec::duration_from_secs("--budget", text, chosen.as_secs_f64())?;
        notes.extend(why.filter(|_| chosen >= fitted && fitted > DEFAULT_DURATION));
        Ok((chosen, budget, repeats))
    }

    /// The time `repeats` of every scenario take in runs of `base`, set-up included; with
    /// `--slowest`, each run lengthened for its messages ([`SweepSpec::held_for`]).
    fn runs_time(&self, base: Duration, repeats: usize) -> Duration {
        if self.options.timing.slowest.is_none() {
            return (base + RUN_SETUP) * self.scenario_count().max(1) as u32 * repeats as u32;
        }
        let window = self
            .window_in(base)
            .map_or(base, |(a, b)| b.saturating_sub(a));
        let pass: Duration = self
            .scenario_sizes()
            .into_iter()
            .map(|size| self.held_for(size, base, window).0 + RUN_SETUP)
            .sum();
        pass * repeats as u32
    }

    /// The shortest run the planner chooses: [`SHORTEST_WINDOW`] of window after the warm-up (with
    /// a window in percent, a run whose window is that long).
    pub fn shortest_run(&self) -> Result<Duration, SpecError> {
        if self.options.timing.window == AUTO && !self.sessions_share_cores() {
            return Ok(WARM_UP + SHORTEST_WINDOW);
        }
        Ok(SHORTEST_WINDOW.div_f64(self.window_fraction()?.max(0.01)))
    }

    /// Runs the sweep plans before extra repeats: scenarios × repeats (an upper bound: a function
    /// may leave a size out).
    pub fn planned_runs(&self) -> usize {
        self.scenario_count() * self.repeats().max(1)
    }

    /// The largest message any scenario of the sweep tags, bytes (a size model's largest draw).
    pub fn largest_size(&self) -> u32 {
        self.sizes.iter().map(largest_of).max().unwrap_or(0)
    }

    /// With `--slowest C`: a run of `duration` whose window is `window` long, for messages of up to
    /// `size` bytes — lengthened, when its window would hold fewer than
    /// [`bench::MIN_MESSAGES_PER_SESSION`] of them per session at C reference cycles per byte, by
    /// what the window lacks. Returns the run's duration and its window's length. Without
    /// `--slowest`, as given (the planner fits a window after a first run instead).
    pub fn held_for(
        &self,
        size: u32,
        duration: Duration,
        window: Duration,
    ) -> (Duration, Duration) {
        let Some(cycles_per_byte) = self.options.timing.slowest else {
            return (duration, window);
        };
        let needed = bench::window_for_messages(
            self.scenario.sessions,
            self.scenario.cores.len(),
            cycles_per_byte / reference_hz() * f64::from(size),
        );
        // Whole tenths of a millisecond, as the planner's runs are.
        let lacking = needed.saturating_sub(window);
        let lacking = Duration::from_micros(lacking.as_micros().div_ceil(100) as u64 * 100);
        (duration + lacking, window + lacking)
    }

    /// Each scenario's largest message, bytes, in the order [`SweepSpec::plan`] makes them (a size
    /// a function does not take left out).
    pub fn scenario_sizes(&self) -> Vec<u32> {
        let dispatches = self.options.dispatch.len().max(1);
        let mut sizes = Vec::with_capacity(self.scenario_count());
        for function in &self.functions {
            for size in &self.sizes {
                if let SizeSource::Fixed { size } = *size {
                    if !function.accepts_bytes(size.into()) {
                        continue;
                    }
                }
                sizes.extend(std::iter::repeat_n(largest_of(size), dispatches));
            }
        }
        sizes
    }

    /// The share of a run its window covers (the window may be in percent), over `--duration` when
    /// given, else the default run length: a window in seconds is checked against the run it was
    /// given for (`--duration 1s --window 0.2..0.9` was refused as outside a 0.15 s run).
    pub fn window_fraction(&self) -> Result<f64, SpecError> {
        let run = self.options.timing.duration.unwrap_or(DEFAULT_DURATION);
        let (a, b) = self.window_in(run)?;
        Ok((b - a).as_secs_f64() / run.as_secs_f64())
    }
}

/// A sweep's load as its options describe it: what [`plan_runs`] sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLoad {
    /// Each scenario's largest message, bytes, one entry per scenario ([`SweepSpec::scenario_sizes`]).
    pub sizes: Vec<u32>,
    /// The repeats every scenario runs at least.
    pub repeats: usize,
    pub sessions: usize,
    pub cores: usize,
    /// The sweep's shortest run ([`SweepSpec::shortest_run`]: its window [`SHORTEST_WINDOW`]).
    pub shortest_run: Duration,
    /// The share of a run its window covers.
    pub window_fraction: f64,
}

/// A sweep's runs within a share of a budget, chosen by [`plan_runs`].
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    /// The run of the smallest messages, whole milliseconds (`run --duration`): the shortest that
    /// holds the window every session needs. Runs of larger messages are longer (`run --slowest`).
    pub duration: Duration,
    /// The run of the largest messages.
    pub longest: Duration,
    /// Repeats of every scenario (`run --repeat`): as many as the share holds, at least the load's.
    pub repeats: usize,
    /// The window the largest messages need, and the rule that set it.
    pub minimum_window: Duration,
    pub why: String,
    /// The time its runs take, seconds: within the share, or more when the share cannot hold the
    /// load's repeats.
    pub seconds: f64,
    /// The share it was given, seconds.
    pub share_s: f64,
}

impl RunPlan {
    /// Whether it takes more than its share, to hold its windows.
    pub fn lengthened(&self) -> bool {
        self.seconds > self.share_s * 1.001
    }
}

/// The longest run [`plan_runs`] plans: a load whose minimum window needs longer runs is refused.
pub const MAX_PLANNED_RUN: Duration = bench::MAX_FITTED_DURATION;

impl SweepSpec {
    /// Planned repeats: exactly these, or at least these when the planned repeats fill the budget.
    pub fn repeats(&self) -> usize {
        self.options.repeats()
    }

    /// Its load, for [`plan_runs`].
    pub fn load(&self) -> Result<RunLoad, SpecError> {
        Ok(RunLoad {
            sizes: self.scenario_sizes(),
            repeats: self.repeats(),
            sessions: self.scenario.sessions,
            cores: self.scenario.cores.len(),
            shortest_run: self.shortest_run()?,
            window_fraction: self.window_fraction()?,
        })
    }
}

/// The runs of a sweep of `load` within `share_s` seconds, when its slowest function takes
/// `max_seconds_per_byte`, on a machine whose scheduler gives a runnable session `slice` at a time.
/// Every run is the shortest that holds its window: at least the sweep's shortest run and
/// [`bench::minimum_window`] (every session scheduled [`bench::MIN_ROUNDS_PER_WINDOW`] times), and
/// for a scenario of larger messages [`bench::window_for_messages`] at its own largest message (every
/// session [`bench::MIN_MESSAGES_PER_SESSION`] messages, so no result is `window-too-short`), as
/// `run --slowest` lengthens it. The share buys repeats, not longer runs (issue 44: the host, not
/// the window, sets a repeat's spread): as many as it holds, at least the load's, at most
/// [`DEFAULT_MAX_REPEAT`](crate::results::options::DEFAULT_MAX_REPEAT). A share that cannot hold the
/// load's repeats is exceeded ([`RunPlan::seconds`]); a window that needs runs longer than
/// [`MAX_PLANNED_RUN`] is refused, with the reason in one line. `reproduce` plans each step with it.
/// (Each step's runs used to be sized for its largest message: 1 s runs of 16-byte messages, and
/// 391 s for the size step of `rashwan-mobile` at the least.)
pub fn plan_runs(
    share_s: f64,
    load: &RunLoad,
    max_seconds_per_byte: f64,
    slice: Duration,
) -> Result<RunPlan, String> {
    let (sessions, cores) = (load.sessions, load.cores);
    let largest = load.sizes.iter().copied().max().unwrap_or(0);
    let scheduled = bench::minimum_window(sessions, cores, slice);
    let for_messages = |size: u32| {
        bench::window_for_messages(sessions, cores, max_seconds_per_byte * f64::from(size))
    };
    let messages = for_messages(largest);
    let per_core = sessions.div_ceil(cores.max(1)).max(1);
    let (minimum_window, why) = if scheduled >= messages {
        (
            scheduled,
            format!(
                "{} scheduling rounds of ~{} ms for {per_core} sessions per core",
                bench::MIN_ROUNDS_PER_WINDOW,
                slice.as_millis()
            ),
        )
    } else {
        (
            messages,
            format!(
                "{} messages of {largest} B per session{}",
                bench::MIN_MESSAGES_PER_SESSION,
                if per_core > 1 {
                    format!(", {per_core} sessions per core")
                } else {
                    String::new()
                }
            ),
        )
    };
    let floor = bench::run_holding(minimum_window, load.window_fraction);
    if floor > MAX_PLANNED_RUN {
        return Err(format!(
            "its window must be at least {:.1} s ({why}): runs of {:.0} s, longer than the {} s a run may be planned",
            minimum_window.as_secs_f64(),
            floor.as_secs_f64(),
            MAX_PLANNED_RUN.as_secs()
        ));
    }
    // The smallest messages' run, whole milliseconds; a larger message's run is that and what its
    // window lacks (as `SweepSpec::held_for` lengthens it).
    let base = load
        .shortest_run
        .max(bench::run_holding(scheduled, load.window_fraction));
    let base = Duration::from_millis(
        u64::try_from(base.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX),
    );
    let base_window = base.mul_f64(load.window_fraction);
    let run_of = |size: u32| base + for_messages(size).saturating_sub(base_window);
    let pass: f64 = load
        .sizes
        .iter()
        .map(|&size| (run_of(size) + RUN_SETUP).as_secs_f64())
        .sum();
    let least = load.repeats.max(1);
    let fit = (share_s.max(0.0) / pass.max(1e-9)).floor() as usize;
    let repeats = fit.clamp(
        least,
        crate::results::options::DEFAULT_MAX_REPEAT.max(least),
    );
    Ok(RunPlan {
        duration: base,
        longest: run_of(largest),
        repeats,
        minimum_window,
        why,
        seconds: repeats as f64 * pass,
        share_s,
    })
}

/// Planned repeats a scenario keeps when the budget makes the costliest stop first.
pub const MIN_PLANNED: usize = 3;

/// `--window` and `--tick`'s default: chosen by the planner.
pub use crate::results::options::AUTO;
/// What the sessions run before the window opens, with `--window auto` and no more sessions than
/// cores. Measured on the 2-core development VM (hmac-sha256, cmac-aes128, poly1305, hmac-sha512 at
/// 64, 1024 and 16384 B, 1 ms ticks from the gate): the first millisecond after the gate ran at 106 %
/// of a run's median rate per CPU-second (p10 95 %), each later one at 96–100 % — no transient to
/// wait out beyond the first. The 20 % warm-up used before cost 15 ms of every 76 ms run.
pub const WARM_UP: Duration = Duration::from_millis(1);
/// The shortest window the planner chooses: 8 ticks of 2.5 ms ([`auto_tick`]) for batch means and
/// the trend test, and ~1,000 messages per session down to ~20 cycles/byte at 64 KiB.
pub const SHORTEST_WINDOW: Duration = Duration::from_millis(20);

/// The coordinator's tick for a window of `window`, with `--tick auto`: an eighth of it, between
/// 1 ms and 10 ms, so a short window still has the batches its interval and trend test need.
pub fn auto_tick(window: Duration) -> Duration {
    let tick = (window / 8).clamp(engine::MIN_TICK, engine::DEFAULT_TICK);
    Duration::from_micros(tick.as_micros() as u64 / 100 * 100)
}

/// The time a sweep may take for its runs without `--budget` (extra repeats included), chosen so
/// that the main job — nine functions × 16 sizes — ends within a minute on 2 cores, start-up and
/// harness measurement included.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(52);
/// The share of the budget the planned repeats are sized to take at the shortest run; the rest is
/// for the windows fitted to slow functions' largest messages, then for extra repeats. At 75 % and
/// 52 s the main job's 144 cells each keep their 12 (issue 44; docs/methodology.md §4).
pub const BASE_SHARE: f64 = 0.75;
/// Set-up and tear-down of one run beside its duration (threads, the pool's schedule, the checks):
/// measured on the 2-core development VM, ~0.8 ms a run once a scenario's pre-flight and key-setup
/// figure are known (its first run pays ~3 ms more).
pub const RUN_SETUP: Duration = Duration::from_millis(1);

/// One session pinned to `core`, `duration` long with the window at 20 %..90 %: the scenario of the
/// harness measurement, `model --measure` and `compare`.
pub fn one_session(
    function: Function,
    size: SizeSource,
    core: usize,
    duration: Duration,
    data: DataMode,
) -> Scenario {
    Scenario {
        function,
        spec: ScenarioSpec {
            size,
            sessions: 1,
            cores: vec![core],
            duration,
            window_start: duration / 5,
            window_end: duration * 9 / 10,
            data,
            seed: 1,
            tick: engine::DEFAULT_TICK,
            // Round-robin, a key per session, no verification, no re-keying, one message at a time,
            // the algorithm's own tag, and any later setting at its default.
            ..ScenarioSpec::default()
        },
    }
}

/// The harness cost: the null function, 64-byte messages, one session on `core`, median of 3.
pub fn measure_harness(
    core: usize,
    clock: &ClockInfo,
    cancel: &AtomicBool,
) -> Result<Harness, engine::EngineError> {
    let null = mac::null::function();
    let s = one_session(
        null,
        SizeSource::Fixed { size: 64 },
        core,
        Duration::from_millis(100),
        DataMode::Unique,
    );
    let r = bench::run_scenario(s, 3, AutoPolicy::default(), clock, cancel)?;
    Ok(Harness {
        size: 64,
        absolute_cycles_per_message: r.metrics.absolute_cycles_per_message,
        apparent_cycles_per_message: r.metrics.apparent_cycles_per_message,
    })
}

/// One cache-hot measurement of our side of a comparison: `function` on messages of `size` bytes
/// handed over by `dispatch`, one session on `core` for `seconds`.
pub struct CacheHot {
    pub function: Function,
    pub size: u32,
    pub seconds: f64,
    pub core: usize,
    pub dispatch: engine::Dispatch,
}

/// Our side of a comparison with a library's own benchmark: one session on its core, one cache-hot
/// buffer (the peers hash one buffer over and over; so do we here, or the comparison would measure our
/// cache misses rather than the library), median of `repeats`.
pub fn measure_cache_hot(
    what: CacheHot,
    repeats: usize,
    clock: &ClockInfo,
    cancel: &AtomicBool,
) -> Result<ResultEntry, engine::EngineError> {
    let duration = Duration::from_secs_f64(what.seconds.max(0.02));
    let mut scenario = one_session(
        what.function,
        SizeSource::Fixed { size: what.size },
        what.core,
        duration,
        DataMode::Same,
    );
    scenario.dispatch = what.dispatch;
    engine::validate(&scenario, &crate::system::online_cpus())?;
    bench::run_scenario(scenario, repeats, AutoPolicy::default(), clock, cancel)
}

/// Told about each step of a sweep: the session's observer rewrites the results files and passes
/// each step on to the command's display (`session::SweepDisplay`), which prints.
pub trait Observer {
    /// A scenario is about to run.
    fn starting(&mut self, _scenario: &Scenario) {}
    /// A scenario finished and was appended to `doc`.
    fn finished(&mut self, doc: &Document) -> Result<(), String>;
    /// The energy phase of a scenario could not be measured (a meter read failed, the null
    /// function was refused): the result stands without energy.
    fn energy_not_measured(&mut self, _scenario: &Scenario, _reason: &str) {}
    /// What closing the sweep will cost after its last run (the last write of the results files,
    /// as long as the latest one took): a budget leaves it room, so the command, not only its
    /// runs, ends within the budget.
    fn closing_cost(&self) -> Duration {
        Duration::ZERO
    }
}

/// Why a sweep stopped early.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    #[error("{0}")]
    Observer(String),
}

/// In what order a sweep runs the repeats of its scenarios (recorded in the header, so defined
/// with the results schema).
pub use crate::results::Order;

/// How far apart the repeats of one scenario are at most when interleaved: the scenarios interleaved
/// together are those whose runs (one each) fill this span, so the main job (144 scenarios of
/// ~0.09 s) is one span and each scenario's repeats lie ~13 s apart across the whole run. The host's
/// slow stretches last seconds and more (docs/methodology.md "What the wander is"): with the 2 s
/// span used before, a scenario's three repeats fell inside one stretch, agreed, and claimed a
/// precision the next run contradicted (an A/A pair on the 2-core VM: 24 of 144 cells "changed
/// beyond noise", against 16 spread over the run, in the same busy hour). Long runs are cut in spans
/// so that an interrupted one keeps what its finished spans measured.
pub const INTERLEAVE_SPAN: Duration = Duration::from_secs(20);

/// The end (exclusive) of the scenarios interleaved with `pending[first]`: those after it whose runs,
/// its own included, fill `span`; at least `first + 1`. The span slides as results are kept, so a
/// scenario asking for more repeats (`--target-ci`) is joined by the next ones.
fn interleave_end(pending: &[bench::Pending], first: usize, span: Duration) -> usize {
    let mut filled = Duration::ZERO;
    let mut end = first;
    while end < pending.len() && (end == first || filled < span) {
        filled += pending[end].scenario().duration;
        end += 1;
    }
    end
}

/// How often and in what order each scenario runs.
#[derive(Debug, Clone, Copy)]
pub struct Repetition {
    pub repeats: usize,
    pub order: Order,
    /// Interleaved: the span of runs interleaved together ([`INTERLEAVE_SPAN`] on the command line).
    pub span: Duration,
    /// The sweep's time for runs, extra repeats included ([`Plan::budget`]): with a `--target-ci`,
    /// what the planned repeats leave of it goes to extra repeats of the scenarios whose intervals
    /// are widest against the target. `None`: extra repeats up to `--max-repeat` wherever the target
    /// is missed, whatever they cost.
    pub budget: Option<Duration>,
    /// When the command began: a budget counts from it, so the plan, the pre-flight checks and the
    /// machine check before the first run are inside it, as is the closing write after the last
    /// ([`Observer::closing_cost`]). Issue 44: counted from the first run, `--budget 15m` ended
    /// 37 s late.
    pub started: std::time::Instant,
    /// `--baseline`: the rows of a pair group ([`results::baseline::PairGroup`]) run back to back
    /// within each round, in an order that turns round each round ([`round_order`]), and take their
    /// extra repeats together, so that repeat `j` of a row and of its baseline are neighbours.
    pub paired: bool,
}

/// The time left of a sweep's budget and how it is shared: what the scenarios still to come need
/// for their planned repeats is set aside, and the rest is shared among the scenarios in proportion,
/// so a span of scenarios gets its part for extra repeats and what it leaves flows to the next.
struct BudgetClock {
    started: std::time::Instant,
    budget: Option<Duration>,
    /// What closing the sweep will cost after the last run ([`Observer::closing_cost`]).
    closing: Duration,
    /// Scenarios (by index) whose first repeat is not made yet: what a run of each was expected to
    /// cost before it first ran, and what its runs have cost so far.
    opening: std::collections::HashMap<usize, (Duration, Duration)>,
    /// Over scenarios whose first repeat is made: what they were expected to cost, and what their
    /// first repeat cost — with the calibration run that fitted a window before it, in a child
    /// process for a switched function ([`BudgetClock::unopened`]).
    opened: (Duration, Duration),
    opened_count: u32,
    /// Runs made and their wall time, set-up included: the cost of the next run.
    runs: u32,
    run_time: Duration,
    /// When the first run started and the last one ended.
    first_start: Option<std::time::Instant>,
    last_end: Option<std::time::Instant>,
}

impl BudgetClock {
    fn new(budget: Option<Duration>, started: std::time::Instant) -> BudgetClock {
        BudgetClock {
            started,
            budget,
            closing: Duration::ZERO,
            opening: Default::default(),
            opened: (Duration::ZERO, Duration::ZERO),
            opened_count: 0,
            runs: 0,
            run_time: Duration::ZERO,
            first_start: None,
            last_end: None,
        }
    }

    /// Time one run and count it.
    fn timed<T>(&mut self, run: impl FnOnce() -> T) -> T {
        let t = std::time::Instant::now();
        let out = run();
        self.runs += 1;
        self.run_time += t.elapsed();
        self.first_start.get_or_insert(t);
        self.last_end = Some(std::time::Instant::now());
        out
    }

    /// Time a base run of `pending[index]` and count it; a scenario's first repeat (and the
    /// calibration run before it) are also weighed against what was expected of it.
    fn timed_base(
        &mut self,
        index: usize,
        p: &mut bench::Pending,
        cancel: &AtomicBool,
    ) -> Result<(), engine::EngineError> {
        if p.runs() > 0 {
            return self.timed(|| p.step(cancel));
        }
        // Expected before the run that may fit its window: the estimate a later scenario gets.
        let guess = self.expected(p.scenario());
        let t = std::time::Instant::now();
        let out = self.timed(|| p.step(cancel));
        let entry = self.opening.entry(index).or_insert((guess, Duration::ZERO));
        entry.1 += t.elapsed();
        if p.runs() > 0 || !p.needs_base() {
            if let Some((guess, took)) = self.opening.remove(&index) {
                self.opened.0 += guess;
                self.opened.1 += took;
                self.opened_count += 1;
            }
        }
        out
    }

    /// What the first repeat of a scenario not yet run will cost: [`BudgetClock::expected`] times
    /// what first repeats have cost against it so far (once 8 have been made), and
    /// [`LATER_MARGIN`] more. Issue 44: a first repeat can be a calibration run and a repeat (a
    /// window fitted to a slow function), and a switched function's first run starts its
    /// acceleration's child; expected at a run's mean, the later scenarios of the full matrix took
    /// 10 % more than the budget left them.
    fn unopened(&self, scenario: &Scenario) -> Duration {
        let ratio = if self.opened_count >= 8 && !self.opened.0.is_zero() {
            self.opened.1.as_secs_f64() / self.opened.0.as_secs_f64()
        } else {
            1.0
        };
        self.expected(scenario)
            .mul_f64(ratio.clamp(0.5, 10.0) * LATER_MARGIN)
    }

    /// What a run of `scenario` is expected to cost: its duration plus the set-up runs have taken
    /// on average so far.
    fn expected(&self, scenario: &Scenario) -> Duration {
        let setup = if self.runs > 0 {
            let mean = self.run_time / self.runs;
            mean.saturating_sub(scenario.duration)
                .min(Duration::from_secs(1))
        } else {
            Duration::from_millis(15)
        };
        scenario.duration + setup
    }

    /// The budget's time left for runs: what is not spent yet, less the closing write; `None`
    /// without a budget.
    fn left(&self) -> Option<Duration> {
        let budget = self.budget?;
        Some(
            budget
                .saturating_sub(self.started.elapsed())
                .saturating_sub(self.closing),
        )
    }

    /// Whether the budget has room for one more run of each of `span`'s scenarios that still wants
    /// one, and then one run of each scenario of `later`; always without a budget.
    fn holds_another_round(&self, span: &[bench::Pending], later: &[bench::Pending]) -> bool {
        let Some(left) = self.left() else {
            return true;
        };
        let round: Duration = span
            .iter()
            .filter(|p| p.needs_base())
            .map(|p| self.expected(p.scenario()))
            .sum();
        let rest: Duration = later.iter().map(|p| self.unopened(p.scenario())).sum();
        round + rest <= left
    }

    /// The most planned repeats every scenario of `span` can have, one level for all, with one run
    /// of each scenario of `later` left: each scenario runs up to the level (or its planned repeats,
    /// if fewer) at its expected cost. `None` without a budget, or when not even the repeats the
    /// span's scenarios have already run, plus [`MIN_PLANNED`], fit.
    fn level(&self, span: &[bench::Pending], later: &[bench::Pending]) -> Option<usize> {
        let rest: Duration = later.iter().map(|p| self.unopened(p.scenario())).sum();
        let left = self.left()?.saturating_sub(rest);
        let wanted: Vec<(usize, usize, Duration)> = span
            .iter()
            .filter(|p| p.needs_base())
            .map(|p| (p.runs(), p.planned_repeats(), self.expected(p.scenario())))
            .collect();
        let cost = |level: usize| -> Duration {
            wanted
                .iter()
                .map(|&(have, planned, each)| each * level.min(planned).saturating_sub(have) as u32)
                .sum()
        };
        let most = wanted.iter().map(|w| w.1).max()?;
        let least = wanted.iter().map(|w| w.0).min()?.max(MIN_PLANNED);
        (least..=most).rev().find(|&level| cost(level) <= left)
    }

    /// The extra-repeat time of a span of `span` scenarios, when `later` is what the scenarios after
    /// it need for their planned repeats and `left` scenarios (the span's included) remain.
    fn share(&self, span: usize, left: usize, later: Duration) -> Option<Duration> {
        let spare = self.left()?.saturating_sub(later);
        Some(spare.mul_f64(span as f64 / left.max(1) as f64))
    }
}

/// How much more than the first repeats so far a later scenario's first repeat is taken to cost:
/// a sweep's later scenarios are often slower than its first (the full matrix ends with the
/// software ciphers and the 3GPP functions, whose windows are fitted after a calibration run).
/// Weighed by the first repeats alone, its 8,415 scenarios after the 2,243rd took 492 s where the
/// budget had left them ~470 s (5 % more), and the matrix ended 23 s late.
const LATER_MARGIN: f64 = 1.1;

/// How [`run`] runs its scenarios: how often and in which order, when to add repeats, the clock its
/// cycles count at, and the flag that cancels it (Ctrl-C's).
pub struct SweepPolicy<'a> {
    pub repetition: Repetition,
    pub auto: AutoPolicy,
    pub clock: &'a ClockInfo,
    pub cancel: &'a AtomicBool,
}

/// Run every scenario `repeats` times into `doc.results`, in scenario order whatever the `order`, and
/// with `energy` its energy phase as each result is kept. With a `--target-ci` in `auto`, a span's
/// scenarios whose intervals are still wider than the target get extra repeats, the widest first,
/// while its share of the budget lasts (up to `--max-repeat` each). A scenario cut short by `cancel`
/// is not a result (its window never closed) and ends the sweep, as do scenarios whose repeats had
/// not all run; returns whether it was cancelled.
pub fn run(
    scenarios: Vec<Scenario>,
    policy: SweepPolicy,
    doc: &mut Document,
    observer: &mut dyn Observer,
    mut energy: Option<&mut EnergyPhase>,
) -> Result<bool, SweepError> {
    let (repetition, auto, clock, cancel) =
        (policy.repetition, policy.auto, policy.clock, policy.cancel);
    let groups = pair_groups(&scenarios, repetition.paired);
    let mut pending: Vec<bench::Pending> = scenarios
        .into_iter()
        .map(|s| bench::Pending::new(s, repetition.repeats, auto, clock))
        .collect();
    let mut budget = BudgetClock::new(repetition.budget, repetition.started);
    budget.closing = observer.closing_cost();
    // Every kept scenario's repeat values, pooled: the host's spread, a floor under each interval.
    let mut kept_spread = stats::HostSpread::default();
    let mut emitted = 0;
    while emitted < pending.len() && !cancel.load(Ordering::SeqCst) {
        let end = match repetition.order {
            // The scenarios whose runs fill the span that starts at the first result not yet kept.
            Order::Interleaved => interleave_end(&pending, emitted, repetition.span),
            Order::Sequential => emitted + 1,
        };
        // A pair group is never cut between spans: its rows must share their rounds.
        let end = whole_groups_end(&groups, emitted, end);
        // Planned repeats: interleaved, one run of each scenario in turn; sequential, back to back.
        let mut round = 0;
        while !cancel.load(Ordering::SeqCst) {
            if round > 0 && !keep_to_budget(&budget, &mut pending, emitted..end) {
                break;
            }
            let mut ran = false;
            for i in round_order(&groups[emitted..end], round) {
                let p = &mut pending[emitted + i];
                if !p.needs_base() {
                    continue;
                }
                if cancel.load(Ordering::SeqCst) {
                    break;
                }
                // Told of every run when runs alternate, of a scenario's first when back to back.
                if repetition.order == Order::Interleaved || p.runs() == 0 {
                    observer.starting(p.scenario());
                }
                budget.timed_base(emitted + i, p, cancel)?;
                ran = true;
            }
            round += 1;
            if !ran {
                break;
            }
        }
        share_spread(&mut pending[emitted..end], kept_spread);
        if let Some(target) = auto.target_ci {
            let span = Span {
                pending: &mut pending,
                groups: &groups,
                range: emitted..end,
            };
            extra_repeats(span, target, &mut budget, &policy, observer, kept_spread)?;
            share_spread(&mut pending[emitted..end], kept_spread);
        }
        for p in &mut pending[emitted..end] {
            kept_spread.add(&p.absolute_values());
            p.settle();
        }
        // Results are kept in scenario order: each as soon as it and every one before it are done.
        while let Some(mut result) = pending.get_mut(emitted).and_then(bench::Pending::take) {
            if result.raw.iter().any(|r| r.interrupted) {
                doc.sweep = Some(account(doc, &budget, kept_spread));
                return Ok(true);
            }
            // Energy is measured in windows of its own, so a timed result flagged by its validity
            // checks still gets one; an untimed one (refused, wrong tag) does not, nor one kept after
            // an interrupt.
            let measurable = !result.raw.is_empty() && !cancel.load(Ordering::SeqCst);
            if let Some(phase) = energy.as_deref_mut().filter(|_| measurable) {
                let scenario = pending[emitted].scenario().clone();
                match phase.measure(&scenario, result.mean_message_bytes, cancel) {
                    Ok(measured) => result.energy = measured,
                    Err(reason) => observer.energy_not_measured(&scenario, &reason),
                }
            }
            doc.results.push(result);
            emitted += 1;
            observer.finished(doc).map_err(SweepError::Observer)?;
            budget.closing = observer.closing_cost();
        }
    }
    // Once, at the end: the session writes the file again after the sweep returns.
    doc.sweep = Some(account(doc, &budget, kept_spread));
    Ok(cancel.load(Ordering::SeqCst))
}

/// A budget is kept: a further round of planned repeats of the span runs only if it leaves time for
/// one run of every scenario after the span. When it does not, every scenario of the span is held
/// to one level of repeats, as many as the budget holds for all ([`BudgetClock::level`]); where not
/// even that holds, the costliest scenarios that have their [`MIN_PLANNED`] repeats stop first (a window fitted for 64 KiB of a slow cipher costs 30 × a
/// 64-byte one's), so the cheap ones still get theirs; when none can stop, the span keeps the
/// repeats it has. Whether any scenario of the span still needs a planned repeat.
fn keep_to_budget(
    budget: &BudgetClock,
    pending: &mut [bench::Pending],
    span: std::ops::Range<usize>,
) -> bool {
    let end = span.end;
    if !budget.holds_another_round(&pending[span.clone()], &pending[end..]) {
        // Issue 44: every scenario of the span keeps as many repeats as the budget holds for all
        // of them, one level for all — the costliest (a window fitted for 64 KiB of a slow cipher)
        // no longer lose theirs while cheap ones keep every planned repeat.
        if let Some(level) = budget.level(&pending[span.clone()], &pending[end..]) {
            for p in &mut pending[span.clone()] {
                p.cap_planned_repeats_at(level);
            }
        }
    }
    while !budget.holds_another_round(&pending[span.clone()], &pending[end..]) {
        let costliest = span
            .clone()
            .filter(|&i| pending[i].needs_base() && pending[i].runs() >= MIN_PLANNED)
            .max_by(|&a, &b| {
                let cost = |i: usize| budget.expected(pending[i].scenario());
                cost(a).cmp(&cost(b))
            });
        match costliest {
            Some(i) => pending[i].cap_planned_repeats(),
            None => {
                for p in &mut pending[span.clone()] {
                    p.cap_planned_repeats();
                }
                break;
            }
        }
    }
    pending[span].iter().any(bench::Pending::needs_base)
}

/// Where the sweep's time went so far and the host's spread ([`SweepAccount`]).
fn account(doc: &Document, budget: &BudgetClock, host: stats::HostSpread) -> SweepAccount {
    let runs_seconds = match (budget.first_start, budget.last_end) {
        (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
        _ => 0.0,
    };
    // A fold from +0: `sum` of no f64 is -0.0, which printed "-0 %" for a sweep that measured nothing.
    let window_seconds: f64 = doc
        .results
        .iter()
        .flat_map(|r| &r.raw)
        .fold(0.0, |total, r| total + r.window_wall_ns as f64 / 1e9);
    let widths: Vec<f64> = doc
        .results
        .iter()
        .filter(|r| r.measured())
        .filter_map(|r| r.ci95.precision(&r.metrics))
        .collect();
    let mut repeats: Vec<usize> = doc.results.iter().map(|r| r.raw.len()).collect();
    repeats.sort_unstable();
    let (host_spread, host_spread_df) = host.sigma().map_or((None, 0), |(s, df)| (Some(s), df));
    SweepAccount {
        runs: budget.runs as usize,
        runs_seconds,
        window_seconds,
        in_window_share: if runs_seconds > 0.0 {
            window_seconds / runs_seconds
        } else {
            0.0
        },
        host_spread,
        host_spread_df,
        median_half_width: stats::quantile(&widths, 0.5),
        median_repeats: repeats.get(repeats.len() / 2).copied().unwrap_or(0),
    }
}

/// Give `span`'s scenarios the pooled spread of the kept ones and their own runs so far.
fn share_spread(span: &mut [bench::Pending], kept: stats::HostSpread) {
    let mut spread = kept;
    for p in span.iter() {
        spread.add(&p.absolute_values());
    }
    for p in span.iter_mut() {
        p.set_host_spread(spread);
    }
}

/// The scenarios a span of the sweep runs, `pending[range]`, and every scenario's pair group (indexed
/// as `pending`): what [`extra_repeats`] works on.
struct Span<'a> {
    pending: &'a mut [bench::Pending],
    groups: &'a [usize],
    range: std::ops::Range<usize>,
}

/// Extra repeats for the scenarios of `span`: while its share of the budget lasts, rounds
/// of one more run of each scenario whose interval is wider than `target` (the widest first), until
/// every interval meets it or has `--max-repeat` runs. In rounds, like the planned repeats, so a
/// scenario's extra repeats are spread over the time left rather than run back to back in one state
/// of the host. With `--baseline`, a chosen row's whole group runs once more, back to back, so its
/// rows keep equal counts of paired rounds; otherwise the group is the row alone.
fn extra_repeats(
    span: Span<'_>,
    target: f64,
    budget: &mut BudgetClock,
    policy: &SweepPolicy,
    observer: &mut dyn Observer,
    kept: stats::HostSpread,
) -> Result<(), SweepError> {
    let Span {
        pending,
        groups,
        range,
    } = span;
    let (first, end, cancel) = (range.start, range.end, policy.cancel);
    let interleaved = policy.repetition.order == Order::Interleaved;
    let later: Duration = pending[end..]
        .iter()
        .map(|p| {
            let rest = p.planned_repeats().saturating_sub(1) as u32;
            budget.unopened(p.scenario()) + budget.expected(p.scenario()) * rest
        })
        .sum();
    let share = budget.share(end - first, pending.len() - first, later);
    let spent_before = budget.run_time;
    while !cancel.load(Ordering::SeqCst) {
        // Each round moves the pooled spread too: every interval is judged against it anew.
        share_spread(&mut pending[first..end], kept);
        let mut wanting: Vec<(f64, usize)> = (first..end)
            .filter(|&i| pending[i].can_extend())
            .filter_map(|i| Some((pending[i].gap(target)?, i)))
            .filter(|(gap, _)| *gap > 1.0)
            .collect();
        if wanting.is_empty() {
            return Ok(());
        }
        wanting.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut done_groups: Vec<usize> = Vec::new();
        for (_, chosen) in wanting {
            if done_groups.contains(&groups[chosen]) {
                continue;
            }
            done_groups.push(groups[chosen]);
            let mut group: Vec<usize> = (first..end)
                .filter(|&i| groups[i] == groups[chosen] && pending[i].can_extend())
                .collect();
            if pending[chosen].runs() % 2 == 1 {
                group.reverse();
            }
            let cost: Duration = group
                .iter()
                .map(|&i| budget.expected(pending[i].scenario()))
                .sum();
            if let Some(share) = share {
                if budget.run_time - spent_before + cost > share {
                    return Ok(());
                }
            }
            for i in group {
                if cancel.load(Ordering::SeqCst) {
                    return Ok(());
                }
                let p = &mut pending[i];
                if interleaved {
                    observer.starting(p.scenario());
                }
                budget.timed(|| p.step(cancel))?;
            }
        }
    }
    Ok(())
}

/// Each scenario's pair group, as an index: with `paired` (`--baseline`), scenarios of one
/// [`results::baseline::PairGroup`] share one; otherwise each scenario is a group of its own.
fn pair_groups(scenarios: &[Scenario], paired: bool) -> Vec<usize> {
    let mut seen: Vec<crate::results::baseline::PairGroup> = Vec::new();
    scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if !paired {
                return i;
            }
            let group =
                crate::results::baseline::PairGroup::of(&crate::results::baseline::scenario_key(s));
            match seen.iter().position(|g| *g == group) {
                Some(k) => k,
                None => {
                    seen.push(group);
                    seen.len() - 1
                }
            }
        })
        .collect()
}

/// `end` moved on until no pair group of the scenarios `first..end` has a member after it (`groups`
/// as [`pair_groups`] gives them): the span then holds every group it touches whole.
pub fn whole_groups_end(groups: &[usize], first: usize, end: usize) -> usize {
    let mut end = end;
    loop {
        let last = (end..groups.len())
            .filter(|&k| groups[first..end].contains(&groups[k]))
            .max();
        match last {
            Some(k) => end = k + 1,
            None => return end,
        }
    }
}

/// The order in which round `round` (from 0) runs a span's scenarios, `groups` being their pair
/// groups ([`pair_groups`]): group by group in order of first appearance, the members of a group back
/// to back — in scenario order in even rounds and reversed in odd ones (A B C, then C B A), so that
/// a drift through a round favours no member. Scenarios of groups of their own keep scenario order.
/// Indices into the span.
pub fn round_order(groups: &[usize], round: usize) -> Vec<usize> {
    let mut order = Vec::with_capacity(groups.len());
    for (i, g) in groups.iter().enumerate() {
        if groups[..i].contains(g) {
            continue;
        }
        let start = order.len();
        order.extend((i..groups.len()).filter(|&k| groups[k] == *g));
        if round % 2 == 1 {
            order[start..].reverse();
        }
    }
    order
}

/// The energy phase of `run --energy`: after a scenario's repeats, rounds of idle, null-function and
/// MAC windows of one length, each bracketed by two meter readings (docs/methodology.md §9).
pub struct EnergyPhase {
    /// The meter the figures come from (a package, psys or a battery).
    pub meter: Box<dyn Meter>,
    /// Its parts read at the same instants (the core domain), each reported beside it.
    pub parts: Vec<Box<dyn Meter>>,
    pub window: Duration,
    pub rounds: usize,
    /// The meter's step and update interval as [`EnergyPhase::observe_meter`] saw them.
    pub observed: Option<Observed>,
}

impl EnergyPhase {
    /// `rounds` rounds with `meter` and its `parts`, the windows as long as the meter needs.
    pub fn new(meter: Box<dyn Meter>, parts: Vec<Box<dyn Meter>>, rounds: usize) -> EnergyPhase {
        let window = energy::window_length(meter.as_ref());
        EnergyPhase {
            meter,
            parts,
            window,
            rounds: rounds.max(1),
            observed: None,
        }
    }

    /// Read the meter often for one window, with nothing of ours running, to see the step its
    /// readings move by and how often they change (a unit says neither: RAPL's file unit is 1 µJ,
    /// a gauge's 1 µWh, and both move in larger steps). `None` when it never changed.
    pub fn observe_meter(&mut self, cancel: &AtomicBool) -> Result<Option<Observed>, String> {
        // Twice per update, between 1 ms (RAPL) and 100 ms (a gauge), so that no change is missed
        // and the reads cost next to nothing.
        let every = (self.meter.update_interval() / 2)
            .clamp(Duration::from_millis(1), Duration::from_millis(100));
        let start = std::time::Instant::now();
        let mut samples = Vec::new();
        while start.elapsed() < self.window && !cancel.load(Ordering::SeqCst) {
            let joules = self.meter.read_joules()?;
            samples.push((start.elapsed().as_secs_f64(), joules));
            std::thread::sleep(every);
        }
        self.observed = energy::method::observe(&samples);
        Ok(self.observed)
    }

    /// The energy figures of `scenario`, its parts' among them; `None` when cancelled part-way.
    pub fn measure(
        &mut self,
        scenario: &Scenario,
        mean_message_bytes: f64,
        cancel: &AtomicBool,
    ) -> Result<Option<Energy>, String> {
        let mac = self.windowed(scenario.clone());
        let null = Scenario {
            function: mac::null::function(),
            spec: ScenarioSpec {
                tag_len: None,
                ..mac.spec.clone()
            },
        };
        // One list of rounds per meter: the main meter first, then each part.
        let mut rounds: Vec<Vec<Round>> = vec![Vec::new(); 1 + self.parts.len()];
        for _ in 0..self.rounds {
            let idle = self.idle_window(cancel)?;
            let null = self.work_window(&null, mean_message_bytes, cancel)?;
            let mac = self.work_window(&mac, mean_message_bytes, cancel)?;
            let (Some(idle), Some(null), Some(mac)) = (idle, null, mac) else {
                return Ok(None);
            };
            for (i, meter_rounds) in rounds.iter_mut().enumerate() {
                meter_rounds.push(Round {
                    idle: idle[i],
                    null: null[i],
                    mac: mac[i],
                });
            }
        }
        if energy::method::never_moved(&rounds[0]) {
            return Err(format!(
                "{} read the same at both ends of all {} windows ({} s each, idle and busy): it is listed but does not count here ({}), so it gives no figure",
                self.meter.name(),
                3 * self.rounds,
                self.window.as_secs_f64(),
                energy::method::NOT_COUNTING_WHERE
            ));
        }
        let window_s = self.window.as_secs_f64();
        let mut rounds = rounds.into_iter();
        let mut energy = Energy::from_rounds(
            self.meter.name(),
            self.meter.scope(),
            self.meter.resolution_joules(),
            self.observed,
            window_s,
            rounds.next().unwrap_or_default(),
        );
        energy.parts = self
            .parts
            .iter()
            .zip(rounds)
            .map(|(part, r)| {
                let unit = part.resolution_joules();
                Energy::from_rounds(part.name(), part.scope(), unit, None, window_s, r)
            })
            .collect();
        Ok(Some(energy))
    }

    /// `scenario` lasting one window (its message counts cover the whole run, so the placement of
    /// its measurement window does not matter here).
    fn windowed(&self, mut scenario: Scenario) -> Scenario {
        scenario.duration = self.window;
        scenario.window_start = self.window / 5;
        scenario.window_end = self.window * 9 / 10;
        scenario
    }

    /// Every meter's cumulative joules, the main one first.
    fn read_all(&mut self) -> Result<Vec<f64>, String> {
        let mut joules = vec![self.meter.read_joules()?];
        for part in &mut self.parts {
            joules.push(part.read_joules()?);
        }
        Ok(joules)
    }

    /// Each meter's window between `before` and `after`, `seconds` long, with the same work.
    fn windows(
        before: &[f64],
        after: &[f64],
        seconds: f64,
        messages: u64,
        bytes: u64,
    ) -> Vec<Window> {
        before
            .iter()
            .zip(after)
            .map(|(b, a)| Window {
                joules: a - b,
                seconds,
                messages,
                bytes,
            })
            .collect()
    }

    /// Nothing of ours running for one window; `None` when cancelled.
    fn idle_window(&mut self, cancel: &AtomicBool) -> Result<Option<Vec<Window>>, String> {
        let start = std::time::Instant::now();
        let before = self.read_all()?;
        while start.elapsed() < self.window {
            if cancel.load(Ordering::SeqCst) {
                return Ok(None);
            }
            std::thread::sleep((self.window - start.elapsed()).min(Duration::from_millis(100)));
        }
        let after = self.read_all()?;
        let seconds = start.elapsed().as_secs_f64();
        Ok(Some(Self::windows(&before, &after, seconds, 0, 0)))
    }

    /// One run of `scenario` between two readings: its energy, wall time and every message of the run
    /// (set-up and the sessions' warm-up included, as the energy is); `None` when cancelled.
    fn work_window(
        &mut self,
        scenario: &Scenario,
        mean_message_bytes: f64,
        cancel: &AtomicBool,
    ) -> Result<Option<Vec<Window>>, String> {
        let runner = crate::isolate::runner_for(scenario);
        let start = std::time::Instant::now();
        let before = self.read_all()?;
        let raw = runner
            .run(scenario, cancel)
            .map_err(|e| format!("{}: {e}", scenario.function.id()))?;
        let after = self.read_all()?;
        if raw.interrupted {
            return Ok(None);
        }
        let seconds = start.elapsed().as_secs_f64();
        let messages: u64 = raw.threads.iter().map(|t| t.total_messages).sum();
        let bytes = (messages as f64 * mean_message_bytes).round() as u64;
        Ok(Some(Self::windows(
            &before, &after, seconds, messages, bytes,
        )))
    }
}
