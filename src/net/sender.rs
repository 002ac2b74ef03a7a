//! The sending side: build packets (header, payload from a pool, tag), send them at an offered rate,
//! and optionally mix in bad packets the receiver must reject.
//!
//! The sender must be cheaper per packet than the receiver, or the receiver is never pushed to loss
//! and no zero-loss rate is measured. On two cores that is only possible if the sender does not
//! compute the MAC the receiver verifies while the trial runs: so every tag of a trial is computed
//! before its clock starts ([`prepare`]), and the sender's per-packet work is then the null
//! function's — write the header, copy payload and tag, send. Packets are written in place in slots
//! allocated once per trial ([`super::batch_io::Slots`]), a whole pacing step at a time and *ahead*
//! of its due time, and a step goes out in as few system calls as `--batch` and UDP GSO allow.
//!
//! Pacing is by steps + sleep/spin: step `k` is due at `start + k·b/rate`. Far from the due time the
//! thread sleeps (cheap, but the kernel wakes it up to ~60 µs late), the last stretch it spins. When
//! it falls behind it sends at once without bursting to catch up beyond one step, so the *achieved*
//! offered rate (packets sent / the trial's time) can be lower than asked; it is measured and reported
//! next to the target. Spinning shows up as CPU time, so the time spent spinning is measured and
//! reported apart from the sender's work.

use super::batch_io::{BatchSender, Slots};
use super::wire::{nonce_for, Sa, MAX_PACKET_LEN};
use crate::mac::{KeyedMac, Refused};
use crate::system::clock;
use serde::Serialize;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A size source: one fixed size, or a size model's pre-drawn sequence.
#[derive(Debug, Clone)]
pub struct SizeSpec {
    /// `64`, or the model's name.
    pub label: String,
    /// The fixed size in bytes; `None` for a size model.
    pub bytes: Option<u32>,
    pub sequence: Arc<Vec<u32>>,
    pub mean_bytes: f64,
}

/// Bytes in the payload pool: larger than L2, so payloads are not all cache-hot (Waters).
pub const POOL_LEN: usize = 4 << 20;

/// Random payload bytes, reproducible from `seed`.
pub fn payload_pool(seed: u64) -> Vec<u8> {
    use rand::{RngCore, SeedableRng};
    let mut pool = vec![0u8; POOL_LEN + MAX_PACKET_LEN];
    rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x6e65_7470_6f6f_6c00).fill_bytes(&mut pool);
    pool
}

/// Kinds of bad packet `--inject-bad` sends, in the order it cycles through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadKind {
    /// A fresh sequence number with one tag bit flipped.
    Forged,
    /// Cut below header + tag.
    Truncated,
    /// A byte-for-byte copy of the last genuine packet.
    Replayed,
    /// A copy of the first genuine packet, re-sent once the window has moved past it.
    Stale,
}

const BAD_CYCLE: [BadKind; 4] = [
    BadKind::Forged,
    BadKind::Truncated,
    BadKind::Replayed,
    BadKind::Stale,
];

/// Bad packets sent, by the receiver counter each should land in (assuming genuine packets arrive in
/// order and none is lost, as on loopback at a rate the receiver keeps up with).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct InjectedCounts {
    pub forged: u64,
    pub truncated: u64,
    pub replayed: u64,
    pub too_old: u64,
}

impl InjectedCounts {
    pub fn total(&self) -> u64 {
        self.forged + self.truncated + self.replayed + self.too_old
    }
}

/// What the sender did in one trial.
#[derive(Debug, Clone, Copy, Default, Serialize, serde::Deserialize)]
pub struct SendReport {
    /// Rate asked for (packets/s); `None`: unthrottled.
    pub target_pps: Option<f64>,
    /// Genuine packets handed to the socket (the offered load; send errors included).
    pub sent: u64,
    /// UDP payload bytes of those packets.
    pub sent_bytes: u64,
    /// Sends the kernel refused (ENOBUFS, ECONNREFUSED, …): offered but lost at the sender.
    pub send_errors: u64,
    pub injected: InjectedCounts,
    /// Wall time from the first send to the end of the last.
    pub wall_ns: u64,
    /// Wall time of the trial: its duration, or the sending time when that ran over (or was cut
    /// short by cancel). Rates are over this.
    #[serde(default)]
    pub trial_ns: u64,
    /// Send system calls made (one per datagram unbatched; fewer with `--batch`).
    #[serde(default)]
    pub calls: u64,
    pub cpu_ns: u64,
    /// Thread CPU time spent spinning for the pacer (CPU time that is not the sender's work).
    pub spin_ns: u64,
    /// Sequence numbers whose tags were computed before the trial's clock started ([`prepare`]).
    #[serde(default)]
    pub prepared: u64,
    /// Wall time the preparation took (not part of the trial).
    #[serde(default)]
    pub prepare_ns: u64,
}

