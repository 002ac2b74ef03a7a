//! Records the git commit in the binary (for result provenance) and detects optional libraries.
//!
//! Optional system libraries (STYLE §9) are the rows of [`SYSTEM_LIBRARIES`] (`build/libraries.rs`),
//! and this script handles every row the same way. With the row's cargo feature on and the library
//! found — pkg-config by the row's names first, else its header under each header root × subdirectory,
//! in table order — the shim in `csrc/` is compiled with the `cc` crate, linked against the library,
//! and `cfg(have_<name>)` is set. Otherwise the build still succeeds; the backend is compiled as
//! unavailable and `MACBENCH_<NAME>_MISSING` carries the reason `macbench list` shows. Crypto++
//! (`cryptopp`): pkg-config `libcrypto++`, else the Debian header `/usr/include/cryptopp/cryptlib.h` or
//! `/usr/include/crypto++/…`, shim `csrc/cryptopp_shim.cpp`, `cfg(have_cryptopp)`. Mbed TLS
//! (`mbedtls`): no pkg-config (Debian's 2.28 ships no `.pc` file), the header
//! `/usr/include/mbedtls/md.h`, linked against `mbedcrypto`, shim `csrc/mbedtls_shim.c` (C),
//! `cfg(have_mbedtls)`. Intel ipsec-mb (`ipsecmb`): no pkg-config (Debian ships no `.pc` file), the
//! header `/usr/include/intel-ipsec-mb.h` directly in the root, linked against `IPSec_MB`, shim
//! `csrc/ipsecmb_shim.c` (C), `cfg(have_ipsecmb)`.
//!
//! Re-running: Cargo re-runs this script only for what it is told to watch, so installing a library
//! (`libcrypto++-dev`) after a first build would otherwise leave its backend "not built" until a
//! `cargo clean`. When a library is found, the header and `.pc` file used are watched (removing the
//! package re-runs the script). When it is not, the existing directories it would appear in are watched:
//! the header roots and the pkg-config search directories. Not the missing files themselves: Cargo
//! treats a watched path that does not exist as changed on every build, which would rebuild macbench
//! every time; and a package manager installs files with their packaged (old) mtimes, while the
//! directory they are added to gets a new one. Environment overrides are watched too: the pkg-config
//! and cc crates print `rerun-if-env-changed` for every variable they read (PKG_CONFIG_PATH,
//! PKG_CONFIG_LIBDIR, PKG_CONFIG_SYSROOT_DIR, their per-target forms, CXX, …), and this script does for
//! its own.
#[path = "build/libraries.rs"]
mod libraries;

use libraries::{SystemLibrary, VendoredLibrary, SYSTEM_LIBRARIES, VENDORED_LIBRARIES};
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    // Emitting any rerun-if-changed turns off Cargo's default "re-run on any package file", so say it.
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/libraries.rs");
    // The one interface every shim implements.
    println!("cargo:rerun-if-changed=csrc/macbench_shim.h");
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
    for lib in SYSTEM_LIBRARIES {
        system_library(lib);
    }
    register_system_library_backends();
    for lib in VENDORED_LIBRARIES {
        vendored_library(lib);
    }
}

/// Writes `$OUT_DIR/system_library_backends.rs`, which `src/mac/mod.rs` includes: the macro that
/// declares each row's module `src/mac/<name>.rs`, and the one that puts their `BACKEND`s into the
/// registry in the rows' order.
/// So a system library's backend is registered by its row alone, not by a line in `src/mac/mod.rs` as
/// well. (rustc watches the modules themselves; `cargo fmt` does not reach modules declared here, so
/// `.ci/run` checks them with `rustfmt`.)
fn register_system_library_backends() {
    // No path in the text: the modules are declared by a macro that `src/mac/mod.rs` invokes, so
    // rustc finds them beside it, in whichever checkout is being built. (A `#[path]` written here
    // would name the checkout that last ran this script, and Cargo does not run it again for another
    // checkout sharing the target directory, or for a moved one.)
    let names: Vec<&str> = SYSTEM_LIBRARIES.iter().map(|lib| lib.name).collect();
    let modules: String = names
        .iter()
        .map(|n| format!("        pub mod {n};\n"))
        .collect();
    let backends: Vec<String> = names.iter().map(|n| format!("&{n}::BACKEND")).collect();
    let text = format!(
        "// Written by build.rs from build/libraries.rs: one module per system library row.\n\
         /// Declares each row's module `src/mac/<name>.rs` (invoked in `src/mac/mod.rs`).\n\
         macro_rules! system_library_modules {{\n    () => {{\n{modules}    }};\n}}\n\
         /// [`BACKENDS`] with the system libraries' backends, in the rows' order, between `before` and `after`.\n\
         macro_rules! with_system_library_backends {{\n    \
         ([$($before:expr),* $(,)?], [$($after:expr),* $(,)?]) => {{\n        \
         &[$($before,)* {}, $($after),*]\n    }};\n}}\n",
        backends.join(", ")
    );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("system_library_backends.rs");
    // Written only when it changes, so that an unchanged file does not rebuild the crate.
    if std::fs::read_to_string(&out).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&out, text).expect("OUT_DIR is writable");
    }
}

