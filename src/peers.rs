//! `macbench compare`: validation against the reference benchmark of another library (docs/methodology.md §7,
//! Rashwan et al. §III.D).
//!
//! We run the peer's own tool on the same algorithm and sizes, parse its machine-readable output, convert
//! its bytes/second to cycles/byte with *our* reference rate `f`, and set it beside our own single-session
//! measurement (one session pinned to one core, as the peers are single-threaded). The parsers are pure
//! functions over text so they are tested on captured outputs (tests/data/peers/).
//!
//! What each peer measures, honestly stated in the table's notes:
//! - `openssl speed -mr -bytes N -hmac D | -cmac C`: whole messages of N bytes (init, update, final), CPU time.
//! - `botan speed --format=json --buf-size=N`: botan 2.x streams N-byte updates into *one* MAC and finalises
//!   once, so its small sizes are not per-message costs ([`Quantity::Stream`]); botan 3 finalises per message.
//! - `cryptest b2 SECONDS GHZ` (Crypto++): streams 2 KiB updates, no per-message size at all; it is compared
//!   with our stream of 2 KiB updates.
//!
//! A verdict needs like with like ([`Unlike`]): the same library and the same quantity on both sides.
//! - `ipsec_perf --hash-algo A --job-size N,… -o 0 --arch L --force-job-api` (Intel ipsec-mb's own
//!   tool, built from the library's source: docs/backends.md "Intel ipsec-mb"): jobs of exactly N bytes submitted
//!   back to back through the job API, flushed once at the end; it prints TSC cycles per job, which on
//!   x86 are our reference cycles as they are. Compared with our `burst:16` dispatch by default. Its
//!   manager is never drained between jobs ([`Quantity::JobStream`]), while each of our calls must
//!   hand every tag back and so drains it: where that takes `IMB_FLUSH_JOB` (a multi-buffer function
//!   with jobs left in its lanes) the row gets no verdict, with the flushes named.
//!
//! - `dpdk-test-crypto-perf` (DPDK's own cryptodev benchmark) on the device our `dpdk` backend drives:
//!   `pmd-cyclecount` beside our `all` (ops built in advance, dispatched at once, drained), and
//!   `throughput`, which never waits for a burst to come back, beside our bursts (no verdict):
//!   [`crypto_perf`].
//!
//! A peer that is not installed becomes a row that says so and how to install it: never an invented number.

use std::process::Command;

pub mod crypto_perf;
pub use crypto_perf::DeviceTest;

use crate::mac::Accel;
use crate::table::{Style, Table};

/// A reference tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Openssl,
    Cryptopp,
    Botan,
    IpsecMb,
    Dpdk,
}

/// What a cycles/byte figure divides by. The peers differ: `openssl speed` counts user CPU time
/// (`times()`) unless given `-elapsed`; `cryptest b2` counts the process's CPU time (`clock()`, user +
/// system); `botan speed` and `ipsec_perf` count wall time (a monotonic clock, the TSC). Comparing
/// across bases would charge one side with time the other leaves out (kernel time, time off the CPU).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// User CPU time only (`getrusage` user part; `openssl speed`'s default).
    User,
    /// CPU time, user + system (macbench's absolute cycles; `cryptest b2`'s `clock()`).
    Cpu,
    /// Wall time (`openssl speed -elapsed`, `botan speed`, `ipsec_perf`'s and
    /// `dpdk-test-crypto-perf`'s TSC).
    Wall,
}

impl Basis {
    pub fn name(self) -> &'static str {
        match self {
            Basis::User => "user",
            Basis::Cpu => "cpu",
            Basis::Wall => "wall",
        }
    }
}

impl std::fmt::Display for Basis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a figure is a rate of. A per-message figure pays each message's initialisation and
/// finalisation (HMAC's two extra compressions, CMAC's last block); a streamed figure pays them once
/// per long MAC, so the two differ most at small sizes and are never the same quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Whole messages of the size, each started, updated and finalised.
    Messages,
    /// One long MAC fed `chunk`-byte updates, finalised once at the end.
    Stream { chunk: u32 },
    /// Whole messages as jobs submitted back to back to a multi-buffer job manager that is never
    /// drained between them (`ipsec_perf`'s job loop: one flush at the end of a run of ~2 MB of
    /// jobs), so lanes stay full and every job is handed back by a later submit. Messages whose call
    /// must return every tag drain the manager (`IMB_FLUSH_JOB`) at each call's end, which this
    /// figure leaves out; where no job of a call needs a flush the two are the same figure.
    JobStream,
    /// Whole messages as ops on a device, `depth` of them built before the clock, enqueued at once
    /// and drained before the next (`dpdk-test-crypto-perf --ptest pmd-cyclecount` with its ring
    /// and burst at `depth`; our `--dispatch all`).
    Drained { depth: u32 },
    /// Whole messages as ops on a device, enqueued `burst` at a time while earlier ones complete,
    /// never waiting for a burst to come back; drained once at the run's end
    /// (`dpdk-test-crypto-perf --ptest throughput`).
    Undrained { burst: u32 },
}

impl Quantity {
    /// As the table's notes say it.
    pub fn describe(self) -> String {
        match self {
            Quantity::Messages => "whole messages".to_string(),
            Quantity::Stream { chunk } => format!("a stream of {chunk}-byte updates"),
            Quantity::JobStream => {
                "whole messages as a job stream never drained between jobs".to_string()
            }
            Quantity::Drained { depth } => {
                format!("whole messages as ops, {depth} built in advance, dispatched at once and drained")
            }
            Quantity::Undrained { burst } => format!(
                "whole messages as ops in bursts of {burst}, never waiting for a burst to come back"
            ),
        }
    }
}

/// The update size `cryptest b2` streams (Crypto++ bench1.cpp's `BUF_SIZE`): it takes no size.
pub const CRYPTEST_CHUNK: u32 = 2048;

/// Why a row with a ratio gets no verdict: the two figures are not the same thing, so their ratio
/// says nothing about the harness (ratio shown, not judged, counted apart in the summary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unlike {
    /// Our function comes from another library than the peer's tool.
    Library { ours: String, theirs: &'static str },
    /// The two sides measure different quantities; says what each measured.
    Quantity {
        ours: Quantity,
        theirs: Quantity,
        why: String,
    },
}

