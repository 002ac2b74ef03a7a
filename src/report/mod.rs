//! Everything made from results: the terminal's tables, the HTML report and its figures, `diff`, and the
//! exporters. One results document becomes a file through [`Exporter`], one implementation per format
//! (JSON, the scenario and thread CSVs: hyperfine's shape); the formats over many documents (BMF,
//! benchstat, LAVA) are functions in [`history`]. Files are written by the rules of [`output`]
//! (temporary sibling and rename for regular files, write-through for devices and links, `-` for
//! standard output), and a run's session rewrites its files after every scenario so an interrupted run
//! keeps what finished.

pub mod csv_export;
pub mod diff;
pub mod figures;
pub mod history;
pub mod html;
pub mod listing;
pub mod output;
pub mod paper;
pub mod plots;
pub mod read;
pub mod rows;
pub mod summary;
pub mod table;

use crate::results::Document;
use std::path::Path;

pub use output::write_atomic;

/// Turns a results document into bytes.
pub trait Exporter {
    fn serialize(&self, doc: &Document) -> Result<Vec<u8>, String>;
}

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn serialize(&self, doc: &Document) -> Result<Vec<u8>, String> {
        crate::stdio::pretty_json(doc)
    }
}

/// Export with `exporter` to `path`.
pub fn export(exporter: &dyn Exporter, doc: &Document, path: &Path) -> Result<(), String> {
    write_atomic(path, &exporter.serialize(doc)?)
}
