//! The coordinator: the one thread that owns the clock of a run.
//!
//! It opens the start gate at `t0`, wakes at fixed ticks (default 10 ms) and at the window's start,
//! middle and end, and at each reads every session's published counters — so the window's ends are its
//! own instants, exact whatever the scheduler does to the sessions. The earlier design let each session
//! sample itself when it next noticed a phase change; with 50 runnable threads per core a session may
//! not run for a whole scheduling period, its samples collapsed onto each other, and 100 sessions on 2
//! cores measured nothing.
//!
//! Reading another thread's CPU clock is a system call (`clock_gettime` on the clock id from
//! `pthread_getcpuclockid`), about a microsecond. So per-thread clocks are read only where needed: at
//! the window's three marks (every thread) and, for runs with few sessions, at a coarse grain for the
//! per-thread series. Every tick reads the counters (plain loads) and the process CPU clock, one call.
//! The coordinator asks for the best scheduling priority it may have (SCHED_FIFO, else the lowest nice
//! value), runs on the scenario's core set, and reports what it got, how late its wake-ups were, and
//! its own share of a CPU.

use super::clock;
use super::gate::StartGate;
use super::hot_loop::Progress;
use super::{Sample, ScheduleBytes};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// Phase word values. Sessions run while it is ≥ `PHASE_RUN` and not `PHASE_STOP`; each mark of the
/// window increments it, and a session that notices a change records the CPU it is on.
pub const PHASE_RUN: u32 = 1;
pub const PHASE_STOP: u32 = u32::MAX;
/// The marks of the window's start and end (the middle one is between). A window that ends with the
/// run has no end mark: its end is `PHASE_STOP`.
pub const PHASE_WINDOW_START: u32 = PHASE_RUN + 1;
pub const PHASE_WINDOW_END: u32 = PHASE_RUN + 3;

/// Per-thread series are kept for runs with at most this many sessions: beyond, reading every
/// thread's CPU clock at a fine grain would cost the coordinator more than it measures, and the JSON
/// would grow with sessions × ticks.
pub const THREAD_SERIES_MAX_SESSIONS: usize = 64;
/// The per-thread series takes one point every this many ticks.
pub const THREAD_SERIES_EVERY_TICKS: usize = 10;
/// Up to this many sessions, each tick's CPU time is the sum of every session's own CPU clock (a
/// read costs ~0.3 µs: 64 of them every 10 ms are 0.2 % of a core). Beyond, the process clock is
/// read once per tick; the kernel updates it for a thread running on another CPU only at that CPU's
/// scheduler tick (4 ms at HZ = 250), so a 10 ms tick then holds 8 or 12 ms of a 10 ms slice: with it
/// the default run's 10 ms blocks read ±20 % apart, alternately high and low (lag-1
/// autocorrelation −0.4 on the 2-core development VM), and batch means took that for noise.
pub const PRECISE_CPU_MAX_SESSIONS: usize = THREAD_SERIES_MAX_SESSIONS;

/// What a session publishes for the coordinator, one per session, on its own cache lines.
#[derive(Debug)]
pub struct SessionSlot {
    /// Messages, stored by the hot loop.
    pub progress: Progress,
    /// The schedule slot the session starts at (its bytes follow from its message count).
    pub start_slot: usize,
    /// CPU-time clock id of the session's thread (`pthread_getcpuclockid`), set before the gate.
    pub cpu_clock: AtomicI32,
    /// The session thread's kernel id (`gettid`; 0 unknown), set before the gate: its scheduler
    /// statistics are read by name from `/proc/self/task`.
    pub tid: AtomicI32,
    pub has_cpu_clock: AtomicBool,
    /// Hardware cycle counter fd owned by the session, or −1.
    pub perf_fd: AtomicI32,
    /// The CPU the session last saw itself on (−1 unknown).
    pub cpu: AtomicI32,
    /// Wall time the session passed the gate.
    pub started_ns: AtomicU64,
    /// The session's own user and system CPU time when it noticed each window mark
    /// ([`SessionSlot::NO_RUSAGE`] until then): only the thread itself can ask for the split.
    pub user_ns: [AtomicU64; 3],
    pub system_ns: [AtomicU64; 3],
}

