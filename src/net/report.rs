//! What `macbench net` reports: one [`NetResult`] per function × size, a terminal table, JSON and CSV.
//!
//! pps and Mbps are those of the highest passing trial (its achieved offered rate, which equals the
//! delivered rate within the acceptable loss). Mbps counts UDP payload bytes (header + payload + tag).
//! CPU utilisation is thread CPU time / wall time of each side during that trial: the sender's excludes
//! the time it spun for pacing, the receiver's is measured from its first to its last datagram.

use super::receiver::ReceiverCounts;
use super::search::{Limit, TrialOutcome};
use super::sender::{InjectedCounts, SizeSpec};
use super::trial::TrialResult;
use crate::host::Host;
use crate::mac::Function;
use crate::table::{Style, Table};
use serde::Serialize;

/// One trial as reported.
#[derive(Debug, Clone, Serialize)]
pub struct TrialSummary {
    /// Rate asked for; `null` for the unthrottled trial.
    pub target_pps: Option<f64>,
    /// Achieved offered rate: genuine packets sent per second of sending.
    pub achieved_pps: f64,
    pub delivered_pps: f64,
    /// Delivered UDP payload megabits per second.
    pub delivered_mbps: f64,
    /// Lost / sent.
    pub loss: f64,
    pub pass: bool,
    pub sent: u64,
    pub send_errors: u64,
    pub duration_s: f64,
    /// Sender thread CPU / wall, pacing spin excluded.
    pub sender_cpu: Option<f64>,
    /// Sender thread CPU / wall including the pacing spin.
    pub sender_cpu_with_spin: Option<f64>,
    /// Receiver thread CPU / wall between first and last datagram.
    pub receiver_cpu: Option<f64>,
    /// Sender thread CPU per datagram sent, pacing spin excluded (ns): its headroom.
    pub sender_cpu_ns_per_packet: Option<f64>,
    /// Receiver thread CPU per datagram read (ns): its headroom.
    pub receiver_cpu_ns_per_packet: Option<f64>,
    /// Receiver time per datagram spent handling it (parse, anti-replay, verify), system calls
    /// excluded (ns): minus the null function's, what the MAC costs a packet.
    pub receiver_handle_ns_per_packet: Option<f64>,
    /// System calls that sent and that received datagrams (`--batch` sets how many per call).
    pub send_calls: u64,
    pub receive_calls: u64,
    /// Receive buffer the kernel granted (bytes).
    pub rcvbuf_bytes: u64,
    /// Packets whose tags the sender computed before the trial's clock started, and the seconds
    /// that took (not part of the trial).
    pub prepared_packets: u64,
    pub prepare_s: f64,
    pub receiver: ReceiverCounts,
    /// Bad packets the sender mixed in, by the counter each should land in.
    pub injected: InjectedCounts,
}

impl TrialSummary {
    pub fn new(t: &TrialResult, pass: bool) -> TrialSummary {
        TrialSummary {
            target_pps: t.send.target_pps,
            achieved_pps: t.achieved_pps(),
            delivered_pps: t.delivered_pps(),
            delivered_mbps: t.delivered_mbps(),
            loss: t.loss_ratio(),
            pass,
            sent: t.send.sent,
            send_errors: t.send.send_errors,
            duration_s: t.send.trial_ns as f64 / 1e9,
            sender_cpu: t.send.cpu_utilisation(),
            sender_cpu_with_spin: (t.send.wall_ns > 0)
                .then(|| t.send.cpu_ns as f64 / t.send.wall_ns as f64),
            receiver_cpu: t.receive.cpu_utilisation(),
            sender_cpu_ns_per_packet: t.send.cpu_ns_per_datagram(),
            receiver_cpu_ns_per_packet: t.receive.cpu_ns_per_datagram(),
            receiver_handle_ns_per_packet: t.receive.handle_ns_per_datagram(),
            send_calls: t.send.calls,
            receive_calls: t.receive.calls,
            rcvbuf_bytes: t.receive.rcvbuf_bytes,
            prepared_packets: t.send.prepared,
            prepare_s: t.send.prepare_ns as f64 / 1e9,
            receiver: t.receive.counts,
            injected: t.send.injected,
        }
    }
}

/// Which side limited a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitedBy {
    /// The sender's most passed without loss: the receiver was never pushed to its limit, so the
    /// rate is a lower bound on its zero-loss rate, not that rate.
    Sender,
    /// Loss began above the rate found: the receiving side (its thread, or the kernel's path into
    /// its socket) could take no more. Only then is the rate a zero-loss rate of the MAC's path.
    Receiver,
    /// A fixed-rate trial that the sender achieved and the receiver took within the acceptable loss.
    Neither,
    /// Nothing passed, or the search was cut short.
    Unknown,
}

impl LimitedBy {
    pub fn name(self) -> &'static str {
        match self {
            LimitedBy::Sender => "sender",
            LimitedBy::Receiver => "receiver",
            LimitedBy::Neither => "neither",
            LimitedBy::Unknown => "unknown",
        }
    }
}

