//! Studies reproduced on this machine: each study's experiment plan and its claims, as data.
//!
//! A researcher who reads a paper wants to know whether its findings hold on *their* device. A
//! [`Study`] names the paper by title and authors (users know papers, not our ids), lists the runs that
//! reproduce its experiments ([`Step`]: the options of one `macbench run`, a typed value
//! ([`StepRun`]), and its share of the time budget), and lists its claims ([`Claim`]: the claim in our own words, the tolerance, and a check that
//! reads the runs' results), and lists the paper's figures and tables it redraws ([`PaperFigure`]: the
//! paper's number, what is plotted from which step, the claims it decides), which the report draws
//! beside the claims. Adding a claim or a figure is one entry in the study's file.
//!
//! This module only describes and judges: it reads results ([`crate::results::Document`]) and never runs
//! anything, so every check is tested on constructed results. `macbench reproduce` (the CLI) runs the
//! steps through `run`, keeps each step's JSON in the output directory (what finished survives an
//! interruption; `--resume` runs only what is missing), then hands the documents to [`evaluate`].

pub mod deepakumara;
pub mod embedded;
pub mod mac_speeds;
pub mod rashwan;

use crate::mac::{Accel, VerifyMode};
use crate::metrics::WarningCode;
use crate::results::claims::{ClaimRow, ClaimsFile};
use crate::results::options::{DataMode, Dispatch, KeyMode};
use crate::results::{Document, ResultEntry, RunOptions, SizeLabel};
use std::collections::BTreeMap;

/// One study: its plan and its claims.
pub struct Study {
    /// What users type: `rashwan-mobile`.
    pub id: &'static str,
    pub title: &'static str,
    pub authors: &'static str,
    /// The budget without `--budget`, seconds (about ten minutes on 2 cores).
    pub default_budget_s: f64,
    pub steps: &'static [Step],
    pub claims: &'static [Claim],
    /// The paper's figures and tables as this machine's results redraw them, each beside the claims
    /// it decides.
    pub figures: &'static [PaperFigure],
}

/// One `macbench run` of a study's plan.
pub struct Step {
    /// The file stem of its results (`sizes` → `sizes.json`), and how claims name it.
    pub name: &'static str,
    /// What it reproduces, for the plan printed up front.
    pub what: &'static str,
    /// What it runs: `run`'s options, but for the budget and the outputs ([`Step::options`]).
    pub run: StepRun,
    /// Its share of the budget (the shares of a study sum to 1).
    pub share: f64,
    /// The most reference cycles per byte any of its functions is expected to take (the slowest
    /// measured, with a margin): with each scenario's message size it sizes that scenario's window
    /// so that every session processes 1,000 messages in it (`run --slowest`; `sweep::plan_runs`,
    /// which the CLI calls, plans the step's time with it).
    pub max_cycles_per_byte: f64,
}

/// What a step runs, as a value: the options of `run` a study sets (the rest are `run`'s defaults).
/// Not a command line: a step that names an algorithm, backend or size model this build does not
/// know fails `cargo test` (`every_step_of_every_study_is_a_run_this_build_can_plan`), not a
/// reproduction half-way through.
#[derive(Debug, Clone, Copy)]
pub struct StepRun {
    /// Algorithms, as `--alg` takes them (a list, or `paper`).
    pub alg: &'static str,
    pub backend: Option<&'static str>,
    pub accel: &'static [Accel],
    /// Sizes, as `--sizes` takes them (numbers or size models).
    pub sizes: &'static str,
    pub dispatch: &'static [Dispatch],
    pub sessions: usize,
    pub cores: StepCores,
    pub data: DataMode,
    pub keys: KeyMode,
    pub verify: VerifyMode,
    pub rekey_every: Option<u64>,
}

/// The cores a step runs on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepCores {
    /// The last online CPU, so a run on one core stays off CPU 0, where interrupts land.
    OneCore,
    /// Every online CPU.
    All,
}

