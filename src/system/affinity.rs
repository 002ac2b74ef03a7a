//! Binding threads to cores (`sched_setaffinity`). The only place macbench touches CPU sets: the engine's
//! sessions and coordinator and the `net` sender and receiver all bind through here.

/// `CPU_SETSIZE` as a count: glibc's libc bindings declare it `c_int`, bionic's (Android) `usize`, so
/// the cast is needed on one and a no-op on the other.
#[allow(clippy::unnecessary_cast)]
const CPU_SETSIZE: usize = libc::CPU_SETSIZE as usize;

/// Restrict the calling thread to `cpus`.
pub fn bind_current_thread(cpus: &[usize]) -> Result<(), String> {
    let set = cpu_set(cpus)?;
    apply_cpu_set(&set).map_err(|e| format!("sched_setaffinity({cpus:?}): {e}"))
}

/// The CPUs the calling thread may run on (none when the kernel does not say).
pub fn current_affinity() -> Vec<usize> {
    affinity_of(0).unwrap_or_default()
}

/// `cpus` as a kernel CPU set, built before a `fork` so the child only has to hand it to the kernel.
pub fn cpu_set(cpus: &[usize]) -> Result<libc::cpu_set_t, String> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set, CPU_SET only writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= CPU_SETSIZE {
            return Err(format!("CPU {cpu} is beyond CPU_SETSIZE"));
        }
        // SAFETY: `cpu` is inside the set (checked above).
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    Ok(set)
}

/// Restrict the calling process (thread) to `set`: async-signal-safe, one system call, so a child may
/// call it between `fork` and `exec`. The caller reads back what it got ([`affinity_of`]).
pub fn apply_cpu_set(set: &libc::cpu_set_t) -> std::io::Result<()> {
    // SAFETY: a valid cpu_set_t of the size given.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs process (or thread) `pid` may run on, as the kernel has it (0: the calling thread): how a
/// child's pinning is read back rather than assumed.
pub fn affinity_of(pid: u32) -> Result<Vec<usize>, String> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| format!("pid {pid} is out of range"))?;
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes into our set of the size given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(format!(
                "sched_getaffinity({pid}): {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok((0..CPU_SETSIZE)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child pinned between fork and exec reports that CPU when read back from outside.
    #[test]
    fn a_child_pinned_before_exec_reads_back_its_cpu() {
        use std::os::unix::process::CommandExt;
        let cpu = current_affinity().first().copied().unwrap_or(0);
        let set = cpu_set(&[cpu]).unwrap();
        let mut command = std::process::Command::new("sleep");
        command.arg("0.5");
        // SAFETY: the closure makes one async-signal-safe system call on a set built before the fork.
        unsafe {
            command.pre_exec(move || apply_cpu_set(&set));
        }
        let mut child = command.spawn().unwrap();
        let got = affinity_of(child.id());
        let _ = child.wait();
        assert_eq!(got.unwrap(), vec![cpu]);
        assert!(cpu_set(&[CPU_SETSIZE]).is_err());
    }
}
