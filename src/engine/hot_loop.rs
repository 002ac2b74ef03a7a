//! The hot loop: what a session does between two looks at the phase word.
//!
//! It belongs to the engine, not to the registry: it knows the schedule, the verify modes, the phase
//! word and the published counter; a backend only knows how to tag messages. Messages go to the backend
//! a [`Batch`] at a time through [`KeyedMac::tag_batch`] — one virtual call per batch, with the backend's
//! own monomorphised loop inside — and the loop checks the phase word and publishes its count after each
//! batch. A batch holds at most [`MAX_BATCH`] messages and about [`BATCH_BYTES`] of data, so the count
//! the coordinator samples is never more than a few microseconds of work behind; multi-buffer backends
//! can take a batch at once (the dispatch modes build on this).
//!
//! Per batch: no allocation, lock or clock read; one relaxed load of the phase word and one relaxed
//! store of the message count. Batches are built in [`BatchBuffers`] on the loop's stack; the
//! pre-flight builds its batches there too.
//!
//! A batch the library refuses ends the loop at once with the library's reason ([`Refused`]): the
//! refused batch is not counted, so no refused job is ever timed as work, and the engine fails the
//! scenario with a fatal `refused` warning (docs/methodology.md §4).

use super::Dispatch;
use crate::mac::{Batch, KeyedMac, Refused, VerifyMode, MAX_BATCH, MAX_DEPTH, MAX_TAG_LEN};
use std::sync::atomic::{AtomicU32, Ordering};
use subtle::ConstantTimeEq;

/// Work per batch the loop aims at: small enough that a sample is at most ~10 µs of work behind (16 KiB
/// at ~1.5 cycles/byte), large enough that the per-batch cost (a virtual call, the phase check, the
/// published count) is spread over several messages up to MTU sizes. Measured on the null function:
/// with 2 KiB batches 1500-byte messages went one at a time and the harness cost 12.7 cycles/message
/// against 5.2 for the earlier fully monomorphised loop.
pub const BATCH_BYTES: usize = 16 << 10;

/// One batch in this many is timed for the latency figures: two clock reads per 64 batches.
pub const LATENCY_EVERY: u64 = 64;
/// Phase-word values inside the window: the coordinator increments the word at t1 (to 2) and at the
/// window's middle (to 3), and at t2 (to 4).
const WINDOW_PHASES: std::ops::RangeInclusive<u32> = 2..=3;

/// Longest nonce the loop prepares (the engine writes the slot index into its first 8 bytes).
pub const MAX_NONCE_LEN: usize = 16;

/// `--dispatch stream`: a stream is finalised once it holds this many bytes (at least one chunk), and
/// the next one begins. Long enough that the finalisation is a negligible share (HMAC-SHA256's two
/// extra compressions are ~0.01 % of 1 MiB), short enough that a stream's tag can be checked and no
/// length limit of a construction is approached; `botan speed` and `cryptest b2` finalise once a run.
pub const STREAM_BYTES: u64 = 1 << 20;

/// The stream a session's loop keeps open across batches under `--dispatch stream`.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stream {
    open: bool,
    /// Bytes fed to the open stream.
    fed: u64,
}

impl Stream {
    /// Feed the batch's messages as the next chunks of the open stream (beginning one with the
    /// batch's first nonce if none is open), and finalise it into the batch's last tag slot once it
    /// holds [`STREAM_BYTES`].
    #[inline]
    pub fn feed(&mut self, mac: &mut dyn KeyedMac, batch: &mut Batch<'_>) -> Result<(), Refused> {
        if !self.open {
            let (nonce, _, _) = batch.item(0);
            mac.stream_begin(nonce)?;
            self.open = true;
            self.fed = 0;
        }
        mac.stream_update(batch.msgs)?;
        self.fed += batch.msgs.iter().map(|m| m.len() as u64).sum::<u64>();
        if self.fed >= STREAM_BYTES {
            let last = batch.msgs.len() - 1;
            let (_, _, tag) = batch.item(last);
            mac.stream_finish(tag)?;
            self.open = false;
        }
        Ok(())
    }
}