impl SessionSlot {
    pub fn new(start_slot: usize) -> Self {
        SessionSlot {
            progress: Progress::default(),
            start_slot,
            cpu_clock: AtomicI32::new(0),
            tid: AtomicI32::new(0),
            has_cpu_clock: AtomicBool::new(false),
            perf_fd: AtomicI32::new(-1),
            cpu: AtomicI32::new(-1),
            started_ns: AtomicU64::new(0),
            user_ns: std::array::from_fn(|_| AtomicU64::new(Self::NO_RUSAGE)),
            system_ns: std::array::from_fn(|_| AtomicU64::new(Self::NO_RUSAGE)),
        }
    }
}

impl SessionSlot {
    /// A mark whose user/system split the session did not record.
    pub const NO_RUSAGE: u64 = u64::MAX;

    /// Called by the session thread when it sees phase `phase`: its user/system split at that window
    /// mark (the phase after the run phase is mark 0). Phases outside the window are ignored.
    pub fn publish_rusage(&self, phase: u32) {
        let Some(mark) = phase.checked_sub(PHASE_RUN + 1).map(|m| m as usize) else {
            return;
        };
        if mark >= 3 {
            return;
        }
        if let Some((user, system)) = clock::thread_user_system_ns() {
            self.user_ns[mark].store(user, Ordering::Relaxed);
            self.system_ns[mark].store(system, Ordering::Relaxed);
        }
    }

    /// The split at the window's start and end, if the session recorded both.
    pub fn window_rusage(&self) -> Option<super::WindowRusage> {
        let read = |a: &[AtomicU64; 3]| a.each_ref().map(|v| v.load(Ordering::Relaxed));
        let (user_ns, system_ns) = (read(&self.user_ns), read(&self.system_ns));
        let known = |i: usize| user_ns[i] != Self::NO_RUSAGE && system_ns[i] != Self::NO_RUSAGE;
        (known(0) && known(2)).then_some(super::WindowRusage { user_ns, system_ns })
    }

    /// Called by the session thread itself before the gate: publish its CPU clock id.
    pub fn publish_cpu_clock(&self) -> Result<(), String> {
        let id = crate::system::kernel::thread_cpu_clock()?;
        self.cpu_clock.store(id, Ordering::Relaxed);
        self.tid
            .store(crate::system::kernel::thread_id(), Ordering::Relaxed);
        self.has_cpu_clock.store(true, Ordering::Release);
        Ok(())
    }

    /// Messages and bytes so far.
    fn counts(&self, sizes: &ScheduleBytes) -> (u64, u64) {
        let messages = self.progress.messages.load(Ordering::Relaxed);
        (messages, sizes.bytes(self.start_slot, messages))
    }

    /// Full sample of this session, read from the coordinator.
    fn sample(&self, sizes: &ScheduleBytes) -> Sample {
        let (messages, bytes) = self.counts(sizes);
        let cpu_ns = if self.has_cpu_clock.load(Ordering::Acquire) {
            clock::clock_ns(self.cpu_clock.load(Ordering::Relaxed))
        } else {
            0
        };
        let fd = self.perf_fd.load(Ordering::Acquire);
        let hw_cycles = (fd >= 0).then(|| clock::read_counter_fd(fd)).flatten();
        let cpu = self.cpu.load(Ordering::Relaxed);
        Sample {
            wall_ns: clock::wall_ns(),
            cpu_ns,
            messages,
            bytes,
            hw_cycles,
            cpu: (cpu >= 0).then_some(cpu as usize),
        }
    }
}

/// Aggregate time series of one run: one point per tick and per window mark, cumulative counters.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Series {
    /// The requested tick.
    pub tick_ns: u64,
    /// Instant of each point, ns after t0 (the gate opening).
    pub t_ns: Vec<u64>,
    /// Cumulative messages and bytes of all sessions.
    pub messages: Vec<u64>,
    pub bytes: Vec<u64>,
    /// Cumulative CPU time of the sessions together: the sum of their own clocks up to
    /// [`PRECISE_CPU_MAX_SESSIONS`] sessions, else the process's less the coordinator's own.
    pub cpu_ns: Vec<u64>,
    /// Indices of the points at the window's start and end.
    pub window_first: usize,
    pub window_last: usize,
    /// Per-thread points at a coarse grain, for runs with few sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<ThreadSeries>,
}

