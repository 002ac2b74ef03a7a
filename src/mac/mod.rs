//! The MAC registry: algorithms × backends × acceleration, behind one trait.
//!
//! Shaped after rustls' `CryptoProvider` and RustCrypto's `KeyInit`/`Mac`:
//! - an [`Algorithm`] is a static descriptor (facts only, no code);
//! - a backend contributes one [`Entry`] per algorithm it implements, each a plain function pointer that
//!   does key setup and returns a [`KeyedMac`];
//! - [`KeyedMac`] then tags and verifies messages with no allocation and no key-dependent work.
//!
//! The registry is the one table [`BACKENDS`]; `macbench list` prints it, the engine and the self-test walk
//! it. Key setup (`Entry::new`) is kept apart from per-message work so the engine can time them separately.
//!
//! The registry is the bottom of the MAC stack and imports no other macbench module. Software-only
//! variants and the ISA levels OpenSSL and Crypto++ are masked to need a process per acceleration: a
//! backend only *declares* its switch ([`ProcessSwitch`]); the isolation layer above the registry and
//! the engine (`src/isolate/`) starts a child process per acceleration, applies the switch there, and
//! keys switched functions through `isolate::key`. Nothing installs itself: in any other process a
//! switched function refuses its key setup with the reason (see [`switch`]).

pub mod algorithm;
pub mod aws_lc;
pub mod kmac;
pub mod listing;
pub mod locked;
pub mod null;
pub mod openssl;
pub mod openssl4;
pub mod ring;
pub mod rustcrypto;
pub mod shim;
pub mod switch;
pub mod vectors;
// The system libraries' backends (`cryptopp`, `mbedtls`, …): a module `src/mac/<name>.rs` per row of
// `build/libraries.rs`, declared by the macro build.rs writes from the rows (invoked here, so the
// modules sit in this directory), and `with_system_library_backends!`.
include!(concat!(env!("OUT_DIR"), "/system_library_backends.rs"));
system_library_modules!();

pub use algorithm::{
    algorithm, Algorithm, BlockRule, Family, KeyLengths, MessageBits, NonceRule, ALGORITHMS,
    PAPER_PRESET,
};
pub use switch::{enter_switched_process, switched_process, Capability, ProcessSwitch};

use std::fmt;
use subtle::ConstantTimeEq;

/// Longest tag any registered algorithm produces (BLAKE2b-512, KMAC256 with L=512).
pub const MAX_TAG_LEN: usize = 64;

/// Errors from key setup or from parameters a user supplied.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum MacError {
    #[error("{algorithm}: key is {got} bytes; accepted: {accepted} bytes")]
    KeyLength {
        algorithm: &'static str,
        got: usize,
        accepted: String,
    },
    #[error("{function}: key is {got} bytes; this library takes {accepted} bytes ({why})")]
    KeyLimit {
        function: String,
        got: usize,
        accepted: String,
        why: &'static str,
    },
    #[error("{algorithm} takes no nonce; drop --nonce")]
    NonceNotUsed { algorithm: &'static str },
    #[error("{function} takes a nonce of {accepted} (--nonce HEX); {why}")]
    Nonce {
        function: String,
        /// What is accepted: `12 bytes`, `1–16 bytes (a 16-byte nonce below 2^127 …)`.
        accepted: String,
        why: String,
    },
    #[error("a {bits}-bit message is not whole bytes, and this backend tags whole bytes only")]
    WholeBytesOnly { bits: u64 },
    #[error("--custom: {got} bytes; {backend}'s {algorithm} takes a customization string of at most {max} bytes ({why})")]
    Customization {
        backend: &'static str,
        algorithm: &'static str,
        got: usize,
        max: usize,
        why: &'static str,
    },
    #[error("{backend} {algorithm}: {reason}")]
    Backend {
        backend: &'static str,
        algorithm: &'static str,
        reason: String,
    },
    #[error(transparent)]
    Refused(#[from] Refused),
}

/// Which instruction-set extensions the backend may use (docs/methodology.md §1, §5).
///
/// `hw` and `sw` are what every backend is asked for; the ISA levels (`sse` … `avx512`) are x86-64 rungs
/// between them, offered by the backends that can be told to use exactly one ([`IsaLevels`]). The names
/// are what results files record: `hw` and `sw` are spelled as before the ladder existed, so old files
/// still read. Declaration order is the order of `--help`'s possible values, `hw` and `sw` first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// The library's default dispatch: whatever the CPU offers.
    Hw,
    /// Instruction-set extensions switched off (a child process; docs/methodology.md §1).
    Sw,
    /// x86-64 SSE code paths (SSE4.2, AES-NI, PCLMULQDQ; SHA-NI where the CPU has it).
    Sse,
    /// x86-64 AVX code paths.
    Avx,
    /// x86-64 AVX2 code paths.
    Avx2,
    /// x86-64 AVX-512 code paths.
    Avx512,
}

impl Accel {
    /// The ISA levels, in ladder order.
    pub const LEVELS: [Accel; 4] = [Accel::Sse, Accel::Avx, Accel::Avx2, Accel::Avx512];

    /// Every acceleration, in declaration order (what `--accel` accepts).
    pub const ALL: [Accel; 6] = [
        Accel::Hw,
        Accel::Sw,
        Accel::Sse,
        Accel::Avx,
        Accel::Avx2,
        Accel::Avx512,
    ];

