//! One rule per kind of command-line value, shared by every subcommand.
//!
//! Each subcommand used to parse its own durations and counts, so the same mistake got a different answer
//! (or a panic, or an abort) depending on where it was typed. Every duration, count and list goes through
//! here instead: one parser, one range, one message that names the flag, the value and what is accepted.

use super::SpecError;
use std::time::Duration;

/// The shortest duration any flag accepts: enough for the clock to tick many times and for a run's
/// measurement window (20 %..90 % by default) to see work, and a UDP trial to send more than a packet.
pub const MIN_DURATION: Duration = Duration::from_millis(10);
/// The longest duration any flag accepts (one day): longer is almost certainly a typo (`1000h`).
pub const MAX_DURATION: Duration = Duration::from_secs(86_400);
// The bounds of `--repeat`/`--max-repeat` and `--sessions` live with what they bound — a result's
// repeats in `results`, the engine's sessions in `engine` — so the results check refuses a file
// beyond them by the same numbers without calling up into this layer.
pub use crate::engine::MAX_SESSIONS;
pub use crate::results::MAX_REPEAT;

fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 3600.0 {
        format!("{} h", s / 3600.0)
    } else if s >= 1.0 {
        format!("{s} s")
    } else {
        format!("{} ms", s * 1e3)
    }
}

fn range_text_of(min: Duration, max: Duration) -> String {
    format!("from {} to {}", human(min), human(max))
}

/// Parse a duration: a number of seconds (`0.5`), or a number with a unit `ms`, `s`, `m` or `h`
/// (`150ms`, `2s`, `10m`, `1h`). Between [`MIN_DURATION`] and [`MAX_DURATION`].
pub fn parse_duration(flag: &str, text: &str) -> Result<Duration, SpecError> {
    parse_duration_within(flag, text, MIN_DURATION, MAX_DURATION)
}

