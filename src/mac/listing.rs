//! What `macbench list` shows of each function: the registry's facts about it as one row (key, tag,
//! nonce and message lengths narrowed by the library's own limits, availability, self-test), and a
//! row for each algorithm no built backend implements, so nothing is silently missing. The CLI prints
//! these rows as tables and writes them as JSON; the facts themselves stay on the registry's values.

use super::{vectors, Availability, Function};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct ListRow {
    pub algorithm: &'static str,
    pub backend: &'static str,
    pub accel: String,
    pub available: bool,
    pub reason: Option<String>,
    pub key_bytes: String,
    pub default_key_bytes: usize,
    pub tag_bytes: usize,
    pub block_bytes: usize,
    pub nonce_bytes: Option<usize>,
    /// The nonce lengths this function takes (the standard's, narrowed by the library): `1–16 bytes
    /// (a 16-byte nonce below 2^127: …)`; `None` for no nonce.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce_rule: Option<String>,
    #[serde(skip)]
    pub nonce_range: Option<(usize, usize)>,
    /// What `--tag-len` takes: `1–32 bytes (truncation)`, `1–64 bytes (KMAC output length L)`.
    pub tag_len_rule: String,
    /// The message lengths this function takes: the algorithm's rule narrowed by the library's own
    /// limit (`0 … 65534 bytes` for ipsec-mb's HMAC).
    pub message_bytes: String,
    /// The library's own limit, when it has one below the algorithm's, and where it comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_limit: Option<LimitRow>,
    /// The library's own key-length limit, when it takes fewer than the algorithm (`key_bytes` is
    /// already narrowed by it), and where it comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_limit: Option<KeyLimitRow>,
    pub selftest: String,
    pub caveat: Option<&'static str>,
    /// An ISA level its backend does not offer ([`Function::is_level_not_offered`]): summarised
    /// below the terminal table, kept in the JSON as a row like any other.
    #[serde(skip)]
    pub level_not_offered: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyLimitRow {
    pub key_bytes: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_customization_bytes: Option<usize>,
    pub source: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitRow {
    pub max_bytes: u64,
    pub source: &'static str,
}

impl ListRow {
    /// The nonce column: the default length, and the range the function takes when it has one:
    /// `12 (1–128)`, `16`, `-`.
    pub fn nonce_cell(&self) -> String {
        match (self.nonce_bytes, self.nonce_range) {
            (Some(n), Some((lo, hi))) if lo < hi => format!("{n} ({lo}–{hi})"),
            (Some(n), _) => n.to_string(),
            (None, _) => "-".to_string(),
        }
    }
}

/// `f`'s row, its self-test run with `key_setup` (the isolation layer's, for switched functions).
pub fn row_for(f: &Function, key_setup: super::KeySetup) -> ListRow {
    let (available, reason, selftest) = match f.availability() {
        Availability::Available => {
            let t = vectors::self_test(f, key_setup);
            (true, None, t.status())
        }
        Availability::Unavailable(why) => (false, Some(why), "not run".to_string()),
    };
    ListRow {
        algorithm: f.algorithm.name,
        backend: f.backend.name,
        accel: f.accel.to_string(),
        available,
        reason,
        key_bytes: f.describe_key_lengths(),
        default_key_bytes: f.algorithm.default_key_len,
        tag_bytes: f.algorithm.tag_len,
        block_bytes: f.algorithm.block_len,
        nonce_bytes: f.algorithm.nonce_len,
        nonce_rule: f.nonce_rule().map(|r| r.describe()),
        nonce_range: f.nonce_rule().map(|r| (r.min, r.max)),
        tag_len_rule: tag_len_rule(f.algorithm),
        message_bytes: match f.length_limit() {
            Some(l) => format!(
                "{} … {} bytes",
                f.algorithm.message_bits.min.div_ceil(8),
                l.max_bytes
            ),
            None => f.algorithm.message_bits.describe_bytes(),
        },
        length_limit: f.length_limit().map(|l| LimitRow {
            max_bytes: l.max_bytes,
            source: l.source,
        }),
        key_limit: f.key_limit().map(|l| KeyLimitRow {
            key_bytes: f.describe_key_lengths(),
            max_customization_bytes: l.max_customization,
            source: l.source,
        }),
        selftest,
        caveat: f.algorithm.caveat,
        level_not_offered: f.is_level_not_offered(),
    }
}

/// What `--tag-len` takes for `algorithm`, in `list`'s words.
fn tag_len_rule(algorithm: &super::Algorithm) -> String {
    let how = if algorithm.tag_len_is_input() {
        "KMAC output length L"
    } else if algorithm.family == super::Family::Null {
        "any"
    } else {
        "truncation"
    };
    format!("1–{} bytes ({how})", algorithm.max_tag_len())
}

/// Rows for algorithms that no built backend implements (so nothing is silently missing).
pub fn missing_rows() -> Vec<ListRow> {
    let functions = super::functions();
    super::ALGORITHMS
        .iter()
        .filter(|a| !functions.iter().any(|f| f.algorithm.name == a.name))
        .map(|a| {
            let planned = super::PLANNED.iter().find(|(alg, _, _)| *alg == a.name);
            ListRow {
                algorithm: a.name,
                backend: planned.map_or("-", |p| p.1),
                accel: "-".to_string(),
                available: false,
                reason: Some(
                    planned.map_or("no backend implements it".to_string(), |p| p.2.to_string()),
                ),
                key_bytes: a.key_lengths.describe(),
                default_key_bytes: a.default_key_len,
                tag_bytes: a.tag_len,
                block_bytes: a.block_len,
                nonce_bytes: a.nonce_len,
                nonce_rule: a.nonce_rule().map(|r| r.describe()),
                nonce_range: a.nonce_rule().map(|r| (r.min, r.max)),
                tag_len_rule: tag_len_rule(a),
                message_bytes: a.message_bits.describe_bytes(),
                length_limit: None,
                key_limit: None,
                selftest: "not run".to_string(),
                caveat: a.caveat,
                level_not_offered: false,
            }
        })
        .collect()
}

/// `--alg` and `--backend` of `list` and `selftest`: which rows to keep (parsed by
/// `spec::selection`).
#[derive(Clone, Default)]
pub struct Selection {
    pub algorithms: Option<Vec<&'static str>>,
    pub backend: Option<&'static super::Backend>,
}

impl Selection {
    pub fn wants(&self, algorithm: &str, backend: &str) -> bool {
        self.algorithms
            .as_ref()
            .is_none_or(|a| a.contains(&algorithm))
            && self.backend.is_none_or(|b| b.name == backend)
    }

    /// The rows `list` shows: each selected function's, keyed through `key_setup`, then (unless a
    /// backend was chosen) each selected algorithm no built backend implements.
    pub fn rows(&self, key_setup: super::KeySetup) -> Vec<ListRow> {
        let mut rows: Vec<ListRow> = super::functions()
            .iter()
            .filter(|f| self.wants(f.algorithm.name, f.backend.name))
            .map(|f| row_for(f, key_setup))
            .collect();
        if self.backend.is_none() {
            rows.extend(
                missing_rows()
                    .into_iter()
                    .filter(|r| self.wants(r.algorithm, r.backend)),
            );
        }
        rows
    }
}
