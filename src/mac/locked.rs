//! The version Cargo.lock pins for a crate: the version line of a backend that is a crate (ring,
//! aws-lc-rs). A crate has no run-time version call, and the lock file is what the build compiled,
//! so it is read once, here, at compile time rather than typed into each module (where it would go
//! stale at the next `cargo update`).

const LOCK: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"));

/// `0.17.14` for `ring`: the first `[[package]]` of that name in Cargo.lock (each of these crates is
/// locked at one version); `None` if it is not there.
pub fn version(name: &str) -> Option<&'static str> {
    let needle = format!("name = \"{name}\"\nversion = \"");
    let start = LOCK.find(&needle)? + needle.len();
    let len = LOCK[start..].find('"')?;
    Some(&LOCK[start..start + len])
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_locked_crate_has_its_version_and_an_unknown_one_none() {
        let serde = super::version("serde").expect("serde is locked");
        assert!(serde.starts_with("1."), "{serde}");
        assert_eq!(super::version("no-such-crate"), None);
    }
}
