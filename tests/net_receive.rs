//! `macbench net receive` facing senders it cannot trust: every field of a `start` is checked with the
//! command line's own rules ([`macbench::net::limits`]), a refused line is answered with an error and
//! the connection closed, an idle or endless-line client delays nobody, and the receiver goes on serving
//! a good sender afterwards. Loopback (127.0.0.1) only; every wait is bounded.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::mac::{functions, Availability, Family, Function, MAX_TAG_LEN};
use macbench::net::control::{
    self, parse_request, ControlError, ControlRequest, RemotePath, ServeOptions, MAX_LINE,
};
use macbench::net::limits::{self, LimitError};
use macbench::net::search::TrialOutcome;
use macbench::net::trial::TrialSetup;
use proptest::prelude::*;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

fn function(id: &str) -> Function {
    functions()
        .into_iter()
        .find(|f| f.id() == id && f.availability() == Availability::Available)
        .unwrap_or_else(|| panic!("{id} unavailable"))
}

/// A receiver serving on 127.0.0.1 in a thread of this process, stopped (cancel) when dropped.
struct TestReceiver {
    addr: SocketAddr,
    cancel: Arc<AtomicBool>,
    log: mpsc::Receiver<String>,
    thread: Option<JoinHandle<()>>,
}

impl TestReceiver {
    fn start() -> TestReceiver {
        let (udp, tcp) = control::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = udp.local_addr().unwrap();
        let cancel = Arc::new(AtomicBool::new(false));
        let options = ServeOptions {
            listen: addr,
            core: None,
            once: false,
            // Long enough never to end a test by itself; the test cancels.
            timeout: Duration::from_secs(120),
            cancel: cancel.clone(),
        };
        let (tx, log) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            control::serve(udp, tcp, &options, |line| {
                let _ = tx.send(line.to_string());
            })
            .unwrap();
        });
        TestReceiver {
            addr,
            cancel,
            log,
            thread: Some(thread),
        }
    }

    /// A real sender: one 0.3 s trial at 2000 pps; every genuine packet must be delivered.
    fn serves_a_good_sender(&self) {
        let setup = TrialSetup {
            function: function("hmac-sha256/openssl/hw"),
            tag_len: 16,
            sizes: Arc::new(vec![64, 256]),
            pool: Arc::new(macbench::net::sender::payload_pool(3)),
            replay_window: 64,
            inject_bad_per_1000: 0,
            duration: Duration::from_millis(300),
            seed: 3,
            rcvbuf: None,
            batch: macbench::net::batch_io::DEFAULT_BATCH,
            gso: false,
            gro: false,
            unthrottled_pps: macbench::net::trial::DEFAULT_UNTHROTTLED_PPS,
        };
        let mut path = RemotePath::connect(self.addr, None, Arc::new(AtomicBool::new(false)))
            .expect("the receiver still accepts a sender");
        let t = path.trial(&setup, Some(2000.0), 1).expect("the trial runs");
        assert!(t.send.sent > 0);
        assert_eq!(t.receive.counts.delivered, t.send.sent);
        assert_eq!(t.loss_ratio(), 0.0);
    }

    fn log_lines(&self) -> Vec<String> {
        self.log.try_iter().collect()
    }
}

