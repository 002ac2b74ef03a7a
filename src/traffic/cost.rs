//! Per-packet work (Γ-based counts) and the measured cost model `cycles = a + b·Nblk(size)`.

use crate::mac::{Algorithm, BlockRule, Family};

use super::distribution::SizeDistribution;

/// How an HMAC implementation treats the key pads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HmacPads {
    /// ipad/opad chaining states computed once per key: `Γ + 1` compressions per packet (the
    /// outer hash's final block). What OpenSSL and RustCrypto do after key setup.
    Precomputed,
    /// `K⊕ipad` and `K⊕opad` hashed for every packet: `Γ + 3` (Deepakumara et al., eq. 4.2).
    Rehashed,
}

/// HMAC compression-function calls per packet, for a mean of `gamma` message blocks.
pub fn hmac_compressions(gamma: f64, pads: HmacPads) -> f64 {
    match pads {
        HmacPads::Precomputed => gamma + 1.0,
        HmacPads::Rehashed => gamma + 3.0,
    }
}

/// Primitive operations one packet costs, by family.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketWork {
    /// Block operations as macbench's backends do them: HMAC `Γ + 1` compressions (pads
    /// precomputed at key setup); CBC-MAC/CMAC `Γ` block encryptions (Deepakumara et al., eq. 4.3); other
    /// families `Γ` under their own block rule (which already counts, e.g., GMAC's length block).
    pub block_ops: f64,
    /// HMAC only: `Γ + 1`.
    pub hmac_precomputed: Option<f64>,
    /// HMAC only: `Γ + 3`.
    pub hmac_rehashed: Option<f64>,
}

/// Per-packet work for an algorithm family, given Γ under that algorithm's block rule.
pub fn packet_work(family: Family, gamma: f64) -> PacketWork {
    match family {
        Family::Hmac => PacketWork {
            block_ops: hmac_compressions(gamma, HmacPads::Precomputed),
            hmac_precomputed: Some(hmac_compressions(gamma, HmacPads::Precomputed)),
            hmac_rehashed: Some(hmac_compressions(gamma, HmacPads::Rehashed)),
        },
        _ => PacketWork {
            block_ops: gamma,
            hmac_precomputed: None,
            hmac_rehashed: None,
        },
    }
}

/// One row of `macbench model`: a model × an algorithm. Flat, snake_case, so CSV/pandas read it
/// as is; the HMAC-only columns are empty for other families.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelRow {
    pub model: String,
    pub mean_bytes: f64,
    pub algorithm: String,
    pub gamma: f64,
    pub compressions_per_packet_precomputed: Option<f64>,
    pub compressions_per_packet_rehashed: Option<f64>,
    pub block_ops_per_packet: f64,
}

/// Every model × every algorithm, model-major.
pub fn model_rows(models: &[SizeDistribution], algorithms: &[&Algorithm]) -> Vec<ModelRow> {
    models
        .iter()
        .flat_map(|model| {
            algorithms.iter().map(move |alg| {
                let gamma = model.gamma(alg.block_rule);
                let work = packet_work(alg.family, gamma);
                ModelRow {
                    model: model.name().to_string(),
                    mean_bytes: model.mean(),
                    algorithm: alg.name.to_string(),
                    gamma,
                    compressions_per_packet_precomputed: work.hmac_precomputed,
                    compressions_per_packet_rehashed: work.hmac_rehashed,
                    block_ops_per_packet: work.block_ops,
                }
            })
        })
        .collect()
}

/// One measured point of a size sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostPoint {
    pub size: u64,
    pub cycles_per_message: f64,
}

/// How the fit weighs points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FitWeighting {
    /// Minimise squared *relative* residuals (weights 1/y²). The default: a power-of-two sweep
    /// spans three decades of cycles, and plain least squares would let the 64 KiB point decide
    /// the fixed cost `a` that Kivinen says dominates small buffers.
    #[default]
    Relative,
    /// Ordinary least squares on cycles.
    Absolute,
}

/// How well the line fits the points it was fitted to.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FitQuality {
    pub points: usize,
    /// sqrt(mean(((predicted − measured)/measured)²)).
    pub rms_relative_error: f64,
    /// max |predicted − measured| / measured.
    pub max_relative_error: f64,
    /// 1 − SS_res/SS_tot on cycles (1 when the points are all equal and fitted exactly).
    pub r_squared: f64,
}

/// `cycles_per_message = a + b·Nblk(size)` fitted to a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// The block rule the fit used: predictions must use the same one.
    pub rule: BlockRule,
    /// `a`: fixed cycles per message (call overhead, finalisation, HMAC outer hash, …).
    pub fixed_cycles: f64,
    /// `b`: cycles per block.
    pub cycles_per_block: f64,
    pub quality: FitQuality,
}

