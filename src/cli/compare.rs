//! `macbench compare --against PEER`: our single-session numbers beside the peer's own benchmark.

use super::files::{Records, RowOutputs};
use super::CliError;
use crate::engine::{clock, Dispatch, SizeSource};
use crate::mac::{self, Accel, Availability, Function};
use crate::peers::{self as compare, CompareRow, Peer, PeerRun};
use crate::spec::resolve_algorithms;
use std::sync::atomic::AtomicBool;

#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// Reference tool: openssl (`openssl speed`), cryptopp (`cryptest b2`), botan (`botan speed`) or
    /// ipsecmb (Intel ipsec-mb's `ipsec_perf`, built from source: docs/backends.md "Intel ipsec-mb"). Binaries
    /// come from PATH or $MACBENCH_OPENSSL, $MACBENCH_CRYPTEST, $MACBENCH_BOTAN, $MACBENCH_IPSEC_PERF.
    #[arg(long, value_name = "openssl|cryptopp|botan|ipsecmb")]
    pub against: String,
    /// Algorithms, comma-separated (only those the peer's benchmark offers are compared).
    #[arg(long, default_value = "hmac-sha256,cmac-aes128")]
    pub alg: String,
    /// Message sizes in bytes: numbers or power-of-two ranges (no size models: the peers take fixed sizes).
    #[arg(
        long,
        default_value = "16,64,256,1024,8192,16384",
        allow_hyphen_values = true
    )]
    pub sizes: String,
    /// Our backend; default: the peer's own library where we have it, else the first available.
    #[arg(long)]
    pub backend: Option<String>,
    /// Duration of each measurement, both sides: `1s`, `2s` (rounded up to whole seconds, which is
    /// what openssl speed takes; `--seconds N`, the old form, still works).
    #[arg(
        long,
        alias = "seconds",
        default_value = "1s",
        allow_hyphen_values = true
    )]
    pub duration: String,
    /// The CPU our session is pinned to; default: the first online CPU (`--core` still works).
    #[arg(
        long = "cores",
        alias = "core",
        value_name = "CORES",
        allow_hyphen_values = true
    )]
    pub core: Option<String>,
    /// Code path, both sides: `hw` (the library's default), or with `--against ipsecmb` an ISA level
    /// (`sse`, `avx`, `avx2`, `avx512`: our ipsecmb level and `ipsec_perf --arch`). The other peers
    /// run as installed, so only `hw` pairs with them.
    #[arg(long, value_enum, default_value = "hw")]
    pub accel: Accel,
    /// How our side hands messages over (`single`, `burst:N`, `inflight:N`); default: as the peer
    /// does, `burst:16` against ipsecmb (ipsec_perf keeps the job manager full), `single` otherwise.
    #[arg(long, allow_hyphen_values = true)]
    pub dispatch: Option<String>,
    #[command(flatten)]
    pub outputs: RowOutputs,
}

/// The columns of `compare --json`/`--csv`.
const COLUMNS: &[&str] = &[
    "peer",
    "peer_version",
    "algorithm",
    "size",
    "size_label",
    "ours_function",
    "reference_hz",
    "ours_cycles_per_byte",
    "theirs_cycles_per_byte",
    "ratio",
    "note",
];

fn records(rows: &[CompareRow], version: &str, reference_hz: f64) -> Records {
    use serde_json::Value;
    let number = |v: Option<f64>| v.map_or(Value::Null, Value::from);
    let mut out = Records::new(COLUMNS);
    for r in rows {
        let mut row = vec![
            Value::from(r.peer),
            Value::from(version),
            Value::from(r.algorithm.as_str()),
        ];
        row.extend(Records::size_cells(&r.size));
        row.extend([
            r.ours_function.as_deref().map_or(Value::Null, Value::from),
            Value::from(reference_hz),
            number(r.ours),
            number(r.theirs),
            number(r.ratio),
            Value::from(r.note.as_str()),
        ]);
        out.rows.push(row);
    }
    out
}

static CANCEL: AtomicBool = AtomicBool::new(false);

fn our_function(algorithm: &str, backend: Option<&str>, accel: Accel) -> Option<Function> {
    let all = mac::functions();
    let usable = |f: &&Function| {
        f.algorithm.name == algorithm
            && f.accel == accel
            && f.availability() == Availability::Available
    };
    match backend {
        Some(b) => all
            .iter()
            .filter(usable)
            .find(|f| f.backend.name == b)
            .copied(),
        None => all.iter().find(usable).copied(),
    }
}

/// What to compare, every flag checked before the peer or anything else runs.
struct Inputs {
    peer: Peer,
    algorithms: Vec<&'static str>,
    /// Our function for each algorithm, in the same order.
    functions: Vec<Function>,
    sizes: Vec<u32>,
    core: usize,
    /// Whole seconds per measurement.
    seconds: u32,
    accel: Accel,
    dispatch: Dispatch,
}

