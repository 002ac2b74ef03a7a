//! Everything made from results: the terminal's tables, the HTML report and its figures, `diff`, and the
//! exporters. Every file format is an [`Exporter`] of what it is made from: one results document
//! (JSON, the scenario and thread CSVs: hyperfine's shape), many ([`history`]'s BMF, benchstat and
//! LAVA), or a `net` document (its JSON and CSV, in `net::report`); [`export`] writes any of them. Files are written by the rules of [`output`]
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

pub use crate::stdio::Exporter;

pub struct JsonExporter;

impl Exporter<Document> for JsonExporter {
    fn serialize(&self, doc: &Document) -> Result<Vec<u8>, String> {
        crate::stdio::pretty_json(doc)
    }
}

/// Export `doc` with `exporter` to `path` (by the rules of [`output`]).
pub fn export<D: ?Sized>(exporter: &dyn Exporter<D>, doc: &D, path: &Path) -> Result<(), String> {
    write_atomic(path, &exporter.serialize(doc)?)
}
