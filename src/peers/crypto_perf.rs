//! `dpdk-test-crypto-perf`, DPDK's own cryptodev benchmark (Debian's `dpdk` package), as the peer of
//! our `dpdk` backend: the same device, algorithm, key and tag length, buffer size and burst.
//!
//! Which of its tests stands beside which of our dispatch modes, and why (app/test-crypto-perf in
//! DPDK 22.11):
//! - `--ptest pmd-cyclecount` builds a ring's worth of ops (`--desc-nb`) before its clock starts,
//!   enqueues them in bursts, then dequeues until every op has come back; it prints the TSC cycles
//!   per op of building (alloc, populate, free; outside the figure), of enqueue and of dequeue. With
//!   the ring and the burst both set to our `all` batch, that is what `--dispatch all` times: ops
//!   built in advance, dispatched at once, drained. The figure is enqueue + dequeue.
//! - `--ptest throughput` enqueues a burst, dequeues whatever has completed and enqueues the next
//!   burst without waiting for the first to come back; the queue is drained once, at the run's end.
//!   Each of our calls returns every tag it was given, so no mode of ours is that quantity (on
//!   `crypto_aesni_mb`, whose dequeue flushes ipsec-mb's lanes only when nothing completed, the
//!   difference is lanes flushed half empty): its rows get a ratio and no verdict.
//!
//! The tool measures on a worker lcore while its main lcore waits (spinning) on another CPU: the
//! worker is put on our session's CPU and the main lcore on another online CPU.

use super::{PeerPoint, PeerRun, ToolError};

/// What one run of the tool is asked to do, decided from our dispatch mode by the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceTest {
    /// `--ptest pmd-cyclecount --desc-nb depth --burst-sz depth`: `depth` ops built before the
    /// clock, enqueued at once, drained (our `all`).
    Drained { depth: u32 },
    /// `--ptest throughput --burst-sz burst`: bursts enqueued while earlier ones complete.
    Bursts { burst: u32 },
}

impl DeviceTest {
    /// What the tool's figure is a rate of.
    pub fn quantity(self) -> super::Quantity {
        match self {
            DeviceTest::Drained { depth } => super::Quantity::Drained { depth },
            DeviceTest::Bursts { burst } => super::Quantity::Undrained { burst },
        }
    }
}

/// `dpdk-test-crypto-perf --auth-algo` names of our algorithms (DPDK 22.11); the IV each takes is
/// [`iv_len`].
pub const ALGORITHMS: &[(&str, &str)] = &[
    ("hmac-md5", "md5-hmac"),
    ("hmac-sha1", "sha1-hmac"),
    ("hmac-sha224", "sha2-224-hmac"),
    ("hmac-sha256", "sha2-256-hmac"),
    ("hmac-sha384", "sha2-384-hmac"),
    ("hmac-sha512", "sha2-512-hmac"),
    ("cmac-aes128", "aes-cmac"),
    ("xcbc-aes128-96", "aes-xcbc-mac"),
    ("gmac-aes128", "aes-gmac"),
    ("gmac-aes192", "aes-gmac"),
    ("gmac-aes256", "aes-gmac"),
    // Lengths in bits: the tool gives the op its buffer size × 8, as our backend does.
    ("eia3-zuc128", "zuc-eia3"),
    ("uia2-snow3g", "snow3g-uia2"),
];

/// The auth IV the tool is told of for `ours`: GMAC's nonce is its IV (12 bytes); the 3GPP
/// functions take the 16-byte IV their specifications build from COUNT, BEARER or FRESH and
/// DIRECTION (our nonce of 6 or 9 bytes becomes that IV in the device's shim); the others none.
pub fn iv_len(ours: &str) -> Option<usize> {
    match ours {
        "eia3-zuc128" | "uia2-snow3g" => Some(16),
        _ => crate::mac::algorithm(ours)?.nonce_len,
    }
}

/// One line of the tool's `--csv-friendly` output.
#[derive(Debug, Clone, PartialEq)]
pub struct CryptoPerfPoint {
    pub size: u32,
    pub burst: u32,
    /// TSC cycles per op of the figure: `Cycles/Buf` (throughput), enqueue + dequeue
    /// (pmd-cyclecount).
    pub cycles: f64,
    /// pmd-cyclecount's split: build (alloc, populate, free), enqueue, dequeue cycles per op.
    pub split: Option<[f64; 3]>,
}

