//! Every call into the kernel and the C library that Rust's standard library does not wrap, each a
//! safe function with the reason it is sound beside its one `unsafe` block.
//!
//! Why one file: an `unsafe` block is a promise the compiler cannot check, so the promises are kept
//! where a reviewer reads them together, not spread over the layers that need a system call. The
//! rest of macbench calls these functions and has no `unsafe` of its own, apart from the FFI modules
//! of the MAC libraries (`src/mac/`), the clock's counter reads (`clock.rs`: `rdtsc`, `cntvct_el0`)
//! and `net`'s batched socket calls. `tests/architecture.rs` holds that list.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// `CPU_SETSIZE` as a count: glibc's libc bindings declare it `c_int`, bionic's (Android) `usize`, so
/// the cast is needed on one and a no-op on the other.
#[allow(clippy::unnecessary_cast)]
pub const CPU_SETSIZE: usize = libc::CPU_SETSIZE as usize;

/// `cpus` as a kernel CPU set, built before a `fork` so the child only has to hand it to the kernel.
pub fn cpu_set(cpus: &[usize]) -> Result<libc::cpu_set_t, String> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= CPU_SETSIZE {
            return Err(format!("CPU {cpu} is beyond CPU_SETSIZE"));
        }
        // SAFETY: `cpu` is inside the set (checked above); CPU_SET only writes inside it.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    Ok(set)
}

/// Restrict the calling process (thread) to `set`: async-signal-safe, one system call, so a child may
/// call it between `fork` and `exec`. The caller reads back what it got ([`affinity_of`]).
pub fn apply_cpu_set(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: a valid cpu_set_t of the size given; the kernel only reads it.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs process (or thread) `pid` may run on, as the kernel has it (0: the calling thread): how a
/// child's pinning is read back rather than assumed.
pub fn affinity_of(pid: u32) -> Result<Vec<usize>, String> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| format!("pid {pid} is out of range"))?;
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes into our set of the size given, and
    // CPU_ISSET reads inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(format!(
                "sched_getaffinity({pid}): {}",
                io::Error::last_os_error()
            ));
        }
        Ok((0..CPU_SETSIZE)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// What a child does between `fork` and `exec` ([`prepare_child`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChildSetup {
    /// Pin it to this set; a refusal is not fatal, the caller reads back what the child got.
    pub cpus: Option<libc::cpu_set_t>,
    /// Have the kernel kill it when the thread that starts it ends (`system::lifetime`).
    pub die_with_parent: bool,
}

/// Arrange `setup` for the child `command` will start.
pub fn prepare_child(command: &mut std::process::Command, setup: ChildSetup) {
    use std::os::unix::process::CommandExt;
    // Read before the fork: in the child, getppid() is compared with it.
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure makes only async-signal-safe system calls (prctl, getppid,
    // sched_setaffinity) on values built before the fork, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if setup.die_with_parent {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    // The parent ended between the fork and the request: nothing would kill this
                    // child. (A static message: no allocation after fork.)
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            if let Some(set) = &setup.cpus {
                let _ = apply_cpu_set(set);
            }
            Ok(())
        });
    }
}

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Move the calling thread into the network namespace `file` names (a `/var/run/netns` mount).
pub fn enter_network_namespace(file: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: the fd is an open namespace file for the duration of the call; setns only changes the
    // calling thread's network namespace.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Send SIGINT to process `pid` (a child of ours, asked to stop and keep what it has).
pub fn interrupt(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) takes two integers and touches no memory of ours.
        unsafe { libc::kill(pid, libc::SIGINT) };
    }
}

/// End the process as a Unix tool does when its standard output is a closed pipe: killed by SIGPIPE.
pub fn die_by_sigpipe() -> ! {
    // SAFETY: restoring the default disposition of SIGPIPE and raising it in this thread only affects
    // this process, which is meant to end here; no Rust state is observed afterwards.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    // Not reached unless SIGPIPE is blocked; the shell's code for it.
    std::process::exit(128 + libc::SIGPIPE)
}

