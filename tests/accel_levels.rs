//! The ISA ladder on the command line (`--accel sse,avx,avx2,avx512`): clap offers the levels beside
//! `hw` and `sw` and names them all when a value is wrong; a run asked for levels gives one result per
//! level this CPU runs, recorded under the level's name; a backend without levels is skipped with its
//! reason, never in silence; `list` shows the level rows. What ipsec-mb does for a level (the
//! manager's `used_arch`, the missing-feature reasons) is tested in `tests/ipsecmb.rs`.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use macbench::mac::{self, ipsecmb, Accel, Availability};

/// The levels `hmac-sha256/ipsecmb` runs here (empty when ipsec-mb is not built or not x86-64).
fn ipsecmb_levels_here() -> Vec<Accel> {
    mac::functions()
        .into_iter()
        .filter(|f| {
            f.algorithm.name == "hmac-sha256"
                && f.backend.name == "ipsecmb"
                && f.accel.is_isa_level()
                && f.availability() == Availability::Available
        })
        .map(|f| f.accel)
        .collect()
}

/// Skip (visibly) unless ipsec-mb is built and this CPU runs `levels`: CI, which installs the
/// library, makes the first a failure by naming `ipsecmb` in `MACBENCH_REQUIRE_BACKENDS`.
fn skip_unless_levels(levels: &[Accel]) -> bool {
    if common::skip_unless(
        ipsecmb::BUILT,
        "ipsecmb",
        "ipsec-mb backend not built (install libipsec-mb-dev)",
    ) {
        return true;
    }
    let here = ipsecmb_levels_here();
    let missing: Vec<String> = levels
        .iter()
        .filter(|l| !here.contains(l))
        .map(|l| l.to_string())
        .collect();
    common::skip_unless(
        missing.is_empty(),
        "ipsecmb-levels",
        &format!("this CPU lacks ipsec-mb's {} level", missing.join(", ")),
    )
}