/// Parse `dpdk-test-crypto-perf --csv-friendly`: a `#` header naming the columns (throughput:
/// `…,Enqueued,Dequeued,…,Cycles/Buf`; pmd-cyclecount: `…,Cycles/Op,Cycles/Enq,Cycles/Deq`), then
/// one line per buffer size and burst. Every op enqueued must have come back.
pub fn parse(text: &str) -> Result<Vec<CryptoPerfPoint>, String> {
    let mut header: Option<Vec<String>> = None;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(h) = line.strip_prefix('#') {
            header = Some(h.split(',').map(|c| c.trim().to_string()).collect());
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < 2 || fields[0].parse::<u32>().is_err() {
            continue;
        }
        let Some(columns) = &header else {
            return Err(format!(
                "dpdk-test-crypto-perf line {}: a result before its header",
                n + 1
            ));
        };
        if fields.len() != columns.len() {
            return Err(format!(
                "dpdk-test-crypto-perf line {}: {} values for {} columns",
                n + 1,
                fields.len(),
                columns.len()
            ));
        }
        let value = |names: &[&str]| -> Result<f64, String> {
            let i = columns
                .iter()
                .position(|c| names.contains(&c.as_str()))
                .ok_or_else(|| format!("dpdk-test-crypto-perf printed no {} column", names[0]))?;
            fields[i]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    format!(
                        "dpdk-test-crypto-perf line {}: bad {} {:?}",
                        n + 1,
                        columns[i],
                        fields[i]
                    )
                })
        };
        let (enqueued, dequeued) = (value(&["Enqueued"])?, value(&["Dequeued"])?);
        if enqueued != dequeued || enqueued == 0.0 {
            return Err(format!(
                "dpdk-test-crypto-perf line {}: {dequeued} of {enqueued} ops came back",
                n + 1
            ));
        }
        let size = value(&["Buffer Size(B)", "Buf Size"])? as u32;
        let burst = value(&["Burst Size"])? as u32;
        let (cycles, split) = if columns.iter().any(|c| c == "Cycles/Buf") {
            (value(&["Cycles/Buf"])?, None)
        } else {
            let split = [
                value(&["Cycles/Op"])?,
                value(&["Cycles/Enq"])?,
                value(&["Cycles/Deq"])?,
            ];
            (split[1] + split[2], Some(split))
        };
        if cycles <= 0.0 {
            return Err(format!(
                "dpdk-test-crypto-perf line {}: {cycles} cycles per op",
                n + 1
            ));
        }
        out.push(CryptoPerfPoint {
            size,
            burst,
            cycles,
            split,
        });
    }
    if out.is_empty() {
        return Err("dpdk-test-crypto-perf printed no result line".into());
    }
    Ok(out)
}

/// The device both sides use: our backend's (`--dpdk-device`, else `crypto_aesni_mb`).
pub fn device() -> String {
    std::env::var("MACBENCH_DPDK_DEVICE")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "crypto_aesni_mb".to_string())
}

/// The driver name `--devtype` takes for a software device (`crypto_aesni_mb0,max_nb_queue_pairs=2`
/// is driver `crypto_aesni_mb`); `Err` for a PCI device, whose driver the tool cannot be told by
/// its address.
pub fn devtype(device: &str) -> Result<String, String> {
    let name = device.split(',').next().unwrap_or_default();
    if !name.starts_with("crypto_") {
        return Err(format!(
            "--dpdk-device {device}: compare --against dpdk runs software devices named by their driver (crypto_aesni_mb, crypto_openssl, …); a PCI device needs dpdk-test-crypto-perf run by hand with its EAL options"
        ));
    }
    Ok(name
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string())
}

/// The CPU the tool's main lcore waits on: the first online CPU other than `worker`.
pub fn main_lcore_cpu(worker: usize, online: &[usize]) -> Result<usize, String> {
    online.iter().copied().find(|&c| c != worker).ok_or_else(|| {
        format!(
            "dpdk-test-crypto-perf measures on a worker lcore while its main lcore waits on another CPU, and CPU {worker} is the only one online"
        )
    })
}

/// What one run measures: the algorithm (ours and the tool's name), its key, tag and IV lengths,
/// one buffer size, the test, and the total ops.
pub struct Run<'a> {
    pub ours: &'a str,
    pub name: &'a str,
    pub size: u32,
    pub test: DeviceTest,
    pub ops: u64,
}

/// EAL's file prefix for the tool's runs: its runtime directory is removed after each run.
fn file_prefix() -> String {
    format!("macbench-cperf-{}", std::process::id())
}

