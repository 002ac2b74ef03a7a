//! The results schema: one typed definition of what a run writes and every reader reads back.
//!
//! `run` writes a [`Document`]; `report`, `diff`, `model --results` and the exporters read the very
//! same types back (`report::read` only checks the file first), serde both ways, lenient with
//! defaults so files from older builds still load: a field added later says `#[serde(default)]`,
//! except an `Option`, which serde itself reads as `None` when absent (so it says nothing). It sits
//! below the runner (`bench`, `sweep`), the exporters (`report`), the process isolation (`isolate`)
//! and `net`, above the engine and metrics whose counters and figures it holds: an exporter needs the
//! shape of a result, never the code that produced it (STYLE §10, §11). [`ScenarioKey`] is the one
//! identity of a result within a file — the terminal's row names, the CSV's `scenario_id`, `diff`'s
//! pairing and `report --scenario` all derive from it.

pub mod baseline;
pub mod check;
pub mod claims;
pub mod compare;
pub mod net;
pub mod options;

pub use options::{Planned, RunOptions, SweepOptions};

use crate::engine::{self, clock::ClockInfo, RawRun, Series};
use crate::host::Host;
use crate::mac::FunctionId;
use crate::metrics::{Metrics, ThreadMetrics, Warning};
use serde::{Deserialize, Serialize};
/// Version of the results JSON layout; bumped on incompatible change. Readers reject newer ones.
pub const SCHEMA_VERSION: u32 = 1;

/// The most repeats per scenario, `--repeat` and `--max-repeat` alike: each repeat keeps its raw
/// counters in the results file, and a target no run can reach (`--target-ci 1e-300`) still ends. A
/// file claiming more is refused ([`check`]): the interval check widens with the repeats, so a
/// made-up count would switch it off.
pub const MAX_REPEAT: usize = 1_000;

/// A message size as reported: bytes, or the name of a size model (imix, a CSV, a capture, …).
///
/// In a result's JSON it is two fields, flattened into the entry: `"size"`, the fixed size in bytes or
/// `null` for a model, and `"size_model"`, the model's name or `null` — so `size` is always a number a
/// reader can plot or sort, as in the CSV's `size`/`size_model` columns, and the model's mean is beside
/// them in `mean_message_bytes`. Files written before `size_model` existed put the model's name in
/// `size` itself; they still read, and are written back in the new form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "SizeFields")]
pub enum SizeLabel {
    Bytes(u32),
    Model(String),
}

/// The two JSON fields of a [`SizeLabel`] as a file may hold them.
#[derive(Deserialize)]
struct SizeFields {
    size: Option<SizeField>,
    size_model: Option<String>,
}

/// `size` as written now (bytes) or by older builds (bytes, or a model's name).
enum SizeField {
    Bytes(u32),
    Model(String),
}

impl<'de> Deserialize<'de> for SizeField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SizeField, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = SizeField;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a message size in bytes (0 to 4294967295), or a size model's name")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SizeField, E> {
                u32::try_from(v)
                    .map(SizeField::Bytes)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SizeField, E> {
                u64::try_from(v)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SizeField, E> {
                Ok(SizeField::Model(v.to_string()))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl TryFrom<SizeFields> for SizeLabel {
    type Error = String;

    fn try_from(f: SizeFields) -> Result<SizeLabel, String> {
        match (f.size, f.size_model) {
            (Some(SizeField::Bytes(n)), None) => Ok(SizeLabel::Bytes(n)),
            (None, Some(m)) => Ok(SizeLabel::Model(m)),
            // The older form: the model's name in `size`.
            (Some(SizeField::Model(m)), None) => Ok(SizeLabel::Model(m)),
            (Some(SizeField::Model(a)), Some(b)) if a == b => Ok(SizeLabel::Model(a)),
            (Some(SizeField::Bytes(n)), Some(m)) => Err(format!(
                "\"size\": {n} and \"size_model\": {m:?} contradict each other (a size model's \"size\" is null)"
            )),
            (Some(SizeField::Model(a)), Some(b)) => Err(format!(
                "\"size\": {a:?} and \"size_model\": {b:?} name different size models"
            )),
            (None, None) => Err(
                "a result needs \"size\" (bytes) or \"size_model\" (a size model's name)"
                    .to_string(),
            ),
        }
    }
}

/// Written only in the new form: `size` numeric or null, `size_model` a name or null.
impl Serialize for SizeLabel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let (size, model) = match self {
            SizeLabel::Bytes(n) => (Some(*n), None),
            SizeLabel::Model(m) => (None, Some(m.as_str())),
        };
        let mut fields = s.serialize_struct("SizeLabel", 2)?;
        fields.serialize_field("size", &size)?;
        fields.serialize_field("size_model", &model)?;
        fields.end()
    }
}

