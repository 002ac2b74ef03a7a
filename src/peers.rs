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
//!   once, so its small sizes are not per-message costs; botan 3 finalises per message.
//! - `cryptest b2 SECONDS GHZ` (Crypto++): streams 2 KiB updates, no per-message size at all; it is compared
//!   with our largest size.
//! - `ipsec_perf --hash-algo A --job-size N,… -o 0 --arch L --force-job-api` (Intel ipsec-mb's own
//!   tool, built from the library's source: docs/backends.md "Intel ipsec-mb"): jobs of exactly N bytes submitted
//!   back to back through the job API, flushed once at the end; it prints TSC cycles per job, which on
//!   x86 are our reference cycles as they are. Compared with our `burst:16` dispatch by default.
//!
//! A peer that is not installed becomes a row that says so and how to install it: never an invented number.

use std::process::Command;

use crate::mac::Accel;
use crate::table::{Style, Table};

/// A reference tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Openssl,
    Cryptopp,
    Botan,
    IpsecMb,
}

impl Peer {
    pub const ALL: [Peer; 4] = [Peer::Openssl, Peer::Cryptopp, Peer::Botan, Peer::IpsecMb];

    pub fn parse(name: &str) -> Option<Peer> {
        match name {
            "openssl" => Some(Peer::Openssl),
            "cryptopp" | "crypto++" | "cryptest" => Some(Peer::Cryptopp),
            "botan" => Some(Peer::Botan),
            "ipsecmb" | "ipsec-mb" | "ipsec_perf" => Some(Peer::IpsecMb),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Peer::Openssl => "openssl",
            Peer::Cryptopp => "cryptopp",
            Peer::Botan => "botan",
            Peer::IpsecMb => "ipsecmb",
        }
    }

    /// Environment variable naming the peer's binary (tests point it at a missing one).
    pub fn env_var(self) -> &'static str {
        match self {
            Peer::Openssl => "MACBENCH_OPENSSL",
            Peer::Cryptopp => "MACBENCH_CRYPTEST",
            Peer::Botan => "MACBENCH_BOTAN",
            Peer::IpsecMb => "MACBENCH_IPSEC_PERF",
        }
    }

    pub fn default_binary(self) -> &'static str {
        match self {
            Peer::Openssl => "openssl",
            Peer::Cryptopp => "cryptest",
            Peer::Botan => "botan",
            Peer::IpsecMb => "ipsec_perf",
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
            // No Debian package ships it: it is built from the library's own source package.
            Peer::IpsecMb => {
                "tools/build-ipsec-perf (Debian's intel-ipsec-mb source package, nasm, make)"
            }
        }
    }

    /// Our backend wrapping the same library, if we have one: compared by default.
    pub fn same_library_backend(self) -> &'static str {
        match self {
            Peer::Openssl => "openssl",
            Peer::Cryptopp => "cryptopp",
            Peer::Botan => "botan",
            Peer::IpsecMb => "ipsecmb",
        }
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

/// What running a peer gave.
#[derive(Debug, Clone)]
pub enum PeerRun {
    /// The binary could not be started.
    Missing { binary: String, reason: String },
    /// It ran but failed or printed nothing usable.
    Failed(String),
    Ran {
        version: String,
        points: Vec<PeerPoint>,
        /// What the peer's numbers mean, where that differs from whole messages.
        note: Option<String>,
    },
}

