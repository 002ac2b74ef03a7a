//! The cost fit of a measured size sweep, and its predictions for packet-size models
//! (docs/methodology.md §6): `model` fits `a + b·Nblk` per function and session count from a results
//! document, predicts each model's cost as `a + b·Γ`, and sets beside it a direct measurement with
//! sizes drawn from the model where the same document has one.

use super::{CostModel, CostPoint, FitWeighting, SizeDistribution};
use crate::mac::{self, FunctionId};
use crate::results::{Document, ResultEntry, SizeLabel};
use crate::table::{Style, Table};
use serde::Serialize;

/// The fitted cost of one function.
#[derive(Debug, Clone, Serialize)]
pub struct FitRow {
    pub algorithm: String,
    pub backend: String,
    pub accel: String,
    pub sessions: u64,
    /// `a`: fixed cycles per message.
    pub fixed_cycles: f64,
    /// `b`: cycles per block.
    pub cycles_per_block: f64,
    pub points: usize,
    pub rms_relative_error: f64,
    pub max_relative_error: f64,
    pub r_squared: f64,
    pub reject_size: u32,
    /// Forged packets per second one core can reject at `reject_size` (Kivinen's denial-of-service question).
    pub rejection_packets_per_second: f64,
}

/// Predicted (and, where measured, actual) cost of a model for one function.
#[derive(Debug, Clone, Serialize)]
pub struct PredictionRow {
    pub model: String,
    pub algorithm: String,
    pub backend: String,
    pub accel: String,
    pub mean_bytes: f64,
    pub gamma: f64,
    pub predicted_cycles_per_packet: f64,
    pub predicted_packets_per_second_per_core: f64,
    pub measured_cycles_per_packet: Option<f64>,
    /// (predicted − measured) / measured.
    pub relative_difference: Option<f64>,
}

/// What one cost fit covers: a function at one session count.
#[derive(Debug, Clone, PartialEq)]
struct FitKey {
    function: FunctionId,
    sessions: usize,
}

fn key_of(r: &ResultEntry) -> FitKey {
    FitKey {
        function: r.function(),
        sessions: r.sessions,
    }
}

