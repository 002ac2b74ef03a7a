//! What could have disturbed a run: the machine's state before and after it, as careful benchmark suites
//! record it (load average, other processes' CPU time on the chosen cores, the frequency governor and
//! boost, the power source, thermal throttling).
//!
//! Why here: `run` and `compare` both record it, and `report` shows it; it is a service of the operating
//! system like the CPU lists, so it sits below them all (STYLE §11). Every reader takes a root directory
//! ([`Probe::at`]) so tests lay out fake `/proc` and `/sys` trees; what cannot be read is `None` —
//! reported as unknown, never guessed. The arithmetic ([`other_share`]) is pure and tested on constructed
//! counters.
//!
//! Other processes' share of the chosen cores is the cores' busy time in `/proc/stat` less our own
//! process's CPU time (`/proc/self/stat`: its threads and its waited-for children, such as a peer's tool),
//! over the cores' total time. Our threads run on the chosen cores (sessions and coordinator are pinned
//! there), so the difference is what others took from them; it is clamped at 0, since our main thread
//! may run elsewhere. Both files count in clock ticks (`USER_HZ`, 10 ms), the resolution of the figure.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Other processes' share of the chosen cores above which a run says the machine was busy and
/// `--quiet-check` refuses to start.
pub const BUSY_SHARE: f64 = 0.10;

/// How long the state is sampled before a run starts (the "before" share, and `--quiet-check`'s test).
pub const BEFORE_SAMPLE: Duration = Duration::from_millis(250);

/// Busy and total clock ticks of one CPU (`/proc/stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub busy: u64,
    pub total: u64,
}

/// Counters read at one instant: the chosen CPUs' ticks (summed) and our own process's ticks; `None`
/// where unreadable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub cpus: Option<CpuTicks>,
    pub own_ticks: Option<u64>,
    pub throttle_events: Option<u64>,
}

/// The machine's state at one point of a run. Written into the results file (`Document::conditions`)
/// and read back; fields an older file lacks are unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Snapshot {
    /// `/proc/loadavg`: 1, 5 and 15 minutes.
    pub load_average: Option<[f64; 3]>,
    /// Other processes' share of the chosen CPUs over `interval_s` before this point (0.25 = a
    /// quarter of their time).
    pub other_cpu_share: Option<f64>,
    pub interval_s: f64,
    /// The chosen CPUs' cpufreq governors (`performance`, or `cpu0 powersave, cpu1 performance`).
    pub governor: Option<String>,
    /// Turbo/boost: `on` or `off` (cpufreq `boost`, or intel_pstate's `no_turbo`).
    pub boost: Option<String>,
    /// `AC` or `battery`; `None` where the machine has no power supply to report (a server, a VM).
    pub power_source: Option<String>,
    /// Thermal throttle events so far on the chosen CPUs (core and package counters summed).
    pub thermal_throttle_events: Option<u64>,
}

/// The state before and after a run, and the CPUs it is about.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunConditions {
    /// The chosen CPUs, as a CPU list.
    pub cpus: String,
    /// Sampled over [`BEFORE_SAMPLE`] before anything ran.
    pub before: Snapshot,
    /// At the end; its share covers the whole run.
    pub after: Option<Snapshot>,
}

