//! `macbench list` as a person reads it: the machine above the table (CPU, features, clocks, what
//! each backend is), the table of functions (grouped per algorithm, or every row with `--all`), and
//! the lines below it (what does not run here, libraries' own length and key limits, ISA levels not
//! offered). Each part is text built from the registry's listing rows; the CLI prints it.

use crate::host::Host;
use crate::mac::{
    self,
    listing::{LimitRow, ListRow},
};
use crate::table::{Style, Table};
use std::fmt::Write as _;

/// The table of functions under its header, a long reason shared by many rows given once below it.
pub fn rows(rows: &[ListRow]) -> String {
    let mut out = String::new();
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
    out.push_str(&table.render_each(rows, |r| {
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
    }));
    if !shared.is_empty() {
        out.push('\n');
        for (i, why) in shared.iter().enumerate() {
            let _ = writeln!(out, "[{}] {why}", i + 1);
        }
    }
    out
}

/// The machine above the table: CPU, core types, the features MAC libraries test, the clocks, and
/// what each backend is and uses.
pub fn host(host: &Host, clock: &crate::system::clock::ClockInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
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
        let _ = writeln!(out, "cores: {}", types.join("; "));
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
    let _ = writeln!(out, "features: {}", feats.join(" "));
    let _ = writeln!(
        out,
        "clock: f = {:.4} GHz, {}",
        clock.reference_hz / 1e9,
        clock.reference_source
    );
    let _ = writeln!(
        out,
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
        let _ = writeln!(out, "backend {name}: {line}");
    }
    out
}

/// The default view: one line per algorithm with what runs here (`openssl hw sw sse …; cryptopp hw
/// sw`), its sizes and rules and the self-test's verdict over those functions; then what does not run
/// here, once per backend and reason with how many rows it covers. `--all` shows every row.
pub fn grouped(rows: &[ListRow]) -> String {
    let mut out = String::new();
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
    out.push_str(&table.render(&cells));
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
        out.push('\n');
        let total: usize = missing.iter().map(|m| m.2).sum();
        let _ = writeln!(
            out,
            "not available here ({total} rows; `macbench list --all` shows each):"
        );
        for (backend, why, n) in missing {
            let _ = writeln!(out, "  {backend} ({n} rows): {why}");
        }
    }
    out
}

/// A library's own message-length limits, one line per backend and limit: "length limit: ipsecmb
/// hmac-md5, hmac-sha1, …: at most 65534 bytes (source)". Runs leave longer sizes out for these.
pub fn length_limits(rows: &[ListRow]) -> String {
    let mut out = String::new();
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
        let _ = writeln!(
out,
            "length limit: {backend} {}: at most {} bytes per message ({}); runs leave longer sizes out",
            algs.join(", "),
            limit.max_bytes,
            limit.source
        );
    }
    out
}

/// A library's own key-length limits, one line per backend and limit: "key limit: openssl kmac128,
/// kmac256: keys of 16–512 bytes (source)". `tag` and `net` refuse other keys through these.
pub fn key_limits(rows: &[ListRow]) -> String {
    let mut out = String::new();
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
        let _ = writeln!(
            out,
            "key limit: {backend} takes {} ({source})",
            listed.join(", ")
        );
    }
    out
}

/// "ISA levels sse, avx, avx2, avx512: not offered by openssl, cryptopp (why)", one line per reason.
pub fn levels_not_offered(rows: &[ListRow]) -> String {
    let mut out = String::new();
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
        let rows_of = rows
            .iter()
            .filter(|r| r.reason.as_deref() == Some(why.as_str()))
            .count();
        // A backend's reason names it first ("mbedtls: only hw …"), as it must where it stands
        // alone (a results row); after "not offered by mbedtls" that would say it twice.
        let said = match backends.as_slice() {
            [one] => mac::reason_after_name(&why, one),
            _ => &why,
        };
        let _ = writeln!(
            out,
            "ISA levels {}: not offered by {} ({rows_of} rows in --json): {said}",
            levels.join(", "),
            backends.join(", "),
        );
    }
    out
}