impl Unlike {
    /// The verdict column's words.
    pub fn verdict_text(&self) -> &'static str {
        match self {
            Unlike::Library { .. } => "no verdict: different library",
            Unlike::Quantity { .. } => "no verdict: different quantity",
        }
    }

    /// The note: what differs, in full.
    pub fn note(&self) -> String {
        match self {
            Unlike::Library { ours, theirs } => format!(
                "different library: ours is {ours}, the peer's tool runs {theirs}, so the ratio compares libraries, not the harness"
            ),
            Unlike::Quantity { ours, theirs, why } => format!(
                "different quantity: ours {}, theirs {} ({why})",
                ours.describe(),
                theirs.describe()
            ),
        }
    }
}

impl Peer {
    pub const ALL: [Peer; 5] = [
        Peer::Openssl,
        Peer::Cryptopp,
        Peer::Botan,
        Peer::IpsecMb,
        Peer::Dpdk,
    ];

    pub fn parse(name: &str) -> Option<Peer> {
        match name {
            "openssl" => Some(Peer::Openssl),
            "cryptopp" | "crypto++" | "cryptest" => Some(Peer::Cryptopp),
            "botan" => Some(Peer::Botan),
            "ipsecmb" | "ipsec-mb" | "ipsec_perf" => Some(Peer::IpsecMb),
            "dpdk" | "dpdk-test-crypto-perf" => Some(Peer::Dpdk),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Peer::Openssl => "openssl",
            Peer::Cryptopp => "cryptopp",
            Peer::Botan => "botan",
            Peer::IpsecMb => "ipsecmb",
            Peer::Dpdk => "dpdk",
        }
    }

    /// Environment variable naming the peer's binary (tests point it at a missing one).
    pub fn env_var(self) -> &'static str {
        match self {
            Peer::Openssl => "MACBENCH_OPENSSL",
            Peer::Cryptopp => "MACBENCH_CRYPTEST",
            Peer::Botan => "MACBENCH_BOTAN",
            Peer::IpsecMb => "MACBENCH_IPSEC_PERF",
            Peer::Dpdk => "MACBENCH_DPDK_CRYPTO_PERF",
        }
    }

    pub fn default_binary(self) -> &'static str {
        match self {
            Peer::Openssl => "openssl",
            Peer::Cryptopp => "cryptest",
            Peer::Botan => "botan",
            Peer::IpsecMb => "ipsec_perf",
            Peer::Dpdk => "dpdk-test-crypto-perf",
        }
    }

    /// The binary to run: `$MACBENCH_…` or the default name on PATH.
    pub fn binary(self) -> String {
        std::env::var(self.env_var())
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| self.default_binary().to_string())
    }

    /// The Debian package that provides the tool.
    pub fn install_hint(self) -> &'static str {
        match self {
            Peer::Openssl => "apt-get install openssl",
            Peer::Cryptopp => "apt-get install libcrypto++-utils",
            Peer::Botan => "apt-get install botan",
            Peer::Dpdk => "apt-get install dpdk",
            // No Debian package ships it: it is built from the library's own source package.
            Peer::IpsecMb => {
                "tools/build-ipsec-perf (Debian's intel-ipsec-mb source package, nasm, make)"
            }
        }
    }

    /// The bases the peer's tool can measure on, its default first.
    pub fn bases(self) -> &'static [Basis] {
        match self {
            Peer::Openssl => &[Basis::User, Basis::Wall],
            Peer::Cryptopp => &[Basis::Cpu],
            Peer::Botan | Peer::IpsecMb | Peer::Dpdk => &[Basis::Wall],
        }
    }

    /// The basis the peer's tool measures on by default.
    pub fn default_basis(self) -> Basis {
        self.bases()[0]
    }

    /// What the peer's figure at `size` is a rate of. `openssl speed` times whole messages;
    /// `ipsec_perf` whole messages as jobs submitted back to back and never drained before the run
    /// ends ([`Quantity::JobStream`]: perf/ipsec_perf.c, `do_test`); `botan speed` 1.x and 2.x
    /// stream `--buf-size` updates into one MAC and finalise once (botan 3 finalises per message);
    /// `cryptest b2` streams 2 KiB updates, whatever the size asked; `dpdk-test-crypto-perf` what its
    /// test times (`device`, decided from our dispatch; its own default is a throughput test in
    /// bursts of 32).
    pub fn quantity(self, version: &str, size: u32, device: Option<DeviceTest>) -> Quantity {
        match self {
            Peer::Openssl => Quantity::Messages,
            Peer::Dpdk => device
                .unwrap_or(DeviceTest::Bursts { burst: 32 })
                .quantity(),
            Peer::IpsecMb => Quantity::JobStream,
            Peer::Botan if botan_streams(version) => Quantity::Stream { chunk: size },
            Peer::Botan => Quantity::Messages,
            Peer::Cryptopp => Quantity::Stream {
                chunk: CRYPTEST_CHUNK,
            },
        }
    }

    /// Our backend wrapping the same library, if we have one: compared by default. Every peer's
    /// library has a backend here named as the peer is.
    pub fn same_library_backend(self) -> &'static str {
        self.name()
    }

    /// The peer's name for one of our algorithms, if its benchmark offers it.
    pub fn algorithm_name(self, ours: &str) -> Option<&'static str> {
        let table: &[(&str, &str)] = match self {
            Peer::Openssl => &[
                ("hmac-md5", "md5"),
                ("hmac-sha1", "sha1"),
                ("hmac-sha256", "sha256"),
                ("hmac-sha512", "sha512"),
                ("hmac-sha3-256", "sha3-256"),
                ("cmac-aes128", "aes-128-cbc"),
                ("cmac-aes256", "aes-256-cbc"),
            ],
            Peer::Botan => &[
                ("hmac-md5", "HMAC(MD5)"),
                ("hmac-sha1", "HMAC(SHA-1)"),
                ("hmac-sha256", "HMAC(SHA-256)"),
                ("hmac-sha512", "HMAC(SHA-512)"),
                ("hmac-sha3-256", "HMAC(SHA-3(256))"),
                ("cmac-aes128", "CMAC(AES-128)"),
                ("cmac-aes256", "CMAC(AES-256)"),
                ("cmac-twofish", "CMAC(Twofish)"),
                ("cmac-serpent", "CMAC(Serpent)"),
                ("cbcmac-aes128", "CBC-MAC(AES-128)"),
                ("gmac-aes128", "GMAC(AES-128)"),
                ("poly1305", "Poly1305"),
                ("siphash-2-4", "SipHash(2,4)"),
            ],
            // ipsec_perf --hash-algo names (1.3). Its `aes-cmac-bitlen` hashes 8N − 4 bits of the job
            // with no COUNT/BEARER/DIRECTION header, not EIA2's framing, so EIA2 is not paired with it.
            Peer::IpsecMb => &[
                ("hmac-md5", "md5-hmac"),
                ("hmac-sha1", "sha1-hmac"),
                ("hmac-sha224", "sha224-hmac"),
                ("hmac-sha256", "sha256-hmac"),
                ("hmac-sha384", "sha384-hmac"),
                ("hmac-sha512", "sha512-hmac"),
                ("cmac-aes128", "aes-cmac"),
                ("cmac-aes256", "aes-cmac-256"),
                ("xcbc-aes128-96", "aes-xcbc"),
                ("gmac-aes128", "aes-gmac-128"),
                ("gmac-aes192", "aes-gmac-192"),
                ("gmac-aes256", "aes-gmac-256"),
                ("poly1305", "poly-1305"),
                // Whole bytes as bits (`job size × 8`), as ours.
                ("eia3-zuc128", "zuc-eia3"),
                ("uia2-snow3g", "snow3g-uia2"),
                ("uia1-kasumi", "kasumi-uia1"),
            ],
            Peer::Dpdk => crypto_perf::ALGORITHMS,
            Peer::Cryptopp => &[
                ("hmac-sha1", "HMAC(SHA-1)"),
                ("hmac-sha256", "HMAC(SHA-256)"),
                ("cmac-aes128", "CMAC(AES)"),
                ("gmac-aes128", "GMAC(AES)"),
                ("vmac-aes128-64", "VMAC(AES)-64"),
                ("vmac-aes128-128", "VMAC(AES)-128"),
            ],
        };
        table.iter().find(|(o, _)| *o == ours).map(|(_, p)| *p)
    }
}

