//! `macbench list` and `macbench selftest`.

use super::CliError;
use crate::host::Host;
use crate::mac::listing::{LimitRow, ListRow};
use crate::mac::{self, vectors, Availability};
use crate::table::{Style, Table};
use serde::Serialize;

#[derive(Debug, Default, clap::Args)]
pub struct ListArgs {
    /// Write JSON instead of the table: to FILE, or to standard output with no value or `-`.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<std::path::PathBuf>,
    /// Every algorithm × backend × acceleration as its own row, unavailable ones too (the default is
    /// what runs here, one line per algorithm, and why the rest does not, once per reason).
    #[arg(long)]
    pub all: bool,
    /// Only these algorithms (comma-separated; presets `all`, `paper`).
    #[arg(long)]
    pub alg: Option<String>,
    /// Only this backend.
    #[arg(long)]
    pub backend: Option<String>,
}

#[derive(Debug, Default, clap::Args)]
pub struct SelftestArgs {
    /// Only these algorithms (comma-separated; presets `all`, `paper`).
    #[arg(long)]
    pub alg: Option<String>,
    /// Only this backend.
    #[arg(long)]
    pub backend: Option<String>,
    /// Write JSON instead of the table: to FILE, or to standard output with no value or `-`.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<std::path::PathBuf>,
}

#[derive(Debug, Serialize)]
struct ListOutput {
    host: Host,
    /// The reference rate, time base and cycle counters, as a run would record them.
    clock: crate::system::clock::ClockInfo,
    functions: Vec<ListRow>,
}

/// `--json`: standard output for `-`, else a file written by the output rules (atomic for regular
/// files, written through for devices, never an input).
fn write_json<T: Serialize>(path: &std::path::Path, value: &T) -> Result<(), CliError> {
    let mut bytes =
        serde_json::to_vec_pretty(value).map_err(|e| CliError::failure(e.to_string()))?;
    bytes.push(b'\n');
    let _locked = super::files::prepare(&[("--json", path)], &[])?;
    crate::report::write_atomic(path, &bytes).map_err(CliError::failure)
}

/// The table of functions under its header, a long reason shared by many rows given once below it.
fn print_rows(rows: &[ListRow]) {
    // A long reason shared by several rows (RustCrypto's missing software switch, a backend not
    // built) is stated once below the table and referred to by number.
    let mut shared: Vec<String> = Vec::new();
    for r in rows {
        if let (Some(why), false) = (&r.reason, r.available) {
            let count = rows
                .iter()
                .filter(|o| o.reason.as_ref() == Some(why))
                .count();
            if count >= 3 && why.len() > 40 && !shared.contains(why) {
                shared.push(why.clone());
            }
        }
    }
    let table = Table::new(Style::detect())
        .left("algorithm")
        .left("backend")
        .left("accel")
        .left("status")
        .right("key")
        .right("tag")
        .right("block")
        .right("nonce")
        .left("self-test / reason");
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let status = if r.available { "available" } else { "unavail." };
            let detail = match (&r.reason, r.available) {
                (Some(why), false) => match shared.iter().position(|s| s == why) {
                    Some(i) => format!("see [{}] below", i + 1),
                    None => why.clone(),
                },
                _ => r.selftest.clone(),
            };
            vec![
                r.algorithm.to_string(),
                r.backend.to_string(),
                r.accel.clone(),
                status.to_string(),
                r.key_bytes.clone(),
                r.tag_bytes.to_string(),
                r.block_bytes.to_string(),
                r.nonce_cell(),
                detail,
            ]
        })
        .collect();
    crate::out!("{}", table.render(&cells));
    if !shared.is_empty() {
        crate::outln!();
        for (i, why) in shared.iter().enumerate() {
            crate::outln!("[{}] {why}", i + 1);
        }
    }
}

