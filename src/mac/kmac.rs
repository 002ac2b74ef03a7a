//! KMAC128 and KMAC256 (NIST SP 800-185 §4) written from the standard over the Keccak-f[1600]
//! permutation of RustCrypto's `keccak` crate — the permutation the `sha3` crate runs.
//!
//! Why not a crate's KMAC: `tiny-keccak` 2's KMAC, used here before, returns wrong tags when the key's
//! or the customization string's padded prefix (`bytepad(encode_string(K), rate)`,
//! `bytepad(encode_string("KMAC") || encode_string(S), rate)`) is an exact multiple of the rate: keys of
//! 163, 331, … bytes for KMAC128 and 131, 267, … for KMAC256 (issue 34; an open upstream issue). The
//! `sha3` crate of this build (0.12) no longer carries cSHAKE, and another crate would be another
//! implementation to trust; the construction is a few lines over the permutation, each one a line of
//! SP 800-185 (§2.3.1 `left_encode`/`right_encode`, §2.3.2 `encode_string`, §2.3.3 `bytepad`, §3
//! cSHAKE, §4.3 KMAC), and the vectors (`vectors/kmac*.vec`) hold the rate-multiple lengths, computed
//! by pycryptodome and OpenSSL, so every backend is checked on them.
//!
//! Shape: the key-dependent prefix is absorbed once in [`Kmac::new`] (it ends on a block boundary, so
//! the keyed sponge is just a state); each message clones that state (200 bytes, no allocation),
//! absorbs the message and `right_encode(L)`, pads with cSHAKE's domain bits and squeezes L bytes.

use keccak::Keccak;

/// KMAC128's rate, the cSHAKE128 block: 168 bytes.
pub const RATE_128: usize = 168;
/// KMAC256's rate, the cSHAKE256 block: 136 bytes.
pub const RATE_256: usize = 136;

/// A Keccak-f[1600] sponge of rate `RATE` bytes (a multiple of 8, below 200).
#[derive(Clone)]
struct Sponge<const RATE: usize> {
    state: [u64; 25],
    /// Bytes absorbed into the current block, `0..RATE`.
    pos: usize,
    keccak: Keccak,
}

impl<const RATE: usize> Sponge<RATE> {
    fn new() -> Self {
        Sponge {
            state: [0; 25],
            pos: 0,
            keccak: Keccak::new(),
        }
    }

    fn permute(&mut self) {
        let state = &mut self.state;
        self.keccak.with_f1600(|f1600| f1600(state));
        self.pos = 0;
    }

    fn xor_byte(&mut self, byte: u8) {
        self.state[self.pos / 8] ^= u64::from(byte) << (8 * (self.pos % 8));
        self.pos += 1;
        if self.pos == RATE {
            self.permute();
        }
    }

    /// Absorb `data`: bytewise up to a lane boundary, then whole lanes (little-endian, as FIPS 202
    /// maps bytes to lanes), then the tail bytewise.
    fn absorb(&mut self, mut data: &[u8]) {
        while self.pos % 8 != 0 {
            let Some((&byte, rest)) = data.split_first() else {
                return;
            };
            self.xor_byte(byte);
            data = rest;
        }
        let mut lanes = data.chunks_exact(8);
        for lane in &mut lanes {
            let mut word = [0u8; 8];
            word.copy_from_slice(lane);
            self.state[self.pos / 8] ^= u64::from_le_bytes(word);
            self.pos += 8;
            if self.pos == RATE {
                self.permute();
            }
        }
        for &byte in lanes.remainder() {
            self.xor_byte(byte);
        }
    }

    /// cSHAKE's end of input (SP 800-185 §3.3: `X || 00`, then FIPS 202's pad10*1), then `out.len()`
    /// bytes squeezed.
    fn finish_cshake(mut self, out: &mut [u8]) {
        // The two domain bits 00 and pad10*1's first 1 are the byte 0x04 (bits are little-endian).
        self.state[self.pos / 8] ^= 0x04 << (8 * (self.pos % 8));
        self.state[RATE / 8 - 1] ^= 0x80 << 56;
        self.permute();
        let mut chunks = out.chunks_mut(RATE).peekable();
        while let Some(block) = chunks.next() {
            for (lane, bytes) in self.state.iter().zip(block.chunks_mut(8)) {
                bytes.copy_from_slice(&lane.to_le_bytes()[..bytes.len()]);
            }
            if chunks.peek().is_some() {
                self.permute();
            }
        }
    }
}

/// `left_encode(x)` (SP 800-185 §2.3.1): the byte count n, then x in n big-endian bytes (n ≥ 1).
fn left_encode(x: u128, out: &mut Vec<u8>) {
    let bytes = x.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count().min(15);
    out.push((16 - skip) as u8);
    out.extend_from_slice(&bytes[skip..]);
}

