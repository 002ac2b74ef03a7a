//! Formats that keep results over time, in the tools people already run: Bencher Metric Format (BMF
//! JSON, for Bencher's server and its history per testbed) and Go's benchmark text format (for
//! `benchstat`, which compares two sets of runs with its own statistics).
//!
//! BMF holds one value per metric with its interval, so each result gives its median and 95 %
//! interval. The benchmark format holds samples, so each result gives one line per repeat (each
//! repeat's metrics computed from its raw counters, as the run computed them) and benchstat draws its
//! own median and interval from them.

use crate::metrics::{self, Context};
use crate::results::{Document, ResultEntry};
use crate::stats::Interval;
use serde_json::{json, Map, Value};

/// The formats `macbench export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Bencher Metric Format JSON (`bencher run --adapter json`).
    Bmf,
    /// Go's benchmark text format, as `benchstat` reads it.
    Benchstat,
    /// LAVA's `name result value unit` lines (deploy/lava/macbench.yaml parses them).
    Lava,
}

fn several_hosts(docs: &[&Document]) -> bool {
    docs.iter().any(|d| d.host_label() != docs[0].host_label())
}

/// Each usable result of `docs` with the name it is exported under: its scenario
/// (`hmac-sha256/openssl/hw@64/1`), after its host's label when the documents come from several hosts.
fn named<'d>(docs: &[&'d Document]) -> Vec<(String, &'d ResultEntry)> {
    let several = several_hosts(docs);
    let mut out = Vec::new();
    for doc in docs {
        for r in doc.results.iter().filter(|r| r.usable().is_some()) {
            let name = if several {
                format!("{}/{}", doc.host_label(), r.key())
            } else {
                r.key().to_string()
            };
            out.push((name, r));
        }
    }
    out
}

/// A BMF metric: the value, with its 95 % interval as the bounds when there is one.
fn bmf_metric(value: Option<f64>, interval: Option<Interval>) -> Option<Value> {
    let value = value.filter(|v| v.is_finite())?;
    Some(match interval {
        Some(i) => json!({ "value": value, "lower_value": i.low, "upper_value": i.high }),
        None => json!({ "value": value }),
    })
}

/// The formats over many documents, as [`super::Exporter`]s of them (`macbench export --format`).
pub struct Bmf;
pub struct Benchstat;
pub struct Lava;

