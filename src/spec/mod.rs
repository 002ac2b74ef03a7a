//! The scenario vocabulary: every value a user types to describe what to measure, parsed once, typed,
//! with one error type that names the flag.
//!
//! Subcommands share it (`run`, `model --measure`, `compare`, `net`, `tag`, `list`), so the same text
//! means the same thing everywhere and a mistake gets the same answer wherever it is typed. Nothing
//! here runs anything or prints: the CLI turns a [`SpecError`] into one line and exit code 2.

pub mod net;
pub mod values;

use crate::engine::{self, SizeSource};
use crate::mac::{self, Accel, Availability, Function};
use std::sync::Arc;
use std::time::Duration;

pub use values::{
    check_count, check_label, check_online_cpu, dedup_list, duration_from_secs, parse_cpus,
    parse_duration, parse_duration_within, parse_one_cpu, parse_percent,
};

/// A value the user gave that cannot be used; the message names the flag and what would be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(pub String);

impl SpecError {
    pub fn new(message: impl Into<String>) -> SpecError {
        SpecError(message.into())
    }
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

/// `--accel` item: `hw`, `sw` or an ISA level (`sse`, `avx`, `avx2`, `avx512`). The command line parses
/// `--accel` with clap (`Accel` is a `ValueEnum`); this is for the same words arriving as text.
pub fn parse_accel(text: &str) -> Result<Accel, SpecError> {
    Accel::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Accel::ALL.iter().map(|a| a.name()).collect();
        SpecError::new(format!(
            "--accel: {text:?} is not one of {}",
            names.join(", ")
        ))
    })
}

/// `--accel` as typed, for the record of a run's options: `hw,sw`.
pub fn accel_list(accels: &[Accel]) -> String {
    comma_list(accels.iter().map(|a| a.name()))
}

/// docs/methodology.md §5 default sizes: powers of two 16 … 65536 plus the IP sizes 40, 576 and 1500.
pub const DEFAULT_SIZES: &[u32] = &[
    16, 32, 40, 64, 128, 256, 512, 576, 1024, 1500, 2048, 4096, 8192, 16384, 32768, 65536,
];

/// Parse a window against the run duration: `a..b` in seconds, or `a%..b%`.
pub fn parse_window(text: &str, duration: Duration) -> Result<(Duration, Duration), SpecError> {
    let bad = || {
        SpecError::new(format!(
            "--window: {text:?} is not auto or START..END (seconds, e.g. 0.03..0.135, or percent, e.g. 20%..90%)"
        ))
    };
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let point = |s: &str| -> Result<f64, SpecError> {
        let s = s.trim();
        let (v, scale) = if let Some(p) = s.strip_suffix('%') {
            (p, duration.as_secs_f64() / 100.0)
        } else if let Some(ms) = s.strip_suffix("ms") {
            (ms, 1e-3)
        } else {
            (s.strip_suffix('s').unwrap_or(s), 1.0)
        };
        let v: f64 = v.trim().parse().map_err(|_| bad())?;
        if v < 0.0 {
            return Err(SpecError::new(format!(
                "--window: {text:?} has a negative end; give START..END from 0, e.g. 0.03..0.135 or 20%..90%"
            )));
        }
        if !v.is_finite() {
            return Err(bad());
        }
        Ok(v * scale)
    };
    let (start, end) = (point(a)?, point(b)?);
    if start >= end || end > duration.as_secs_f64() + 1e-12 {
        return Err(SpecError::new(format!(
            "--window {text}: the window {start}..{end} s must lie inside the run (0..{} s) and end after it starts",
            duration.as_secs_f64()
        )));
    }
    Ok((
        Duration::from_secs_f64(start),
        Duration::from_secs_f64(end.min(duration.as_secs_f64())),
    ))
}

