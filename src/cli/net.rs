//! `macbench net`: protocol-level zero-loss throughput (docs/methodology.md §8). Parses and validates every flag
//! before any socket is opened or file written, then hands over to `crate::net`.
//!
//! - `macbench net [OPTIONS]`: both ends in this process, over loopback or `--netns`;
//! - `macbench net receive --listen ADDR:PORT`: the receiving host;
//! - `macbench net send --to ADDR:PORT [OPTIONS]`: the sending host, which runs the search.

use super::functions as resolve_functions;
use super::CliError;
use crate::host;
use crate::mac::Function;
use crate::net::bench::{Mode, NetConfig, NetPlan, Path};
use crate::net::control::{self, RemotePath, ServeOptions};
use crate::net::limits;
use crate::net::netns::NetnsPair;
use crate::net::report::{self, NetResult};
use crate::net::search::SearchConfig;
use crate::net::trial::LocalPath;
use crate::net::wire::{DEFAULT_TAG_LEN, HEADER_LEN};
use crate::net::NetError;
use crate::session;
use crate::spec::net::{
    parse_addr, parse_loss, parse_rate, parse_rcvbuf, parse_resolution, parse_sizes,
};
use crate::spec::parse_duration;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

impl From<NetError> for CliError {
    fn from(e: NetError) -> Self {
        match e {
            NetError::Usage(m) => CliError::usage(m),
            NetError::Failure(m) => CliError::failure(m),
        }
    }
}

#[derive(Debug, Clone, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct NetArgs {
    #[command(subcommand)]
    pub mode: Option<NetMode>,
    #[command(flatten)]
    pub options: NetOptions,
    #[command(flatten)]
    pub local: LocalOptions,
}

/// Options of the local test only (both ends on this host): `net send` does not offer them.
#[derive(Debug, Clone, clap::Args)]
pub struct LocalOptions {
    /// Run between two network namespaces joined by veth, created and removed by macbench (root).
    #[arg(long)]
    pub netns: bool,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum NetMode {
    /// Receive on another host: verify, count, report counts to the sender over TCP on the same port.
    Receive(ReceiveArgs),
    /// Send to a `macbench net receive` on another host and run the search from here.
    Send(Box<SendArgs>),
}

#[derive(Debug, Clone, clap::Args)]
pub struct ReceiveArgs {
    /// UDP (data) and TCP (control) address to listen on, e.g. 0.0.0.0:7300.
    #[arg(long)]
    pub listen: String,
    /// Pin the receiving thread to this CPU (`--core` still works).
    #[arg(
        long = "cores",
        alias = "core",
        value_name = "CORES",
        allow_hyphen_values = true
    )]
    pub core: Option<String>,
    /// Exit after the first sender that ran a trial disconnects.
    #[arg(long)]
    pub once: bool,
    /// Exit when no sender has been connected for this long. A control connection must send its first
    /// line within 5 s, later ones within 30 s (or this, if shorter), or it is closed; up to 8 are
    /// served at once, and when all 8 are taken a newcomer evicts the one idle the longest. `start`
    /// requests are checked against the limits `macbench net` itself accepts (docs/net.md: net
    /// receive).
    #[arg(long, default_value = "600s", allow_hyphen_values = true)]
    pub timeout: String,
}

#[derive(Debug, Clone, clap::Args)]
pub struct SendArgs {
    /// Address of the `macbench net receive` (UDP data and TCP control), e.g. 192.0.2.7:7300.
    #[arg(long)]
    pub to: String,
    #[command(flatten)]
    pub options: NetOptions,
}

