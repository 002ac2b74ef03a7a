//! The pre-flight: before a scenario is timed, its function tags messages at exactly the lengths,
//! dispatch mode and acceleration it will be timed at, and the tags are checked against a reference.
//!
//! Why: the known-answer tests prove a function at the published lengths (a few bytes to a few
//! kilobytes); a library can still refuse, or get wrong, the lengths and batch shapes a sweep times —
//! Intel ipsec-mb 1.3 refuses HMAC and CMAC jobs of 65,535 bytes or more, and a refused job used to be
//! timed as a tag of zeros at 0.00 cycles/byte. So each run first computes tags through the very path
//! the hot loop takes (`tag_each`, `tag_batch` or `tag_inflight`, in this process or in the switched
//! child, since the engine runs there too) for messages of every length the schedule holds, and
//! compares each with the tag a *reference* computes one message at a time:
//! - another backend's `hw` function of the same algorithm, when one is available (an independent
//!   implementation: a wrong tag is caught, not only a refusal);
//! - else the function's own one-at-a-time path, on a second keyed object (a refusal and a batch path
//!   that disagrees with the single path are still caught).
//!
//! A refusal fails the scenario with the library's reason; a wrong tag fails it naming the backend,
//! length and reference. The cost is bounded ([`PREFLIGHT_BYTES`]) and recorded in the results.
//!
//! The engine still knows no particular MAC: it asks the registry for "another backend of this
//! algorithm", nothing more.

use super::{clock, hot_loop, EngineError, Scenario, Workload};
use crate::mac::{self, Accel, Availability, Function, MAX_TAG_LEN};
use serde::{Deserialize, Serialize};

/// Bytes of messages the pre-flight tags at most (besides one message of every distinct length up to
/// [`MAX_LENGTHS`], which are always tagged): a few milliseconds for the slowest function, so a short
/// default run spends a small share of its time on it.
pub const PREFLIGHT_BYTES: usize = 128 << 10;
/// Distinct message lengths checked at most (size models from captures can have hundreds): the
/// shortest, the longest and evenly spaced ones between.
pub const MAX_LENGTHS: usize = 32;

/// What the pre-flight of one run checked and what it cost, recorded with the run's counters.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Preflight {
    /// Messages tagged through the timed path (and again by the reference).
    pub messages: usize,
    /// Distinct message lengths among them.
    pub lengths: usize,
    pub bytes: u64,
    /// The reference: `algorithm/backend/accel` of the independent implementation, or `self` for the
    /// function's own one-at-a-time path.
    pub reference: String,
    /// Wall time of the whole pre-flight, both sides and key setup included.
    pub ns: u64,
}

/// Check `s.function` at the scenario's lengths and dispatch mode against a reference, keyed with `key`.
pub fn check(s: &Scenario, workload: &Workload, key: &[u8]) -> Result<Preflight, EngineError> {
    let start = clock::wall_ns();
    let function = s.function;
    let algorithm = function.algorithm;
    let tag_len = s.tag_len();
    let params = s.key_params();
    let nonce_len = algorithm
        .nonce_len
        .unwrap_or(0)
        .min(hot_loop::MAX_NONCE_LEN);
    let batch_len =
        hot_loop::messages_per_call(s.dispatch, workload.mean_len()).clamp(1, mac::MAX_DEPTH);
    let slots = batches(&workload.schedule, batch_len);
    let key_error = |e: mac::MacError| EngineError::Key(e.to_string());
    let mut timed = function.with_key(key, params).map_err(key_error)?;
    // The longest message the reference will tag: the schedule's longest, or a stream's whole
    // message (at most PREFLIGHT_BYTES).
    let longest = workload
        .schedule
        .iter()
        .map(|&(_, len)| u64::from(len))
        .max()
        .unwrap_or(0)
        .max(if s.dispatch == super::Dispatch::Stream {
            PREFLIGHT_BYTES as u64
        } else {
            0
        });
    let (mut reference, reference_name) = keyed_reference(&function, longest, key, params)?;
    let mut report = Preflight {
        reference: reference_name,
        ..Preflight::default()
    };
    if s.dispatch == super::Dispatch::Stream {
        check_stream(s, workload, timed.as_mut(), reference.as_mut(), &mut report)?;
        report.ns = clock::wall_ns().saturating_sub(start);
        return Ok(report);
    }
    let mut lengths: Vec<u32> = Vec::new();
    let mut buffers = Box::new(hot_loop::BatchBuffers::<{ mac::MAX_DEPTH }>::default());
    let mut expected = [0u8; MAX_TAG_LEN];
    for batch_slots in &slots {
        let n = batch_slots.len();
        for (i, &slot) in batch_slots.iter().enumerate() {
            buffers.load(i, &workload.pool, &workload.schedule, slot, nonce_len);
            let len = workload.schedule[slot].1;
            if !lengths.contains(&len) {
                lengths.push(len);
            }
        }
        s.dispatch
            .tag(timed.as_mut(), &mut buffers.batch(n, nonce_len, tag_len))
            .map_err(|refused| EngineError::Refused {
                function: function.id(),
                reason: format!("pre-flight ({}): {refused}", s.dispatch),
            })?;
        for (i, msg) in buffers.msgs[..n].iter().enumerate() {
            let nonce = &buffers.nonces.as_flattened()[i * nonce_len..(i + 1) * nonce_len];
            let want = &mut expected[..tag_len];
            reference
                .tag_into(nonce, msg, want)
                .map_err(|refused| EngineError::Refused {
                    function: report.reference.clone(),
                    reason: format!("pre-flight reference for {}: {refused}", function.id()),
                })?;
            let got = &buffers.tags.as_flattened()[i * tag_len..(i + 1) * tag_len];
            if got != want {
                return Err(EngineError::WrongTag {
                    function: function.id(),
                    reason: format!(
                        "pre-flight: a {}-byte message ({} dispatch) tagged {}, but {} gives {}; not timed",
                        msg.len(),
                        s.dispatch,
                        hex::encode(got),
                        if report.reference == "self" {
                            "its own one-at-a-time path".to_string()
                        } else {
                            report.reference.clone()
                        },
                        hex::encode(want)
                    ),
                });
            }
            report.messages += 1;
            report.bytes += msg.len() as u64;
        }
    }
    report.lengths = lengths.len();
    report.ns = clock::wall_ns().saturating_sub(start);
    Ok(report)
}