impl SendReport {
    /// Achieved offered rate: genuine packets per second of the trial.
    pub fn achieved_pps(&self) -> f64 {
        if self.trial_ns == 0 {
            0.0
        } else {
            self.sent as f64 * 1e9 / self.trial_ns as f64
        }
    }

    /// Datagrams handed to the socket: genuine ones and the bad ones the kernel took.
    pub fn datagrams(&self) -> u64 {
        self.sent + self.injected.total()
    }

    /// Sender thread CPU time per datagram, pacing spin excluded (nanoseconds): its headroom, to set
    /// beside the receiver's. On loopback it includes the kernel's delivery into the receiving socket,
    /// which runs in the sending call.
    pub fn cpu_ns_per_datagram(&self) -> Option<f64> {
        (self.datagrams() > 0)
            .then(|| self.cpu_ns.saturating_sub(self.spin_ns) as f64 / self.datagrams() as f64)
    }

    /// Thread CPU / wall, pacing spin excluded.
    pub fn cpu_utilisation(&self) -> Option<f64> {
        (self.wall_ns > 0)
            .then(|| self.cpu_ns.saturating_sub(self.spin_ns) as f64 / self.wall_ns as f64)
    }
}

/// Where [`PacketBuilder::build`] takes a packet's tag from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagSource {
    /// Compute it now (tests, and a builder never prepared).
    Compute,
    /// Compute it now and keep it in the builder's book ([`prepare`]).
    Record,
    /// Copy it from the book: no MAC work while the trial's clock runs.
    Replay,
}

/// Builds packets for one security association.
pub struct PacketBuilder {
    sa: Sa,
    mac: Box<dyn KeyedMac>,
    /// Length of the tag the function computes before truncation to `sa.tag_len`.
    full_tag_len: usize,
    nonce: Vec<u8>,
    pool: Arc<Vec<u8>>,
    scratch: [u8; crate::mac::MAX_TAG_LEN],
    source: TagSource,
    /// The tag of sequence number `s` at `(s - 1) * sa.tag_len`: sequence numbers of a trial start at
    /// 1 and every packet built takes the next one, so the book is indexed by them.
    book: Vec<u8>,
    /// Wall time the last [`prepare`] took.
    prepare_ns: u64,
}

impl PacketBuilder {
    /// `full_tag_len` ≥ `sa.tag_len` and ≤ `MAX_TAG_LEN`; `pool` at least `MAX_PACKET_LEN` long.
    pub fn new(
        sa: Sa,
        mac: Box<dyn KeyedMac>,
        full_tag_len: usize,
        nonce_len: usize,
        pool: Arc<Vec<u8>>,
    ) -> PacketBuilder {
        PacketBuilder {
            sa,
            mac,
            full_tag_len: full_tag_len.clamp(sa.tag_len, crate::mac::MAX_TAG_LEN),
            nonce: vec![0; nonce_len],
            pool,
            scratch: [0; crate::mac::MAX_TAG_LEN],
            source: TagSource::Compute,
            book: Vec::new(),
            prepare_ns: 0,
        }
    }

    pub fn sa(&self) -> Sa {
        self.sa
    }

    /// Write a complete `len`-byte packet with sequence number `seq` into `out[..len]`.
    /// `len` is clamped to `sa.min_len()..=min(out.len(), MAX_PACKET_LEN)`; returns the length used.
    pub fn build(&mut self, seq: u64, len: usize, out: &mut [u8]) -> Result<usize, Refused> {
        let len = len
            .max(self.sa.min_len())
            .min(out.len().min(MAX_PACKET_LEN));
        // Spread payload offsets over the pool: consecutive packets read different cache lines.
        let room = self.pool.len().saturating_sub(MAX_PACKET_LEN).max(1) as u64;
        let offset = (seq.wrapping_mul(2_654_435_761) % room) as usize;
        let covered = self.sa.write_header(seq, &self.pool[offset..], len, out);
        let tag_len = self.sa.tag_len;
        if self.source == TagSource::Replay {
            let at = (seq as usize).wrapping_sub(1).wrapping_mul(tag_len);
            let tag = self.book.get(at..at + tag_len).ok_or_else(|| Refused {
                what: format!("packet {seq}"),
                reason: format!(
                    "only {} packets' tags were prepared before the trial",
                    self.book.len() / tag_len
                ),
            })?;
            out[covered..len].copy_from_slice(tag);
            return Ok(len);
        }
        if !self.nonce.is_empty() {
            nonce_for(seq, &mut self.nonce);
        }
        let full = &mut self.scratch[..self.full_tag_len];
        full.fill(0);
        self.mac.tag_into(&self.nonce, &out[..covered], full)?;
        out[covered..len].copy_from_slice(&full[..tag_len]);
        if self.source == TagSource::Record {
            // Sequence numbers are consecutive from 1; any other order would file tags under the
            // wrong packets.
            if self.book.len() != (seq as usize).wrapping_sub(1).wrapping_mul(tag_len) {
                return Err(Refused {
                    what: format!("packet {seq}"),
                    reason: "tags are prepared for consecutive sequence numbers only".to_string(),
                });
            }
            self.book.extend_from_slice(&out[covered..len]);
        }
        Ok(len)
    }

