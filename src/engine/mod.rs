//! The workload engine: `n` sessions as real OS threads on a core set, a coordinator that owns the clock,
//! and raw counters (docs/methodology.md §2, docs/methodology.md).
//!
//! The engine knows nothing of any particular MAC: it gets a [`Function`] and hands each session's
//! keyed object batches of messages from its [`hot_loop::SessionLoop`] until the phase word says stop. It returns raw counters only;
//! the metrics module turns them into cycles per byte. Keeping arithmetic out of here is what lets the
//! metrics be tested on synthetic counters and results be recomputed from the JSON.
//!
//! A run: create every session thread (each binds, keys and publishes its clocks, then blocks at the
//! [`gate::StartGate`]); start the [`coordinator`], which opens the gate at t0, ticks, samples every
//! session at the window's start, middle and end from outside, and stops everything at `t`. Every
//! thread keeps running until `t`, so each measured thread has the whole background load on both
//! sides of the window.

// Affinity and clocks live in `system`, below the engine (`net` uses them too); re-exported so
// `engine::clock` and `engine::affinity` keep naming them.
pub use crate::system::{affinity, clock};
pub mod coordinator;
pub mod fake;
pub mod gate;
pub mod hot_loop;
pub mod limits;
pub mod preflight;
mod prepared;

use crate::mac::{Function, KeyParams, VerifyMode};
pub use coordinator::{CoordinatorReport, Disturbance, Series, SessionSlot, ThreadSeries};
use gate::StartGate;
use hot_loop::{fill_nonce, SessionLoop};
use rand::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Largest message the engine accepts (the schedule stores u32 offsets into one shared pool).
pub const MAX_MESSAGE_LEN: u32 = 64 << 20;
/// Unique-data pool: larger than L2 on every machine we expect (Waters used 50K distinct chunks).
pub const MIN_POOL_BYTES: usize = 16 << 20;
/// Cap on schedule slots; with per-session starting offsets this spans the pool for small messages.
const MAX_SCHEDULE: usize = 65_536;
/// Inline verification stores an expected tag per slot per session, so its schedule is shorter.
const MAX_INLINE_SCHEDULE: usize = 4096;
/// Tags kept per session for verify-after.
const KEPT_TAGS: usize = 1024;
/// Latency samples kept per run, all sessions together (at least 16 per session).
const LATENCY_SAMPLES: usize = 4096;
/// No re-keying: the hot loop returns only on a phase change.
const NO_LIMIT: u64 = u64::MAX;
/// Default coordinator tick.
pub const DEFAULT_TICK: Duration = Duration::from_millis(10);
/// Bounds of `--tick`: below 1 ms wake-up lateness dominates; above 1 s a short run has no series.
pub const MIN_TICK: Duration = Duration::from_millis(1);
pub const MAX_TICK: Duration = Duration::from_secs(1);
/// Each tick costs the coordinator ~140 ns per session (a counter load, and the process CPU clock, which
/// the kernel sums over every thread), so the tick is at least this much per session: the sampler then
/// stays near 1 % of a core at any scale (10,000 sessions: 100 ms ticks).
pub const TICK_PER_SESSION: Duration = Duration::from_micros(10);

/// The most concurrent sessions (threads) a run may ask for (`--sessions`): a bound on the number
/// itself, so no allocation is sized by a typo, and the most a results file may claim. Whether this
/// machine may run that many threads is checked separately against its real limits
/// ([`check_limits`]: RLIMIT_NPROC, threads-max, max_map_count, pids.max, memory), before anything runs.
pub const MAX_SESSIONS: usize = 1_000_000;

/// The tick a run uses: the requested one, or longer for many sessions (see [`TICK_PER_SESSION`]), up to
/// [`MAX_TICK`].
pub fn effective_tick(requested: Duration, sessions: usize) -> Duration {
    let per_session = TICK_PER_SESSION * sessions.min(MAX_SESSIONS) as u32;
    requested.max(per_session.min(MAX_TICK))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pinning {
    /// Session i is pinned to core C[i mod |C|] (default).
    RoundRobin,
    /// Every session may run on any core of C.
    Float,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// Each session cycles through distinct messages in a pool larger than L2.
    Unique,
    /// One buffer reused: the cache-hot upper bound.
    Same,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum KeyMode {
    PerSession,
    Shared,
}

/// Where message sizes come from.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// One scenario (docs/methodology.md §1): a function and what it runs under. The settings are
/// [`ScenarioSpec`], reached through `Deref` (`scenario.sessions`), so a setting is declared once.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub function: Function,
    pub spec: ScenarioSpec,
}

impl std::ops::Deref for Scenario {
    type Target = ScenarioSpec;
    fn deref(&self) -> &ScenarioSpec {
        &self.spec
    }
}

impl std::ops::DerefMut for Scenario {
    fn deref_mut(&mut self) -> &mut ScenarioSpec {
        &mut self.spec
    }
}

/// What a scenario runs under, its function aside: the one definition of a scenario's settings.
/// A result records it as it serialises (a size model's drawn sequence left out), the switched child
/// receives it the same way, and the CSV's scenario columns are its fields
/// (`report::csv_export`). A new setting is a field here and the flag that sets it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct ScenarioSpec {
    pub size: SizeSource,
    pub sessions: usize,
    pub cores: Vec<usize>,
    pub pinning: Pinning,
    #[serde(rename = "duration_s", with = "secs")]
    pub duration: Duration,
    #[serde(rename = "window_start_s", with = "secs")]
    pub window_start: Duration,
    #[serde(rename = "window_end_s", with = "secs")]
    pub window_end: Duration,
    pub data: DataMode,
    pub keys: KeyMode,
    pub verify: VerifyMode,
    /// Re-key every N messages (key setup then counts inside the per-byte metrics).
    pub rekey_every: Option<u64>,
    pub seed: u64,
    /// The coordinator's sampling tick; zero in files from before it was recorded
    /// ([`ScenarioSpec::to_scenario`] reads that as [`DEFAULT_TICK`]).
    #[serde(rename = "tick_s", with = "secs")]
    pub tick: Duration,
    /// How messages are handed to the backend.
    pub dispatch: Dispatch,
    /// Tag bytes (`--tag-len`): a truncation, or KMAC's output length L ([`Scenario::tag_len`]);
    /// `None` for the algorithm's own tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag_len: Option<usize>,
}