impl Drop for TestReceiver {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A raw control connection: write lines, read reply lines. Reads time out after 30 s so a receiver
/// that never answers fails the test instead of hanging it.
struct Raw {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Raw {
    fn connect(addr: SocketAddr) -> Raw {
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        Raw {
            writer: s.try_clone().unwrap(),
            reader: BufReader::new(s),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        // The receiver may already have closed after an earlier line; the reply says why.
        let _ = self.writer.write_all(bytes);
    }

    fn reply(&mut self) -> serde_json::Value {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("a reply line");
        serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    /// After an error reply the receiver closes: the next read sees the end of the stream, or a reset
    /// when the receiver closed with bytes of ours still unread (the rest of an over-long line).
    fn is_closed(&mut self) -> bool {
        let mut rest = String::new();
        match self.reader.read_line(&mut rest) {
            Ok(0) => true,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
            Ok(_) => false,
        }
    }
}

fn start_line(function: &str, key: &str, tag_len: u64, replay_window: u64) -> String {
    format!(
        r#"{{"op":"start","function":"{function}","key":"{key}","spi":1296170497,"tag_len":{tag_len},"replay_window":{replay_window},"duration_ms":300}}"#
    ) + "\n"
}

const KEY32: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/// Send `line` after a hello; expect one error reply containing `needle`, then the connection closed.
fn assert_refused(rx: &TestReceiver, line: &[u8], needle: &str) {
    let mut c = Raw::connect(rx.addr);
    c.send(b"{\"op\":\"hello\",\"version\":1}\n");
    assert_eq!(c.reply()["ok"], true);
    c.send(line);
    let r = c.reply();
    let shown = String::from_utf8_lossy(&line[..line.len().min(120)]).into_owned();
    assert_eq!(r["ok"], false, "{shown}: {r}");
    let error = r["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(needle),
        "{shown}: {error:?} lacks {needle:?}"
    );
    assert!(!error.contains('\n'), "one-line error: {error:?}");
    assert!(
        c.is_closed(),
        "{shown}: connection left open after an error"
    );
}

#[test]
fn receive_rejects_huge_replay_window() {
    let rx = TestReceiver::start();
    for window in [1u64 << 40, u64::MAX - 63, 128, 0] {
        assert_refused(
            &rx,
            start_line("hmac-sha256/openssl/hw", KEY32, 16, window).as_bytes(),
            &format!("replay_window: {window} packets is not offered; give 64 or 1024"),
        );
    }
    rx.serves_a_good_sender();
}

#[test]
fn receive_rejects_tag_len_longer_than_tag() {
    let rx = TestReceiver::start();
    // The OpenSSL backend's receive thread used to panic slicing a 32-byte tag to 64 bytes.
    for id in ["hmac-sha256/openssl/hw", "hmac-sha256/rustcrypto/hw"] {
        assert_refused(
            &rx,
            start_line(id, KEY32, 64, 64).as_bytes(),
            "tag_len 64: hmac-sha256 produces only 32-byte tags",
        );
    }
    assert_refused(
        &rx,
        start_line("null/null/hw", KEY32, 65, 64).as_bytes(),
        "tag_len: 65 bytes; give 1 to 64",
    );
    let log = rx.log_lines();
    assert!(!log.iter().any(|l| l.contains("panicked")), "{log:?}");
    rx.serves_a_good_sender();
}

#[test]
fn idle_connection_does_not_block_others() {
    let rx = TestReceiver::start();
    // One client connected and silent, one that sent half a line: neither may hold up a sender.
    let _idle = Raw::connect(rx.addr);
    let mut half = Raw::connect(rx.addr);
    half.send(br#"{"op":"hel"#);
    rx.serves_a_good_sender();
    rx.serves_a_good_sender();
}

/// Issue 27: eight idle control connections used to lock a real sender out for 30 s. Now a newcomer
/// evicts the connection idle the longest, which is told why.
#[test]
fn idle_connections_filling_every_slot_do_not_lock_out_a_sender() {
    let rx = TestReceiver::start();
    let mut idle: Vec<Raw> = (0..control::MAX_CONNECTIONS)
        .map(|_| Raw::connect(rx.addr))
        .collect();
    rx.serves_a_good_sender();
    let r = idle[0].reply();
    assert_eq!(r["ok"], false, "{r}");
    assert!(
        r["error"].as_str().unwrap().starts_with("closed: idle"),
        "{r}"
    );
    assert!(idle[0].is_closed());
    // The sender's own connection ended; the next newcomer evicts the next-oldest idle one.
    rx.serves_a_good_sender();
    assert_eq!(idle[1].reply()["ok"], false);
    let log = rx.log_lines();
    assert!(log.iter().any(|l| l.contains("closed: idle")), "{log:?}");
}

/// Connections busy with requests (one running a trial, the others waiting for the data path) are
/// not evicted: a newcomer is then refused, not queued.
#[test]
fn connections_beyond_the_limit_are_refused_when_all_are_busy() {
    let rx = TestReceiver::start();
    let start = start_line("hmac-sha256/openssl/hw", KEY32, 16, 64)
        .replace("\"duration_ms\":300", "\"duration_ms\":60000");
    let mut busy: Vec<Raw> = Vec::new();
    for i in 0..control::MAX_CONNECTIONS {
        let mut c = Raw::connect(rx.addr);
        c.send(b"{\"op\":\"hello\",\"version\":1}\n");
        assert_eq!(c.reply()["ok"], true);
        c.send(start.as_bytes());
        if i == 0 {
            // The first holds the data path; the others wait for it without a reply.
            assert_eq!(c.reply()["ok"], true);
        }
        busy.push(c);
    }
    let mut extra = Raw::connect(rx.addr);
    let r = extra.reply();
    assert_eq!(r["ok"], false);
    assert!(r["error"].as_str().unwrap().starts_with("busy"), "{r}");
    assert!(extra.is_closed());
    drop(busy);
}

/// A connection that never sends its first line is closed after a short deadline, with a reason.
#[test]
fn silent_connection_is_closed_after_the_first_line_deadline() {
    let rx = TestReceiver::start();
    let mut silent = Raw::connect(rx.addr);
    let r = silent.reply();
    assert_eq!(r["ok"], false, "{r}");
    let error = r["error"].as_str().unwrap();
    assert!(error.contains("no complete request within 5s"), "{error}");
    assert!(silent.is_closed());
    rx.serves_a_good_sender();
}

#[test]
fn endless_control_line_is_cut_at_the_limit() {
    let rx = TestReceiver::start();
    let mut c = Raw::connect(rx.addr);
    // Far more than MAX_LINE without a newline: the receiver must answer, not keep buffering.
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..4 {
        c.send(&chunk);
    }
    let r = c.reply();
    assert_eq!(r["ok"], false);
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("longer than 4096 bytes"),
        "{r}"
    );
    rx.serves_a_good_sender();
}

#[test]
fn bad_control_lines_are_answered_with_an_error_and_the_receiver_serves_the_next_sender() {
    let rx = TestReceiver::start();
    let long = format!(
        "{{\"op\":\"hello\",\"pad\":\"{}\"}}\n",
        "a".repeat(MAX_LINE)
    );
    // A good start line with one field edited.
    let edited = |from: &str, to: &str| {
        start_line("hmac-sha256/openssl/hw", KEY32, 16, 64)
            .replace(from, to)
            .into_bytes()
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not json\n".to_vec(), "bad request"),
        (b"\xff\xfe\x00garbage\n".to_vec(), "bad request"),
        (b"{\"op\":\"launch\"}\n".to_vec(), "bad request"),
        (
            b"{\"op\":\"hello\",\"version\":2}\n".to_vec(),
            "protocol version 2",
        ),
        (b"{\"op\":\"stop\"}\n".to_vec(), "stop without start"),
        (long.into_bytes(), "longer than 4096 bytes"),
        (
            start_line("hmac-sha256/openssl/hw", KEY32, 16, 1 << 40).into_bytes(),
            "replay_window",
        ),
        (
            start_line("hmac-sha256/openssl/hw", KEY32, 0, 64).into_bytes(),
            "tag_len: 0 bytes",
        ),
        (
            start_line("hmac-sha256/openssl/hw", KEY32, 33, 64).into_bytes(),
            "32-byte tags",
        ),
        (
            start_line("cmac-aes128/openssl/hw", KEY32, 16, 64).into_bytes(),
            "key: cmac-aes128: key is 32 bytes; accepted: 16 bytes",
        ),
        (
            start_line("hmac-sha256/openssl/hw", "abc", 16, 64).into_bytes(),
            "key: not an even-length hex string",
        ),
        (
            start_line("hmac-sha257/openssl/hw", KEY32, 16, 64).into_bytes(),
            "no function \"hmac-sha257/openssl/hw\"",
        ),
        (edited("1296170497", "0"), "spi: 0 is a reserved SPI"),
        (
            edited("\"duration_ms\":300", "\"duration_ms\":0"),
            "duration_ms: 0 ms",
        ),
        (
            edited(
                "\"duration_ms\":300",
                "\"duration_ms\":18446744073709551615",
            ),
            "duration_ms: 18446744073709551615 ms",
        ),
        (edited("}\n", ",\"rcvbuf\":0}\n"), "rcvbuf: 0 bytes"),
        (
            edited("}\n", ",\"rcvbuf\":1099511627776}\n"),
            "rcvbuf: 1099511627776 bytes",
        ),
        (edited("\"tag_len\":16", "\"tag_len\":-1"), "bad request"),
    ];
    for (line, needle) in &cases {
        assert_refused(&rx, line, needle);
    }
    let log = rx.log_lines();
    assert!(!log.iter().any(|l| l.contains("panicked")), "{log:?}");
    rx.serves_a_good_sender();
}

/// The property tests' configuration, from this file's own seed.
fn fixed_seed_config(cases: u32) -> ProptestConfig {
    common::fixed_seed_config(cases, 0x6e65_7472_6563_7631)
}

/// Values around every bound, and arbitrary ones.
fn edge_u64(edges: &'static [u64]) -> impl Strategy<Value = u64> {
    prop_oneof![proptest::sample::select(edges), any::<u64>()]
}

fn function_ids() -> Vec<String> {
    let mut ids: Vec<String> = functions()
        .into_iter()
        .filter(|f| f.accel == macbench::mac::Accel::Hw)
        .map(|f| f.id())
        .collect();
    ids.push("hmac-sha257/openssl/hw".to_string());
    ids.push(String::new());
    ids
}

/// What a `start` with these fields must be: accepted exactly when each passes its documented bound.
#[allow(clippy::too_many_arguments)]
fn expected_ok(
    function: &str,
    key_hex: &str,
    spi: u64,
    tag_len: u64,
    window: u64,
    duration_ms: u64,
    rcvbuf: Option<u64>,
    batch: Option<u64>,
) -> bool {
    let Some(f) = functions().into_iter().find(|f| f.id() == function) else {
        return false;
    };
    let key_ok = hex::decode(key_hex)
        .map(|k| f.algorithm.key_lengths.accepts(k.len()))
        .unwrap_or(false);
    let tag_cap = if f.algorithm.family == Family::Null {
        MAX_TAG_LEN as u64
    } else {
        f.algorithm.tag_len as u64
    };
    f.availability() == Availability::Available
        && key_ok
        && (256..=u64::from(u32::MAX)).contains(&spi)
        && (1..=tag_cap).contains(&tag_len)
        && (window == 64 || window == 1024)
        && (1..=86_400_000).contains(&duration_ms)
        && rcvbuf.is_none_or(|b| (1..=1 << 30).contains(&b))
        && batch.is_none_or(|b| (1..=1024).contains(&b))
}

proptest! {
    #![proptest_config(fixed_seed_config(256))]

    /// Arbitrary bytes: never a panic; a line over the limit is refused as such; whatever is accepted
    /// was JSON, and an accepted `start` is within every bound.
    #[test]
    fn control_parser_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..5000)) {
        match parse_request(&bytes) {
            Err(ControlError::LineTooLong) => prop_assert!(bytes.len() > MAX_LINE),
            Err(_) => {}
            Ok(request) => {
                prop_assert!(bytes.len() <= MAX_LINE);
                prop_assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
                if let ControlRequest::Start(s) = request {
                    prop_assert!(limits::check_tag_len("t", s.sa.tag_len, Some(s.function.algorithm)).is_ok());
                    prop_assert!(limits::REPLAY_WINDOWS.contains(&s.replay_window));
                }
            }
        }
    }

