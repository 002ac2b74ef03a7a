//! Clocks: the reference cycle rate `f`, thread CPU time, wall time, and what the core really runs at.
//!
//! docs/methodology.md §3 converts seconds to cycles with one reference rate `f`. All times are read
//! with `clock_gettime`, whose hardware time base is the TSC on x86-64 and the generic timer
//! (`CNTVCT_EL0` at `CNTFRQ_EL0`) on aarch64; `f` depends on the architecture:
//!
//! - **x86-64**: the TSC frequency, calibrated against `CLOCK_MONOTONIC_RAW` (not the kernel's claimed
//!   value: it is what the TSC actually did here). The TSC ticks at about the nominal core clock, so
//!   reference cycles are close to core cycles.
//! - **aarch64**: the generic timer ticks at 24–54 MHz on most devices (1 GHz on Armv8.6+), far from
//!   any core clock, so using its rate as `f` would make "cycles" meaningless. `f` is the highest
//!   `cpuinfo_max_freq` the kernel reports (the fastest core's nominal maximum, the closest analogue
//!   of the TSC's nominal rate); without cpufreq, the core clock estimated below; failing that 1 GHz
//!   (cycles are then nanoseconds). The timer's rate is measured and reported, and its tick (e.g.
//!   41.7 ns at 24 MHz) is the timer resolution the validity checks use.
//!
//! Under turbo or frequency scaling the core runs faster or slower than `f`, so "cycles" are reference
//! cycles; we also estimate the core clock with a chain of dependent single-cycle additions (portable:
//! x86-64 `add`, aarch64 `add`), and read hardware cycle counters through `perf_event_open` where the
//! kernel and hypervisor allow, reporting which of these worked and, when not, why.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// `clock_gettime` in nanoseconds (also for another thread's CPU clock id from `pthread_getcpuclockid`;
/// a clock that cannot be read gives 0).
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec; an invalid clock id only makes the call fail.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall-clock nanoseconds (monotonic, NTP-slewed like everything else on the machine).
#[inline]
pub fn wall_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread, in nanoseconds.
#[inline]
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time consumed by the whole process (all threads), in nanoseconds.
pub fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The calling thread's user and system CPU time in nanoseconds (`getrusage(RUSAGE_THREAD)`): the split
/// `openssl speed` and `times()` report, which a thread CPU clock (their sum) cannot give. `None` where
/// the call fails.
pub fn thread_user_system_ns() -> Option<(u64, u64)> {
    // The `libc` crate names RUSAGE_THREAD for glibc and musl but not for bionic, whose kernel is the
    // same Linux: the value is the kernel's (include/uapi/linux/resource.h).
    #[cfg(target_os = "android")]
    const RUSAGE_THREAD: libc::c_int = 1;
    #[cfg(not(target_os = "android"))]
    const RUSAGE_THREAD: libc::c_int = libc::RUSAGE_THREAD;
    // SAFETY: rusage is plain data; getrusage only writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD names the calling thread; `usage` is a valid out-pointer.
    if unsafe { libc::getrusage(RUSAGE_THREAD, &mut usage) } != 0 {
        return None;
    }
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    Some((ns(usage.ru_utime), ns(usage.ru_stime)))
}

/// Read a perf counter fd (ours or another thread's, which the kernel allows within a process).
pub fn read_counter_fd(fd: i32) -> Option<u64> {
    let mut value = 0u64;
    // SAFETY: reading 8 bytes into a u64 from a perf fd that its owner keeps open while it is published.
    let n = unsafe { libc::read(fd, &mut value as *mut u64 as *mut libc::c_void, 8) };
    (n == 8).then_some(value)
}

/// Resolution of the monotonic clock in nanoseconds (for the "window too short" check): what
/// `clock_getres` says, and on aarch64 at least one tick of the generic timer the vDSO reads (the
/// kernel reports 1 ns whatever the timer's rate).
pub fn timer_resolution_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    let reported = (ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64).max(1);
    match timebase_nominal_hz() {
        Some(hz) if hz > 0 => reported.max(1_000_000_000u64.div_ceil(hz)),
        _ => reported,
    }
}

