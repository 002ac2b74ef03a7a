//! Known-answer vectors and the self-test that every function passes before it is timed.
//!
//! Vector files (`vectors/*.vec`) are plain text so a reviewer can read them next to the RFC they quote:
//! `field = value` lines, records separated by blank lines, `#` comments, and a `source` in every record.
//! Messages may be written as generators (`@seq(N,M)`, `@repeat(HEX,N)`) because the official BLAKE2,
//! BLAKE3 and SipHash KATs are defined that way. The files are embedded in the binary (see `algorithm.rs`).
//!
//! Each vector is run three ways on one keyed object: whole, whole again (proves the per-message reset
//! keeps the key state intact), and, where the backend streams, fed in several chunkings.
//!
//! Bit lengths: the 3GPP integrity test sets have messages whose length is not a multiple of 8 bits.
//! Such a record gives `bits = N` (absent: 8 × the bytes of `msg`), `msg` then holding `ceil(N / 8)`
//! bytes whose first N bits, most significant first, are the message. These vectors run through
//! [`KeyedMac::tag_bits`](super::KeyedMac::tag_bits), which a backend without bit lengths refuses:
//! the vector then fails, it is never skipped.

use super::{Function, KeyParams, KeySetup, MAX_TAG_LEN};
use std::collections::BTreeMap;

/// A record: its starting line and its fields, as written.
#[derive(Debug, Clone)]
pub struct Record {
    pub line: usize,
    pub fields: BTreeMap<String, String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{path}:{line}: {reason}")]
pub struct VectorError {
    pub path: String,
    pub line: usize,
    pub reason: String,
}

/// Parse a vector file into records.
pub fn parse_records(path: &str, text: &str) -> Result<Vec<Record>, VectorError> {
    let mut records = Vec::new();
    let mut current: Option<Record> = None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            records.extend(current.take());
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            return Err(VectorError {
                path: path.to_string(),
                line: line_no,
                reason: format!("expected `field = value`, found {line:?}"),
            });
        };
        let record = current.get_or_insert_with(|| Record {
            line: line_no,
            fields: BTreeMap::new(),
        });
        let name = name.trim().to_string();
        if record
            .fields
            .insert(name.clone(), value.trim().to_string())
            .is_some()
        {
            return Err(VectorError {
                path: path.to_string(),
                line: line_no,
                reason: format!("field `{name}` given twice in one record"),
            });
        }
    }
    records.extend(current);
    Ok(records)
}

impl Record {
    fn error(&self, path: &str, reason: String) -> VectorError {
        VectorError {
            path: path.to_string(),
            line: self.line,
            reason,
        }
    }

    /// A field's raw text, required.
    pub fn text(&self, path: &str, name: &str) -> Result<&str, VectorError> {
        self.fields
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| self.error(path, format!("missing field `{name}`")))
    }

    /// A byte-string field: hex or a generator; `None` when absent.
    pub fn bytes(&self, path: &str, name: &str) -> Result<Option<Vec<u8>>, VectorError> {
        match self.fields.get(name) {
            None => Ok(None),
            Some(v) => decode_bytes(v)
                .map(Some)
                .map_err(|e| self.error(path, format!("field `{name}`: {e}"))),
        }
    }

    /// The `bits` field: a message length in bits that `msg_len` bytes hold exactly
    /// (`ceil(bits / 8) == msg_len`); absent, `8 × msg_len`.
    fn bits(&self, path: &str, msg_len: usize) -> Result<u64, VectorError> {
        let whole = 8 * msg_len as u64;
        let Some(text) = self.fields.get("bits") else {
            return Ok(whole);
        };
        let bits: u64 = text.parse().map_err(|_| {
            self.error(
                path,
                format!("field `bits`: {text:?} is not a number of bits"),
            )
        })?;
        if bits.div_ceil(8) != msg_len as u64 {
            return Err(self.error(
                path,
                format!(
                    "field `bits`: {bits} bits need {} message bytes; msg has {msg_len}",
                    bits.div_ceil(8)
                ),
            ));
        }
        Ok(bits)
    }

    fn required_bytes(&self, path: &str, name: &str) -> Result<Vec<u8>, VectorError> {
        self.bytes(path, name)?
            .ok_or_else(|| self.error(path, format!("missing field `{name}`")))
    }
}

