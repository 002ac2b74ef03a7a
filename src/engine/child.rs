//! Software-only (`--accel sw`) functions run in a child process.
//!
//! Why a process: the libraries decide their instruction-set paths once per process. OpenSSL reads the
//! `OPENSSL_ia32cap` environment variable when libcrypto initialises, so the mask must be in the
//! environment before the process starts; Crypto++ reads exported globals (`CryptoPP::g_hasAESNI`, …)
//! that are process-wide. A `sw` function therefore runs in a re-executed copy of this binary
//! (`std::env::current_exe()`, hidden subcommand `macbench __child MODE`) started with
//! `OPENSSL_ia32cap` = [`crate::mac::openssl::software_only_env`] — AES-NI, PCLMULQDQ, SHA, AVX, AVX2,
//! AVX-512, VAES, VPCLMULQDQ and XOP cleared — which also clears Crypto++'s AES-NI, CLMUL, SHA-NI, AVX
//! and AVX2 flags before keying anything. The child refuses to run if its libcrypto still reports any
//! of those bits, so a `sw` result can never silently be a `hw` one.
//!
//! Three modes:
//! - `run`: one scenario as JSON on stdin, the [`RawRun`] as JSON on stdout. [`super::run`] dispatches
//!   here for `sw` functions; the child runs the very same engine, so hw and sw numbers are comparable.
//! - `serve`: keyed objects on request over a small binary pipe protocol. In the parent, a `sw` entry's
//!   key function returns a [`Proxy`] to such an object, so the self-test, `tag`, the known-answer and
//!   cross-backend tests exercise the real sw code paths. Proxies are never timed: the engine hands a
//!   whole `sw` scenario to a `run` child.
//! - `caps`: the capability vectors the child's libraries report, as JSON ([`Capabilities`]); `list`
//!   shows them and `tests/accel_sw.rs` checks the masked bits are clear.

use super::{DataMode, EngineError, KeyMode, Pinning, RawRun, Scenario, SizeSource, VerifyMode};
use crate::mac::{
    self, openssl::Ia32Cap, Accel, Availability, KeyFn, KeyParams, KeyedMac, MacError,
};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The hidden subcommand (see `cli::Command::Child`).
pub const SUBCOMMAND: &str = "__child";
/// Overrides where the macbench executable is (tests, unusual installs).
pub const EXE_ENV: &str = "MACBENCH_EXE";

static IN_CHILD: AtomicBool = AtomicBool::new(false);

/// True inside the software-only child, after its switches were applied.
pub fn in_software_only_child() -> bool {
    IN_CHILD.load(Ordering::Acquire)
}

/// Whether the engine must hand this scenario to a child process (the one dispatch in `engine::run`).
pub fn needed(s: &Scenario) -> bool {
    s.function.accel == Accel::Sw && !in_software_only_child()
}

/// Whether `sw` functions can run here: x86-64 (the masks are x86 capability bits) and a macbench
/// executable to start.
pub fn software_only_availability() -> Availability {
    if in_software_only_child() {
        return Availability::Available;
    }
    if !cfg!(target_arch = "x86_64") {
        return Availability::Unavailable(format!(
            "software-only variants mask x86 capability bits (OPENSSL_ia32cap); this is {}",
            std::env::consts::ARCH
        ));
    }
    match executable() {
        Ok(_) => Availability::Available,
        Err(e) => Availability::Unavailable(e),
    }
}

