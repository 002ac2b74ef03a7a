//! The METHODOLOGY §3 formulas and §4 checks on synthetic counters: no clocks, no threads, exact values.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::engine::fake::{self, Verdict};
use macbench::engine::{RawRun, Sample, ThreadCounters};
use macbench::metrics::{self, compute, jain_index, Context, Metrics, RunMetrics};

const F: f64 = 2.0e9; // 2 GHz reference clock

fn sample(wall_ns: u64, cpu_ns: u64, messages: u64, bytes: u64, cpu: usize) -> Sample {
    Sample {
        wall_ns,
        cpu_ns,
        messages,
        bytes,
        hw_cycles: None,
        cpu: Some(cpu),
    }
}

/// A thread whose window runs from wall 1 s to 2 s with `cpu_s` CPU seconds, `m` messages of `size` bytes.
fn thread(session: usize, cpu: usize, cpu_s: f64, m: u64, size: u64) -> ThreadCounters {
    let c = (cpu_s * 1e9) as u64;
    ThreadCounters {
        session,
        allowed_cpus: vec![cpu],
        window_start: sample(1_000_000_000, 0, 0, 0, cpu),
        window_mid: sample(1_500_000_000, c / 2, m / 2, m / 2 * size, cpu),
        window_end: sample(2_000_000_000, c, m, m * size, cpu),
        key_setup_cpu_ns: 1000,
        verify_failures: 0,
        verified_after: 0,
        verify_after_failures: 0,
        total_messages: m * 2,
        rekeys: 0,
        start_offset_ns: 0,
        latency_ns: Vec::new(),
        window_rusage: None,
        offload: None,
    }
}

fn run(threads: Vec<ThreadCounters>) -> RawRun {
    RawRun {
        window_wall_ns: 1_000_000_000,
        first_half_wall_ns: 500_000_000,
        threads,
        key_setup_ns: 500.0,
        interrupted: false,
        ..RawRun::default()
    }
}

