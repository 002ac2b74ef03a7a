//! `macbench compare --against PEER`: our single-session numbers beside the peer's own benchmark, as a
//! value below the command line. The CLI parses the flags into [`Inputs`], then prints the [`Outcome`]
//! and writes its files (`--json`, `--csv`); this room decides what is measured (the cases: each
//! algorithm at each size, what quantity each side times and whether that is like with like), plans it
//! (how long the peer's tool runs, calibrated where its arguments do not fix it), measures it in
//! alternating rounds pinned to one core, and builds the rows and the results document
//! ([`crate::results::compare`]).
//!
//! Why above the session: a comparison is a measuring command like `run`, and shares its session's
//! rules for the machine before and after (`session::machine_before`, `machine_after`); it drives
//! the peers' tools (`peers`) and our one-session measurements (`sweep`), which know nothing of each
//! other. Progress lines go to standard error as the session's do; the table is the CLI's to print.

use crate::engine::{clock, Dispatch};
use crate::host::Host;
use crate::mac::{self, Accel, Availability, Function};
use crate::peers::{
    self as compare, Basis, CompareRow, Invocation, Peer, PeerRequest, PeerRun, ProbeFailure,
    Quantity, Unlike,
};
use crate::results::compare::{CompareFile, CompareRecord};
use crate::results::Harness;
use crate::session::SessionError;
use crate::system::conditions::RunConditions;
use std::sync::atomic::AtomicBool;

/// Default `--rounds`: the fewest that give a verdict ([`crate::stats::MIN_PAIRS_FOR_VERDICT`]; five
/// pairs give a bootstrap interval reaching the extreme rounds, docs/methodology.md §7).
pub const DEFAULT_ROUNDS: usize = crate::stats::MIN_PAIRS_FOR_VERDICT;
/// The most `--rounds`: a bound, so a typo does not ask for days of measurement.
pub const MAX_ROUNDS: usize = 100;

/// What to compare, every flag checked before the peer or anything else runs.
pub struct Inputs {
    pub peer: Peer,
    pub algorithms: Vec<&'static str>,
    /// Our function for each algorithm, in the same order.
    pub functions: Vec<Function>,
    pub sizes: Vec<u32>,
    pub core: usize,
    /// Whole seconds per measurement.
    pub seconds: u32,
    pub accel: Accel,
    pub dispatch: Dispatch,
    /// `--dispatch` was given (kept as given, even against a streaming peer).
    pub dispatch_given: bool,
    pub basis: Basis,
    pub rounds: usize,
}

/// The whole comparison bounded as one run is ([`crate::spec::values::MAX_DURATION`], 24 h): each
/// flag within its own bound could still multiply to months (`--rounds 100 --duration 86400` is
/// 4800 h). Refused before anything runs; exit 2. Counted as each peer's tool runs: `cryptest b2`
/// takes no sizes (our side measures one stream row per algorithm) and times every algorithm it
/// knows ([`compare::CRYPTEST_ALGORITHMS`]) for a tenth of `--duration` each, once a round, so
/// `--sizes` does not multiply it and its own algorithms do (issue 47 M38: it was counted as
/// algorithms × sizes × 2 × `--duration`). Its span per algorithm is the least it takes (its
/// doubling loop may take up to twice that): a comparison is refused only when it surely exceeds.
pub fn check_total_time(
    peer: Peer,
    algorithms: usize,
    sizes: usize,
    rounds: usize,
    seconds: u32,
) -> Result<(), SessionError> {
    let max = crate::spec::values::MAX_DURATION.as_secs_f64();
    let refuse = |what: String, total_s: f64, fewer: &str| {
        Err(SessionError::usage(format!(
            "{what} is {} of runs, more than the {:.0} h a comparison may take; give {fewer}, or a shorter --duration",
            crate::stdio::human_duration(total_s),
            max / 3600.0
        )))
    };
    if peer == Peer::Cryptopp {
        let per_algorithm = compare::cryptest_seconds_per_algorithm(seconds);
        let theirs = compare::CRYPTEST_ALGORITHMS as f64 * per_algorithm;
        let total_s = rounds as f64 * (algorithms as f64 * f64::from(seconds) + theirs);
        if total_s > max {
            return refuse(
                format!(
                    "--rounds {rounds} × (ours: {algorithms} algorithm(s) × --duration {seconds} s, one stream row each; cryptest b2: its {} algorithms × {} s, whatever --alg and --sizes)",
                    compare::CRYPTEST_ALGORITHMS,
                    crate::number::compact(per_algorithm)
                ),
                total_s,
                "fewer rounds or algorithms",
            );
        }
        return Ok(());
    }
    let total_s = (algorithms * sizes * rounds * 2) as f64 * f64::from(seconds);
    if total_s > max {
        return refuse(
            format!("--rounds {rounds} × --duration {seconds} s × 2 sides × {algorithms} algorithm(s) × {sizes} size(s)"),
            total_s,
            "fewer rounds, algorithms or sizes",
        );
    }
    Ok(())
}