/// Key function of a `sw` entry: the real object inside the child, a [`Proxy`] to one elsewhere.
pub fn software_only_key(
    backend: &'static str,
    algorithm: &'static str,
    key: &[u8],
    params: KeyParams<'_>,
    real: KeyFn,
) -> Result<Box<dyn KeyedMac>, MacError> {
    if in_software_only_child() {
        return real(key, params);
    }
    Proxy::new(backend, algorithm, key, params.customization).map(|p| Box::new(p) as _)
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

fn command(mode: &str) -> Result<Command, String> {
    let mut cmd = Command::new(executable()?);
    cmd.arg(SUBCOMMAND)
        .arg(mode)
        .env("OPENSSL_ia32cap", mac::openssl::software_only_env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Ok(cmd)
}

// ---------------------------------------------------------------------------------------------- caps

/// What the software-only child's libraries report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Capabilities {
    /// libcrypto's capability vector (`OPENSSL_info(OPENSSL_INFO_CPU_SETTINGS)`).
    pub openssl: Option<Ia32Cap>,
    /// Crypto++'s feature flags and AES/SHA code paths, when the backend is built.
    pub cryptopp: Option<String>,
    /// Crypto++'s feature bits (`mac::cryptopp::Features`).
    pub cryptopp_features: Option<u32>,
}

/// The software-only child's capabilities, asked once per process.
pub fn capabilities() -> Result<Capabilities, String> {
    static CAPS: OnceLock<Result<Capabilities, String>> = OnceLock::new();
    CAPS.get_or_init(|| {
        let out = command("caps")?
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cannot start the sw child: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "sw child failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("sw child caps: {e}"))
    })
    .clone()
}

/// Apply the software-only switches this process can still apply (Crypto++), and report what both
/// libraries now use.
fn apply_switches() -> Capabilities {
    let features = mac::cryptopp::disable_extensions().map(|f| f.0);
    Capabilities {
        openssl: mac::openssl::ia32cap(),
        cryptopp: mac::cryptopp::code_paths(),
        cryptopp_features: features,
    }
}

// ------------------------------------------------------------------------------------ child side

/// Entry point of `macbench __child MODE`. Applies the switches, checks they took, then serves `mode`.
pub fn child_main(mode: &str) -> Result<(), String> {
    if !matches!(mode, "run" | "serve" | "caps") {
        return Err(format!(
            "{SUBCOMMAND}: unknown mode {mode:?}; valid: run, serve, caps (internal use only)"
        ));
    }
    // Crypto++ first, before anything is keyed; OpenSSL applied the environment mask at load time.
    let caps = apply_switches();
    IN_CHILD.store(true, Ordering::Release);
    if cfg!(target_arch = "x86_64") {
        match &caps.openssl {
            Some(cap) if cap.extensions_left().is_empty() => {}
            Some(cap) => {
                return Err(format!(
                    "the software-only mask is not in effect: libcrypto still reports {} \
                     (OPENSSL_ia32cap must be {} in the environment; this command is internal)",
                    cap.extensions_left().join(", "),
                    mac::openssl::software_only_env()
                ))
            }
            None => return Err("libcrypto reports no capability vector".to_string()),
        }
    }
    if let Some(bits) = caps.cryptopp_features {
        let f = mac::cryptopp::Features(bits);
        let left: Vec<_> = mac::cryptopp::Features::EXCLUDED
            .iter()
            .filter(|n| f.has(n))
            .collect();
        if !left.is_empty() {
            return Err(format!("Crypto++ still reports {left:?} after the switch"));
        }
    }
    match mode {
        "caps" => {
            println!(
                "{}",
                serde_json::to_string(&caps).map_err(|e| e.to_string())?
            );
            Ok(())
        }
        "run" => child_run(),
        _ => serve(),
    }
}

// ------------------------------------------------------------------------------------------- run

/// A scenario as sent to the child. The engine's types are `Serialize` only (their JSON is the results
/// format); this is the transport, converted both ways here.
#[derive(Debug, Serialize, Deserialize)]
struct ScenarioWire {
    function: String,
    size: SizeWire,
    sessions: usize,
    cores: Vec<usize>,
    pinning: String,
    duration_ns: u64,
    window_start_ns: u64,
    window_end_ns: u64,
    data: String,
    keys: String,
    verify: String,
    rekey_every: Option<u64>,
    seed: u64,
    #[serde(default)]
    tick_ns: u64,
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

/// A unit enum value's serialised name ("round-robin"), the same text the results JSON uses.
fn name_of<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn parse_name<T: Serialize + Copy>(what: &str, text: &str, all: &[T]) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|v| name_of(v) == text)
        .ok_or_else(|| format!("unknown {what} {text:?}"))
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
            pinning: name_of(&s.pinning),
            duration_ns: s.duration.as_nanos() as u64,
            window_start_ns: s.window_start.as_nanos() as u64,
            window_end_ns: s.window_end.as_nanos() as u64,
            data: name_of(&s.data),
            keys: name_of(&s.keys),
            verify: name_of(&s.verify),
            rekey_every: s.rekey_every,
            seed: s.seed,
            tick_ns: s.tick.as_nanos() as u64,
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
            pinning: parse_name(
                "pinning",
                &self.pinning,
                &[Pinning::RoundRobin, Pinning::Float],
            )?,
            duration: Duration::from_nanos(self.duration_ns),
            window_start: Duration::from_nanos(self.window_start_ns),
            window_end: Duration::from_nanos(self.window_end_ns),
            data: parse_name("data mode", &self.data, &[DataMode::Unique, DataMode::Same])?,
            keys: parse_name(
                "key mode",
                &self.keys,
                &[KeyMode::PerSession, KeyMode::Shared],
            )?,
            verify: parse_name(
                "verify mode",
                &self.verify,
                &[VerifyMode::None, VerifyMode::Inline, VerifyMode::After],
            )?,
            rekey_every: self.rekey_every,
            seed: self.seed,
            tick: if self.tick_ns == 0 {
                super::DEFAULT_TICK
            } else {
                Duration::from_nanos(self.tick_ns)
            },
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
    /// Key setup failed (`EngineError::Key`); anything else comes back as a session error.
    key: bool,
    message: String,
}

