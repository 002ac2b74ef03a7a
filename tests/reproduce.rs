//! `macbench reproduce`: the claims evaluator on constructed results (a claim that holds, one that does
//! not, one that cannot be tested), the plan's scaling to a budget, and resuming a reproduction from
//! the step files it kept — no timing anywhere.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use common::macbench;

use macbench::metrics::{Warning, WarningCode};
use macbench::report::paper::{self, Drawn};
use macbench::reproduce::{self, deepakumara, mac_speeds, rashwan, Evidence, Verdict};
use macbench::results::{Document, ResultEntry, SizeLabel};
use macbench::stats::Interval;
use std::path::Path;

/// A results document written by macbench (the fixture of tests/old_results.rs), its results replaced
/// by `entries`: (algorithm, accel, size, absolute cycles/byte).
fn document(entries: &[(&str, &str, u64, f64)]) -> Document {
    let mut doc = macbench::report::read::read(Path::new("tests/fixtures/results-ecda402.json"))
        .unwrap()
        .doc;
    let template: ResultEntry = doc.results[0].clone();
    doc.results = entries
        .iter()
        .map(|&(algorithm, accel, size, cpb)| {
            let mut r = template.clone();
            r.algorithm = algorithm.to_string();
            r.accel = accel.to_string();
            r.size = SizeLabel::Bytes(u32::try_from(size).unwrap());
            r.mean_message_bytes = size as f64;
            // Every message of a fixed size has that size (a reader refuses other bytes).
            r.metrics.bytes = r.metrics.messages * size;
            r.metrics.absolute_cycles_per_byte = Some(cpb);
            r.metrics.apparent_cycles_per_byte = Some(cpb);
            // The template's intervals and spreads belong to its own medians, not to `cpb`: a
            // constructed result carries none (a reader refuses an interval without its median).
            r.ci95 = Default::default();
            r.spread = Default::default();
            r.failed = false;
            r
        })
        .collect();
    doc.partial = false;
    doc
}

/// The HMACs of the MAC-speeds plan, and nothing of the universal hashes.
fn hmacs_only() -> Document {
    document(&[
        ("hmac-md5", "hw", 64, 30.0),
        ("hmac-md5", "hw", 65536, 3.0),
        ("hmac-sha1", "hw", 64, 12.0),
        ("hmac-sha1", "hw", 65536, 1.2),
        ("hmac-sha256", "hw", 64, 15.0),
        ("hmac-sha256", "hw", 65536, 1.5),
    ])
}

/// The verdict of claim `id` among `outcomes`.
/// Assert that the claim `id` holds and its detail says `says`.
fn holds_saying(outcomes: &[reproduce::Outcome], id: &str, says: &str) {
    let verdict = verdict_of(outcomes, id);
    assert!(matches!(verdict, Verdict::Holds(_)), "{id}: {verdict:?}");
    assert!(verdict.detail().contains(says), "{id}: {verdict:?}");
}

fn verdict_of(outcomes: &[reproduce::Outcome], id: &str) -> Verdict {
    outcomes
        .iter()
        .find(|o| o.id == id)
        .unwrap()
        .verdict
        .clone()
}

fn verdicts(study: &reproduce::Study, evidence: &Evidence) -> Vec<(&'static str, String)> {
    reproduce::evaluate(study, evidence)
        .into_iter()
        .map(|o| (o.id, o.verdict.label().to_string()))
        .collect()
}

/// `reproduce mac-speeds-thread --resume DIR`, asserted refused with exit 2 and one line on standard
/// error (`case` names the case in a failure); that line.
fn resume_refused(dir: &Path, case: &str) -> String {
    let out = macbench()
        .args("reproduce mac-speeds-thread --budget 5 --resume".split_whitespace())
        .arg(dir)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{case}: {stderr}");
    stderr
}

/// Issue 47 (N29): a reproduction's claims "held" on counters the fake engine made up. A claim that
/// reads a step marked `fake_engine` cannot be tested, with the reason; the same step unmarked holds.
#[test]
fn claims_on_the_fake_engines_results_cannot_be_tested() {
    let mut evidence = Evidence::default();
    let mut made_up = hmacs_only();
    made_up.fake_engine = Some("valid".into());
    evidence.steps.insert("lengths".into(), made_up);
    let outcomes = reproduce::evaluate(&mac_speeds::STUDY, &evidence);
    let verdict = verdict_of(&outcomes, "per-message-overhead");
    assert!(matches!(verdict, Verdict::CannotTest(_)), "{verdict:?}");
    assert!(
        verdict
            .detail()
            .contains("step lengths's results were made up by the fake engine"),
        "{verdict:?}"
    );
    assert!(
        outcomes
            .iter()
            .all(|o| !matches!(o.verdict, Verdict::Holds(_) | Verdict::DoesNotHold(_))),
        "{outcomes:?}"
    );
}

#[test]
fn claims_hold_fail_or_cannot_be_tested_on_constructed_results() {
    let mut evidence = Evidence::default();
    evidence.steps.insert("lengths".into(), hmacs_only());
    let outcomes = reproduce::evaluate(&mac_speeds::STUDY, &evidence);
    let by_id = |id: &str| verdict_of(&outcomes, id);
    // 64 B costs 10× the cycles/byte of 64 KiB for every HMAC: holds, with the numbers.
    holds_saying(&outcomes, "per-message-overhead", "hmac-md5 10.00×");
    // HMAC-SHA1 is faster than HMAC-MD5 here: does not hold.
    let md5 = by_id("hmac-md5-fastest-hmac");
    assert!(matches!(md5, Verdict::DoesNotHold(_)), "{md5:?}");
    assert!(
        md5.detail().contains("fastest HMAC hmac-sha1 1.20 c/B"),
        "{md5:?}"
    );
    // No universal hash was measured: cannot be tested, never a guess.
    assert!(matches!(
        by_id("universal-hash-faster"),
        Verdict::CannotTest(_)
    ));
    // Make MD5 the fastest and the same claim holds: the check reads the numbers.
    let mut faster = hmacs_only();
    faster.results[1].metrics.absolute_cycles_per_byte = Some(1.0);
    evidence.steps.insert("lengths".into(), faster);
    let md5 = reproduce::evaluate(&mac_speeds::STUDY, &evidence)
        .into_iter()
        .find(|o| o.id == "hmac-md5-fastest-hmac")
        .unwrap();
    assert!(matches!(md5.verdict, Verdict::Holds(_)), "{md5:?}");
}

