//! Reading results files back into the very types `macbench run` writes ([`results::Document`]).
//!
//! The schema is defined once, in `bench` and `metrics`, with serde both ways; those types are lenient
//! (every field an older build may not have written has a default), so files from older builds of the
//! same schema still load. This module only loads and checks: a bound on the size, then that the file is
//! ours and not from a newer schema — refused with a one-line reason rather than half-read — then the
//! invariants of its results, checked by `results::check` and named by field. `report`, `diff`,
//! `export`, `validate`, `model --results` and `reproduce` all read through here. Only regular files are
//! read: a FIFO or a device is refused before it is opened, so no input can block a reader.

use crate::results::{self, Document};
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
    #[error("{path}: {kind}, not a run's results; `validate` and `report` read it, this command reads the results `run` and `reproduce` write")]
    OtherKind { path: String, kind: &'static str },
    #[error("{path}: a `macbench model` report (Γ, fits and predictions), not results; validate, report or diff the results it was made from")]
    ModelReport { path: String },
    #[error("{path}: malformed macbench results: {reason}")]
    Malformed { path: String, reason: String },
    #[error("{path}: {kind}, not a regular file; results and claims are read from regular files")]
    NotRegular { path: String, kind: &'static str },
}

/// Refuse an input that is not a regular file once symbolic links are followed — a FIFO (whose read
/// blocks until a writer comes, forever if none does), a device (`/dev/zero` reads without end), a
/// socket — before it is opened. A path that does not exist passes: opening it says so.
pub fn regular_file(path: &Path) -> Result<(), ReadError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_file() {
        return Ok(());
    }
    Err(ReadError::NotRegular {
        path: path.display().to_string(),
        kind: file_kind(&meta),
    })
}

/// What a file is, as an error says it: "a FIFO", "a directory", "a regular file" …
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// A results file as loaded, with a short label for legends (the file stem).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub path: PathBuf,
    pub label: String,
    pub doc: Document,
}

/// The largest results file read: a sweep of thousands of scenarios is a few MiB; the bound keeps
/// `report /dev/zero` from growing without end.
pub const MAX_RESULTS_BYTES: u64 = 256 << 20;

/// Read and check one results file (at most [`MAX_RESULTS_BYTES`]). `report`, `diff` and
/// `model --results` all read through here, so they accept and refuse the same files.
pub fn read(path: &Path) -> Result<Loaded, ReadError> {
    let shown = path.display().to_string();
    let text = read_text(path)?;
    let doc = parse(&shown, &text)?;
    Ok(loaded(path, doc))
}

/// A file's text, at most [`MAX_RESULTS_BYTES`] of UTF-8, from a regular file.
fn read_text(path: &Path) -> Result<String, ReadError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let io = |e: std::io::Error| ReadError::Io {
        path: shown.clone(),
        reason: match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            _ => e.to_string(),
        },
    };
    regular_file(path)?;
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
    String::from_utf8(bytes).map_err(|e| ReadError::NotJson {
        path: shown.clone(),
        reason: format!("not UTF-8 text ({e})"),
    })
}

/// A file macbench wrote, read back: a results document, or `net`'s own results.
#[derive(Debug, Clone)]
pub enum Written {
    Results(Box<Loaded>),
    Net {
        path: PathBuf,
        label: String,
        file: Box<crate::results::net::NetFile>,
    },
    Compare {
        path: PathBuf,
        label: String,
        file: Box<crate::results::compare::CompareFile>,
    },
}

/// Read one file `run`, `reproduce`, `model`, `net` or `compare` wrote, whichever it is (`validate`,
/// `report`).
pub fn read_written(path: &Path) -> Result<Written, ReadError> {
    let shown = path.display().to_string();
    let text = read_text(path)?;
    let value: Option<serde_json::Value> =
        serde_json::from_str(text.trim_start_matches('\u{feff}')).ok();
    let malformed = |kind: FileKind| {
        let path = shown.clone();
        move |reason: String| ReadError::Malformed {
            path,
            reason: format!("{}: {reason}", kind.name()),
        }
    };
    let kind = value.as_ref().and_then(FileKind::of);
    match (kind, value) {
        (Some(FileKind::Net), Some(value)) => Ok(Written::Net {
            path: path.to_path_buf(),
            label: stem(path),
            file: Box::new(results::net::read_back(value).map_err(malformed(FileKind::Net))?),
        }),
        (Some(FileKind::Compare), Some(value)) => Ok(Written::Compare {
            path: path.to_path_buf(),
            label: stem(path),
            file: Box::new(
                results::compare::read_back(value).map_err(malformed(FileKind::Compare))?,
            ),
        }),
        _ => Ok(Written::Results(Box::new(loaded(
            path,
            parse(&shown, &text)?,
        )))),
    }
}

