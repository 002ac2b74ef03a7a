//! What `macbench net` accepts, in one place for both of its doors: the command line (`--replay-window`,
//! `--tag-len`, `--trial`, `--rcvbuf`) and the `start` message a remote sender puts on the control channel
//! of `macbench net receive`.
//!
//! The receiver allocates and slices by these numbers (a replay bitmap of `replay_window / 64` words, the
//! tag as the last `tag_len` bytes of a datagram, a buffer the kernel is asked for), so a value that
//! passes the command line but not the wire, or the other way round, is either a crash or a refusal
//! the user cannot explain. Each check takes the name of the field at fault (`--tag-len` on the command
//! line, `tag_len` on the wire) so its error names what to change.

use super::wire::MAX_PACKET_LEN;
use crate::mac::{Algorithm, Function, MAX_TAG_LEN};
use std::ops::RangeInclusive;
use std::time::Duration;

/// Anti-replay window sizes offered, in packets (RFC 4303 §3.4.3: 64 is the recommended default; 1024
/// is what high-rate IPsec gateways use). The largest is the documented maximum.
pub const REPLAY_WINDOWS: &[u64] = &[64, 1024];
/// Largest anti-replay window, in packets.
pub const MAX_REPLAY_WINDOW: u64 = 1024;
/// Longest trial, as `--trial` and `duration_ms` (one day).
pub const MAX_TRIAL: Duration = Duration::from_secs(86_400);
/// Shortest trial: the control channel carries whole milliseconds.
pub const MIN_TRIAL: Duration = Duration::from_millis(1);
/// Largest receive buffer that may be asked for (`--rcvbuf`, `rcvbuf`), in bytes.
pub const MAX_RCVBUF: usize = 1 << 30;
/// Most datagrams per system call (`--batch`, `batch`): the kernel's `UIO_MAXIOV`.
pub const MAX_BATCH: usize = super::batch_io::MAX_BATCH;
/// SPIs below this are reserved (RFC 4303 §2.1: 0 for local use, 1 … 255 by IANA).
pub const MIN_SPI: u32 = 256;

