//! Layers import downward only (STYLE §11), checked on the source: every `crate::X` path in `src/`
//! (in `use` lines and in code, comments left out) is an edge from the file's top-level module to `X`.
//! Among top-level modules there is no circle, and the registry (`src/mac/`) names no module but itself:
//! backends declare their software-only switch as data and the isolation layer installs itself, so the
//! registry never calls up into the engine or the process machinery.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One `crate::X` reference: the file, its line, and `X`.
#[derive(Debug)]
struct Reference {
    file: PathBuf,
    line: usize,
    target: String,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file under `src/` belongs to (`src/mac/openssl.rs` → `mac`); `None` for the
/// crate roots, which declare every module.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (!matches!(name.as_str(), "lib" | "main")).then_some(name)
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// Top-level names a line refers to through `crate::`: `crate::a::…`, `crate::{a, b::c}`; macros
/// (`crate::outln!`) and `$crate` (macro bodies) are not module references.
fn crate_references(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        let name = identifier(&group[i..]);
                        if !name.is_empty() && name != "self" {
                            out.push(name.to_string());
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        let name = identifier(after);
        if !name.is_empty() && !after[name.len()..].starts_with('!') {
            out.push(name.to_string());
        }
    }
    out
}

/// Every reference from one top-level module to another.
fn references() -> BTreeMap<String, Vec<Reference>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(&src, f)).collect();
    let mut out: BTreeMap<String, Vec<Reference>> = BTreeMap::new();
    for file in &files {
        let Some(from) = top_module(&src, file) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for target in crate_references(line) {
                if target != from && modules.contains(&target) {
                    out.entry(from.clone()).or_default().push(Reference {
                        file: file.strip_prefix(&src).unwrap().to_path_buf(),
                        line: n + 1,
                        target,
                    });
                }
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    references()
        .into_iter()
        .map(|(from, refs)| (from, refs.into_iter().map(|r| r.target).collect()))
        .collect()
}

/// A circle through `graph`, as the module names along it, if there is one.
fn find_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_reference_parser_reads_paths_groups_and_skips_macros_and_comments() {
    assert_eq!(
        crate_references("use crate::engine::{self, Scenario};"),
        ["engine"]
    );
    assert_eq!(
        crate_references("use crate::{host::Host, mac::{self, Accel}, stats};"),
        ["host", "mac", "stats"]
    );
    assert_eq!(
        crate_references("    let x = crate::system::online_cpus();"),
        ["system"]
    );
    assert!(crate_references("    crate::outln!(\"x\");").is_empty());
    assert!(crate_references("  fn f(w: &mut $crate::mac::MessageLoop<'_>)").is_empty());
    assert!(crate_references("/// see [`crate::engine::run`]").is_empty());
    assert!(crate_references("let a = 1; // crate::engine").is_empty());
    assert!(crate_references("use macbench_crate::engine;").is_empty());
}

#[test]
fn the_module_graph_is_read_from_the_source() {
    // Guards the tests below from passing on an empty graph.
    let graph = graph();
    for (from, to) in [("engine", "mac"), ("cli", "bench"), ("isolate", "engine")] {
        assert!(
            graph.get(from).is_some_and(|t| t.contains(to)),
            "expected {from} → {to} in {graph:?}"
        );
    }
}

#[test]
fn top_level_modules_import_each_other_in_one_direction_only() {
    let graph = graph();
    if let Some(circle) = find_circle(&graph) {
        let refs = references();
        let evidence: Vec<String> = circle
            .windows(2)
            .filter_map(|pair| {
                refs[&pair[0]]
                    .iter()
                    .find(|r| r.target == pair[1])
                    .map(|r| {
                        format!(
                            "{} → {} ({}:{})",
                            pair[0],
                            pair[1],
                            r.file.display(),
                            r.line
                        )
                    })
            })
            .collect();
        panic!(
            "import circle {}:\n{}",
            circle.join(" → "),
            evidence.join("\n")
        );
    }
}

#[test]
fn the_registry_imports_no_other_module() {
    let refs = references();
    let upward: Vec<String> = refs
        .get("mac")
        .into_iter()
        .flatten()
        .map(|r| format!("{}:{} → crate::{}", r.file.display(), r.line, r.target))
        .collect();
    assert!(
        upward.is_empty(),
        "src/mac/ must name no module but `mac` (STYLE §11):\n{}",
        upward.join("\n")
    );
}

#[test]
fn a_circle_is_found_and_a_chain_is_not() {
    let edges = |pairs: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            g.entry(a.to_string()).or_default().insert(b.to_string());
        }
        g
    };
    assert_eq!(find_circle(&edges(&[("a", "b"), ("b", "c")])), None);
    assert_eq!(
        find_circle(&edges(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

/// The modules each of these may not name: what stands above it in the layering the README draws.
/// Exporters (`report`) read the results schema (`results`) and never the runner that produced it
/// (`bench`, `sweep`), the process machinery (`isolate`) or a command; the schema itself sits below
/// the runner, the exporters, the isolation layer and `net`.
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "report",
        &["bench", "sweep", "isolate", "net", "cli", "peers"],
    ),
    (
        "results",
        &["bench", "sweep", "report", "isolate", "net", "cli", "peers"],
    ),
    // Studies judge results; the CLI runs their steps.
    (
        "reproduce",
        &[
            "bench", "sweep", "isolate", "engine", "net", "cli", "peers", "report",
        ],
    ),
    // Energy meters sit low: they read files and counters; the runner, the results schema and the
    // exporters use them, never the other way round.
    (
        "energy",
        &[
            "cli",
            "bench",
            "sweep",
            "report",
            "isolate",
            "engine",
            "results",
            "net",
            "peers",
            "reproduce",
            "mac",
            "host",
            "metrics",
        ],
    ),
    // Host facts are gathered without starting processes: the isolation layer adds its children's.
    (
        "host",
        &[
            "isolate", "engine", "bench", "sweep", "report", "results", "net", "cli", "peers",
        ],
    ),
];

/// `module`'s references to any of `forbidden`, one line each.
fn forbidden_references(
    refs: &BTreeMap<String, Vec<Reference>>,
    module: &str,
    forbidden: &[&str],
) -> Vec<String> {
    refs.get(module)
        .into_iter()
        .flatten()
        .filter(|r| forbidden.contains(&r.target.as_str()))
        .map(|r| format!("{}:{} → crate::{}", r.file.display(), r.line, r.target))
        .collect()
}

#[test]
fn exporters_read_the_results_schema_not_the_runner() {
    let refs = references();
    for (module, forbidden) in FORBIDDEN {
        assert!(refs.contains_key(*module), "no module {module} under src/");
        let up = forbidden_references(&refs, module, forbidden);
        assert!(
            up.is_empty(),
            "src/{module}/ must not name {forbidden:?} (STYLE §11):\n{}",
            up.join("\n")
        );
    }
}

#[test]
fn an_exporter_importing_the_runner_and_host_importing_isolate_are_caught() {
    // The rule above, on a constructed reference, so it cannot pass vacuously.
    let mut refs = BTreeMap::new();
    refs.insert(
        "report".to_string(),
        vec![Reference {
            file: PathBuf::from("src/report/html.rs"),
            line: 3,
            target: "bench".to_string(),
        }],
    );
    assert_eq!(
        forbidden_references(&refs, "report", FORBIDDEN[0].1),
        vec!["src/report/html.rs:3 → crate::bench".to_string()]
    );
    refs.insert(
        "host".to_string(),
        vec![Reference {
            file: PathBuf::from("src/host.rs"),
            line: 81,
            target: "isolate".to_string(),
        }],
    );
    let host_rule = FORBIDDEN.iter().find(|(m, _)| *m == "host").unwrap().1;
    assert_eq!(
        forbidden_references(&refs, "host", host_rule),
        vec!["src/host.rs:81 → crate::isolate".to_string()]
    );
}

/// The layers docs/architecture.md draws: each `── N ── a · b` row, module name → row number.
fn drawn_layers(doc: &str) -> BTreeMap<String, u32> {
    let mut layers = BTreeMap::new();
    for line in doc.lines() {
        let Some(rest) = line.strip_prefix("── ") else {
            continue;
        };
        let (number, modules) = rest.split_once(" ── ").unwrap();
        let row: u32 = number.trim().parse().unwrap();
        for module in modules.split('·') {
            let previous = layers.insert(module.trim().to_string(), row);
            assert!(previous.is_none(), "{module} is drawn twice");
        }
    }
    layers
}

/// Edges of `graph` that do not run to a lower row of `layers`, one line each.
fn edges_not_downward(
    graph: &BTreeMap<String, BTreeSet<String>>,
    layers: &BTreeMap<String, u32>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (from, targets) in graph {
        for to in targets {
            let (a, b) = (layers.get(from), layers.get(to));
            if !matches!((a, b), (Some(a), Some(b)) if b < a) {
                out.push(format!("{from} (row {a:?}) imports {to} (row {b:?})"));
            }
        }
    }
    out
}

#[test]
fn every_module_is_drawn_and_every_import_runs_to_a_lower_row() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let layers = drawn_layers(&doc);
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let modules: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect();
    let drawn: BTreeSet<String> = layers.keys().cloned().collect();
    assert_eq!(
        drawn, modules,
        "docs/architecture.md's drawing and src/lib.rs's modules differ"
    );
    let wrong = edges_not_downward(&graph(), &layers);
    assert!(
        wrong.is_empty(),
        "imports that do not run down the drawing of docs/architecture.md (draw the module lower, or \
         remove the import):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn an_import_sideways_or_up_the_drawing_is_caught() {
    let layers = drawn_layers("── 1 ── a · b\n   words\n── 0 ── c\n");
    assert_eq!(layers["a"], 1);
    assert_eq!(layers["c"], 0);
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["c", "b"]), ("c", vec!["a"]), ("b", vec!["d"])]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
            .collect();
    assert_eq!(
        edges_not_downward(&graph, &layers),
        [
            "a (row Some(1)) imports b (row Some(1))",
            "b (row Some(1)) imports d (row None)",
            "c (row Some(0)) imports a (row Some(1))",
        ]
    );
}

