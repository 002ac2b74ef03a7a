//! Two hosts: `macbench net receive --listen ADDR:PORT` and `macbench net send --to ADDR:PORT`.
//!
//! The data path is UDP to ADDR:PORT. Beside it runs a small control channel: TCP to the same
//! ADDR:PORT, one JSON object per line, request/reply, driven by the sender:
//!
//! ```text
//! → {"op":"hello","version":1}                              ← {"ok":true}
//! → {"op":"start","function":"hmac-sha256/openssl/hw","key":"<hex>","spi":…,"tag_len":16,
//!    "replay_window":64,"duration_ms":10000}                ← {"ok":true}      (receiver is listening)
//!   … UDP packets of the trial …
//! → {"op":"stop"}                                           ← {"ok":true,"report":{counts, cpu …}}
//! → {"op":"bye"}
//! ```
//!
//! The sender runs the whole search and computes loss from the counts each `stop` returns, so the
//! receiver needs no configuration beyond its address. Why TCP rather than a final UDP report: the
//! report must not itself be lost at exactly the rates where UDP loses packets. Each trial uses a new
//! SPI, so a late datagram of an earlier trial lands in `unknown_spi`, never in `delivered`.
//!
//! The key travels in the clear on the control channel: these are benchmark keys, made per trial, that
//! protect nothing. The receiver only ever receives on the data path; it exits after the first sender
//! that ran a trial (`--once`) or when no sender has been connected for `--timeout`.
//!
//! The receiver cannot trust what arrives on its port. Every line is read with a length limit and a
//! deadline, parsed and checked by [`parse_request`] with the command line's own rules
//! ([`super::limits`]) before anything is allocated or sliced by it; a refused line gets one error reply
//! and the connection is closed. Connections are served side by side (at most [`MAX_CONNECTIONS`]), and
//! only the data path — the UDP socket — is taken by one trial at a time, so a client that connects and
//! idles, or sends garbage, holds up no other sender. Idle clients cannot fill the connection slots
//! either: a first line must come within [`FIRST_LINE_LIMIT`], and a newcomer finding every slot taken
//! evicts the connection idle the longest.
//!
//! The sender trusts the receiver no more: each of its reads has a deadline fitted to the request
//! ([`HELLO_REPLY_LIMIT`], [`STOP_REPLY_LIMIT`]), so a port that accepts and never answers is an
//! error, not a hang.

use super::limits::{self, LimitError};
use super::receiver::{receive_loop, ReceiveReport, Receiver, StopRule};
use super::sender::send_loop;
use super::trial::{TrialResult, TrialSetup};
use super::wire::Sa;
use super::NetError;
use crate::mac::{Availability, Function, KeyParams, MacError};
use crate::system::{affinity, clock};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;

const PROTOCOL_VERSION: u32 = 1;
/// Requests one control connection may make (a search is a few dozen trials).
const MAX_REQUESTS: usize = 100_000;
/// Longest control line accepted, newline included. A `start` line is about 300 bytes.
pub const MAX_LINE: usize = 4096;
/// Control connections served at once; more are refused with an error line.
pub const MAX_CONNECTIONS: usize = 8;
/// A control connection that sends no complete line for this long (or `--timeout`, if shorter) while
/// none of its trials runs is closed. While its trial runs, the trial's duration is added.
pub const CONTROL_IDLE_LIMIT: Duration = Duration::from_secs(30);
/// A new control connection must send its first line within this (or the idle limit, if shorter): a
/// sender says hello as soon as it connects, so a connection silent this long is not a sender.
pub const FIRST_LINE_LIMIT: Duration = Duration::from_secs(5);
/// How long `net send` waits for the receiver's reply to `hello`: a port that accepts but does not
/// answer is not a `macbench net receive`.
pub const HELLO_REPLY_LIMIT: Duration = Duration::from_secs(5);
/// How long `net send` waits for the reply to `stop` (the receiver drains its queue first).
pub const STOP_REPLY_LIMIT: Duration = Duration::from_secs(30);
/// Longest a `start` waits for another connection's trial to free the data path before it is refused.
pub const DATA_PATH_WAIT: Duration = Duration::from_secs(60);
/// How often blocked reads and waits look at cancel, shutdown and their deadline.
const POLL: Duration = Duration::from_millis(100);
/// Writes to a peer that does not read give up after this long.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A control message as it travels: JSON with an `op` tag. Checked into a [`ControlRequest`] by
/// [`parse_request`] before anything acts on it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
enum Request {
    Hello {
        version: u32,
    },
    Start {
        function: String,
        key: String,
        spi: u32,
        tag_len: usize,
        replay_window: u64,
        duration_ms: u64,
        rcvbuf: Option<usize>,
        /// Datagrams per receive call; absent (an older sender): the default batch.
        batch: Option<usize>,
        /// UDP GRO on the receiving socket; absent: off.
        #[serde(default)]
        gro: bool,
    },
    Stop,
    Bye,
}