/// What a file that does not record its scenario reads as (fields the file has replace these).
impl Default for ScenarioSpec {
    fn default() -> ScenarioSpec {
        ScenarioSpec {
            size: SizeSource::Fixed { size: 0 },
            sessions: 0,
            cores: Vec::new(),
            pinning: Pinning::RoundRobin,
            duration: Duration::ZERO,
            window_start: Duration::ZERO,
            window_end: Duration::ZERO,
            data: DataMode::Unique,
            keys: KeyMode::PerSession,
            verify: VerifyMode::None,
            rekey_every: None,
            seed: 0,
            tick: Duration::ZERO,
            dispatch: Dispatch::Single,
            tag_len: None,
        }
    }
}

impl ScenarioSpec {
    /// The scenario again, for a run in another process (the switched child): `function` resolved
    /// by the caller, a size model's drawn `sequence` supplied, since the recorded form leaves it
    /// out. A tick of 0 (files from before the tick was recorded) is the engine's default.
    pub fn to_scenario(&self, function: Function, sequence: Option<Vec<u32>>) -> Scenario {
        let mut spec = self.clone();
        if let (
            SizeSource::Model {
                sequence: drawn, ..
            },
            Some(sequence),
        ) = (&mut spec.size, sequence)
        {
            *drawn = Arc::new(sequence);
        }
        if spec.tick.is_zero() {
            spec.tick = DEFAULT_TICK;
        }
        Scenario { function, spec }
    }
}

impl Scenario {
    /// The tag bytes each message gets: `--tag-len`, else the algorithm's tag length.
    pub fn tag_len(&self) -> usize {
        self.tag_len.unwrap_or(self.function.algorithm.tag_len)
    }

    /// Key parameters for this scenario's tags (KMAC's L set to the tag length).
    pub fn key_params(&self) -> KeyParams<'static> {
        KeyParams::default().for_tag_len(self.function.algorithm, self.tag_len())
    }
}

/// How messages are handed to the backend (docs/methodology.md §5, after Waters's "dispatch" set-up
/// variable): one at a time, N at once, or N kept in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Dispatch {
    /// One message, its tag, the next (the default, and what every backend does natively).
    #[default]
    Single,
    /// N messages handed over in one call: a multi-buffer backend computes them in SIMD lanes;
    /// one-at-a-time libraries loop, so the comparison is honest.
    Burst(usize),
    /// N messages kept in the backend's queue, one submitted as each completes ("n + 1").
    Inflight(usize),
    /// The embedded study's "all at once": a device driver's descriptors built at key setup, before
    /// any window, and per message only patched (address, length, IV), batches of up to
    /// [`crate::mac::MAX_DEPTH`] messages ([`hot_loop::all_len`]) dispatched as fast as the device
    /// takes them ([`crate::mac::KeyedMac::tag_prebuilt`]). A library has no descriptors: it is then
    /// `burst` at that depth.
    All,
    /// Each message is the next update (chunk) of one long message, finalised once per
    /// [`hot_loop::STREAM_BYTES`]: the bulk rate a file or stream authenticator sees, and what
    /// `botan speed` (2.x) and `cryptest b2` time. Through the library's incremental interface
    /// ([`crate::mac::KeyedMac::stream_begin`]); a backend without one refuses. Counters count
    /// chunks as messages.
    Stream,
}

impl Dispatch {
    /// Messages per call, when the mode fixes it (`all`'s depth follows the message size:
    /// [`hot_loop::all_len`]).
    pub fn depth(self) -> Option<usize> {
        match self {
            Dispatch::Single | Dispatch::Stream | Dispatch::All => None,
            Dispatch::Burst(n) | Dispatch::Inflight(n) => Some(n),
        }
    }

    /// Hand `batch` to `mac` the way this mode does: the one place that maps a mode to the keyed
    /// object's entry point (the hot loop and the pre-flight both go through it).
    #[inline]
    pub fn tag(
        self,
        mac: &mut dyn crate::mac::KeyedMac,
        batch: &mut crate::mac::Batch<'_>,
    ) -> Result<(), crate::mac::Refused> {
        match self {
            Dispatch::Single => mac.tag_each(batch),
            Dispatch::Burst(_) => mac.tag_batch(batch),
            Dispatch::Inflight(depth) => mac.tag_inflight(batch, depth),
            Dispatch::All => mac.tag_prebuilt(batch),
            // Alone (the pre-flight's shape), a batch is one whole stream: its messages are the
            // pieces, its first tag the stream's; the hot loop keeps a stream open across batches.
            Dispatch::Stream => {
                let (nonce, _, _) = batch.item(0);
                mac.stream_begin(nonce)?;
                mac.stream_update(batch.msgs)?;
                let (_, _, tag) = batch.item(0);
                mac.stream_finish(tag)
            }
        }
    }
}

impl std::fmt::Display for Dispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dispatch::Single => f.write_str("single"),
            Dispatch::Burst(n) => write!(f, "burst:{n}"),
            Dispatch::Inflight(n) => write!(f, "inflight:{n}"),
            Dispatch::Stream => f.write_str("stream"),
            Dispatch::All => f.write_str("all"),
        }
    }
}

