//! The receiving side: parse, anti-replay check, verify the tag in constant time, update the window,
//! count. A packet is *delivered* only when all of those passed; every other outcome has its own counter.
//!
//! The order is RFC 4303 §3.4.3's: the sequence number is checked against the window *before* the
//! (expensive) integrity check, so replays are rejected cheaply, but the window only moves *after* the
//! tag verified, so a forged packet with a far-ahead sequence number cannot shift the window and make
//! genuine packets look too old.

use super::batch_io::BatchReceiver;
use super::wire::{nonce_for, Sa, WireError};
use crate::mac::KeyedMac;
use crate::system::clock;
use serde::Serialize;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Anti-replay window sizes offered (`--replay-window`, the control channel's `replay_window`).
pub const WINDOW_SIZES: &[u64] = super::limits::REPLAY_WINDOWS;

/// Where a sequence number falls relative to the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqCheck {
    /// Not seen before and inside or ahead of the window: go on and verify.
    Fresh,
    /// Inside the window and already accepted.
    Replayed,
    /// Left of the window (or 0, which is never sent): cannot be told from a replay, so rejected.
    TooOld,
}

/// RFC 4303 §3.4.3 sliding window over 64-bit sequence numbers, 64 or 1024 packets wide.
///
/// `top` is the highest sequence number accepted so far; bit `i` of the bitmap says whether `top - i`
/// was accepted. The bitmap is a ring of 64-bit words indexed by sequence number, so advancing the
/// window clears only the words it passes over.
#[derive(Debug, Clone)]
pub struct ReplayWindow {
    size: u64,
    top: u64,
    bits: Vec<u64>,
}

impl ReplayWindow {
    /// `size` is rounded up to a multiple of 64 and capped at [`super::limits::MAX_REPLAY_WINDOW`]: callers
    /// check it with [`super::limits::check_replay_window`] first, and the cap only keeps an unchecked
    /// size from allocating a bitmap of `size / 8` bytes.
    pub fn new(size: u64) -> ReplayWindow {
        let size = size
            .clamp(64, super::limits::MAX_REPLAY_WINDOW)
            .div_ceil(64)
            * 64;
        ReplayWindow {
            size,
            top: 0,
            // One word more than the window: a window not aligned to 64 spans size/64 + 1 words.
            bits: vec![0; (size / 64 + 1) as usize],
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Highest sequence number accepted so far (0: none yet).
    pub fn top(&self) -> u64 {
        self.top
    }

    fn slot(&self, seq: u64) -> (usize, u64) {
        let word = ((seq / 64) % self.bits.len() as u64) as usize;
        (word, 1u64 << (seq % 64))
    }

    /// Check without changing anything.
    pub fn check(&self, seq: u64) -> SeqCheck {
        if seq == 0 {
            return SeqCheck::TooOld;
        }
        if seq > self.top {
            return SeqCheck::Fresh;
        }
        if self.top - seq >= self.size {
            return SeqCheck::TooOld;
        }
        let (word, bit) = self.slot(seq);
        if self.bits[word] & bit != 0 {
            SeqCheck::Replayed
        } else {
            SeqCheck::Fresh
        }
    }

    /// Record `seq` as accepted; call only after its tag verified and `check` said `Fresh`.
    pub fn accept(&mut self, seq: u64) {
        if seq > self.top {
            // Clear the words between the old top's word and the new one (all of them if it jumped a
            // whole window), so stale bits of sequence numbers that left the window don't linger.
            let words = self.bits.len() as u64;
            let old_word = self.top / 64;
            let new_word = seq / 64;
            let advance = (new_word - old_word).min(words);
            for k in 1..=advance {
                let w = ((new_word - advance + k) % words) as usize;
                self.bits[w] = 0;
            }
            self.top = seq;
        }
        let (word, bit) = self.slot(seq);
        self.bits[word] |= bit;
    }
}

/// What the receiver saw. `delivered` only ever counts packets that parsed, were fresh and verified.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReceiverCounts {
    /// Datagrams read from the socket, whatever they held.
    pub received: u64,
    pub delivered: u64,
    /// UDP payload bytes of delivered packets.
    pub delivered_bytes: u64,
    /// Parsed, fresh sequence number, tag did not verify.
    pub forged: u64,
    /// Shorter than header + tag.
    pub truncated: u64,
    /// Another SPI (e.g. a late packet of an earlier trial).
    pub unknown_spi: u64,
    /// Sequence number already accepted, inside the window.
    pub replayed: u64,
    /// Sequence number left of the window.
    pub too_old: u64,
}

impl ReceiverCounts {
    pub fn rejected(&self) -> u64 {
        self.forged + self.truncated + self.unknown_spi + self.replayed + self.too_old
    }
}

/// The per-packet logic, apart from sockets so it can be tested packet by packet.
pub struct Receiver {
    sa: Sa,
    mac: Box<dyn KeyedMac>,
    nonce: Vec<u8>,
    window: ReplayWindow,
    pub counts: ReceiverCounts,
    /// The library's reason when it refused to compute a tag: the trial then fails (a refusal is
    /// neither a forged packet nor a delivered one).
    pub refused: Option<crate::mac::Refused>,
}

impl Receiver {
    /// `nonce_len`: the algorithm's nonce length (0 when it takes none).
    pub fn new(sa: Sa, mac: Box<dyn KeyedMac>, nonce_len: usize, window: u64) -> Receiver {
        Receiver {
            sa,
            mac,
            nonce: vec![0; nonce_len],
            window: ReplayWindow::new(window),
            counts: ReceiverCounts::default(),
            refused: None,
        }
    }