impl Peer {
    /// How finely the peer's clock reads the span it divides by, in seconds, when that is coarse
    /// enough to matter (above 1 µs): `openssl speed` on a Unix with `_SC_CLK_TCK` times its runs
    /// with `times()`, in clock ticks (10 ms at the usual 100 Hz), on both its user-time and its
    /// `-elapsed` basis (apps/lib/apps.c, `app_tminterval`). `cryptest b2`'s `clock()` reads in
    /// µs, `botan speed` in ns, `ipsec_perf` the TSC: `None`.
    pub fn clock_resolution_s(self) -> Option<f64> {
        match self {
            Peer::Openssl => {
                // POSIX requires the constant; an error falls back to Linux's USER_HZ.
                let ticks = crate::system::kernel::clock_ticks_per_second().unwrap_or(100.0);
                Some(1.0 / ticks)
            }
            Peer::Cryptopp | Peer::Botan | Peer::IpsecMb | Peer::Dpdk => None,
        }
    }

    /// How the peer's output names one of our algorithms (`openssl speed` prints `hmac(sha256)`).
    pub fn result_name(self, ours: &str) -> Option<String> {
        let n = self.algorithm_name(ours)?;
        Some(match self {
            Peer::Openssl if ours.starts_with("cmac") => format!("cmac({n})"),
            Peer::Openssl => format!("hmac({n})"),
            Peer::IpsecMb => n.to_string(),
            _ => n.to_string(),
        })
    }
}

/// One number from a peer: bytes per second for an algorithm (the peer's name) at a size.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerPoint {
    pub algorithm: String,
    /// Message (or update) size; `None` for a stream without sizes (cryptest).
    pub size: Option<u32>,
    pub bytes_per_second: f64,
}

/// Parse `openssl speed -mr` output: `+H:16:64:…` names the sizes of the following `+F:i:name:v1:v2:…`
/// lines, whose values are bytes per second.
pub fn parse_openssl_mr(text: &str) -> Result<Vec<PeerPoint>, String> {
    let mut sizes: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("+H:") {
            sizes = rest
                .split(':')
                .map(|s| s.trim().parse::<u32>())
                .collect::<Result<_, _>>()
                .map_err(|e| format!("openssl speed line {}: bad +H sizes ({e})", n + 1))?;
        } else if let Some(rest) = line.strip_prefix("+F:") {
            let mut fields = rest.split(':');
            let _index = fields.next();
            let name = fields
                .next()
                .ok_or_else(|| format!("openssl speed line {}: +F without a name", n + 1))?;
            let values: Vec<f64> = fields
                .map(|v| v.trim().parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|e| format!("openssl speed line {}: bad +F value ({e})", n + 1))?;
            if values.len() != sizes.len() {
                return Err(format!(
                    "openssl speed line {}: {} values for {} sizes in the preceding +H line",
                    n + 1,
                    values.len(),
                    sizes.len()
                ));
            }
            out.extend(sizes.iter().zip(values).map(|(&size, v)| PeerPoint {
                algorithm: name.to_string(),
                size: Some(size),
                bytes_per_second: v,
            }));
        }
    }
    if out.is_empty() {
        return Err("openssl speed printed no +F result line".into());
    }
    Ok(out)
}

/// Parse `botan speed --format=json`: an array of `{algo, op, events, bps, buf_size, nanos}`.
pub fn parse_botan_json(text: &str) -> Result<Vec<PeerPoint>, String> {
    #[derive(serde::Deserialize)]
    struct Entry {
        algo: String,
        #[serde(default)]
        op: String,
        bps: Option<f64>,
        buf_size: Option<u32>,
    }
    // botan may print notes before the array; parse from the first '['.
    let start = text.find('[').ok_or("botan speed printed no JSON array")?;
    let entries: Vec<Entry> =
        serde_json::from_str(&text[start..]).map_err(|e| format!("botan speed JSON: {e}"))?;
    let out: Vec<PeerPoint> = entries
        .into_iter()
        .filter(|e| e.op.is_empty() || e.op == "mac")
        .filter_map(|e| {
            Some(PeerPoint {
                algorithm: e.algo,
                size: Some(e.buf_size?),
                bytes_per_second: e.bps?,
            })
        })
        .collect();
    if out.is_empty() {
        return Err("botan speed JSON holds no MAC result".into());
    }
    Ok(out)
}