/// Per-thread series: `bytes[i][k]`, `cpu_ns[i][k]` of session i at instant `t_ns[k]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ThreadSeries {
    pub every_ticks: usize,
    pub t_ns: Vec<u64>,
    pub bytes: Vec<Vec<u64>>,
    pub cpu_ns: Vec<Vec<u64>>,
}

/// How the coordinator ran: what it asked for and got, and how well it kept time.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CoordinatorReport {
    /// "SCHED_FIFO 99", or "SCHED_OTHER nice -20" with the reason FIFO was refused.
    pub scheduling: String,
    /// The CPUs it ran on.
    pub cpus: String,
    /// The tick asked for and the tick used (longer for many sessions, to bound its own cost).
    #[serde(default)]
    pub tick_requested_ns: u64,
    #[serde(default)]
    pub tick_ns: u64,
    pub ticks: usize,
    /// Lateness of its wake-ups against the schedule.
    pub lateness_max_ns: u64,
    pub lateness_p99_ns: u64,
    pub lateness_mean_ns: f64,
    /// Longest full pass (reading every session's CPU clock) at a window mark.
    pub full_pass_max_ns: u64,
    /// Its CPU time over its wall time: the sampler's own cost.
    pub cpu_share: f64,
}

/// What the coordinator hands back.
pub struct Outcome {
    pub t0_ns: u64,
    /// Per session: samples at window start, middle and end.
    pub marks: Vec<[Sample; 3]>,
    /// Coordinator instants of the three marks (start of each full pass).
    pub mark_ns: [u64; 3],
    pub series: Series,
    pub report: CoordinatorReport,
    pub interrupted: bool,
    /// What else happened on the cores around and inside the window.
    pub disturbance: Disturbance,
}

/// What could explain a run's deviation from its scenario's other runs, read by the coordinator:
/// the core clock just before the sessions start and just after they stop (a dependent-add chain on
/// the coordinator's core, which shares the session's core set), and over the window the session
/// CPUs' steal time and interrupts and the sessions' run delay and involuntary context switches. Each
/// is `None` where it could not be read (no `/proc`, more than [`THREAD_SERIES_MAX_SESSIONS`] sessions
/// for the per-thread figures). docs/methodology.md ("What the wander is") says how much each explains.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Disturbance {
    pub core_hz_before: Option<f64>,
    pub core_hz_after: Option<f64>,
    /// Steal time of the session CPUs in the window, ns (read in 10 ms clock ticks).
    pub steal_ns: Option<u64>,
    /// Interrupts taken by the session CPUs in the window.
    pub interrupts: Option<u64>,
    /// The sessions' time runnable but not running in the window, summed, ns.
    pub run_delay_ns: Option<u64>,
    /// The sessions' involuntary context switches in the window, summed.
    pub involuntary_switches: Option<u64>,
}

/// The counters behind [`Disturbance`] at one window mark.
#[derive(Debug, Clone, Copy, Default)]
struct DisturbanceMark {
    steal_ticks: Option<u64>,
    interrupts: Option<u64>,
    run_delay_ns: Option<u64>,
    involuntary_switches: Option<u64>,
}

/// Length of the core-clock chain before and after a scenario's first run: long enough to read to a
/// few tenths of a percent.
const CLOCK_CHAIN_SPAN: Duration = Duration::from_micros(300);