/// Decode hex, `@seq(N,M)` (byte i is i mod M) or `@repeat(HEX,N)`.
pub fn decode_bytes(value: &str) -> Result<Vec<u8>, String> {
    let value = value.trim();
    if let Some(args) = directive_args(value, "@seq", "two numbers") {
        let (n, m) = args?;
        let n = directive_count(n, "length", value)?;
        let m = directive_count(m, "modulus", value)?;
        if m == 0 || m > 256 {
            return Err(format!("@seq modulus must be 1..=256: {value}"));
        }
        return Ok((0..n).map(|i| (i % m) as u8).collect());
    }
    if let Some(args) = directive_args(value, "@repeat", "HEX,N") {
        let (unit, n) = args?;
        let unit = hex::decode(unit.trim()).map_err(|e| format!("bad hex in {value}: {e}"))?;
        return Ok(unit.repeat(directive_count(n, "count", value)?));
    }
    hex::decode(value).map_err(|e| format!("bad hex: {e}"))
}

/// The two arguments of `value` when it is the directive `name(A,B)`; `None` when it is not that
/// directive, an error naming what it takes (`usage`) when it lacks the comma.
fn directive_args<'v>(
    value: &'v str,
    name: &str,
    usage: &str,
) -> Option<Result<(&'v str, &'v str), String>> {
    let args = value
        .strip_prefix(name)?
        .strip_prefix('(')?
        .strip_suffix(')')?;
    Some(
        args.split_once(',')
            .ok_or_else(|| format!("{name} needs {usage}: {value}")),
    )
}

/// A directive's whole-number argument, or an error naming which one (`what`) in `value`.
fn directive_count(arg: &str, what: &str, value: &str) -> Result<usize, String> {
    arg.trim()
        .parse()
        .map_err(|_| format!("bad {what} in {value}"))
}

/// A MAC known answer.
#[derive(Debug, Clone)]
pub struct Vector {
    pub source: String,
    pub line: usize,
    pub key: Vec<u8>,
    pub msg: Vec<u8>,
    /// Message length in bits: `bits = N`, or 8 × `msg.len()`.
    pub bits: u64,
    pub nonce: Option<Vec<u8>>,
    pub custom: Vec<u8>,
    pub tag: Vec<u8>,
    /// The published tag is a prefix of the full tag (RFC 2202/4231 truncation cases).
    pub truncated: bool,
    /// `output_len = N`: KMAC computed with output length L = N bytes (the tag is then N bytes, an
    /// input of the construction, not a truncation); absent: the algorithm's own tag length.
    pub output_len: Option<usize>,
}

/// Parse a MAC vector file.
pub fn parse_vectors(path: &str, text: &str) -> Result<Vec<Vector>, VectorError> {
    parse_records(path, text)?
        .into_iter()
        .map(|r| {
            let msg = r.required_bytes(path, "msg")?;
            let bits = r.bits(path, msg.len())?;
            Ok(Vector {
                source: r.text(path, "source")?.to_string(),
                line: r.line,
                key: r.required_bytes(path, "key")?,
                msg,
                bits,
                nonce: r.bytes(path, "nonce")?,
                custom: r.bytes(path, "custom")?.unwrap_or_default(),
                tag: r.required_bytes(path, "tag")?,
                truncated: r.fields.get("truncated").map(String::as_str) == Some("true"),
                output_len: r
                    .fields
                    .get("output_len")
                    .map(|text| {
                        text.parse::<usize>().map_err(|_| {
                            r.error(
                                path,
                                format!("field `output_len`: {text:?} is not a number of bytes"),
                            )
                        })
                    })
                    .transpose()?,
            })
        })
        .collect()
}

/// Outcome of one function's self-test.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SelfTest {
    pub function: String,
    pub vectors: usize,
    pub passed: usize,
    /// One line per failure: file, line, source and what differed.
    pub failures: Vec<String>,
    /// Whether the streaming path (chunked input) was exercised.
    pub chunked: bool,
    /// Why there is nothing to run (e.g. the null function), if so.
    pub note: Option<String>,
    /// Records the standard allows but this backend's library does not take (a GMAC IV length
    /// RustCrypto is not registered for): not run, one line each saying why; never counted as passed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_taken: Vec<String>,
    /// One line per vector that passed: file, line, source, message and tag lengths (what
    /// `selftest -v` prints).
    #[serde(skip)]
    pub checked: Vec<String>,
}

impl SelfTest {
    pub fn ok(&self) -> bool {
        self.failures.is_empty() && (self.vectors > 0 || self.note.is_some())
    }

    pub fn status(&self) -> String {
        match (&self.note, self.failures.len()) {
            (Some(note), 0) if self.vectors == 0 => format!("n/a ({note})"),
            (_, 0) if !self.not_taken.is_empty() => format!(
                "pass {}/{} ({} not taken by this library)",
                self.passed,
                self.vectors + self.not_taken.len(),
                self.not_taken.len()
            ),
            (_, 0) => format!("pass {}/{}", self.passed, self.vectors),
            (_, n) => format!("FAIL {n}/{}", self.vectors),
        }
    }
}

