//! Deepakumara, Heys and Venkatesan, "Performance comparison of message authentication code (MAC)
//! algorithms for the Internet Protocol Security (IPSEC)", reproduced on this machine: its Γ tables
//! (average blocks per packet under four packet-size models), its cost model (a fixed cost per packet
//! plus a cost per block, so a model's mean cost is `a + b·Γ`), and its comparison of HMAC-SHA-1 with
//! CBC-MAC-AES in software (its Table 2) and with hardware (Table 1, an FPGA; here the CPU's AES and
//! SHA instructions).
//!
//! The plan: HMAC-SHA-1, HMAC-SHA-256, CBC-MAC-AES128 and CMAC-AES128, hardware-assisted and software
//! only, one session on one core; a size sweep over the paper's packet sizes (40 … 1500 B, its impulses
//! among them) to fit `a + b·Nblk`, and each of the paper's four models measured directly (sizes drawn
//! from the model) to check the prediction.

use super::{num, Claim, Evidence, PaperFigure, Plot, Point, Step, StepRun, Study, Table, Verdict};
use crate::mac::Accel;
use crate::results::{ResultEntry, SizeLabel};
use crate::traffic::paper::{gamma_rows, CASES};
use crate::traffic::{builtin, CostModel, CostPoint, FitWeighting};

/// The functions of the plan, in its `--alg` order.
const FUNCTIONS: &[&str] = &["hmac-sha1", "hmac-sha256", "cbcmac-aes128", "cmac-aes128"];
/// [`FUNCTIONS`] as both steps' `--alg` (a test checks they agree).
const ALGS: &str = "hmac-sha1,hmac-sha256,cbcmac-aes128,cmac-aes128";
const LEVELS: &[&str] = &["hw", "sw"];
const SWEEP: &str = "sweep";
const MODELS: &str = "models";