impl DisturbanceMark {
    fn read(
        probe: &crate::system::conditions::Probe,
        cores: &[usize],
        slots: &[SessionSlot],
    ) -> Self {
        let per_thread = slots.len() <= THREAD_SERIES_MAX_SESSIONS;
        let tids: Vec<i32> = slots
            .iter()
            .map(|s| s.tid.load(Ordering::Relaxed))
            .collect();
        let known = per_thread && tids.iter().all(|&t| t > 0);
        DisturbanceMark {
            steal_ticks: probe.steal_ticks(cores),
            interrupts: probe.interrupts(cores),
            run_delay_ns: known
                .then(|| {
                    tids.iter()
                        .map(|&t| probe.thread_schedstat(t).map(|s| s[1]))
                        .sum()
                })
                .flatten(),
            involuntary_switches: known
                .then(|| {
                    tids.iter()
                        .map(|&t| probe.thread_involuntary_switches(t))
                        .sum()
                })
                .flatten(),
        }
    }

    /// The window's share: `end` − `self` for each counter both marks read.
    fn until(self, end: DisturbanceMark) -> (Option<u64>, Option<u64>, Option<u64>, Option<u64>) {
        let d = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
        (
            d(self.steal_ticks, end.steal_ticks),
            d(self.interrupts, end.interrupts),
            d(self.run_delay_ns, end.run_delay_ns),
            d(self.involuntary_switches, end.involuntary_switches),
        )
    }
}

/// Nanoseconds per `/proc/stat` clock tick (`USER_HZ`, 100 on every Linux ABI).
const NS_PER_USER_HZ_TICK: u64 = 10_000_000;

