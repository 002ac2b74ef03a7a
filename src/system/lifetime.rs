//! A child process that must not outlive macbench.
//!
//! `compare` runs a library's own benchmark (`openssl speed -seconds N`, `cryptest`, `botan speed`) for
//! up to `--duration` a round. When macbench ends on a signal — SIGTERM from `timeout` or systemd,
//! Ctrl-C — its handler exits at once, and such a child used to run on with parent 1 for the rest of
//! its round, measuring nothing for no one and disturbing whatever ran next. The kernel ends it
//! instead: `PR_SET_PDEATHSIG` asks for SIGKILL when the thread that started the child ends, which
//! covers every way macbench can end, SIGKILL included, where a handler that kills children would not.
//! The request is made in the child between fork and exec, so it holds before one instruction of the
//! tool runs; a parent that died before the request took is caught by comparing the parent's pid.
//!
//! Only for children waited on by the thread that starts them (the peers' tools): the signal follows
//! that thread, not the process.

/// Call between fork and exec (`CommandExt::pre_exec`) with the pid of the parent, read before the
/// fork: the child is killed when that parent ends. Makes only async-signal-safe system calls.
pub fn die_with_parent(parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and touches no memory of ours.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != parent {
        // The parent ended between the fork and the request: nothing would have killed this child.
        return Err(std::io::Error::other(
            "macbench ended before its child started",
        ));
    }
    Ok(())
}
