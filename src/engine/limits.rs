//! Limits stated, not discovered: whether this process may create `n` session threads, checked before
//! any is created.
//!
//! Thread creation fails late and badly — `EAGAIN` after thousands of threads, or the OOM killer after
//! the stacks are touched — so each limit the kernel enforces is read up front and a run that would
//! cross one is refused with one line naming it. The check is a pure function of a [`SystemLimits`]
//! snapshot, so it is tested on constructed limits.

use super::EngineError;

/// Threads a run creates besides its sessions: the coordinator, and slack for the main thread, the
/// Ctrl-C handler and the allocator.
pub const EXTRA_THREADS: usize = 4;
/// Stack reserved per session thread (virtual; only touched pages become resident).
pub const SESSION_STACK_BYTES: usize = 256 << 10;
/// Resident memory of one session besides verify buffers: touched stack pages, the kernel's task
/// structures, the keyed object's state, its counter slot. Measured ~40 KiB at 1000 sessions; rounded up.
pub const SESSION_RESIDENT_BYTES: usize = 64 << 10;
/// Memory mappings per thread: its stack and the guard page below it.
const MAPS_PER_THREAD: usize = 2;

/// What the kernel allows, as read from /proc and /sys (`None`: no limit, or unreadable).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemLimits {
    /// RLIMIT_NPROC soft limit, when it applies (it does not to root).
    pub nproc: Option<u64>,
    /// /proc/sys/kernel/threads-max and the threads the whole system runs now.
    pub threads_max: Option<u64>,
    pub threads_now: u64,
    /// /proc/sys/vm/max_map_count and this process's mappings now.
    pub max_map_count: Option<u64>,
    pub maps_now: u64,
    /// The cgroup's pids.max and pids.current.
    pub cgroup_pids_max: Option<u64>,
    pub cgroup_pids_now: u64,
    /// MemAvailable (or the cgroup's memory.max − memory.current if smaller), bytes.
    pub memory_available: Option<u64>,
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl SystemLimits {
    /// Read the limits of this process on this machine.
    pub fn read() -> SystemLimits {
        // The kernel does not apply RLIMIT_NPROC to root.
        let nproc = crate::system::kernel::thread_limit();
        let threads_now = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|s| s.split_whitespace().nth(3)?.split_once('/')?.1.parse().ok())
            .unwrap_or(0);
        let maps_now = std::fs::read_to_string("/proc/self/maps")
            .map(|s| s.lines().count() as u64)
            .unwrap_or(0);
        let cgroup = std::fs::read_to_string("/proc/self/cgroup")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("0::").map(|p| p.trim().to_string()))
            })
            .map(|p| format!("/sys/fs/cgroup{}", if p == "/" { "" } else { &p }));
        let cg = |file: &str| {
            cgroup
                .as_ref()
                .and_then(|c| read_u64(&format!("{c}/{file}")))
        };
        let mem_available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
            s.lines().find_map(|l| {
                let kib: u64 = l
                    .strip_prefix("MemAvailable:")?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()?;
                Some(kib * 1024)
            })
        });
        let cgroup_memory = match (cg("memory.max"), cg("memory.current")) {
            (Some(max), Some(now)) => Some(max.saturating_sub(now)),
            _ => None,
        };
        SystemLimits {
            nproc,
            threads_max: read_u64("/proc/sys/kernel/threads-max"),
            threads_now,
            max_map_count: read_u64("/proc/sys/vm/max_map_count"),
            maps_now,
            cgroup_pids_max: cg("pids.max"),
            cgroup_pids_now: cg("pids.current").unwrap_or(0),
            memory_available: match (mem_available, cgroup_memory) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

/// Resident bytes a run of `sessions` needs beyond the shared pool, with `per_session_buffers` of verify
/// state per session.
pub fn memory_needed(sessions: usize, per_session_buffers: usize) -> u64 {
    sessions as u64 * (SESSION_RESIDENT_BYTES + per_session_buffers) as u64
}

/// Refuse `sessions` threads that the limits would not allow; the error names the limit.
pub fn check(
    sessions: usize,
    per_session_buffers: usize,
    limits: &SystemLimits,
) -> Result<(), EngineError> {
    let needed = (sessions + EXTRA_THREADS) as u64;
    let refuse = |limit: String| EngineError::Limit { sessions, limit };
    if let Some(max) = limits.nproc {
        if needed > max {
            return Err(refuse(format!(
                "RLIMIT_NPROC is {max} processes/threads for this user (ulimit -u)"
            )));
        }
    }
    if let Some(max) = limits.threads_max {
        if limits.threads_now + needed > max {
            return Err(refuse(format!(
                "kernel.threads-max is {max} and {} threads already run",
                limits.threads_now
            )));
        }
    }
    if let Some(max) = limits.cgroup_pids_max {
        if limits.cgroup_pids_now + needed > max {
            return Err(refuse(format!(
                "the cgroup's pids.max is {max} and {} tasks already run in it",
                limits.cgroup_pids_now
            )));
        }
    }
    if let Some(max) = limits.max_map_count {
        if limits.maps_now + needed * MAPS_PER_THREAD as u64 > max {
            return Err(refuse(format!(
                "vm.max_map_count is {max} mappings ({} per thread stack, {} in use)",
                MAPS_PER_THREAD, limits.maps_now
            )));
        }
    }
    if let Some(available) = limits.memory_available {
        let want = memory_needed(sessions, per_session_buffers);
        if want > available / 10 * 9 {
            return Err(refuse(format!(
                "they need about {} MiB resident ({} KiB per session) and {} MiB are available",
                want >> 20,
                (SESSION_RESIDENT_BYTES + per_session_buffers) >> 10,
                available >> 20
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roomy() -> SystemLimits {
        SystemLimits {
            nproc: Some(100_000),
            threads_max: Some(200_000),
            threads_now: 500,
            max_map_count: Some(65_530),
            maps_now: 300,
            cgroup_pids_max: Some(50_000),
            cgroup_pids_now: 20,
            memory_available: Some(16 << 30),
        }
    }

    fn refused(sessions: usize, buffers: usize, l: &SystemLimits) -> String {
        check(sessions, buffers, l).unwrap_err().to_string()
    }

    #[test]
    fn each_limit_is_named_when_crossed() {
        assert!(check(10_000, 0, &roomy()).is_ok());
        let mut l = roomy();
        l.nproc = Some(1000);
        assert!(refused(1000, 0, &l).contains("RLIMIT_NPROC is 1000"));
        let mut l = roomy();
        l.threads_max = Some(10_000);
        assert!(refused(9_600, 0, &l).contains("kernel.threads-max is 10000"));
        let mut l = roomy();
        l.cgroup_pids_max = Some(2_000);
        assert!(refused(1_990, 0, &l).contains("pids.max is 2000"));
        // 65,530 mappings at 2 per thread: ~32,600 threads.
        assert!(refused(40_000, 0, &roomy()).contains("vm.max_map_count"));
        let mut l = roomy();
        l.memory_available = Some(1 << 30);
        let msg = refused(20_000, 0, &l);
        assert!(msg.contains("MiB are available"), "{msg}");
        assert!(msg.starts_with("--sessions 20000 is more than this process may run"));
    }

    #[test]
    fn verify_buffers_count_against_memory() {
        let mut l = roomy();
        l.memory_available = Some(1 << 30);
        assert!(check(5_000, 0, &l).is_ok());
        assert!(check(5_000, 256 << 10, &l).is_err());
    }

    #[test]
    fn unknown_limits_do_not_refuse() {
        assert!(check(1_000_000, 0, &SystemLimits::default()).is_ok());
    }
}