/// [`parse_duration`] with bounds of the flag's own (the coordinator's `--tick`: 1 ms … 1 s).
pub fn parse_duration_within(
    flag: &str,
    text: &str,
    min: Duration,
    max: Duration,
) -> Result<Duration, SpecError> {
    let t = text.trim();
    let units: [(&str, f64); 4] = [("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0)];
    let (number, scale) = units
        .iter()
        .find_map(|(u, scale)| t.strip_suffix(u).map(|n| (n, *scale)))
        .unwrap_or((t, 1.0));
    let value = number.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    match value {
        Some(v) => check_duration(flag, text, v * scale, min, max),
        None => Err(SpecError::new(format!(
            "{flag}: {text:?} is not a duration; give seconds (0.5, 2s), milliseconds (150ms), minutes (10m) or hours (1h), {}",
            range_text_of(min, max)
        ))),
    }
}

/// Check a duration computed in seconds (a `--budget` share) against the one duration rule.
/// `shown` is the value as the user typed it.
pub fn duration_from_secs(flag: &str, shown: &str, secs: f64) -> Result<Duration, SpecError> {
    check_duration(flag, shown, secs, MIN_DURATION, MAX_DURATION)
}

fn check_duration(
    flag: &str,
    shown: &str,
    secs: f64,
    min: Duration,
    max: Duration,
) -> Result<Duration, SpecError> {
    if !secs.is_finite() || secs <= 0.0 {
        return Err(SpecError::new(format!(
            "{flag}: {shown:?} is not a positive duration; give {}",
            range_text_of(min, max)
        )));
    }
    if secs < min.as_secs_f64() {
        return Err(SpecError::new(format!(
            "{flag}: {shown} is shorter than the minimum {} (too short to measure anything)",
            human(min)
        )));
    }
    if secs > max.as_secs_f64() {
        return Err(SpecError::new(format!(
            "{flag}: {shown} is longer than the maximum {}",
            human(max)
        )));
    }
    // In range, so the conversion cannot panic.
    Ok(Duration::from_secs_f64(secs))
}

/// A percentage as people write it, for every percentage flag alike (`--target-ci`,
/// `--fail-on-regression`): `5`, `5%`, `2.5 %`. Not a finite number (`1e309` reads as infinity,
/// `nan`) is refused; each flag checks its own range.
pub fn parse_percent(text: &str) -> Result<f64, String> {
    // One `%` at most: `5%%` is a typo, not five percent (issue 47 N33).
    let trimmed = text.trim();
    let number = trimmed.strip_suffix('%').unwrap_or(trimmed).trim_end();
    match number.parse::<f64>() {
        Ok(p) if p.is_finite() => Ok(p),
        Ok(_) => Err(format!(
            "{text:?} is not a finite percentage: give a number such as 5 or 5%"
        )),
        Err(_) => Err(format!("{text:?} is not a percentage (e.g. 5 or 5%)")),
    }
}

/// Check a count against `1..=max`.
pub fn check_count(flag: &str, value: usize, max: usize) -> Result<usize, SpecError> {
    crate::results::options::check_count(flag, value, max).map_err(SpecError::new)
}

/// Split a comma-separated list, trim it and drop repeated items, keeping the first occurrence's order:
/// `hw,hw` is `hw` (as `--alg` already did), so nothing runs twice.
pub fn dedup_list(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for item in text.split(',').map(str::trim) {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Parse a CPU list flag (`0-3,6`) with the one CPU-list rule of [`crate::host::parse_cpu_list`].
pub fn parse_cpus(flag: &str, text: &str) -> Result<Vec<usize>, SpecError> {
    crate::host::parse_cpu_list(text).map_err(|e| SpecError::new(format!("{flag}: {e}")))
}

/// A `--cores` value where one CPU is meant (a pinned single session): the same CPU-list syntax as
/// everywhere, holding exactly one online CPU.
pub fn parse_one_cpu(flag: &str, text: &str, online: &[usize]) -> Result<usize, SpecError> {
    let cpus = parse_cpus(flag, text)?;
    match cpus.as_slice() {
        [cpu] if online.contains(cpu) => Ok(*cpu),
        [cpu] => Err(SpecError::new(format!(
            "{flag}: CPU {cpu} is not online; online CPUs: {}",
            crate::system::format_cpu_list(online)
        ))),
        _ => Err(SpecError::new(format!(
            "{flag} {text:?}: this command pins one session; give one CPU, e.g. 0"
        ))),
    }
}

/// A `--label` must name a host in a table cell and a legend: one line of printable text, short.
pub fn check_label(label: Option<&str>) -> Result<(), SpecError> {
    let Some(label) = label else { return Ok(()) };
    if !label.chars().any(is_visible)
        || label.chars().count() > 64
        || label.chars().any(|c| c.is_control() || is_format_char(c))
    {
        return Err(SpecError::new(format!(
            "--label {}: give a host name of 1 to 64 printable characters, one at least visible (no control or invisible formatting characters; combining marks and blanks such as U+3164 or U+2800 alone show nothing)",
            label.escape_debug()
        )));
    }
    Ok(())
}

/// Whether `c` shows as a mark of its own: not white space, control or format, not a combining mark
/// (it draws on the character before it, so a label made only of them shows nothing, or a mark on
/// the table's border), and not one of the letters and symbols that draw as blanks — Hangul
/// fillers (U+115F, U+1160, U+3164, U+FFA0), the braille blank (U+2800), the combining grapheme
/// joiner and the variation selectors. A label with none is refused like an empty one (issue 47
/// N21: "\u{3164}", "\u{2800}" and "\u{301}\u{302}" were taken as visible names).
fn is_visible(c: char) -> bool {
    !(c.is_whitespace()
        || c.is_control()
        || is_format_char(c)
        || matches!(c as u32,
            // Combining marks of the scripts most often met, and the blocks of them.
            0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x05BF | 0x05C1..=0x05C2
            | 0x05C4..=0x05C5 | 0x05C7 | 0x0610..=0x061A | 0x064B..=0x065F | 0x0670
            | 0x06D6..=0x06DC | 0x06DF..=0x06E4 | 0x06E7..=0x06E8 | 0x06EA..=0x06ED
            | 0x0900..=0x0903 | 0x093A..=0x094F | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E
            | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0x302A..=0x302F
            | 0x3099..=0x309A | 0xFE20..=0xFE2F
            // Blanks that are letters or symbols, and the invisible joiners and selectors.
            | 0x115F | 0x1160 | 0x17B4..=0x17B5 | 0x180B..=0x180F | 0x2800 | 0x3164
            | 0xFE00..=0xFE0F | 0xFFA0 | 0xE0100..=0xE01EF))
}

/// Unicode's invisible format characters (general category Cf) and line/paragraph separators: a
/// zero-width space makes two labels that look alike differ, and a right-to-left override turns the
/// text after it around in every table and legend that shows the label.
fn is_format_char(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x0890..=0x0891 | 0x08E2 | 0x180E
        | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F)
}

/// A CPU given for one end of a run (`net --sender-core`, `--receiver-core`) must be online.
pub fn check_online_cpu(
    flag: &str,
    core: Option<usize>,
    online: &[usize],
) -> Result<(), SpecError> {
    match core {
        Some(c) if !online.contains(&c) => Err(SpecError::new(format!(
            "{flag}: CPU {c} is not online; online CPUs: {}",
            super::comma_list(online)
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_have_one_range_and_say_which_end_was_crossed() {
        assert_eq!(
            parse_duration("--d", "150ms").unwrap(),
            Duration::from_millis(150)
        );
        assert_eq!(parse_duration("--d", "2").unwrap(), Duration::from_secs(2));
        assert_eq!(
            parse_duration("--d", "10m").unwrap(),
            Duration::from_secs(600)
        );
        assert_eq!(
            parse_duration("--d", "24h").unwrap(),
            Duration::from_secs(86_400)
        );
        let min = parse_duration("--d", "0.0000001").unwrap_err().0;
        assert!(min.contains("minimum 10 ms"), "{min}");
        let max = parse_duration("--d", "1000h").unwrap_err().0;
        assert!(max.contains("maximum 24 h"), "{max}");
        for bad in ["0", "-1", "1ns", "nan", "inf", "", "1e300"] {
            assert!(parse_duration("--d", bad).is_err(), "{bad}");
        }
        assert!(duration_from_secs("--budget", "1e300", 1e300).is_err());
    }

    #[test]
    fn repeated_list_items_are_dropped() {
        assert_eq!(dedup_list("hw, hw,sw,hw"), vec!["hw", "sw"]);
    }
}

#[cfg(test)]
mod one_cpu_tests {
    use super::*;

    #[test]
    fn one_cpu_is_one_online_cpu() {
        assert_eq!(parse_one_cpu("--cores", "1", &[0, 1]), Ok(1));
        assert!(parse_one_cpu("--cores", "0-1", &[0, 1])
            .unwrap_err()
            .0
            .contains("give one CPU"));
        assert!(parse_one_cpu("--cores", "7", &[0, 1])
            .unwrap_err()
            .0
            .contains("not online"));
    }
}
