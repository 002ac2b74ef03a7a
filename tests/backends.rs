//! One place per backend: a backend is declared once, in `BACKENDS` (`src/mac/mod.rs`), or, for an optional
//! C library, as a row of build.rs's table (`build/libraries.rs`), from which build.rs declares its module
//! and places it in `BACKENDS`. Everything else — `list`,
//! `selftest`, the known-answer and cross-backend tests — walks the registry. This file pins what each
//! backend declares (so entries cannot vanish silently from every test at once) and checks that the
//! places a backend touches agree: the documented backend table (docs/functions.md), the build table's rows against
//! `Cargo.toml`, `csrc/`, `src/mac/` and `.ci/run`, and the reasons `list` shows when one is not built.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

#[path = "../build/libraries.rs"]
#[allow(dead_code)]
mod libraries;

use libraries::{SYSTEM_LIBRARIES, VENDORED_LIBRARIES};
use macbench::mac::{self, Accel, Availability, IsaLevels, BACKENDS};
use std::collections::BTreeSet;
use std::path::Path;

/// The backends without a row in `build/libraries.rs` (Rust crates, and the system OpenSSL through
/// its crate), with the number of algorithms each implements and of entries it registers (`hw`, `sw`
/// and each ISA level count); a library's backend pins the same in its row (`declares`). Adding or
/// removing an entry means changing its count, on purpose.
const OPENSSL: Declared = ("openssl", 25, 150);
const CRATES: &[Declared] = &[("ring", 4, 4), ("aws-lc", 12, 24)];
const LAST: &[Declared] = &[("rustcrypto", 31, 31), ("null", 1, 1)];

/// A backend's name, distinct algorithms and entries.
type Declared = (&'static str, usize, usize);

/// Every backend in `BACKENDS` order (the order is the preference of a run without `--backend`):
/// the system OpenSSL first, the system libraries in their table's order, the crates, the vendored
/// libraries, RustCrypto and the null function last. A new library's backend is its row.
fn declared() -> Vec<Declared> {
    let system = SYSTEM_LIBRARIES
        .iter()
        .map(|l| (l.name, l.declares.algorithms, l.declares.entries));
    let vendored = VENDORED_LIBRARIES
        .iter()
        .map(|l| (l.name, l.declares.algorithms, l.declares.entries));
    std::iter::once(OPENSSL)
        .chain(system)
        .chain(CRATES.iter().copied())
        .chain(vendored)
        .chain(LAST.iter().copied())
        .collect()
}

/// The algorithms `backend` registers at `accel`.
fn algorithms_at(backend: &mac::Backend, accel: Accel) -> BTreeSet<&'static str> {
    backend
        .entries
        .iter()
        .filter(|e| e.accel == accel)
        .map(|e| e.algorithm)
        .collect()
}

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

#[test]
fn every_backend_declares_the_pinned_number_of_entries() {
    let declared = declared();
    let names: Vec<_> = BACKENDS.iter().map(|b| b.name).collect();
    let pinned: Vec<_> = declared.iter().map(|d| d.0).collect();
    assert_eq!(
        names, pinned,
        "BACKENDS and the pinned order (this file's and build/libraries.rs's rows) differ"
    );
    for (backend, &(name, algorithms, entries)) in BACKENDS.iter().zip(&declared) {
        let distinct: BTreeSet<_> = backend.entries.iter().map(|e| e.algorithm).collect();
        assert_eq!(distinct.len(), algorithms, "{name}: algorithms");
        assert_eq!(backend.entries.len(), entries, "{name}: entries");
        let pairs: BTreeSet<_> = backend
            .entries
            .iter()
            .map(|e| (e.algorithm, e.accel))
            .collect();
        assert_eq!(pairs.len(), entries, "{name}: an algorithm × accel twice");
        for alg in &distinct {
            assert!(
                mac::algorithm(alg).is_some(),
                "{name}: {alg} is no algorithm"
            );
        }
        // `functions()` (what `list`, `selftest` and the tests walk) carries every entry, and adds an
        // unavailable `sw` row per algorithm of a backend without a switch and an unavailable row per
        // ISA level per algorithm of a backend that offers no levels.
        let no_sw = backend.no_software_only.is_some();
        let no_levels = matches!(backend.isa_levels, IsaLevels::NotOffered(_));
        let all: Vec<_> = mac::functions()
            .into_iter()
            .filter(|f| f.backend.name == name)
            .collect();
        let added = |f: &mac::Function| {
            (no_sw && f.accel == Accel::Sw) || (no_levels && f.accel.is_isa_level())
        };
        assert_eq!(
            all.iter().filter(|f| !added(f)).count(),
            entries,
            "{name}: functions()"
        );
        let expected_added =
            algorithms * (usize::from(no_sw) + if no_levels { Accel::LEVELS.len() } else { 0 });
        assert_eq!(
            all.iter().filter(|f| added(f)).count(),
            expected_added,
            "{name}: rows added for variants it lacks"
        );
    }
}