/// The machine above the table: CPU, core types, the features MAC libraries test, the clocks, and
/// what each backend is and uses.
fn print_host(host: &Host, clock: &crate::system::clock::ClockInfo) {
    crate::outln!(
        "CPU: {} ({} online: {})",
        host.cpu_model,
        host.online_cpus.len(),
        crate::system::format_cpu_list(&host.online_cpus)
    );
    // Worth a line when the cores differ (big.LITTLE) or the kernel says something about them.
    let informative = host.core_types.len() > 1
        || host
            .core_types
            .iter()
            .any(|t| t.design.is_some() || t.capacity.is_some() || t.max_khz.is_some());
    if informative {
        let types: Vec<String> = host.core_types.iter().map(|t| t.describe()).collect();
        crate::outln!("cores: {}", types.join("; "));
    }
    let wanted: &[&str] = if cfg!(target_arch = "aarch64") {
        &[
            "asimd", "aes", "pmull", "sha1", "sha2", "sha512", "sha3", "sve", "sve2",
        ]
    } else {
        &[
            "aes",
            "pclmulqdq",
            "sha_ni",
            "avx2",
            "avx512f",
            "vaes",
            "vpclmulqdq",
        ]
    };
    let feats: Vec<String> = wanted
        .iter()
        .map(|f| {
            let sign = if host.cpu_features.iter().any(|g| g == f) {
                "+"
            } else {
                "-"
            };
            format!("{sign}{f}")
        })
        .collect();
    crate::outln!("features: {}", feats.join(" "));
    crate::outln!(
        "clock: f = {:.4} GHz, {}",
        clock.reference_hz / 1e9,
        clock.reference_source
    );
    crate::outln!(
        "timer: {}, resolution {} ns; hardware cycle counters {}",
        clock.timebase.as_deref().unwrap_or("no readable time base"),
        clock.timer_resolution_ns,
        clock.hardware_cycles
    );
    // A backend's line carries what each switched child reported ("; sw child: …; sse child: …"):
    // one child per line, indented under the backend.
    for (name, version) in &host.library_versions {
        let mut line = version.clone();
        for accel in mac::Accel::ALL {
            let child = format!("; {accel} child: ");
            line = line.replace(&child, &format!("\n    {}", &child[2..]));
        }
        crate::outln!("backend {name}: {line}");
    }
}

/// One line per energy meter tried (`run --energy`): usable, or why not. A meter that updates every
/// millisecond is read twice 100 updates apart, so one that opens but stands still (a virtual
/// machine's `power` PMU reading zero) is not called usable: `run --energy` refuses it.
fn print_energy_meters() {
    let mut probe = crate::energy::probe(&crate::energy::system_root());
    for meter in &mut probe.meters {
        if let Some(still) = crate::energy::stands_still(meter.as_mut()) {
            crate::outln!("energy meter {}: {still}", meter.name());
            continue;
        }
        crate::outln!(
            "energy meter {}: usable ({} scope, step {:.3e} J, windows of {:.0} s)",
            meter.name(),
            meter.scope(),
            meter.resolution_joules(),
            crate::energy::window_length(meter.as_ref()).as_secs_f64()
        );
    }
    for u in &probe.unavailable {
        crate::outln!("energy meter {}: unavailable: {}", u.meter, u.reason);
    }
}

/// The default view: one line per algorithm with what runs here (`openssl hw sw sse …; cryptopp hw
/// sw`), its sizes and rules and the self-test's verdict over those functions; then what does not run
/// here, once per backend and reason with how many rows it covers. `--all` shows every row.
fn print_grouped(rows: &[ListRow]) {
    let mut order: Vec<&str> = Vec::new();
    for r in rows {
        if !order.contains(&r.algorithm) {
            order.push(r.algorithm);
        }
    }
    let table = Table::new(Style::detect())
        .left("algorithm")
        .right("key")
        .right("tag")
        .right("nonce")
        .left("self-test")
        .left("available here: backend accelerations");
    let mut cells: Vec<Vec<String>> = Vec::new();
    for name in &order {
        let mine: Vec<&ListRow> = rows.iter().filter(|r| r.algorithm == *name).collect();
        let here: Vec<&&ListRow> = mine.iter().filter(|r| r.available).collect();
        if here.is_empty() {
            continue;
        }
        let mut backends: Vec<(&str, Vec<&str>)> = Vec::new();
        for r in &here {
            match backends.iter_mut().find(|(b, _)| *b == r.backend) {
                Some((_, accels)) => accels.push(r.accel.as_str()),
                None => backends.push((r.backend, vec![r.accel.as_str()])),
            }
        }
        let failed = here
            .iter()
            .filter(|r| r.selftest.starts_with("FAIL"))
            .count();
        let selftest = if failed > 0 {
            format!("FAIL ({failed} of {})", here.len())
        } else {
            // Every available function ran the same vectors, but for those a library does not take
            // (its key limit): the count of one that took them all speaks for all.
            here.iter()
                .find(|r| r.key_limit.is_none())
                .unwrap_or(&here[0])
                .selftest
                .clone()
        };
        let first = here[0];
        // Where a library takes fewer key lengths than the others, the algorithm's own lengths
        // (what some backend here takes), the narrower ones in a `key limit:` line below.
        let key_cell = match here.iter().find(|r| r.key_limit.is_none()) {
            Some(full) => full.key_bytes.clone(),
            None => first.key_bytes.clone(),
        };
        cells.push(vec![
            name.to_string(),
            key_cell,
            first.tag_bytes.to_string(),
            first.nonce_cell(),
            selftest,
            backends
                .iter()
                .map(|(b, accels)| format!("{b} {}", accels.join(" ")))
                .collect::<Vec<_>>()
                .join("; "),
        ]);
    }
    crate::out!("{}", table.render(&cells));
    // What does not run here: once per backend and reason.
    let mut missing: Vec<(&str, String, usize)> = Vec::new();
    for r in rows.iter().filter(|r| !r.available) {
        let why = r.reason.clone().unwrap_or_default();
        match missing
            .iter_mut()
            .find(|(b, w, _)| *b == r.backend && *w == why)
        {
            Some((_, _, n)) => *n += 1,
            None => missing.push((r.backend, why, 1)),
        }
    }
    if !missing.is_empty() {
        crate::outln!();
        let total: usize = missing.iter().map(|m| m.2).sum();
        crate::outln!("not available here ({total} rows; `macbench list --all` shows each):");
        for (backend, why, n) in missing {
            crate::outln!("  {backend} ({n} rows): {why}");
        }
    }
}

