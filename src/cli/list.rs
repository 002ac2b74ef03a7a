//! `macbench list` and `macbench selftest`.

use super::CliError;
use crate::host::Host;
use crate::mac::listing::ListRow;
use crate::mac::{self, vectors, Availability};
use crate::report::listing;
use crate::table::{Style, Table};
use serde::Serialize;

#[derive(Debug, Default, clap::Args)]
pub struct ListArgs {
    /// Write JSON instead of the table: to FILE, or to standard output with no value or `-`.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<std::path::PathBuf>,
    /// Every algorithm × backend × acceleration as its own row, unavailable ones too (the default is
    /// what runs here, one line per algorithm, and why the rest does not, once per reason).
    #[arg(long)]
    pub all: bool,
    /// Only these algorithms (comma-separated; presets `all`, `paper`).
    #[arg(long)]
    pub alg: Option<String>,
    /// Only this backend.
    #[arg(long)]
    pub backend: Option<String>,
}

#[derive(Debug, Default, clap::Args)]
pub struct SelftestArgs {
    /// Only these algorithms (comma-separated; presets `all`, `paper`).
    #[arg(long)]
    pub alg: Option<String>,
    /// Only this backend.
    #[arg(long)]
    pub backend: Option<String>,
    /// Write JSON instead of the table: to FILE, or to standard output with no value or `-`.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<std::path::PathBuf>,
}

#[derive(Debug, Serialize)]
struct ListOutput {
    host: Host,
    /// The reference rate, time base and cycle counters, as a run would record them.
    clock: crate::system::clock::ClockInfo,
    functions: Vec<ListRow>,
}

/// `--json`, checked and locked before the self-tests run (an unwritable path was refused only after
/// seconds of them): the guard to hold until [`write_json`].
fn prepare_json(
    path: Option<&std::path::Path>,
) -> Result<Option<crate::report::output::Prepared>, CliError> {
    path.map(|p| super::files::prepare(&[("--json", p)], &[]))
        .transpose()
}

/// `--json`: standard output for `-`, else a file written by the output rules (atomic for regular
/// files, written through for devices, never an input).
fn write_json<T: Serialize>(path: &std::path::Path, value: &T) -> Result<(), CliError> {
    let bytes = crate::stdio::pretty_json(value).map_err(CliError::failure)?;
    crate::report::write_atomic(path, &bytes).map_err(CliError::failure)
}

pub fn list(args: &ListArgs) -> Result<(), CliError> {
    let _locked = prepare_json(args.json.as_deref())?;
    // The look-aside device starts first, so the facts name its driver (or say why it did not start).
    let _ = crate::mac::dpdk::start();
    let host = crate::isolate::with_children(
        crate::isolate::detect_host(),
        &crate::isolate::switched_accels(),
    );
    let clock = crate::system::clock::clock_info();
    let only = crate::spec::selection(args.alg.as_deref(), args.backend.as_deref())?;
    let rows = only.rows(crate::isolate::key);
    if let Some(path) = &args.json {
        let out = ListOutput {
            host,
            clock,
            functions: rows,
        };
        return write_json(path, &out);
    }
    crate::out!("{}", listing::host(&host, &clock));
    crate::out!("{}", crate::energy::meter_lines());
    crate::outln!();
    // On a terminal, the ISA-level rows of backends that offer no levels (four per algorithm each,
    // all saying the same) become one line per reason below the table; `--json` keeps every row.
    let (not_offered, shown): (Vec<ListRow>, Vec<ListRow>) =
        rows.into_iter().partition(|r| r.level_not_offered);
    if args.all {
        crate::out!("{}", listing::rows(&shown));
        crate::out!("{}", listing::levels_not_offered(&not_offered));
    } else {
        crate::out!("{}", listing::grouped(&shown));
        crate::out!("{}", listing::levels_not_offered(&not_offered));
    }
    crate::out!("{}", listing::length_limits(&shown));
    crate::out!("{}", listing::key_limits(&shown));
    let caveats: Vec<_> = mac::ALGORITHMS
        .iter()
        .filter_map(|a| a.caveat.map(|c| (a.name, c)))
        .collect();
    // What the switches themselves want said (levels that run the same code as hw).
    let switch_notes: Vec<&str> = mac::BACKENDS
        .iter()
        .filter_map(|b| b.process_switch.and_then(|s| s.note))
        .collect();
    if !caveats.is_empty() || !switch_notes.is_empty() {
        crate::outln!();
        for (name, caveat) in caveats {
            crate::outln!("note: {name}: {caveat}");
        }
        for note in switch_notes {
            crate::outln!("note: {note}");
        }
    }
    Ok(())
}

pub fn selftest(args: &SelftestArgs) -> Result<(), CliError> {
    let only = crate::spec::selection(args.alg.as_deref(), args.backend.as_deref())?;
    let _locked = prepare_json(args.json.as_deref())?;
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for f in mac::functions() {
        if !only.wants(f.algorithm.name, f.backend.name) {
            continue;
        }
        match f.availability() {
            Availability::Available => results.push(vectors::self_test(&f, crate::isolate::key)),
            Availability::Unavailable(why) => skipped.push((f.id(), why, f.is_level_not_offered())),
        }
    }
    if results.is_empty() {
        return Err(CliError::usage(
            "no available function matches --alg/--backend",
        ));
    }
    let failed = results.iter().filter(|r| !r.ok()).count();
    if let Some(path) = &args.json {
        write_json(path, &results)?;
    } else {
        let mut rows: Vec<Vec<String>> = results
            .iter()
            .map(|r| {
                let chunked = if r.chunked {
                    // `tag_chunks`, not `--dispatch stream` (docs/benchmark.md "Streaming").
                    ", fed in pieces"
                } else {
                    ""
                };
                vec![r.function.clone(), format!("{}{chunked}", r.status())]
            })
            .collect();
        // Levels a backend does not offer at all are counted, not listed (four rows per algorithm).
        let (levels, others): (Vec<_>, Vec<_>) =
            skipped.iter().partition(|(_, _, not_offered)| *not_offered);
        rows.extend(
            others
                .iter()
                .map(|(id, why, _)| vec![id.clone(), format!("unavailable: {why}")]),
        );
        if !levels.is_empty() {
            rows.push(vec![
                format!("{} ISA-level rows", levels.len()),
                "not offered by their backends (`macbench list`)".to_string(),
            ]);
        }
        let table = Table::new(Style::detect())
            .left("function")
            .left("self-test");
        crate::out!("{}", table.render(&rows));
        // What failed, vector by vector, below the table (indented: not rows of it); with -v every
        // vector checked and every one the library does not take, per function.
        for r in &results {
            if super::verbose() {
                for line in &r.checked {
                    crate::outln!("    {}: {line}", r.function);
                }
                for line in &r.not_taken {
                    crate::outln!("    {}: not run: {line}", r.function);
                }
            }
            for f in &r.failures {
                crate::outln!("    {}: {f}", r.function);
            }
        }
        let vectors: usize = results.iter().map(|r| r.vectors).sum();
        crate::outln!("{} passed, {} failed", results.len() - failed, failed);
        crate::outln!("({vectors} vectors over {} functions)", results.len());
    }
    if failed > 0 {
        return Err(CliError::failure(format!(
            "{failed} function(s) failed their known-answer tests"
        )));
    }
    Ok(())
}