pub static STUDY: Study = Study {
    id: "deepakumara-ipsec",
    title: "Performance comparison of message authentication code (MAC) algorithms for the Internet Protocol Security (IPSEC)",
    authors: "Deepakumara, Heys, Venkatesan",
    default_budget_s: 300.0,
    steps: &[
        Step {
            name: SWEEP,
            what: "four MACs hw and sw, one session on one core, the paper's sizes 40 … 1500 B (for the a + b·Nblk fit)",
            run: StepRun {
                alg: ALGS,
                accel: &[Accel::Hw, Accel::Sw],
                sizes: "40,64,128,256,552,576,1024,1500",
                ..StepRun::ONE_SESSION
            },
            share: 0.6,
            max_cycles_per_byte: 15.0,
        },
        Step {
            name: MODELS,
            what: "the same, with sizes drawn from the paper's four models (uniform, rule-of-thumb, three-impulse, CAIDA)",
            run: StepRun {
                alg: ALGS,
                accel: &[Accel::Hw, Accel::Sw],
                sizes: "uniform,rule-of-thumb,three-impulse,caida",
                ..StepRun::ONE_SESSION
            },
            share: 0.4,
            max_cycles_per_byte: 15.0,
        },
    ],
    claims: &[
        Claim {
            id: "gamma-as-printed",
            text: "The paper's Γ (average blocks per packet, HMAC and AES, four models) are the models' true averages, within a relative tol (arithmetic: the same on every machine)",
            tolerance: 0.002,
            check: gamma_as_printed,
        },
        Claim {
            id: "linear-cost",
            text: "A MAC's cost per packet is a fixed cost plus a cost per block: the fit a + b·Nblk over the size sweep has an rms relative error of at most tol, for every function hw and sw",
            tolerance: 0.05,
            check: linear_cost,
        },
        Claim {
            id: "prediction-matches",
            text: "A packet-size model's mean cost per packet is a + b·Γ: the prediction is within a relative tol of the cost measured with sizes drawn from the model, for every function and model",
            tolerance: 0.1,
            check: prediction_matches,
        },
        Claim {
            id: "hmac-three-extra-compressions",
            text: "HMAC costs Γ + 3 compressions per packet (eq. 4.2, both key pads hashed for every packet): HMAC-SHA-1's fixed cost a, less the harness's own cost per message, is 3 ± tol blocks' worth; implementations that keep the padded key states cost about Γ + 1",
            tolerance: 0.5,
            check: hmac_three_extra_compressions,
        },
        Claim {
            id: "cost-follows-gamma",
            text: "The models cost per packet in the order of their Γ (uniform > rule-of-thumb > three-impulse > CAIDA) for every function, measured directly (tol: the relative margin each step must clear)",
            tolerance: 0.0,
            check: cost_follows_gamma,
        },
        Claim {
            id: "cbcmac-dearer-in-software",
            text: "In software, CBC-MAC-AES costs more per packet than HMAC-SHA-1 under models ii–iv (Table 2), by more than a relative tol",
            tolerance: 0.0,
            check: cbcmac_dearer_in_software,
        },
        Claim {
            id: "cbcmac-cheaper-with-hardware",
            text: "With hardware assistance (the paper: an FPGA; here AES and SHA instructions), CBC-MAC-AES costs less per packet than HMAC-SHA-1 under all four models (Table 1), by more than a relative tol",
            tolerance: 0.0,
            check: cbcmac_cheaper_with_hardware,
        },
    ],
    figures: &[
        PaperFigure {
            id: "gamma",
            paper: "§4, eq. 4.1",
            title: "Average blocks per packet (Γ) of HMAC and AES under the four packet-size models, as printed and as the models give them",
            plot: Plot::Table {
                steps: &[],
                build: gamma_table,
            },
            decides: &["gamma-as-printed"],
            differs: "",
        },
        PaperFigure {
            id: "table1-hardware",
            paper: "Table 1",
            title: "HMAC-SHA-1 and CBC-MAC-AES per packet under the four models, with hardware",
            plot: Plot::Table {
                steps: &[MODELS],
                build: table1_hardware,
            },
            decides: &["cbcmac-cheaper-with-hardware", "cost-follows-gamma"],
            differs: COST_TABLES_DIFFER,
        },
        PaperFigure {
            id: "table2-software",
            paper: "Table 2",
            title: "HMAC-SHA-1 and CBC-MAC-AES per packet under the four models, in software",
            plot: Plot::Table {
                steps: &[MODELS],
                build: table2_software,
            },
            decides: &["cbcmac-dearer-in-software", "cost-follows-gamma"],
            differs: COST_TABLES_DIFFER,
        },
    ],
};

/// How the cost tables differ from the paper's.
const COST_TABLES_DIFFER: &str = "The paper computed µs per packet from Γ and a time per block (Table 1: an FPGA; Table 2: a 927 MHz Pentium II); here cycles per packet measured with sizes drawn from each model (Table 1: the CPU's AES and SHA instructions; Table 2: software only), Γ as the models give it.";

/// The four models in the paper's order, with its case numbers.
fn models() -> impl Iterator<Item = (&'static str, &'static str)> {
    CASES.iter().map(|c| (c.case, c.model))
}

/// The result of `algorithm` at `accel` with sizes drawn from `model`.
fn model_result<'e>(
    e: &'e Evidence,
    algorithm: &str,
    accel: &str,
    model: &str,
) -> Option<&'e ResultEntry> {
    e.find_point(
        MODELS,
        &Point::new(algorithm, accel, SizeLabel::Model(model.to_string())),
    )
}

/// Measured absolute cycles per packet under `model`.
fn measured(e: &Evidence, algorithm: &str, accel: &str, model: &str) -> Option<f64> {
    model_result(e, algorithm, accel, model)?
        .metrics
        .absolute_cycles_per_message
}