impl std::str::FromStr for Dispatch {
    type Err = String;

    fn from_str(text: &str) -> Result<Dispatch, String> {
        let bad = || {
            format!(
                "--dispatch: {text:?} is not single, burst:N, inflight:N (N from 1 to {}), all or stream",
                crate::mac::MAX_DEPTH
            )
        };
        let depth = |n: &str| -> Result<usize, String> {
            match n.parse::<usize>() {
                Ok(n) if (1..=crate::mac::MAX_DEPTH).contains(&n) => Ok(n),
                _ => Err(bad()),
            }
        };
        match text.trim().split_once(':') {
            None if text.trim() == "single" => Ok(Dispatch::Single),
            None if text.trim() == "stream" => Ok(Dispatch::Stream),
            None if text.trim() == "all" => Ok(Dispatch::All),
            Some(("burst", n)) => Ok(Dispatch::Burst(depth(n)?)),
            Some(("inflight", n)) => Ok(Dispatch::Inflight(depth(n)?)),
            _ => Err(bad()),
        }
    }
}

impl Serialize for Dispatch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Dispatch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Dispatch, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A duration recorded as seconds (`duration_s` and the like): a number pandas and people read.
mod secs {
    use std::time::Duration;

    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    /// A negative number reads as zero, as files written before the check did; one too large for a
    /// duration is an error, not a panic.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let seconds = <f64 as serde::Deserialize>::deserialize(d)?;
        Duration::try_from_secs_f64(seconds.max(0.0))
            .map_err(|_| serde::de::Error::custom(format!("{seconds} s is not a duration")))
    }
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
    #[error("{rule}; message size {size} is outside that (give --sizes within it)")]
    SizeNotAccepted { rule: String, size: u32 },
    #[error("key setup failed: {0}")]
    Key(String),
    /// The library refused a job (in the pre-flight or the timed loop): the scenario fails with a
    /// fatal `refused` warning, never a timed refusal.
    #[error("{function}: {reason}")]
    Refused { function: String, reason: String },
    /// The pre-flight's tags disagree with the reference: the function is not timed.
    #[error("{function}: {reason}")]
    WrongTag { function: String, reason: String },
    #[error("session {session}: {reason}")]
    Thread { session: usize, reason: String },
    /// A switched scenario's child process failed (started, answered, or ended wrongly): not one
    /// session's failure, so no session is named.
    #[error("{0}")]
    Child(String),
    #[error("--sessions {sessions} is more than this process may run: {limit}")]
    Limit { sessions: usize, limit: String },
    #[error("--verify {verify}: --dispatch stream has one tag per stream, not one per message to check; use --verify none with it")]
    StreamVerify { verify: String },
    #[error("--dispatch stream with 0-byte messages: an empty chunk feeds the stream nothing and it never ends; give sizes of 1 byte or more")]
    EmptyStreamChunk,
    /// [`fake::FAKE_ENGINE_VAR`] holds a value the fake engine does not know.
    #[error("{0}")]
    FakeEngine(String),
    #[error("--tick {tick_ms} ms is outside {min_ms}…{max_ms} ms")]
    BadTick {
        tick_ms: f64,
        min_ms: f64,
        max_ms: f64,
    },
}

/// A snapshot of one thread's counters, taken by the coordinator at a window mark.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    pub wall_ns: u64,
    pub cpu_ns: u64,
    pub messages: u64,
    pub bytes: u64,
    /// Hardware core cycles (user space), where perf counters work.
    pub hw_cycles: Option<u64>,
    /// The CPU the thread last reported itself on.
    pub cpu: Option<usize>,
}

/// Raw counters of one session.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ThreadCounters {
    pub session: usize,
    /// The cores this thread was allowed on.
    pub allowed_cpus: Vec<usize>,
    /// The coordinator's samples at t1, at the window's midpoint and at t2.
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
    /// When the thread passed the start gate, relative to the gate's opening (never negative).
    #[serde(default)]
    pub start_offset_ns: i64,
    /// Sampled per-message latencies inside the window, submission to tag, ns (every 64th batch).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_ns: Vec<u64>,
    /// The thread's user and system CPU time as it noticed the window's marks (absent in older files,
    /// and where the thread missed the start or end mark).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_rusage: Option<WindowRusage>,
    /// What the window's calls cost this thread's core by a device driver's own account (the
    /// `dpdk` backend; absent for libraries and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offload: Option<crate::mac::OffloadCounters>,
}

/// One thread's `getrusage(RUSAGE_THREAD)` at the window's start, middle and end, read by the thread
/// itself a moment after the coordinator's mark (a batch later at most, while it runs): what splits
/// its CPU time into user and system time, as `openssl speed` counts only the first. A middle mark
/// the thread slept through is `u64::MAX`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct WindowRusage {
    pub user_ns: [u64; 3],
    pub system_ns: [u64; 3],
}

/// How long the sessions took to be ready.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Startup {
    /// Creating every session thread.
    pub spawn_ns: u64,
    /// Until every session was keyed and waiting at the gate (from the first spawn).
    pub ready_ns: u64,
}

/// Raw result of one run of a scenario.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RawRun {
    /// Coordinator's wall-clock time of the window (W) and of its first half.
    pub window_wall_ns: u64,
    pub first_half_wall_ns: u64,
    pub threads: Vec<ThreadCounters>,
    /// Key setup, measured by repeated keying before the run: mean CPU ns per key setup.
    pub key_setup_ns: f64,
    /// Whether the run was cut short (Ctrl-C).
    pub interrupted: bool,
    /// The coordinator's time series of the whole run.
    #[serde(default)]
    pub series: Series,
    #[serde(default)]
    pub coordinator: CoordinatorReport,
    #[serde(default)]
    pub startup: Startup,
    /// What the pre-flight checked before the run and what it cost ([`preflight`]); absent in files
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<preflight::Preflight>,
    /// What else happened on the cores around and in the window (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<Disturbance>,
}