/// Our function for each algorithm, each checked before the peer runs: the peer's benchmark offers the
/// algorithm, we have it here with `--accel` (from `--backend`, or the peer's own library where we have
/// it, else the first available backend), and it takes every size.
pub fn our_functions(
    backend: Option<&str>,
    peer: Peer,
    accel: Accel,
    algorithms: &[&'static str],
    sizes: &[u32],
) -> Result<Vec<Function>, SessionError> {
    let offered: Vec<&str> = mac::ALGORITHMS
        .iter()
        .map(|a| a.name)
        .filter(|a| peer.algorithm_name(a).is_some())
        .collect();
    let mut functions = Vec::new();
    for &alg in algorithms {
        if peer.algorithm_name(alg).is_none() {
            return Err(SessionError::usage(format!(
                "--alg {alg}: not offered by {}'s benchmark, so nothing would be compared; it offers {}",
                peer.name(),
                offered.join(", ")
            )));
        }
        let given = backend;
        let backend = given.unwrap_or(peer.same_library_backend());
        let function = our_function(alg, Some(backend), accel).or_else(|| {
            if given.is_some() {
                None
            } else {
                our_function(alg, None, accel)
            }
        });
        let Some(function) = function else {
            return Err(SessionError::usage(format!(
                "--alg {alg}: no available {backend} {accel} function for it here, so nothing would be compared (`macbench list --alg {alg}`)"
            )));
        };
        if let Some(&size) = sizes.iter().find(|&&n| !function.accepts_bytes(n.into())) {
            return Err(SessionError::usage(format!(
                "--sizes {size}: {}; give sizes within it",
                function.length_rule()
            )));
        }
        functions.push(function);
    }
    Ok(functions)
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

/// A row with nothing measured yet.
fn empty_row(peer: Peer, algorithm: &str, size: String, basis: Basis, note: String) -> CompareRow {
    CompareRow {
        peer: peer.name(),
        algorithm: algorithm.to_string(),
        size,
        ours_function: None,
        basis,
        ours: None,
        ours_range: None,
        theirs: None,
        theirs_range: None,
        ratio: None,
        ours_cpu: None,
        peer_cpus: "unknown: not run".into(),
        harness_share: None,
        peer_clock: None,
        unlike: None,
        note,
    }
}

/// What a comparison came to: the peer's tool missing (one row saying how to install it), or the
/// measured rows and their results file.
pub enum Outcome {
    NotInstalled {
        rows: Vec<CompareRow>,
        reference_hz: f64,
    },
    Compared(Box<Compared>),
}

/// The measured rows, the results file written from them, and the time announced for it all.
pub struct Compared {
    pub rows: Vec<CompareRow>,
    pub reference_hz: f64,
    pub announced_s: f64,
    pub file: CompareFile,
}

/// Measure the comparison `inputs` describe, the machine's state sampled before and after (with
/// `quiet_check`, a busy machine refuses it first).
pub fn run(inputs: &Inputs, quiet_check: bool) -> Result<Outcome, SessionError> {
    let mut machine = crate::session::machine_before(&[inputs.core], quiet_check)?;
    let peer = inputs.peer;
    let clock = clock::clock_info();
    let f = clock.reference_hz;
    let version = match compare::probe(peer) {
        Ok(version) => version,
        Err(ProbeFailure::Missing { binary, reason }) => {
            let note = format!(
                "{} not installed ({binary}: {reason}); install it with `{}` or set ${}",
                peer.name(),
                peer.install_hint(),
                peer.env_var()
            );
            let rows = vec![empty_row(peer, "-", "-".into(), inputs.basis, note)];
            return Ok(Outcome::NotInstalled {
                rows,
                reference_hz: f,
            });
        }
        Err(ProbeFailure::Failed(reason)) => {
            return Err(SessionError::failure(format!("{}: {reason}", peer.name())));
        }
    };
    crate::errln!("macbench: {} {version}", peer.name());
    let cases = cases(inputs, &version);
    if peer == Peer::Cryptopp {
        crate::errln!(
            "macbench: note: cryptest b2 takes no size: it streams {} B updates, so each algorithm is one row at that update size and --sizes does not apply",
            compare::CRYPTEST_CHUNK
        );
    }
    let groups = groups(peer, &cases);
    let plan = plan(inputs, &cases, &groups, &clock)?;
    crate::errln!(
        "macbench: {} round(s) of {} ({}, {} run(s) a round, {} each) and ours ({} measurement(s) a round, {} s each) on {} algorithm(s) × {} size(s), alternating, both on CPU {}, basis {}: {} in all",
        inputs.rounds,
        peer.name(),
        peer.binary(),
        groups.len(),
        crate::stdio::human_duration(plan.peer_run_s),
        cases.len(),
        inputs.seconds,
        inputs.algorithms.len(),
        if peer == Peer::Cryptopp { 1 } else { inputs.sizes.len() },
        inputs.core,
        inputs.basis,
        crate::stdio::human_duration(plan.total_s)
    );
    if inputs.rounds < crate::stats::MIN_PAIRS_FOR_VERDICT {
        crate::errln!(
            "macbench: note: --rounds {}: the range of {} round(s) holds the median ratio only {:.0} % of the time, so the rows get no verdict ({} rounds or more for one)",
            inputs.rounds,
            inputs.rounds,
            crate::stats::range_coverage(inputs.rounds) * 100.0,
            crate::stats::MIN_PAIRS_FOR_VERDICT
        );
    }
    let harness = crate::sweep::measure_harness(inputs.core, &clock, &CANCEL)
        .map_err(|e| SessionError::failure(e.to_string()))?;
    crate::errln!(
        "macbench: harness (null function, 64 B, one session on CPU {}): {} cycles/message",
        inputs.core,
        harness
            .absolute_cycles_per_message
            .map_or("-".into(), |v| format!("{v:.1}"))
    );
    let sides = Sides {
        inputs,
        version: &version,
        clock: &clock,
    };
    let mut rows: Vec<CompareRow> = cases.iter().map(|c| sides.row(c)).collect();
    for group in &groups {
        sides.rounds(&cases, group, &mut rows)?;
    }
    for (row, case) in rows.iter_mut().zip(&cases) {
        row.harness_share = harness_share(Some(&harness), row.ours, case.size);
    }
    let conditions = crate::session::machine_after(&mut machine);
    let ctx = Context {
        version: &version,
        reference_hz: f,
        harness: Some(&harness),
        conditions: &conditions,
    };
    let file = results_file(
        &rows,
        &ctx,
        crate::isolate::host_for_functions(&inputs.functions),
    );
    Ok(Outcome::Compared(Box::new(Compared {
        rows,
        reference_hz: f,
        announced_s: plan.total_s,
        file,
    })))
}

/// What the rows were measured beside: the harness cost and the machine's state.
struct Context<'a> {
    version: &'a str,
    reference_hz: f64,
    harness: Option<&'a Harness>,
    conditions: &'a RunConditions,
}

/// The results file of the rows (`--json`; `--csv` writes its rows).
fn results_file(rows: &[CompareRow], ctx: &Context<'_>, host: Host) -> CompareFile {
    let load_after = ctx
        .conditions
        .after
        .as_ref()
        .and_then(|a| a.load_average)
        .or(ctx.conditions.before.load_average);
    let low = |range: Option<(f64, f64)>| range.map(|r| r.0);
    let high = |range: Option<(f64, f64)>| range.map(|r| r.1);
    let rows = rows
        .iter()
        .map(|r| CompareRecord {
            peer: r.peer.to_string(),
            peer_version: ctx.version.to_string(),
            algorithm: r.algorithm.clone(),
            size: r.size.parse::<u64>().ok(),
            size_label: r.size.clone(),
            ours_function: r.ours_function.clone(),
            basis: r.basis.name().to_string(),
            reference_hz: ctx.reference_hz,
            ours_cycles_per_byte: r.ours,
            ours_cycles_per_byte_low: low(r.ours_range),
            ours_cycles_per_byte_high: high(r.ours_range),
            theirs_cycles_per_byte: r.theirs,
            theirs_cycles_per_byte_low: low(r.theirs_range),
            theirs_cycles_per_byte_high: high(r.theirs_range),
            ratio: r.ratio.map(|x| x.median),
            ratio_ci95_low: r.ratio.map(|x| x.ci95.low),
            ratio_ci95_high: r.ratio.map(|x| x.ci95.high),
            rounds: r.ratio.map(|x| x.pairs),
            equal_within_noise: r
                .verdict()
                .map(|v| v == crate::peers::Verdict::EqualWithinNoise),
            verdict: r.verdict().map(|v| v.as_str().to_string()),
            no_verdict_because: r.unlike.as_ref().map(|u| u.verdict_text().to_string()),
            ours_cpu: r.ours_cpu,
            peer_cpus: r.peer_cpus.clone(),
            harness_cycles_per_message: ctx.harness.and_then(|h| h.absolute_cycles_per_message),
            harness_share: r.harness_share,
            peer_clock_share: r.peer_clock,
            machine_other_cpu_share: ctx.conditions.worst_share(),
            machine_load_average: load_after.map(|l| l[0]),
            note: r.note.clone(),
        })
        .collect();
    CompareFile {
        schema: crate::results::compare::SCHEMA.to_string(),
        host,
        rows,
    }
}

/// One row to measure: an algorithm at one size, what each side measures there and whether that
/// is like with like.
struct Case {
    alg: &'static str,
    function: Function,
    /// Our message size, or our update size when we stream.
    size: u32,
    /// The size the peer's figure is read at (`None`: cryptest b2's sizeless stream).
    peer_size: Option<u32>,
    label: String,
    /// How our side hands its data over here.
    dispatch: Dispatch,
    /// Why this row's ratio gets no verdict, decided before anything runs.
    unlike: Option<Unlike>,
}

/// The rows: each algorithm at each size (for `cryptest b2`, at its one update size), with our
/// side measuring the quantity the peer measures where our function can.
fn cases(inputs: &Inputs, version: &str) -> Vec<Case> {
    let peer = inputs.peer;
    let sizes: Vec<(u32, Option<u32>, String)> = if peer == Peer::Cryptopp {
        let chunk = compare::CRYPTEST_CHUNK;
        vec![(chunk, None, format!("stream:{chunk}"))]
    } else {
        inputs
            .sizes
            .iter()
            .map(|&s| (s, Some(s), s.to_string()))
            .collect()
    };
    let mut out = Vec::new();
    for (&alg, &function) in inputs.algorithms.iter().zip(&inputs.functions) {
        for (size, peer_size, label) in &sizes {
            let theirs = peer.quantity(version, *size, device_test(inputs, *size));
            let (dispatch, ours, why) = our_quantity(inputs, function, theirs, *size);
            let library = peer.same_library_backend();
            let unlike = if function.backend.name != library {
                Some(Unlike::Library {
                    ours: function.id(),
                    theirs: library,
                })
            } else if ours != theirs {
                Some(Unlike::Quantity { ours, theirs, why })
            } else {
                None
            };
            out.push(Case {
                alg,
                function,
                size: *size,
                peer_size: *peer_size,
                label: label.clone(),
                dispatch,
                unlike,
            });
        }
    }
    out
}

/// How our side measures against a peer figure of `theirs` at `size`: our dispatch, the quantity it
/// gives and, where that is not the peer's, why. Against a stream we stream the same chunks
/// (`--dispatch stream`) where our function can; a `--dispatch` given is kept as given. Against
/// `ipsec_perf`'s undrained job stream, ours is the same quantity only where no job of a call needs a
/// flush ([`job_stream_unlike`]).
fn our_quantity(
    inputs: &Inputs,
    function: Function,
    theirs: Quantity,
    size: u32,
) -> (Dispatch, Quantity, String) {
    let quantity = |dispatch: Dispatch, chunk: u32| match dispatch {
        Dispatch::Stream => Quantity::Stream { chunk },
        _ => Quantity::Messages,
    };
    match theirs {
        Quantity::Stream { chunk } if !inputs.dispatch_given => match can_stream(function) {
            Ok(()) => (Dispatch::Stream, theirs, String::new()),
            Err(why) => (
                inputs.dispatch,
                quantity(inputs.dispatch, chunk),
                format!("{} cannot stream: {why}", function.id()),
            ),
        },
        Quantity::Stream { chunk } => (
            inputs.dispatch,
            quantity(inputs.dispatch, chunk),
            format!("--dispatch {} as given", inputs.dispatch),
        ),
        // Only whether ours streams matters against whole messages (the chunk is not compared).
        Quantity::Messages => (
            inputs.dispatch,
            quantity(inputs.dispatch, 0),
            format!("--dispatch {} as given", inputs.dispatch),
        ),
        // A device's drained rings are our `all` at the same depth ([`device_test`] sets theirs to it).
        Quantity::Drained { .. } if inputs.dispatch == Dispatch::All => {
            (inputs.dispatch, theirs, String::new())
        }
        Quantity::Drained { .. } => (
            inputs.dispatch,
            quantity(inputs.dispatch, 0),
            format!("--dispatch {} as given", inputs.dispatch),
        ),
        Quantity::Undrained { .. } => (
            inputs.dispatch,
            quantity(inputs.dispatch, 0),
            format!(
                "each of our {} calls returns every tag it was given, the device drained at the call's end, while the tool enqueues its next burst without waiting for the last (on crypto_aesni_mb: ipsec-mb's lanes flushed half empty at each of our calls' ends, never in its run)",
                inputs.dispatch
            ),
        ),
        Quantity::JobStream => {
            let ours = quantity(inputs.dispatch, 0);
            if ours != Quantity::Messages {
                let why = format!("--dispatch {} as given", inputs.dispatch);
                return (inputs.dispatch, ours, why);
            }
            match job_stream_unlike(function, inputs.dispatch, size) {
                None => (inputs.dispatch, Quantity::JobStream, String::new()),
                Some(why) => (inputs.dispatch, Quantity::Messages, why),
            }
        }
    }
}

/// Against `ipsec_perf`'s undrained job stream: why ours at `dispatch` is not that quantity, or
/// `None` when it is. Each of our calls hands every tag back before it returns, so the jobs still in
/// the manager's lanes after the last submit come back through `IMB_FLUSH_JOB`; `ipsec_perf` never
/// flushes before its run ends. The library says how many a call takes (a probe call, untimed): none
/// (the function completes each job at submission), and the two figures are the same quantity.
fn job_stream_unlike(function: Function, dispatch: Dispatch, size: u32) -> Option<String> {
    let (n, depth) = match dispatch {
        Dispatch::Single => (1, None),
        Dispatch::Burst(n) => (n, None),
        // A library has no descriptors: `all` is a burst of the depth the hot loop gives it.
        Dispatch::All => (crate::engine::hot_loop::all_len(size as usize), None),
        Dispatch::Inflight(n) => (n, Some(n)),
        // Streams are refused by this backend and reported where they run.
        Dispatch::Stream => return None,
    };
    if function.backend.name != "ipsecmb" {
        return None;
    }
    let name = function.algorithm.name;
    let probe = mac::ipsecmb::flushes_per_call(name, function.accel, size as usize, n, depth);
    match probe {
        Ok(0) => None,
        Ok(flushes) => Some(format!(
            "{flushes} of every {n} jobs of a {dispatch} call come back through IMB_FLUSH_JOB, the \
             manager drained so that every tag is back when the call returns; ipsec_perf submits \
             jobs back to back and flushes once when its run ends, so its figure leaves that drain out"
        )),
        Err(e) => Some(format!(
            "the jobs a {dispatch} call leaves for IMB_FLUSH_JOB could not be counted ({e})"
        )),
    }
}

/// Whether our function streams through its library's incremental interface: keyed once, a stream
/// begun and finished; the refusal's reason where it cannot.
fn can_stream(function: Function) -> Result<(), String> {
    let algorithm = function.algorithm;
    let key = vec![0u8; algorithm.default_key_len];
    let nonce = vec![0u8; algorithm.nonce_len.unwrap_or(0)];
    let mut mac = function
        .with_key(&key, mac::KeyParams::default())
        .map_err(|e| e.to_string())?;
    let mut tag = [0u8; mac::MAX_TAG_LEN];
    mac.stream_begin(&nonce).map_err(|r| r.reason)?;
    mac.stream_finish(&mut tag[..algorithm.tag_len])
        .map_err(|r| r.reason)
}

/// The cases each run of the peer's tool covers ([`compare::Invocation`]), in case order.
fn groups(peer: Peer, cases: &[Case]) -> Vec<Vec<usize>> {
    match peer.invocation() {
        Invocation::EachAlgorithmAndSize => (0..cases.len()).map(|i| vec![i]).collect(),
        Invocation::All => vec![(0..cases.len()).collect()],
        Invocation::EachAlgorithm => {
            let mut out: Vec<Vec<usize>> = Vec::new();
            for (i, case) in cases.iter().enumerate() {
                match out.iter_mut().find(|g| cases[g[0]].alg == case.alg) {
                    Some(group) => group.push(i),
                    None => out.push(vec![i]),
                }
            }
            out
        }
    }
}

/// What the comparison is expected to take, announced before it starts.
struct Plan {
    /// One run of the peer's tool (the mean over the groups).
    peer_run_s: f64,
    total_s: f64,
}

/// Our side's cost per measurement beyond `--duration`: the pre-flight, key setup timing and the
/// session's start (~0.05 s on the 2-core VM), rounded up.
const OUR_OVERHEAD_S: f64 = 0.1;

/// The plan's time: every round runs the peer once per group and ours once per case. The peer's
/// run time comes from its arguments where they fix it, else from one timed run ([`compare::calibrate`]).
fn plan(
    inputs: &Inputs,
    cases: &[Case],
    groups: &[Vec<usize>],
    clock: &clock::ClockInfo,
) -> Result<Plan, SessionError> {
    let peer = inputs.peer;
    let mut peer_total = 0.0;
    let mut calibrated: Option<f64> = None;
    for group in groups {
        let (algorithms, sizes) = group_request(cases, group);
        let run = match peer.run_seconds(algorithms.len(), sizes.len(), inputs.seconds) {
            Some(s) => s,
            None => match calibrated {
                Some(s) => s,
                None => {
                    crate::errln!(
                        "macbench: timing one run of {} for the plan (its run time is not fixed by its arguments)",
                        peer.binary()
                    );
                    let request = request(inputs, &algorithms, &sizes, clock);
                    let s = compare::calibrate(peer, &request)
                        .map_err(|e| SessionError::failure(format!("{}: {e}", peer.name())))?;
                    *calibrated.insert(s)
                }
            },
        };
        peer_total += run;
    }
    let ours = cases.len() as f64 * (f64::from(inputs.seconds) + OUR_OVERHEAD_S);
    let rounds = inputs.rounds as f64;
    Ok(Plan {
        peer_run_s: peer_total / groups.len().max(1) as f64,
        total_s: rounds * (peer_total + ours),
    })
}

/// The distinct algorithms and peer sizes of a group, in order.
fn group_request(cases: &[Case], group: &[usize]) -> (Vec<&'static str>, Vec<u32>) {
    let mut algorithms: Vec<&'static str> = Vec::new();
    let mut sizes: Vec<u32> = Vec::new();
    for &i in group {
        if !algorithms.contains(&cases[i].alg) {
            algorithms.push(cases[i].alg);
        }
        let size = cases[i].size;
        if !sizes.contains(&size) {
            sizes.push(size);
        }
    }
    (algorithms, sizes)
}

/// What `dpdk-test-crypto-perf` runs beside our dispatch at `size` (`None` for the other peers):
/// rings of our `all` batch, drained ([`Quantity::Drained`]), beside `all`; its throughput test in
/// bursts of our depth (one for `single`) beside the others.
fn device_test(inputs: &Inputs, size: u32) -> Option<compare::DeviceTest> {
    if inputs.peer != Peer::Dpdk {
        return None;
    }
    let depth = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Some(match inputs.dispatch {
        Dispatch::All => compare::DeviceTest::Drained {
            depth: depth(crate::engine::hot_loop::all_len(size as usize)),
        },
        Dispatch::Burst(n) | Dispatch::Inflight(n) => {
            compare::DeviceTest::Bursts { burst: depth(n) }
        }
        Dispatch::Single | Dispatch::Stream => compare::DeviceTest::Bursts { burst: 1 },
    })
}

/// What the peer's tool is asked for one group.
fn request<'a>(
    inputs: &Inputs,
    algorithms: &'a [&'a str],
    sizes: &'a [u32],
    clock: &clock::ClockInfo,
) -> PeerRequest<'a> {
    PeerRequest {
        algorithms,
        sizes,
        seconds: inputs.seconds,
        reference_hz: clock.reference_hz,
        accel: inputs.accel,
        core: Some(inputs.core),
        basis: inputs.basis,
        // A dpdk group is one algorithm at one size (`Invocation::EachAlgorithmAndSize`).
        device: sizes.first().and_then(|&size| device_test(inputs, size)),
    }
}

