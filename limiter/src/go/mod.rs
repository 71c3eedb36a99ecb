//! Go's value semantics where they leak into behaviour: `time.Duration` (a signed count of
//! nanoseconds with its own text form and parser) and the shortest float format of `%v`.

mod duration;
mod float;
mod math;

pub use duration::{GoDuration, ParseDurationError};
pub use float::{format_float, format_float32};
pub use math::math_min;

/// Converts a float to an `i64` the way Go's `int64(f)` does on amd64: truncation toward zero,
/// and `math.MinInt64` ("integer indefinite") for NaN and for values outside the `i64` range,
/// including exactly 2^63.
///
/// Rust's `as` saturates instead; the difference is observable in client-go's exponential
/// backoff overflow (conformance vector 12), so we copy amd64 on purpose.
#[must_use]
pub fn f64_to_i64_amd64(f: f64) -> i64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-TWO_POW_63..TWO_POW_63).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_floats_become_min_int64_like_amd64() {
        assert_eq!(f64_to_i64_amd64(f64::NAN), i64::MIN);
        assert_eq!(f64_to_i64_amd64(9_223_372_036_854_775_808.0), i64::MIN);
        assert_eq!(f64_to_i64_amd64(1.9), 1);
        assert_eq!(f64_to_i64_amd64(-1.9), -1);
    }
}