/// A warning alone no longer makes a claim `unsure` (issue 44: "HMAC-MD5 is the fastest" was unsure
/// on a 20× margin because some results carried warnings): on these results, without intervals,
/// nothing a `noisy` flag could do turns MD5 at 2.5× SHA-1's cost into the fastest, so the claim does
/// not hold, and the verdict names the flags it stood against; a claim that holds stays.
#[test]
fn a_claim_contradicted_by_a_wide_margin_is_decided_whatever_its_flags() {
    let mut disturbed = hmacs_only();
    for r in &mut disturbed.results {
        r.warnings.push(warning(WarningCode::Noisy));
    }
    let mut evidence = Evidence::default();
    evidence.steps.insert("lengths".into(), disturbed);
    let outcomes = reproduce::evaluate(&mac_speeds::STUDY, &evidence);
    let md5 = verdict_of(&outcomes, "hmac-md5-fastest-hmac");
    assert!(matches!(md5, Verdict::DoesNotHold(_)), "{md5:?}");
    assert!(
        md5.detail()
            .contains("6 of the 6 results it reads carry validity warnings (noisy ×6), too few or too small to change the verdict"),
        "{md5:?}"
    );
    let overhead = verdict_of(&outcomes, "per-message-overhead");
    assert!(matches!(overhead, Verdict::Holds(_)), "{overhead:?}");
}

/// A warning of `code`.
fn warning(code: WarningCode) -> Warning {
    Warning::new(code, format!("{} (constructed)", code.as_str()))
}

/// The nine software-only at 64 KiB, `cost(algorithm)` cycles/byte each, every result with a 95 %
/// interval of ±`half` (relative) about it and the warnings `flags(algorithm)` gives.
fn nine_sw(
    cost: impl Fn(&str) -> f64,
    half: f64,
    flags: impl Fn(&str) -> Vec<WarningCode>,
) -> Document {
    let nine = macbench::mac::algorithm::PAPER_PRESET;
    let entries: Vec<(&str, &str, u64, f64)> =
        nine.iter().map(|a| (*a, "sw", 65536, cost(a))).collect();
    let mut doc = document(&entries);
    for r in &mut doc.results {
        let v = r.metrics.absolute_cycles_per_byte.unwrap();
        let interval = Interval {
            low: v * (1.0 - half),
            high: v * (1.0 + half),
        };
        r.ci95.absolute_cycles_per_byte = Some(interval);
        r.ci95.apparent_cycles_per_byte = Some(interval);
        r.warnings = flags(&r.algorithm).into_iter().map(warning).collect();
    }
    doc
}

/// The `fastest-sw` verdict (HMAC-MD5 fastest software-only, within 5 %) on `sizes`.
fn fastest_sw(sizes: Document) -> Verdict {
    let mut evidence = Evidence::default();
    evidence.steps.insert("sizes".into(), sizes);
    verdict_of(
        &reproduce::evaluate(&rashwan::STUDY, &evidence),
        "fastest-sw",
    )
}

/// Issue 44's numbers: VMAC-AES128 0.17 c/B against HMAC-MD5's 3.86, a 20× margin, with every
/// warning a result can carry and still count: within their intervals widened ×/÷ 1.5 nothing turns
/// it, so the claim does not hold (and, mirrored, holds), the flags listed.
#[test]
fn a_twenty_fold_margin_with_flags_is_decided_and_lists_them() {
    let all_flags = |_: &str| {
        vec![
            WarningCode::Noisy,
            WarningCode::OverUtilised,
            WarningCode::NotSteady,
            WarningCode::WindowTooShort,
        ]
    };
    let cost = |a: &str| match a {
        "vmac-aes128-64" => 0.17,
        "hmac-md5" => 3.86,
        _ => 5.0,
    };
    let verdict = fastest_sw(nine_sw(cost, 0.1, all_flags));
    assert!(matches!(verdict, Verdict::DoesNotHold(_)), "{verdict:?}");
    for says in [
        "vmac-aes128-64 0.17 c/B",
        "hmac-md5 3.86 c/B",
        "9 of the 9 results it reads carry validity warnings (noisy ×9, not-steady ×9, over-utilised ×9, window-too-short ×9)",
    ] {
        assert!(verdict.detail().contains(says), "{says}: {verdict:?}");
    }
    let mirrored = |a: &str| match a {
        "hmac-md5" => 0.17,
        "vmac-aes128-64" => 3.86,
        _ => 5.0,
    };
    let verdict = fastest_sw(nine_sw(mirrored, 0.1, all_flags));
    assert!(matches!(verdict, Verdict::Holds(_)), "{verdict:?}");
    assert!(verdict.detail().contains("over-utilised ×9"), "{verdict:?}");
}

/// HMAC-MD5 3 % beyond the tolerance (1.0815 against 1.0 × 1.05), intervals of ±4 % and a `noisy`
/// flag: MD5 at its low end and the rest at their high ends is within tolerance, so `unsure`. The
/// same numbers measured exactly (no intervals, no flags) do not hold; a `not-steady` flag on
/// exact numbers widens them ×/÷ 1.5, enough to turn a 3 % margin.
#[test]
fn a_three_percent_margin_within_noisy_intervals_is_unsure() {
    let cost = |a: &str| match a {
        "vmac-aes128-64" => 1.0,
        "hmac-md5" => 1.0815,
        _ => 5.0,
    };
    let noisy = |_: &str| vec![WarningCode::Noisy];
    let verdict = fastest_sw(nine_sw(cost, 0.04, noisy));
    assert!(matches!(verdict, Verdict::Unsure(_)), "{verdict:?}");
    assert!(
        verdict.detail().contains("(noisy ×9)") && verdict.detail().contains("rerun"),
        "{verdict:?}"
    );
    let exact = fastest_sw(nine_sw(cost, 0.0, |_| Vec::new()));
    assert!(matches!(exact, Verdict::DoesNotHold(_)), "{exact:?}");
    assert!(!exact.detail().contains("warnings"), "{exact:?}");
    // Without a flag, an interval wide enough still leaves it open, and says so.
    let wide = fastest_sw(nine_sw(cost, 0.04, |_| Vec::new()));
    assert!(matches!(wide, Verdict::Unsure(_)), "{wide:?}");
    assert!(wide.detail().contains("more repeats"), "{wide:?}");
    let unsteady = |a: &str| {
        if a == "hmac-md5" {
            vec![WarningCode::NotSteady]
        } else {
            Vec::new()
        }
    };
    let verdict = fastest_sw(nine_sw(cost, 0.0, unsteady));
    assert!(matches!(verdict, Verdict::Unsure(_)), "{verdict:?}");
}