impl RawRun {
    /// A run cancelled before its sessions started: nothing measured.
    fn cut_short(key_setup_ns: f64) -> RawRun {
        RawRun {
            key_setup_ns,
            interrupted: true,
            ..RawRun::default()
        }
    }
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
    if !(MIN_TICK..=MAX_TICK).contains(&s.tick) {
        return Err(EngineError::BadTick {
            tick_ms: s.tick.as_secs_f64() * 1e3,
            min_ms: MIN_TICK.as_secs_f64() * 1e3,
            max_ms: MAX_TICK.as_secs_f64() * 1e3,
        });
    }
    if s.window_start >= s.window_end || s.window_end > s.duration {
        return Err(EngineError::BadWindow {
            start: s.window_start.as_secs_f64(),
            end: s.window_end.as_secs_f64(),
            duration: s.duration.as_secs_f64(),
        });
    }
    if s.dispatch == Dispatch::Stream && s.verify != VerifyMode::None {
        return Err(EngineError::StreamVerify {
            verify: format!("{:?}", s.verify).to_lowercase(),
        });
    }
    let sizes = s.size.sizes();
    if s.dispatch == Dispatch::Stream && sizes.contains(&0) {
        return Err(EngineError::EmptyStreamChunk);
    }
    if sizes.is_empty() {
        return Err(EngineError::EmptySizes);
    }
    if let Some(&size) = sizes.iter().find(|&&n| n > MAX_MESSAGE_LEN) {
        return Err(EngineError::SizeTooLarge {
            size: size.into(),
            limit: MAX_MESSAGE_LEN,
        });
    }
    // The 3GPP functions take bounded lengths (no empty message, at most 8,188 bytes for 128-EIA3, …)
    // and some libraries have limits of their own (ipsec-mb's 65,534-byte jobs): a job the library
    // refused must never be timed as if computed.
    if let Some(&size) = sizes.iter().find(|&&n| !s.function.accepts_bytes(n.into())) {
        return Err(EngineError::SizeNotAccepted {
            rule: s.function.length_rule(),
            size,
        });
    }
    Ok(())
}

pub use crate::system::format_cpu_list;

/// The data every session reads: one shared pool and one cyclic schedule of (offset, length).
pub struct Workload {
    pub pool: Arc<Vec<u8>>,
    /// Offsets and lengths of the messages, cycled by every session from its own starting slot.
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

/// Bytes of the first `m` messages of a session, from the cyclic schedule: what the coordinator turns
/// a published message count into (see [`hot_loop::Progress`]).
#[derive(Debug, Clone)]
pub struct ScheduleBytes {
    /// prefix[i] = bytes of schedule slots 0..i; prefix.len() = slots + 1.
    prefix: Vec<u64>,
    /// Every message has this size (the common case): a multiplication instead of two divisions,
    /// which matters when the coordinator converts 10,000 counts every tick.
    uniform: Option<u64>,
}

impl ScheduleBytes {
    pub fn new(schedule: &[(u32, u32)]) -> ScheduleBytes {
        let mut prefix = Vec::with_capacity(schedule.len() + 1);
        let mut sum = 0u64;
        prefix.push(0);
        for &(_, len) in schedule {
            sum += u64::from(len);
            prefix.push(sum);
        }
        let uniform = match schedule.first() {
            Some(&(_, len)) if schedule.iter().all(|&(_, l)| l == len) => Some(u64::from(len)),
            _ => None,
        };
        ScheduleBytes { prefix, uniform }
    }