/// Bytes one `--dispatch all` call hands over at most: a device gets a queue's worth of small
/// messages (up to [`crate::mac::MAX_DEPTH`]), and a batch of large ones still ends within a
/// fraction of a millisecond, so the window's edges stay sharp.
pub const ALL_BYTES: usize = 256 * 1024;

/// Messages per `--dispatch all` call for messages of `mean_len` bytes.
pub fn all_len(mean_len: usize) -> usize {
    (ALL_BYTES / mean_len.max(1)).clamp(1, crate::mac::MAX_DEPTH)
}

/// Messages per call of `dispatch` for messages of `mean_len` bytes: the depth the mode fixes, else
/// `all`'s or the one-at-a-time loop's batch. The hot loop and the pre-flight both take it, so the
/// pre-flight checks the batches the loop times.
pub fn messages_per_call(dispatch: Dispatch, mean_len: usize) -> usize {
    match dispatch {
        Dispatch::All => all_len(mean_len),
        other => other.depth().unwrap_or_else(|| batch_len(mean_len)),
    }
}

/// Messages per batch for messages of `mean_len` bytes.
pub fn batch_len(mean_len: usize) -> usize {
    (BATCH_BYTES / mean_len.max(1)).clamp(1, MAX_BATCH)
}

/// A session's message count as the engine's hot loop publishes it: one relaxed store per batch.
///
/// The engine's coordinator reads it from another thread at its own ticks, so the measurement window
/// is the coordinator's and not whenever a descheduled session next looks at a phase word. Only the
/// count is published: the schedule of message sizes is fixed and cyclic, so the coordinator derives
/// the exact byte count from it. Publishing bytes as a second word would let a reader see the two one
/// message apart; one word is always consistent, and costs one store. Aligned to 128 bytes (two cache
/// lines, for the adjacent-line prefetcher) so that no two sessions' counters share a line.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Progress {
    pub messages: std::sync::atomic::AtomicU64,
}

/// One session's loop state. Everything is preallocated before the gate opens.
pub struct SessionLoop<'a> {
    /// Shared read-only data pool.
    pub pool: &'a [u8],
    /// Cyclic schedule of messages: (offset into `pool`, length).
    pub schedule: &'a [(u32, u32)],
    /// Next schedule index.
    pub next: usize,
    pub nonce_len: usize,
    pub tag_len: usize,
    /// Messages per batch (≥ 1, ≤ [`MAX_BATCH`]); `burst:N` and `inflight:N` use N.
    pub batch: usize,
    pub dispatch: Dispatch,
    /// Sampled latencies (submission to tag, ns) inside the window; filled up to its capacity, never
    /// reallocated in the loop.
    pub latency: &'a mut Vec<u64>,
    pub verify: VerifyMode,
    /// Inline verify: expected tags, `tag_len` bytes per schedule slot.
    pub expected: &'a [u8],
    /// After-window verify: ring of (slot, tag) kept for checking after the window.
    pub kept: &'a mut [u8],
    pub kept_slots: &'a mut [u32],
    /// Phase word published by the coordinator; the loop returns when it differs from `seen`.
    pub phase: &'a AtomicU32,
    pub seen: u32,
    pub progress: &'a Progress,
    /// Counters, cumulative since the session started.
    pub messages: u64,
    pub verify_failures: u64,
    /// The stream kept open across batches (`--dispatch stream`; unused otherwise).
    pub stream: Stream,
}

/// The nonce of a schedule slot: its index, little-endian, in the first 8 bytes.
pub fn fill_nonce(nonce: &mut [u8], slot: usize) {
    let n = nonce.len().min(8);
    nonce[..n].copy_from_slice(&(slot as u64).to_le_bytes()[..n]);
}