/// `--dispatch`: comma-separated modes (`single`, `burst:N`, `inflight:N`, `stream`), each once, in the order
/// given.
pub fn parse_dispatches(text: &str) -> Result<Vec<engine::Dispatch>, SpecError> {
    let mut modes: Vec<engine::Dispatch> = Vec::new();
    for item in text.split(',') {
        if item.trim().is_empty() {
            return Err(SpecError::new(format!(
                "--dispatch: {text:?} has an empty item; give single, burst:N, inflight:N or stream, comma-separated"
            )));
        }
        let mode: engine::Dispatch = item.parse().map_err(SpecError::new)?;
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    Ok(modes)
}

/// Parse `--sizes` into size sources.
pub fn parse_sizes(text: &str, seed: u64) -> Result<Vec<SizeSource>, SpecError> {
    let mut out: Vec<SizeSource> = Vec::new();
    let push_fixed = |out: &mut Vec<SizeSource>, n: u32| {
        if !out
            .iter()
            .any(|s| matches!(s, SizeSource::Fixed { size } if *size == n))
        {
            out.push(SizeSource::Fixed { size: n });
        }
    };
    for token in text.split(',').map(str::trim) {
        if token.is_empty() {
            continue;
        }
        if token == "default" {
            DEFAULT_SIZES.iter().for_each(|&n| push_fixed(&mut out, n));
        } else if let Some((a, b)) = token.split_once("..") {
            let (a, b) = (parse_size(a)?, parse_size(b)?);
            if a == 0 || a > b {
                return Err(SpecError::new(format!(
                    "--sizes: range {token:?} must run from a positive size up to a larger one"
                )));
            }
            let mut n = u64::from(a);
            while n <= u64::from(b) {
                push_fixed(&mut out, n as u32);
                n *= 2;
            }
        } else if token.bytes().all(|c| c.is_ascii_digit()) {
            push_fixed(&mut out, parse_size(token)?);
        } else if token.starts_with('-') {
            return Err(SpecError::new(format!(
                "--sizes: {token:?} is negative; sizes are byte counts ≥ 0"
            )));
        } else {
            let model = crate::traffic::resolve_model(token)
                .map_err(|e| SpecError::new(format!("--sizes: {e}")))?;
            let sequence = model.sample_sequence(seed, 65_536);
            out.push(SizeSource::Model {
                name: model.name().to_string(),
                mean_bytes: model.mean(),
                sequence: Arc::new(sequence),
            });
        }
    }
    if out.is_empty() {
        return Err(SpecError::new(
            "--sizes names no size; give e.g. 64,1500 or 16..65536 or default",
        ));
    }
    Ok(out)
}

/// `model --sizes`: size models by name (`all`, a built-in, a CSV or a capture), and `run --sizes`'s
/// fixed sizes, each a model of that one size.
pub fn parse_models(spec: &str) -> Result<Vec<crate::traffic::SizeDistribution>, SpecError> {
    let mut out = Vec::new();
    for name in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let fixed = name == "default"
            || name.contains("..")
            || name.starts_with('-')
            || name.bytes().all(|c| c.is_ascii_digit());
        if name == "all" {
            out.extend(crate::traffic::builtins());
        } else if fixed {
            // `run --sizes`'s vocabulary: each fixed size a model of that one size.
            for source in parse_sizes(name, 1)? {
                if let SizeSource::Fixed { size } = source {
                    out.push(
                        crate::traffic::SizeDistribution::from_weights(
                            format!("fixed-{size}"),
                            format!("every message {size} bytes (--sizes {name})"),
                            [(size, 1.0)],
                        )
                        .map_err(|e| SpecError::new(format!("--sizes {name}: {e}")))?,
                    );
                }
            }
        } else {
            out.push(
                crate::traffic::resolve_model(name)
                    .map_err(|e| SpecError::new(format!("--sizes: {e}")))?,
            );
        }
    }
    if out.is_empty() {
        return Err(SpecError::new("--sizes names no size model"));
    }
    Ok(out)
}

/// One byte count of `--sizes`, at most the engine's limit (refused here, before anything runs).
fn parse_size(text: &str) -> Result<u32, SpecError> {
    let t = text.trim();
    match t.parse::<u32>() {
        Ok(n) if n <= engine::MAX_MESSAGE_LEN => Ok(n),
        Ok(n) => Err(SpecError::new(format!(
            "--sizes: {n} is larger than the engine's limit of {} bytes",
            engine::MAX_MESSAGE_LEN
        ))),
        Err(_) => Err(SpecError::new(format!(
            "--sizes: {t:?} is not a byte count (0 … {}); give numbers, ranges 16..65536 or a model name",
            engine::MAX_MESSAGE_LEN
        ))),
    }
}

/// Resolve `--alg` names (comma-separated, presets allowed) to algorithm names.
pub fn resolve_algorithms(spec: &str) -> Result<Vec<&'static str>, SpecError> {
    use crate::mac::{ALGORITHMS, PAPER_PRESET};
    let mut out: Vec<&'static str> = Vec::new();
    for name in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match name {
            "all" => out.extend(ALGORITHMS.iter().map(|a| a.name).filter(|n| *n != "null")),
            "paper" => out.extend(PAPER_PRESET.iter().copied()),
            _ => match crate::mac::algorithm(name) {
                Some(a) => out.push(a.name),
                None => {
                    let names = ALGORITHMS.iter().map(|a| a.name);
                    let hint = crate::mac::nearest(name, names.clone().chain(["all", "paper"]))
                        .map(|n| format!(" (did you mean {n}?)"))
                        .unwrap_or_default();
                    return Err(SpecError::new(format!(
                        "unknown algorithm {name:?}{hint}; valid: {}, or the presets all, paper",
                        names.collect::<Vec<_>>().join(", ")
                    )));
                }
            },
        }
    }
    if out.is_empty() {
        return Err(SpecError::new("--alg names no algorithm"));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| seen.insert(*n));
    Ok(out)
}

