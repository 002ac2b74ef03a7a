//! The packet format: an ESP-like header, the payload, a truncated tag over both.
//!
//! ```text
//!  0        4                12                    len - T     len
//!  +--------+----------------+---------- ... ------+-----------+
//!  |  SPI   | sequence (u64) |  payload            |  tag (T)  |
//!  +--------+----------------+---------- ... ------+-----------+
//!     big-endian (network order); the tag covers bytes 0 .. len - T
//! ```
//!
//! A packet's *size* everywhere in `macbench net` is its whole length as carried in one UDP datagram:
//! header + payload + tag (the UDP payload). IP and UDP headers are not counted. The tag length `T` is
//! a property of the security association (agreed out of band, like ESP's ICV length), not written into
//! the packet, so a short packet cannot claim a shorter tag.
//!
//! Parsing never panics: every length is checked before it is used, and a packet that is too short or
//! names another SPI is a typed [`WireError`].

/// Bytes of header before the payload: SPI (4) + sequence number (8).
pub const HEADER_LEN: usize = 12;
/// Largest UDP payload over IPv4.
pub const MAX_PACKET_LEN: usize = 65_507;
/// Tag length used unless `--tag-len` says otherwise (or the algorithm's tag is shorter).
pub const DEFAULT_TAG_LEN: usize = 16;

/// A packet the receiver could not even start to verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error(
        "truncated packet: {len} bytes, need at least {min} (12-byte header + {tag_len}-byte tag)"
    )]
    Truncated {
        len: usize,
        min: usize,
        tag_len: usize,
    },
    #[error("unknown SPI {spi:#010x} (this receiver expects {expected:#010x})")]
    UnknownSpi { spi: u32, expected: u32 },
}

/// One security association as both ends see it: which SPI, how long the tag is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sa {
    pub spi: u32,
    pub tag_len: usize,
}

/// A parsed, not yet verified, packet borrowing the datagram it came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<'a> {
    pub spi: u32,
    pub seq: u64,
    /// Header + payload: the bytes the tag covers.
    pub authenticated: &'a [u8],
    pub payload: &'a [u8],
    pub tag: &'a [u8],
}

impl Sa {
    /// Smallest valid packet: header and tag, empty payload.
    pub fn min_len(&self) -> usize {
        HEADER_LEN + self.tag_len
    }

    /// Split a datagram into header, payload and tag. Checks length and SPI only; the tag and the
    /// sequence number are the receiver's business.
    pub fn parse<'a>(&self, datagram: &'a [u8]) -> Result<Packet<'a>, WireError> {
        let min = self.min_len();
        if datagram.len() < min {
            return Err(WireError::Truncated {
                len: datagram.len(),
                min,
                tag_len: self.tag_len,
            });
        }
        let (spi_bytes, rest) = datagram.split_at(4);
        let (seq_bytes, _) = rest.split_at(8);
        let spi = u32::from_be_bytes(spi_bytes.try_into().unwrap_or([0; 4]));
        if spi != self.spi {
            return Err(WireError::UnknownSpi {
                spi,
                expected: self.spi,
            });
        }
        let seq = u64::from_be_bytes(seq_bytes.try_into().unwrap_or([0; 8]));
        let (authenticated, tag) = datagram.split_at(datagram.len() - self.tag_len);
        Ok(Packet {
            spi,
            seq,
            authenticated,
            payload: &authenticated[HEADER_LEN..],
            tag,
        })
    }

    /// Write the header and payload of a `len`-byte packet into `out[..len]`, leaving the tag bytes
    /// (the last `tag_len`) for the caller to fill. `payload` supplies at least `len - min_len()` bytes.
    ///
    /// Returns the number of authenticated bytes (`len - tag_len`). `len` must be in
    /// `min_len()..=out.len()`; the caller (the sender) checks sizes once at set-up, not per packet.
    pub fn write_header(&self, seq: u64, payload: &[u8], len: usize, out: &mut [u8]) -> usize {
        let covered = len - self.tag_len;
        out[..4].copy_from_slice(&self.spi.to_be_bytes());
        out[4..HEADER_LEN].copy_from_slice(&seq.to_be_bytes());
        out[HEADER_LEN..covered].copy_from_slice(&payload[..covered - HEADER_LEN]);
        covered
    }
}

