//! Invariants of real short runs that cannot flake: no timing thresholds, only counts, cores and
//! ordering that hold however loaded the machine is.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::engine::{self, DataMode, EngineError, KeyMode, Pinning, Scenario, SizeSource};
use macbench::mac::{self, Function, VerifyMode};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn function(alg: &str, backend: &str) -> Function {
    mac::functions()
        .into_iter()
        .find(|f| f.algorithm.name == alg && f.backend.name == backend)
        .unwrap()
}

fn scenario(f: Function, size: u32, sessions: usize) -> Scenario {
    let mut s = macbench::sweep::one_session(
        f,
        SizeSource::Fixed { size },
        0,
        Duration::from_millis(80),
        DataMode::Unique,
    );
    s.sessions = sessions;
    s.cores = macbench::host::online_cpus();
    s.window_start = Duration::from_millis(20);
    s.window_end = Duration::from_millis(60);
    s.seed = 7;
    s
}

fn run(s: &Scenario) -> engine::RawRun {
    engine::run(s, &AtomicBool::new(false)).unwrap()
}

#[test]
fn every_thread_is_reported_with_consistent_bytes_and_messages() {
    let s = scenario(function("hmac-sha256", "openssl"), 100, 5);
    let raw = run(&s);
    assert_eq!(raw.threads.len(), 5);
    let mut sessions: Vec<usize> = raw.threads.iter().map(|t| t.session).collect();
    sessions.sort();
    assert_eq!(sessions, vec![0, 1, 2, 3, 4]);
    for t in &raw.threads {
        for sample in [&t.window_start, &t.window_mid, &t.window_end] {
            assert_eq!(
                sample.bytes,
                sample.messages * 100,
                "fixed size: bytes = messages × size"
            );
        }
        // Samples are ordered and taken inside the run.
        assert!(t.window_start.messages <= t.window_mid.messages);
        assert!(t.window_mid.messages <= t.window_end.messages);
        assert!(t.window_end.messages <= t.total_messages);
        assert!(
            t.window_start.wall_ns <= t.window_mid.wall_ns
                && t.window_mid.wall_ns <= t.window_end.wall_ns
        );
        // Thread CPU time is sampled in the thread itself: it never exceeds the thread's wall interval by
        // more than clock granularity, and it advances when messages were processed.
        let cpu = t.window_end.cpu_ns - t.window_start.cpu_ns;
        let wall = t.window_end.wall_ns - t.window_start.wall_ns;
        assert!(cpu <= wall + 2_000_000, "cpu {cpu} > wall {wall}");
        if t.window_end.messages > t.window_start.messages {
            assert!(t.window_end.cpu_ns > t.window_start.cpu_ns);
        }
    }
    // The coordinator's window lies within the run.
    assert!(raw.window_wall_ns > 0 && raw.window_wall_ns < 1_000_000_000);
    assert!(raw.first_half_wall_ns < raw.window_wall_ns);
}

#[test]
fn pinned_threads_run_on_their_assigned_cores() {
    let cores = macbench::host::online_cpus();
    let s = scenario(function("null", "null"), 64, 2 * cores.len());
    let raw = run(&s);
    for t in &raw.threads {
        assert_eq!(
            t.allowed_cpus,
            vec![cores[t.session % cores.len()]],
            "round-robin assignment"
        );
        for sample in [&t.window_start, &t.window_mid, &t.window_end] {
            assert!(
                t.allowed_cpus.contains(&sample.cpu.unwrap()),
                "session {} sampled on {:?}",
                t.session,
                sample.cpu
            );
        }
    }
}

#[test]
fn floating_threads_may_use_the_whole_core_set() {
    let mut s = scenario(function("null", "null"), 64, 3);
    s.pinning = Pinning::Float;
    let raw = run(&s);
    for t in &raw.threads {
        assert_eq!(t.allowed_cpus, s.cores);
        assert!(s.cores.contains(&t.window_end.cpu.unwrap()));
    }
}

#[test]
fn inline_and_after_verification_check_real_tags() {
    for verify in [VerifyMode::Inline, VerifyMode::After] {
        let mut s = scenario(function("cmac-aes128", "rustcrypto"), 48, 2);
        s.verify = verify;
        s.duration = Duration::from_millis(300);
        let raw = run(&s);
        for t in &raw.threads {
            assert_eq!(t.verify_failures, 0);
            assert_eq!(t.verify_after_failures, 0);
            if verify == VerifyMode::After {
                // Every kept tag (the ring holds the last 1024) is re-checked after the run.
                assert_eq!(t.verified_after, t.total_messages.min(1024));
            }
        }
        if verify == VerifyMode::After {
            assert!(
                raw.threads.iter().any(|t| t.verified_after > 0),
                "tags were kept and re-checked"
            );
        }
    }
}