/// Parent side of `engine::run` for a `sw` function: start the child, send the scenario, wait (passing
/// a cancel on as SIGINT, which the child turns into an interrupted run), read the counters back.
pub fn run(s: &Scenario, cancel: &AtomicBool) -> Result<RawRun, EngineError> {
    super::validate(s, &crate::host::online_cpus())?;
    let fail = |reason: String| EngineError::Thread { session: 0, reason };
    let request = serde_json::to_vec(&ScenarioWire::from_scenario(s))
        .map_err(|e| fail(format!("sw child request: {e}")))?;
    let mut child = command("run")
        .map_err(fail)?
        .spawn()
        .map_err(|e| fail(format!("cannot start the sw child: {e}")))?;
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
                break Err(std::io::Error::other("sw child output reader vanished"))
            }
        }
    };
    let _ = writer.join();
    let status = child.wait().map_err(|e| fail(format!("sw child: {e}")))?;
    let output = output.map_err(|e| fail(format!("sw child output: {e}")))?;
    let reply: RunReply = serde_json::from_slice(&output).map_err(|e| {
        fail(format!(
            "sw child ({status}) gave no result ({e}): {}",
            String::from_utf8_lossy(&output).trim()
        ))
    })?;
    match (reply.ok, reply.error) {
        (Some(raw), _) => Ok(raw),
        (None, Some(e)) if e.key => Err(EngineError::Key(e.message)),
        (None, Some(e)) => Err(fail(format!("sw child: {}", e.message))),
        (None, None) => Err(fail("sw child: empty reply".to_string())),
    }
}

static CHILD_CANCEL: AtomicBool = AtomicBool::new(false);

fn child_run() -> Result<(), String> {
    let _ = ctrlc::set_handler(|| CHILD_CANCEL.store(true, Ordering::SeqCst));
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| e.to_string())?;
    let wire: ScenarioWire = serde_json::from_slice(&input).map_err(|e| e.to_string())?;
    let reply = match wire.into_scenario() {
        Err(message) => serde_json::json!({ "error": ErrorWire { key: false, message } }),
        Ok(scenario) => match super::run(&scenario, &CHILD_CANCEL) {
            Ok(raw) => serde_json::json!({ "ok": raw }),
            Err(e) => serde_json::json!({ "error": ErrorWire {
                key: matches!(e, EngineError::Key(_)),
                message: e.to_string(),
            }}),
        },
    };
    println!("{reply}");
    Ok(())
}

// ----------------------------------------------------------------------------------------- serve
//
// Frames: a request is `op: u8`, `fields: u32`, then each field as `len: u32` + bytes (little-endian).
// A reply is `status: u8` (0 ok) and one field. Ops: KEY [function id, key, customization] → id (8 bytes)
// + streams (1 byte); TAG [id, nonce, tag length (4 bytes), chunk…] → tag; FREE [id] → no reply.

