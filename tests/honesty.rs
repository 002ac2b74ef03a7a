//! Honesty of the reported intervals, on a fake engine (STYLE 16): known costs, slowed now and then
//! the way a shared host slows a guest, reduced by the same code as a real sweep
//! (`bench::reduce_runs`), judged by the same gate (`report::diff::regressions`).
//!
//! The fake host: a core whose cost per byte is `TRUE_COST` while calm and 1.1–1.5 × that while busy;
//! it is busy 30 % of the time, in stretches of about a second (exponential dwell times, so slow-downs
//! are one-sided and autocorrelated, as docs/methodology.md "What the wander is" measured). Each
//! window's 10 ms ticks carry ±1 % of jitter on top. Runs of a scenario are placed on the host's
//! timeline as a sweep places them: its repeats spread over the whole sweep (one pass of every
//! scenario, then the next), about 0.09 s a run.
//!
//! What is checked: the 95 % interval of the median holds the typical cost (the median of what a
//! window costs over time: `TRUE_COST`, since the host is calm most of the time) at least at its
//! nominal rate; and the regression gate fails at most 5 % of identical pairs of whole sweeps. The
//! same fake with repeats back to back (a scenario's runs within a second) shows why they are
//! spread: there the intervals miss far more often than 5 %.

use macbench::bench::{self, AutoPolicy};
use macbench::engine::{clock::ClockInfo, Disturbance, RawRun, Sample, Series, ThreadCounters};
use macbench::engine::{DataMode, SizeSource};
use macbench::report::diff;
use macbench::results::{Document, SCHEMA_VERSION};
use macbench::stats::HostSpread;
use std::time::Duration;

/// Cycles per byte while the host is calm; the reference rate is 1 GHz, so a cycle is a nanosecond.
const TRUE_COST: f64 = 2.0;
const F: f64 = 1e9;
const TICK_NS: u64 = 10_000_000;
/// How long a run is, where its window lies, its tick and the set-up between runs.
#[derive(Clone, Copy)]
struct RunModel {
    run_ns: u64,
    tick_ns: u64,
    window: (u64, u64),
    setup_ns: u64,
}

/// The runs before issue 44: 80 ms, the window 16..72 ms (20 %..90 %), 10 ms ticks, 12 ms of set-up.
const OLD_RUNS: RunModel = RunModel {
    run_ns: 80_000_000,
    tick_ns: TICK_NS,
    window: (16_000_000, 72_000_000),
    setup_ns: 12_000_000,
};
/// The planner's runs now: ~22 ms, the window from the first tick to the end, 2.5 ms ticks (an
/// eighth of the window), ~1.5 ms between runs.
const SHORT_RUNS: RunModel = RunModel {
    run_ns: 22_500_000,
    tick_ns: 2_500_000,
    window: (2_500_000, 22_500_000),
    setup_ns: 1_500_000,
};

/// SplitMix64: draws fixed by the seed alone.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-300), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// The host: the slow-down factor over time, a two-state process (calm 1.0; busy 1.1–1.5, drawn anew
/// for each busy stretch), busy 30 % of the time in stretches of 1 s on average.
struct Host {
    rng: Rng,
    /// (start ns, factor) of each stretch, in order.
    stretches: Vec<(u64, f64)>,
    /// Mean length of a busy stretch, seconds (calm ones are 7/3 as long: busy 30 % of the time).
    busy_mean_s: f64,
}

impl Host {
    const BUSY_MEAN_S: f64 = 1.0;

    fn new(seed: u64) -> Host {
        Host::with_stretches(seed, Self::BUSY_MEAN_S)
    }

    fn with_stretches(seed: u64, busy_mean_s: f64) -> Host {
        let mut rng = Rng(seed);
        let busy = rng.uniform() < 0.3;
        let first = if busy { 1.1 + 0.4 * rng.uniform() } else { 1.0 };
        Host {
            rng,
            stretches: vec![(0, first)],
            busy_mean_s,
        }
    }

