//! RAPL through perf events: the `power` PMU's `energy-pkg`, `energy-cores` and `energy-psys`.
//!
//! The kernel describes each event in sysfs (Documentation/ABI/testing/sysfs-bus-event_source-devices-events):
//! `/sys/bus/event_source/devices/power/type` is the PMU's type number, `events/energy-pkg` its config
//! (`event=0x02`), `events/energy-pkg.scale` the joules per count and `events/energy-pkg.unit`
//! `Joules`. The counter is opened system-wide on one CPU of the package (`pid = -1`, the PMU's
//! `cpumask`), which needs `kernel.perf_event_paranoid` ≤ 0 or CAP_PERFMON; the kernel accumulates the
//! 32-bit RAPL register into a 64-bit count, so there is no wrap to undo. Preferred over powercap for
//! that reason, and because the scale comes from the kernel rather than being assumed.

use super::method::counts_to_joules;
use super::{read_attribute, read_integer, under, Meter, Probe, Scope, Unavailable};
use std::path::Path;
use std::time::Duration;

/// The PMU's directory, below the root.
pub const POWER_PMU: &str = "/sys/bus/event_source/devices/power";

/// The events tried, with what each covers.
const EVENTS: &[(&str, Scope)] = &[
    ("energy-pkg", Scope::Package),
    ("energy-cores", Scope::Cores),
    ("energy-psys", Scope::Psys),
];

/// Linux capability numbers (include/uapi/linux/capability.h).
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

/// An event as sysfs describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSpec {
    pub pmu_type: u32,
    pub config: u64,
    pub scale: f64,
    pub cpu: i32,
}

/// The `config` of an event file: `event=0x02` (the power PMU's only field).
pub fn parse_event_config(text: &str) -> Result<u64, String> {
    let value = text
        .trim()
        .strip_prefix("event=")
        .ok_or_else(|| format!("event {text:?} is not of the form event=0xNN"))?;
    let parsed = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse::<u64>(),
    };
    parsed.map_err(|_| format!("event {text:?}: {value:?} is not a number"))
}

/// The first CPU of a `cpumask` file (`0`, `0,36`, `0-3`): where a package's counter is read.
pub fn first_cpu(text: &str) -> Option<i32> {
    let first = text.trim().split([',', '-']).next()?;
    first.parse().ok()
}

/// Read the description of `event` from the PMU directory under `root`.
pub fn event_spec(root: &Path, event: &str) -> Result<EventSpec, String> {
    let pmu = under(root, POWER_PMU);
    if !pmu.is_dir() {
        return Err(format!(
            "no `power` PMU ({POWER_PMU} absent: no RAPL, or a VM that hides it)"
        ));
    }
    let events = pmu.join("events");
    let config_text = read_attribute(&events.join(event))
        .map_err(|_| format!("the power PMU has no {event} event"))?;
    let unit = read_attribute(&events.join(format!("{event}.unit"))).unwrap_or_default();
    if unit != "Joules" {
        return Err(format!("{event}.unit is {unit:?}, not Joules"));
    }
    let scale_text = read_attribute(&events.join(format!("{event}.scale")))
        .map_err(|e| format!("{event}.scale: {e}"))?;
    let scale: f64 = scale_text
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0)
        .ok_or_else(|| format!("{event}.scale {scale_text:?} is not a positive number"))?;
    let cpumask = read_attribute(&pmu.join("cpumask")).unwrap_or_else(|_| "0".to_string());
    Ok(EventSpec {
        pmu_type: read_integer(&pmu.join("type"))?,
        config: parse_event_config(&config_text)?,
        scale,
        cpu: first_cpu(&cpumask).unwrap_or(0),
    })
}

/// Whether capability `bit` is in the `CapEff:` line of a `/proc/PID/status` text.
pub fn has_capability(status: &str, bit: u32) -> bool {
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|mask| mask & (1u64 << bit) != 0)
}