impl<'a> super::Exporter<[&'a Document]> for Bmf {
    fn serialize(&self, docs: &[&'a Document]) -> Result<Vec<u8>, String> {
        crate::stdio::pretty_json(&bmf(docs))
    }
}

impl<'a> super::Exporter<[&'a Document]> for Benchstat {
    fn serialize(&self, docs: &[&'a Document]) -> Result<Vec<u8>, String> {
        Ok(benchstat(docs).into_bytes())
    }
}

impl<'a> super::Exporter<[&'a Document]> for Lava {
    fn serialize(&self, docs: &[&'a Document]) -> Result<Vec<u8>, String> {
        Ok(lava(docs).into_bytes())
    }
}

/// Bencher Metric Format: `{ benchmark: { measure: { value, lower_value, upper_value } } }`, measures
/// named as the results JSON names the metrics. Later results of the same name (a second file of one
/// host) replace earlier ones, as a tracker keeps one value per benchmark and run.
pub fn bmf(docs: &[&Document]) -> Value {
    let mut out = Map::new();
    for (name, r) in named(docs) {
        let m = &r.metrics;
        let ci = &r.ci95;
        let measures: Map<String, Value> = metrics::HEADLINE
            .iter()
            .filter(|h| h.history.is_some())
            .filter_map(|h| Some((h.bmf_name(), bmf_metric((h.value)(m), ci.get(h))?)))
            .collect();
        out.insert(name, Value::Object(measures));
    }
    Value::Object(out)
}

/// A benchmark name without spaces, its parts as benchstat's `key=value` sub-benchmark names so
/// `benchstat -col /accel` and `-row /size` work. The host is not in it but in the `host:` line
/// above, so two hosts' files pair by name (`benchstat a.txt b.txt`, or `-col host` on one file).
fn benchstat_name(r: &ResultEntry) -> String {
    let key = r.key();
    let mut name = format!(
        "BenchmarkMAC/alg={}/backend={}/accel={}/size={}/sessions={}",
        r.algorithm, r.backend, r.accel, key.size, r.sessions
    );
    let knobs = key.label();
    if let Some(rest) = knobs.strip_prefix(&key.function.to_string()) {
        for knob in rest.split_whitespace() {
            name.push_str(&format!("/{knob}"));
        }
    }
    name.split_whitespace().collect::<Vec<_>>().join("_")
}

/// One line per repeat of `r`: messages in the window as the iteration count, then each metric with
/// its unit.
fn benchstat_lines(doc: &Document, r: &ResultEntry, name: &str) -> Vec<String> {
    let ctx = Context {
        f: doc.clock.reference_hz,
        cores: r.core_count().max(1),
        core_ratio: doc.clock.core_to_reference_ratio,
        timer_resolution_ns: doc.clock.timer_resolution_ns,
    };
    let runs: Vec<(u64, metrics::Metrics)> = if r.raw.is_empty() {
        // Files without raw counters: the median alone, one sample.
        vec![(
            r.threads.iter().map(|t| t.messages).sum(),
            r.metrics.clone(),
        )]
    } else {
        r.raw
            .iter()
            .map(|raw| {
                let run = metrics::compute(raw, ctx);
                (run.threads.iter().map(|t| t.messages).sum(), run.metrics)
            })
            .collect()
    };
    runs.into_iter()
        .map(|(messages, m)| {
            let mut line = format!("{name} {}", messages.max(1));
            for h in metrics::HEADLINE {
                let Some(unit) = h.history else { continue };
                if let Some(v) = (h.value)(&m).filter(|v| v.is_finite()) {
                    line.push_str(&format!(" {v} {unit}"));
                }
            }
            line
        })
        .collect()
}

/// One `name result value unit` line per result for LAVA's test-definition parser: the name in the
/// characters LAVA allows in a test case id (`hmac-sha256_openssl_hw_64_1`), `pass` with absolute
/// cycles/byte, or `fail` for a failed result (LAVA then shows which). With several hosts, the host
/// leads the name.
pub fn lava(docs: &[&Document]) -> String {
    let several = several_hosts(docs);
    let mut out = String::new();
    for doc in docs {
        for r in &doc.results {
            let key = r.key().to_string();
            let name = if several {
                format!("{}/{key}", doc.host_label())
            } else {
                key
            };
            let id: String = name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let passed = &metrics::ABSOLUTE_CYCLES_PER_BYTE;
            let unit = passed.unit;
            match r.usable().and_then(passed.value) {
                // Compact (the pattern takes `1e300`): `{v}` wrote 301 digits (issue 47 M34).
                Some(v) if v.is_finite() => {
                    out.push_str(&format!("{id} pass {} {unit}\n", crate::number::compact(v)))
                }
                _ => out.push_str(&format!("{id} fail 0 {unit}\n")),
            }
        }
    }
    out
}

/// Go's benchmark format: per document its configuration lines (`cpu:`, `host:`, …), then one line
/// per repeat of each usable result.
pub fn benchstat(docs: &[&Document]) -> String {
    let mut out = String::new();
    for doc in docs {
        let h = &doc.host;
        out.push_str(&format!(
            "pkg: macbench\ncpu: {}\nkernel: {}\nhost: {}\nmacbench: {}\n",
            h.cpu_model,
            h.kernel,
            doc.host_label(),
            h.macbench_version
        ));
        for r in doc.results.iter().filter(|r| r.usable().is_some()) {
            let name = benchstat_name(r);
            for line in benchstat_lines(doc, r, &name) {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}