/// Why a sweep cannot be fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("cost fit needs at least 2 points, got {0}")]
    TooFewPoints(usize),
    #[error(
        "cost fit needs sizes with at least 2 different block counts (all sizes have Nblk = {0})"
    )]
    OneBlockCount(u64),
    #[error("cycles per message {cycles} at size {size} is not a finite positive number")]
    BadPoint { size: u64, cycles: f64 },
}

impl CostModel {
    /// Weighted least squares of `y = a + b·x`, `x = Nblk(size)`.
    pub fn fit(
        rule: BlockRule,
        points: &[CostPoint],
        weighting: FitWeighting,
    ) -> Result<CostModel, FitError> {
        if points.len() < 2 {
            return Err(FitError::TooFewPoints(points.len()));
        }
        for p in points {
            if !p.cycles_per_message.is_finite() || p.cycles_per_message <= 0.0 {
                return Err(FitError::BadPoint {
                    size: p.size,
                    cycles: p.cycles_per_message,
                });
            }
        }
        let xy: Vec<(f64, f64, f64)> = points
            .iter()
            .map(|p| {
                let y = p.cycles_per_message;
                let w = match weighting {
                    FitWeighting::Relative => 1.0 / (y * y),
                    FitWeighting::Absolute => 1.0,
                };
                (rule.blocks(p.size) as f64, y, w)
            })
            .collect();
        let first_x = xy[0].0;
        if xy.iter().all(|&(x, _, _)| x == first_x) {
            return Err(FitError::OneBlockCount(first_x as u64));
        }
        // Centre on the weighted mean for numerical stability.
        let sw: f64 = xy.iter().map(|t| t.2).sum();
        let mx = xy.iter().map(|t| t.2 * t.0).sum::<f64>() / sw;
        let my = xy.iter().map(|t| t.2 * t.1).sum::<f64>() / sw;
        let sxx: f64 = xy.iter().map(|&(x, _, w)| w * (x - mx) * (x - mx)).sum();
        let sxy: f64 = xy.iter().map(|&(x, y, w)| w * (x - mx) * (y - my)).sum();
        let b = sxy / sxx;
        let a = my - b * mx;

        let residual_rel: Vec<f64> = xy.iter().map(|&(x, y, _)| (a + b * x - y) / y).collect();
        let rms = (residual_rel.iter().map(|r| r * r).sum::<f64>() / xy.len() as f64).sqrt();
        let max = residual_rel.iter().fold(0.0f64, |m, r| m.max(r.abs()));
        let mean_y = xy.iter().map(|t| t.1).sum::<f64>() / xy.len() as f64;
        let ss_tot: f64 = xy.iter().map(|&(_, y, _)| (y - mean_y).powi(2)).sum();
        let ss_res: f64 = xy.iter().map(|&(x, y, _)| (y - a - b * x).powi(2)).sum();
        let r_squared = if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else if ss_res == 0.0 {
            1.0
        } else {
            0.0
        };
        Ok(CostModel {
            rule,
            fixed_cycles: a,
            cycles_per_block: b,
            quality: FitQuality {
                points: xy.len(),
                rms_relative_error: rms,
                max_relative_error: max,
                r_squared,
            },
        })
    }

    /// Predicted cycles for one message of `size` bytes: `a + b·Nblk(size)`.
    pub fn cycles_for_size(&self, size: u64) -> f64 {
        self.fixed_cycles + self.cycles_per_block * self.rule.blocks(size) as f64
    }

    /// Predicted mean cycles per packet under a size model: `a + b·Γ` (Γ under the fit's rule).
    pub fn predict(&self, dist: &SizeDistribution) -> f64 {
        self.fixed_cycles + self.cycles_per_block * dist.gamma(self.rule)
    }

    /// Packets per second one core authenticates under a size model, at `cycles_per_second`.
    pub fn packets_per_second(&self, dist: &SizeDistribution, cycles_per_second: f64) -> f64 {
        cycles_per_second / self.predict(dist)
    }

    /// Forged packets of `size` bytes one core can reject per second: a receiver must compute
    /// the whole MAC before it can discard a forgery (Kivinen's denial-of-service question), so this is
    /// `f / (a + b·Nblk(size))`.
    pub fn rejection_capacity(&self, size: u64, cycles_per_second: f64) -> f64 {
        cycles_per_second / self.cycles_for_size(size)
    }
}

/// [`CostModel::fit`] with the default (relative) weighting, from `(size, cycles_per_message)`.
pub fn fit_cost_model(rule: BlockRule, points: &[(u64, f64)]) -> Result<CostModel, FitError> {
    let points: Vec<CostPoint> = points
        .iter()
        .map(|&(size, cycles_per_message)| CostPoint {
            size,
            cycles_per_message,
        })
        .collect();
    CostModel::fit(rule, &points, FitWeighting::Relative)
}
