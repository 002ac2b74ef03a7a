//! Batteries' fuel gauges (`/sys/class/power_supply/*`, laptops, phones, boards with a gauge).
//!
//! Laid out as Documentation/ABI/testing/sysfs-class-power describes: `type` is `Battery`, `status`
//! `Charging`, `Discharging`, `Full` or `Not charging`, `energy_now` the energy left in µWh, or
//! `charge_counter` (Android's gauges) or `charge_now` the charge left in µAh, with `voltage_now` in µV. The energy the
//! device used is what left the battery: the fall of `energy_now`, or the fall of the charge times the
//! mean voltage. A gauge on the charger measures the charger, not the load, so a battery that is not
//! discharging is refused with that reason. Gauges refresh every few seconds and average, which is
//! why battery windows are 30 s ([`super::shortest_window`]).

use super::method::{charge_to_joules, microwatt_hours_to_joules};
use super::{device_name, read_attribute, read_integer, under, Meter, Probe, Scope};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the supplies are, below the root.
pub const POWER_SUPPLY: &str = "/sys/class/power_supply";

/// What the gauge reports.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Gauge {
    /// `energy_now`, µWh.
    Energy,
    /// `charge_counter` (Android) or `charge_now` (laptops, Chromebooks) µAh × `voltage_now` µV.
    ChargeTimesVoltage(&'static str),
}

/// One battery's gauge with the running total of energy drawn.
pub struct Battery {
    name: String,
    dir: PathBuf,
    gauge: Gauge,
    /// The last reading: µWh for `Energy`; (µAh, µV) for charge.
    last: (f64, f64),
    drawn_joules: f64,
}

/// Why a battery with this `status` cannot be measured; `None` when it is discharging.
pub fn status_refusal(status: &str) -> Option<String> {
    (status != "Discharging").then(|| {
        format!(
            "status is {status}: on the charger the gauge measures the charger, not the load; unplug it and run on battery"
        )
    })
}

impl Battery {
    /// Open the supply in `dir` when it is a discharging battery with a usable gauge.
    pub fn open(dir: &Path) -> Result<Battery, String> {
        let name = device_name(dir);
        let gauge = if dir.join("energy_now").exists() {
            Gauge::Energy
        } else if let Some(file) = ["charge_counter", "charge_now"]
            .into_iter()
            .find(|f| dir.join(f).exists() && dir.join("voltage_now").exists())
        {
            Gauge::ChargeTimesVoltage(file)
        } else {
            return Err(
                "no energy_now, nor charge_counter or charge_now with voltage_now".to_string(),
            );
        };
        let mut battery = Battery {
            name,
            dir: dir.to_path_buf(),
            gauge,
            last: (0.0, 0.0),
            drawn_joules: 0.0,
        };
        battery.last = battery.reading()?;
        Ok(battery)
    }

    /// The gauge now, refused when the battery is not discharging.
    fn reading(&self) -> Result<(f64, f64), String> {
        let status = read_attribute(&self.dir.join("status")).unwrap_or_default();
        if let Some(reason) = status_refusal(&status) {
            return Err(reason);
        }
        match self.gauge {
            Gauge::Energy => Ok((
                read_integer::<i64>(&self.dir.join("energy_now"))? as f64,
                0.0,
            )),
            Gauge::ChargeTimesVoltage(file) => Ok((
                read_integer::<i64>(&self.dir.join(file))? as f64,
                read_integer::<i64>(&self.dir.join("voltage_now"))? as f64,
            )),
        }
    }
}

impl Meter for Battery {
    fn name(&self) -> String {
        match self.gauge {
            Gauge::Energy => format!("battery {} (energy_now)", self.name),
            Gauge::ChargeTimesVoltage(file) => {
                format!("battery {} ({file}×voltage_now)", self.name)
            }
        }
    }
    fn scope(&self) -> Scope {
        Scope::Battery
    }
    fn resolution_joules(&self) -> f64 {
        // The file's unit: 1 µWh, or 1 µAh at the last voltage. Gauges step far more coarsely in
        // practice, which the few-steps flag cannot see; docs/methodology.md §9 says so.
        match self.gauge {
            Gauge::Energy => microwatt_hours_to_joules(1.0),
            Gauge::ChargeTimesVoltage(_) => charge_to_joules(1.0, 0.0, self.last.1, self.last.1),
        }
    }
    fn update_interval(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn read_joules(&mut self) -> Result<f64, String> {
        let now = self.reading()?;
        self.drawn_joules += match self.gauge {
            Gauge::Energy => microwatt_hours_to_joules(self.last.0 - now.0),
            Gauge::ChargeTimesVoltage(_) => {
                charge_to_joules(self.last.0, now.0, self.last.1, now.1)
            }
        };
        self.last = now;
        Ok(self.drawn_joules)
    }
}

/// Every battery under `root`, opened, or why not.
pub fn probe(root: &Path) -> Probe {
    Probe::devices(
        &under(root, POWER_SUPPLY),
        |p| read_attribute(&p.join("type")).is_ok_and(|t| t == "Battery"),
        "battery",
        format!("no {POWER_SUPPLY}/* of type Battery"),
        Battery::open,
    )
}