/// `right_encode(x)` (SP 800-185 §2.3.1): x in n big-endian bytes, then n.
fn right_encode(x: u128, out: &mut Vec<u8>) {
    let bytes = x.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count().min(15);
    out.extend_from_slice(&bytes[skip..]);
    out.push((16 - skip) as u8);
}

/// `encode_string(S)` (SP 800-185 §2.3.2): `left_encode(bit length) || S`.
fn encode_string(s: &[u8], out: &mut Vec<u8>) {
    left_encode(8 * s.len() as u128, out);
    out.extend_from_slice(s);
}

/// `bytepad(X, w)` (SP 800-185 §2.3.3): `left_encode(w) || X`, then zero bytes up to a multiple of w —
/// none when it already is one (the case `tiny-keccak` got wrong).
fn bytepad(w: usize, x: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    left_encode(w as u128, &mut out);
    x(&mut out);
    let padded = out.len().div_ceil(w) * w;
    out.resize(padded, 0);
    out
}

/// A keyed KMAC with output length L fixed: `KMAC[RATE](K, X, L, S)` for every message X.
#[derive(Clone)]
pub struct Kmac<const RATE: usize> {
    keyed: Sponge<RATE>,
    /// `right_encode(8 · L)`, absorbed after each message (KMAC binds L into its input).
    right_encoded_len: Vec<u8>,
    /// L in bytes.
    output_len: usize,
}

/// KMAC128: rate 168 bytes.
pub type Kmac128 = Kmac<RATE_128>;
/// KMAC256: rate 136 bytes.
pub type Kmac256 = Kmac<RATE_256>;

impl<const RATE: usize> Kmac<RATE> {
    /// Key K, customization string S, output length L = `output_len` bytes.
    pub fn new(key: &[u8], customization: &[u8], output_len: usize) -> Self {
        let mut keyed = Sponge::<RATE>::new();
        // cSHAKE's prefix with the function name N = "KMAC" (§3.3, §4.3).
        keyed.absorb(&bytepad(RATE, |out| {
            encode_string(b"KMAC", out);
            encode_string(customization, out);
        }));
        // KMAC's newX begins with the padded key (§4.3).
        keyed.absorb(&bytepad(RATE, |out| encode_string(key, out)));
        debug_assert_eq!(keyed.pos, 0, "both prefixes end on a block boundary");
        let mut right_encoded_len = Vec::new();
        right_encode(8 * output_len as u128, &mut right_encoded_len);
        Kmac {
            keyed,
            right_encoded_len,
            output_len,
        }
    }

    /// L in bytes.
    pub fn output_len(&self) -> usize {
        self.output_len
    }

    /// The tag of the message given as `chunks` (concatenated), into `out` of L bytes.
    pub fn tag_chunks(&self, chunks: &[&[u8]], out: &mut [u8]) {
        debug_assert_eq!(out.len(), self.output_len);
        let mut sponge = self.keyed.clone();
        for chunk in chunks {
            sponge.absorb(chunk);
        }
        sponge.absorb(&self.right_encoded_len);
        sponge.finish_cshake(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn encodings_follow_sp_800_185() {
        let mut out = Vec::new();
        left_encode(0, &mut out);
        assert_eq!(out, [1, 0]);
        out.clear();
        left_encode(168, &mut out);
        assert_eq!(out, [1, 168]);
        out.clear();
        left_encode(256, &mut out);
        assert_eq!(out, [2, 1, 0]);
        out.clear();
        right_encode(256, &mut out);
        assert_eq!(out, [1, 0, 2]);
        // Exactly a multiple of w: no zero block added.
        let padded = bytepad(8, |out| out.extend_from_slice(&[7; 6]));
        assert_eq!(padded.len(), 8);
        assert_eq!(bytepad(8, |out| out.extend_from_slice(&[7; 7])).len(), 16);
    }

    /// SP 800-185 KMAC_samples.pdf, samples #1 and #4 (also in vectors/, checked there per backend).
    #[test]
    fn nist_samples() {
        let key: Vec<u8> = (0x40..0x60).collect();
        let mut tag = [0u8; 32];
        Kmac128::new(&key, b"", 32).tag_chunks(&[&[0, 1, 2, 3]], &mut tag);
        assert_eq!(
            hex(&tag),
            "e5780b0d3ea6f7d3a429c5706aa43a00fadbd7d49628839e3187243f456ee14e"
        );
        let mut tag = [0u8; 64];
        Kmac256::new(&key, b"My Tagged Application", 64).tag_chunks(&[&[0, 1, 2, 3]], &mut tag);
        assert_eq!(
            hex(&tag),
            "20c570c31346f703c9ac36c61c03cb64c3970d0cfc787e9b79599d273a68d2f7\
             f69d4cc3de9d104a351689f27cf6f5951f0103f33f4f24871024d9c27773a8dd"
        );
    }
}
