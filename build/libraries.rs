//! The optional system libraries `build.rs` looks for (STYLE §9): one row per C/C++ library backend.
//!
//! Pure data, no dependencies: `build.rs` drives detection, compilation and linking from it, and
//! `tests/backends.rs` includes this same file to check every row against `Cargo.toml`, `csrc/`,
//! `src/mac/`, the registry, the docs' install lines and `.ci/run`, and `tests/deploy.rs` against the
//! deploy recipes' package lists.
//!
//! For a row named `x` the build script emits `cfg(have_x)` when the library was found and its shim
//! compiled, `MACBENCH_X_FOUND` (how it was found) or `MACBENCH_X_MISSING` (the reason `macbench list`
//! shows), and honours `MACBENCH_NO_X` at build time (CI proves the fallback without uninstalling).

/// One optional system library behind a backend.
pub struct SystemLibrary {
    /// The backend's name in `BACKENDS` and its module `src/mac/<name>.rs`; also names the cfg
    /// (`have_<name>`) and the environment variables (`MACBENCH_<NAME>_MISSING`, …).
    pub name: &'static str,
    /// How people call the library, in messages ("Crypto++").
    pub display: &'static str,
    /// The cargo feature that gates the backend (`[features]` in `Cargo.toml`).
    pub feature: &'static str,
    /// Whether that feature is among the default features (the "feature is off" reason says how to
    /// turn it on).
    pub default_feature: bool,
    /// The Debian package that provides headers and library; the reason when missing names it, and
    /// `.ci/run` installs it.
    pub package: &'static str,
    /// pkg-config names, tried in order.
    pub pkg_config: &'static [&'static str],
    /// The header whose presence means "installed" (relative to a header directory).
    pub header: &'static str,
    /// Where the header is looked for without pkg-config: each root × each subdirectory, in that
    /// order, with the library to link when it is found there. The roots are also watched when the
    /// library is missing (installing it adds an entry to one). The first location is also where the
    /// header of a library pkg-config found is taken from when pkg-config leaves the system include
    /// directory out of its flags (as it does for `/usr/include`).
    pub header_roots: &'static [&'static str],
    pub header_subdirs: &'static [HeaderSubdir],
    /// The shim includes the library's headers as `<include_as/…>` (e.g. `cryptopp`); `None` when it
    /// includes them by bare name. A directory holding the header under another name is made
    /// reachable under this one.
    pub include_as: Option<&'static str>,
    /// The shim's source files, compiled with the `cc` crate into `libmacbench_<name>_shim.a`.
    pub shim: &'static [&'static str],
    /// Compile the shim as C++ (else C).
    pub cpp: bool,
    /// Compiler flags, each passed only if the compiler supports it.
    pub flags: &'static [&'static str],
    /// What the backend registers ([`Declares`]).
    #[allow(dead_code)]
    pub declares: Declares,
    /// Whether CI also builds and tests the backend for aarch64 with Debian's arm64 package (read by
    /// `tools/library-rows` for `.ci/run`): not ipsec-mb (x86-64 only), not Botan (its arm64 -dev
    /// package is not installed beside the x86-64 one there).
    #[allow(dead_code)]
    pub aarch64_ci: bool,
    /// Whether Debian and Ubuntu build `package` for x86-64 only (intel-ipsec-mb's source package
    /// says `Architecture: amd64`): the deploy recipes install it on x86-64 hosts only, and
    /// `tests/deploy.rs` checks they do. Read by that test only.
    #[allow(dead_code)]
    pub package_x86_64_only: bool,
}

/// What a library's backend registers, pinned beside its row so that entries cannot vanish in
/// silence from every test at once: its distinct algorithms, and its entries (`hw`, `sw` and each
/// ISA level count). Adding or removing an entry means changing these, on purpose. Read by
/// `tests/backends.rs` only; build.rs has no use for it.
#[allow(dead_code)]
pub struct Declares {
    pub algorithms: usize,
    pub entries: usize,
}

/// A subdirectory of a header root and the library linked when the header is found there.
pub struct HeaderSubdir {
    pub dir: &'static str,
    pub link: &'static str,
}

