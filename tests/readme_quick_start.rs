//! The README's first five minutes stay true: the README is short enough to read in two minutes, every
//! command of its quick start runs as printed (each `run` with a tiny duration added, so the test is
//! quick; the commands a reader copies keep their defaults), and every relative link in the README and
//! the book under `docs/` leads to a file that exists, every chapter being in the book's summary.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The `sh` code blocks of the README's "## Quick start" section, one command per line, comments
/// and continuation-free lines as printed.
fn quick_start_commands() -> Vec<String> {
    let readme = read("README.md");
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Quick start\n"))
        .expect("README has a \"## Quick start\" section");
    let mut commands = Vec::new();
    let mut in_sh = false;
    for line in section.lines() {
        match line.trim() {
            "```sh" => in_sh = true,
            "```" => in_sh = false,
            l if in_sh && !l.is_empty() && !l.starts_with('#') => commands.push(l.to_string()),
            _ => {}
        }
    }
    commands
}

#[test]
fn the_readme_is_read_in_two_minutes() {
    let lines = read("README.md").lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the book in docs/ takes the rest"
    );
    let readme = read("README.md");
    let first: Vec<&str> = readme.lines().take(20).collect();
    assert!(
        first.iter().any(|l| l.starts_with("cargo run --release"))
            && first.iter().any(|l| l.starts_with("cargo test")),
        "the two commands open the README"
    );
}

#[test]
fn every_quick_start_command_runs_as_printed() {
    let commands = quick_start_commands();
    assert!(commands.len() >= 5, "{commands:?}");
    let dir = tempfile::tempdir().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("macbench");
    for (k, command) in commands.iter().enumerate() {
        // `printf … | macbench …` and `macbench …` alike, through the shell as a reader would.
        let mut line = command.replace("macbench ", &format!("{} ", exe.display()));
        // Where a run keeps its results: as printed, or a file of the test's (its exit is judged
        // against them below).
        let mut results = None;
        if command.starts_with("macbench run") {
            let words: Vec<&str> = command.split_whitespace().collect();
            let kept = words.windows(2).find(|w| w[0] == "--json").map(|w| w[1]);
            results = Some(match kept {
                Some(path) => path.to_string(),
                None => {
                    line.push_str(&format!(" --json quick-start-{k}.json"));
                    format!("quick-start-{k}.json")
                }
            });
            line.push_str(" --repeat 1 --max-repeat 1 --target-ci 0 --no-harness");
            // Many sessions keep the duration macbench fits to them (a tiny window starves them).
            if !command.contains("--sessions 100") {
                line.push_str(" --duration 30ms");
            }
            // The quick start pins to core 1 or uses 0-1; a 1-core machine has only core 0.
            if macbench::host::online_cpus().len() < 2 {
                line = line
                    .replace("--cores 0-1", "--cores 0")
                    .replace("--cores 1", "--cores 0");
            }
        }
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(dir.path())
            .output()
            .unwrap();
        // Ran as printed, on the real engine (that it runs is what the quick start promises). A run's
        // exit is the one its results call for: 0 when every result passed its validity checks, else
        // 1 with the line counting the failed ones — whether this machine starves a result (100
        // sessions under an emulator) is the results' to say, and the exit must agree with them.
        // Every other command exits 0.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let shown = format!(
            "{command}: exit {:?}\n{}{stderr}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout)
        );
        let failed = results.map_or(0, |path| {
            let doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.path().join(&path)).unwrap())
                    .unwrap_or_else(|e| panic!("{path}: {e}\n{shown}"));
            doc["results"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["failed"] == true)
                .count()
        });
        if failed == 0 {
            assert_eq!(out.status.code(), Some(0), "{shown}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{shown}");
            let said = format!("{failed} result(s) failed their validity checks");
            assert!(stderr.contains(&said), "{said:?} missing: {shown}");
        }
    }
    assert!(
        dir.path().join("report.html").exists(),
        "the report was written"
    );
}

/// Relative Markdown links `](target)` of a file, without their `#anchor`.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = &after[..end];
        rest = &after[end..];
        if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
            continue;
        }
        let path = target.split('#').next().unwrap_or("");
        if !path.is_empty() {
            out.push(path.to_string());
        }
    }
    out
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "book") {
                markdown_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

#[test]
fn every_relative_link_of_the_readme_and_the_book_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    markdown_files(&root.join("docs"), &mut files);
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in relative_links(&text) {
            checked += 1;
            if !file.parent().unwrap().join(&link).exists() {
                broken.push(format!("{}: {link}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 20, "only {checked} links found");
}

#[test]
fn every_chapter_is_in_the_books_summary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let summary = read("docs/SUMMARY.md");
    let listed = relative_links(&summary);
    let mut chapters = Vec::new();
    markdown_files(&root, &mut chapters);
    for chapter in chapters {
        let rel = chapter
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if rel == "SUMMARY.md" || rel.starts_with("figures/") {
            continue;
        }
        assert!(
            listed.contains(&rel),
            "docs/{rel} is not in docs/SUMMARY.md"
        );
    }
}

#[test]
fn the_link_reader_finds_links_and_skips_urls() {
    assert_eq!(
        relative_links("see [a](docs/a.md#x), [b](https://x.org) and [c](#top)"),
        vec!["docs/a.md".to_string()]
    );
}