/// The tool's arguments: EAL's (no hugepages, no PCI, the device as a vdev, lcore 0 on `main_cpu`
/// and lcore 1 on `worker`), then the test's.
pub fn args(
    run: &Run<'_>,
    device: &str,
    main_cpu: usize,
    worker: usize,
) -> Result<Vec<String>, String> {
    let algorithm = crate::mac::algorithm(run.ours)
        .ok_or_else(|| format!("{}: not a known algorithm", run.ours))?;
    let mut args: Vec<String> = vec![
        format!("--lcores=0@{main_cpu},1@{worker}"),
        "--main-lcore=0".into(),
        "--no-huge".into(),
        "-m".into(),
        "256".into(),
        "--no-pci".into(),
        "--no-shconf".into(),
        "--iova-mode=va".into(),
        "--no-telemetry".into(),
        format!("--file-prefix={}", file_prefix()),
        "--log-level=*:crit".into(),
        format!("--vdev={device}"),
        "--".into(),
        "--silent".into(),
        "--csv-friendly".into(),
        "--devtype".into(),
        devtype(device)?,
        "--optype".into(),
        "auth-only".into(),
        "--auth-algo".into(),
        run.name.into(),
        "--auth-op".into(),
        "generate".into(),
        "--auth-key-sz".into(),
        algorithm.default_key_len.to_string(),
        "--digest-sz".into(),
        algorithm.tag_len.to_string(),
        "--buffer-sz".into(),
        run.size.to_string(),
        "--total-ops".into(),
        run.ops.to_string(),
    ];
    if let Some(iv) = iv_len(run.ours) {
        args.extend(["--auth-iv-sz".into(), iv.to_string()]);
    }
    match run.test {
        DeviceTest::Drained { depth } => args.extend([
            "--ptest".into(),
            "pmd-cyclecount".into(),
            "--desc-nb".into(),
            depth.to_string(),
            "--burst-sz".into(),
            depth.to_string(),
        ]),
        DeviceTest::Bursts { burst } => args.extend([
            "--ptest".into(),
            "throughput".into(),
            "--burst-sz".into(),
            burst.to_string(),
        ]),
    }
    Ok(args)
}

/// Total ops for a run of about `seconds` at `cycles` TSC cycles per op: pmd-cyclecount runs its
/// ops three times (a timed build pass, a warm-up pass and the measured pass), throughput once; at
/// least 1,000 ops and one ring's worth, a whole number of rings, at most 10^8 (rounded up to a ring).
pub fn total_ops(test: DeviceTest, seconds: f64, reference_hz: f64, cycles: f64) -> u64 {
    let (passes, ring) = match test {
        DeviceTest::Drained { depth } => (3.0, u64::from(depth.max(1))),
        DeviceTest::Bursts { burst } => (1.0, u64::from(burst.max(1))),
    };
    let ops = (seconds * reference_hz / (cycles.max(1.0) * passes)) as u64;
    ops.clamp(ring.max(1000), 100_000_000).div_ceil(ring) * ring
}

/// A first guess of the device's TSC cycles per op at `size` bytes before any run has said
/// (HMAC-SHA-256 on `crypto_aesni_mb`: ~300 at 64 B, ~12,000 at 16 KiB): on the slow side, so a
/// first run is shorter than asked rather than longer.
pub fn guess_cycles(size: u32) -> f64 {
    300.0 + 4.0 * f64::from(size)
}

/// TSC cycles per op measured by earlier runs of this process, by (tool name, size, test): the next
/// run's op count comes from them.
static MEASURED: std::sync::Mutex<Vec<(String, u32, DeviceTest, f64)>> =
    std::sync::Mutex::new(Vec::new());

fn measured(name: &str, size: u32, test: DeviceTest) -> Option<f64> {
    let known = MEASURED.lock().unwrap_or_else(|e| e.into_inner());
    known
        .iter()
        .find(|(n, s, t, _)| n == name && *s == size && *t == test)
        .map(|k| k.3)
}

fn remember(name: &str, size: u32, test: DeviceTest, cycles: f64) {
    let mut known = MEASURED.lock().unwrap_or_else(|e| e.into_inner());
    known.retain(|(n, s, t, _)| !(n == name && *s == size && *t == test));
    known.push((name.to_string(), size, test, cycles));
}