#[derive(Debug, Clone, clap::Args)]
pub struct NetOptions {
    /// Algorithms, comma-separated (presets `paper`, `all`); the null baseline is added.
    #[arg(long, default_value = "hmac-sha256")]
    pub alg: String,
    /// Backends, comma-separated, or `all`; default: the first available backend of each algorithm.
    #[arg(long)]
    pub backend: Option<String>,
    /// Acceleration, comma-separated: `hw` (the library's default), or an x86-64 ISA level ipsecmb
    /// keys in this process (`sse`, `avx`, `avx2`, `avx512`), e.g. `sse,avx2,avx512`. Software-only
    /// (`sw`) and masked levels run only in a child process, so `net` refuses them.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "hw")]
    pub accel: Vec<crate::mac::Accel>,
    /// Packet sizes in bytes of UDP payload (header + payload + tag), or size models
    /// (imix, uniform, rule-of-thumb, three-impulse, caida, a .csv, a pcap).
    #[arg(
        long,
        default_value = "64,128,256,512,1024,1280,1518",
        allow_hyphen_values = true
    )]
    pub sizes: String,
    /// Duration of each trial: `10s`, `0.3s`, `300ms`; from 10 ms to 24 h. `--trial` is the older name.
    #[arg(
        long = "duration",
        alias = "trial",
        value_name = "DURATION",
        default_value = "10s",
        allow_hyphen_values = true
    )]
    pub trial: String,
    /// Acceptable loss: `0` (zero loss), `0.001%`, or a fraction like `1e-5`.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    pub loss: String,
    /// Search resolution as a share of the maximum rate: `1%`, `0.5%`, `0.01`.
    #[arg(long, default_value = "1%", allow_hyphen_values = true)]
    pub resolution: String,
    /// Skip the search: one trial at this offered rate (packets/s).
    #[arg(long, allow_hyphen_values = true)]
    pub rate: Option<String>,
    /// Tag bytes per packet (default 16, or the algorithm's tag length if shorter).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_tag_len)]
    pub tag_len: Option<usize>,
    /// Anti-replay window in packets: 64 or 1024 (the maximum).
    #[arg(long, default_value_t = 64, allow_hyphen_values = true, value_parser = crate::spec::parse_whole::<u64>)]
    pub replay_window: u64,
    /// Also send this many bad packets (forged, truncated, replayed) per 1000 genuine ones.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = crate::spec::parse_whole::<u32>)]
    pub inject_bad: u32,
    /// CPU for the sender thread (default: the first online CPU when ≥ 2 are online).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_whole::<usize>)]
    pub sender_core: Option<usize>,
    /// CPU for the receiver thread (default: the second online CPU when ≥ 2 are online).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_whole::<usize>)]
    pub receiver_core: Option<usize>,
    /// Receiver socket buffer in bytes, 1 to 1G, with an optional binary suffix k, m or g in any case
    /// (`4M`, `256k`, `1G`, `212992`), or `default` for the system's.
    #[arg(long, default_value = "4M", allow_hyphen_values = true)]
    pub rcvbuf: String,
    /// Datagrams per system call on both sides, 1 to 1024: `sendmmsg`/`recvmmsg` batches (default
    /// 32); 1 sends and receives one datagram per call, the unbatched path, to measure what batching
    /// gives. Per-packet work (tag, parse, anti-replay, verify) is the same either way.
    #[arg(long, default_value_t = crate::net::batch_io::DEFAULT_BATCH, allow_hyphen_values = true, value_parser = parse_batch)]
    pub batch: usize,
    /// Require UDP GSO on the sender (`UDP_SEGMENT`: runs of equal-size datagrams go out as one
    /// message, which the kernel cuts apart): an error if the kernel refuses it. GSO is on by
    /// default whenever the kernel takes it; this flag only makes its absence an error.
    #[arg(long, conflicts_with = "no_gso")]
    pub gso: bool,
    /// Require UDP GRO on the receiver (`UDP_GRO`: the kernel may hand over several datagrams at
    /// once; each is still parsed, checked and verified on its own): an error if the kernel refuses
    /// it. On by default whenever the kernel takes it.
    #[arg(long, conflicts_with = "no_gro")]
    pub gro: bool,
    /// Send one datagram per message, without UDP GSO (on by default when the kernel takes it).
    #[arg(long)]
    pub no_gso: bool,
    /// Receive without UDP GRO (on by default when the kernel takes it).
    #[arg(long)]
    pub no_gro: bool,
    /// Do not measure the null-MAC baseline.
    #[arg(long)]
    pub no_null: bool,
    /// Write results JSON here (rewritten after each result).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per result here.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Seed for keys, payloads and size sequences.
    #[arg(long, default_value_t = 1, allow_hyphen_values = true, value_parser = crate::spec::parse_whole::<u64>)]
    pub seed: u64,
}

