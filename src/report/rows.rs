//! A table's rows as a script reads them (`compare`'s and `diff`'s `--json`/`--csv`): one list of
//! columns, one list of cells per row, written as JSON objects or CSV lines with the same columns, so
//! the two formats never disagree.

/// A table's rows as a script reads them: `--json` writes an array of flat objects (keys in column
/// order), `--csv` a header and one line per row, the same columns in both, so `pandas.read_json` and
/// `pandas.read_csv` give the same frame. Numbers stay numbers, a missing value is `null` (an empty
/// CSV cell), and a size is the `size` column (a number, or empty for a size model or a stream) with
/// the table's own text beside it in `size_label`.
pub struct Records {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<serde_json::Value>>,
}

impl Records {
    pub fn new(columns: &[&str]) -> Records {
        Records {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// The rows of a typed record, its fields the columns in their order (its serde shape: a new
    /// field is a new column by itself).
    pub fn from_serialized<T: serde::Serialize + Default>(rows: &[T]) -> Result<Records, String> {
        let object = |row: &T| match serde_json::to_value(row) {
            Ok(serde_json::Value::Object(map)) => Ok(map),
            Ok(other) => Err(format!("a row is not an object: {other}")),
            Err(e) => Err(e.to_string()),
        };
        let mut out = Records {
            columns: object(&T::default())?.keys().cloned().collect(),
            rows: Vec::new(),
        };
        for row in rows {
            out.rows
                .push(object(row)?.into_iter().map(|(_, v)| v).collect());
        }
        Ok(out)
    }

    /// The `size` and `size_label` cells of a size as a table prints it (`64`, `imix`, `stream~16384`).
    pub fn size_cells(label: &str) -> [serde_json::Value; 2] {
        let size = label
            .parse::<u64>()
            .map_or(serde_json::Value::Null, serde_json::Value::from);
        [size, serde_json::Value::from(label)]
    }

    pub fn json(&self) -> Result<Vec<u8>, String> {
        let objects: Vec<serde_json::Map<String, serde_json::Value>> = self
            .rows
            .iter()
            .map(|row| {
                self.columns
                    .iter()
                    .cloned()
                    .zip(row.iter().cloned())
                    .collect()
            })
            .collect();
        crate::stdio::pretty_json(&objects)
    }

    pub fn csv(&self) -> Result<Vec<u8>, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.columns).map_err(|e| e.to_string())?;
        for row in &self.rows {
            w.write_record(row.iter().map(|v| match v {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            }))
            .map_err(|e| e.to_string())?;
        }
        w.into_inner().map_err(|e| e.to_string())
    }
}

/// Write `records` to whichever of `--json` and `--csv` were given, by the output rules: the JSON is
/// `document` (pretty, one trailing newline) where the command has a results document (`compare`), else
/// the rows as an array of objects (`diff`); the CSV is always the rows.
pub fn write_rows<D: serde::Serialize>(
    json: Option<&std::path::Path>,
    csv: Option<&std::path::Path>,
    document: Option<&D>,
    records: &Records,
) -> Result<(), String> {
    if let Some(path) = json {
        let bytes = match document {
            Some(document) => crate::stdio::pretty_json(document)?,
            None => records.json()?,
        };
        super::output::write_atomic(path, &bytes)?;
    }
    if let Some(path) = csv {
        super::output::write_atomic(path, &records.csv()?)?;
    }
    Ok(())
}