    /// Bytes of `messages` consecutive messages starting at schedule slot `start`, wrapping around.
    pub fn bytes(&self, start: usize, messages: u64) -> u64 {
        if let Some(size) = self.uniform {
            return messages * size;
        }
        let slots = (self.prefix.len() - 1) as u64;
        if slots == 0 {
            return 0;
        }
        let total = self.prefix[slots as usize];
        let start = (start as u64 % slots) as usize;
        let (rounds, rest) = (messages / slots, (messages % slots) as usize);
        let end = start + rest;
        let partial = if end <= slots as usize {
            self.prefix[end] - self.prefix[start]
        } else {
            total - self.prefix[start] + self.prefix[end - slots as usize]
        };
        rounds * total + partial
    }
}

/// The schedule slot session `session` of `sessions` starts at: sessions are spread over the schedule
/// so that they read different parts of the pool.
pub fn start_slot(session: usize, sessions: usize, slots: usize) -> usize {
    session * slots / sessions.max(1)
}

impl Workload {
    /// Mean message length of the schedule, in whole bytes (what the batch length follows).
    pub fn mean_len(&self) -> usize {
        self.schedule
            .iter()
            .map(|&(_, l)| l as usize)
            .sum::<usize>()
            / self.schedule.len().max(1)
    }

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

/// Stops the sessions waiting at the gate if the run leaves early (an error or a panic), so that the
/// scope joining them cannot wait forever.
struct GateGuard<'a>(&'a StartGate);

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Per-session verify buffers in bytes (inline: an expected tag per schedule slot; after: a ring).
pub fn verify_buffer_bytes(s: &Scenario, schedule_len: usize) -> usize {
    let tag_len = s.tag_len();
    match s.verify {
        VerifyMode::None => 0,
        VerifyMode::Inline => schedule_len.min(MAX_INLINE_SCHEDULE) * tag_len,
        VerifyMode::After => KEPT_TAGS * (tag_len + 4),
    }
}

/// Refuse up front a scenario whose sessions this process may not create (see [`limits`]).
pub fn check_limits(s: &Scenario) -> Result<(), EngineError> {
    let schedule = if s.verify == VerifyMode::Inline {
        MAX_INLINE_SCHEDULE
    } else {
        MAX_SCHEDULE
    };
    limits::check(
        s.sessions,
        verify_buffer_bytes(s, schedule),
        &limits::SystemLimits::read(),
    )
}

/// Run one scenario once. `cancel` is polled at every tick (Ctrl-C ends the run early; a run cut short
/// before its window closed is marked `interrupted`).
pub fn run(s: &Scenario, cancel: &AtomicBool) -> Result<RawRun, EngineError> {
    // The CLI's own tests pin exit codes against counters that do not depend on the machine's load
    // (STYLE 16); the switch is read here only, so it reaches a switched child's runs too.
    if let Some(verdict) = fake::chosen()? {
        return fake::run(s, verdict, cancel);
    }
    validate(s, &crate::system::online_cpus())?;
    let known = prepared::recall(s);
    if known.is_none() {
        check_limits(s)?;
    }
    let workload = Workload::build(s);
    let keys = session_keys(s);
    let prepared = match known {
        Some(known) => known,
        None => prepare_first(s, &workload, &keys[0])?,
    };
    let (key_setup_ns, preflight) = (prepared.key_setup_ns, prepared.preflight);
    let slots: Vec<SessionSlot> = (0..s.sessions)
        .map(|i| SessionSlot::new(start_slot(i, s.sessions, workload.schedule.len())))
        .collect();
    let sizes = ScheduleBytes::new(&workload.schedule);
    let gate = StartGate::new();
    let phase = AtomicU32::new(coordinator::PHASE_RUN);
    let plan = coordinator::Plan {
        tick: effective_tick(s.tick, s.sessions),
        requested_tick: s.tick,
        window_start: s.window_start,
        window_end: s.window_end,
        duration: s.duration,
        cores: s.cores.clone(),
        core_clock: prepared.first,
    };

    std::thread::scope(|scope| {
        let guard = GateGuard(&gate);
        let spawn_start = clock::wall_ns();
        // On an error the guard stops the threads already waiting at the gate; the scope joins them.
        let meeting = Rendezvous {
            slots: &slots,
            gate: &gate,
            phase: &phase,
        };
        let handles = spawn_sessions(scope, s, &keys, &workload, meeting)?;
        let spawned_ns = clock::wall_ns() - spawn_start;
        if !gate.wait_arrivals(s.sessions, cancel) {
            drop(guard);
            return Ok(RawRun::cut_short(key_setup_ns));
        }
        let ready_ns = clock::wall_ns() - spawn_start;
        if gate.any_failed() {
            drop(guard);
            return Err(setup_failure(handles));
        }
        let outcome = std::thread::Builder::new()
            .name("coordinator".to_string())
            .spawn_scoped(scope, || {
                coordinator::coordinate(&plan, &slots, &sizes, &gate, &phase, cancel)
            })
            .map_err(|e| EngineError::Thread {
                session: 0,
                reason: format!("cannot start the coordinator thread: {e}"),
            })?
            .join();
        // The coordinator stores PHASE_STOP when it returns; if it panicked, stop the sessions here.
        phase.store(coordinator::PHASE_STOP, Ordering::Release);
        let outcome = outcome.map_err(|_| EngineError::Thread {
            session: 0,
            reason: "the coordinator thread panicked".to_string(),
        })?;
        drop(guard);
        let threads = join_sessions(handles, &outcome, &slots, &s.function)?;
        let [m0, m1, m2] = outcome.mark_ns;
        let closed = !outcome.interrupted;
        Ok(RawRun {
            window_wall_ns: if closed { m2.saturating_sub(m0) } else { 0 },
            first_half_wall_ns: if closed { m1.saturating_sub(m0) } else { 0 },
            threads,
            key_setup_ns,
            interrupted: outcome.interrupted,
            series: outcome.series,
            coordinator: outcome.report,
            startup: Startup {
                spawn_ns: spawned_ns,
                ready_ns,
            },
            preflight,
            disturbance: Some(outcome.disturbance),
        })
    })
}

/// What does not change between a scenario's repeats is found out once per process: the checks
/// against the machine, the pre-flight's tags and the key-setup cost. The first run records them
/// (its `preflight`); a later one reuses them ([`prepared::recall`]), so its time goes to its window
/// (issue 44: set-up was ~4 ms of every ~80 ms run).
fn prepare_first(
    s: &Scenario,
    workload: &Workload,
    key: &[u8],
) -> Result<prepared::Prepared, EngineError> {
    // Tags at the lengths and in the dispatch mode about to be timed, checked before any timing.
    let preflight = preflight::check(s, workload, key)?;
    let key_setup_ns = measure_key_setup(s)?;
    prepared::remember(s, key_setup_ns);
    Ok(prepared::Prepared {
        key_setup_ns,
        preflight: Some(preflight),
        first: true,
    })
}

type SessionHandle<'scope> = std::thread::ScopedJoinHandle<'scope, Result<SessionEnd, String>>;

/// What the sessions and the coordinator meet at during a run: each session's slot (its counters,
/// which the coordinator samples), the start gate and the phase word.
#[derive(Clone, Copy)]
struct Rendezvous<'a> {
    slots: &'a [SessionSlot],
    gate: &'a StartGate,
    phase: &'a AtomicU32,
}

