//! The size PDF itself, the Γ sum, and the seeded sampler the engine cycles through.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::mac::BlockRule;

/// A discrete probability distribution over message sizes (bytes).
///
/// Invariants, upheld by every constructor: at least one point; sizes strictly increasing; every
/// probability finite and > 0; probabilities sum to 1 (to rounding).
#[derive(Debug, Clone, PartialEq)]
pub struct SizeDistribution {
    name: String,
    provenance: String,
    points: Vec<(u32, f64)>,
}

/// Why a list of `(size, weight)` pairs is not a distribution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DistributionError {
    #[error("no sizes given: a distribution needs at least one (size, weight) pair")]
    Empty,
    #[error("weight {weight} for size {size} is not a finite number ≥ 0")]
    InvalidWeight { size: u32, weight: f64 },
    #[error("weights sum to 0: at least one weight must be positive")]
    ZeroTotal,
    #[error("weights add up to more than the largest number: scale them down")]
    TotalOverflows,
}

impl SizeDistribution {
    /// Build from unnormalised weights. Equal sizes are merged, zero weights dropped, the rest
    /// normalised to sum to 1.
    pub fn from_weights(
        name: impl Into<String>,
        provenance: impl Into<String>,
        weights: impl IntoIterator<Item = (u32, f64)>,
    ) -> Result<Self, DistributionError> {
        let mut merged = std::collections::BTreeMap::<u32, f64>::new();
        let mut any = false;
        for (size, weight) in weights {
            any = true;
            if !weight.is_finite() || weight < 0.0 {
                return Err(DistributionError::InvalidWeight { size, weight });
            }
            *merged.entry(size).or_insert(0.0) += weight;
        }
        if !any {
            return Err(DistributionError::Empty);
        }
        let total: f64 = merged.values().sum();
        if !total.is_finite() {
            return Err(DistributionError::TotalOverflows);
        }
        if total <= 0.0 {
            return Err(DistributionError::ZeroTotal);
        }
        let points = merged
            .into_iter()
            .filter(|&(_, w)| w > 0.0)
            .map(|(s, w)| (s, w / total))
            .collect();
        Ok(SizeDistribution {
            name: name.into(),
            provenance: provenance.into(),
            points,
        })
    }

    /// Every size in `lo..=hi` equally likely, carrying `mass` in all (used by the built-ins).
    pub(crate) fn uniform_run(lo: u32, hi: u32, mass: f64) -> impl Iterator<Item = (u32, f64)> {
        let each = mass / f64::from(hi - lo + 1);
        (lo..=hi).map(move |s| (s, each))
    }

    /// Short name: a built-in model name, or the file stem of a CSV/capture.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the model comes from (definition, file, packet counts), one line.
    pub fn provenance(&self) -> &str {
        &self.provenance
    }

    /// `(size, probability)`, sizes strictly increasing, probabilities summing to 1.
    pub fn points(&self) -> &[(u32, f64)] {
        &self.points
    }

    /// Number of distinct sizes.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Always false: a distribution has at least one size (kept for clippy's `len_without_is_empty`).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    pub fn min_size(&self) -> u32 {
        self.points.first().map_or(0, |p| p.0)
    }

    pub fn max_size(&self) -> u32 {
        self.points.last().map_or(0, |p| p.0)
    }

    /// Mean size in bytes: `Σ p(i)·i`.
    pub fn mean(&self) -> f64 {
        self.points.iter().map(|&(s, p)| p * f64::from(s)).sum()
    }

    /// Average blocks per packet, `Γ = Σ p(i)·Nblk(i)` (Deepakumara et al., eq. 4.1, docs/methodology.md §6).
    pub fn gamma(&self, rule: BlockRule) -> f64 {
        self.points
            .iter()
            .map(|&(s, p)| p * rule.blocks(u64::from(s)) as f64)
            .sum()
    }

    /// A reproducible sequence of `len` sizes drawn from this distribution.
    ///
    /// The engine pre-generates this and cycles through it, so drawing costs nothing inside the
    /// timed loop. The generator is ChaCha8 (a named algorithm, unlike `StdRng`, so one seed gives
    /// the same sequence in every macbench build); draws use Vose's alias method, O(1) each.
    pub fn sample_sequence(&self, seed: u64, len: usize) -> Vec<u32> {
        let sampler = AliasSampler::new(self);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..len).map(|_| sampler.sample(&mut rng)).collect()
    }
}

/// Vose's alias table: one uniform column pick plus one biased coin per draw.
#[derive(Debug, Clone)]
pub struct AliasSampler {
    sizes: Vec<u32>,
    /// Probability of keeping column `k` rather than taking its alias.
    keep: Vec<f64>,
    alias: Vec<usize>,
}

impl AliasSampler {
    pub fn new(dist: &SizeDistribution) -> Self {
        let n = dist.points.len();
        let sizes: Vec<u32> = dist.points.iter().map(|p| p.0).collect();
        let mut scaled: Vec<f64> = dist.points.iter().map(|p| p.1 * n as f64).collect();
        let mut keep = vec![1.0; n];
        let mut alias: Vec<usize> = (0..n).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&k| scaled[k] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            keep[s] = scaled[s];
            alias[s] = l;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Whatever is left is 1 up to rounding: always keep it.
        for k in small.into_iter().chain(large) {
            keep[k] = 1.0;
        }
        AliasSampler { sizes, keep, alias }
    }

    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        let column = rng.random_range(0..self.sizes.len());
        if rng.random::<f64>() < self.keep[column] {
            self.sizes[column]
        } else {
            self.sizes[self.alias[column]]
        }
    }
}