/// Every optional system library, in detection order.
pub const SYSTEM_LIBRARIES: &[SystemLibrary] = &[
    SystemLibrary {
        name: "cryptopp",
        display: "Crypto++",
        feature: "cryptopp",
        default_feature: true,
        package: "libcrypto++-dev",
        pkg_config: &["libcrypto++", "libcryptopp"],
        header: "cryptlib.h",
        header_roots: &["/usr/include", "/usr/local/include"],
        header_subdirs: &[
            HeaderSubdir {
                dir: "cryptopp",
                link: "cryptopp",
            },
            HeaderSubdir {
                dir: "crypto++",
                link: "crypto++",
            },
        ],
        include_as: Some("cryptopp"),
        shim: &["csrc/cryptopp_shim.cpp"],
        cpp: true,
        flags: &["-std=c++17", "-Wno-unused-parameter"],
        declares: Declares {
            algorithms: 26,
            entries: 156,
        },
        aarch64_ci: true,
        package_x86_64_only: false,
    },
    SystemLibrary {
        name: "mbedtls",
        display: "Mbed TLS",
        feature: "mbedtls",
        default_feature: true,
        package: "libmbedtls-dev",
        // Debian's 2.28 ships no .pc file, so the header decides. (Mbed TLS 3 installs `mbedcrypto.pc`,
        // but the shim is written against the 2.28 API: its config.h and `mbedtls_gcm_starts` with the
        // additional data. Asking pkg-config could pair a 3.x library with 2.28 headers.)
        pkg_config: &[],
        header: "md.h",
        header_roots: &["/usr/include", "/usr/local/include"],
        // The MAC primitives are all in libmbedcrypto; libmbedtls (the TLS layer) is not needed.
        header_subdirs: &[HeaderSubdir {
            dir: "mbedtls",
            link: "mbedcrypto",
        }],
        include_as: Some("mbedtls"),
        shim: &["csrc/mbedtls_shim.c"],
        cpp: false,
        flags: &["-std=c99"],
        declares: Declares {
            algorithms: 13,
            entries: 13,
        },
        aarch64_ci: true,
        package_x86_64_only: false,
    },
    // Nettle ≥ 3.5 (CMAC-AES); the header tested is UMAC's, which every 3.x has.
    SystemLibrary {
        name: "nettle",
        display: "Nettle",
        feature: "nettle",
        default_feature: true,
        package: "nettle-dev",
        pkg_config: &["nettle"],
        header: "umac.h",
        header_roots: &["/usr/include", "/usr/local/include"],
        header_subdirs: &[HeaderSubdir {
            dir: "nettle",
            link: "nettle",
        }],
        include_as: Some("nettle"),
        shim: &["csrc/nettle_shim.c"],
        cpp: false,
        flags: &["-std=c99"],
        declares: Declares {
            algorithms: 22,
            entries: 22,
        },
        aarch64_ci: true,
        package_x86_64_only: false,
    },
    // Intel ipsec-mb ≥ 1.0 (the job API with IMB_* names, init_mb_mgr_auto); Debian ships no .pc file,
    // and the header sits directly in the include root.
    SystemLibrary {
        name: "ipsecmb",
        display: "Intel ipsec-mb",
        feature: "ipsecmb",
        default_feature: true,
        package: "libipsec-mb-dev",
        pkg_config: &[],
        header: "intel-ipsec-mb.h",
        header_roots: &["/usr/include", "/usr/local/include"],
        header_subdirs: &[HeaderSubdir {
            dir: "",
            link: "IPSec_MB",
        }],
        include_as: None,
        shim: &["csrc/ipsecmb_shim.c"],
        cpp: false,
        flags: &["-std=c99"],
        declares: Declares {
            algorithms: 17,
            entries: 85,
        },
        aarch64_ci: false,
        package_x86_64_only: true,
    },
    // libsodium ≥ 1.0.12 (crypto_generichash_blake2b with a key, crypto_shorthash_siphash24); Debian's
    // libsodium-dev ships a .pc file.
    SystemLibrary {
        name: "sodium",
        display: "libsodium",
        feature: "sodium",
        default_feature: true,
        package: "libsodium-dev",
        pkg_config: &["libsodium"],
        header: "sodium.h",
        header_roots: &["/usr/include", "/usr/local/include"],
        header_subdirs: &[HeaderSubdir {
            dir: "",
            link: "sodium",
        }],
        include_as: None,
        shim: &["csrc/sodium_shim.c"],
        cpp: false,
        flags: &["-std=c99"],
        declares: Declares {
            algorithms: 5,
            entries: 5,
        },
        aarch64_ci: true,
        package_x86_64_only: false,
    },
    // Botan 2 (Debian's libbotan-2-dev, with a .pc file); the headers live in `botan-2/botan/`.
    SystemLibrary {
        name: "botan",
        display: "Botan",
        feature: "botan",
        default_feature: true,
        package: "libbotan-2-dev",
        pkg_config: &["botan-2"],
        header: "botan/mac.h",
        header_roots: &["/usr/include", "/usr/local/include"],
        header_subdirs: &[HeaderSubdir {
            dir: "botan-2",
            link: "botan-2",
        }],
        include_as: None,
        shim: &["csrc/botan_shim.cpp"],
        cpp: true,
        flags: &["-std=c++17"],
        declares: Declares {
            algorithms: 22,
            entries: 22,
        },
        aarch64_ci: false,
        package_x86_64_only: false,
    },
    // libgcrypt ≥ 1.9 (HMAC-SHA-512/224 and /256 in gcry_mac); Debian's libgcrypt20-dev ships a .pc
    // file, and the header sits directly in the include root.
    SystemLibrary {
        name: "gcrypt",
        display: "libgcrypt",
        feature: "gcrypt",
        default_feature: true,
        package: "libgcrypt20-dev",
        pkg_config: &["libgcrypt"],
        header: "gcrypt.h",
        header_roots: &["/usr/include", "/usr/local/include"],
        header_subdirs: &[HeaderSubdir {
            dir: "",
            link: "gcrypt",
        }],
        include_as: None,
        shim: &["csrc/gcrypt_shim.c"],
        cpp: false,
        flags: &["-std=c99"],
        declares: Declares {
            algorithms: 22,
            entries: 44,
        },
        aarch64_ci: true,
        package_x86_64_only: false,
    },
    // wolfSSL 5.x (wolfCrypt's CMAC, GMAC, Poly1305 and its AES-GCM stream API); Debian's
    // libwolfssl-dev ships a .pc file. The shim includes <wolfssl/options.h> first, the build's
    // configuration, which every wolfCrypt header depends on.
    SystemLibrary {
        name: "wolfssl",
        display: "wolfSSL",
        feature: "wolfssl",
        default_feature: true,
        package: "libwolfssl-dev",
        pkg_config: &["wolfssl"],
        header: "options.h",
        header_roots: &["/usr/include", "/usr/local/include"],
        header_subdirs: &[HeaderSubdir {
            dir: "wolfssl",
            link: "wolfssl",
        }],
        include_as: Some("wolfssl"),
        shim: &["csrc/wolfssl_shim.c"],
        cpp: false,
        flags: &["-std=c99"],
        declares: Declares {
            algorithms: 17,
            entries: 17,
        },
        aarch64_ci: true,
        package_x86_64_only: false,
    },
    // DPDK ≥ 22.11 cryptodev (Debian's libdpdk-dev, with libdpdk.pc). Found through pkg-config only:
    // the shim needs several of DPDK's libraries (EAL, mempool, mbuf, cryptodev) and the
    // machine-specific rte_config.h, which only the .pc file's flags name. Its software devices are
    // plugins (librte-crypto-ipsec-mb23 etc.), loaded by EAL at run time. `-march=corei7` is the .pc
    // file's own flag on x86-64 (DPDK's headers assume SSE4.2); elsewhere the compiler drops it.
    SystemLibrary {
        name: "dpdk",
        display: "DPDK cryptodev",
        feature: "dpdk",
        default_feature: true,
        package: "libdpdk-dev",
        pkg_config: &["libdpdk"],
        header: "rte_cryptodev.h",
        header_roots: &["/usr/include"],
        // Without libdpdk.pc the header alone is found here, but the shim then misses the
        // machine-specific rte_config.h and does not compile: the backend says `not built`, why.
        header_subdirs: &[HeaderSubdir {
            dir: "dpdk",
            link: "rte_cryptodev",
        }],
        include_as: None,
        shim: &["csrc/dpdk_shim.c"],
        cpp: false,
        flags: &[
            "-std=gnu11",
            "-march=corei7",
            "-Wno-deprecated-declarations",
        ],
        declares: Declares {
            algorithms: 13,
            entries: 13,
        },
        aarch64_ci: false,
        package_x86_64_only: false,
    },
];

