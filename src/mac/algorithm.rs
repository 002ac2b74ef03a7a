//! Algorithm descriptors: what a MAC construction *is*, independent of any library.
//!
//! A descriptor carries the facts other parts of macbench need without instantiating anything:
//! key and tag sizes for the CLI and the engine, the block-count rule for the per-packet cost model
//! (docs/methodology.md §6), whether a nonce is taken, and which reference vectors pin it. Backends refer to
//! descriptors by name; the registry joins them.

/// How many blocks (compression-function calls or block-cipher calls) one message of `i` bytes costs.
///
/// This is the `Nblk(i)` of docs/methodology.md §6, generalised to the constructions macbench knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRule {
    /// Merkle–Damgård-style padding: one `0x80`-type byte and a length field of `length_field` bytes are
    /// appended: `ceil((i + 1 + L) / B)`. MD5/SHA-1/SHA-256: B=64, L=8; SHA-512: B=128, L=16. Also used
    /// for sponge (KMAC: `right_encode(L)` plus padding) and SipHash (one length byte, B=8, L=0).
    MerkleDamgard { block: usize, length_field: usize },
    /// Block-wise processing with no length padding: `extra + max(min, ceil(i / B))`.
    /// CMAC/CBC-MAC: B=16, min 1; Poly1305: B=16, min 0; GMAC adds one GHASH length block.
    Blocks {
        block: usize,
        extra: usize,
        min: usize,
    },
    /// A fixed-size frame before the message, then blocks: `extra + ceil((i + header) / B)`.
    /// 128-EIA2: CMAC over an 8-byte COUNT/BEARER/DIRECTION header and the message (header 8, B=16);
    /// UIA1: KASUMI over COUNT-I‖FRESH (8 bytes), the message and at least the two bits
    /// DIRECTION‖1 (a ninth byte, header 9), B=8, plus one final KASUMI call under the modified key
    /// (extra 1).
    Framed {
        header: usize,
        block: usize,
        extra: usize,
    },
    /// The null function: no blocks at all.
    None,
}

impl BlockRule {
    /// `Nblk(i)`: blocks needed for a message of `size` bytes.
    pub fn blocks(&self, size: u64) -> u64 {
        match *self {
            BlockRule::MerkleDamgard {
                block,
                length_field,
            } => (size + 1 + length_field as u64).div_ceil(block as u64),
            BlockRule::Blocks { block, extra, min } => {
                extra as u64 + (min as u64).max(size.div_ceil(block as u64))
            }
            BlockRule::Framed {
                header,
                block,
                extra,
            } => extra as u64 + (size + header as u64).div_ceil(block as u64),
            BlockRule::None => 0,
        }
    }
}

/// Which key lengths a construction accepts (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyLengths {
    /// Exactly one of these.
    OneOf(&'static [usize]),
    /// Any length in `min..=max`.
    Range { min: usize, max: usize },
}

impl KeyLengths {
    pub fn accepts(&self, len: usize) -> bool {
        match *self {
            KeyLengths::OneOf(list) => list.contains(&len),
            KeyLengths::Range { min, max } => (min..=max).contains(&len),
        }
    }

    /// Human description for error messages and `list`: "16", "16, 24 or 32", "0..=1024".
    pub fn describe(&self) -> String {
        match *self {
            KeyLengths::OneOf([one]) => one.to_string(),
            KeyLengths::OneOf(list) => {
                let mut parts: Vec<String> = list.iter().map(|n| n.to_string()).collect();
                let last = parts.pop().unwrap_or_default();
                if parts.is_empty() {
                    last
                } else {
                    format!("{} or {}", parts.join(", "), last)
                }
            }
            KeyLengths::Range { min, max } => format!("{min}–{max}"),
        }
    }

    /// [`Self::describe`] of the lengths within `lo..=hi` (a library's narrower limit).
    pub fn describe_within(&self, lo: usize, hi: usize) -> String {
        match *self {
            KeyLengths::OneOf(list) => {
                let kept: Vec<String> = list
                    .iter()
                    .filter(|n| (lo..=hi).contains(*n))
                    .map(|n| n.to_string())
                    .collect();
                match kept.split_last() {
                    None => "none".to_string(),
                    Some((last, [])) => last.clone(),
                    Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                }
            }
            KeyLengths::Range { min, max } => format!("{}–{}", min.max(lo), max.min(hi)),
        }
    }
}

/// Message lengths, in bits, that a construction accepts as macbench's backends implement it.
///
/// Every MAC before the 3GPP functions takes any byte string ([`MessageBits::ANY`]). The 3GPP
/// integrity functions are defined on bit strings of bounded length, and Intel ipsec-mb 1.3, their
/// only backend, rejects an empty message for all but 128-EIA2 and caps the length (see each
/// descriptor); the engine runs only sizes inside the range (whole bytes), and the known-answer
/// vectors may give bit lengths inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageBits {
    pub min: u64,
    pub max: u64,
}

impl MessageBits {
    /// Any byte string.
    pub const ANY: MessageBits = MessageBits {
        min: 0,
        max: u64::MAX,
    };

    /// Whether a message of `bits` bits is accepted.
    pub fn accepts_bits(&self, bits: u64) -> bool {
        (self.min..=self.max).contains(&bits)
    }

    /// Whether a message of `bytes` whole bytes is accepted.
    pub fn accepts_bytes(&self, bytes: u64) -> bool {
        bytes
            .checked_mul(8)
            .is_some_and(|bits| self.accepts_bits(bits))
    }