    /// The name results files, `list` and `--accel` use.
    pub fn name(self) -> &'static str {
        match self {
            Accel::Hw => "hw",
            Accel::Sw => "sw",
            Accel::Sse => "sse",
            Accel::Avx => "avx",
            Accel::Avx2 => "avx2",
            Accel::Avx512 => "avx512",
        }
    }

    /// The acceleration a results file names, if this build knows it.
    pub fn from_name(name: &str) -> Option<Accel> {
        Accel::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether this is one of the ISA levels (`sse` … `avx512`), not `hw` or `sw`.
    pub fn is_isa_level(self) -> bool {
        Accel::LEVELS.contains(&self)
    }

    /// Place on the ladder `sw` < `sse` < `avx` < `avx2` < `avx512`; `hw` ("whatever the library
    /// picks") has none.
    pub fn ladder_rank(self) -> Option<usize> {
        match self {
            Accel::Hw => None,
            Accel::Sw => Some(0),
            Accel::Sse => Some(1),
            Accel::Avx => Some(2),
            Accel::Avx2 => Some(3),
            Accel::Avx512 => Some(4),
        }
    }
}

impl fmt::Display for Accel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a backend offers the ISA levels, declared on [`Backend`].
#[derive(Clone, Copy)]
pub enum IsaLevels {
    /// Not offered; why, as `list` and `--accel` say it (one line, naming the backend).
    NotOffered(&'static str),
    /// Offered: each level is one entry of the backend; this says whether this CPU runs a level
    /// (by the library's own detection), or why not. A level the backend's [`ProcessSwitch`] covers
    /// runs in that level's child process; any other level is keyed in-process (ipsec-mb).
    Offered(fn(Accel) -> Availability),
}

/// Why no ISA level runs on another architecture (the levels are x86-64 instruction sets).
pub const NO_ISA_LEVELS_HERE: &str =
    "the ISA levels sse, avx, avx2 and avx512 are x86-64 code paths; \
     this is not an x86-64 build (hw and sw remain)";

/// Per-key parameters beyond the key itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyParams<'a> {
    /// KMAC customization string `S` (empty for every other algorithm).
    pub customization: &'a [u8],
    /// KMAC's output length `L` in bytes (SP 800-185 §4.3), where the tag length is an input of the
    /// construction ([`Algorithm::tag_len_is_input`]); `None` for the algorithm's tag length. Ignored
    /// by every other algorithm, whose shorter tags are truncations ([`KeyParams::for_tag_len`]).
    pub output_len: Option<usize>,
}

impl<'a> KeyParams<'a> {
    /// The parameters for tags of `tag_len` bytes of `algorithm`: KMAC's `L` set to it, nothing for a
    /// truncated MAC. The one place that decides how a tag length reaches a backend.
    pub fn for_tag_len(self, algorithm: &Algorithm, tag_len: usize) -> KeyParams<'a> {
        KeyParams {
            output_len: algorithm.tag_len_is_input().then_some(tag_len),
            ..self
        }
    }
}

/// A keyed MAC instance: all key-dependent precomputation is done; per message it only tags.
///
/// `tag_into` must not allocate. `nonce` has been checked against the algorithm's `nonce_len` by the
/// caller (empty for algorithms that take none); `tag` has exactly the algorithm's `tag_len` bytes.
///
/// Every tagging method returns whether the library computed the tag: a library that refuses a job
/// (ipsec-mb's job status, a C shim's non-zero return, an OpenSSL EVP error) returns [`Refused`] with
/// the library's own reason, and the caller must stop there. A tag buffer after a refusal holds no
/// tag; the engine turns a refusal into a fatal warning, so a refused job is never timed as work
/// (docs/methodology.md §4).
pub trait KeyedMac: Send {
    /// Compute the tag of one whole message.
    fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult;

    /// Compute the tag of a message fed in pieces through the library's streaming interface.
    ///
    /// Backends whose API is one-shot keep the default, which joins the pieces (allocating: test use only)
    /// and reports `streams() == false` so the self-test can say the streaming path was not exercised.
    fn tag_chunks(&mut self, nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        let joined: Vec<u8> = chunks.concat();
        self.tag_into(nonce, &joined, tag)
    }

    /// Compute the tag of a message of `bits` bits: the first `bits` bits of `msg`, most significant
    /// bit of each byte first (the 3GPP convention); `msg` holds `ceil(bits / 8)` bytes.
    ///
    /// For the known-answer tests of the 3GPP functions, whose published vectors have lengths that
    /// are not whole bytes; the benchmark itself runs whole bytes through [`KeyedMac::tag_into`]. The
    /// default accepts whole bytes only and then is `tag_into`; a backend whose library takes bit
    /// lengths overrides it. Not on the hot path: `tag_into` and `tag_batch` are unchanged.
    fn tag_bits(
        &mut self,
        nonce: &[u8],
        msg: &[u8],
        bits: u64,
        tag: &mut [u8],
    ) -> Result<(), MacError> {
        tag_whole_bytes(self, nonce, msg, bits, tag)
    }

    /// Whether `tag_chunks` really feeds the library piece by piece.
    fn streams(&self) -> bool {
        false
    }

    /// `--dispatch stream`: begin one long message through the library's incremental interface
    /// (keyed state kept, `nonce` for the algorithms that take one). The three `stream_*` methods
    /// are the bulk rate a file or stream authenticator sees: many updates, one finalisation. A
    /// backend without an incremental interface keeps these defaults, which refuse: a stream is
    /// never imitated by joining pieces, and the refusal names why.
    fn stream_begin(&mut self, nonce: &[u8]) -> TagResult {
        let _ = nonce;
        Err(Refused::no_stream())
    }

    /// Feed the next pieces of the message begun by [`KeyedMac::stream_begin`], in order.
    fn stream_update(&mut self, chunks: &[&[u8]]) -> TagResult {
        let _ = chunks;
        Err(Refused::no_stream())
    }

    /// Finalise the message into `tag` and return to the keyed state for the next one.
    fn stream_finish(&mut self, tag: &mut [u8]) -> TagResult {
        let _ = tag;
        Err(Refused::no_stream())
    }

