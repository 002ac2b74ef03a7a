//! The workload engine: `n` sessions as real OS threads on a core set, a coordinator publishing phases,
//! and raw per-thread counters sampled inside each thread at phase changes (METHODOLOGY §2).
//!
//! The engine knows nothing of any particular MAC: it gets a [`Function`] and hands each session's
//! keyed object a [`MessageLoop`] to run until the phase changes. It returns raw counters only; the
//! metrics module turns them into cycles per byte. Keeping arithmetic out of here is what lets the
//! metrics be tested on synthetic counters and results be recomputed from the JSON.
//!
//! Phases: warm-up → first half of the window → second half → cool-down → stop. The mid-window sample
//! gives the steadiness check (§4) for free. Every thread keeps running until `t`, so each measured thread
//! has the whole background load on both sides of the window.

pub mod affinity;
pub mod child;
pub mod clock;

use crate::mac::{Function, KeyParams, MessageLoop, VerifyMode, MAX_TAG_LEN};
use rand::{RngCore, SeedableRng};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Largest message the engine accepts (the schedule stores u32 offsets into one shared pool).
pub const MAX_MESSAGE_LEN: u32 = 64 << 20;
/// Unique-data pool: larger than L2 on every machine we expect (seed 003 used 50K distinct chunks).
pub const MIN_POOL_BYTES: usize = 16 << 20;
/// Cap on schedule slots; with per-session starting offsets this spans the pool for small messages.
const MAX_SCHEDULE: usize = 65_536;
/// Inline verification stores an expected tag per slot per session, so its schedule is shorter.
const MAX_INLINE_SCHEDULE: usize = 4096;
/// Tags kept per session for verify-after.
const KEPT_TAGS: usize = 1024;
/// No re-keying: the hot loop returns only on a phase change.
const NO_LIMIT: u64 = u64::MAX;

const PHASE_WAIT: u32 = 0;
const PHASE_WARMUP: u32 = 1;
const PHASE_FIRST_HALF: u32 = 2;
const PHASE_SECOND_HALF: u32 = 3;
const PHASE_COOLDOWN: u32 = 4;
const PHASE_STOP: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pinning {
    /// Session i is pinned to core C[i mod |C|] (default).
    RoundRobin,
    /// Every session may run on any core of C.
    Float,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// Each session cycles through distinct messages in a pool larger than L2.
    Unique,
    /// One buffer reused: the cache-hot upper bound.
    Same,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyMode {
    PerSession,
    Shared,
}

/// Where message sizes come from.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SizeSource {
    /// Every message has this many bytes.
    Fixed { size: u32 },
    /// A pre-generated sequence drawn from a distribution, cycled (the hot loop never samples).
    Model {
        name: String,
        mean_bytes: f64,
        #[serde(skip)]
        sequence: Arc<Vec<u32>>,
    },
}

impl SizeSource {
    pub fn label(&self) -> String {
        match self {
            SizeSource::Fixed { size } => size.to_string(),
            SizeSource::Model { name, .. } => name.clone(),
        }
    }

    fn sizes(&self) -> &[u32] {
        match self {
            SizeSource::Fixed { size } => std::slice::from_ref(size),
            SizeSource::Model { sequence, .. } => sequence,
        }
    }
}

/// One scenario (METHODOLOGY §1).
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    #[serde(skip)]
    pub function: Function,
    pub size: SizeSource,
    pub sessions: usize,
    pub cores: Vec<usize>,
    pub pinning: Pinning,
    #[serde(rename = "duration_s", serialize_with = "secs")]
    pub duration: Duration,
    #[serde(rename = "window_start_s", serialize_with = "secs")]
    pub window_start: Duration,
    #[serde(rename = "window_end_s", serialize_with = "secs")]
    pub window_end: Duration,
    pub data: DataMode,
    pub keys: KeyMode,
    pub verify: VerifyMode,
    /// Re-key every N messages (key setup then counts inside the per-byte metrics).
    pub rekey_every: Option<u64>,
    pub seed: u64,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Errors that make a scenario impossible to run; each names the value at fault.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EngineError {
    #[error("--sessions must be at least 1")]
    NoSessions,
    #[error("--cores is empty")]
    NoCores,
    #[error("--cores: CPU {cpu} is not online; online CPUs: {online}")]
    CpuNotOnline { cpu: usize, online: String },
    #[error("--window {start}..{end} s must satisfy 0 <= start < end <= duration ({duration} s)")]
    BadWindow { start: f64, end: f64, duration: f64 },
    #[error("message size {size} is larger than the engine's limit of {limit} bytes")]
    SizeTooLarge { size: u64, limit: u32 },
    #[error("the size model is empty")]
    EmptySizes,
    #[error("key setup failed: {0}")]
    Key(String),
    #[error("session {session}: {reason}")]
    Thread { session: usize, reason: String },
}

