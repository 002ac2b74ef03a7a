//! `run` mode: one scenario in its acceleration's child (`sw` or a masked level), run by the very engine the parent would use.
//!
//! The parent sends the scenario as JSON on the child's stdin and reads the [`RawRun`] back from its
//! stdout; a cancel in the parent becomes SIGINT in the child, which ends the run as interrupted. The
//! scenario travels as `ScenarioWire`: the engine's `Scenario` holds a `Function` (a registry entry,
//! sent as its id) and its results JSON leaves out a size model's drawn sequence, which the child needs.

use super::command;
use crate::engine::{self, DataMode, EngineError, KeyMode, Pinning, RawRun, Scenario, SizeSource};
use crate::mac::{self, Accel, VerifyMode};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A scenario as sent to the child.
#[derive(Debug, Serialize, Deserialize)]
struct ScenarioWire {
    function: String,
    size: SizeWire,
    sessions: usize,
    cores: Vec<usize>,
    pinning: Pinning,
    duration_ns: u64,
    window_start_ns: u64,
    window_end_ns: u64,
    data: DataMode,
    keys: KeyMode,
    verify: VerifyMode,
    rekey_every: Option<u64>,
    seed: u64,
    #[serde(default)]
    tick_ns: u64,
    #[serde(default)]
    dispatch: engine::Dispatch,
    #[serde(default)]
    tag_len: Option<usize>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum SizeWire {
    Fixed {
        size: u32,
    },
    Model {
        name: String,
        mean_bytes: f64,
        sequence: Vec<u32>,
    },
}

impl ScenarioWire {
    fn from_scenario(s: &Scenario) -> ScenarioWire {
        ScenarioWire {
            function: s.function.id(),
            size: match &s.size {
                SizeSource::Fixed { size } => SizeWire::Fixed { size: *size },
                SizeSource::Model {
                    name,
                    mean_bytes,
                    sequence,
                } => SizeWire::Model {
                    name: name.clone(),
                    mean_bytes: *mean_bytes,
                    sequence: sequence.to_vec(),
                },
            },
            sessions: s.sessions,
            cores: s.cores.clone(),
            pinning: s.pinning,
            duration_ns: s.duration.as_nanos() as u64,
            window_start_ns: s.window_start.as_nanos() as u64,
            window_end_ns: s.window_end.as_nanos() as u64,
            data: s.data,
            keys: s.keys,
            verify: s.verify,
            rekey_every: s.rekey_every,
            seed: s.seed,
            tick_ns: s.tick.as_nanos() as u64,
            dispatch: s.dispatch,
            tag_len: s.tag_len,
        }
    }

    fn into_scenario(self) -> Result<Scenario, String> {
        let function = mac::functions()
            .into_iter()
            .find(|f| f.id() == self.function)
            .ok_or_else(|| format!("unknown function {}", self.function))?;
        Ok(Scenario {
            function,
            size: match self.size {
                SizeWire::Fixed { size } => SizeSource::Fixed { size },
                SizeWire::Model {
                    name,
                    mean_bytes,
                    sequence,
                } => SizeSource::Model {
                    name,
                    mean_bytes,
                    sequence: Arc::new(sequence),
                },
            },
            sessions: self.sessions,
            cores: self.cores,
            pinning: self.pinning,
            duration: Duration::from_nanos(self.duration_ns),
            window_start: Duration::from_nanos(self.window_start_ns),
            window_end: Duration::from_nanos(self.window_end_ns),
            data: self.data,
            keys: self.keys,
            verify: self.verify,
            rekey_every: self.rekey_every,
            seed: self.seed,
            tick: if self.tick_ns == 0 {
                engine::DEFAULT_TICK
            } else {
                Duration::from_nanos(self.tick_ns)
            },
            dispatch: self.dispatch,
            tag_len: self.tag_len,
        })
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

    /// The error in the parent: a key, refusal or wrong-tag error as itself, anything else as a
    /// session error naming the child.
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
            ErrorWire { message, .. } => EngineError::Thread {
                session: 0,
                reason: format!("{accel} child: {message}"),
            },
        }
    }
}

/// Run a switched scenario in its acceleration's child, in place of `engine::run`: start the child,
/// send the scenario, wait (passing a cancel on as SIGINT, which the child turns into an interrupted
/// run), read the counters back.
pub fn run(s: &Scenario, cancel: &AtomicBool) -> Result<RawRun, EngineError> {
    engine::validate(s, &crate::system::online_cpus())?;
    let accel = s.function.accel;
    let fail = |reason: String| EngineError::Thread { session: 0, reason };
    let request = serde_json::to_vec(&ScenarioWire::from_scenario(s))
        .map_err(|e| fail(format!("{accel} child request: {e}")))?;
    let mut child = command("run", accel)
        .map_err(fail)?
        .spawn()
        .map_err(|e| fail(format!("cannot start the {accel} child: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let writer = std::thread::spawn(move || stdin.write_all(&request));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let result = stdout.read_to_end(&mut out).map(|_| out);
        let _ = tx.send(result);
    });
    let mut signalled = false;
    let output = loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(result) => break result,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if cancel.load(Ordering::Relaxed) && !signalled {
                    // SAFETY: plain kill(2) on our own child's pid.
                    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
                    signalled = true;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                break Err(std::io::Error::other("child output reader vanished"))
            }
        }
    };
    let _ = writer.join();
    let status = child
        .wait()
        .map_err(|e| fail(format!("{accel} child: {e}")))?;
    let output = output.map_err(|e| fail(format!("{accel} child output: {e}")))?;
    let reply: RunReply = serde_json::from_slice(&output).map_err(|e| {
        fail(format!(
            "{accel} child ({status}) gave no result ({e}): {}",
            String::from_utf8_lossy(&output).trim()
        ))
    })?;
    match (reply.ok, reply.error) {
        (Some(raw), _) => Ok(raw),
        (None, Some(e)) => Err(e.into_error(accel)),
        (None, None) => Err(fail(format!("{accel} child: empty reply"))),
    }
}

static CHILD_CANCEL: AtomicBool = AtomicBool::new(false);

pub(super) fn child_run() -> Result<(), String> {
    let _ = ctrlc::set_handler(|| CHILD_CANCEL.store(true, Ordering::SeqCst));
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| e.to_string())?;
    let wire: ScenarioWire = serde_json::from_slice(&input).map_err(|e| e.to_string())?;
    let reply = match wire.into_scenario() {
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
    println!("{reply}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Sample, ThreadCounters};

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
    fn a_scenario_crosses_to_the_child_unchanged() {
        let function = mac::functions()
            .into_iter()
            .find(|f| f.algorithm.name == "null")
            .unwrap();
        let scenario = Scenario {
            function,
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

            tag_len: None,
        };
        let text = serde_json::to_string(&ScenarioWire::from_scenario(&scenario)).unwrap();
        let back = serde_json::from_str::<ScenarioWire>(&text)
            .unwrap()
            .into_scenario()
            .unwrap();
        assert_eq!(format!("{back:?}"), format!("{scenario:?}"));
    }
}