    /// Recompute the tag of `msg` and compare it with `expected` in constant time: `Ok(true)` when it
    /// matches, `Err` when the library refused to compute it.
    fn verify(&mut self, nonce: &[u8], msg: &[u8], expected: &[u8]) -> Result<bool, Refused> {
        let mut computed = [0u8; MAX_TAG_LEN];
        let len = expected.len().min(MAX_TAG_LEN);
        self.tag_into(nonce, msg, &mut computed[..len])?;
        Ok(computed[..len].ct_eq(expected).into())
    }

    /// Tag a batch of messages: `batch.msgs[i]` with nonce `batch.nonce(i)` into `batch.tag(i)`.
    ///
    /// The engine's hot loop hands over a few messages per call (one virtual call per batch, not per
    /// message: STYLE §4). This default loops over [`KeyedMac::tag_into`]; being a provided method it
    /// is compiled once per backend type, so `tag_into` is a static call inside it. A multi-buffer
    /// backend (several messages in SIMD lanes) overrides this one method. A refusal of any message
    /// refuses the batch.
    fn tag_batch(&mut self, batch: &mut Batch<'_>) -> TagResult {
        self.tag_each(batch)
    }

    /// Tag a batch one message at a time, each finished before the next starts: `--dispatch single`.
    /// Provided (so compiled per backend, `tag_into` a static call inside) and not to be overridden:
    /// a multi-buffer backend overrides [`KeyedMac::tag_batch`] and keeps this one-at-a-time path.
    fn tag_each(&mut self, batch: &mut Batch<'_>) -> TagResult {
        for i in 0..batch.msgs.len() {
            let (nonce, msg, tag) = batch.item(i);
            self.tag_into(nonce, msg, tag)?;
        }
        Ok(())
    }

    /// Tag a batch keeping at most `depth` messages in the backend's queue, submitting one as each
    /// completes (`--dispatch inflight:N`). Libraries that finish one message per call have no queue:
    /// the default is [`KeyedMac::tag_each`].
    fn tag_inflight(&mut self, batch: &mut Batch<'_>, depth: usize) -> TagResult {
        let _ = depth;
        self.tag_each(batch)
    }

    /// Tag a batch whose descriptors were built before the window (`--dispatch all`, the embedded
    /// study's "all at once"): a device driver keeps the descriptor of each message it has seen and
    /// dispatches the batch as fast as the device takes it. A library has no descriptors to build:
    /// the default is [`KeyedMac::tag_batch`].
    fn tag_prebuilt(&mut self, batch: &mut Batch<'_>) -> TagResult {
        self.tag_batch(batch)
    }

    /// What the calls so far cost the submitting core, where the backend keeps that account (a
    /// look-aside device's driver); `None` for a library that computes in the call.
    fn offload(&self) -> Option<OffloadCounters> {
        None
    }

    /// Take a new key in place, the way the backend changes keys (a device replaces its session and
    /// keeps its queue pair and descriptors); `None` where the backend has no such way, and the
    /// caller keys a new object (`--rekey`, the study's key per op against per session).
    fn rekey(&mut self, _key: &[u8]) -> Option<TagResult> {
        None
    }
}

/// A device driver's account of what its calls cost the submitting core, cumulative since key
/// setup: ops completed, ops built, and TSC cycles spent building ops, in enqueue calls and in
/// dequeue calls (polls that returned nothing included, and counted). Differences of two readings
/// are what a window cost (docs/methodology.md, "What an offload costs the CPU").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OffloadCounters {
    pub ops: u64,
    pub built: u64,
    pub build_cycles: u64,
    pub enqueue_cycles: u64,
    pub dequeue_cycles: u64,
    pub empty_polls: u64,
    /// Ticks per second of the counter the cycles were read from (`rte_get_tsc_hz`: the TSC on
    /// x86-64, the generic timer on ARM64); not a sum.
    pub tick_hz: u64,
}

impl OffloadCounters {
    /// How many counters a shim's `counters` entry writes, in field order.
    pub const FIELDS: usize = 7;

    pub fn from_array(a: [u64; Self::FIELDS]) -> OffloadCounters {
        OffloadCounters {
            ops: a[0],
            built: a[1],
            build_cycles: a[2],
            enqueue_cycles: a[3],
            dequeue_cycles: a[4],
            empty_polls: a[5],
            tick_hz: a[6],
        }
    }

    /// `later - self`, counter by counter (a window's share of two cumulative readings).
    pub fn until(&self, later: &OffloadCounters) -> OffloadCounters {
        OffloadCounters {
            ops: later.ops.saturating_sub(self.ops),
            built: later.built.saturating_sub(self.built),
            build_cycles: later.build_cycles.saturating_sub(self.build_cycles),
            enqueue_cycles: later.enqueue_cycles.saturating_sub(self.enqueue_cycles),
            dequeue_cycles: later.dequeue_cycles.saturating_sub(self.dequeue_cycles),
            empty_polls: later.empty_polls.saturating_sub(self.empty_polls),
            tick_hz: later.tick_hz,
        }
    }

    /// Counter by counter sum (the sessions of a run).
    pub fn plus(&self, other: &OffloadCounters) -> OffloadCounters {
        OffloadCounters {
            ops: self.ops + other.ops,
            built: self.built + other.built,
            build_cycles: self.build_cycles + other.build_cycles,
            enqueue_cycles: self.enqueue_cycles + other.enqueue_cycles,
            dequeue_cycles: self.dequeue_cycles + other.dequeue_cycles,
            empty_polls: self.empty_polls + other.empty_polls,
            tick_hz: self.tick_hz.max(other.tick_hz),
        }
    }
}