impl RunConditions {
    /// The largest other-process share seen, if any was readable.
    pub fn worst_share(&self) -> Option<f64> {
        let after = self.after.as_ref().and_then(|a| a.other_cpu_share);
        match (self.before.other_cpu_share, after) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// The one warning line when other processes used more than [`BUSY_SHARE`] of the chosen CPUs
    /// before or during the run; `None` on a quiet (or unreadable) machine.
    pub fn busy_warning(&self) -> Option<String> {
        let share = self.worst_share().filter(|s| *s > BUSY_SHARE)?;
        let load = self
            .after
            .as_ref()
            .and_then(|a| a.load_average)
            .or(self.before.load_average)
            .map_or(String::new(), |l| format!(", load average {:.2}", l[0]));
        Some(format!(
            "warning: the machine was busy: other processes used {:.0} % of CPU(s) {}{load}; the figures may be disturbed (a quieter machine, or --quiet-check to refuse)",
            share * 100.0,
            self.cpus
        ))
    }
}

/// Other processes' share of the chosen CPUs between two readings: (Δbusy − Δown) / Δtotal, at least
/// 0 and at most 1. `None` when a counter is unreadable or no time passed.
pub fn other_share(before: &Counters, after: &Counters) -> Option<f64> {
    let (b, a) = (before.cpus?, after.cpus?);
    let total = a.total.checked_sub(b.total).filter(|t| *t > 0)?;
    let busy = a.busy.saturating_sub(b.busy);
    let own = after.own_ticks?.saturating_sub(before.own_ticks?);
    Some((busy.saturating_sub(own) as f64 / total as f64).clamp(0.0, 1.0))
}

/// Reads the machine's state under a root directory (`/` for the real one).
#[derive(Debug, Clone)]
pub struct Probe {
    root: PathBuf,
}

impl Probe {
    /// The real machine.
    pub fn system() -> Probe {
        Probe::at("/")
    }

    /// A tree laid out like `/` under `root` (tests).
    pub fn at(root: impl AsRef<Path>) -> Probe {
        Probe {
            root: root.as_ref().to_path_buf(),
        }
    }

    fn read(&self, path: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.root.join(path.trim_start_matches('/'))).ok()?;
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    /// `/proc/loadavg`'s three averages.
    pub fn load_average(&self) -> Option<[f64; 3]> {
        let text = self.read("proc/loadavg")?;
        let mut fields = text.split_whitespace().map(|f| f.parse::<f64>().ok());
        Some([fields.next()??, fields.next()??, fields.next()??])
    }

    /// The chosen CPUs' ticks from `/proc/stat`, summed; `None` if any of them is missing.
    pub fn cpu_ticks(&self, cpus: &[usize]) -> Option<CpuTicks> {
        let text = self.read("proc/stat")?;
        let mut sum = CpuTicks::default();
        for &cpu in cpus {
            let name = format!("cpu{cpu}");
            let line = text
                .lines()
                .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
            let v: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .map(|f| f.parse::<u64>().ok())
                .collect::<Option<_>>()?;
            // user nice system idle iowait irq softirq steal (guest time is inside user already).
            let total: u64 = v.iter().take(8).sum();
            let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
            sum.busy += total.saturating_sub(idle);
            sum.total += total;
        }
        Some(sum)
    }

    /// The chosen CPUs' steal time from `/proc/stat` (the 8th counter: time the hypervisor ran
    /// something else while this guest's vCPU wanted to run), summed, in clock ticks (`USER_HZ`).
    pub fn steal_ticks(&self, cpus: &[usize]) -> Option<u64> {
        let text = self.read("proc/stat")?;
        cpus.iter()
            .map(|cpu| {
                let name = format!("cpu{cpu}");
                let line = text
                    .lines()
                    .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
                line.split_whitespace().nth(8)?.parse::<u64>().ok()
            })
            .sum()
    }

    /// Interrupts taken by the chosen CPUs so far, every source of `/proc/interrupts` summed (its
    /// columns are the online CPUs in order, named by the header line).
    pub fn interrupts(&self, cpus: &[usize]) -> Option<u64> {
        let text = self.read("proc/interrupts")?;
        let mut lines = text.lines();
        let header: Vec<usize> = lines
            .next()?
            .split_whitespace()
            .map(|c| c.strip_prefix("CPU")?.parse::<usize>().ok())
            .collect::<Option<_>>()?;
        let columns: Vec<usize> = cpus
            .iter()
            .map(|c| header.iter().position(|h| h == c))
            .collect::<Option<_>>()?;
        let mut sum = 0u64;
        for line in lines {
            let mut fields = line.split_whitespace();
            fields.next(); // the source's name, `NMI:`, `24:`
            let counts: Vec<u64> = fields
                .take(header.len())
                .map_while(|f| f.parse::<u64>().ok())
                .collect();
            // Rows with fewer counts than CPUs (`ERR:`, `MIS:`) are global, not per CPU.
            if counts.len() == header.len() {
                sum += columns.iter().map(|&c| counts[c]).sum::<u64>();
            }
        }
        Some(sum)
    }