    /// The whole-byte sizes accepted, for messages: `1 … 8188 bytes`.
    pub fn describe_bytes(&self) -> String {
        let min = self.min.div_ceil(8);
        if self.max == u64::MAX {
            return format!("{min} bytes or more");
        }
        format!("{min} … {} bytes", self.max / 8)
    }
}

/// Family of construction; decides how the cost model counts per-message overhead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    Hmac,
    Cmac,
    CbcMac,
    Xcbc,
    Gmac,
    Kmac,
    Poly1305,
    Blake2,
    Blake3,
    SipHash,
    Vmac,
    Umac,
    /// 128-EIA3: ZUC keystream and its universal hash.
    Zuc,
    /// UIA2: SNOW 3G keystream and an evaluation in GF(2^64).
    Snow3g,
    /// UIA1: KASUMI in a CBC-MAC-like chain.
    Kasumi,
    Null,
}

/// A MAC construction with its parameters.
#[derive(Debug)]
pub struct Algorithm {
    /// Registry name, e.g. `hmac-sha256`.
    pub name: &'static str,
    pub family: Family,
    /// One-line description shown by `list`.
    pub description: &'static str,
    pub key_lengths: KeyLengths,
    /// Key length used by the benchmark unless told otherwise.
    pub default_key_len: usize,
    /// Tag length in bytes produced by this construction (no truncation).
    pub tag_len: usize,
    /// Block size of the underlying primitive in bytes (compression block, cipher block, sponge rate).
    pub block_len: usize,
    pub block_rule: BlockRule,
    /// Bytes of nonce/IV taken per message, if any.
    pub nonce_len: Option<usize>,
    /// Message lengths accepted, in bits.
    pub message_bits: MessageBits,
    /// Where the known answers come from, and the vector file (embedded in the binary).
    pub vectors: Option<VectorFile>,
    /// A caveat a user must see (e.g. CBC-MAC is insecure for variable-length messages).
    pub caveat: Option<&'static str>,
}

/// A file of known-answer vectors, embedded at build time so `macbench selftest` works anywhere.
#[derive(Debug)]
pub struct VectorFile {
    pub path: &'static str,
    pub text: &'static str,
}

macro_rules! vectors {
    ($file:literal) => {
        Some(VectorFile {
            path: concat!("vectors/", $file),
            text: include_str!(concat!("../../vectors/", $file)),
        })
    };
}

const MD64: BlockRule = BlockRule::MerkleDamgard {
    block: 64,
    length_field: 8,
};
const AES_BLOCKS: BlockRule = BlockRule::Blocks {
    block: 16,
    extra: 0,
    min: 1,
};
/// UMAC (RFC 4418): NH reads the message in 32-byte steps, zero-padding the last (the empty message is
/// padded to one step); the per-1024-byte L2 polynomial step and the one AES call for the pad are
/// fixed or minor costs the fit's `a` and `b` absorb, as VMAC's are.
const UMAC_BLOCKS: BlockRule = BlockRule::Blocks {
    block: 32,
    extra: 0,
    min: 1,
};
const HMAC_KEYS: KeyLengths = KeyLengths::Range { min: 0, max: 1024 };
const AES128: KeyLengths = KeyLengths::OneOf(&[16]);
const AES192: KeyLengths = KeyLengths::OneOf(&[24]);
const AES256: KeyLengths = KeyLengths::OneOf(&[32]);
/// SHA-384 and SHA-512: 128-byte blocks and a 16-byte length field.
const MD128: BlockRule = BlockRule::MerkleDamgard {
    block: 128,
    length_field: 16,
};
/// GMAC: GHASH over ceil(i/16) AAD blocks plus the length block.
const GHASH_BLOCKS: BlockRule = BlockRule::Blocks {
    block: 16,
    extra: 1,
    min: 0,
};

/// The families of algorithms that many libraries offer whole, named once so that a backend's entry
/// list says "these families, plus these names". An entry macro (`accel_entries!`, `hw_entries!`,
/// `hw_sw_entries!`, a backend's own `entries!`) takes a family's name beside single algorithm names and
/// puts the family's algorithms in its place, in this order (the order `list` prints):
///
/// - `HMAC_SHA2`: `hmac-sha224`, `hmac-sha256`, `hmac-sha384`, `hmac-sha512` (SHA-224 to SHA-512 of
///   FIPS 180-4, without the truncated SHA-512/t)
/// - `HMAC_SHA512_T`: `hmac-sha512-224`, `hmac-sha512-256` (SHA-512/t, FIPS 180-4 §5.3.6)
/// - `HMAC_SHA3`: `hmac-sha3-224`, `hmac-sha3-256`, `hmac-sha3-384`, `hmac-sha3-512` (FIPS 202)
/// - `CMAC_AES`: `cmac-aes128`, `cmac-aes192`, `cmac-aes256`
/// - `GMAC_AES`: `gmac-aes128`, `gmac-aes192`, `gmac-aes256`
/// - `HMAC_ALL`: every HMAC of the table: `hmac-md5`, `hmac-sha1`, then `HMAC_SHA2`, `HMAC_SHA512_T`
///   and `HMAC_SHA3` (what OpenSSL and libgcrypt offer)
///
/// A library that lacks one member of a family lists the others by name. The expansion:
/// `algorithm_names!([then] (args) [] "hmac-md5", HMAC_SHA2)` calls `then!(args "hmac-md5",
/// "hmac-sha224", …)`.
#[macro_export]
#[doc(hidden)]
macro_rules! algorithm_names {
    ([$($then:tt)*] ($($args:tt)*) [$($name:literal)*] $(,)?) => {
        $($then)*!($($args)* $($name),*)
    };
    ([$($then:tt)*] $args:tt [$($name:literal)*] $next:literal $(, $($rest:tt)*)?) => {
        $crate::algorithm_names!([$($then)*] $args [$($name)* $next] $($($rest)*)?)
    };
    // A family: its members (`algorithm_family!`) go in front of what is left, and are read on.
    ([$($then:tt)*] $args:tt [$($name:literal)*] $family:ident $(, $($rest:tt)*)?) => {
        $crate::algorithm_family!($family [$($then)*] $args [$($name)*] [$($($rest)*)?])
    };
    (@members [$($member:tt)*] [$($then:tt)*] $args:tt [$($name:literal)*] [$($rest:tt)*]) => {
        $crate::algorithm_names!([$($then)*] $args [$($name)*] $($member)*, $($rest)*)
    };
}