impl StepRun {
    /// The paper's nine functions, one session on one core, `run`'s defaults otherwise: a study's
    /// steps say how they differ from it.
    pub const ONE_SESSION: StepRun = StepRun {
        alg: "paper",
        backend: None,
        accel: &[Accel::Hw],
        sizes: "default",
        dispatch: &[Dispatch::Single],
        sessions: 1,
        cores: StepCores::OneCore,
        data: DataMode::Unique,
        keys: KeyMode::PerSession,
        verify: VerifyMode::None,
        rekey_every: None,
    };
}

impl Step {
    /// The options of this step's run on this machine, "one core" being `one_core`; the caller sets
    /// the budget's duration and the outputs.
    pub fn options(&self, one_core: usize) -> RunOptions {
        let run = &self.run;
        let cores = match run.cores {
            StepCores::OneCore => vec![one_core],
            StepCores::All => crate::system::online_cpus(),
        };
        RunOptions {
            alg: run.alg.to_string(),
            backend: run.backend.map(str::to_string),
            accel: run.accel.to_vec(),
            sizes: run.sizes.to_string(),
            sessions: run.sessions,
            cores,
            data: run.data,
            keys: run.keys,
            verify: run.verify,
            rekey_every: run.rekey_every,
            dispatch: run.dispatch.to_vec(),
            // Each scenario's window holds 1,000 messages of its own size at the step's slowest
            // cost: no result `window-too-short`, and no 1 s runs of 16-byte messages.
            timing: crate::results::options::Timing {
                slowest: Some(self.max_cycles_per_byte),
                ..Default::default()
            },
            ..RunOptions::default()
        }
    }
}

/// The shortest budget a step is given, seconds: below this its runs are too short to measure.
pub const MIN_STEP_BUDGET_S: f64 = 5.0;

/// A claim of the study and how this machine tests it.
pub struct Claim {
    pub id: &'static str,
    /// The claim, in our own words.
    pub text: &'static str,
    /// How far the measurement may be from the claim and still hold (its meaning is the check's,
    /// said in `text`).
    pub tolerance: f64,
    pub check: fn(&Evidence, f64) -> Verdict,
}

/// The scenario a claim reads in a step: the parts of its scenario key a claim names.
#[derive(Debug, Clone, PartialEq)]
pub struct Point<'a> {
    pub algorithm: &'a str,
    pub accel: &'a str,
    pub size: SizeLabel,
    /// The dispatch mode as results name it: `single`, `burst:16`, `inflight:16`.
    pub dispatch: &'a str,
}

impl<'a> Point<'a> {
    /// `algorithm` at `accel` and `size`, one message at a time.
    pub fn new(algorithm: &'a str, accel: &'a str, size: SizeLabel) -> Point<'a> {
        Point {
            algorithm,
            accel,
            size,
            dispatch: "single",
        }
    }

    /// The same point, dispatched as `dispatch`.
    pub fn dispatched(self, dispatch: &'a str) -> Point<'a> {
        Point { dispatch, ..self }
    }
}

/// A figure or table of the paper, redrawn from one step's results: declared as data beside the
/// claims it decides, the way claims are, so the report can lay it beside the paper's and a test can
/// check it reads the step it names. The report (`crate::report::paper`) draws it.
pub struct PaperFigure {
    /// Its PNG's file stem and its anchor in the report, after the paper's numbering:
    /// `fig04-absolute-hw`.
    pub id: &'static str,
    /// The paper's numbering of what it redraws: `Figs. 4–5`, `Table 1`.
    pub paper: &'static str,
    /// What it shows, after the paper's caption.
    pub title: &'static str,
    /// What is plotted, from which step.
    pub plot: Plot,
    /// The claims it decides, by id.
    pub decides: &'static [&'static str],
    /// How this machine's figure differs from the paper's (its set-up, its units), said under it;
    /// empty when it does not.
    pub differs: &'static str,
}

