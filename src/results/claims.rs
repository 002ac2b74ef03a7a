//! The claims file of a reproduction (`claims.json`): written by `macbench reproduce`, read back by
//! `report` to put several hosts' verdicts side by side. One definition both ways, like the results.

use serde::{Deserialize, Serialize};

/// The name a reproduction gives its claims file in its directory.
pub const CLAIMS_FILE: &str = "claims.json";

/// One study's claims judged on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimsFile {
    /// The study's id (`rashwan-mobile`).
    pub study: String,
    pub title: String,
    pub authors: String,
    /// The host's label (`run --label`, default its hostname), as its results name it.
    #[serde(default)]
    pub host: String,
    pub claims: Vec<ClaimRow>,
    /// What disturbed the results the verdicts rest on, if anything did.
    pub caveat: Option<String>,
}

/// One claim's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimRow {
    pub id: String,
    /// The claim, in our own words.
    pub claim: String,
    pub tolerance: f64,
    /// `holds`, `does-not-hold` or `cannot-test`.
    pub verdict: String,
    /// The numbers the verdict rests on, or why it cannot be tested.
    pub detail: String,
}