fn inputs(args: &CompareArgs) -> Result<Inputs, CliError> {
    let peer = Peer::parse(&args.against).ok_or_else(|| {
        CliError::usage(format!(
            "--against: {:?} is not a known peer; valid: openssl, cryptopp, botan, ipsecmb",
            args.against
        ))
    })?;
    let accel = args.accel;
    match (peer, accel) {
        (_, Accel::Hw) => {}
        (Peer::IpsecMb, level) if level.is_isa_level() => {}
        (Peer::IpsecMb, other) => {
            return Err(CliError::usage(format!(
                "--accel {other}: ipsec_perf has no such path; valid with ipsecmb: hw, sse, avx, avx2, avx512"
            )))
        }
        (peer, other) => {
            return Err(CliError::usage(format!(
                "--accel {other}: {} runs as installed, so only hw pairs with it; ISA levels are compared against ipsecmb",
                peer.name()
            )))
        }
    }
    let dispatch = match &args.dispatch {
        // The one `--dispatch` rule; compare sets one measurement beside each of the peer's.
        Some(text) => match crate::spec::parse_dispatches(text)?[..] {
            [one] => one,
            _ => {
                return Err(CliError::usage(format!(
                    "--dispatch {text}: compare takes one mode (run `macbench run --dispatch` for several)"
                )))
            }
        },
        None if peer == Peer::IpsecMb => Dispatch::Burst(crate::mac::MAX_BATCH),
        None => Dispatch::Single,
    };
    let algorithms = resolve_algorithms(&args.alg)?;
    // Whole seconds (openssl speed's unit): the one duration rule, rounded up.
    let seconds = crate::spec::parse_duration("--duration", &args.duration)?
        .as_secs_f64()
        .ceil() as u32;
    let mut sizes = Vec::new();
    for s in crate::spec::parse_sizes(&args.sizes, 1)? {
        match s {
            SizeSource::Fixed { size } => sizes.push(size),
            SizeSource::Model { name, .. } => {
                return Err(CliError::usage(format!(
                    "--sizes: {name} is a size model; compare takes byte counts (peers benchmark fixed sizes)"
                )))
            }
        }
    }
    if let Some(b) = &args.backend {
        crate::spec::resolve_backend(b)?;
    }
    let functions = our_functions(args, peer, accel, &algorithms, &sizes)?;
    let online = crate::system::online_cpus();
    let core = match &args.core {
        Some(c) => crate::spec::parse_one_cpu("--cores", c, &online)?,
        None => online.first().copied().unwrap_or(0),
    };
    Ok(Inputs {
        peer,
        algorithms,
        functions,
        sizes,
        core,
        seconds,
        accel,
        dispatch,
    })
}