/// The cost fit `a + b·Nblk` of `algorithm` at `accel` over the sweep's fixed sizes.
fn fit(e: &Evidence, algorithm: &str, accel: &str) -> Option<CostModel> {
    let rule = crate::mac::algorithm(algorithm)?.block_rule;
    let points: Vec<CostPoint> = e
        .results(SWEEP)
        .into_iter()
        .filter(|r| r.algorithm == algorithm && r.accel == accel)
        .filter_map(|r| {
            Some(CostPoint {
                size: r.size.bytes()?,
                cycles_per_message: r.metrics.absolute_cycles_per_message?,
            })
        })
        .collect();
    CostModel::fit(rule, &points, FitWeighting::Relative).ok()
}

/// Every function × level of the plan that has a fit: its label and the fit.
fn fits(e: &Evidence) -> Vec<(String, CostModel)> {
    FUNCTIONS
        .iter()
        .flat_map(|a| LEVELS.iter().map(move |l| (*a, *l)))
        .filter_map(|(a, l)| Some((format!("{a}/{l}"), fit(e, a, l)?)))
        .collect()
}

fn gamma_as_printed(_: &Evidence, tol: f64) -> Verdict {
    let mut off = Vec::new();
    for row in gamma_rows() {
        for (what, printed, correct) in [
            ("HMAC", row.hmac_printed, row.hmac_correct),
            ("AES", row.aes_printed, row.aes_correct),
        ] {
            if ((printed - correct) / correct).abs() > tol {
                off.push(format!(
                    "case {} ({}) {what}: printed {}, true {:.3}",
                    row.case, row.model, printed, correct
                ));
            }
        }
    }
    let detail = if off.is_empty() {
        "all eight printed Γ are the models' averages".to_string()
    } else {
        format!(
            "{}; the paper's uniform density 0.5/1460 sums to 0.5, and it counts 17 and 37 AES blocks for 256 B and 576 B (16 and 36 are right)",
            off.join("; ")
        )
    };
    Verdict::from(off.is_empty(), detail)
}

fn linear_cost(e: &Evidence, tol: f64) -> Verdict {
    let fits = fits(e);
    if fits.is_empty() {
        return e.missing(SWEEP);
    }
    let worst = fits
        .iter()
        .max_by(|a, b| {
            a.1.quality
                .rms_relative_error
                .total_cmp(&b.1.quality.rms_relative_error)
        })
        .expect("fits is not empty");
    let each: Vec<String> = fits
        .iter()
        .map(|(l, m)| {
            format!(
                "{l} a = {} + b = {}/block",
                num(m.fixed_cycles),
                num(m.cycles_per_block)
            )
        })
        .collect();
    Verdict::from(
        worst.1.quality.rms_relative_error <= tol,
        format!(
            "worst rms relative error {:.1} % ({}) over {} fits; cycles: {}",
            worst.1.quality.rms_relative_error * 100.0,
            worst.0,
            fits.len(),
            each.join(", ")
        ),
    )
}

fn prediction_matches(e: &Evidence, tol: f64) -> Verdict {
    let mut differences: Vec<(String, f64)> = Vec::new();
    for (label, cost) in fits(e) {
        let (algorithm, accel) = label.split_once('/').expect("label is algorithm/level");
        for (case, model) in models() {
            let (Some(m), Ok(dist)) = (measured(e, algorithm, accel, model), builtin(model)) else {
                continue;
            };
            differences.push((format!("{label} {case}"), (cost.predict(&dist) - m) / m));
        }
    }
    if differences.is_empty() {
        return if e.results(SWEEP).is_empty() {
            e.missing(SWEEP)
        } else {
            e.missing(MODELS)
        };
    }
    let (worst, d) = differences
        .iter()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .expect("differences is not empty");
    let median = crate::metrics::median(
        &differences
            .iter()
            .map(|(_, d)| d.abs())
            .collect::<Vec<f64>>(),
    )
    .unwrap_or(f64::NAN);
    Verdict::from(
        d.abs() <= tol,
        format!(
            "(predicted − measured) ÷ measured over {} function × model pairs: median |{:.1} %|, worst {:+.1} % ({worst})",
            differences.len(),
            median * 100.0,
            d * 100.0
        ),
    )
}