/// `--batch`: a whole number of datagrams per system call within [`limits::MAX_BATCH`]. clap puts
/// "invalid value … for '--batch <BATCH>'" before the message, so it does not repeat the flag.
fn parse_batch(text: &str) -> Result<usize, String> {
    let bounds = format!("give 1 (one call per datagram) to {}", limits::MAX_BATCH);
    let n: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a whole number of datagrams; {bounds}"))?;
    match limits::check_batch("--batch", n) {
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{n} datagrams per system call; {bounds}")),
    }
}

fn offload_wish(required: bool, off: bool) -> crate::net::batch_io::OffloadWish {
    use crate::net::batch_io::OffloadWish;
    match (required, off) {
        (_, true) => OffloadWish::Off,
        (true, false) => OffloadWish::Required,
        (false, false) => OffloadWish::IfOffered,
    }
}

/// `--alg`, `--backend`, `--accel` resolved, refusing switched functions: sender and receiver key in
/// this process; a switched function keys only in its own child, and a proxy to it would time pipe
/// round trips, not the MAC.
fn functions_in_this_process(o: &NetOptions) -> Result<Vec<Function>, CliError> {
    let functions: Vec<Function> = resolve_functions(&o.alg, o.backend.as_deref(), &o.accel)?;
    if let Some(f) = functions.iter().find(|f| f.is_process_switched()) {
        return Err(CliError::usage(format!(
            "--accel: {} runs only in a child process switched to {} (`run` measures it there); \
             net keys sender and receiver in this process: use hw, or an ISA level ipsecmb keys \
             in-process",
            f.id(),
            f.accel
        )));
    }
    Ok(functions)
}

fn plan(o: &NetOptions) -> Result<NetPlan, CliError> {
    let mut functions = functions_in_this_process(o)?;
    let trial = parse_duration("--duration", &o.trial)?;
    // The same checks `net receive` applies to a remote sender's `start` (crate::net::limits).
    let limit = |e: limits::LimitError| CliError::usage(e.to_string());
    limits::check_trial("--duration", trial).map_err(limit)?;
    let acceptable_loss = parse_loss(&o.loss)?;
    let resolution = parse_resolution(&o.resolution)?;
    let rate = o.rate.as_deref().map(parse_rate).transpose()?;
    limits::check_replay_window("--replay-window", o.replay_window).map_err(limit)?;
    if o.inject_bad > 1000 {
        return Err(CliError::usage(format!(
            "--inject-bad: {} per 1000 is too many; give 0 to 1000",
            o.inject_bad
        )));
    }
    let tag_len = limits::check_tag_len("--tag-len", o.tag_len.unwrap_or(DEFAULT_TAG_LEN), None)
        .map_err(limit)?;
    if let Some(asked) = o.tag_len {
        for f in &functions {
            limits::check_tag_len("--tag-len", asked, Some(f.algorithm)).map_err(limit)?;
        }
    }
    let sizes = parse_sizes(&o.sizes, o.seed, HEADER_LEN + tag_len)?;
    limits::check_covered_lengths(&functions, &sizes, tag_len).map_err(CliError::usage)?;
    let rcvbuf = parse_rcvbuf(&o.rcvbuf)?;
    let offloads = crate::net::batch_io::choose_offloads(
        offload_wish(o.gso, o.no_gso),
        offload_wish(o.gro, o.no_gro),
    )
    .map_err(CliError::usage)?;
    let online = host::online_cpus();
    crate::spec::check_online_cpu("--sender-core", o.sender_core, &online)?;
    crate::spec::check_online_cpu("--receiver-core", o.receiver_core, &online)?;
    let (sender_core, receiver_core) =
        crate::net::bench::choose_cores(o.sender_core, o.receiver_core, &online);
    // Checked here so a bad path is refused before any socket opens; locked again for the run in
    // `execute`.
    drop(super::files::prepare_owned(
        &super::files::run_outputs(o.json.as_deref(), o.csv.as_deref(), false),
        &[],
    )?);
    let null = crate::net::bench::null_baseline(&mut functions, !o.no_null);
    // The largest trial's tags, checked now so a run that cannot prepare them is refused before
    // anything runs (each trial checks its own again).
    let largest =
        crate::net::sender::packets_for(rate, crate::net::trial::DEFAULT_UNTHROTTLED_PPS, trial);
    let preparation_s = preparation_seconds(&functions, &sizes, tag_len, largest, o.inject_bad);
    let bound = (crate::net::sender::MAX_PREPARATION_MULTIPLE * trial.as_secs_f64())
        .max(crate::net::sender::MIN_PREPARATION_BOUND_S);
    if preparation_s > bound {
        return Err(CliError::usage(format!(
            "{}a {:.3} s trial prepares {largest} tags before its clock starts, {} on one core here, more than {} × the trial (or {} s); give a lower --rate or a shorter --duration",
            rate.map(|r| format!("--rate {r}: ")).unwrap_or_default(),
            trial.as_secs_f64(),
            super::human_duration(preparation_s),
            crate::net::sender::MAX_PREPARATION_MULTIPLE,
            crate::net::sender::MIN_PREPARATION_BOUND_S
        )));
    }
    crate::net::sender::check_memory(largest, trial, tag_len, o.inject_bad)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let search = SearchConfig {
        acceptable_loss,
        resolution,
        ..SearchConfig::default()
    };
    let mode = match rate {
        Some(pps) => Mode::FixedRate {
            pps,
            acceptable_loss,
        },
        None => Mode::Search(search),
    };
    Ok(NetPlan {
        config: NetConfig {
            functions,
            null,
            sizes,
            tag_len,
            mode,
            trial,
            replay_window: o.replay_window,
            inject_bad_per_1000: o.inject_bad,
            seed: o.seed,
            rcvbuf,
            batch: o.batch,
            gso: offloads.gso,
            gro: offloads.gro,
        },
        offloads: offloads.description,
        preparation_s,
        search,
        sender_core,
        receiver_core,
    })
}

