//! Reading results files back: a read-model of the JSON that `macbench run` writes.
//!
//! `bench::Document` is built for writing (it borrows `'static` names from the registry), so reading gets
//! its own owned types. They are deliberately lenient — every field a report does not strictly need has a
//! default — so files from older builds of the same schema still load; but a file that is not ours, or that
//! comes from a newer schema, is refused with a one-line reason rather than half-read.

use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a results file could not be read. Each message names the file and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: cannot read: {reason}")]
    Io { path: String, reason: String },
    #[error("{path}: larger than {max_mib} MiB, the most a results file may be")]
    TooLarge { path: String, max_mib: u64 },
    #[error("{path}: the file is empty; expected a results JSON written by `macbench run --json`")]
    Empty { path: String },
    #[error(
        "{path}: not JSON ({reason}); expected a results JSON written by `macbench run --json`"
    )]
    NotJson { path: String, reason: String },
    #[error("{path}: not a macbench results file ({found}); expected a JSON object with \"tool\": \"macbench\"")]
    NotOurs { path: String, found: String },
    #[error("{path}: results schema_version {found} is newer than this macbench reads (up to {supported}); upgrade macbench")]
    Newer {
        path: String,
        found: u64,
        supported: u32,
    },
    #[error("{path}: malformed macbench results: {reason}")]
    Malformed { path: String, reason: String },
}

/// A message size: bytes, or the name of a size model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Size {
    Bytes(u64),
    Model(String),
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Bytes(n) => write!(f, "{n}"),
            Size::Model(m) => f.write_str(m),
        }
    }
}