/// One function at one size.
#[derive(Debug, Clone, Serialize)]
pub struct NetResult {
    pub function: String,
    pub algorithm: String,
    pub backend: String,
    pub accel: String,
    /// The null function's row, the baseline of this size.
    pub baseline: bool,
    /// The fixed datagram payload size in bytes; `null` for a size model (named in `size_model`),
    /// as in `macbench run`'s results.
    pub size: Option<u32>,
    pub size_model: Option<String>,
    /// Mean UDP payload bytes per packet (the size itself when fixed).
    pub mean_size_bytes: f64,
    pub tag_len: usize,
    /// `search` or `fixed-rate`.
    pub mode: &'static str,
    /// Achieved rate of the unthrottled trial (search only).
    pub max_rate_pps: Option<f64>,
    pub limit: Option<Limit>,
    /// Which side limited the result.
    pub limited_by: LimitedBy,
    /// The zero-loss (within the acceptable loss) rate of the receiver: set only for a search that
    /// found loss above it (`limited_by: receiver`). A sender-limited result has none.
    pub zero_loss_pps: Option<f64>,
    /// The highest passing trial (search) or the one trial (fixed rate); `null` if none passed.
    pub throughput: Option<TrialSummary>,
    /// This function's pps / the null function's pps at the same size.
    pub pps_vs_null: Option<f64>,
    pub trials: Vec<TrialSummary>,
    pub warnings: Vec<String>,
}