/// One figure of `ipsec_perf`: TSC cycles per job of `size` bytes on the code path `arch`.
#[derive(Debug, Clone, PartialEq)]
pub struct IpsecPerfPoint {
    pub arch: String,
    pub size: u32,
    pub cycles: f64,
}

/// Parse `ipsec_perf`'s table: an `ARCH` line naming one column per code path (`SSE`, `AVX`, …),
/// a few more header lines, then `size<TAB>cycles…` rows, one cycle count per column.
pub fn parse_ipsec_perf(text: &str) -> Result<Vec<IpsecPerfPoint>, String> {
    let mut arches: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        if fields.first() == Some(&"ARCH") {
            arches = fields[1..].iter().map(|a| a.to_string()).collect();
            continue;
        }
        let Ok(size) = fields[0].parse::<u32>() else {
            continue;
        };
        if arches.is_empty() {
            return Err(format!(
                "ipsec_perf line {}: a result before the ARCH line",
                n + 1
            ));
        }
        if fields.len() != arches.len() + 1 {
            return Err(format!(
                "ipsec_perf line {}: {} values for {} code paths",
                n + 1,
                fields.len() - 1,
                arches.len()
            ));
        }
        for (arch, value) in arches.iter().zip(&fields[1..]) {
            let cycles = value
                .parse::<f64>()
                .ok()
                .filter(|c| c.is_finite() && *c > 0.0)
                .ok_or_else(|| format!("ipsec_perf line {}: bad cycle count {value:?}", n + 1))?;
            out.push(IpsecPerfPoint {
                arch: arch.clone(),
                size,
                cycles,
            });
        }
    }
    if out.is_empty() {
        return Err("ipsec_perf printed no result row".into());
    }
    Ok(out)
}

/// `ipsec_perf --arch` for one of our accelerations: the level's code path, or for `hw` the
/// library's best (`--arch-best`, the path `init_mb_mgr_auto` also takes).
pub fn ipsec_perf_arch(accel: Accel) -> Result<Vec<String>, String> {
    let arch = match accel {
        Accel::Hw => return Ok(vec!["--arch-best".into()]),
        Accel::Sse => "SSE",
        Accel::Avx => "AVX",
        Accel::Avx2 => "AVX2",
        Accel::Avx512 => "AVX512",
        Accel::Sw => {
            return Err("ipsec_perf has no software-only path (--accel sw)".into());
        }
    };
    Ok(vec!["--arch".into(), arch.into()])
}

/// Parse `cryptest b2` output: HTML rows `<TR><TD>name<TD>provider<TD>MiB/s<TD>cycles/byte…`.
/// Names such as `HMAC(SHA-256) (128-bit key)` lose their key-length suffix.
pub fn parse_cryptest(text: &str) -> Result<Vec<PeerPoint>, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("<TR><TD>") else {
            continue;
        };
        let cells: Vec<&str> = rest.split("<TD>").map(str::trim).collect();
        if cells.len() < 3 {
            continue;
        }
        let Ok(mib) = cells[2].parse::<f64>() else {
            continue;
        };
        let name = match cells[0].find(" (") {
            Some(i) => &cells[0][..i],
            None => cells[0],
        };
        out.push(PeerPoint {
            algorithm: name.to_string(),
            size: None,
            bytes_per_second: mib * 1024.0 * 1024.0,
        });
    }
    if out.is_empty() {
        return Err("cryptest printed no benchmark row".into());
    }
    Ok(out)
}

/// What running a peer gave (after [`probe`] found it).
#[derive(Debug, Clone)]
pub enum PeerRun {
    /// It failed or printed nothing usable.
    Failed(String),
    Ran {
        version: String,
        points: Vec<PeerPoint>,
        /// What the peer's numbers mean, where that differs from whole messages.
        note: Option<String>,
        /// The CPUs the tool's process was allowed on, read back from the kernel while it ran; `Err`
        /// says why it could not be read (it had exited already).
        cpus: Result<Vec<usize>, String>,
    },
}

impl PeerRun {
    /// A peer run that gave `points` (with `note`), or failed with their error.
    fn from_points(
        version: String,
        points: Result<(Vec<PeerPoint>, PeerCpus), String>,
        note: Option<String>,
    ) -> PeerRun {
        match points {
            Ok((points, cpus)) => PeerRun::Ran {
                version,
                points,
                note,
                cpus,
            },
            Err(e) => PeerRun::Failed(e),
        }
    }
}

/// Why a tool run gave no output to parse.
enum ToolError {
    /// It could not be started (not installed, not executable).
    Spawn(String),
    /// It started and failed.
    Exit(String),
}

impl ToolError {
    fn text(self) -> String {
        match self {
            ToolError::Spawn(s) | ToolError::Exit(s) => s,
        }
    }
}