    /// Handle one datagram; returns whether it was delivered.
    pub fn handle(&mut self, datagram: &[u8]) -> bool {
        self.counts.received += 1;
        let packet = match self.sa.parse(datagram) {
            Ok(p) => p,
            Err(WireError::Truncated { .. }) => {
                self.counts.truncated += 1;
                return false;
            }
            Err(WireError::UnknownSpi { .. }) => {
                self.counts.unknown_spi += 1;
                return false;
            }
        };
        match self.window.check(packet.seq) {
            SeqCheck::Fresh => {}
            SeqCheck::Replayed => {
                self.counts.replayed += 1;
                return false;
            }
            SeqCheck::TooOld => {
                self.counts.too_old += 1;
                return false;
            }
        }
        if !self.nonce.is_empty() {
            nonce_for(packet.seq, &mut self.nonce);
        }
        match self
            .mac
            .verify(&self.nonce, packet.authenticated, packet.tag)
        {
            Ok(true) => {}
            Ok(false) => {
                self.counts.forged += 1;
                return false;
            }
            Err(refused) => {
                self.refused.get_or_insert(refused);
                return false;
            }
        }
        self.window.accept(packet.seq);
        self.counts.delivered += 1;
        self.counts.delivered_bytes += datagram.len() as u64;
        true
    }
}

/// A receive loop's result: counts and the CPU it used while packets arrived.
#[derive(Debug, Clone, Copy, Default, Serialize, serde::Deserialize)]
pub struct ReceiveReport {
    pub counts: ReceiverCounts,
    /// Thread CPU time spent in the loop (blocked waiting costs none).
    pub cpu_ns: u64,
    /// Wall time from the first to the last datagram.
    pub active_wall_ns: u64,
    /// Wall clock (`clock::wall_ns`) of the first and last datagram; 0 if none came.
    pub first_ns: u64,
    pub last_ns: u64,
    /// Receive buffer the kernel granted the socket (bytes, as `SO_RCVBUF` reads back).
    #[serde(default)]
    pub rcvbuf_bytes: u64,
    /// Receive system calls that returned datagrams.
    #[serde(default)]
    pub calls: u64,
    /// Thread CPU time spent handling datagrams (parse, anti-replay, verify, count), system calls
    /// excluded, over the `handle_sampled` datagrams of the receive calls timed (one in
    /// [`HANDLE_SAMPLE`]): the protocol's share of the receiver, which batching and GRO do not change.
    #[serde(default)]
    pub handle_ns: u64,
    #[serde(default)]
    pub handle_sampled: u64,
}

/// One receive call in this many has its handling timed (two reads of the thread's CPU clock).
pub const HANDLE_SAMPLE: u64 = 8;

impl ReceiveReport {
    /// Thread CPU time / wall time while packets arrived.
    pub fn cpu_utilisation(&self) -> Option<f64> {
        (self.active_wall_ns > 0).then(|| self.cpu_ns as f64 / self.active_wall_ns as f64)
    }