/// A value outside what `macbench net` accepts. `field` is the flag or the control-message field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("{field}: {got} packets is not offered; give 64 or 1024")]
    ReplayWindow { field: &'static str, got: u64 },
    #[error("{field}: {got} bytes; give 1 to {MAX_TAG_LEN}")]
    TagLen { field: &'static str, got: usize },
    #[error("{field} {got}: {algorithm} produces only {max}-byte tags; give at most {max}")]
    TagLongerThanAlgorithm {
        field: &'static str,
        got: usize,
        algorithm: &'static str,
        max: usize,
    },
    #[error("{field}: {got_ms} ms is not a trial length; give 1 ms to 86400 s")]
    Trial { field: &'static str, got_ms: u128 },
    #[error("{field}: {got} bytes; give 1 byte to 1G (1073741824)")]
    Rcvbuf { field: &'static str, got: usize },
    #[error(
        "{field}: {got} datagrams per system call; give 1 (one call per datagram) to {MAX_BATCH}"
    )]
    Batch { field: &'static str, got: usize },
    #[error("{field}: {got} is a reserved SPI (RFC 4303: 0 to 255); give {MIN_SPI} or more")]
    Spi { field: &'static str, got: u32 },
    #[error("{field}: {got} bytes is outside {min}..={MAX_PACKET_LEN} (header + tag to one UDP datagram)")]
    PacketSize {
        field: &'static str,
        got: usize,
        min: usize,
    },
}

pub fn check_replay_window(field: &'static str, window: u64) -> Result<u64, LimitError> {
    if REPLAY_WINDOWS.contains(&window) {
        Ok(window)
    } else {
        Err(LimitError::ReplayWindow { field, got: window })
    }
}

/// Tag bytes per packet: 1 … [`MAX_TAG_LEN`], and no more than `algorithm` produces when it is given
/// (the null function carries any length, to share the packet layout of the MACs it is compared with).
pub fn check_tag_len(
    field: &'static str,
    tag_len: usize,
    algorithm: Option<&Algorithm>,
) -> Result<usize, LimitError> {
    if tag_len == 0 || tag_len > MAX_TAG_LEN {
        return Err(LimitError::TagLen {
            field,
            got: tag_len,
        });
    }
    // The one rule of every command (`Algorithm::max_tag_len`): truncations up to the algorithm's
    // tag, KMAC's output length up to MAX_TAG_LEN.
    match algorithm {
        Some(a) if tag_len > a.max_tag_len() => Err(LimitError::TagLongerThanAlgorithm {
            field,
            got: tag_len,
            algorithm: a.name,
            max: a.max_tag_len(),
        }),
        _ => Ok(tag_len),
    }
}

/// `value` when `range` holds it, else the error `outside` makes of it.
fn within<T: PartialOrd>(
    value: T,
    range: RangeInclusive<T>,
    outside: impl FnOnce(T) -> LimitError,
) -> Result<T, LimitError> {
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(outside(value))
    }
}

pub fn check_trial(field: &'static str, trial: Duration) -> Result<Duration, LimitError> {
    within(trial, MIN_TRIAL..=MAX_TRIAL, |got| LimitError::Trial {
        field,
        got_ms: got.as_millis(),
    })
}

pub fn check_rcvbuf(field: &'static str, bytes: usize) -> Result<usize, LimitError> {
    within(bytes, 1..=MAX_RCVBUF, |got| LimitError::Rcvbuf {
        field,
        got,
    })
}

pub fn check_batch(field: &'static str, batch: usize) -> Result<usize, LimitError> {
    within(batch, 1..=MAX_BATCH, |got| LimitError::Batch { field, got })
}

pub fn check_spi(field: &'static str, spi: u32) -> Result<u32, LimitError> {
    within(spi, MIN_SPI..=u32::MAX, |got| LimitError::Spi {
        field,
        got,
    })
}

/// A packet size (UDP payload bytes): at least header + tag (`min`), at most one datagram.
pub fn check_packet_size(
    field: &'static str,
    size: usize,
    min: usize,
) -> Result<usize, LimitError> {
    within(size, min..=MAX_PACKET_LEN, |got| LimitError::PacketSize {
        field,
        got,
        min,
    })
}

/// The MAC covers the datagram but its tag; the 3GPP functions take bounded lengths, and a length
/// the library refuses would leave zero tags on both sides that "verify".
pub fn check_covered_lengths(
    functions: &[Function],
    sizes: &[super::sender::SizeSpec],
    tag_len: usize,
) -> Result<(), String> {
    for f in functions {
        for size in sizes {
            let shortest = size.sequence.iter().min().copied().unwrap_or(0) as usize;
            let longest = size.sequence.iter().max().copied().unwrap_or(0) as usize;
            for covered in [shortest, longest].map(|n| n.saturating_sub(tag_len)) {
                if !f.accepts_bytes(covered as u64) {
                    return Err(format!(
                        "--sizes {}: {}, and a datagram of this size has {covered} bytes under its {tag_len}-byte tag",
                        size.label,
                        f.length_rule()
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_inclusive_and_errors_name_the_field() {
        assert_eq!(check_replay_window("w", 64), Ok(64));
        assert_eq!(check_replay_window("w", MAX_REPLAY_WINDOW), Ok(1024));
        let e = check_replay_window("replay_window", 1 << 40).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("replay_window: 1099511627776 packets"));
        let sha256 = crate::mac::algorithm("hmac-sha256").unwrap();
        let null = crate::mac::algorithm("null").unwrap();
        assert_eq!(check_tag_len("t", 32, Some(sha256)), Ok(32));
        assert!(check_tag_len("tag_len", 33, Some(sha256))
            .unwrap_err()
            .to_string()
            .contains("32-byte tags"));
        assert_eq!(check_tag_len("t", 64, Some(null)), Ok(64));
        assert!(check_tag_len("t", 65, Some(null)).is_err());
        assert!(check_tag_len("t", 0, None).is_err());
        assert!(check_trial("t", Duration::from_micros(999)).is_err());
        assert!(check_trial("t", MAX_TRIAL).is_ok());
        assert!(check_trial("t", MAX_TRIAL + Duration::from_millis(1)).is_err());
        assert!(check_rcvbuf("r", 0).is_err());
        assert!(check_rcvbuf("r", MAX_RCVBUF).is_ok());
        assert!(check_batch("b", 0).is_err());
        assert_eq!(check_batch("b", 1), Ok(1));
        assert_eq!(check_batch("b", MAX_BATCH), Ok(MAX_BATCH));
        assert!(check_batch("batch", MAX_BATCH + 1)
            .unwrap_err()
            .to_string()
            .starts_with("batch: 1025 datagrams per system call"));
        assert!(check_spi("spi", 255).is_err());
        assert!(check_spi("spi", 256).is_ok());
        assert!(check_packet_size("s", 27, 28).is_err());
        assert!(check_packet_size("s", MAX_PACKET_LEN + 1, 28).is_err());
    }
}