/// A `start` whose every field passed the checks the command line uses ([`limits`]).
#[derive(Debug, Clone)]
pub struct StartRequest {
    /// Available in this build, on this machine.
    pub function: Function,
    /// A length the algorithm accepts.
    pub key: Vec<u8>,
    /// SPI ≥ [`limits::MIN_SPI`]; tag length 1 … the algorithm's tag length (any up to 64 for `null`).
    pub sa: Sa,
    /// One of [`limits::REPLAY_WINDOWS`].
    pub replay_window: u64,
    /// [`limits::MIN_TRIAL`] … [`limits::MAX_TRIAL`].
    pub duration: Duration,
    /// 1 … [`limits::MAX_RCVBUF`] bytes, or the system default.
    pub rcvbuf: Option<usize>,
    /// 1 … [`limits::MAX_BATCH`] datagrams per receive call.
    pub batch: usize,
    /// UDP GRO on the receiving socket.
    pub gro: bool,
}

/// A control line, parsed and checked.
#[derive(Debug, Clone)]
pub enum ControlRequest {
    Hello,
    Start(StartRequest),
    Stop,
    Bye,
}

/// Why a control line was refused; the receiver replies with this message and closes the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    #[error("bad request: {0}")]
    Syntax(String),
    #[error("control line longer than {MAX_LINE} bytes")]
    LineTooLong,
    #[error("protocol version {0}; this receiver speaks {PROTOCOL_VERSION}")]
    Version(u32),
    #[error("function: this receiver has no function {0:?} (give algorithm/backend/accel as `macbench list` shows)")]
    UnknownFunction(String),
    #[error("function: {function} is unavailable here: {why}")]
    Unavailable { function: String, why: String },
    #[error("key: not an even-length hex string: {0}")]
    KeyHex(String),
    #[error("key: {0}")]
    KeyLength(MacError),
    #[error(transparent)]
    Limit(#[from] LimitError),
}