impl SizeLabel {
    /// The size in bytes; `None` for a size model.
    pub fn bytes(&self) -> Option<u64> {
        match self {
            SizeLabel::Bytes(n) => Some(u64::from(*n)),
            SizeLabel::Model(_) => None,
        }
    }
}

impl std::fmt::Display for SizeLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SizeLabel::Bytes(n) => write!(f, "{n}"),
            SizeLabel::Model(m) => f.write_str(m),
        }
    }
}

// The results schema. These types are written by `run` and read back by `report`, `diff` and
// `model --results` (through `report::read`, which only checks the file first): one definition both
// ways. Fields that files from older builds may lack carry `#[serde(default)]`.

/// One scenario's reported result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultEntry {
    /// With `backend` and `accel`, the function ([`ResultEntry::function`]); flat in the JSON.
    pub algorithm: String,
    pub backend: String,
    pub accel: String,
    /// `"size"` and `"size_model"` in the JSON (see [`SizeLabel`]).
    #[serde(flatten)]
    pub size: SizeLabel,
    /// Mean message size (equals `size` for fixed sizes; a size model's mean).
    #[serde(default)]
    pub mean_message_bytes: f64,
    pub sessions: usize,
    #[serde(default)]
    pub cores: String,
    #[serde(default)]
    pub scenario: ScenarioSpec,
    #[serde(default)]
    pub repeats: usize,
    /// Medians over repeats.
    #[serde(default = "Metrics::missing")]
    pub metrics: Metrics,
    /// Min/max over repeats of the headline metrics.
    #[serde(default)]
    pub spread: SpreadSet,
    /// 95 % confidence intervals of the headline metrics (batch means within runs, spread over
    /// repeats; see `stats::confidence_interval`).
    #[serde(default)]
    pub ci95: Ci95Set,
    /// The tick series of the median repeat (every repeat's is in `raw`).
    #[serde(default)]
    pub series: Series,
    /// Per-thread metrics of the median repeat.
    #[serde(default)]
    pub threads: Vec<ThreadMetrics>,
    /// Which repeat (0-based index into `raw`) the per-thread metrics come from.
    #[serde(default)]
    pub threads_repeat: usize,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// What `--auto` changed, in order.
    #[serde(default)]
    pub adjustments: Vec<String>,
    /// A fatal warning: the numbers must not be used.
    #[serde(default)]
    pub failed: bool,
    /// Raw counters of every repeat, so the metrics can be recomputed.
    #[serde(default)]
    pub raw: Vec<RawRun>,
    /// Energy per byte and per message (`run --energy` with a meter); absent otherwise, and in files
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::energy::Energy>,
    /// This row's cost against its group's baseline row (`run --baseline`); absent otherwise, and
    /// in files written before it existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<baseline::BaselineRatio>,
}

impl ResultEntry {
    /// `algorithm/backend/accel`.
    pub fn function(&self) -> FunctionId {
        FunctionId {
            algorithm: self.algorithm.clone(),
            backend: self.backend.clone(),
            accel: self.accel.clone(),
        }
    }

