//! Energy meters: what a MAC costs in joules, where the machine has a meter that says so.
//!
//! One small trait, [`Meter`], hides where the joules come from: RAPL through perf events
//! ([`perf`]), RAPL through powercap sysfs ([`powercap`]), or a battery's fuel gauge ([`battery`]).
//! Each reads a *cumulative* energy in joules, so the code above only ever subtracts two readings;
//! counter wrap and unit scaling stay inside the reader that knows its counter. [`probe`] tries every
//! meter and returns the readable ones and, for each one that is not, a one-line reason naming the fix
//! (a sysctl, a udev rule, unplugging the charger): a meter that is absent is said, never guessed.
//!
//! Everything is read below a root directory, `/` in use. Tests lay out the kernel's files in a
//! temporary directory and name it in `MACBENCH_SYSFS_ROOT` ([`system_root`]); the variable exists
//! only for tests, since no real machine has its sysfs elsewhere. The arithmetic that turns windows
//! of readings into nJ/byte is pure and lives in [`method`]. This module sits low: it uses `std`,
//! `libc`, `serde` and `stats`, and knows nothing of scenarios, the runner or the exporters.

pub mod battery;
pub mod method;
pub mod perf;
pub mod powercap;

pub use method::{Energy, Round, Window};

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The test-only variable naming a directory that stands for `/` (fake sysfs and procfs trees).
pub const SYSFS_ROOT_VARIABLE: &str = "MACBENCH_SYSFS_ROOT";

/// What a meter's joules cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// A CPU package (socket): cores, caches, uncore.
    Package,
    /// The cores of a package only (RAPL PP0).
    Cores,
    /// The package's graphics or uncore (RAPL PP1).
    Uncore,
    /// Memory (RAPL DRAM).
    Dram,
    /// The whole platform (RAPL psys, Skylake and later laptops).
    Psys,
    /// Everything the battery feeds: the whole device.
    Battery,
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let text = match self {
            Scope::Package => "package",
            Scope::Cores => "cores",
            Scope::Uncore => "uncore",
            Scope::Dram => "dram",
            Scope::Psys => "psys",
            Scope::Battery => "battery",
        };
        f.write_str(text)
    }
}

/// The shortest window worth measuring with a meter of this scope: RAPL counters update about every
/// millisecond, so a second holds ~1000 updates; fuel gauges update every few seconds and average, so
/// half a minute holds several of their updates.
pub fn shortest_window(scope: Scope) -> Duration {
    match scope {
        Scope::Battery => Duration::from_secs(30),
        _ => Duration::from_secs(1),
    }
}

/// A source of cumulative energy.
pub trait Meter: Send {
    /// Which meter this is, for people: `perf power/energy-pkg (cpu 0)`.
    fn name(&self) -> String;
    /// What its joules cover.
    fn scope(&self) -> Scope;
    /// The smallest energy step a reading can show, in joules.
    fn resolution_joules(&self) -> f64;
    /// How often the value behind the file or counter is refreshed.
    fn update_interval(&self) -> Duration;
    /// Energy since the meter was opened, in joules; never decreases (wrap is undone here).
    fn read_joules(&mut self) -> Result<f64, String>;
}

/// How long a quick look at a meter waits between its two readings: 100 of its updates, when that is
/// at most 200 ms (RAPL through perf or powercap: 100 ms); `None` for a slower meter (a battery gauge,
/// which may stand still for seconds), which a quick look cannot judge.
pub fn quick_look_span(meter: &dyn Meter) -> Option<Duration> {
    let update = meter.update_interval();
    let span = update * method::UPDATES_TO_JUDGE;
    (!update.is_zero() && span <= Duration::from_millis(200)).then_some(span)
}

/// A quick look ([`quick_look_span`]) at a meter that opened: `Some(why)`, to follow its name, when it
/// read the same at both ends — listed and opened but not counting, as a virtual machine's `power` PMU
/// that reads zero — and `None` when it moved, when it is too slow to judge this quickly, or when a
/// reading failed (the measurement itself will say why).
pub fn stands_still(meter: &mut dyn Meter) -> Option<String> {
    let span = quick_look_span(meter)?;
    let before = meter.read_joules().ok()?;
    std::thread::sleep(span);
    let after = meter.read_joules().ok()?;
    (after == before).then(|| {
        format!(
            "opens but does not count: read the same over {:.0} ms though it updates every {:.0} ms ({})",
            span.as_secs_f64() * 1e3,
            meter.update_interval().as_secs_f64() * 1e3,
            method::NOT_COUNTING_WHERE
        )
    })
}

/// A meter that was tried and cannot be read here, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub meter: String,
    pub reason: String,
}

/// A meter and its parts read together ([`Probe::preferred_with_parts`]).
pub struct MeterWithParts {
    pub meter: Box<dyn Meter>,
    pub parts: Vec<Box<dyn Meter>>,
}

/// What [`probe`] found.
#[derive(Default)]
pub struct Probe {
    /// Readable meters, the preferred first (perf events, then powercap, then batteries; package
    /// scope before its parts).
    pub meters: Vec<Box<dyn Meter>>,
    /// Every meter tried that cannot be read, one reason each.
    pub unavailable: Vec<Unavailable>,
}

