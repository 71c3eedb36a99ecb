/// Formats a float as Go's `fmt` `%v` does for `float64`: the shortest text that reads back to
/// the same value, switching to exponent form (`1e+06`, `1e-05`) when the decimal exponent is
/// 6 or more, or below -4, as Go's shortest `%g` does.
///
/// `+Inf`, `-Inf` and `NaN` are spelled as Go spells them.
#[must_use]
pub fn format_float(f: f64) -> String {
    // Rust's `{:e}` gives the shortest digits that read back to the same `f64`.
    format_shortest(f, format!("{:e}", f.abs()))
}

/// Formats a `float32` as Go's `%v` does: the shortest text that reads back to the same
/// `float32` (Go's `strconv.FormatFloat(f, 'g', -1, 32)`), so `float32(83886085)` prints
/// `8.388609e+07`, not the digits of the `float64` it widens to.
#[must_use]
pub fn format_float32(f: f32) -> String {
    format_shortest(f64::from(f), format!("{:e}", f.abs()))
}

/// Lays out `sci`, the shortest digits of `|f|` as `d.dddde<exp>`, in Go's `%v` form.
fn format_shortest(f: f64, sci: String) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{exp_sign}{:02}", exp.abs());
    }
    // Plain decimal: the decimal point sits after exp+1 digits.
    let point = exp + 1;
    let text = if point <= 0 {
        format!("0.{}{}", "0".repeat(point.unsigned_abs() as usize), digits)
    } else if (point as usize) >= digits.len() {
        format!("{}{}", digits, "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{text}")
}

#[cfg(test)]
mod tests {
    use super::format_float;

    #[test]
    fn matches_go_percent_v_for_float64() {
        assert_eq!(format_float(-2.0), "-2");
        assert_eq!(format_float(-1.5), "-1.5");
        assert_eq!(format_float(3.0), "3");
        assert_eq!(format_float(-1.999999993), "-1.999999993");
        assert_eq!(format_float(3.3333333333333335), "3.3333333333333335");
        assert_eq!(format_float(999_999.0), "999999");
        assert_eq!(format_float(1_000_000.0), "1e+06");
        assert_eq!(format_float(1_234_567.0), "1.234567e+06");
        assert_eq!(format_float(0.0001), "0.0001");
        assert_eq!(format_float(0.00001), "1e-05");
        assert_eq!(format_float(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(format_float(f64::INFINITY), "+Inf");
    }

    #[test]
    fn float32_uses_the_shortest_float32_digits_like_go() {
        use super::format_float32;
        assert_eq!(format_float32(-10.0), "-10");
        assert_eq!(format_float32(50.0), "50");
        assert_eq!(format_float32(83_886_085_f32), "8.388609e+07");
        assert_eq!(format_float32(0.1), "0.1");
        assert_eq!(
            super::format_float(f64::from(0.1_f32)),
            "0.10000000149011612"
        );
    }
}
