//! `macbench tag`: the hex tag of a file or standard input — handy on its own and the easiest way to
//! check macbench against other tools (`openssl mac`, Python's `hmac`).

use super::CliError;
use crate::mac::{self, Availability, KeyParams, MAX_TAG_LEN};
use crate::spec::{parse_hex, resolve_backend};
use std::io::Read;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("keysource").required(true).args(["key", "key_file"])))]
pub struct TagArgs {
    /// Algorithm, e.g. hmac-sha256 (see `macbench list`).
    #[arg(long)]
    pub alg: String,
    /// Backend (default: the first available one in `macbench list` order).
    #[arg(long)]
    pub backend: Option<String>,
    /// Key as hex.
    #[arg(long)]
    pub key: Option<String>,
    /// File holding the raw key bytes.
    #[arg(long)]
    pub key_file: Option<PathBuf>,
    /// Nonce/IV as hex, for algorithms that take one (GMAC: any non-empty IV, 12 bytes usual; VMAC
    /// and UMAC: 1–16 bytes; `macbench list` shows each function's rule).
    #[arg(long)]
    pub nonce: Option<String>,
    /// Tag length in bytes: a truncation of the tag (HMAC-SHA-256-128 is `--tag-len 16`, RFC 4868),
    /// or for KMAC its output length L, an input of the construction. The same rule as
    /// `run --tag-len` and `net --tag-len`.
    #[arg(long, allow_hyphen_values = true, value_parser = crate::spec::parse_tag_len)]
    pub tag_len: Option<usize>,
    /// KMAC customization string S as hex (openssl takes at most 512 bytes, rustcrypto any length).
    #[arg(long)]
    pub custom: Option<String>,
    /// Input file (at most 256 MiB); `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
}

pub fn tag(args: &TagArgs) -> Result<(), CliError> {
    let function = chosen_function(args)?;
    let key = match (&args.key, &args.key_file) {
        (Some(hex), _) => parse_hex("--key", hex)?,
        (None, Some(path)) => read_key_file(path)?,
        (None, None) => unreachable!("clap requires one key source"),
    };
    let nonce = args
        .nonce
        .as_deref()
        .map(|n| parse_hex("--nonce", n))
        .transpose()?;
    function.check_nonce(nonce.as_deref())?;
    let custom = args
        .custom
        .as_deref()
        .map(|c| parse_hex("--custom", c))
        .transpose()?
        .unwrap_or_default();
    if !custom.is_empty() && function.algorithm.family != mac::Family::Kmac {
        return Err(CliError::usage(format!(
            "--custom applies to KMAC only, not {}",
            function.algorithm.name
        )));
    }
    let message = read_message(args.file.as_deref())?;
    // The 3GPP functions take bounded lengths; outside them the library refuses, and a tag printed
    // anyway would be a lie.
    if !function.accepts_bytes(message.len() as u64) {
        return Err(CliError::usage(format!(
            "{}; this one has {} bytes",
            function.length_rule(),
            message.len()
        )));
    }
    let algorithm = function.algorithm;
    let tag_len = match args.tag_len {
        Some(asked) => algorithm
            .check_tag_len(asked)
            .map_err(|e| CliError::usage(format!("--tag-len: {e}")))?,
        None => algorithm.tag_len,
    };
    let params = KeyParams {
        customization: &custom,
        output_len: None,
    }
    .for_tag_len(algorithm, tag_len);
    let mut keyed = crate::isolate::key(&function, &key, params)?;
    // The full tag is computed (KMAC: exactly tag_len bytes); its first tag_len bytes are printed.
    let mut full = [0u8; MAX_TAG_LEN];
    let tag = &mut full[..algorithm.computed_tag_len(tag_len)];
    // Through the bit-length entry point (whole bytes here): the backends that take bit lengths
    // (ipsec-mb's 3GPP functions) check the message there too. A refusal is an error, never a tag.
    keyed
        .tag_bits(
            nonce.as_deref().unwrap_or(&[]),
            &message,
            8 * message.len() as u64,
            tag,
        )
        .map_err(|e| CliError::failure(e.to_string()))?;
    crate::outln!("{}", hex::encode(&tag[..tag_len]));
    Ok(())
}

