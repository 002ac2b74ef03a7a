//! Facts about the machine a result was measured on, so results can be compared across machines
//! (the seed paper compares four architectures) and recomputed later.

use serde::Serialize;

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

#[derive(Debug, Clone, Serialize)]
pub struct Host {
    pub cpu_model: String,
    /// Relevant feature flags present on this CPU (as `/proc/cpuinfo` names them).
    pub cpu_features: Vec<String>,
    /// Online CPUs as the kernel lists them.
    pub online_cpus: Vec<usize>,
    pub kernel: String,
    /// cpufreq governor of CPU 0, if the kernel exposes it.
    pub governor: Option<String>,
    pub library_versions: Vec<(String, String)>,
    pub macbench_version: String,
    pub git_commit: Option<String>,
}

impl Host {
    pub fn detect() -> Host {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let flags: Vec<String> = field("flags")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let cpu_features = RELEVANT_FEATURES
            .iter()
            .filter(|f| flags.iter().any(|g| g == *f))
            .map(|f| f.to_string())
            .collect();
        let library_versions = crate::mac::BACKENDS
            .iter()
            .map(|b| (b.name.to_string(), (b.version)()))
            .collect();
        Host {
            cpu_model: field("model name").unwrap_or_else(|| std::env::consts::ARCH.to_string()),
            cpu_features,
            online_cpus: online_cpus(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
            governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            library_versions,
            macbench_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: option_env!("MACBENCH_GIT_COMMIT").map(str::to_string),
        }
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Online CPUs from `/sys/devices/system/cpu/online` (e.g. "0-3,6"); falls back to 0..available_parallelism.
pub fn online_cpus() -> Vec<usize> {
    read_trimmed("/sys/devices/system/cpu/online")
        .and_then(|s| parse_cpu_list(&s).ok())
        .unwrap_or_else(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            (0..n).collect()
        })
}

/// The largest CPU number a CPU list may name: Linux's own limit (`NR_CPUS` ≤ 8192). Checking it before a
/// range is expanded keeps `0-18446744073709551615` from asking for exabytes.
pub const MAX_CPU: usize = 8191;

/// Parse a kernel-style CPU list: `0,1`, `0-7`, `0-3,8-11`. Sorted, without duplicates; every number at
/// most [`MAX_CPU`].
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(format!("empty item in CPU list {text:?}"));
        }
        let parse = |s: &str| {
            let n = s
                .trim()
                .parse::<usize>()
                .map_err(|_| format!("{s:?} is not a CPU number (in {text:?})"))?;
            if n > MAX_CPU {
                return Err(format!(
                    "CPU {n} is beyond the largest CPU number accepted ({MAX_CPU})"
                ));
            }
            Ok(n)
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (parse(a)?, parse(b)?);
                if a > b {
                    return Err(format!("range {part:?} runs backwards"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(parse(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_like_the_kernel_writes_them() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("0,1").unwrap(), vec![0, 1]);
        assert_eq!(parse_cpu_list("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("2,0-1,1").unwrap(), vec![0, 1, 2]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert!(parse_cpu_list("0,,1").is_err());
        assert!(parse_cpu_list("0-18446744073709551615").is_err());
        assert!(parse_cpu_list("0-4294967295").is_err());
        assert_eq!(parse_cpu_list("0-8191").unwrap().len(), 8192);
    }
}
