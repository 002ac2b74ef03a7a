//! RAPL through the powercap sysfs tree (`/sys/class/powercap/intel-rapl:*`, Intel and AMD alike).
//!
//! Laid out as the kernel's Documentation/power/powercap/powercap.rst describes: one directory per
//! zone (`intel-rapl:0`, the package) and subzone (`intel-rapl:0:0`, its cores), each with `name`,
//! `energy_uj` (a cumulative counter in microjoules) and `max_energy_range_uj` (where it wraps to 0).
//! The kernel does not undo the wrap here, so each reading is turned into a running total with
//! [`counter_delta`]. Since Linux 5.10 `energy_uj` is readable by root only (CVE-2020-8694, the
//! "Platypus" side channel); the reason then names the two ways to grant read access.

use super::method::{counter_delta, counts_to_joules};
use super::{device_name, read_attribute, read_integer, under, Meter, Probe, Scope};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the zones are, below the root.
pub const POWERCAP: &str = "/sys/class/powercap";

/// What to run so that a user may read `energy_uj`, said exactly.
pub const GRANT_READ: &str = "`sudo chmod o+r /sys/class/powercap/intel-rapl:*/energy_uj` until reboot, or for good the udev rule `ACTION==\"add\", SUBSYSTEM==\"powercap\", KERNEL==\"intel-rapl:*\", RUN+=\"/bin/chmod o+r /sys%p/energy_uj\"` in /etc/udev/rules.d/60-macbench-powercap.rules (or `mode class/powercap/intel-rapl:0/energy_uj = 0444` in /etc/sysfs.conf)";

/// One RAPL zone's counter.
pub struct PowercapZone {
    zone: String,
    zone_name: String,
    scope: Scope,
    energy_file: PathBuf,
    max_range_uj: u64,
    last_uj: u64,
    total_uj: u128,
}

/// The scope a zone's `name` says: `package-0`, `core`, `uncore`, `dram`, `psys`.
pub fn scope_of_zone(name: &str) -> Option<Scope> {
    match name {
        n if n.starts_with("package-") => Some(Scope::Package),
        "core" => Some(Scope::Cores),
        "uncore" => Some(Scope::Uncore),
        "dram" => Some(Scope::Dram),
        "psys" => Some(Scope::Psys),
        _ => None,
    }
}

impl PowercapZone {
    /// Open the zone in `dir` (`…/intel-rapl:0`): its name, range and a first reading.
    pub fn open(dir: &Path) -> Result<PowercapZone, String> {
        let zone = device_name(dir);
        let zone_name =
            read_attribute(&dir.join("name")).map_err(|e| format!("cannot read name: {e}"))?;
        let scope = scope_of_zone(&zone_name)
            .ok_or_else(|| format!("zone name {zone_name:?} is not one macbench knows"))?;
        let max_range_uj: u64 = read_integer(&dir.join("max_energy_range_uj"))?;
        let energy_file = dir.join("energy_uj");
        let last_uj = read_energy(&energy_file)?;
        Ok(PowercapZone {
            zone,
            zone_name,
            scope,
            energy_file,
            max_range_uj,
            last_uj,
            total_uj: 0,
        })
    }
}

/// `energy_uj` as an integer; a permission error names the fix.
fn read_energy(file: &Path) -> Result<u64, String> {
    match std::fs::read_to_string(file) {
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("{}: {:?} is not an integer", file.display(), text.trim())),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(format!(
            "energy_uj is readable by root only (Linux 5.10 and later); grant read access: {GRANT_READ}"
        )),
        Err(e) => Err(format!("{}: {e}", file.display())),
    }
}

impl Meter for PowercapZone {
    fn name(&self) -> String {
        format!("powercap {} ({})", self.zone, self.zone_name)
    }
    fn scope(&self) -> Scope {
        self.scope
    }
    fn resolution_joules(&self) -> f64 {
        // The file's unit; the hardware's own step (RAPL's energy unit, often 15.3 or 61 µJ) is
        // coarser and not exposed here, so the step count this gives is an upper bound.
        1e-6
    }
    fn update_interval(&self) -> Duration {
        // RAPL's counters are refreshed about every millisecond (Intel SDM vol. 3B, 15.10.1).
        Duration::from_millis(1)
    }
    fn read_joules(&mut self) -> Result<f64, String> {
        let now = read_energy(&self.energy_file)?;
        self.total_uj += u128::from(counter_delta(self.last_uj, now, self.max_range_uj));
        self.last_uj = now;
        Ok(counts_to_joules(
            u64::try_from(self.total_uj).unwrap_or(u64::MAX),
            1e-6,
        ))
    }
}

/// Every `intel-rapl:*` zone under `root`, opened, or why not.
pub fn probe(root: &Path) -> Probe {
    Probe::devices(
        &under(root, POWERCAP),
        |p| device_name(p).starts_with("intel-rapl:"),
        "powercap",
        format!(
            "no {POWERCAP}/intel-rapl:* zone (no RAPL driver: not an Intel or AMD x86 host, `intel_rapl_common` not loaded, or a VM that hides RAPL)"
        ),
        PowercapZone::open,
    )
}
