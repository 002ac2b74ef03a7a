//! Process isolation: a switched function (`sw`, or an ISA level OpenSSL and Crypto++ are masked to)
//! runs in a child process with every backend's switch for its acceleration applied, one child per
//! acceleration.
//!
//! Why a process: the libraries decide their instruction-set paths once per process. OpenSSL reads the
//! `OPENSSL_ia32cap` (aarch64: `OPENSSL_armcap`) environment variable when libcrypto initialises, so the
//! mask must be in the environment before the process starts; Crypto++ reads exported globals
//! (`CryptoPP::g_hasAESNI`, …) that are process-wide. A switched function therefore runs in a
//! re-executed copy of this binary (`std::env::current_exe()`, hidden subcommand
//! `macbench __child MODE ACCEL`) started with the environment every backend's [`ProcessSwitch`] asks
//! for that acceleration, and which applies each switch before keying anything. The child refuses to
//! run if any switch reports it did not take (something left on, or a level's own extension gone), so
//! a `sw` or `avx2` result can never silently be another one. ISA levels a library selects in-process
//! (ipsec-mb: a manager per level) are not switched and never come here.
//!
//! Where it sits: above the registry (it keys objects by function id) and the engine (the child runs
//! scenarios with it), below the sweep and the CLI. The registry does not call up into it: backends
//! declare their switch as data on [`mac::Backend`], and a switched function keys itself only in the
//! process switched to its acceleration (the registry records that fact when this layer's child has
//! applied its switches). Callers that key any function — the self-test, `tag`, the tests — go through
//! [`key`]; nothing is installed before `main`. The engine does not call this layer either: a
//! scenario's [`Runner`] ([`runner_for`]: [`InProcess`] or [`InChild`]) is chosen once for all its
//! repeats when `bench::Pending` takes the scenario on, and again by the sweep's energy windows;
//! `engine::run` given a switched scenario in the parent would have timed pipe round trips, so the
//! registry refuses to key one there.
//!
//! Three modes, each per acceleration:
//! - [`run`](run::run): scenarios as JSON lines on stdin, each `RawRun` as a JSON line on stdout, one
//!   child per acceleration started on first use and kept, so a run costs a pipe round trip, not a
//!   process start. The child runs the very same engine, so hw, sw and level numbers are comparable.
//! - [`serve`]: keyed objects on request over a small binary pipe protocol. In the parent, [`key`] of
//!   a switched function returns a [`Proxy`] to such an object in its acceleration's `serve` child
//!   (started lazily, one per acceleration), so the self-test, `tag`, the known-answer and
//!   cross-backend tests exercise the real masked code paths. Proxies are never timed.
//! - [`caps`]: what the child's libraries report using, as JSON ([`Capabilities`]); `list` shows it
//!   per acceleration and `tests/accel_sw.rs`, `tests/accel_masked_levels.rs` check the masked bits.

pub mod caps;
pub mod run;
pub mod serve;

pub use caps::{capabilities, BackendCapability, Capabilities};
pub use serve::Proxy;

use crate::engine::{EngineError, RawRun, Scenario};
use crate::host::Host;
use crate::mac::{
    self, Accel, Availability, Function, KeyParams, KeyedResult, MacError, ProcessSwitch,
};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;
use std::time::Duration;

/// The hidden subcommand (see `cli::Command::Child`).
pub const SUBCOMMAND: &str = "__child";
/// Overrides where the macbench executable is (tests, unusual installs).
pub const EXE_ENV: &str = "MACBENCH_EXE";

/// The acceleration this process is switched to: `Some` inside a child, after its switches were
/// applied and checked (the registry records it: in that process switched functions key themselves).
pub fn child_accel() -> Option<Accel> {
    mac::switched_process()
}

/// Set by macbench's command line ([`children_from_this_executable`]).
static SELF_SERVES: OnceLock<()> = OnceLock::new();

/// Say that this process is macbench's own command line, so its executable serves the switched
/// children (`cli::main` calls it first). Without it — a test binary linking the library — the child
/// is a `macbench` executable found next to this one.
pub fn children_from_this_executable() {
    let _ = SELF_SERVES.set(());
}

