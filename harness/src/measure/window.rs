//! Exact windowed maxima: the most events in any closed window [t, t + W], over every window
//! start (not sampled).

/// The busiest window found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WindowMax {
    /// Events in it.
    pub count: u64,
    /// Its start (µs), the time of its first event.
    pub start_us: u64,
}

/// The most entries of the sorted series `times_us` inside any closed window of `window_us`.
///
/// # Semantics
/// A window that holds the most events can always be moved right until its start is an
/// event, so only event starts are tried; a two-pointer sweep makes it O(n). Windows are
/// closed on both ends, the convention of budget.md Lemma 1 (compare with ⌊b + rW⌋).
///
/// # Panics
/// In debug builds, if `times_us` is not sorted.
///
/// # Examples
/// ```
/// use harness::measure::windowed_max;
/// let t = [0, 500_000, 1_000_000, 1_000_001, 5_000_000];
/// assert_eq!(windowed_max(&t, 1_000_000).count, 3); // [0, 1 s] holds 0, 0.5 s and 1 s
/// ```
#[must_use]
pub fn windowed_max(times_us: &[u64], window_us: u64) -> WindowMax {
    debug_assert!(times_us.is_sorted(), "series must be sorted");
    let mut best = WindowMax::default();
    let mut hi = 0;
    for (lo, &start) in times_us.iter().enumerate() {
        let end = start.saturating_add(window_us);
        while hi < times_us.len() && times_us[hi] <= end {
            hi += 1;
        }
        let count = (hi - lo) as u64;
        if count > best.count {
            best = WindowMax {
                count,
                start_us: start,
            };
        }
        if hi == times_us.len() {
            break;
        }
    }
    best
}

/// A window length in whole microseconds, for [`windowed_max`]: saturating at `u64::MAX`
/// (585,000 years) instead of wrapping.
#[must_use]
pub fn window_us(window: std::time::Duration) -> u64 {
    u64::try_from(window.as_micros()).unwrap_or(u64::MAX)
}

/// Counts per bin of `bin_us` from `start_us` to `end_us` (for time-series charts).
#[must_use]
pub fn bin_counts(times_us: &[u64], start_us: u64, end_us: u64, bin_us: u64) -> Vec<u32> {
    let bin_us = bin_us.max(1);
    let bins = end_us.saturating_sub(start_us).div_ceil(bin_us).max(1) as usize;
    let mut out = vec![0u32; bins];
    for &t in times_us {
        if t < start_us || t > end_us {
            continue;
        }
        let i = (((t - start_us) / bin_us) as usize).min(bins - 1);
        out[i] += 1;
    }
    out
}

/// The sub-slice of a sorted series within [from_us, to_us].
#[must_use]
pub fn within(times_us: &[u64], from_us: u64, to_us: u64) -> &[u64] {
    let a = times_us.partition_point(|&t| t < from_us);
    let b = times_us.partition_point(|&t| t <= to_us);
    &times_us[a..b.max(a)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute(times: &[u64], w: u64) -> u64 {
        // Every start (events and in between: event times minus W cover the rest).
        let mut starts: Vec<u64> = times.to_vec();
        starts.extend(times.iter().map(|t| t.saturating_sub(w)));
        starts
            .into_iter()
            .map(|s| times.iter().filter(|&&t| t >= s && t <= s + w).count() as u64)
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn both_ends_of_a_window_are_inside_it() {
        assert_eq!(windowed_max(&[0, 10], 10).count, 2);
        assert_eq!(windowed_max(&[0, 11], 10).count, 1);
        assert_eq!(windowed_max(&[], 10), WindowMax::default());
        assert_eq!(window_us(std::time::Duration::from_millis(1500)), 1_500_000);
        assert_eq!(window_us(std::time::Duration::MAX), u64::MAX);
    }

    #[test]
    fn the_busiest_window_reports_where_it_starts() {
        let w = windowed_max(&[0, 100, 200, 201, 202, 203], 5);
        assert_eq!(
            w,
            WindowMax {
                count: 4,
                start_us: 200
            }
        );
    }

    #[test]
    fn bins_cover_the_range_and_count_every_event_inside_it() {
        assert_eq!(
            bin_counts(
                &[0, 1, 999_999, 1_000_000, 2_500_000],
                0,
                3_000_000,
                1_000_000
            ),
            vec![3, 1, 1]
        );
        assert_eq!(within(&[1, 2, 3, 4], 2, 3), &[2, 3]);
    }

    proptest! {
        #[test]
        fn the_sweep_equals_brute_force_over_every_start(mut times in proptest::collection::vec(0u64..2_000, 0..60), w in 0u64..300) {
            times.sort_unstable();
            prop_assert_eq!(windowed_max(&times, w).count, brute(&times, w));
        }
    }
}