    /// Receiver thread CPU time per datagram read (nanoseconds): its headroom, beside the sender's.
    pub fn cpu_ns_per_datagram(&self) -> Option<f64> {
        (self.counts.received > 0).then(|| self.cpu_ns as f64 / self.counts.received as f64)
    }

    /// Time handling each datagram, system calls excluded (nanoseconds): beside the null
    /// function's, what the MAC adds to a packet, comparable with `run`'s cost per message.
    pub fn handle_ns_per_datagram(&self) -> Option<f64> {
        (self.handle_sampled > 0).then(|| self.handle_ns as f64 / self.handle_sampled as f64)
    }
}

/// When the loop stops: after `stop` is set and the socket then stays empty for `idle` (the queue has
/// drained), or at `deadline_ns` (`clock::wall_ns`) whatever happens.
pub struct StopRule<'a> {
    pub stop: &'a AtomicBool,
    pub idle: Duration,
    pub deadline_ns: u64,
}

/// Read datagrams from `socket` into `receiver` until the stop rule says so, up to `batch` per
/// system call (1: one `recv` per datagram), with `gro` asking the kernel to coalesce them (cut apart
/// again here, each handled as its own datagram). Each datagram of a batch is handled in arrival order,
/// exactly as if read alone: batching changes the system calls, not the per-packet work.
pub fn receive_loop(
    socket: &UdpSocket,
    receiver: &mut Receiver,
    rule: &StopRule<'_>,
    batch: usize,
    gro: bool,
) -> std::io::Result<ReceiveReport> {
    socket.set_read_timeout(Some(rule.idle.max(Duration::from_millis(1))))?;
    // Set either way: `net receive` reuses one socket for trials with and without GRO.
    if gro {
        super::batch_io::enable_gro(socket).map_err(std::io::Error::other)?;
    } else {
        let _ = super::batch_io::disable_gro(socket);
    }
    let mut io = BatchReceiver::new(batch, gro);
    let cpu0 = clock::thread_cpu_ns();
    let mut first_ns = 0;
    let mut last_ns = 0;
    let (mut handle_ns, mut handle_sampled) = (0u64, 0u64);
    loop {
        match io.receive(socket) {
            Ok(n) => {
                let now = clock::wall_ns();
                if first_ns == 0 {
                    first_ns = now;
                }
                last_ns = now;
                // Thread CPU time, not wall time: a receiver interrupted or descheduled while it
                // verifies would otherwise count that time as verifying. Reading the thread's clock
                // is a system call, so one receive call in HANDLE_SAMPLE is timed.
                let sampled = io.calls % HANDLE_SAMPLE == 0;
                let cpu_before = if sampled { clock::thread_cpu_ns() } else { 0 };
                for i in 0..n {
                    receiver.handle(io.datagram(i));
                }
                if sampled {
                    handle_ns += clock::thread_cpu_ns().saturating_sub(cpu_before);
                    handle_sampled += n as u64;
                }
                if let Some(refused) = &receiver.refused {
                    return Err(std::io::Error::other(refused.to_string()));
                }
                if now >= rule.deadline_ns {
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if rule.stop.load(Ordering::Acquire) || clock::wall_ns() >= rule.deadline_ns {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // ICMP port-unreachable from an earlier send on this socket and the like: not ours to judge.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
            Err(e) => return Err(e),
        }
    }
    let cpu_ns = clock::thread_cpu_ns().saturating_sub(cpu0);
    Ok(ReceiveReport {
        counts: receiver.counts,
        cpu_ns,
        active_wall_ns: last_ns.saturating_sub(first_ns),
        first_ns,
        last_ns,
        rcvbuf_bytes: receive_buffer(socket).unwrap_or(0) as u64,
        calls: io.calls,
        handle_ns,
        handle_sampled,
    })
}

/// Ask for a receive buffer of `bytes`: with `SO_RCVBUFFORCE` when privileged (it may exceed
/// `net.core.rmem_max`), else `SO_RCVBUF` (capped at `rmem_max`). Returns what the kernel granted.
///
/// A bigger buffer lets the receiver ride out scheduling hiccups of a few milliseconds, which on a
/// shared machine otherwise decide zero-loss results more than the MAC does.
pub fn set_receive_buffer(socket: &UdpSocket, bytes: usize) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let value = bytes.min(i32::MAX as usize / 2) as libc::c_int;
    let set = |option| super::batch_io::set_socket_int(socket.as_raw_fd(), option, value);
    if set(libc::SO_RCVBUFFORCE).is_err() {
        set(libc::SO_RCVBUF)?;
    }
    receive_buffer(socket)
}

/// The socket's receive buffer size as the kernel reports it.
pub fn receive_buffer(socket: &UdpSocket) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let value = super::batch_io::socket_int(socket.as_raw_fd(), libc::SO_RCVBUF)?;
    Ok(value.max(0) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept_all(w: &mut ReplayWindow, seqs: &[u64]) {
        for &s in seqs {
            assert_eq!(w.check(s), SeqCheck::Fresh, "seq {s}");
            w.accept(s);
        }
    }

    #[test]
    fn in_order_then_duplicates() {
        let mut w = ReplayWindow::new(64);
        accept_all(&mut w, &(1..=100).collect::<Vec<_>>());
        assert_eq!(w.top(), 100);
        assert_eq!(w.check(100), SeqCheck::Replayed);
        assert_eq!(
            w.check(37),
            SeqCheck::Replayed,
            "100 - 63 is the window's left edge"
        );
        assert_eq!(w.check(36), SeqCheck::TooOld);
        assert_eq!(w.check(0), SeqCheck::TooOld, "0 is never sent");
        assert_eq!(w.check(101), SeqCheck::Fresh);
    }

    #[test]
    fn out_of_order_inside_the_window_is_accepted_once() {
        let mut w = ReplayWindow::new(64);
        accept_all(&mut w, &[1, 2, 5, 4, 70, 10, 7]);
        assert_eq!(w.check(8), SeqCheck::Fresh, "a gap stays open");
        assert_eq!(w.check(3), SeqCheck::TooOld);
        assert_eq!(w.check(6), SeqCheck::TooOld, "70 - 64 has left the window");
        assert_eq!(w.check(7), SeqCheck::Replayed);
        assert_eq!(w.check(10), SeqCheck::Replayed);
        assert_eq!(w.check(69), SeqCheck::Fresh);
    }

    #[test]
    fn jumps_clear_stale_bits() {
        for size in [64, 1024] {
            let mut w = ReplayWindow::new(size);
            accept_all(&mut w, &[1, 2, 3]);
            // Jump two windows: the ring slots of 1..3 are reused by 2·size+1 .. 2·size+3.
            let far = 2 * size;
            accept_all(&mut w, &[far + 2]);
            assert_eq!(w.check(far + 1), SeqCheck::Fresh, "size {size}");
            assert_eq!(w.check(far + 3), SeqCheck::Fresh, "size {size}");
            assert_eq!(w.check(3), SeqCheck::TooOld);
            assert_eq!(w.check(2), SeqCheck::TooOld);
            accept_all(&mut w, &[far + 1, far + 3]);
            // A huge jump.
            accept_all(&mut w, &[u64::MAX - 5]);
            assert_eq!(w.check(u64::MAX - 6), SeqCheck::Fresh);
            assert_eq!(w.check(far + 3), SeqCheck::TooOld);
        }
    }

    #[test]
    fn wide_window_remembers_1024() {
        let mut w = ReplayWindow::new(1024);
        accept_all(&mut w, &(1..=2000).collect::<Vec<_>>());
        assert_eq!(w.check(977), SeqCheck::Replayed);
        assert_eq!(w.check(976), SeqCheck::TooOld);
        assert_eq!(ReplayWindow::new(64).size(), 64);
    }

    proptest::proptest! {
        /// Against a model that remembers everything: the window never accepts a number twice, and
        /// accepts every fresh number inside or ahead of the window.
        #[test]
        fn matches_a_set_model(seqs in proptest::collection::vec(1u64..400, 1..300), size in proptest::sample::select(vec![64u64, 1024])) {
            let mut w = ReplayWindow::new(size);
            let mut seen = std::collections::HashSet::new();
            let mut top = 0u64;
            for s in seqs {
                let expected = if seen.contains(&s) && top - s < size {
                    SeqCheck::Replayed
                } else if s <= top && top - s >= size {
                    SeqCheck::TooOld
                } else {
                    SeqCheck::Fresh
                };
                proptest::prop_assert_eq!(w.check(s), expected, "seq {}", s);
                if expected == SeqCheck::Fresh {
                    w.accept(s);
                    seen.insert(s);
                    top = top.max(s);
                }
            }
        }
    }
}