#[test]
fn a_backend_with_a_software_switch_registers_sw_for_every_hw_entry() {
    for backend in BACKENDS {
        let with = |accel| algorithms_at(backend, accel);
        let (hw, sw) = (with(Accel::Hw), with(Accel::Sw));
        if backend.process_switch.is_some() {
            assert_eq!(hw, sw, "{}: hw and sw differ", backend.name);
        } else {
            assert!(
                sw.is_empty(),
                "{}: sw entries without a switch",
                backend.name
            );
        }
    }
}

#[test]
fn a_backend_offering_isa_levels_registers_every_level_for_every_hw_entry() {
    for backend in BACKENDS {
        let with = |accel| algorithms_at(backend, accel);
        let hw = with(Accel::Hw);
        for level in Accel::LEVELS {
            match backend.isa_levels {
                IsaLevels::Offered(_) => {
                    assert_eq!(with(level), hw, "{}: {level} and hw differ", backend.name)
                }
                IsaLevels::NotOffered(why) => {
                    assert!(
                        with(level).is_empty(),
                        "{}: {level} entries, yet NotOffered",
                        backend.name
                    );
                    // Read where the backend column is not beside it (`run`'s skipped line).
                    assert!(
                        why.starts_with(&format!("{}: ", backend.name)),
                        "{}: {why}",
                        backend.name
                    );
                }
            }
        }
    }
}

#[test]
fn an_isa_level_a_backend_lacks_is_listed_unavailable_with_its_reason() {
    // Never left out in silence: `list` shows the row, `--accel` says why it is skipped.
    let mut checked = 0;
    for f in mac::functions().iter().filter(|f| f.accel.is_isa_level()) {
        let IsaLevels::NotOffered(why) = f.backend.isa_levels else {
            continue;
        };
        if (f.backend.availability)() != Availability::Available {
            continue; // a library not built says that first (the test below)
        }
        // The backend's own reason, then the backends that do offer levels, read from the registry.
        let offered: Vec<&str> = BACKENDS
            .iter()
            .filter(|b| matches!(b.isa_levels, IsaLevels::Offered(_)))
            .map(|b| b.name)
            .collect();
        let expected = if cfg!(target_arch = "x86_64") {
            let (last, rest) = offered.split_last().unwrap();
            format!(
                "{why}; ISA levels are offered by {} and {last}",
                rest.join(", ")
            )
        } else {
            mac::NO_ISA_LEVELS_HERE.to_string()
        };
        assert_eq!(
            f.availability(),
            Availability::Unavailable(expected),
            "{}",
            f.id()
        );
        assert!(f
            .with_key(&vec![0u8; f.algorithm.default_key_len], Default::default())
            .is_err());
        checked += 1;
    }
    assert!(checked > 0, "no backend without levels to check");
}