/// Files under `src/` with an `unsafe` block or function, outside comments.
fn files_with_unsafe() -> BTreeSet<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .filter(|f| {
            std::fs::read_to_string(f).unwrap().lines().any(|line| {
                let code = line.split("//").next().unwrap_or("");
                code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .any(|word| word == "unsafe")
            })
        })
        .map(|f| f.strip_prefix(&src).unwrap().display().to_string())
        .collect()
}

/// Where `unsafe` may stand (STYLE 5): the MAC libraries' FFI modules (aws-lc's for the Poly1305 its
/// crate does not wrap; dpdk's for starting its device outside the shim table), the clock's counter reads,
/// `net`'s batched socket calls, and system/kernel.rs for every other call into the kernel.
const UNSAFE_ALLOWED: &[&str] = &[
    "mac/shim.rs",
    "mac/openssl.rs",
    "mac/cryptopp.rs",
    "mac/ipsecmb.rs",
    "mac/dpdk.rs",
    "mac/aws_lc.rs",
    "system/clock.rs",
    "system/kernel.rs",
    "net/batch_io.rs",
];

#[test]
fn unsafe_stands_only_in_the_ffi_modules_and_system_with_a_reason_each() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = files_with_unsafe();
    let outside: Vec<&String> = found
        .iter()
        .filter(|f| !UNSAFE_ALLOWED.contains(&f.as_str()))
        .collect();
    assert!(
        outside.is_empty(),
        "unsafe outside the FFI modules and system/kernel.rs: {outside:?}"
    );
    // Each `unsafe` block has its reason on a `// SAFETY:` line just above it (within 3 lines, so a
    // multi-line comment counts).
    let mut missing = Vec::new();
    for file in &found {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if !(code.contains("unsafe {") || code.contains("unsafe{")) {
                continue;
            }
            let reason = lines[n.saturating_sub(4)..=n]
                .iter()
                .any(|l| l.contains("SAFETY:"));
            if !reason {
                missing.push(format!("{file}:{}", n + 1));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "unsafe blocks without a `// SAFETY:` reason: {missing:?}"
    );
}
