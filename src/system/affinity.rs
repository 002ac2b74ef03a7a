//! Binding threads to cores (`sched_setaffinity`). The only place macbench touches CPU sets: the engine's
//! sessions and coordinator and the `net` sender and receiver all bind through here.

pub use super::kernel::{affinity_of, apply_cpu_set, cpu_set};

/// Restrict the calling thread to `cpus`.
pub fn bind_current_thread(cpus: &[usize]) -> Result<(), String> {
    let set = cpu_set(cpus)?;
    apply_cpu_set(&set).map_err(|e| format!("sched_setaffinity({cpus:?}): {e}"))
}

/// The CPUs the calling thread may run on (none when the kernel does not say).
pub fn current_affinity() -> Vec<usize> {
    affinity_of(0).unwrap_or_default()
}