/// `--alg` and `--backend` of `list` and `selftest`, each optional: which functions to show.
pub fn selection(
    alg: Option<&str>,
    backend: Option<&str>,
) -> Result<crate::mac::listing::Selection, SpecError> {
    Ok(crate::mac::listing::Selection {
        algorithms: alg.map(resolve_algorithms).transpose()?,
        backend: backend.map(resolve_backend).transpose()?,
    })
}

/// Check a `--backend` name.
pub fn resolve_backend(name: &str) -> Result<&'static crate::mac::Backend, SpecError> {
    crate::mac::backend(name).ok_or_else(|| {
        let names: Vec<&str> = crate::mac::BACKENDS.iter().map(|b| b.name).collect();
        let hint = crate::mac::nearest(name, names.iter().copied())
            .map(|n| format!(" (did you mean {n}?)"))
            .unwrap_or_default();
        SpecError::new(format!(
            "unknown backend {name:?}{hint}; valid: {}",
            names.join(", ")
        ))
    })
}

/// Decode a hex flag value with a message naming the flag.
pub fn parse_hex(flag: &str, value: &str) -> Result<Vec<u8>, SpecError> {
    let cleaned: String = value.chars().filter(|c| !c.is_whitespace()).collect();
    let cleaned = cleaned.strip_prefix("0x").unwrap_or(&cleaned);
    hex::decode(cleaned).map_err(|e| {
        SpecError::new(format!(
            "{flag}: not valid hex ({e}); give an even number of hex digits, e.g. 000102…"
        ))
    })
}

/// Functions to run, and the ones asked for that cannot run here (each with its reason).
#[derive(Debug, Clone)]
pub struct Resolved {
    pub functions: Vec<Function>,
    pub unavailable: Vec<String>,
}

/// Resolve algorithms × backends × accelerations to functions; an error when none can run, otherwise
/// the unavailable ones listed with their reasons for the caller to say.
pub fn resolve_functions(
    alg: &str,
    backend: Option<&str>,
    accel: &[Accel],
) -> Result<Resolved, SpecError> {
    let algorithms = resolve_algorithms(alg)?;
    let mut accels: Vec<Accel> = Vec::new();
    for &a in accel {
        if !accels.contains(&a) {
            accels.push(a);
        }
    }
    if accels.is_empty() {
        return Err(SpecError::new("--accel names no acceleration"));
    }
    // Backends named one by one: each that cannot run what was asked is said, even when another can.
    let named = backend.is_some_and(|b| b != "all");
    let backends = resolve_backend_list(backend)?;
    let all = mac::functions();
    let mut out = Vec::new();
    let mut unavailable = Vec::new();
    for name in &algorithms {
        for &acc in &accels {
            let asked: Vec<(&Function, Availability)> = all
                .iter()
                .filter(|f| f.algorithm.name == *name && f.accel == acc)
                .filter(|f| {
                    backends
                        .as_ref()
                        .is_none_or(|b| b.contains(&f.backend.name))
                })
                .map(|f| (f, f.availability()))
                .collect();
            let candidates = asked
                .iter()
                .filter(|(_, a)| *a == Availability::Available)
                .map(|(f, _)| *f);
            let chosen: Vec<&Function> = if backends.is_some() {
                candidates.collect()
            } else {
                candidates.take(1).collect()
            };
            if named && !chosen.is_empty() {
                for (f, a) in &asked {
                    if let Availability::Unavailable(why) = a {
                        // The id names the backend; a reason that opens with it would say it twice.
                        let why = crate::mac::reason_after_name(why, f.backend.name);
                        unavailable.push(format!("{}: {why}", f.id()));
                    }
                }
            }
            if chosen.is_empty() {
                let why = why_none_runs(name, acc, &asked, &all, backends.as_deref());
                unavailable.push(format!("{name}/{acc}: {why}"));
            }
            out.extend(chosen.into_iter().copied());
        }
    }
    if out.is_empty() {
        return Err(SpecError::new(format!(
            "no function to run: {}",
            unavailable.join("; ")
        )));
    }
    Ok(Resolved {
        functions: out,
        unavailable,
    })
}