    /// The factor at `t` ns (the timeline is extended as far as asked).
    fn factor(&mut self, t: u64) -> f64 {
        while self.stretches.last().map(|s| s.0).unwrap_or(0) <= t {
            let (start, factor) = *self
                .stretches
                .last()
                .expect("the timeline starts with a stretch");
            let was_busy = factor > 1.0;
            let mean = if was_busy {
                self.busy_mean_s
            } else {
                self.busy_mean_s * 0.7 / 0.3
            };
            let next = start + (self.rng.exponential(mean) * 1e9) as u64 + 1;
            let factor = if was_busy {
                1.0
            } else {
                1.1 + 0.4 * self.rng.uniform()
            };
            self.stretches.push((next, factor));
        }
        let i = self.stretches.partition_point(|s| s.0 <= t) - 1;
        self.stretches[i].1
    }
}

/// One run of one session starting at `start` ns on `host`'s timeline: the coordinator's tick series
/// and the window's marks, as the engine records them, with CPU time passing at wall rate.
fn fake_run(
    host: &mut Host,
    start: u64,
    rng: &mut Rng,
    model: RunModel,
    sensitivity: f64,
) -> RawRun {
    let ticks = model.run_ns / model.tick_ns;
    let mut series = Series {
        tick_ns: model.tick_ns,
        ..Series::default()
    };
    let (mut bytes, mut t) = (0u64, 0u64);
    let push = |t: u64, bytes: u64, series: &mut Series| {
        series.t_ns.push(t);
        series.bytes.push(bytes);
        series.messages.push(bytes / 64);
        series.cpu_ns.push(t);
    };
    push(0, 0, &mut series);
    for _ in 0..ticks {
        let factor = host.factor(start + t).powf(sensitivity);
        let cost = TRUE_COST * factor * (1.0 + 0.01 * rng.normal());
        t += model.tick_ns;
        bytes += (model.tick_ns as f64 / cost) as u64;
        push(t, bytes, &mut series);
    }
    let (first, last) = (
        (model.window.0 / model.tick_ns) as usize,
        (model.window.1 / model.tick_ns) as usize,
    );
    series.window_first = first;
    series.window_last = last;
    let mid = (first + last) / 2;
    // On the host's timeline, as a real run's marks are on the monotonic clock.
    let sample = |i: usize| Sample {
        wall_ns: start + series.t_ns[i],
        cpu_ns: series.cpu_ns[i],
        messages: series.messages[i],
        bytes: series.bytes[i],
        hw_cycles: None,
        cpu: Some(0),
    };
    let thread = ThreadCounters {
        session: 0,
        allowed_cpus: vec![0],
        window_start: sample(first),
        window_mid: sample(mid),
        window_end: sample(last),
        total_messages: series.messages[ticks as usize],
        ..ThreadCounters::default()
    };
    // A host that slows the core's clock itself: the chain before and after the run reads it.
    let mut core_hz = |t: u64| Some(3e9 / host.factor(start + t));
    RawRun {
        window_wall_ns: series.t_ns[last] - series.t_ns[first],
        first_half_wall_ns: series.t_ns[mid] - series.t_ns[first],
        threads: vec![thread],
        series,
        disturbance: Some(Disturbance {
            core_hz_before: core_hz(0),
            core_hz_after: core_hz(model.run_ns),
            steal_ns: Some(0),
            ..Disturbance::default()
        }),
        ..RawRun::default()
    }
}

fn clock() -> ClockInfo {
    ClockInfo {
        reference_hz: F,
        timer_resolution_ns: 1,
        ..ClockInfo::default()
    }
}

/// How a sweep places a scenario's repeats on the timeline.
#[derive(Clone, Copy)]
enum Placement {
    /// One pass over every scenario, then the next pass: a scenario's repeats a sweep's pass apart.
    Spread,
    /// Each scenario's repeats back to back.
    BackToBack,
}

/// A whole sweep of `cells` scenarios × `repeats` on a host of its own (`seed`): the results
/// document, as `run` would write it.
fn fake_sweep(cells: usize, repeats: usize, placement: Placement, seed: u64) -> Document {
    fake_sweep_on(
        Host::new(seed),
        cells,
        repeats,
        placement,
        seed,
        OLD_RUNS,
        0.0,
    )
}