/// Start one thread per session (each binds, keys itself and waits at the gate), pinned as the
/// scenario says; an error names the session whose thread could not be created.
fn spawn_sessions<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    s: &'env Scenario,
    keys: &'env [Vec<u8>],
    workload: &'env Workload,
    meeting: Rendezvous<'env>,
) -> Result<Vec<SessionHandle<'scope>>, EngineError> {
    let Rendezvous { slots, gate, phase } = meeting;
    let mut handles = Vec::with_capacity(s.sessions);
    for (session, key) in keys.iter().enumerate() {
        let allowed = match s.pinning {
            Pinning::RoundRobin => vec![s.cores[session % s.cores.len()]],
            Pinning::Float => s.cores.clone(),
        };
        let ctx = SessionContext {
            session,
            sessions: s.sessions,
            allowed,
            key,
            function: s.function,
            verify: s.verify,
            rekey_every: s.rekey_every,
            dispatch: s.dispatch,
            tag_len: s.tag_len(),
            params: s.key_params(),
            workload,
            slot: &slots[session],
            gate,
            phase,
        };
        let spawned = std::thread::Builder::new()
            .name(format!("session-{session}"))
            .stack_size(limits::SESSION_STACK_BYTES)
            .spawn_scoped(scope, move || session_thread(ctx));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                return Err(EngineError::Thread {
                    session,
                    reason: format!("cannot start thread {} of {}: {e}", session + 1, s.sessions),
                });
            }
        }
    }
    Ok(handles)
}

/// A session failed to set up (the gate was stopped): join the sessions and name the first that
/// says why.
fn setup_failure(handles: Vec<SessionHandle<'_>>) -> EngineError {
    for (session, h) in handles.into_iter().enumerate() {
        if let Ok(Err(reason)) = h.join() {
            return EngineError::Thread { session, reason };
        }
    }
    EngineError::Thread {
        session: 0,
        reason: "a session failed to set up".to_string(),
    }
}

/// One key per session (random from the scenario's seed), or one shared key.
fn session_keys(s: &Scenario) -> Vec<Vec<u8>> {
    let mut master_key = vec![0u8; s.function.algorithm.default_key_len];
    let mut rng = rand::rngs::StdRng::seed_from_u64(s.seed ^ 0x6b65_7973);
    rng.fill_bytes(&mut master_key);
    (0..s.sessions)
        .map(|_| match s.keys {
            KeyMode::Shared => master_key.clone(),
            KeyMode::PerSession => {
                let mut k = vec![0u8; master_key.len()];
                rng.fill_bytes(&mut k);
                k
            }
        })
        .collect()
}

/// Join every session and pair what it reports with the coordinator's samples of it.
fn join_sessions(
    handles: Vec<SessionHandle<'_>>,
    outcome: &coordinator::Outcome,
    slots: &[SessionSlot],
    function: &Function,
) -> Result<Vec<ThreadCounters>, EngineError> {
    let mut threads = Vec::with_capacity(handles.len());
    for (session, h) in handles.into_iter().enumerate() {
        let end = match h.join() {
            Ok(Ok(end)) => end,
            Ok(Err(reason)) => return Err(EngineError::Thread { session, reason }),
            Err(_) => {
                return Err(EngineError::Thread {
                    session,
                    reason: "thread panicked".to_string(),
                })
            }
        };
        if let Some(reason) = end.refused {
            return Err(EngineError::Refused {
                function: function.id(),
                reason: format!("session {session}: {reason}; the scenario is not timed"),
            });
        }
        let [start, mid, stop] = outcome.marks[session];
        threads.push(ThreadCounters {
            session,
            allowed_cpus: end.allowed_cpus,
            window_start: start,
            window_mid: mid,
            window_end: stop,
            key_setup_cpu_ns: end.key_setup_cpu_ns,
            verify_failures: end.verify_failures,
            verified_after: end.verified_after,
            verify_after_failures: end.verify_after_failures,
            total_messages: end.total_messages,
            rekeys: end.rekeys,
            start_offset_ns: end.started_ns as i64 - outcome.t0_ns as i64,
            latency_ns: end.latency_ns,
            window_rusage: slots[session].window_rusage(),
            offload: end.offload,
        });
    }
    Ok(threads)
}