/// `--backend` as a list of backend names: `None` when not given (then the first available backend of
/// each algorithm and acceleration runs), every backend for `all`, else the names given, each checked.
fn resolve_backend_list(backend: Option<&str>) -> Result<Option<Vec<&'static str>>, SpecError> {
    Ok(match backend {
        None => None,
        Some("all") => Some(mac::BACKENDS.iter().map(|b| b.name).collect()),
        Some(list) => Some(
            list.split(',')
                .map(|b| resolve_backend(b.trim()).map(|b| b.name))
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// Why no function of algorithm `name` at `acc` can run here, for the `unavailable` list: `asked` holds
/// the rows the backend choice allowed, each with its availability; `all` is the whole registry.
fn why_none_runs(
    name: &str,
    acc: Accel,
    asked: &[(&Function, Availability)],
    all: &[Function],
    backends: Option<&[&str]>,
) -> String {
    // The rows' own reasons (a level this CPU lacks, a backend without the variant, a library not
    // built), each once with the backends it holds for (a library's display name is not the name
    // `--backend` takes, and a reproduction step refused here must name its backend); the planned
    // backend's when no row exists at all.
    let mut reasons: Vec<(&String, Vec<&str>)> = Vec::new();
    for (f, a) in asked {
        if let Availability::Unavailable(why) = a {
            match reasons.iter_mut().find(|(w, _)| *w == why) {
                Some((_, names)) => names.push(f.backend.name),
                None => reasons.push((why, vec![f.backend.name])),
            }
        }
    }
    let reasons: Vec<String> = reasons
        .iter()
        .map(|(why, names)| match names.as_slice() {
            // Some reasons name their backend already ("cryptopp: Crypto++ 8.x has no AVX-512 …").
            [one] if why.starts_with(&format!("{one}: ")) => why.to_string(),
            _ => format!("{}: {why}", names.join(", ")),
        })
        .collect();
    mac::PLANNED
        .iter()
        .find(|(a, _, _)| *a == name)
        .map(|p| p.2.to_string())
        .or_else(|| (!reasons.is_empty()).then(|| reasons.join("; ")))
        .unwrap_or_else(|| match acc {
            Accel::Sw => "no software-only variant in this build".to_string(),
            _ => {
                // The named backends lack it: say which backends have it here.
                let elsewhere: Vec<&str> = all
                    .iter()
                    .filter(|f| f.algorithm.name == name && f.accel == acc)
                    .filter(|f| f.availability() == Availability::Available)
                    .map(|f| f.backend.name)
                    .collect();
                match (backends, elsewhere.is_empty()) {
                    (Some(named), false) => format!(
                        "--backend {} does not offer it; backends that do here: {}",
                        named.join(","),
                        elsewhere.join(", ")
                    ),
                    _ => "no available backend offers it (see `macbench list`)".to_string(),
                }
            }
        })
}

/// `--tag-len` as a user types it (`run`, `tag`, `net`): a number of bytes. Negative, empty and
/// non-numeric values get this one line rather than clap's "unexpected argument"; the range each
/// algorithm takes is checked where the algorithm is known (`Algorithm::check_tag_len`).
pub fn parse_tag_len(text: &str) -> Result<usize, String> {
    text.trim()
        .parse::<usize>()
        .map_err(|_| format!("{text:?} is not a tag length: give a number of bytes, 1 or more"))
}

/// A count flag that takes 1 or more (`--rounds`, `--repeat`, `--max-repeat`, `--sessions`,
/// `--rekey`): as [`parse_whole`], but the words say 1 or more (`--rounds -1` said "0 or more", then
/// 0 was refused). 0 itself is parsed and refused where the flag's range is checked
/// ([`check_count`]), in a line that names both bounds.
pub fn parse_count<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    parse_at_least(text, 1)
}

/// A whole-number flag as a user types it (`--seed`, `--replay-window`, `--inject-bad`,
/// `--sender-core`, …): a negative, empty or non-numeric value gets this one line, which clap
/// prefixes with the flag's name, rather than clap's "unexpected argument '-3'". Each flag's own
/// range is checked where it is used.
pub fn parse_whole<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    parse_at_least(text, 0)
}

/// A whole number whose refusal says the least the flag takes (`lowest`, 0 or 1).
fn parse_at_least<T: std::str::FromStr>(text: &str, lowest: u8) -> Result<T, String> {
    let t = text.trim();
    t.parse::<T>().map_err(|_| {
        if t.starts_with('-') {
            format!("{text:?} is negative: give a whole number, {lowest} or more")
        } else {
            format!("{text:?} is not a whole number: give {lowest} or more, in digits")
        }
    })
}

/// Items as one comma-separated list, no spaces, the way list flags take them and errors say them
/// back: `16,64,1500`.
pub fn comma_list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|item| item.to_string())
        .collect::<Vec<_>>()
        .join(",")
}