    /// The identity of this result within its file ([`ScenarioKey`]).
    pub fn key(&self) -> ScenarioKey {
        ScenarioKey {
            function: self.function(),
            size: self.size.clone(),
            sessions: self.sessions,
            dispatch: self.scenario.dispatch,
            tag_len: self.scenario.tag_len,
        }
    }

    /// How the terminal tables, `compare` and `diff` name a result ([`ScenarioKey::label`]).
    pub fn label(&self) -> String {
        self.key().label()
    }

    /// What `macbench report --scenario` takes and the HTML report shows ([`ScenarioKey::point`]).
    pub fn scenario_key(&self) -> String {
        self.key().point()
    }

    /// Number of cores in the core set (`cores` is a CPU list such as `0-3,8`).
    pub fn core_count(&self) -> usize {
        crate::host::parse_cpu_list(&self.cores).map_or(0, |c| c.len())
    }

    /// Whether this result measured: not `failed` and no fatal warning. The one notion every consumer
    /// uses (exporters, `report`, `diff`, claims) and [`check`] holds the numbers of: a fatal warning
    /// fails a result whatever its `failed` says (a hand-edited or foreign file may disagree), so
    /// its numbers are never exported as a pass, drawn or compared.
    pub fn measured(&self) -> bool {
        !self.failed && !self.warnings.iter().any(|w| w.fatal)
    }

    /// Metrics that may be used: `None` for a result that did not measure ([`ResultEntry::measured`]).
    pub fn usable(&self) -> Option<&Metrics> {
        self.measured().then_some(&self.metrics)
    }
}

/// What tells two results of one file apart: the function, the size, the sessions, and the dispatch
/// mode and tag length (each named only when it is not the default, so files and names from before
/// these knobs read and print as they did). Every name of a result derives from it, so no reader can
/// again merge two dispatch modes of one function into one row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScenarioKey {
    pub function: FunctionId,
    pub size: SizeLabel,
    pub sessions: usize,
    pub dispatch: engine::Dispatch,
    pub tag_len: Option<usize>,
}

impl ScenarioKey {
    /// The knobs beyond function and size, each joined by `sep`: `burst:16`, `tag:20`.
    fn knobs(&self, sep: &str) -> String {
        let mut out = String::new();
        if self.dispatch != engine::Dispatch::Single {
            out.push_str(&format!("{sep}{}", self.dispatch));
        }
        if let Some(n) = self.tag_len {
            out.push_str(&format!("{sep}tag:{n}"));
        }
        out
    }

    /// A terminal row's name (size and sessions are columns there): `hmac-sha256/ipsecmb/hw burst:16`,
    /// `kmac128/openssl/hw tag:20`.
    pub fn label(&self) -> String {
        format!("{}{}", self.function, self.knobs(" "))
    }

    /// One point of a sweep, without the session count: `hmac-sha256/ipsecmb/hw@64/burst:16` — what
    /// `report --scenario` takes.
    pub fn point(&self) -> String {
        format!("{}@{}{}", self.function, self.size, self.knobs("/"))
    }

    /// The key without its session count: what `diff` pairs on first (runs at other session counts
    /// still pair, with a note).
    pub fn without_sessions(&self) -> ScenarioKey {
        ScenarioKey {
            sessions: 0,
            ..self.clone()
        }
    }
}

/// `hmac-sha256/ipsecmb/hw@64/2/burst:16`: unique within a file and the same on every machine (the
/// CSV's `scenario_id`).
impl std::fmt::Display for ScenarioKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}@{}/{}{}",
            self.function,
            self.size,
            self.sessions,
            self.knobs("/")
        )
    }
}

/// What was run, as recorded in a result: the engine's one definition of a scenario's settings.
pub use crate::engine::ScenarioSpec;