/// Chunk sizes used to feed messages through streaming interfaces.
const CHUNKINGS: &[usize] = &[1, 3, 16, 17, 64, 1000];

/// Run every vector of the function's algorithm, keying through `key_setup` (the isolation layer's
/// `isolate::key` reaches a switched function's child; [`Function::with_key`] keys in this process).
pub fn self_test(function: &Function, key_setup: KeySetup) -> SelfTest {
    let algorithm = function.algorithm;
    let mut result = SelfTest {
        function: function.id(),
        vectors: 0,
        passed: 0,
        failures: Vec::new(),
        chunked: false,
        note: None,
        not_taken: Vec::new(),
        checked: Vec::new(),
    };
    let Some(file) = &algorithm.vectors else {
        result.note = Some(match algorithm.family {
            super::Family::Null => "not a MAC: no vectors".to_string(),
            _ => "no vector file".to_string(),
        });
        return result;
    };
    let vectors = match parse_vectors(file.path, file.text) {
        Ok(v) => v,
        Err(e) => {
            result.failures.push(e.to_string());
            return result;
        }
    };
    if vectors.is_empty() {
        result
            .failures
            .push(format!("{}: no vectors in file", file.path));
        return result;
    }
    for v in &vectors {
        // A nonce the standard allows and this backend's library does not take: said, not run.
        if let Some(nonce) = &v.nonce {
            let standard = algorithm.nonce_rule().and_then(|r| r.check(nonce));
            let here = function.nonce_rule().and_then(|r| r.check(nonce));
            if standard.is_none() && here.is_some() {
                result.not_taken.push(format!(
                    "{}:{} ({}): a {}-byte nonce; {}",
                    file.path,
                    v.line,
                    v.source,
                    nonce.len(),
                    function
                        .check_nonce(Some(nonce))
                        .err()
                        .map_or_else(String::new, |e| e.to_string())
                ));
                continue;
            }
        }
        // A key or customization string the algorithm takes and this backend's library does not
        // (OpenSSL's KMAC above 512 bytes, libsodium's BLAKE2b keys below 16): said, not run.
        if let Some(why) = not_taken_by_library(function, v) {
            result
                .not_taken
                .push(format!("{}:{} ({}): {why}", file.path, v.line, v.source));
            continue;
        }
        result.vectors += 1;
        match check_vector(function, v, key_setup) {
            Ok(chunked) => {
                result.passed += 1;
                result.chunked |= chunked;
                result.checked.push(format!(
                    "{}:{} ({}): {}{}, {}-byte tag{}: ok",
                    file.path,
                    v.line,
                    v.source,
                    if v.bits % 8 == 0 {
                        format!("{}-byte message", v.bits / 8)
                    } else {
                        format!("{}-bit message", v.bits)
                    },
                    v.nonce
                        .as_ref()
                        .map_or_else(String::new, |n| format!(", {}-byte nonce", n.len())),
                    v.tag.len(),
                    if chunked {
                        // Through `tag_chunks`: the library's incremental interface, which is not
                        // `--dispatch stream` (ring and AWS-LC take pieces here and refuse that).
                        ", also fed in pieces"
                    } else {
                        ""
                    }
                ));
            }
            Err(reason) => result
                .failures
                .push(format!("{}:{} ({}): {reason}", file.path, v.line, v.source)),
        }
    }
    result
}

/// Why `function`'s library does not take vector `v`'s key or customization string, which the
/// algorithm allows ([`super::KeyLimit`]); `None` when it takes both.
fn not_taken_by_library(function: &Function, v: &Vector) -> Option<String> {
    if !function.algorithm.key_lengths.accepts(v.key.len()) {
        return None;
    }
    if let Err(e) = function.check_key_len(v.key.len()) {
        return Some(format!("a {}-byte key; {e}", v.key.len()));
    }
    let limit = function.key_limit()?;
    let max = limit.max_customization?;
    (v.custom.len() > max).then(|| {
        format!(
            "a {}-byte customization string; {} takes at most {max} ({})",
            v.custom.len(),
            function.id(),
            limit.source
        )
    })
}