/// Packages the install lines of the docs name beside the rows' that are no library row: what builds
/// and tests macbench itself (OpenSSL is a crate's system library, not a row).
const BUILD_TOOLS: &[&str] = &[
    "pkg-config",
    "libssl-dev",
    "openssl",
    "python3",
    "g++",
    "gcc-aarch64-linux-gnu",
    "g++-aarch64-linux-gnu",
    "qemu-user",
    "qemu-user-binfmt",
    "libc6-dev:arm64",
    "libssl-dev:arm64",
];

/// The packages of the install line in `doc` that starts at `start`, up to `end`, less
/// [`BUILD_TOOLS`]: the library packages it names, in its order.
fn installed_libraries(doc: &str, start: &str, end: char) -> Vec<String> {
    let text = read(doc);
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{doc}: no install line starting `{start}`"));
    let line = &text[from + start.len()..];
    let line = &line[..line.find(end).unwrap_or(line.len())];
    line.split_whitespace()
        .filter(|p| !BUILD_TOOLS.contains(p))
        .map(str::to_owned)
        .collect()
}

/// Issue 46: the docs' install lines named some of the rows' packages (the Raspberry Pi line 3 of
/// 9, the cross-build line 3 of the 6 CI installs for arm64). Each now names, in the rows' order:
/// the README's for a fresh Debian machine every row's package; the native ARM build's every package
/// Debian builds for arm64; the cross build's those CI installs for arm64 (`aarch64_ci`).
#[test]
fn the_docs_install_lines_name_the_rows_packages() {
    let every: Vec<String> = SYSTEM_LIBRARIES
        .iter()
        .map(|l| l.package.to_string())
        .collect();
    let arm64: Vec<String> = SYSTEM_LIBRARIES
        .iter()
        .filter(|l| !l.package_x86_64_only)
        .map(|l| l.package.to_string())
        .collect();
    let cross: Vec<String> = SYSTEM_LIBRARIES
        .iter()
        .filter(|l| l.aarch64_ci)
        .map(|l| format!("{}:arm64", l.package))
        .collect();
    assert!(every.len() > arm64.len() && arm64.len() > cross.len());
    assert_eq!(
        installed_libraries("README.md", "`apt-get install -y ", '`'),
        every,
        "README.md's install line for a fresh Debian machine"
    );
    assert_eq!(
        installed_libraries("docs/platforms.md", "sudo apt-get install -y ", '\n'),
        arm64,
        "docs/platforms.md's native ARM build"
    );
    assert_eq!(
        installed_libraries("docs/platforms.md", "`gcc-aarch64-linux-gnu ", '`'),
        cross,
        "docs/platforms.md's cross build (what .ci/run installs for arm64)"
    );
}

/// The first-column names of the `| backend | library | covers |` table in the book's chapter
/// "Functions" (docs/functions.md).
fn documented_backends() -> Vec<String> {
    let chapter = read("docs/functions.md");
    let mut lines = chapter
        .lines()
        .skip_while(|l| !l.starts_with("| backend | library | covers |"));
    assert!(
        lines.next().is_some(),
        "no `| backend | library | covers |` table in docs/functions.md"
    );
    lines
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("|---"))
        .map(|l| {
            let cell = l.split('|').nth(1).unwrap_or("").trim();
            cell.trim_matches('`').to_string()
        })
        .collect()
}

#[test]
fn the_documented_backend_table_names_every_backend_and_nothing_else() {
    let listed = documented_backends();
    let unique: BTreeSet<_> = listed.iter().map(String::as_str).collect();
    assert_eq!(unique.len(), listed.len(), "a backend twice: {listed:?}");
    let registered: BTreeSet<_> = BACKENDS.iter().map(|b| b.name).collect();
    assert_eq!(
        unique, registered,
        "docs/functions.md backend table vs BACKENDS"
    );
}

/// Cargo.toml's `[features]`: name → what it enables.
fn cargo_features() -> Vec<(String, String)> {
    read("Cargo.toml")
        .lines()
        .skip_while(|l| l.trim() != "[features]")
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .filter(|l| !l.trim_start().starts_with('#') && l.contains('='))
        .map(|l| {
            let (name, value) = l.split_once('=').unwrap();
            (name.trim().to_string(), value.trim().to_string())
        })
        .collect()
}

