//! A run's options: one typed value every sweep starts from, and what its results header records.
//!
//! ripgrep's model (its `LowArgs` → `HiArgs`): flags are turned into one typed value, checked once,
//! handed down, and never parsed again. `macbench run` converts its flags into a [`RunOptions`]
//! (`cli/run.rs`, the only place that knows a flag's spelling); each `reproduce` step builds one from
//! its typed description (`reproduce::Step::options`), so a step that could not run fails in
//! `cargo test`, not half-way through a reproduction. [`RunOptions::check`] holds the rules between
//! options, whoever built the value.
//!
//! The value is recorded in every results file it produced by construction: the header
//! ([`SweepOptions`]) is the options, serialised as they are, beside [`Planned`], what the plan made of
//! them (the duration, window, repeats, tick and budget chosen). An option is recorded unless it says
//! `#[serde(skip)]` with its reason (those the plan resolves, recorded as `Planned`; where the
//! results go and how the run is shown). Adding an option is its field here and its flag in
//! `cli/run.rs`; readers get it through the same type.

use crate::engine;
/// The options' vocabulary, recorded in every header: readers (a study's steps) name them here.
pub use crate::engine::{DataMode, Dispatch, KeyMode, Pinning};
use crate::mac::{Accel, VerifyMode};
use serde::{Deserialize, Deserializer, Serialize};
use std::path::PathBuf;
use std::time::Duration;

use super::Order;

/// The largest `--slowest` taken, reference cycles per byte.
pub const MAX_SLOWEST: f64 = 1e6;

/// `--window`'s default: a short warm-up, then to the run's end.
pub const AUTO: &str = "auto";

/// A run's options, typed: what to measure and how, as the user (or a reproduction step) chose it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunOptions {
    /// Algorithms as given (a list, or `paper`, `all`).
    pub alg: String,
    /// Backends as given; `None`: each algorithm's first available backend.
    pub backend: Option<String>,
    /// Accelerations and ISA levels, recorded comma-separated.
    #[serde(with = "accel_list")]
    pub accel: Vec<Accel>,
    /// Message sizes as given: numbers, ranges or a size model (its file's path included).
    pub sizes: String,
    pub sessions: usize,
    /// The core set, recorded as `0-3,6`.
    #[serde(with = "cpu_list")]
    pub cores: Vec<usize>,
    pub pinning: Pinning,
    pub data: DataMode,
    pub keys: KeyMode,
    pub verify: VerifyMode,
    /// Re-key every N messages.
    pub rekey_every: Option<u64>,
    /// Tag bytes (a truncation, or KMAC's L); `None`: each algorithm's own tag. Absent in files
    /// written before the header recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag_len: Option<usize>,
    /// `--auto`: adjust and re-run until valid.
    pub auto: bool,
    pub seed: u64,
    /// Dispatch modes, each a scenario of its own, recorded comma-separated.
    #[serde(with = "dispatch_list")]
    pub dispatch: Vec<Dispatch>,
    pub energy: bool,
    /// `--baseline ROW` as given (absent without it, and in files written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// How long and how often, as given: the header records what the plan made of them ([`Planned`]).
    #[serde(skip)]
    pub timing: Timing,
    /// Where the results go and how the run is shown: not part of what was measured.
    #[serde(skip)]
    pub output: Output,
}

/// The options the plan resolves: each recorded as what it became ([`Planned`]), not as given.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// `--duration`: obeyed as it is; `None`: chosen by the budget.
    pub duration: Option<Duration>,
    /// `--budget`, with its text for messages.
    pub budget: Option<(Duration, String)>,
    /// `--window`: [`AUTO`], or `START..END` in seconds or percent, resolved against the duration.
    pub window: String,
    /// `--tick`; `None`: an eighth of the window.
    pub tick: Option<Duration>,
    /// `--repeat`; `None`: as many as the budget holds, at least [`DEFAULT_REPEAT`].
    pub repeat: Option<usize>,
    /// `--target-ci` in percent; `None`: [`DEFAULT_TARGET_CI_PERCENT`], or off with `--repeat`.
    pub target_ci: Option<f64>,
    /// `--max-repeat`; `None`: [`DEFAULT_MAX_REPEAT`], or `--repeat` when that is more.
    pub max_repeat: Option<usize>,
    /// `--order`; `None`: interleaved when there are repeats to interleave or rows to pair.
    pub order: Option<Order>,
    /// `--slowest`: reference cycles per byte every scenario's window must hold 1,000 messages a
    /// session of its own size at (a run of larger messages is lengthened for them); `None`: the
    /// planner fits a window after a first run, up to its cap.
    pub slowest: Option<f64>,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            duration: None,
            budget: None,
            window: AUTO.to_string(),
            tick: None,
            repeat: None,
            target_ci: None,
            max_repeat: None,
            order: None,
            slowest: None,
        }
    }
}