/// What a [`PaperFigure`] draws.
pub enum Plot {
    /// A line per function (and per dispatch mode, where the step has several) against message size:
    /// `metric` of `functions`' fixed-size results at `accel` in `step`, in the order given (the
    /// paper's legend order).
    AgainstSize {
        step: &'static str,
        metric: Metric,
        accel: &'static str,
        functions: &'static [&'static str],
    },
    /// Bars per thread of one scenario of `step`: each session's wall-clock, absolute and apparent
    /// cycles/byte. `min_cpus`: the online CPUs it needs to mean what the paper's does (two for
    /// "all cores", which on one CPU is the one-core figure again).
    PerThread {
        step: &'static str,
        algorithm: &'static str,
        accel: &'static str,
        size: u32,
        min_cpus: usize,
    },
    /// A table the study computes from the results of `steps` (none: from the paper's own numbers).
    Table {
        steps: &'static [&'static str],
        build: fn(&Evidence) -> Result<Table, String>,
    },
}

impl Plot {
    /// The steps it reads.
    pub fn steps(&self) -> Vec<&'static str> {
        match self {
            Plot::AgainstSize { step, .. } | Plot::PerThread { step, .. } => vec![step],
            Plot::Table { steps, .. } => steps.to_vec(),
        }
    }
}

/// A metric a [`Plot::AgainstSize`] draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Absolute processing power: CPU time of all sessions per byte.
    AbsoluteCyclesPerByte,
    /// Absolute cycles per message: the cost of a packet.
    AbsoluteCyclesPerMessage,
}

impl Metric {
    /// Its value in a result (the median over repeats).
    pub fn of(self, r: &ResultEntry) -> Option<f64> {
        match self {
            Metric::AbsoluteCyclesPerByte => r.metrics.absolute_cycles_per_byte,
            Metric::AbsoluteCyclesPerMessage => r.metrics.absolute_cycles_per_message,
        }
    }

    /// Its axis label.
    pub fn axis(self) -> &'static str {
        match self {
            Metric::AbsoluteCyclesPerByte => "absolute processing power (cycles/byte, CPU time)",
            Metric::AbsoluteCyclesPerMessage => "absolute cycles per packet (CPU time)",
        }
    }
}

/// A table of a paper redrawn: a header row and rows of text cells, numbers already rounded.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// What a check concludes, with the numbers it rests on or why it cannot say.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Holds(String),
    DoesNotHold(String),
    /// The measurement contradicts the claim, but the results it rests on carry validity warnings
    /// (noisy, not steady, cores taken by others) that could explain that: not a finding either way.
    Unsure(String),
    CannotTest(String),
}

impl Verdict {
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Holds(_) => "holds",
            Verdict::DoesNotHold(_) => "does not hold",
            Verdict::Unsure(_) => "unsure",
            Verdict::CannotTest(_) => "cannot be tested here",
        }
    }

    /// The verdict as the claims file writes it.
    pub fn code(&self) -> &'static str {
        match self {
            Verdict::Holds(_) => "holds",
            Verdict::DoesNotHold(_) => "does-not-hold",
            Verdict::Unsure(_) => "unsure",
            Verdict::CannotTest(_) => "cannot-test",
        }
    }

    pub fn detail(&self) -> &str {
        match self {
            Verdict::Holds(d)
            | Verdict::DoesNotHold(d)
            | Verdict::Unsure(d)
            | Verdict::CannotTest(d) => d,
        }
    }

    /// `Holds` when `ok`, else `DoesNotHold`, with the same numbers.
    pub fn from(ok: bool, detail: String) -> Verdict {
        if ok {
            Verdict::Holds(detail)
        } else {
            Verdict::DoesNotHold(detail)
        }
    }
}

/// One claim's outcome.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub id: &'static str,
    pub claim: &'static str,
    pub tolerance: f64,
    pub verdict: Verdict,
}