/// What `.ci/run` installs and requires, as it reads it: `tools/library-rows`'s lines, `name package
/// aarch64_ci` per row of build/libraries.rs (the script parses the Rust source; this checks it reads
/// every row as Rust does, and that `.ci/run` takes its list from it rather than a hand list).
fn ci_optional_backends() -> Vec<String> {
    let ci = read(".ci/run");
    assert!(
        ci.contains("done < <(python3 tools/library-rows)")
            && !ci.contains("optional_backends=(\n"),
        ".ci/run must take its backends from tools/library-rows"
    );
    let out = std::process::Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/library-rows"))
        .output()
        .expect("python3 runs tools/library-rows");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let expected: Vec<String> = SYSTEM_LIBRARIES
        .iter()
        .map(|l| format!("{} {} {}", l.name, l.package, l.aarch64_ci))
        .collect();
    assert_eq!(
        lines, expected,
        "tools/library-rows against build/libraries.rs"
    );
    SYSTEM_LIBRARIES
        .iter()
        .map(|l| format!("{}={}", l.name, l.package))
        .collect()
}

/// build.rs registers the rows' backends (`with_system_library_backends!`): all of them, in the rows'
/// order, one after another, between OpenSSL (the first preference) and ring.
#[test]
fn the_rows_register_their_backends_in_their_order_after_openssl() {
    let names: Vec<&str> = BACKENDS.iter().map(|b| b.name).collect();
    let rows: Vec<&str> = SYSTEM_LIBRARIES.iter().map(|lib| lib.name).collect();
    let mut expected = vec!["openssl"];
    expected.extend(&rows);
    expected.push("ring");
    assert_eq!(
        names[..expected.len()],
        expected[..],
        "BACKENDS begins {names:?}"
    );
}