/// Where `binary` is: itself when it names a path, else the first executable of that name on `PATH`.
/// Looked up before starting it, so a missing tool is told apart from one that failed the same way
/// everywhere: under qemu-user, and wherever a launcher reports a failed exec as exit status 127
/// rather than as an error from spawn.
fn locate(binary: &str) -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if binary.contains('/') {
        let path = std::path::PathBuf::from(binary);
        return if executable(&path) {
            Ok(path)
        } else {
            Err(format!("{binary}: no such executable file"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(binary))
        .find(|p| executable(p))
        .ok_or_else(|| format!("{binary}: not found on PATH"))
}

/// The CPUs a tool ran on, read back ([`PeerRun::Ran`]'s `cpus`).
type PeerCpus = Result<Vec<usize>, String>;

/// What a tool printed, and the CPUs it was allowed on.
struct ToolOutput {
    stdout: String,
    stderr: String,
    cpus: PeerCpus,
}

fn run_tool(binary: &str, args: &[String]) -> Result<String, ToolError> {
    run_tool_on(binary, args, None).map(|out| out.stdout)
}

/// [`run_tool_on`], its output read by `parse` (a failure to run is said as the parse error would be).
fn run_parsed(
    job: &PeerJob<'_>,
    args: &[String],
    parse: fn(&str) -> Result<Vec<PeerPoint>, String>,
) -> Result<(Vec<PeerPoint>, PeerCpus), String> {
    let out = run_tool_on(job.binary, args, job.core).map_err(ToolError::text)?;
    Ok((parse(&out.stdout)?, out.cpus))
}

/// Run a tool to its end, keeping both streams (ipsec_perf prints its versions on stderr). With
/// `core`, the child pins itself there between fork and exec, so not one instruction of the tool runs
/// elsewhere, and its affinity is read back from the kernel while it runs.
fn run_tool_on(
    binary: &str,
    args: &[String],
    core: Option<usize>,
) -> Result<ToolOutput, ToolError> {
    use std::process::Stdio;
    let path = locate(binary).map_err(ToolError::Spawn)?;
    let mut command = Command::new(path);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let set = match core {
        Some(core) => Some(crate::system::affinity::cpu_set(&[core]).map_err(ToolError::Spawn)?),
        None => None,
    };
    // A tool that outlived macbench (SIGTERM to `compare` while `openssl speed -seconds N` ran) would
    // run on with parent 1 for its whole round; a pinning refusal is not fatal here, the read-back
    // below records what the child really got.
    crate::system::lifetime::bind_child(&mut command, set);
    let child = command
        .spawn()
        .map_err(|e| ToolError::Spawn(e.to_string()))?;
    let cpus = crate::system::affinity::affinity_of(child.id());
    let out = child
        .wait_with_output()
        .map_err(|e| ToolError::Exit(format!("`{binary}`: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // Its first words on stderr, if it said anything.
        let said = err
            .lines()
            .find(|l| !l.trim().is_empty())
            .map_or(String::new(), |l| format!(": {}", l.trim()));
        return Err(ToolError::Exit(format!(
            "`{binary} {}` exited with {}{said}",
            args.join(" "),
            out.status
        )));
    }
    Ok(ToolOutput {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        cpus,
    })
}

/// Why a peer's tool cannot be used at all.
#[derive(Debug, Clone)]
pub enum ProbeFailure {
    /// The binary could not be started.
    Missing { binary: String, reason: String },
    /// It started and failed.
    Failed(String),
}

/// Check the peer's binary and ask its version.
pub fn probe(peer: Peer) -> Result<String, ProbeFailure> {
    let binary = peer.binary();
    if peer == Peer::Dpdk {
        return crypto_perf::probe(&binary);
    }
    let args: Vec<String> = match peer {
        Peer::Openssl | Peer::Botan => vec!["version".into()],
        Peer::Cryptopp => vec!["V".into()],
        // No version flag: its usage text proves it runs; the versions come with the results.
        Peer::IpsecMb | Peer::Dpdk => vec!["-h".into()],
    };
    match run_tool(&binary, &args) {
        Ok(_) if peer == Peer::IpsecMb => Ok("ipsec_perf".to_string()),
        Ok(v) => Ok(v.lines().next().unwrap_or("").trim().to_string()),
        Err(ToolError::Spawn(reason)) => Err(ProbeFailure::Missing { binary, reason }),
        Err(ToolError::Exit(reason)) => Err(ProbeFailure::Failed(reason)),
    }
}

/// Which of our cases one run of a peer's tool covers: `openssl speed -mr` one algorithm at one
/// size, `ipsec_perf` one algorithm at every size, `botan speed` every algorithm and size, and
/// `cryptest b2` every algorithm it knows (it takes no list). A round runs the tool once per group,
/// so `cryptest b2` runs once per round, not once per algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invocation {
    EachAlgorithmAndSize,
    EachAlgorithm,
    All,
}

impl Peer {
    /// What one run of the tool covers.
    pub fn invocation(self) -> Invocation {
        match self {
            // dpdk: its ring and burst follow the size (our `all` batch).
            Peer::Openssl | Peer::Dpdk => Invocation::EachAlgorithmAndSize,
            Peer::IpsecMb => Invocation::EachAlgorithm,
            Peer::Botan | Peer::Cryptopp => Invocation::All,
        }
    }

    /// Seconds one run of the tool takes on `algorithms` × `sizes` at `seconds` per measurement,
    /// where its arguments fix it (`openssl speed -seconds`, `botan speed --msec` per algorithm
    /// and size, plus its start; `dpdk-test-crypto-perf`'s op count, sized from its last run to
    /// take `seconds`, plus EAL's start); `None` where only a timed run tells: `cryptest b2` times
    /// ~100 algorithms in a doubling loop, `ipsec_perf` runs its own iteration counts ([`calibrate`]).
    pub fn run_seconds(self, algorithms: usize, sizes: usize, seconds: u32) -> Option<f64> {
        // Starting the tool and its key setups: measured at 0.03–0.15 s on the 2-core VM.
        const START_S: f64 = 0.1;
        let measurements = (algorithms * sizes) as f64;
        match self {
            Peer::Openssl => Some(measurements * (f64::from(seconds) + START_S)),
            Peer::Botan => Some(measurements * f64::from(seconds) + START_S),
            // EAL's start without hugepages and the device's: measured at 0.2–0.3 s on the 2-core VM.
            Peer::Dpdk => Some(measurements * (f64::from(seconds) + 0.3)),
            Peer::Cryptopp | Peer::IpsecMb => None,
        }
    }
}

/// Seconds one run of the tool takes for `request`, found by timing a run (the plan's estimate for
/// the peers whose run time their arguments do not fix): `cryptest b2` once at 10 ms per algorithm,
/// scaled to the span it will be given (its run time is that span times its algorithms times its
/// doubling loop's overshoot, so it scales); `ipsec_perf` once on the request as it is.
pub fn calibrate(peer: Peer, request: &PeerRequest<'_>) -> Result<f64, String> {
    let binary = peer.binary();
    let timed = |args: &[String]| -> Result<f64, String> {
        let start = std::time::Instant::now();
        run_tool_on(&binary, args, request.core).map_err(ToolError::text)?;
        Ok(start.elapsed().as_secs_f64())
    };
    match peer {
        Peer::Cryptopp => {
            const PROBE_S: f64 = 0.01;
            let took = timed(&cryptest_b2_args(PROBE_S, request.reference_hz))?;
            Ok(took * cryptest_seconds_per_algorithm(request.seconds) / PROBE_S)
        }
        _ => {
            let start = std::time::Instant::now();
            match run_peer(peer, request, String::new()) {
                PeerRun::Ran { .. } => Ok(start.elapsed().as_secs_f64()),
                PeerRun::Failed(e) => Err(e),
            }
        }
    }
}

/// What to ask a peer's tool for.
#[derive(Debug, Clone)]
pub struct PeerRequest<'a> {
    /// Our algorithm names (those the peer lacks are skipped).
    pub algorithms: &'a [&'a str],
    pub sizes: &'a [u32],
    /// Seconds per measurement, at least 1.
    pub seconds: u32,
    /// Our reference rate `f`.
    pub reference_hz: f64,
    pub accel: Accel,
    /// The CPU the tool is pinned to (the one our session uses); `None` leaves it where it starts.
    pub core: Option<usize>,
    /// What its figures divide by: one of [`Peer::bases`].
    pub basis: Basis,
    /// What `dpdk-test-crypto-perf` runs (the others take `None`).
    pub device: Option<DeviceTest>,
}

/// Run the peer's benchmark once on the request's algorithms and sizes; `version` is what [`probe`]
/// returned (probed once, not before every round).
pub fn run_peer(peer: Peer, request: &PeerRequest<'_>, version: String) -> PeerRun {
    if !peer.bases().contains(&request.basis) {
        return PeerRun::Failed(format!(
            "{} cannot measure on the {} basis",
            peer.name(),
            request.basis
        ));
    }
    let binary = peer.binary();
    let names: Vec<(&str, &str)> = request
        .algorithms
        .iter()
        .filter_map(|a| peer.algorithm_name(a).map(|p| (*a, p)))
        .collect();
    if names.is_empty() {
        return PeerRun::Ran {
            version,
            points: Vec::new(),
            note: None,
            cpus: Err("not run".into()),
        };
    }
    let job = PeerJob {
        binary: &binary,
        names: &names,
        sizes: request.sizes,
        seconds: request.seconds.max(1),
        reference_hz: request.reference_hz,
        accel: request.accel,
        core: request.core,
        basis: request.basis,
        device: request.device,
    };
    match peer {
        Peer::Openssl => run_openssl_speed(&job, version),
        Peer::Botan => run_botan_speed(&job, version),
        Peer::IpsecMb => run_ipsec_perf(&job),
        Peer::Cryptopp => run_cryptest_b2(&job, version),
        Peer::Dpdk => crypto_perf::run(&job, version),
    }
}

/// What a peer's tool is asked to run: the tool, our algorithms each with the tool's name for it, the
/// sizes, the seconds per measurement (at least 1), our reference rate, the acceleration asked for, the
/// core to pin it to, the basis to measure on and the device test.
struct PeerJob<'a> {
    binary: &'a str,
    names: &'a [(&'a str, &'a str)],
    sizes: &'a [u32],
    seconds: u32,
    reference_hz: f64,
    accel: Accel,
    core: Option<usize>,
    basis: Basis,
    device: Option<DeviceTest>,
}