/// A result that failed is no evidence at all, whatever the margin: the claim cannot be tested.
#[test]
fn a_failed_result_is_no_evidence_for_a_verdict() {
    let cost = |a: &str| if a == "hmac-md5" { 0.17 } else { 5.0 };
    let mut sizes = nine_sw(cost, 0.1, |_| vec![WarningCode::Noisy]);
    for r in &mut sizes.results {
        if r.algorithm == "hmac-md5" {
            r.failed = true;
            r.warnings = vec![Warning {
                fatal: true,
                ..warning(WarningCode::Starvation)
            }];
        }
    }
    let verdict = fastest_sw(sizes);
    assert!(matches!(verdict, Verdict::CannotTest(_)), "{verdict:?}");
    assert!(
        verdict.detail().contains("hmac-md5 (sw) was not measured"),
        "{verdict:?}"
    );
}

/// The factor each warning's plausible effect widens an interval by, as docs/reproduce.md states.
#[test]
fn each_warning_widens_by_its_stated_factor() {
    assert_eq!(reproduce::plausible_factor(WarningCode::Noisy), 1.0);
    for code in [
        WarningCode::NotSteady,
        WarningCode::OverUtilised,
        WarningCode::WindowTooShort,
    ] {
        assert_eq!(reproduce::plausible_factor(code), 1.5, "{code:?}");
    }
    let doc = std::fs::read_to_string("docs/reproduce.md").unwrap();
    for row in [
        "| `noisy` | the interval as it is |",
        "| `not-steady`, `over-utilised`, `window-too-short` | ×/÷ 1.5 |",
    ] {
        assert!(doc.contains(row), "docs/reproduce.md lacks {row:?}");
    }
}

#[test]
fn every_claim_of_a_study_without_runs_cannot_be_tested() {
    for study in reproduce::STUDIES {
        for (id, verdict) in verdicts(study, &Evidence::default()) {
            // The one claim that reads no run: arithmetic on the paper's printed Γ.
            if (study.id, id) == ("deepakumara-ipsec", "gamma-as-printed") {
                assert_eq!(verdict, "does not hold");
                continue;
            }
            assert_eq!(verdict, "cannot be tested here", "{}: {id}", study.id);
        }
    }
    assert!(
        rashwan::STUDY.claims.len() >= 8,
        "the paper's claims table has at least eight checks"
    );
}

#[test]
fn the_rashwan_rankings_read_the_sizes_step() {
    let nine = macbench::mac::algorithm::PAPER_PRESET;
    // Constructed so VMAC is fastest and Serpent slowest with hw; MD5 slowest in sw (the paper says
    // fastest: does not hold).
    let mut entries = Vec::new();
    for (i, alg) in nine.iter().enumerate() {
        let hw = match *alg {
            "vmac-aes128-64" => 0.5,
            "cmac-serpent" => 30.0,
            _ => 2.0 + i as f64,
        };
        let sw = if *alg == "hmac-md5" {
            100.0
        } else {
            10.0 + i as f64
        };
        entries.push((*alg, "hw", 65536, hw));
        entries.push((*alg, "sw", 65536, sw));
    }
    let mut evidence = Evidence::default();
    evidence.steps.insert("sizes".into(), document(&entries));
    let v = verdicts(&rashwan::STUDY, &evidence);
    let get = |id: &str| v.iter().find(|(c, _)| *c == id).unwrap().1.clone();
    assert_eq!(get("fastest-hw"), "holds");
    assert_eq!(get("slowest-hw"), "holds");
    assert_eq!(get("fastest-sw"), "does not hold");
    // The 100-session runs are missing.
    assert_eq!(get("apparent-grows-with-cores"), "cannot be tested here");
}

/// A claim reads the result of its scenario key, not the first row of its algorithm, acceleration
/// and mean size: a row of another dispatch mode, another tag length or a size model whose mean is the
/// size is never read in its place, and a step that holds the point under two backends or two
/// session counts does not say which one a claim means, so none is read (the old matching read the
/// first row of each of these).
#[test]
fn a_claim_reads_the_row_of_its_scenario_key() {
    let mut doc = document(&[
        ("vmac-aes128-64", "hw", 65536, 900.0),
        ("vmac-aes128-64", "hw", 65536, 800.0),
        ("vmac-aes128-64", "hw", 65536, 700.0),
        ("vmac-aes128-64", "hw", 65536, 0.5),
    ]);
    doc.results[0].scenario.dispatch = "burst:16".parse().unwrap();
    doc.results[1].scenario.tag_len = Some(8);
    doc.results[2].size = SizeLabel::Model("mean-64k".into());
    let mut evidence = Evidence::default();
    evidence.steps.insert("sizes".into(), doc.clone());
    let found = evidence
        .find("sizes", "vmac-aes128-64", "hw", 65536)
        .unwrap();
    assert_eq!(found.metrics.absolute_cycles_per_byte, Some(0.5));
    // Another dispatch mode is read where the claim names it.
    let burst = reproduce::Point::new("vmac-aes128-64", "hw", SizeLabel::Bytes(65536))
        .dispatched("burst:16");
    let found = evidence.find_point("sizes", &burst).unwrap();
    assert_eq!(found.metrics.absolute_cycles_per_byte, Some(900.0));
    // A second backend, or a second session count, for the same point: not the first row, none.
    for change in [
        (|r: &mut ResultEntry| r.backend = "other".into()) as fn(&mut ResultEntry),
        |r: &mut ResultEntry| r.sessions = 100,
    ] {
        let mut twice = doc.clone();
        let mut other = twice.results[3].clone();
        change(&mut other);
        other.metrics.absolute_cycles_per_byte = Some(99.0);
        twice.results.insert(0, other);
        evidence.steps.insert("sizes".into(), twice);
        assert!(evidence
            .find("sizes", "vmac-aes128-64", "hw", 65536)
            .is_none());
    }
}