    /// One of our threads' scheduler statistics (`/proc/self/task/TID/schedstat`): time on a CPU,
    /// time spent runnable but waiting for one (the run delay), both ns, and slices run.
    pub fn thread_schedstat(&self, tid: i32) -> Option<[u64; 3]> {
        let text = self.read(&format!("proc/self/task/{tid}/schedstat"))?;
        let mut f = text.split_whitespace().map(|v| v.parse::<u64>().ok());
        Some([f.next()??, f.next()??, f.next()??])
    }

    /// One of our threads' involuntary context switches so far (`nonvoluntary_ctxt_switches` in
    /// `/proc/self/task/TID/status`): the times the kernel took its CPU away while it could run.
    pub fn thread_involuntary_switches(&self, tid: i32) -> Option<u64> {
        let text = self.read(&format!("proc/self/task/{tid}/status"))?;
        text.lines()
            .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))?
            .trim()
            .parse()
            .ok()
    }

    /// Our process's CPU ticks, its threads' and its waited-for children's (`/proc/self/stat` utime,
    /// stime, cutime, cstime).
    pub fn own_ticks(&self) -> Option<u64> {
        let text = self.read("proc/self/stat")?;
        // The command name may hold spaces and parentheses: fields are counted after the last ')'.
        let rest = &text[text.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // After the name, field 3 (state) is index 0, so utime (field 14) is index 11.
        (11..15)
            .map(|i| fields.get(i)?.parse::<u64>().ok())
            .sum::<Option<u64>>()
    }

    /// The chosen CPUs' governors: one word when they agree.
    pub fn governor(&self, cpus: &[usize]) -> Option<String> {
        let each: Vec<(usize, String)> = cpus
            .iter()
            .map(|&c| {
                let g = self.read(&format!(
                    "sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
                ))?;
                Some((c, g))
            })
            .collect::<Option<_>>()?;
        let first = &each.first()?.1;
        if each.iter().all(|(_, g)| g == first) {
            return Some(first.clone());
        }
        Some(
            each.iter()
                .map(|(c, g)| format!("cpu{c} {g}"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    }

    /// Boost: cpufreq's global `boost` (1 = on), else intel_pstate's `no_turbo` (1 = off).
    pub fn boost(&self) -> Option<String> {
        let on_off = |on: bool| if on { "on" } else { "off" }.to_string();
        if let Some(b) = self.read("sys/devices/system/cpu/cpufreq/boost") {
            return Some(on_off(b == "1"));
        }
        self.read("sys/devices/system/cpu/intel_pstate/no_turbo")
            .map(|n| on_off(n == "0"))
    }

    /// `AC` when a mains supply is online, `battery` when only a battery reports; `None` when the
    /// machine reports no power supply.
    pub fn power_source(&self) -> Option<String> {
        let dir = self.root.join("sys/class/power_supply");
        let mut kinds: Vec<(String, bool)> = Vec::new();
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(kind) = self.read(&format!("sys/class/power_supply/{name}/type")) else {
                continue;
            };
            let online = self.read(&format!("sys/class/power_supply/{name}/online"));
            kinds.push((kind, online.as_deref() == Some("1")));
        }
        if kinds.iter().any(|(k, online)| k == "Mains" && *online) {
            Some("AC".into())
        } else if kinds.iter().any(|(k, _)| k == "Battery") {
            Some("battery".into())
        } else {
            None
        }
    }

    /// Thermal throttle events on the chosen CPUs (`thermal_throttle/core_throttle_count` and
    /// `package_throttle_count`, summed); `None` where the kernel exposes none.
    pub fn throttle_events(&self, cpus: &[usize]) -> Option<u64> {
        let mut sum = None;
        for c in cpus {
            for counter in ["core_throttle_count", "package_throttle_count"] {
                let path = format!("sys/devices/system/cpu/cpu{c}/thermal_throttle/{counter}");
                if let Some(n) = self.read(&path).and_then(|t| t.parse::<u64>().ok()) {
                    sum = Some(sum.unwrap_or(0) + n);
                }
            }
        }
        sum
    }

    /// The counters of this instant for the chosen CPUs.
    pub fn counters(&self, cpus: &[usize]) -> Counters {
        Counters {
            cpus: self.cpu_ticks(cpus),
            own_ticks: self.own_ticks(),
            throttle_events: self.throttle_events(cpus),
        }
    }

    /// The state now, with other processes' share since `since` (read `interval` ago).
    pub fn snapshot(&self, cpus: &[usize], since: &Counters, interval: Duration) -> Snapshot {
        let now = self.counters(cpus);
        Snapshot {
            load_average: self.load_average(),
            other_cpu_share: other_share(since, &now),
            interval_s: interval.as_secs_f64(),
            governor: self.governor(cpus),
            boost: self.boost(),
            power_source: self.power_source(),
            thermal_throttle_events: now.throttle_events,
        }
    }
}

/// Records a run's conditions: the "before" state over a short sample, then "after" over the run.
#[derive(Debug)]
pub struct Recorder {
    probe: Probe,
    cpus: Vec<usize>,
    start: Counters,
    started: std::time::Instant,
    pub conditions: RunConditions,
}

impl Recorder {
    /// Sample the machine for `sample` (sleeping; nothing of ours runs) and record the "before" state.
    pub fn before(probe: Probe, cpus: &[usize], sample: Duration) -> Recorder {
        let first = probe.counters(cpus);
        std::thread::sleep(sample);
        let before = probe.snapshot(cpus, &first, sample);
        let start = probe.counters(cpus);
        Recorder {
            conditions: RunConditions {
                cpus: super::format_cpu_list(cpus),
                before,
                after: None,
            },
            probe,
            cpus: cpus.to_vec(),
            start,
            started: std::time::Instant::now(),
        }
    }

    /// Record the "after" state, its share over the run since [`Recorder::before`].
    pub fn after(&mut self) -> &RunConditions {
        let after = self
            .probe
            .snapshot(&self.cpus, &self.start, self.started.elapsed());
        self.conditions.after = Some(after);
        &self.conditions
    }
}

/// The conditions as (label, value) rows for a terminal or a report's host table; unreadable values
/// say `unknown`.
pub fn describe(c: &RunConditions) -> Vec<(&'static str, String)> {
    let unknown = || "unknown".to_string();
    let both = |f: &dyn Fn(&Snapshot) -> Option<String>| {
        let before = f(&c.before).unwrap_or_else(unknown);
        match c.after.as_ref() {
            Some(a) => format!("{before} → {}", f(a).unwrap_or_else(unknown)),
            None => before,
        }
    };
    vec![
        (
            "load average, 1 min (before → after)",
            both(&|s| s.load_average.map(|l| format!("{:.2}", l[0]))),
        ),
        (
            "other processes on the chosen CPUs (before → during)",
            format!(
                "{} of CPU(s) {}",
                both(&|s| s.other_cpu_share.map(|x| format!("{:.1} %", x * 100.0))),
                c.cpus
            ),
        ),
        (
            "governor, boost",
            both(&|s| {
                Some(format!(
                    "{}, boost {}",
                    s.governor.clone().unwrap_or_else(unknown),
                    s.boost.clone().unwrap_or_else(unknown)
                ))
            }),
        ),
        ("power source", both(&|s| s.power_source.clone())),
        (
            "thermal throttle events",
            both(&|s| s.thermal_throttle_events.map(|n| n.to_string())),
        ),
    ]
}
