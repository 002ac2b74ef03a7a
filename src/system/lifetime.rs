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

/// Make the child `command` will start end with the thread that starts it, pinned to `cpus` if
/// given (a refusal is not fatal: read back what the child got with `affinity::affinity_of`).
pub fn bind_child(command: &mut std::process::Command, cpus: Option<libc::cpu_set_t>) {
    super::kernel::prepare_child(
        command,
        super::kernel::ChildSetup {
            cpus,
            die_with_parent: true,
        },
    );
}