const OP_KEY: u8 = 1;
const OP_TAG: u8 = 2;
const OP_FREE: u8 = 3;

fn write_frame(w: &mut impl Write, head: u8, fields: &[&[u8]]) -> std::io::Result<()> {
    w.write_all(&[head])?;
    w.write_all(&(fields.len() as u32).to_le_bytes())?;
    for f in fields {
        w.write_all(&(f.len() as u32).to_le_bytes())?;
        w.write_all(f)?;
    }
    w.flush()
}

fn read_u32(r: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_field(r: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let len = read_u32(r)? as usize;
    let mut v = vec![0u8; len];
    r.read_exact(&mut v)?;
    Ok(v)
}

/// Returns `None` at end of input.
fn read_frame(r: &mut impl BufRead) -> std::io::Result<Option<(u8, Vec<Vec<u8>>)>> {
    if r.fill_buf()?.is_empty() {
        return Ok(None);
    }
    let mut head = [0u8; 1];
    r.read_exact(&mut head)?;
    let n = read_u32(r)?;
    let fields = (0..n).map(|_| read_field(r)).collect::<Result<_, _>>()?;
    Ok(Some((head[0], fields)))
}

fn id_of(field: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = field.len().min(8);
    b[..n].copy_from_slice(&field[..n]);
    u64::from_le_bytes(b)
}

fn serve() -> Result<(), String> {
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = BufWriter::new(std::io::stdout().lock());
    let mut objects: std::collections::HashMap<u64, Box<dyn KeyedMac>> = Default::default();
    let mut next_id = 1u64;
    let functions = mac::functions();
    while let Some((op, fields)) = read_frame(&mut input).map_err(|e| e.to_string())? {
        let reply: Result<Vec<u8>, String> = match (op, fields.as_slice()) {
            (OP_KEY, [function, key, custom]) => {
                let id = String::from_utf8_lossy(function);
                functions
                    .iter()
                    .find(|f| f.id() == id && f.accel == Accel::Sw)
                    .ok_or_else(|| format!("no sw function {id}"))
                    .and_then(|f| {
                        f.with_key(
                            key,
                            KeyParams {
                                customization: custom,
                            },
                        )
                        .map_err(|e| e.to_string())
                    })
                    .map(|object| {
                        let mut out = next_id.to_le_bytes().to_vec();
                        out.push(u8::from(object.streams()));
                        objects.insert(next_id, object);
                        next_id += 1;
                        out
                    })
            }
            (OP_TAG, [id, nonce, tag_len, chunks @ ..]) => match objects.get_mut(&id_of(id)) {
                None => Err("unknown object".to_string()),
                Some(object) => {
                    let mut tag = vec![0u8; id_of(tag_len) as usize];
                    if let [msg] = chunks {
                        object.tag_into(nonce, msg, &mut tag);
                    } else {
                        let pieces: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
                        object.tag_chunks(nonce, &pieces, &mut tag);
                    }
                    Ok(tag)
                }
            },
            (OP_FREE, [id]) => {
                objects.remove(&id_of(id));
                continue;
            }
            _ => Err(format!("bad request (op {op}, {} fields)", fields.len())),
        };
        let written = match &reply {
            Ok(data) => write_frame(&mut output, 0, &[data]),
            Err(message) => write_frame(&mut output, 1, &[message.as_bytes()]),
        };
        written.map_err(|e| e.to_string())?;
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------- proxy

/// The parent's connection to its `serve` child (one per process, started on first use).
struct Server {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    /// Bumped when a server is replaced, so proxies into a dead one fail instead of hitting a new id.
    generation: u64,
}

static SERVER: Mutex<Option<Server>> = Mutex::new(None);
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Drop for Server {
    fn drop(&mut self) {
        // Closing stdin ends the child's loop; reap it so no zombie is left.
        let _ = self.input.flush();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Send one request and read its reply on the shared server, starting it if needed.
fn request(
    generation: Option<u64>,
    op: u8,
    fields: &[&[u8]],
) -> Result<(u64, Option<Vec<u8>>), String> {
    let mut guard = SERVER.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        if generation.is_some() {
            return Err("the sw child has exited".to_string());
        }
        let mut child = command("serve")?
            .spawn()
            .map_err(|e| format!("cannot start the sw child: {e}"))?;
        let input = BufWriter::new(child.stdin.take().expect("piped stdin"));
        let output = BufReader::new(child.stdout.take().expect("piped stdout"));
        *guard = Some(Server {
            child,
            input,
            output,
            generation: GENERATION.fetch_add(1, Ordering::Relaxed) + 1,
        });
    }
    let server = guard.as_mut().expect("started above");
    if generation.is_some_and(|g| g != server.generation) {
        return Err("the sw child has exited".to_string());
    }
    let current = server.generation;
    let io = (|| -> std::io::Result<Option<(u8, Vec<u8>)>> {
        write_frame(&mut server.input, op, fields)?;
        if op == OP_FREE {
            return Ok(None);
        }
        let mut status = [0u8; 1];
        server.output.read_exact(&mut status)?;
        let _count = read_u32(&mut server.output)?;
        Ok(Some((status[0], read_field(&mut server.output)?)))
    })();
    match io {
        Ok(None) => Ok((current, None)),
        Ok(Some((0, data))) => Ok((current, Some(data))),
        Ok(Some((_, message))) => Err(String::from_utf8_lossy(&message).into_owned()),
        Err(e) => {
            // The child died (it prints its reason on stderr); the next key starts a new one.
            *guard = None;
            Err(format!("sw child: {e}"))
        }
    }
}

/// A keyed object living in the `serve` child. For correctness paths only (self-test, `tag`, tests):
/// every message is a pipe round trip.
pub struct Proxy {
    id: u64,
    generation: u64,
    streams: bool,
}

impl Proxy {
    fn new(
        backend: &'static str,
        algorithm: &'static str,
        key: &[u8],
        customization: &[u8],
    ) -> Result<Proxy, MacError> {
        let function = format!("{algorithm}/{backend}/sw");
        let error = |reason: String| MacError::Backend {
            backend,
            algorithm,
            reason,
        };
        let (generation, reply) =
            request(None, OP_KEY, &[function.as_bytes(), key, customization]).map_err(error)?;
        let reply = reply.unwrap_or_default();
        if reply.len() != 9 {
            return Err(error("sw child: malformed key reply".to_string()));
        }
        Ok(Proxy {
            id: id_of(&reply[..8]),
            generation,
            streams: reply[8] == 1,
        })
    }

    fn tag(&self, nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) {
        let id = self.id.to_le_bytes();
        let tag_len = (tag.len() as u32).to_le_bytes();
        let mut fields: Vec<&[u8]> = vec![&id, nonce, &tag_len];
        fields.extend_from_slice(chunks);
        match request(Some(self.generation), OP_TAG, &fields) {
            Ok((_, Some(t))) if t.len() == tag.len() => tag.copy_from_slice(&t),
            // A zero tag fails every vector and every cross-check, which report the function.
            _ => tag.fill(0),
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = request(Some(self.generation), OP_FREE, &[&self.id.to_le_bytes()]);
    }
}

impl KeyedMac for Proxy {
    fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) {
        self.tag(nonce, &[msg], tag);
    }

    fn tag_chunks(&mut self, nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) {
        self.tag(nonce, chunks, tag);
    }

    fn streams(&self) -> bool {
        self.streams
    }
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
        };
        let text = serde_json::json!({ "ok": raw }).to_string();
        let back: RawRun = serde_json::from_str::<RunReply>(&text).unwrap().ok.unwrap();
        assert_eq!(back, raw);
    }

    #[test]
    fn enum_names_round_trip() {
        for p in [Pinning::RoundRobin, Pinning::Float] {
            assert_eq!(
                parse_name(
                    "pinning",
                    &name_of(&p),
                    &[Pinning::RoundRobin, Pinning::Float]
                ),
                Ok(p)
            );
        }
        assert!(parse_name("pinning", "nope", &[Pinning::Float]).is_err());
    }
}
