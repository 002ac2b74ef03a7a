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
//! protect nothing. The receiver only ever receives on the data path; it exits after `--once` sender
//! or when no sender has connected for `--timeout`.

use super::receiver::{receive_loop, ReceiveReport, Receiver, StopRule};
use super::sender::{send_loop, SendPlan};
use super::trial::{TrialResult, TrialSetup};
use super::wire::Sa;
use super::NetError;
use crate::engine::{affinity, clock};
use crate::mac::{Availability, KeyParams};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const PROTOCOL_VERSION: u32 = 1;
/// Requests one control connection may make (a search is a few dozen trials).
const MAX_REQUESTS: usize = 100_000;
/// Longest control line accepted.
const MAX_LINE: usize = 4096;

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
        #[serde(default)]
        rcvbuf: Option<usize>,
    },
    Stop,
    Bye,
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

fn read_line<R: BufRead>(reader: &mut R) -> std::io::Result<Option<String>> {
    let mut line = String::new();
    let n = std::io::Read::take(reader, MAX_LINE as u64).read_line(&mut line)?;
    if n == 0 {
        return Ok(None);
    }
    Ok(Some(line))
}

/// Options of `macbench net receive`.
pub struct ServeOptions {
    pub listen: SocketAddr,
    pub core: Option<usize>,
    pub once: bool,
    /// Exit when no sender connects for this long; also the control connection's read timeout.
    pub timeout: Duration,
    pub cancel: Arc<AtomicBool>,
}