/// The CPU this thread is running on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    (cpu >= 0).then_some(cpu as usize)
}

/// The hardware time base: the TSC on x86-64, the generic timer's virtual count on aarch64.
#[cfg(target_arch = "x86_64")]
#[inline]
fn timebase() -> Option<u64> {
    // SAFETY: RDTSC exists on every x86_64 CPU.
    Some(unsafe { core::arch::x86_64::_rdtsc() })
}

#[cfg(target_arch = "aarch64")]
#[inline]
fn timebase() -> Option<u64> {
    let count: u64;
    // SAFETY: CNTVCT_EL0 is readable from user space on Linux and Android (the kernel sets
    // CNTKCTL_EL1.EL0VCTEN; the vDSO reads it too). The ISB keeps the read from being hoisted.
    unsafe {
        core::arch::asm!("isb", "mrs {c}, cntvct_el0", c = out(reg) count, options(nostack));
    }
    Some(count)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline]
fn timebase() -> Option<u64> {
    None
}

/// The rate the time base claims: `CNTFRQ_EL0` on aarch64 (set by firmware, usually right);
/// x86-64 has no architectural register for it.
#[cfg(target_arch = "aarch64")]
fn timebase_nominal_hz() -> Option<u64> {
    let hz: u64;
    // SAFETY: CNTFRQ_EL0 is readable from user space wherever CNTVCT_EL0 is.
    unsafe {
        core::arch::asm!("mrs {f}, cntfrq_el0", f = out(reg) hz, options(nomem, nostack));
    }
    (hz > 0).then_some(hz)
}

#[cfg(not(target_arch = "aarch64"))]
fn timebase_nominal_hz() -> Option<u64> {
    None
}

/// The time base's name, as reports print it.
const TIMEBASE_NAME: &str = if cfg!(target_arch = "x86_64") {
    "TSC"
} else {
    "CNTVCT_EL0"
};

/// How the reference rate and the core clock were obtained; serialised into every result and read back
/// (fields an older file lacks take their default).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ClockInfo {
    /// `f`: reference cycles per second used for every cycles figure.
    pub reference_hz: f64,
    /// How `reference_hz` was obtained.
    pub reference_source: String,
    /// Estimated core clock (dependent-add chain), if measured.
    pub core_hz_estimated: Option<f64>,
    /// core_hz_estimated / reference_hz: multiply reference cycles by this for estimated core cycles.
    pub core_to_reference_ratio: Option<f64>,
    /// Whether per-thread hardware cycle counters (perf_event_open) work here, and why not.
    pub hardware_cycles: String,
    pub timer_resolution_ns: u64,
    /// The hardware time base `clock_gettime` reads, as measured: "TSC at 2596.0 MHz",
    /// "CNTVCT_EL0 at 24.000 MHz". `None` where it cannot be read.
    pub timebase: Option<String>,
    pub timebase_hz: Option<f64>,
}

/// Measure the time base's rate against `CLOCK_MONOTONIC_RAW` over `span`: the median of three rounds.
fn calibrate_timebase(span: Duration) -> Option<f64> {
    timebase()?;
    let mut rates = Vec::new();
    for _ in 0..3 {
        let t0 = clock_ns(libc::CLOCK_MONOTONIC_RAW);
        let c0 = timebase().unwrap_or(0);
        std::thread::sleep(span / 3);
        let t1 = clock_ns(libc::CLOCK_MONOTONIC_RAW);
        let c1 = timebase().unwrap_or(0);
        if t1 > t0 && c1 > c0 {
            rates.push((c1 - c0) as f64 * 1e9 / (t1 - t0) as f64);
        }
    }
    rates.sort_by(f64::total_cmp);
    rates.get(rates.len() / 2).copied()
}