/// A snapshot of one thread's counters, taken by that thread at a message boundary.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Sample {
    pub wall_ns: u64,
    pub cpu_ns: u64,
    pub messages: u64,
    pub bytes: u64,
    /// Hardware core cycles (user space), where perf counters work.
    pub hw_cycles: Option<u64>,
    /// The CPU the thread was on when it took the sample.
    pub cpu: Option<usize>,
}

/// Raw counters of one session.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadCounters {
    pub session: usize,
    /// The cores this thread was allowed on.
    pub allowed_cpus: Vec<usize>,
    /// Samples at the first message boundary after t1, after the window's midpoint, after t2.
    pub window_start: Sample,
    pub window_mid: Sample,
    pub window_end: Sample,
    /// Thread CPU time spent in its initial key setup.
    pub key_setup_cpu_ns: u64,
    /// Inline verification: tags that did not match (must be 0).
    pub verify_failures: u64,
    /// Verify-after: tags kept and re-checked after the run, and how many failed.
    pub verified_after: u64,
    pub verify_after_failures: u64,
    /// Messages over the whole run (warm-up and cool-down included).
    pub total_messages: u64,
    pub rekeys: u64,
}

/// Raw result of one run of a scenario.
#[derive(Debug, Clone, Serialize)]
pub struct RawRun {
    /// Coordinator's wall-clock time of the window (W) and of its two halves.
    pub window_wall_ns: u64,
    pub first_half_wall_ns: u64,
    pub threads: Vec<ThreadCounters>,
    /// Key setup, measured in the coordinator by repeated keying: mean CPU ns per key setup.
    pub key_setup_ns: f64,
    /// Whether the run was cut short (Ctrl-C).
    pub interrupted: bool,
}

/// Validate a scenario against the machine before any thread starts.
pub fn validate(s: &Scenario, online: &[usize]) -> Result<(), EngineError> {
    if s.sessions == 0 {
        return Err(EngineError::NoSessions);
    }
    if s.cores.is_empty() {
        return Err(EngineError::NoCores);
    }
    if let Some(&cpu) = s.cores.iter().find(|c| !online.contains(c)) {
        return Err(EngineError::CpuNotOnline {
            cpu,
            online: format_cpu_list(online),
        });
    }
    if s.window_start >= s.window_end || s.window_end > s.duration {
        return Err(EngineError::BadWindow {
            start: s.window_start.as_secs_f64(),
            end: s.window_end.as_secs_f64(),
            duration: s.duration.as_secs_f64(),
        });
    }
    let sizes = s.size.sizes();
    if sizes.is_empty() {
        return Err(EngineError::EmptySizes);
    }
    if let Some(&size) = sizes.iter().find(|&&n| n > MAX_MESSAGE_LEN) {
        return Err(EngineError::SizeTooLarge {
            size: size.into(),
            limit: MAX_MESSAGE_LEN,
        });
    }
    Ok(())
}

/// "0-3,6" style.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The data every session reads: one shared pool and one cyclic schedule of (offset, length).
pub struct Workload {
    pub pool: Arc<Vec<u8>>,
    pub schedule: Vec<(u32, u32)>,
}

/// Random pool of `len` bytes for `seed`, shared between scenarios and repeats: filling 16 MiB costs more
/// than a short run's window, and the bytes do not depend on the scenario.
fn random_pool(len: usize, seed: u64) -> Arc<Vec<u8>> {
    type Cached = Option<(usize, u64, Arc<Vec<u8>>)>;
    static LAST: std::sync::Mutex<Cached> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((l, s, pool)) = last.as_ref() {
        if *l == len && *s == seed {
            return Arc::clone(pool);
        }
    }
    let mut pool = vec![0u8; len];
    rand::rngs::StdRng::seed_from_u64(seed).fill_bytes(&mut pool);
    let pool = Arc::new(pool);
    *last = Some((len, seed, Arc::clone(&pool)));
    pool
}

