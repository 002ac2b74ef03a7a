//! The sending side: build packets (header, payload from a pool, tag), send them at an offered rate,
//! and optionally mix in bad packets the receiver must reject.
//!
//! The sender must be cheaper per packet than the receiver, or the receiver is never pushed to loss
//! and no zero-loss rate is measured. So packets are built in place in slots allocated once per trial
//! ([`super::batch_io::Slots`]), a whole pacing step at a time and *ahead* of its due time (tags
//! computed while the pacer would otherwise wait), and a step goes out in as few system calls as
//! `--batch` (and `--gso`) allow.
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

/// Builds packets for one security association.
pub struct PacketBuilder {
    sa: Sa,
    mac: Box<dyn KeyedMac>,
    /// Length of the tag the function computes before truncation to `sa.tag_len`.
    full_tag_len: usize,
    nonce: Vec<u8>,
    pool: Arc<Vec<u8>>,
    scratch: [u8; crate::mac::MAX_TAG_LEN],
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
        if !self.nonce.is_empty() {
            nonce_for(seq, &mut self.nonce);
        }
        let full = &mut self.scratch[..self.full_tag_len];
        full.fill(0);
        self.mac.tag_into(&self.nonce, &out[..covered], full)?;
        out[covered..len].copy_from_slice(&full[..self.sa.tag_len]);
        Ok(len)
    }
}

/// What to send in one trial.
pub struct SendPlan<'a> {
    /// Packets per second; `None`: as fast as possible.
    pub rate: Option<f64>,
    pub duration: Duration,
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
    match plan.rate {
        Some(r) if r > 0.0 => {
            let total = (r * plan.duration.as_secs_f64()).ceil().max(1.0) as u64;
            let step = ((r * STEP_SPAN_NS / 1e9).round() as u64).clamp(1, cap);
            (total, step, step as f64 * 1e9 / r)
        }
        _ => (u64::MAX, cap, 0.0),
    }
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

/// The packet source of a trial: sequence numbers, sizes cycled through, bad packets mixed in.
struct Source<'a> {
    builder: &'a mut PacketBuilder,
    injector: BadInjector,
    inject: bool,
    sizes: &'a [u32],
    size_index: usize,
    seq: u64,
}

impl Source<'_> {
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
/// Each step is built (tags computed, packets written in place) *before* waiting for its due time,
/// so the MAC's work is done while the pacer would otherwise spin, and the step then goes out in
/// `plan.batch`-sized system calls.
pub fn send_loop(
    socket: &UdpSocket,
    builder: &mut PacketBuilder,
    plan: &SendPlan<'_>,
) -> Result<SendReport, Refused> {
    let mut report = SendReport {
        target_pps: plan.rate,
        ..SendReport::default()
    };
    let sizes: &[u32] = if plan.sizes.is_empty() {
        &[64]
    } else {
        plan.sizes
    };
    let stride = sizes.iter().map(|&s| s as usize).max().unwrap_or(64);
    let stride = stride.clamp(builder.sa().min_len(), MAX_PACKET_LEN);
    let duration_ns = plan.duration.as_nanos().min(u64::MAX as u128) as u64;
    let (total, step_len, period_ns) = pacing(plan);
    // A bad packet may follow each genuine one.
    let mut step = Step {
        slots: Slots::new(2 * step_len as usize, stride),
        kinds: Vec::with_capacity(2 * step_len as usize),
        refused: Vec::new(),
    };
    let mut source = Source {
        builder,
        injector: BadInjector::new(plan),
        inject: plan.inject_bad_per_1000 > 0,
        sizes,
        size_index: 0,
        seq: 0,
    };
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
    report.trial_ns = if cancelled {
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
}