/// The aarch64 hardware capability words `AT_HWCAP` and `AT_HWCAP2` (0 where absent).
pub fn hwcaps() -> (u64, u64) {
    // SAFETY: getauxval takes a constant and has no preconditions; an absent entry reads 0.
    #[allow(clippy::unnecessary_cast)]
    unsafe {
        (
            libc::getauxval(libc::AT_HWCAP) as u64,
            libc::getauxval(libc::AT_HWCAP2) as u64,
        )
    }
}

/// Wait while `*word == expected`, at most `timeout`. Spurious returns are fine: callers loop.
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned u32 for the duration of the call; FUTEX_WAIT reads it and
    // sleeps only if it still equals `expected`; `ts_ptr` is null or points to a valid timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wake every thread waiting on `word`.
pub fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address as a key; `word` is live.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// The calling thread's CPU-time clock, readable from any thread of the process.
pub fn thread_cpu_clock() -> Result<libc::clockid_t, String> {
    let mut id: libc::clockid_t = 0;
    // SAFETY: pthread_self() is the calling thread; `id` is a valid out-pointer.
    let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
    if rc != 0 {
        return Err(format!(
            "pthread_getcpuclockid: {}",
            io::Error::from_raw_os_error(rc)
        ));
    }
    Ok(id)
}

/// The calling thread's kernel id (its `/proc/self/task/<tid>`).
pub fn thread_id() -> libc::pid_t {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// Raise the calling thread's scheduling priority as far as allowed; say what was obtained.
pub fn raise_thread_priority() -> String {
    // SAFETY: plain syscalls on the calling thread with a valid sched_param.
    unsafe {
        let max = libc::sched_get_priority_max(libc::SCHED_FIFO);
        let param = libc::sched_param {
            sched_priority: max,
        };
        if max > 0 && libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 {
            return format!("SCHED_FIFO {max}");
        }
        let why = io::Error::last_os_error();
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        for nice in -20..=0 {
            if libc::setpriority(libc::PRIO_PROCESS, tid, nice) == 0 {
                return format!("SCHED_OTHER nice {nice} (SCHED_FIFO refused: {why})");
            }
        }
        format!("SCHED_OTHER, default nice (SCHED_FIFO refused: {why})")
    }
}

/// Sleep until the absolute monotonic instant `deadline_ns`.
pub fn sleep_until_monotonic(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// The resolution of `clock` as the kernel reports it; `None` when it does not.
pub fn clock_resolution(clock: libc::clockid_t) -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec, written by the call.
    let ok = unsafe { libc::clock_getres(clock, &mut ts) } == 0;
    (ok && ts.tv_sec >= 0 && ts.tv_nsec >= 0)
        .then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// The soft limit on this user's processes and threads (`RLIMIT_NPROC`), where the kernel applies
/// one: not to root, and not when it is unlimited.
pub fn thread_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only into `rl`; geteuid has no preconditions.
    let (ok, euid) = unsafe {
        (
            libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) == 0,
            libc::geteuid(),
        )
    };
    // rlim_t is 32-bit on some targets.
    #[allow(clippy::unnecessary_cast)]
    (ok && rl.rlim_cur != libc::RLIM_INFINITY && euid != 0).then_some(rl.rlim_cur as u64)
}

/// The kernel's clock ticks per second (`USER_HZ`), in which `times(2)` and `/proc` report CPU time.
pub fn clock_ticks_per_second() -> Option<f64> {
    // SAFETY: sysconf takes a constant name and has no other effect.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks > 0).then_some(ticks as f64)
}