impl Workload {
    pub fn build(s: &Scenario) -> Workload {
        let sizes = s.size.sizes();
        let max = sizes.iter().copied().max().unwrap_or(0) as usize;
        let pool_len = match s.data {
            DataMode::Unique => MIN_POOL_BYTES.max(max * 4),
            DataMode::Same => max.max(1),
        };
        let pool = random_pool(pool_len, s.seed);
        let cap = if s.verify == VerifyMode::Inline {
            MAX_INLINE_SCHEDULE
        } else {
            MAX_SCHEDULE
        };
        let len = match s.data {
            DataMode::Same => sizes.len().min(cap),
            DataMode::Unique => {
                let mean = sizes.iter().map(|&n| n as usize).sum::<usize>() / sizes.len();
                let stride = mean.div_ceil(64).max(1) * 64;
                (pool_len / stride).clamp(64, cap).max(sizes.len().min(cap))
            }
        };
        let mut schedule = Vec::with_capacity(len);
        let mut offset = 0usize;
        for i in 0..len {
            let size = sizes[i % sizes.len()] as usize;
            match s.data {
                DataMode::Same => schedule.push((0, size as u32)),
                DataMode::Unique => {
                    if offset + size > pool_len {
                        offset = 0;
                    }
                    schedule.push((offset as u32, size as u32));
                    offset += size.div_ceil(64).max(1) * 64;
                }
            }
        }
        Workload { pool, schedule }
    }
}

/// Coordinator's shared state. Threads announce themselves in `ready` and wait for the phase to leave
/// `PHASE_WAIT`; a start gate rather than a `Barrier`, so a failed spawn can release (stop) the threads
/// already started instead of leaving them waiting forever.
struct Shared {
    phase: AtomicU32,
    ready: AtomicU32,
}

/// Run one scenario once. `cancel` is polled between phases (Ctrl-C ends the run early, keeping what was
/// measured if the window had finished).
pub fn run(s: &Scenario, cancel: &AtomicBool) -> Result<RawRun, EngineError> {
    if child::needed(s) {
        return child::run(s, cancel); // `sw`: the same engine in a software-only child process
    }
    validate(s, &crate::host::online_cpus())?;
    let workload = Arc::new(Workload::build(s));
    let key_setup_ns = measure_key_setup(s)?;
    let shared = Arc::new(Shared {
        phase: AtomicU32::new(PHASE_WAIT),
        ready: AtomicU32::new(0),
    });
    let mut master_key = vec![0u8; s.function.algorithm.default_key_len];
    let mut rng = rand::rngs::StdRng::seed_from_u64(s.seed ^ 0x6b65_7973);
    rng.fill_bytes(&mut master_key);

    let mut handles = Vec::with_capacity(s.sessions);
    for session in 0..s.sessions {
        let allowed = match s.pinning {
            Pinning::RoundRobin => vec![s.cores[session % s.cores.len()]],
            Pinning::Float => s.cores.clone(),
        };
        let key = match s.keys {
            KeyMode::Shared => master_key.clone(),
            KeyMode::PerSession => {
                let mut k = vec![0u8; master_key.len()];
                rng.fill_bytes(&mut k);
                k
            }
        };
        let ctx = SessionContext {
            session,
            sessions: s.sessions,
            allowed,
            key,
            function: s.function,
            verify: s.verify,
            rekey_every: s.rekey_every,
            workload: Arc::clone(&workload),
            shared: Arc::clone(&shared),
        };
        let spawned = std::thread::Builder::new()
            .name(format!("session-{session}"))
            .stack_size(256 << 10)
            .spawn(move || session_thread(ctx));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                // Stop the threads already waiting at the gate, then report.
                shared.phase.store(PHASE_STOP, Ordering::SeqCst);
                for h in handles {
                    let _ = h.join();
                }
                return Err(EngineError::Thread {
                    session,
                    reason: format!("cannot start thread: {e}"),
                });
            }
        }
    }

    while (shared.ready.load(Ordering::Acquire) as usize) < s.sessions {
        std::thread::sleep(Duration::from_micros(200));
    }
    let t0 = clock::wall_ns();
    shared.phase.store(PHASE_WARMUP, Ordering::Release);
    let mid = s.window_start + (s.window_end - s.window_start) / 2;
    let mut interrupted = false;
    let mut stamps = [0u64; 3];
    for (i, (at, phase)) in [
        (s.window_start, PHASE_FIRST_HALF),
        (mid, PHASE_SECOND_HALF),
        (s.window_end, PHASE_COOLDOWN),
    ]
    .into_iter()
    .enumerate()
    {
        interrupted |= sleep_until(t0, at, cancel);
        stamps[i] = clock::wall_ns();
        shared.phase.store(phase, Ordering::Release);
    }
    interrupted |= sleep_until(t0, s.duration, cancel);
    shared.phase.store(PHASE_STOP, Ordering::Release);

    let mut threads = Vec::with_capacity(s.sessions);
    for (session, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(Ok(counters)) => threads.push(counters),
            Ok(Err(reason)) => return Err(EngineError::Thread { session, reason }),
            Err(_) => {
                return Err(EngineError::Thread {
                    session,
                    reason: "thread panicked".to_string(),
                })
            }
        }
    }
    Ok(RawRun {
        window_wall_ns: stamps[2] - stamps[0],
        first_half_wall_ns: stamps[1] - stamps[0],
        threads,
        key_setup_ns,
        interrupted,
    })
}

