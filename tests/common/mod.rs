//! Helpers shared by the integration tests (`mod common;` in each test file that uses them).
//!
//! A test that cannot run here — a backend not built, a tool not installed, not root, another
//! architecture — must not count as passed in silence (STYLE §12). [`skip_unless`] makes the skip
//! visible: it writes `SKIP: <test name>: <reason>` straight to the process's standard error, which
//! libtest does not capture (it captures only `print!`/`eprint!`), so the line shows in every
//! `cargo test` run and CI can count the lines. Where something must be present — CI installs
//! libcrypto++-dev, so a Crypto++ skip there is a failure — the environment variable
//! `MACBENCH_REQUIRE_BACKENDS` lists its name (comma-separated, e.g. `cryptopp,openssl-cli`) and the
//! skip becomes a panic.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::io::Write;

/// The environment variable listing requirements (backends, tools) whose absence fails a test.
pub const REQUIRE_VAR: &str = "MACBENCH_REQUIRE_BACKENDS";

/// `true` when the calling test must stop here because `requirement` is not `available`; say so
/// with a `SKIP:` line, or panic when [`REQUIRE_VAR`] names `requirement`. `false` (carry on) when
/// it is available. Use as `if common::skip_unless(…) { return; }`.
pub fn skip_unless(available: bool, requirement: &str, reason: &str) -> bool {
    if available {
        return false;
    }
    skip(requirement, reason);
    true
}

