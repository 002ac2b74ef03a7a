//! Binding threads to cores (`sched_setaffinity`). The only place macbench touches CPU sets: the engine's
//! sessions and coordinator and the `net` sender and receiver all bind through here.

/// `CPU_SETSIZE` as a count: glibc's libc bindings declare it `c_int`, bionic's (Android) `usize`, so
/// the cast is needed on one and a no-op on the other.
#[allow(clippy::unnecessary_cast)]
const CPU_SETSIZE: usize = libc::CPU_SETSIZE as usize;

/// Restrict the calling thread to `cpus`.
pub fn bind_current_thread(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set, CPU_SET only writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            if cpu >= CPU_SETSIZE {
                return Err(format!("CPU {cpu} is beyond CPU_SETSIZE"));
            }
            libc::CPU_SET(cpu, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "sched_setaffinity({cpus:?}): {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// The CPUs the calling thread may run on.
pub fn current_affinity() -> Vec<usize> {
    // SAFETY: as above; sched_getaffinity writes into our set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..CPU_SETSIZE)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}
