//! Wall-clock timestamps derived from tokio time.
//!
//! The server stamps objects (`creationTimestamp`, `deletionTimestamp`) with wall-clock
//! time, but every decision runs on tokio time. A [`Clock`] anchors the wall clock once at
//! construction and advances it with `tokio::time::Instant`, so a paused-time test sees
//! timestamps move exactly as far as its virtual clock.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// Wall-clock time that advances with tokio time.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    wall_at_start: Duration,
    start: Instant,
}

impl Clock {
    /// Anchors the clock at the current wall-clock time.
    pub fn new() -> Self {
        let wall_at_start = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Self {
            wall_at_start,
            start: Instant::now(),
        }
    }

    /// Time since the Unix epoch, now.
    pub fn unix(&self) -> Duration {
        self.wall_at_start + self.start.elapsed()
    }

    /// Time since the clock was created (tokio time).
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Now as RFC 3339 with whole seconds (`metav1.Time`).
    pub fn rfc3339(&self) -> String {
        format_rfc3339(self.unix(), false)
    }

    /// Now as RFC 3339 with microseconds (`metav1.MicroTime`).
    pub fn rfc3339_micros(&self) -> String {
        format_rfc3339(self.unix(), true)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// Formats a time since the epoch as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`.
pub fn format_rfc3339(since_epoch: Duration, micros: bool) -> String {
    let secs = since_epoch.as_secs();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (rem / 3600, (rem / 60) % 60, rem % 60);
    if micros {
        let us = since_epoch.subsec_micros();
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{us:06}Z")
    } else {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    }
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` into seconds since the epoch.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mi, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &text[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            sign * (rest.get(1..3)?.parse::<i64>().ok()? * 3600
                + rest.get(4..6)?.parse::<i64>().ok()? * 60)
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86_400 + hh * 3600 + mi * 60 + ss - offset)
}

/// Renders an age the way `kubectl get` does for its AGE column.
pub fn human_age(secs: i64) -> String {
    if secs < 0 {
        return "<invalid>".into();
    }
    let (m, h, d) = (secs / 60, secs / 3600, secs / 86_400);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 600 => {
            let rest = s % 60;
            if rest == 0 {
                format!("{m}m")
            } else {
                format!("{m}m{rest}s")
            }
        }
        s if s < 3 * 3600 => format!("{m}m"),
        s if s < 8 * 3600 => {
            let rest = m % 60;
            if rest == 0 {
                format!("{h}h")
            } else {
                format!("{h}h{rest}m")
            }
        }
        s if s < 48 * 3600 => format!("{h}h"),
        s if s < 8 * 86_400 => {
            let rest = h % 24;
            if rest == 0 {
                format!("{d}d")
            } else {
                format!("{d}d{rest}h")
            }
        }
        s if s < 2 * 365 * 86_400 => format!("{d}d"),
        _ => format!("{}y", d / 365),
    }
}

// Howard Hinnant's civil-from-days and days-from-civil algorithms.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_and_parsing_round_trip() {
        let t = Duration::from_secs(1_763_722_800) + Duration::from_micros(123_456);
        let text = format_rfc3339(t, true);
        assert_eq!(text, "2025-11-21T11:00:00.123456Z");
        assert_eq!(parse_rfc3339(&text), Some(1_763_722_800));
        assert_eq!(
            parse_rfc3339("2025-11-21T12:00:00+01:00"),
            Some(1_763_722_800)
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_age(5), "5s");
        assert_eq!(human_age(330), "5m30s");
        assert_eq!(human_age(3600), "60m");
        assert_eq!(human_age(5 * 3600 + 60), "5h1m");
        assert_eq!(human_age(3 * 86_400), "3d");
    }

    #[tokio::test(start_paused = true)]
    async fn the_clock_advances_with_tokio_time() {
        let clock = Clock::new();
        let before = clock.unix();
        tokio::time::advance(Duration::from_secs(90)).await;
        assert_eq!(clock.unix() - before, Duration::from_secs(90));
    }
}