    /// Packets whose tags are in the book.
    pub fn prepared(&self) -> u64 {
        (self.book.len() / self.sa.tag_len.max(1)) as u64
    }
}

/// What to send in one trial.
pub struct SendPlan<'a> {
    /// Packets per second; `None`: as fast as possible.
    pub rate: Option<f64>,
    pub duration: Duration,
    /// Genuine packets prepared for the trial, the most it sends: `rate × duration`, or for an
    /// unthrottled trial the most the sender is expected to manage in `duration` (it stops early
    /// when they run out). See [`packets_for`].
    pub packets: u64,
    /// Packet sizes, cycled through (one entry for a fixed size).
    pub sizes: &'a [u32],
    /// Bad packets per 1000 genuine ones.
    pub inject_bad_per_1000: u32,
    /// Replay window of the receiver, so stale replays are sent only once they are really too old.
    pub replay_window: u64,
    /// Datagrams per system call (`--batch`; 1: one `send` per datagram).
    pub batch: usize,
    /// Send runs of equal-size datagrams as one UDP GSO message each (`--gso`); the socket must
    /// have been set up with [`super::batch_io::enable_gso`].
    pub gso: bool,
    /// Stop early when set (Ctrl-C).
    pub cancel: &'a AtomicBool,
}

/// Pacing granularity: one step of packets per this many nanoseconds of schedule at most.
const STEP_SPAN_NS: f64 = 50_000.0;
/// Fewest packets a step may hold when the rate allows (also the step of the unbatched path).
const MIN_STEP_CAP: u64 = 32;
/// Sleep only when the due time is further away than this; spin the rest.
const SLEEP_THRESHOLD_NS: u64 = 150_000;
const SLEEP_SLACK_NS: u64 = 80_000;

/// How a trial is paced: genuine packets in all, genuine packets per step, and nanoseconds between
/// step due times (`None` rate: unbounded, full steps, never waiting). A step is built ahead (tags
/// computed), then sent when due with as few system calls as the batch allows.
fn pacing(plan: &SendPlan<'_>) -> (u64, u64, f64) {
    let cap = (plan.batch as u64).max(MIN_STEP_CAP);
    let total = plan.packets.max(1);
    match plan.rate {
        Some(r) if r > 0.0 => {
            let step = ((r * STEP_SPAN_NS / 1e9).round() as u64).clamp(1, cap);
            (total, step, step as f64 * 1e9 / r)
        }
        _ => (total, cap, 0.0),
    }
}

/// Genuine packets a trial at `rate` (`None`: unthrottled, expected to reach at most
/// `unthrottled_pps`) sends in `duration`.
pub fn packets_for(rate: Option<f64>, unthrottled_pps: f64, duration: Duration) -> u64 {
    let pps = match rate {
        Some(r) if r > 0.0 => r,
        _ => unthrottled_pps,
    };
    (pps * duration.as_secs_f64())
        .ceil()
        .clamp(1.0, u64::MAX as f64) as u64
}

/// Nanoseconds one tag of a `size`-byte datagram costs `f` on this core, from a short burst of tags
/// (a few milliseconds): what preparing a trial's tags will take, said in the plan and bounded by
/// [`MAX_PREPARATION_MULTIPLE`]. `None` when the function cannot be keyed or tag here.
pub fn tag_ns(f: &crate::mac::Function, size: usize, tag_len: usize) -> Option<f64> {
    let algorithm = f.algorithm;
    let key = vec![0x5a; algorithm.default_key_len];
    let params = crate::mac::KeyParams::default().for_tag_len(algorithm, tag_len);
    let mut mac = f.with_key(&key, params).ok()?;
    let nonce = vec![0u8; algorithm.nonce_len.unwrap_or(0)];
    let msg = vec![0u8; size];
    let mut tag = vec![0u8; algorithm.computed_tag_len(tag_len)];
    // Three bursts of at least 64 tags and up to 3 ms each, the fastest taken: the first pays for
    // cold caches and a core clocking up (it read 2.5 times the sustained cost), and a preparation
    // of millions of tags runs at the sustained one.
    let mut fastest = f64::INFINITY;
    for _ in 0..3 {
        let (start, mut tags) = (clock::wall_ns(), 0u64);
        while tags < 64 || (clock::wall_ns() - start < 3_000_000 && tags < 100_000) {
            mac.tag_into(&nonce, &msg, &mut tag).ok()?;
            tags += 1;
        }
        fastest = fastest.min((clock::wall_ns() - start) as f64 / tags as f64);
    }
    Some(fastest)
}