/// The files macbench writes that are not a run's results document: `validate` and `report` read
/// them ([`read_written`]); a reader of run results only (`diff`, `export`, `model --results`)
/// refuses them by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Net,
    Compare,
}

impl FileKind {
    /// What the file is, as an error names it.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Net => "a `macbench net` results file",
            FileKind::Compare => "a `macbench compare` results file",
        }
    }

    /// The kind of a file's JSON, if it is one of these.
    fn of(value: &serde_json::Value) -> Option<FileKind> {
        if crate::results::net::is_net_file(value) {
            Some(FileKind::Net)
        } else if crate::results::compare::is_compare_file(value) {
            Some(FileKind::Compare)
        } else {
            None
        }
    }
}

/// A file's stem, the label of its series and columns.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn loaded(path: &Path, doc: Document) -> Loaded {
    Loaded {
        path: path.to_path_buf(),
        label: stem(path),
        doc,
    }
}

/// Check and parse the text of a results file; `path` only names it in errors.
pub fn parse(path: &str, text: &str) -> Result<Document, ReadError> {
    let path = path.to_string();
    // A byte-order mark some editors put first (Windows Notepad) is not part of the JSON.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ReadError::Empty { path });
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        match non_json_number(text, e.line(), e.column()) {
            Some((field, word)) => ReadError::Malformed {
                path: path.clone(),
                reason: format!(
                    "\"{field}\" is {word} (line {}), which JSON cannot hold; a results file writes a missing number as null",
                    e.line()
                ),
            },
            None => ReadError::NotJson {
                path: path.clone(),
                reason: e.to_string(),
            },
        }
    })?;
    if crate::traffic::fit::is_model_report(&value) {
        return Err(ReadError::ModelReport { path });
    }
    if let Some(kind) = FileKind::of(&value) {
        return Err(ReadError::OtherKind {
            path,
            kind: kind.name(),
        });
    }
    let Some(object) = value.as_object() else {
        return Err(ReadError::NotOurs {
            path,
            found: "top level is not an object".to_string(),
        });
    };
    match object.get("tool") {
        Some(serde_json::Value::String(t)) if t == results::TOOL => {}
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
    if version > u64::from(results::SCHEMA_VERSION) {
        return Err(ReadError::Newer {
            path,
            found: version,
            supported: results::SCHEMA_VERSION,
        });
    }
    // One check of a result's invariants for every reader, each refusal naming its field.
    results::check::parse(value).map_err(|e| ReadError::Malformed {
        path,
        reason: e.to_string(),
    })
}

/// The field and word when a JSON parse failed at `NaN`, `Infinity` or `-Infinity` (what some JSON
/// writers emit for non-finite numbers) at `line` and `column` (1-based, bytes: serde_json's position).
fn non_json_number(text: &str, line: usize, column: usize) -> Option<(String, &'static str)> {
    let line_text = text.lines().nth(line.checked_sub(1)?)?;
    let at = column.saturating_sub(1).min(line_text.len());
    // serde_json stops on the first character it cannot take, or one past it (`-Infinity`).
    let (start, word) = (at.saturating_sub(2)..=at)
        .filter(|&i| line_text.is_char_boundary(i))
        .find_map(|i| {
            ["-NaN", "-Infinity", "NaN", "Infinity"]
                .into_iter()
                .find(|w| line_text[i..].starts_with(w))
                .map(|w| (i, w))
        })?;
    let before = line_text[..start]
        .trim_end()
        .strip_suffix(':')?
        .trim_end()
        .strip_suffix('"')?;
    let field = &before[before.rfind('"')? + 1..];
    Some((field.to_string(), word))
}