/// Whether this scenario must run in a child process: a switched function ([`Function::is_process_switched`]),
/// and this is not already that acceleration's child.
pub fn needed(s: &Scenario) -> bool {
    s.function.is_process_switched() && child_accel() != Some(s.function.accel)
}

/// Key `function` wherever it runs: in this process, or — a switched function outside its
/// acceleration's child — a [`Proxy`] to the object keyed in that child (started lazily, one per
/// acceleration). The self-test, `tag`, and the known-answer and cross-backend tests key through
/// here, so they exercise the real masked code paths; the engine never times a proxy (the sweep runs
/// a switched scenario in its child through [`Runner`]).
pub fn key(function: &Function, key: &[u8], params: KeyParams<'_>) -> KeyedResult {
    // Inside a child, the registry keys its own acceleration's functions and refuses the others.
    if !function.is_process_switched() || child_accel().is_some() {
        return function.with_key(key, params);
    }
    // The platform first, so a switched function refuses alike here and in a run.
    if let Availability::Unavailable(reason) = function.availability() {
        return Err(MacError::Backend {
            backend: function.backend.name,
            algorithm: function.algorithm.name,
            reason,
        });
    }
    Proxy::new(function, key, params).map(|p| Box::new(p) as _)
}

/// Where a scenario runs: this process's engine, or the engine of its acceleration's child. Chosen
/// by [`runner_for`] once per scenario, when `bench::Pending` takes it on (and by the sweep's energy
/// windows); both give the same [`RawRun`].
pub trait Runner: Sync {
    fn run(&self, scenario: &Scenario, cancel: &AtomicBool) -> Result<RawRun, EngineError>;
    /// Where it runs, for people and tests: `this process` or `child`.
    fn place(&self) -> &'static str;
}

/// The engine in this process: `hw`, ISA levels a library keys in-process, and everything inside a
/// switched child.
pub struct InProcess;

impl Runner for InProcess {
    fn run(&self, scenario: &Scenario, cancel: &AtomicBool) -> Result<RawRun, EngineError> {
        crate::engine::run(scenario, cancel)
    }
    fn place(&self) -> &'static str {
        "this process"
    }
}

/// The engine in the scenario's acceleration's child ([`run::run`]).
pub struct InChild;

impl Runner for InChild {
    fn run(&self, scenario: &Scenario, cancel: &AtomicBool) -> Result<RawRun, EngineError> {
        run::run(scenario, cancel)
    }
    fn place(&self) -> &'static str {
        "child"
    }
}

/// The runner for `scenario`: its acceleration's child when [`needed`], else this process.
pub fn runner_for(scenario: &Scenario) -> &'static dyn Runner {
    if needed(scenario) {
        &InChild
    } else {
        &InProcess
    }
}

/// Every backend's switch that covers `accel`, in registry order.
fn switches(accel: Accel) -> impl Iterator<Item = (&'static str, &'static ProcessSwitch)> {
    // Only built backends: a library that is not in this binary has no switch to apply and nothing
    // to check (the vendored OpenSSL of a build without the openssl4 feature would fail every child).
    mac::BACKENDS
        .iter()
        .filter(|b| matches!((b.availability)(), mac::Availability::Available))
        .filter_map(|b| b.process_switch.map(|s| (b.name, s)))
        .filter(move |(_, s)| s.covers(accel))
}

/// Every acceleration some backend's switch covers (`sw` and the masked levels), in ladder order:
/// the children there can be.
pub fn switched_accels() -> Vec<Accel> {
    Accel::ALL
        .into_iter()
        .filter(|&a| switches(a).next().is_some())
        .collect()
}

