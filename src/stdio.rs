//! Standard output for a tool that is piped into `head`, and that may be asked to put a results file there.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe returns `EPIPE` and `println!` panics on it. We keep
//! SIGPIPE ignored — the `net` control connection and the `--accel sw` child talk over sockets and pipes
//! whose peer may vanish, and those must stay errors, not silent deaths — and instead handle a closed
//! *standard output* the way Unix tools are seen to: [`closed_stdout`] ends the process by SIGPIPE,
//! quietly. Every line macbench prints for its user goes through [`outln!`](crate::outln)/
//! [`out!`](crate::out), and every note or warning on standard error through [`errln!`](crate::errln),
//! which never panics. Two kinds of writing bypass them on purpose: `cli::main`'s last word (the error
//! line, `interrupted`), written straight to standard error and ignoring a failure, since nothing
//! follows it; and the switched children's answers to their parent on standard output (`isolate`), a
//! protocol, not text.
//!
//! A command that stops at a safe point (`run`, `net`, `reproduce`) takes a closed standard output as an
//! interrupt instead: `run --json sp.json | head -1` used to die at its second printed line, with a
//! finished scenario never written to `sp.json` and its `.lock` files left behind (and `net --netns`
//! left its namespaces). Such a command names what stops it ([`interrupt_on_closed_stdout`]); the
//! closed pipe sets it, later printed lines are dropped, the command keeps what finished and removes
//! what it made, and only then does the process end by SIGPIPE ([`stdout_closed`]).
//!
//! When a results file is written to standard output (`--json -`), the human-readable lines move to
//! standard error so that the document on standard output stays parseable: see [`take_stdout`].

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_TAKEN: AtomicBool = AtomicBool::new(false);

/// Standard output was found closed and the command was asked to stop (see the module docs).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// What a closed standard output does instead of ending the process at once: the running command's
/// stop (it sets its cancel flags), or the removal of its files before the SIGPIPE death.
type OnClosed = Box<dyn Fn() + Send>;
static ON_CLOSED: std::sync::Mutex<Option<OnClosed>> = std::sync::Mutex::new(None);

/// From now on a closed standard output calls `stop` (once) instead of ending the process. If `stop`
/// returns, printed lines are dropped and the command is expected to end as interrupted; the caller
/// of the command then ends the process by SIGPIPE ([`stdout_closed`]). Replaces an earlier `stop`.
pub fn interrupt_on_closed_stdout(stop: impl Fn() + Send + 'static) {
    if let Ok(mut slot) = ON_CLOSED.lock() {
        *slot = Some(Box::new(stop));
    }
}

/// Whether standard output was closed while a command that stops at a safe point ran: it has kept
/// what finished, and the process should now end by SIGPIPE as a pipeline expects.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::SeqCst)
}

/// Standard output is a closed pipe: stop the command (once) if it asked to be stopped, else end the
/// process by SIGPIPE.
fn found_closed() {
    if STDOUT_CLOSED.swap(true, Ordering::SeqCst) {
        return;
    }
    let stop = ON_CLOSED.lock().ok().and_then(|mut slot| slot.take());
    match stop {
        Some(stop) => stop(),
        None => closed_stdout(),
    }
}

/// The first error writing a printed line to standard output (a full disk, an I/O error), kept so that
/// the command ends with exit 1 naming it instead of exit 0 with its output lost: see [`stdout_error`].
static STDOUT_ERROR: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The first error met writing printed lines to standard output, if any: a command whose printed output
/// was lost has failed (for `tag` the printed line is the product).
pub fn stdout_error() -> Option<&'static str> {
    STDOUT_ERROR.get().map(String::as_str)
}

/// A results file will be written to standard output: from now on printed lines go to standard error.
pub fn take_stdout() {
    STDOUT_TAKEN.store(true, Ordering::SeqCst);
}

/// Whether printed lines land on a terminal (standard output, or standard error once [`take_stdout`]
/// was called): tables are drawn with rules for a person and plainly for a pipe or a file.
pub fn prints_to_terminal() -> bool {
    use std::io::IsTerminal;
    if STDOUT_TAKEN.load(Ordering::SeqCst) {
        std::io::stderr().is_terminal()
    } else {
        std::io::stdout().is_terminal()
    }
}

/// End the process as a Unix tool does when its standard output is a closed pipe: killed by SIGPIPE,
/// with nothing on standard error.
pub fn closed_stdout() -> ! {
    crate::system::kernel::die_by_sigpipe()
}

