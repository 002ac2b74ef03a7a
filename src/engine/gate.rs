//! The start gate: every session thread is created, keyed and blocked before the clock starts.
//!
//! Threads sleep in the kernel (a futex) rather than polling: 1000 threads each waking every 200 µs to
//! look at a flag make millions of wake-ups a second and starve the thread that is still creating the
//! rest (measured: 1000 sessions took 50 s to start, 4000 about 9 minutes). A futex rather than a
//! `Mutex` + `Condvar` because opening the gate then wakes every waiter without each having to re-take
//! a lock in turn, and rather than `std::sync::Barrier` because a gate can also be *stopped*: when a
//! later thread fails to spawn or to key, the ones already waiting must be released to exit.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

const CLOSED: u32 = 0;
const OPEN: u32 = 1;
const STOPPED: u32 = 2;

use crate::system::kernel::{futex_wait, futex_wake_all};

/// A one-shot gate: threads `arrive` and block until it is opened or stopped.
#[derive(Debug, Default)]
pub struct StartGate {
    state: AtomicU32,
    arrived: AtomicU32,
    /// Set by a thread whose set-up failed (it still arrives, so the count completes).
    failed: AtomicBool,
}

impl StartGate {
    pub fn new() -> StartGate {
        StartGate::default()
    }

    /// Count this thread in and block until the gate opens (`true`) or is stopped (`false`).
    pub fn arrive_and_wait(&self, expected: usize) -> bool {
        let arrived = self.arrived.fetch_add(1, Ordering::AcqRel) + 1;
        if arrived as usize >= expected {
            futex_wake_all(&self.arrived); // the coordinator waits for the count
        }
        loop {
            match self.state.load(Ordering::Acquire) {
                CLOSED => futex_wait(&self.state, CLOSED, None),
                state => return state == OPEN,
            }
        }
    }

    /// Count in a thread that cannot run (its set-up failed) without waiting.
    pub fn arrive_failed(&self, expected: usize) {
        self.failed.store(true, Ordering::Release);
        let arrived = self.arrived.fetch_add(1, Ordering::AcqRel) + 1;
        if arrived as usize >= expected {
            futex_wake_all(&self.arrived);
        }
    }

    /// Block until `expected` threads arrived; `false` if `cancel` was set first (checked every 100 ms).
    pub fn wait_arrivals(&self, expected: usize, cancel: &AtomicBool) -> bool {
        loop {
            let arrived = self.arrived.load(Ordering::Acquire);
            if arrived as usize >= expected {
                return true;
            }
            if cancel.load(Ordering::Relaxed) {
                return false;
            }
            futex_wait(&self.arrived, arrived, Some(Duration::from_millis(100)));
        }
    }

    /// Threads that arrived so far.
    pub fn arrivals(&self) -> usize {
        self.arrived.load(Ordering::Acquire) as usize
    }

    /// Whether some thread's set-up failed.
    pub fn any_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Release every waiting thread to run.
    pub fn open(&self) {
        self.state.store(OPEN, Ordering::Release);
        futex_wake_all(&self.state);
    }

    /// Release every waiting thread to exit without running. A gate already opened stays open: a
    /// thread the scheduler has not yet woken must still run, or it would be reported as never started.
    pub fn stop(&self) {
        let _ = self
            .state
            .compare_exchange(CLOSED, STOPPED, Ordering::AcqRel, Ordering::Acquire);
        futex_wake_all(&self.state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// No thread passes the gate before it opens; all pass once it does.
    #[test]
    fn no_thread_starts_before_the_gate_opens() {
        let gate = StartGate::new();
        let passed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..16)
                .map(|_| {
                    s.spawn(|| {
                        let go = gate.arrive_and_wait(16);
                        passed.fetch_add(1, Ordering::SeqCst);
                        go
                    })
                })
                .collect();
            assert!(gate.wait_arrivals(16, &AtomicBool::new(false)));
            assert_eq!(gate.arrivals(), 16);
            // Every thread has arrived and is blocked: none has passed.
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(passed.load(Ordering::SeqCst), 0);
            gate.open();
            for h in handles {
                assert!(h.join().unwrap(), "opened, not stopped");
            }
        });
        assert_eq!(passed.load(Ordering::SeqCst), 16);
    }

    #[test]
    fn a_stopped_gate_releases_its_threads_to_exit() {
        let gate = StartGate::new();
        std::thread::scope(|s| {
            let h = s.spawn(|| gate.arrive_and_wait(2));
            gate.arrive_failed(2);
            assert!(gate.wait_arrivals(2, &AtomicBool::new(false)));
            assert!(gate.any_failed());
            gate.stop();
            assert!(!h.join().unwrap());
        });
    }

    #[test]
    fn waiting_for_arrivals_gives_up_on_cancel() {
        let gate = StartGate::new();
        assert!(!gate.wait_arrivals(1, &AtomicBool::new(true)));
    }
}
