//! Energy meters on directory trees laid out as the kernel lays them out (tests/data/energy/, sources
//! in its README), the refusal reasons, and `run --energy` / `list` end to end. This machine has no
//! meter, so every reading here is of a fake tree; the arithmetic's known answers are in
//! `src/energy/method.rs`.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use macbench::energy::{self, Scope};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/energy")
        .join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// A writable copy of a tree in a temporary directory.
fn copy_of(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&tree(name), dir.path());
    dir
}

fn write(root: &Path, file: &str, text: &str) {
    std::fs::write(root.join(file.trim_start_matches('/')), format!("{text}\n")).unwrap();
}

const PACKAGE: &str = "/sys/class/powercap/intel-rapl:0/energy_uj";

#[test]
fn powercap_zones_and_subzones_are_found_and_the_control_type_is_skipped() {
    let probe = energy::probe(&tree("haswell-powercap"));
    let powercap: Vec<(String, Scope)> =
        probe.meters.iter().map(|m| (m.name(), m.scope())).collect();
    assert_eq!(
        powercap,
        vec![
            (
                "powercap intel-rapl:0 (package-0)".to_string(),
                Scope::Package
            ),
            ("powercap intel-rapl:0:0 (core)".to_string(), Scope::Cores),
            (
                "powercap intel-rapl:0:1 (uncore)".to_string(),
                Scope::Uncore
            ),
            ("powercap intel-rapl:0:2 (dram)".to_string(), Scope::Dram),
        ]
    );
    // perf and battery were tried too, and said why not.
    let tried: Vec<&str> = probe.unavailable.iter().map(|u| u.meter.as_str()).collect();
    assert_eq!(tried, ["perf power/energy-pkg", "battery"]);
    assert!(probe.reasons_line().contains("no `power` PMU"));
    let mut probe = probe;
    let chosen = probe.preferred_with_parts().unwrap();
    let (package, parts) = (chosen.meter, chosen.parts);
    assert_eq!(package.scope(), Scope::Package);
    assert_eq!(energy::window_length(package.as_ref()).as_secs(), 1);
    // The core domain rides along; uncore and dram stay listed only.
    let parts: Vec<String> = parts.iter().map(|p| p.name()).collect();
    assert_eq!(parts, ["powercap intel-rapl:0:0 (core)"]);
    assert_eq!(probe.meters.len(), 2);
}

#[test]
fn a_powercap_counter_reads_as_joules_since_opening() {
    let root = copy_of("haswell-powercap");
    let mut meter = energy::probe(root.path()).preferred().unwrap();
    assert_eq!(meter.read_joules().unwrap(), 0.0);
    write(root.path(), PACKAGE, "40054641907"); // 2.5 J later
    assert!((meter.read_joules().unwrap() - 2.5).abs() < 1e-9);
}

#[test]
fn a_powercap_counter_that_wraps_keeps_counting() {
    let root = copy_of("haswell-powercap");
    // 10 µJ below max_energy_range_uj (262143999938), then past zero to 5: 16 µJ.
    write(root.path(), PACKAGE, "262143999928");
    let mut meter = energy::probe(root.path()).preferred().unwrap();
    write(root.path(), PACKAGE, "5");
    assert!((meter.read_joules().unwrap() - 16e-6).abs() < 1e-12);
    write(root.path(), PACKAGE, "1000005");
    assert!((meter.read_joules().unwrap() - (16e-6 + 1.0)).abs() < 1e-9);
}

#[test]
fn a_powercap_file_that_is_not_a_number_is_a_reason_not_a_panic() {
    let root = copy_of("haswell-powercap");
    write(root.path(), PACKAGE, "n/a");
    let probe = energy::probe(root.path());
    let zone = probe
        .unavailable
        .iter()
        .find(|u| u.meter == "powercap intel-rapl:0")
        .unwrap();
    assert!(zone.reason.contains("is not an integer"), "{}", zone.reason);
    assert_eq!(probe.meters.len(), 3);
}

#[test]
fn an_unreadable_energy_uj_names_the_udev_rule_and_chmod() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    if common::skip_unless(
        !root_user,
        "non-root",
        "root reads a file of mode 000, so the permission refusal cannot be made here",
    ) {
        return;
    }
    let root = copy_of("haswell-powercap");
    let file = root.path().join(PACKAGE.trim_start_matches('/'));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
    let probe = energy::probe(root.path());
    let line = probe.reasons_line();
    assert!(
        line.contains("readable by root only (Linux 5.10 and later)"),
        "{line}"
    );
    assert!(
        line.contains("chmod o+r /sys/class/powercap/intel-rapl:*/energy_uj"),
        "{line}"
    );
    assert!(line.contains("SUBSYSTEM==\"powercap\""), "{line}");
}