/// The members of each family of [`algorithm_names!`], one line a family; an unknown name is a
/// compile error ("no rules expected the token").
#[macro_export]
#[doc(hidden)]
macro_rules! algorithm_family {
    (HMAC_SHA2 $($k:tt)*) => { $crate::algorithm_names!(@members ["hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"] $($k)*) };
    (HMAC_SHA512_T $($k:tt)*) => { $crate::algorithm_names!(@members ["hmac-sha512-224", "hmac-sha512-256"] $($k)*) };
    (HMAC_SHA3 $($k:tt)*) => { $crate::algorithm_names!(@members ["hmac-sha3-224", "hmac-sha3-256", "hmac-sha3-384", "hmac-sha3-512"] $($k)*) };
    (HMAC_ALL $($k:tt)*) => { $crate::algorithm_names!(@members ["hmac-md5", "hmac-sha1", HMAC_SHA2, HMAC_SHA512_T, HMAC_SHA3] $($k)*) };
    (CMAC_AES $($k:tt)*) => { $crate::algorithm_names!(@members ["cmac-aes128", "cmac-aes192", "cmac-aes256"] $($k)*) };
    (GMAC_AES $($k:tt)*) => { $crate::algorithm_names!(@members ["gmac-aes128", "gmac-aes192", "gmac-aes256"] $($k)*) };
}