/// The second OpenSSL (`openssl4`, the one row of [`VENDORED_LIBRARIES`]): the release the
/// `openssl-src` crate vendors, compiled from source with its assembly, and its shim over it, made into
/// one object whose only global symbol is the shim's table. Every other symbol of that libcrypto is made
/// local (`objcopy --keep-global-symbol`), so it never meets the system libcrypto the `openssl` backend
/// links: each copy keeps its own functions, its own capability word and its own error queue, in one
/// process.
fn vendored_library(lib: &VendoredLibrary) {
    let name = lib.name;
    let prefix = format!("MACBENCH_{}", name.to_uppercase());
    println!("cargo::rustc-check-cfg=cfg(have_{name})");
    println!("cargo:rerun-if-changed={}", lib.shim);
    let feature_var = format!(
        "CARGO_FEATURE_{}",
        lib.feature.to_uppercase().replace('-', "_")
    );
    if std::env::var_os(feature_var).is_none() {
        println!(
            "cargo:rustc-env={prefix}_MISSING=not built: the `{}` cargo feature is off \
             (build with --features {}; it compiles the library from source with {}, a few minutes)",
            lib.feature, lib.feature, lib.builder
        );
        return;
    }
    match build_vendored_openssl(lib) {
        Ok(version) => {
            println!("cargo:rustc-cfg=have_{name}");
            println!("cargo:rustc-env={prefix}_FOUND={} {version}", lib.builder);
        }
        Err(reason) => {
            println!("cargo:warning={name}: {reason}");
            println!("cargo:rustc-env={prefix}_MISSING=not built: {reason}");
        }
    }
}

#[cfg(feature = "openssl4")]
fn build_vendored_openssl(lib: &VendoredLibrary) -> Result<&'static str, String> {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR not set")?);
    let openssl = vendored_openssl_build(&out)?;
    let objects = cc::Build::new()
        .file(lib.shim)
        .include(&openssl.include)
        .flag_if_supported("-std=c99")
        .opt_level(2)
        .warnings(true)
        .try_compile_intermediates()
        .map_err(|e| format!("{} did not compile: {e}", lib.shim))?;
    let compiler = cc::Build::new()
        .try_get_compiler()
        .map_err(|e| e.to_string())?;
    // One relocatable object: the shim and the libcrypto members it needs (a relocatable link pulls
    // archive members for undefined symbols as a final link does).
    let combined = out.join(format!("{}_combined.o", lib.name));
    let mut link = compiler.to_command();
    link.args(["-r", "-nostdlib", "-o"])
        .arg(&combined)
        .args(&objects)
        .arg(openssl.lib.join("libcrypto.a"));
    run(&mut link, "relocatable link of the shim and libcrypto.a")?;
    // The target's objcopy: beside a cross compiler (`aarch64-linux-gnu-gcc` → `aarch64-linux-gnu-objcopy`).
    let cc_name = compiler.path().to_string_lossy().into_owned();
    let objcopy = match cc_name.rfind("gcc").or_else(|| cc_name.rfind("cc")) {
        Some(at) if cc_name[..at].ends_with('-') => format!("{}objcopy", &cc_name[..at]),
        _ => "objcopy".to_string(),
    };
    run(
        Command::new(&objcopy)
            .arg(format!("--keep-global-symbol={}", lib.table))
            .arg(&combined),
        "objcopy --keep-global-symbol",
    )?;
    let archive = out.join(format!("libmacbench_{}_shim.a", lib.name));
    let _ = std::fs::remove_file(&archive);
    let mut ar = cc::Build::new()
        .try_get_archiver()
        .map_err(|e| e.to_string())?;
    run(ar.arg("crs").arg(&archive).arg(&combined), "ar")?;
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=macbench_{}_shim", lib.name);
    if openssl.latomic {
        println!("cargo:rustc-link-lib=dylib=atomic");
    }
    Ok(openssl_src::version())
}

/// Where a built OpenSSL's headers and static libraries are.
#[cfg(feature = "openssl4")]
struct BuiltOpenssl {
    include: PathBuf,
    lib: PathBuf,
    latomic: bool,
}