/// Every figure a study declares is drawn from the step it names: on constructed results where each
/// step's numbers are its own marker, every point of a drawn figure (and every cost in a drawn table)
/// carries the marker of its step and of no other; without that step, the figure is not drawn and
/// says which step is missing. A figure that needs more CPUs than the host has says so.
#[test]
fn every_paper_figure_is_drawn_from_the_step_it_names() {
    let mut drawn = 0;
    for study in reproduce::STUDIES {
        assert!(!study.figures.is_empty(), "{} declares no figure", study.id);
        let steps = common::constructed_steps(study);
        let index = |name: &str| study.steps.iter().position(|s| s.name == name).unwrap();
        for decl in study.figures {
            for claim in decl.decides {
                assert!(
                    study.claims.iter().any(|c| c.id == *claim),
                    "{}: {} decides unknown claim {claim}",
                    study.id,
                    decl.id
                );
            }
            let named: Vec<usize> = decl.plot.steps().iter().map(|s| index(s)).collect();
            let evidence = Evidence::new(steps.clone(), Vec::new());
            match paper::draw(decl, &evidence, decl.id) {
                Drawn::Figure(f) => {
                    let [k] = named[..] else {
                        panic!("{}: a figure reads one step", decl.id)
                    };
                    let marker = common::step_marker(k);
                    let points: Vec<f64> = f
                        .series
                        .iter()
                        .flat_map(|s| s.points.iter().map(|p| p.1))
                        .collect();
                    assert!(!points.is_empty(), "{}: nothing drawn", decl.id);
                    for y in points {
                        // A thread's wall-clock cycles/byte is n × the marker.
                        let ratio = y / marker;
                        assert!(
                            ratio == 1.0 || ratio == 100.0,
                            "{}: {y} is not step {}'s marker {marker}",
                            decl.id,
                            decl.plot.steps()[0]
                        );
                    }
                    assert_eq!(f.id, decl.id);
                }
                Drawn::Table(t) => {
                    let cells: Vec<&String> = t.rows.iter().flatten().collect();
                    for (k, step) in study.steps.iter().enumerate() {
                        let text = reproduce::num(common::step_marker(k));
                        let found = cells.iter().any(|c| **c == text);
                        assert_eq!(
                            found,
                            named.contains(&k),
                            "{}: step {}'s marker {text} in {t:?}",
                            decl.id,
                            step.name
                        );
                    }
                }
                Drawn::CannotDraw(why) => panic!("{}: not drawn: {why}", decl.id),
            }
            drawn += 1;
            // Without the step it names, it is not drawn, and says which step is missing.
            for step in decl.plot.steps() {
                let mut without = steps.clone();
                without.remove(step);
                match paper::draw(decl, &Evidence::new(without, Vec::new()), decl.id) {
                    Drawn::CannotDraw(why) => assert!(why.contains(step), "{why}"),
                    other => panic!("{}: drawn without step {step}: {other:?}", decl.id),
                }
            }
        }
    }
    assert_eq!(
        drawn, 10,
        "four of Rashwan's, three of Deepakumara's, two of the embedded study's (library and device), one of the others'"
    );
    // "All cores" on a host of one CPU is the one-core figure again: said, not drawn.
    let mut one_cpu = common::constructed_steps(&rashwan::STUDY);
    for doc in one_cpu.values_mut() {
        doc.host.online_cpus = vec![0];
    }
    let all_cores = rashwan::STUDY
        .figures
        .iter()
        .find(|f| f.id == "fig10-threads-all-cores")
        .unwrap();
    match paper::draw(all_cores, &Evidence::new(one_cpu, Vec::new()), "x") {
        Drawn::CannotDraw(why) => assert!(why.contains("this host has 1"), "{why}"),
        other => panic!("drawn on one CPU: {other:?}"),
    }
}

#[test]
fn the_plan_scales_to_the_budget_with_a_floor_per_step() {
    let study = &rashwan::STUDY;
    let shares: f64 = study.steps.iter().map(|s| s.share).sum();
    assert!((shares - 1.0).abs() < 1e-9, "shares sum to {shares}");
    let floors = vec![Some(reproduce::MIN_STEP_BUDGET_S); 3];
    let b = reproduce::step_budgets(study, 300.0, &floors);
    let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6);
    assert!(close(&b, &[180.0, 60.0, 60.0]), "{b:?}");
    // A step whose minimum is above its share gets its minimum; the others share the rest in
    // proportion, and the budget still holds (issue 47 N31: plan with each step's real minimum).
    let b = reproduce::step_budgets(study, 300.0, &[Some(5.0), Some(100.0), Some(5.0)]);
    assert!(close(&b, &[150.0, 100.0, 50.0]), "{b:?}");
    // A step that does not run (kept, refused) gets nothing; the running ones share the budget.
    let b = reproduce::step_budgets(study, 300.0, &[Some(5.0), None, Some(5.0)]);
    assert!(close(&b, &[225.0, 0.0, 75.0]), "{b:?}");
    // Too small a budget (the CLI refuses it): each step still gets its minimum.
    let tiny = reproduce::step_budgets(study, 6.0, &floors);
    assert!(
        tiny.iter().all(|&s| s == reproduce::MIN_STEP_BUDGET_S),
        "{tiny:?}"
    );
    // "One core" is the CPU the caller names.
    assert_eq!(study.steps[0].options(7).cores, vec![7]);
}