#[test]
fn the_grant_read_text_names_the_udev_rule_chmod_and_sysfs_conf() {
    // What the refusal above says, checked where the refusal cannot be made (as root).
    let text = macbench::energy::powercap::GRANT_READ;
    for needle in [
        "chmod o+r /sys/class/powercap/intel-rapl:*/energy_uj",
        "RUN+=\"/bin/chmod o+r /sys%p/energy_uj\"",
        "/etc/sysfs.conf",
    ] {
        assert!(text.contains(needle), "{needle}");
    }
}

#[test]
fn perf_events_are_refused_with_the_sysctl_when_paranoid_and_unprivileged() {
    let probe = energy::probe(&tree("perf-paranoid"));
    let perf = probe
        .unavailable
        .iter()
        .find(|u| u.meter.starts_with("perf"))
        .unwrap();
    assert!(
        perf.reason.contains("kernel.perf_event_paranoid is 2")
            && perf.reason.contains("CAP_PERFMON")
            && perf
                .reason
                .contains("`sudo sysctl kernel.perf_event_paranoid=0`"),
        "{}",
        perf.reason
    );
}

#[test]
fn perf_event_descriptions_are_read_as_the_kernel_writes_them() {
    let spec = energy::perf::event_spec(&tree("perf-paranoid"), "energy-pkg").unwrap();
    assert_eq!(spec.pmu_type, 22);
    assert_eq!(spec.config, 2);
    // The file says 2.3283064365386962890625e-10: 2^-32 J per count.
    assert_eq!(spec.scale, 2f64.powi(-32));
    assert_eq!(spec.cpu, 0);
    assert_eq!(energy::perf::parse_event_config("event=0x01").unwrap(), 1);
    assert!(energy::perf::parse_event_config("umask=0x3").is_err());
    assert_eq!(energy::perf::first_cpu("0,36\n"), Some(0));
    assert_eq!(energy::perf::first_cpu("4-7"), Some(4));
    let status = "Name:\tx\nCapEff:\t0000004000000000\n";
    assert!(energy::perf::has_capability(status, 38));
    assert!(!energy::perf::has_capability(status, 21));
}

#[test]
fn a_perf_event_the_kernel_refuses_gives_its_error() {
    let root = copy_of("perf-paranoid");
    write(root.path(), "/proc/sys/kernel/perf_event_paranoid", "0");
    // No PMU has this type, so the kernel refuses it whatever this machine has.
    write(
        root.path(),
        "/sys/bus/event_source/devices/power/type",
        "2147483000",
    );
    let probe = energy::probe(root.path());
    let reasons: Vec<&str> = probe
        .unavailable
        .iter()
        .filter(|u| u.meter.starts_with("perf"))
        .map(|u| u.reason.as_str())
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].starts_with("perf_event_open(energy-pkg, cpu 0): "),
        "{reasons:?}"
    );
    assert!(
        reasons[1].starts_with("perf_event_open(energy-cores, cpu 0): "),
        "{reasons:?}"
    );
}

/// Each perf event this machine lists is either opened or refused with a one-line reason, never both;
/// and the probe says something of the perf path. A host may open some events and refuse others (a
/// KVM guest on a Xeon lists only `energy-psys`: psys opens, the missing `energy-pkg` is refused).
#[test]
fn the_perf_path_on_this_machine_is_open_or_says_why_not() {
    let probe = energy::probe(Path::new("/"));
    let opened: Vec<String> = probe
        .meters
        .iter()
        .map(|m| m.name())
        .filter(|n| n.starts_with("perf"))
        .collect();
    let refused: Vec<_> = probe
        .unavailable
        .iter()
        .filter(|u| u.meter.starts_with("perf"))
        .collect();
    assert!(
        !opened.is_empty() || !refused.is_empty(),
        "the probe said nothing of perf"
    );
    for u in &refused {
        assert!(
            !u.reason.is_empty() && !u.reason.contains('\n'),
            "{}: {:?}",
            u.meter,
            u.reason
        );
        assert!(
            !opened.iter().any(|n| n.starts_with(&u.meter)),
            "{} both opened ({opened:?}) and refused",
            u.meter
        );
    }
}