/// Where a run's results go and how it is shown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    /// `-o DIR`: `results.json` and `results.csv` there, DIR made once every option is checked.
    pub dir: Option<PathBuf>,
    /// Bare `macbench`'s default file: an earlier results file there is kept under a dated name.
    pub keep_previous: bool,
    /// This host's name in the results, tables and figures; `None`: its hostname.
    pub label: Option<String>,
    /// Refuse to start when other processes use the chosen cores.
    pub quiet_check: bool,
    /// Measure the harness overhead (null function) first.
    pub harness: bool,
}

/// Default `--repeat`.
pub const DEFAULT_REPEAT: usize = 3;
/// Default `--max-repeat`: room for the budget's extra repeats where intervals are wide (the budget
/// bounds their time).
pub const DEFAULT_MAX_REPEAT: usize = 40;
/// Default `--target-ci`, percent: see docs/benchmark.md's figures for how it was chosen.
pub const DEFAULT_TARGET_CI_PERCENT: f64 = 5.0;
/// The finest `--target-ci` taken, percent: the host's own repeat-to-repeat spread (docs/methodology.md,
/// "The host's floor") keeps intervals at a few tenths of a percent at best, so a finer target only
/// runs every scenario to --max-repeat.
pub const MIN_TARGET_CI_PERCENT: f64 = 0.01;

impl Default for RunOptions {
    /// `macbench run` with no flags: the paper's nine functions at the default sizes, one session per
    /// online CPU (`cli/run.rs` checks that its flags' defaults give this value).
    fn default() -> RunOptions {
        let cores = crate::system::online_cpus();
        RunOptions {
            alg: "paper".to_string(),
            backend: None,
            accel: vec![Accel::Hw],
            sizes: "default".to_string(),
            sessions: cores.len().max(1),
            cores,
            pinning: Pinning::RoundRobin,
            data: DataMode::Unique,
            keys: KeyMode::PerSession,
            verify: VerifyMode::None,
            rekey_every: None,
            tag_len: None,
            auto: false,
            seed: 1,
            dispatch: vec![Dispatch::Single],
            energy: false,
            baseline: None,
            timing: Timing::default(),
            output: Output {
                harness: true,
                ..Output::default()
            },
        }
    }
}

impl RunOptions {
    /// The planned repeats: `--repeat`, or its default.
    pub fn repeats(&self) -> usize {
        let most = self.timing.max_repeat.unwrap_or(DEFAULT_MAX_REPEAT);
        self.timing.repeat.unwrap_or(DEFAULT_REPEAT.min(most))
    }

    /// `--max-repeat`, or its default (raised to `--repeat` when that asks for more).
    pub fn max_repeats(&self) -> usize {
        self.timing
            .max_repeat
            .unwrap_or(DEFAULT_MAX_REPEAT.max(self.repeats()))
    }

    /// `--target-ci` in percent: as given, else off when `--repeat` was given (exactly that many
    /// runs), else [`DEFAULT_TARGET_CI_PERCENT`].
    pub fn target_ci_percent(&self) -> f64 {
        match (self.timing.target_ci, self.timing.repeat) {
            (Some(t), _) => t,
            (None, Some(_)) => 0.0,
            (None, None) => DEFAULT_TARGET_CI_PERCENT,
        }
    }

    /// The order repeats run in: `--order`, else interleaved when there are repeats to interleave
    /// or rows to pair.
    pub fn order(&self, repeats: usize) -> Order {
        match (self.timing.order, &self.baseline) {
            (None, Some(_)) => Order::Interleaved,
            (order, _) => Order::or_default(order, repeats),
        }
    }