/// Fit every function of a results document that has a fixed-size sweep; predict every model; match
/// measured model runs in the same document.
pub fn analyse(
    doc: &Document,
    models: &[SizeDistribution],
    reject_size: u32,
    fits: &mut Vec<FitRow>,
    predictions: &mut Vec<PredictionRow>,
) {
    let f = doc.clock.reference_hz;
    let results = &doc.results;
    let mut keys: Vec<FitKey> = Vec::new();
    for r in results {
        let k = key_of(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for key in keys {
        let Some(algorithm) = mac::algorithm(&key.function.algorithm) else {
            continue;
        };
        if algorithm.family == mac::Family::Null {
            continue;
        }
        let mine: Vec<&ResultEntry> = results
            .iter()
            .filter(|r| key_of(r) == key && r.measured())
            .collect();
        let points: Vec<CostPoint> = mine
            .iter()
            .filter_map(|r| {
                Some(CostPoint {
                    size: r.size.bytes()?,
                    cycles_per_message: r.metrics.absolute_cycles_per_message?,
                })
            })
            .collect();
        let model = match CostModel::fit(algorithm.block_rule, &points, FitWeighting::Relative) {
            Ok(m) => m,
            Err(e) => {
                crate::errln!("macbench: {}: no cost fit: {e}", key.function);
                continue;
            }
        };
        fits.push(FitRow {
            algorithm: key.function.algorithm.clone(),
            backend: key.function.backend.clone(),
            accel: key.function.accel.clone(),
            sessions: key.sessions as u64,
            fixed_cycles: model.fixed_cycles,
            cycles_per_block: model.cycles_per_block,
            points: model.quality.points,
            rms_relative_error: model.quality.rms_relative_error,
            max_relative_error: model.quality.max_relative_error,
            r_squared: model.quality.r_squared,
            reject_size,
            rejection_packets_per_second: model.rejection_capacity(u64::from(reject_size), f),
        });
        for dist in models {
            let measured = mine
                .iter()
                .find(|r| r.size == SizeLabel::Model(dist.name().to_string()))
                .and_then(|r| r.metrics.absolute_cycles_per_message);
            let predicted = model.predict(dist);
            predictions.push(PredictionRow {
                model: dist.name().to_string(),
                algorithm: key.function.algorithm.clone(),
                backend: key.function.backend.clone(),
                accel: key.function.accel.clone(),
                mean_bytes: dist.mean(),
                gamma: dist.gamma(algorithm.block_rule),
                predicted_cycles_per_packet: predicted,
                predicted_packets_per_second_per_core: model.packets_per_second(dist, f),
                measured_cycles_per_packet: measured,
                relative_difference: measured.map(|m| (predicted - m) / m),
            });
        }
    }
}

/// What `model` writes: the Γ table of each model and algorithm, and, where results were fitted, each
/// fit and its predictions. `--json` takes all three; `--csv` the predictions, or the Γ table without.
#[derive(Debug, serde::Serialize)]
pub struct ModelReport {
    /// Always [`MODEL_TOOL`]: the file is macbench's, so `validate` and the readers name it as
    /// a model report instead of disowning it (issue 47 M40).
    pub tool: &'static str,
    /// Always [`MODEL_KIND`]: which of macbench's files this is.
    pub kind: &'static str,
    pub models: Vec<super::ModelRow>,
    pub fits: Vec<FitRow>,
    pub predictions: Vec<PredictionRow>,
}

/// The `tool` of a model report, as of every file macbench writes.
pub const MODEL_TOOL: &str = "macbench";
/// The `kind` of a model report.
pub const MODEL_KIND: &str = "model";

/// Whether `value` is a model report `model --json` wrote (since it says so).
pub fn is_model_report(value: &serde_json::Value) -> bool {
    value.get("tool").and_then(|t| t.as_str()) == Some(MODEL_TOOL)
        && value.get("kind").and_then(|k| k.as_str()) == Some(MODEL_KIND)
}

impl ModelReport {
    /// The CSV rows: the predictions where there are any, else the Γ table.
    pub fn csv(&self) -> Result<Vec<u8>, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let rows = if self.predictions.is_empty() {
            self.models.iter().try_for_each(|r| w.serialize(r))
        } else {
            self.predictions.iter().try_for_each(|r| w.serialize(r))
        };
        rows.map_err(|e| e.to_string())?;
        w.into_inner().map_err(|e| e.to_string())
    }
}

/// The Γ table: mean size, blocks and compressions per packet for each model and algorithm.
pub fn models_text(rows: &[super::ModelRow], style: Style) -> String {
    let table = Table::new(style)
        .left("model")
        .right("mean B")
        .left("algorithm")
        .right("Γ")
        .right("Γ+1")
        .right("Γ+3")
        .right("blk ops");
    let mut out = table.render_each(rows, |r| {
        vec![
            r.model.to_string(),
            format!("{:.2}", r.mean_bytes),
            r.algorithm.to_string(),
            format!("{:.3}", r.gamma),
            opt(r.compressions_per_packet_precomputed, |v| format!("{v:.3}")),
            opt(r.compressions_per_packet_rehashed, |v| format!("{v:.3}")),
            format!("{:.3}", r.block_ops_per_packet),
        ]
    });
    out.push_str("(Γ = mean blocks per packet; HMAC: Γ+1 compressions with precomputed pads, Γ+3 rehashing them)\n");
    out
}

/// The cost-model fits and each model's predicted against measured cost per packet.
pub fn fits_text(
    fits: &[FitRow],
    predictions: &[PredictionRow],
    reject_size: u32,
    style: Style,
) -> String {
    let mut out = String::new();
    out.push_str(
        "\ncost model: cycles/message = a + b·Nblk(size), fitted over the sweep (reference cycles)\n",
    );
    let table = Table::new(style)
        .left("function")
        .right("a (fixed)")
        .right("b (/blk)")
        .right("rms err")
        .right("max err")
        .right("reject pkt/s");
    out += &table.render_each(fits, |f| {
        vec![
            format!("{}/{}/{}", f.algorithm, f.backend, f.accel),
            format!("{:.1}", f.fixed_cycles),
            format!("{:.2}", f.cycles_per_block),
            format!("{:.1}%", f.rms_relative_error * 100.0),
            format!("{:.1}%", f.max_relative_error * 100.0),
            format!("{:.0}", f.rejection_packets_per_second),
        ]
    });
    out += &format!(
        "(reject pkt/s: forged {reject_size}-byte packets one core can verify and discard per second)\n"
    );
    out.push_str("\nper-packet cost of each model: predicted a + b·Γ vs measured with sizes drawn from the model\n");
    let table = Table::new(style)
        .left("function")
        .left("model")
        .right("pred c/pkt")
        .right("pkt/s/core")
        .right("meas c/pkt")
        .right("diff");
    out += &table.render_each(predictions, |p| {
        vec![
            format!("{}/{}/{}", p.algorithm, p.backend, p.accel),
            p.model.to_string(),
            format!("{:.0}", p.predicted_cycles_per_packet),
            format!("{:.0}", p.predicted_packets_per_second_per_core),
            opt(p.measured_cycles_per_packet, |v| format!("{v:.0}")),
            opt(p.relative_difference, |v| format!("{:+.1}%", v * 100.0)),
        ]
    });
    out
}

/// A figure, or `-` where there is none.
fn opt(v: Option<f64>, fmt: impl Fn(f64) -> String) -> String {
    v.map_or("-".to_string(), fmt)
}