/// The field names a type records, renames applied, read from its derived `Deserialize` (which hands
/// them to the deserializer): so columns and lists follow the type instead of a copy of its fields.
/// Empty for a type that is not a struct.
pub fn field_names<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut names));
    names
}

/// A deserializer that answers nothing and keeps the field names it is asked for.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

/// What [`FieldNames`] always returns: its work is done once it has the names.
#[derive(Debug)]
struct NamesTaken;

impl std::fmt::Display for NamesTaken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field names taken")
    }
}

impl std::error::Error for NamesTaken {}

impl serde::de::Error for NamesTaken {
    fn custom<T: std::fmt::Display>(_: T) -> NamesTaken {
        NamesTaken
    }
}

impl<'de> serde::Deserializer<'de> for FieldNames<'_> {
    type Error = NamesTaken;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, NamesTaken> {
        Err(NamesTaken)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, NamesTaken> {
        *self.0 = fields;
        Err(NamesTaken)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// A result's per-metric sets, keyed by the headline descriptors (`metrics::HEADLINE`): the 95 %
/// intervals (`ci95`) and the spreads over repeats (`spread`).
pub use crate::metrics::{Ci95Set, SpreadSet};

/// Harness cost: the null function's cycles per message in one pinned session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Harness {
    pub size: u32,
    pub absolute_cycles_per_message: Option<f64>,
    pub apparent_cycles_per_message: Option<f64>,
}

/// The whole results file. `report::read` checks `tool` and `schema_version` before it reads one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    pub schema_version: u32,
    /// Always [`TOOL`].
    pub tool: String,
    #[serde(default)]
    pub host: Host,
    #[serde(default)]
    pub clock: ClockInfo,
    /// What every result shares: the options of the `run` that wrote it (as given, and what they
    /// resolved to), or the object another command records instead ([`Header`]).
    #[serde(default)]
    pub scenario: Header,
    pub harness: Option<Harness>,
    #[serde(default)]
    pub results: Vec<ResultEntry>,
    /// True while a sweep is still running or was interrupted: the file holds what finished.
    #[serde(default)]
    pub partial: bool,
    /// What could have disturbed the run: the machine before and after it (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<crate::system::conditions::RunConditions>,
    /// Where the sweep's time went and how far the host let its intervals narrow (absent in older
    /// files and in files of other commands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepAccount>,
    /// `valid` or `starved` when the counters were made up by the fake engine
    /// (`MACBENCH_FAKE_ENGINE`, for macbench's own tests), absent for a real measurement: a made-up
    /// file must never pass for one (`validate --strict`, `report`, the exporters and a
    /// reproduction's claims refuse or flag it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fake_engine: Option<String>,
}

/// A sweep's account of itself, written when it ends: how much of its time measured, and the host's
/// spread that sets how narrow its intervals could be (docs/methodology.md, "The host's floor").
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepAccount {
    /// Runs made, those of every kept result and any discarded by `--auto`.
    pub runs: usize,
    /// Wall time from the first run's start to the last run's end.
    pub runs_seconds: f64,
    /// The kept results' windows added up (W of every run).
    pub window_seconds: f64,
    /// `window_seconds / runs_seconds`: the share of the sweep's time inside a window.
    pub in_window_share: f64,
    /// The pooled spread of one repeat, the standard deviation of ln(absolute cycles/byte) about
    /// each scenario's mean (0.12 ≈ ±12 % a repeat), and its degrees of freedom.
    pub host_spread: Option<f64>,
    pub host_spread_df: usize,
    /// The median over results of the 95 % half-width of absolute cycles/byte, relative to the
    /// median (0.06 = ±6 %), and the median number of repeats.
    pub median_half_width: Option<f64>,
    pub median_repeats: usize,
}

/// A results file's header: a sweep's options as `run` records them, or, in files that record
/// something else (`model --measure` names its command; older versions had other options), that
/// object kept as it is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Header {
    Sweep(Box<SweepOptions>),
    Other(serde_json::Value),
}