/// Mean CPU time of one key setup, from repeated keying in the coordinator (untimed by the window).
fn measure_key_setup(s: &Scenario) -> Result<f64, EngineError> {
    let key = vec![0x5au8; s.function.algorithm.default_key_len];
    let once = || {
        s.function
            .with_key(&key, s.key_params())
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

struct SessionContext<'a> {
    session: usize,
    sessions: usize,
    allowed: Vec<usize>,
    key: &'a [u8],
    function: Function,
    verify: VerifyMode,
    rekey_every: Option<u64>,
    dispatch: Dispatch,
    /// Tag bytes per message and the key parameters that produce them ([`Scenario::tag_len`]).
    tag_len: usize,
    params: KeyParams<'static>,
    workload: &'a Workload,
    slot: &'a SessionSlot,
    gate: &'a StartGate,
    phase: &'a AtomicU32,
}

/// What a session reports when it ends; the coordinator supplies its window samples.
struct SessionEnd {
    allowed_cpus: Vec<usize>,
    key_setup_cpu_ns: u64,
    verify_failures: u64,
    verified_after: u64,
    verify_after_failures: u64,
    total_messages: u64,
    rekeys: u64,
    started_ns: u64,
    latency_ns: Vec<u64>,
    /// The library refused a job: its reason. The session stopped there.
    refused: Option<String>,
    /// A device driver's account of the window ([`crate::mac::KeyedMac::offload`]).
    offload: Option<crate::mac::OffloadCounters>,
}

impl SessionEnd {
    /// A session whose gate never opened (the run was cancelled or another session failed).
    fn not_started(allowed_cpus: Vec<usize>, key_setup_cpu_ns: u64) -> SessionEnd {
        SessionEnd {
            allowed_cpus,
            key_setup_cpu_ns,
            verify_failures: 0,
            verified_after: 0,
            verify_after_failures: 0,
            total_messages: 0,
            rekeys: 0,
            started_ns: 0,
            latency_ns: Vec::new(),
            refused: None,
            offload: None,
        }
    }
}

/// Verify-after's ring of kept tags, `tag_len` bytes each, and the schedule slot of each; empty in the
/// other verify modes. The hot loop fills it ([`SessionLoop::kept`]); it is checked after the run.
struct KeptTags {
    tags: Vec<u8>,
    slots: Vec<u32>,
    tag_len: usize,
}

impl KeptTags {
    fn new(verify: VerifyMode, tag_len: usize) -> KeptTags {
        let ring = if verify == VerifyMode::After {
            KEPT_TAGS
        } else {
            0
        };
        KeptTags {
            tags: vec![0u8; ring * tag_len],
            slots: vec![0u32; ring],
            tag_len,
        }
    }

    /// Verify-after: recompute the tags kept of a session's `messages` (untimed, after the run) and
    /// compare; the count checked and the count that failed. A refusal stops the check and becomes the
    /// session's `refused` reason unless it already has one.
    fn verify(
        &self,
        mac: &mut dyn crate::mac::KeyedMac,
        wl: &Workload,
        nonce: &mut [u8],
        messages: u64,
        refused: &mut Option<String>,
    ) -> (u64, u64) {
        let tag_len = self.tag_len;
        let mut verified_after = 0;
        let mut verify_after_failures = 0;
        let kept_count = (messages as usize).min(self.slots.len());
        for r in 0..kept_count {
            let slot = self.slots[r] as usize;
            let (off, len) = wl.schedule[slot];
            fill_nonce(nonce, slot);
            let msg = &wl.pool[off as usize..(off + len) as usize];
            verified_after += 1;
            match mac.verify(nonce, msg, &self.tags[r * tag_len..(r + 1) * tag_len]) {
                Ok(true) => {}
                Ok(false) => verify_after_failures += 1,
                Err(why) => {
                    refused.get_or_insert_with(|| format!("verify-after: {why}"));
                    break;
                }
            }
        }
        (verified_after, verify_after_failures)
    }
}

fn publish_cpu(slot: &SessionSlot) {
    let cpu = clock::current_cpu().map_or(-1, |c| c as i32);
    slot.cpu.store(cpu, Ordering::Relaxed);
}

/// One session: bind, key, publish its clock, wait at the gate, run until stopped, verify kept tags.
fn session_thread(ctx: SessionContext<'_>) -> Result<SessionEnd, String> {
    // Any failure must still count itself in at the gate, or the coordinator would wait forever.
    let (mut mac, key_setup_cpu_ns, expected, counter) = match prepare_session(&ctx) {
        Ok(p) => p,
        Err(e) => {
            ctx.gate.arrive_failed(ctx.sessions);
            return Err(e);
        }
    };
    publish_cpu(ctx.slot);
    if !ctx.gate.arrive_and_wait(ctx.sessions) {
        return Ok(SessionEnd::not_started(ctx.allowed, key_setup_cpu_ns));
    }
    let started_ns = clock::wall_ns();
    ctx.slot.started_ns.store(started_ns, Ordering::Relaxed);

    let algorithm = ctx.function.algorithm;
    let tag_len = ctx.tag_len;
    let wl = ctx.workload;
    let slots = wl.schedule.len();
    let mut nonce = vec![0u8; algorithm.nonce_len.unwrap_or(0)];
    let mut kept = KeptTags::new(ctx.verify, tag_len);
    // Latency samples: bounded so that 10,000 sessions keep a few thousand in all.
    let mut latency = Vec::with_capacity((LATENCY_SAMPLES / ctx.sessions.max(1)).max(16));
    let mut work = SessionLoop {
        pool: &wl.pool,
        schedule: &wl.schedule,
        next: start_slot(ctx.session, ctx.sessions, slots),
        nonce_len: nonce.len(),
        tag_len,
        batch: hot_loop::messages_per_call(ctx.dispatch, wl.mean_len()),
        dispatch: ctx.dispatch,
        latency: &mut latency,
        verify: ctx.verify,
        expected: &expected,
        kept: &mut kept.tags,
        kept_slots: &mut kept.slots,
        phase: ctx.phase,
        seen: coordinator::PHASE_RUN,
        progress: &ctx.slot.progress,
        messages: 0,
        verify_failures: 0,
        stream: hot_loop::Stream::default(),
    };
    let mut keys = Keying::every(ctx.rekey_every);
    let mut account = DriverAccount::default();
    let mut refused = None;
    loop {
        let phase = ctx.phase.load(Ordering::Acquire);
        if phase != work.seen {
            // A window mark: note where we run, for the off-core check, and the user/system split
            // (the coordinator samples the rest).
            publish_cpu(ctx.slot);
            ctx.slot.publish_rusage(phase);
            account.mark(phase, mac.as_ref(), keys.replaced);
            work.seen = phase;
            if phase == coordinator::PHASE_STOP {
                break;
            }
        }
        let before = work.messages;
        if let Err(why) = work.run(mac.as_mut(), keys.every - keys.since) {
            // Stop tagging: nothing after a refusal is work. The coordinator finishes its window and
            // the join fails the scenario with this reason.
            refused = Some(why.to_string());
            break;
        }
        keys.since += work.messages - before;
        if keys.since >= keys.every {
            if let Some(why) = keys.renew(&ctx, &mut mac)? {
                refused = Some(why);
                break;
            }
            // A new key has no stream open.
            work.stream = hot_loop::Stream::default();
        }
    }
    drop(counter); // the coordinator no longer reads it

    let messages = work.messages;
    let verify_failures = work.verify_failures;
    let (verified_after, verify_after_failures) =
        kept.verify(mac.as_mut(), wl, &mut nonce, messages, &mut refused);
    Ok(SessionEnd {
        allowed_cpus: ctx.allowed,
        key_setup_cpu_ns,
        verify_failures,
        verified_after,
        verify_after_failures,
        total_messages: messages,
        rekeys: keys.rekeys,
        started_ns,
        latency_ns: latency,
        refused,
        offload: account.taken,
    })
}

/// A session's keys over its run (`--rekey`): due every `every` messages, `since` the last.
#[derive(Default)]
struct Keying {
    every: u64,
    since: u64,
    rekeys: u64,
    /// Keyed objects replaced (a backend without an in-place rekey): each starts its driver
    /// account again.
    replaced: u64,
}

impl Keying {
    /// A new key every `every` messages (`--rekey`), or never.
    fn every(every: Option<u64>) -> Keying {
        Keying {
            every: every.unwrap_or(NO_LIMIT),
            ..Keying::default()
        }
    }

    /// A new key: in place where the backend changes keys so (a device's new session on the same
    /// queue pair), else a new keyed object. `Ok(Some(why))` when the backend refused it (the
    /// session stops tagging); `Err` when a new object could not be keyed.
    fn renew(
        &mut self,
        ctx: &SessionContext<'_>,
        mac: &mut Box<dyn crate::mac::KeyedMac>,
    ) -> Result<Option<String>, String> {
        match mac.rekey(ctx.key) {
            Some(Ok(())) => {}
            Some(Err(why)) => return Ok(Some(why.to_string())),
            None => {
                *mac = ctx
                    .function
                    .with_key(ctx.key, ctx.params)
                    .map_err(|e| e.to_string())?;
                self.replaced += 1;
            }
        }
        self.rekeys += 1;
        self.since = 0;
        Ok(None)
    }
}

/// A device driver's account of the window: its counters at the window's start (with the count
/// of replaced keyed objects then: a new object starts its counters again, so a window with a
/// replacement in it has no account; a key changed in place keeps it), and the difference taken
/// at its end.
#[derive(Default)]
struct DriverAccount {
    start: Option<(crate::mac::OffloadCounters, u64)>,
    taken: Option<crate::mac::OffloadCounters>,
    closed: bool,
}

impl DriverAccount {
    /// At a phase mark of the coordinator.
    fn mark(&mut self, phase: u32, mac: &dyn crate::mac::KeyedMac, replaced: u64) {
        if phase == coordinator::PHASE_WINDOW_START {
            self.start = mac.offload().map(|c| (c, replaced));
        } else if !self.closed
            && (phase == coordinator::PHASE_WINDOW_END || phase == coordinator::PHASE_STOP)
        {
            self.closed = true;
            self.taken = match (self.start, mac.offload()) {
                (Some((start, at)), Some(end)) if at == replaced => Some(start.until(&end)),
                _ => None,
            };
        }
    }
}

type Prepared = (
    Box<dyn crate::mac::KeyedMac>,
    u64,
    Vec<u8>,
    Option<clock::CycleCounter>,
);

/// Everything a session does before the gate: bind, key (timed), precompute inline-verify tags, open
/// its cycle counter and publish its clocks.
fn prepare_session(ctx: &SessionContext<'_>) -> Result<Prepared, String> {
    affinity::bind_current_thread(&ctx.allowed)?;
    ctx.slot.publish_cpu_clock()?;
    let nonce_len = ctx.function.algorithm.nonce_len.unwrap_or(0);
    if nonce_len > hot_loop::MAX_NONCE_LEN {
        return Err(format!(
            "a {nonce_len}-byte nonce is longer than the hot loop's {} bytes",
            hot_loop::MAX_NONCE_LEN
        ));
    }
    let key_start = clock::thread_cpu_ns();
    let mut mac = ctx
        .function
        .with_key(ctx.key, ctx.params)
        .map_err(|e| e.to_string())?;
    let key_setup_cpu_ns = clock::thread_cpu_ns() - key_start;
    let algorithm = ctx.function.algorithm;
    let tag_len = ctx.tag_len;
    let wl = ctx.workload;
    let mut nonce = vec![0u8; algorithm.nonce_len.unwrap_or(0)];
    // Inline verification compares with tags precomputed here, before the timed run.
    let mut expected = Vec::new();
    if ctx.verify == VerifyMode::Inline {
        expected = vec![0u8; wl.schedule.len() * tag_len];
        for (slot, &(off, len)) in wl.schedule.iter().enumerate() {
            fill_nonce(&mut nonce, slot);
            let msg = &wl.pool[off as usize..(off + len) as usize];
            mac.tag_into(
                &nonce,
                msg,
                &mut expected[slot * tag_len..(slot + 1) * tag_len],
            )
            .map_err(|why| format!("inline-verify tags: {why}"))?;
        }
    }
    let counter = clock::CycleCounter::open().ok();
    if let Some(c) = &counter {
        ctx.slot.perf_fd.store(c.fd(), Ordering::Release);
    }
    Ok((mac, key_setup_cpu_ns, expected, counter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_bytes_follow_the_cyclic_schedule() {
        let schedule: Vec<(u32, u32)> = [40u32, 576, 1500, 0, 64]
            .iter()
            .map(|&len| (0, len))
            .collect();
        let sizes = ScheduleBytes::new(&schedule);
        // Walk the schedule the way the hot loop does and compare at every count.
        for start in 0..schedule.len() {
            let mut bytes = 0u64;
            let mut next = start;
            for m in 0..23u64 {
                assert_eq!(sizes.bytes(start, m), bytes, "start {start}, {m} messages");
                bytes += u64::from(schedule[next].1);
                next = (next + 1) % schedule.len();
            }
        }
        assert_eq!(ScheduleBytes::new(&[]).bytes(0, 10), 0);
    }
}