/// The most a trial's preparation may take, as a multiple of the trial (and at least
/// [`MIN_PREPARATION_BOUND_S`]): past it, `--rate × --duration` asks for more tags than one core
/// computes in a sensible wait (`--rate 1e9 --duration 700ms`: 7·10⁸ tags, minutes before the trial).
pub const MAX_PREPARATION_MULTIPLE: f64 = 10.0;
/// Preparations shorter than this are never refused, whatever the trial's length.
pub const MIN_PREPARATION_BOUND_S: f64 = 30.0;

/// Share of the memory the system has available that prepared tags may take.
const PREPARED_MEMORY_SHARE: f64 = 0.5;

/// What [`prepare`] did before a trial's clock started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Prepared {
    /// Sequence numbers whose tags were computed (genuine packets and the forged ones among them).
    pub packets: u64,
    pub bytes: u64,
    /// Wall time the preparation took.
    pub ns: u64,
}

/// Why a trial could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The tags would not fit: bytes needed, bytes available.
    #[error(
        "a {duration_s} s trial at {pps:.0} packets/s prepares {packets} tags of {tag_len} bytes \
         before its clock starts, {need}, more than half the {have} of memory available; give a \
         shorter --duration"
    )]
    Memory {
        duration_s: f64,
        pps: f64,
        packets: u64,
        tag_len: usize,
        need: String,
        have: String,
    },
    #[error("{0}")]
    Refused(#[from] Refused),
    /// The cancel flag was set while the tags were computed (Ctrl-C, SIGTERM, a closed standard
    /// output): preparing 10⁸ tags used to go on for most of a minute before the signal took effect.
    #[error("cancelled while preparing the trial's tags")]
    Cancelled,
}