/// EAL leaves an empty runtime directory without shared config: removed, as our backend's is
/// (`rmdir` leaves one that is not empty).
fn remove_runtime_dir() {
    let prefix = file_prefix();
    let mut dirs = vec![std::path::PathBuf::from("/var/run/dpdk").join(&prefix)];
    if let Some(xdg) = std::env::var_os("XDG_RUNTIME_DIR") {
        dirs.push(std::path::PathBuf::from(xdg).join("dpdk").join(&prefix));
    }
    dirs.push(std::path::PathBuf::from("/tmp/dpdk").join(&prefix));
    for dir in dirs {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Check the tool runs and ask its DPDK version (`-v` prints `RTE Version: 'DPDK 22.11.11'`; the
/// tool then refuses `--version` after `--`, having said it).
pub fn probe(binary: &str) -> Result<String, super::ProbeFailure> {
    let args: Vec<String> = [
        "-v",
        "--no-huge",
        "-m",
        "64",
        "--no-pci",
        "--no-shconf",
        "--no-telemetry",
        "--log-level=*:crit",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--file-prefix={}", file_prefix()),
        "--".into(),
        "--version".into(),
    ])
    .collect();
    let path = super::locate(binary).map_err(|reason| super::ProbeFailure::Missing {
        binary: binary.to_string(),
        reason,
    })?;
    let mut command = std::process::Command::new(path);
    command
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    crate::system::lifetime::bind_child(&mut command, None);
    let out = command.output().map_err(|e| super::ProbeFailure::Missing {
        binary: binary.to_string(),
        reason: e.to_string(),
    });
    remove_runtime_dir();
    let out = out?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .find_map(|l| l.split("RTE Version: '").nth(1))
        .map(|v| v.trim_end_matches('\'').to_string())
        .ok_or_else(|| {
            super::ProbeFailure::Failed(format!(
                "`{binary} -v` did not say its DPDK version: {}",
                text.lines().next().unwrap_or("no output")
            ))
        })
}

/// Run the tool once per algorithm and size of `job` on our device, the worker lcore on our core.
pub(super) fn run(job: &super::PeerJob<'_>, version: String) -> PeerRun {
    let Some(test) = job.device else {
        return PeerRun::Failed("dpdk-test-crypto-perf: no device test asked".into());
    };
    let Some(worker) = job.core else {
        return PeerRun::Failed("dpdk-test-crypto-perf: no CPU to measure on".into());
    };
    let main_cpu = match main_lcore_cpu(worker, &crate::system::online_cpus()) {
        Ok(c) => c,
        Err(e) => return PeerRun::Failed(e),
    };
    let device = device();
    let mut points = Vec::new();
    let mut notes = Vec::new();
    for (ours, name) in job.names {
        for &size in job.sizes {
            let cycles = measured(name, size, test).unwrap_or_else(|| guess_cycles(size));
            let run = Run {
                ours,
                name,
                size,
                test,
                ops: total_ops(test, f64::from(job.seconds), job.reference_hz, cycles),
            };
            let args = match args(&run, &device, main_cpu, worker) {
                Ok(a) => a,
                Err(e) => return PeerRun::Failed(e),
            };
            // Not pinned before exec: EAL puts each lcore on its CPU (`--lcores`).
            let out = super::run_tool_on(job.binary, &args, None);
            remove_runtime_dir();
            let parsed = match out.map_err(ToolError::text).and_then(|o| parse(&o.stdout)) {
                Ok(p) => p,
                Err(e) => return PeerRun::Failed(e),
            };
            let Some(point) = parsed.iter().find(|p| p.size == size) else {
                return PeerRun::Failed(format!(
                    "dpdk-test-crypto-perf printed no result at {size} bytes"
                ));
            };
            remember(name, size, test, point.cycles);
            if let Some([build, enqueue, dequeue]) = point.split {
                notes.push(format!(
                    "{size} B: enqueue {enqueue:.1} + dequeue {dequeue:.1} cycles/op (its build, alloc + populate + free, {build:.1}, is outside both figures)"
                ));
            }
            points.push(PeerPoint {
                algorithm: name.to_string(),
                size: Some(size),
                // TSC cycles per op back to bytes per second at our f (the TSC rate on x86).
                bytes_per_second: f64::from(size) * job.reference_hz / point.cycles,
            });
        }
    }
    let what = match test {
        DeviceTest::Drained { depth } => format!(
            "pmd-cyclecount on {device}: rings of {depth} ops built before the clock, enqueued at once, drained"
        ),
        DeviceTest::Bursts { burst } => format!(
            "throughput on {device}: bursts of {burst}, never waiting for one to come back"
        ),
    };
    let split = if notes.is_empty() {
        String::new()
    } else {
        format!("; {}", notes.join("; "))
    };
    PeerRun::Ran {
        version,
        points,
        note: Some(format!(
            "dpdk-test-crypto-perf {what}; worker lcore on CPU {worker}, main lcore waiting on CPU {main_cpu}; TSC cycles per op{split}"
        )),
        cpus: Ok(vec![worker]),
    }
}
