//! Records the git commit in the binary (for result provenance) and detects optional libraries.
//!
//! Crypto++ (STYLE §9): with the `cryptopp` feature on (the default) and the library found — pkg-config
//! `libcrypto++`, else the Debian header `/usr/include/crypto++/cryptlib.h` or `/usr/include/cryptopp/…`
//! — the C++ shim `csrc/cryptopp_shim.cpp` is compiled with the `cc` crate, linked against the library,
//! and `cfg(have_cryptopp)` is set. Otherwise the build still succeeds; the backend is compiled as
//! unavailable and `MACBENCH_CRYPTOPP_MISSING` carries the reason `macbench list` shows.
//!
//! Re-running: Cargo re-runs this script only for what it is told to watch, so installing
//! `libcrypto++-dev` after a first build would otherwise leave the backend "not built" until a
//! `cargo clean`. When Crypto++ is found, the header and `.pc` file used are watched (removing the
//! package re-runs the script). When it is not, the existing directories it would appear in are watched:
//! the header roots and the pkg-config search directories. Not the missing files themselves: Cargo
//! treats a watched path that does not exist as changed on every build, which would rebuild macbench
//! every time; and a package manager installs files with their packaged (old) mtimes, while the
//! directory they are added to gets a new one. Environment overrides are watched too: the pkg-config
//! and cc crates print `rerun-if-env-changed` for every variable they read (PKG_CONFIG_PATH,
//! PKG_CONFIG_LIBDIR, PKG_CONFIG_SYSROOT_DIR, their per-target forms, CXX, …), and this script does for
//! its own.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    // Emitting any rerun-if-changed turns off Cargo's default "re-run on any package file", so say it.
    println!("cargo:rerun-if-changed=build.rs");
    watch_git();
    if let Ok(out) = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
    {
        if out.status.success() {
            let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !commit.is_empty() {
                println!("cargo:rustc-env=MACBENCH_GIT_COMMIT={commit}");
            }
        }
    }
    cryptopp();
}

/// Re-run when the commit changes. In a `git worktree`, `.git` is a file and HEAD and the refs live
/// elsewhere, so ask git where; watch only paths that exist (a missing one re-runs every build).
fn watch_git() {
    let git = |args: &[&str]| -> Option<PathBuf> {
        let out = Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    };
    let mut paths = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        paths.push(dir.join("HEAD"));
    }
    // The branch HEAD names (refs/heads/…), not all refs: a commit on another branch or worktree
    // must not rebuild this one.
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
        if let Some(branch) = git(&["rev-parse", "--symbolic-full-name", "HEAD"]) {
            paths.push(common.join(branch));
        }
        paths.push(common.join("packed-refs"));
    }
    for path in paths.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// Where Crypto++ was found: include directories and how to link it.
struct Found {
    include: Vec<PathBuf>,
    /// `-l` name(s) and `-L` dirs when pkg-config did not already emit them.
    link: Option<&'static str>,
    how: String,
    /// The files it was found by (header, `.pc`), for Cargo to watch.
    watch: Vec<PathBuf>,
}

/// Where Crypto++'s headers are looked for when pkg-config does not know it.
const HEADER_ROOTS: [&str; 2] = ["/usr/include", "/usr/local/include"];
const HEADER_SUBDIRS: [&str; 2] = ["cryptopp", "crypto++"];
const PKG_CONFIG_NAMES: [&str; 2] = ["libcrypto++", "libcryptopp"];

