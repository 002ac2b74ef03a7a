//! Terminal output: a line per scenario as it finishes, then a functions × sizes matrix to read at a glance.

use crate::bench::{Document, ResultEntry};

fn num(v: Option<f64>) -> String {
    match v {
        None => "-".to_string(),
        Some(x) if x >= 1000.0 => format!("{x:.0}"),
        Some(x) if x >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// Human bytes/second: "812 MB/s", "3.41 GB/s".
pub fn rate(bytes_per_second: f64) -> String {
    if bytes_per_second >= 1e9 {
        format!("{:.2} GB/s", bytes_per_second / 1e9)
    } else if bytes_per_second >= 1e6 {
        format!("{:.0} MB/s", bytes_per_second / 1e6)
    } else {
        format!("{:.0} kB/s", bytes_per_second / 1e3)
    }
}

pub const HEADER: &str =
    "function                           size  abs c/B  app c/B  ±95%   abs c/msg    throughput   par  fair  flags";

/// The 95 % interval's half-width in percent of the median cycles/byte: "2.1%", or "-".
fn precision(r: &ResultEntry) -> String {
    match r.ci95.precision(&r.metrics) {
        Some(p) if p >= 0.995 => ">99%".to_string(),
        Some(p) => format!("{:.1}%", p * 100.0),
        None => "-".to_string(),
    }
}

/// One line for one finished scenario.
pub fn line(r: &ResultEntry) -> String {
    let m = &r.metrics;
    // Counted by code ("starvation×98"): at 1000 sessions a line per thread would bury the result.
    let mut flags = crate::metrics::summarise(&r.warnings);
    if r.failed {
        flags = format!("FAILED {flags}");
    }
    format!(
        "{:<30} {:>8} {:>8} {:>8} {:>5} {:>11} {:>13} {:>5} {:>5}  {}",
        format!("{}/{}/{}", r.algorithm, r.backend, r.accel),
        r.size.to_string(),
        num(m.absolute_cycles_per_byte),
        num(m.apparent_cycles_per_byte),
        precision(r),
        num(m.absolute_cycles_per_message),
        rate(m.bytes_per_second),
        num(m.parallelism),
        num(m.fairness),
        flags
    )
}

/// Matrix of one metric: functions as rows, sizes as columns.
pub fn matrix(doc: &Document, title: &str, metric: fn(&ResultEntry) -> Option<f64>) -> String {
    let mut sizes: Vec<String> = Vec::new();
    let mut functions: Vec<String> = Vec::new();
    for r in &doc.results {
        let s = r.size.to_string();
        if !sizes.contains(&s) {
            sizes.push(s);
        }
        let f = format!("{}/{}/{}", r.algorithm, r.backend, r.accel);
        if !functions.contains(&f) {
            functions.push(f);
        }
    }
    let width = functions.iter().map(|f| f.len()).max().unwrap_or(8).max(8);
    let mut out = format!("{title}\n{:<width$}", "function");
    for s in &sizes {
        out.push_str(&format!(" {s:>7}"));
    }
    out.push('\n');
    for f in &functions {
        out.push_str(&format!("{f:<width$}"));
        for s in &sizes {
            let v = doc
                .results
                .iter()
                .find(|r| {
                    &format!("{}/{}/{}", r.algorithm, r.backend, r.accel) == f
                        && &r.size.to_string() == s
                })
                .and_then(|r| if r.failed { None } else { metric(r) });
            out.push_str(&format!(" {:>7}", num(v)));
        }
        out.push('\n');
    }
    out
}