/// Where one batch is built, on its builder's stack: up to `N` messages (slices of the
/// pool), the schedule slot of each, their nonces and their tags. The hot loop and the pre-flight both
/// build their batches here, so the pre-flight checks the very batches the loop times.
///
/// `repr(C)` with the byte arrays first: laid out so, the release build of [`SessionLoop::run`] is the
/// code the loop compiled to with four separate stack arrays (same instructions per message); with the
/// default layout the nonce's bounds check took one more add per message.
///
/// `N` is [`MAX_BATCH`] for every dispatch but the deep ones (`burst:N`, `inflight:N` beyond it,
/// `all`), which get [`MAX_DEPTH`]: the common loop keeps its small stack frame, and only a deep
/// dispatch zeroes 26 KB when a loop starts.
#[repr(C)]
pub struct BatchBuffers<'p, const N: usize = MAX_BATCH> {
    pub nonces: [[u8; MAX_NONCE_LEN]; N],
    pub tags: [[u8; MAX_TAG_LEN]; N],
    pub msgs: [&'p [u8]; N],
    pub slots: [usize; N],
}

impl<const N: usize> Default for BatchBuffers<'_, N> {
    fn default() -> Self {
        BatchBuffers {
            msgs: [&[]; N],
            slots: [0usize; N],
            nonces: [[0u8; MAX_NONCE_LEN]; N],
            tags: [[0u8; MAX_TAG_LEN]; N],
        }
    }
}

impl<'p, const N: usize> BatchBuffers<'p, N> {
    /// The nonces as one byte run (`nonce_len` bytes each, back to back from the start).
    #[inline]
    fn nonce_bytes(&mut self) -> &mut [u8] {
        self.nonces.as_flattened_mut()
    }

    /// Put schedule slot `slot` at place `i` of the batch: its message from `pool`, the slot itself
    /// and, when the function takes a nonce, the slot's nonce.
    #[inline]
    pub fn load(
        &mut self,
        i: usize,
        pool: &'p [u8],
        schedule: &[(u32, u32)],
        slot: usize,
        nonce_len: usize,
    ) {
        let (offset, len) = schedule[slot];
        self.msgs[i] = &pool[offset as usize..offset as usize + len as usize];
        self.slots[i] = slot;
        if nonce_len > 0 {
            fill_nonce(
                &mut self.nonce_bytes()[i * nonce_len..(i + 1) * nonce_len],
                slot,
            );
        }
    }

    /// The first `n` loaded messages as the backend takes them, with room for their tags.
    #[inline]
    pub fn batch(&mut self, n: usize, nonce_len: usize, tag_len: usize) -> Batch<'_> {
        Batch {
            msgs: &self.msgs[..n],
            nonces: &self.nonces.as_flattened()[..n * nonce_len],
            nonce_len,
            tags: &mut self.tags.as_flattened_mut()[..n * tag_len],
            tag_len,
        }
    }
}