/// The reference rate `f` and how it was obtained (see the module comment for the rule per
/// architecture), without the core clock estimate [`clock_info`] adds as aarch64's fallback.
pub fn calibrate_reference(span: Duration) -> (f64, String) {
    reference_from(calibrate_timebase(span), span, None)
}

/// `f` from the measured time base rate and, on aarch64, cpufreq or the estimated core clock.
fn reference_from(timebase_hz: Option<f64>, span: Duration, core_hz: Option<f64>) -> (f64, String) {
    let rounds = format!("median of 3 × {} ms", (span / 3).as_millis());
    if cfg!(target_arch = "x86_64") {
        return match timebase_hz {
            Some(hz) => (
                hz,
                format!("TSC calibrated against CLOCK_MONOTONIC_RAW: {rounds}"),
            ),
            None => (1e9, "TSC calibration failed: f = 1 GHz".to_string()),
        };
    }
    let timer = match timebase_hz {
        Some(hz) => format!(
            "; time base {TIMEBASE_NAME} at {:.3} MHz ({rounds}), one tick = {:.1} ns",
            hz / 1e6,
            1e9 / hz
        ),
        None => String::new(),
    };
    if let Some((cpu, khz)) = super::topology::highest_max_freq_khz() {
        return (
            khz as f64 * 1e3,
            format!(
                "nominal: the highest cpuinfo_max_freq ({:.0} MHz, cpu{cpu}); reference cycles at \
                 that clock, not counted cycles{timer}",
                khz as f64 / 1e3
            ),
        );
    }
    if let Some(hz) = core_hz {
        return (
            hz,
            format!(
                "estimated core clock (dependent-add chain; no cpufreq here): reference cycles at \
                 that clock{timer}"
            ),
        );
    }
    (
        1e9,
        format!(
            "no cpufreq and no core clock estimate: f = 1 GHz, i.e. cycles are nanoseconds{timer}"
        ),
    )
}

/// The fastest core clock an estimate may give: the fastest cores sold run at about 6.2 GHz. An add
/// chain that seems faster was not run one addition per cycle (see [`estimate_core_hz`]) and gives no
/// estimate rather than a wrong one.
pub const MAX_PLAUSIBLE_CORE_HZ: f64 = 7e9;

/// `hz` if a core could run at it, else `None` ([`MAX_PLAUSIBLE_CORE_HZ`]).
pub fn plausible_core_hz(hz: f64) -> Option<f64> {
    (hz.is_finite() && hz > 0.0 && hz <= MAX_PLAUSIBLE_CORE_HZ).then_some(hz)
}