/// [`fake_sweep`] on `host` with runs of `model`; with `spread` > 0 each cell feels the host's
/// factor to the power 1 ± `spread` (drawn per cell), as functions contend for different units.
fn fake_sweep_on(
    mut host: Host,
    cells: usize,
    repeats: usize,
    placement: Placement,
    seed: u64,
    model: RunModel,
    spread: f64,
) -> Document {
    let mut rng = Rng(seed ^ 0x5eed);
    let per_run = model.run_ns + model.setup_ns;
    let mut draws = Rng(seed ^ 0x5e75);
    let sensitivity: Vec<f64> = (0..cells)
        .map(|_| 1.0 + spread * (2.0 * draws.uniform() - 1.0))
        .collect();
    let function = macbench::mac::functions()
        .into_iter()
        .find(|f| f.algorithm.name == "hmac-sha256")
        .expect("hmac-sha256 is registered");
    let runs: Vec<Vec<RawRun>> = (0..cells)
        .map(|cell| {
            (0..repeats)
                .map(|r| {
                    let slot = match placement {
                        Placement::Spread => r * cells + cell,
                        Placement::BackToBack => cell * repeats + r,
                    };
                    let start = slot as u64 * per_run;
                    fake_run(&mut host, start, &mut rng, model, sensitivity[cell])
                })
                .collect()
        })
        .collect();
    // The sweep's pooled spread: every scenario's absolute cycles/byte per run.
    let mut spread = HostSpread::default();
    for cell in &runs {
        let values: Vec<f64> = cell
            .iter()
            .map(|raw| {
                let t = &raw.threads[0];
                F * (t.window_end.cpu_ns - t.window_start.cpu_ns) as f64
                    / 1e9
                    / (t.window_end.bytes - t.window_start.bytes) as f64
            })
            .collect();
        spread.add(&values);
    }
    let results = runs
        .into_iter()
        .enumerate()
        .map(|(cell, runs)| {
            let scenario = macbench::sweep::one_session(
                function,
                SizeSource::Fixed {
                    size: 16 + cell as u32,
                },
                0,
                Duration::from_nanos(model.run_ns),
                DataMode::Unique,
            );
            let policy = AutoPolicy {
                target_ci: Some(0.05),
                ..AutoPolicy::default()
            };
            bench::reduce_runs(scenario, runs, policy, &clock(), spread).expect("a result")
        })
        .collect();
    Document {
        schema_version: SCHEMA_VERSION,
        tool: "macbench".to_string(),
        host: Default::default(),
        clock: clock(),
        scenario: Default::default(),
        harness: None,
        results,
        partial: false,
        conditions: None,
        sweep: None,
        fake_engine: None,
    }
}

/// The share of `docs`' results whose absolute cycles/byte interval holds `TRUE_COST`.
fn coverage(docs: &[Document]) -> f64 {
    let (mut held, mut all) = (0usize, 0usize);
    for r in docs.iter().flat_map(|d| &d.results) {
        let ci = r
            .ci95
            .absolute()
            .expect("every fake result has an interval");
        all += 1;
        held += usize::from(ci.min <= TRUE_COST && TRUE_COST <= ci.max);
    }
    held as f64 / all as f64
}

#[test]
fn the_interval_holds_the_typical_cost_at_its_nominal_rate_when_repeats_are_spread() {
    let docs: Vec<Document> = (0..8)
        .map(|seed| fake_sweep(60, 3, Placement::Spread, 1000 + seed))
        .collect();
    let held = coverage(&docs);
    eprintln!(
        "spread repeats: {:.1} % of 480 intervals hold the calm cost",
        held * 100.0
    );
    // 480 intervals: at a true 95 %, fewer than 92.5 % holding happens about 1 time in 100.
    assert!(
        held >= 0.925,
        "the 95 % intervals held the calm cost in only {:.1} % of 480 fake results",
        held * 100.0
    );
}