fn hmac_three_extra_compressions(e: &Evidence, tol: f64) -> Verdict {
    // The paper's model counts the MAC's work only: take the harness's own cost per message (the
    // null function, measured with the sweep) out of the fixed cost before counting compressions.
    let harness = e
        .steps
        .get(SWEEP)
        .and_then(|d| d.harness.as_ref())
        .and_then(|h| h.absolute_cycles_per_message)
        .unwrap_or(0.0);
    let ratios: Vec<(String, f64)> = LEVELS
        .iter()
        .filter_map(|l| {
            let m = fit(e, "hmac-sha1", l)?;
            Some((
                format!("hmac-sha1/{l}"),
                (m.fixed_cycles - harness) / m.cycles_per_block,
            ))
        })
        .collect();
    e.judge_ratios(
        SWEEP,
        &ratios,
        |r| (r - 3.0).abs() <= tol,
        &format!(
            "(fixed cost a − the harness's {} cycles/message) ÷ cost per block b",
            num(harness)
        ),
        " blocks",
    )
}

fn cost_follows_gamma(e: &Evidence, tol: f64) -> Verdict {
    // Largest Γ first: uniform, rule-of-thumb, three-impulse, CAIDA.
    let order = ["uniform", "rule-of-thumb", "three-impulse", "caida"];
    let mut checked = 0;
    let mut out_of_order = Vec::new();
    for a in FUNCTIONS {
        for l in LEVELS {
            let costs: Option<Vec<f64>> = order.iter().map(|m| measured(e, a, l, m)).collect();
            let Some(costs) = costs else { continue };
            checked += 1;
            if costs.windows(2).any(|w| w[0] <= w[1] * (1.0 + tol)) {
                let shown: Vec<String> = costs.iter().map(|c| num(*c)).collect();
                out_of_order.push(format!("{a}/{l} {}", shown.join(" > ")));
            }
        }
    }
    if checked == 0 {
        return e.missing(MODELS);
    }
    let detail = if out_of_order.is_empty() {
        format!("in Γ order for all {checked} function × level pairs")
    } else {
        format!(
            "out of Γ order (cycles/packet, uniform … CAIDA): {}",
            out_of_order.join("; ")
        )
    };
    Verdict::from(out_of_order.is_empty(), detail)
}

