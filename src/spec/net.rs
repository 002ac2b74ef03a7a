//! The vocabulary of `macbench net`: loss, resolution, rates, addresses, packet sizes and receive
//! buffers, parsed with messages that name the flag (the bounds themselves live in `net::limits`, shared
//! with what `net receive` accepts from a remote sender).

use super::SpecError;
use crate::net::bench::SizeSpec;
use crate::net::limits;
use crate::net::wire::{HEADER_LEN, MAX_PACKET_LEN};
use crate::net::DEFAULT_SIZES;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;

/// A ratio typed as a fraction (`0.01`, `1e-5`) or a percentage (`1%`); `None` when it is not a finite
/// number. The range each flag takes is its caller's.
fn fraction_or_percent(text: &str) -> Option<f64> {
    let t = text.trim();
    let (number, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() => Some(v * scale),
        _ => None,
    }
}

/// Parse `--loss`: `0`, `0.001%`, `1e-5`. Returns a ratio in `0..1`.
pub fn parse_loss(text: &str) -> Result<f64, SpecError> {
    match fraction_or_percent(text) {
        Some(r) if (0.0..1.0).contains(&r) => Ok(r),
        _ => Err(SpecError::new(format!(
            "--loss: {text:?} is not an acceptable loss; give 0, a percentage below 100 (0.001%) or a fraction below 1 (1e-5)"
        ))),
    }
}

/// Parse `--resolution`: `1%` or `0.01`, in `(0, 50 %]`.
pub fn parse_resolution(text: &str) -> Result<f64, SpecError> {
    match fraction_or_percent(text) {
        Some(r) if r > 0.0 && r <= 0.5 => Ok(r),
        _ => Err(SpecError::new(format!(
            "--resolution: {text:?} is not a resolution; give a percentage of the maximum rate above 0 and at most 50% (1%, 0.5%)"
        ))),
    }
}

pub fn parse_rate(text: &str) -> Result<f64, SpecError> {
    match text.trim().parse::<f64>() {
        Ok(v) if (1.0..=1e9).contains(&v) => Ok(v),
        _ => Err(SpecError::new(format!(
            "--rate: {text:?} is not a packet rate; give packets per second from 1 to 1e9, e.g. 2000"
        ))),
    }
}

/// Resolve `ADDR:PORT` for `flag`.
pub fn parse_addr(flag: &str, text: &str) -> Result<SocketAddr, SpecError> {
    let bad = |why: String| {
        SpecError::new(format!(
            "{flag}: {text:?} is not an address: {why}; give HOST:PORT, e.g. 192.0.2.7:7300 or [::1]:7300"
        ))
    };
    text.to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("it resolves to nothing".to_string()))
}

/// Parse `--sizes` into size specs; `min_len` is the smallest valid packet (header + tag). The
/// vocabulary is `run`'s ([`super::parse_sizes`]: numbers, ranges of powers of two such as
/// `64..1024`, models); here each fixed size must fit one UDP datagram with the header and tag, and a
/// model's sizes are taken as datagram sizes, the few below header + tag raised to it.
pub fn parse_sizes(text: &str, seed: u64, min_len: usize) -> Result<Vec<SizeSpec>, SpecError> {
    let mut out: Vec<SizeSpec> = Vec::new();
    let sources = if text.split(',').all(|t| t.trim().is_empty()) {
        Vec::new()
    } else {
        super::parse_sizes(text, seed)?
    };
    for source in sources {
        match source {
            crate::engine::SizeSource::Fixed { size } => {
                let n = size as usize;
                limits::check_packet_size("--sizes", n, min_len).map_err(|e| {
                    SpecError::new(format!(
                        "{e}; a packet is a {HEADER_LEN}-byte header + payload + tag"
                    ))
                })?;
                out.push(SizeSpec {
                    label: n.to_string(),
                    bytes: Some(size),
                    sequence: Arc::new(vec![size]),
                    mean_bytes: n as f64,
                });
            }
            crate::engine::SizeSource::Model { name, sequence, .. } => {
                let sequence: Vec<u32> = sequence
                    .iter()
                    .map(|&s| s.clamp(min_len as u32, MAX_PACKET_LEN as u32))
                    .collect();
                let mean = sequence.iter().map(|&s| f64::from(s)).sum::<f64>()
                    / sequence.len().max(1) as f64;
                out.push(SizeSpec {
                    label: name,
                    bytes: None,
                    sequence: Arc::new(sequence),
                    mean_bytes: mean,
                });
            }
        }
    }
    if out.is_empty() {
        return Err(SpecError::new(format!(
            "--sizes names no size; give e.g. {}",
            super::comma_list(DEFAULT_SIZES)
        )));
    }
    Ok(out)
}

/// Parse `--rcvbuf`: bytes with an optional binary suffix `k`, `m` or `g` (any case, `KiB`, `MiB`,
/// `GiB` too: 1024, 1024², 1024³), or `default`.
pub fn parse_rcvbuf(text: &str) -> Result<Option<usize>, SpecError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("default") {
        return Ok(None);
    }
    let lower = t.to_ascii_lowercase();
    let unit = lower.strip_suffix("ib").unwrap_or(&lower);
    let (number, shift) = match unit.char_indices().last() {
        Some((i, 'k')) => (&unit[..i], 10),
        Some((i, 'm')) => (&unit[..i], 20),
        Some((i, 'g')) => (&unit[..i], 30),
        _ => (lower.as_str(), 0),
    };
    if t.starts_with('-') {
        return Err(SpecError::new(format!(
            "--rcvbuf: {text:?} is negative; give bytes from 1 to 1G, e.g. 4M, 256k, 212992, or default"
        )));
    }
    match number.trim().parse::<usize>() {
        Ok(v) => limits::check_rcvbuf("--rcvbuf", v.saturating_mul(1 << shift))
            .map(Some)
            .map_err(|e| SpecError::new(format!("{e}, e.g. 4M, 256k, 212992, or default"))),
        _ => Err(SpecError::new(format!(
            "--rcvbuf: {text:?} is not a buffer size; give bytes up to 1G with an optional k, m or g (binary, any case), e.g. 4M, 256k, 212992, or default"
        ))),
    }
}
