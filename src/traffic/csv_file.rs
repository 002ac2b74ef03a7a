//! A user's own size model as a `size,weight` CSV.
//!
//! Format: one `size,weight` pair per line; an optional header line (both fields non-numeric, e.g.
//! `size,weight`); blank lines and lines starting with `#` are ignored. Weights need not sum to 1
//! (they are normalised), repeated sizes add up. Sizes are IP total lengths, so 1…65535.
//! Every error names the file and the line, and says what would be accepted.

use std::path::{Path, PathBuf};

use super::distribution::SizeDistribution;

/// Largest IP total length (the IPv4 field is 16 bits).
pub const MAX_IP_TOTAL_LENGTH: u32 = 65_535;

/// A CSV model that could not be read; `Display` is one line: `file:line: problem`.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: {kind}", path.display())]
pub struct CsvError {
    pub path: PathBuf,
    /// 1-based line the problem is on (for whole-file problems, the line where data was expected
    /// or the last line read).
    pub line: usize,
    pub kind: CsvErrorKind,
}

impl CsvError {
    fn at(path: &Path, line: usize, kind: CsvErrorKind) -> CsvError {
        CsvError {
            path: path.to_path_buf(),
            line,
            kind,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CsvErrorKind {
    #[error("cannot read file: {0}")]
    Io(#[from] std::io::Error),
    #[error("file is not UTF-8 text")]
    NotText,
    #[error("file is empty: expected `size,weight` lines such as `576,0.3`")]
    Empty,
    #[error("no data rows after the header: expected `size,weight` lines such as `576,0.3`")]
    NoRows,
    #[error("expected 2 comma-separated fields `size,weight`, found {found}")]
    FieldCount { found: usize },
    #[error("size `{text}` is not a whole number of bytes (expected 1…65535)")]
    BadSize { text: String },
    #[error("size {text} is out of range: IP total lengths are 1…65535 bytes")]
    SizeOutOfRange { text: String },
    #[error("weight `{text}` is not a number (expected a finite number ≥ 0)")]
    BadWeight { text: String },
    #[error("weight {weight} is negative (expected a finite number ≥ 0)")]
    NegativeWeight { weight: f64 },
    #[error("file is larger than {max_mib} MiB, the most a size model may be (read no further)")]
    TooLarge { max_mib: u64 },
    #[error("more than {max} lines, the most a size model may have (read no further)")]
    TooManyLines { max: usize },
    #[error(
        "weights of the {rows} rows (lines {first}…{last}) add up to more than the largest number ({max:e}); scale them down",
        max = f64::MAX
    )]
    TotalOverflows {
        rows: usize,
        first: usize,
        last: usize,
    },
    #[error(
        "weights of the {rows} rows (lines {first}…{last}) sum to 0: at least one must be positive"
    )]
    ZeroTotal {
        rows: usize,
        first: usize,
        last: usize,
    },
}

/// The most bytes a CSV size model may hold: far more than any real model (one row per size 1…65535
/// is under 2 MiB), and a bound on memory when the path is `/dev/zero` or a huge file by mistake.
pub const MAX_CSV_BYTES: u64 = 64 << 20;
/// The most lines a CSV size model may have.
pub const MAX_CSV_LINES: usize = 1_000_000;

