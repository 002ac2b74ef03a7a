//! `macbench report`: results JSON files → one self-contained HTML page (and PNGs with `--png`).

use super::CliError;
use crate::report::{self, html, plots, read};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// Results files written by `macbench run --json`, or directories of them (one per host: `run -o`,
    /// `reproduce -o`, whose claims tables are then shown side by side), or quoted globs (`'out/*/'`).
    /// One series per file; with several hosts, each named by its label.
    #[arg(required = true, value_name = "RESULTS.json|DIR")]
    pub files: Vec<PathBuf>,
    /// Write the HTML report here (`-`: standard output).
    #[arg(short, long, default_value = "report.html")]
    pub output: PathBuf,
    /// Scenario of the per-thread figures, ALG/BACKEND/ACCEL@SIZE, then /DISPATCH and /tag:N when the
    /// run had them (`hmac-sha256/ipsecmb/hw@64/burst:16`; default: most sessions, largest size).
    #[arg(long, value_name = "ALG/BACKEND/ACCEL@SIZE")]
    pub scenario: Option<String>,
    /// Also write every figure as a PNG into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    /// The PNGs already in `--png` are this command's own and may be replaced: a reproduction's
    /// `figures/`, which `--resume` rewrites. Never set from the command line.
    #[arg(skip)]
    pub replaces_own_figures: bool,
}

/// Read every file, with the one-line error of the first bad one (exit 2: bad input). Each is labelled
/// by its file stem; with files from several hosts, by the host's label (and the stem when a host has
/// several files), so a fleet's legends and columns name machines.
pub fn load_all(files: &[PathBuf]) -> Result<Vec<read::Loaded>, CliError> {
    let mut loaded: Vec<read::Loaded> = Vec::with_capacity(files.len());
    for path in files {
        loaded.push(read::read(path).map_err(|e| CliError::usage(e.to_string()))?);
    }
    Ok(label_hosts(loaded))
}

/// Every file macbench wrote among `files`: results documents, labelled as [`load_all`] does, and
/// `net`'s and `compare`'s results files, labelled by their stem.
struct Written {
    results: Vec<read::Loaded>,
    net: Vec<(String, crate::results::net::NetFile)>,
    compare: Vec<(String, crate::results::compare::CompareFile)>,
}

fn load_written(files: &[PathBuf]) -> Result<Written, CliError> {
    let (mut results, mut net, mut compare) = (Vec::new(), Vec::new(), Vec::new());
    for path in files {
        match read::read_written(path).map_err(|e| CliError::usage(e.to_string()))? {
            read::Written::Results(l) => results.push(*l),
            read::Written::Net { label, file, .. } => net.push((label, *file)),
            read::Written::Compare { label, file, .. } => compare.push((label, *file)),
        }
    }
    Ok(Written {
        results: label_hosts(results),
        net,
        compare,
    })
}

fn label_hosts(mut loaded: Vec<read::Loaded>) -> Vec<read::Loaded> {
    let host_files = |host: &str| loaded.iter().filter(|l| l.doc.host_label() == host).count();
    let hosts: Vec<usize> = loaded
        .iter()
        .map(|l| host_files(l.doc.host_label()))
        .collect();
    let mut distinct: Vec<&str> = loaded.iter().map(|l| l.doc.host_label()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() > 1 {
        // Files from several hosts: name the hosts.
        for (l, files_of_host) in loaded.iter_mut().zip(hosts) {
            l.label = match files_of_host {
                1 => l.doc.host_label().to_string(),
                _ => format!("{}/{}", l.doc.host_label(), l.label),
            };
        }
    }
    // Same label twice (a/run.json, b/run.json of one host): number the later ones so legends stay apart.
    for i in 1..loaded.len() {
        let base = loaded[i].label.clone();
        let mut k = 2;
        while loaded[..i].iter().any(|o| o.label == loaded[i].label) {
            loaded[i].label = format!("{base}#{k}");
            k += 1;
        }
    }
    loaded
}

/// Each claims file named for its column: its host's label, and where one study has two reproductions
/// of one host (`a/` and `b/` both from `vm`) the directory too — `vm (a)`, `vm (b)` — so that the
/// columns do not read `vm | vm`; the same directory name twice is numbered (`vm (out) #2`).
fn claims_columns(
    claims: Vec<(PathBuf, crate::results::claims::ClaimsFile)>,
) -> Vec<html::Reproduction> {
    let named: Vec<(String, PathBuf, crate::results::claims::ClaimsFile)> = claims
        .iter()
        .map(|(path, c)| {
            let twin = claims
                .iter()
                .filter(|(_, o)| o.study == c.study && o.host == c.host)
                .count()
                > 1;
            let dir = path
                .parent()
                .and_then(|d| std::fs::canonicalize(d).ok())
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| path.display().to_string());
            let host = if c.host.is_empty() {
                "unknown"
            } else {
                &c.host
            };
            let column = if twin {
                format!("{host} ({dir})")
            } else {
                c.host.clone()
            };
            let dir = path.parent().unwrap_or(Path::new("."));
            let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
            (column, dir, c.clone())
        })
        .collect();
    let mut out: Vec<html::Reproduction> = Vec::with_capacity(named.len());
    for (column, dir, mut c) in named {
        let mut label = column.clone();
        let mut k = 2;
        while out
            .iter()
            .any(|o| o.claims.study == c.study && o.claims.host == label)
        {
            label = format!("{column} #{k}");
            k += 1;
        }
        c.host = label;
        out.push(html::Reproduction { claims: c, dir });
    }
    out
}

