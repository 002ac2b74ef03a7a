//! What kind of core each online CPU is: its relative capacity, its highest clock and, on ARM, its
//! core design. A phone's big, middle and little cores differ by 2–4× in MAC speed, so a result must
//! say which kind of core it ran on (docs/methodology.md §2), and `list` and the report show the
//! machine's core types.
//!
//! Sources, all optional (a VM or an emulator often has none): `cpu_capacity` (the scheduler's
//! 0–1024 scale, on big.LITTLE and Intel hybrid machines), `cpufreq/cpuinfo_max_freq` (kHz), and the
//! `CPU implementer` / `CPU part` lines of `/proc/cpuinfo` on ARM, named from Arm's and vendors'
//! published part numbers. Also here: the CPU features ARM libraries switch on, read from the
//! kernel's hardware-capability words (`getauxval`), which are right under emulation too where
//! `/proc/cpuinfo` describes the host.

use serde::{Deserialize, Serialize};

/// One online CPU as the kernel describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Core {
    pub cpu: usize,
    /// `cpu_capacity`: 1024 for the fastest core type, proportionally less for slower ones.
    pub capacity: Option<u32>,
    /// `cpuinfo_max_freq` in kHz.
    pub max_khz: Option<u64>,
    /// The core design on ARM ("Cortex-A76"), from `/proc/cpuinfo`.
    pub design: Option<String>,
}

/// Every online CPU's [`Core`], in CPU order.
pub fn cores() -> Vec<Core> {
    let designs = arm_designs(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default());
    super::online_cpus()
        .into_iter()
        .map(|cpu| {
            let dir = format!("/sys/devices/system/cpu/cpu{cpu}");
            let number = |file: &str| -> Option<u64> {
                std::fs::read_to_string(format!("{dir}/{file}"))
                    .ok()?
                    .trim()
                    .parse()
                    .ok()
            };
            Core {
                cpu,
                capacity: number("cpu_capacity").and_then(|c| u32::try_from(c).ok()),
                max_khz: number("cpufreq/cpuinfo_max_freq").filter(|&k| k > 0),
                design: designs
                    .iter()
                    .find(|(c, _)| *c == cpu)
                    .map(|(_, d)| d.clone()),
            }
        })
        .collect()
}

/// The CPU with the highest `cpuinfo_max_freq` and that frequency in kHz.
pub fn highest_max_freq_khz() -> Option<(usize, u64)> {
    cores()
        .into_iter()
        .filter_map(|c| Some((c.cpu, c.max_khz?)))
        .max_by_key(|&(cpu, khz)| (khz, std::cmp::Reverse(cpu)))
}

/// CPUs of one kind: same design, capacity and highest clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreType {
    pub cpus: Vec<usize>,
    pub design: Option<String>,
    pub capacity: Option<u32>,
    pub max_khz: Option<u64>,
}

impl CoreType {
    /// "4× Cortex-A55 (capacity 446, 1.80 GHz): cpus 0-3".
    pub fn describe(&self) -> String {
        let mut facts = Vec::new();
        if let Some(c) = self.capacity {
            facts.push(format!("capacity {c}"));
        }
        if let Some(k) = self.max_khz {
            facts.push(format!("{:.2} GHz", k as f64 / 1e6));
        }
        let mut text = format!(
            "{}× {}",
            self.cpus.len(),
            self.design.as_deref().unwrap_or("core")
        );
        if !facts.is_empty() {
            text.push_str(&format!(" ({})", facts.join(", ")));
        }
        let which = if self.cpus.len() == 1 { "cpu" } else { "cpus" };
        format!("{text}: {which} {}", super::format_cpu_list(&self.cpus))
    }
}

/// Group cores into types, slowest first (by capacity, then clock): a phone's little, middle and big
/// clusters. One type on a homogeneous machine.
pub fn core_types(cores: &[Core]) -> Vec<CoreType> {
    let mut types: Vec<CoreType> = Vec::new();
    for core in cores {
        match types.iter_mut().find(|t| {
            t.design == core.design && t.capacity == core.capacity && t.max_khz == core.max_khz
        }) {
            Some(t) => t.cpus.push(core.cpu),
            None => types.push(CoreType {
                cpus: vec![core.cpu],
                design: core.design.clone(),
                capacity: core.capacity,
                max_khz: core.max_khz,
            }),
        }
    }
    types.sort_by_key(|t| (t.capacity, t.max_khz, t.cpus.first().copied()));
    types
}