/// The [`KeyedMac`] of a type whose library takes a message in pieces in one call,
/// `$tag(&mut self, nonce, chunks, tag) -> TagResult`: `tag_into` is that call with one piece
/// (inlined, so the per-message path is the call itself), `tag_chunks` hands the pieces over, and
/// `streams()` is true. `keyed_by_pieces!(GcmGmac, run)`.
#[macro_export]
#[doc(hidden)]
macro_rules! keyed_by_pieces {
    ($type:ty, $tag:ident) => {
        impl $crate::mac::KeyedMac for $type {
            #[inline]
            fn tag_into(
                &mut self,
                nonce: &[u8],
                msg: &[u8],
                tag: &mut [u8],
            ) -> $crate::mac::TagResult {
                self.$tag(nonce, &[msg], tag)
            }

            fn tag_chunks(
                &mut self,
                nonce: &[u8],
                chunks: &[&[u8]],
                tag: &mut [u8],
            ) -> $crate::mac::TagResult {
                self.$tag(nonce, chunks, tag)
            }

            fn streams(&self) -> bool {
                true
            }
        }
    };
}

/// The [`KeyedMac`] of `$name($hmac::Key)`, an HMAC key of ring's `hmac` API, which aws-lc-rs
/// copies: one message through `$hmac::sign` (the keyed pad states copied by the library), pieces
/// through a `$hmac::Context`. `ring_api_hmac!(RingHmac, ring::hmac)`.
#[macro_export]
#[doc(hidden)]
macro_rules! ring_api_hmac {
    ($name:ident, $($hmac:ident)::+) => {
        impl $crate::mac::KeyedMac for $name {
            #[inline]
            fn tag_into(
                &mut self,
                _nonce: &[u8],
                msg: &[u8],
                tag: &mut [u8],
            ) -> $crate::mac::TagResult {
                let full = $($hmac)::+::sign(&self.0, msg);
                tag.copy_from_slice(&full.as_ref()[..tag.len()]);
                Ok(())
            }

            fn tag_chunks(
                &mut self,
                _nonce: &[u8],
                chunks: &[&[u8]],
                tag: &mut [u8],
            ) -> $crate::mac::TagResult {
                let mut context = $($hmac)::+::Context::with_key(&self.0);
                for chunk in chunks {
                    context.update(chunk);
                }
                tag.copy_from_slice(&context.sign().as_ref()[..tag.len()]);
                Ok(())
            }

            fn streams(&self) -> bool {
                true
            }
        }
    };
}

/// A backend's reason for something it does not offer, where the backend is already named beside
/// it (a function id, "not offered by mbedtls"): the reasons open with the backend's name so that
/// they stand alone in a results row, which there would say it twice.
pub fn reason_after_name<'a>(why: &'a str, backend: &str) -> &'a str {
    why.strip_prefix(backend)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(why)
}

/// The availability of a backend a cargo feature builds: available when `built`, else `not_built`,
/// the reason `list` shows.
pub fn built_or(built: bool, not_built: &str) -> Availability {
    if built {
        Availability::Available
    } else {
        Availability::Unavailable(not_built.to_string())
    }
}

/// Key setup's error for a backend this build left out: the reason its `availability` gives.
pub fn not_built(
    backend: &'static str,
    availability: fn() -> Availability,
    algorithm: &'static str,
) -> MacError {
    MacError::Backend {
        backend,
        algorithm,
        reason: match availability() {
            Availability::Unavailable(why) => why,
            Availability::Available => "not built".to_string(),
        },
    }
}

/// [`KeyedMac::tag_bits`] for a library that takes whole bytes only (the trait's default, and what an
/// override without a bit-length entry point falls back to): `tag_into` when `bits` are whole bytes.
pub fn tag_whole_bytes<M: KeyedMac + ?Sized>(
    mac: &mut M,
    nonce: &[u8],
    msg: &[u8],
    bits: u64,
    tag: &mut [u8],
) -> Result<(), MacError> {
    if bits != 8 * msg.len() as u64 {
        return Err(MacError::WholeBytesOnly { bits });
    }
    mac.tag_into(nonce, msg, tag)?;
    Ok(())
}

/// A job the library refused: its own reason, and the message lengths it was given. Returned by every
/// tagging method of [`KeyedMac`]; never a tag of zeros in its place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the library refused {what}: {reason}")]
pub struct Refused {
    /// What was refused, for the reader: `a 65536-byte message`, `a batch of 4 messages of 64–65536 bytes`.
    pub what: String,
    /// The library's (or shim's) reason, in its words.
    pub reason: String,
}

impl Refused {
    /// What a backend without an incremental interface says to `--dispatch stream`.
    pub fn no_stream() -> Refused {
        Refused {
            what: "a stream".to_string(),
            reason: "this backend takes whole messages only here (no incremental update through macbench), so it cannot be timed as a stream".to_string(),
        }
    }

    /// A refused single message of `len` bytes.
    pub fn message(len: usize, reason: impl Into<String>) -> Refused {
        Refused {
            what: format!("a {len}-byte message"),
            reason: reason.into(),
        }
    }

    /// A refused batch (the library does not say which job of it failed).
    pub fn batch(msgs: &[&[u8]], reason: impl Into<String>) -> Refused {
        let shortest = msgs.iter().map(|m| m.len()).min().unwrap_or(0);
        let longest = msgs.iter().map(|m| m.len()).max().unwrap_or(0);
        let what = match msgs.len() {
            1 => format!("a {longest}-byte message"),
            n if shortest == longest => format!("a batch of {n} messages of {longest} bytes"),
            n => format!("a batch of {n} messages of {shortest}–{longest} bytes"),
        };
        Refused {
            what,
            reason: reason.into(),
        }
    }
}

/// What every message-handling call of [`KeyedMac`] returns: done, or the library's [`Refused`].
pub type TagResult = Result<(), Refused>;