#[test]
fn repeats_back_to_back_inside_a_slow_stretch_would_miss_it_far_more_often() {
    // Why a sweep spreads its repeats: within a second, the three repeats share the host's state.
    let docs: Vec<Document> = (0..8)
        .map(|seed| fake_sweep(60, 3, Placement::BackToBack, 1000 + seed))
        .collect();
    let held = coverage(&docs);
    eprintln!(
        "back-to-back repeats: {:.1} % of 480 intervals hold the calm cost",
        held * 100.0
    );
    assert!(
        held < 0.9,
        "back-to-back repeats held the calm cost in {:.1} % of fake results: the test's host is too calm to show the trap",
        held * 100.0
    );
}

#[test]
fn the_regression_gate_passes_at_least_95_percent_of_identical_pairs_and_fails_a_slower_run() {
    let pairs = 40u64;
    let mut alarms = 0;
    for k in 0..pairs {
        let old = fake_sweep(144, 3, Placement::Spread, 2 * k + 7);
        let new = fake_sweep(144, 3, Placement::Spread, 2 * k + 8);
        let rows = diff::diff(&old, &new);
        alarms += u64::from(!diff::regressions(&rows, 5.0).is_empty());
    }
    eprintln!("{alarms} of {pairs} identical pairs failed the gate");
    assert!(
        alarms * 20 <= pairs,
        "{alarms} of {pairs} identical pairs of fake sweeps failed --fail-on-regression 5 (at most 5 % may)"
    );
    // The same gate sees a real regression, whatever the cells' flags: every cost 3 × higher.
    let old = fake_sweep(144, 3, Placement::Spread, 99);
    let mut new = fake_sweep(144, 3, Placement::Spread, 100);
    for r in &mut new.results {
        for raw in &mut r.raw {
            for t in &mut raw.threads {
                t.window_end.cpu_ns =
                    t.window_start.cpu_ns + 3 * (t.window_end.cpu_ns - t.window_start.cpu_ns);
            }
        }
        r.metrics.absolute_cycles_per_byte = r.metrics.absolute_cycles_per_byte.map(|v| 3.0 * v);
        if let Some(ci) = r.ci95.absolute_cycles_per_byte.as_mut() {
            ci.low *= 3.0;
            ci.high *= 3.0;
        }
    }
    let rows = diff::diff(&old, &new);
    let slower = diff::regressions(&rows, 5.0);
    // The gate fails the run. Not every cell is caught: one whose three repeats straddle a slow
    // stretch has an interval of ±40–60 % (t with 2 degrees of freedom), and 3 × then stays under
    // the family-wise z of 3.6 for 288 comparisons; a real run's extra repeats narrow such cells.
    eprintln!("{} of 144 cells 3 × slower caught", slower.len());
    assert!(
        slower.len() * 2 >= 144,
        "only {} of 144 cells 3 × slower were called regressions: {slower:?}",
        slower.len()
    );
}

/// `python3 tools/NAME fake.json` on `doc`, written to a temporary file: its standard output, the
/// run asserted successful.
fn run_tool(name: &str, doc: &Document) -> String {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("fake.json");
    let json = serde_json::to_string(doc).expect("a fake document serialises");
    std::fs::write(&path, json).expect("the fake document is written");
    let tool = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tools")
        .join(name);
    let out = std::process::Command::new("python3")
        .arg(&tool)
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("python3 runs tools/{name}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `tools/probe-eval` (docs/methodology.md, "The probe as a control variate") finds what the fake
/// host put there: every cell's windows feel the same slow stretches, so the neighbouring windows
/// explain most of a cell's repeat-to-repeat variance — far more than the same probe shuffled.
#[test]
fn the_probe_tool_finds_the_variance_neighbouring_windows_share() {
    let doc = fake_sweep(60, 6, Placement::Spread, 4343);
    let text = run_tool("probe-eval", &doc);
    // The file's row: … rms d (raw, cell, pool), removed % (cell, pool, file, plac), …
    let all: Vec<f64> = text
        .lines()
        .find(|l| l.starts_with("fake.json"))
        .unwrap_or_else(|| panic!("no row for the file in:\n{text}"))
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap_or(f64::NAN))
        .collect();
    let (removed, placebo) = (all[9], all[12]);
    assert!(
        removed > 50.0,
        "the probe removed only {removed} %:\n{text}"
    );
    assert!(
        removed > placebo + 30.0,
        "the probe ({removed} %) did no better than shuffled ({placebo} %):\n{text}"
    );
}

/// `tools/wander` finds the cause of the spread where the cause is in the data: on the fake host the
/// slow-downs are the core clock's, which the chain around each run reads, so the clock explains
/// nearly all the between-repeat variance, and steal (always 0) none.
#[test]
fn the_wander_tool_finds_a_clock_that_explains_the_spread() {
    let doc = fake_sweep(60, 3, Placement::Spread, 4242);
    let text = run_tool("wander", &doc);
    let explains = |name: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in:\n{text}"));
        line.split_whitespace()
            .rev()
            .nth(2)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no share in {line:?}"))
    };
    assert!(explains("core clock") > 90.0, "{text}");
    assert!(
        text.contains("steal") && text.contains("never varied"),
        "{text}"
    );
}