/// The arguments of one `openssl speed -mr` measurement: one algorithm (`-hmac` or `-cmac` by our
/// name), one size, and `-elapsed` on the wall basis (its default divides by user CPU time).
pub fn openssl_speed_args(
    ours: &str,
    name: &str,
    size: u32,
    seconds: u32,
    basis: Basis,
) -> Vec<String> {
    let flag = if ours.starts_with("cmac") {
        "-cmac"
    } else {
        "-hmac"
    };
    let mut args: Vec<String> = ["speed", "-mr"].iter().map(|s| s.to_string()).collect();
    if basis == Basis::Wall {
        args.push("-elapsed".into());
    }
    args.extend(
        [
            "-seconds",
            &seconds.to_string(),
            "-bytes",
            &size.to_string(),
            flag,
            name,
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    args
}

/// `openssl speed -mr` once per algorithm and size, so each point is exactly one message size.
fn run_openssl_speed(job: &PeerJob<'_>, version: String) -> PeerRun {
    let mut points = Vec::new();
    let mut cpus = Err("not run".to_string());
    for (ours, name) in job.names {
        for &size in job.sizes {
            let args = openssl_speed_args(ours, name, size, job.seconds, job.basis);
            match run_parsed(job, &args, parse_openssl_mr) {
                Ok((p, c)) => {
                    points.extend(p);
                    cpus = c;
                }
                Err(e) => return PeerRun::Failed(e),
            }
        }
    }
    PeerRun::Ran {
        version,
        points,
        note: None,
        cpus,
    }
}

/// Whether this `botan version` streams its `--buf-size` into one MAC (1.x, 2.x).
fn botan_streams(version: &str) -> bool {
    let v = version.trim_start();
    v.starts_with('2') || v.starts_with('1')
}

/// `botan speed --format=json`, every algorithm and size in one run; botan 1.x and 2.x stream the
/// size as update chunks into one MAC, which the note says.
fn run_botan_speed(job: &PeerJob<'_>, version: String) -> PeerRun {
    let mut args = vec![
        "speed".to_string(),
        "--format=json".to_string(),
        format!("--msec={}", job.seconds * 1000),
        format!(
            "--buf-size={}",
            job.sizes
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
    ];
    args.extend(job.names.iter().map(|(_, p)| p.to_string()));
    let note = botan_streams(&version).then(|| {
        "botan 2.x: size = update chunk streamed into one MAC (no per-message finalisation)"
            .to_string()
    });
    PeerRun::from_points(version, run_parsed(job, &args, parse_botan_json), note)
}

/// The shared-key algorithms `cryptest b2` times (Crypto++ 8.7, Debian 12's `libcrypto++-utils`),
/// whatever it is compared on: what a comparison's time bound counts for it.
pub const CRYPTEST_ALGORITHMS: usize = 98;

/// The seconds `cryptest b2` is given per algorithm for a `--duration` of `seconds`: b2 times every
/// shared-key algorithm it knows ([`CRYPTEST_ALGORITHMS`]), each until its `clock()` passes this span,
/// doubling its update count as it goes (so each takes up to twice the span); a tenth of the
/// duration keeps one run near 20 s per second of `--duration`.
pub fn cryptest_seconds_per_algorithm(seconds: u32) -> f64 {
    (f64::from(seconds) / 10.0).max(0.05)
}

/// `cryptest b2`'s arguments: the span per algorithm and our reference rate in GHz.
fn cryptest_b2_args(per_algorithm: f64, reference_hz: f64) -> Vec<String> {
    vec![
        "b2".to_string(),
        format!("{per_algorithm}"),
        format!("{:.3}", reference_hz / 1e9),
    ]
}

/// `cryptest b2`: it takes no algorithm list and times every shared-key algorithm it knows, each
/// streamed as 2 KiB updates, at our reference rate.
fn run_cryptest_b2(job: &PeerJob<'_>, version: String) -> PeerRun {
    let args = cryptest_b2_args(
        cryptest_seconds_per_algorithm(job.seconds),
        job.reference_hz,
    );
    let note = "cryptest b2 streams 2 KiB updates into one MAC, timing each algorithm for a tenth of --duration";
    PeerRun::from_points(
        version,
        run_parsed(job, &args, parse_cryptest),
        Some(note.into()),
    )
}

/// `ipsec_perf` once per algorithm on one code path: exactly `size` bytes hashed per job (`-o 0`;
/// its default adds 24), the job API for every algorithm (`--force-job-api`: GMAC would otherwise
/// go through the direct GCM API, which our backend does not use). It takes no duration: its own
/// iteration counts decide (16 runs per size).
fn run_ipsec_perf(job: &PeerJob<'_>) -> PeerRun {
    let arch = match ipsec_perf_arch(job.accel) {
        Ok(arch) => arch,
        Err(e) => return PeerRun::Failed(e),
    };
    let job_sizes = job
        .sizes
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut points = Vec::new();
    let mut version = String::from("ipsec_perf");
    let mut ran_arch = String::new();
    let mut cpus = Err("not run".to_string());
    for (_, name) in job.names {
        let mut args: Vec<String> = ["--hash-algo", name, "--job-size", &job_sizes, "-o", "0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(arch.iter().cloned());
        args.extend(["--force-job-api".into(), "--no-progress-bar".into()]);
        let ToolOutput {
            stdout,
            stderr,
            cpus: ran_on,
        } = match run_tool_on(job.binary, &args, job.core) {
            Ok(out) => out,
            Err(e) => return PeerRun::Failed(e.text()),
        };
        cpus = ran_on;
        let parsed = match parse_ipsec_perf(&stdout) {
            Ok(p) => p,
            Err(e) => return PeerRun::Failed(e),
        };
        let tool = stderr
            .lines()
            .find_map(|l| l.strip_prefix("Tool version:"))
            .map(str::trim);
        let library = stderr
            .lines()
            .find_map(|l| l.strip_prefix("Library version:"))
            .map(str::trim);
        if let (Some(tool), Some(library)) = (tool, library) {
            version = format!("ipsec_perf {tool} (library {library})");
        }
        for p in parsed {
            ran_arch.clone_from(&p.arch);
            points.push(PeerPoint {
                algorithm: name.to_string(),
                size: Some(p.size),
                // TSC cycles per job back to bytes per second at our f (the TSC rate on x86).
                bytes_per_second: f64::from(p.size) * job.reference_hz / p.cycles,
            });
        }
    }
    PeerRun::Ran {
        version,
        points,
        note: Some(format!(
            "ipsec_perf {ran_arch} path, jobs back to back, one flush at the end; TSC cycles per job"
        )),
        cpus,
    }
}

/// One line of the comparison: the medians of the paired rounds and the ratio with its interval.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    pub peer: &'static str,
    pub algorithm: String,
    pub size: String,
    /// Our function measured, e.g. `hmac-sha256/openssl/hw`.
    pub ours_function: Option<String>,
    /// What both sides' cycles/byte divide by.
    pub basis: Basis,
    /// Our cycles/byte on `basis` (one pinned session), median of the rounds.
    pub ours: Option<f64>,
    /// The lowest and highest of our rounds.
    pub ours_range: Option<(f64, f64)>,
    /// The peer's bytes/second converted with our f, median of the rounds.
    pub theirs: Option<f64>,
    /// The lowest and highest of the peer's rounds.
    pub theirs_range: Option<(f64, f64)>,
    /// Our throughput / theirs (= their cycles/byte / ours) over the paired rounds: above 1, macbench
    /// measured faster.
    pub ratio: Option<crate::stats::RatioEstimate>,
    /// The CPU our session was pinned to.
    pub ours_cpu: Option<usize>,
    /// The CPUs the peer's process was allowed on, read back from the kernel (`unknown: why` if not).
    pub peer_cpus: String,
    /// The null function's cycles/message over ours at this size: how much of our figure is harness.
    pub harness_share: Option<f64>,
    /// The peer's clock resolution over one measurement's span (`openssl speed`'s 10 ms tick over
    /// 1 s: 0.01), when coarse enough to matter: its figures are known only to ×(1 ± this), so the
    /// ratio's interval is widened by it ([`crate::stats::RatioEstimate::widened`]).
    pub peer_clock: Option<f64>,
    /// Why the ratio gets no verdict though it may have the rounds for one: the sides measured
    /// different libraries or different quantities ([`Unlike`]); `None` when like is paired with like.
    pub unlike: Option<Unlike>,
    pub note: String,
}

/// How one compared row came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The ratio's interval holds 1.
    EqualWithinNoise,
    /// The interval lies below 1: the peer measured faster.
    PeerFaster,
    /// The interval lies above 1: we measured faster.
    MacbenchFaster,
}

impl Verdict {
    /// The words the table, the JSON and the summary line use.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::EqualWithinNoise => "equal within noise",
            Verdict::PeerFaster => "peer faster",
            Verdict::MacbenchFaster => "macbench faster",
        }
    }
}