/// What key setup returns: the keyed object, or why there is none.
pub type KeyedResult = Result<Box<dyn KeyedMac>, MacError>;

/// Most messages in one [`Batch`].
pub const MAX_BATCH: usize = 16;

/// The deepest `--dispatch burst:N` / `inflight:N`, and the most messages `--dispatch all` hands over
/// in one call: a device queue's worth (DPDK's `dpdk-test-crypto-perf` bursts up to 128 and queues
/// thousands). Libraries that take fewer per call are handed the batch in pieces they take.
pub const MAX_DEPTH: usize = 256;

/// Messages handed to [`KeyedMac::tag_batch`] in one call, in order.
pub struct Batch<'a> {
    pub msgs: &'a [&'a [u8]],
    /// `msgs.len()` nonces of `nonce_len` bytes each (empty for algorithms without a nonce).
    pub nonces: &'a [u8],
    pub nonce_len: usize,
    /// `msgs.len()` tags of `tag_len` bytes each, written by the backend.
    pub tags: &'a mut [u8],
    pub tag_len: usize,
}

impl Batch<'_> {
    /// Nonce, message and tag buffer of message `i`.
    pub fn item(&mut self, i: usize) -> (&[u8], &[u8], &mut [u8]) {
        (
            &self.nonces[i * self.nonce_len..(i + 1) * self.nonce_len],
            self.msgs[i],
            &mut self.tags[i * self.tag_len..(i + 1) * self.tag_len],
        )
    }
}

/// What to do with each tag (docs/methodology.md §5).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    /// Sender side: compute the tag only.
    None,
    /// Receiver side: compute and compare with the expected tag in constant time, inside the timer.
    Inline,
    /// Keep tags (in a ring) and check them after the window.
    After,
}

/// Result of asking whether a backend can run at all on this machine and build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    Available,
    Unavailable(String),
}

/// Function that performs key setup.
pub type KeyFn = fn(key: &[u8], params: KeyParams<'_>) -> KeyedResult;

/// Key setup of any function, chosen by the caller: [`Function::with_key`] (this process), or the isolation
/// layer's `isolate::key`, which also reaches a switched function's child. What the self-test takes,
/// so the registry checks switched functions without calling up the stack.
pub type KeySetup = fn(&Function, key: &[u8], params: KeyParams<'_>) -> KeyedResult;

/// One algorithm as one backend implements it.
pub struct Entry {
    pub algorithm: &'static str,
    pub accel: Accel,
    pub new: KeyFn,
}

/// A library behind the trait: its entries and how to ask it for its version.
pub struct Backend {
    pub name: &'static str,
    pub description: &'static str,
    pub version: fn() -> String,
    pub availability: fn() -> Availability,
    pub entries: &'static [Entry],
    /// How this library's instruction-set extensions are switched off for a whole process, for `sw`
    /// and the ISA levels it is masked to ([`ProcessSwitch::accels`]); `None` if it registers neither.
    pub process_switch: Option<&'static ProcessSwitch>,
    /// Whether it offers the ISA levels (`sse` … `avx512`), registered as entries of their own.
    pub isa_levels: IsaLevels,
    /// The longest message the library takes for an algorithm, where the library has a limit of its
    /// own below the algorithm's ([`LengthLimit`]); `None` for no such limit.
    pub length_limit: fn(algorithm: &str) -> Option<LengthLimit>,
    /// The nonce lengths the library takes for an algorithm, where fewer than the standard allows
    /// ([`NonceLimit`]); `None` for all of them.
    pub nonce_limit: fn(algorithm: &str) -> Option<NonceLimit>,
    /// The key lengths the library takes for an algorithm, where fewer than the algorithm's
    /// ([`KeyLimit`]); `None` for all of them.
    pub key_limit: fn(algorithm: &str) -> Option<KeyLimit>,
    /// Why `list` shows this backend's `sw` rows as unavailable, for a library with no run-time switch
    /// for its instruction-set extensions (`--accel sw` skips it); `None` where `sw` is an entry or the
    /// library has no accelerated code to switch.
    pub no_software_only: Option<&'static str>,
}

impl Backend {
    /// The facts most backends share: no process switch, no library limits below the algorithm's, no
    /// `sw` reason, no ISA levels. A backend's static names what is its own and takes the rest with
    /// `..Backend::DEFAULT_FACTS`; the name, description, version, availability, ISA-level reason and
    /// entries here are placeholders every backend replaces.
    pub const DEFAULT_FACTS: Backend = Backend {
        name: "",
        description: "",
        version: String::new,
        availability: || Availability::Available,
        entries: &[],
        process_switch: None,
        isa_levels: IsaLevels::NotOffered(""),
        length_limit: no_length_limit,
        nonce_limit: no_nonce_limit,
        key_limit: no_key_limit,
        no_software_only: None,
    };
}

/// A library that takes fewer key lengths than the algorithm (OpenSSL 3's KMAC: at most 512 bytes;
/// libsodium's keyed BLAKE2b: at least 16): a registry fact like [`LengthLimit`], so `list` shows the
/// range this function takes and `tag`, `net` and the self-test refuse or skip other keys up front
/// naming it, rather than pass on the library's own error ([`Function::check_key_len`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyLimit {
    pub min: usize,
    pub max: usize,
    /// The longest KMAC customization string S the library takes, where it bounds it (OpenSSL's
    /// `KMAC_MAX_CUSTOM`); SP 800-185 has no bound.
    pub max_customization: Option<usize>,
    /// Where the limit comes from, for the reader: the library and the rule's name.
    pub source: &'static str,
}

/// [`Backend::key_limit`] of a library that takes every key length the algorithm allows.
pub fn no_key_limit(_algorithm: &str) -> Option<KeyLimit> {
    None
}

/// A library that takes fewer nonce lengths than the algorithm's standard (RustCrypto's `aes-gcm`
/// types are built for 96-bit GMAC IVs only): a registry fact like [`LengthLimit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonceLimit {
    pub min: usize,
    pub max: usize,
    /// Why, for the reader.
    pub source: &'static str,
}

