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

/// The `macbench` executable as a process to start, without `RUST_BACKTRACE` (a backtrace asked for
/// by whoever runs the tests would turn a one-line error into many).
pub fn macbench_process() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_macbench"));
    cmd.env_remove("RUST_BACKTRACE");
    cmd
}

/// [`macbench_process`] as a command to run to its end (standard input, time-outs, assertions).
pub fn macbench() -> assert_cmd::Command {
    assert_cmd::Command::from_std(macbench_process())
}

/// [`macbench`] with the words of `line` as its arguments, split at white space (no quoting): a
/// command as a reader would type it, `macbench_line("run --alg null --sizes 64")`.
pub fn macbench_line(line: &str) -> assert_cmd::Command {
    let mut cmd = macbench();
    cmd.args(line.split_whitespace());
    cmd
}

/// The environment variable that swaps the engine for its deterministic fake (`valid` or `starved`;
/// docs/architecture.md, "Testing the CLI without timing").
pub const FAKE_ENGINE: &str = "MACBENCH_FAKE_ENGINE";

/// [`macbench_line`] on the fake engine whose every run passes its validity checks: exit codes and
/// files that do not depend on how busy this machine is.
pub fn fake_run(line: &str) -> assert_cmd::Command {
    let mut cmd = macbench_line(line);
    cmd.env(FAKE_ENGINE, "valid");
    cmd
}

/// `macbench run --alg null` followed by `extra`: the harness alone, for the tests of `run`'s flags,
/// on the fake engine (the flags are under test, not the machine).
pub fn null_run(extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = fake_run("run --alg null");
    cmd.args(extra);
    cmd
}

/// Assert that `args` (with `--json` to a file added) is refused with exit 2 and one line on standard
/// error containing `needle`, no panic, and no results file written.
pub fn usage_error(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let json = dir.path().join("out.json");
    let out = macbench()
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    one_line_error(&out, 2, needle);
    assert!(!json.exists(), "{args:?}: no output file on bad input");
}

/// [`usage_error`] of a command typed as one line ([`macbench_line`]'s rule).
pub fn usage_error_line(line: &str, needle: &str) {
    usage_error(&line.split_whitespace().collect::<Vec<_>>(), needle);
}

/// The results document a command printed on standard output (`--json -`), or a panic showing its
/// standard error.
pub fn stdout_doc(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// Assert that a run ended with exit 1, its last line on standard error the one that says `failed`
/// result(s) failed their validity checks (the lines before it are the run's plan and warnings). On
/// the fake engine's `starved` verdict that is the one outcome.
pub fn failed_validity(out: &std::process::Output, failed: usize) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end().lines().last(),
        Some(format!("macbench: {failed} result(s) failed their validity checks").as_str()),
        "{err}"
    );
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