static CANCEL: AtomicBool = AtomicBool::new(false);

fn cancel_flag() -> Arc<AtomicBool> {
    // Ctrl-C, SIGTERM and SIGHUP stop the current trial early and end the run, so namespaces are
    // still removed.
    let flag = Arc::new(AtomicBool::new(false));
    let handler_flag = flag.clone();
    let _ = ctrlc::set_handler(move || {
        CANCEL.store(true, Ordering::SeqCst);
        handler_flag.store(true, Ordering::SeqCst);
    });
    // `net … | head -1`: a closed standard output is an interrupt too, so namespaces and locks are
    // removed and finished results kept.
    let closed_flag = flag.clone();
    crate::stdio::interrupt_on_closed_stdout(move || {
        CANCEL.store(true, Ordering::SeqCst);
        closed_flag.store(true, Ordering::SeqCst);
    });
    flag
}

pub fn net(args: &NetArgs) -> Result<(), CliError> {
    match &args.mode {
        Some(NetMode::Receive(r)) => receive(r),
        Some(NetMode::Send(s)) => {
            // The receiver runs on the peer (`net receive --cores`), so a receiver core here would be
            // ignored; refused rather than accepted in silence (issue 47 N32).
            if let Some(core) = s.options.receiver_core {
                return Err(CliError::usage(format!(
                    "--receiver-core {core}: `net send` runs no receiver here; pin the peer's with `macbench net receive --cores N`, and leave --receiver-core out"
                )));
            }
            let to = parse_addr("--to", &s.to)?;
            let plan = plan(&s.options)?;
            let cancel = cancel_flag();
            let path = Path::Remote(RemotePath::connect(to, plan.sender_core, cancel)?);
            execute(&s.options, plan, path)
        }
        None => {
            let plan = plan(&args.options)?;
            if args.local.netns {
                crate::net::netns::check_available()?;
            }
            let cancel = cancel_flag();
            let netns = if args.local.netns {
                Some(NetnsPair::create()?)
            } else {
                None
            };
            let path = Path::Local(LocalPath {
                netns,
                sender_core: plan.sender_core,
                receiver_core: plan.receiver_core,
                cancel,
            });
            execute(&args.options, plan, path)
        }
    }
}