impl SessionLoop<'_> {
    /// Tag messages until the phase word changes or `limit` messages were processed in this call, or
    /// until the library refuses a batch (`Err`, with what was done before it kept in the counters).
    pub fn run(&mut self, mac: &mut dyn KeyedMac, limit: u64) -> Result<(), Refused> {
        if self.dispatch.depth().unwrap_or(self.batch) <= MAX_BATCH {
            self.run_in::<MAX_BATCH>(mac, limit)
        } else {
            self.run_in::<MAX_DEPTH>(mac, limit)
        }
    }

    /// [`SessionLoop::run`] with batches of at most `N` messages built on this frame.
    fn run_in<const N: usize>(
        &mut self,
        mac: &mut dyn KeyedMac,
        limit: u64,
    ) -> Result<(), Refused> {
        let tag_len = self.tag_len;
        let nonce_len = self.nonce_len.min(MAX_NONCE_LEN);
        let ring = self.kept_slots.len();
        let schedule = self.schedule;
        let pool = self.pool;
        let mut next = self.next;
        let mut messages = self.messages;
        let mut failures = self.verify_failures;
        let stop_at = messages.saturating_add(limit);
        let batch_len = self.dispatch.depth().unwrap_or(self.batch).min(N);
        let mut batches = 0u64;
        let mut buffers = BatchBuffers::<N>::default();
        loop {
            let n = (batch_len as u64).min(stop_at - messages).max(1) as usize;
            for i in 0..n {
                let slot = next;
                next = if slot + 1 == schedule.len() {
                    0
                } else {
                    slot + 1
                };
                buffers.load(i, pool, schedule, slot, nonce_len);
            }
            let mut batch = buffers.batch(n, nonce_len, tag_len);
            batches += 1;
            let timed = batches % LATENCY_EVERY == 0
                && self.latency.len() < self.latency.capacity()
                && WINDOW_PHASES.contains(&self.seen);
            let start = if timed { super::clock::wall_ns() } else { 0 };
            let tagged = match self.dispatch {
                Dispatch::Stream => self.stream.feed(mac, &mut batch),
                other => other.tag(mac, &mut batch),
            };
            if let Err(refused) = tagged {
                self.next = next;
                self.messages = messages;
                self.verify_failures = failures;
                return Err(refused);
            }
            if timed {
                let took = super::clock::wall_ns().saturating_sub(start);
                // Burst: every message was submitted at the start and tagged by the end. One at a
                // time: each message's own share. In flight: a message waits while up to `depth`
                // messages' worth of work passes (a backend without a queue runs one at a time, so its
                // queue is short in fact; the figure is then an upper bound).
                let latency = match self.dispatch {
                    Dispatch::Burst(_) | Dispatch::All => took,
                    Dispatch::Single | Dispatch::Stream => took / n as u64,
                    Dispatch::Inflight(depth) => took * depth.min(n) as u64 / n as u64,
                };
                self.latency.push(latency);
            }
            match self.verify {
                VerifyMode::None => {}
                VerifyMode::Inline => {
                    for (i, &slot) in buffers.slots[..n].iter().enumerate() {
                        let expected = &self.expected[slot * tag_len..(slot + 1) * tag_len];
                        let ok: bool = buffers.tags.as_flattened()[i * tag_len..(i + 1) * tag_len]
                            .ct_eq(expected)
                            .into();
                        failures += u64::from(!ok);
                    }
                }
                VerifyMode::After => {
                    for (i, &slot) in buffers.slots[..n].iter().enumerate() {
                        let r = ((messages + i as u64) % ring as u64) as usize;
                        self.kept[r * tag_len..(r + 1) * tag_len].copy_from_slice(
                            &buffers.tags.as_flattened()[i * tag_len..(i + 1) * tag_len],
                        );
                        self.kept_slots[r] = slot as u32;
                    }
                }
            }
            messages += n as u64;
            self.progress.messages.store(messages, Ordering::Relaxed);
            if self.phase.load(Ordering::Relaxed) != self.seen || messages >= stop_at {
                break;
            }
        }
        self.next = next;
        self.messages = messages;
        self.verify_failures = failures;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what it was asked to tag; its tag is the message length and first nonce byte.
    #[derive(Default)]
    struct Recorder {
        seen: Vec<(u8, usize)>,
        /// Calls of the one-at-a-time path and of the all-at-once path.
        calls: usize,
        bursts: Vec<usize>,
        /// Refuse messages of at least this many bytes, as a library with a length limit does.
        refuse_from: Option<usize>,
    }

    impl KeyedMac for Recorder {
        fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> Result<(), Refused> {
            let n = nonce.first().copied().unwrap_or(0);
            if self.refuse_from.is_some_and(|limit| msg.len() >= limit) {
                return Err(Refused::message(msg.len(), "too long for the recorder"));
            }
            self.seen.push((n, msg.len()));
            tag.fill(msg.len() as u8 ^ n);
            Ok(())
        }

        fn tag_each(&mut self, batch: &mut Batch<'_>) -> Result<(), Refused> {
            self.calls += 1;
            for i in 0..batch.msgs.len() {
                let (nonce, msg, tag) = batch.item(i);
                self.tag_into(nonce, msg, tag)?;
            }
            Ok(())
        }

        fn tag_batch(&mut self, batch: &mut Batch<'_>) -> Result<(), Refused> {
            self.bursts.push(batch.msgs.len());
            for i in 0..batch.msgs.len() {
                let (nonce, msg, tag) = batch.item(i);
                self.tag_into(nonce, msg, tag)?;
            }
            Ok(())
        }
    }

    /// A loop from slot 0 over `schedule`, one message a batch, 4-byte tags, no nonce, no verification,
    /// seeing the phase `phase` holds: each test sets what it is about.
    fn session_loop<'a>(
        pool: &'a [u8],
        schedule: &'a [(u32, u32)],
        phase: &'a AtomicU32,
        progress: &'a Progress,
        latency: &'a mut Vec<u64>,
    ) -> SessionLoop<'a> {
        SessionLoop {
            pool,
            schedule,
            next: 0,
            nonce_len: 0,
            tag_len: 4,
            batch: 1,
            dispatch: Dispatch::Single,
            latency,
            verify: VerifyMode::None,
            expected: &[],
            kept: &mut [],
            kept_slots: &mut [],
            phase,
            seen: phase.load(Ordering::Relaxed),
            progress,
            messages: 0,
            verify_failures: 0,
            stream: Stream::default(),
        }
    }

    #[test]
    fn batches_follow_the_schedule_with_slot_nonces_and_stop_at_the_limit() {
        let pool = vec![0u8; 64];
        let schedule: Vec<(u32, u32)> = (0..5).map(|i| (0, 10 + i)).collect();
        let phase = AtomicU32::new(1);
        let progress = Progress::default();
        let mut latency = Vec::new();
        let mut lp = SessionLoop {
            next: 3,
            nonce_len: 12,
            batch: 4,
            ..session_loop(&pool, &schedule, &phase, &progress, &mut latency)
        };
        let mut mac = Recorder::default();
        lp.run(&mut mac, 11).unwrap();
        assert_eq!(lp.messages, 11, "stops exactly at the limit");
        assert_eq!(progress.messages.load(Ordering::Relaxed), 11);
        assert_eq!(mac.calls, 3, "4 + 4 + 3");
        let slots: Vec<u8> = mac.seen.iter().map(|s| s.0).collect();
        assert_eq!(slots, vec![3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3]);
        assert!(mac
            .seen
            .iter()
            .all(|&(slot, len)| len == 10 + slot as usize));
        assert_eq!(lp.next, 4);
    }

    #[test]
    fn inline_verification_counts_every_wrong_tag() {
        let pool = vec![0u8; 64];
        let schedule: Vec<(u32, u32)> = (0..4).map(|_| (0, 8)).collect();
        // Right tags for slots 0 and 2, wrong for 1 and 3.
        let mut expected = vec![0u8; 4 * 2];
        for slot in 0..4usize {
            let right = 8u8 ^ slot as u8;
            let v = if slot % 2 == 0 { right } else { !right };
            expected[slot * 2..slot * 2 + 2].fill(v);
        }
        let phase = AtomicU32::new(1);
        let progress = Progress::default();
        let mut latency = Vec::new();
        let mut lp = SessionLoop {
            nonce_len: 8,
            tag_len: 2,
            batch: 3,
            verify: VerifyMode::Inline,
            expected: &expected,
            ..session_loop(&pool, &schedule, &phase, &progress, &mut latency)
        };
        lp.run(&mut Recorder::default(), 8).unwrap();
        assert_eq!(
            lp.verify_failures, 4,
            "two rounds of the schedule, two wrong each"
        );
    }

    /// `burst:N` hands the backend N messages per call through its all-at-once path, and in the window
    /// one batch in [`LATENCY_EVERY`] is timed; outside the window none is.
    #[test]
    fn burst_dispatch_uses_the_all_at_once_path_and_samples_latency_in_the_window() {
        let pool = vec![0u8; 64];
        let schedule: Vec<(u32, u32)> = (0..4).map(|_| (0, 8)).collect();
        let phase = AtomicU32::new(2);
        let progress = Progress::default();
        let mut latency = Vec::with_capacity(8);
        let mut lp = SessionLoop {
            batch: 16,
            dispatch: Dispatch::Burst(5),
            ..session_loop(&pool, &schedule, &phase, &progress, &mut latency)
        };
        let mut mac = Recorder::default();
        lp.run(&mut mac, 5 * 130).unwrap();
        assert_eq!(mac.calls, 0, "no one-at-a-time call");
        assert_eq!(mac.bursts.len(), 130);
        assert!(mac.bursts.iter().all(|&n| n == 5));
        assert_eq!(lp.latency.len(), 2, "batches 64 and 128 are timed");
        // Outside the window (phase 1: warm-up) nothing is sampled.
        lp.latency.clear();
        lp.seen = 1;
        phase.store(1, Ordering::Relaxed);
        lp.run(&mut mac, 5 * 130).unwrap();
        assert!(lp.latency.is_empty());
    }

    /// A refused batch ends the loop with the library's reason and is not counted: the messages before
    /// it are, in every dispatch mode.
    #[test]
    fn a_refused_batch_stops_the_loop_uncounted_in_every_dispatch_mode() {
        let pool = vec![0u8; 256];
        // Slots 0..3 take 10 bytes, slot 3 takes 200: the recorder refuses 100 bytes and more.
        let schedule: Vec<(u32, u32)> = vec![(0, 10), (0, 10), (0, 10), (0, 200)];
        for dispatch in [Dispatch::Single, Dispatch::Burst(2), Dispatch::Inflight(2)] {
            let phase = AtomicU32::new(1);
            let progress = Progress::default();
            let mut latency = Vec::new();
            let mut lp = SessionLoop {
                dispatch,
                ..session_loop(&pool, &schedule, &phase, &progress, &mut latency)
            };
            let mut mac = Recorder {
                refuse_from: Some(100),
                ..Recorder::default()
            };
            let refused = lp.run(&mut mac, 1000).unwrap_err();
            assert_eq!(refused.what, "a 200-byte message", "{dispatch}");
            assert_eq!(refused.reason, "too long for the recorder");
            // Single: slots 0, 1, 2 done, 3 refused. Batches of 2: (0, 1) done, (2, 3) refused.
            let counted = if dispatch == Dispatch::Single { 3 } else { 2 };
            assert_eq!(lp.messages, counted, "{dispatch}");
            assert_eq!(progress.messages.load(Ordering::Relaxed), counted);
        }
    }

    /// Records the stream calls it gets: (begun, bytes fed, finished) and each finished stream's length.
    #[derive(Default)]
    struct StreamRecorder {
        open: bool,
        fed: u64,
        updates: usize,
        finished: Vec<u64>,
        nonces: Vec<u8>,
    }

    impl KeyedMac for StreamRecorder {
        fn tag_into(&mut self, _: &[u8], _: &[u8], _: &mut [u8]) -> Result<(), Refused> {
            panic!("a stream never tags a whole message");
        }

        fn stream_begin(&mut self, nonce: &[u8]) -> Result<(), Refused> {
            assert!(!self.open, "a stream begun twice");
            self.open = true;
            self.fed = 0;
            self.nonces.push(nonce.first().copied().unwrap_or(0));
            Ok(())
        }

        fn stream_update(&mut self, chunks: &[&[u8]]) -> Result<(), Refused> {
            assert!(self.open, "an update outside a stream");
            self.updates += chunks.len();
            self.fed += chunks.iter().map(|c| c.len() as u64).sum::<u64>();
            Ok(())
        }

        fn stream_finish(&mut self, tag: &mut [u8]) -> Result<(), Refused> {
            assert!(self.open, "a finish outside a stream");
            self.open = false;
            self.finished.push(self.fed);
            tag.fill(0xAA);
            Ok(())
        }
    }

    /// `stream`: every message is an update of one long message, across calls of the loop, finalised
    /// once it holds [`STREAM_BYTES`], and the next stream begins with the nonce of its first chunk.
    #[test]
    fn stream_dispatch_feeds_one_long_message_across_batches_and_finalises_per_stream_bytes() {
        let pool = vec![0u8; 4096];
        let schedule: Vec<(u32, u32)> = (0..4).map(|_| (0, 4096)).collect();
        let phase = AtomicU32::new(1);
        let progress = Progress::default();
        let mut latency = Vec::new();
        let mut lp = SessionLoop {
            batch: 4,
            nonce_len: 8,
            dispatch: Dispatch::Stream,
            ..session_loop(&pool, &schedule, &phase, &progress, &mut latency)
        };
        let mut mac = StreamRecorder::default();
        let per_stream = STREAM_BYTES / 4096;
        // One and a half streams, in calls of 10 messages: the stream stays open across calls.
        for _ in 0..(per_stream * 3 / 2) / 10 {
            lp.run(&mut mac, 10).unwrap();
        }
        // Finalised in the batch that took it to 1 MiB (batches of 4, 4, 2 chunks in each call).
        assert_eq!(mac.finished.len(), 1, "{:?}", mac.finished);
        let first = mac.finished[0];
        assert!(
            (STREAM_BYTES..STREAM_BYTES + 4 * 4096).contains(&first),
            "{first}"
        );
        assert!(mac.open, "the second stream is still open");
        assert_eq!(
            mac.updates as u64, lp.messages,
            "every message is one update"
        );
        // Streams begin at slot 0 and at the slot after the first stream's last chunk.
        assert_eq!(mac.nonces, vec![0, (first / 4096 % 4) as u8]);
    }

    #[test]
    fn dispatch_modes_parse_and_print_alike() {
        for text in [
            "single",
            "burst:8",
            "inflight:4",
            "burst:16",
            "burst:256",
            "inflight:256",
            "all",
            "stream",
        ] {
            assert_eq!(text.parse::<Dispatch>().unwrap().to_string(), text);
        }
        for bad in [
            "burst:0",
            "burst:257",
            "inflight",
            "burst:x",
            "many",
            "stream:4",
            "all:4",
        ] {
            assert!(bad.parse::<Dispatch>().is_err(), "{bad}");
        }
    }

    /// `all` hands a device a queue's worth of small messages and keeps a batch of large ones
    /// within [`ALL_BYTES`].
    #[test]
    fn all_takes_up_to_a_queue_or_256_kib() {
        assert_eq!(all_len(16), MAX_DEPTH);
        assert_eq!(all_len(1024), 256);
        assert_eq!(all_len(16384), 16);
        assert_eq!(all_len(65536), 4);
        assert_eq!(all_len(1 << 20), 1);
    }

    /// A deep dispatch (beyond the common loop's [`MAX_BATCH`]) hands the backend batches of its
    /// depth, on the loop's larger frame.
    #[test]
    fn a_burst_deeper_than_the_common_frame_is_handed_over_whole() {
        let pool = vec![0u8; 64];
        let schedule: Vec<(u32, u32)> = (0..7).map(|i| (0, 10 + i)).collect();
        let phase = AtomicU32::new(1);
        let progress = Progress::default();
        let mut latency = Vec::new();
        let mut lp = SessionLoop {
            dispatch: Dispatch::Burst(100),
            ..session_loop(&pool, &schedule, &phase, &progress, &mut latency)
        };
        let mut mac = Recorder::default();
        lp.run(&mut mac, 250).unwrap();
        assert_eq!(mac.bursts, vec![100, 100, 50]);
        assert_eq!(mac.seen.len(), 250);
        assert!(mac
            .seen
            .iter()
            .enumerate()
            .all(|(i, &(_, len))| len == 10 + i % 7));
    }

    #[test]
    fn batch_length_bounds_the_work_per_batch() {
        assert_eq!(batch_len(16), 16);
        assert_eq!(batch_len(64), 16);
        assert_eq!(batch_len(576), 16);
        assert_eq!(batch_len(1500), 10);
        assert_eq!(batch_len(16384), 1);
        assert_eq!(batch_len(65536), 1);
        assert_eq!(batch_len(0), 16);
    }
}