    /// `start` messages with every field drawn around its bounds: accepted exactly when every field is
    /// within what `macbench net` documents, and then carried through unchanged.
    #[test]
    fn start_is_accepted_exactly_within_the_documented_bounds(
        function in proptest::sample::select(function_ids()),
        key in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..80).prop_map(hex::encode),
            "[0-9a-fx]{0,9}",
        ],
        spi in edge_u64(&[0, 1, 255, 256, 0x4d42_0001, 0xffff_ffff, 0x1_0000_0000]),
        tag_len in edge_u64(&[0, 1, 8, 16, 20, 32, 33, 64, 65, 1 << 40]),
        window in edge_u64(&[0, 1, 63, 64, 65, 128, 1024, 1025, 65536, 1 << 40, u64::MAX - 63]),
        duration_ms in edge_u64(&[0, 1, 300, 86_400_000, 86_400_001, u64::MAX]),
        rcvbuf in proptest::option::of(edge_u64(&[0, 1, 4 << 20, 1 << 30, (1 << 30) + 1, 1 << 40])),
        batch in proptest::option::of(edge_u64(&[0, 1, 32, 1024, 1025, 1 << 40])),
    ) {
        let mut line = serde_json::json!({
            "op": "start", "function": function, "key": key, "spi": spi, "tag_len": tag_len,
            "replay_window": window, "duration_ms": duration_ms,
        });
        if let Some(b) = rcvbuf {
            line["rcvbuf"] = b.into();
        }
        if let Some(b) = batch {
            line["batch"] = b.into();
        }
        let bytes = serde_json::to_vec(&line).unwrap();
        let expected = expected_ok(&function, &key, spi, tag_len, window, duration_ms, rcvbuf, batch);
        match parse_request(&bytes) {
            Ok(ControlRequest::Start(s)) => {
                prop_assert!(expected, "accepted {}", line);
                prop_assert_eq!(s.function.id(), function);
                prop_assert_eq!(hex::encode(&s.key), key);
                prop_assert_eq!(u64::from(s.sa.spi), spi);
                prop_assert_eq!(s.sa.tag_len as u64, tag_len);
                prop_assert_eq!(s.replay_window, window);
                prop_assert_eq!(s.duration, Duration::from_millis(duration_ms));
                prop_assert_eq!(s.rcvbuf.map(|b| b as u64), rcvbuf);
                prop_assert_eq!(s.batch as u64, batch.unwrap_or(32), "absent: the default batch");
            }
            Ok(other) => prop_assert!(false, "{:?} from {}", other, line),
            Err(e) => {
                prop_assert!(!expected, "refused {}: {}", line, e);
                prop_assert!(!e.to_string().contains('\n'));
                if let ControlError::Limit(l) = &e {
                    let field = match l {
                        LimitError::ReplayWindow { field, .. }
                        | LimitError::TagLen { field, .. }
                        | LimitError::TagLongerThanAlgorithm { field, .. }
                        | LimitError::Trial { field, .. }
                        | LimitError::Rcvbuf { field, .. }
                        | LimitError::Spi { field, .. }
                        | LimitError::Batch { field, .. }
                        | LimitError::PacketSize { field, .. } => *field,
                    };
                    prop_assert!(e.to_string().starts_with(field), "{}", e);
                }
            }
        }
    }
}