/// The run's schedule, relative to t0.
pub struct Plan {
    pub tick: Duration,
    /// The tick asked for (`tick` is longer for many sessions, see `engine::effective_tick`).
    pub requested_tick: Duration,
    pub window_start: Duration,
    pub window_end: Duration,
    pub duration: Duration,
    pub cores: Vec<usize>,
    /// Read the core clock (a dependent-add chain, 2 × [`CLOCK_CHAIN_SPAN`]) before and after the
    /// run: done on a scenario's first run only. Over whole main jobs it explained 0.3–0.9 % of the
    /// repeat-to-repeat variance (docs/methodology.md, "What the wander is") and cost ~1 % of a run.
    pub core_clock: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Point {
    Tick,
    Mark(usize),
    End,
}

/// Instants of the run, sorted: every tick, the three marks, the end. A tick that coincides with a
/// mark is the mark.
fn schedule(plan: &Plan) -> Vec<(u64, Point)> {
    let to_ns = |d: Duration| d.as_nanos().min(u128::from(u64::MAX)) as u64;
    let (t1, t2, end) = (
        to_ns(plan.window_start),
        to_ns(plan.window_end),
        to_ns(plan.duration),
    );
    let mid = t1 + (t2 - t1) / 2;
    let tick = to_ns(plan.tick).max(1);
    let mut points: Vec<(u64, Point)> = vec![
        (t1, Point::Mark(0)),
        (mid, Point::Mark(1)),
        (t2, Point::Mark(2)),
    ];
    // A window that ends with the run (the default) closes it: no cool-down after its last mark,
    // the sessions all still running when it is taken.
    if end > t2 {
        points.push((end, Point::End));
    }
    let mut t = tick;
    while t < end {
        if t != t1 && t != mid && t != t2 {
            points.push((t, Point::Tick));
        }
        t += tick;
    }
    points.sort_by_key(|p| p.0);
    points
}

use crate::system::kernel::{
    raise_thread_priority as raise_priority, sleep_until_monotonic as sleep_until,
};

/// Sample every session at window mark `m` (its CPU clock read from outside): the sums of messages
/// and bytes.
fn full_pass(
    slots: &[SessionSlot],
    sizes: &ScheduleBytes,
    marks: &mut [[Sample; 3]],
    m: usize,
) -> (u64, u64) {
    let (mut messages, mut bytes) = (0u64, 0u64);
    for (i, slot) in slots.iter().enumerate() {
        let s = slot.sample(sizes);
        messages += s.messages;
        bytes += s.bytes;
        marks[i][m] = s;
    }
    (messages, bytes)
}

/// Read every session's message count at a tick (plain loads, no clock): the sums of messages and
/// bytes.
#[inline]
fn counts_pass(slots: &[SessionSlot], sizes: &ScheduleBytes) -> (u64, u64) {
    slots.iter().fold((0, 0), |(m, b), s| {
        let (sm, sb) = s.counts(sizes);
        (m + sm, b + sb)
    })
}

/// The sessions' CPU time together, each thread's clock read from outside: exact to the read,
/// where the process clock is up to a scheduler tick behind for every thread running elsewhere
/// (see [`PRECISE_CPU_MAX_SESSIONS`]). `None` when a session has no CPU clock.
fn sessions_cpu_ns(slots: &[SessionSlot]) -> Option<u64> {
    slots.iter().try_fold(0u64, |sum, s| {
        s.has_cpu_clock
            .load(Ordering::Acquire)
            .then(|| sum + clock::clock_ns(s.cpu_clock.load(Ordering::Relaxed)))
    })
}

impl Series {
    /// Append the point at `t_ns`: the sums, and `cpu`, the CPU time of the sessions together.
    #[inline]
    fn push_point(&mut self, t_ns: u64, messages: u64, bytes: u64, cpu: u64) {
        self.t_ns.push(t_ns);
        self.messages.push(messages);
        self.bytes.push(bytes);
        // The kernel sums running threads' CPU time as of their last accounting update (up to a
        // scheduler tick behind) and exited threads' exactly, so two reads can step back by a little
        // when other threads of the process start or end (tests run engines side by side): keep the
        // cumulative series monotonic, as every batch difference assumes.
        self.cpu_ns
            .push(self.cpu_ns.last().map_or(cpu, |&prev| prev.max(cpu)));
    }
}

impl ThreadSeries {
    /// Append the point at `t_ns`: every session sampled (its CPU clock read from outside).
    #[inline]
    fn push_point(&mut self, t_ns: u64, slots: &[SessionSlot], sizes: &ScheduleBytes) {
        self.t_ns.push(t_ns);
        for (i, slot) in slots.iter().enumerate() {
            let s = slot.sample(sizes);
            self.bytes[i].push(s.bytes);
            self.cpu_ns[i].push(s.cpu_ns);
        }
    }
}

impl CoordinatorReport {
    /// The wake-up figures from the lateness of every wake-up (the rest left default).
    fn from_lateness(lateness: &[u64]) -> CoordinatorReport {
        let late_f64: Vec<f64> = lateness.iter().map(|&l| l as f64).collect();
        CoordinatorReport {
            ticks: lateness.len(),
            lateness_max_ns: lateness.iter().copied().max().unwrap_or(0),
            lateness_p99_ns: crate::stats::quantile(&late_f64, 0.99).unwrap_or(0.0) as u64,
            lateness_mean_ns: crate::stats::mean(&late_f64).unwrap_or(0.0),
            ..CoordinatorReport::default()
        }
    }
}

/// What the coordinator gathers while a scenario runs: the series, the sessions' counts at the
/// three marks, and its own wake-ups.
struct Gathered {
    series: Series,
    /// Per-session series, kept only for up to [`THREAD_SERIES_MAX_SESSIONS`] sessions.
    thread_series: bool,
    per_thread: ThreadSeries,
    marks: Vec<[Sample; 3]>,
    mark_ns: [u64; 3],
    marks_disturbance: [DisturbanceMark; 3],
    lateness: Vec<u64>,
    full_pass_max_ns: u64,
    interrupted: bool,
}

impl Gathered {
    /// Nothing gathered yet for `sessions` sessions and a schedule of `points` wake-ups.
    fn new(plan: &Plan, sessions: usize, points: usize) -> Gathered {
        let thread_series = sessions <= THREAD_SERIES_MAX_SESSIONS;
        let kept = if thread_series { sessions } else { 0 };
        Gathered {
            series: Series {
                tick_ns: plan.tick.as_nanos() as u64,
                ..Series::default()
            },
            thread_series,
            per_thread: ThreadSeries {
                every_ticks: THREAD_SERIES_EVERY_TICKS,
                bytes: vec![Vec::new(); kept],
                cpu_ns: vec![Vec::new(); kept],
                ..ThreadSeries::default()
            },
            marks: vec![[Sample::default(); 3]; sessions],
            mark_ns: [0; 3],
            marks_disturbance: [DisturbanceMark::default(); 3],
            lateness: Vec::with_capacity(points),
            full_pass_max_ns: 0,
            interrupted: false,
        }
    }