/// Estimate the core clock: time a long chain of dependent 1-cycle additions on this thread.
///
/// Each `add` depends on the previous one, so the chain runs at one addition per core cycle whatever the
/// pipeline width; dividing by wall time gives the core frequency under the current load and turbo state.
/// The addend is a register, not an immediate: Intel's Golden Cove cores and their server kin (Sapphire
/// and Emerald Rapids) fold `add reg, imm` chains at register renaming, several a cycle, and with an
/// immediate the chain read 7–8 × the TSC rate (17 GHz) on an Emerald Rapids guest; with a register it
/// read 1.1–1.3 ×. An estimate above [`MAX_PLAUSIBLE_CORE_HZ`] is dropped all the same.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn estimate_core_hz(span: Duration) -> Option<f64> {
    const ADDS_PER_ITER: u64 = 100;
    // `x += one` in this architecture's assembly; the chain around it is the same on both.
    #[cfg(target_arch = "x86_64")]
    macro_rules! add_one_to_x {
        () => {
            "add {x}, {one}"
        };
    }
    #[cfg(target_arch = "aarch64")]
    macro_rules! add_one_to_x {
        () => {
            "add {x}, {x}, {one}"
        };
    }
    let chain = |iterations: u64| {
        let mut x: u64 = 0;
        for _ in 0..iterations {
            // SAFETY: pure register arithmetic, no memory access.
            unsafe {
                core::arch::asm!(
                    ".rept 100", add_one_to_x!(), ".endr",
                    x = inout(reg) x,
                    one = in(reg) 1u64,
                    options(nomem, nostack, pure)
                );
            }
        }
        std::hint::black_box(x)
    };
    // Warm up (let the core leave idle frequency), then size the run to `span`.
    let mut iterations = 10_000u64;
    loop {
        let t0 = wall_ns();
        chain(iterations);
        let dt = wall_ns() - t0;
        if dt as u128 * 4 >= span.as_nanos() {
            let mut best: f64 = 0.0;
            for _ in 0..3 {
                let t0 = wall_ns();
                chain(iterations);
                let dt = (wall_ns() - t0).max(1);
                best = best.max((iterations * ADDS_PER_ITER) as f64 * 1e9 / dt as f64);
            }
            return plausible_core_hz(best);
        }
        iterations *= 2;
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn estimate_core_hz(_span: Duration) -> Option<f64> {
    None
}

/// A per-thread hardware cycle counter (PERF_COUNT_HW_CPU_CYCLES, user space only).
pub struct CycleCounter {
    fd: i32,
}

impl CycleCounter {
    /// Open a counter for the calling thread; `Err` says why it is not available.
    pub fn open() -> Result<CycleCounter, String> {
        use perf_event_open_sys::bindings as perf;
        // The kernel's own layout (perf-event-open-sys's bindings of <linux/perf_event.h>), sized as
        // this build knows it; older kernels accept a larger size when the extra fields are zero.
        let mut attr = perf::perf_event_attr {
            type_: perf::PERF_TYPE_HARDWARE,
            size: std::mem::size_of::<perf::perf_event_attr>() as u32,
            config: u64::from(perf::PERF_COUNT_HW_CPU_CYCLES),
            ..Default::default()
        };
        // User space only: the MAC's cycles, not the kernel's or a hypervisor's. `read_format` stays 0,
        // so a read is one u64, which the coordinator's [`read_counter_fd`] relies on.
        attr.set_exclude_kernel(1);
        attr.set_exclude_hv(1);
        // SAFETY: attr is a fully initialised perf_event_attr; pid 0 = this thread, cpu -1 = any,
        // no group, no flags.
        let fd = unsafe { perf_event_open_sys::perf_event_open(&mut attr, 0, -1, -1, 0) };
        if fd < 0 {
            let err = std::io::Error::last_os_error();
            return Err(format!(
                "perf_event_open(cycles): {err}{}",
                paranoid_hint(&err)
            ));
        }
        let counter = CycleCounter { fd };
        // A counter that opens but never counts (some hypervisors) is as good as none.
        let a = counter.read();
        let mut x = 0u64;
        for i in 0..100_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let b = counter.read();
        match (a, b) {
            (Some(a), Some(b)) if b > a => Ok(counter),
            _ => Err("perf_event_open(cycles) opened but does not count".to_string()),
        }
    }

    #[inline]
    pub fn read(&self) -> Option<u64> {
        read_counter_fd(self.fd)
    }

    /// The counter's fd, for the coordinator to read while this counter lives.
    pub fn fd(&self) -> i32 {
        self.fd
    }
}

impl Drop for CycleCounter {
    fn drop(&mut self) {
        // SAFETY: fd was returned by perf_event_open and is closed once.
        unsafe { libc::close(self.fd) };
    }
}

/// Why a permission error happened, when `perf_event_paranoid` is the cause (phones ship 2 or 3;
/// counting one's own threads in user space needs 2 or less, and Android's 3 forbids it).
fn paranoid_hint(err: &std::io::Error) -> String {
    if !matches!(err.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) {
        return String::new();
    }
    match std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid") {
        Ok(level) => format!(
            "; kernel.perf_event_paranoid is {}: `sysctl kernel.perf_event_paranoid=1` as root allows it",
            level.trim()
        ),
        Err(_) => String::new(),
    }
}