fn ctx(cores: usize) -> Context {
    Context {
        f: F,
        cores,
        core_ratio: Some(1.5),
        timer_resolution_ns: 1,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn two_threads_on_two_cores_follow_the_formulas() {
    // Each thread: 1 CPU second, 10_000 messages of 1000 bytes in a 1 s window.
    let raw = run(vec![
        thread(0, 0, 1.0, 10_000, 1000),
        thread(1, 1, 1.0, 10_000, 1000),
    ]);
    let RunMetrics {
        metrics: m,
        threads,
        warnings,
    } = compute(&raw, ctx(2));
    let sum_b = 2.0e7;
    assert!(close(m.absolute_cycles_per_byte.unwrap(), F * 2.0 / sum_b)); // f·Σc/Σb = 200
    assert!(close(m.apparent_cycles_per_byte.unwrap(), F * 1.0 / sum_b)); // f·W/Σb = 100
    assert!(close(
        m.absolute_cycles_per_message.unwrap(),
        F * 2.0 / 20_000.0
    ));
    assert!(close(m.apparent_cycles_per_message.unwrap(), F / 20_000.0));
    assert!(close(m.bytes_per_second, sum_b));
    assert!(close(m.messages_per_second, 20_000.0));
    assert!(close(m.parallelism.unwrap(), 2.0)); // apparent ≈ absolute / k on k cores
    assert!(close(m.fairness.unwrap(), 1.0));
    assert!(close(m.cpu_utilisation, 1.0));
    assert!(close(m.core_cycles_per_byte_estimated.unwrap(), 300.0));
    assert!(close(m.key_setup_cycles, 1000.0));
    assert!(
        m.core_cycles_per_byte.is_none(),
        "no hw counters in the samples"
    );
    for t in &threads {
        let b = 1.0e7;
        assert!(close(t.absolute_cycles_per_byte.unwrap(), F * 1.0 / b));
        // Per-thread apparent = f·W/(n·b_i); wall-clock = f·W/b_i.
        assert!(close(
            t.apparent_cycles_per_byte.unwrap(),
            F * 1.0 / (2.0 * b)
        ));
        assert!(close(t.wall_clock_cycles_per_byte.unwrap(), F * 1.0 / b));
    }
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn a_starved_thread_shows_high_per_thread_apparent_and_low_fairness() {
    let raw = run(vec![
        thread(0, 0, 0.98, 19_000, 1000),
        thread(1, 0, 0.02, 1_000, 1000),
    ]);
    let RunMetrics {
        metrics: m,
        threads,
        ..
    } = compute(&raw, ctx(1));
    assert!(
        threads[1].apparent_cycles_per_byte.unwrap()
            > 10.0 * threads[0].apparent_cycles_per_byte.unwrap()
    );
    // Jain: (19000+1000)² / (2·(19000²+1000²)) = 4e8 / 7.24e8.
    assert!(close(m.fairness.unwrap(), 4.0e8 / 7.24e8));
    assert!(close(
        m.max_thread_apparent_cycles_per_byte.unwrap(),
        threads[1].apparent_cycles_per_byte.unwrap()
    ));
}

#[test]
fn a_thread_with_zero_bytes_is_flagged_as_starvation() {
    let raw = run(vec![
        thread(0, 0, 1.0, 10_000, 1000),
        thread(1, 0, 0.0, 0, 1000),
    ]);
    let RunMetrics {
        metrics: m,
        threads,
        warnings,
    } = compute(&raw, ctx(1));
    assert!(
        threads[1].apparent_cycles_per_byte.is_none(),
        "no division by zero"
    );
    let w = warnings
        .iter()
        .find(|w| w.code == "starvation")
        .expect("starvation warning");
    assert_eq!(w.session, Some(1));
    assert!(m.absolute_cycles_per_byte.is_some());
}

#[test]
fn an_impossible_cpu_share_fails_the_result() {
    // 1.5 CPU seconds in a 1 s window on one core.
    let raw = run(vec![thread(0, 0, 1.5, 10_000, 1000)]);
    let RunMetrics { warnings, .. } = compute(&raw, ctx(1));
    let w = warnings
        .iter()
        .find(|w| w.code == "impossible")
        .expect("impossible warning");
    assert!(w.fatal);
}

#[test]
fn stolen_time_is_flagged_as_over_utilised() {
    let raw = run(vec![
        thread(0, 0, 0.5, 10_000, 1000),
        thread(1, 1, 0.5, 10_000, 1000),
    ]);
    let RunMetrics { warnings, .. } = compute(&raw, ctx(2));
    assert!(
        warnings
            .iter()
            .any(|w| w.code == "over-utilised" && !w.fatal),
        "{warnings:?}"
    );
    // Fewer sessions than cores: not runnable on every core, so no such warning.
    let raw = run(vec![thread(0, 0, 0.5, 10_000, 1000)]);
    let RunMetrics { warnings, .. } = compute(&raw, ctx(2));
    assert!(!warnings.iter().any(|w| w.code == "over-utilised"));
}

#[test]
fn too_few_messages_and_unsteady_throughput_are_flagged() {
    let mut t = thread(0, 0, 1.0, 500, 1000);
    let raw = run(vec![t.clone()]);
    let RunMetrics { warnings, .. } = compute(&raw, ctx(1));
    assert!(warnings.iter().any(|w| w.code == "window-too-short"));
    // Second half processes twice what the first did.
    t = thread(0, 0, 1.0, 30_000, 1000);
    t.window_mid.bytes = 10_000 * 1000;
    let RunMetrics { warnings, .. } = compute(&run(vec![t]), ctx(1));
    assert!(
        warnings.iter().any(|w| w.code == "not-steady"),
        "{warnings:?}"
    );
}

#[test]
fn descheduled_threads_off_core_runs_and_bad_tags_are_flagged() {
    let mut t = thread(0, 0, 1.0, 10_000, 1000);
    t.window_end.wall_ns += 50_000_000; // sampled 5 % late
    t.window_end.cpu = Some(3); // ran outside its allowed set
    t.verify_failures = 2;
    let RunMetrics { warnings, .. } = compute(&run(vec![t]), ctx(1));
    let codes: Vec<&str> = warnings.iter().map(|w| w.code.as_str()).collect();
    assert!(codes.contains(&"thread-interval"), "{codes:?}");
    assert!(warnings.iter().any(|w| w.code == "off-core" && w.fatal));
    assert!(warnings
        .iter()
        .any(|w| w.code == "verify-failed" && w.fatal));
}

#[test]
fn hardware_cycles_are_used_when_every_thread_has_them() {
    let mut t = thread(0, 0, 1.0, 10_000, 1000);
    t.window_start.hw_cycles = Some(100);
    t.window_end.hw_cycles = Some(100 + 3_000_000_000);
    let RunMetrics { metrics: m, .. } = compute(&run(vec![t]), ctx(1));
    assert!(close(m.core_cycles_per_byte.unwrap(), 300.0));
}

#[test]
fn jain_median_and_noise_helpers() {
    assert!(close(jain_index(&[1.0, 1.0, 1.0]).unwrap(), 1.0));
    assert!(close(jain_index(&[1.0, 0.0, 0.0, 0.0]).unwrap(), 0.25));
    assert!(jain_index(&[]).is_none());
    assert_eq!(metrics::median(&[3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(metrics::median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    assert_eq!(metrics::median(&[]), None);
    // Linear between ranks: rank 0.3·(5−1) = 1.2 lies a fifth of the way from 20 to 30.
    let five = [50.0, 10.0, 40.0, 20.0, 30.0];
    assert!(close(metrics::quantile(&five, 0.3).unwrap(), 22.0));
    assert_eq!(metrics::quantile(&five, 0.0), Some(10.0));
    assert_eq!(metrics::quantile(&five, 1.0), Some(50.0));
    assert_eq!(
        metrics::quantile(&[4.0, 1.0, 2.0, 3.0], 0.5),
        metrics::median(&[4.0, 1.0, 2.0, 3.0])
    );
    assert_eq!(metrics::quantile(&[f64::NAN], 0.5), None);
    assert_eq!(metrics::quantile(&five, 1.5), None);
}

#[test]
fn a_window_that_measured_nothing_fails_the_result() {
    let idle = |session| {
        let mut t = thread(session, 0, 0.0, 0, 1000);
        t.total_messages = 0;
        t
    };
    let RunMetrics {
        metrics: m,
        warnings,
        ..
    } = compute(&run((0..100).map(idle).collect()), ctx(2));
    assert_eq!(m.bytes, 0);
    let fatal: Vec<_> = warnings.iter().filter(|w| w.fatal).collect();
    assert_eq!(fatal.len(), 1, "{warnings:?}");
    assert_eq!(fatal[0].code, "starvation");
    assert!(fatal[0].message.starts_with("only 0 of 100 sessions"));
}

#[test]
fn fewer_than_ninety_percent_of_sessions_running_fails_the_result() {
    let mixed = |ran: usize| -> Vec<ThreadCounters> {
        (0..100)
            .map(|i| {
                let m = if i < ran { 10_000 } else { 0 };
                thread(i, i % 2, if i < ran { 0.02 } else { 0.0 }, m, 1000)
            })
            .collect()
    };
    let fatal = |ran| {
        let RunMetrics { warnings: w, .. } = compute(&run(mixed(ran)), ctx(2));
        w.iter().any(|w| w.code == "starvation" && w.fatal)
    };
    assert!(!fatal(100));
    assert!(!fatal(90), "90 % ran: warned per thread, not failed");
    assert!(fatal(89));
    // The 10 that did not run are still each named, without failing the result.
    let RunMetrics { warnings: w, .. } = compute(&run(mixed(90)), ctx(2));
    assert_eq!(
        w.iter()
            .filter(|w| w.code == "starvation" && !w.fatal)
            .count(),
        10
    );
}

#[test]
fn empty_messages_are_not_starvation() {
    // --sizes 0: messages run, bytes stay 0.
    let RunMetrics {
        metrics: m,
        warnings,
        ..
    } = compute(&run(vec![thread(0, 0, 1.0, 400_000, 0)]), ctx(1));
    assert_eq!(m.bytes, 0);
    assert_eq!(m.messages, 400_000);
    assert!(
        !warnings.iter().any(|w| w.code == "starvation"),
        "{warnings:?}"
    );
    assert!(m.absolute_cycles_per_byte.is_none());
    assert!(close(
        m.absolute_cycles_per_message.unwrap(),
        2e9 / 400_000.0
    ));
}

#[test]
fn warnings_are_summarised_by_code_with_counts() {
    let mut threads: Vec<ThreadCounters> = (0..3).map(|i| thread(i, 0, 0.0, 0, 1000)).collect();
    threads.push(thread(3, 0, 0.3, 500, 1000));
    let RunMetrics { warnings: w, .. } = compute(&run(threads), ctx(1));
    let line = metrics::summarise(&w);
    assert!(line.starts_with("starvation×4"), "{line}"); // 3 threads and the fatal aggregate
    assert!(line.contains("window-too-short"), "{line}");
}

/// The median over repeats is taken field by field from the type itself: counts stay whole, a metric
/// some runs lack is the median of those that have it, one no run has keeps its default.
#[test]
fn the_median_of_repeats_is_taken_field_by_field() {
    let run = |messages: u64, cpb: Option<f64>, rate: f64| Metrics {
        messages,
        bytes: messages * 64,
        absolute_cycles_per_byte: cpb,
        bytes_per_second: rate,
        ..Metrics::default()
    };
    let median = Metrics::median(&[
        run(1, Some(4.0), 10.0),
        run(4, None, f64::NAN),
        run(2, Some(2.0), 30.0),
    ]);
    assert_eq!(median.messages, 2);
    assert_eq!(median.bytes, 128);
    // Two runs have it: the mean of the middle two.
    assert_eq!(median.absolute_cycles_per_byte, Some(3.0));
    // NaN is no value: the median of 10 and 30.
    assert_eq!(median.bytes_per_second, 20.0);
    // No run has it.
    assert_eq!(median.core_cycles_per_byte, None);
    assert_eq!(median.latency_p99_ns, None);
    // An empty set of runs: the defaults, as before.
    assert_eq!(Metrics::median(&[]), Metrics::default());
}

/// The user share behind `compare --basis user`: Σ Δuser / Σ Δ(user + system) over the threads' own
/// readings at the window's ends; unknown when a thread missed a mark.
#[test]
fn user_share_of_the_window_from_the_threads_own_readings() {
    use macbench::engine::WindowRusage;
    let with = |user: [u64; 3], system: [u64; 3]| ThreadCounters {
        window_rusage: Some(WindowRusage {
            user_ns: user,
            system_ns: system,
        }),
        ..thread(0, 0, 1.0, 1000, 64)
    };
    // Thread 1: 900 ms user, 100 ms system; thread 2: 300 user, 100 system → 1200 / 1400.
    let both = run(vec![
        with(
            [100, 600, 1000].map(|v| v * 1_000_000),
            [0, 50, 100].map(|v| v * 1_000_000),
        ),
        with([0, u64::MAX, 300_000_000], [0, u64::MAX, 100_000_000]),
    ]);
    let share = metrics::user_share(&both).unwrap();
    assert!((share - 1200.0 / 1400.0).abs() < 1e-12, "{share}");
    // A thread without its readings, or no CPU time at all: unknown, not guessed.
    let missing = run(vec![with([0; 3], [0; 3]), thread(1, 0, 1.0, 1000, 64)]);
    assert_eq!(metrics::user_share(&missing), None);
    assert_eq!(metrics::user_share(&run(vec![with([0; 3], [0; 3])])), None);
}

/// The codes of the warnings the checks give one run of the fake engine's `verdict` (a 30 ms run of the
/// null function at 64 bytes, one session on the first CPU), each marked when fatal.
fn fake_engine_warnings(verdict: Verdict) -> Vec<String> {
    let function = common::first_of("null", "null");
    let scenario = common::scenario(function, 64, macbench::engine::Dispatch::default());
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let raw = fake::run(&scenario, verdict, &cancel).unwrap();
    compute(&raw, ctx(1))
        .warnings
        .iter()
        .map(|w| format!("{}{}", w.code, if w.fatal { " (fatal)" } else { "" }))
        .collect()
}

/// The fake engine the CLI's tests run on: its valid runs pass every check (not one warning), its
/// starved runs fail the starvation check.
#[test]
fn the_fake_engines_runs_pass_or_fail_the_checks_as_named() {
    assert_eq!(fake_engine_warnings(Verdict::Valid), Vec::<String>::new());
    let starved = fake_engine_warnings(Verdict::Starved);
    assert!(
        starved.contains(&"starvation (fatal)".to_string()),
        "{starved:?}"
    );
}

/// A device driver's account: per op, each part is the sessions' summed ticks over their summed ops,
/// turned from the counter's ticks into reference cycles (× f ÷ tick rate); one session without an
/// account leaves the run without one.
#[test]
fn the_offload_account_is_summed_ticks_per_summed_op_in_reference_cycles() {
    use macbench::mac::OffloadCounters;
    let account = |ops, build, enqueue, dequeue, empty| OffloadCounters {
        ops,
        built: ops,
        build_cycles: build,
        enqueue_cycles: enqueue,
        dequeue_cycles: dequeue,
        empty_polls: empty,
        tick_hz: 1_000_000_000,
    };
    let mut a = thread(0, 0, 0.5, 1000, 64);
    let mut b = thread(1, 1, 0.5, 3000, 64);
    a.offload = Some(account(1000, 100_000, 20_000, 500_000, 10));
    b.offload = Some(account(3000, 300_000, 20_000, 1_500_000, 30));
    let c = ctx(2);
    let m = compute(&run(vec![a.clone(), b.clone()]), c).metrics;
    // f = ctx's reference rate; ticks at 1 GHz are nanoseconds.
    let per_op = |ticks: f64| ticks / 1e9 * c.f / 4000.0;
    assert!(close(
        m.offload_build_cycles_per_op.unwrap(),
        per_op(400_000.0)
    ));
    assert!(close(
        m.offload_enqueue_cycles_per_op.unwrap(),
        per_op(40_000.0)
    ));
    assert!(close(
        m.offload_dequeue_cycles_per_op.unwrap(),
        per_op(2_000_000.0)
    ));
    assert!(close(m.offload_empty_polls_per_op.unwrap(), 0.01));
    b.offload = None;
    let m = compute(&run(vec![a, b]), c).metrics;
    assert_eq!(m.offload_build_cycles_per_op, None);
    assert_eq!(m.offload_dequeue_cycles_per_op, None);
}