/// OpenSSL built by `openssl-src` in `out`, once per version: `openssl-src` rebuilds from scratch on
/// every call (minutes), and this script re-runs on every commit (it records the commit), so a stamp
/// beside the build says which version it holds and where, and a matching stamp is reused.
#[cfg(feature = "openssl4")]
fn vendored_openssl_build(out: &Path) -> Result<BuiltOpenssl, String> {
    let stamp = out.join("openssl-build-stamp");
    let version = openssl_src::version();
    if let Ok(text) = std::fs::read_to_string(&stamp) {
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        };
        if field("version").as_deref() == Some(version) {
            if let (Some(include), Some(lib)) = (field("include"), field("lib")) {
                let built = BuiltOpenssl {
                    include: PathBuf::from(include),
                    lib: PathBuf::from(lib),
                    latomic: field("latomic").as_deref() == Some("1"),
                };
                if built.lib.join("libcrypto.a").is_file() {
                    return Ok(built);
                }
            }
        }
    }
    let _ = std::fs::remove_file(&stamp);
    let artifacts = openssl_src::Build::new()
        .try_build()
        .map_err(|e| format!("openssl-src {version} did not build: {e}"))?;
    let built = BuiltOpenssl {
        include: artifacts.include_dir().to_path_buf(),
        lib: artifacts.lib_dir().to_path_buf(),
        latomic: artifacts.needs_latomic(),
    };
    let text = format!(
        "version={version}\ninclude={}\nlib={}\nlatomic={}\n",
        built.include.display(),
        built.lib.display(),
        u8::from(built.latomic)
    );
    std::fs::write(&stamp, text).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(built)
}

#[cfg(not(feature = "openssl4"))]
fn build_vendored_openssl(lib: &VendoredLibrary) -> Result<&'static str, String> {
    Err(format!(
        "the `{}` build dependency is off, so there is no {}",
        lib.builder, lib.table
    ))
}