fn cryptopp() {
    println!("cargo::rustc-check-cfg=cfg(have_cryptopp)");
    println!("cargo:rerun-if-changed=csrc/cryptopp_shim.cpp");
    println!("cargo:rerun-if-env-changed=MACBENCH_NO_CRYPTOPP");
    if std::env::var_os("CARGO_FEATURE_CRYPTOPP").is_none() {
        missing("not built: the `cryptopp` cargo feature is off (Crypto++ backend needs default features and libcrypto++-dev)");
        return;
    }
    // Lets CI prove the fallback without uninstalling the package.
    if std::env::var_os("MACBENCH_NO_CRYPTOPP").is_some() {
        missing("not built: MACBENCH_NO_CRYPTOPP was set at build time (Crypto++ backend; needs libcrypto++-dev)");
        return;
    }
    let Some(found) = find_cryptopp() else {
        watch_for_install();
        missing("not built: install libcrypto++-dev (Crypto++ headers and library were not found at build time) and rebuild");
        return;
    };
    for path in &found.watch {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file("csrc/cryptopp_shim.cpp")
        .flag_if_supported("-std=c++17")
        .flag_if_supported("-Wno-unused-parameter")
        .opt_level(2)
        .warnings(true);
    for dir in &found.include {
        build.include(dir);
    }
    if let Err(e) = build.try_compile("macbench_cryptopp_shim") {
        println!(
            "cargo:warning=Crypto++ found ({}), but the shim did not compile: {e}",
            found.how
        );
        missing("not built: Crypto++ was found but csrc/cryptopp_shim.cpp did not compile (see the build warnings)");
        return;
    }
    if let Some(lib) = found.link {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
    println!("cargo:rustc-cfg=have_cryptopp");
    println!("cargo:rustc-env=MACBENCH_CRYPTOPP_FOUND={}", found.how);
}

fn missing(reason: &str) {
    println!("cargo:rustc-env=MACBENCH_CRYPTOPP_MISSING={reason}");
}

fn find_cryptopp() -> Option<Found> {
    // pkg-config first (Debian ships `libcrypto++.pc`); its link lines are emitted only if chosen.
    for name in PKG_CONFIG_NAMES {
        // `env_metadata` (the default, said here because we rely on it): rerun-if-env-changed for
        // every variable pkg-config reads.
        let Ok(lib) = pkg_config::Config::new()
            .cargo_metadata(false)
            .env_metadata(true)
            .probe(name)
        else {
            continue;
        };
        let include: Vec<_> = lib.include_paths.clone();
        let fallback = Path::new("/usr/include/cryptopp/cryptlib.h");
        let header = match header_dir(&include) {
            Some(dir) => dir.join("cryptlib.h"),
            None if fallback.exists() => fallback.to_path_buf(),
            None => continue,
        };
        let mut watch = vec![header];
        watch.extend(pc_file(name));
        for dir in &lib.link_paths {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
        for l in &lib.libs {
            println!("cargo:rustc-link-lib=dylib={l}");
        }
        return Some(Found {
            include: parent_includes(&include),
            link: None,
            how: format!("pkg-config {name} {}", lib.version),
            watch,
        });
    }
    // No pkg-config file: look for the headers where Debian and upstream's `make install` put them.
    for dir in HEADER_ROOTS {
        for sub in HEADER_SUBDIRS {
            let header = Path::new(dir).join(sub).join("cryptlib.h");
            if header.exists() {
                let lib = if sub == "crypto++" {
                    "crypto++"
                } else {
                    "cryptopp"
                };
                return Some(Found {
                    include: parent_includes(&[Path::new(dir).join(sub)]),
                    link: Some(lib),
                    how: format!("header {}", header.display()),
                    watch: vec![header.clone()],
                });
            }
        }
    }
    None
}

/// The `.pc` file pkg-config read for `name`.
fn pc_file(name: &str) -> Option<PathBuf> {
    let out = Command::new(pkg_config_exe())
        .args(["--variable", "pcfiledir", name])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let path = Path::new(dir.trim()).join(format!("{name}.pc"));
    path.exists().then_some(path)
}

fn pkg_config_exe() -> std::ffi::OsString {
    std::env::var_os("PKG_CONFIG").unwrap_or_else(|| "pkg-config".into())
}

/// Crypto++ was not found: watch the existing directories where installing it adds an entry (header
/// roots, pkg-config search path), so the next build after the install re-runs this script.
fn watch_for_install() {
    for var in ["PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let mut dirs: Vec<PathBuf> = HEADER_ROOTS.iter().map(PathBuf::from).collect();
    // pkg-config's search path: PKG_CONFIG_PATH, then PKG_CONFIG_LIBDIR or the built-in default.
    for var in ["PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"] {
        if let Some(value) = std::env::var_os(var) {
            dirs.extend(std::env::split_paths(&value));
        }
    }
    if std::env::var_os("PKG_CONFIG_LIBDIR").is_none() {
        if let Ok(out) = Command::new(pkg_config_exe())
            .args(["--variable", "pc_path", "pkg-config"])
            .output()
        {
            let default = String::from_utf8_lossy(&out.stdout).trim().to_string();
            dirs.extend(std::env::split_paths(&default));
        }
    }
    dirs.sort();
    dirs.dedup();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        println!("cargo:rerun-if-changed={}", dir.display());
    }
}

fn header_dir(include: &[PathBuf]) -> Option<&PathBuf> {
    include.iter().find(|p| p.join("cryptlib.h").exists())
}

/// The shim includes `<cryptopp/x.h>`. Given directories that hold `cryptlib.h` (`/usr/include/crypto++`),
/// provide an include root where `cryptopp/` resolves: the parent when the directory is named `cryptopp`,
/// otherwise a generated directory with a `cryptopp` symlink to it.
fn parent_includes(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in dirs {
        if !d.join("cryptlib.h").exists() {
            out.push(d.clone());
            continue;
        }
        match (d.file_name().and_then(|n| n.to_str()), d.parent()) {
            (Some("cryptopp"), Some(parent)) => out.push(parent.to_path_buf()),
            (_, Some(parent)) if parent.join("cryptopp").join("cryptlib.h").exists() => {
                out.push(parent.to_path_buf())
            }
            _ => {
                if let Some(root) = link_as_cryptopp(d) {
                    out.push(root);
                }
            }
        }
    }
    out
}

#[cfg(unix)]
fn link_as_cryptopp(dir: &Path) -> Option<PathBuf> {
    let root = Path::new(&std::env::var_os("OUT_DIR")?).join("cryptopp-include");
    let link = root.join("cryptopp");
    let _ = std::fs::create_dir_all(&root);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(dir, &link).ok()?;
    Some(root)
}

#[cfg(not(unix))]
fn link_as_cryptopp(_: &Path) -> Option<PathBuf> {
    None
}
