//! The command line: parses arguments, calls the library, prints. No measurement logic lives here.
//!
//! Every failure becomes a [`CliError`] with one line of text and an exit code scripts can use:
//! 2 for usage errors (bad flag values, unknown names), 1 for failures (a self-test failed, I/O).

mod compare;
mod diff;
mod export;
mod files;
mod list;
mod model;
mod net;
mod report;
mod reproduce;
/// What a reproduction step runs here (tests construct step files from it).
pub use reproduce::step_sweep;
pub mod run;
mod tag;
mod validate;

use clap::{Parser, Subcommand};
use std::fmt;
use std::io::Write;

/// Exit code for bad input.
pub const EXIT_USAGE: i32 = 2;
/// Exit code for a failure while doing what was asked.
pub const EXIT_FAILURE: i32 = 1;

#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub message: String,
}

impl CliError {
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }

    pub fn failure(message: impl Into<String>) -> CliError {
        CliError {
            code: EXIT_FAILURE,
            message: message.into(),
        }
    }

    /// Ended by Ctrl-C or SIGTERM, what finished kept: 130, as shells report SIGINT.
    pub fn interrupted(message: impl Into<String>) -> CliError {
        CliError {
            code: 130,
            message: message.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A value the user gave: bad input, exit 2.
impl From<crate::spec::SpecError> for CliError {
    fn from(e: crate::spec::SpecError) -> Self {
        CliError::usage(e.0)
    }
}

impl From<crate::mac::MacError> for CliError {
    fn from(e: crate::mac::MacError) -> Self {
        match e {
            crate::mac::MacError::Backend { .. } => CliError::failure(e.to_string()),
            _ => CliError::usage(e.to_string()),
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "macbench",
    version,
    about = "Benchmark MAC functions under concurrent sessions: absolute and apparent cycles per byte",
    long_about = "macbench measures what Message Authentication Code functions cost on this machine: \
cycles per byte and per message, with n concurrent sessions pinned to chosen cores, for your packet sizes. \
Every function passes its known-answer tests before it is timed."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Say less: results only (for `run`, only the final matrices, not a line per scenario).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Say more (for `selftest`, every vector, not only failures).
    #[arg(long, short, global = true, conflicts_with = "quiet")]
    pub verbose: bool,
    /// The DPDK crypto device the `dpdk` backend drives: a software device (crypto_aesni_mb, the
    /// default; crypto_openssl; crypto_null), which needs no hugepages, or a PCI address (then
    /// hugepages and the EAL options in MACBENCH_DPDK_EAL; docs/backends.md).
    #[arg(long, global = true, value_name = "DEVICE")]
    pub dpdk_device: Option<String>,
    /// Descriptors in each of the device's queue pairs (its queue depth): a power of two from 32 to
    /// 32768; default 2048. A queue shorter than a batch takes it in parts. Recorded in every
    /// results file with the device (`library_versions`).
    #[arg(long, global = true, value_name = "N", allow_hyphen_values = true)]
    pub dpdk_queue_depth: Option<String>,
}

/// `--dpdk-queue-depth`: checked, then handed to the `dpdk` backend through the environment the shim
/// reads, as `--dpdk-device` is.
fn choose_dpdk_queue_depth(text: &str) -> Result<(), CliError> {
    let depth = text.trim().parse::<u32>().ok();
    if !depth.is_some_and(|n| (32..=32768).contains(&n) && n.is_power_of_two()) {
        return Err(CliError::usage(format!(
            "--dpdk-queue-depth {:?}: give a power of two from 32 to 32768 (descriptors per queue pair; DPDK's queues are rings of a power-of-two size)",
            crate::stdio::cut_echoed_input(text)
        )));
    }
    std::env::set_var("MACBENCH_DPDK_QUEUE_DEPTH", text.trim());
    Ok(())
}

/// `--dpdk-device`: checked, then handed to the `dpdk` backend (and the switched children) through
/// the environment the shim reads, before any thread starts.
fn choose_dpdk_device(device: &str) -> Result<(), CliError> {
    let ok = !device.is_empty()
        && device.len() <= 100
        && device
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_:.-,=".contains(c));
    if !ok {
        return Err(CliError::usage(format!(
            "--dpdk-device {device:?}: give a device name such as crypto_aesni_mb, crypto_openssl, \
             crypto_null, or a PCI address such as 0000:3d:00.0 (letters, digits and _:.-,= only)"
        )));
    }
    std::env::set_var("MACBENCH_DPDK_DEVICE", device);
    Ok(())
}

/// -1 quiet, 0 normal, 1 verbose: set once from the global `-q`/`-v` before a subcommand runs.
static VERBOSITY: std::sync::atomic::AtomicI8 = std::sync::atomic::AtomicI8::new(0);

/// `-q` was given.
pub fn quiet() -> bool {
    VERBOSITY.load(std::sync::atomic::Ordering::Relaxed) < 0
}

/// `-v` was given.
pub fn verbose() -> bool {
    VERBOSITY.load(std::sync::atomic::Ordering::Relaxed) > 0
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every algorithm × backend: availability, sizes, self-test status, and this CPU's features.
    List(list::ListArgs),
    /// Run all known-answer tests; exits 1 if any fails.
    Selftest(list::SelftestArgs),
    /// Print the hex tag of a file or standard input.
    Tag(tag::TagArgs),
    /// Packet-size models and per-packet cost: Γ, the a + b·Nblk fit, prediction vs measurement.
    Model(model::ModelArgs),
    /// Benchmark: n concurrent sessions, absolute and apparent cycles per byte (the default command).
    Run(run::RunArgs),
    /// Write one self-contained HTML report (figures, tables, host facts, warnings) from results JSON files.
    Report(report::ReportArgs),
    /// Run a reference tool (openssl speed, cryptest, botan speed) beside macbench and print both.
    Compare(compare::CompareArgs),
    /// Compare two results files: change per function and size, and whether it exceeds the noise.
    Diff(diff::DiffArgs),
    /// Zero-loss throughput of authenticated packets over UDP (RFC 2544 search), beside the null MAC.
    Net(net::NetArgs),
    /// A study's experiments in one command and its claims checked here (`--list` names the studies).
    Reproduce(reproduce::ReproduceArgs),
    /// Results in the formats of tools that keep or compare them: Bencher (BMF JSON), benchstat.
    Export(export::ExportArgs),
    /// Check results files or directories (complete, measured, readable): exit 1 with one line per
    /// problem, as a pipeline's gate.
    Validate(validate::ValidateArgs),
    /// Internal: a switched child process (`--accel sw`, or an ISA level a library is masked to);
    /// MODE is run, serve or caps; ACCEL the acceleration it is switched to (default sw).
    #[command(name = "__child", hide = true)]
    Child {
        mode: crate::isolate::ChildMode,
        #[arg(default_value = "sw")]
        accel: crate::mac::Accel,
    },
}

/// Ctrl-C, SIGTERM and SIGHUP for the commands that do not cancel cooperatively (`run`, `net`,
/// `reproduce` and the switched child stop at a safe point and keep what finished): remove this
/// process's lock and temporary files, say so, exit 130. Without it the default action would kill the
/// process with `.NAME.lock` files left beside its outputs.
fn exit_on_signal_unless_cooperative(command: &Option<Command>) {
    let cooperative = matches!(
        command,
        None | Some(
            Command::Run(_) | Command::Net(_) | Command::Reproduce(_) | Command::Child { .. }
        )
    );
    if matches!(command, Some(Command::Child { .. })) {
        return;
    }
    // A closed standard output ends the command at once, as SIGPIPE would, but after removing its
    // lock and temporary files; `run`, `net` and `reproduce` replace this with their own stop once
    // they hold something to keep.
    crate::stdio::interrupt_on_closed_stdout(|| {
        crate::report::output::remove_live_files_before_exit();
        crate::stdio::closed_stdout();
    });
    if cooperative {
        return;
    }
    let _ = ctrlc::set_handler(|| {
        crate::report::output::remove_live_files_before_exit();
        let _ = writeln!(std::io::stderr(), "macbench: interrupted");
        std::process::exit(130);
    });
}

/// Parse arguments and run; returns the process exit code.
pub fn main() -> i32 {
    // This executable is macbench's own command line, whatever its file is called (renamed,
    // symlinked, `cargo install`ed): it can serve the switched children itself.
    crate::isolate::children_from_this_executable();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.exit_code() == 0 => {
            // --help and --version: clap's own text on standard output (a closed pipe is not an error).
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            // The README promises one line per error; clap's usage errors run to several.
            let _ = writeln!(
                std::io::stderr(),
                "macbench: {}",
                cut_echoed_input(&one_line_usage_error(&e.render().to_string()))
            );
            return EXIT_USAGE;
        }
    };
    let level = if cli.quiet { -1 } else { i8::from(cli.verbose) };
    VERBOSITY.store(level, std::sync::atomic::Ordering::Relaxed);
    if let Some(device) = &cli.dpdk_device {
        if let Err(e) = choose_dpdk_device(device) {
            let _ = writeln!(std::io::stderr(), "macbench: {}", e.message);
            return e.code;
        }
    }
    if let Some(depth) = &cli.dpdk_queue_depth {
        if let Err(e) = choose_dpdk_queue_depth(depth) {
            let _ = writeln!(std::io::stderr(), "macbench: {}", e.message);
            return e.code;
        }
    }
    exit_on_signal_unless_cooperative(&cli.command);
    // The fake engine's switch is read where a run starts, which may be after minutes of other
    // work, or never (a report): a value it does not take, or one that is not UTF-8, is refused here,
    // before anything, so a misspelt switch neither times the real machine nor fails late.
    if let Err(e) = crate::engine::fake::chosen() {
        let _ = writeln!(std::io::stderr(), "macbench: {e}");
        return EXIT_USAGE;
    }
    let result = match cli.command {
        Some(Command::List(args)) => list::list(&args),
        Some(Command::Selftest(args)) => list::selftest(&args),
        Some(Command::Tag(args)) => tag::tag(&args),
        Some(Command::Run(args)) => run::run(&args),
        Some(Command::Report(args)) => report::report(&args),
        Some(Command::Compare(args)) => compare::compare(&args),
        Some(Command::Diff(args)) => diff::diff(&args),
        Some(Command::Model(args)) => model::model(&args),
        Some(Command::Net(args)) => net::net(&args),
        Some(Command::Reproduce(args)) => reproduce::reproduce(&args),
        Some(Command::Validate(args)) => validate::validate(&args),
        Some(Command::Export(args)) => export::export(&args),
        Some(Command::Child { mode, accel }) => {
            crate::isolate::child_main(mode, accel).map_err(CliError::failure)
        }
        None => run::run(&run::RunArgs::default()),
    };
    // Standard output closed under a command that stopped at a safe point: it kept what finished and
    // removed its files; say what it kept, then end as a pipeline expects of a tool whose reader left.
    if crate::stdio::stdout_closed() {
        if let Err(e) = &result {
            let _ = writeln!(
                std::io::stderr(),
                "macbench: {}",
                cut_echoed_input(&e.message)
            );
        }
        crate::report::output::remove_live_files_before_exit();
        crate::stdio::closed_stdout();
    }
    // Printed output that could not be written (a full disk) is a failure, not exit 0 with it lost.
    let result = match (result, crate::stdio::stdout_error()) {
        (Ok(()), Some(lost)) => Err(CliError::failure(lost)),
        (result, _) => result,
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            // Not eprintln!: a closed standard error must not turn an error into a panic.
            let _ = writeln!(
                std::io::stderr(),
                "macbench: {}",
                cut_echoed_input(&e.to_string())
            );
            e.code
        }
    }
}

pub use crate::stdio::{cut_echoed_input, one_line_usage_error, MAX_ECHOED};

/// Resolve `--alg`/`--backend`/`--accel` to functions, saying on stderr which asked-for ones cannot run
/// here and why (an error only when none can).
pub fn functions(
    alg: &str,
    backend: Option<&str>,
    accel: &[crate::mac::Accel],
) -> Result<Vec<crate::mac::Function>, CliError> {
    let resolved = crate::spec::resolve_functions(alg, backend, accel)?;
    for u in &resolved.unavailable {
        let _ = writeln!(std::io::stderr(), "macbench: unavailable, skipped: {u}");
    }
    let named = backend.is_some_and(|b| {
        b.split(',')
            .any(|b| b.trim() == crate::mac::dpdk::BACKEND.name)
    }) || std::env::var_os("MACBENCH_DPDK_DEVICE").is_some()
        || std::env::var_os("MACBENCH_DPDK_QUEUE_DEPTH").is_some();
    on_the_device(resolved.functions, named)
}

/// The `dpdk` functions the device serves, checked before anything runs: the device must start and
/// list each function in its capabilities (keyed once with the algorithm's default key). Asked for
/// by name (`--backend dpdk`, `--dpdk-device`), a device that cannot is a usage error naming the
/// cause (exit 2); met through `--backend all`, its functions are skipped with the reason, as
/// unavailable functions are.
fn on_the_device(
    functions: Vec<crate::mac::Function>,
    named: bool,
) -> Result<Vec<crate::mac::Function>, CliError> {
    if !functions.iter().any(crate::mac::dpdk::drives) {
        return Ok(functions);
    }
    let refuse = |why: String| -> Result<(), CliError> {
        if named {
            return Err(CliError::usage(format!("dpdk: {why}")));
        }
        let _ = writeln!(
            std::io::stderr(),
            "macbench: unavailable, skipped: dpdk: {why}"
        );
        Ok(())
    };
    if let Err(why) = crate::mac::dpdk::start() {
        refuse(why)?;
        return Ok(functions
            .into_iter()
            .filter(|f| !crate::mac::dpdk::drives(f))
            .collect());
    }
    let mut kept = Vec::with_capacity(functions.len());
    for f in functions {
        if crate::mac::dpdk::drives(&f) {
            let key = vec![0x5a; f.algorithm.default_key_len];
            if let Err(e) = f.with_key(&key, crate::mac::KeyParams::default()) {
                refuse(e.to_string())?;
                continue;
            }
        }
        kept.push(f);
    }
    Ok(kept)
}

/// A progress bar on standard error when it is a terminal (never in pipes or files), `len` steps.
pub fn progress_bar(len: usize) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = indicatif::ProgressBar::new(len as u64);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} {elapsed_precise} eta {eta} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(pb)
}

/// Print a line of results. With a progress bar on standard error the bar is cleared first and
/// redrawn after, so the two never mix, and the line still goes to standard output (`> out.txt` keeps
/// every row; the bar's own `println` would have put it on standard error).
pub fn say(progress: Option<&indicatif::ProgressBar>, line: &str) {
    match progress {
        Some(pb) => pb.suspend(|| crate::outln!("{line}")),
        None => crate::outln!("{line}"),
    }
}

/// An expected duration as a person reads it (`~40 s`).
pub use crate::stdio::human_duration;

impl From<crate::session::SessionError> for CliError {
    fn from(e: crate::session::SessionError) -> CliError {
        if e.usage {
            CliError::usage(e.message)
        } else {
            CliError::failure(e.message)
        }
    }
}