/// A vector whose length is not whole bytes: tagged twice on one key, then again with the unused low
/// bits of the last byte flipped, which must not change the tag (they are not part of the message).
fn check_bit_length(
    keyed: &mut dyn super::KeyedMac,
    nonce: &[u8],
    v: &Vector,
    tag: &mut [u8],
    expect: impl Fn(&[u8], &str) -> Result<(), String>,
) -> Result<bool, String> {
    let mut run = |msg: &[u8], tag: &mut [u8], how: &str| {
        tag.fill(0);
        keyed
            .tag_bits(nonce, msg, v.bits, tag)
            .map_err(|e| format!("{how}: {e}"))?;
        expect(tag, how)
    };
    run(&v.msg, tag, &format!("{}-bit message", v.bits))?;
    run(&v.msg, tag, "second message on the same key")?;
    let mut flipped = v.msg.clone();
    let unused = 8 - (v.bits % 8) as u32;
    if let Some(last) = flipped.last_mut() {
        *last ^= ((1u16 << unused) - 1) as u8;
    }
    run(
        &flipped,
        tag,
        "with the unused bits of the last byte flipped",
    )?;
    Ok(false)
}

/// Check one vector, keying through `key_setup`; `Ok(true)` if chunked feeding was also checked.
pub fn check_vector(function: &Function, v: &Vector, key_setup: KeySetup) -> Result<bool, String> {
    let tag_len = match v.output_len {
        Some(l) if function.algorithm.tag_len_is_input() => l,
        Some(l) => {
            return Err(format!(
                "output_len = {l}, but {}'s tag length is no input of the construction",
                function.algorithm.name
            ))
        }
        None => function.algorithm.tag_len,
    };
    if v.tag.len() > tag_len || (!v.truncated && v.tag.len() != tag_len) || v.tag.is_empty() {
        return Err(format!(
            "vector tag is {} bytes, algorithm tag is {tag_len} (truncated = {})",
            v.tag.len(),
            v.truncated
        ));
    }
    let params = KeyParams {
        customization: &v.custom,
        output_len: v.output_len,
    };
    let nonce = v.nonce.as_deref().unwrap_or(&[]);
    function
        .check_nonce(v.nonce.as_deref())
        .map_err(|e| e.to_string())?;
    let accepted = function.algorithm.message_bits;
    if !accepted.accepts_bits(v.bits) {
        return Err(format!(
            "a {}-bit message is outside what {} accepts ({}…{} bits)",
            v.bits, function.algorithm.name, accepted.min, accepted.max
        ));
    }
    let mut keyed = key_setup(function, &v.key, params).map_err(|e| e.to_string())?;
    let mut tag = [0u8; MAX_TAG_LEN];
    let tag = &mut tag[..tag_len];
    let expect = |tag: &[u8], how: &str| {
        if tag[..v.tag.len()] == v.tag[..] {
            Ok(())
        } else {
            Err(format!(
                "{how}: got {}, expected {}",
                hex::encode(&tag[..v.tag.len()]),
                hex::encode(&v.tag)
            ))
        }
    };
    if v.bits != 8 * v.msg.len() as u64 {
        return check_bit_length(keyed.as_mut(), nonce, v, tag, expect);
    }
    let refused = |how: &str, r: crate::mac::Refused| format!("{how}: {r}");
    keyed
        .tag_into(nonce, &v.msg, tag)
        .map_err(|r| refused("whole message", r))?;
    expect(tag, "whole message")?;
    tag.fill(0);
    keyed
        .tag_into(nonce, &v.msg, tag)
        .map_err(|r| refused("second message on the same key", r))?;
    expect(tag, "second message on the same key")?;
    if !keyed
        .verify(nonce, &v.msg, &v.tag)
        .map_err(|r| refused("verify()", r))?
    {
        return Err("verify() rejected the correct tag".to_string());
    }
    let mut forged = v.tag.clone();
    forged[0] ^= 1;
    if keyed
        .verify(nonce, &v.msg, &forged)
        .map_err(|r| refused("verify()", r))?
    {
        return Err("verify() accepted a wrong tag".to_string());
    }
    // The bit-length entry point agrees on whole bytes (for a backend that overrides it, its own path).
    tag.fill(0);
    keyed
        .tag_bits(nonce, &v.msg, v.bits, tag)
        .map_err(|e| format!("tag_bits: {e}"))?;
    expect(tag, "tag_bits with whole bytes")?;
    if !keyed.streams() {
        return Ok(false);
    }
    for &size in CHUNKINGS {
        let chunks: Vec<&[u8]> = if v.msg.is_empty() {
            vec![&[][..], &[][..]]
        } else {
            v.msg.chunks(size).collect()
        };
        tag.fill(0);
        let how = format!("fed in {size}-byte chunks");
        keyed
            .tag_chunks(nonce, &chunks, tag)
            .map_err(|r| refused(&how, r))?;
        expect(tag, &how)?;
    }
    Ok(true)
}