#[test]
fn a_wrong_accel_is_one_line_naming_every_possible_value() {
    let out = macbench()
        .args("run --alg hmac-sha256 --accel bogus".split_whitespace())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr:?}");
    assert!(stderr.contains("'bogus'"), "{stderr}");
    assert!(
        stderr.contains("[possible values: hw, sw, sse, avx, avx2, avx512]"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn run_and_net_help_offer_the_levels() {
    // `-h`, the short help, lists the values on one line (`--help` gives each its own with a sentence).
    for args in [
        &["run", "-h"][..],
        &["net", "-h"][..],
        &["net", "send", "-h"][..],
    ] {
        let out = macbench().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(
            help.contains("[possible values: hw, sw, sse, avx, avx2, avx512]"),
            "{args:?}: {help}"
        );
    }
}

#[test]
fn every_accel_name_round_trips_and_old_names_stay() {
    // `hw` and `sw` as results files before the ladder spelled them, so those files still read.
    assert_eq!(Accel::Hw.to_string(), "hw");
    assert_eq!(Accel::Sw.to_string(), "sw");
    assert_eq!(serde_json::to_value(Accel::Avx512).unwrap(), "avx512");
    for accel in Accel::ALL {
        assert_eq!(Accel::from_name(accel.name()), Some(accel));
        assert_eq!(macbench::spec::parse_accel(accel.name()), Ok(accel));
    }
    let err = macbench::spec::parse_accel("avx3").unwrap_err();
    assert!(err.0.contains("hw, sw, sse, avx, avx2, avx512"), "{err}");
    // The ladder: sw < sse < avx < avx2 < avx512, hw off it.
    let ranks: Vec<_> = [
        Accel::Sw,
        Accel::Sse,
        Accel::Avx,
        Accel::Avx2,
        Accel::Avx512,
    ]
    .iter()
    .map(|a| a.ladder_rank().unwrap())
    .collect();
    assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
    assert_eq!(Accel::Hw.ladder_rank(), None);
}

#[test]
fn a_run_asked_for_levels_gives_one_result_per_level_this_cpu_runs() {
    // One result per level asked for that this CPU runs; a level it lacks is skipped with its reason.
    if skip_unless_levels(&[]) {
        return;
    }
    let here = ipsecmb_levels_here();
    let wanted: Vec<Accel> = [Accel::Sse, Accel::Avx2]
        .into_iter()
        .filter(|l| here.contains(l))
        .collect();
    if common::skip_unless(
        !wanted.is_empty(),
        "ipsecmb-levels",
        "this CPU runs neither ipsec-mb's sse nor its avx2 level",
    ) {
        return;
    }
    // On the fake engine: the levels' keying and naming are under test, not the machine's load.
    let out = common::exits_0(&mut common::fake_run(
        "run --alg hmac-sha256 --backend ipsecmb --accel sse,avx2 --sizes 64 --duration 100ms --json -",
    ));
    // With `--json -` standard output is the document alone (the table goes to standard error).
    let doc = common::stdout_doc(&out);
    let results = doc["results"].as_array().unwrap();
    let accels: Vec<&str> = results
        .iter()
        .map(|r| r["accel"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = wanted.iter().map(|a| a.to_string()).collect();
    assert_eq!(accels, expected, "{}", String::from_utf8_lossy(&out.stderr));
    for r in results {
        assert_eq!(r["backend"], "ipsecmb");
        assert_eq!(r["failed"], false, "{r}");
        assert!(r["metrics"]["messages"].as_u64().unwrap() > 0, "{r}");
    }
    assert_eq!(doc["scenario"]["accel"], "sse,avx2");
}

#[test]
fn a_backend_without_levels_is_skipped_with_its_reason() {
    // Asked for alone: nothing to run, exit 2, the backend's own reason.
    let out = macbench()
        .args("run --alg hmac-sha256 --backend rustcrypto --accel avx2".split_whitespace())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    // The reason names its backend (the x86-64 one does so itself).
    let expected = if cfg!(target_arch = "x86_64") {
        mac::rustcrypto::NO_ISA_LEVELS.to_string()
    } else {
        format!("rustcrypto: {}", mac::NO_ISA_LEVELS_HERE)
    };
    assert!(
        stderr.contains(&format!("hmac-sha256/avx2: {expected}")),
        "{stderr}"
    );
    // Named beside a backend that has the level: the one runs, the other is said to be skipped.
    if skip_unless_levels(&[Accel::Avx2]) {
        return;
    }
    let resolved = macbench::spec::resolve_functions(
        "hmac-sha256",
        Some("rustcrypto,ipsecmb"),
        &[Accel::Avx2],
    )
    .unwrap();
    let ids: Vec<String> = resolved.functions.iter().map(|f| f.id()).collect();
    assert_eq!(ids, ["hmac-sha256/ipsecmb/avx2"]);
    // The backend's own reason (without the backend's name, which the id says), then which
    // backends do offer the levels (read from the registry).
    let reason = mac::rustcrypto::NO_ISA_LEVELS
        .strip_prefix("rustcrypto: ")
        .expect("the reason names its backend where it stands alone");
    assert_eq!(
        resolved.unavailable,
        [format!(
            "hmac-sha256/rustcrypto/avx2: {reason}; ISA levels are offered by openssl, cryptopp, ipsecmb and openssl4"
        )]
    );
}

#[test]
fn list_shows_every_level_row_with_its_status() {
    let out = macbench().args(["list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = doc["functions"].as_array().unwrap();
    let row = |backend: &str, accel: Accel| {
        rows.iter()
            .find(|r| {
                r["algorithm"] == "hmac-sha256"
                    && r["backend"] == backend
                    && r["accel"] == accel.to_string()
            })
            .unwrap_or_else(|| panic!("no hmac-sha256/{backend}/{accel} row"))
    };
    for level in Accel::LEVELS {
        // A backend without levels: listed, unavailable, with why.
        let r = row("rustcrypto", level);
        assert_eq!(r["available"], false);
        assert!(!r["reason"].as_str().unwrap().is_empty(), "{r}");
        // ipsec-mb: available and passing its vectors where this CPU runs the level.
        let r = row("ipsecmb", level);
        if ipsecmb_levels_here().contains(&level) {
            assert_eq!(r["available"], true, "{r}");
            assert!(r["selftest"].as_str().unwrap().starts_with("pass"), "{r}");
        } else {
            assert_eq!(r["available"], false, "{r}");
            assert!(!r["reason"].as_str().unwrap().is_empty(), "{r}");
        }
    }
    if ipsecmb::BUILT {
        // What the library reported for each level's manager is on the backend's line.
        let line = doc["host"]["library_versions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|pair| pair[0] == "ipsecmb")
            .and_then(|pair| pair[1].as_str())
            .unwrap_or_default();
        assert!(line.contains("levels by used_arch:"), "{line}");
    }
}