struct Running {
    stop: Arc<AtomicBool>,
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

/// Serve senders on already bound sockets until `--once` is satisfied, the timeout passes without a
/// sender, or cancel. `log` gets one line per event.
pub fn serve(
    udp: UdpSocket,
    tcp: TcpListener,
    options: &ServeOptions,
    mut log: impl FnMut(&str),
) -> Result<(), NetError> {
    let udp = Arc::new(udp);
    tcp.set_nonblocking(true)
        .map_err(|e| NetError::Failure(e.to_string()))?;
    let mut idle_since = clock::wall_ns();
    loop {
        if options.cancel.load(Ordering::Relaxed) {
            return Ok(());
        }
        match tcp.accept() {
            Ok((stream, peer)) => {
                log(&format!("sender {peer} connected"));
                let outcome = serve_connection(&udp, stream, options);
                match outcome {
                    Ok(trials) => log(&format!("sender {peer} done after {trials} trial(s)")),
                    Err(e) => log(&format!("sender {peer}: {e}")),
                }
                if options.once {
                    return Ok(());
                }
                idle_since = clock::wall_ns();
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if clock::wall_ns() - idle_since >= options.timeout.as_nanos() as u64 {
                    log("no sender within --timeout; exiting");
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(NetError::Failure(format!("accept: {e}"))),
        }
    }
}

fn serve_connection(
    udp: &Arc<UdpSocket>,
    stream: TcpStream,
    options: &ServeOptions,
) -> Result<usize, String> {
    stream.set_nonblocking(false).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(options.timeout))
        .map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut running: Option<Running> = None;
    let mut trials = 0;
    let reply = |writer: &mut TcpStream, r: &Reply| -> Result<(), String> {
        let mut line = serde_json::to_string(r).map_err(|e| e.to_string())?;
        line.push('\n');
        writer.write_all(line.as_bytes()).map_err(|e| e.to_string())
    };
    let result = (|| {
        for _ in 0..MAX_REQUESTS {
            if options.cancel.load(Ordering::Relaxed) {
                return Ok(());
            }
            let Some(line) = read_line(&mut reader).map_err(|e| format!("control: {e}"))? else {
                return Ok(());
            };
            let request: Request = match serde_json::from_str(line.trim()) {
                Ok(r) => r,
                Err(e) => {
                    reply(&mut writer, &Reply::error(format!("bad request: {e}")))?;
                    continue;
                }
            };
            match request {
                Request::Hello { version } if version == PROTOCOL_VERSION => {
                    reply(&mut writer, &Reply::ok())?
                }
                Request::Hello { version } => reply(
                    &mut writer,
                    &Reply::error(format!(
                        "protocol version {version}; this receiver speaks {PROTOCOL_VERSION}"
                    )),
                )?,
                Request::Start {
                    function,
                    key,
                    spi,
                    tag_len,
                    replay_window,
                    duration_ms,
                    rcvbuf,
                } => {
                    if let Some(r) = running.take() {
                        let _ = r.finish();
                    }
                    if let Some(bytes) = rcvbuf {
                        if let Err(e) = super::receiver::set_receive_buffer(udp, bytes) {
                            reply(&mut writer, &Reply::error(format!("rcvbuf {bytes}: {e}")))?;
                            continue;
                        }
                    }
                    match start(
                        udp,
                        options.core,
                        &function,
                        &key,
                        spi,
                        tag_len,
                        replay_window,
                        duration_ms,
                    ) {
                        Ok(r) => {
                            running = Some(r);
                            trials += 1;
                            reply(&mut writer, &Reply::ok())?;
                        }
                        Err(e) => reply(&mut writer, &Reply::error(e))?,
                    }
                }
                Request::Stop => match running.take() {
                    Some(r) => match r.finish() {
                        Ok(report) => reply(
                            &mut writer,
                            &Reply {
                                ok: true,
                                error: None,
                                report: Some(report),
                            },
                        )?,
                        Err(e) => reply(&mut writer, &Reply::error(e))?,
                    },
                    None => reply(&mut writer, &Reply::error("stop without start"))?,
                },
                Request::Bye => return Ok(()),
            }
        }
        Ok(())
    })();
    if let Some(r) = running.take() {
        let _ = r.finish();
    }
    result.map(|()| trials)
}

#[allow(clippy::too_many_arguments)]
fn start(
    udp: &Arc<UdpSocket>,
    core: Option<usize>,
    function: &str,
    key_hex: &str,
    spi: u32,
    tag_len: usize,
    replay_window: u64,
    duration_ms: u64,
) -> Result<Running, String> {
    let f = crate::mac::functions()
        .into_iter()
        .find(|f| f.id() == function)
        .ok_or_else(|| format!("this receiver has no function {function}"))?;
    if let Availability::Unavailable(why) = f.availability() {
        return Err(format!("{function} is unavailable here: {why}"));
    }
    if tag_len == 0 || tag_len > crate::mac::MAX_TAG_LEN {
        return Err(format!("tag_len {tag_len} out of range"));
    }
    let key = hex::decode(key_hex).map_err(|e| format!("key: {e}"))?;
    let mac = f
        .with_key(&key, KeyParams::default())
        .map_err(|e| e.to_string())?;
    let sa = Sa { spi, tag_len };
    let mut receiver = Receiver::new(sa, mac, f.algorithm.nonce_len.unwrap_or(0), replay_window);
    let stop = Arc::new(AtomicBool::new(false));
    let socket = udp.clone();
    let thread_stop = stop.clone();
    let deadline_ns = clock::wall_ns() + duration_ms.min(86_400_000) * 2_000_000 + 30_000_000_000;
    let handle = std::thread::spawn(move || {
        if let Some(c) = core {
            affinity::bind_current_thread(&[c])?;
        }
        let rule = StopRule {
            stop: &thread_stop,
            idle: Duration::from_millis(50),
            deadline_ns,
        };
        receive_loop(&socket, &mut receiver, &rule).map_err(|e| format!("receive: {e}"))
    });
    Ok(Running { stop, handle })
}

/// The sender's end of the control channel.
pub struct RemotePath {
    to: SocketAddr,
    reader: BufReader<TcpStream>,
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
            .set_read_timeout(Some(Duration::from_secs(120)))
            .map_err(|e| NetError::Failure(e.to_string()))?;
        let writer = stream
            .try_clone()
            .map_err(|e| NetError::Failure(e.to_string()))?;
        let mut path = RemotePath {
            to,
            reader: BufReader::new(stream),
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

    fn call(&mut self, request: &Request) -> Result<Reply, NetError> {
        let fail = |e: String| NetError::Failure(format!("control channel to {}: {e}", self.to));
        let mut line = serde_json::to_string(request).map_err(|e| fail(e.to_string()))?;
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .map_err(|e| fail(e.to_string()))?;
        let answer = read_line(&mut self.reader)
            .map_err(|e| fail(e.to_string()))?
            .ok_or_else(|| fail("receiver closed the connection".to_string()))?;
        let reply: Reply =
            serde_json::from_str(answer.trim()).map_err(|e| fail(format!("bad reply: {e}")))?;
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
        let (sa, key) = setup.association(n);
        let mut builder = setup.builder(sa, &key)?;
        self.call(&Request::Start {
            function: setup.function.id(),
            key: hex::encode(&key),
            spi: sa.spi,
            tag_len: sa.tag_len,
            replay_window: setup.replay_window,
            duration_ms: setup.duration.as_millis() as u64,
            rcvbuf: setup.rcvbuf,
        })?;
        let bind_addr: SocketAddr = if self.to.is_ipv4() {
            (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let (to, core, cancel) = (self.to, self.sender_core, self.cancel.clone());
        let plan = SendPlan {
            rate,
            duration: setup.duration,
            sizes: &setup.sizes,
            inject_bad_per_1000: setup.inject_bad_per_1000,
            replay_window: setup.replay_window,
            cancel: &cancel,
        };
        let send = std::thread::scope(|scope| {
            scope
                .spawn(|| -> Result<_, String> {
                    if let Some(c) = core {
                        affinity::bind_current_thread(&[c])?;
                    }
                    let s = UdpSocket::bind(bind_addr).map_err(|e| format!("bind: {e}"))?;
                    s.connect(to).map_err(|e| format!("connect {to}: {e}"))?;
                    Ok(send_loop(&s, &mut builder, &plan))
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