    /// Whether the planned repeats fill the budget: neither `--repeat` nor `--duration` fixed them.
    pub fn fills_budget(&self) -> bool {
        self.timing.repeat.is_none() && self.timing.duration.is_none()
    }

    /// The rules between options, whoever built the value: one line naming the flags, else `Ok`.
    pub fn check(&self) -> Result<(), String> {
        let count = |flag: &str, n: usize, most: usize| check_count(flag, n, most).map(|_| ());
        count("--sessions", self.sessions, engine::MAX_SESSIONS)?;
        if self.cores.is_empty() {
            return Err("--cores: no CPU given".to_string());
        }
        if self.rekey_every == Some(0) {
            return Err("--rekey must be at least 1 message".to_string());
        }
        // A --max-repeat given is checked before the repeats its default would follow: `--max-repeat
        // 0` is its own fault, not "--repeat must be at least 1".
        if let Some(most) = self.timing.max_repeat {
            count("--max-repeat", most, super::MAX_REPEAT)?;
        }
        count("--repeat", self.repeats(), super::MAX_REPEAT)?;
        let target = self.target_ci_percent();
        if !(0.0..=100.0).contains(&target) {
            return Err(format!(
                "--target-ci {}: give a percentage between 0 (off) and 100",
                crate::number::compact(target)
            ));
        }
        // A target no run reaches would only spend --max-repeat repeats on every scenario, silently
        // (issue 47 N33: `--target-ci 1e-300`); the finest a run can hope for is well above this.
        if target > 0.0 && target < MIN_TARGET_CI_PERCENT {
            return Err(format!(
                "--target-ci {}: below {MIN_TARGET_CI_PERCENT} %, finer than any run's interval gets (it would only spend --max-repeat repeats on every scenario); give 0 (off) or {MIN_TARGET_CI_PERCENT} to 100",
                crate::number::compact(target)
            ));
        }
        // One cap for both: a target no run can reach (`--target-ci 1e-300`) still ends.
        count("--max-repeat", self.max_repeats(), super::MAX_REPEAT)?;
        // Only two numbers the user gave can contradict each other; a default yields to the other.
        if let (Some(max), Some(repeat)) = (self.timing.max_repeat, self.timing.repeat) {
            if max < repeat {
                return Err(format!("--max-repeat {max} is below --repeat {repeat}"));
            }
        }
        if let (Some((_, budget)), Some(duration)) = (&self.timing.budget, self.timing.duration) {
            return Err(format!(
                "--budget {budget} and --duration {}s: the budget sets the duration per run; give one of them",
                crate::number::compact(duration.as_secs_f64())
            ));
        }
        if let (Some(row), Some(Order::Sequential)) = (&self.baseline, self.timing.order) {
            return Err(format!(
                "--baseline {row} with --order sequential: a row's repeats would all run before the next row's, so none would pair with its baseline's; leave --order out (interleaved)"
            ));
        }
        if self.dispatch.is_empty() {
            return Err("--dispatch: no mode given".to_string());
        }
        if let Some(c) = self.timing.slowest {
            // A bound, not a measurement: beyond a million cycles a byte a 64 KiB window would be
            // hours long, which no run may be.
            if !(c > 0.0 && c <= MAX_SLOWEST) {
                return Err(format!(
                    "--slowest {}: give reference cycles per byte above 0 and at most {}",
                    crate::number::compact(c),
                    crate::number::compact(MAX_SLOWEST)
                ));
            }
        }
        Ok(())
    }
}

/// A count a flag gives (`--repeat`, `--sessions`, …): at least 1 and at most `max`, one rule for
/// every command (`spec::check_count` is this).
pub fn check_count(flag: &str, value: usize, max: usize) -> Result<usize, String> {
    if value == 0 {
        return Err(format!("{flag} must be at least 1 (and at most {max})"));
    }
    if value > max {
        return Err(format!("{flag}: {value} is more than the maximum {max}"));
    }
    Ok(value)
}

