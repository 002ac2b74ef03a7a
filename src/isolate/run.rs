//! `run` mode: one scenario in its acceleration's child (`sw` or a masked level), run by the very engine the parent would use.
//!
//! The parent sends each scenario as a line of JSON on the child's stdin and reads the [`RawRun`]
//! back as a line from its stdout; a cancel in the parent becomes SIGINT in the child, which ends the
//! run as interrupted. One child per acceleration serves every run of it. The
//! scenario travels as the results schema records it (`results::ScenarioSpec`, no mirror of its own),
//! with the function's id and a size model's drawn sequence beside it.

use super::command;
use crate::engine::{self, EngineError, RawRun, Scenario, SizeSource};
use crate::mac::{self, Accel};
use crate::results::ScenarioSpec;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What the parent sends the child: the recorded scenario itself (the results schema's
/// [`ScenarioSpec`], one definition for the file and the wire), the function by its id, and a size
/// model's drawn sequence, which results files leave out.
#[derive(Debug, Serialize, Deserialize)]
struct ChildRequest {
    function: String,
    scenario: ScenarioSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sequence: Option<Vec<u32>>,
}

impl ChildRequest {
    fn from_scenario(s: &Scenario) -> ChildRequest {
        ChildRequest {
            function: s.function.id(),
            scenario: s.spec.clone(),
            sequence: match &s.size {
                SizeSource::Model { sequence, .. } => Some(sequence.to_vec()),
                SizeSource::Fixed { .. } => None,
            },
        }
    }

    fn into_scenario(self) -> Result<Scenario, String> {
        let function = mac::functions()
            .into_iter()
            .find(|f| f.id() == self.function)
            .ok_or_else(|| format!("unknown function {}", self.function))?;
        Ok(self.scenario.to_scenario(function, self.sequence))
    }
}

/// The child's answer: `{"ok": RawRun}` or `{"error": {...}}`.
#[derive(Debug, Deserialize)]
struct RunReply {
    ok: Option<RawRun>,
    error: Option<ErrorWire>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ErrorWire {
    /// Key setup failed (`EngineError::Key`); anything else comes back as a session error, but for
    /// the two that fail only the scenario.
    key: bool,
    /// `EngineError::Refused` or `EngineError::WrongTag`: the function named, `message` the reason.
    #[serde(default)]
    refused: Option<String>,
    #[serde(default)]
    wrong_tag: Option<String>,
    message: String,
}

impl ErrorWire {
    fn from_error(e: &EngineError) -> ErrorWire {
        let (refused, wrong_tag, message) = match e {
            EngineError::Refused { function, reason } => {
                (Some(function.clone()), None, reason.clone())
            }
            EngineError::WrongTag { function, reason } => {
                (None, Some(function.clone()), reason.clone())
            }
            other => (None, None, other.to_string()),
        };
        ErrorWire {
            key: matches!(e, EngineError::Key(_)),
            refused,
            wrong_tag,
            message,
        }
    }

    /// The error in the parent: a key, refusal or wrong-tag error as itself, anything else as the
    /// child's error, naming it.
    fn into_error(self, accel: Accel) -> EngineError {
        match self {
            ErrorWire {
                key: true, message, ..
            } => EngineError::Key(message),
            ErrorWire {
                refused: Some(function),
                message,
                ..
            } => EngineError::Refused {
                function,
                reason: message,
            },
            ErrorWire {
                wrong_tag: Some(function),
                message,
                ..
            } => EngineError::WrongTag {
                function,
                reason: message,
            },
            ErrorWire { message, .. } => EngineError::Child(format!("{accel} child: {message}")),
        }
    }
}

/// The parent's end of one acceleration's `run` child: started on the first switched run of that
/// acceleration and kept for every later one, so a run costs a pipe round trip, not a process start
/// (exec, every library's initialisation, the switches applied and checked): ~60 ms a run, which
/// kept a third of a switched sweep outside its windows. Replaced when it dies; it ends when this
/// process does (its standard input closes).
struct RunChild {
    child: std::process::Child,
    input: std::process::ChildStdin,
    /// One line per reply, from a reader thread; an error or a hang-up when the child's output ends.
    replies: std::sync::mpsc::Receiver<std::io::Result<String>>,
}

impl RunChild {
    fn start(accel: Accel) -> Result<RunChild, String> {
        let mut child = command(super::ChildMode::Run, accel)?
            .spawn()
            .map_err(|e| format!("cannot start the {accel} child: {e}"))?;
        let input = child.stdin.take().expect("piped stdin");
        let output = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut output = output;
            loop {
                match super::bounded_line(&mut output) {
                    // The output ended: the channel hangs up, which is "no reply".
                    Ok(None) => return,
                    Ok(Some(line)) => {
                        if tx.send(Ok(line)).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Ok(RunChild {
            child,
            input,
            replies,
        })
    }
}

impl Drop for RunChild {
    fn drop(&mut self) {
        // Replaced after a failure: end it and reap it, so no zombie is left.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One slot per acceleration; a run holds its acceleration's slot for the run's length, so runs of
/// different accelerations (tests in parallel) do not wait for each other.
type Slot = std::sync::Arc<std::sync::Mutex<Option<RunChild>>>;

fn slot(accel: Accel) -> Slot {
    static SLOTS: std::sync::Mutex<std::collections::BTreeMap<Accel, Slot>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let mut slots = SLOTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    slots.entry(accel).or_default().clone()
}

/// The process id of `accel`'s `run` child, if one is running (for tests: one child serves every
/// run of its acceleration).
pub fn child_pid(accel: Accel) -> Option<u32> {
    let slot = slot(accel);
    let held = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    held.as_ref().map(|c| c.child.id())
}

/// Run a switched scenario in its acceleration's child, in place of `engine::run`: send the scenario
/// as one line, wait (passing a cancel on as SIGINT, which the child turns into an interrupted run),
/// read the counters back as one line. The child is started on first use and kept.
pub fn run(s: &Scenario, cancel: &AtomicBool) -> Result<RawRun, EngineError> {
    engine::validate(s, &crate::system::online_cpus())?;
    let accel = s.function.accel;
    let fail = EngineError::Child;
    let mut request = serde_json::to_vec(&ChildRequest::from_scenario(s))
        .map_err(|e| fail(format!("{accel} child request: {e}")))?;
    request.push(b'\n');
    let slot = slot(accel);
    let mut held = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let line = loop {
        let kept = held.is_some();
        if !kept {
            *held = Some(RunChild::start(accel).map_err(fail)?);
        }
        let child = held.as_mut().expect("started above");
        let e = match exchange(child, request.as_slice(), s.spec.duration, cancel) {
            Ok(line) => break line,
            Err(e) => e,
        };
        // The child died or its output broke: it is dropped (killed and reaped), and a new one
        // starts next time. A kept child that had ended before this request (killed between runs)
        // costs no result: the run goes to a new child, once. One that dies on a fresh start is this
        // run's failure, said with how it ended.
        let mut gone = held.take().expect("held above");
        if kept && matches!(e, Exchange::NoReply) && !cancel.load(Ordering::Relaxed) {
            continue;
        }
        let status = ended(&mut gone.child);
        let exe = super::executable_name();
        return Err(fail(match e {
            // Nothing to quote: say what was expected rather than end the line in a dangling ": ".
            Exchange::NoReply => format!(
                "{accel} child {exe} ({status}) printed nothing; {}",
                super::EXPECTED_REPLY
            ),
            Exchange::Failed(e) => format!("{accel} child {exe} ({status}): {e}"),
        }));
    };
    let reply: RunReply = match serde_json::from_str(&line) {
        Ok(reply) => reply,
        Err(e) => {
            held.take();
            let exe = super::executable_name();
            return Err(fail(format!(
                "{accel} child {exe} gave no result ({e}): {:?}; {}",
                line.trim().chars().take(80).collect::<String>(),
                super::EXPECTED_REPLY
            )));
        }
    };
    match (reply.ok, reply.error) {
        (Some(raw), _) => Ok(raw),
        (None, Some(e)) => Err(e.into_error(accel)),
        (None, None) => Err(fail(format!("{accel} child: empty reply"))),
    }
}

/// Why no reply line came.
enum Exchange {
    /// The child's output ended before a line (it exited, or is not macbench).
    NoReply,
    Failed(String),
}

/// How a child that stopped answering ended: its exit status once it has one (up to a second, as
/// its output closing and its exit are not one event), else killed.
fn ended(child: &mut std::process::Child) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.to_string(),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => return "still running; killed".to_string(),
        }
    }
}

/// How long a child may take beyond its run's duration to answer (starting, keying, threads, the
/// checks; a 1,000-session run's set-up is about a second here) before it is taken for hung.
const REPLY_GRACE: Duration = Duration::from_secs(120);

/// Send one request line and wait for its reply line, passing a cancel on as SIGINT once; a child
/// silent for `run` and [`REPLY_GRACE`] after it (hung, or a program that never answers) failed.
fn exchange(
    child: &mut RunChild,
    request: &[u8],
    run: Duration,
    cancel: &AtomicBool,
) -> Result<String, Exchange> {
    let deadline = std::time::Instant::now() + run + REPLY_GRACE;
    if let Err(e) = child
        .input
        .write_all(request)
        .and_then(|()| child.input.flush())
    {
        // A broken pipe: the child has already ended.
        return Err(if e.kind() == std::io::ErrorKind::BrokenPipe {
            Exchange::NoReply
        } else {
            Exchange::Failed(format!("cannot send the scenario: {e}"))
        });
    }
    let mut signalled = false;
    loop {
        match child.replies.recv_timeout(Duration::from_millis(20)) {
            Ok(Ok(line)) => return Ok(line),
            Ok(Err(e)) => return Err(Exchange::Failed(format!("its output: {e}"))),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if std::time::Instant::now() > deadline {
                    return Err(Exchange::Failed(format!(
                        "no reply {} s after a {} s run was sent",
                        (run + REPLY_GRACE).as_secs(),
                        crate::number::compact(run.as_secs_f64())
                    )));
                }
                if cancel.load(Ordering::Relaxed) && !signalled {
                    crate::system::kernel::interrupt(child.child.id());
                    signalled = true;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(Exchange::NoReply),
        }
    }
}

static CHILD_CANCEL: AtomicBool = AtomicBool::new(false);

/// Child side: one scenario per line of standard input, each answered with one line, until the
/// input closes (the parent ended or replaced this child).
pub(super) fn child_run() -> Result<(), String> {
    let _ = ctrlc::set_handler(|| CHILD_CANCEL.store(true, Ordering::SeqCst));
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim().is_empty() {
            continue;
        }
        // A cancel belongs to the run it interrupted: the next request starts uncancelled.
        CHILD_CANCEL.store(false, Ordering::SeqCst);
        let reply = match serde_json::from_str::<ChildRequest>(&line)
            .map_err(|e| e.to_string())
            .and_then(ChildRequest::into_scenario)
        {
            Err(message) => serde_json::json!({ "error": ErrorWire {
                key: false,
                refused: None,
                wrong_tag: None,
                message,
            }}),
            Ok(scenario) => match engine::run(&scenario, &CHILD_CANCEL) {
                Ok(raw) => serde_json::json!({ "ok": raw }),
                Err(e) => serde_json::json!({ "error": ErrorWire::from_error(&e) }),
            },
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "{reply}")
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{DataMode, KeyMode, Pinning, Sample, ThreadCounters};
    use crate::mac::VerifyMode;
    use std::sync::Arc;

    #[test]
    fn run_reply_reads_back_what_the_engine_serialises() {
        let raw = RawRun {
            window_wall_ns: 10,
            first_half_wall_ns: 5,
            threads: vec![ThreadCounters {
                session: 0,
                allowed_cpus: vec![0],
                window_start: Sample {
                    wall_ns: 1,
                    cpu_ns: 2,
                    messages: 3,
                    bytes: 4,
                    hw_cycles: Some(5),
                    cpu: Some(0),
                },
                window_mid: Sample::default(),
                window_end: Sample::default(),
                key_setup_cpu_ns: 6,
                verify_failures: 0,
                verified_after: 7,
                verify_after_failures: 0,
                total_messages: 8,
                rekeys: 9,
                start_offset_ns: 11,
                latency_ns: vec![12, 13],
                window_rusage: None,
                offload: None,
            }],
            key_setup_ns: 1.5,
            interrupted: false,
            series: crate::engine::Series {
                tick_ns: 10,
                t_ns: vec![1, 2],
                messages: vec![3, 4],
                bytes: vec![5, 6],
                cpu_ns: vec![7, 8],
                window_first: 0,
                window_last: 1,
                threads: None,
            },
            coordinator: Default::default(),
            startup: Default::default(),
            preflight: Some(crate::engine::preflight::Preflight {
                messages: 16,
                lengths: 1,
                bytes: 1024,
                reference: "hmac-sha256/rustcrypto/hw".to_string(),
                ns: 20_000,
            }),
            disturbance: Some(crate::engine::Disturbance {
                core_hz_before: Some(3.0e9),
                steal_ns: Some(0),
                ..Default::default()
            }),
        };
        let text = serde_json::json!({ "ok": raw }).to_string();
        let back: RawRun = serde_json::from_str::<RunReply>(&text).unwrap().ok.unwrap();
        assert_eq!(back, raw);
    }

    /// A refusal and a wrong tag in the child fail the scenario in the parent as they would in-process
    /// (not as a session error that ends the sweep).
    #[test]
    fn refusals_and_wrong_tags_cross_back_as_themselves() {
        for e in [
            EngineError::Refused {
                function: "hmac-sha256/openssl/sw".into(),
                reason: "the library refused a 65536-byte message: status 4".into(),
            },
            EngineError::WrongTag {
                function: "hmac-sha256/openssl/sw".into(),
                reason: "pre-flight: a 64-byte message tagged 00".into(),
            },
        ] {
            let text = serde_json::json!({ "error": ErrorWire::from_error(&e) }).to_string();
            let wire: RunReply = serde_json::from_str(&text).unwrap();
            let back = wire.error.unwrap().into_error(Accel::Sw);
            assert_eq!(back.to_string(), e.to_string());
            assert_eq!(std::mem::discriminant(&back), std::mem::discriminant(&e));
        }
    }

    #[test]
    #[allow(clippy::needless_update)]
    fn a_scenario_crosses_to_the_child_unchanged() {
        let function = mac::null::function();
        let scenario = Scenario {
            function,
            spec: ScenarioSpec {
                size: SizeSource::Model {
                    name: "imix".into(),
                    mean_bytes: 340.3,
                    sequence: Arc::new(vec![40, 576, 1500]),
                },
                sessions: 3,
                cores: vec![0, 1],
                pinning: Pinning::Float,
                duration: Duration::from_nanos(123_456_789),
                window_start: Duration::from_nanos(23_456_789),
                window_end: Duration::from_nanos(103_456_789),
                data: DataMode::Same,
                keys: KeyMode::Shared,
                verify: VerifyMode::After,
                rekey_every: Some(7),
                seed: 9,
                tick: Duration::from_millis(3),
                dispatch: engine::Dispatch::Burst(4),
                tag_len: Some(8),
                // Every setting above is named; the update keeps a later one from needing a line.
                ..ScenarioSpec::default()
            },
        };
        let text = serde_json::to_string(&ChildRequest::from_scenario(&scenario)).unwrap();
        let back = serde_json::from_str::<ChildRequest>(&text)
            .unwrap()
            .into_scenario()
            .unwrap();
        assert_eq!(format!("{back:?}"), format!("{scenario:?}"));
    }
}