/// Say that the calling test skips the rest of its work because `requirement` is missing, or panic
/// when [`REQUIRE_VAR`] names `requirement`.
pub fn skip(requirement: &str, reason: &str) {
    let current = std::thread::current();
    // libtest runs each test on a thread named after it.
    let test = current.name().unwrap_or("<unnamed test>");
    let required = std::env::var(REQUIRE_VAR).unwrap_or_default();
    if required
        .split(',')
        .map(str::trim)
        .any(|name| name == requirement)
    {
        panic!("{test}: {reason}, but {REQUIRE_VAR}={required:?} requires {requirement:?}");
    }
    // Straight to fd 2, not eprintln!, so libtest's capture cannot hide it; one write per line.
    let line = format!("SKIP: {test}: {reason}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The environment variable CI sets when the tests run under an emulator (`qemu-aarch64`).
pub const EMULATED_VAR: &str = "MACBENCH_EMULATED";

/// `true` when the calling test must stop here because it keeps two forked processes talking and the
/// tests run under an emulator, where a fork in a threaded process can deadlock in the child (qemu-user:
/// a test once waited 37 minutes). Says so with a `SKIP:` line; the same test runs natively.
pub fn skip_under_emulation() -> bool {
    match std::env::var(EMULATED_VAR) {
        Ok(emulator) if !emulator.is_empty() => {
            skip(
                "native",
                &format!(
                    "keeps two forked processes talking; under {emulator} a fork in a threaded process can deadlock (it runs natively)"
                ),
            );
            true
        }
        _ => false,
    }
}

/// Assert a command ended with exit `code` and exactly one line on standard error, containing `needle`:
/// the house rule for every error.
pub fn one_line_error(out: &std::process::Output, code: i32, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// `true` when the calling test must stop here because the `openssl` command-line tool is not
/// installed (said with a `SKIP:` line; a failure where CI requires `openssl-cli`).
pub fn skip_without_openssl_cli() -> bool {
    let installed = std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok();
    skip_unless(
        installed,
        "openssl-cli",
        "openssl CLI not installed (CI installs it)",
    )
}

/// A short one-session scenario of `function` at `size` bytes, pinned to the first online CPU: 30 ms
/// with a 6–27 ms window, unique data, a key per session, no verification.
pub fn scenario(
    function: macbench::mac::Function,
    size: u32,
    dispatch: macbench::engine::Dispatch,
) -> macbench::engine::Scenario {
    // 30 ms, its window 6..27 ms: one session on the first online CPU, unique data, a key per session.
    let mut scenario = macbench::sweep::one_session(
        function,
        macbench::engine::SizeSource::Fixed { size },
        macbench::host::online_cpus()[0],
        std::time::Duration::from_millis(30),
        macbench::engine::DataMode::Unique,
    );
    scenario.dispatch = dispatch;
    scenario
}

/// `macbench run --alg null` followed by `extra`: the harness alone, for the tests of `run`'s flags.
pub fn null_run(extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("macbench").unwrap_or_else(|e| panic!("{e}"));
    cmd.args(["run", "--alg", "null"]).args(extra);
    cmd
}

/// Run `cmd` and assert it succeeded, showing both streams when not; its output for more checks.
pub fn succeeds(cmd: &mut std::process::Command) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {:?}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The fatal warnings' codes in a results document, in order.
pub fn fatal_codes(doc: &serde_json::Value) -> Vec<String> {
    doc["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .flat_map(|r| r["warnings"].as_array().cloned().unwrap_or_default())
        .filter(|w| w["fatal"] == true)
        .map(|w| w["code"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// Assert that a `macbench run` (its output `out`, its results document `doc`) ended the way a run
/// may honestly end on a loaded or emulated machine: exit 0, or exit 1 when every fatal warning is
/// starvation — a session that got no CPU in its window, which happens under qemu-user to a short
/// run pinned to the core the test binary's other tests are pinned to (CI, once: a 20 ms window).
/// Any other fatal warning, or any other exit, fails. Returns `true` when some result was starved,
/// so the caller knows that result carries no figures.
pub fn ran_or_starved(out: &std::process::Output, doc: &serde_json::Value) -> bool {
    let fatal = fatal_codes(doc);
    let streams = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = if fatal.is_empty() { 0 } else { 1 };
    assert_eq!(out.status.code(), Some(expected), "{fatal:?}\n{streams}");
    assert!(
        fatal.iter().all(|code| code == "starvation"),
        "{fatal:?}\n{streams}"
    );
    if !fatal.is_empty() {
        let line = format!(
            "NOTE: {}: a result was starved (exit 1, said as such); its figures are not checked\n",
            std::thread::current().name().unwrap_or("<unnamed test>")
        );
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
    !fatal.is_empty()
}

/// Read the results document a run wrote to `path`.
pub fn results_at(path: &std::path::Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The cycles figure every result of a study's `k`-th step carries in [`constructed_steps`]: each
/// step its own, so a figure's numbers name the step they were read from.
pub fn step_marker(k: usize) -> f64 {
    10.0 * (k + 1) as f64 + 0.5
}

/// Results of every step of `study`, constructed rather than measured (no timing): each step's
/// results cover its flags — every algorithm, acceleration, size (fixed or a model) and dispatch mode,
/// on `--backend`'s backend or the fixture's, with `--sessions` threads each — and every cycles
/// figure of the `k`-th step is [`step_marker`]`(k)` (a thread's wall-clock cycles/byte, n × its
/// apparent, is n × the marker). The host has two online CPUs.
pub fn constructed_steps(
    study: &macbench::reproduce::Study,
) -> std::collections::BTreeMap<String, macbench::results::Document> {
    use macbench::results::SizeLabel;
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results-ecda402.json");
    let doc = macbench::report::read::read(&fixture).unwrap().doc;
    let template = doc.results[0].clone();
    let mut steps = std::collections::BTreeMap::new();
    for (k, step) in study.steps.iter().enumerate() {
        let flag = |name: &str, default: &str| -> String {
            step.args
                .windows(2)
                .find(|w| w[0] == name)
                .map_or(default.to_string(), |w| w[1].to_string())
        };
        let marker = step_marker(k);
        let sessions: usize = flag("--sessions", "1").parse().unwrap();
        let backend = flag("--backend", &template.backend);
        let mut results = Vec::new();
        for algorithm in macbench::spec::resolve_algorithms(&flag("--alg", "")).unwrap() {
            for accel in flag("--accel", "hw").split(',') {
                for size in flag("--sizes", "").split(',') {
                    for dispatch in flag("--dispatch", "single").split(',') {
                        let mut r = template.clone();
                        r.algorithm = algorithm.to_string();
                        r.backend = backend.clone();
                        r.accel = accel.to_string();
                        r.size = match size.parse::<u32>() {
                            Ok(bytes) => SizeLabel::Bytes(bytes),
                            Err(_) => SizeLabel::Model(size.to_string()),
                        };
                        r.mean_message_bytes = size.parse().unwrap_or(600.0);
                        r.sessions = sessions;
                        r.scenario.sessions = sessions;
                        r.scenario.dispatch = dispatch.parse().unwrap();
                        r.metrics.absolute_cycles_per_byte = Some(marker);
                        r.metrics.apparent_cycles_per_byte = Some(marker);
                        r.metrics.absolute_cycles_per_message = Some(marker);
                        r.ci95 = Default::default();
                        r.spread = Default::default();
                        r.failed = false;
                        r.threads = (0..sessions)
                            .map(|session| {
                                let mut t = template.threads[0].clone();
                                t.session = session;
                                t.absolute_cycles_per_byte = Some(marker);
                                t.apparent_cycles_per_byte = Some(marker);
                                t.wall_clock_cycles_per_byte = Some(marker * sessions as f64);
                                t
                            })
                            .collect();
                        results.push(r);
                    }
                }
            }
        }
        let mut step_doc = doc.clone();
        step_doc.results = results;
        step_doc.partial = false;
        step_doc.host.online_cpus = vec![0, 1];
        steps.insert(step.name.to_string(), step_doc);
    }
    steps
}
