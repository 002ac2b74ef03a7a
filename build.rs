//! Records the git commit in the binary (for result provenance); later also detects optional libraries.
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
}