/// A reproduction whose step file is complete is not run again: `--resume` judges the kept file and
/// gives the table an uninterrupted reproduction of the same results gives.
#[test]
fn resume_keeps_complete_steps_and_judges_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let mut doc = hmacs_only();
    common::as_step(&mut doc, &mac_speeds::STUDY, "lengths");
    std::fs::write(
        out.join("lengths.json"),
        serde_json::to_string(&doc).unwrap(),
    )
    .unwrap();
    let run = macbench()
        .args("reproduce mac-speeds-thread --budget 5 --resume".split_whitespace())
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("lengths: kept"), "{stderr}");
    let mut evidence = Evidence::default();
    evidence.steps.insert("lengths".into(), doc);
    let want = reproduce::claims_markdown(
        &mac_speeds::STUDY,
        &evidence,
        &reproduce::evaluate(&mac_speeds::STUDY, &evidence),
    );
    assert_eq!(
        std::fs::read_to_string(out.join("claims.md")).unwrap(),
        want
    );
    assert!(out.join("claims.json").is_file());
    // The reproduction's own report shows its claims table.
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("<section id=\"claims\">"),
        "no claims section"
    );
    // -o into a directory that holds a reproduction is refused in one line; nothing is touched.
    let again = macbench()
        .args(["reproduce", "mac-speeds-thread", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    // A second --resume rewrites the reproduction's own figures (`report --png` refuses only a
    // user's): it succeeds, and the figures are there.
    let figures = std::fs::read_dir(out.join("figures")).unwrap().count();
    assert!(figures > 0, "no figures written");
    let again = macbench()
        .args("reproduce mac-speeds-thread --budget 5 --resume".split_whitespace())
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert_eq!(
        std::fs::read_dir(out.join("figures")).unwrap().count(),
        figures
    );
}

#[test]
fn unknown_studies_and_absurd_values_are_one_line_usage_errors() {
    let cases: [(&[&str], &str); 7] = [
        (&["no-such-paper"], "unknown study"),
        (&["mac-speeds-thread", "--label", ""], "--label"),
        // Absurd values: refused before anything runs or any directory is made.
        (&["mac-speeds-thread", "--budget", "0"], "--budget"),
        (&["mac-speeds-thread", "--budget", "-5"], "--budget"),
        (&["mac-speeds-thread", "--budget", "1e12"], "--budget"),
        (&["mac-speeds-thread", "-o", "/dev/null"], "not a directory"),
        (
            &["mac-speeds-thread", "--resume", "/dev/null"],
            "--resume /dev/null: is not a directory",
        ),
    ];
    for (args, needle) in cases {
        let study = args.join(" ");
        let out = macbench().arg("reproduce").args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{study}: {stderr}");
        assert!(stderr.contains(needle), "{study}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{study}: {stderr}");
    }
    assert!(
        !Path::new("reproduce-mac-speeds-thread").exists(),
        "a refused reproduction made its directory"
    );
    let list = macbench().args(["reproduce", "--list"]).output().unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success());
    assert!(text.contains("Rashwan, Taha, Hassanein"), "{text}");
}

/// Results of the Deepakumara plan's functions: cycles per packet `a + b·Nblk` exactly at each swept
/// size (`sweep`), and `factor` × that model's mean under each of the four models (`models`), where
/// CBC-MAC costs `cbc` × HMAC-SHA-1 at the same level.
fn ipsec_steps(factor: f64) -> (Document, Document) {
    let template = document(&[("x", "hw", 64, 1.0)]).results[0].clone();
    let entry = |algorithm: &str, accel: &str, size: SizeLabel, cycles: f64| {
        let mut r = template.clone();
        r.algorithm = algorithm.to_string();
        r.accel = accel.to_string();
        r.size = size;
        r.metrics.absolute_cycles_per_message = Some(cycles);
        r
    };
    let (mut sweep, mut models) = (Vec::new(), Vec::new());
    for (algorithm, a, b) in [
        ("hmac-sha1", 300.0, 100.0),
        ("hmac-sha256", 300.0, 100.0),
        ("cbcmac-aes128", 200.0, 20.0),
        ("cmac-aes128", 200.0, 20.0),
    ] {
        let rule = macbench::mac::algorithm(algorithm).unwrap().block_rule;
        for accel in ["hw", "sw"] {
            for size in [40u32, 64, 256, 576, 1500] {
                let cycles = a + b * rule.blocks(u64::from(size)) as f64;
                sweep.push(entry(algorithm, accel, SizeLabel::Bytes(size), cycles));
            }
            for model in ["uniform", "rule-of-thumb", "three-impulse", "caida"] {
                let gamma = macbench::traffic::builtin(model).unwrap().gamma(rule);
                let cycles = factor * (a + b * gamma);
                models.push(entry(
                    algorithm,
                    accel,
                    SizeLabel::Model(model.into()),
                    cycles,
                ));
            }
        }
    }
    let mut s = document(&[]);
    s.results = sweep;
    s.harness = None;
    let mut m = document(&[]);
    m.results = models;
    (s, m)
}

#[test]
fn the_ipsec_claims_fit_predict_and_say_what_they_cannot_test() {
    let (sweep, models) = ipsec_steps(1.0);
    let mut evidence = Evidence::default();
    evidence.steps.insert("sweep".into(), sweep.clone());
    evidence.steps.insert("models".into(), models);
    let outcomes = reproduce::evaluate(&deepakumara::STUDY, &evidence);
    let by_id = |id: &str| verdict_of(&outcomes, id);
    // Exactly linear costs fit with no error, and predict each model exactly.
    holds_saying(
        &outcomes,
        "linear-cost",
        "hmac-sha1/hw a = 300 + b = 100/block",
    );
    holds_saying(
        &outcomes,
        "prediction-matches",
        "over 32 function × model pairs",
    );
    // a ÷ b = 3 for HMAC-SHA-1: the paper's Γ + 3 holds.
    holds_saying(
        &outcomes,
        "hmac-three-extra-compressions",
        "hmac-sha1/hw 3.00 blocks",
    );
    assert!(matches!(by_id("cost-follows-gamma"), Verdict::Holds(_)));
    // With a harness of 100 cycles/message measured beside the sweep, a − harness = 2 blocks' worth.
    let mut with_harness = Evidence::default();
    let mut measured = sweep.clone();
    measured.harness = Some(macbench::results::Harness {
        size: 64,
        absolute_cycles_per_message: Some(100.0),
        apparent_cycles_per_message: Some(100.0),
    });
    with_harness.steps.insert("sweep".into(), measured);
    let pads = reproduce::evaluate(&deepakumara::STUDY, &with_harness)
        .into_iter()
        .find(|o| o.id == "hmac-three-extra-compressions")
        .unwrap()
        .verdict;
    assert!(matches!(pads, Verdict::DoesNotHold(_)), "{pads:?}");
    assert!(
        pads.detail()
            .contains("harness's 100 cycles/message) ÷ cost per block b: hmac-sha1/hw 2.00 blocks"),
        "{pads:?}"
    );
    // CBC-MAC (200 + 20·Γ_AES) is cheaper than HMAC-SHA-1 (300 + 100·Γ) at both levels: the software
    // claim fails, the hardware one holds.
    assert!(matches!(
        by_id("cbcmac-dearer-in-software"),
        Verdict::DoesNotHold(_)
    ));
    assert!(matches!(
        by_id("cbcmac-cheaper-with-hardware"),
        Verdict::Holds(_)
    ));
    // The printed Γ are arithmetic, wrong for case i on any machine.
    let gamma = by_id("gamma-as-printed");
    assert!(matches!(gamma, Verdict::DoesNotHold(_)), "{gamma:?}");
    assert!(
        gamma.detail().contains("printed 6.34, true 12.665"),
        "{gamma:?}"
    );

    // Measured costs 30 % above the prediction: the prediction claim fails, with the worst pair.
    let (_, dear) = ipsec_steps(1.3);
    evidence.steps.insert("models".into(), dear);
    let outcomes = reproduce::evaluate(&deepakumara::STUDY, &evidence);
    let predicted = outcomes
        .iter()
        .find(|o| o.id == "prediction-matches")
        .unwrap();
    assert!(
        matches!(predicted.verdict, Verdict::DoesNotHold(_)),
        "{predicted:?}"
    );
    assert!(
        predicted.verdict.detail().contains("worst -23.1 %"),
        "{predicted:?}"
    );

    // Without the models step, every claim that reads it cannot be tested, and says so.
    let mut sweep_only = Evidence::default();
    sweep_only.steps.insert("sweep".into(), sweep);
    for (id, verdict) in verdicts(&deepakumara::STUDY, &sweep_only) {
        let expected = match id {
            "gamma-as-printed" => "does not hold",
            "linear-cost" | "hmac-three-extra-compressions" => "holds",
            _ => "cannot be tested here",
        };
        assert_eq!(verdict, expected, "{id}");
    }
}