/// The one function `--alg` (and `--backend`) name: the first available variant, or why there is none.
fn chosen_function(args: &TagArgs) -> Result<mac::Function, CliError> {
    let names = crate::spec::resolve_algorithms(&args.alg)?;
    let [name] = names[..] else {
        return Err(CliError::usage(format!(
            "--alg: give exactly one algorithm, not {:?}",
            args.alg
        )));
    };
    if mac::algorithm(name).is_some_and(|a| a.family == mac::Family::Null) {
        return Err(CliError::usage(
            "--alg null: not a MAC (it only measures the harness); give a MAC from `macbench list`",
        ));
    }
    let backend = args.backend.as_deref().map(resolve_backend).transpose()?;
    if let Some(b) = backend {
        if let Availability::Unavailable(why) = (b.availability)() {
            return Err(CliError::usage(format!(
                "--backend {}: not available in this build: {why}",
                b.name
            )));
        }
    }
    mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == name && backend.is_none_or(|b| b.name == f.backend.name))
        .find(|f| f.availability() == Availability::Available)
        .ok_or_else(|| {
            let mut offered: Vec<&str> = Vec::new();
            for f in mac::functions().iter().filter(|f| f.algorithm.name == name) {
                // One entry per backend, not per acceleration variant.
                if !offered.contains(&f.backend.name) {
                    offered.push(f.backend.name);
                }
            }
            CliError::usage(match backend {
                Some(b) => format!(
                    "backend {} does not offer {name}; backends that do: {}",
                    b.name,
                    if offered.is_empty() {
                        "none".to_string()
                    } else {
                        offered.join(", ")
                    }
                ),
                None => format!("{name} is not available in this build (see `macbench list`)"),
            })
        })
}

/// The message: the file, or standard input for none or `-`, bounded by [`MAX_TAG_INPUT`].
fn read_message(file: Option<&std::path::Path>) -> Result<Vec<u8>, CliError> {
    match file {
        None => read_bounded("standard input", std::io::stdin().lock()),
        Some(p) if p.as_os_str() == "-" => read_bounded("standard input", std::io::stdin().lock()),
        Some(p) => {
            let f = crate::system::input::open_input(p)
                .map_err(|e| CliError::usage(format!("{}: {e}", p.display())))?;
            // A directory opens but cannot be read: bad input like a missing file (exit 2), not a
            // failure while reading (it was exit 1).
            if f.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(CliError::usage(format!(
                    "{}: is a directory; give a file, or - for standard input",
                    p.display()
                )));
            }
            read_bounded(&p.display().to_string(), f)
        }
    }
}

/// The largest input `tag` accepts. The MAC interface is one-shot (`tag_into` over one buffer; the
/// chunked `tag_chunks` also takes every piece at once), so the whole message is held in memory and has
/// to be bounded: `tag /dev/zero` is refused at this size instead of growing without end.
pub const MAX_TAG_INPUT: u64 = 256 << 20;

fn read_bounded(shown: &str, reader: impl Read) -> Result<Vec<u8>, CliError> {
    let mut buf = Vec::new();
    reader
        .take(MAX_TAG_INPUT + 1)
        .read_to_end(&mut buf)
        .map_err(|e| CliError::failure(format!("reading {shown}: {e}")))?;
    if buf.len() as u64 > MAX_TAG_INPUT {
        return Err(CliError::usage(format!(
            "{shown}: longer than {} MiB, the most `tag` reads (it holds the message in memory)",
            MAX_TAG_INPUT >> 20
        )));
    }
    Ok(buf)
}

/// The longest key file `tag` reads: longer than any key a registered algorithm takes (HMAC keys up to
/// a few KiB), so `--key-file /dev/zero` is refused at once instead of being read without end.
pub const MAX_KEY_FILE: u64 = 64 << 10;

fn read_key_file(path: &std::path::Path) -> Result<Vec<u8>, CliError> {
    let shown =
        |e: &dyn std::fmt::Display| CliError::usage(format!("--key-file {}: {e}", path.display()));
    let file = crate::system::input::open_input(path).map_err(|e| shown(&e))?;
    let mut key = Vec::new();
    file.take(MAX_KEY_FILE + 1)
        .read_to_end(&mut key)
        .map_err(|e| shown(&e))?;
    if key.len() as u64 > MAX_KEY_FILE {
        return Err(shown(&format!(
            "longer than {MAX_KEY_FILE} bytes, more than any key a MAC here takes"
        )));
    }
    Ok(key)
}