#[test]
fn gmac_sessions_get_nonces_and_verify() {
    let mut s = scenario(function("gmac-aes128", "openssl"), 64, 2);
    s.verify = VerifyMode::After;
    s.duration = Duration::from_millis(300);
    let raw = run(&s);
    assert!(raw
        .threads
        .iter()
        .all(|t| t.verify_after_failures == 0 && t.verified_after == t.total_messages.min(1024)));
    assert!(raw.threads.iter().any(|t| t.verified_after > 0));
}

#[test]
fn rekeying_happens_every_n_messages() {
    let mut s = scenario(function("hmac-sha256", "rustcrypto"), 64, 1);
    s.rekey_every = Some(50);
    let raw = run(&s);
    let t = &raw.threads[0];
    assert_eq!(
        t.rekeys,
        t.total_messages / 50,
        "{} messages",
        t.total_messages
    );
}

#[test]
fn size_models_draw_from_the_sequence() {
    let dist = macbench::traffic::builtin("imix").unwrap();
    let sequence = Arc::new(dist.sample_sequence(3, 4096));
    let mut s = scenario(function("null", "null"), 0, 1);
    s.size = SizeSource::Model {
        name: "imix".into(),
        mean_bytes: dist.mean(),
        sequence,
    };
    let raw = run(&s);
    let t = &raw.threads[0];
    let (m, b) = (
        t.window_end.messages - t.window_start.messages,
        t.window_end.bytes - t.window_start.bytes,
    );
    assert!(m > 0);
    // Every message is one of 40, 576, 1500 bytes, so the mean lies between them.
    let mean = b as f64 / m as f64;
    assert!((40.0..=1500.0).contains(&mean), "{mean}");
}

#[test]
fn same_data_mode_and_shared_keys_run() {
    let mut s = scenario(function("siphash-2-4", "rustcrypto"), 16, 2);
    s.data = DataMode::Same;
    s.keys = KeyMode::Shared;
    let w = engine::Workload::build(&s);
    assert!(w.schedule.iter().all(|&(off, len)| off == 0 && len == 16));
    let raw = run(&s);
    assert_eq!(raw.threads.len(), 2);
}

#[test]
fn unique_data_spreads_messages_over_a_pool_larger_than_l2() {
    let s = scenario(function("null", "null"), 1500, 1);
    let w = engine::Workload::build(&s);
    assert!(w.pool.len() >= engine::MIN_POOL_BYTES);
    let mut offsets: Vec<u32> = w.schedule.iter().map(|&(o, _)| o).collect();
    offsets.sort();
    offsets.dedup();
    assert!(offsets.len() > 1000, "{} distinct messages", offsets.len());
    assert!(w
        .schedule
        .iter()
        .all(|&(o, l)| (o + l) as usize <= w.pool.len()));
}

#[test]
fn impossible_scenarios_are_rejected_before_running() {
    let online = macbench::host::online_cpus();
    let base = scenario(function("null", "null"), 64, 1);
    let mut s = base.clone();
    s.sessions = 0;
    assert_eq!(engine::validate(&s, &online), Err(EngineError::NoSessions));
    let mut s = base.clone();
    s.cores = vec![4096];
    assert!(matches!(
        engine::validate(&s, &online),
        Err(EngineError::CpuNotOnline { cpu: 4096, .. })
    ));
    let mut s = base.clone();
    s.window_end = Duration::from_millis(500);
    assert!(matches!(
        engine::validate(&s, &online),
        Err(EngineError::BadWindow { .. })
    ));
    let mut s = base.clone();
    s.size = SizeSource::Fixed {
        size: engine::MAX_MESSAGE_LEN + 1,
    };
    assert!(matches!(
        engine::validate(&s, &online),
        Err(EngineError::SizeTooLarge { .. })
    ));
    let mut s = base;
    s.size = SizeSource::Model {
        name: "empty".into(),
        mean_bytes: 0.0,
        sequence: Arc::new(vec![]),
    };
    assert_eq!(engine::validate(&s, &online), Err(EngineError::EmptySizes));
}

#[test]
fn many_sessions_start_and_all_report() {
    let s = scenario(function("null", "null"), 16, 1000);
    let raw = run(&s);
    assert_eq!(raw.threads.len(), 1000);
}

