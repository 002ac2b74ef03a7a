//! A second OpenSSL (`openssl4`): the release the `openssl-src` crate vendors (OpenSSL 4.0.x),
//! compiled from source with its assembly, through `csrc/openssl4_shim.c` and the one shim table of
//! `csrc/macbench_shim.h` ([`super::shim`]), behind cargo feature `openssl4`.
//!
//! Why a second OpenSSL: the `openssl` backend times the system's libcrypto (Debian's 3.0), and users
//! ask whether a newer release changes what a MAC costs, small messages above all. Both copies live in
//! one process without meeting: build.rs links the shim and the vendored static libcrypto into one
//! object and makes every symbol but the shim's table local, so each copy keeps its own functions,
//! its own capability word and its own error queue. The shim makes the same library calls per message
//! as the `openssl` backend (EVP_MAC for HMAC, CMAC and Poly1305, the AES-GCM EVP_CIPHER for GMAC), so
//! two rows of one algorithm differ by the library's version only.
//!
//! `sw` and the ISA levels come from the same switch as `openssl`'s: the vendored copy reads
//! `OPENSSL_ia32cap` / `OPENSSL_armcap` when it initialises, as the system one does, so a switched
//! child's one variable masks both; this backend checks its own copy's report
//! (`OPENSSL_INFO_CPU_SETTINGS`, through the shim's `cpu` fact) against the same ladder.

use super::openssl::{capability_of, check_cpu_settings, level_availability_of, switch_env};
use super::{Backend, IsaLevels, ProcessSwitch};

/// `openssl`'s switch, checked against this copy's own capability report.
pub static PROCESS_SWITCH: ProcessSwitch = ProcessSwitch {
    accels: super::openssl::SWITCHED_ACCELS,
    env: switch_env,
    apply: |_| {},
    check: |accel| check_cpu_settings(cpu_settings(), accel),
    capability: || capability_of(cpu_settings()),
    note: None,
};

pub static BACKEND: Backend = Backend {
    name: "openssl4",
    description: "OpenSSL vendored by the openssl-src crate and built from source (its symbols kept apart from the system libcrypto's), through csrc/openssl4_shim.c: the same EVP_MAC and AES-GCM calls as the openssl backend",
    version,
    availability,
    process_switch: Some(&PROCESS_SWITCH),
    isa_levels: IsaLevels::Offered(|level| level_availability_of(cpu_settings(), level)),
    // Every algorithm's `hw`, `sw` and four ISA-level entries, keyed by [`new`], as `openssl`'s.
    entries: crate::accel_entries![
        [Hw, Sw, Sse, Avx, Avx2, Avx512]
        HMAC_ALL,
        CMAC_AES,
        GMAC_AES,
        "poly1305",
    ],
    ..Backend::DEFAULT_FACTS
};

crate::c_backend!(
    name: "openssl4",
    cfg: have_openssl4,
    table: macbench_shim_openssl4,
    missing: "MACBENCH_OPENSSL4_MISSING",
);

/// `OpenSSL 4.0.3 1 Jul 2026 (openssl-src 400.0.2+4.0.3)`: the library's own version text and the
/// crate that vendored it.
pub fn version() -> String {
    super::shim::version(shim(), "OpenSSL (vendored)", |_| {
        option_env!("MACBENCH_OPENSSL4_FOUND").map(str::to_string)
    })
}

/// The capability word(s) the vendored libcrypto uses, as it reports them (`OPENSSL_ia32cap=0x…:0x…`).
pub fn cpu_settings() -> Option<String> {
    shim()?.fact("cpu")
}