#[test]
fn the_claims_table_names_the_warnings_its_results_carry() {
    let mut doc = hmacs_only();
    let mut evidence = Evidence::default();
    evidence.steps.insert("lengths".into(), doc.clone());
    let outcomes = reproduce::evaluate(&mac_speeds::STUDY, &evidence);
    assert_eq!(evidence.caveat(), None);
    assert!(
        !reproduce::claims_markdown(&mac_speeds::STUDY, &evidence, &outcomes).contains("warnings")
    );
    let warning: macbench::metrics::Warning = serde_json::from_value(serde_json::json!({
        "code": "over-utilised", "message": "sessions got 63 % of the core set's time", "fatal": false
    }))
    .unwrap();
    doc.results[0].warnings.push(warning.clone());
    doc.results[1].warnings.push(warning);
    evidence.steps.insert("lengths".into(), doc);
    let table = reproduce::claims_markdown(&mac_speeds::STUDY, &evidence, &outcomes);
    assert!(
        table.contains(
            "2 of the 6 results the claims read carry validity warnings (over-utilised ×2)"
        ),
        "{table}"
    );
}

/// Issue 34: `--resume` of a step file it cannot read (truncated, `NaN`, `"results": "oops"`, a newer
/// `schema_version`) reran the step and replaced the file without a word — a newer version's results
/// destroyed; a FIFO blocked for ever and a link to `/dev/zero` ran the whole budget before failing.
/// Each is refused before anything runs, one line, exit 2, the file left as it was.
#[test]
fn resume_refuses_step_files_it_cannot_read_and_leaves_them() {
    let good = serde_json::to_string(&hmacs_only()).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated",
            good.as_bytes()[..good.len() / 2].to_vec(),
            "not JSON",
        ),
        (
            "nan",
            good.replacen(
                "\"absolute_cycles_per_byte\":30.0",
                "\"absolute_cycles_per_byte\":NaN",
                1,
            )
            .into_bytes(),
            "is NaN",
        ),
        (
            "results-oops",
            br#"{"schema_version":1,"tool":"macbench","results":"oops"}"#.to_vec(),
            "results: invalid type",
        ),
        (
            "newer",
            br#"{"schema_version":999,"tool":"macbench","results":[]}"#.to_vec(),
            "newer than this macbench reads",
        ),
    ];
    for (name, bytes, needle) in cases {
        let dir = tempfile::tempdir().unwrap();
        let step = dir.path().join("lengths.json");
        std::fs::write(&step, &bytes).unwrap();
        let stderr = resume_refused(dir.path(), name);
        assert!(
            stderr.contains("step lengths") && stderr.contains(needle),
            "{name}: {stderr}"
        );
        assert_eq!(
            std::fs::read(&step).unwrap(),
            bytes,
            "{name}: the step file changed"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{name}: files were written beside it");
    }
    // Not regular files: a FIFO (its read would block for ever) and a link to /dev/zero.
    for (name, needle) in [("fifo", "a FIFO"), ("zero", "a character device")] {
        let dir = tempfile::tempdir().unwrap();
        let step = dir.path().join("lengths.json");
        if name == "fifo" {
            let c = std::ffi::CString::new(step.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path and a mode.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        } else {
            std::os::unix::fs::symlink("/dev/zero", &step).unwrap();
        }
        let stderr = resume_refused(dir.path(), name);
        assert!(stderr.contains(needle), "{name}: {stderr}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "{name}");
    }
}

/// Issue 44: `--budget 120` gave the 100-session step 425 ms windows and most of its results starved,
/// and the sizes step's 64 KiB results were `window-too-short`. A step's runs now hold the window its
/// sessions and messages need, and a share too small for that is exceeded, never squeezed. Each
/// scenario's run holds its own messages (the sizes step's were all sized for 64 KiB: 1 s runs of
/// 16-byte messages, 391 s at the least), and the share buys repeats, not longer runs.
#[test]
fn a_step_gets_the_window_its_sessions_and_messages_need() {
    use macbench::sweep::{plan_runs, RunLoad, MAX_PLANNED_RUN, RUN_SETUP};
    use std::time::Duration;
    let slice = Duration::from_millis(4);
    // 25 reference cycles per byte at 2.3 GHz (this VM's clock).
    let per_byte = 25.0 / 2.3e9;
    // 100 sessions on one core, 9 functions, 3 repeats at least, in 24 s (20 % of 120 s): the window
    // must hold 5 rounds of 100 slices (2 s), which 24 s cannot give 27 runs of; 1,000 messages of
    // 1 KiB per session would need only 1.11 s.
    let one_core = RunLoad {
        sizes: vec![1024; 9],
        repeats: 3,
        sessions: 100,
        cores: 1,
        shortest_run: Duration::from_millis(25),
        window_fraction: 0.8,
    };
    let plan = plan_runs(24.0, &one_core, per_byte, slice).unwrap();
    assert_eq!(plan.minimum_window, Duration::from_secs(2));
    assert_eq!(plan.duration, Duration::from_millis(2500));
    assert_eq!(plan.longest, plan.duration);
    assert!(plan.why.contains("5 scheduling rounds"), "{}", plan.why);
    assert_eq!(plan.repeats, 3);
    assert!(plan.lengthened());
    let pass = 9.0 * (2.5 + RUN_SETUP.as_secs_f64());
    assert!((plan.seconds - 3.0 * pass).abs() < 1e-9, "{}", plan.seconds);
    // The same step with a roomy share: the same runs, more repeats, up to --max-repeat's default.
    let roomy = plan_runs(200.0, &one_core, per_byte, slice).unwrap();
    assert_eq!(roomy.duration, plan.duration);
    assert_eq!(roomy.repeats, (200.0 / pass) as usize);
    assert!(!roomy.lengthened());
    let huge_share = plan_runs(1e6, &one_core, per_byte, slice).unwrap();
    assert_eq!(huge_share.repeats, 40);
    // One session on one core, 18 functions × 16 B … 64 KiB: each run holds 1,000 messages of its
    // own size at 25 cycles/byte (64 KiB: 0.71 s), the small ones the shortest run.
    let sizes = [16u32, 64, 256, 1024, 4096, 16384, 65536];
    let load = RunLoad {
        sizes: sizes
            .iter()
            .copied()
            .cycle()
            .take(18 * sizes.len())
            .collect(),
        repeats: 3,
        sessions: 1,
        cores: 1,
        shortest_run: Duration::from_millis(21),
        window_fraction: 149.0 / 150.0,
    };
    let plan = plan_runs(72.0, &load, per_byte, slice).unwrap();
    let window = |size: u32| 1000.0 * f64::from(size) * per_byte;
    assert!(
        (plan.minimum_window.as_secs_f64() - window(65536)).abs() < 1e-6,
        "{plan:?}"
    );
    assert!(
        plan.why.contains("1000 messages of 65536 B"),
        "{}",
        plan.why
    );
    assert_eq!(plan.duration, Duration::from_millis(21));
    // The longest run: the shortest and what its window lacks for 64 KiB.
    let base_window = 0.021 * 149.0 / 150.0;
    let run_of = |size: u32| 0.021 + (window(size) - base_window).max(0.0);
    assert!(
        (plan.longest.as_secs_f64() - run_of(65536)).abs() < 1e-6,
        "{plan:?}"
    );
    let pass: f64 = load
        .sizes
        .iter()
        .map(|&s| run_of(s) + RUN_SETUP.as_secs_f64())
        .sum();
    assert_eq!(plan.repeats, (72.0 / pass) as usize);
    assert!((plan.seconds - plan.repeats as f64 * pass).abs() < 1e-6);
    // The least it takes, against every run sized for 64 KiB as before: under a third.
    let least = plan_runs(0.0, &load, per_byte, slice).unwrap();
    assert_eq!(least.repeats, 3);
    assert!(
        least.seconds * 3.0 < 126.0 * 3.0 * run_of(65536),
        "{least:?}"
    );
    // A load whose minimum window needs runs over the cap is refused, saying why in one line.
    let huge = RunLoad {
        sessions: 10_000,
        ..one_core
    };
    let refused = plan_runs(24.0, &huge, per_byte, slice).unwrap_err();
    assert!(
        refused.contains(&format!("longer than the {} s", MAX_PLANNED_RUN.as_secs())),
        "{refused}"
    );
    assert_eq!(refused.lines().count(), 1);
}

/// Issue 46: `claims.json` was the one JSON document written apart from the shared writer, and ended
/// without a newline. It is written as every other one now (pretty, one final newline) and still by
/// the output rules: a new file renamed over the old, so a reader never sees half of it and another
/// name for the old file (a hard link here) keeps the old content.
#[test]
fn claims_json_ends_in_a_newline_and_replaces_the_old_file_whole() {
    use macbench::results::claims::CLAIMS_FILE;
    let dir = tempfile::tempdir().unwrap();
    let claims_path = dir.path().join(CLAIMS_FILE);
    std::fs::write(&claims_path, "old").unwrap();
    let other_name = dir.path().join("kept-link.json");
    std::fs::hard_link(&claims_path, &other_name).unwrap();
    let claims = serde_json::json!({"study": "rashwan", "outcomes": [{"verdict": "holds"}]});
    macbench::session::reproduction::write_claims(dir.path(), "| claim |\n", &claims).unwrap();
    let text = std::fs::read_to_string(&claims_path).unwrap();
    assert!(text.ends_with("}\n") && !text.ends_with("\n\n"), "{text:?}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).unwrap(),
        claims
    );
    assert_eq!(std::fs::read_to_string(&other_name).unwrap(), "old");
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["claims.json", "claims.md", "kept-link.json"],
        "no temporary left"
    );
}

/// Issue 47 N30: `--resume` kept another run's valid results file as a step's output, and the
/// step's claims then "could not be tested". A step file counts only when its scenarios are the
/// step's; another run's (here the fixture: other functions, cores 0) is refused up front in one
/// line naming the difference, and left as it is: it may be the only copy of someone's run.
#[test]
fn resume_refuses_another_runs_results_as_a_step() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let theirs = std::fs::read("tests/fixtures/results-ecda402.json").unwrap();
    std::fs::write(out.join("lengths.json"), &theirs).unwrap();
    let line = resume_refused(&out, "another run's results");
    assert!(line.contains("step lengths"), "{line}");
    assert!(line.contains("holds another run's results"), "{line}");
    assert!(line.contains("left as it is"), "{line}");
    assert_eq!(std::fs::read(out.join("lengths.json")).unwrap(), theirs);
    assert!(!out.join("claims.md").exists());
    // The step's own functions in another dispatch mode are another run's too.
    let mut doc = hmacs_only();
    common::as_step(&mut doc, &mac_speeds::STUDY, "lengths");
    for r in &mut doc.results {
        r.scenario.dispatch = "burst:4".parse().unwrap();
    }
    std::fs::write(
        out.join("lengths.json"),
        serde_json::to_string(&doc).unwrap(),
    )
    .unwrap();
    let line = resume_refused(&out, "another dispatch mode");
    assert!(
        line.contains("dispatched burst:4: the step's are single"),
        "{line}"
    );
}