/// The per-packet nonce for algorithms that take one (GMAC, VMAC): the sequence number, big-endian, in
/// the first 8 bytes, zero after. Unique per packet within a trial, as those constructions require.
pub fn nonce_for(seq: u64, nonce: &mut [u8]) {
    nonce.fill(0);
    let n = nonce.len().min(8);
    nonce[..n].copy_from_slice(&seq.to_be_bytes()[8 - n..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    const SA: Sa = Sa {
        spi: 0x0102_0304,
        tag_len: 16,
    };

    #[test]
    fn header_round_trips() {
        let payload: Vec<u8> = (0..100u8).collect();
        let mut buf = [0u8; 128];
        let covered = SA.write_header(0x1122_3344_5566_7788, &payload, 64, &mut buf);
        assert_eq!(covered, 48);
        buf[48..64].copy_from_slice(&[0xAA; 16]);
        let p = SA.parse(&buf[..64]).unwrap();
        assert_eq!(p.spi, 0x0102_0304);
        assert_eq!(p.seq, 0x1122_3344_5566_7788);
        assert_eq!(p.payload, &payload[..36]);
        assert_eq!(p.tag, &[0xAA; 16]);
        assert_eq!(p.authenticated, &buf[..48]);
        assert_eq!(&buf[..4], &[1, 2, 3, 4], "SPI is big-endian");
    }

    #[test]
    fn short_and_foreign_packets_are_errors() {
        assert_eq!(
            SA.parse(&[0u8; 27]),
            Err(WireError::Truncated {
                len: 27,
                min: 28,
                tag_len: 16
            })
        );
        assert!(SA.parse(&[]).is_err());
        let mut buf = [0u8; 28];
        buf[..4].copy_from_slice(&9u32.to_be_bytes());
        let err = SA.parse(&buf).unwrap_err();
        assert_eq!(
            err,
            WireError::UnknownSpi {
                spi: 9,
                expected: 0x0102_0304
            }
        );
        assert!(err.to_string().starts_with("unknown SPI 0x00000009"));
        buf[..4].copy_from_slice(&SA.spi.to_be_bytes());
        assert_eq!(SA.parse(&buf).unwrap().payload.len(), 0);
    }

    #[test]
    fn nonce_carries_the_sequence_number() {
        let mut n = [0xFFu8; 12];
        nonce_for(0x0102, &mut n);
        assert_eq!(n, [0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0]);
        let mut short = [0u8; 4];
        nonce_for(0x0102_0304_0506, &mut short);
        assert_eq!(short, [3, 4, 5, 6]);
    }

    fn fixed_seed_config(cases: u32) -> proptest::test_runner::Config {
        proptest::test_runner::Config {
            cases,
            rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x7769_7265),
            failure_persistence: Some(Box::new(
                proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
            )),
            ..proptest::test_runner::Config::default()
        }
    }

    proptest::proptest! {
        #![proptest_config(fixed_seed_config(1024))]

        /// Arbitrary datagrams, tag lengths and SPIs (the SPI often taken from the datagram, so that
        /// parsing gets past the SPI check): parsing never panics, and a packet it accepts is split
        /// without losing or inventing a byte: writing it back with `write_header` and its tag gives
        /// the same datagram.
        #[test]
        fn parse_never_panics_and_accepted_packets_re_encode(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            tag_len in 0usize..80,
            spi in proptest::num::u32::ANY,
            spi_from_datagram in proptest::bool::ANY,
        ) {
            let spi = match bytes.get(..4) {
                Some(b) if spi_from_datagram => u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                _ => spi,
            };
            let sa = Sa { spi, tag_len };
            match sa.parse(&bytes) {
                Ok(p) => {
                    proptest::prop_assert_eq!(p.authenticated.len() + p.tag.len(), bytes.len());
                    proptest::prop_assert_eq!(p.tag.len(), tag_len);
                    proptest::prop_assert_eq!(p.spi, spi);
                    let mut out = vec![0u8; bytes.len()];
                    let covered = sa.write_header(p.seq, p.payload, bytes.len(), &mut out);
                    out[covered..].copy_from_slice(p.tag);
                    proptest::prop_assert_eq!(&out, &bytes);
                }
                Err(WireError::Truncated { len, min, .. }) => {
                    proptest::prop_assert!(len < min && min == HEADER_LEN + tag_len);
                }
                Err(WireError::UnknownSpi { spi: got, expected }) => {
                    proptest::prop_assert!(got != expected && expected == spi);
                    proptest::prop_assert!(!spi_from_datagram);
                }
            }
        }
    }
}
