//! CPU lists: which CPUs are online, and the kernel's list syntax (`0-3,6`) read and written by one rule,
//! so `--cores`, results files and messages all spell a set of CPUs the same way.

/// Online CPUs from `/sys/devices/system/cpu/online` (e.g. "0-3,6"); falls back to 0..available_parallelism.
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()).ok())
        .unwrap_or_else(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            (0..n).collect()
        })
}

/// The largest CPU number a CPU list may name: Linux's own limit (`NR_CPUS` ≤ 8192). Checking it before a
/// range is expanded keeps `0-18446744073709551615` from asking for exabytes.
pub const MAX_CPU: usize = 8191;

/// Parse a kernel-style CPU list: `0,1`, `0-7`, `0-3,8-11`. Sorted, without duplicates; every number at
/// most [`MAX_CPU`].
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    if text.trim_start().starts_with('-') {
        return Err(format!(
            "{text:?} is negative; CPU numbers are 0 or more, e.g. 0,1 or 0-7"
        ));
    }
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(format!("empty item in CPU list {text:?}"));
        }
        let parse = |s: &str| {
            let n = s
                .trim()
                .parse::<usize>()
                .map_err(|_| format!("{s:?} is not a CPU number (in {text:?})"))?;
            if n > MAX_CPU {
                return Err(format!(
                    "CPU {n} is beyond the largest CPU number accepted ({MAX_CPU})"
                ));
            }
            Ok(n)
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (parse(a)?, parse(b)?);
                if a > b {
                    return Err(format!("range {part:?} runs backwards"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(parse(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Write a CPU list in the kernel's style: "0-3,6".
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_like_the_kernel_writes_them() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("0,1").unwrap(), vec![0, 1]);
        assert_eq!(parse_cpu_list("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("2,0-1,1").unwrap(), vec![0, 1, 2]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert!(parse_cpu_list("0,,1").is_err());
        assert!(parse_cpu_list("0-18446744073709551615").is_err());
        assert!(parse_cpu_list("0-4294967295").is_err());
        assert_eq!(parse_cpu_list("0-8191").unwrap().len(), 8192);
    }

    #[test]
    fn cpu_lists_format_as_they_parse() {
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(format_cpu_list(&[1, 3, 4]), "1,3-4");
        for text in ["0", "0-3,6", "1,3-4,8-11"] {
            assert_eq!(format_cpu_list(&parse_cpu_list(text).unwrap()), text);
        }
    }
}
