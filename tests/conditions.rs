//! What could have disturbed a run (`system::conditions`): the readers on fake `/proc` and `/sys` trees,
//! the busy-machine arithmetic and warning on constructed loads, `--quiet-check`'s refusal, and the
//! conditions in a results file.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use macbench::system::conditions::{
    other_share, Counters, CpuTicks, Probe, RunConditions, Snapshot, BUSY_SHARE,
};
use std::path::Path;

fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A laptop-like tree: two CPUs, one governor, boost on, on AC, throttled a few times.
fn laptop(root: &Path) {
    write(root, "proc/loadavg", "1.50 0.75 0.25 2/345 6789\n");
    write(
        root,
        "proc/stat",
        "cpu  300 0 100 600 0 0 0 0 0 0\ncpu0 100 0 50 300 50 0 0 0 0 0\ncpu1 200 0 50 300 0 0 0 0 0 0\nintr 1\n",
    );
    // A command name with a space and a parenthesis; utime 7, stime 3, cutime 2, cstime 1.
    write(
        root,
        "proc/self/stat",
        "42 (mac bench)) R 1 42 42 0 -1 4194304 100 0 0 0 7 3 2 1 20 0 3 0 100 1000 50\n",
    );
    for cpu in [0, 1] {
        write(
            root,
            &format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"),
            "powersave\n",
        );
        write(
            root,
            &format!("sys/devices/system/cpu/cpu{cpu}/thermal_throttle/core_throttle_count"),
            "3\n",
        );
        write(
            root,
            &format!("sys/devices/system/cpu/cpu{cpu}/thermal_throttle/package_throttle_count"),
            "1\n",
        );
    }
    write(root, "sys/devices/system/cpu/cpufreq/boost", "1\n");
    write(root, "sys/class/power_supply/AC/type", "Mains\n");
    write(root, "sys/class/power_supply/AC/online", "1\n");
    write(root, "sys/class/power_supply/BAT0/type", "Battery\n");
}

#[test]
fn readers_parse_a_fake_tree() {
    let dir = tempfile::tempdir().unwrap();
    laptop(dir.path());
    let probe = Probe::at(dir.path());
    assert_eq!(probe.load_average(), Some([1.5, 0.75, 0.25]));
    // cpu0: total 500, idle + iowait 350 → busy 150; cpu1: total 550, idle 300 → busy 250.
    assert_eq!(
        probe.cpu_ticks(&[0]),
        Some(CpuTicks {
            busy: 150,
            total: 500
        })
    );
    assert_eq!(
        probe.cpu_ticks(&[0, 1]),
        Some(CpuTicks {
            busy: 400,
            total: 1050
        })
    );
    assert_eq!(
        probe.cpu_ticks(&[2]),
        None,
        "a CPU the kernel does not list"
    );
    assert_eq!(probe.own_ticks(), Some(13));
    assert_eq!(probe.governor(&[0, 1]).as_deref(), Some("powersave"));
    assert_eq!(probe.boost().as_deref(), Some("on"));
    assert_eq!(probe.power_source().as_deref(), Some("AC"));
    assert_eq!(probe.throttle_events(&[0, 1]), Some(8));
    // Governors that differ are named per CPU; a battery alone is the battery.
    write(
        dir.path(),
        "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
        "performance",
    );
    assert_eq!(
        probe.governor(&[0, 1]).as_deref(),
        Some("cpu0 powersave, cpu1 performance")
    );
    write(dir.path(), "sys/class/power_supply/AC/online", "0\n");
    assert_eq!(probe.power_source().as_deref(), Some("battery"));
    // intel_pstate says no_turbo instead.
    std::fs::remove_file(dir.path().join("sys/devices/system/cpu/cpufreq/boost")).unwrap();
    write(
        dir.path(),
        "sys/devices/system/cpu/intel_pstate/no_turbo",
        "1\n",
    );
    assert_eq!(probe.boost().as_deref(), Some("off"));
}

/// A VM exposes no cpufreq, power supply or throttle counters: each is unknown, never guessed.
#[test]
fn what_a_tree_lacks_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "proc/loadavg", "garbage\n");
    write(dir.path(), "proc/stat", "cpu0 1 2 x\n");
    let probe = Probe::at(dir.path());
    assert_eq!(probe.load_average(), None);
    assert_eq!(probe.cpu_ticks(&[0]), None);
    assert_eq!(probe.own_ticks(), None);
    assert_eq!(probe.governor(&[0]), None);
    assert_eq!(probe.boost(), None);
    assert_eq!(probe.power_source(), None);
    assert_eq!(probe.throttle_events(&[0]), None);
    let snapshot = probe.snapshot(&[0], &probe.counters(&[0]), std::time::Duration::ZERO);
    assert_eq!(snapshot.other_cpu_share, None);
    let c = RunConditions {
        cpus: "0".into(),
        before: snapshot,
        after: None,
    };
    assert_eq!(
        c.busy_warning(),
        None,
        "an unknown share is not called busy"
    );
    let rows = macbench::system::conditions::describe(&c);
    assert!(rows.iter().all(|(_, v)| v.contains("unknown")), "{rows:?}");
}

