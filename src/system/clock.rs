//! Clocks: the reference cycle rate `f`, thread CPU time, wall time, and what the core really runs at.
//!
//! docs/methodology.md §3 converts seconds to cycles with one reference rate `f`, the TSC frequency. We calibrate it
//! against `CLOCK_MONOTONIC_RAW` (not the kernel's claimed value: it is what the TSC actually did here).
//! Under turbo the core runs faster than the TSC, so "cycles" are reference cycles; we also estimate the
//! core clock with a chain of dependent single-cycle additions, and read hardware cycle counters through
//! `perf_event_open` where the kernel and hypervisor allow, reporting which of these worked.

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

/// Read a perf counter fd (ours or another thread's, which the kernel allows within a process).
pub fn read_counter_fd(fd: i32) -> Option<u64> {
    let mut value = 0u64;
    // SAFETY: reading 8 bytes into a u64 from a perf fd that its owner keeps open while it is published.
    let n = unsafe { libc::read(fd, &mut value as *mut u64 as *mut libc::c_void, 8) };
    (n == 8).then_some(value)
}

/// Resolution of the monotonic clock in nanoseconds (for the "window too short" check).
pub fn timer_resolution_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64).max(1)
}

/// The CPU this thread is running on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    (cpu >= 0).then_some(cpu as usize)
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn rdtsc() -> Option<u64> {
    // SAFETY: RDTSC exists on every x86_64 CPU.
    Some(unsafe { core::arch::x86_64::_rdtsc() })
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn rdtsc() -> Option<u64> {
    None
}

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
}

/// Calibrate the TSC against CLOCK_MONOTONIC_RAW over `span`, taking the median of three rounds.
pub fn calibrate_reference(span: Duration) -> (f64, String) {
    if rdtsc().is_none() {
        return (
            1e9,
            "no TSC on this architecture: f = 1 GHz, i.e. cycles are nanoseconds".to_string(),
        );
    }
    let mut rates = Vec::new();
    for _ in 0..3 {
        let t0 = clock_ns(libc::CLOCK_MONOTONIC_RAW);
        let c0 = rdtsc().unwrap_or(0);
        std::thread::sleep(span / 3);
        let t1 = clock_ns(libc::CLOCK_MONOTONIC_RAW);
        let c1 = rdtsc().unwrap_or(0);
        if t1 > t0 && c1 > c0 {
            rates.push((c1 - c0) as f64 * 1e9 / (t1 - t0) as f64);
        }
    }
    rates.sort_by(f64::total_cmp);
    match rates.get(rates.len() / 2) {
        Some(&hz) => (
            hz,
            format!(
                "TSC calibrated against CLOCK_MONOTONIC_RAW: median of 3 × {} ms",
                (span / 3).as_millis()
            ),
        ),
        None => (1e9, "TSC calibration failed: f = 1 GHz".to_string()),
    }
}

/// Estimate the core clock: time a long chain of dependent 1-cycle additions on this thread.
///
/// Each `add` depends on the previous one, so the chain runs at one addition per core cycle whatever the
/// pipeline width; dividing by wall time gives the core frequency under the current load and turbo state.
#[cfg(target_arch = "x86_64")]
pub fn estimate_core_hz(span: Duration) -> Option<f64> {
    const ADDS_PER_ITER: u64 = 100;
    let chain = |iterations: u64| {
        let mut x: u64 = 0;
        for _ in 0..iterations {
            // SAFETY: pure register arithmetic, no memory access.
            unsafe {
                core::arch::asm!(
                    ".rept 100", "add {x}, 1", ".endr",
                    x = inout(reg) x,
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
            return Some(best);
        }
        iterations *= 2;
    }
}

#[cfg(not(target_arch = "x86_64"))]
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
        // perf_event_attr, laid out as in <linux/perf_event.h> (size PERF_ATTR_SIZE_VER5 = 112 bytes).
        #[repr(C)]
        struct Attr {
            type_: u32,
            size: u32,
            config: u64,
            sample_period: u64,
            sample_type: u64,
            read_format: u64,
            flags: u64,
            rest: [u64; 9],
        }
        let attr = Attr {
            type_: 0,  // PERF_TYPE_HARDWARE
            size: 112, // PERF_ATTR_SIZE_VER5
            config: 0, // PERF_COUNT_HW_CPU_CYCLES
            sample_period: 0,
            sample_type: 0,
            read_format: 0,
            // exclude_kernel (bit 5) | exclude_hv (bit 6)
            flags: (1 << 5) | (1 << 6),
            rest: [0; 9],
        };
        // SAFETY: attr is a valid perf_event_attr of the declared size; pid 0 = this thread, cpu -1 = any.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const Attr,
                0,
                -1,
                -1,
                0u64,
            )
        };
        if fd < 0 {
            let err = std::io::Error::last_os_error();
            return Err(format!("perf_event_open(cycles): {err}"));
        }
        let counter = CycleCounter { fd: fd as i32 };
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

/// Measure everything about clocks once per process.
pub fn clock_info() -> ClockInfo {
    let (reference_hz, reference_source) = calibrate_reference(Duration::from_millis(150));
    let core = estimate_core_hz(Duration::from_millis(40));
    let hardware_cycles = match CycleCounter::open() {
        Ok(_) => "available: perf_event_open PERF_COUNT_HW_CPU_CYCLES (user space)".to_string(),
        Err(why) => format!("unavailable ({why}): cycles are TSC reference cycles"),
    };
    ClockInfo {
        reference_hz,
        reference_source,
        core_hz_estimated: core,
        core_to_reference_ratio: core.map(|c| c / reference_hz),
        hardware_cycles,
        timer_resolution_ns: timer_resolution_ns(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn calibration_gives_a_plausible_rate() {
        let (hz, how) = calibrate_reference(Duration::from_millis(30));
        assert!(hz > 1e8 && hz < 1e11, "{hz} from {how}");
    }
}
