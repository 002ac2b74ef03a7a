//! Records the git commit in the binary (for result provenance) and detects optional libraries.
//!
//! Crypto++ (STYLE §9): with the `cryptopp` feature on (the default) and the library found — pkg-config
//! `libcrypto++`, else the Debian header `/usr/include/crypto++/cryptlib.h` or `/usr/include/cryptopp/…`
//! — the C++ shim `csrc/cryptopp_shim.cpp` is compiled with the `cc` crate, linked against the library,
//! and `cfg(have_cryptopp)` is set. Otherwise the build still succeeds; the backend is compiled as
//! unavailable and `MACBENCH_CRYPTOPP_MISSING` carries the reason `macbench list` shows.
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs");
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

/// Where Crypto++ was found: include directories and how to link it.
struct Found {
    include: Vec<std::path::PathBuf>,
    /// `-l` name(s) and `-L` dirs when pkg-config did not already emit them.
    link: Option<&'static str>,
    how: String,
}

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
        missing("not built: install libcrypto++-dev (Crypto++ headers and library were not found at build time) and rebuild");
        return;
    };
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
    for name in ["libcrypto++", "libcryptopp"] {
        let Ok(lib) = pkg_config::Config::new().cargo_metadata(false).probe(name) else {
            continue;
        };
        let include: Vec<_> = lib.include_paths.clone();
        if header_dir(&include).is_none() && !Path::new("/usr/include/cryptopp/cryptlib.h").exists()
        {
            continue;
        }
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
        });
    }
    // No pkg-config file: look for the headers where Debian and upstream's `make install` put them.
    for dir in ["/usr/include", "/usr/local/include"] {
        for sub in ["cryptopp", "crypto++"] {
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
                });
            }
        }
    }
    None
}

fn header_dir(include: &[std::path::PathBuf]) -> Option<&std::path::PathBuf> {
    include.iter().find(|p| p.join("cryptlib.h").exists())
}

/// The shim includes `<cryptopp/x.h>`. Given directories that hold `cryptlib.h` (`/usr/include/crypto++`),
/// provide an include root where `cryptopp/` resolves: the parent when the directory is named `cryptopp`,
/// otherwise a generated directory with a `cryptopp` symlink to it.
fn parent_includes(dirs: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
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
fn link_as_cryptopp(dir: &Path) -> Option<std::path::PathBuf> {
    let root = Path::new(&std::env::var_os("OUT_DIR")?).join("cryptopp-include");
    let link = root.join("cryptopp");
    let _ = std::fs::create_dir_all(&root);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(dir, &link).ok()?;
    Some(root)
}

#[cfg(not(unix))]
fn link_as_cryptopp(_: &Path) -> Option<std::path::PathBuf> {
    None
}