/// Open a perf event (`pid` -1 with a CPU: system-wide on that CPU; 0 with CPU -1: this thread).
pub fn perf_event_open(
    attr: &mut perf_event_open_sys::bindings::perf_event_attr,
    pid: libc::pid_t,
    cpu: i32,
) -> io::Result<OwnedFd> {
    // SAFETY: attr is a fully initialised perf_event_attr the call only reads; no group, no flags.
    let fd = unsafe { perf_event_open_sys::perf_event_open(attr, pid, cpu, -1, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Clear `O_NONBLOCK` on an open file: blocking writes from here on.
pub fn clear_nonblocking(file: &impl AsRawFd) {
    // SAFETY: fcntl on a descriptor the caller owns; no memory is shared with the kernel.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
}

/// Take an exclusive advisory lock on `file` without waiting (`WouldBlock` when another holds it).
pub fn try_lock_exclusive(file: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: flock on a descriptor the caller owns; no memory is shared with the kernel.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The device and inode of what standard output is, if it is open.
pub fn stdout_identity() -> Option<(u64, u64)> {
    fd_identity(1)
}

/// The device and inode of what descriptor `fd` of this process has open, if it is open.
pub fn fd_identity(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: fstat on a descriptor number writes only into the zeroed plain-data struct it is given;
    // a number that is not open is EBADF, not undefined behaviour.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return None;
        }
        st
    };
    #[allow(clippy::unnecessary_cast)]
    Some((st.st_dev as u64, st.st_ino as u64))
}

/// Whether descriptor `fd` of this process is open for writing (`O_WRONLY` or `O_RDWR`).
pub fn fd_writable(fd: i32) -> io::Result<()> {
    // SAFETY: F_GETFL reads the flags of a descriptor number; one not open is EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    match flags & libc::O_ACCMODE {
        libc::O_WRONLY | libc::O_RDWR => Ok(()),
        _ => Err(io::Error::other(format!(
            "descriptor {fd} is open for reading only"
        ))),
    }
}

/// A duplicate of descriptor `fd` (close-on-exec), to write through without closing the original:
/// it shares the open file description, so its offset and `O_APPEND` are the ones the shell set.
pub fn duplicate_fd(fd: i32) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor number; nothing else is touched.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `dup` was just returned by the kernel and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(dup) })
}

/// `secs` since the epoch in local time: year, month (1–12), day, hour, minute, second.
pub fn local_time(secs: i64) -> Option<[i32; 6]> {
    let secs = libc::time_t::try_from(secs).ok()?;
    // SAFETY: localtime_r reads `secs` and writes only into the zeroed plain-data struct it is given.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            return None;
        }
        tm
    };
    Some([
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
    ])
}

/// Whether this process may write `path`, as `access(2)` judges it (root included).
pub fn access_writable(path: &std::path::Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a NUL-terminated string that outlives the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child pinned between fork and exec reports that CPU when read back from outside.
    #[test]
    fn a_child_pinned_before_exec_reads_back_its_cpu() {
        let cpu = affinity_of(0)
            .ok()
            .and_then(|c| c.first().copied())
            .unwrap_or(0);
        let mut command = std::process::Command::new("sleep");
        command.arg("0.5");
        prepare_child(
            &mut command,
            ChildSetup {
                cpus: Some(cpu_set(&[cpu]).unwrap()),
                die_with_parent: true,
            },
        );
        let mut child = command.spawn().unwrap();
        let got = affinity_of(child.id());
        let _ = child.wait();
        assert_eq!(got.unwrap(), vec![cpu]);
        assert!(cpu_set(&[CPU_SETSIZE]).is_err());
    }

    #[test]
    fn local_time_and_clock_resolution_answer() {
        let [year, month, day, ..] = local_time(86_400 * 365).unwrap();
        assert_eq!((year, month), (1971, 1));
        assert!((1..=2).contains(&day), "{day}");
        assert!(clock_resolution(libc::CLOCK_MONOTONIC).unwrap() <= Duration::from_millis(10));
        assert!(clock_ticks_per_second().unwrap() >= 1.0);
    }
}