/// [`Backend::nonce_limit`] of a library that takes every nonce length the standard allows.
pub fn no_nonce_limit(_algorithm: &str) -> Option<NonceLimit> {
    None
}

/// A library's own limit on message length for one algorithm (Intel ipsec-mb 1.x: HMAC, CMAC and
/// XCBC jobs of at most 65,534 bytes). A fact of the registry: `list` shows it, a sweep leaves longer
/// sizes out for that function with a note, and `tag`, `net` and a run of only such sizes refuse up
/// front naming it ([`Function::length_rule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthLimit {
    pub max_bytes: u64,
    /// Where the limit comes from, for the reader: the library, its version and the rule's name.
    pub source: &'static str,
}

/// [`Backend::length_limit`] of a library with no limit of its own.
pub fn no_length_limit(_algorithm: &str) -> Option<LengthLimit> {
    None
}

/// The one table of backends; `list`, `selftest` and the tests walk it. A backend over an optional
/// system library is registered by its row in `build/libraries.rs` alone (build.rs declares its module
/// and places it here, in the rows' order, between OpenSSL and ring); any other backend is one line here
/// and its `mod` above (docs/functions.md "Adding a backend").
///
/// Order is preference: without `--backend`, a run takes the first available backend of each algorithm
/// and acceleration. Crypto++ precedes RustCrypto so that CMAC-Twofish/Serpent/RC6 get `hw` and `sw` from
/// the same library (RustCrypto has no `sw`), as docs/methodology.md §1 defines the pair. Mbed TLS
/// implements nothing OpenSSL lacks, so its place after Crypto++ changes no default. ipsec-mb comes after
/// Nettle and before RustCrypto: it is the default only for AES-XCBC-MAC-96, which OpenSSL lacks.
/// The second OpenSSL (`openssl4`) comes late, so that a function's pre-flight reference (the first
/// other backend with it) is another library's code, not the system OpenSSL's newer release.
pub static BACKENDS: &[&Backend] = with_system_library_backends!(
    [&openssl::BACKEND],
    [
        &ring::BACKEND,
        &aws_lc::BACKEND,
        &openssl4::BACKEND,
        &rustcrypto::BACKEND,
        &null::BACKEND,
    ]
);

/// Backends named for an algorithm that none implements yet, with the reason `list` shows.
#[cfg(have_cryptopp)]
pub static PLANNED: &[(&str, &str, &str)] = &[];

/// Backends named for an algorithm that none implements yet, with the reason `list` shows.
#[cfg(not(have_cryptopp))]
pub static PLANNED: &[(&str, &str, &str)] = &[
    (
        "vmac-aes128-64",
        "cryptopp",
        "VMAC comes only with the Crypto++ backend, which is not built: install libcrypto++-dev and rebuild",
    ),
    (
        "vmac-aes128-128",
        "cryptopp",
        "VMAC comes only with the Crypto++ backend, which is not built: install libcrypto++-dev and rebuild",
    ),
];

/// The identity of a function as results files record it: `algorithm/backend/accel`. Names, not registry
/// entries, so a file from another build (or naming a backend this one lacks) still reads; reports join
/// results on this, never on a joined string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionId {
    pub algorithm: String,
    pub backend: String,
    pub accel: String,
}

impl fmt::Display for FunctionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.algorithm, self.backend, self.accel)
    }
}

impl std::str::FromStr for FunctionId {
    type Err = String;

    /// `algorithm/backend/accel`, each part non-empty.
    fn from_str(text: &str) -> Result<FunctionId, String> {
        let parts: Vec<&str> = text.split('/').collect();
        match parts[..] {
            [algorithm, backend, accel]
                if !algorithm.is_empty() && !backend.is_empty() && !accel.is_empty() =>
            {
                Ok(FunctionId {
                    algorithm: algorithm.to_string(),
                    backend: backend.to_string(),
                    accel: accel.to_string(),
                })
            }
            _ => Err(format!(
                "{text:?} is not a function id; expected algorithm/backend/accel, e.g. hmac-sha256/openssl/hw"
            )),
        }
    }
}

/// A function: algorithm × backend × acceleration, ready to key.
#[derive(Clone, Copy)]
pub struct Function {
    pub algorithm: &'static Algorithm,
    pub backend: &'static Backend,
    pub accel: Accel,
    new: KeyFn,
    /// Set on the rows [`functions`] adds so that nothing is missing in silence: `sw` of a backend
    /// without a run-time switch ([`Backend::no_software_only`]), an ISA level of a backend that offers none
    /// ([`IsaLevels::NotOffered`]). Why not.
    not_offered: Option<&'static str>,
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.id())
    }
}

impl Function {
    /// `algorithm/backend/accel`, the identity used in reports.
    pub fn id(&self) -> String {
        self.function_id().to_string()
    }

    /// The typed identity a results entry records.
    pub fn function_id(&self) -> FunctionId {
        FunctionId {
            algorithm: self.algorithm.name.to_string(),
            backend: self.backend.name.to_string(),
            accel: self.accel.to_string(),
        }
    }