/// What the plan made of a run's options: the header records these beside the options.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Planned {
    pub duration_s: f64,
    pub window_start_s: f64,
    pub window_end_s: f64,
    pub repeat: usize,
    pub tick_s: f64,
    pub target_ci_percent: f64,
    pub max_repeat: usize,
    pub budget_s: f64,
    pub order: Order,
    /// The span interleaved repeats are spread over: a constant of the build, recorded so that runs
    /// made with another span are told apart.
    pub interleave_span_s: f64,
    /// `--slowest` as given: the cost each scenario's window was lengthened to hold 1,000 messages
    /// of at its own size (each result's own duration and window say what it ran). Absent without
    /// it, and in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_cycles_per_byte: Option<f64>,
}

/// The header of every results file a sweep writes: the run's options as they were, with what the
/// plan made of them, in one flat JSON object. A key neither names is refused, as a misspelt field is.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SweepOptions {
    #[serde(flatten)]
    pub options: RunOptions,
    #[serde(flatten)]
    pub planned: Planned,
}

impl<'de> Deserialize<'de> for SweepOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SweepOptions, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(d)?;
        let object = value
            .as_object()
            .ok_or_else(|| D::Error::custom("a sweep's header must be an object"))?;
        // serde's `deny_unknown_fields` does not combine with `flatten`: the two field lists are
        // read from the types themselves, so a new option is known here without a line.
        let known: Vec<&str> = [field_names::<RunOptions>(), field_names::<Planned>()].concat();
        if let Some(key) = object.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(D::Error::custom(format!(
                "unknown field `{key}` in the sweep's header"
            )));
        }
        Ok(SweepOptions {
            options: RunOptions::deserialize(&value).map_err(D::Error::custom)?,
            planned: Planned::deserialize(&value).map_err(D::Error::custom)?,
        })
    }
}