    /// Mark `m` (window start, middle, end) at `woke`: every session sampled in a full pass, the
    /// disturbance read at the window's ends, and where the window lies in the series. Returns the
    /// sums of the pass.
    fn mark(
        &mut self,
        m: usize,
        woke: u64,
        (slots, sizes): (&[SessionSlot], &ScheduleBytes),
        probe: &crate::system::conditions::Probe,
        cores: &[usize],
    ) -> (u64, u64) {
        self.mark_ns[m] = woke;
        let sums = full_pass(slots, sizes, &mut self.marks, m);
        self.full_pass_max_ns = self.full_pass_max_ns.max(clock::wall_ns() - woke);
        if m != 1 {
            // After the full pass, so the window's own marks stay exact.
            self.marks_disturbance[m] = DisturbanceMark::read(probe, cores, slots);
        }
        if m == 0 {
            self.series.window_first = self.series.t_ns.len();
        } else if m == 2 {
            self.series.window_last = self.series.t_ns.len();
        }
        sums
    }

    /// What disturbed the window (nothing known of an interrupted run), with the core clock
    /// estimated before and after.
    fn disturbance(&self, core_hz_before: Option<f64>, core_hz_after: Option<f64>) -> Disturbance {
        let (steal_ticks, interrupts, run_delay_ns, involuntary_switches) = if self.interrupted {
            (None, None, None, None)
        } else {
            self.marks_disturbance[0].until(self.marks_disturbance[2])
        };
        Disturbance {
            core_hz_before,
            core_hz_after,
            steal_ns: steal_ticks.map(|t| t * NS_PER_USER_HZ_TICK),
            interrupts,
            run_delay_ns,
            involuntary_switches,
        }
    }
}

/// The sessions' CPU time together now: each session's clock read from outside where there are
/// few enough ([`PRECISE_CPU_MAX_SESSIONS`]) and each has one, else the process's less this
/// thread's.
fn sessions_cpu_now(slots: &[SessionSlot]) -> u64 {
    let sessions_cpu = if slots.len() <= PRECISE_CPU_MAX_SESSIONS {
        sessions_cpu_ns(slots)
    } else {
        None
    };
    sessions_cpu.unwrap_or_else(|| {
        let own = clock::thread_cpu_ns();
        clock::process_cpu_ns().saturating_sub(own)
    })
}

/// The coordinator's account of itself: where it ran, its tick, its wake-ups (`gathered`), and
/// its share of a core over `wall_ns` (`own_cpu_ns` of CPU time).
fn coordinator_report(
    plan: &Plan,
    scheduling: String,
    cpus_ok: bool,
    gathered: &Gathered,
    (wall_ns, own_cpu_ns): (u64, u64),
) -> CoordinatorReport {
    CoordinatorReport {
        scheduling,
        cpus: if cpus_ok {
            super::format_cpu_list(&plan.cores)
        } else {
            "unbound (affinity refused)".to_string()
        },
        tick_requested_ns: plan.requested_tick.as_nanos() as u64,
        tick_ns: plan.tick.as_nanos() as u64,
        full_pass_max_ns: gathered.full_pass_max_ns,
        cpu_share: if wall_ns > 0 {
            own_cpu_ns as f64 / wall_ns as f64
        } else {
            0.0
        },
        ..CoordinatorReport::from_lateness(&gathered.lateness)
    }
}

/// Run the clock of one scenario: open the gate, tick, mark the window, stop the sessions.
pub fn coordinate(
    plan: &Plan,
    slots: &[SessionSlot],
    sizes: &ScheduleBytes,
    gate: &StartGate,
    phase: &AtomicU32,
    cancel: &AtomicBool,
) -> Outcome {
    let cpus_ok = super::affinity::bind_current_thread(&plan.cores).is_ok();
    let scheduling = raise_priority();
    let points = schedule(plan);
    let mut run = Gathered::new(plan, slots.len(), points.len());
    let probe = crate::system::conditions::Probe::system();
    let core_clock = || {
        plan.core_clock
            .then(|| clock::estimate_core_hz(CLOCK_CHAIN_SPAN))
            .flatten()
    };
    let core_hz_before = core_clock();
    let own_cpu_start = clock::thread_cpu_ns();
    let t0 = clock::wall_ns();
    gate.open();
    for (k, &(at, point)) in points.iter().enumerate() {
        let deadline = t0 + at;
        sleep_until(deadline);
        let woke = clock::wall_ns();
        run.lateness.push(woke.saturating_sub(deadline));
        if cancel.load(Ordering::Relaxed) {
            run.interrupted = true;
            break;
        }
        let (messages, bytes) = match point {
            Point::Mark(m) => {
                phase.fetch_add(1, Ordering::AcqRel);
                run.mark(m, woke, (slots, sizes), &probe, &plan.cores)
            }
            Point::Tick | Point::End => counts_pass(slots, sizes),
        };
        let cpu = sessions_cpu_now(slots);
        run.series.push_point(woke - t0, messages, bytes, cpu);
        if run.thread_series && (k % THREAD_SERIES_EVERY_TICKS == 0 || point == Point::End) {
            run.per_thread.push_point(woke - t0, slots, sizes);
        }
    }
    phase.store(PHASE_STOP, Ordering::Release);
    let wall = clock::wall_ns() - t0;
    let own_cpu = clock::thread_cpu_ns() - own_cpu_start;
    // The sessions have seen the stop; the chain runs while they wind down (a batch at most).
    let disturbance = run.disturbance(core_hz_before, core_clock());
    let report = coordinator_report(plan, scheduling, cpus_ok, &run, (wall, own_cpu));
    let Gathered {
        mut series,
        thread_series,
        per_thread,
        marks,
        mark_ns,
        interrupted,
        ..
    } = run;
    if thread_series {
        series.threads = Some(per_thread);
    }
    Outcome {
        t0_ns: t0,
        marks,
        mark_ns,
        series,
        report,
        interrupted,
        disturbance,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan on CPU 0 that ticks every `tick_ms`, with its window from `window_ms.0` to
    /// `window_ms.1` of a run of `duration_ms` (all in milliseconds) and no core clock chain.
    fn one_core_plan(tick_ms: u64, window_ms: (u64, u64), duration_ms: u64) -> Plan {
        Plan {
            tick: Duration::from_millis(tick_ms),
            requested_tick: Duration::from_millis(tick_ms),
            window_start: Duration::from_millis(window_ms.0),
            window_end: Duration::from_millis(window_ms.1),
            duration: Duration::from_millis(duration_ms),
            cores: vec![0],
            core_clock: false,
        }
    }

    #[test]
    fn schedule_holds_every_tick_and_the_marks_once_in_order() {
        let plan = one_core_plan(10, (30, 135), 150);
        let s = schedule(&plan);
        assert!(s.windows(2).all(|w| w[0].0 < w[1].0), "strictly increasing");
        let marks: Vec<u64> = s
            .iter()
            .filter(|p| matches!(p.1, Point::Mark(_)))
            .map(|p| p.0)
            .collect();
        assert_eq!(marks, vec![30_000_000, 82_500_000, 135_000_000]);
        assert_eq!(s.last().map(|p| p.0), Some(150_000_000));
        // Ticks 10..140 ms less the one at 30 ms that is a mark: 13, plus 3 marks and the end.
        assert_eq!(s.len(), 13 + 3 + 1);
    }

    #[test]
    fn a_window_that_ends_with_the_run_has_its_last_mark_last_and_no_cool_down() {
        let plan = one_core_plan(5, (1, 21), 21);
        let s = schedule(&plan);
        assert!(s.windows(2).all(|w| w[0].0 < w[1].0), "strictly increasing");
        assert!(matches!(s.last(), Some(&(21_000_000, Point::Mark(2)))));
        assert!(!s.iter().any(|p| p.1 == Point::End));
    }
}