impl CompareRow {
    /// Which side measured faster, or equal within noise; `None` without a ratio or from fewer
    /// rounds than a verdict needs ([`crate::stats::MIN_PAIRS_FOR_VERDICT`]).
    pub fn verdict(&self) -> Option<Verdict> {
        if self.unlike.is_some() {
            return None;
        }
        let r = self
            .ratio
            .filter(crate::stats::RatioEstimate::has_verdict)?;
        Some(if r.equal_within_noise() {
            Verdict::EqualWithinNoise
        } else if r.ci95.low > 1.0 {
            Verdict::MacbenchFaster
        } else {
            Verdict::PeerFaster
        })
    }

    /// The verdict's words; `no verdict: different library` (or `quantity`) for unlike sides,
    /// `too few rounds` for a ratio from too few rounds, `-` without a ratio.
    pub fn verdict_text(&self) -> &'static str {
        match (self.verdict(), self.ratio, &self.unlike) {
            (Some(v), _, _) => v.as_str(),
            (None, Some(_), Some(unlike)) => unlike.verdict_text(),
            (None, Some(_), None) => "too few rounds",
            (None, None, _) => "-",
        }
    }
}

/// Cycles per byte from bytes per second at reference rate `f`.
pub fn cycles_per_byte(reference_hz: f64, bytes_per_second: f64) -> Option<f64> {
    (bytes_per_second > 0.0 && reference_hz > 0.0).then(|| reference_hz / bytes_per_second)
}

