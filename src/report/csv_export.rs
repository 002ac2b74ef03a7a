//! CSV: one flat row per scenario (columns named as in the JSON), and one row per thread in a second file.
//! pandas reads both as they are (`pd.read_csv`).
//!
//! Each row describes itself, so files from many machines can be concatenated and still be read: the
//! host name, macbench version and reference rate `f` of the file, and a `scenario_id`
//! (`ALG/BACKEND/ACCEL@SIZE/NSESSIONS`, then `/DISPATCH` and `/tag:N` when not the defaults; the same
//! on every machine) that joins a per-thread row to its
//! scenario; per-thread rows also say which `repeat` they come from (the median one). `size` is
//! numeric (empty for a size model, whose name is in `size_model`): the JSON's two fields, cell for cell.

use super::Exporter;
use crate::energy::method::Estimate;
use crate::energy::Energy;
use crate::metrics::Warning;
use crate::results::{Document, ResultEntry};
use serde_json::Value;

/// The columns that name a result, before its scenario's settings.
const ENTRY_COLUMNS: &[&str] = &[
    "scenario_id",
    "host",
    "macbench_version",
    "reference_hz",
    "algorithm",
    "backend",
    "accel",
    "size",
    "size_model",
    "mean_message_bytes",
    "sessions",
    "cores",
];

/// Settings of [`crate::results::ScenarioSpec`] that get no column of their own: the size, session
/// count and core list are the entry's columns above (a size model by name, the cores as a list); the
/// seed and the tick are constants of a run, kept in the JSON.
const SETTINGS_NOT_COLUMNS: &[&str] = &["size", "sessions", "cores", "seed", "tick_s"];

/// Scenario columns shared by both CSVs: the entry's, then every recorded setting of the scenario in
/// the order the JSON has them (a new setting becomes a column by itself), then the repeat count.
fn key_columns() -> Vec<&'static str> {
    let settings = crate::results::field_names::<crate::results::ScenarioSpec>();
    let mut columns = ENTRY_COLUMNS.to_vec();
    columns.extend(
        settings
            .iter()
            .filter(|name| !SETTINGS_NOT_COLUMNS.contains(name)),
    );
    columns.push("repeats");
    columns
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn key_cells(doc: &Document, r: &ResultEntry) -> Vec<String> {
    let scenario = serde_json::to_value(&r.scenario).unwrap_or(Value::Null);
    let entry = serde_json::to_value(r).unwrap_or(Value::Null);
    key_columns()
        .into_iter()
        .map(|k| match k {
            // Unique per row: the dispatch mode and tag length join the id when not the default.
            "scenario_id" => r.key().to_string(),
            "host" => doc.host_label().to_string(),
            "macbench_version" => doc.host.macbench_version.clone(),
            "reference_hz" => doc.clock.reference_hz.to_string(),
            k if ENTRY_COLUMNS.contains(&k) || k == "repeats" => cell(&entry[k]),
            setting => cell(&scenario[setting]),
        })
        .collect()
}

fn object_keys(v: &Value) -> Vec<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// One text of each of a result's warnings, joined by `separator` into one cell.
fn warning_list(r: &ResultEntry, text: fn(&Warning) -> &str, separator: &str) -> String {
    r.warnings
        .iter()
        .map(text)
        .collect::<Vec<_>>()
        .join(separator)
}

fn finish(w: csv::Writer<Vec<u8>>) -> Result<Vec<u8>, String> {
    w.into_inner().map_err(|e| e.to_string())
}