#[test]
fn a_discharging_laptop_battery_reads_the_fall_of_energy_now() {
    let root = copy_of("laptop-discharging");
    let mut probe = energy::probe(root.path());
    let mut battery = probe.preferred().unwrap();
    assert_eq!(battery.name(), "battery BAT0 (energy_now)");
    assert_eq!(battery.scope(), Scope::Battery);
    assert!((battery.resolution_joules() - 3.6e-3).abs() < 1e-15);
    assert_eq!(energy::window_length(battery.as_ref()).as_secs(), 30);
    // 1000 µWh drawn: 3.6 J.
    write(
        root.path(),
        "/sys/class/power_supply/BAT0/energy_now",
        "2419000",
    );
    assert!((battery.read_joules().unwrap() - 3.6).abs() < 1e-9);
}

#[test]
fn a_charge_gauge_reads_charge_times_the_mean_voltage() {
    let root = copy_of("chromebook-discharging");
    let mut battery = energy::probe(root.path()).preferred().unwrap();
    assert_eq!(battery.name(), "battery BATC (charge_now×voltage_now)");
    // 1000 µAh = 3.6 C at 3.942 V throughout: 14.1912 J.
    write(
        root.path(),
        "/sys/class/power_supply/BATC/charge_now",
        "5919000",
    );
    assert!((battery.read_joules().unwrap() - 14.1912).abs() < 1e-9);
    let root = copy_of("android-discharging");
    let probe = energy::probe(root.path());
    assert_eq!(
        probe.meters[0].name(),
        "battery battery (charge_counter×voltage_now)"
    );
}

#[test]
fn a_battery_on_the_charger_is_refused_because_the_gauge_measures_the_charger() {
    let probe = energy::probe(&tree("laptop-charging"));
    assert!(probe.meters.is_empty());
    let line = probe.reasons_line();
    assert!(
        line.contains("battery BAT0: status is Charging: on the charger the gauge measures the charger, not the load"),
        "{line}"
    );
    // A battery plugged in mid-run: the next reading is refused, not taken.
    let root = copy_of("laptop-discharging");
    let mut battery = energy::probe(root.path()).preferred().unwrap();
    write(
        root.path(),
        "/sys/class/power_supply/BAT0/status",
        "Charging",
    );
    assert!(battery
        .read_joules()
        .unwrap_err()
        .contains("status is Charging"));
}