/// What the checks read: each step's results document, and the machine facts a run does not record.
#[derive(Default)]
pub struct Evidence {
    pub steps: BTreeMap<String, Document>,
    /// Each online CPU's SMT siblings (itself included), as the kernel lists them; empty if unknown.
    pub smt_siblings: Vec<Vec<usize>>,
    /// The steps a check has read results of, so [`evaluate`] can tell whether they were disturbed.
    pub(crate) read: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

/// How far a non-fatal validity warning could plausibly move a result's cost beyond its 95 %
/// interval: the factor (×/÷) its interval is widened by on each side when a verdict is weighed
/// ([`evaluate`]; docs/reproduce.md "Verdicts"). `noisy` says the interval is wide, and the interval
/// already is: it stands as it is. A window that was not steady, a core set others took time from, a
/// window too short for every session's 1,000 messages: each could have moved the cost by more than
/// the repeats saw, and on the development VM such results sat up to 1.46× from undisturbed ones
/// (issue 33), so ×/÷ 1.5. `thread-interval` concerns one session's sampled interval, not the cost.
/// A fatal warning fails its result, which is then no evidence at all.
pub fn plausible_factor(code: WarningCode) -> f64 {
    match code {
        WarningCode::Noisy | WarningCode::ThreadInterval => 1.0,
        WarningCode::NotSteady | WarningCode::OverUtilised | WarningCode::WindowTooShort => 1.5,
        // A code this build does not know: as much as the disturbances it knows.
        _ => 1.5,
    }
}

impl Evidence {
    /// The usable results of a step: not failed, with a measured absolute cycles/byte.
    pub fn results(&self, step: &str) -> Vec<&ResultEntry> {
        self.read.borrow_mut().insert(step.to_string());
        self.steps
            .get(step)
            .map(|d| {
                d.results
                    .iter()
                    .filter(|r| r.measured() && r.metrics.absolute_cycles_per_byte.is_some())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The result of `algorithm` at `accel` and fixed `size` in `step`, one message at a time, if
    /// measured ([`Evidence::find_point`]).
    pub fn find(
        &self,
        step: &str,
        algorithm: &str,
        accel: &str,
        size: u64,
    ) -> Option<&ResultEntry> {
        let size = SizeLabel::Bytes(u32::try_from(size).ok()?);
        self.find_point(step, &Point::new(algorithm, accel, size))
    }

    /// The result of `step` at `point`, matched on its scenario key ([`ResultEntry::key`]): function,
    /// size (bytes or a size model, never a model whose mean happens to equal a size), dispatch mode
    /// and tag length as the point names them. The backend and the session count are the step's own:
    /// a step runs one backend per algorithm and one session count, so where it holds results of
    /// several for the point, nothing says which one the claim means and none is read.
    pub fn find_point(&self, step: &str, point: &Point) -> Option<&ResultEntry> {
        let mut found = self.results(step).into_iter().filter(|r| {
            let key = r.key();
            key.function.algorithm == point.algorithm
                && key.function.accel == point.accel
                && key.size == point.size
                && key.dispatch.to_string() == point.dispatch
                && key.tag_len.is_none()
        });
        let first = found.next()?;
        found.all(|r| r.key() == first.key()).then_some(first)
    }
    /// Absolute cycles/byte of that result.
    pub fn absolute(&self, step: &str, algorithm: &str, accel: &str, size: u64) -> Option<f64> {
        self.find(step, algorithm, accel, size)?
            .metrics
            .absolute_cycles_per_byte
    }

    /// Apparent cycles/byte of that result.
    pub fn apparent(&self, step: &str, algorithm: &str, accel: &str, size: u64) -> Option<f64> {
        self.find(step, algorithm, accel, size)?
            .metrics
            .apparent_cycles_per_byte
    }

    /// The validity warnings (all non-fatal: a fatal one fails its result) among the usable results of
    /// every step, as a sentence for the claims table, or `None` when no result carries one. Verdicts
    /// rest on these results, so the reader is told what disturbed them.
    pub fn caveat(&self) -> Option<String> {
        let every_step: Vec<String> = self.steps.keys().cloned().collect();
        self.flags_of(&every_step).map(|f| {
            format!(
                "{} of the {} results the claims read carry validity warnings ({}): the verdicts rest on them; see `warnings` in the steps' JSON, and rerun on a quiet machine for firmer ones",
                f.flagged, f.used, f.codes
            )
        })
    }

    /// Why a check has nothing to read: the step missing, or none of its results usable.
    pub fn missing(&self, step: &str) -> Verdict {
        Verdict::CannotTest(match self.steps.get(step) {
            None => format!("the `{step}` runs are missing"),
            Some(_) => format!("no usable result in the `{step}` runs (all failed or unmeasured)"),
        })
    }

    /// A verdict on one ratio per function read from `step`: holds when `ok` holds for every one;
    /// the detail is `what`, then each name with its ratio and `unit`. Why none can be read when
    /// there are none.
    pub fn judge_ratios(
        &self,
        step: &str,
        ratios: &[(impl std::fmt::Display, f64)],
        ok: impl Fn(f64) -> bool,
        what: &str,
        unit: &str,
    ) -> Verdict {
        if ratios.is_empty() {
            return self.missing(step);
        }
        let each: Vec<String> = ratios
            .iter()
            .map(|(name, r)| format!("{name} {}{unit}", num(*r)))
            .collect();
        Verdict::from(
            ratios.iter().all(|(_, r)| ok(*r)),
            format!("{what}: {}", each.join(", ")),
        )
    }
}

/// Every study macbench reproduces, in the order `reproduce --list` shows them.
pub static STUDIES: &[&Study] = &[
    &rashwan::STUDY,
    &deepakumara::STUDY,
    &mac_speeds::STUDY,
    &embedded::STUDY,
];

/// The study called `id`.
pub fn study(id: &str) -> Result<&'static Study, String> {
    if let Some(s) = STUDIES.iter().find(|s| s.id == id) {
        return Ok(s);
    }
    let known: Vec<&str> = STUDIES.iter().map(|s| s.id).collect();
    Err(format!("unknown study {id:?}; known: {}", known.join(", ")))
}

/// Each step's budget in seconds for a total of `budget_s`, given each step's minimum (`None`: a
/// step that does not run, kept or refused, which gets 0): `max(minimum, λ · share)` with λ such
/// that they add up to `budget_s`, so a step gets its share where that holds its minimum and the
/// others share what is left in proportion. A budget below the minimums' sum (the CLI refuses
/// one) gives each step its minimum.
pub fn step_budgets(study: &Study, budget_s: f64, minimums: &[Option<f64>]) -> Vec<f64> {
    let budgets = |lambda: f64| -> Vec<f64> {
        study
            .steps
            .iter()
            .zip(minimums)
            .map(|(s, m)| m.map_or(0.0, |m| m.max(lambda * s.share)))
            .collect()
    };
    let floor: f64 = minimums.iter().flatten().sum();
    if budget_s <= floor {
        return budgets(0.0);
    }
    // Σ max(mᵢ, λ sᵢ) grows with λ; at λ = budget / (smallest running share) it is above budget.
    let smallest = study
        .steps
        .iter()
        .zip(minimums)
        .filter(|(_, m)| m.is_some())
        .map(|(s, _)| s.share)
        .fold(f64::INFINITY, f64::min);
    let (mut low, mut high) = (0.0, budget_s / smallest.max(1e-9));
    for _ in 0..100 {
        let mid = (low + high) / 2.0;
        if budgets(mid).iter().sum::<f64>() > budget_s {
            high = mid;
        } else {
            low = mid;
        }
    }
    budgets(low)
}

/// Every claim of `study` judged on `evidence`, weighing the margin: a claim is `unsure` only when
/// the values it reads, anywhere within their 95 % intervals widened by what their warnings could
/// plausibly do ([`plausible_factor`]), could give the other verdict; otherwise it holds or does not
/// hold, and the verdict lists the warnings it stood against. (Before, any warning among the results
/// made a contradicted claim `unsure`: "HMAC-MD5 is the fastest software-only" was unsure on a 20×
/// margin because 41 of 126 results carried a warning.)
///
/// Checks are opaque functions, so the margin is probed by judging the claim again on the results
/// moved to the ends of their widened intervals, each value's absolute and apparent costs apart:
/// every value at its low end, every value at its high end; each step's values at one end and the
/// rest at the other; each value at one end and the rest at the other. These are the assignments
/// that can turn a ranking (one against the rest), a ratio within a step or between two steps, and
/// a bound on every value; a verdict no assignment turns stands.
pub fn evaluate(study: &Study, evidence: &Evidence) -> Vec<Outcome> {
    let mut moved = Moved::new(evidence);
    study
        .claims
        .iter()
        .map(|c| {
            evidence.read.borrow_mut().clear();
            let nominal = (c.check)(evidence, c.tolerance);
            let read: Vec<String> = evidence.read.borrow().iter().cloned().collect();
            // Counters the fake engine made up test nothing (issue 47 N29: the claims "held" on them).
            let fake = read
                .iter()
                .find(|step| evidence.steps.get(*step).is_some_and(|d| d.fake_engine.is_some()));
            let verdict = match nominal {
                Verdict::Holds(_) | Verdict::DoesNotHold(_) if fake.is_some() => {
                    Verdict::CannotTest(format!(
                        "step {}'s results were made up by the fake engine (MACBENCH_FAKE_ENGINE), not measured",
                        fake.map_or("", |s| s.as_str())
                    ))
                }
                Verdict::Holds(_) | Verdict::DoesNotHold(_) => {
                    let flags = evidence.flags_of(&read);
                    let turns = moved.turns(c, &nominal, &read);
                    weighed(nominal, turns, flags)
                }
                other => other,
            };
            Outcome {
                id: c.id,
                claim: c.text,
                tolerance: c.tolerance,
                verdict,
            }
        })
        .collect()
}

/// The verdict once weighed: `unsure` when the values within their widened intervals can turn it,
/// else as it was; either way with the warnings of the results it read.
fn weighed(nominal: Verdict, turns: bool, flags: Option<Flags>) -> Verdict {
    let detail = nominal.detail().to_string();
    match (turns, flags) {
        (true, Some(f)) => Verdict::Unsure(format!(
            "{detail}; but {} of the {} results it reads carry validity warnings ({}), and within their 95 % intervals widened for them the verdict could go the other way: rerun on a quiet machine",
            f.flagged, f.used, f.codes
        )),
        (true, None) => Verdict::Unsure(format!(
            "{detail}; but within the 95 % intervals of the results it reads the verdict could go the other way: more repeats would decide it"
        )),
        (false, Some(f)) => {
            let detail = format!(
                "{detail}; {} of the {} results it reads carry validity warnings ({}), too few or too small to change the verdict within their 95 % intervals widened for them",
                f.flagged, f.used, f.codes
            );
            match nominal {
                Verdict::Holds(_) => Verdict::Holds(detail),
                _ => Verdict::DoesNotHold(detail),
            }
        }
        (false, None) => nominal,
    }
}

/// The warnings among the usable results a check read: how many results carry one, of how many,
/// and the codes with their counts.
struct Flags {
    flagged: usize,
    used: usize,
    codes: String,
}

impl Evidence {
    /// Evidence of these steps.
    pub fn new(steps: BTreeMap<String, Document>, smt_siblings: Vec<Vec<usize>>) -> Evidence {
        Evidence {
            steps,
            smt_siblings,
            read: Default::default(),
        }
    }

    /// The warnings among the usable results of `steps`; `None` when none carries one.
    fn flags_of(&self, steps: &[String]) -> Option<Flags> {
        let (mut used, mut flagged) = (0, 0);
        let mut codes: BTreeMap<&'static str, usize> = BTreeMap::new();
        for step in steps {
            for r in self.results(step) {
                used += 1;
                flagged += usize::from(!r.warnings.is_empty());
                // Results per code: 97 sessions' `window-too-short` in one result is one result.
                let mine: std::collections::BTreeSet<&'static str> =
                    r.warnings.iter().map(|w| w.code.as_str()).collect();
                for code in mine {
                    *codes.entry(code).or_default() += 1;
                }
            }
        }
        (flagged > 0).then(|| Flags {
            flagged,
            used,
            codes: codes
                .iter()
                .map(|(c, n)| format!("{c} ×{n}"))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// Which of a result's costs a probe moves: the CPU time's (absolute) or the wall clock's
/// (apparent, per-thread apparent included). Apart, so a ratio of the two can be turned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cost {
    Absolute,
    Apparent,
}

/// One value a probe can move: a cost of one usable result, with the factors that take it to the
/// low and the high end of its widened interval.
#[derive(Debug, Clone, Copy)]
struct Unit {
    step: usize,
    result: usize,
    cost: Cost,
    low: f64,
    high: f64,
}

/// Where a probe puts a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Low,
    High,
}

/// Where a probe puts the units: all at one end, or one step's or one unit's at one end and the
/// rest at the other.
#[derive(Debug, Clone, Copy)]
enum Probe {
    All(End),
    Step(usize, End),
    Unit(usize, End),
}

impl Probe {
    /// The end of unit `u`, the `i`-th a claim's probes move.
    fn end(self, i: usize, u: &Unit) -> End {
        let (chosen, end) = match self {
            Probe::All(end) => return end,
            Probe::Step(step, end) => (u.step == step, end),
            Probe::Unit(k, end) => (i == k, end),
        };
        match (chosen, end) {
            (true, end) => end,
            (false, End::Low) => End::High,
            (false, End::High) => End::Low,
        }
    }
}

/// A copy of the evidence whose costs the probes move (without raw counters, which no check
/// reads), and the units each step offers.
struct Moved {
    work: Evidence,
    names: Vec<String>,
    nominal: Vec<Vec<crate::metrics::Metrics>>,
    units: Vec<Unit>,
}

impl Moved {
    fn new(evidence: &Evidence) -> Moved {
        let mut steps = BTreeMap::new();
        let (mut names, mut nominal, mut units) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (name, doc)) in evidence.steps.iter().enumerate() {
            let mut doc = doc.clone();
            for r in &mut doc.results {
                r.raw.clear();
            }
            for (j, r) in doc.results.iter().enumerate() {
                if !r.measured() || r.metrics.absolute_cycles_per_byte.is_none() {
                    continue;
                }
                for cost in [Cost::Absolute, Cost::Apparent] {
                    if let Some((low, high)) = widened(r, cost) {
                        units.push(Unit {
                            step: i,
                            result: j,
                            cost,
                            low,
                            high,
                        });
                    }
                }
            }
            names.push(name.clone());
            nominal.push(doc.results.iter().map(|r| r.metrics.clone()).collect());
            steps.insert(name.clone(), doc);
        }
        Moved {
            work: Evidence::new(steps, evidence.smt_siblings.clone()),
            names,
            nominal,
            units,
        }
    }

    /// Whether some probe within the widened intervals of the steps `read` turns `nominal`.
    fn turns(&mut self, claim: &Claim, nominal: &Verdict, read: &[String]) -> bool {
        let units: Vec<Unit> = self
            .units
            .iter()
            .filter(|u| read.contains(&self.names[u.step]))
            .copied()
            .collect();
        if units.is_empty() {
            return false;
        }
        let steps: std::collections::BTreeSet<usize> = units.iter().map(|u| u.step).collect();
        let mut probes = vec![Probe::All(End::Low), Probe::All(End::High)];
        for end in [End::Low, End::High] {
            probes.extend(steps.iter().map(|&s| Probe::Step(s, end)));
            probes.extend((0..units.len()).map(|k| Probe::Unit(k, end)));
        }
        let holds = matches!(nominal, Verdict::Holds(_));
        let mut turned = false;
        for probe in &probes {
            self.restore();
            for (i, u) in units.iter().enumerate() {
                let factor = match probe.end(i, u) {
                    End::Low => u.low,
                    End::High => u.high,
                };
                let name = &self.names[u.step];
                if let Some(doc) = self.work.steps.get_mut(name) {
                    scale(&mut doc.results[u.result].metrics, u.cost, factor);
                }
            }
            let verdict = (claim.check)(&self.work, claim.tolerance);
            let other = match verdict {
                Verdict::Holds(_) => !holds,
                Verdict::DoesNotHold(_) => holds,
                _ => false,
            };
            if other {
                turned = true;
                break;
            }
        }
        self.restore();
        turned
    }

    /// Every cost back to its measured value.
    fn restore(&mut self) {
        for (name, nominal) in self.names.iter().zip(&self.nominal) {
            if let Some(doc) = self.work.steps.get_mut(name) {
                for (r, m) in doc.results.iter_mut().zip(nominal) {
                    r.metrics = m.clone();
                }
            }
        }
    }
}

/// The factors that take a result's `cost` to the low and high ends of its 95 % interval (1 where
/// it has none), widened ×/÷ by the largest [`plausible_factor`] of its warnings; `None` when both
/// are 1 (nothing to move).
fn widened(r: &ResultEntry, cost: Cost) -> Option<(f64, f64)> {
    let (value, interval) = match cost {
        Cost::Absolute => (
            r.metrics.absolute_cycles_per_byte,
            r.ci95.absolute_cycles_per_byte,
        ),
        Cost::Apparent => (
            r.metrics.apparent_cycles_per_byte,
            r.ci95.apparent_cycles_per_byte,
        ),
    };
    let (low, high) = match (value, interval) {
        (Some(v), Some(i)) if v > 0.0 && i.low.is_finite() && i.high.is_finite() => {
            ((i.low / v).clamp(0.0, 1.0), (i.high / v).max(1.0))
        }
        _ => (1.0, 1.0),
    };
    let factor = r
        .warnings
        .iter()
        .map(|w| plausible_factor(w.code))
        .fold(1.0, f64::max);
    let (low, high) = (low / factor, high * factor);
    (low < 1.0 || high > 1.0).then_some((low, high))
}

/// `m`'s `cost` metrics times `factor`.
fn scale(m: &mut crate::metrics::Metrics, cost: Cost, factor: f64) {
    let fields = match cost {
        Cost::Absolute => vec![
            &mut m.absolute_cycles_per_byte,
            &mut m.absolute_cycles_per_message,
        ],
        Cost::Apparent => vec![
            &mut m.apparent_cycles_per_byte,
            &mut m.apparent_cycles_per_message,
            &mut m.min_thread_apparent_cycles_per_byte,
            &mut m.max_thread_apparent_cycles_per_byte,
        ],
    };
    for value in fields.into_iter().flatten() {
        *value *= factor;
    }
}

/// The claims file of a reproduction (`claims.json`): the study, the host, every outcome, the caveat.
pub fn claims_file(study: &Study, evidence: &Evidence, outcomes: &[Outcome]) -> ClaimsFile {
    ClaimsFile {
        study: study.id.to_string(),
        title: study.title.to_string(),
        authors: study.authors.to_string(),
        host: evidence
            .steps
            .values()
            .next()
            .map(|d| d.host_label().to_string())
            .unwrap_or_default(),
        claims: outcomes
            .iter()
            .map(|o| ClaimRow {
                id: o.id.to_string(),
                claim: o.claim.to_string(),
                tolerance: o.tolerance,
                verdict: o.verdict.code().to_string(),
                detail: o.verdict.detail().to_string(),
            })
            .collect(),
        caveat: evidence.caveat(),
    }
}

/// The claims table as Markdown (one row a claim), for the terminal and `claims.md`.
pub fn claims_markdown(study: &Study, evidence: &Evidence, outcomes: &[Outcome]) -> String {
    let mut out = format!(
        "# {} — {}\n\n| claim | verdict | on this machine |\n|---|---|---|\n",
        study.authors, study.title
    );
    for o in outcomes {
        out.push_str(&format!(
            "| {} | **{}** | {} |\n",
            o.claim.replace('|', "\\|"),
            o.verdict.label(),
            o.verdict.detail().replace('|', "\\|")
        ));
    }
    let count = |label: &str| {
        outcomes
            .iter()
            .filter(|o| o.verdict.label() == label)
            .count()
    };
    out.push_str(&format!(
        "\n{} hold, {} do not hold, {} unsure, {} cannot be tested here.\n",
        count("holds"),
        count("does not hold"),
        count("unsure"),
        count("cannot be tested here")
    ));
    if let Some(caveat) = evidence.caveat() {
        out.push_str(&format!("\n{caveat}.\n"));
    }
    out
}

/// `x` with two significant decimals, for the numbers in a verdict.
pub fn num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}