/// The results files and claims files `paths` name (files, directories, quoted globs).
pub fn expand(paths: &[PathBuf]) -> Result<read::Inputs, CliError> {
    read::expand_inputs(paths).map_err(|e| CliError::usage(e.to_string()))
}

pub fn report(args: &ReportArgs) -> Result<(), CliError> {
    let inputs = expand(&args.files)?;
    let Written {
        results: files,
        net: nets,
        compare,
    } = load_written(&inputs.results)?;
    let claims = inputs
        .claims
        .iter()
        .map(|p| {
            read::read_claims(p)
                .map(|c| (p.clone(), c))
                .map_err(|e| CliError::usage(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let claims = claims_columns(claims);
    // A report of nothing is not a report: say so rather than write an empty page with exit 0.
    if files.iter().all(|f| f.doc.results.is_empty())
        && nets.iter().all(|(_, n)| n.results.is_empty())
        && compare.iter().all(|(_, c)| c.rows.is_empty())
    {
        return Err(CliError::failure(format!(
            "no results in {}: nothing to report",
            args.files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let inputs: Vec<(&str, &std::path::Path)> = inputs
        .results
        .iter()
        .chain(&inputs.claims)
        .map(|p| ("RESULTS", p.as_path()))
        .collect();
    super::files::not_into_inputs(&[("-o", args.output.as_path())], &args.files)?;
    let _locked = super::files::prepare(&[("-o", args.output.as_path())], &inputs)?;
    if let Some(dir) = args.png.as_deref().filter(|d| d.exists() && !d.is_dir()) {
        return Err(CliError::usage(format!(
            "--png {}: is not a directory; give a directory for the PNG files",
            dir.display()
        )));
    }
    let options = html::ReportOptions {
        scenario: args.scenario.clone(),
        reproductions: claims,
        net: nets,
        compare,
    };
    let built = html::build(&files, &options).map_err(|e| match e {
        html::ReportError::Plot(p) => CliError::failure(p.to_string()),
        other => CliError::usage(other.to_string()),
    })?;
    // The PNGs first, the HTML last: a PNG that cannot be written must not leave a report behind
    // that looks complete (it used to be written, then the command failed).
    let mut pngs = Vec::new();
    if let Some(dir) = &args.png {
        let paths: Vec<PathBuf> = built
            .figures
            .iter()
            .map(|f| dir.join(format!("{}.png", f.id)))
            .collect();
        // As `run -o DIR`: no file replaced unannounced, nothing written among the inputs, and a
        // directory that cannot be made or written is bad input (exit 2), not a late failure.
        let replaced: &[PathBuf] = if args.replaces_own_figures {
            &[]
        } else {
            &paths
        };
        crate::report::output::png_dir(dir, replaced, &args.files).map_err(CliError::usage)?;
        let outputs: Vec<(&str, &std::path::Path)> =
            paths.iter().map(|p| ("--png", p.as_path())).collect();
        let _png_locked = super::files::prepare(&outputs, &inputs)?;
        for (f, path) in built.figures.iter().zip(paths) {
            plots::render_png(f, &path).map_err(|e| CliError::failure(e.to_string()))?;
            pngs.push(path);
        }
    }
    report::write_atomic(&args.output, built.html.as_bytes()).map_err(CliError::failure)?;
    crate::outln!(
        "report: {} ({} figure(s))",
        args.output.display(),
        built.figures.len()
    );
    for note in &built.notes {
        crate::outln!("note: {note}");
    }
    for path in pngs {
        crate::outln!("png: {}", path.display());
    }
    Ok(())
}