#[test]
fn run_energy_without_a_meter_exits_2_with_one_line_naming_each_meter() {
    let empty = tempfile::tempdir().unwrap();
    let out = common::fails_with(
        macbench()
            .env(energy::SYSFS_ROOT_VARIABLE, empty.path())
            .args("run --alg null --repeat 1 --energy --json -".split_whitespace()),
        2,
        "--energy: no energy meter is readable here: ",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for meter in [
        "perf power/energy-pkg: no `power` PMU",
        "powercap: no ",
        "battery: no ",
    ] {
        assert!(err.contains(meter), "{err}");
    }
    assert!(out.stdout.is_empty(), "nothing ran");
}

/// Where this machine has no meter, or one that opens but stands still (a KVM guest's `power` PMU),
/// `run --energy` and `reproduce --energy` refuse before anything runs and say which. A meter that
/// counts is left to the tests on fake trees: its energy phase takes seconds per scenario.
#[test]
fn run_energy_on_this_machine_says_why_not() {
    let mut probe = energy::probe(Path::new("/"));
    let run = |command: &[&str]| {
        macbench()
            .env_remove(energy::SYSFS_ROOT_VARIABLE)
            .args(command)
            .output()
            .unwrap()
    };
    let Some(mut meter) = probe.preferred() else {
        let out = run(&["run", "--alg", "null", "--energy"]);
        common::one_line_error(&out, 2, "--energy: no energy meter is readable here");
        return;
    };
    if common::skip_unless(
        energy::stands_still(meter.as_mut()).is_some(),
        "no-energy-meter",
        "this machine has an energy meter that counts",
    ) {
        return;
    }
    let name = meter.name();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("r").display().to_string();
    let out = run(&["reproduce", "rashwan-mobile", "--energy", "-o", &target]);
    common::one_line_error(
        &out,
        2,
        &format!("--energy: {name}: opens but does not count"),
    );
    // run looks for a whole second (its observation window) before it refuses.
    let out = run(&["run", "--alg", "null", "--energy"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("--energy: {name} read the same over 1 s idle")),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
}

#[test]
fn list_says_which_meters_are_usable_and_why_the_others_are_not() {
    let root = copy_of("haswell-powercap");
    let list = || {
        macbench()
            .env(energy::SYSFS_ROOT_VARIABLE, root.path())
            .args(["list", "--alg", "null"])
            .output()
            .unwrap()
    };
    // The package counter stands still: it opens, but it is not called usable.
    let still = list();
    let text = String::from_utf8_lossy(&still.stdout);
    assert!(
        text.contains("energy meter powercap intel-rapl:0 (package-0): opens but does not count: read the same over 100 ms though it updates every 1 ms"),
        "{text}"
    );
    // The same counter rising at 10 W: usable.
    write(root.path(), PACKAGE, "0");
    let stop = Arc::new(AtomicBool::new(false));
    let writer = constant_power(root.path(), 10, stop.clone());
    let out = list();
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    common::exited_0(&out);
    assert!(
        text.contains("energy meter powercap intel-rapl:0 (package-0): usable (package scope"),
        "{text}"
    );
    assert!(
        text.contains(
            "energy meter battery: unavailable: no /sys/class/power_supply/* of type Battery"
        ),
        "{text}"
    );
}

/// A run that went to the end: exit 0 (on the fake engine, whose runs pass every validity check, so
/// a busy machine cannot fail the cycle figures these tests do not judge).
fn finished(out: &std::process::Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// Keeps `energy_uj` of the package zone under `root` rising at `watts` until stopped: a machine
/// drawing constant power whatever runs. The file is replaced whole (rename), never seen half-written.
fn constant_power(root: &Path, watts: u64, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let file = root.join(PACKAGE.trim_start_matches('/'));
    let scratch = file.with_extension("new");
    std::thread::spawn(move || {
        let start = std::time::Instant::now();
        while !stop.load(Ordering::SeqCst) {
            let uj = start.elapsed().as_micros() as u64 * watts;
            std::fs::write(&scratch, format!("{uj}\n")).unwrap();
            std::fs::rename(&scratch, &file).unwrap();
            std::thread::sleep(std::time::Duration::from_micros(500));
        }
    })
}

/// `run --energy` once on the fake tree at `root`: HMAC-SHA256 at 64 bytes, one 50 ms repeat of one
/// session on the first CPU, no harness measurement, the results to `json`; on the fake engine (the
/// energy is under test, and the fake's runs last their duration as the engine's do).
fn run_energy_once(root: &Path, json: &Path) -> assert_cmd::Command {
    let cpu = macbench::host::online_cpus()[0].to_string();
    let mut command = macbench();
    command
        .env(energy::SYSFS_ROOT_VARIABLE, root)
        .env(common::FAKE_ENGINE, "valid")
        .args("run --alg hmac-sha256 --sizes 64 --repeat 1".split_whitespace())
        .args(["--duration", "50ms", "--sessions", "1", "--cores", &cpu])
        .args(["--no-harness", "--energy", "--json"])
        .arg(json);
    command
}

#[test]
fn run_energy_with_constant_power_attaches_energy_that_nets_to_about_zero() {
    let root = copy_of("haswell-powercap");
    write(root.path(), PACKAGE, "0");
    let stop = Arc::new(AtomicBool::new(false));
    let writer = constant_power(root.path(), 10, stop.clone());
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let csv = out_dir.path().join("r.csv");
    let out = run_energy_once(root.path(), &json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    finished(&out);
    assert!(
        stderr.contains("energy: powercap intel-rapl:0 (package-0)"),
        "{stderr}"
    );
    assert!(stdout.contains("nJ/B ±95%"), "{stdout}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let e = &doc["results"][0]["energy"];
    assert_eq!(e["scope"], "package");
    // The fake counter moves every half millisecond or so: a step was seen, at least the file's unit.
    assert!(e["observed"]["step_j"].as_f64().unwrap() >= 1e-6);
    assert!(
        stderr.contains("over 1 s idle the meter moved in steps of"),
        "{stderr}"
    );
    assert_eq!(e["rounds"].as_array().unwrap().len(), 2);
    // The core subzone is read at the same instants and reported beside the package.
    assert_eq!(e["parts"][0]["meter"], "powercap intel-rapl:0:0 (core)");
    assert_eq!(e["parts"][0]["scope"], "cores");
    assert_eq!(e["parts"][0]["rounds"].as_array().unwrap().len(), 2);
    let net = e["nj_per_byte"]["median"].as_f64().unwrap();
    let idle = e["idle_w"].as_f64().unwrap();
    let mac = e["mac_w"].as_f64().unwrap();
    assert!(idle.is_finite() && mac.is_finite() && net.is_finite());
    // Gross energy per byte of a MAC window: what the net figure would be with no baseline taken off.
    let round = &e["rounds"][0]["mac"];
    let gross = round["joules"].as_f64().unwrap() * 1e9 / round["bytes"].as_f64().unwrap();
    assert!(gross > 0.0);
    // Idle, harness and MAC all draw the same power: what is left is the fake counter's update jitter
    // (its writer thread may be descheduled on a busy machine), well under the gross figure. Without
    // the idle baseline the net would be nearly all of it, since the null function's messages are
    // many times the MAC's and its per-message share is small.
    assert!(net.abs() < 0.5 * gross, "net {net} nJ/B of gross {gross}");
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let header = csv_text.lines().next().unwrap();
    assert!(header.ends_with(",energy_meter,energy_scope,energy_resolution_j,energy_observed_step_j,energy_observed_update_s,energy_window_s,nj_per_byte,nj_per_byte_ci95_low,nj_per_byte_ci95_high,uj_per_message,uj_per_message_ci95_low,uj_per_message_ci95_high,energy_idle_w,energy_mac_w,energy_meter_steps,energy_few_steps,cores_nj_per_byte,cores_uj_per_message"), "{header}");
}

/// A meter that is listed and opens but never counts (this KVM guest's `power` PMU lists
/// `energy-psys` and reads zero) would give "0.00 nJ/byte" for every function: a RAPL-fast meter that
/// stands still over the 1 s idle observation is refused before anything runs, exit 2, the other
/// meters' reasons on the same line; no results file is written.
#[test]
fn a_rapl_meter_that_stands_still_is_refused_before_the_run() {
    let root = copy_of("haswell-powercap");
    write(root.path(), PACKAGE, "123456");
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let out = run_energy_once(root.path(), &json).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let refusal: Vec<&str> = err.lines().filter(|l| l.contains("--energy:")).collect();
    assert_eq!(refusal.len(), 1, "{err}");
    assert!(
        refusal[0].contains("powercap intel-rapl:0 (package-0) read the same over 1 s idle though it updates every 1 ms: it is listed but does not count here"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    assert!(!json.exists(), "no results file");
}

#[test]
fn without_energy_no_energy_field_column_or_table_column_appears() {
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let csv = out_dir.path().join("r.csv");
    let out = common::null_run(&["--repeat", "1", "--duration", "30ms", "--no-harness"])
        .args(["--sizes", "64", "--json"])
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    finished(&out);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("nJ/B"));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(doc["results"][0].get("energy").is_none());
    assert!(!std::fs::read_to_string(&csv)
        .unwrap()
        .contains("nj_per_byte"));
}

/// A result of `function` at 64 bytes as a results file holds it, with net energy `nj` ± `half` nJ/B.
fn result_with_energy(function: &str, nj: f64, half: f64, few_steps: bool) -> serde_json::Value {
    sized_result_with_energy(function, 64, nj, half, few_steps)
}

/// As [`result_with_energy`], at `size` bytes.
fn sized_result_with_energy(
    function: &str,
    size: u32,
    nj: f64,
    half: f64,
    few_steps: bool,
) -> serde_json::Value {
    let p: Vec<&str> = function.split('/').collect();
    serde_json::json!({
        "algorithm": p[0], "backend": p[1], "accel": p[2], "size": size, "sessions": 1, "cores": "0",
        "repeats": 3,
        "metrics": {"absolute_cycles_per_byte": 10.0, "apparent_cycles_per_byte": 10.0, "bytes_per_second": 1e9},
        "spread": {"absolute_cycles_per_byte": {"min": 9.9, "max": 10.1},
                   "apparent_cycles_per_byte": {"min": 9.9, "max": 10.1}},
        "threads": [], "warnings": [], "failed": false,
        "energy": {"meter": "perf power/energy-pkg (cpu 0)", "scope": "package", "resolution_j": 1e-6,
                   "window_s": 1.0, "nj_per_byte": {"median": nj, "ci95": {"low": nj - half, "high": nj + half}},
                   "meter_steps": if few_steps { 4.0 } else { 5e5 }, "few_steps": few_steps, "rounds": []}
    })
}

#[test]
fn diff_compares_energy_per_byte_by_its_intervals_and_says_when_steps_are_few() {
    let dir = tempfile::tempdir().unwrap();
    let doc = |results: Vec<serde_json::Value>| {
        serde_json::json!({"schema_version": 1, "tool": "macbench", "results": results}).to_string()
    };
    let old = dir.path().join("old.json");
    let new = dir.path().join("new.json");
    std::fs::write(
        &old,
        doc(vec![
            result_with_energy("hmac-sha256/openssl/hw", 2.0, 0.1, false),
            result_with_energy("cmac-aes128/openssl/hw", 1.0, 0.1, true),
        ]),
    )
    .unwrap();
    std::fs::write(
        &new,
        doc(vec![
            result_with_energy("hmac-sha256/openssl/hw", 1.5, 0.1, false),
            result_with_energy("cmac-aes128/openssl/hw", 0.5, 0.1, false),
        ]),
    )
    .unwrap();
    let csv = dir.path().join("diff.csv");
    let out = macbench()
        .arg("diff")
        .arg(&old)
        .arg(&new)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    common::exited_0(&out);
    assert!(text.contains("nJ/B"), "{text}");
    let hmac = text.lines().find(|l| l.contains("hmac-sha256")).unwrap();
    assert!(
        hmac.contains("2.00 → 1.50") && hmac.contains("0.750"),
        "{hmac}"
    );
    let cmac = text.lines().find(|l| l.contains("cmac-aes128")).unwrap();
    assert!(
        cmac.contains("energy on few meter steps: not called significant"),
        "{cmac}"
    );
    let rows: Vec<String> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert!(
        rows[0].ends_with(
            ",old_nj_per_byte,new_nj_per_byte,nj_per_byte_ratio,nj_per_byte_significant"
        ),
        "{}",
        rows[0]
    );
    assert!(rows[1].ends_with(",2.0,1.5,0.75,true"), "{}", rows[1]);
    assert!(rows[2].ends_with(",1.0,0.5,0.5,false"), "{}", rows[2]);
}

#[test]
fn the_report_draws_energy_per_byte_against_size_only_when_measured() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.json");
    let results = vec![
        sized_result_with_energy("hmac-sha256/openssl/hw", 64, 4.25, 0.5, false),
        sized_result_with_energy("hmac-sha256/openssl/hw", 1500, 1.75, 0.25, true),
    ];
    let doc = serde_json::json!({"schema_version": 1, "tool": "macbench", "results": results});
    std::fs::write(&with, doc.to_string()).unwrap();
    let html = dir.path().join("with.html");
    report_to(&with, &html);
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("id=\"energy-per-byte\""), "no energy figure");
    for value in ["data-value=\"4.25\"", "data-value=\"1.75\""] {
        assert!(text.contains(value), "{value} not in the figure's table");
    }
    assert!(
        text.contains("few-energy-steps"),
        "the 1500-byte point on few steps is ringed"
    );
    // Without energy: the same results, no energy figure.
    let without = dir.path().join("without.json");
    let mut plain = doc.clone();
    for r in plain["results"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("energy");
    }
    std::fs::write(&without, plain.to_string()).unwrap();
    let html = dir.path().join("without.html");
    report_to(&without, &html);
    assert!(!std::fs::read_to_string(&html)
        .unwrap()
        .contains("energy-per-byte"));
}

/// `reproduce --energy` is refused before any step, exit 2, where no meter is readable and where the
/// meter opens but stands still: otherwise every step's run would refuse it and the claims would have
/// nothing to read.
#[test]
fn reproduce_energy_without_a_counting_meter_exits_2_before_any_step() {
    let empty = tempfile::tempdir().unwrap();
    let still = copy_of("haswell-powercap");
    write(still.path(), PACKAGE, "123456");
    for (root, expected) in [
        (empty.path(), "--energy: no energy meter is readable here: "),
        (
            still.path(),
            "--energy: powercap intel-rapl:0 (package-0): opens but does not count: read the same over 100 ms",
        ),
    ] {
        let out_dir = tempfile::tempdir().unwrap();
        let dir = out_dir.path().join("r");
        let mut reproduce = macbench();
        reproduce
            .env(energy::SYSFS_ROOT_VARIABLE, root)
            .args("reproduce rashwan-mobile --energy -o".split_whitespace())
            .arg(&dir);
        common::fails_with(&mut reproduce, 2, expected);
        assert!(!dir.exists(), "no step ran and no directory was made");
    }
}

/// `macbench report RESULTS -o HTML`, which must succeed.
fn report_to(results: &std::path::Path, html: &std::path::Path) {
    common::exits_0(macbench().arg("report").arg(results).arg("-o").arg(html));
}