#[test]
fn every_system_library_row_has_its_feature_shim_module_backend_and_ci_package() {
    let features = cargo_features();
    let default = features
        .iter()
        .find(|(n, _)| n == "default")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let ci = ci_optional_backends();
    let mut names = BTreeSet::new();
    let mut shims = BTreeSet::new();
    for lib in SYSTEM_LIBRARIES {
        assert!(names.insert(lib.name), "{}: two rows", lib.name);
        assert!(
            mac::backend(lib.name).is_some(),
            "{}: no backend of that name in BACKENDS",
            lib.name
        );
        assert!(
            features.iter().any(|(n, _)| n == lib.feature),
            "{}: feature `{}` is not in Cargo.toml [features]",
            lib.name,
            lib.feature
        );
        assert_eq!(
            default.contains(&format!("\"{}\"", lib.feature)),
            lib.default_feature,
            "{}: default_feature disagrees with Cargo.toml's default = {default}",
            lib.name
        );
        assert!(!lib.shim.is_empty(), "{}: no shim", lib.name);
        for shim in lib.shim {
            assert!(shim.starts_with("csrc/"), "{shim}: shims live in csrc/");
            assert!(
                Path::new(env!("CARGO_MANIFEST_DIR")).join(shim).is_file(),
                "{}: shim {shim} does not exist",
                lib.name
            );
            shims.insert(shim.to_string());
        }
        // The module reads what build.rs emits for this row, through the one C-backend glue
        // (`c_backend!` in src/mac/shim.rs: `cfg!`, the shim table, `option_env!` of the reason).
        let module = read(&format!("src/mac/{}.rs", lib.name));
        for needle in [
            "crate::c_backend!(".to_string(),
            format!("cfg: {},", lib.cfg()),
            format!("table: macbench_shim_{},", lib.name),
            format!("missing: \"{}_MISSING\",", lib.env_prefix()),
        ] {
            assert!(
                module.contains(&needle),
                "src/mac/{}.rs does not use {needle}",
                lib.name
            );
        }
        assert!(
            !lib.header_roots.is_empty() && !lib.header_subdirs.is_empty(),
            "{}: no header location",
            lib.name
        );
        let entry = format!("{}={}", lib.name, lib.package);
        assert!(
            ci.contains(&entry),
            ".ci/run's optional_backends lacks {entry}: {ci:?}"
        );
    }
    // A vendored library: its feature (not a default one: it compiles the library from source), shim,
    // module and backend.
    for lib in VENDORED_LIBRARIES {
        assert!(names.insert(lib.name), "{}: two rows", lib.name);
        assert!(mac::backend(lib.name).is_some(), "{}: no backend", lib.name);
        let feature = features.iter().find(|(n, _)| n == lib.feature);
        assert!(
            feature.is_some_and(|(_, v)| v.contains(&format!("dep:{}", lib.builder))),
            "{}: feature `{}` must enable dep:{}",
            lib.name,
            lib.feature,
            lib.builder
        );
        assert!(
            !default.contains(&format!("\"{}\"", lib.feature)),
            "{}: a vendored library is not a default feature",
            lib.name
        );
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(lib.shim)
                .is_file(),
            "{}: shim {} does not exist",
            lib.name,
            lib.shim
        );
        shims.insert(lib.shim.to_string());
        let module = read(&format!("src/mac/{}.rs", lib.name));
        let prefix = format!("MACBENCH_{}", lib.name.to_uppercase());
        for needle in [
            format!("cfg: have_{},", lib.name),
            format!("missing: \"{prefix}_MISSING\","),
            format!("table: {},", lib.table),
        ] {
            assert!(
                module.contains(&needle),
                "src/mac/{}.rs lacks {needle}",
                lib.name
            );
        }
    }
    // Nothing in csrc/ or .ci/run without a row.
    for file in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("csrc")).unwrap() {
        let file = format!("csrc/{}", file.unwrap().file_name().to_string_lossy());
        let source = [".c", ".cc", ".cpp"].iter().any(|e| file.ends_with(e));
        assert!(
            !source || shims.contains(&file),
            "{file} is no row's shim in build/libraries.rs"
        );
    }
    assert_eq!(
        ci.len(),
        SYSTEM_LIBRARIES.len(),
        ".ci/run's optional_backends has entries without a row: {ci:?}"
    );
}

#[test]
fn a_system_library_backend_is_available_or_says_why_in_the_tables_words() {
    // `list` shows this reason on every row of the backend, so it is what the user reads.
    for lib in SYSTEM_LIBRARIES {
        let backend = mac::backend(lib.name).unwrap();
        // Installed where build.rs looks without pkg-config (pkg-config finds it only with a header too).
        let installed = lib.header_roots.iter().any(|root| {
            lib.header_subdirs
                .iter()
                .any(|sub| Path::new(root).join(sub.dir).join(lib.header).exists())
        });
        match (backend.availability)() {
            Availability::Available => {}
            Availability::Unavailable(why) => {
                // A header shared by every architecture, but no library for this one (a cross build
                // for aarch64 of a library Debian ships for x86-64 only).
                if why.starts_with(&lib.no_library_for_target_prefix()) {
                    assert!(installed, "{}: {why}", lib.name);
                    assert!(why.contains(lib.package), "{}: {why}", lib.name);
                    continue;
                }
                assert!(
                    !installed || why == lib.reason_feature_off() || why == lib.reason_disabled(),
                    "{}: {} is installed, but: {why}",
                    lib.name,
                    lib.package
                );
                let expected = [
                    lib.reason_feature_off(),
                    lib.reason_disabled(),
                    lib.reason_not_found(),
                    lib.reason_shim_failed(),
                ];
                assert!(expected.contains(&why), "{}: {why}", lib.name);
                assert!(why.contains(lib.package), "{}: {why}", lib.name);
                for f in mac::functions()
                    .iter()
                    .filter(|f| f.backend.name == lib.name)
                {
                    assert_eq!(
                        f.availability(),
                        Availability::Unavailable(why.clone()),
                        "{}",
                        f.id()
                    );
                }
            }
        }
    }
}