    /// Key setup in this process: validate the key length, then let the backend precompute. A
    /// switched function ([`Self::is_process_switched`]) keys only in the process switched to its
    /// acceleration; `isolate::key` keys any function wherever it runs.
    pub fn with_key(&self, key: &[u8], params: KeyParams<'_>) -> KeyedResult {
        self.check_key_len(key.len())?;
        if self.accel.is_isa_level() && !cfg!(target_arch = "x86_64") {
            return Err(MacError::Backend {
                backend: self.backend.name,
                algorithm: self.algorithm.name,
                reason: NO_ISA_LEVELS_HERE.to_string(),
            });
        }
        if self.is_process_switched() {
            // Keys itself only in its acceleration's own process ([`switch`]); the isolation layer
            // (`isolate::key`) gives everyone else a proxy to an object there.
            return switch::key(self, self.new, key, params);
        }
        // `hw`, or an ISA level keyed in this process: the backend's key function initialises its
        // code path for that level and checks the library reports using it (ipsec-mb).
        (self.new)(key, params)
    }

    /// Whether this function runs only in a process switched to its acceleration: `sw` or an ISA
    /// level its backend's [`ProcessSwitch`] covers. The isolation layer runs such a function's
    /// scenarios and keys its objects in that acceleration's child process.
    pub fn is_process_switched(&self) -> bool {
        self.not_offered.is_none()
            && self
                .backend
                .process_switch
                .is_some_and(|s| s.covers(self.accel))
    }

    /// This function with its backend's length limit lifted: what a run would do if the registry did
    /// not know the limit. For the tests that prove the engine catches a refused job by itself (the
    /// registry's limit is the first line of defence, each job's status the second); leaks one
    /// [`Backend`] value per call.
    #[doc(hidden)]
    pub fn without_length_limit(self) -> Function {
        let backend: &'static Backend = Box::leak(Box::new(Backend {
            length_limit: no_length_limit,
            ..*self.backend
        }));
        Function { backend, ..self }
    }

    /// The backend library's own limit on key length for this algorithm, if it has one.
    pub fn key_limit(&self) -> Option<KeyLimit> {
        (self.backend.key_limit)(self.algorithm.name)
    }

    /// Whether this function takes a key of `len` bytes: the algorithm's lengths, narrowed by the
    /// library's own limit.
    pub fn accepts_key_len(&self, len: usize) -> bool {
        self.algorithm.key_lengths.accepts(len)
            && self
                .key_limit()
                .is_none_or(|l| (l.min..=l.max).contains(&len))
    }

    /// The key lengths this function takes, as `list` shows them: `16–1024`, or `16–512` where the
    /// library takes fewer.
    pub fn describe_key_lengths(&self) -> String {
        match self.key_limit() {
            Some(l) => self.algorithm.key_lengths.describe_within(l.min, l.max),
            None => self.algorithm.key_lengths.describe(),
        }
    }

    /// A key of `len` bytes refused with the rule it breaks: the algorithm's ([`MacError::KeyLength`]),
    /// or the library's narrower one, named ([`MacError::KeyLimit`]).
    pub fn check_key_len(&self, len: usize) -> Result<(), MacError> {
        if !self.algorithm.key_lengths.accepts(len) {
            return Err(MacError::KeyLength {
                algorithm: self.algorithm.name,
                got: len,
                accepted: self.algorithm.key_lengths.describe(),
            });
        }
        match self.key_limit() {
            Some(limit) if !(limit.min..=limit.max).contains(&len) => Err(MacError::KeyLimit {
                function: self.id(),
                got: len,
                accepted: self.describe_key_lengths(),
                why: limit.source,
            }),
            _ => Ok(()),
        }
    }

    /// The backend library's own limit on message length for this algorithm, if it has one.
    pub fn length_limit(&self) -> Option<LengthLimit> {
        (self.backend.length_limit)(self.algorithm.name)
    }

    /// Whether this function takes a message of `bytes` bytes: the algorithm's rule (the 3GPP
    /// functions' bounded lengths), narrowed by the library's own limit.
    pub fn accepts_bytes(&self, bytes: u64) -> bool {
        self.algorithm.message_bits.accepts_bytes(bytes)
            && self.length_limit().is_none_or(|l| bytes <= l.max_bytes)
    }

    /// The message lengths this function takes, as every refusal says it: the algorithm's rule, or,
    /// where the library's limit is tighter, `hmac-sha256 through ipsecmb takes messages of at most
    /// 65534 bytes (Intel ipsec-mb …)`.
    pub fn length_rule(&self) -> String {
        let algorithm = self.algorithm;
        match self.length_limit() {
            Some(limit) if limit.max_bytes < algorithm.message_bits.max / 8 => format!(
                "{} through {} takes messages of at most {} bytes ({})",
                algorithm.name, self.backend.name, limit.max_bytes, limit.source
            ),
            _ => algorithm.length_rule(),
        }
    }

    /// The nonce lengths this function takes: the algorithm's rule ([`Algorithm::nonce_rule`]),
    /// narrowed by the library's own limit; `None` for no nonce.
    pub fn nonce_rule(&self) -> Option<NonceRule> {
        let rule = self.algorithm.nonce_rule()?;
        Some(match (self.backend.nonce_limit)(self.algorithm.name) {
            Some(limit) => NonceRule {
                min: rule.min.max(limit.min),
                max: rule.max.min(limit.max),
                // The top-bit rule is about the algorithm's full length only.
                below_2_127: rule.below_2_127 && limit.max >= rule.max,
                ..rule
            },
            None => rule,
        })
    }

    /// What this function's nonce rule says, naming the library's narrower limit where it has one.
    fn describe_nonces(&self, rule: &NonceRule) -> String {
        match (self.backend.nonce_limit)(self.algorithm.name) {
            Some(limit) => format!("{} ({})", rule.describe(), limit.source),
            None => rule.describe(),
        }
    }

    /// Check a user-supplied nonce against this function's rule.
    pub fn check_nonce(&self, nonce: Option<&[u8]>) -> Result<(), MacError> {
        let algorithm = self.algorithm.name;
        match (self.nonce_rule(), nonce) {
            (None, None) => Ok(()),
            (None, Some(_)) => Err(MacError::NonceNotUsed { algorithm }),
            (Some(rule), nonce) => match rule.check(nonce.unwrap_or(&[])) {
                None => Ok(()),
                Some(why) => Err(MacError::Nonce {
                    function: self.id(),
                    accepted: self.describe_nonces(&rule),
                    why: if nonce.is_none() {
                        "none given".to_string()
                    } else {
                        why
                    },
                }),
            },
        }
    }

    /// Whether this row is an ISA level its backend does not offer at all (one of the rows
    /// [`functions`] adds so nothing is missing in silence, or any level off x86-64), as opposed to a
    /// level the backend offers and this CPU lacks. `list` and `selftest` summarise these rows.
    pub fn is_level_not_offered(&self) -> bool {
        self.accel.is_isa_level() && (self.not_offered.is_some() || !cfg!(target_arch = "x86_64"))
    }

    /// Whether this function can run here: the backend's own availability; for `sw` whether its
    /// switches can be applied from this process ([`switch`]: the architecture, not another
    /// acceleration's child); for an ISA level whether this is x86-64 and the CPU runs that level, as
    /// the backend's library reports it, and for a masked level also the same as for `sw`.
    pub fn availability(&self) -> Availability {
        // A backend that is not built says so on every row, the rows of variants it lacks included:
        // installing the library is the first thing to do.
        match (self.backend.availability)() {
            Availability::Available => {}
            other => return other,
        }
        if self.accel.is_isa_level() && !cfg!(target_arch = "x86_64") {
            return Availability::Unavailable(NO_ISA_LEVELS_HERE.to_string());
        }
        if let Some(why) = self.not_offered {
            return Availability::Unavailable(match self.accel.is_isa_level() {
                true => with_level_offerers(why),
                false => why.to_string(),
            });
        }
        let here = match (self.accel, self.backend.isa_levels) {
            (Accel::Hw, _) => Availability::Available,
            (Accel::Sw, _) => Availability::Available,
            (level, IsaLevels::Offered(on_this_cpu)) => on_this_cpu(level),
            (_, IsaLevels::NotOffered(why)) => Availability::Unavailable(with_level_offerers(why)),
        };
        match here {
            Availability::Available if self.is_process_switched() => {
                switch::availability(self.accel)
            }
            other => other,
        }
    }
}