/// Sleep until `t0 + at`; returns true if cancelled meanwhile (then returns at once).
fn sleep_until(t0: u64, at: Duration, cancel: &AtomicBool) -> bool {
    let deadline = t0 + at.as_nanos() as u64;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return true;
        }
        let now = clock::wall_ns();
        if now >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_nanos(deadline - now).min(Duration::from_millis(50)));
    }
}

/// Mean CPU time of one key setup, from repeated keying in the coordinator (untimed by the window).
fn measure_key_setup(s: &Scenario) -> Result<f64, EngineError> {
    let key = vec![0x5au8; s.function.algorithm.default_key_len];
    let once = || {
        s.function
            .with_key(&key, KeyParams::default())
            .map_err(|e| EngineError::Key(e.to_string()))
    };
    drop(once()?);
    let start = clock::thread_cpu_ns();
    let mut count = 0u32;
    while count < 1000 && clock::thread_cpu_ns() - start < 5_000_000 {
        drop(std::hint::black_box(once()?));
        count += 1;
    }
    Ok((clock::thread_cpu_ns() - start) as f64 / f64::from(count.max(1)))
}

struct SessionContext {
    session: usize,
    sessions: usize,
    allowed: Vec<usize>,
    key: Vec<u8>,
    function: Function,
    verify: VerifyMode,
    rekey_every: Option<u64>,
    workload: Arc<Workload>,
    shared: Arc<Shared>,
}

fn take_sample(work: &MessageLoop<'_>, counter: Option<&clock::CycleCounter>) -> Sample {
    Sample {
        wall_ns: clock::wall_ns(),
        cpu_ns: clock::thread_cpu_ns(),
        messages: work.messages,
        bytes: work.bytes,
        hw_cycles: counter.and_then(|c| c.read()),
        cpu: clock::current_cpu(),
    }
}