/// Invariants of a run with many more sessions than cores, none of which depends on timing: every
/// session is reported once, per-thread window counts sum to the aggregate, the window's samples are
/// the coordinator's and lie inside the run, the tick series is monotonic, and no session started its
/// loop before the gate opened.
fn check_many_sessions(sessions: usize, duration_ms: u64) {
    let mut s = scenario(function("hmac-sha256", "openssl"), 256, sessions);
    s.duration = Duration::from_millis(duration_ms);
    s.window_start = Duration::from_millis(duration_ms / 5);
    s.window_end = Duration::from_millis(duration_ms * 9 / 10);
    let raw = run(&s);
    assert!(!raw.interrupted);
    assert_eq!(raw.threads.len(), sessions);
    let mut ids: Vec<usize> = raw.threads.iter().map(|t| t.session).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..sessions).collect::<Vec<_>>(), "every session once");
    for t in &raw.threads {
        assert!(
            t.start_offset_ns >= 0,
            "session {} ran before the gate",
            t.session
        );
        assert!(t.window_start.messages <= t.window_mid.messages);
        assert!(t.window_mid.messages <= t.window_end.messages);
        assert!(t.window_end.messages <= t.total_messages);
        assert_eq!(
            t.window_end.bytes - t.window_start.bytes,
            256 * (t.window_end.messages - t.window_start.messages)
        );
    }
    // The aggregate is the sum of the threads.
    let ctx = macbench::metrics::Context {
        f: 1e9,
        cores: s.cores.len(),
        core_ratio: None,
        timer_resolution_ns: 1,
    };
    let macbench::metrics::RunMetrics {
        metrics: m,
        threads,
        ..
    } = macbench::metrics::compute(&raw, ctx);
    assert_eq!(threads.iter().map(|t| t.bytes).sum::<u64>(), m.bytes);
    assert_eq!(threads.iter().map(|t| t.messages).sum::<u64>(), m.messages);
    // Ticks: strictly increasing instants inside the run, cumulative counters never decrease.
    let series = &raw.series;
    let n = series.t_ns.len();
    assert!(n >= 3, "ticks and marks");
    assert!(series.t_ns.windows(2).all(|w| w[0] < w[1]));
    assert!(series.messages.windows(2).all(|w| w[0] <= w[1]));
    assert!(series.bytes.windows(2).all(|w| w[0] <= w[1]));
    assert!(series.cpu_ns.windows(2).all(|w| w[0] <= w[1]));
    // The window's marks: scheduled at t1 and t2, taken no earlier, the window inside the run.
    let (first, last) = (series.window_first, series.window_last);
    assert!(first < last && last < n);
    assert!(series.t_ns[first] >= s.window_start.as_nanos() as u64);
    assert!(series.t_ns[last] >= s.window_end.as_nanos() as u64);
    assert!(*series.t_ns.last().unwrap() >= s.duration.as_nanos() as u64);
    assert!(raw.window_wall_ns > 0);
    assert!(raw.first_half_wall_ns < raw.window_wall_ns);
    // The series at the marks is the sum of the per-thread samples taken there.
    let sum_end: u64 = raw.threads.iter().map(|t| t.window_end.bytes).sum();
    assert_eq!(series.bytes[last], sum_end);
    assert_eq!(raw.coordinator.ticks, n);
    assert!(raw.startup.ready_ns >= raw.startup.spawn_ns);
}

#[test]
fn a_hundred_sessions_are_all_accounted_for() {
    check_many_sessions(100, 400);
}

#[test]
fn a_thousand_sessions_are_all_accounted_for() {
    check_many_sessions(1000, 600);
}

#[test]
fn a_tick_outside_its_bounds_is_refused() {
    let mut s = scenario(function("null", "null"), 64, 1);
    s.tick = Duration::from_micros(10);
    assert!(matches!(
        engine::validate(&s, &macbench::host::online_cpus()),
        Err(EngineError::BadTick { .. })
    ));
}