/// Write bytes to standard output and flush; a closed pipe ends the process quietly (or, for a
/// command that stops at a safe point, stops it: the document has no reader left).
pub fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    if stdout_closed() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            found_closed();
            Ok(())
        }
        other => other,
    }
}

/// Print formatted text for the user (standard output, or standard error once [`take_stdout`] was
/// called). A closed standard output ends the process quietly; any other write error is kept for
/// [`stdout_error`] (the command then exits 1) and later lines are not attempted. Errors writing to
/// standard error are ignored, as `eprintln!` would have to: there is nowhere left to say them.
pub fn print_fmt(args: std::fmt::Arguments<'_>) {
    if STDOUT_TAKEN.load(Ordering::SeqCst) {
        let _ = std::io::stderr().lock().write_fmt(args);
        return;
    }
    if STDOUT_ERROR.get().is_some() || stdout_closed() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            drop(out);
            found_closed();
            return;
        }
        let _ = STDOUT_ERROR.set(format!("standard output: {e}"));
    }
}

/// `println!` that exits quietly on a closed pipe (see the module docs).
#[macro_export]
macro_rules! outln {
    () => { $crate::stdio::print_fmt(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::stdio::print_fmt(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!` that never panics: a closed or failing standard error loses the line, as there is
/// nowhere left to say it, instead of turning a note into a crash.
pub fn eprint_fmt(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// A line on standard error that never panics (see [`eprint_fmt`]).
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::stdio::eprint_fmt(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that exits quietly on a closed pipe (see the module docs).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdio::print_fmt(format_args!($($arg)*)) };
}

/// "~300 ms", "~40 s", "~3.2 min", "~1.5 h": an expected duration said before a long command starts
/// (under a second in milliseconds: a plan of 0.3 s read "up to ~0 s").
pub fn human_duration(seconds: f64) -> String {
    if seconds < 0.9995 {
        format!("~{:.0} ms", (seconds * 1e3).max(1.0))
    } else if seconds >= 5400.0 {
        format!("~{:.1} h", seconds / 3600.0)
    } else if seconds >= 90.0 {
        format!("~{:.1} min", seconds / 60.0)
    } else {
        format!("~{seconds:.0} s")
    }
}

/// The longest run of non-blank characters an error line repeats from its input: a 10,000-character
/// `--alg` or hex string is cut, and the line says how long it was. macbench's own words are never
/// that long.
pub const MAX_ECHOED: usize = 100;

/// `text` with every run of non-blank characters longer than [`MAX_ECHOED`] cut to that many and
/// `…(N characters)`, so an error stays one readable line whatever the input was.
pub fn cut_echoed_input(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(1000));
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let n = word.chars().count();
        if n > MAX_ECHOED {
            out.extend(word.chars().take(MAX_ECHOED));
            out.push_str(&format!("…({n} characters)"));
        } else {
            out.push_str(word);
        }
    }
    out
}

/// Fold clap's error text into one line: the error, its indented items (e.g. the missing arguments) and,
/// if short, clap's tip; the usage block and "For more information" are dropped (`--help` has them).
pub fn one_line_usage_error(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let mut line = first
        .strip_prefix("error: ")
        .unwrap_or(first)
        .trim()
        .to_string();
    let mut items = Vec::new();
    let mut tips = Vec::new();
    let mut in_head = true;
    for l in lines {
        let t = l.trim();
        if t.is_empty() {
            in_head = false;
        } else if let Some(tip) = t.strip_prefix("tip: ") {
            tips.push(tip.to_string());
        } else if in_head && l.starts_with(' ') {
            items.push(t.to_string());
        }
    }
    if !items.is_empty() {
        line = format!(
            "{} {}",
            line.trim_end_matches(':').to_string() + ":",
            items.join(", ")
        );
    }
    let tip = tips.join("; ");
    if !tip.is_empty() && line.len() + tip.len() <= 200 {
        line = format!("{line} ({tip})");
    }
    format!("{line}; see --help")
}

/// A JSON document as macbench writes every one (results, net, list, compare, model, a reproduction's
/// claims, export's BMF): pretty-printed, ending in one newline. Here, at the bottom of the layers, so
/// every writer can reach it.
pub fn pretty_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, String> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// One file format: the bytes it makes of `D`, what it is made from (a results document;
/// `[&Document]` for the formats over many, `report::history`'s; `net`'s document for its own).
/// Adding a format is one implementation, and every writer goes through `report::export`. Drawn
/// here, below every room that has a format, so that `net` names it without naming `report`.
pub trait Exporter<D: ?Sized> {
    fn serialize(&self, doc: &D) -> Result<Vec<u8>, String>;
}