/// Our function for each algorithm, each checked before the peer runs: the peer's benchmark offers the
/// algorithm, we have it here with `--accel` (from `--backend`, or the peer's own library where we have
/// it, else the first available backend), and it takes every size.
fn our_functions(
    args: &CompareArgs,
    peer: Peer,
    accel: Accel,
    algorithms: &[&'static str],
    sizes: &[u32],
) -> Result<Vec<Function>, CliError> {
    let offered: Vec<&str> = mac::ALGORITHMS
        .iter()
        .map(|a| a.name)
        .filter(|a| peer.algorithm_name(a).is_some())
        .collect();
    let mut functions = Vec::new();
    for &alg in algorithms {
        if peer.algorithm_name(alg).is_none() {
            return Err(CliError::usage(format!(
                "--alg {alg}: not offered by {}'s benchmark, so nothing would be compared; it offers {}",
                peer.name(),
                offered.join(", ")
            )));
        }
        let backend = args
            .backend
            .clone()
            .unwrap_or_else(|| peer.same_library_backend().to_string());
        let function = our_function(alg, Some(&backend), accel).or_else(|| {
            if args.backend.is_some() {
                None
            } else {
                our_function(alg, None, accel)
            }
        });
        let Some(function) = function else {
            return Err(CliError::usage(format!(
                "--alg {alg}: no available {backend} {accel} function for it here, so nothing would be compared (`macbench list --alg {alg}`)"
            )));
        };
        if let Some(&size) = sizes.iter().find(|&&n| !function.accepts_bytes(n.into())) {
            return Err(CliError::usage(format!(
                "--sizes {size}: {}; give sizes within it",
                function.length_rule()
            )));
        }
        functions.push(function);
    }
    Ok(functions)
}

/// A row with nothing measured yet.
fn empty_row(peer: Peer, algorithm: &str, size: String, note: String) -> CompareRow {
    CompareRow {
        peer: peer.name(),
        algorithm: algorithm.to_string(),
        size,
        ours_function: None,
        ours: None,
        theirs: None,
        ratio: None,
        note,
    }
}

pub fn compare(args: &CompareArgs) -> Result<(), CliError> {
    let inputs = inputs(args)?;
    let _locked = args.outputs.prepare(&[])?;
    let Inputs {
        peer,
        ref algorithms,
        ref sizes,
        seconds,
        accel,
        ..
    } = inputs;
    let clock = clock::clock_info();
    let f = clock.reference_hz;
    // The peer runs each case once, we run each three times.
    let cases = algorithms.len() * sizes.len();
    eprintln!(
        "macbench: running {} ({}) on {} algorithm(s) × {} size(s), {} s each, then ours 3 × {} s: {}",
        peer.name(),
        peer.binary(),
        algorithms.len(),
        sizes.len(),
        seconds,
        seconds,
        super::human_duration((cases * 4 * seconds as usize) as f64)
    );
    let (version, points, note) =
        match compare::run_peer(peer, algorithms, sizes, seconds, f, accel) {
            PeerRun::Missing { binary, reason } => {
                let note = format!(
                    "{} not installed ({binary}: {reason}); install it with `{}` or set ${}",
                    peer.name(),
                    peer.install_hint(),
                    peer.env_var()
                );
                let rows = [empty_row(peer, "-", "-".into(), note)];
                crate::out!(
                    "{}",
                    compare::render(&rows, f, crate::table::Style::detect())
                );
                // The row says how to install the peer; the exit code says nothing was compared.
                return Err(CliError::failure(format!(
                    "nothing was compared: {} is not installed",
                    peer.name()
                )));
            }
            PeerRun::Failed(reason) => {
                return Err(CliError::failure(format!("{}: {reason}", peer.name())));
            }
            PeerRun::Ran {
                version,
                points,
                note,
            } => (version, points, note),
        };
    eprintln!("macbench: {} {version}", peer.name());
    let mut rows: Vec<CompareRow> = Vec::new();
    for (alg, &function) in algorithms.iter().zip(&inputs.functions) {
        rows.extend(algorithm_rows(
            &inputs,
            alg,
            function,
            &points,
            note.as_deref(),
            &clock,
        )?);
    }
    crate::out!(
        "{}",
        compare::render(&rows, f, crate::table::Style::detect())
    );
    args.outputs.write(&records(&rows, &version, f))?;
    if rows.iter().all(|r| r.ratio.is_none()) {
        // The rows' notes say why at each size; the exit code says no pair of numbers came out.
        return Err(CliError::failure(format!(
            "nothing was compared: no size has both our figure and {}'s",
            peer.name()
        )));
    }
    Ok(())
}

/// The rows of one algorithm: our cache-hot measurement beside the peer's figure at each size.
fn algorithm_rows(
    inputs: &Inputs,
    alg: &str,
    function: Function,
    points: &[compare::PeerPoint],
    note: Option<&str>,
    clock: &clock::ClockInfo,
) -> Result<Vec<CompareRow>, CliError> {
    let Inputs {
        peer,
        ref sizes,
        core,
        seconds,
        dispatch,
        ..
    } = *inputs;
    let f = clock.reference_hz;
    // Every algorithm was checked against the peer's list before it ran (`our_functions`).
    let peer_name = peer.result_name(alg).unwrap_or_default();
    let theirs_at = |size: Option<u32>| {
        points
            .iter()
            .find(|p| p.algorithm.eq_ignore_ascii_case(&peer_name) && p.size == size)
            .map(|p| p.bytes_per_second)
    };
    // Sized peers: every size; a streaming peer (cryptest): our largest size against its stream.
    let cases: Vec<(u32, Option<u32>, String)> = if points.iter().any(|p| p.size.is_none()) {
        let largest = sizes.iter().copied().max().unwrap_or(16384);
        vec![(largest, None, format!("stream~{largest}"))]
    } else {
        sizes.iter().map(|&s| (s, Some(s), s.to_string())).collect()
    };
    let mut rows = Vec::new();
    for (size, peer_size, label) in cases {
        let mut r = empty_row(peer, alg, label, note.unwrap_or_default().to_string());
        let entry = crate::sweep::measure_cache_hot(
            function,
            size,
            f64::from(seconds),
            core,
            dispatch,
            clock,
            &CANCEL,
        )
        .map_err(|e| CliError::failure(e.to_string()))?;
        // Named as every result is (`hmac-sha256/ipsecmb/sse burst:16`).
        r.ours_function = Some(entry.label());
        if entry.failed {
            r.note = "our result failed its validity checks".into();
        } else {
            r.ours = entry.metrics.absolute_cycles_per_byte;
        }
        match theirs_at(peer_size) {
            Some(bps) => r.theirs = compare::cycles_per_byte(f, bps),
            None => {
                r.note = format!(
                    "{} printed no result for {peer_name} at this size",
                    peer.name()
                )
            }
        }
        if let (Some(o), Some(t)) = (r.ours, r.theirs) {
            r.ratio = Some(t / o);
        }
        rows.push(r);
    }
    Ok(rows)
}