/// `--order interleaved` runs one repeat of every scenario in its span before the next repeat of any;
/// sequential runs each scenario's repeats back to back. Seen through the sweep's observer, results in
/// scenario order either way.
#[test]
fn interleaved_order_alternates_scenarios_and_keeps_results_in_order() {
    use macbench::sweep::{self, Observer, Order, Repetition};
    struct Seen {
        started: Vec<u32>,
        finished: usize,
    }
    impl Observer for Seen {
        fn starting(&mut self, s: &macbench::engine::Scenario) {
            if let macbench::engine::SizeSource::Fixed { size } = s.size {
                self.started.push(size);
            }
        }
        fn finished(&mut self, _doc: &macbench::results::Document) -> Result<(), String> {
            self.finished += 1;
            Ok(())
        }
    }
    let null = macbench::mac::functions()
        .into_iter()
        .find(|f| f.algorithm.name == "null")
        .unwrap();
    let clock = macbench::engine::clock::clock_info();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    // Three scenarios of 30 ms each; `span` sets how many runs are interleaved together.
    let run = |order: Order, span: Duration| {
        let scenarios = [64, 128, 256]
            .map(|size| common::scenario(null, size, macbench::engine::Dispatch::Single))
            .to_vec();
        let mut doc: macbench::results::Document = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "tool": "macbench"
        }))
        .unwrap();
        let mut seen = Seen {
            started: Vec::new(),
            finished: 0,
        };
        let repetition = Repetition {
            repeats: 3,
            order,
            span,
            budget: None,
            started: std::time::Instant::now(),
            paired: false,
        };
        let auto = macbench::bench::AutoPolicy::default();
        let policy = sweep::SweepPolicy {
            repetition,
            auto,
            clock: &clock,
            cancel: &cancel,
        };
        let cancelled = sweep::run(scenarios, policy, &mut doc, &mut seen, None).unwrap();
        assert!(!cancelled);
        let sizes: Vec<String> = doc.results.iter().map(|r| r.size.to_string()).collect();
        assert_eq!(sizes, ["64", "128", "256"]);
        assert!(doc.results.iter().all(|r| r.repeats == 3));
        assert_eq!(seen.finished, 3);
        seen.started
    };
    let ms = Duration::from_millis;
    // A span holding every run: one repeat of each scenario, then the next.
    assert_eq!(
        run(Order::Interleaved, ms(1000)),
        [64, 128, 256, 64, 128, 256, 64, 128, 256]
    );
    // A span of two runs: the first two interleave; the third follows once they are done.
    assert_eq!(
        run(Order::Interleaved, ms(60)),
        [64, 128, 64, 128, 64, 128, 256, 256, 256]
    );
    // A span shorter than one run: each scenario on its own, which is sequential order.
    assert_eq!(
        run(Order::Interleaved, ms(1)),
        [64, 64, 64, 128, 128, 128, 256, 256, 256]
    );
    assert_eq!(run(Order::Sequential, ms(1000)), [64, 128, 256]);
    assert_eq!(Order::or_default(None, 3), Order::Interleaved);
    assert_eq!(Order::or_default(None, 1), Order::Sequential);
    assert_eq!(
        Order::or_default(Some(Order::Sequential), 3),
        Order::Sequential
    );
}

/// Issue 44: a budget is the command's, not only its runs': it counts from when the command began
/// (its plan and pre-flight checks inside it) and leaves room for the closing write its observer
/// announces. A budget spent before the first run, or taken by the closing write, leaves each
/// scenario its one run; the same budget counted from now holds every planned repeat.
#[test]
fn a_budget_counts_from_the_commands_start_and_leaves_room_to_close() {
    use macbench::sweep::{self, Observer, Order, Repetition};
    struct Closing(Duration);
    impl Observer for Closing {
        fn finished(&mut self, _doc: &macbench::results::Document) -> Result<(), String> {
            Ok(())
        }
        fn closing_cost(&self) -> Duration {
            self.0
        }
    }
    let null = macbench::mac::functions()
        .into_iter()
        .find(|f| f.algorithm.name == "null")
        .unwrap();
    let clock = macbench::engine::clock::clock_info();
    let cancel = AtomicBool::new(false);
    let budget = Duration::from_secs(60);
    let repeats_with = |started: std::time::Instant, closing: Duration| -> Vec<usize> {
        let scenarios = [64, 128]
            .map(|size| common::scenario(null, size, macbench::engine::Dispatch::Single))
            .to_vec();
        let mut doc: macbench::results::Document = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "tool": "macbench"
        }))
        .unwrap();
        let policy = sweep::SweepPolicy {
            repetition: Repetition {
                repeats: 3,
                order: Order::Interleaved,
                span: Duration::from_secs(1),
                budget: Some(budget),
                started,
                paired: false,
            },
            auto: macbench::bench::AutoPolicy::default(),
            clock: &clock,
            cancel: &cancel,
        };
        let mut observer = Closing(closing);
        assert!(!sweep::run(scenarios, policy, &mut doc, &mut observer, None).unwrap());
        doc.results.iter().map(|r| r.repeats).collect()
    };
    let now = std::time::Instant::now;
    assert_eq!(repeats_with(now(), Duration::ZERO), [3, 3]);
    // The plan and pre-flight took the whole budget (started 61 s ago): one run each.
    let long_ago = now().checked_sub(Duration::from_secs(61));
    if let Some(started) = long_ago {
        assert_eq!(repeats_with(started, Duration::ZERO), [1, 1]);
    }
    // The closing write will take the budget: one run each, as well.
    assert_eq!(repeats_with(now(), budget), [1, 1]);
}