/// Bytes the tags of a trial of `packets` genuine packets take, or the error that says they would
/// not fit in the memory available. Called by [`prepare`], and before a run starts with the largest
/// trial it will prepare, so a run that cannot be prepared is refused before anything runs.
pub fn check_memory(
    packets: u64,
    duration: Duration,
    tag_len: usize,
    inject_bad_per_1000: u32,
) -> Result<u64, PrepareError> {
    // A forged packet takes a sequence number of its own: at most one bad packet per genuine one.
    let bad = (packets as u128 * u128::from(inject_bad_per_1000)).div_ceil(1000) as u64;
    let seqs = packets.saturating_add(bad);
    let tag_len = tag_len.max(1);
    let need = seqs.saturating_mul(tag_len as u64);
    match crate::engine::limits::SystemLimits::read().memory_available {
        Some(have) if need as f64 > PREPARED_MEMORY_SHARE * have as f64 => {
            Err(PrepareError::Memory {
                duration_s: duration.as_secs_f64(),
                pps: packets as f64 / duration.as_secs_f64().max(1e-9),
                packets: seqs,
                tag_len,
                need: mib(need),
                have: mib(have),
            })
        }
        _ => Ok(need),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", (bytes as f64 / (1u64 << 20) as f64).ceil())
}

/// Compute every tag of a trial before its clock starts, so that while it runs the sender only
/// writes headers, copies payloads and tags and hands datagrams to the kernel: the same work for
/// every function, the null one included, and the MAC's cost shows up on the receiver alone.
///
/// The packets are generated by the very code that sends them (sequence numbers, sizes, the bad
/// packets of `--inject-bad`, forged ones taking sequence numbers of their own), with the builder
/// keeping each tag under its sequence number; [`send_loop`] then generates the same packets again
/// and takes the tags from the book. Only tags are kept, not whole packets: header and payload cost
/// every function the same, and a tag is 16 bytes where a packet may be 1518.
pub fn prepare(builder: &mut PacketBuilder, plan: &SendPlan<'_>) -> Result<Prepared, PrepareError> {
    let t0 = clock::wall_ns();
    let (total, step_len, _) = pacing(plan);
    let tag_len = builder.sa().tag_len;
    let need = check_memory(total, plan.duration, tag_len, plan.inject_bad_per_1000)?;
    builder.source = TagSource::Record;
    builder.book = Vec::with_capacity(need as usize);
    let sizes = sizes_of(plan);
    let mut step = Step::new(step_len, stride_of(builder, sizes));
    let mut source = Source::new(builder, plan, sizes);
    let mut left = total;
    let filled = loop {
        if left == 0 {
            break Ok(());
        }
        // Between steps, as the send loop does: a step is at most a few thousand tags.
        if plan.cancel.load(Ordering::Relaxed) {
            break Err(PrepareError::Cancelled);
        }
        let n = left.min(step_len);
        if let Err(e) = source.fill(&mut step, n) {
            break Err(e.into());
        }
        left -= n;
    };
    builder.source = TagSource::Replay;
    filled?;
    builder.prepare_ns = clock::wall_ns().saturating_sub(t0);
    Ok(Prepared {
        packets: builder.prepared(),
        bytes: builder.book.len() as u64,
        ns: builder.prepare_ns,
    })
}

/// Wait until the wall clock reaches `due`: sleep while it is far, spin the last stretch (the spin is
/// added to `report.spin_ns`, as it is CPU time that is not the sender's work).
#[inline]
fn wait_until(due: u64, report: &mut SendReport) {
    let mut now = clock::wall_ns();
    if now + SLEEP_THRESHOLD_NS < due {
        std::thread::sleep(Duration::from_nanos(due - now - SLEEP_SLACK_NS));
        now = clock::wall_ns();
    }
    if now < due {
        // The spin's *CPU* time, not its wall time: on a busy machine the thread may be descheduled
        // mid-spin, and wall time would then exceed the CPU time it is subtracted from.
        let spin_cpu_start = clock::thread_cpu_ns();
        while now < due {
            std::hint::spin_loop();
            now = clock::wall_ns();
        }
        report.spin_ns += clock::thread_cpu_ns().saturating_sub(spin_cpu_start);
    }
}

/// What a datagram of a step is, so its fate is counted where it belongs once the kernel took it
/// or refused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    Genuine,
    /// A bad packet, by the receiver counter it should land in.
    Bad(BadCounter),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BadCounter {
    Forged,
    Truncated,
    Replayed,
    TooOld,
}

impl InjectedCounts {
    fn count(&mut self, counter: BadCounter) {
        match counter {
            BadCounter::Forged => self.forged += 1,
            BadCounter::Truncated => self.truncated += 1,
            BadCounter::Replayed => self.replayed += 1,
            BadCounter::TooOld => self.too_old += 1,
        }
    }
}

/// `--inject-bad`: after each genuine packet, the bad packets its share of credit pays for, cycling
/// through [`BAD_CYCLE`]. At most 1000 per 1000, so at most one bad packet follows each genuine one.
struct BadInjector {
    per_1000: u32,
    /// The receiver's replay window: a copy of the first packet is counted as too old only past it.
    replay_window: u64,
    credit: u64,
    index: usize,
    /// A copy of the trial's first genuine packet, for the stale replays.
    first_packet: Vec<u8>,
}

impl BadInjector {
    fn new(plan: &SendPlan<'_>) -> BadInjector {
        BadInjector {
            per_1000: plan.inject_bad_per_1000,
            replay_window: plan.replay_window,
            credit: 0,
            index: 0,
            first_packet: Vec::new(),
        }
    }

    /// Append to `step` the bad packets due after datagram `genuine`, the packet just built with
    /// sequence number `*seq` (a forged packet takes the next number), recording each one's kind.
    fn after(
        &mut self,
        step: &mut Step,
        builder: &mut PacketBuilder,
        seq: &mut u64,
        genuine: usize,
    ) -> Result<(), Refused> {
        let last_good_seq = *seq;
        let genuine_len = step.slots.get(genuine).len();
        if self.first_packet.is_empty() {
            self.first_packet.extend_from_slice(step.slots.get(genuine));
        }
        self.credit += u64::from(self.per_1000);
        while self.credit >= 1000 && !step.slots.is_full() {
            self.credit -= 1000;
            let kind = BAD_CYCLE[self.index % BAD_CYCLE.len()];
            self.index += 1;
            let counter = match kind {
                BadKind::Forged => {
                    *seq += 1;
                    let out = step.slots.next_free();
                    let n = builder.build(*seq, genuine_len, out)?;
                    out[n - 1] ^= 0x01;
                    step.slots.commit(n);
                    BadCounter::Forged
                }
                BadKind::Truncated => {
                    let cut = (*seq as usize) % builder.sa().min_len();
                    step.slots.push_prefix_of(genuine, cut);
                    BadCounter::Truncated
                }
                BadKind::Replayed => {
                    step.slots.push_prefix_of(genuine, genuine_len);
                    BadCounter::Replayed
                }
                BadKind::Stale => {
                    step.slots.push_copy(&self.first_packet);
                    // Seq 1 is too old once the window's top has moved `window` past it.
                    if last_good_seq > self.replay_window {
                        BadCounter::TooOld
                    } else {
                        BadCounter::Replayed
                    }
                }
            };
            step.kinds.push(Sent::Bad(counter));
        }
        Ok(())
    }
}

/// One pacing step's datagrams, built ahead in preallocated slots, and what each one is.
struct Step {
    slots: Slots,
    kinds: Vec<Sent>,
    /// Indices of the datagrams the kernel refused in the last send.
    refused: Vec<usize>,
}

impl Step {
    /// Room for `genuine` packets and a bad one after each, in slots of `stride` bytes.
    fn new(genuine: u64, stride: usize) -> Step {
        Step {
            slots: Slots::new(2 * genuine as usize, stride),
            kinds: Vec::with_capacity(2 * genuine as usize),
            refused: Vec::new(),
        }
    }
}

/// The sizes a plan cycles through (64 bytes if it names none).
fn sizes_of<'a>(plan: &SendPlan<'a>) -> &'a [u32] {
    if plan.sizes.is_empty() {
        &[64]
    } else {
        plan.sizes
    }
}