// Kept at its old path for the exporters.
pub use crate::results::host_key;

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
            r#"{"tool":"macbench","schema_version":1,"results":[{"algorithm":"hmac-sha256","backend":"openssl","accel":"hw","size":64,"sessions":1,"cores":"0-3","metrics":{"absolute_cycles_per_byte":5.0}}]}"#,
        )
        .unwrap();
        assert_eq!(doc.results[0].scenario_key(), "hmac-sha256/openssl/hw@64");
        assert_eq!(doc.results[0].core_count(), 4);
        // What an older file lacks is missing, not zero.
        assert_eq!(
            crate::metrics::known(doc.results[0].metrics.bytes_per_second),
            None
        );
        assert!(doc.results[0].ci95.absolute().is_none());
    }

    #[test]
    fn lenient_where_a_file_we_could_have_written_says_less_or_more() {
        // `null` is how serde_json writes a non-finite number; a warning code from a newer build.
        let doc = parse(
            "x",
            r#"{"tool":"macbench","schema_version":1,"results":[{"algorithm":"hmac-sha256","backend":"openssl","accel":"hw","size":"imix","sessions":1,
            "metrics":{"bytes_per_second":null,"messages":7,"absolute_cycles_per_message":3.0},"threads":[{"session":3}],
            "warnings":[{"code":"from-the-future","message":"m"},{"code":"noisy"}]}]}"#,
        )
        .unwrap();
        let r = &doc.results[0];
        assert!(r.metrics.bytes_per_second.is_nan());
        assert_eq!(r.metrics.messages, 7);
        assert_eq!(r.threads[0].session, 3);
        assert_eq!(r.size.bytes(), None);
        let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["unknown", "noisy"]);
        assert_eq!(r.function().to_string(), "hmac-sha256/openssl/hw");
        assert_eq!(
            "hmac-sha256/openssl/hw".parse::<crate::mac::FunctionId>(),
            Ok(r.function())
        );
        assert!("a/b".parse::<crate::mac::FunctionId>().is_err());
    }

    fn entry_json(size_fields: &str) -> String {
        format!(
            r#"{{"tool":"macbench","schema_version":1,"results":[{{"algorithm":"hmac-sha256","backend":"openssl","accel":"hw",{size_fields},"sessions":1,"metrics":{{"absolute_cycles_per_message":1.0}}}}]}}"#
        )
    }

    #[test]
    fn size_is_a_number_and_a_model_is_named_in_size_model() {
        use crate::results::SizeLabel;
        for (fields, want) in [
            (r#""size":64,"size_model":null"#, SizeLabel::Bytes(64)),
            (r#""size":64"#, SizeLabel::Bytes(64)),
            (r#""size":0,"size_model":null"#, SizeLabel::Bytes(0)),
            (
                r#""size":null,"size_model":"imix""#,
                SizeLabel::Model("imix".into()),
            ),
            (r#""size_model":"caida""#, SizeLabel::Model("caida".into())),
        ] {
            let doc = parse("x", &entry_json(fields)).unwrap();
            assert_eq!(doc.results[0].size, want, "{fields}");
        }
        // Written back: `size` numeric or null, `size_model` a name or null, both always present.
        let doc = parse("x", &entry_json(r#""size":64"#)).unwrap();
        let v = serde_json::to_value(&doc.results[0]).unwrap();
        assert_eq!(v["size"], 64);
        assert!(v["size_model"].is_null() && v.get("size_model").is_some());
    }

    #[test]
    fn an_older_file_with_the_model_name_in_size_loads_and_is_written_in_the_new_form() {
        let doc = parse(
            "x",
            &entry_json(r#""size":"imix","mean_message_bytes":340.33"#),
        )
        .unwrap();
        let r = &doc.results[0];
        assert_eq!(r.size, crate::results::SizeLabel::Model("imix".into()));
        assert_eq!(r.scenario_key(), "hmac-sha256/openssl/hw@imix");
        let v = serde_json::to_value(r).unwrap();
        assert!(v["size"].is_null(), "{}", v["size"]);
        assert_eq!(v["size_model"], "imix");
        assert_eq!(v["mean_message_bytes"], 340.33);
        // A file that says it twice, consistently, reads too.
        let both = parse("x", &entry_json(r#""size":"imix","size_model":"imix""#)).unwrap();
        assert_eq!(both.results[0].size, r.size);
    }

    #[test]
    fn contradictory_or_impossible_sizes_are_refused_with_the_reason() {
        for (fields, reason) in [
            (r#""size":64,"size_model":"imix""#, "contradict"),
            (
                r#""size":"imix","size_model":"caida""#,
                "different size models",
            ),
            (r#""size":null,"size_model":null"#, "needs \"size\""),
            (r#""sessions_":1"#, "needs \"size\""),
            (r#""size":-1"#, "a message size in bytes"),
            (r#""size":64.5"#, "a message size in bytes"),
            (r#""size":4294967296"#, "a message size in bytes"),
        ] {
            match parse("x", &entry_json(fields)) {
                Err(ReadError::Malformed { reason: got, .. }) => {
                    assert!(got.contains(reason), "{fields}: {got}")
                }
                other => panic!("{fields}: {other:?}"),
            }
        }
    }
}

/// What the paths on a command line name: results files, and the claims files of reproductions.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Inputs {
    /// Results files, in the order given (a directory's sorted by name).
    pub results: Vec<PathBuf>,
    /// Claims files (`claims.json`) found in directories or named.
    pub claims: Vec<PathBuf>,
}

/// Expand command-line inputs as `report`, `diff` and `validate` take them: a file is itself; a
/// directory (one host's `run -o` or `reproduce -o`, or a fleet's fetched copy) is every `*.json` in
/// it, sorted, its claims file apart; a path that does not exist but holds `*`, `?` or `[` is a glob
/// (quoted past the shell, or from a shell that does not expand), expanded the same way. A directory
/// without results, or a glob that matches nothing, is an error naming it.
pub fn expand_inputs(paths: &[PathBuf]) -> Result<Inputs, ReadError> {
    let mut inputs = Inputs::default();
    for path in paths {
        let text = path.to_string_lossy();
        if !path.exists() && text.contains(['*', '?', '[']) {
            let matches = glob_matches(&text)?;
            if matches.is_empty() {
                return Err(ReadError::Io {
                    path: text.into_owned(),
                    reason: "no file or directory matches this pattern".to_string(),
                });
            }
            for m in matches {
                add_input(&m, &mut inputs)?;
            }
        } else {
            add_input(path, &mut inputs)?;
        }
    }
    Ok(inputs)
}

fn glob_matches(pattern: &str) -> Result<Vec<PathBuf>, ReadError> {
    let bad = |reason: String| ReadError::Io {
        path: pattern.to_string(),
        reason,
    };
    let paths = glob::glob(pattern).map_err(|e| bad(format!("not a valid pattern ({e})")))?;
    paths.map(|p| p.map_err(|e| bad(e.to_string()))).collect()
}

fn add_input(path: &Path, inputs: &mut Inputs) -> Result<(), ReadError> {
    let is_claims = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n == results::claims::CLAIMS_FILE)
    };
    if !path.is_dir() {
        if is_claims(path) {
            inputs.claims.push(path.to_path_buf());
        } else {
            inputs.results.push(path.to_path_buf());
        }
        return Ok(());
    }
    let shown = path.display().to_string();
    let entries = std::fs::read_dir(path).map_err(|e| ReadError::Io {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let mut json: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    json.sort();
    let (claims, found): (Vec<PathBuf>, Vec<PathBuf>) =
        json.into_iter().partition(|p| is_claims(p));
    if found.is_empty() {
        return Err(ReadError::Io {
            path: shown,
            reason: "a directory without results files (*.json); expected one written by `macbench run -o` or `macbench reproduce -o`".to_string(),
        });
    }
    inputs.results.extend(found);
    inputs.claims.extend(claims);
    Ok(())
}

/// Read and check a claims file written by `macbench reproduce`.
pub fn read_claims(path: &Path) -> Result<results::claims::ClaimsFile, ReadError> {
    use std::io::Read;
    regular_file(path)?;
    let shown = path.display().to_string();
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_RESULTS_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| ReadError::Io {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
    if text.len() as u64 > MAX_RESULTS_BYTES {
        return Err(ReadError::TooLarge {
            path: shown,
            max_mib: MAX_RESULTS_BYTES >> 20,
        });
    }
    serde_json::from_str(&text).map_err(|e| ReadError::Malformed {
        path: shown,
        reason: format!("not a claims file written by `macbench reproduce` ({e})"),
    })
}