/// The macbench executable to re-execute: `$MACBENCH_EXE`, this executable if it is macbench, or the
/// `macbench` that Cargo builds next to a test binary (`target/<profile>/deps/..`).
pub fn executable() -> Result<PathBuf, String> {
    static EXE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    EXE.get_or_init(|| {
        if let Some(path) = std::env::var_os(EXE_ENV) {
            let path = PathBuf::from(path);
            return if path.is_file() {
                Ok(path)
            } else {
                Err(format!("{EXE_ENV}={} is not a file", path.display()))
            };
        }
        let me = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
        // macbench's own command line runs here: this very executable is the child, whatever its
        // name. Only another program linking the library (a test binary) looks for macbench by name.
        if SELF_SERVES.get().is_some() {
            return Ok(me);
        }
        let name = format!("macbench{}", std::env::consts::EXE_SUFFIX);
        if me.file_name().and_then(|n| n.to_str()) == Some(name.as_str()) {
            return Ok(me);
        }
        let dir = me.parent().map(PathBuf::from).unwrap_or_default();
        [dir.join(&name), dir.join("..").join(&name)]
            .into_iter()
            .find(|p| p.is_file())
            .ok_or_else(|| {
                format!(
                    "software-only variants run in a child macbench process, and no macbench executable \
                     was found next to {} (set {EXE_ENV})",
                    me.display()
                )
            })
    })
    .clone()
}

/// The child's executable as messages name it (or why there is none).
fn executable_name() -> String {
    executable().map_or_else(|e| e, |p| p.display().to_string())
}

/// What every message about a child that did not answer as macbench ends with.
const EXPECTED_REPLY: &str = "expected a macbench executable's reply ($MACBENCH_EXE)";

/// The longest line a child's reply may be: a `RawRun` of 1,000 sessions and a 30 s series is well
/// under a megabyte. Anything longer is not macbench answering (`MACBENCH_EXE=/bin/yes`-like output
/// would otherwise be read without end).
pub(crate) const REPLY_LIMIT: u64 = 64 << 20;

/// One line of a child's output without its newline, at most [`REPLY_LIMIT`] bytes; `None` once
/// the output has ended.
fn bounded_line(r: &mut impl std::io::BufRead) -> std::io::Result<Option<String>> {
    use std::io::{BufRead, Read};
    let mut line = Vec::new();
    Read::take(&mut *r, REPLY_LIMIT + 1).read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() as u64 > REPLY_LIMIT {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a line of more than {} MiB, not a reply", REPLY_LIMIT >> 20),
        ));
    }
    String::from_utf8(line).map(Some).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "a line that is not UTF-8, not a reply",
        )
    })
}

/// Run `cmd` (its standard output and error piped) to its end, and give its status, output and
/// error output; a child that prints more than [`REPLY_LIMIT`] bytes, or has not ended within
/// `within`, is killed and its run is an error.
fn bounded_output(
    mut cmd: Command,
    within: Duration,
) -> Result<(std::process::ExitStatus, Vec<u8>, Vec<u8>), String> {
    use std::io::Read;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(REPLY_LIMIT + 1).read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let mut out = Some(drain(child.stdout.take().map(|p| Box::new(p) as _)));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let join = |h: std::thread::JoinHandle<Vec<u8>>| h.join().unwrap_or_default();
    let mut printed = None;
    let deadline = std::time::Instant::now() + within;
    let status = loop {
        // Its output ended (at its exit, or at the limit): past the limit, it is not macbench.
        if out.as_ref().is_some_and(|h| h.is_finished()) {
            let bytes = join(out.take().expect("checked above"));
            if bytes.len() as u64 > REPLY_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("printed more than {} MiB", REPLY_LIMIT >> 20));
            }
            printed = Some(bytes);
        }
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            None => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "had not ended after {} s (killed)",
                    within.as_secs()
                ));
            }
        }
    };
    let out = match (printed, out) {
        (Some(bytes), _) => bytes,
        (None, Some(h)) => join(h),
        (None, None) => Vec::new(),
    };
    if out.len() as u64 > REPLY_LIMIT {
        return Err(format!("printed more than {} MiB", REPLY_LIMIT >> 20));
    }
    Ok((status, out, join(err)))
}

/// What a switched child serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChildMode {
    /// One scenario, run by the engine in the child ([`run`]).
    Run,
    /// Keyed objects used from the parent through a proxy ([`serve`]).
    Serve,
    /// What the child's libraries report using ([`caps`]).
    Caps,
}

impl ChildMode {
    /// As the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            ChildMode::Run => "run",
            ChildMode::Serve => "serve",
            ChildMode::Caps => "caps",
        }
    }
}