/// Issue 47 N31: a step that did not run (here the device step of embedded-crypto-perf, its device
/// refused by name through `MACBENCH_DPDK_EAL`, or no `dpdk` backend in this build) made no
/// difference to the exit: 0, its claims "cannot be tested". The other steps' claims are still
/// judged and written, and the exit is 1 with one line naming the step and why.
#[test]
fn a_step_that_did_not_run_makes_the_exit_1_naming_it() {
    let study = &macbench::reproduce::embedded::STUDY;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for (step, mut doc) in common::constructed_steps(study) {
        if step == "device" {
            continue;
        }
        common::as_step(&mut doc, study, &step);
        std::fs::write(
            out.join(format!("{step}.json")),
            serde_json::to_string(&doc).unwrap(),
        )
        .unwrap();
    }
    let run = macbench()
        .env("MACBENCH_DPDK_EAL", "--bogus")
        .args("reproduce embedded-crypto-perf --resume".split_whitespace())
        .arg(&out)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or_default();
    // The device refused (x86-64 with DPDK) or the backend not built (aarch64): either way the
    // line names the step and the backend.
    assert!(
        last.contains("step device did not run (cannot run here: "),
        "{stderr}"
    );
    assert!(last.contains("dpdk: "), "{stderr}");
    assert!(last.contains("its claims cannot be tested"), "{last}");
    assert!(!out.join("device.json").exists());
    // What ran is judged all the same.
    assert!(out.join("claims.json").is_file(), "{stderr}");
}