/// Every algorithm macbench knows, in the order `list` shows them.
pub static ALGORITHMS: &[Algorithm] = &[
    Algorithm {
        name: "hmac-md5",
        family: Family::Hmac,
        description: "HMAC over MD5 (RFC 2104; vectors RFC 2202)",
        key_lengths: HMAC_KEYS,
        default_key_len: 16,
        tag_len: 16,
        block_len: 64,
        block_rule: MD64,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-md5.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha1",
        family: Family::Hmac,
        description: "HMAC over SHA-1 (RFC 2104; vectors RFC 2202)",
        key_lengths: HMAC_KEYS,
        default_key_len: 20,
        tag_len: 20,
        block_len: 64,
        block_rule: MD64,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha1.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha224",
        family: Family::Hmac,
        description: "HMAC over SHA-224 (RFC 2104; vectors RFC 4231)",
        key_lengths: HMAC_KEYS,
        default_key_len: 28,
        tag_len: 28,
        block_len: 64,
        block_rule: MD64,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha224.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha256",
        family: Family::Hmac,
        description: "HMAC over SHA-256 (RFC 2104; vectors RFC 4231)",
        key_lengths: HMAC_KEYS,
        default_key_len: 32,
        tag_len: 32,
        block_len: 64,
        block_rule: MD64,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha256.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha384",
        family: Family::Hmac,
        description: "HMAC over SHA-384 (RFC 2104; vectors RFC 4231)",
        key_lengths: HMAC_KEYS,
        default_key_len: 48,
        tag_len: 48,
        block_len: 128,
        block_rule: MD128,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha384.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha512",
        family: Family::Hmac,
        description: "HMAC over SHA-512 (RFC 2104; vectors RFC 4231)",
        key_lengths: HMAC_KEYS,
        default_key_len: 64,
        tag_len: 64,
        block_len: 128,
        block_rule: MD128,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha512.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha512-224",
        family: Family::Hmac,
        description: "HMAC over SHA-512/224 (FIPS 198-1/FIPS 180-4; vectors Wycheproof, NIST ACVP)",
        key_lengths: HMAC_KEYS,
        default_key_len: 28,
        tag_len: 28,
        block_len: 128,
        block_rule: MD128,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha512-224.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha512-256",
        family: Family::Hmac,
        description: "HMAC over SHA-512/256 (FIPS 198-1/FIPS 180-4; vectors Wycheproof, NIST ACVP)",
        key_lengths: HMAC_KEYS,
        default_key_len: 32,
        tag_len: 32,
        block_len: 128,
        block_rule: MD128,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha512-256.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha3-224",
        family: Family::Hmac,
        description: "HMAC over SHA3-224 (FIPS 198-1/FIPS 202; vectors NIST example values, Wycheproof)",
        key_lengths: HMAC_KEYS,
        default_key_len: 28,
        tag_len: 28,
        block_len: 144,
        // Sponge: SHA-3 padding adds at least one byte (0x06 ... 0x80), no length field.
        block_rule: BlockRule::MerkleDamgard {
            block: 144,
            length_field: 0,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha3-224.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha3-256",
        family: Family::Hmac,
        description: "HMAC over SHA3-256 (FIPS 198-1/FIPS 202; NIST example values)",
        key_lengths: HMAC_KEYS,
        default_key_len: 32,
        tag_len: 32,
        block_len: 136,
        // Sponge: SHA-3 padding adds at least one byte (0x06 ... 0x80), no length field.
        block_rule: BlockRule::MerkleDamgard {
            block: 136,
            length_field: 0,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha3-256.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha3-384",
        family: Family::Hmac,
        description: "HMAC over SHA3-384 (FIPS 198-1/FIPS 202; vectors NIST example values, Wycheproof)",
        key_lengths: HMAC_KEYS,
        default_key_len: 48,
        tag_len: 48,
        block_len: 104,
        // Sponge: SHA-3 padding adds at least one byte (0x06 ... 0x80), no length field.
        block_rule: BlockRule::MerkleDamgard {
            block: 104,
            length_field: 0,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha3-384.vec"),
        caveat: None,
    },
    Algorithm {
        name: "hmac-sha3-512",
        family: Family::Hmac,
        description: "HMAC over SHA3-512 (FIPS 198-1/FIPS 202; vectors NIST example values, Wycheproof)",
        key_lengths: HMAC_KEYS,
        default_key_len: 64,
        tag_len: 64,
        block_len: 72,
        // Sponge: SHA-3 padding adds at least one byte (0x06 ... 0x80), no length field.
        block_rule: BlockRule::MerkleDamgard {
            block: 72,
            length_field: 0,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("hmac-sha3-512.vec"),
        caveat: None,
    },
    Algorithm {
        name: "cmac-aes128",
        family: Family::Cmac,
        description: "CMAC over AES-128 (SP 800-38B; vectors RFC 4493)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 16,
        block_len: 16,
        block_rule: AES_BLOCKS,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("cmac-aes128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "cmac-aes192",
        family: Family::Cmac,
        description: "CMAC over AES-192 (SP 800-38B examples, Wycheproof)",
        key_lengths: AES192,
        default_key_len: 24,
        tag_len: 16,
        block_len: 16,
        block_rule: AES_BLOCKS,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("cmac-aes192.vec"),
        caveat: None,
    },
    Algorithm {
        name: "cmac-aes256",
        family: Family::Cmac,
        description: "CMAC over AES-256 (SP 800-38B examples)",
        key_lengths: AES256,
        default_key_len: 32,
        tag_len: 16,
        block_len: 16,
        block_rule: AES_BLOCKS,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("cmac-aes256.vec"),
        caveat: None,
    },
    Algorithm {
        name: "cmac-twofish",
        family: Family::Cmac,
        description:
            "CMAC over Twofish-128 (no published CMAC vectors: cipher KATs + cross-checks)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 16,
        block_len: 16,
        block_rule: AES_BLOCKS,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("cmac-twofish.vec"),
        caveat: None,
    },
    Algorithm {
        name: "cmac-serpent",
        family: Family::Cmac,
        description:
            "CMAC over Serpent-128 (no published CMAC vectors: cipher KATs + cross-checks)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 16,
        block_len: 16,
        block_rule: AES_BLOCKS,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("cmac-serpent.vec"),
        caveat: None,
    },
    Algorithm {
        name: "cmac-rc6",
        family: Family::Cmac,
        description:
            "CMAC over RC6-32/20/16 (no published CMAC vectors: cipher KATs + cross-checks)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 16,
        block_len: 16,
        block_rule: AES_BLOCKS,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("cmac-rc6.vec"),
        caveat: None,
    },
    Algorithm {
        name: "cbcmac-aes128",
        family: Family::CbcMac,
        description: "CBC-MAC over AES-128, zero-padded (the IPsec seed's AES-XCBC stand-in)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 16,
        block_len: 16,
        block_rule: AES_BLOCKS,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("cbcmac-aes128.vec"),
        caveat: Some(
            "UNSAFE for variable-length messages (forgeable by extension); benchmark use only",
        ),
    },
    Algorithm {
        name: "xcbc-aes128",
        family: Family::Xcbc,
        description: "AES-XCBC-MAC, full 16-byte tag (RFC 3566; IPsec's XCBC-MAC-96 is its first 12 bytes)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 16,
        block_len: 16,
        // Like CMAC: ceil(i/16) AES calls, one for the empty message; K1/K2/K3 come from key setup.
        block_rule: AES_BLOCKS,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("xcbc-aes128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "xcbc-aes128-96",
        family: Family::Xcbc,
        description: "AES-XCBC-MAC-96: the first 12 bytes of AES-XCBC-MAC (RFC 3566, IPsec ESP/AH)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 12,
        block_len: 16,
        block_rule: AES_BLOCKS,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("xcbc-aes128-96.vec"),
        caveat: None,
    },
    Algorithm {
        name: "gmac-aes128",
        family: Family::Gmac,
        description: "GMAC: AES-128-GCM with the message as AAD and empty plaintext (SP 800-38D)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 16,
        block_len: 16,
        block_rule: GHASH_BLOCKS,
        nonce_len: Some(12),
        message_bits: MessageBits::ANY,
        vectors: vectors!("gmac-aes128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "gmac-aes192",
        family: Family::Gmac,
        description: "GMAC: AES-192-GCM with the message as AAD and empty plaintext (SP 800-38D)",
        key_lengths: AES192,
        default_key_len: 24,
        tag_len: 16,
        block_len: 16,
        block_rule: GHASH_BLOCKS,
        nonce_len: Some(12),
        message_bits: MessageBits::ANY,
        vectors: vectors!("gmac-aes192.vec"),
        caveat: None,
    },
    Algorithm {
        name: "gmac-aes256",
        family: Family::Gmac,
        description: "GMAC: AES-256-GCM with the message as AAD and empty plaintext (SP 800-38D)",
        key_lengths: AES256,
        default_key_len: 32,
        tag_len: 16,
        block_len: 16,
        block_rule: GHASH_BLOCKS,
        nonce_len: Some(12),
        message_bits: MessageBits::ANY,
        vectors: vectors!("gmac-aes256.vec"),
        caveat: None,
    },
    Algorithm {
        name: "poly1305",
        family: Family::Poly1305,
        description: "Poly1305 one-time authenticator (RFC 8439); benchmark reuses the key",
        key_lengths: KeyLengths::OneOf(&[32]),
        default_key_len: 32,
        tag_len: 16,
        block_len: 16,
        block_rule: BlockRule::Blocks {
            block: 16,
            extra: 0,
            min: 0,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("poly1305.vec"),
        caveat: Some("one-time key: real protocols derive a fresh key per message"),
    },
    Algorithm {
        name: "kmac128",
        family: Family::Kmac,
        description: "KMAC128 with 256-bit output and empty customization (SP 800-185)",
        key_lengths: KeyLengths::Range { min: 16, max: 1024 },
        default_key_len: 32,
        tag_len: 32,
        block_len: 168,
        block_rule: BlockRule::MerkleDamgard {
            block: 168,
            length_field: 3,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("kmac128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "kmac256",
        family: Family::Kmac,
        description: "KMAC256 with 512-bit output and empty customization (SP 800-185)",
        key_lengths: KeyLengths::Range { min: 32, max: 1024 },
        default_key_len: 32,
        tag_len: 64,
        block_len: 136,
        block_rule: BlockRule::MerkleDamgard {
            block: 136,
            length_field: 3,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("kmac256.vec"),
        caveat: None,
    },
    Algorithm {
        name: "blake2b-keyed",
        family: Family::Blake2,
        description: "BLAKE2b-512 in keyed mode (RFC 7693; official keyed KATs)",
        key_lengths: KeyLengths::Range { min: 1, max: 64 },
        default_key_len: 64,
        tag_len: 64,
        block_len: 128,
        // The key fills one block of its own, then the message (at least one block when empty is
        // not needed: the key block is then the last block).
        block_rule: BlockRule::Blocks {
            block: 128,
            extra: 1,
            min: 0,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("blake2b-keyed.vec"),
        caveat: None,
    },
    Algorithm {
        name: "blake2s-keyed",
        family: Family::Blake2,
        description: "BLAKE2s-256 in keyed mode (RFC 7693; official keyed KATs)",
        key_lengths: KeyLengths::Range { min: 1, max: 32 },
        default_key_len: 32,
        tag_len: 32,
        block_len: 64,
        block_rule: BlockRule::Blocks {
            block: 64,
            extra: 1,
            min: 0,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("blake2s-keyed.vec"),
        caveat: None,
    },
    Algorithm {
        name: "blake3-keyed",
        family: Family::Blake3,
        description: "BLAKE3 keyed_hash, 256-bit tag (official test_vectors.json)",
        key_lengths: KeyLengths::OneOf(&[32]),
        default_key_len: 32,
        tag_len: 32,
        block_len: 64,
        block_rule: BlockRule::Blocks {
            block: 64,
            extra: 0,
            min: 1,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("blake3-keyed.vec"),
        caveat: None,
    },
    Algorithm {
        name: "siphash-2-4",
        family: Family::SipHash,
        description: "SipHash-2-4, 64-bit tag (reference vectors of the SipHash paper)",
        key_lengths: KeyLengths::OneOf(&[16]),
        default_key_len: 16,
        tag_len: 8,
        block_len: 8,
        block_rule: BlockRule::MerkleDamgard {
            block: 8,
            length_field: 0,
        },
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: vectors!("siphash-2-4.vec"),
        caveat: Some("64-bit tag: a PRF for hash tables, weak as a network MAC"),
    },
    Algorithm {
        name: "vmac-aes128-64",
        family: Family::Vmac,
        description:
            "VMAC-AES128, 64-bit tag (one of Rashwan et al.'s nine functions); nonce: 8-byte schedule slot index",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 8,
        block_len: 128,
        block_rule: BlockRule::Blocks {
            block: 128,
            extra: 0,
            min: 1,
        },
        // 8 bytes, as in the published vectors: VMAC takes nonces shorter than the 128-bit block and
        // zero-pads them on the left, so the padded nonce's leading bit (which the draft requires to
        // be 0: nonces are at most 127 bits) stays 0 for every slot index the benchmark writes into
        // the first 8 bytes. A 16-byte nonce would put bit 7 of the slot index there.
        nonce_len: Some(8),
        message_bits: MessageBits::ANY,
        vectors: vectors!("vmac-aes128-64.vec"),
        caveat: None,
    },
    Algorithm {
        name: "vmac-aes128-128",
        family: Family::Vmac,
        description: "VMAC-AES128, 128-bit tag; nonce: 8-byte schedule slot index",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 16,
        block_len: 128,
        block_rule: BlockRule::Blocks {
            block: 128,
            extra: 0,
            min: 1,
        },
        // 8 bytes, as in the published vectors: VMAC takes nonces shorter than the 128-bit block and
        // zero-pads them on the left, so the padded nonce's leading bit (which the draft requires to
        // be 0: nonces are at most 127 bits) stays 0 for every slot index the benchmark writes into
        // the first 8 bytes. A 16-byte nonce would put bit 7 of the slot index there.
        nonce_len: Some(8),
        message_bits: MessageBits::ANY,
        vectors: vectors!("vmac-aes128-128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "umac32-aes128",
        family: Family::Umac,
        description:
            "UMAC-32 with AES-128 (RFC 4418; vectors RFC 4418 §A); nonce: 8-byte schedule slot index",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 4,
        block_len: 32,
        block_rule: UMAC_BLOCKS,
        // 8 bytes, as in RFC 4418's vectors and like VMAC: UMAC takes 1..=16-byte nonces (Nettle's
        // `umac32_set_nonce`) and the benchmark writes the slot index into the first 8.
        nonce_len: Some(8),
        message_bits: MessageBits::ANY,
        vectors: vectors!("umac32-aes128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "umac64-aes128",
        family: Family::Umac,
        description:
            "UMAC-64 with AES-128 (RFC 4418; vectors RFC 4418 §A); nonce: 8-byte schedule slot index",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 8,
        block_len: 32,
        block_rule: UMAC_BLOCKS,
        // 8 bytes, as in RFC 4418's vectors and like VMAC: UMAC takes 1..=16-byte nonces (Nettle's
        // `umac64_set_nonce`) and the benchmark writes the slot index into the first 8.
        nonce_len: Some(8),
        message_bits: MessageBits::ANY,
        vectors: vectors!("umac64-aes128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "umac96-aes128",
        family: Family::Umac,
        description:
            "UMAC-96 with AES-128 (RFC 4418; vectors RFC 4418 §A); nonce: 8-byte schedule slot index",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 12,
        block_len: 32,
        block_rule: UMAC_BLOCKS,
        // 8 bytes, as in RFC 4418's vectors and like VMAC: UMAC takes 1..=16-byte nonces (Nettle's
        // `umac96_set_nonce`) and the benchmark writes the slot index into the first 8.
        nonce_len: Some(8),
        message_bits: MessageBits::ANY,
        vectors: vectors!("umac96-aes128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "umac128-aes128",
        family: Family::Umac,
        description:
            "UMAC-128 with AES-128 (RFC 4418; vectors RFC 4418 §A, 96-bit prefixes); nonce: 8-byte schedule slot index",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 16,
        block_len: 32,
        block_rule: UMAC_BLOCKS,
        // 8 bytes, as in RFC 4418's vectors and like VMAC: UMAC takes 1..=16-byte nonces (Nettle's
        // `umac128_set_nonce`) and the benchmark writes the slot index into the first 8.
        nonce_len: Some(8),
        message_bits: MessageBits::ANY,
        vectors: vectors!("umac128-aes128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "poly1305-aes",
        family: Family::Poly1305,
        description:
            "Poly1305-AES (Bernstein 2005, as Nettle defines it): key = AES-128 key k || r, 16-byte nonce; vectors from the paper's appendix B",
        key_lengths: KeyLengths::OneOf(&[32]),
        default_key_len: 32,
        tag_len: 16,
        block_len: 16,
        // Poly1305 over ceil(i/16) blocks plus one AES call on the nonce.
        block_rule: BlockRule::Blocks {
            block: 16,
            extra: 1,
            min: 0,
        },
        nonce_len: Some(16),
        message_bits: MessageBits::ANY,
        vectors: vectors!("poly1305-aes.vec"),
        caveat: None,
    },
    Algorithm {
        name: "eia2-aes128",
        family: Family::Cmac,
        description: "128-EIA2 (LTE/NR integrity): AES-128-CMAC over COUNT‖BEARER‖DIRECTION‖0^26‖message, 32-bit MAC-I (3GPP TS 33.401 B.2; vectors C.2); nonce: COUNT (4, big-endian) ‖ BEARER (1, low 5 bits) ‖ DIRECTION (1, low bit)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 4,
        block_len: 16,
        // CMAC over the 8-byte header and the message: ceil((i + 8) / 16) AES calls.
        block_rule: BlockRule::Framed {
            header: 8,
            block: 16,
            extra: 0,
        },
        // The 3GPP parameters, one message's worth: COUNT is 32 bits, BEARER 5, DIRECTION 1. Only
        // the defined bits are used (docs/methodology.md §5); the benchmark's slot index lands in COUNT.
        nonce_len: Some(6),
        // ipsec-mb 1.3 caps a CMAC job's length field at 2^16 − 2, and a bit-length job counts
        // bits there, the 64-bit header included: at most 65,470 message bits (8,183 bytes).
        message_bits: MessageBits {
            min: 0,
            max: 65_534 - 64,
        },
        vectors: vectors!("eia2-aes128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "eia3-zuc128",
        family: Family::Zuc,
        description: "128-EIA3 (LTE/NR integrity): ZUC-128 based, 32-bit MAC-I (ETSI/SAGE EEA3/EIA3 Doc. 1; vectors Doc. 3); nonce: COUNT (4, big-endian) ‖ BEARER (1, low 5 bits) ‖ DIRECTION (1, low bit)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 4,
        block_len: 4,
        // ZUC delivers 32-bit keystream words; EIA3 uses ceil(LENGTH / 32) + 2 of them. The 32
        // initialisation rounds are a fixed cost per message, left to the fit's `a`.
        block_rule: BlockRule::Blocks {
            block: 4,
            extra: 2,
            min: 0,
        },
        nonce_len: Some(6),
        // 1 to 65,504 bits (8,188 bytes, the largest PDCP SDU): ipsec-mb 1.3's ZUC_MIN/MAX_BITLEN.
        message_bits: MessageBits {
            min: 1,
            max: 65_504,
        },
        vectors: vectors!("eia3-zuc128.vec"),
        caveat: None,
    },
    Algorithm {
        name: "uia2-snow3g",
        family: Family::Snow3g,
        description: "UIA2 (UMTS/LTE integrity f9): SNOW 3G based, 32-bit MAC-I (ETSI/SAGE UEA2&UIA2 Doc. 1; vectors Doc. 3 / 3GPP TS 35.223); nonce: COUNT-I (4, big-endian) ‖ FRESH (4, big-endian) ‖ DIRECTION (1, low bit)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 4,
        block_len: 8,
        // Five keystream words per message (fixed), then one GF(2^64) multiplication per 64-bit
        // block of the message plus one for the length block.
        block_rule: BlockRule::Blocks {
            block: 8,
            extra: 1,
            min: 0,
        },
        // COUNT-I 32 bits, FRESH 32 bits, DIRECTION 1 bit (docs/methodology.md §5).
        nonce_len: Some(9),
        // 1 to 2^32 − 1 bits: ipsec-mb 1.3 refuses an empty message and takes a 32-bit length.
        message_bits: MessageBits {
            min: 1,
            max: u32::MAX as u64,
        },
        vectors: vectors!("uia2-snow3g.vec"),
        caveat: None,
    },
    Algorithm {
        name: "uia1-kasumi",
        family: Family::Kasumi,
        description: "UIA1 (UMTS integrity f9): KASUMI based, 32-bit MAC-I (3GPP TS 35.201; vectors TS 35.203); nonce: COUNT-I (4, big-endian) ‖ FRESH (4, big-endian) ‖ DIRECTION (1, low bit)",
        key_lengths: AES128,
        default_key_len: 16,
        tag_len: 4,
        block_len: 8,
        // KASUMI over COUNT-I‖FRESH‖message‖DIRECTION‖1‖0*, then once more under the modified key.
        block_rule: BlockRule::Framed {
            header: 9,
            block: 8,
            extra: 1,
        },
        nonce_len: Some(9),
        // 1 to 20,000 bits: ipsec-mb 1.3's KASUMI_MIN/MAX_LEN.
        message_bits: MessageBits {
            min: 1,
            max: 20_000,
        },
        vectors: vectors!("uia1-kasumi.vec"),
        caveat: Some("UMTS-era 64-bit block cipher; kept for legacy comparison"),
    },
    Algorithm {
        name: "null",
        family: Family::Null,
        description: "harness baseline: reads one byte of the message, computes nothing",
        key_lengths: KeyLengths::Range { min: 0, max: 1024 },
        default_key_len: 16,
        tag_len: 8,
        block_len: 1,
        block_rule: BlockRule::None,
        nonce_len: None,
        message_bits: MessageBits::ANY,
        vectors: None,
        caveat: Some("not a MAC: measures the harness itself"),
    },
];

/// Rashwan et al.'s nine functions.
pub const PAPER_PRESET: &[&str] = &[
    "hmac-md5",
    "hmac-sha1",
    "hmac-sha256",
    "hmac-sha512",
    "cmac-aes128",
    "cmac-twofish",
    "cmac-serpent",
    "cmac-rc6",
    "vmac-aes128-64",
];

/// The nonce lengths a construction takes (bytes), as its standard allows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonceRule {
    /// What the benchmark uses (the engine writes the message's slot number into it).
    pub default: usize,
    pub min: usize,
    pub max: usize,
    /// VMAC: a nonce of the full 16 bytes must be below 2^127 (its top bit clear), since the key
    /// derivation encrypts blocks whose top bit is set.
    pub below_2_127: bool,
}

impl NonceRule {
    /// `1–16 bytes (a 16-byte nonce below 2^127)`, `12 bytes`.
    pub fn describe(&self) -> String {
        let range = if self.min == self.max {
            format!("{} bytes", self.min)
        } else {
            format!("{}–{} bytes", self.min, self.max)
        };
        if self.below_2_127 {
            format!(
                "{range} (a {}-byte nonce below 2^127: its top bit clear)",
                self.max
            )
        } else {
            range
        }
    }

    /// Why `nonce` breaks the rule, or `None` when it is taken.
    pub fn check(&self, nonce: &[u8]) -> Option<String> {
        if !(self.min..=self.max).contains(&nonce.len()) {
            return Some(format!("got {} bytes", nonce.len()));
        }
        if self.below_2_127 && nonce.len() == self.max && nonce[0] & 0x80 != 0 {
            return Some(format!(
                "this {}-byte nonce is 2^127 or more (its top bit is set)",
                nonce.len()
            ));
        }
        None
    }
}

/// GCM takes any non-empty IV (SP 800-38D §5.2.1.1); macbench bounds it at 128 bytes, the longest
/// IV of NIST's CAVP GCM files (1024 bits).
pub const GMAC_MAX_IV: usize = 128;

impl Algorithm {
    /// The nonce lengths this construction takes, by its standard: VMAC 1–16 bytes below 2^127
    /// (draft-krovetz-vmac-01 §3), GMAC any non-empty IV (up to [`GMAC_MAX_IV`]), UMAC 1–16 bytes
    /// (RFC 4418 §4.2), everything else exactly its `nonce_len`. `None` for no nonce. A backend may
    /// take fewer ([`super::Backend::nonce_limit`]).
    pub fn nonce_rule(&self) -> Option<NonceRule> {
        let default = self.nonce_len?;
        let exact = NonceRule {
            default,
            min: default,
            max: default,
            below_2_127: false,
        };
        Some(match self.family {
            Family::Vmac => NonceRule {
                min: 1,
                max: 16,
                below_2_127: true,
                ..exact
            },
            Family::Gmac => NonceRule {
                min: 1,
                max: GMAC_MAX_IV,
                ..exact
            },
            Family::Umac => NonceRule {
                min: 1,
                max: 16,
                ..exact
            },
            _ => exact,
        })
    }

    /// Whether a tag length is an input of the construction rather than a cut of its output: KMAC
    /// binds its output length `L` into the computation (SP 800-185 §4.3), so a 20-byte KMAC tag is
    /// KMAC with L = 160, not the first 20 bytes of KMAC with L = 256.
    pub fn tag_len_is_input(&self) -> bool {
        self.family == Family::Kmac
    }

    /// The longest tag `--tag-len` may ask for: the construction's own for a truncated MAC, up to
    /// [`super::MAX_TAG_LEN`] where the length is an input (KMAC) or carries nothing (the null function).
    pub fn max_tag_len(&self) -> usize {
        if self.tag_len_is_input() || self.family == Family::Null {
            super::MAX_TAG_LEN
        } else {
            self.tag_len
        }
    }

    /// The bytes a keyed object computes for tags of `tag_len` bytes: exactly `tag_len` where the
    /// length is an input (KMAC) or carries nothing (the null function), else the full tag, of which
    /// the first `tag_len` bytes are the truncated tag.
    pub fn computed_tag_len(&self, tag_len: usize) -> usize {
        if self.tag_len_is_input() || self.family == Family::Null {
            tag_len
        } else {
            self.tag_len
        }
    }

    /// The one rule for a requested tag length (`run`, `tag` and `net --tag-len`): 1 … [`Self::max_tag_len`]
    /// bytes. `Err` says what is accepted and how the length is produced.
    pub fn check_tag_len(&self, tag_len: usize) -> Result<usize, String> {
        if (1..=self.max_tag_len()).contains(&tag_len) {
            return Ok(tag_len);
        }
        let how = if self.tag_len_is_input() {
            format!(
                "its output length L, an input of KMAC (SP 800-185); default {}",
                self.tag_len
            )
        } else if self.family == Family::Null {
            "the null function carries any length".to_string()
        } else {
            format!("a truncation of its {}-byte tag", self.tag_len)
        };
        Err(format!(
            "{} takes tags of 1–{} bytes ({how}); got {tag_len}",
            self.name,
            self.max_tag_len()
        ))
    }

    /// The message lengths this algorithm takes, as every refusal says it: `eia3-zuc128 takes
    /// messages of 1 … 8188 bytes` (the callers add what was asked: a size, a file, a datagram).
    pub fn length_rule(&self) -> String {
        format!(
            "{} takes messages of {}",
            self.name,
            self.message_bits.describe_bytes()
        )
    }
}

/// Look an algorithm up by registry name.
pub fn algorithm(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::ALGORITHMS;

    /// The callback that turns an [`algorithm_names!`] expansion into a slice.
    macro_rules! names {
        (@names $($name:literal),*) => {
            &[$($name),*] as &[&str]
        };
    }

    /// A family names algorithms that exist, in the order `list` shows them, so a backend that names
    /// it lists them as it would by hand.
    #[test]
    fn every_family_names_known_algorithms_in_list_order() {
        // A family's name beside its expansion.
        macro_rules! family {
            ($family:ident) => {
                (
                    stringify!($family),
                    crate::algorithm_names!([names] (@names) [] $family),
                )
            };
        }
        let families = [
            family!(HMAC_SHA2),
            family!(HMAC_SHA512_T),
            family!(HMAC_SHA3),
            family!(HMAC_ALL),
            family!(CMAC_AES),
            family!(GMAC_AES),
        ];
        for (family, members) in families {
            assert!(members.len() >= 2, "{family}: a family of one");
            let at: Vec<usize> = members
                .iter()
                .map(|m| {
                    ALGORITHMS
                        .iter()
                        .position(|a| a.name == *m)
                        .unwrap_or_else(|| panic!("{family}: {m} is no algorithm"))
                })
                .collect();
            assert!(
                at.windows(2).all(|w| w[1] == w[0] + 1),
                "{family}: {members:?} are not neighbours in ALGORITHMS"
            );
        }
    }

    /// Names and families mix, in the order written.
    #[test]
    fn names_and_families_expand_in_place() {
        let list = crate::algorithm_names!([names] (@names) [] "hmac-md5", CMAC_AES, "poly1305",);
        assert_eq!(
            list,
            [
                "hmac-md5",
                "cmac-aes128",
                "cmac-aes192",
                "cmac-aes256",
                "poly1305"
            ]
        );
    }
}