/// The null function's cycles per message over ours at `size` bytes (both CPU-time figures of one
/// pinned session): the part of our figure that is harness rather than library.
fn harness_share(harness: Option<&Harness>, ours_per_byte: Option<f64>, size: u32) -> Option<f64> {
    let per_message = ours_per_byte? * f64::from(size.max(1));
    let null = harness?.absolute_cycles_per_message?;
    (per_message > 0.0).then(|| null / per_message)
}

/// The lowest and highest of a side's rounds.
fn range(values: &[f64]) -> Option<(f64, f64)> {
    let low = values.iter().copied().reduce(f64::min)?;
    let high = values.iter().copied().reduce(f64::max)?;
    Some((low, high))
}

/// The two sides: the peer's tool and our functions, on one core and one basis.
struct Sides<'a> {
    inputs: &'a Inputs,
    version: &'a str,
    clock: &'a clock::ClockInfo,
}

/// The peer's side of one round for one group: its cycles/byte for each case of the group on the
/// basis, the CPUs its process was allowed on (read back) and what it said about its figures.
struct TheirRound {
    theirs: Vec<Option<f64>>,
    cpus: String,
    notes: Vec<Option<String>>,
}

/// Our side of one round: our cycles/byte on the basis, our result's name, and why a figure is missing.
struct OurRound {
    ours: Option<f64>,
    label: String,
    note: Option<String>,
    /// On a device, our submitting core's account per op (build, enqueue, dequeue), said beside the
    /// tool's own split.
    offload: Option<String>,
}