/// Issue 47 M1: `reproduce` interrupted before any result finished said "what finished is kept"
/// of a directory holding nothing. As `net` does, it says nothing was kept (exit 130).
#[test]
fn an_interrupt_before_any_result_says_nothing_was_kept() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("macbench"))
        .env(common::FAKE_ENGINE, "valid")
        .current_dir(dir.path())
        .args("reproduce mac-speeds-thread -o D".split_whitespace())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    // The step has begun (its scenarios' repeats are interleaved over the whole sweep, so none
    // finishes for a long while after).
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.starts_with("macbench: plan:") {
            break;
        }
    }
    // SAFETY: kill(2) with a pid of our own child and a valid signal number has no memory effects.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0);
    seen.extend(lines.map_while(Result::ok));
    let status = child.wait().unwrap();
    let stderr = seen.join("\n");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted before any result finished: nothing kept"),
        "{stderr}"
    );
    assert!(!stderr.contains("what finished is kept"), "{stderr}");
}

/// A small tmpfs mounted on a temporary directory for the life of the value (root only): a full
/// disk on demand.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// `None` (the test skipped, saying why) when not root or when the mount fails.
    fn mount(size: &str) -> Option<SmallDisk> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            common::skip("root", "mounting a small tmpfs (a full disk) needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status();
        if !mounted.is_ok_and(|s| s.success()) {
            common::skip(
                "root",
                "mount -t tmpfs failed here (a container without it?)",
            );
            return None;
        }
        Some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

/// The one line a full disk gives: the file and the system's reason, no `Debug` chain.
fn says_the_disk_is_full(out: &std::process::Output, file: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or_default();
    assert!(last.contains("No space left on device"), "{stderr}");
    assert!(last.contains(file), "{stderr}");
    for debug in ["Caused by", "Custom {", "IoError(", "ImageError("] {
        assert!(!stderr.contains(debug), "{debug}: {stderr}");
    }
}

/// Issue 47 M36: on a full disk a reproduction judged its torn step files ("all failed or
/// unmeasured") and printed the figure writer's raw `Debug` chain. A step file that cannot be
/// written stops the reproduction in one line naming it and "No space left on device" (exit 1); a
/// figure that cannot be written says the same of its PNG.
#[test]
fn a_full_disk_is_one_line_naming_the_file() {
    let Some(disk) = SmallDisk::mount("200k") else {
        return;
    };
    // A step's results file: the runs go on while the first rewrites fail.
    let out = macbench()
        .env(common::FAKE_ENGINE, "valid")
        .args("reproduce deepakumara-ipsec --budget 10 -o".split_whitespace())
        .arg(disk.path().join("d"))
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    says_the_disk_is_full(&out, "sweep.json");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("all failed or unmeasured"), "{stderr}");
    assert!(!disk.path().join("d/claims.json").exists());
    std::fs::remove_dir_all(disk.path().join("d")).unwrap();
    // A figure: the step is complete, the claims fit, the PNGs do not.
    let d = disk.path().join("e");
    std::fs::create_dir(&d).unwrap();
    let mut doc = hmacs_only();
    common::as_step(&mut doc, &mac_speeds::STUDY, "lengths");
    std::fs::write(d.join("lengths.json"), serde_json::to_string(&doc).unwrap()).unwrap();
    // Leave about 24 KiB: room for claims.md, claims.json and report.html, not for the figures.
    let free = {
        // SAFETY: statvfs is plain integers, for which all zeroes is a valid value.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        let c = std::ffi::CString::new(disk.path().as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path and a statvfs this function owns.
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
        st.f_bavail as usize * st.f_frsize as usize
    };
    std::fs::write(
        disk.path().join("filler"),
        vec![0u8; free.saturating_sub(24 * 1024)],
    )
    .unwrap();
    let out = macbench()
        .args("reproduce mac-speeds-thread --resume".split_whitespace())
        .arg(&d)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    says_the_disk_is_full(&out, ".png");
}

/// Issue 46: a reproduction step is a value, not a command line written as text and parsed half-way
/// through a reproduction. Every step of every study is a run this build can plan: its options
/// pass the rules between options, its algorithms and sizes resolve, and its sweep plans here —
/// unless its backend is not built or its device cannot start, the one reason a step may be
/// refused in a reproduction's plan (and then that backend is named).
#[test]
fn every_step_of_every_study_is_a_run_this_build_can_plan() {
    let one_core = *macbench::system::online_cpus().last().unwrap();
    let mut planned = 0;
    for study in reproduce::STUDIES {
        for step in study.steps {
            let at = format!("{} step {}", study.id, step.name);
            let options = step.options(one_core);
            options.check().unwrap_or_else(|e| panic!("{at}: {e}"));
            assert!(
                macbench::spec::resolve_algorithms(&options.alg).is_ok(),
                "{at}: --alg {}",
                options.alg
            );
            macbench::spec::parse_sizes(&options.sizes, options.seed)
                .unwrap_or_else(|e| panic!("{at}: --sizes {}: {e}", options.sizes));
            match macbench::cli::step_sweep(study, step.name, one_core) {
                Ok(sweep) => {
                    let plan = sweep.plan(&macbench::system::online_cpus());
                    assert!(plan.is_ok(), "{at}: {:?}", plan.err());
                    planned += 1;
                }
                Err(why) => {
                    let backend = step.run.backend.unwrap_or_else(|| panic!("{at}: {why}"));
                    assert!(
                        why.contains(backend),
                        "{at}: refused without naming {backend}: {why}"
                    );
                }
            }
        }
    }
    assert!(planned > 10, "only {planned} steps planned");
}