/// `(cpu, design)` for each `processor` block of an ARM `/proc/cpuinfo` that names its implementer
/// and part; empty elsewhere (x86 has no such lines, and qemu-user shows the host's file).
pub fn arm_designs(cpuinfo: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for block in cpuinfo.split("\n\n") {
        let field = |name: &str| {
            block
                .lines()
                .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let (Some(cpu), Some(implementer), Some(part)) = (
            field("processor").and_then(|p| p.parse::<usize>().ok()),
            field("CPU implementer").and_then(|v| hex(&v)),
            field("CPU part").and_then(|v| hex(&v)),
        ) else {
            continue;
        };
        out.push((cpu, arm_design_name(implementer, part)));
    }
    out
}

fn hex(text: &str) -> Option<u32> {
    u32::from_str_radix(text.trim().trim_start_matches("0x"), 16).ok()
}

/// A core design's name from its `MIDR_EL1` implementer and part number (Arm's Technical Reference
/// Manuals; Linux's `arch/arm64/include/asm/cputype.h` collects them). Unknown parts keep their numbers.
pub fn arm_design_name(implementer: u32, part: u32) -> String {
    let name = match (implementer, part) {
        (0x41, 0xd03) => "Cortex-A53",
        (0x41, 0xd04) => "Cortex-A35",
        (0x41, 0xd05) => "Cortex-A55",
        (0x41, 0xd07) => "Cortex-A57",
        (0x41, 0xd08) => "Cortex-A72",
        (0x41, 0xd09) => "Cortex-A73",
        (0x41, 0xd0a) => "Cortex-A75",
        (0x41, 0xd0b) => "Cortex-A76",
        (0x41, 0xd0c) => "Neoverse-N1",
        (0x41, 0xd0d) => "Cortex-A77",
        (0x41, 0xd40) => "Neoverse-V1",
        (0x41, 0xd41) => "Cortex-A78",
        (0x41, 0xd44) => "Cortex-X1",
        (0x41, 0xd46) => "Cortex-A510",
        (0x41, 0xd47) => "Cortex-A710",
        (0x41, 0xd48) => "Cortex-X2",
        (0x41, 0xd49) => "Neoverse-N2",
        (0x41, 0xd4b) => "Cortex-A78C",
        (0x41, 0xd4d) => "Cortex-A715",
        (0x41, 0xd4e) => "Cortex-X3",
        (0x41, 0xd4f) => "Neoverse-V2",
        (0x41, 0xd80) => "Cortex-A520",
        (0x41, 0xd81) => "Cortex-A720",
        (0x41, 0xd82) => "Cortex-X4",
        (0x41, 0xd84) => "Neoverse-V3",
        (0x41, 0xd8e) => "Neoverse-N3",
        (0x61, _) => "Apple",
        (0x51, 0x804) => "Kryo 4xx Gold",
        (0x51, 0x805) => "Kryo 4xx Silver",
        (0x51, 0x001) => "Oryon",
        (0xc0, 0xac3) => "Ampere-1",
        (0xc0, 0xac4) => "Ampere-1a",
        (0x48, 0xd01) => "TaiShan-v110",
        _ => "",
    };
    if name.is_empty() {
        format!("implementer {implementer:#x} part {part:#x}")
    } else {
        name.to_string()
    }
}

/// The aarch64 features MAC libraries choose code paths by, as the kernel's `/proc/cpuinfo` names
/// them, from `AT_HWCAP` (bits from the kernel's `uapi/asm/hwcap.h`). Empty on other architectures.
pub fn aarch64_features() -> Vec<String> {
    if !cfg!(target_arch = "aarch64") {
        return Vec::new();
    }
    let (hwcap, hwcap2) = super::kernel::hwcaps();
    aarch64_feature_names(hwcap, hwcap2)
}

/// The names of the set bits (separate from reading them, so tests can check the table on x86).
pub fn aarch64_feature_names(hwcap: u64, hwcap2: u64) -> Vec<String> {
    const HWCAP: &[(&str, u32)] = &[
        ("asimd", 1),
        ("aes", 3),
        ("pmull", 4),
        ("sha1", 5),
        ("sha2", 6),
        ("crc32", 7),
        ("sha3", 17),
        ("sm3", 18),
        ("sm4", 19),
        ("sha512", 21),
        ("sve", 22),
    ];
    const HWCAP2: &[(&str, u32)] = &[("sve2", 1), ("sveaes", 2), ("svepmull", 3)];
    let pick = |word: u64, table: &[(&'static str, u32)]| -> Vec<String> {
        table
            .iter()
            .filter(|&&(_, bit)| word & (1 << bit) != 0)
            .map(|&(name, _)| name.to_string())
            .collect()
    };
    let mut names = pick(hwcap, HWCAP);
    names.extend(pick(hwcap2, HWCAP2));
    names
}

/// Each distinct group of SMT siblings among the online CPUs, as the kernel lists them.
pub fn smt_siblings() -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for cpu in super::online_cpus() {
        let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(group) = super::parse_cpu_list(text.trim()) else {
            continue;
        };
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Snapdragon-style 1+3+4 layout, as the kernel writes /proc/cpuinfo on arm64.
    const PHONE_CPUINFO: &str = "processor\t: 0\nBogoMIPS\t: 38.40\nCPU implementer\t: 0x41\n\
        CPU architecture: 8\nCPU part\t: 0xd05\n\nprocessor\t: 1\nCPU implementer\t: 0x41\n\
        CPU part\t: 0xd0d\n\nprocessor\t: 2\nCPU implementer\t: 0x41\nCPU part\t: 0xd44\n\n\
        processor\t: 3\nCPU implementer\t: 0x12\nCPU part\t: 0x345\n";

    #[test]
    fn arm_cpuinfo_names_each_core_design() {
        assert_eq!(
            arm_designs(PHONE_CPUINFO),
            vec![
                (0, "Cortex-A55".to_string()),
                (1, "Cortex-A77".to_string()),
                (2, "Cortex-X1".to_string()),
                (3, "implementer 0x12 part 0x345".to_string()),
            ]
        );
        // x86's /proc/cpuinfo has no implementer lines.
        assert!(arm_designs("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: aes\n").is_empty());
    }

    #[test]
    fn cores_group_into_types_slowest_first() {
        let core = |cpu, design: &str, capacity, mhz: u64| Core {
            cpu,
            capacity: Some(capacity),
            max_khz: Some(mhz * 1000),
            design: Some(design.to_string()),
        };
        let cores = vec![
            core(0, "Cortex-A55", 446, 1800),
            core(1, "Cortex-A55", 446, 1800),
            core(2, "Cortex-X1", 1024, 2840),
            core(3, "Cortex-A78", 870, 2420),
            core(4, "Cortex-A78", 870, 2420),
        ];
        let types = core_types(&cores);
        let described: Vec<_> = types.iter().map(CoreType::describe).collect();
        assert_eq!(
            described,
            vec![
                "2× Cortex-A55 (capacity 446, 1.80 GHz): cpus 0-1",
                "2× Cortex-A78 (capacity 870, 2.42 GHz): cpus 3-4",
                "1× Cortex-X1 (capacity 1024, 2.84 GHz): cpu 2",
            ]
        );
        // A VM with nothing in sysfs: one anonymous type.
        let bare = [0, 1].map(|cpu| Core {
            cpu,
            ..Core::default()
        });
        assert_eq!(core_types(&bare)[0].describe(), "2× core: cpus 0-1");
    }

    #[test]
    fn hwcap_bits_name_the_crypto_extensions() {
        // A Cortex-A76 (asimd aes pmull sha1 sha2 crc32) without SHA-3/SHA-512.
        let hwcap = (1 << 1) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7);
        assert_eq!(
            aarch64_feature_names(hwcap, 0),
            ["asimd", "aes", "pmull", "sha1", "sha2", "crc32"]
        );
        assert_eq!(aarch64_feature_names(1 << 21, 1 << 1), ["sha512", "sve2"]);
    }
}