impl PeerRun {
    /// A peer run that gave `points` (with `note`), or failed with their error.
    fn from_points(
        version: String,
        points: Result<Vec<PeerPoint>, String>,
        note: Option<String>,
    ) -> PeerRun {
        match points {
            Ok(points) => PeerRun::Ran {
                version,
                points,
                note,
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

fn run_tool(binary: &str, args: &[String]) -> Result<String, ToolError> {
    run_tool_with_stderr(binary, args).map(|(stdout, _)| stdout)
}

/// [`run_tool`], its output read by `parse` (a failure to run is said as the parse error would be).
fn run_parsed(
    binary: &str,
    args: &[String],
    parse: fn(&str) -> Result<Vec<PeerPoint>, String>,
) -> Result<Vec<PeerPoint>, String> {
    run_tool(binary, args)
        .map_err(ToolError::text)
        .and_then(|t| parse(&t))
}

/// [`run_tool`], keeping standard error too (ipsec_perf prints its versions there).
fn run_tool_with_stderr(binary: &str, args: &[String]) -> Result<(String, String), ToolError> {
    let path = locate(binary).map_err(ToolError::Spawn)?;
    let out = Command::new(path)
        .args(args)
        .output()
        .map_err(|e| ToolError::Spawn(e.to_string()))?;
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
    Ok((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// Check the peer's binary and ask its version; `Err` is the `Missing` outcome.
pub fn probe(peer: Peer) -> Result<String, PeerRun> {
    let binary = peer.binary();
    let args: Vec<String> = match peer {
        Peer::Openssl | Peer::Botan => vec!["version".into()],
        Peer::Cryptopp => vec!["V".into()],
        // No version flag: its usage text proves it runs; the versions come with the results.
        Peer::IpsecMb => vec!["-h".into()],
    };
    match run_tool(&binary, &args) {
        Ok(_) if peer == Peer::IpsecMb => Ok("ipsec_perf".to_string()),
        Ok(v) => Ok(v.lines().next().unwrap_or("").trim().to_string()),
        Err(ToolError::Spawn(reason)) => Err(PeerRun::Missing { binary, reason }),
        Err(ToolError::Exit(reason)) => Err(PeerRun::Failed(reason)),
    }
}

/// Run the peer's benchmark on the algorithms (our names; those it lacks are skipped) and sizes.
pub fn run_peer(
    peer: Peer,
    algorithms: &[&str],
    sizes: &[u32],
    seconds: u32,
    reference_hz: f64,
    accel: Accel,
) -> PeerRun {
    let version = match probe(peer) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    let binary = peer.binary();
    let names: Vec<(&str, &str)> = algorithms
        .iter()
        .filter_map(|a| peer.algorithm_name(a).map(|p| (*a, p)))
        .collect();
    if names.is_empty() {
        return PeerRun::Ran {
            version,
            points: Vec::new(),
            note: None,
        };
    }
    let job = PeerJob {
        binary: &binary,
        names: &names,
        sizes,
        seconds: seconds.max(1),
        reference_hz,
        accel,
    };
    match peer {
        Peer::Openssl => run_openssl_speed(&job, version),
        Peer::Botan => run_botan_speed(&job, version),
        Peer::IpsecMb => run_ipsec_perf(&job),
        Peer::Cryptopp => run_cryptest_b2(&job, version),
    }
}

/// What a peer's tool is asked to run: the tool, our algorithms each with the tool's name for it, the
/// sizes, the seconds per measurement (at least 1), our reference rate and the acceleration asked for.
struct PeerJob<'a> {
    binary: &'a str,
    names: &'a [(&'a str, &'a str)],
    sizes: &'a [u32],
    seconds: u32,
    reference_hz: f64,
    accel: Accel,
}

/// `openssl speed -mr` once per algorithm and size (`-hmac` or `-cmac` by our name), so each point is
/// exactly one message size.
fn run_openssl_speed(job: &PeerJob<'_>, version: String) -> PeerRun {
    let mut points = Vec::new();
    for (ours, name) in job.names {
        let flag = if ours.starts_with("cmac") {
            "-cmac"
        } else {
            "-hmac"
        };
        for size in job.sizes {
            let args: Vec<String> = [
                "speed",
                "-mr",
                "-seconds",
                &job.seconds.to_string(),
                "-bytes",
                &size.to_string(),
                flag,
                name,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            match run_parsed(job.binary, &args, parse_openssl_mr) {
                Ok(p) => points.extend(p),
                Err(e) => return PeerRun::Failed(e),
            }
        }
    }
    PeerRun::Ran {
        version,
        points,
        note: None,
    }
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
    let streaming = version.trim_start().starts_with('2') || version.trim_start().starts_with('1');
    let note = streaming.then(|| {
        "botan 2.x: size = update chunk streamed into one MAC (no per-message finalisation)"
            .to_string()
    });
    PeerRun::from_points(
        version,
        run_parsed(job.binary, &args, parse_botan_json),
        note,
    )
}

/// `cryptest b2`: it takes no algorithm list and times every shared-key algorithm it knows, each
/// streamed as 2 KiB updates, at our reference rate.
fn run_cryptest_b2(job: &PeerJob<'_>, version: String) -> PeerRun {
    // b2 times every shared-key algorithm it knows (~40); a fifth of the budget each keeps it bounded.
    let per_algorithm = (f64::from(job.seconds) / 5.0).max(0.05);
    let args = vec![
        "b2".to_string(),
        format!("{per_algorithm}"),
        format!("{:.3}", job.reference_hz / 1e9),
    ];
    let note = "cryptest b2 streams 2 KiB updates into one MAC: compared with our largest size";
    PeerRun::from_points(
        version,
        run_parsed(job.binary, &args, parse_cryptest),
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
    for (_, name) in job.names {
        let mut args: Vec<String> = ["--hash-algo", name, "--job-size", &job_sizes, "-o", "0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(arch.iter().cloned());
        args.extend(["--force-job-api".into(), "--no-progress-bar".into()]);
        let (stdout, stderr) = match run_tool_with_stderr(job.binary, &args) {
            Ok(out) => out,
            Err(e) => return PeerRun::Failed(e.text()),
        };
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
    }
}

/// One line of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    pub peer: &'static str,
    pub algorithm: String,
    pub size: String,
    /// Our function measured, e.g. `hmac-sha256/openssl/hw`.
    pub ours_function: Option<String>,
    /// Our absolute cycles/byte (one pinned session).
    pub ours: Option<f64>,
    /// The peer's bytes/second converted with our f.
    pub theirs: Option<f64>,
    /// Our throughput / theirs (= their cycles/byte / ours): above 1, macbench measured faster.
    pub ratio: Option<f64>,
    pub note: String,
}

/// Cycles per byte from bytes per second at reference rate `f`.
pub fn cycles_per_byte(reference_hz: f64, bytes_per_second: f64) -> Option<f64> {
    (bytes_per_second > 0.0 && reference_hz > 0.0).then(|| reference_hz / bytes_per_second)
}

/// The terminal table, with the reference rate above it and what the ratio means below.
pub fn render(rows: &[CompareRow], reference_hz: f64, style: Style) -> String {
    let fmt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    let table = Table::new(style)
        .left("peer")
        .left("ours")
        .right("size")
        .right("ours c/B")
        .right("theirs c/B")
        .right("ratio")
        .left("note");
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.peer.to_string(),
                r.ours_function
                    .clone()
                    .unwrap_or_else(|| r.algorithm.clone()),
                r.size.clone(),
                fmt(r.ours),
                fmt(r.theirs),
                r.ratio.map_or("-".to_string(), |x| format!("{x:.3}")),
                r.note.clone(),
            ]
        })
        .collect();
    let mut out = format!(
        "f = {:.3} GHz (our reference rate, used for both sides)\n{}",
        reference_hz / 1e9,
        table.render(&cells)
    );
    out.push_str("ratio = our throughput / theirs (= their cycles/byte / ours); ours = absolute cycles/byte of one session pinned to one core, on one cache-hot buffer as the peers do.\n");
    out
}
