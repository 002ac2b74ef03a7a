//! `macbench tag`: the hex tag of a file or standard input — handy on its own and the easiest way to
//! check macbench against other tools (`openssl mac`, Python's `hmac`).

use super::{parse_hex, resolve_backend, CliError};
use crate::mac::{self, Availability, KeyParams, MAX_TAG_LEN};
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
    /// Nonce/IV as hex, for algorithms that take one (gmac-aes128: 12 bytes).
    #[arg(long)]
    pub nonce: Option<String>,
    /// KMAC customization string S as hex.
    #[arg(long)]
    pub custom: Option<String>,
    /// Input file; `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
}

pub fn tag(args: &TagArgs) -> Result<(), CliError> {
    let names = super::resolve_algorithms(&args.alg)?;
    let [name] = names[..] else {
        return Err(CliError::usage(format!(
            "--alg: give exactly one algorithm, not {:?}",
            args.alg
        )));
    };
    let backend = args.backend.as_deref().map(resolve_backend).transpose()?;
    let candidates: Vec<_> = mac::functions()
        .into_iter()
        .filter(|f| f.algorithm.name == name && backend.is_none_or(|b| b.name == f.backend.name))
        .collect();
    let function = candidates
        .iter()
        .find(|f| f.availability() == Availability::Available)
        .ok_or_else(|| {
            let offered: Vec<&str> = mac::functions()
                .iter()
                .filter(|f| f.algorithm.name == name)
                .map(|f| f.backend.name)
                .collect();
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
        })?;

    let key = match (&args.key, &args.key_file) {
        (Some(hex), _) => parse_hex("--key", hex)?,
        (None, Some(path)) => std::fs::read(path)
            .map_err(|e| CliError::usage(format!("--key-file {}: {e}", path.display())))?,
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
            "--custom applies to KMAC only, not {name}"
        )));
    }

    let message = match args.file.as_deref() {
        None => read_stdin()?,
        Some(p) if p.as_os_str() == "-" => read_stdin()?,
        Some(p) => {
            std::fs::read(p).map_err(|e| CliError::usage(format!("{}: {e}", p.display())))?
        }
    };
    let mut keyed = function.with_key(
        &key,
        KeyParams {
            customization: &custom,
        },
    )?;
    let mut tag = [0u8; MAX_TAG_LEN];
    let tag = &mut tag[..function.algorithm.tag_len];
    keyed.tag_into(nonce.as_deref().unwrap_or(&[]), &message, tag);
    crate::outln!("{}", hex::encode(tag));
    Ok(())
}

fn read_stdin() -> Result<Vec<u8>, CliError> {
    let mut buf = Vec::new();
    std::io::stdin()
        .read_to_end(&mut buf)
        .map_err(|e| CliError::failure(format!("reading standard input: {e}")))?;
    Ok(buf)
}
