//! Go's `math` functions whose special cases differ from Rust's.

/// Go's `math.Min`: `-Inf` if either is `-Inf`, else NaN if either is NaN, `-0` over `+0`, else
/// the smaller. Rust's `f64::min` returns the other operand for a NaN instead.
#[must_use]
pub fn math_min(x: f64, y: f64) -> f64 {
    if x == f64::NEG_INFINITY || y == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 && x == y {
        return if x.is_sign_negative() { x } else { y };
    }
    if x < y { x } else { y }
}

#[cfg(test)]
mod tests {
    use super::math_min;

    #[test]
    fn math_min_keeps_gos_special_cases() {
        assert_eq!(math_min(1.0, 2.0), 1.0);
        assert!(math_min(f64::NAN, 2.0).is_nan());
        assert!(math_min(2.0, f64::NAN).is_nan());
        assert_eq!(math_min(f64::NAN, f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert!(math_min(0.0, -0.0).is_sign_negative());
        assert!(math_min(-0.0, 0.0).is_sign_negative());
    }
}
