//! `macbench net`'s results file as its readers take it back (`validate`, `report`): the schema of
//! what `net` writes lives with the other results schemas, so the exporters read it without naming
//! the protocol test that wrote it.

use crate::host::Host;

/// The newest `macbench-net/N` this macbench reads; `net` writes it (`tests/net.rs` holds the two
/// together).
pub const NEWEST: u32 = 4;

/// What `validate` and `report` read back of a file `macbench net --json` wrote: the parts a reader
/// judges and shows. Any `macbench-net/N` up to [`NEWEST`] reads; fields added later default.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct NetFile {
    pub schema: String,
    #[serde(default)]
    pub host: Host,
    #[serde(default)]
    pub partial: bool,
    #[serde(default)]
    pub results: Vec<NetFileResult>,
}

/// One result of a [`NetFile`].
#[derive(Debug, Clone, serde::Deserialize)]
pub struct NetFileResult {
    pub function: String,
    #[serde(default)]
    pub baseline: bool,
    pub size: Option<u32>,
    pub size_model: Option<String>,
    #[serde(default)]
    pub mode: String,
    /// `sender`, `receiver`, `neither` or `unknown`.
    #[serde(default)]
    pub limited_by: String,
    pub zero_loss_pps: Option<f64>,
    pub max_rate_pps: Option<f64>,
    pub pps_vs_null: Option<f64>,
    /// The highest passing trial; absent when none passed.
    pub throughput: Option<serde_json::Value>,
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl NetFileResult {
    /// The size as the tables show it: bytes, or the size model's name.
    pub fn size_label(&self) -> String {
        match (self.size, &self.size_model) {
            (Some(n), _) => n.to_string(),
            (None, Some(model)) => model.clone(),
            (None, None) => "-".to_string(),
        }
    }

    /// The rate the row stands for: the zero-loss rate where the receiver limited it, else the
    /// highest passing trial's achieved rate (a lower bound when the sender limited it).
    pub fn rate_pps(&self) -> Option<f64> {
        self.zero_loss_pps
            .or_else(|| self.throughput.as_ref()?.get("achieved_pps")?.as_f64())
    }
}

/// Whether a JSON value is a `net` results file (its `schema` names the net schema).
pub fn is_net_file(value: &serde_json::Value) -> bool {
    value
        .get("schema")
        .and_then(|s| s.as_str())
        .is_some_and(|s| s.starts_with("macbench-net/"))
}

/// Read back a net results file's JSON; the error says what is wrong in one line.
pub fn read_back(value: serde_json::Value) -> Result<NetFile, String> {
    let file: NetFile = serde_json::from_value(value).map_err(|e| e.to_string())?;
    match file
        .schema
        .rsplit('/')
        .next()
        .and_then(|n| n.parse::<u32>().ok())
    {
        Some(n) if n <= NEWEST => Ok(file),
        _ => Err(format!(
            "schema {:?} is not one this macbench reads (up to macbench-net/{NEWEST}); upgrade macbench",
            file.schema
        )),
    }
}