/// How the rows came out, in one line: `summary: 6 of 8 row(s) equal within noise, 2 peer faster, 0
/// macbench faster`, with rows from too few rounds for a verdict and rows without a ratio counted
/// apart (`summary: no verdict; …` when no row has one); `None` when no row has a ratio.
pub fn summary_line(rows: &[CompareRow]) -> Option<String> {
    let judged = rows.iter().filter(|r| r.verdict().is_some()).count();
    let measured = rows.iter().filter(|r| r.ratio.is_some()).count();
    let unlike = |library: bool| {
        rows.iter()
            .filter(|r| r.ratio.is_some())
            .filter(|r| matches!(r.unlike, Some(Unlike::Library { .. })) == library)
            .filter(|r| r.unlike.is_some())
            .count()
    };
    let (other_library, other_quantity) = (unlike(true), unlike(false));
    if measured == 0 {
        return None;
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict() == Some(v)).count();
    let mut line = if judged > 0 {
        format!(
            "summary: {} of {judged} row(s) {}, {} {}, {} {}",
            count(Verdict::EqualWithinNoise),
            Verdict::EqualWithinNoise.as_str(),
            count(Verdict::PeerFaster),
            Verdict::PeerFaster.as_str(),
            count(Verdict::MacbenchFaster),
            Verdict::MacbenchFaster.as_str(),
        )
    } else {
        "summary: no verdict".to_string()
    };
    if other_library + other_quantity > 0 {
        let mut kinds = Vec::new();
        if other_library > 0 {
            kinds.push(format!("{other_library} different library"));
        }
        if other_quantity > 0 {
            kinds.push(format!("{other_quantity} different quantity"));
        }
        line.push_str(&format!(
            "; {} row(s) not judged, ratio shown ({}: not like with like)",
            other_library + other_quantity,
            kinds.join(", ")
        ));
    }
    let short = measured - judged - other_library - other_quantity;
    if short > 0 {
        line.push_str(&format!(
            "; {} row(s) from fewer than {} rounds, whose range is no 95 % interval (--rounds {} or more)",
            short,
            crate::stats::MIN_PAIRS_FOR_VERDICT,
            crate::stats::MIN_PAIRS_FOR_VERDICT
        ));
    }
    if rows.len() > measured {
        line.push_str(&format!(
            "; {} row(s) without a ratio (their notes say why)",
            rows.len() - measured
        ));
    }
    Some(line)
}

/// The terminal table, with the reference rate above it and what the ratio means below.
pub fn render(rows: &[CompareRow], reference_hz: f64, style: Style) -> String {
    let fmt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    let table = Table::new(style)
        .left("peer")
        .left("ours")
        .right("size")
        .left("basis")
        .right("ours c/B")
        .right("theirs c/B")
        .right("ratio")
        .left("95 % interval")
        .left("verdict")
        .right("harness")
        .left("note");
    let rows_text = table.render_each(rows, |r| {
        vec![
            r.peer.to_string(),
            r.ours_function
                .clone()
                .unwrap_or_else(|| r.algorithm.clone()),
            r.size.clone(),
            r.basis.to_string(),
            fmt(r.ours),
            fmt(r.theirs),
            r.ratio
                .map_or("-".to_string(), |x| format!("{:.3}", x.median)),
            r.ratio.map_or("-".to_string(), |x| {
                let clock = r
                    .peer_clock
                    .map_or(String::new(), |c| format!(", ±{:.1} % clock", c * 100.0));
                // Below the rounds a verdict needs, the range is shown with what it is worth.
                let worth = if x.has_verdict() {
                    String::new()
                } else {
                    format!(
                        "; holds the median {:.0} % of the time",
                        crate::stats::range_coverage(x.pairs) * 100.0
                    )
                };
                format!(
                    "{:.3}..{:.3} ({} rounds{clock}{worth})",
                    x.ci95.low, x.ci95.high, x.pairs
                )
            }),
            r.verdict_text().to_string(),
            r.harness_share
                .map_or("-".to_string(), |h| format!("{:.1} %", h * 100.0)),
            r.note.clone(),
        ]
    });
    let mut out = format!(
        "f = {:.3} GHz (our reference rate, used for both sides)\n{rows_text}",
        reference_hz / 1e9
    );
    if let Some(line) = summary_line(rows) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("ratio = our throughput / theirs (= their cycles/byte / ours), median of paired rounds (peer and ours back to back, order alternating, both pinned to one core); 95 % interval by bootstrap over the rounds, widened by the peer's clock resolution where it is coarse (± clock: openssl speed reads its time in 10 ms ticks; a longer --duration narrows it); equal within noise when it holds 1. basis: what both sides divide by (user CPU time, CPU time, or wall time). harness: the null function's cycles/message as a share of ours.\n");
    out
}