/// Read a `size,weight` CSV file into a distribution named after the file stem. At most
/// [`MAX_CSV_BYTES`] are read.
pub fn read_csv(path: &Path) -> Result<SizeDistribution, CsvError> {
    use std::io::Read;
    let err = |line, kind| CsvError::at(path, line, kind);
    let mut bytes = Vec::new();
    crate::system::input::open_input(path)
        .and_then(|f| f.take(MAX_CSV_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| err(1, CsvErrorKind::Io(e)))?;
    if bytes.len() as u64 > MAX_CSV_BYTES {
        let line = 1 + bytes.iter().filter(|&&b| b == b'\n').count();
        return Err(err(
            line,
            CsvErrorKind::TooLarge {
                max_mib: MAX_CSV_BYTES >> 20,
            },
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
        err(line, CsvErrorKind::NotText)
    })?;
    parse_csv(path, &text)
}

/// Parse CSV text; `path` is only used to name the source in errors and provenance.
pub fn parse_csv(path: &Path, text: &str) -> Result<SizeDistribution, CsvError> {
    let err = |line, kind| CsvError::at(path, line, kind);
    let mut rows: Vec<(u32, f64)> = Vec::new();
    let (mut first_row, mut last_row) = (0, 0);
    let mut seen_content = false;
    let mut header = false;
    let mut last_line = 0;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if line > MAX_CSV_LINES {
            return Err(err(line, CsvErrorKind::TooManyLines { max: MAX_CSV_LINES }));
        }
        last_line = line;
        let trimmed = raw.trim().trim_start_matches('\u{feff}');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = trimmed.split(',').map(str::trim).collect();
        if fields.len() != 2 {
            return Err(err(
                line,
                CsvErrorKind::FieldCount {
                    found: fields.len(),
                },
            ));
        }
        let (size_text, weight_text) = (fields[0], fields[1]);
        if !seen_content {
            seen_content = true;
            if is_word(size_text) && is_word(weight_text) {
                header = true;
                continue;
            }
        }
        let size = parse_size(size_text).map_err(|k| err(line, k))?;
        let weight = parse_weight(weight_text).map_err(|k| err(line, k))?;
        if rows.is_empty() {
            first_row = line;
        }
        last_row = line;
        rows.push((size, weight));
    }
    if rows.is_empty() {
        let kind = if header {
            CsvErrorKind::NoRows
        } else {
            CsvErrorKind::Empty
        };
        return Err(err(last_line + 1, kind));
    }
    distribution(path, rows, (first_row, last_row))
}

/// The model of the data `rows`, read from lines `first_row`…`last_row` of `path`.
fn distribution(
    path: &Path,
    rows: Vec<(u32, f64)>,
    (first_row, last_row): (usize, usize),
) -> Result<SizeDistribution, CsvError> {
    let err = |line, kind| CsvError::at(path, line, kind);
    let count = rows.len();
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "csv".to_string());
    let provenance = format!("CSV {}: {count} rows", path.display());
    // Each weight is finite, but their sum can still overflow to infinity (1e308 + 1e308): say so,
    // rather than let normalising report it as a zero total.
    if !rows.iter().map(|&(_, w)| w).sum::<f64>().is_finite() {
        return Err(err(
            last_row,
            CsvErrorKind::TotalOverflows {
                rows: count,
                first: first_row,
                last: last_row,
            },
        ));
    }
    SizeDistribution::from_weights(name, provenance, rows).map_err(|_| {
        err(
            last_row,
            CsvErrorKind::ZeroTotal {
                rows: count,
                first: first_row,
                last: last_row,
            },
        )
    })
}

/// A header field: starts with a letter or underscore (so `1e3` or `-1` are not words).
fn is_word(field: &str) -> bool {
    field
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '"')
        && field.parse::<f64>().is_err()
}

/// A weight: a finite number ≥ 0.
fn parse_weight(text: &str) -> Result<f64, CsvErrorKind> {
    let weight = text
        .parse::<f64>()
        .ok()
        .filter(|w| w.is_finite())
        .ok_or_else(|| CsvErrorKind::BadWeight {
            text: text.to_string(),
        })?;
    if weight < 0.0 {
        return Err(CsvErrorKind::NegativeWeight { weight });
    }
    Ok(weight)
}

fn parse_size(text: &str) -> Result<u32, CsvErrorKind> {
    // Parse as f64 so `1500.0` and `1e3` are accepted and `70000` / `-5` get a range message
    // rather than "not a number"; every u32 is exact in f64.
    let value: f64 = text.parse().map_err(|_| CsvErrorKind::BadSize {
        text: text.to_string(),
    })?;
    if !value.is_finite() || value.fract() != 0.0 {
        return Err(CsvErrorKind::BadSize {
            text: text.to_string(),
        });
    }
    if !(1.0..=f64::from(MAX_IP_TOTAL_LENGTH)).contains(&value) {
        return Err(CsvErrorKind::SizeOutOfRange {
            text: text.to_string(),
        });
    }
    Ok(value as u32)
}
