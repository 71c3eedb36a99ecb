use std::fmt;
use std::time::Duration;

/// A Go `time.Duration`: a signed number of nanoseconds.
///
/// Rate limiters in client-go return durations that can be negative (the overflow hole of the
/// exponential limiter gives `math.MinInt64`) or "infinite" (`InfDuration`, `math.MaxInt64`), so
/// the exact value is kept here rather than in a [`std::time::Duration`]. [`GoDuration::to_std`]
/// gives the wait a caller acts on (negative waits are no wait, as in the delaying queue).
///
/// `Display` prints Go's `Duration.String()` form (`1m0s`, `4.099999999s`, `1.5µs`), and
/// [`GoDuration::parse`] accepts Go's `time.ParseDuration` syntax (`1h30m`, `250ms`, `1.5h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoDuration(pub i64);

/// A duration string that `time.ParseDuration` would reject; the message is Go's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseDurationError {
    message: String,
}

const NANOSECOND: u64 = 1;
const MICROSECOND: u64 = 1_000 * NANOSECOND;
const MILLISECOND: u64 = 1_000 * MICROSECOND;
const SECOND: u64 = 1_000 * MILLISECOND;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

impl GoDuration {
    /// Zero.
    pub const ZERO: GoDuration = GoDuration(0);
    /// x/time/rate's `InfDuration` (`math.MaxInt64` nanoseconds).
    pub const INF: GoDuration = GoDuration(i64::MAX);
    /// The most negative duration (`math.MinInt64` nanoseconds).
    pub const MIN: GoDuration = GoDuration(i64::MIN);

    /// Nanoseconds.
    #[must_use]
    pub const fn from_nanos(n: i64) -> Self {
        GoDuration(n)
    }

    /// Nanoseconds.
    #[must_use]
    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    /// Converts a std duration, saturating at `InfDuration`.
    #[must_use]
    pub fn from_std(d: Duration) -> Self {
        GoDuration(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }

    /// The wait this duration stands for: negative durations are no wait.
    #[must_use]
    pub fn to_std(self) -> Duration {
        Duration::from_nanos(u64::try_from(self.0).unwrap_or(0))
    }

    /// Go's `Duration.Seconds()`: whole seconds and the remainder converted separately, which is
    /// what makes x/time/rate's refill arithmetic reproducible bit for bit.
    #[must_use]
    pub fn seconds(self) -> f64 {
        let sec = self.0 / SECOND as i64;
        let nsec = self.0 % SECOND as i64;
        sec as f64 + nsec as f64 / 1e9
    }

    /// Parses Go's duration syntax: an optional sign, then one or more decimal numbers with a
    /// unit (`ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`), or the bare `0`.
    ///
    /// # Errors
    /// The input is not a Go duration, or it overflows an `i64` of nanoseconds.
    pub fn parse(input: &str) -> Result<Self, ParseDurationError> {
        parse_go_duration(input)
    }
}

impl From<Duration> for GoDuration {
    fn from(d: Duration) -> Self {
        GoDuration::from_std(d)
    }
}

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_go_duration(self.0))
    }
}

impl std::str::FromStr for GoDuration {
    type Err = ParseDurationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GoDuration::parse(s)
    }
}

/// Writes the fraction `v / 10^prec` (without trailing zeros, without the point when it is 0)
/// in front of `buf`, returning the integer part.
fn push_fraction(buf: &mut Vec<u8>, mut v: u64, prec: usize) -> u64 {
    let mut printed = false;
    for _ in 0..prec {
        let digit = (v % 10) as u8;
        printed = printed || digit != 0;
        if printed {
            buf.push(b'0' + digit);
        }
        v /= 10;
    }
    if printed {
        buf.push(b'.');
    }
    v
}

fn push_int(buf: &mut Vec<u8>, mut v: u64) {
    if v == 0 {
        buf.push(b'0');
        return;
    }
    while v > 0 {
        buf.push(b'0' + (v % 10) as u8);
        v /= 10;
    }
}

/// Go's `Duration.String()`, built back to front as Go does.
fn format_go_duration(d: i64) -> String {
    let neg = d < 0;
    let mut u = d.unsigned_abs();
    // Reversed bytes; the micro sign is pushed reversed too.
    let mut buf: Vec<u8> = Vec::with_capacity(32);
    if u < SECOND {
        buf.push(b's');
        let prec;
        if u == 0 {
            return "0s".to_owned();
        } else if u < MICROSECOND {
            prec = 0;
            buf.push(b'n');
        } else if u < MILLISECOND {
            prec = 3;
            // "µ" is U+00B5, bytes C2 B5, pushed in reverse.
            buf.push(0xB5);
            buf.push(0xC2);
        } else {
            prec = 6;
            buf.push(b'm');
        }
        u = push_fraction(&mut buf, u, prec);
        push_int(&mut buf, u);
    } else {
        buf.push(b's');
        u = push_fraction(&mut buf, u, 9);
        push_int(&mut buf, u % 60);
        u /= 60;
        if u > 0 {
            buf.push(b'm');
            push_int(&mut buf, u % 60);
            u /= 60;
            if u > 0 {
                buf.push(b'h');
                push_int(&mut buf, u);
            }
        }
    }
    if neg {
        buf.push(b'-');
    }
    buf.reverse();
    String::from_utf8(buf).expect("duration text is ASCII plus the micro sign")
}

fn unit_nanos(unit: &[u8]) -> Option<u64> {
    Some(match unit {
        b"ns" => NANOSECOND,
        b"us" => MICROSECOND,
        [0xC2, 0xB5, b's'] => MICROSECOND, // "µs", U+00B5
        [0xCE, 0xBC, b's'] => MICROSECOND, // "μs", U+03BC
        b"ms" => MILLISECOND,
        b"s" => SECOND,
        b"m" => MINUTE,
        b"h" => HOUR,
        _ => return None,
    })
}