/// Seconds the slowest of `functions` takes to prepare `packets` tags (and the bad packets'
/// forged ones) at the largest of `sizes`, measured on a short burst; 0 when none can be measured.
fn preparation_seconds(
    functions: &[crate::mac::Function],
    sizes: &[crate::net::sender::SizeSpec],
    tag_len: usize,
    packets: u64,
    inject_bad: u32,
) -> f64 {
    // The datagram's length bounds what the MAC covers (its header and payload).
    let largest = sizes
        .iter()
        .filter_map(|s| s.bytes.or_else(|| s.sequence.iter().copied().max()))
        .max()
        .unwrap_or(0) as usize;
    let ns = functions
        .iter()
        .filter_map(|f| crate::net::sender::tag_ns(f, largest, tag_len))
        .fold(0.0, f64::max);
    ns * packets as f64 * (1.0 + f64::from(inject_bad) / 1000.0) / 1e9
}

/// Say up front how long the run can take (the default search runs for many minutes); returns the
/// number of results.
fn expected_duration(plan: &NetPlan, trial_s: f64) -> usize {
    let (results, trials) = (plan.results(), plan.trials());
    // Each trial's tags are computed before its clock starts: that time is part of the wait.
    let preparing = if plan.preparation_s >= 0.01 {
        format!(
            ", each trial after up to {} preparing its tags",
            super::human_duration(plan.preparation_s)
        )
    } else {
        String::new()
    };
    crate::errln!(
        "macbench net: {results} result(s) × up to {trials} trial(s) of {:.3} s{preparing}: up to {}",
        trial_s,
        super::human_duration((results * trials) as f64 * (trial_s + plan.preparation_s))
    );
    results
}

fn execute(o: &NetOptions, plan: NetPlan, path: Path) -> Result<(), CliError> {
    let mut doc = session::net_document(&plan, &path);
    crate::outln!(
        "macbench net: {}; {}; trial {:.3} s; acceptable loss {}; size = {}",
        doc.config.transport,
        doc.config.offloads,
        doc.config.trial_s,
        if plan.search.acceptable_loss == 0.0 {
            "0".to_string()
        } else {
            // Compact: `--loss 1e-300` printed three hundred zeros (issue 47 M34).
            format!(
                "{}%",
                crate::number::compact(plan.search.acceptable_loss * 100.0)
            )
        },
        report::SIZE_DEFINITION
    );
    let results = expected_duration(&plan, doc.config.trial_s);
    let progress = super::progress_bar(results);
    let table = report::table(crate::table::Style::detect());
    let say = |line: String| super::say(progress.as_ref(), &line);
    say(table.header());
    let _locked = super::files::prepare_owned(
        &super::files::run_outputs(o.json.as_deref(), o.csv.as_deref(), false),
        &[],
    )?;
    let files = session::NetFiles {
        json: o.json.as_deref(),
        csv: o.csv.as_deref(),
    };
    let outcome = session::run_net(&plan, &mut doc, path, &files, &CANCEL, |r: &NetResult| {
        say(report::table_line(&table, r));
        if let Some(pb) = &progress {
            pb.inc(1);
        }
    });
    if let Some(pb) = &progress {
        pb.finish_and_clear();
    }
    if outcome? {
        // Issue 47, M1: with nothing finished, nothing was kept; the files are as they were.
        let message = match doc.results.len() {
            0 => "interrupted before any result finished: nothing kept, the output files are as they were".to_string(),
            n => format!("interrupted: {n} finished result(s) kept, marked \"partial\": true"),
        };
        return Err(CliError { code: 130, message });
    }
    Ok(())
}

fn receive(r: &ReceiveArgs) -> Result<(), CliError> {
    let listen = parse_addr("--listen", &r.listen)?;
    let timeout = parse_duration("--timeout", &r.timeout)?;
    let core = r
        .core
        .as_deref()
        .map(|c| crate::spec::parse_one_cpu("--cores", c, &host::online_cpus()))
        .transpose()?;
    let (udp, tcp) = control::bind(listen)?;
    let local = udp
        .local_addr()
        .map_err(|e| CliError::failure(e.to_string()))?;
    // The Ctrl-C handler goes in before the "listening" line, which tells a script it may signal us.
    let cancel = cancel_flag();
    crate::outln!("macbench net receive: listening on {local} (UDP data, TCP control)");
    let options = ServeOptions {
        listen: local,
        core,
        once: r.once,
        timeout,
        cancel,
    };
    control::serve(udp, tcp, &options, |line| crate::outln!("{line}"))?;
    if CANCEL.load(Ordering::SeqCst) {
        return Err(CliError {
            code: 130,
            message: "interrupted".to_string(),
        });
    }
    Ok(())
}
