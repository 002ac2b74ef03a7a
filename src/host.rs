//! Facts about the machine a result was measured on, so results can be compared across machines
//! (the seed paper compares four architectures) and recomputed later.
//!
//! Collecting them starts no process: [`Host::detect`] reads `/proc`, `/sys` and this process's
//! libraries. What a switched child's libraries use (`sw`, a masked ISA level) is added by
//! `isolate::with_children` only where it is wanted — `list`, and a run with switched functions — since
//! that starts a child per acceleration.

use serde::{Deserialize, Serialize};

/// CPU features that decide which code paths MAC libraries take.
pub const RELEVANT_FEATURES: &[&str] = &[
    "aes",
    "pclmulqdq",
    "sha_ni",
    "avx",
    "avx2",
    "avx512f",
    "avx512vl",
    "vaes",
    "vpclmulqdq",
    "constant_tsc",
    "nonstop_tsc",
];

/// Written into every results file and read back from it; fields an older file lacks take their default.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Host {
    pub cpu_model: String,
    /// Relevant feature flags present on this CPU (as `/proc/cpuinfo` names them; on aarch64 from
    /// the kernel's hardware capabilities).
    pub cpu_features: Vec<String>,
    /// The kinds of core, slowest first: a phone's little, middle and big clusters; one entry on a
    /// homogeneous machine (docs/methodology.md §2).
    pub core_types: Vec<crate::system::topology::CoreType>,
    /// Online CPUs as the kernel lists them.
    pub online_cpus: Vec<usize>,
    pub kernel: String,
    /// cpufreq governor of CPU 0, if the kernel exposes it.
    pub governor: Option<String>,
    pub library_versions: Vec<(String, String)>,
    pub macbench_version: String,
    pub git_commit: Option<String>,
    /// The machine's name, so results from many machines can be told apart once concatenated.
    #[serde(default)]
    pub hostname: String,
    /// The name the user gave this host's results (`run --label`), empty if none: tables and figures
    /// name the host by it (else by `hostname`), so a fleet's files can be told apart.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
}

impl Host {
    /// The facts of this machine, each backend's capability labelled as what this (unswitched)
    /// process uses: `; hw: …`.
    pub fn detect() -> Host {
        Host::detect_in("hw")
    }

    /// The facts of this machine, each backend's capability labelled `process` (`hw`, or `this
    /// avx2 child` inside a switched child: the isolation layer says which, not this module).
    pub fn detect_in(process: &str) -> Host {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let cpu_features = if cfg!(target_arch = "aarch64") {
            // The kernel's hardware capabilities, which qemu-user emulates faithfully (its
            // /proc/cpuinfo is the host's).
            crate::system::topology::aarch64_features()
        } else {
            // The kernel's flags, not CPUID's (raw-cpuid): the kernel lists what it enabled (XSAVE
            // state for AVX/AVX-512, `clearcpuid=` masks), which is what the libraries can use.
            let flags: Vec<String> = field("flags")
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect();
            RELEVANT_FEATURES
                .iter()
                .filter(|f| flags.iter().any(|g| g == *f))
                .map(|f| f.to_string())
                .collect()
        };
        let cores = crate::system::topology::cores();
        // Each backend's version, then for the record what it uses in this process (its switch's
        // capability report): "; hw: …", or "; this avx2 child: …" inside a switched child.
        let here = process;
        let library_versions = crate::mac::BACKENDS
            .iter()
            .map(|b| {
                let mut version = (b.version)();
                if let Some(cap) = b.process_switch.and_then(|s| (s.capability)()) {
                    version.push_str(&format!("; {here}: {}", cap.summary));
                }
                (b.name.to_string(), version)
            })
            .collect();
        Host {
            cpu_model: cpu_model(&cores, field("model name")),
            core_types: crate::system::topology::core_types(&cores),
            cpu_features,
            online_cpus: online_cpus(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
            governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            library_versions,
            macbench_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: option_env!("MACBENCH_GIT_COMMIT").map(str::to_string),
            hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_string())
                .unwrap_or_default(),
            label: String::new(),
        }
    }
}

/// The CPU's name: `model name` on x86; on ARM the core designs (`Cortex-A55 + Cortex-X1`), or the
/// architecture when neither is known. An aarch64 process whose /proc/cpuinfo names no ARM core is
/// running under emulation on another machine, and says so rather than show that machine's name.
fn cpu_model(cores: &[crate::system::topology::Core], model_name: Option<String>) -> String {
    let mut designs: Vec<&str> = Vec::new();
    for d in cores.iter().filter_map(|c| c.design.as_deref()) {
        if !designs.contains(&d) {
            designs.push(d);
        }
    }
    let arch = std::env::consts::ARCH;
    match (designs.is_empty(), model_name) {
        (false, _) => designs.join(" + "),
        (true, Some(name)) if arch == "aarch64" => {
            format!("aarch64 (emulated? /proc/cpuinfo names no ARM core but {name})")
        }
        (true, Some(name)) => name,
        (true, None) => arch.to_string(),
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

// CPU lists moved to `system` (the engine and the CLI need them too); re-exported at their old paths.
pub use crate::system::{online_cpus, parse_cpu_list, MAX_CPU};
