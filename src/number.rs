//! How a number a user or a file supplied is printed in a message: compactly.
//!
//! Rust's `{}` writes an `f64` in full, so `1e300` becomes a 301-digit string and `1e-300` three hundred
//! zeros (issue 47, M34: `--loss 1e-300`, a cost of 1e300 in a results file, `--target-ci 1e308`). Every
//! error line, plan line and note that echoes such a number goes through [`compact`], so one line stays
//! one readable line whatever was given. Values measured on a machine are formatted by the tables and
//! exporters with their own units; this is for numbers that may be anything.

/// `x` as `{}` writes it when that is short (magnitude from 0.001 to under 10⁹, or 0), else in
/// scientific form (`1e300`, `2.5e-7`); `NaN` and `inf` as themselves. Both forms are Rust's shortest
/// round-tripping digits, so nothing given is misquoted.
pub fn compact(x: f64) -> String {
    let magnitude = x.abs();
    if !x.is_finite() || x == 0.0 || (1e-3..1e9).contains(&magnitude) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::compact;

    #[test]
    fn huge_and_tiny_numbers_print_in_scientific_form() {
        assert_eq!(compact(1e300), "1e300");
        assert_eq!(compact(-1e-300), "-1e-300");
        assert_eq!(compact(2.5e-7), "2.5e-7");
        assert_eq!(compact(f64::MAX), "1.7976931348623157e308");
    }

    #[test]
    fn ordinary_numbers_print_as_given() {
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(5.0), "5");
        assert_eq!(compact(0.25), "0.25");
        assert_eq!(compact(123456.5), "123456.5");
        assert_eq!(compact(f64::NAN), "NaN");
        assert_eq!(compact(f64::INFINITY), "inf");
    }
}