impl NetResult {
    pub fn new(function: &Function, size: &SizeSpec, tag_len: usize) -> NetResult {
        NetResult {
            function: function.id(),
            algorithm: function.algorithm.name.to_string(),
            backend: function.backend.name.to_string(),
            accel: function.accel.to_string(),
            baseline: false,
            size: size.bytes,
            size_model: size.bytes.is_none().then(|| size.label.clone()),
            mean_size_bytes: size.mean_bytes,
            tag_len,
            mode: "search",
            max_rate_pps: None,
            limit: None,
            limited_by: LimitedBy::Unknown,
            zero_loss_pps: None,
            throughput: None,
            pps_vs_null: None,
            trials: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// Run-wide facts serialised with the results.
#[derive(Debug, Clone, Serialize)]
pub struct NetConfigReport {
    pub transport: String,
    pub mode: String,
    pub trial_s: f64,
    pub acceptable_loss: f64,
    pub resolution: f64,
    pub replay_window: u64,
    pub inject_bad_per_1000: u32,
    /// Receive buffer asked for (bytes); `null`: system default.
    pub rcvbuf: Option<usize>,
    /// Datagrams per system call on both sides (1: unbatched).
    pub batch: usize,
    /// UDP GSO on the sender, UDP GRO on the receiver: what was in effect (on by default when the
    /// kernel takes them).
    pub gso: bool,
    pub gro: bool,
    /// The same in words, with the reason for any that is off.
    pub offloads: String,
    /// What the sender computes before each trial's clock starts ([`SENDER_PREPARES`]).
    pub sender_prepares: &'static str,
    pub requested_tag_len: usize,
    pub sender_core: Option<usize>,
    pub receiver_core: Option<usize>,
    pub seed: u64,
    /// What "size" means, so a JSON reader need not guess.
    pub size_definition: &'static str,
}

pub const SENDER_PREPARES: &str =
    "every tag of the trial (unique sequence numbers from 1), before the trial's clock starts: while it runs the sender only writes headers, copies payloads and tags and sends, the same work for every function";

pub const SIZE_DEFINITION: &str =
    "UDP payload bytes: 12-byte header (SPI, sequence number) + payload + tag; IP/UDP/Ethernet headers not counted";

#[derive(Debug, Clone, Serialize)]
pub struct NetDocument {
    pub schema: &'static str,
    pub host: Host,
    pub config: NetConfigReport,
    pub results: Vec<NetResult>,
    /// True while the run is going on or when Ctrl-C ended it: the file holds what finished.
    pub partial: bool,
}

/// 2: `size` became a number (null for a size model, named in `size_model`), as in `run`'s results.
/// 3: rates are over the trial (not first-to-last send); `limited_by`, `zero_loss_pps`, each side's
/// CPU per packet and system calls, `batch`, `gso` and `gro`; the CSV gained those columns.
/// 4: the sender prepares every tag before the trial (`config.sender_prepares`; each trial's
/// `prepared_packets` and `prepare_s`); GSO and GRO on by default (`config.offloads` says which are
/// on and why); an unthrottled trial ends when its prepared packets run out; each trial's
/// `receiver_handle_ns_per_packet` (the CSV's column of that name).
pub const SCHEMA: &str = "macbench-net/4";

/// `net --json`'s format.
pub struct NetJson;

impl crate::stdio::Exporter<NetDocument> for NetJson {
    fn serialize(&self, doc: &NetDocument) -> Result<Vec<u8>, String> {
        crate::stdio::pretty_json(doc)
    }
}

/// `net --csv`'s format: one row per result.
pub struct NetCsv;

impl crate::stdio::Exporter<NetDocument> for NetCsv {
    fn serialize(&self, doc: &NetDocument) -> Result<Vec<u8>, String> {
        to_csv(doc)
    }
}

pub const CSV_HEADER: &[&str] = &[
    "function",
    "algorithm",
    "backend",
    "accel",
    "baseline",
    "size",
    "size_model",
    "mean_size_bytes",
    "tag_len",
    "mode",
    "pps",
    "mbps",
    "loss",
    "sender_cpu",
    "receiver_cpu",
    "sender_cpu_ns_per_packet",
    "receiver_cpu_ns_per_packet",
    "receiver_handle_ns_per_packet",
    "limited_by",
    "zero_loss_pps",
    "pps_vs_null",
    "max_rate_pps",
    "limit",
    "sent",
    "delivered",
    "forged",
    "truncated",
    "replayed",
    "too_old",
    "unknown_spi",
    "trials",
    "warnings",
];

/// One row per result.
fn to_csv(doc: &NetDocument) -> Result<Vec<u8>, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_HEADER).map_err(|e| e.to_string())?;
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for r in &doc.results {
        let t = r.throughput.as_ref();
        let counts = t.map(|t| t.receiver).unwrap_or_default();
        let limit = r
            .limit
            .and_then(|l| serde_json::to_value(l).ok())
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        w.write_record([
            r.function.clone(),
            r.algorithm.clone(),
            r.backend.clone(),
            r.accel.clone(),
            r.baseline.to_string(),
            r.size.map(|n| n.to_string()).unwrap_or_default(),
            r.size_model.clone().unwrap_or_default(),
            format!("{}", r.mean_size_bytes),
            r.tag_len.to_string(),
            r.mode.to_string(),
            opt(t.map(|t| t.achieved_pps)),
            opt(t.map(|t| t.delivered_mbps)),
            opt(t.map(|t| t.loss)),
            opt(t.and_then(|t| t.sender_cpu)),
            opt(t.and_then(|t| t.receiver_cpu)),
            opt(t.and_then(|t| t.sender_cpu_ns_per_packet)),
            opt(t.and_then(|t| t.receiver_cpu_ns_per_packet)),
            opt(t.and_then(|t| t.receiver_handle_ns_per_packet)),
            r.limited_by.name().to_string(),
            opt(r.zero_loss_pps),
            opt(r.pps_vs_null),
            opt(r.max_rate_pps),
            limit,
            t.map(|t| t.sent.to_string()).unwrap_or_default(),
            counts.delivered.to_string(),
            counts.forged.to_string(),
            counts.truncated.to_string(),
            counts.replayed.to_string(),
            counts.too_old.to_string(),
            counts.unknown_spi.to_string(),
            r.trials.len().to_string(),
            r.warnings.join("; "),
        ])
        .map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}

/// The terminal table: its columns are fixed up front because rows print as results arrive.
pub fn table(style: Style) -> Table {
    Table::new(style)
        .left("function")
        .min_width(30)
        .right("size")
        .min_width(6)
        .right("pps")
        .min_width(9)
        .right("Mbps")
        .min_width(9)
        .right("loss")
        .min_width(9)
        .right("tx cpu")
        .min_width(7)
        .right("rx cpu")
        .min_width(7)
        .right("tx ns/p")
        .min_width(8)
        .right("rx ns/p")
        .min_width(8)
        .left("limited by")
        .min_width(10)
        .right("vs null")
        .min_width(8)
        .right("trials")
        .min_width(7)
        .left("warnings")
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{:.0}%", x * 100.0))
        .unwrap_or_else(|| "-".to_string())
}

fn loss_text(loss: f64) -> String {
    if loss == 0.0 {
        "0".to_string()
    } else {
        format!("{:.4}%", loss * 100.0)
    }
}

/// One row of [`table`].
pub fn table_line(table: &Table, r: &NetResult) -> String {
    let ns = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.0}"));
    let (pps, mbps, loss, tx, rx, tx_ns, rx_ns) = match &r.throughput {
        Some(t) => (
            // A sender-limited rate is only a lower bound on the receiver's zero-loss rate.
            if r.limited_by == LimitedBy::Sender {
                format!("≥{:.0}", t.achieved_pps)
            } else {
                format!("{:.0}", t.achieved_pps)
            },
            format!("{:.1}", t.delivered_mbps),
            loss_text(t.loss),
            pct(t.sender_cpu),
            pct(t.receiver_cpu),
            ns(t.sender_cpu_ns_per_packet),
            ns(t.receiver_cpu_ns_per_packet),
        ),
        None => {
            let none = || "-".to_string();
            (
                "none".to_string(),
                none(),
                none(),
                none(),
                none(),
                none(),
                none(),
            )
        }
    };
    let vs_null = if r.baseline {
        "base".to_string()
    } else {
        r.pps_vs_null
            .map(|v| format!("{:.2}×", v))
            .unwrap_or_else(|| "-".to_string())
    };
    table.row(&[
        r.function.clone(),
        r.size
            .map(|n| n.to_string())
            .or_else(|| r.size_model.clone())
            .unwrap_or_default(),
        pps,
        mbps,
        loss,
        tx,
        rx,
        tx_ns,
        rx_ns,
        r.limited_by.name().to_string(),
        vs_null,
        r.trials.len().to_string(),
        r.warnings.join("; "),
    ])
}