/// A number's cell: blank when there is none.
fn number(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// An energy figure's median and 95 % interval ends, for its three columns.
fn median(v: Option<Estimate>) -> Option<f64> {
    v.map(|e| e.median)
}

fn low(v: Option<Estimate>) -> Option<f64> {
    v.and_then(|e| e.ci95).map(|i| i.low)
}

fn high(v: Option<Estimate>) -> Option<f64> {
    v.and_then(|e| e.ci95).map(|i| i.high)
}

/// The core domain's reading, where the meter has one beside the package.
fn cores(e: &Energy) -> Option<&Energy> {
    e.parts
        .iter()
        .find(|p| p.scope == crate::energy::Scope::Cores)
}

/// An energy column: its name and its cell for a result that has energy.
type EnergyColumn = (&'static str, fn(&Energy) -> String);

/// The energy columns (`run --energy`), named after the JSON's `energy` fields, each with its cell
/// for a result that has energy: one list, so a column and its value cannot drift apart.
const ENERGY_COLUMNS: &[EnergyColumn] = &[
    ("energy_meter", |e| e.meter.clone()),
    ("energy_scope", |e| e.scope.to_string()),
    ("energy_resolution_j", |e| e.resolution_j.to_string()),
    ("energy_observed_step_j", |e| {
        number(e.observed.map(|o| o.step_j))
    }),
    ("energy_observed_update_s", |e| {
        number(e.observed.and_then(|o| o.update_s))
    }),
    ("energy_window_s", |e| e.window_s.to_string()),
    ("nj_per_byte", |e| number(median(e.nj_per_byte))),
    ("nj_per_byte_ci95_low", |e| number(low(e.nj_per_byte))),
    ("nj_per_byte_ci95_high", |e| number(high(e.nj_per_byte))),
    ("uj_per_message", |e| number(median(e.uj_per_message))),
    ("uj_per_message_ci95_low", |e| number(low(e.uj_per_message))),
    ("uj_per_message_ci95_high", |e| {
        number(high(e.uj_per_message))
    }),
    ("energy_idle_w", |e| number(e.idle_w)),
    ("energy_mac_w", |e| number(e.mac_w)),
    ("energy_meter_steps", |e| number(e.meter_steps)),
    ("energy_few_steps", |e| e.few_steps.to_string()),
    ("cores_nj_per_byte", |e| {
        number(median(cores(e).and_then(|c| c.nj_per_byte)))
    }),
    ("cores_uj_per_message", |e| {
        number(median(cores(e).and_then(|c| c.uj_per_message)))
    }),
];

/// A result's cells under [`ENERGY_COLUMNS`]; blank when it has no energy.
fn energy_cells(energy: Option<&Energy>) -> Vec<String> {
    ENERGY_COLUMNS
        .iter()
        .map(|(_, cell)| energy.map_or(String::new(), cell))
        .collect()
}

/// The columns of a ratio to the baseline row (`run --baseline`), named after the JSON's
/// `baseline` fields; present when some result has one, blank in a row without.
pub const BASELINE_COLUMNS: &[&str] = &[
    "baseline_function",
    "baseline_ratio",
    "baseline_low",
    "baseline_high",
    "baseline_pairs",
    "baseline_unpaired_low",
    "baseline_unpaired_high",
    "baseline_note",
];

/// A result's cells under [`BASELINE_COLUMNS`].
fn baseline_cells(b: Option<&crate::results::baseline::BaselineRatio>) -> Vec<String> {
    let Some(b) = b else {
        return vec![String::new(); BASELINE_COLUMNS.len()];
    };
    let number = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    vec![
        b.function.clone().unwrap_or_default(),
        number(b.ratio),
        number(b.low),
        number(b.high),
        b.pairs.to_string(),
        number(b.unpaired_low),
        number(b.unpaired_high),
        b.note.clone().unwrap_or_default(),
    ]
}

/// One row per scenario.
pub struct ScenarioCsv;

impl Exporter<Document> for ScenarioCsv {
    fn serialize(&self, doc: &Document) -> Result<Vec<u8>, String> {
        let metric_names = object_keys(
            &serde_json::to_value(crate::metrics::Metrics::default()).map_err(|e| e.to_string())?,
        );
        let mut w = csv::Writer::from_writer(Vec::new());
        let ci_names = object_keys(
            &serde_json::to_value(crate::results::Ci95Set::default()).map_err(|e| e.to_string())?,
        );
        let mut header: Vec<String> = key_columns().into_iter().map(String::from).collect();
        header.extend(metric_names.iter().cloned());
        for name in &ci_names {
            header.push(format!("{name}_ci95_low"));
            header.push(format!("{name}_ci95_high"));
        }
        header.extend(["failed", "warning_codes", "warnings"].map(String::from));
        // Energy columns only when some result was measured with a meter: files without stay as before.
        let energy = doc.results.iter().any(|r| r.energy.is_some());
        if energy {
            header.extend(ENERGY_COLUMNS.iter().map(|(name, _)| name.to_string()));
        }
        // Likewise the ratios to a baseline row (`run --baseline`).
        let baseline = doc.results.iter().any(|r| r.baseline.is_some());
        if baseline {
            header.extend(BASELINE_COLUMNS.iter().map(|s| s.to_string()));
        }
        w.write_record(&header).map_err(|e| e.to_string())?;
        for r in &doc.results {
            let metrics = serde_json::to_value(&r.metrics).map_err(|e| e.to_string())?;
            let mut row = key_cells(doc, r);
            row.extend(metric_names.iter().map(|k| cell(&metrics[k])));
            let ci = serde_json::to_value(&r.ci95).map_err(|e| e.to_string())?;
            for name in &ci_names {
                row.push(cell(&ci[name]["low"]));
                row.push(cell(&ci[name]["high"]));
            }
            // Whether it measured, as every consumer judges it (a fatal warning fails it too).
            row.push((!r.measured()).to_string());
            row.push(warning_list(r, |w| w.code.as_str(), ";"));
            row.push(warning_list(r, |w| &w.message, "; "));
            if energy {
                row.extend(energy_cells(r.energy.as_ref()));
            }
            if baseline {
                row.extend(baseline_cells(r.baseline.as_ref()));
            }
            w.write_record(&row).map_err(|e| e.to_string())?;
        }
        finish(w)
    }
}

/// One row per thread per scenario.
pub struct ThreadsCsv;

impl Exporter<Document> for ThreadsCsv {
    fn serialize(&self, doc: &Document) -> Result<Vec<u8>, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut thread_names: Option<Vec<String>> = None;
        for r in &doc.results {
            for t in &r.threads {
                let v = serde_json::to_value(t).map_err(|e| e.to_string())?;
                let names = thread_names.get_or_insert_with(|| {
                    let names = object_keys(&v);
                    let mut header: Vec<String> =
                        key_columns().into_iter().map(String::from).collect();
                    header.push("repeat".to_string());
                    header.extend(names.iter().cloned());
                    let _ = w.write_record(&header);
                    names
                });
                let mut row = key_cells(doc, r);
                row.push(r.threads_repeat.to_string());
                row.extend(names.iter().map(|k| cell(&v[k])));
                w.write_record(&row).map_err(|e| e.to_string())?;
            }
        }
        finish(w)
    }
}

/// `results.csv` → `results-threads.csv`, `out` → `out-threads.csv`. Only for a file: a stream
/// (`-`, a device, a FIFO) gets no per-thread sibling (`report::output::is_stream`).
pub fn threads_path(path: &std::path::Path) -> std::path::PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    // `--csv out` → `out-threads.csv`: a file without an extension still gets a CSV sibling.
    let ext = path.extension().map_or_else(
        || ".csv".to_string(),
        |e| format!(".{}", e.to_string_lossy()),
    );
    path.with_file_name(format!("{stem}-threads{ext}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_columns_hold_what_the_json_holds() {
        let doc = crate::report::read::parse(
            "x",
            r#"{"tool":"macbench","schema_version":1,"results":[
            {"algorithm":"hmac-sha256","backend":"openssl","accel":"hw","size":64,"mean_message_bytes":64,"sessions":1,"metrics":{"absolute_cycles_per_byte":5.0}},
            {"algorithm":"hmac-sha256","backend":"openssl","accel":"hw","size":"imix","mean_message_bytes":340.5,"sessions":1,"metrics":{"absolute_cycles_per_byte":5.0}}]}"#,
        )
        .unwrap();
        let csv = String::from_utf8(ScenarioCsv.serialize(&doc).unwrap()).unwrap();
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let header = reader.headers().unwrap().clone();
        let column = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (size, model, mean) = (
            column("size"),
            column("size_model"),
            column("mean_message_bytes"),
        );
        let rows: Vec<(String, String, String)> = reader
            .records()
            .map(|r| {
                let r = r.unwrap();
                (r[size].into(), r[model].into(), r[mean].into())
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("64".into(), "".into(), "64.0".into()),
                ("".into(), "imix".into(), "340.5".into())
            ]
        );
        let json = serde_json::to_value(&doc).unwrap();
        assert_eq!(json["results"][0]["size"], 64);
        assert!(json["results"][1]["size"].is_null());
        assert_eq!(json["results"][1]["size_model"], "imix");
    }
}
