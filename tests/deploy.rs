//! The fleet recipes in deploy/ run for real or are checked by their own tools: the Ansible playbook
//! on an inventory of two hosts that are this machine, the GitHub Actions workflow against the
//! workflow schema (check-jsonschema), and the LAVA test definition's parse pattern on what
//! `macbench export --format lava` prints. Each skips with its reason where its tool is missing; CI
//! installs them and requires them. The packages the Ansible and GitHub recipes install are checked
//! against build/libraries.rs's rows, which need no tool.

#![allow(clippy::unwrap_used)]

mod common;

#[path = "../build/libraries.rs"]
#[allow(dead_code)]
mod libraries;

use libraries::SYSTEM_LIBRARIES;
use std::path::Path;
use std::process::Command;

fn installed(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn macbench_binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_macbench"))
}

#[test]
fn the_ansible_playbook_measures_two_hosts_and_reports_both() {
    if let Ok(emulator) = std::env::var(common::EMULATED_VAR) {
        // The playbook is the same on every architecture; under the emulator it would only be slow.
        common::skip(
            "native",
            &format!("the playbook runs natively; under {emulator} it would only be slower"),
        );
        return;
    }
    if common::skip_unless(
        installed("ansible-playbook", "--version"),
        "ansible",
        "ansible-playbook not installed (CI installs ansible-core from PyPI)",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let fetched = tmp.path().join("fetched");
    let binary = macbench_binary().display().to_string();
    common::succeeds(
        Command::new("ansible-playbook")
            .args([
                "-i",
                "deploy/ansible/inventory.example",
                "deploy/ansible/macbench.yml",
            ])
            .args([
                "-e",
                "budget=5",
                "-e",
                "run_args='--alg hmac-sha256 --sizes 64 --no-harness'",
            ])
            .args(["-e", &format!("macbench_binary={binary}")])
            .args(["-e", &format!("macbench_local_binary={binary}")])
            .args(["-e", &format!("fetch_dir={}", fetched.display())])
            .args([
                "-e",
                &format!("macbench_workdir={}", tmp.path().join("hosts").display()),
            ])
            .env("ANSIBLE_NOCOLOR", "1")
            // The playbook is under test here, not the engine: on a busy machine a real 5 s run can
            // fail its validity checks (exit 1), and `partial: false` below needs them passed. The
            // hosts are local connections, which pass the controller's environment on to macbench.
            .env("MACBENCH_FAKE_ENGINE", "valid"),
    );
    // One labelled directory per host, each complete, and one report naming both.
    for host in ["alpha", "beta"] {
        let doc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(fetched.join(host).join("results.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(doc["host"]["label"], host);
        assert_eq!(doc["partial"], false);
    }
    common::succeeds(
        Command::new(macbench_binary())
            .arg("validate")
            .arg(fetched.join("alpha"))
            .arg(fetched.join("beta")),
    );
    let report = std::fs::read_to_string(fetched.join("report.html")).unwrap();
    assert!(report.contains("<h3>alpha</h3>") && report.contains("<h3>beta</h3>"));
}

/// `ansible-playbook` of deploy/ansible/macbench.yml on `inventory`, the run of each host the fake
/// engine's (`alpha` as `alpha_engine` says, `beta` valid), with `run_args`.
fn play(tmp: &Path, alpha_engine: &str, run_args: &str) -> std::process::Output {
    let inventory = tmp.join("inventory.yml");
    // Two hosts that are this machine, as inventory.example; alpha's run made to fail or pass.
    std::fs::write(
        &inventory,
        format!(
            "macbench:\n  hosts:\n    alpha:\n      macbench_label: alpha\n      macbench_environment: {{MACBENCH_FAKE_ENGINE: {alpha_engine}}}\n    beta:\n      macbench_label: beta\n  vars:\n    ansible_connection: local\n    ansible_python_interpreter: \"{{{{ ansible_playbook_python }}}}\"\n"
        ),
    )
    .unwrap();
    let binary = macbench_binary().display().to_string();
    Command::new("ansible-playbook")
        .arg("-i")
        .arg(&inventory)
        .arg("deploy/ansible/macbench.yml")
        .args(["-e", "budget=5", "-e", &format!("run_args='{run_args}'")])
        .args(["-e", &format!("macbench_binary={binary}")])
        .args(["-e", &format!("macbench_local_binary={binary}")])
        .args([
            "-e",
            &format!("fetch_dir={}", tmp.join("fetched").display()),
        ])
        .args([
            "-e",
            &format!("macbench_workdir={}", tmp.join("hosts").display()),
        ])
        .env("ANSIBLE_NOCOLOR", "1")
        .env("MACBENCH_FAKE_ENGINE", "valid")
        .output()
        .unwrap()
}

/// Issue 47, fleet: a host whose `macbench run` exits 1 (some cells failed their checks, as on a busy
/// machine) failed the play before its results were fetched, and its earlier results had already
/// been deleted. Now both hosts are fetched and reported, the failed cells marked; a later run that
/// fails outright (exit 2) fails the play and leaves the earlier results where they were.
#[test]
fn the_ansible_playbook_fetches_a_host_whose_run_exits_1_and_keeps_results_on_exit_2() {
    if std::env::var(common::EMULATED_VAR).is_ok_and(|e| !e.is_empty()) {
        common::skip("native", "the playbook runs natively");
        return;
    }
    if common::skip_unless(
        installed("ansible-playbook", "--version"),
        "ansible",
        "ansible-playbook not installed (CI installs ansible-core from PyPI)",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = play(
        tmp.path(),
        "starved",
        "--alg hmac-sha256 --sizes 64 --no-harness",
    );
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{:?}\n{log}", out.status);
    assert!(log.contains("alpha: fetched with problems"), "{log}");
    let fetched = tmp.path().join("fetched");
    for (host, failed) in [("alpha", true), ("beta", false)] {
        let doc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(fetched.join(host).join("results.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(doc["host"]["label"], host);
        assert_eq!(doc["results"][0]["failed"], failed, "{host}");
    }
    let report = std::fs::read_to_string(fetched.join("report.html")).unwrap();
    assert!(report.contains("<h3>alpha</h3>") && report.contains("<h3>beta</h3>"));
    assert!(
        report.contains("starvation"),
        "alpha's failed cell is not marked"
    );
    // Bad input on the next run: exit 2 fails the play; the hosts keep their results.
    let kept = tmp.path().join("hosts/results-beta/results.json");
    let before = std::fs::read(&kept).unwrap();
    let out = play(tmp.path(), "valid", "--sizes -3");
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{log}");
    assert_eq!(std::fs::read(&kept).unwrap(), before, "{log}");
}

/// The rows' packages in their order: those Debian builds for every architecture, then those it
/// builds for x86-64 only.
fn row_packages() -> (Vec<&'static str>, Vec<&'static str>) {
    let (x86_64_only, everywhere): (Vec<_>, Vec<_>) =
        SYSTEM_LIBRARIES.iter().partition(|l| l.package_x86_64_only);
    let packages = |rows: Vec<&libraries::SystemLibrary>| rows.iter().map(|l| l.package).collect();
    (packages(everywhere), packages(x86_64_only))
}

/// The words of the one line of `recipe` that starts with `key` (after indentation), between
/// `open` and the line's end less `close`, split at commas and spaces.
fn listed(recipe: &str, key: &str, open: &str, close: &str) -> Vec<String> {
    let text = read(recipe);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(&format!("{key}{open}")))
        .collect();
    assert_eq!(lines.len(), 1, "{recipe}: one line `{key}{open}…` wanted");
    let value = lines[0].trim_start()[key.len() + open.len()..].trim_end();
    let value = value.strip_suffix(close).unwrap_or_else(|| {
        panic!("{recipe}: `{key}` does not end in `{close}`: {value}");
    });
    value
        .split([',', ' '])
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Issue 46: the recipes named 5 of the 8 system libraries' packages (the Ansible list also lacked
/// ipsec-mb), so a binary built with Botan, libgcrypt or wolfSSL did not load on a host they set up.
/// Each recipe now lists every row's package, in the rows' order, the x86-64-only ones apart, and
/// installs both lists.
#[test]
fn the_deploy_recipes_install_exactly_the_packages_of_the_library_rows() {
    let (everywhere, x86_64_only) = row_packages();
    assert!(
        !everywhere.is_empty() && !x86_64_only.is_empty(),
        "both kinds of row are checked"
    );
    let ansible = "deploy/ansible/macbench.yml";
    assert_eq!(
        listed(ansible, "library_packages", ": [", "]"),
        everywhere,
        "{ansible}: library_packages against build/libraries.rs's rows"
    );
    assert_eq!(
        listed(ansible, "library_packages_x86_64", ": [", "]"),
        x86_64_only,
        "{ansible}: library_packages_x86_64 against build/libraries.rs's rows"
    );
    assert!(
        read(ansible).contains(
            "name: \"{{ build_packages + library_packages + (library_packages_x86_64 if ansible_architecture == 'x86_64' else []) }}\""
        ),
        "{ansible}: the apt task installs both lists, the second on x86-64 only"
    );
    let github = "deploy/github-actions/macbench.yml";
    assert_eq!(
        listed(github, "LIBRARY_PACKAGES", ": ", ""),
        everywhere,
        "{github}: LIBRARY_PACKAGES against build/libraries.rs's rows"
    );
    assert_eq!(
        listed(github, "LIBRARY_PACKAGES_X86_64", ": ", ""),
        x86_64_only,
        "{github}: LIBRARY_PACKAGES_X86_64 against build/libraries.rs's rows"
    );
    let workflow = read(github);
    assert!(
        workflow.contains("if [ \"$(uname -m)\" != x86_64 ]; then LIBRARY_PACKAGES_X86_64=; fi")
            && workflow.contains(
                "sudo apt-get install -y $BUILD_PACKAGES $LIBRARY_PACKAGES $LIBRARY_PACKAGES_X86_64"
            ),
        "{github}: the measuring job installs both lists, the second on x86-64 only"
    );
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_github_workflow_follows_the_workflow_schema() {
    if common::skip_unless(
        installed("check-jsonschema", "--version"),
        "check-jsonschema",
        "check-jsonschema not installed (CI installs it from PyPI)",
    ) {
        return;
    }
    common::succeeds(
        Command::new("check-jsonschema")
            .args(["--builtin-schema", "vendor.github-workflows"])
            .arg("deploy/github-actions/macbench.yml"),
    );
}

/// The LAVA definition read by Python's YAML (PyYAML, which ansible-core brings): its format line,
/// its steps, and its parse pattern applied to `export --format lava` on the fixture.
#[test]
fn the_lava_definition_parses_what_export_prints() {
    let has_yaml = Command::new("python3")
        .args(["-c", "import yaml"])
        .output()
        .is_ok_and(|o| o.status.success());
    if common::skip_unless(
        has_yaml,
        "ansible",
        "python3 with PyYAML not installed (CI installs ansible-core, which brings it)",
    ) {
        return;
    }
    let lines = Command::new(macbench_binary())
        .args("export --format lava tests/fixtures/results-ecda402.json".split_whitespace())
        .output()
        .unwrap();
    assert!(lines.status.success());
    let script = r#"
import re, sys, yaml
d = yaml.safe_load(open("deploy/lava/macbench.yaml"))
assert d["metadata"]["format"] == "Lava-Test Test Definition 1.0", d["metadata"]
assert d["metadata"]["name"] and d["run"]["steps"], d
assert any("export --format lava" in s for s in d["run"]["steps"]), d["run"]["steps"]
pattern = re.compile(d["parse"]["pattern"])
lines = sys.stdin.read().splitlines()
matched = [pattern.match(l) for l in lines]
assert lines and all(matched), [l for l, m in zip(lines, matched) if not m]
print(len(lines), matched[0].group("test_case_id"), matched[0].group("units"))
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&lines.stdout)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    common::exited_0(&out);
    assert!(
        said.starts_with("4 hmac-sha256_openssl_hw_64_1 cycles/B"),
        "{said}"
    );
}