/// The reference keyed with `key`, and its name: another backend when one is here and takes this
/// key ([`reference_for`]); else the function's own one-at-a-time path on a second keyed object,
/// named `self`.
fn keyed_reference(
    function: &Function,
    longest: u64,
    key: &[u8],
    params: mac::KeyParams<'static>,
) -> Result<(Box<dyn mac::KeyedMac>, String), EngineError> {
    let other = reference_taking(function, longest)
        .and_then(|other| Some((other.with_key(key, params).ok()?, other.id())));
    match other {
        Some(keyed) => Ok(keyed),
        None => Ok((
            function
                .with_key(key, params)
                .map_err(|e| EngineError::Key(e.to_string()))?,
            "self".to_string(),
        )),
    }
}

/// An independent implementation of the same algorithm: the first other backend's `hw` function that
/// is available here and keyed in this process (no switched child: the reference must be cheap).
pub fn reference_for(function: &Function) -> Option<Function> {
    reference_taking(function, 0)
}

/// [`reference_for`] among the backends whose own length limit takes `longest` bytes: Intel
/// ipsec-mb refuses XCBC and CMAC jobs over 65,534 bytes, so it cannot check another backend's
/// 64 KiB tags (the full matrix failed `xcbc-aes128-96/rustcrypto` at 65,536 B on it).
pub fn reference_taking(function: &Function, longest: u64) -> Option<Function> {
    mac::functions().into_iter().find(|f| {
        f.algorithm.name == function.algorithm.name
            && f.backend.name != function.backend.name
            && f.accel == Accel::Hw
            && !f.is_process_switched()
            && f.availability() == Availability::Available
            && f.length_limit().is_none_or(|l| longest <= l.max_bytes)
    })
}

/// The schedule slots to check, as batches of `batch_len` consecutive slots (the hot loop's shape):
/// one batch starting at the first slot of each chosen length, shortest and longest lengths first,
/// until [`PREFLIGHT_BYTES`] is spent (each chosen length is checked at least once).
pub fn batches(schedule: &[(u32, u32)], batch_len: usize) -> Vec<Vec<usize>> {
    if schedule.is_empty() {
        return Vec::new();
    }
    // The first slot of each distinct length, by length.
    let mut firsts: Vec<(u32, usize)> = Vec::new();
    for (slot, &(_, len)) in schedule.iter().enumerate() {
        if !firsts.iter().any(|&(l, _)| l == len) {
            firsts.push((len, slot));
        }
    }
    firsts.sort_unstable();
    let chosen: Vec<(u32, usize)> = if firsts.len() <= MAX_LENGTHS {
        firsts
    } else {
        let last = firsts.len() - 1;
        let mut picks: Vec<usize> = (0..MAX_LENGTHS)
            .map(|i| i * last / (MAX_LENGTHS - 1))
            .collect();
        picks.dedup();
        picks.into_iter().map(|i| firsts[i]).collect()
    };
    // Extremes first: the longest length is where limits bite.
    let mut order: Vec<(u32, usize)> = Vec::with_capacity(chosen.len());
    let (mut lo, mut hi) = (0usize, chosen.len());
    while lo < hi {
        hi -= 1;
        order.push(chosen[hi]);
        if lo < hi {
            order.push(chosen[lo]);
            lo += 1;
        }
    }
    let mut out = Vec::with_capacity(order.len());
    let mut bytes = 0usize;
    for (_, first) in order {
        let mut batch = Vec::with_capacity(batch_len);
        for k in 0..batch_len {
            let slot = (first + k) % schedule.len();
            // A full batch while the budget lasts; past it, only the message of this length.
            if k > 0 && bytes + schedule[slot].1 as usize > PREFLIGHT_BYTES {
                break;
            }
            bytes += schedule[slot].1 as usize;
            batch.push(slot);
        }
        out.push(batch);
    }
    out
}

