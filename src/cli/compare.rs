//! `macbench compare --against PEER`: our single-session numbers beside the peer's own benchmark.

use super::files::{Records, RowOutputs};
use super::CliError;
use crate::compare::{Inputs, Outcome, DEFAULT_ROUNDS, MAX_ROUNDS};
use crate::engine::{Dispatch, SizeSource};
use crate::mac::Accel;
use crate::peers::{self, Basis, Peer};
use crate::spec::resolve_algorithms;

#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// Reference tool: openssl (`openssl speed`), cryptopp (`cryptest b2`), botan (`botan speed`),
    /// ipsecmb (Intel ipsec-mb's `ipsec_perf`, built from source: docs/backends.md "Intel ipsec-mb") or
    /// dpdk (`dpdk-test-crypto-perf` on the device of --dpdk-device). Binaries come from PATH or
    /// $MACBENCH_OPENSSL, $MACBENCH_CRYPTEST, $MACBENCH_BOTAN, $MACBENCH_IPSEC_PERF,
    /// $MACBENCH_DPDK_CRYPTO_PERF.
    #[arg(long, value_name = "openssl|cryptopp|botan|ipsecmb|dpdk")]
    pub against: String,
    /// Algorithms, comma-separated (only those the peer's benchmark offers are compared).
    #[arg(long, default_value = "hmac-sha256,cmac-aes128")]
    pub alg: String,
    /// Message sizes in bytes, from 1: numbers or power-of-two ranges (no size models: the peers take fixed sizes).
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
    /// How our side hands messages over (`single`, `burst:N`, `inflight:N`, `all`, `stream`); default:
    /// as the peer does, `burst:16` against ipsecmb (ipsec_perf keeps the job manager full), `all`
    /// against dpdk (beside crypto-perf's pmd-cyclecount; other modes run its throughput test), `stream`
    /// against a peer that streams (botan 2.x, cryptest b2) where our function can, `single` otherwise.
    #[arg(long, allow_hyphen_values = true)]
    pub dispatch: Option<String>,
    /// What both sides divide by: `user` (user CPU time: `openssl speed`'s default), `cpu` (user +
    /// system: `cryptest b2`'s `clock()`) or `wall` (`openssl speed -elapsed`, `botan speed`,
    /// `ipsec_perf`); default: the peer's own. A basis the peer cannot measure on is refused.
    #[arg(long, value_enum, allow_hyphen_values = true)]
    pub basis: Option<Basis>,
    /// Rounds per size: peer, ours, peer, ours … (order alternating), each `--duration` long; the
    /// ratio is the median of the rounds with a 95 % bootstrap interval. Fewer than 5 rounds give a
    /// ratio and its range but no verdict: their range is no 95 % interval.
    #[arg(long, default_value_t = DEFAULT_ROUNDS, allow_hyphen_values = true, value_parser = crate::spec::parse_count::<usize>)]
    pub rounds: usize,
    /// Refuse to start when other processes use more than 10 % of the core (sampled for 0.25 s
    /// first) or when that cannot be read: one line, exit 1.
    #[arg(long)]
    pub quiet_check: bool,
    #[command(flatten)]
    pub outputs: RowOutputs,
}

/// `--basis`, or the peer's own; one the peer's tool cannot measure on is a usage error.
fn basis(args: &CompareArgs, peer: Peer) -> Result<Basis, CliError> {
    let Some(basis) = args.basis else {
        return Ok(peer.default_basis());
    };
    if peer.bases().contains(&basis) {
        return Ok(basis);
    }
    let valid: Vec<&str> = peer.bases().iter().map(|b| b.name()).collect();
    Err(CliError::usage(format!(
        "--basis {basis}: {} measures on {} only",
        peer.name(),
        valid.join(" or ")
    )))
}

fn inputs(args: &CompareArgs) -> Result<Inputs, CliError> {
    let peer = Peer::parse(&args.against).ok_or_else(|| {
        CliError::usage(format!(
            "--against: {:?} is not a known peer; valid: openssl, cryptopp, botan, ipsecmb, dpdk",
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
        None if peer == Peer::Dpdk => Dispatch::All,
        None => Dispatch::Single,
    };
    if peer == Peer::Dpdk && dispatch == Dispatch::Stream {
        return Err(CliError::usage(
            "--dispatch stream: a device takes whole messages as ops; against dpdk give single, burst:N, inflight:N or all",
        ));
    }
    let basis = basis(args, peer)?;
    let rounds = crate::spec::check_count("--rounds", args.rounds, MAX_ROUNDS)?;
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
    // Refused here rather than by the peer after our side has run: openssl speed exits with
    // "Non-positive number" for -bytes 0, and an empty message has no cycles per byte to set side by side.
    if sizes.contains(&0) {
        return Err(CliError::usage(format!(
            "--sizes 0: compare takes sizes of 1 byte or more ({}'s benchmark times no empty messages)",
            peer.name()
        )));
    }
    crate::compare::check_total_time(peer, algorithms.len(), sizes.len(), rounds, seconds)?;
    if let Some(b) = &args.backend {
        crate::spec::resolve_backend(b)?;
    }
    let functions =
        crate::compare::our_functions(args.backend.as_deref(), peer, accel, &algorithms, &sizes)?;
    let online = crate::system::online_cpus();
    let core = match &args.core {
        Some(c) => crate::spec::parse_one_cpu("--cores", c, &online)?,
        None => online.first().copied().unwrap_or(0),
    };
    if peer == Peer::Dpdk {
        // Refused before anything runs: the tool's two lcores, and a device it can be told by name.
        peers::crypto_perf::main_lcore_cpu(core, &online).map_err(CliError::usage)?;
        peers::crypto_perf::devtype(&peers::crypto_perf::device()).map_err(CliError::usage)?;
    }
    // A device that cannot start or serve a function is refused before either side runs (exit 2).
    let functions = super::on_the_device(functions, true)?;
    Ok(Inputs {
        peer,
        algorithms,
        functions,
        sizes,
        core,
        seconds,
        accel,
        dispatch,
        dispatch_given: args.dispatch.is_some(),
        basis,
        rounds,
    })
}

pub fn compare(args: &CompareArgs) -> Result<(), CliError> {
    let started = std::time::Instant::now();
    let inputs = inputs(args)?;
    let _locked = args.outputs.prepare(&[])?;
    let peer = inputs.peer;
    let compared = match crate::compare::run(&inputs, args.quiet_check)? {
        Outcome::NotInstalled { rows, reference_hz } => {
            crate::out!(
                "{}",
                peers::render(&rows, reference_hz, crate::table::Style::detect())
            );
            // The row says how to install the peer; the exit code says nothing was compared.
            return Err(CliError::failure(format!(
                "nothing was compared: {} is not installed",
                peer.name()
            )));
        }
        Outcome::Compared(compared) => compared,
    };
    crate::out!(
        "{}",
        peers::render(
            &compared.rows,
            compared.reference_hz,
            crate::table::Style::detect()
        )
    );
    crate::errln!(
        "macbench: took {} (announced {})",
        super::human_duration(started.elapsed().as_secs_f64()),
        super::human_duration(compared.announced_s)
    );
    let records = Records::from_serialized(&compared.file.rows).map_err(CliError::failure)?;
    args.outputs
        .write_document(Some(&compared.file), &records)?;
    if compared.rows.iter().all(|r| r.ratio.is_none()) {
        // The rows' notes say why at each size; the exit code says no pair of numbers came out.
        return Err(CliError::failure(format!(
            "nothing was compared: no size has both our figure and {}'s",
            peer.name()
        )));
    }
    Ok(())
}