impl Default for Header {
    fn default() -> Header {
        Header::Other(serde_json::Value::Null)
    }
}

/// In what order a sweep runs the repeats of its scenarios.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// One repeat of each scenario in a span of about `sweep::INTERLEAVE_SPAN`, then the next repeat of
    /// each, …: a neighbour's burst is spread over several scenarios rather than sinking one of them.
    Interleaved,
    /// Every repeat of a scenario back to back, then the next scenario.
    Sequential,
}

impl Order {
    /// As `--order` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Sequential => "sequential",
        }
    }

    /// `--order` as given, else interleaved when there are repeats to interleave.
    pub fn or_default(order: Option<Order>, repeats: usize) -> Order {
        order.unwrap_or(if repeats > 1 {
            Order::Interleaved
        } else {
            Order::Sequential
        })
    }
}

/// The `tool` of every results file.
pub const TOOL: &str = "macbench";

impl Document {
    /// The name of the host in tables and legends: its `--label`, else its hostname, else `unknown`.
    pub fn host_label(&self) -> &str {
        [self.host.label.as_str(), self.host.hostname.as_str()]
            .into_iter()
            .find(|l| !l.is_empty())
            .unwrap_or("unknown")
    }
}

/// Host identity used to decide whether two files come from the same machine.
pub fn host_key(doc: &Document) -> String {
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

    /// A scenario with every optional setting present, so that its JSON has every field.
    fn every_setting() -> ScenarioSpec {
        ScenarioSpec {
            rekey_every: Some(3),
            tag_len: Some(8),
            ..ScenarioSpec::default()
        }
    }

    #[test]
    fn the_field_names_are_the_recorded_keys_in_their_order() {
        let json = serde_json::to_value(every_setting()).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(field_names::<ScenarioSpec>(), keys.as_slice());
        assert!(keys.contains(&"duration_s") && keys.contains(&"tick_s"));
        assert!(field_names::<u32>().is_empty());
    }

    #[test]
    fn a_recorded_scenario_reads_back_as_it_was_written() {
        let mut spec = every_setting();
        spec.duration = std::time::Duration::from_nanos(123_456_789);
        spec.window_start = std::time::Duration::from_micros(20_001);
        let text = serde_json::to_string(&spec).unwrap();
        let back: ScenarioSpec = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        assert_eq!(back.duration, spec.duration);
        // Too long for a duration: an error, where the conversion would panic.
        let err = serde_json::from_str::<ScenarioSpec>(r#"{"duration_s": 1e300}"#).unwrap_err();
        assert!(err.to_string().contains("not a duration"), "{err}");
    }

    #[test]
    fn a_sweep_header_is_typed_and_any_other_header_is_kept_as_it_is() {
        let run = serde_json::json!({
            "alg": "hmac-sha256", "backend": null, "accel": "hw", "sizes": "64", "sessions": 1,
            "cores": "0", "pinning": "round-robin", "duration_s": 0.1, "window_start_s": 0.02,
            "window_end_s": 0.09, "repeat": 3, "data": "unique", "keys": "per-session",
            "verify": "none", "rekey_every": null, "auto": false, "seed": 1, "tick_s": 0.01,
            "target_ci_percent": 5.0, "max_repeat": 10, "budget_s": 50.0, "dispatch": "single",
            "energy": false, "order": "interleaved", "interleave_span_s": 20.0
        });
        let header: Header = serde_json::from_value(run.clone()).unwrap();
        assert!(matches!(header, Header::Sweep(_)), "{header:?}");
        assert_eq!(serde_json::to_value(&header).unwrap(), run);
        let mut older = run;
        older["a_knob_of_another_version"] = serde_json::json!(1);
        let header: Header = serde_json::from_value(older.clone()).unwrap();
        assert_eq!(header, Header::Other(older));
    }
}
