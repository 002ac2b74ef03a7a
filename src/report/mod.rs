//! Exporters: one trait, one implementation per format (hyperfine's shape). Every file is written to a
//! temporary sibling and renamed into place, so a reader never sees a half-written file, and the sweep
//! rewrites its files after every scenario so an interrupted run keeps what finished.

pub mod compare;
pub mod csv_export;
pub mod diff;
pub mod html;
pub mod plots;
pub mod read;
pub mod table;

use crate::bench::Document;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Turns a results document into bytes.
pub trait Exporter {
    fn serialize(&self, doc: &Document) -> Result<Vec<u8>, String>;
}

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn serialize(&self, doc: &Document) -> Result<Vec<u8>, String> {
        let mut out = serde_json::to_vec_pretty(doc).map_err(|e| e.to_string())?;
        out.push(b'\n');
        Ok(out)
    }
}

/// Write `bytes` to `path` atomically: temporary file in the same directory, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", path.display()))?
        .to_string_lossy();
    let tmp: PathBuf = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: {e}", path.display())
    })
}

/// Export with `exporter` to `path`.
pub fn export(exporter: &dyn Exporter, doc: &Document, path: &Path) -> Result<(), String> {
    write_atomic(path, &exporter.serialize(doc)?)
}
