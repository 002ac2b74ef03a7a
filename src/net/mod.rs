//! Protocol-level zero-loss throughput (docs/methodology.md §8, Waters): MACs on a real packet path.
//!
//! `macbench run` measures what a MAC costs per byte on a CPU. A network operator asks something else:
//! how many authenticated packets per second a receiver accepts *without losing any*. That number
//! includes the socket path, the copy, the anti-replay check and scheduling, and at small packets those
//! overheads, not the MAC, decide it (Waters: at small sizes software overheads "overwhelm
//! algorithm-specific performance differences"). So this module measures the MAC inside a minimal
//! ESP-like protocol over UDP, with the `null` MAC on the same path as the yardstick: the gap between a
//! function and `null` is what the MAC costs the protocol.
//!
//! How it is cut:
//! - [`wire`]: the packet format (SPI, 64-bit sequence number, payload, truncated tag over header and
//!   payload) and its parser, which never panics and names what is wrong with a packet.
//! - [`receiver`]: parse → anti-replay check (RFC 4303 §3.4.3 sliding window, 64 or 1024) → verify the
//!   tag with the registry's constant-time `KeyedMac::verify` → advance the window → count. Only a packet
//!   that passed everything is *delivered*; forged, truncated, replayed, too-old and foreign-SPI packets
//!   each have their own counter.
//! - [`sender`]: builds packets from a payload pool with sizes from a fixed size or a pre-drawn size-model
//!   sequence, paces them (batch + sleep/spin) at an offered rate, measures the rate it achieved, and
//!   with `--inject-bad` mixes in forged, truncated and replayed packets whose fate it predicts.
//! - [`batch_io`]: `sendmmsg`/`recvmmsg`, many datagrams per system call (`--batch`), into slots
//!   allocated once per trial; a batch of 1 is the one-call-per-packet path, so batching's effect
//!   is measured by one flag.
//! - [`search`]: RFC 2544 throughput as pure logic over a trial function (binary search between 0 and
//!   the unthrottled rate, acceptable loss, resolution), tested on synthetic loss curves.
//! - [`trial`]: one trial in this process: a receiver and a sender thread on their own cores, over
//!   loopback or through [`netns`] (two namespaces joined by veth, made and removed by macbench).
//! - [`control`]: the same trial between two hosts, the receiver reporting its counts over TCP.
//! - [`limits`]: the bounds on every value either end accepts, shared by the command line and the
//!   control channel.
//! - [`bench`] runs functions × sizes (null first, as the baseline) and [`report`] prints and exports.
//!
//! Sizes mean the whole UDP payload — our 12-byte header, payload and tag — not the IP or Ethernet frame.
//! The default sizes 64 … 1518 are the frame sizes labs use (RFC 2544 §9), taken as datagram sizes.
//! Every loop is bounded in packets and time, and traffic only ever goes to loopback, to namespaces
//! macbench created, or to the address the user gave `net send --to`.

pub mod batch_io;
pub mod bench;
pub mod control;
pub mod limits;
pub mod netns;
pub mod receiver;
pub mod report;
pub mod search;
pub mod sender;
pub mod trial;
pub mod wire;

/// Errors of this module: `Usage` for things the user can fix by changing the command line or the
/// environment it asked for, `Failure` for what went wrong while running.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Failure(String),
}

impl From<crate::mac::MacError> for NetError {
    fn from(e: crate::mac::MacError) -> Self {
        match e {
            crate::mac::MacError::Backend { .. } => NetError::Failure(e.to_string()),
            _ => NetError::Usage(e.to_string()),
        }
    }
}

impl From<sender::PrepareError> for NetError {
    fn from(e: sender::PrepareError) -> Self {
        match e {
            sender::PrepareError::Memory { .. } => NetError::Usage(e.to_string()),
            sender::PrepareError::Refused(r) => NetError::Failure(format!("sender: {r}")),
            sender::PrepareError::Cancelled => NetError::Failure(e.to_string()),
        }
    }
}

/// Default sizes: frame-size-like datagram sizes (bytes of UDP payload).
pub const DEFAULT_SIZES: &[u32] = &[64, 128, 256, 512, 1024, 1280, 1518];
