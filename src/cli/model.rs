//! `macbench model`: packet-size models and per-packet cost (docs/methodology.md §6, seeds 001 and 002).
//!
//! Three layers, each usable alone: the analytic table (mean size, Γ, compressions or block encryptions
//! per packet); the cost fit `a + b·Nblk` from a measured size sweep (a results JSON, or `--measure` to run
//! one); and the check of the prediction `a + b·Γ` against a direct measurement with sizes drawn from
//! the model.

use super::CliError;
use crate::mac;
use crate::results::Document;
use crate::spec::resolve_algorithms;
use crate::table::Style;
use crate::traffic::{self, SizeDistribution};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ModelArgs {
    /// Size models: built-in names (uniform, rule-of-thumb, three-impulse, caida, imix), `all`,
    /// a CSV of size,weight, or a pcap/pcapng capture; or fixed sizes as `run --sizes` takes them
    /// (`64`, `64,1500`, `16..1024`, `default`), each a model of one size (`--models`, the old name,
    /// still works).
    #[arg(
        long = "sizes",
        alias = "models",
        value_name = "SIZES",
        default_value = "all",
        allow_hyphen_values = true
    )]
    pub models: String,
    /// Algorithms for the analytic table (comma-separated; presets paper, all).
    #[arg(
        long,
        default_value = "hmac-md5,hmac-sha1,hmac-sha256,hmac-sha512,cmac-aes128,cbcmac-aes128"
    )]
    pub alg: String,
    /// Fit the cost model to these results files (from `macbench run` with a size sweep).
    #[arg(long, num_args = 1..)]
    pub results: Vec<PathBuf>,
    /// Measure a size sweep and each model directly (one pinned session per function), then fit and compare.
    #[arg(long)]
    pub measure: bool,
    /// Backend for --measure (default: the first available per algorithm).
    #[arg(long)]
    pub backend: Option<String>,
    /// The CPU --measure pins its session to [default: 0] (`--core`, the old name, still works).
    #[arg(
        long = "cores",
        alias = "core",
        value_name = "CORES",
        allow_hyphen_values = true
    )]
    pub core: Option<String>,
    /// Duration of each --measure run [default: 200ms].
    #[arg(long, allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// Message size at which to report the rejection capacity (forged packets/s one core can discard)
    /// of each fit (with --results or --measure) [default: 64].
    #[arg(long, allow_hyphen_values = true)]
    pub reject_size: Option<String>,
    /// Write the tables as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the prediction rows as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Reproduce Deepakumara et al.'s analysis (Γ as printed and as correct, its errata, Tables 1 and 2);
    /// takes no other flag.
    #[arg(
        long,
        conflicts_with_all = [
            "models", "alg", "results", "measure", "backend", "core", "duration", "reject_size",
            "json", "csv"
        ]
    )]
    pub paper: bool,
}