impl Probe {
    /// The meter an energy measurement uses: the first whose scope holds the whole CPU.
    pub fn preferred(&mut self) -> Option<Box<dyn Meter>> {
        let at = self
            .meters
            .iter()
            .position(|m| matches!(m.scope(), Scope::Package | Scope::Psys | Scope::Battery))?;
        Some(self.meters.remove(at))
    }

    /// The preferred meter and its core-domain parts of the same kind (`perf power/energy-cores`
    /// beside `energy-pkg`, powercap's `core` subzone beside its package), read together.
    pub fn preferred_with_parts(&mut self) -> Option<MeterWithParts> {
        let main = self.preferred()?;
        let family = |m: &dyn Meter| m.name().split(' ').next().unwrap_or_default().to_string();
        let kind = family(main.as_ref());
        let (parts, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.meters)
            .into_iter()
            .partition(|m| m.scope() == Scope::Cores && family(m.as_ref()) == kind);
        self.meters = rest;
        Some(MeterWithParts { meter: main, parts })
    }

    /// Every device directory in `dir` that `wanted` accepts, in name order, opened as a meter or
    /// with why it cannot be read (the meter named `kind` and the directory's name); no directory at
    /// all is `kind` unavailable for `none_because`. Powercap zones and batteries are found this way.
    pub(crate) fn devices<M: Meter + 'static>(
        dir: &Path,
        wanted: impl Fn(&Path) -> bool,
        kind: &str,
        none_because: String,
        open: impl Fn(&Path) -> Result<M, String>,
    ) -> Probe {
        let mut devices: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| wanted(p))
            .collect();
        devices.sort();
        let mut found = Probe::default();
        if devices.is_empty() {
            found.unavailable.push(Unavailable {
                meter: kind.to_string(),
                reason: none_because,
            });
        }
        for device in devices {
            match open(&device) {
                Ok(meter) => found.meters.push(Box::new(meter)),
                Err(reason) => found.unavailable.push(Unavailable {
                    meter: format!("{kind} {}", device_name(&device)),
                    reason,
                }),
            }
        }
        found
    }

    /// One line: each meter tried and why it is unavailable (`;`-separated).
    pub fn reasons_line(&self) -> String {
        self.unavailable
            .iter()
            .map(|u| format!("{}: {}", u.meter, u.reason))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The directory that stands for `/`: `/` itself, or `MACBENCH_SYSFS_ROOT` when a test set it.
pub fn system_root() -> PathBuf {
    match std::env::var_os(SYSFS_ROOT_VARIABLE) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from("/"),
    }
}

/// Try every meter under `root`: perf RAPL events, powercap zones, batteries.
pub fn probe(root: &Path) -> Probe {
    let mut found = Probe::default();
    for outcome in [
        perf::probe(root),
        powercap::probe(root),
        battery::probe(root),
    ] {
        found.meters.extend(outcome.meters);
        found.unavailable.extend(outcome.unavailable);
    }
    // With perf's package counter open, powercap's package zone reads the same RAPL register: keep
    // both (a user may compare), perf first since the kernel undoes its wrap.
    found
}

/// The last part of a device directory's path (`BAT0`, `intel-rapl:0`): how a meter names it.
pub(crate) fn device_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A sysfs attribute as text, trimmed; the error names the file.
pub(crate) fn read_attribute(path: &Path) -> Result<String, std::io::Error> {
    std::fs::read_to_string(path).map(|s| s.trim().to_string())
}

/// A sysfs attribute holding an integer.
pub(crate) fn read_integer<T: std::str::FromStr>(path: &Path) -> Result<T, String> {
    let text = read_attribute(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.parse::<T>()
        .map_err(|_| format!("{}: {text:?} is not an integer", path.display()))
}

/// `root` joined with an absolute system path (`/sys/class/powercap` under a test's directory).
pub(crate) fn under(root: &Path, system_path: &str) -> PathBuf {
    root.join(system_path.trim_start_matches('/'))
}

/// How long each idle, null and MAC window lasts with `meter`: the scope's shortest window, and at
/// least 30 of the meter's updates, so that an update falling just inside or just outside a window
/// changes its energy by a few percent at most.
pub fn window_length(meter: &dyn Meter) -> Duration {
    shortest_window(meter.scope()).max(meter.update_interval() * 30)
}

/// One line per energy meter tried (`run --energy`): usable, or why not. A meter that updates every
/// millisecond is read twice 100 updates apart, so one that opens but stands still (a virtual
/// machine's `power` PMU reading zero) is not called usable: `run --energy` refuses it.
pub fn meter_lines() -> String {
    let mut out = String::new();
    let mut probe = probe(&system_root());
    for meter in &mut probe.meters {
        if let Some(still) = stands_still(meter.as_mut()) {
            let _ = writeln!(out, "energy meter {}: {still}", meter.name());
            continue;
        }
        let _ = writeln!(
            out,
            "energy meter {}: usable ({} scope, step {:.3e} J, windows of {:.0} s)",
            meter.name(),
            meter.scope(),
            meter.resolution_joules(),
            window_length(meter.as_ref()).as_secs_f64()
        );
    }
    for u in &probe.unavailable {
        let _ = writeln!(out, "energy meter {}: unavailable: {}", u.meter, u.reason);
    }
    out
}