/// Assert that a `macbench run` (its output `out`, its results document `doc`) succeeded: exit 0 and
/// no fatal warning. On the fake engine ([`fake_run`]) that is the one outcome; a test that needs the
/// real engine must choose what it asserts so that a busy machine cannot change it.
pub fn ran(out: &std::process::Output, doc: &serde_json::Value) {
    let fatal = fatal_codes(doc);
    assert_eq!(
        (out.status.code(), fatal.as_slice()),
        (Some(0), [].as_slice()),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
        let run = &step.run;
        let marker = step_marker(k);
        let sessions = run.sessions;
        let backend = run.backend.unwrap_or(&template.backend).to_string();
        let mut results = Vec::new();
        for algorithm in macbench::spec::resolve_algorithms(run.alg).unwrap() {
            for accel in run.accel.iter().map(|a| a.name()) {
                for size in run.sizes.split(',') {
                    for dispatch in run.dispatch.iter().map(|d| d.to_string()) {
                        let mut r = template.clone();
                        r.algorithm = algorithm.to_string();
                        r.backend = backend.clone();
                        r.accel = accel.to_string();
                        r.size = match size.parse::<u32>() {
                            Ok(bytes) => SizeLabel::Bytes(bytes),
                            Err(_) => SizeLabel::Model(size.to_string()),
                        };
                        r.mean_message_bytes = size.parse().unwrap_or(600.0);
                        // Every message of a fixed size has that size (a reader refuses other bytes).
                        if let SizeLabel::Bytes(bytes) = r.size {
                            r.metrics.bytes = r.metrics.messages * u64::from(bytes);
                        }
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

/// The registered function `alg/backend/accel`, or a panic naming it.
pub fn registered(
    alg: &str,
    backend: &str,
    accel: macbench::mac::Accel,
) -> macbench::mac::Function {
    macbench::mac::functions()
        .into_iter()
        .find(|f| f.algorithm.name == alg && f.backend.name == backend && f.accel == accel)
        .unwrap_or_else(|| panic!("{alg}/{backend}/{accel} is not registered"))
}

/// The first `len` bytes of the tag `keyed` gives `msg` (with `nonce`).
pub fn tag_of(
    keyed: &mut dyn macbench::mac::KeyedMac,
    len: usize,
    nonce: &[u8],
    msg: &[u8],
) -> Vec<u8> {
    let mut out = [0u8; macbench::mac::MAX_TAG_LEN];
    keyed
        .tag_into(nonce, msg, &mut out[..len])
        .unwrap_or_else(|e| panic!("{e}"));
    out[..len].to_vec()
}

/// The tag of `f` (its own tag length) keyed with `key`, keyed the way every caller keys a function
/// (`isolate::key`, a proxy for a switched one).
pub fn tag_with(f: &macbench::mac::Function, key: &[u8], nonce: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut keyed = macbench::isolate::key(f, key, macbench::mac::KeyParams::default())
        .unwrap_or_else(|e| panic!("{}: {e}", f.id()));
    tag_of(keyed.as_mut(), f.algorithm.tag_len, nonce, msg)
}

/// A deterministic byte stream (xorshift), so failures reproduce.
pub fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect()
}

/// Run `cmd` to its end and assert it exited 0, showing both streams when not; its output for more
/// checks.
pub fn exits_0(cmd: &mut assert_cmd::Command) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    exited_0(&out);
    out
}

/// Assert that a command's output `out` is an exit 0, showing both streams when not.
pub fn exited_0(out: &std::process::Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run `cmd` to its end and assert it failed with exit `code` and one line on standard error holding
/// `needle` ([`one_line_error`]); its output for more checks.
pub fn fails_with(cmd: &mut assert_cmd::Command, code: i32, needle: &str) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    one_line_error(&out, code, needle);
    out
}

/// The words of `line`, split at white space: an argument list typed as one line.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// [`exits_0`]'s standard output, as text.
pub fn stdout_of(cmd: &mut assert_cmd::Command) -> String {
    String::from_utf8(exits_0(cmd).stdout).unwrap_or_else(|e| panic!("{e}"))
}

/// The first registered function of `alg` on `backend`, in registry order, or a panic naming it.
pub fn first_of(alg: &str, backend: &str) -> macbench::mac::Function {
    macbench::mac::functions()
        .into_iter()
        .find(|f| f.algorithm.name == alg && f.backend.name == backend)
        .unwrap_or_else(|| panic!("{alg}/{backend} is not registered"))
}

/// Property tests' configuration: `cases` cases drawn from the fixed `seed`, so a run is repeatable
/// and CI cannot pass one day and fail the next; failures are kept beside the test file.
pub fn fixed_seed_config(cases: u32, seed: u64) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, FileFailurePersistence, RngAlgorithm, RngSeed};
    Config {
        cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    }
}

/// Read `child`'s standard error until the run says it has started (its "hardware cycle counters"
/// line, printed once everything is validated), then send it SIGINT, as Ctrl-C would. Returns the
/// reader, to keep the pipe open while the child ends, and the lines read.
pub fn interrupt_once_running(
    child: &mut std::process::Child,
) -> (std::io::BufReader<std::process::ChildStderr>, String) {
    use std::io::BufRead;
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("standard error piped"));
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap_or(0) > 0 && !line.contains("hardware cycle counters")
    {
    }
    // SAFETY: a signal to the child this test started, by its pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    (stderr, line)
}

/// [`fake_run`] of `line` with its results written to `json`, asserted [`ran`]; the results.
pub fn fake_run_to(line: &str, json: &std::path::Path) -> serde_json::Value {
    let out = fake_run(line)
        .arg("--json")
        .arg(json)
        .output()
        .unwrap_or_else(|e| panic!("{line}: {e}"));
    let doc = results_at(json);
    ran(&out, &doc);
    doc
}

/// `f` keyed (through `isolate::key`) with its default key length of the bytes of `seed`.
pub fn keyed_with(f: &macbench::mac::Function, seed: u64) -> Box<dyn macbench::mac::KeyedMac> {
    let key = bytes(seed, f.algorithm.default_key_len);
    macbench::isolate::key(f, &key, macbench::mac::KeyParams::default())
        .unwrap_or_else(|e| panic!("{}: {e}", f.id()))
}

/// `doc` made the results file of step `step` of `study` as this machine's reproduction would write
/// it (issue 47 N30: `--resume` keeps a step file only when its scenarios are the step's): its
/// header names the step's `--alg`, `--backend`, `--accel`, `--sizes` and `--dispatch`, and each
/// result runs on the step's backend for its algorithm, sessions, cores and settings. The results'
/// functions, sizes and numbers stay the caller's.
pub fn as_step(
    doc: &mut macbench::results::Document,
    study: &macbench::reproduce::Study,
    step: &str,
) {
    let one_core = *macbench::system::online_cpus().last().unwrap();
    // A step that cannot run here (its backend not built) is not checked against its file.
    let Ok(spec) = macbench::cli::step_sweep(study, step, one_core) else {
        return;
    };
    let options = study
        .steps
        .iter()
        .find(|s| s.name == step)
        .unwrap()
        .options(one_core);
    if let macbench::results::Header::Sweep(h) = &mut doc.scenario {
        let h = &mut h.options;
        h.alg = options.alg;
        h.backend = options.backend;
        h.accel = options.accel;
        h.sizes = options.sizes;
        h.dispatch = options.dispatch;
    }
    let cores = macbench::engine::format_cpu_list(&spec.scenario.cores);
    for r in &mut doc.results {
        if let Some(f) = spec
            .functions
            .iter()
            .find(|f| f.algorithm.name == r.algorithm && f.accel.name() == r.accel)
        {
            r.backend = f.backend.name.to_string();
        }
        r.sessions = spec.scenario.sessions;
        r.cores = cores.clone();
        let s = &mut r.scenario;
        s.sessions = spec.scenario.sessions;
        s.cores = spec.scenario.cores.clone();
        s.data = spec.scenario.data;
        s.keys = spec.scenario.keys;
        s.verify = spec.scenario.verify;
        s.rekey_every = spec.scenario.rekey_every;
        s.tag_len = spec.scenario.tag_len;
    }
}