#[cfg(feature = "openssl4")]
fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("{what}: {:?}: {e}", command.get_program()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
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

/// Where a library was found: include directories and how to link it.
struct Found {
    include: Vec<PathBuf>,
    /// Library search directories and `-l` names. Emitted after the shim is compiled: the linker
    /// resolves left to right, and the shim (which `cc` emits when it compiles it) uses the library,
    /// so the library must come after it (a cross build for aarch64 fails to link otherwise).
    link_search: Vec<PathBuf>,
    link: Vec<String>,
    how: String,
    /// The files it was found by (header, `.pc`), for Cargo to watch.
    watch: Vec<PathBuf>,
}

/// One row of the table: emit the cfg when found and built, otherwise the reason it is not.
fn system_library(lib: &SystemLibrary) {
    let cfg = lib.cfg();
    println!("cargo::rustc-check-cfg=cfg({cfg})");
    for shim in lib.shim {
        println!("cargo:rerun-if-changed={shim}");
    }
    println!("cargo:rerun-if-env-changed={}", lib.disable_var());
    if std::env::var_os(lib.feature_var()).is_none() {
        missing(lib, &lib.reason_feature_off());
        return;
    }
    // Lets CI prove the fallback without uninstalling the package.
    if std::env::var_os(lib.disable_var()).is_some() {
        missing(lib, &lib.reason_disabled());
        return;
    }
    let found = match find(lib) {
        Ok(found) => found,
        Err(reason) => {
            watch_for_install(lib);
            missing(lib, &reason);
            return;
        }
    };
    for path in &found.watch {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let mut build = cc::Build::new();
    build.cpp(lib.cpp).files(lib.shim);
    for flag in lib.flags {
        build.flag_if_supported(flag);
    }
    build.opt_level(2).warnings(true);
    for dir in &found.include {
        build.include(dir);
    }
    if let Err(e) = build.try_compile(&format!("macbench_{}_shim", lib.name)) {
        println!(
            "cargo:warning={} found ({}), but the shim did not compile: {e}",
            lib.display, found.how
        );
        missing(lib, &lib.reason_shim_failed());
        return;
    }
    for dir in &found.link_search {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    for name in &found.link {
        println!("cargo:rustc-link-lib=dylib={name}");
    }
    println!("cargo:rustc-cfg={cfg}");
    println!("cargo:rustc-env={}_FOUND={}", lib.env_prefix(), found.how);
}

fn missing(lib: &SystemLibrary, reason: &str) {
    println!("cargo:rustc-env={}_MISSING={reason}", lib.env_prefix());
}

/// pkg-config first, by each of the row's names; then the header locations, in table order. The
/// error is the reason `macbench list` shows.
fn find(lib: &SystemLibrary) -> Result<Found, String> {
    // Where pkg-config's flags leave the header out (it drops `-I/usr/include`): the first location.
    let system_header = match (lib.header_roots.first(), lib.header_subdirs.first()) {
        (Some(root), Some(sub)) => Some(Path::new(root).join(sub.dir).join(lib.header)),
        _ => None,
    };
    // Debian ships `.pc` files for some; their link lines are emitted only if chosen.
    for name in lib.pkg_config {
        // `env_metadata` (the default, said here because we rely on it): rerun-if-env-changed for
        // every variable pkg-config reads.
        let Ok(probed) = pkg_config::Config::new()
            .cargo_metadata(false)
            .env_metadata(true)
            .probe(name)
        else {
            continue;
        };
        let include: Vec<_> = probed.include_paths.clone();
        let header = match include.iter().find(|p| p.join(lib.header).exists()) {
            Some(dir) => dir.join(lib.header),
            None => match &system_header {
                Some(h) if h.exists() => h.clone(),
                _ => continue,
            },
        };
        let mut watch = vec![header];
        watch.extend(pc_file(name));
        return Ok(Found {
            include: include_roots(lib, &include),
            link_search: probed.link_paths.clone(),
            link: probed.libs.clone(),
            how: format!("pkg-config {name} {}", probed.version),
            watch,
        });
    }
    // No pkg-config file: look for the headers where distributions and `make install` put them.
    // Headers under /usr/include are shared by every architecture, so a header alone does not mean
    // the library exists for the target (cross-building for aarch64 finds the x86-64 ipsec-mb
    // header): the target's compiler must also find the library.
    let mut reason = lib.reason_not_found();
    for root in lib.header_roots {
        for sub in lib.header_subdirs {
            let dir = Path::new(root).join(sub.dir);
            let header = dir.join(lib.header);
            if !header.exists() {
                continue;
            }
            if !target_has_library(sub.link) {
                reason = lib.reason_no_library_for_target(&header, sub.link, &target());
                continue;
            }
            return Ok(Found {
                include: include_roots(lib, &[dir]),
                link_search: Vec::new(),
                link: vec![sub.link.to_string()],
                how: format!("header {}", header.display()),
                watch: vec![header.clone()],
            });
        }
    }
    Err(reason)
}

fn target() -> String {
    std::env::var("TARGET").unwrap_or_default()
}

/// Whether the target's C compiler finds `lib<name>.so` (or `.a`) on its library path: gcc and clang
/// print the full path of a file they find with `-print-file-name`, and the bare name otherwise.
fn target_has_library(name: &str) -> bool {
    let Ok(compiler) = cc::Build::new().cargo_metadata(false).try_get_compiler() else {
        return false;
    };
    ["so", "a"].iter().any(|ext| {
        let file = format!("lib{name}.{ext}");
        compiler
            .to_command()
            .arg(format!("-print-file-name={file}"))
            .output()
            .map(|out| {
                let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
                out.status.success() && printed != file && Path::new(&printed).exists()
            })
            .unwrap_or(false)
    })
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

/// The library was not found: watch the existing directories where installing it adds an entry
/// (header roots, pkg-config search path), so the next build after the install re-runs this script.
fn watch_for_install(lib: &SystemLibrary) {
    for var in ["PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let mut dirs: Vec<PathBuf> = lib.header_roots.iter().map(PathBuf::from).collect();
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

/// The shim includes `<include_as/x.h>` (Crypto++: `<cryptopp/x.h>`). Given directories that hold the
/// header (`/usr/include/crypto++`), provide an include root where `include_as/` resolves: the parent
/// when the directory has that name (or a sibling of that name holds the header), otherwise a
/// generated directory with an `include_as` symlink to it. Without `include_as`, the directories as
/// they are.
fn include_roots(lib: &SystemLibrary, dirs: &[PathBuf]) -> Vec<PathBuf> {
    let Some(alias) = lib.include_as else {
        return dirs.to_vec();
    };
    let mut out = Vec::new();
    for d in dirs {
        if !d.join(lib.header).exists() {
            out.push(d.clone());
            continue;
        }
        match (d.file_name().and_then(|n| n.to_str()), d.parent()) {
            (Some(name), Some(parent)) if name == alias => out.push(parent.to_path_buf()),
            (_, Some(parent)) if parent.join(alias).join(lib.header).exists() => {
                out.push(parent.to_path_buf())
            }
            _ => {
                if let Some(root) = link_as(lib, alias, d) {
                    out.push(root);
                }
            }
        }
    }
    out
}

#[cfg(unix)]
fn link_as(lib: &SystemLibrary, alias: &str, dir: &Path) -> Option<PathBuf> {
    let root = Path::new(&std::env::var_os("OUT_DIR")?).join(format!("{}-include", lib.name));
    let link = root.join(alias);
    let _ = std::fs::create_dir_all(&root);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(dir, &link).ok()?;
    Some(root)
}

#[cfg(not(unix))]
fn link_as(_: &SystemLibrary, _: &str, _: &Path) -> Option<PathBuf> {
    None
}
