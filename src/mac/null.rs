//! The null function: touches the message and computes nothing, so the harness can measure itself
//! (docs/methodology.md §2: "Harness overhead is itself measured with a null function").

use super::{
    Accel, Availability, Backend, Entry, IsaLevels, KeyParams, KeyedMac, KeyedResult, TagResult,
};

/// Why `list` shows this backend's ISA-level rows (`sse` … `avx512`) as unavailable.
pub const NO_ISA_LEVELS: &str = "null: computes nothing, so has no code path to choose";

pub static BACKEND: Backend = Backend {
    name: "null",
    description: "no MAC: reads one byte per message to measure the harness",
    version: || env!("CARGO_PKG_VERSION").to_string(),
    availability: || Availability::Available,
    isa_levels: IsaLevels::NotOffered(NO_ISA_LEVELS),
    entries: &[Entry {
        algorithm: "null",
        accel: Accel::Hw,
        new: new_null,
    }],
    ..Backend::DEFAULT_FACTS
};

/// The null function, the harness baseline, found by its backend rather than by a name string.
pub fn function() -> super::Function {
    super::functions()
        .into_iter()
        .find(|f| std::ptr::eq(f.backend, &BACKEND) && f.accel == Accel::Hw)
        .expect("the null backend is in BACKENDS and always available")
}

fn new_null(_key: &[u8], _: KeyParams<'_>) -> KeyedResult {
    Ok(Box::new(NullMac))
}

struct NullMac;

impl KeyedMac for NullMac {
    #[inline]
    fn tag_into(&mut self, _nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        // Touch the first byte and the length. The result is stored into the caller's tag buffer, which
        // the optimiser must keep, so the read cannot be removed (no `black_box` needed, and it would
        // add a store-to-load round trip to every message).
        let first = msg.first().copied().unwrap_or(0);
        if let Some(t) = tag.first_mut() {
            *t = first ^ msg.len() as u8;
        }
        Ok(())
    }
}