/// A library's own message-length limits, one line per backend and limit: "length limit: ipsecmb
/// hmac-md5, hmac-sha1, …: at most 65534 bytes (source)". Runs leave longer sizes out for these.
fn print_length_limits(rows: &[ListRow]) {
    let mut by_limit: Vec<(&str, &LimitRow, Vec<&str>)> = Vec::new();
    for r in rows {
        let Some(limit) = &r.length_limit else {
            continue;
        };
        match by_limit
            .iter_mut()
            .find(|(b, l, _)| *b == r.backend && *l == limit)
        {
            Some((_, _, algs)) if algs.contains(&r.algorithm) => {}
            Some((_, _, algs)) => algs.push(r.algorithm),
            None => by_limit.push((r.backend, limit, vec![r.algorithm])),
        }
    }
    for (backend, limit, algs) in by_limit {
        crate::outln!(
            "length limit: {backend} {}: at most {} bytes per message ({}); runs leave longer sizes out",
            algs.join(", "),
            limit.max_bytes,
            limit.source
        );
    }
}

/// A library's own key-length limits, one line per backend and limit: "key limit: openssl kmac128,
/// kmac256: keys of 16–512 bytes (source)". `tag` and `net` refuse other keys through these.
fn print_key_limits(rows: &[ListRow]) {
    /// (algorithm, the key lengths its row takes).
    type Taken<'a> = Vec<(&'a str, &'a str)>;
    let mut by_limit: Vec<(&str, &'static str, Taken)> = Vec::new();
    for r in rows {
        let Some(limit) = &r.key_limit else {
            continue;
        };
        let entry = (r.algorithm, limit.key_bytes.as_str());
        match by_limit
            .iter_mut()
            .find(|(b, s, _)| *b == r.backend && *s == limit.source)
        {
            Some((_, _, algs)) if algs.contains(&entry) => {}
            Some((_, _, algs)) => algs.push(entry),
            None => by_limit.push((r.backend, limit.source, vec![entry])),
        }
    }
    for (backend, source, algs) in by_limit {
        let listed: Vec<String> = algs
            .iter()
            .map(|(alg, keys)| format!("{alg} keys of {keys} bytes"))
            .collect();
        crate::outln!(
            "key limit: {backend} takes {} ({source})",
            listed.join(", ")
        );
    }
}

/// "ISA levels sse, avx, avx2, avx512: not offered by openssl, cryptopp (why)", one line per reason.
fn print_levels_not_offered(rows: &[ListRow]) {
    let mut by_reason: Vec<(String, Vec<&str>)> = Vec::new();
    for r in rows {
        let why = r.reason.clone().unwrap_or_default();
        match by_reason.iter_mut().find(|(w, _)| *w == why) {
            Some((_, backends)) if backends.contains(&r.backend) => {}
            Some((_, backends)) => backends.push(r.backend),
            None => by_reason.push((why, vec![r.backend])),
        }
    }
    let levels: Vec<&str> = mac::Accel::LEVELS.iter().map(|a| a.name()).collect();
    for (why, backends) in by_reason {
        crate::outln!(
            "ISA levels {}: not offered by {} ({} rows in --json): {why}",
            levels.join(", "),
            backends.join(", "),
            rows.iter()
                .filter(|r| r.reason.as_deref() == Some(why.as_str()))
                .count()
        );
    }
}

pub fn list(args: &ListArgs) -> Result<(), CliError> {
    let host = crate::isolate::with_children(
        crate::isolate::detect_host(),
        &crate::isolate::switched_accels(),
    );
    let clock = crate::system::clock::clock_info();
    let only = crate::spec::selection(args.alg.as_deref(), args.backend.as_deref())?;
    let rows = only.rows(crate::isolate::key);
    if let Some(path) = &args.json {
        let out = ListOutput {
            host,
            clock,
            functions: rows,
        };
        return write_json(path, &out);
    }
    print_host(&host, &clock);
    print_energy_meters();
    crate::outln!();
    // On a terminal, the ISA-level rows of backends that offer no levels (four per algorithm each,
    // all saying the same) become one line per reason below the table; `--json` keeps every row.
    let (not_offered, shown): (Vec<ListRow>, Vec<ListRow>) =
        rows.into_iter().partition(|r| r.level_not_offered);
    if args.all {
        print_rows(&shown);
        print_levels_not_offered(&not_offered);
    } else {
        print_grouped(&shown);
        print_levels_not_offered(&not_offered);
    }
    print_length_limits(&shown);
    print_key_limits(&shown);
    let caveats: Vec<_> = mac::ALGORITHMS
        .iter()
        .filter_map(|a| a.caveat.map(|c| (a.name, c)))
        .collect();
    // What the switches themselves want said (levels that run the same code as hw).
    let switch_notes: Vec<&str> = mac::BACKENDS
        .iter()
        .filter_map(|b| b.process_switch.and_then(|s| s.note))
        .collect();
    if !caveats.is_empty() || !switch_notes.is_empty() {
        crate::outln!();
        for (name, caveat) in caveats {
            crate::outln!("note: {name}: {caveat}");
        }
        for note in switch_notes {
            crate::outln!("note: {note}");
        }
    }
    Ok(())
}

pub fn selftest(args: &SelftestArgs) -> Result<(), CliError> {
    let only = crate::spec::selection(args.alg.as_deref(), args.backend.as_deref())?;
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for f in mac::functions() {
        if !only.wants(f.algorithm.name, f.backend.name) {
            continue;
        }
        match f.availability() {
            Availability::Available => results.push(vectors::self_test(&f, crate::isolate::key)),
            Availability::Unavailable(why) => skipped.push((f.id(), why, f.is_level_not_offered())),
        }
    }
    if results.is_empty() {
        return Err(CliError::usage(
            "no available function matches --alg/--backend",
        ));
    }
    let failed = results.iter().filter(|r| !r.ok()).count();
    if let Some(path) = &args.json {
        write_json(path, &results)?;
    } else {
        let mut rows: Vec<Vec<String>> = results
            .iter()
            .map(|r| {
                let chunked = if r.chunked {
                    ", streamed in chunks"
                } else {
                    ""
                };
                vec![r.function.clone(), format!("{}{chunked}", r.status())]
            })
            .collect();
        // Levels a backend does not offer at all are counted, not listed (four rows per algorithm).
        let (levels, others): (Vec<_>, Vec<_>) =
            skipped.iter().partition(|(_, _, not_offered)| *not_offered);
        rows.extend(
            others
                .iter()
                .map(|(id, why, _)| vec![id.clone(), format!("unavailable: {why}")]),
        );
        if !levels.is_empty() {
            rows.push(vec![
                format!("{} ISA-level rows", levels.len()),
                "not offered by their backends (`macbench list`)".to_string(),
            ]);
        }
        let table = Table::new(Style::detect())
            .left("function")
            .left("self-test");
        crate::out!("{}", table.render(&rows));
        // What failed, vector by vector, below the table (indented: not rows of it); with -v every
        // vector checked and every one the library does not take, per function.
        for r in &results {
            if super::verbose() {
                for line in &r.checked {
                    crate::outln!("    {}: {line}", r.function);
                }
                for line in &r.not_taken {
                    crate::outln!("    {}: not run: {line}", r.function);
                }
            }
            for f in &r.failures {
                crate::outln!("    {}: {f}", r.function);
            }
        }
        let vectors: usize = results.iter().map(|r| r.vectors).sum();
        crate::outln!("{} passed, {} failed", results.len() - failed, failed);
        crate::outln!("({vectors} vectors over {} functions)", results.len());
    }
    if failed > 0 {
        return Err(CliError::failure(format!(
            "{failed} function(s) failed their known-answer tests"
        )));
    }
    Ok(())
}