/// Measure everything about clocks once per process.
pub fn clock_info() -> ClockInfo {
    let span = Duration::from_millis(150);
    let timebase_hz = calibrate_timebase(span);
    let core = estimate_core_hz(Duration::from_millis(40));
    let (reference_hz, reference_source) = reference_from(timebase_hz, span, core);
    let hardware_cycles = match CycleCounter::open() {
        Ok(_) => "available: perf_event_open PERF_COUNT_HW_CPU_CYCLES (user space)".to_string(),
        Err(why) => format!("unavailable ({why}): cycles are reference cycles at f"),
    };
    ClockInfo {
        reference_hz,
        reference_source,
        core_hz_estimated: core,
        core_to_reference_ratio: core.map(|c| c / reference_hz),
        hardware_cycles,
        timer_resolution_ns: timer_resolution_ns(),
        timebase: timebase_hz.map(|hz| format!("{TIMEBASE_NAME} at {:.3} MHz", hz / 1e6)),
        timebase_hz,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_implausible_core_clock_is_no_estimate() {
        assert_eq!(plausible_core_hz(2.8e9), Some(2.8e9));
        assert_eq!(plausible_core_hz(MAX_PLAUSIBLE_CORE_HZ), Some(7e9));
        // What the immediate-add chain read on an Emerald Rapids guest: 8.2 × its 2.1 GHz TSC.
        assert_eq!(plausible_core_hz(17.2e9), None);
        assert_eq!(plausible_core_hz(0.0), None);
        assert_eq!(plausible_core_hz(f64::NAN), None);
        assert_eq!(plausible_core_hz(f64::INFINITY), None);
    }

    /// The chain must run one addition per cycle wherever it is built; a core that folds it (as
    /// Golden Cove folds immediate adds) gives no estimate, and this test says so.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn the_add_chain_gives_a_core_clock_estimate_here() {
        assert!(estimate_core_hz(Duration::from_millis(20)).is_some());
    }

    #[test]
    fn thread_cpu_time_advances_with_work_and_not_with_sleep() {
        let a = thread_cpu_ns();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = std::hint::black_box(x ^ i);
        }
        let b = thread_cpu_ns();
        assert!(b > a);
        std::thread::sleep(Duration::from_millis(30));
        let c = thread_cpu_ns();
        // Sleeping 30 ms costs far less than 30 ms of CPU (a correctness property, not a timing one).
        assert!(c - b < 20_000_000, "{}", c - b);
    }

    #[test]
    fn the_reference_rate_follows_the_architectures_rule() {
        let span = Duration::from_millis(30);
        let (hz, how) = reference_from(Some(24e6), span, Some(1.5e9));
        if cfg!(target_arch = "x86_64") {
            // The TSC's own rate, whatever the core clock estimate says.
            assert_eq!(hz, 24e6);
            assert!(how.starts_with("TSC calibrated"), "{how}");
            assert_eq!(reference_from(None, span, Some(1.5e9)).0, 1e9);
        } else {
            // Never the 24 MHz generic timer: cpufreq's highest maximum, else the core estimate;
            // the timer is named with its tick.
            assert!(how.contains("CNTVCT_EL0 at 24.000 MHz"), "{how}");
            assert!(how.contains("one tick = 41.7 ns"), "{how}");
            match super::super::topology::highest_max_freq_khz() {
                Some((_, khz)) => assert_eq!(hz, khz as f64 * 1e3, "{how}"),
                None => {
                    assert_eq!(hz, 1.5e9, "{how}");
                    assert!(how.starts_with("estimated core clock"), "{how}");
                    let (fallback, why) = reference_from(Some(24e6), span, None);
                    assert_eq!(fallback, 1e9, "{why}");
                }
            }
        }
    }

    #[test]
    fn calibration_gives_a_plausible_rate() {
        let (hz, how) = calibrate_reference(Duration::from_millis(30));
        assert!(hz > 1e8 && hz < 1e11, "{hz} from {how}");
    }
}