/// Go's `time.quote`: the text in double quotes, with `"` and `\` escaped and every byte of
/// a character below space or outside ASCII (and every byte that is not UTF-8) written as
/// `\xHH`, so an error message stays on one line whatever the input held.
fn quote(s: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c < ' ' || !c.is_ascii() {
                for b in c.to_string().bytes() {
                    let _ = write!(out, "\\x{b:02x}");
                }
            } else {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out.push('"');
    out
}

fn parse_go_duration(orig: &str) -> Result<GoDuration, ParseDurationError> {
    const LIMIT: u64 = 1 << 63;
    let invalid = || ParseDurationError {
        message: format!("time: invalid duration {}", quote(orig.as_bytes())),
    };
    let mut s = orig.as_bytes();
    let mut d: u64 = 0;
    let mut neg = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(GoDuration(0));
    }
    if s.is_empty() {
        return Err(invalid());
    }
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // [0-9]*
        let mut v: u64 = 0;
        let mut i = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(s[i] - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
            i += 1;
        }
        let pre = i > 0;
        s = &s[i..];
        // (\.[0-9]*)?
        let mut post = false;
        let mut f: u64 = 0;
        let mut scale: f64 = 1.0;
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let mut i = 0;
            let mut overflow = false;
            while i < s.len() && s[i].is_ascii_digit() {
                if !overflow {
                    if f > (LIMIT - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + u64::from(s[i] - b'0');
                        if y > LIMIT {
                            overflow = true;
                        } else {
                            f = y;
                            scale *= 10.0;
                        }
                    }
                }
                i += 1;
            }
            post = i > 0;
            s = &s[i..];
        }
        if !pre && !post {
            return Err(invalid());
        }
        // unit
        let mut i = 0;
        while i < s.len() && !(s[i] == b'.' || s[i].is_ascii_digit()) {
            i += 1;
        }
        if i == 0 {
            return Err(ParseDurationError {
                message: format!("time: missing unit in duration {}", quote(orig.as_bytes())),
            });
        }
        let unit_text = &s[..i];
        s = &s[i..];
        let Some(unit) = unit_nanos(unit_text) else {
            return Err(ParseDurationError {
                message: format!(
                    "time: unknown unit {} in duration {}",
                    quote(unit_text),
                    quote(orig.as_bytes())
                ),
            });
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        d += v;
        if d > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        return Ok(GoDuration((d as i64).wrapping_neg()));
    }
    if d > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(GoDuration(d as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(ns: i64) -> String {
        GoDuration(ns).to_string()
    }

    #[test]
    fn formats_like_go_duration_string() {
        assert_eq!(show(0), "0s");
        assert_eq!(show(1), "1ns");
        assert_eq!(show(1_024), "1.024µs");
        assert_eq!(show(5_000_000), "5ms");
        assert_eq!(show(333_333_333), "333.333333ms");
        assert_eq!(show(4_099_999_999), "4.099999999s");
        assert_eq!(show(60_000_000_000), "1m0s");
        assert_eq!(show(1_000_000_000_000), "16m40s");
        assert_eq!(show(3_600_000_000_000), "1h0m0s");
        assert_eq!(show(i64::MAX), "2562047h47m16.854775807s");
        assert_eq!(show(i64::MIN), "-2562047h47m16.854775808s");
        assert_eq!(show(-5_000_000_000), "-5s");
    }

    #[test]
    fn parses_go_duration_syntax() {
        let p = |s: &str| GoDuration::parse(s).map(|d| d.0);
        assert_eq!(p("0"), Ok(0));
        assert_eq!(p("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(p("250ms"), Ok(250_000_000));
        assert_eq!(p("1.5h"), Ok(5_400_000_000_000));
        assert_eq!(p("-5s"), Ok(-5_000_000_000));
        assert_eq!(p("1µs"), Ok(1_000));
        assert_eq!(p("1μs"), Ok(1_000));
        assert_eq!(p(".5s"), Ok(500_000_000));
        assert_eq!(p("2562047h47m16.854775807s"), Ok(i64::MAX));
        assert_eq!(p("-2562047h47m16.854775808s"), Ok(i64::MIN));
    }

    #[test]
    fn rejects_what_go_rejects_with_go_messages() {
        let e = |s: &str| GoDuration::parse(s).unwrap_err().to_string();
        assert_eq!(e(""), "time: invalid duration \"\"");
        assert_eq!(e("10"), "time: missing unit in duration \"10\"");
        assert_eq!(e("3d"), "time: unknown unit \"d\" in duration \"3d\"");
        // Go's time.quote: control characters, non-ASCII and bytes that are not UTF-8 as
        // \xHH, quotes and backslashes escaped; the message stays on one line.
        assert_eq!(
            e("200ms\n>"),
            "time: unknown unit \"ms\\x0a>\" in duration \"200ms\\x0a>\""
        );
        assert_eq!(
            e("1é"),
            "time: unknown unit \"\\xc3\\xa9\" in duration \"1\\xc3\\xa9\""
        );
        assert_eq!(
            e("1\"\\"),
            "time: unknown unit \"\\\"\\\\\" in duration \"1\\\"\\\\\""
        );

        assert_eq!(e("."), "time: invalid duration \".\"");
        assert_eq!(e("abc"), "time: invalid duration \"abc\"");
        assert_eq!(e("2562048h"), "time: invalid duration \"2562048h\"");
    }

    #[test]
    fn seconds_splits_whole_and_fraction_like_go() {
        assert_eq!(GoDuration(1_500_000_000).seconds(), 1.5);
        assert_eq!(GoDuration(-1_500_000_000).seconds(), -1.5);
    }
}