/// Every registered function, in registry order (algorithm order of `ALGORITHMS`, then backend order;
/// within a backend by acceleration: `hw`, `sw`, then the ISA levels up the ladder).
///
/// Nothing is left out in silence: a backend with [`Backend::no_software_only`] gets an unavailable `sw`
/// row for each algorithm it implements, and a backend whose [`IsaLevels`] is `NotOffered` an
/// unavailable row per ISA level, each saying why, so `list` and `--accel` can tell the user.
pub fn functions() -> Vec<Function> {
    let mut out = Vec::new();
    for algorithm in ALGORITHMS {
        for backend in BACKENDS {
            let entries: Vec<&Entry> = backend
                .entries
                .iter()
                .filter(|e| e.algorithm == algorithm.name)
                .collect();
            if entries.is_empty() {
                continue;
            }
            let mut group: Vec<Function> = entries
                .iter()
                .map(|entry| Function {
                    algorithm,
                    backend,
                    accel: entry.accel,
                    new: entry.new,
                    not_offered: None,
                })
                .collect();
            let mut missing: Vec<(Accel, &'static str)> = Vec::new();
            if let Some(why) = backend.no_software_only {
                missing.push((Accel::Sw, why));
            }
            if let IsaLevels::NotOffered(why) = backend.isa_levels {
                missing.extend(Accel::LEVELS.iter().map(|&level| (level, why)));
            }
            for (accel, why) in missing {
                if entries.iter().any(|e| e.accel == accel) {
                    continue;
                }
                group.push(Function {
                    algorithm,
                    backend,
                    accel,
                    new: key_not_offered,
                    not_offered: Some(why),
                });
            }
            // hw, sw, then the levels up the ladder, whichever are entries and whichever added.
            group.sort_by_key(|f| f.accel);
            out.extend(group);
        }
    }
    out
}

/// A backend's reason for offering no ISA level, and which backends do offer them (read from
/// [`BACKENDS`], so no backend's sentence names the others).
fn with_level_offerers(why: &str) -> String {
    let offered: Vec<&str> = BACKENDS
        .iter()
        .filter(|b| matches!(b.isa_levels, IsaLevels::Offered(_)))
        .map(|b| b.name)
        .collect();
    match offered.split_last() {
        Some((last, [])) => format!("{why}; ISA levels are offered by {last}"),
        Some((last, rest)) => {
            format!(
                "{why}; ISA levels are offered by {} and {last}",
                rest.join(", ")
            )
        }
        None => why.to_string(),
    }
}

/// Key function of the rows [`functions`] adds for variants a backend lacks.
fn key_not_offered(_: &[u8], _: KeyParams<'_>) -> KeyedResult {
    Err(MacError::Backend {
        backend: "-",
        algorithm: "-",
        reason: "this backend does not offer this acceleration (see `macbench list`)".to_string(),
    })
}

/// Look a backend up by name.
pub fn backend(name: &str) -> Option<&'static Backend> {
    BACKENDS.iter().copied().find(|b| b.name == name)
}

/// The candidate nearest to a mistyped name, for "did you mean" hints: edit distance with adjacent
/// transpositions (the `strsim` crate's optimal string alignment) of at most a third of the name's
/// length (at least 1), so `hmac-sha265` suggests `hmac-sha256` (one swap) rather than `hmac-sha224`
/// (two substitutions), while `foo` suggests nothing rather than the unrelated preset `all`.
pub fn nearest<'a>(wrong: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (wrong.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(wrong, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