/// One session: bind, key, wait for the start, run, sample at each phase change, verify kept tags.
fn session_thread(ctx: SessionContext) -> Result<ThreadCounters, String> {
    // Any early return must still count itself ready, or the coordinator would wait forever.
    let bound = affinity::bind_current_thread(&ctx.allowed);
    let key_start = clock::thread_cpu_ns();
    let keyed = ctx
        .function
        .with_key(&ctx.key, KeyParams::default())
        .map_err(|e| e.to_string());
    let key_setup_cpu_ns = clock::thread_cpu_ns() - key_start;
    let (mut mac, setup_error) = match (bound, keyed) {
        (Ok(()), Ok(mac)) => (Some(mac), None),
        (Err(e), _) | (_, Err(e)) => (None, Some(e)),
    };

    let algorithm = ctx.function.algorithm;
    let tag_len = algorithm.tag_len;
    let wl = &ctx.workload;
    let slots = wl.schedule.len();
    let mut nonce = vec![0u8; algorithm.nonce_len.unwrap_or(0)];
    let mut tag = [0u8; MAX_TAG_LEN];
    // Inline verification compares with tags precomputed here, before the timed run.
    let mut expected = Vec::new();
    if let (VerifyMode::Inline, Some(m)) = (ctx.verify, mac.as_mut()) {
        expected = vec![0u8; slots * tag_len];
        for (slot, &(off, len)) in wl.schedule.iter().enumerate() {
            fill_nonce(&mut nonce, slot);
            let msg = &wl.pool[off as usize..(off + len) as usize];
            m.tag_into(
                &nonce,
                msg,
                &mut expected[slot * tag_len..(slot + 1) * tag_len],
            );
        }
    }
    let ring = if ctx.verify == VerifyMode::After {
        KEPT_TAGS
    } else {
        0
    };
    let mut kept = vec![0u8; ring * tag_len];
    let mut kept_slots = vec![0u32; ring];
    let counter = clock::CycleCounter::open().ok();

    let Some(mut mac) = mac else {
        ctx.shared.ready.fetch_add(1, Ordering::AcqRel);
        return Err(setup_error.unwrap_or_default());
    };
    ctx.shared.ready.fetch_add(1, Ordering::AcqRel);
    while ctx.shared.phase.load(Ordering::Acquire) == PHASE_WAIT {
        std::thread::sleep(Duration::from_micros(200));
    }

    let mut work = MessageLoop {
        pool: &wl.pool,
        schedule: &wl.schedule,
        next: ctx.session * slots / ctx.sessions,
        nonce: &mut nonce,
        tag: &mut tag[..tag_len],
        verify: ctx.verify,
        expected: &expected,
        kept: &mut kept,
        kept_slots: &mut kept_slots,
        phase: &ctx.shared.phase,
        seen: PHASE_WARMUP,
        messages: 0,
        bytes: 0,
        verify_failures: 0,
    };
    let mut samples = [Sample::default(); 3];
    let mut rekeys = 0u64;
    let mut since_rekey = 0u64;
    let limit = ctx.rekey_every.unwrap_or(NO_LIMIT);
    loop {
        let phase = ctx.shared.phase.load(Ordering::Acquire);
        if phase != work.seen {
            // A thread that slept through several phase changes takes the same sample for each: its
            // interval then differs from the window, which the metrics flag.
            let sample = take_sample(&work, counter.as_ref());
            for p in work.seen + 1..=phase.min(PHASE_COOLDOWN) {
                samples[(p - PHASE_FIRST_HALF) as usize] = sample;
            }
            work.seen = phase;
            if phase == PHASE_STOP {
                break;
            }
        }
        let before = work.messages;
        mac.run_dyn(&mut work, limit - since_rekey);
        since_rekey += work.messages - before;
        if since_rekey >= limit {
            mac = ctx
                .function
                .with_key(&ctx.key, KeyParams::default())
                .map_err(|e| e.to_string())?;
            rekeys += 1;
            since_rekey = 0;
        }
    }

    // Verify-after: recompute the kept tags (untimed) and compare.
    let mut verified_after = 0;
    let mut verify_after_failures = 0;
    let kept_count = (work.messages as usize).min(ring);
    let messages = work.messages;
    let verify_failures = work.verify_failures;
    for r in 0..kept_count {
        let slot = kept_slots[r] as usize;
        let (off, len) = wl.schedule[slot];
        fill_nonce(&mut nonce, slot);
        let msg = &wl.pool[off as usize..(off + len) as usize];
        verified_after += 1;
        if !mac.verify(&nonce, msg, &kept[r * tag_len..(r + 1) * tag_len]) {
            verify_after_failures += 1;
        }
    }
    Ok(ThreadCounters {
        session: ctx.session,
        allowed_cpus: ctx.allowed,
        window_start: samples[0],
        window_mid: samples[1],
        window_end: samples[2],
        key_setup_cpu_ns,
        verify_failures,
        verified_after,
        verify_after_failures,
        total_messages: messages,
        rekeys,
    })
}

/// The nonce of a schedule slot: its index in the first 8 bytes (same rule as the hot loop).
fn fill_nonce(nonce: &mut [u8], slot: usize) {
    let n = nonce.len().min(8);
    nonce[..n].copy_from_slice(&(slot as u64).to_le_bytes()[..n]);
}