/// Parse one control line (without or with its newline) and check every field of a `start` against
/// the same rules as the command line. Never panics, whatever the bytes.
pub fn parse_request(line: &[u8]) -> Result<ControlRequest, ControlError> {
    if line.len() > MAX_LINE {
        return Err(ControlError::LineTooLong);
    }
    let request: Request =
        serde_json::from_slice(line).map_err(|e| ControlError::Syntax(e.to_string()))?;
    match request {
        Request::Hello { version } if version == PROTOCOL_VERSION => Ok(ControlRequest::Hello),
        Request::Hello { version } => Err(ControlError::Version(version)),
        Request::Stop => Ok(ControlRequest::Stop),
        Request::Bye => Ok(ControlRequest::Bye),
        Request::Start {
            function,
            key,
            spi,
            tag_len,
            replay_window,
            duration_ms,
            rcvbuf,
            batch,
            gro,
        } => {
            let f = crate::mac::functions()
                .into_iter()
                .find(|f| f.id() == function)
                .ok_or_else(|| ControlError::UnknownFunction(function.clone()))?;
            if let Availability::Unavailable(why) = f.availability() {
                return Err(ControlError::Unavailable { function, why });
            }
            let key = hex::decode(&key).map_err(|e| ControlError::KeyHex(e.to_string()))?;
            // The algorithm's key lengths narrowed by the library's own limit, as `tag` checks.
            f.check_key_len(key.len())
                .map_err(ControlError::KeyLength)?;
            let spi = limits::check_spi("spi", spi)?;
            let tag_len = limits::check_tag_len("tag_len", tag_len, Some(f.algorithm))?;
            let replay_window = limits::check_replay_window("replay_window", replay_window)?;
            let duration = limits::check_trial("duration_ms", Duration::from_millis(duration_ms))?;
            let rcvbuf = rcvbuf
                .map(|b| limits::check_rcvbuf("rcvbuf", b))
                .transpose()?;
            let batch =
                limits::check_batch("batch", batch.unwrap_or(super::batch_io::DEFAULT_BATCH))?;
            Ok(ControlRequest::Start(StartRequest {
                function: f,
                key,
                sa: Sa { spi, tag_len },
                replay_window,
                duration,
                rcvbuf,
                batch,
                gro,
            }))
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Reply {
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    report: Option<ReceiveReport>,
}

impl Reply {
    fn ok() -> Reply {
        Reply {
            ok: true,
            ..Reply::default()
        }
    }
    fn error(e: impl Into<String>) -> Reply {
        Reply {
            ok: false,
            error: Some(e.into()),
            report: None,
        }
    }
}

/// Why [`LineReader::read_line`] returned no line.
#[derive(Debug, thiserror::Error)]
enum LineError {
    #[error("control line longer than {MAX_LINE} bytes")]
    TooLong,
    #[error("no complete request within {0:?}")]
    Idle(Duration),
    #[error("stopped")]
    Stopped,
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Reads newline-terminated lines of at most [`MAX_LINE`] bytes from a stream whose read timeout is
/// short ([`POLL`]), so a wait for a line can be given a deadline and be cut short by cancel. Holds at
/// most `MAX_LINE` + one read of buffered bytes: a peer that never sends a newline cannot make it grow.
struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
}

impl<R: Read> LineReader<R> {
    fn new(inner: R) -> Self {
        LineReader {
            inner,
            buf: Vec::with_capacity(MAX_LINE),
        }
    }

    /// The next line (newline stripped), `Ok(None)` at end of stream, or an error once `limit` has
    /// passed without a whole line or `stop()` says so.
    fn read_line(
        &mut self,
        limit: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Vec<u8>>, LineError> {
        let deadline = clock::wall_ns().saturating_add(limit.as_nanos() as u64);
        let mut chunk = [0u8; 1024];
        loop {
            if let Some(pos) = self.buf.iter().position(|&b| b == b'\n') {
                if pos >= MAX_LINE {
                    return Err(LineError::TooLong);
                }
                let mut line: Vec<u8> = self.buf.drain(..=pos).collect();
                line.pop();
                return Ok(Some(line));
            }
            if self.buf.len() >= MAX_LINE {
                return Err(LineError::TooLong);
            }
            if stop() {
                return Err(LineError::Stopped);
            }
            if clock::wall_ns() >= deadline {
                return Err(LineError::Idle(limit));
            }
            match self.inner.read(&mut chunk) {
                Ok(0) => return Ok(None),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(LineError::Io(e)),
            }
        }
    }
}

/// Options of `macbench net receive`.
pub struct ServeOptions {
    pub listen: SocketAddr,
    pub core: Option<usize>,
    /// Exit after the first sender that ran a trial disconnects.
    pub once: bool,
    /// Exit when no sender has been connected for this long. A control connection idle for this long
    /// (or [`CONTROL_IDLE_LIMIT`], if shorter) between requests is closed.
    pub timeout: Duration,
    pub cancel: Arc<AtomicBool>,
}

struct Running {
    stop: Arc<AtomicBool>,
    duration: Duration,
    handle: std::thread::JoinHandle<Result<ReceiveReport, String>>,
}

impl Running {
    fn finish(self) -> Result<ReceiveReport, String> {
        self.stop.store(true, Ordering::Release);
        self.handle
            .join()
            .map_err(|_| "receive thread panicked".to_string())?
    }
}

/// Bind UDP and TCP on `listen` (TCP on the UDP socket's port when `listen` has port 0).
pub fn bind(listen: SocketAddr) -> Result<(UdpSocket, TcpListener), NetError> {
    let udp = UdpSocket::bind(listen)
        .map_err(|e| NetError::Usage(format!("--listen {listen}: cannot bind UDP: {e}")))?;
    let local = udp
        .local_addr()
        .map_err(|e| NetError::Failure(e.to_string()))?;
    let tcp = TcpListener::bind(local)
        .map_err(|e| NetError::Usage(format!("--listen {local}: cannot bind TCP: {e}")))?;
    Ok((udp, tcp))
}

/// What connection threads tell the accepting thread.
enum Event {
    Log(String),
    Closed { id: u64, trials: usize },
}

/// What the accepting thread knows of a connection, to pick one to evict when all slots are taken.
#[derive(Default)]
struct ConnState {
    /// Waiting for its next line with no trial running: it holds a slot and nothing else.
    idle: AtomicBool,
    /// Wall clock of its last complete line (or of its accept).
    last_line_ns: std::sync::atomic::AtomicU64,
    /// Set by the accepting thread: close with an error line at the next chance.
    evict: AtomicBool,
}

impl ConnState {
    fn new() -> ConnState {
        let state = ConnState::default();
        state.idle.store(true, Ordering::Relaxed);
        state
            .last_line_ns
            .store(clock::wall_ns(), Ordering::Relaxed);
        state
    }
}

/// The connection to evict for a newcomer when all [`MAX_CONNECTIONS`] are taken: the idle one whose
/// last line is oldest. `None` when every connection is running a trial or answering a request.
fn oldest_idle(connections: &[(u64, Arc<ConnState>)]) -> Option<&Arc<ConnState>> {
    connections
        .iter()
        .map(|(_, c)| c)
        .filter(|c| c.idle.load(Ordering::Relaxed) && !c.evict.load(Ordering::Relaxed))
        .min_by_key(|c| c.last_line_ns.load(Ordering::Relaxed))
}

/// State the connections share. The UDP socket is one data path: only the connection holding
/// `data_path` (from its `start` to its `stop`) has a receive thread on it, so trials of different
/// senders never mix, while their control connections (hello, waiting) are served side by side.
struct Shared<'a> {
    udp: &'a UdpSocket,
    options: &'a ServeOptions,
    data_path: Mutex<()>,
    /// Set when `serve` is about to return: connection threads close.
    shutdown: AtomicBool,
    idle_limit: Duration,
}

impl Shared<'_> {
    fn stopping(&self) -> bool {
        self.shutdown.load(Ordering::Relaxed) || self.options.cancel.load(Ordering::Relaxed)
    }
}

/// Serve senders on already bound sockets until `--once` is satisfied, the timeout passes without a
/// sender, or cancel. `log` gets one line per event.
///
/// Each control connection has its own thread, a line-length limit and an idle limit, so a client that
/// connects and says nothing (or sends garbage, or an endless line) delays no other sender. When all
/// [`MAX_CONNECTIONS`] slots are taken, a newcomer evicts the connection idle the longest; it is
/// refused only when every connection is busy with a trial or a request.
pub fn serve(
    udp: UdpSocket,
    tcp: TcpListener,
    options: &ServeOptions,
    mut log: impl FnMut(&str),
) -> Result<(), NetError> {
    tcp.set_nonblocking(true)
        .map_err(|e| NetError::Failure(e.to_string()))?;
    let shared = Shared {
        udp: &udp,
        options,
        data_path: Mutex::new(()),
        shutdown: AtomicBool::new(false),
        idle_limit: CONTROL_IDLE_LIMIT.min(options.timeout),
    };
    let (events, inbox) = mpsc::channel::<Event>();
    let outcome = std::thread::scope(|scope| {
        let mut connections: Vec<(u64, Arc<ConnState>)> = Vec::new();
        let mut next_id = 0u64;
        let mut idle_since = clock::wall_ns();
        let mut outcome = Ok(());
        loop {
            while let Ok(event) = inbox.try_recv() {
                match event {
                    Event::Log(line) => log(&line),
                    Event::Closed { id, trials } => {
                        connections.retain(|(c, _)| *c != id);
                        if options.once && trials > 0 {
                            shared.shutdown.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
            if shared.stopping() {
                break;
            }
            if !connections.is_empty() {
                idle_since = clock::wall_ns();
            } else if clock::wall_ns() - idle_since >= options.timeout.as_nanos() as u64 {
                log("no sender within --timeout; exiting");
                break;
            }
            let (stream, peer) = match tcp.accept() {
                Ok(accepted) => accepted,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                Err(e) => {
                    outcome = Err(NetError::Failure(format!("accept: {e}")));
                    break;
                }
            };
            let open = connections.len() - evicted_count(&connections);
            if open >= MAX_CONNECTIONS {
                match oldest_idle(&connections) {
                    Some(victim) => victim.evict.store(true, Ordering::Relaxed),
                    None => {
                        log(&format!(
                            "sender {peer} refused: {MAX_CONNECTIONS} control connections are busy"
                        ));
                        refuse(
                            stream,
                            &format!(
                                "busy: {MAX_CONNECTIONS} control connections are busy; try again later"
                            ),
                        );
                        continue;
                    }
                }
            }
            next_id += 1;
            let state = Arc::new(ConnState::new());
            connections.push((next_id, state.clone()));
            let accepted = Accepted {
                stream,
                peer,
                id: next_id,
                state,
            };
            spawn_connection(scope, &shared, events.clone(), accepted);
        }
        shared.shutdown.store(true, Ordering::Relaxed);
        outcome
    });
    while let Ok(event) = inbox.try_recv() {
        if let Event::Log(line) = event {
            log(&line);
        }
    }
    outcome
}

/// Connections told to leave that have not closed yet: they no longer count against the limit.
fn evicted_count(connections: &[(u64, Arc<ConnState>)]) -> usize {
    connections
        .iter()
        .filter(|(_, c)| c.evict.load(Ordering::Relaxed))
        .count()
}

/// A control connection just accepted: its socket, the sender's address, its id among the
/// connections and the state the accept loop watches it by.
struct Accepted {
    stream: TcpStream,
    peer: SocketAddr,
    id: u64,
    state: Arc<ConnState>,
}

/// Serve one accepted connection on its own thread of `scope`, reporting to `events`.
fn spawn_connection<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    shared: &'scope Shared<'env>,
    events: mpsc::Sender<Event>,
    accepted: Accepted,
) {
    let Accepted {
        stream,
        peer,
        id,
        state,
    } = accepted;
    scope.spawn(move || {
        let _ = events.send(Event::Log(format!("sender {peer} connected")));
        let mut trials = 0;
        let line = match serve_connection(stream, shared, &state, &mut trials) {
            Ok(()) => format!("sender {peer} done after {trials} trial(s)"),
            Err(e) => format!("sender {peer}: {e} (after {trials} trial(s))"),
        };
        let _ = events.send(Event::Log(line));
        let _ = events.send(Event::Closed { id, trials });
    });
}

/// Answer a connection with one error line and close it.
fn refuse(stream: TcpStream, why: &str) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    if let Ok(mut line) = serde_json::to_string(&Reply::error(why)) {
        line.push('\n');
        let _ = (&stream).write_all(line.as_bytes());
    }
}

fn reply(writer: &mut TcpStream, r: &Reply) -> Result<(), String> {
    let mut line = serde_json::to_string(r).map_err(|e| e.to_string())?;
    line.push('\n');
    writer.write_all(line.as_bytes()).map_err(|e| e.to_string())
}

/// A connection's running trial: its receive thread, and its hold on the data path.
type HeldTrial<'s> = (Running, MutexGuard<'s, ()>);

/// Serve one control connection: every refused request is answered with an error line, then the
/// connection is closed (the sender's search cannot go on without the receiver anyway).
fn serve_connection(
    stream: TcpStream,
    shared: &Shared<'_>,
    state: &ConnState,
    trials: &mut usize,
) -> Result<(), String> {
    stream.set_nonblocking(false).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(POLL))
        .map_err(|e| e.to_string())?;
    stream
        .set_write_timeout(Some(WRITE_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = LineReader::new(stream);
    let mut running: Option<HeldTrial<'_>> = None;
    let stopping = || shared.stopping() || state.evict.load(Ordering::Relaxed);
    let result = (|| {
        for n in 0..MAX_REQUESTS {
            let limit = if n == 0 {
                FIRST_LINE_LIMIT.min(shared.idle_limit)
            } else {
                shared.idle_limit + running.as_ref().map_or(Duration::ZERO, |r| r.0.duration)
            };
            state.idle.store(running.is_none(), Ordering::Relaxed);
            let request = read_request(&mut reader, &mut writer, limit, &stopping);
            state.idle.store(false, Ordering::Relaxed);
            let Some(request) = request? else {
                return evicted(state, &mut writer);
            };
            state
                .last_line_ns
                .store(clock::wall_ns(), Ordering::Relaxed);
            match request {
                ControlRequest::Hello => reply(&mut writer, &Reply::ok())?,
                ControlRequest::Start(start) => {
                    if !start_trial(shared, start, &mut running, &mut writer, trials)? {
                        return Ok(());
                    }
                }
                ControlRequest::Stop => stop_trial(&mut running, &mut writer)?,
                ControlRequest::Bye => return Ok(()),
            }
        }
        Ok(())
    })();
    if let Some((r, _guard)) = running.take() {
        let _ = r.finish();
    }
    // FIN after the last reply, so the peer reads the reply and then the end of the stream.
    let _ = writer.shutdown(std::net::Shutdown::Write);
    result
}

/// A connection's reading ended quietly: if it was evicted for a newcomer, say so to it and in the
/// log; otherwise (end of stream, the receiver stopping) it just ends.
fn evicted(state: &ConnState, writer: &mut TcpStream) -> Result<(), String> {
    if !state.evict.load(Ordering::Relaxed) {
        return Ok(());
    }
    let why = format!(
        "closed: idle while another sender needed one of the {MAX_CONNECTIONS} control connections"
    );
    let _ = reply(writer, &Reply::error(&why));
    Err(why)
}

/// The connection's next request, waiting up to `limit` for it. `Ok(None)` ends the connection
/// quietly (end of stream, or the receiver stopping); a line too long, an idle connection and a refused
/// request are answered with an error line and end it with that error.
fn read_request(
    reader: &mut LineReader<TcpStream>,
    writer: &mut TcpStream,
    limit: Duration,
    stopping: &dyn Fn() -> bool,
) -> Result<Option<ControlRequest>, String> {
    let line = match reader.read_line(limit, stopping) {
        Ok(Some(line)) => line,
        Ok(None) | Err(LineError::Stopped) => return Ok(None),
        Err(e @ LineError::TooLong) => {
            let _ = reply(writer, &Reply::error(e.to_string()));
            return Err(e.to_string());
        }
        Err(e @ LineError::Idle(_)) => {
            let _ = reply(writer, &Reply::error(format!("{e}; closing")));
            return Err(format!("{e}; closed"));
        }
        Err(e) => return Err(format!("control: {e}")),
    };
    match parse_request(&line) {
        Ok(r) => Ok(Some(r)),
        Err(e) => {
            reply(writer, &Reply::error(e.to_string()))?;
            Err(e.to_string())
        }
    }
}

/// `start`: end this connection's previous trial, take the data path and start the receive thread,
/// then answer. `Ok(false)` when the receiver is stopping while it waits for the data path (the
/// connection ends quietly).
fn start_trial<'s>(
    shared: &'s Shared<'_>,
    start: StartRequest,
    running: &mut Option<HeldTrial<'s>>,
    writer: &mut TcpStream,
    trials: &mut usize,
) -> Result<bool, String> {
    if let Some((r, _guard)) = running.take() {
        let _ = r.finish();
    }
    let Some(guard) = wait_for_data_path(shared) else {
        if shared.stopping() {
            return Ok(false);
        }
        let why = format!(
            "busy: another sender's trial held the data path for {} s",
            DATA_PATH_WAIT.as_secs()
        );
        reply(writer, &Reply::error(&why))?;
        return Err(why);
    };
    match begin_trial(shared, start) {
        Ok(r) => {
            *running = Some((r, guard));
            *trials += 1;
            reply(writer, &Reply::ok())?;
            Ok(true)
        }
        Err(e) => {
            reply(writer, &Reply::error(&e))?;
            Err(e)
        }
    }
}

/// `stop`: end the running trial and answer with its receive report (an error without one).
fn stop_trial(running: &mut Option<HeldTrial<'_>>, writer: &mut TcpStream) -> Result<(), String> {
    match running.take() {
        Some((r, _guard)) => match r.finish() {
            Ok(report) => reply(
                writer,
                &Reply {
                    ok: true,
                    error: None,
                    report: Some(report),
                },
            ),
            Err(e) => {
                reply(writer, &Reply::error(&e))?;
                Err(e)
            }
        },
        None => {
            reply(writer, &Reply::error("stop without start"))?;
            Err("stop without start".to_string())
        }
    }
}

/// Take the data path, waiting up to [`DATA_PATH_WAIT`] for another connection's trial to end.
fn wait_for_data_path<'a>(shared: &'a Shared<'_>) -> Option<MutexGuard<'a, ()>> {
    let deadline = clock::wall_ns() + DATA_PATH_WAIT.as_nanos() as u64;
    loop {
        match shared.data_path.try_lock() {
            Ok(guard) => return Some(guard),
            // A connection thread that panicked left nothing half-done behind the lock: it guards no data.
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => {}
        }
        if shared.stopping() || clock::wall_ns() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Start the receive thread of a checked `start`.
fn begin_trial(shared: &Shared<'_>, start: StartRequest) -> Result<Running, String> {
    if let Some(bytes) = start.rcvbuf {
        super::receiver::set_receive_buffer(shared.udp, bytes)
            .map_err(|e| format!("rcvbuf {bytes}: {e}"))?;
    }
    let mac = start
        .function
        .with_key(
            &start.key,
            KeyParams::default().for_tag_len(start.function.algorithm, start.sa.tag_len),
        )
        .map_err(|e| format!("key: {e}"))?;
    let nonce_len = start.function.algorithm.nonce_len.unwrap_or(0);
    let (batch, gro) = (start.batch, start.gro);
    let mut receiver = Receiver::new(start.sa, mac, nonce_len, start.replay_window);
    let socket = shared
        .udp
        .try_clone()
        .map_err(|e| format!("udp socket: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let thread_stop = stop.clone();
    let core = shared.options.core;
    // Bounded even if the sender never says stop: twice the trial and half a minute.
    let deadline_ns = clock::wall_ns() + start.duration.as_nanos() as u64 * 2 + 30_000_000_000;
    let handle = std::thread::spawn(move || {
        if let Some(c) = core {
            affinity::bind_current_thread(&[c])?;
        }
        let rule = StopRule {
            stop: &thread_stop,
            idle: Duration::from_millis(50),
            deadline_ns,
        };
        receive_loop(&socket, &mut receiver, &rule, batch, gro).map_err(|e| format!("receive: {e}"))
    });
    Ok(Running {
        stop,
        duration: start.duration,
        handle,
    })
}

/// The sender's end of the control channel.
pub struct RemotePath {
    to: SocketAddr,
    reader: LineReader<TcpStream>,
    writer: TcpStream,
    pub sender_core: Option<usize>,
    pub cancel: Arc<AtomicBool>,
}

impl RemotePath {
    /// Connect the control channel to `to` and say hello.
    pub fn connect(
        to: SocketAddr,
        sender_core: Option<usize>,
        cancel: Arc<AtomicBool>,
    ) -> Result<RemotePath, NetError> {
        let stream = TcpStream::connect_timeout(&to, Duration::from_secs(5)).map_err(|e| {
            NetError::Failure(format!(
                "--to {to}: no receiver answers on TCP {to} ({e}); start `macbench net receive --listen {to}` there first"
            ))
        })?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(POLL))
            .map_err(|e| NetError::Failure(e.to_string()))?;
        stream
            .set_write_timeout(Some(WRITE_TIMEOUT))
            .map_err(|e| NetError::Failure(e.to_string()))?;
        let writer = stream
            .try_clone()
            .map_err(|e| NetError::Failure(e.to_string()))?;
        let mut path = RemotePath {
            to,
            reader: LineReader::new(stream),
            writer,
            sender_core,
            cancel,
        };
        path.call(&Request::Hello {
            version: PROTOCOL_VERSION,
        })?;
        Ok(path)
    }

    pub fn describe(&self) -> String {
        format!("UDP to {} (control: TCP {})", self.to, self.to)
    }

    /// Send `request` and read its reply, waiting no longer than the request can take: a peer that
    /// accepts the connection but never answers is an error, not a hang.
    fn call(&mut self, request: &Request) -> Result<Reply, NetError> {
        let fail = |e: String| NetError::Failure(format!("control channel to {}: {e}", self.to));
        let mut line = serde_json::to_string(request).map_err(|e| fail(e.to_string()))?;
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .map_err(|e| fail(e.to_string()))?;
        let (what, limit) = match request {
            Request::Hello { .. } => ("hello", HELLO_REPLY_LIMIT),
            // A `start` may wait for another sender's trial to free the data path.
            Request::Start { .. } => ("start", DATA_PATH_WAIT + HELLO_REPLY_LIMIT),
            Request::Stop | Request::Bye => ("stop", STOP_REPLY_LIMIT),
        };
        let cancel = self.cancel.clone();
        let answer = match self
            .reader
            .read_line(limit, &|| cancel.load(Ordering::Relaxed))
        {
            Ok(Some(answer)) => answer,
            Ok(None) => return Err(fail("receiver closed the connection".to_string())),
            Err(LineError::Idle(_)) => {
                return Err(fail(format!(
                    "no reply to {what} within {} s; is `macbench net receive` listening there?",
                    limit.as_secs()
                )))
            }
            Err(LineError::Stopped) => return Err(fail("interrupted".to_string())),
            Err(e) => return Err(fail(e.to_string())),
        };
        let reply: Reply =
            serde_json::from_slice(&answer).map_err(|e| fail(format!("bad reply: {e}")))?;
        if reply.ok {
            Ok(reply)
        } else {
            Err(fail(reply.error.unwrap_or_else(|| "refused".to_string())))
        }
    }

    /// Run trial number `n` at `rate` against the remote receiver.
    pub fn trial(
        &mut self,
        setup: &TrialSetup,
        rate: Option<f64>,
        n: u32,
    ) -> Result<TrialResult, NetError> {
        let (sa, key, mut builder) = setup.sender(n)?;
        let (to, core, cancel) = (self.to, self.sender_core, self.cancel.clone());
        let plan = setup.send_plan(rate, &cancel);
        // Before `start`: the receiver's deadlines count from it.
        super::sender::prepare(&mut builder, &plan)?;
        self.call(&Request::Start {
            function: setup.function.id(),
            key: hex::encode(&key),
            spi: sa.spi,
            tag_len: sa.tag_len,
            replay_window: setup.replay_window,
            duration_ms: setup.duration.as_millis() as u64,
            rcvbuf: setup.rcvbuf,
            batch: Some(setup.batch),
            gro: setup.gro,
        })?;
        let bind_addr: SocketAddr = if self.to.is_ipv4() {
            (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let send = std::thread::scope(|scope| {
            scope
                .spawn(|| -> Result<_, String> {
                    if let Some(c) = core {
                        affinity::bind_current_thread(&[c])?;
                    }
                    let s = UdpSocket::bind(bind_addr).map_err(|e| format!("bind: {e}"))?;
                    s.connect(to).map_err(|e| format!("connect {to}: {e}"))?;
                    if plan.gso {
                        super::batch_io::enable_gso(&s)?;
                    }
                    send_loop(&s, &mut builder, &plan).map_err(|r| r.to_string())
                })
                .join()
        });
        let reply = self.call(&Request::Stop)?;
        let send = send
            .map_err(|_| NetError::Failure("sender thread panicked".to_string()))?
            .map_err(|e| NetError::Failure(format!("sender: {e}")))?;
        let receive = reply.report.ok_or_else(|| {
            NetError::Failure(format!(
                "control channel to {}: stop reply without a report",
                self.to
            ))
        })?;
        Ok(TrialResult { send, receive })
    }
}

impl Drop for RemotePath {
    fn drop(&mut self) {
        if let Ok(mut line) = serde_json::to_string(&Request::Bye) {
            line.push('\n');
            let _ = self.writer.write_all(line.as_bytes());
        }
    }
}