impl SystemLibrary {
    /// `MACBENCH_<NAME>` (upper case, `-` as `_`): the prefix of this library's environment variables.
    pub fn env_prefix(&self) -> String {
        format!("MACBENCH_{}", self.name.to_uppercase().replace('-', "_"))
    }

    /// Set at build time, builds the backend as unavailable although the library is installed.
    pub fn disable_var(&self) -> String {
        format!("MACBENCH_NO_{}", self.name.to_uppercase().replace('-', "_"))
    }

    /// The cfg the Rust code tests (`#[cfg(have_cryptopp)]`).
    pub fn cfg(&self) -> String {
        format!("have_{}", self.name.replace('-', "_"))
    }

    /// Cargo's variable for the feature being on.
    pub fn feature_var(&self) -> String {
        format!(
            "CARGO_FEATURE_{}",
            self.feature.to_uppercase().replace('-', "_")
        )
    }

    /// The reason `list` shows when the feature is off.
    pub fn reason_feature_off(&self) -> String {
        let enable = if self.default_feature {
            "default features".to_string()
        } else {
            format!("--features {}", self.feature)
        };
        format!(
            "not built: the `{}` cargo feature is off ({} backend needs {enable} and {})",
            self.feature, self.display, self.package
        )
    }

    /// The reason when [`Self::disable_var`] was set.
    pub fn reason_disabled(&self) -> String {
        format!(
            "not built: {} was set at build time ({} backend; needs {})",
            self.disable_var(),
            self.display,
            self.package
        )
    }