/// CBC-MAC-AES ÷ HMAC-SHA-1 cycles per packet at `accel` under each of `cases`' models.
fn cbcmac_over_hmac(
    e: &Evidence,
    accel: &str,
    cases: &[&str],
) -> Result<Vec<(&'static str, f64)>, Verdict> {
    let ratios: Vec<(&'static str, f64)> = models()
        .filter(|(case, _)| cases.contains(case))
        .filter_map(|(case, model)| {
            Some((
                case,
                measured(e, "cbcmac-aes128", accel, model)?
                    / measured(e, "hmac-sha1", accel, model)?,
            ))
        })
        .collect();
    if ratios.len() < cases.len() {
        return Err(Verdict::CannotTest(format!(
            "CBC-MAC-AES128 and HMAC-SHA-1 ({accel}) were not both measured under models {}",
            cases.join(", ")
        )));
    }
    Ok(ratios)
}

fn ratio_detail(accel: &str, ratios: &[(&str, f64)]) -> String {
    let each: Vec<String> = ratios
        .iter()
        .map(|(case, r)| format!("{case} {}×", num(*r)))
        .collect();
    format!(
        "CBC-MAC-AES128 ÷ HMAC-SHA-1 cycles/packet ({accel}), by model: {}",
        each.join(", ")
    )
}

fn cbcmac_dearer_in_software(e: &Evidence, tol: f64) -> Verdict {
    match cbcmac_over_hmac(e, "sw", &["ii", "iii", "iv"]) {
        Ok(r) => Verdict::from(
            r.iter().all(|(_, x)| *x > 1.0 + tol),
            ratio_detail("sw", &r),
        ),
        Err(v) => v,
    }
}

fn cbcmac_cheaper_with_hardware(e: &Evidence, tol: f64) -> Verdict {
    match cbcmac_over_hmac(e, "hw", &["i", "ii", "iii", "iv"]) {
        Ok(r) => Verdict::from(
            r.iter().all(|(_, x)| *x < 1.0 - tol),
            ratio_detail("hw", &r),
        ),
        Err(v) => v,
    }
}

/// The Γ table: each model's Γ for HMAC (SHA-1's 64-byte blocks) and AES, printed and true.
fn gamma_table(_: &Evidence) -> Result<Table, String> {
    let head = [
        "case",
        "model",
        "HMAC Γ printed",
        "HMAC Γ true",
        "AES Γ printed",
        "AES Γ true",
    ];
    Ok(Table {
        head: head.iter().map(|h| h.to_string()).collect(),
        rows: gamma_rows()
            .iter()
            .map(|r| {
                vec![
                    r.case.to_string(),
                    r.model.to_string(),
                    num(r.hmac_printed),
                    format!("{:.3}", r.hmac_correct),
                    num(r.aes_printed),
                    format!("{:.3}", r.aes_correct),
                ]
            })
            .collect(),
    })
}

fn table1_hardware(e: &Evidence) -> Result<Table, String> {
    cost_table(e, "hw", |c| c.fpga_printed_us)
}

fn table2_software(e: &Evidence) -> Result<Table, String> {
    cost_table(e, "sw", |c| c.software_printed_us)
}

/// Table 1 or 2 as the paper lays it out — a row per function, Γ and the cost per packet under each
/// case — with the paper's printed rows (µs) above this machine's (cycles per packet at `accel`).
fn cost_table(
    e: &Evidence,
    accel: &str,
    printed: fn(&crate::traffic::paper::PaperCase) -> (f64, f64),
) -> Result<Table, String> {
    let mut head = vec!["function".to_string()];
    for c in &CASES {
        head.push(format!("Γ ({}) {}", c.case, c.model));
        head.push(format!("cost ({})", c.case));
    }
    let mut rows = Vec::new();
    for (label, pick) in [
        ("HMAC-SHA-1, paper (µs)", 0),
        ("CBC-MAC-AES, paper (µs)", 1),
    ] {
        let mut row = vec![label.to_string()];
        for c in &CASES {
            let (gamma, us) = if pick == 0 {
                (c.hmac_gamma_printed, printed(c).0)
            } else {
                (c.aes_gamma_printed, printed(c).1)
            };
            row.extend([num(gamma), num(us)]);
        }
        rows.push(row);
    }
    for algorithm in ["hmac-sha1", "cbcmac-aes128"] {
        let rule = crate::mac::algorithm(algorithm)
            .ok_or_else(|| format!("{algorithm} is not in this build"))?
            .block_rule;
        let mut row = vec![format!("{algorithm}/{accel}, here (cycles/packet)")];
        let mut measured_any = false;
        for c in &CASES {
            let gamma = builtin(c.model).map(|d| d.gamma(rule)).ok();
            let cost = measured(e, algorithm, accel, c.model);
            measured_any |= cost.is_some();
            row.push(gamma.map_or("-".to_string(), num));
            row.push(cost.map_or("-".to_string(), num));
        }
        if !measured_any {
            return Err(e.missing(MODELS).detail().to_string()
                + &format!(" ({algorithm} at {accel} under no model)"));
        }
        rows.push(row);
    }
    Ok(Table { head, rows })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_steps_run_the_functions_the_claims_read() {
        assert_eq!(super::ALGS, super::FUNCTIONS.join(","));
    }
}