/// Refuse a flag this invocation would ignore, naming what it goes with (it used to be ignored in
/// silence). `--paper` takes no other flag (clap's `conflicts_with_all`).
fn refuse_unused(args: &ModelArgs) -> Result<(), CliError> {
    if !args.measure {
        let given = [
            ("--backend", args.backend.is_some()),
            ("--cores", args.core.is_some()),
            ("--duration", args.duration.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
            return Err(CliError::usage(format!(
                "{flag} is used only with --measure (it sets up the measured runs); add --measure or leave {flag} out"
            )));
        }
    }
    if args.reject_size.is_some() && !args.measure && args.results.is_empty() {
        return Err(CliError::usage(
            "--reject-size is used only with --results or --measure (it sizes each fit's rejection capacity); add one or leave --reject-size out",
        ));
    }
    Ok(())
}

/// `--reject-size`: a message size in bytes (default 64).
fn reject_size(args: &ModelArgs) -> Result<u32, CliError> {
    let Some(text) = &args.reject_size else {
        return Ok(64);
    };
    let size = crate::spec::parse_whole::<u32>(text)
        .map_err(|e| CliError::usage(format!("--reject-size: {e} (a message size in bytes)")))?;
    // A forged packet has something to authenticate: at 0 bytes the "capacity" is the fit's
    // intercept alone, a packet no receiver gets (issue 47 N6).
    if size == 0 {
        return Err(CliError::usage(
            "--reject-size 0: a forged packet carries at least 1 byte; give its size in bytes, 1 or more (default 64)",
        ));
    }
    Ok(size)
}

/// What `--measure` runs, every flag checked before anything is printed.
struct MeasurePlan {
    functions: Vec<mac::Function>,
    duration: std::time::Duration,
    core: usize,
}

fn measure_plan(args: &ModelArgs) -> Result<MeasurePlan, CliError> {
    Ok(MeasurePlan {
        functions: super::functions(&args.alg, args.backend.as_deref(), &[crate::mac::Accel::Hw])?,
        duration: super::run::parse_duration(
            "--duration",
            args.duration.as_deref().unwrap_or("200ms"),
        )?,
        core: crate::spec::parse_one_cpu(
            "--cores",
            args.core.as_deref().unwrap_or("0"),
            &crate::host::online_cpus(),
        )?,
    })
}

/// Run the sweep and the model runs for `--measure`, one pinned session per function.
fn measure(plan: MeasurePlan, models: &[SizeDistribution]) -> Result<Document, CliError> {
    let runs = plan.functions.len() * (crate::spec::DEFAULT_SIZES.len() + models.len());
    crate::errln!(
        "macbench: measuring {} function(s) × {} sizes/models, 1 session on CPU {}, 3 repeats of {:.3} s: {}",
        plan.functions.len(),
        runs / plan.functions.len().max(1),
        plan.core,
        plan.duration.as_secs_f64(),
        super::human_duration((runs * 3) as f64 * plan.duration.as_secs_f64())
    );
    let progress = super::progress_bar(runs);
    let doc = crate::session::measure_cost_sweep(
        &plan.functions,
        models,
        plan.core,
        plan.duration,
        || {
            if let Some(pb) = &progress {
                pb.inc(1);
            }
        },
    )?;
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    Ok(doc)
}

pub fn model(args: &ModelArgs) -> Result<(), CliError> {
    if args.paper {
        crate::out!("{}", traffic::paper_report());
        return Ok(());
    }
    refuse_unused(args)?;
    let reject_size = reject_size(args)?;
    let models = crate::spec::parse_models(&args.models)?;
    let names = resolve_algorithms(&args.alg)?;
    let algorithms: Vec<&mac::Algorithm> = names.iter().filter_map(|n| mac::algorithm(n)).collect();
    let docs: Vec<Document> = super::report::load_all(&args.results)?
        .into_iter()
        .map(|l| l.doc)
        .collect();
    let inputs: Vec<(&str, &std::path::Path)> = args
        .results
        .iter()
        .map(|p| ("--results", p.as_path()))
        .collect();
    let outputs = super::files::run_outputs(args.json.as_deref(), args.csv.as_deref(), false);
    let _locked = super::files::prepare_owned(&outputs, &inputs)?;
    let plan = args.measure.then(|| measure_plan(args)).transpose()?;

    let rows = traffic::model_rows(&models, &algorithms);
    crate::out!("{}", traffic::fit::models_text(&rows, Style::detect()));

    let mut fits = Vec::new();
    let mut predictions = Vec::new();
    let mut measured_docs = docs;
    if let Some(plan) = plan {
        measured_docs.push(measure(plan, &models)?);
    }
    for doc in &measured_docs {
        traffic::fit::analyse(doc, &models, reject_size, &mut fits, &mut predictions);
    }
    if !fits.is_empty() {
        crate::out!(
            "{}",
            traffic::fit::fits_text(&fits, &predictions, reject_size, Style::detect())
        );
    }
    // Results given (or measured) and nothing fitted is a failure of what was asked, not exit 0
    // (issue 47 N10); the Γ table printed and written is still right, so it is kept.
    let nothing_fitted = fits.is_empty() && !measured_docs.is_empty();

    let output = traffic::fit::ModelReport {
        tool: traffic::fit::MODEL_TOOL,
        kind: traffic::fit::MODEL_KIND,
        models: rows,
        fits,
        predictions,
    };
    crate::session::write_model_report(&output, args.json.as_deref(), args.csv.as_deref())?;
    if nothing_fitted {
        return Err(CliError::failure(
            "no function in the results has a size sweep to fit (need ≥ 2 fixed sizes with different block counts): nothing fitted",
        ));
    }
    Ok(())
}