fn counters(busy: u64, total: u64, own: u64) -> Counters {
    Counters {
        cpus: Some(CpuTicks { busy, total }),
        own_ticks: Some(own),
        throttle_events: None,
    }
}

#[test]
fn other_processes_share_is_busy_less_our_own_over_total() {
    // 200 ticks passed on the chosen CPUs; 120 busy, of which 90 ours: others took 30 / 200.
    let share = other_share(&counters(1000, 5000, 40), &counters(1120, 5200, 130)).unwrap();
    assert!((share - 0.15).abs() < 1e-12, "{share}");
    // Our threads elsewhere too (own > busy): clamped at 0, not negative.
    assert_eq!(
        other_share(&counters(0, 0, 0), &counters(10, 100, 50)),
        Some(0.0)
    );
    // No time passed, or a counter unreadable: unknown.
    assert_eq!(
        other_share(&counters(5, 100, 0), &counters(5, 100, 0)),
        None
    );
    let unreadable = Counters {
        own_ticks: None,
        ..counters(10, 200, 0)
    };
    assert_eq!(other_share(&counters(0, 100, 0), &unreadable), None);
}

/// The busy warning on a constructed load: one line above 10 %, none at or below it.
#[test]
fn busy_machine_warning_on_a_constructed_load() {
    let snap = |share: f64, load: f64| Snapshot {
        other_cpu_share: Some(share),
        load_average: Some([load, 0.0, 0.0]),
        ..Snapshot::default()
    };
    let busy = RunConditions {
        cpus: "0-1".into(),
        before: snap(0.02, 0.1),
        after: Some(snap(0.37, 2.5)),
    };
    let line = busy.busy_warning().unwrap();
    assert!(!line.contains('\n'));
    assert!(line.contains("37 % of CPU(s) 0-1"), "{line}");
    assert!(line.contains("load average 2.50"), "{line}");
    let quiet = RunConditions {
        after: Some(snap(BUSY_SHARE, 0.1)),
        ..busy.clone()
    };
    assert_eq!(quiet.busy_warning(), None);
    // Busy before the run counts as well.
    let busy_before = RunConditions {
        before: snap(0.5, 1.0),
        after: None,
        ..busy
    };
    assert!(busy_before.busy_warning().is_some());
}

/// `--quiet-check` beside a process spinning on the chosen core: one line, exit 1, nothing run.
#[test]
fn quiet_check_refuses_a_busy_core() {
    if std::process::Command::new("taskset")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!(
            "SKIP: quiet_check_refuses_a_busy_core: no taskset (util-linux) to pin a busy loop"
        );
        return;
    }
    let mut spinner = std::process::Command::new("taskset")
        .args(["-c", "0", "sh", "-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    // Let it be scheduled before the sample starts.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let dir = tempfile::tempdir().unwrap();
    let out = common::macbench()
        .current_dir(dir.path())
        .args("run --alg null --cores 0 --quiet-check".split_whitespace())
        .args("--sizes 64 --repeat 1 --json r.json".split_whitespace())
        .output()
        .unwrap();
    let _ = spinner.kill();
    let _ = spinner.wait();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--quiet-check: other processes used"), "{err}");
    assert!(!dir.path().join("r.json").exists(), "nothing ran");
}

/// A run records the machine before and after it in its results file.
#[test]
fn a_run_records_its_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::fake_run("run --alg null --sizes 64 --repeat 1")
        .current_dir(dir.path())
        .args("--duration 50ms --no-harness --json r.json".split_whitespace())
        .output()
        .unwrap();
    let doc = common::results_at(&dir.path().join("r.json"));
    common::ran(&out, &doc);
    let c = &doc["conditions"];
    assert!(c["cpus"].is_string(), "{c}");
    for snapshot in [&c["before"], &c["after"]] {
        for field in [
            "load_average",
            "other_cpu_share",
            "interval_s",
            "governor",
            "boost",
            "power_source",
            "thermal_throttle_events",
        ] {
            assert!(
                snapshot.get(field).is_some(),
                "{field} missing in {snapshot}"
            );
        }
    }
}