/// Each case's rounds so far: (theirs, ours) pairs and every figure of either side.
#[derive(Default)]
struct Tally {
    pairs: Vec<(f64, f64)>,
    ours: Vec<f64>,
    theirs: Vec<f64>,
}

impl Sides<'_> {
    /// A case's row before anything is measured.
    fn row(&self, case: &Case) -> CompareRow {
        let inputs = self.inputs;
        let mut row = empty_row(
            inputs.peer,
            case.alg,
            case.label.clone(),
            inputs.basis,
            case.unlike.as_ref().map_or(String::new(), Unlike::note),
        );
        row.ours_cpu = Some(inputs.core);
        row.unlike = case.unlike.clone();
        row
    }

    /// `--rounds` rounds of one group: the peer's tool once and ours once per case, the peer first
    /// in even rounds and ours first in odd ones, so a drift over the run hits both sides alike;
    /// reduced to medians and the paired ratio of each case.
    fn rounds(
        &self,
        cases: &[Case],
        group: &[usize],
        rows: &mut [CompareRow],
    ) -> Result<(), SessionError> {
        let inputs = self.inputs;
        let mut tallies: Vec<Tally> = group.iter().map(|_| Tally::default()).collect();
        for round in 0..inputs.rounds {
            let (theirs, ours) = if round % 2 == 0 {
                let theirs = self.peer_round(cases, group)?;
                (theirs, self.our_rounds(cases, group)?)
            } else {
                let ours = self.our_rounds(cases, group)?;
                (self.peer_round(cases, group)?, ours)
            };
            for (k, &i) in group.iter().enumerate() {
                let row = &mut rows[i];
                let tally = &mut tallies[k];
                row.ours_function = Some(ours[k].label.clone());
                row.peer_cpus.clone_from(&theirs.cpus);
                if let Some(note) = ours[k].note.clone().or_else(|| theirs.notes[k].clone()) {
                    row.note = match &row.unlike {
                        Some(unlike) => format!("{}; {note}", unlike.note()),
                        None => note,
                    };
                }
                if let Some(offload) = &ours[k].offload {
                    row.note = format!("{}; {offload}", row.note);
                }
                tally.ours.extend(ours[k].ours);
                tally.theirs.extend(theirs.theirs[k]);
                if let (Some(o), Some(t)) = (ours[k].ours, theirs.theirs[k]) {
                    // Our throughput over theirs = their cycles/byte over ours.
                    tally.pairs.push((t, o));
                }
            }
        }
        for (k, &i) in group.iter().enumerate() {
            let row = &mut rows[i];
            let tally = &tallies[k];
            row.ours = crate::metrics::median(&tally.ours);
            row.ours_range = range(&tally.ours);
            row.theirs = crate::metrics::median(&tally.theirs);
            row.theirs_range = range(&tally.theirs);
            // The peer's clock error is the same in every round (its reads start at the same phase
            // of a tick), so resampling rounds cannot see it: the interval is widened by it instead.
            row.peer_clock = inputs
                .peer
                .clock_resolution_s()
                .map(|tick| tick / f64::from(inputs.seconds.max(1)));
            row.ratio = crate::stats::paired_ratio(
                &tally.pairs,
                crate::stats::BOOTSTRAP_RESAMPLES,
                crate::stats::BOOTSTRAP_SEED,
            )
            .map(|r| r.widened(row.peer_clock.unwrap_or(0.0)));
        }
        Ok(())
    }

    /// The peer's tool once on one group, pinned to our core.
    fn peer_round(&self, cases: &[Case], group: &[usize]) -> Result<TheirRound, SessionError> {
        let peer = self.inputs.peer;
        let (algorithms, sizes) = group_request(cases, group);
        let request = request(self.inputs, &algorithms, &sizes, self.clock);
        let (points, note, cpus) = match compare::run_peer(peer, &request, self.version.to_string())
        {
            PeerRun::Ran {
                points, note, cpus, ..
            } => (points, note, cpus),
            PeerRun::Failed(reason) => {
                return Err(SessionError::failure(format!("{}: {reason}", peer.name())))
            }
        };
        let mut out = TheirRound {
            theirs: Vec::new(),
            cpus: match cpus {
                Ok(cpus) => crate::system::format_cpu_list(&cpus),
                Err(why) => format!("unknown: {why}"),
            },
            notes: Vec::new(),
        };
        for &i in group {
            let case = &cases[i];
            // Every algorithm was checked against the peer's list before it ran (`our_functions`).
            let peer_name = peer.result_name(case.alg).unwrap_or_default();
            let bps = points
                .iter()
                .find(|p| p.algorithm.eq_ignore_ascii_case(&peer_name) && p.size == case.peer_size)
                .map(|p| p.bytes_per_second);
            out.notes.push(match bps {
                Some(_) => note.clone(),
                None => Some(format!(
                    "{} printed no result for {peer_name} at this size",
                    peer.name()
                )),
            });
            out.theirs
                .push(bps.and_then(|b| compare::cycles_per_byte(self.clock.reference_hz, b)));
        }
        Ok(out)
    }

    /// Our side once on each case of a group.
    fn our_rounds(&self, cases: &[Case], group: &[usize]) -> Result<Vec<OurRound>, SessionError> {
        group.iter().map(|&i| self.our_round(&cases[i])).collect()
    }

    /// Our side once on one case: one cache-hot run of one session on the core, on the basis.
    fn our_round(&self, case: &Case) -> Result<OurRound, SessionError> {
        let inputs = self.inputs;
        let what = crate::sweep::CacheHot {
            function: case.function,
            size: case.size,
            seconds: f64::from(inputs.seconds),
            core: inputs.core,
            dispatch: case.dispatch,
        };
        let entry = crate::sweep::measure_cache_hot(what, 1, self.clock, &CANCEL)
            .map_err(|e| SessionError::failure(e.to_string()))?;
        let (ours, note) = if !entry.measured() {
            (
                None,
                Some("our result failed its validity checks".to_string()),
            )
        } else {
            match inputs.basis {
                Basis::Cpu => (entry.metrics.absolute_cycles_per_byte, None),
                Basis::Wall => (entry.metrics.apparent_cycles_per_byte, None),
                Basis::User => match entry.raw.first().and_then(crate::metrics::user_share) {
                    Some(share) => (
                        entry.metrics.absolute_cycles_per_byte.map(|c| c * share),
                        None,
                    ),
                    None => (
                        None,
                        Some("no user/system split of our CPU time (getrusage)".to_string()),
                    ),
                },
            }
        };
        let m = &entry.metrics;
        let offload = match (
            m.offload_build_cycles_per_op,
            m.offload_enqueue_cycles_per_op,
            m.offload_dequeue_cycles_per_op,
        ) {
            (Some(build), Some(enqueue), Some(dequeue)) => Some(format!(
                "ours: build {build:.1} + enqueue {enqueue:.1} + dequeue {dequeue:.1} cycles/op (our build, patching a prebuilt op, is inside our figure)"
            )),
            _ => None,
        };
        Ok(OurRound {
            ours,
            // Named as every result is (`hmac-sha256/ipsecmb/sse burst:16`).
            label: entry.label(),
            note,
            offload,
        })
    }
}