/// Chunks one pre-flight stream holds at most (64 KiB of 16-byte chunks).
const MAX_STREAM_CHUNKS: usize = 4096;

/// `--dispatch stream`: two streams of the schedule's chunks in order, each through the stream path
/// the hot loop takes (begin, updates a batch at a time, finish), against the reference's tag of the
/// same chunks joined into one message. The second stream proves `stream_finish` returned the keyed
/// object to its keyed state.
fn check_stream(
    s: &Scenario,
    workload: &Workload,
    timed: &mut dyn mac::KeyedMac,
    reference: &mut dyn mac::KeyedMac,
    report: &mut Preflight,
) -> Result<(), EngineError> {
    let function = s.function;
    let tag_len = s.tag_len();
    let nonce_len = function
        .algorithm
        .nonce_len
        .unwrap_or(0)
        .min(hot_loop::MAX_NONCE_LEN);
    let batch_len = hot_loop::batch_len(workload.mean_len());
    let schedule = &workload.schedule;
    let mut lengths: Vec<u32> = Vec::new();
    let mut slot = 0usize;
    for _ in 0..2 {
        let mut chunks: Vec<&[u8]> = Vec::new();
        let mut bytes = 0usize;
        let mut nonce = [0u8; hot_loop::MAX_NONCE_LEN];
        hot_loop::fill_nonce(&mut nonce[..nonce_len], slot);
        while chunks.len() < 2 || (bytes < PREFLIGHT_BYTES / 2 && chunks.len() < MAX_STREAM_CHUNKS)
        {
            let (offset, len) = schedule[slot % schedule.len()];
            chunks.push(&workload.pool[offset as usize..(offset + len) as usize]);
            if !lengths.contains(&len) {
                lengths.push(len);
            }
            bytes += len as usize;
            slot += 1;
        }
        let refused = |refused: mac::Refused| EngineError::Refused {
            function: function.id(),
            reason: format!("pre-flight (stream): {refused}"),
        };
        let mut got = [0u8; MAX_TAG_LEN];
        timed.stream_begin(&nonce[..nonce_len]).map_err(refused)?;
        for batch in chunks.chunks(batch_len) {
            timed.stream_update(batch).map_err(refused)?;
        }
        timed.stream_finish(&mut got[..tag_len]).map_err(refused)?;
        let joined: Vec<u8> = chunks.concat();
        let mut want = [0u8; MAX_TAG_LEN];
        reference
            .tag_into(&nonce[..nonce_len], &joined, &mut want[..tag_len])
            .map_err(|refused| EngineError::Refused {
                function: report.reference.clone(),
                reason: format!("pre-flight reference for {}: {refused}", function.id()),
            })?;
        if got[..tag_len] != want[..tag_len] {
            return Err(EngineError::WrongTag {
                function: function.id(),
                reason: format!(
                    "pre-flight: a stream of {} chunks ({bytes} bytes) tagged {}, but {} gives {} for them joined; not timed",
                    chunks.len(),
                    hex::encode(&got[..tag_len]),
                    report.reference,
                    hex::encode(&want[..tag_len])
                ),
            });
        }
        report.messages += chunks.len();
        report.bytes += bytes as u64;
    }
    report.lengths = lengths.len();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_is_checked_once_at_least_and_full_batches_while_the_budget_lasts() {
        // Three lengths, cycled.
        let schedule: Vec<(u32, u32)> = (0..30).map(|i| (0, [40u32, 576, 1500][i % 3])).collect();
        let b = batches(&schedule, 4);
        assert_eq!(b.len(), 3, "one batch per distinct length");
        assert_eq!(schedule[b[0][0]].1, 1500, "the longest first");
        assert_eq!(schedule[b[1][0]].1, 40, "then the shortest");
        assert!(
            b.iter().all(|batch| batch.len() == 4),
            "full batches fit the budget"
        );
        // 64 KiB messages: the budget allows two, then single messages only.
        let big: Vec<(u32, u32)> = (0..8).map(|_| (0, 65_536)).collect();
        let b = batches(&big, 16);
        assert_eq!(b, vec![vec![0, 1]]);
        assert!(batches(&[], 4).is_empty());
    }

    #[test]
    fn many_lengths_are_thinned_keeping_the_extremes() {
        let schedule: Vec<(u32, u32)> = (0..500).map(|i| (0, 16 + i)).collect();
        let b = batches(&schedule, 1);
        let lengths: Vec<u32> = b.iter().map(|batch| schedule[batch[0]].1).collect();
        assert_eq!(lengths.len(), MAX_LENGTHS);
        assert!(lengths.contains(&16) && lengths.contains(&515));
    }
}