/// `macbench __child MODE ACCEL` with the environment of every switch for `accel`, stdin and stdout
/// piped.
fn command(mode: ChildMode, accel: Accel) -> Result<Command, String> {
    let mut cmd = Command::new(executable()?);
    cmd.arg(SUBCOMMAND).arg(mode.name()).arg(accel.name());
    for (_, switch) in switches(accel) {
        cmd.envs((switch.env)(accel));
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Ok(cmd)
}

/// Entry point of `macbench __child MODE ACCEL`. Applies the switches for `accel`, checks they took,
/// then serves `mode`.
pub fn child_main(mode: ChildMode, accel: Accel) -> Result<(), String> {
    // No switch gives `hw` (the library's default), so it is refused here like any other.
    if switches(accel).next().is_none() {
        let valid: Vec<&str> = switched_accels().iter().map(|a| a.name()).collect();
        return Err(format!(
            "{SUBCOMMAND}: no backend switches to {accel}; valid: {} (internal use only)",
            valid.join(", ")
        ));
    }
    // Before anything is keyed; libraries that read the environment applied it when they loaded.
    for (_, switch) in switches(accel) {
        (switch.apply)(accel);
    }
    mac::enter_switched_process(accel);
    for (_, switch) in switches(accel) {
        (switch.check)(accel)?;
    }
    match mode {
        ChildMode::Caps => caps::child_caps(accel),
        ChildMode::Run => run::child_run(),
        ChildMode::Serve => serve::serve(accel),
    }
}

/// This machine's facts as this process sees them: labelled `hw`, or `this avx2 child` inside a
/// switched child.
pub fn detect_host() -> Host {
    match child_accel() {
        Some(accel) => Host::detect_in(&format!("this {accel} child")),
        None => Host::detect(),
    }
}

/// Host facts for a run of `functions`: with what each switched child used, for the accelerations
/// among them that run in one (that run starts those children anyway). Here rather than in `host`, so
/// gathering facts never makes the host module start processes.
pub fn host_for_functions(functions: &[Function]) -> Host {
    let mut accels: Vec<Accel> = functions
        .iter()
        .filter(|f| f.is_process_switched())
        .map(|f| f.accel)
        .collect();
    accels.sort();
    accels.dedup();
    // A look-aside device starts before the facts are read, so they name its driver (a device that
    // does not start says why there, and its functions' key setup refuses with the same reason).
    if functions.iter().any(crate::mac::dpdk::drives) {
        let _ = crate::mac::dpdk::start();
    }
    with_children(detect_host(), &accels)
}

/// Add to each backend's version what it uses in each of `accels`' children ("; sw child: …",
/// "; avx2 child: …", or why the child could not say), for the backends whose switch covers that
/// acceleration. A child that reports exactly what this (hw) process does says so ("= hw"), so
/// a level with nothing to clear on this CPU is never silently the same as `hw`. Starts
/// `macbench __child caps ACCEL` once per acceleration per process.
pub fn with_children(mut host: Host, accels: &[Accel]) -> Host {
    if child_accel().is_some() {
        return host;
    }
    for &accel in accels {
        // Only backends switched to `accel` whose capability here was recorded (the library
        // can say what it uses).
        let here = |name: &str| {
            crate::mac::backend(name)
                .and_then(|b| b.process_switch)
                .filter(|s| s.covers(accel))
                .and_then(|s| (s.capability)())
        };
        if !host
            .library_versions
            .iter()
            .any(|(name, _)| here(name).is_some())
        {
            continue;
        }
        let caps = capabilities(accel);
        for (name, version) in &mut host.library_versions {
            let Some(hw) = here(name) else {
                continue;
            };
            match &caps {
                Ok(caps) => {
                    if let Some(child) = caps.of(name) {
                        let same = if child.summary == hw.summary {
                            " (= hw: nothing to clear on this CPU)"
                        } else {
                            ""
                        };
                        version.push_str(&format!("; {accel} child: {}{same}", child.summary));
                    }
                }
                Err(e) => version.push_str(&format!("; {accel} child: {e}")),
            }
        }
    }
    host
}