/// Bytes per slot: the largest packet the sizes make.
fn stride_of(builder: &PacketBuilder, sizes: &[u32]) -> usize {
    let stride = sizes.iter().map(|&s| s as usize).max().unwrap_or(64);
    stride.clamp(builder.sa().min_len(), MAX_PACKET_LEN)
}

/// The packet source of a trial: sequence numbers, sizes cycled through, bad packets mixed in.
struct Source<'a> {
    builder: &'a mut PacketBuilder,
    injector: BadInjector,
    inject: bool,
    sizes: &'a [u32],
    size_index: usize,
    seq: u64,
}

impl<'a> Source<'a> {
    /// The source of a trial from its first packet (sequence number 1).
    fn new(builder: &'a mut PacketBuilder, plan: &SendPlan<'_>, sizes: &'a [u32]) -> Source<'a> {
        Source {
            builder,
            injector: BadInjector::new(plan),
            inject: plan.inject_bad_per_1000 > 0,
            sizes,
            size_index: 0,
            seq: 0,
        }
    }

    /// Build `genuine` packets (and the bad ones that follow them) into `step`, tags computed.
    fn fill(&mut self, step: &mut Step, genuine: u64) -> Result<(), Refused> {
        step.slots.clear();
        step.kinds.clear();
        for _ in 0..genuine {
            self.seq += 1;
            let len = self.sizes[self.size_index] as usize;
            self.size_index = (self.size_index + 1) % self.sizes.len();
            let n = self.builder.build(self.seq, len, step.slots.next_free())?;
            step.slots.commit(n);
            step.kinds.push(Sent::Genuine);
            if self.inject {
                let i = step.slots.len() - 1;
                self.injector.after(step, self.builder, &mut self.seq, i)?;
            }
        }
        Ok(())
    }
}

/// Hand a built step to the kernel and count each datagram's fate in `report`.
fn send_step(
    socket: &UdpSocket,
    sender: &mut BatchSender,
    step: &mut Step,
    report: &mut SendReport,
) {
    let Step {
        slots,
        kinds,
        refused,
    } = step;
    refused.clear();
    sender.send(socket, slots, |i| refused.push(i));
    // `refused` is in increasing order: the sender goes through the datagrams in order.
    let mut next_refused = refused.iter().peekable();
    for (i, kind) in kinds.iter().enumerate() {
        let ok = next_refused.next_if_eq(&&i).is_none();
        match *kind {
            Sent::Genuine => {
                report.sent += 1;
                report.sent_bytes += slots.get(i).len() as u64;
                report.send_errors += u64::from(!ok);
            }
            Sent::Bad(counter) if ok => report.injected.count(counter),
            Sent::Bad(_) => {}
        }
    }
}

/// Send genuine packets (and injected bad ones) on a connected socket according to `plan`. A packet
/// whose tag the library refuses ends the trial with the library's reason: no packet goes out with a
/// tag that was not computed.
///
/// The tags are computed before the clock starts ([`prepare`], done here unless the caller did it
/// first, as the trials do before they start the receiver). Each step is written in place (tags
/// copied from the book) *before* waiting for its due time, and then goes out in `plan.batch`-sized
/// system calls.
pub fn send_loop(
    socket: &UdpSocket,
    builder: &mut PacketBuilder,
    plan: &SendPlan<'_>,
) -> Result<SendReport, PrepareError> {
    if builder.source != TagSource::Replay {
        prepare(builder, plan)?;
    }
    let mut report = SendReport {
        target_pps: plan.rate,
        prepared: builder.prepared(),
        prepare_ns: builder.prepare_ns,
        ..SendReport::default()
    };
    let sizes = sizes_of(plan);
    let duration_ns = plan.duration.as_nanos().min(u64::MAX as u128) as u64;
    let (total, step_len, period_ns) = pacing(plan);
    let mut step = Step::new(step_len, stride_of(builder, sizes));
    let mut source = Source::new(builder, plan, sizes);
    let mut sender = BatchSender::new(plan.batch, plan.gso);
    // A paced trial may run a little over its duration when the sender falls behind; never much.
    let deadline_extra = if plan.rate.is_some() {
        duration_ns / 20 + 1_000_000
    } else {
        0
    };
    let cpu0 = clock::thread_cpu_ns();
    source.fill(&mut step, step_len.min(total))?;
    let start = clock::wall_ns();
    let deadline = start + duration_ns + deadline_extra;
    let mut step_no: u64 = 0;
    let (end, cancelled) = loop {
        if plan.rate.is_some() {
            wait_until(start + (step_no as f64 * period_ns) as u64, &mut report);
        }
        step_no += 1;
        send_step(socket, &mut sender, &mut step, &mut report);
        let end = clock::wall_ns();
        let cancelled = plan.cancel.load(Ordering::Relaxed);
        if report.sent >= total || end >= deadline || cancelled {
            break (end, cancelled);
        }
        source.fill(&mut step, step_len.min(total - report.sent))?;
    };
    report.wall_ns = end.saturating_sub(start);
    // The rate is over the trial, not first-to-last send: a paced trial's last step goes out a
    // period before the trial ends, and a trial of one packet has no first-to-last span at all.
    // An unthrottled trial that sent every packet prepared for it ended then: its rate is over
    // the time it took.
    let ran_out = plan.rate.is_none() && report.sent >= total;
    report.trial_ns = if cancelled || ran_out {
        report.wall_ns
    } else {
        report.wall_ns.max(duration_ns)
    };
    report.calls = sender.calls;
    report.cpu_ns = clock::thread_cpu_ns().saturating_sub(cpu0);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::receiver::Receiver;

    fn function(name: &str) -> crate::mac::Function {
        crate::mac::functions()
            .into_iter()
            .find(|f| {
                f.algorithm.name == name && f.availability() == crate::mac::Availability::Available
            })
            .unwrap()
    }

    #[test]
    fn built_packets_verify_and_tampering_is_caught() {
        for (name, tag_len) in [
            ("hmac-sha256", 16),
            ("cmac-aes128", 12),
            ("gmac-aes128", 16),
            ("null", 16),
        ] {
            let f = function(name);
            let key = vec![7u8; f.algorithm.default_key_len];
            let sa = Sa { spi: 5, tag_len };
            let nonce_len = f.algorithm.nonce_len.unwrap_or(0);
            let pool = Arc::new(payload_pool(1));
            let full = if name == "null" {
                tag_len
            } else {
                f.algorithm.tag_len
            };
            let mut b = PacketBuilder::new(
                sa,
                f.with_key(&key, Default::default()).unwrap(),
                full,
                nonce_len,
                pool,
            );
            let mut rx = Receiver::new(
                sa,
                f.with_key(&key, Default::default()).unwrap(),
                nonce_len,
                64,
            );
            let mut buf = vec![0u8; 2048];
            for (seq, size) in [(1u64, 64usize), (2, 1518), (3, 10)] {
                let n = b.build(seq, size, &mut buf).unwrap();
                assert_eq!(n, size.max(12 + tag_len));
                assert!(rx.handle(&buf[..n]), "{name} seq {seq}");
                assert!(!rx.handle(&buf[..n]), "{name}: replay of {seq}");
            }
            let n = b.build(4, 100, &mut buf).unwrap();
            buf[n - tag_len] ^= 0x01;
            assert!(!rx.handle(&buf[..n]), "{name}: tag bit flipped");
            let mut forged = 1;
            if name != "null" {
                let n = b.build(5, 100, &mut buf).unwrap();
                buf[20] ^= 0x80;
                assert!(!rx.handle(&buf[..n]), "{name}: payload bit flipped");
                forged += 1;
            }
            assert_eq!(rx.counts.delivered, 3);
            assert_eq!(rx.counts.replayed, 3);
            assert_eq!(rx.counts.forged, forged, "{name}");
            assert_eq!(rx.counts.rejected(), 3 + forged);
        }
    }

    fn builder_and_receiver(name: &str, tag_len: usize) -> (PacketBuilder, Receiver) {
        let f = function(name);
        let key = vec![9u8; f.algorithm.default_key_len];
        let sa = Sa {
            spi: 0x4d42_0001,
            tag_len,
        };
        let nonce_len = f.algorithm.nonce_len.unwrap_or(0);
        let full = f.algorithm.computed_tag_len(tag_len);
        let pool = Arc::new(payload_pool(3));
        let mac = f.with_key(&key, Default::default()).unwrap();
        let builder = PacketBuilder::new(sa, mac, full, nonce_len, pool);
        let mac = f.with_key(&key, Default::default()).unwrap();
        (builder, Receiver::new(sa, mac, nonce_len, 64))
    }

    fn plan<'a>(sizes: &'a [u32], inject: u32, cancel: &'a AtomicBool) -> SendPlan<'a> {
        SendPlan {
            rate: Some(1000.0),
            duration: Duration::from_millis(500),
            packets: packets_for(Some(1000.0), 0.0, Duration::from_millis(500)),
            sizes,
            inject_bad_per_1000: inject,
            replay_window: 64,
            batch: 32,
            gso: false,
            cancel,
        }
    }

    /// Prepared packets are the packets the MAC would have built, byte for byte, bad ones included;
    /// a packet past the prepared ones is refused, not sent with a tag nobody computed.
    #[test]
    fn prepared_tags_rebuild_the_computed_packets_exactly() {
        for (name, tag_len, inject) in [("hmac-sha256", 16, 300), ("gmac-aes128", 12, 1000)] {
            let cancel = AtomicBool::new(false);
            let sizes = [64u32, 200, 1518];
            let plan = plan(&sizes, inject, &cancel);
            let (mut computing, _) = builder_and_receiver(name, tag_len);
            let (mut prepared, mut rx) = builder_and_receiver(name, tag_len);
            let p = prepare(&mut prepared, &plan).unwrap();
            assert_eq!(plan.packets, 500);
            // Forged packets take sequence numbers of their own: a quarter of the bad ones.
            assert!(p.packets > 500, "{name}: {}", p.packets);
            assert_eq!(p.bytes, p.packets * tag_len as u64);
            let (step_len, stride) = (pacing(&plan).1, stride_of(&computing, &sizes));
            let mut expected = Step::new(step_len, stride);
            let mut got = Step::new(step_len, stride);
            let mut from_mac = Source::new(&mut computing, &plan, &sizes);
            let mut from_book = Source::new(&mut prepared, &plan, &sizes);
            let mut bad = 0;
            for _ in 0..500 / step_len {
                from_mac.fill(&mut expected, step_len).unwrap();
                from_book.fill(&mut got, step_len).unwrap();
                assert_eq!(expected.kinds, got.kinds);
                for i in 0..got.slots.len() {
                    assert_eq!(
                        expected.slots.get(i),
                        got.slots.get(i),
                        "{name}: datagram {i}"
                    );
                    let delivered = rx.handle(got.slots.get(i));
                    assert_eq!(
                        delivered,
                        got.kinds[i] == Sent::Genuine,
                        "{name}: datagram {i}"
                    );
                    bad += usize::from(got.kinds[i] != Sent::Genuine);
                }
            }
            assert_eq!(rx.counts.delivered, 500, "{name}");
            assert_eq!(bad as u64, 500 * u64::from(inject) / 1000, "{name}");
            let mut out = vec![0u8; 2048];
            let e = prepared.build(p.packets + 1, 64, &mut out).unwrap_err();
            assert!(e.reason.contains("prepared"), "{e}");
        }
    }

    /// The tags of a trial that would take more than half the memory available are refused before
    /// any is computed, and the message says how much and what to change.
    #[test]
    fn a_trial_too_big_to_prepare_is_refused_with_its_size() {
        let cancel = AtomicBool::new(false);
        let sizes = [64u32];
        let mut plan = plan(&sizes, 0, &cancel);
        plan.duration = Duration::from_secs(86_400);
        plan.packets = u64::MAX / 64;
        let (mut b, _) = builder_and_receiver("null", 16);
        let e = prepare(&mut b, &plan).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, PrepareError::Memory { .. }), "{text}");
        assert!(
            text.contains("MiB") && text.contains("shorter --duration"),
            "{text}"
        );
        assert_eq!(b.prepared(), 0, "nothing computed");
    }

    /// Issue 47, H8: a cancel set while the tags are prepared ends the preparation at the next step,
    /// not after every tag of the trial (10⁸ of them at `--rate 1e9` took 45 s to honour Ctrl-C).
    #[test]
    fn a_cancel_during_preparation_stops_it_at_the_next_step() {
        let cancel = AtomicBool::new(true);
        let sizes = [64u32];
        let plan = plan(&sizes, 0, &cancel);
        let (mut b, _) = builder_and_receiver("hmac-sha256", 16);
        let e = prepare(&mut b, &plan).unwrap_err();
        assert!(matches!(e, PrepareError::Cancelled), "{e}");
        assert!(
            b.prepared() < plan.packets,
            "{} of {}",
            b.prepared(),
            plan.packets
        );
    }
}