/// The planner's short runs (12 repeats of 144 cells, ~41 s) on hosts whose busy stretches last
/// 0.1 s to the whole sweep, each cell feeling the host to the power 0.5–1.5: what the intervals
/// and the gate do as the stretches grow (printed with --nocapture; docs/methodology.md quotes it),
/// and the bound no interval that narrows with one run's data can pass: the share of sweeps that lay
/// wholly inside one busy stretch.
#[test]
fn short_runs_hold_the_calm_cost_while_stretches_are_shorter_than_the_sweep() {
    for busy_mean_s in [0.1, 1.0, 10.0, 40.0] {
        let sweeps: Vec<Document> = (0..20)
            .map(|k| {
                let seed = 3000 + k;
                let host = Host::with_stretches(seed, busy_mean_s);
                fake_sweep_on(host, 144, 12, Placement::Spread, seed, SHORT_RUNS, 0.5)
            })
            .collect();
        let held = coverage(&sweeps);
        let alarms = sweeps
            .chunks(2)
            .filter(|pair| !diff::regressions(&diff::diff(&pair[0], &pair[1]), 5.0).is_empty())
            .count();
        // The same hosts again (each is fixed by its seed): the sweeps that lay wholly inside one
        // busy stretch. Every run of such a sweep is slowed, by 1.1^0.5 (5 %) at the least, so no
        // interval formed from the sweep's own runs holds the calm cost there: the coverage any
        // estimator inside one run can reach is at most the share of the other sweeps.
        let slots = 144 * 12;
        let per_run = SHORT_RUNS.run_ns + SHORT_RUNS.setup_ns;
        let wholly_busy = (0..20u64)
            .filter(|k| {
                let mut host = Host::with_stretches(3000 + k, busy_mean_s);
                (0..slots as u64).all(|slot| host.factor(slot * per_run) > 1.0)
            })
            .count();
        let bound = 1.0 - wholly_busy as f64 / 20.0;
        eprintln!(
            "busy stretches of {busy_mean_s} s: {:.1} % of {} intervals hold the calm cost; {alarms} of 10 identical pairs fail the gate; {wholly_busy} of 20 sweeps lay wholly inside a busy stretch (no interval from inside a run can reach more than {:.1} %)",
            held * 100.0,
            144 * sweeps.len(),
            bound * 100.0
        );
        assert!(
            held <= bound + 1e-9,
            "{:.1} % held, above the {:.1} % the sweeps wholly inside a busy stretch allow: the fake host is not what this test says",
            held * 100.0,
            bound * 100.0
        );
        // Stretches much shorter than the sweep: every cell's repeats see both states, and the
        // intervals and the gate keep their promises. Stretches as long as the sweep put all of a
        // cell's repeats in one state, which nothing inside one run can see (docs/methodology.md,
        // "What the wander is"): printed, not promised.
        if busy_mean_s <= 1.0 {
            assert!(
                held >= 0.925 && alarms <= 1,
                "stretches of {busy_mean_s} s: {:.1} % held, {alarms} of 10 identical pairs failed the gate",
                held * 100.0
            );
        }
    }
}