/// Why a system-wide counter will be refused, from the sysctl and this process's capabilities;
/// `None` when it is allowed.
pub fn permission_refusal(root: &Path) -> Option<String> {
    let paranoid: i32 = read_integer(&under(root, "/proc/sys/kernel/perf_event_paranoid")).ok()?;
    let status = std::fs::read_to_string(under(root, "/proc/self/status")).unwrap_or_default();
    let privileged = has_capability(&status, CAP_PERFMON) || has_capability(&status, CAP_SYS_ADMIN);
    (paranoid > 0 && !privileged).then(|| {
        format!(
            "kernel.perf_event_paranoid is {paranoid} and this process lacks CAP_PERFMON; system-wide energy events need `sudo sysctl kernel.perf_event_paranoid=0` (or CAP_PERFMON)"
        )
    })
}

/// An open system-wide energy counter.
pub struct PerfEnergy {
    event: String,
    scope: Scope,
    spec: EventSpec,
    fd: std::os::fd::OwnedFd,
    first_count: u64,
}

impl PerfEnergy {
    /// Open `event` as `spec` describes it.
    pub fn open(event: &str, scope: Scope, spec: EventSpec) -> Result<PerfEnergy, String> {
        use perf_event_open_sys::bindings as perf;
        let mut attr = perf::perf_event_attr {
            type_: spec.pmu_type,
            size: std::mem::size_of::<perf::perf_event_attr>() as u32,
            config: spec.config,
            ..Default::default()
        };
        // pid -1 with one CPU: a system-wide counter on that CPU.
        let fd = crate::system::kernel::perf_event_open(&mut attr, -1, spec.cpu)
            .map_err(|err| format!("perf_event_open({event}, cpu {}): {err}", spec.cpu))?;
        let mut meter = PerfEnergy {
            event: event.to_string(),
            scope,
            spec,
            fd,
            first_count: 0,
        };
        meter.first_count = meter.read_count()?;
        Ok(meter)
    }

    fn read_count(&self) -> Result<u64, String> {
        crate::system::clock::read_counter_fd(std::os::fd::AsRawFd::as_raw_fd(&self.fd)).ok_or_else(
            || {
                format!(
                    "reading {}: {}",
                    self.event,
                    std::io::Error::last_os_error()
                )
            },
        )
    }
}

impl Meter for PerfEnergy {
    fn name(&self) -> String {
        format!("perf power/{} (cpu {})", self.event, self.spec.cpu)
    }
    fn scope(&self) -> Scope {
        self.scope
    }
    fn resolution_joules(&self) -> f64 {
        // One count as the kernel scales it; the hardware's energy unit may be coarser.
        self.spec.scale
    }
    fn update_interval(&self) -> Duration {
        Duration::from_millis(1)
    }
    fn read_joules(&mut self) -> Result<f64, String> {
        let now = self.read_count()?;
        Ok(counts_to_joules(
            now.wrapping_sub(self.first_count),
            self.spec.scale,
        ))
    }
}

/// Every energy event of the `power` PMU under `root`, opened, or why not (one reason when the PMU
/// itself is absent or the sysctl forbids it).
pub fn probe(root: &Path) -> Probe {
    let mut found = Probe::default();
    let refuse = |found: &mut Probe, meter: &str, reason: String| {
        found.unavailable.push(Unavailable {
            meter: meter.to_string(),
            reason,
        })
    };
    if !under(root, POWER_PMU).is_dir() {
        let reason = format!("no `power` PMU ({POWER_PMU} absent: no RAPL, or a VM that hides it)");
        refuse(&mut found, "perf power/energy-pkg", reason);
        return found;
    }
    if let Some(reason) = permission_refusal(root) {
        refuse(&mut found, "perf power/energy-*", reason);
        return found;
    }
    for (event, scope) in EVENTS {
        let meter = format!("perf power/{event}");
        // Only the package event is required; the others are reported only when listed.
        let listed = under(root, POWER_PMU).join("events").join(event).exists();
        if !listed && *scope != Scope::Package {
            continue;
        }
        match event_spec(root, event).and_then(|spec| PerfEnergy::open(event, *scope, spec)) {
            Ok(m) => found.meters.push(Box::new(m)),
            Err(reason) => refuse(&mut found, &meter, reason),
        }
    }
    found
}