    /// The reason when neither pkg-config nor the header locations know the library.
    pub fn reason_not_found(&self) -> String {
        format!(
            "not built: install {} ({} headers and library were not found at build time) and rebuild",
            self.package, self.display
        )
    }

    /// The reason when the header is there (headers are shared by every architecture) but the
    /// target's compiler finds no library: typically a cross build for an architecture the
    /// library's package is not installed for, or not made for.
    pub fn reason_no_library_for_target(
        &self,
        header: &std::path::Path,
        link: &str,
        target: &str,
    ) -> String {
        format!(
            "{}{}) but no lib{link} for {target}; install {} for this architecture if the \
             library supports it, and rebuild",
            self.no_library_for_target_prefix(),
            header.display(),
            self.package
        )
    }

    /// How [`Self::reason_no_library_for_target`] begins, for tests that cannot know the target.
    pub fn no_library_for_target_prefix(&self) -> String {
        format!("not built: {} has a header (", self.display)
    }

    /// The reason when the library was found but the shim did not compile.
    pub fn reason_shim_failed(&self) -> String {
        format!(
            "not built: {} was found but {} did not compile (see the build warnings)",
            self.display,
            self.shim.join(", ")
        )
    }
}

/// A library compiled from source by a build dependency rather than found on the system: the
/// vendored second OpenSSL. build.rs builds it only with its (non-default) feature, links its shim
/// with every other symbol made local, and emits `cfg(have_<name>)` and `MACBENCH_<NAME>_FOUND` or
/// `MACBENCH_<NAME>_MISSING` as for a system library.
pub struct VendoredLibrary {
    /// The backend's name, module `src/mac/<name>.rs`, cfg `have_<name>`.
    pub name: &'static str,
    /// The cargo feature that builds it (it also enables the build dependency).
    pub feature: &'static str,
    /// The build dependency that vendors and compiles the library.
    pub builder: &'static str,
    /// The shim's source, compiled against the vendored headers.
    pub shim: &'static str,
    /// The one global symbol left in the linked object: the shim's table.
    pub table: &'static str,
    /// What the backend registers ([`Declares`]).
    #[allow(dead_code)]
    pub declares: Declares,
}

/// Every vendored library.
pub const VENDORED_LIBRARIES: &[VendoredLibrary] = &[VendoredLibrary {
    name: "openssl4",
    feature: "openssl4",
    builder: "openssl-src",
    shim: "csrc/openssl4_shim.c",
    table: "macbench_shim_openssl4",
    declares: Declares {
        algorithms: 19,
        entries: 114,
    },
}];