impl Size {
    pub fn bytes(&self) -> Option<u64> {
        match self {
            Size::Bytes(n) => Some(*n),
            Size::Model(_) => None,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HostFacts {
    pub cpu_model: String,
    pub cpu_features: Vec<String>,
    pub online_cpus: Vec<usize>,
    pub kernel: String,
    pub governor: Option<String>,
    pub library_versions: Vec<(String, String)>,
    pub macbench_version: String,
    pub git_commit: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ClockFacts {
    pub reference_hz: f64,
    pub reference_source: String,
    pub core_hz_estimated: Option<f64>,
    pub core_to_reference_ratio: Option<f64>,
    pub hardware_cycles: String,
    pub timer_resolution_ns: u64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HarnessFacts {
    pub size: u32,
    pub absolute_cycles_per_message: Option<f64>,
    pub apparent_cycles_per_message: Option<f64>,
}

/// Aggregate metrics (medians over repeats), as in METHODOLOGY §3.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct MetricsRow {
    pub absolute_cycles_per_byte: Option<f64>,
    pub apparent_cycles_per_byte: Option<f64>,
    pub absolute_cycles_per_message: Option<f64>,
    pub apparent_cycles_per_message: Option<f64>,
    pub bytes_per_second: Option<f64>,
    pub messages_per_second: Option<f64>,
    pub parallelism: Option<f64>,
    pub fairness: Option<f64>,
    pub min_thread_apparent_cycles_per_byte: Option<f64>,
    pub max_thread_apparent_cycles_per_byte: Option<f64>,
    pub cpu_utilisation: Option<f64>,
    pub core_cycles_per_byte: Option<f64>,
    pub core_cycles_per_byte_estimated: Option<f64>,
    pub key_setup_cycles: Option<f64>,
    pub window_seconds: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Interval {
    pub min: f64,
    pub max: f64,
}

impl Interval {
    /// Whether two [min, max] intervals share any point.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.min <= other.max && other.min <= self.max
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SpreadRow {
    pub absolute_cycles_per_byte: Option<Interval>,
    pub apparent_cycles_per_byte: Option<Interval>,
    pub bytes_per_second: Option<Interval>,
}

/// 95 % confidence intervals of the headline metrics (absent in files written before they existed).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Ci95Row {
    pub absolute_cycles_per_byte: Option<crate::stats::Interval>,
    pub apparent_cycles_per_byte: Option<crate::stats::Interval>,
}

impl Ci95Row {
    /// As a [min, max] interval, for the same overlap test as a spread.
    pub fn absolute(&self) -> Option<Interval> {
        self.absolute_cycles_per_byte.map(|i| Interval {
            min: i.low,
            max: i.high,
        })
    }

    pub fn apparent(&self) -> Option<Interval> {
        self.apparent_cycles_per_byte.map(|i| Interval {
            min: i.low,
            max: i.high,
        })
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ThreadRow {
    pub session: usize,
    pub messages: u64,
    pub bytes: u64,
    pub cpu_seconds: f64,
    pub absolute_cycles_per_byte: Option<f64>,
    pub apparent_cycles_per_byte: Option<f64>,
    pub wall_clock_cycles_per_byte: Option<f64>,
    pub cpu_at_start: Option<usize>,
    pub cpu_at_end: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct WarningRow {
    pub code: String,
    pub message: String,
    pub session: Option<usize>,
    pub fatal: bool,
}

/// One scenario's result.
#[derive(Debug, Clone, Deserialize)]
pub struct ResultRow {
    pub algorithm: String,
    pub backend: String,
    pub accel: String,
    pub size: Size,
    #[serde(default)]
    pub mean_message_bytes: Option<f64>,
    pub sessions: usize,
    #[serde(default)]
    pub cores: String,
    #[serde(default)]
    pub repeats: usize,
    #[serde(default)]
    pub metrics: MetricsRow,
    #[serde(default)]
    pub spread: SpreadRow,
    #[serde(default)]
    pub ci95: Ci95Row,
    #[serde(default)]
    pub threads: Vec<ThreadRow>,
    #[serde(default)]
    pub warnings: Vec<WarningRow>,
    #[serde(default)]
    pub adjustments: Vec<String>,
    #[serde(default)]
    pub failed: bool,
}

impl ResultRow {
    /// `algorithm/backend/accel`.
    pub fn function(&self) -> String {
        format!("{}/{}/{}", self.algorithm, self.backend, self.accel)
    }

    /// `algorithm/backend/accel@size`: what `macbench report --scenario` takes.
    pub fn scenario_key(&self) -> String {
        format!("{}@{}", self.function(), self.size)
    }

    /// Number of cores in the core set (`cores` is a CPU list such as `0-3,8`).
    pub fn core_count(&self) -> usize {
        crate::host::parse_cpu_list(&self.cores)
            .map(|c| c.len())
            .unwrap_or(0)
    }

    /// Metrics that may be used: `None` for a failed result.
    pub fn usable(&self) -> Option<&MetricsRow> {
        (!self.failed).then_some(&self.metrics)
    }
}

/// The results file.
#[derive(Debug, Clone, Deserialize)]
pub struct ResultsDoc {
    pub schema_version: u64,
    pub tool: String,
    #[serde(default)]
    pub host: HostFacts,
    #[serde(default)]
    pub clock: ClockFacts,
    #[serde(default)]
    pub scenario: serde_json::Value,
    #[serde(default)]
    pub harness: Option<HarnessFacts>,
    #[serde(default)]
    pub results: Vec<ResultRow>,
    #[serde(default)]
    pub partial: bool,
}

/// A results file as loaded, with a short label for legends (the file stem).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub path: PathBuf,
    pub label: String,
    pub doc: ResultsDoc,
}

/// The largest results file read: a sweep of thousands of scenarios is a few MiB; the bound keeps
/// `report /dev/zero` from growing without end.
pub const MAX_RESULTS_BYTES: u64 = 256 << 20;

/// Read and check one results file (at most [`MAX_RESULTS_BYTES`]). `report`, `diff` and
/// `model --results` all read through here, so they accept and refuse the same files.
pub fn read(path: &Path) -> Result<Loaded, ReadError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let io = |e: std::io::Error| ReadError::Io {
        path: shown.clone(),
        reason: match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            _ => e.to_string(),
        },
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_RESULTS_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() as u64 > MAX_RESULTS_BYTES {
        return Err(ReadError::TooLarge {
            path: shown,
            max_mib: MAX_RESULTS_BYTES >> 20,
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| ReadError::NotJson {
        path: shown.clone(),
        reason: format!("not UTF-8 text ({e})"),
    })?;
    let doc = parse(&shown, &text)?;
    let label = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.clone());
    Ok(Loaded {
        path: path.to_path_buf(),
        label,
        doc,
    })
}

/// Check and parse the text of a results file; `path` only names it in errors.
pub fn parse(path: &str, text: &str) -> Result<ResultsDoc, ReadError> {
    let path = path.to_string();
    if text.trim().is_empty() {
        return Err(ReadError::Empty { path });
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ReadError::NotJson {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let Some(object) = value.as_object() else {
        return Err(ReadError::NotOurs {
            path,
            found: "top level is not an object".to_string(),
        });
    };
    match object.get("tool") {
        Some(serde_json::Value::String(t)) if t == "macbench" => {}
        Some(other) => {
            return Err(ReadError::NotOurs {
                path,
                found: format!("\"tool\" is {other}"),
            })
        }
        None => {
            return Err(ReadError::NotOurs {
                path,
                found: "no \"tool\" field".to_string(),
            })
        }
    }
    let version = object
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| ReadError::Malformed {
            path: path.clone(),
            reason: "no numeric \"schema_version\"".to_string(),
        })?;
    if version > u64::from(crate::bench::SCHEMA_VERSION) {
        return Err(ReadError::Newer {
            path,
            found: version,
            supported: crate::bench::SCHEMA_VERSION,
        });
    }
    serde_json::from_value(value).map_err(|e| ReadError::Malformed {
        path,
        reason: e.to_string(),
    })
}

/// Host identity used to decide whether two files come from the same machine.
pub fn host_key(doc: &ResultsDoc) -> String {
    format!(
        "{} ({} CPUs, {})",
        doc.host.cpu_model,
        doc.host.online_cpus.len(),
        doc.host.kernel
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_foreign_and_newer_files() {
        assert!(matches!(parse("x", ""), Err(ReadError::Empty { .. })));
        assert!(matches!(parse("x", "{"), Err(ReadError::NotJson { .. })));
        assert!(matches!(
            parse("x", r#"{"tool":"hyperfine"}"#),
            Err(ReadError::NotOurs { .. })
        ));
        assert!(matches!(parse("x", "[1]"), Err(ReadError::NotOurs { .. })));
        assert!(matches!(
            parse("x", r#"{"tool":"macbench","schema_version":999}"#),
            Err(ReadError::Newer { found: 999, .. })
        ));
    }

    #[test]
    fn minimal_file_reads() {
        let doc = parse(
            "x",
            r#"{"tool":"macbench","schema_version":1,"results":[{"algorithm":"a","backend":"b","accel":"hw","size":64,"sessions":1,"cores":"0-3"}]}"#,
        )
        .unwrap();
        assert_eq!(doc.results[0].scenario_key(), "a/b/hw@64");
        assert_eq!(doc.results[0].core_count(), 4);
    }
}
