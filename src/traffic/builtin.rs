//! The five built-in packet-size models, exactly as docs/methodology.md §6 defines them.
//!
//! Each is built from its definition (a run of equally likely sizes carries its stated mass), not
//! from a table of precomputed probabilities, so the code reads like the spec.

use super::distribution::SizeDistribution;

/// Names accepted by [`builtin`], in the order docs/methodology.md §6 lists them.
pub const BUILTIN_NAMES: &[&str] = &["uniform", "rule-of-thumb", "three-impulse", "caida", "imix"];

/// A name that is not a built-in model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown traffic model `{name}`: built-in models are {}; or give a size,weight .csv file or a .pcap/.pcapng capture",
    BUILTIN_NAMES.join(", ")
)]
pub struct UnknownModel {
    pub name: String,
}

/// A built-in model by name.
pub fn builtin(name: &str) -> Result<SizeDistribution, UnknownModel> {
    let run = SizeDistribution::uniform_run;
    let (provenance, weights): (&str, Vec<(u32, f64)>) = match name {
        "uniform" => (
            "every IP size 40…1500 equally likely (Deepakumara et al., case i, with its density corrected to 1/1461)",
            run(40, 1500, 1.0).collect(),
        ),
        "rule-of-thumb" => (
            "40, 256, 1500 bytes at 1/3 each (Deepakumara et al., case ii)",
            vec![(40, 1.0), (256, 1.0), (1500, 1.0)],
        ),
        "three-impulse" => (
            "40 at 0.5, 576 at 0.3, 1500 at 0.2 (Deepakumara et al., case iii)",
            vec![(40, 0.5), (576, 0.3), (1500, 0.2)],
        ),
        "caida" => (
            "CAIDA-like: 40 at 0.5; 41…551 uniform 0.15; 552 at 0.02; 553…575 uniform 0.005; \
             576 at 0.115; 577…1499 uniform 0.06; 1500 at 0.15 (Deepakumara et al., case iv)",
            std::iter::once((40, 0.5))
                .chain(run(41, 551, 0.15))
                .chain([(552, 0.02)])
                .chain(run(553, 575, 0.005))
                .chain([(576, 0.115)])
                .chain(run(577, 1499, 0.06))
                .chain([(1500, 0.15)])
                .collect(),
        ),
        "imix" => (
            "simple IMIX: 40, 576, 1500 bytes at 7:4:1",
            vec![(40, 7.0), (576, 4.0), (1500, 1.0)],
        ),
        _ => {
            return Err(UnknownModel {
                name: name.to_string(),
            })
        }
    };
    // The weights above are all positive and finite, so this cannot fail; map defensively anyway.
    SizeDistribution::from_weights(name, provenance, weights).map_err(|_| UnknownModel {
        name: name.to_string(),
    })
}

/// All built-in models, in [`BUILTIN_NAMES`] order.
pub fn builtins() -> Vec<SizeDistribution> {
    BUILTIN_NAMES
        .iter()
        .filter_map(|n| builtin(n).ok())
        .collect()
}