/// The JSON keys a derived `Deserialize` reads: serde hands a struct's field list to its
/// deserializer, and this one only keeps it.
fn field_names<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{value::Error, Error as _, Visitor};
    struct Names<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Names<'_> {
        type Error = Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
            Err(Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Error> {
            *self.0 = fields;
            Err(Error::custom("field names only"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(Names(&mut names));
    names
}

/// `Vec<Accel>` as `hw,sw`.
mod accel_list {
    use super::Accel;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(accels: &[Accel], s: S) -> Result<S::Ok, S::Error> {
        let names: Vec<&str> = accels.iter().map(|a| a.name()).collect();
        s.serialize_str(&names.join(","))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Accel>, D::Error> {
        let text = String::deserialize(d)?;
        text.split(',')
            .map(|name| {
                Accel::from_name(name.trim()).ok_or_else(|| {
                    serde::de::Error::custom(format!("unknown acceleration {name:?}"))
                })
            })
            .collect()
    }
}

/// A CPU list as `0-3,6`.
mod cpu_list {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(cpus: &[usize], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::system::format_cpu_list(cpus))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<usize>, D::Error> {
        let text = String::deserialize(d)?;
        crate::system::parse_cpu_list(&text).map_err(serde::de::Error::custom)
    }
}

/// Dispatch modes as `single,burst:16`.
mod dispatch_list {
    use super::Dispatch;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(modes: &[Dispatch], s: S) -> Result<S::Ok, S::Error> {
        let names: Vec<String> = modes.iter().map(|m| m.to_string()).collect();
        s.serialize_str(&names.join(","))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Dispatch>, D::Error> {
        let text = String::deserialize(d)?;
        text.split(',')
            .map(|m| m.trim().parse().map_err(serde::de::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned() -> Planned {
        Planned {
            duration_s: 0.05,
            window_start_s: 0.001,
            window_end_s: 0.05,
            repeat: 12,
            tick_s: 0.006,
            target_ci_percent: 5.0,
            max_repeat: 40,
            budget_s: 50.0,
            order: Order::Interleaved,
            interleave_span_s: 20.0,
            slowest_cycles_per_byte: Some(36.0),
        }
    }

    /// Every option set away from its default, the optional ones present (a new option is set here
    /// too, or the test below finds its key missing).
    fn unusual() -> RunOptions {
        RunOptions {
            alg: "hmac-sha256,kmac128".to_string(),
            backend: Some("openssl".to_string()),
            accel: vec![Accel::Hw, Accel::Avx2],
            sizes: "64,imix".to_string(),
            sessions: 3,
            cores: vec![0, 2, 3, 4],
            pinning: Pinning::Float,
            data: DataMode::Same,
            keys: KeyMode::Shared,
            verify: VerifyMode::After,
            rekey_every: Some(7),
            tag_len: Some(16),
            auto: true,
            seed: 9,
            dispatch: vec![Dispatch::Single, Dispatch::Burst(8)],
            energy: true,
            baseline: Some("openssl".to_string()),
            ..RunOptions::default()
        }
    }

    /// The header is the options and the plan, by construction: written and read back, it is the
    /// same value, and its keys are exactly the two types' fields (`tag_len` among them: issue 46).
    #[test]
    fn a_header_reads_back_as_the_options_and_plan_it_was_written_from() {
        let header = SweepOptions {
            options: unusual(),
            planned: planned(),
        };
        let json = serde_json::to_value(&header).unwrap();
        let object = json.as_object().unwrap();
        assert_eq!(object["cores"], "0,2-4");
        assert_eq!(object["accel"], "hw,avx2");
        assert_eq!(object["dispatch"], "single,burst:8");
        assert_eq!(object["tag_len"], 16);
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        let mut fields = [field_names::<RunOptions>(), field_names::<Planned>()].concat();
        keys.sort();
        fields.sort();
        assert_eq!(keys, fields);
        let back: SweepOptions = serde_json::from_value(json.clone()).unwrap();
        // What is not recorded (how long, where to) reads back as its default.
        let mut expected = header.clone();
        expected.options.timing = Timing::default();
        expected.options.output = Output::default();
        assert_eq!(back, expected);
        // A key neither type names is refused, as `deny_unknown_fields` would.
        let mut misspelt = json;
        misspelt["tag_length"] = 16.into();
        let err = serde_json::from_value::<SweepOptions>(misspelt).unwrap_err();
        assert!(err.to_string().contains("tag_length"), "{err}");
    }

    /// Files written before `tag_len` and `baseline` were recorded still read.
    #[test]
    fn an_older_header_without_the_later_options_reads() {
        let mut json = serde_json::to_value(SweepOptions {
            options: RunOptions::default(),
            planned: planned(),
        })
        .unwrap();
        let object = json.as_object_mut().unwrap();
        assert!(!object.contains_key("tag_len") && !object.contains_key("baseline"));
        let back: SweepOptions = serde_json::from_value(json).unwrap();
        assert_eq!(back.options.tag_len, None);
    }

    /// The rules between options hold whoever built the value (a reproduction step as much as the
    /// command line), each one line naming the flags.
    #[test]
    fn the_rules_between_options_are_the_values_own() {
        let with = |change: &dyn Fn(&mut RunOptions)| {
            let mut o = RunOptions::default();
            change(&mut o);
            o.check()
        };
        assert_eq!(with(&|_| ()), Ok(()));
        let refused = [
            with(&|o| o.rekey_every = Some(0)),
            with(&|o| {
                o.timing.repeat = Some(5);
                o.timing.max_repeat = Some(3)
            }),
            with(&|o| {
                o.timing.budget = Some((Duration::from_secs(10), "10s".into()));
                o.timing.duration = Some(Duration::from_millis(100))
            }),
            with(&|o| {
                o.baseline = Some("openssl".into());
                o.timing.order = Some(Order::Sequential)
            }),
            with(&|o| o.timing.target_ci = Some(1e-300)),
            with(&|o| o.timing.target_ci = Some(101.0)),
            with(&|o| o.sessions = 0),
            with(&|o| o.dispatch.clear()),
            with(&|o| o.timing.max_repeat = Some(0)),
        ];
        let words = [
            "--rekey",
            "--max-repeat 3 is below --repeat 5",
            "--budget 10s and --duration 0.1s",
            "--baseline openssl with --order sequential",
            "--target-ci 1e-300",
            "--target-ci 101",
            "--sessions must be at least 1",
            "--dispatch",
            "--max-repeat must be at least 1",
        ];
        for (outcome, words) in refused.iter().zip(words) {
            let e = outcome.as_ref().unwrap_err();
            assert!(e.contains(words) && !e.contains('\n'), "{e}");
        }
    }
}
