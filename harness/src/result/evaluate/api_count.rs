//! What an API-request verdict can say given how the requests were counted and whether the
//! server held the provider back.

use std::time::Duration;

use crate::measure::window_us;
use crate::predict::fmt_num;
use crate::result::model::{ApiCount, Outcome, ServerThrottling, Verdict};
use crate::result::observe::Observations;

/// The provider's requests that a source dated at its reads of the server's counters,
/// one entry per read: `(sent_from_us, dated_us, n)`, the `n` requests the read dated at
/// `dated_us` having been sent no earlier than `sent_from_us` (the start of the read
/// before, less the longest request `longest_s`). Sorted by date; empty for a source with
/// each request's own time.
#[must_use]
pub(super) fn dated_reads(obs: &Observations) -> Vec<(u64, u64, u64)> {
    let longest_us = window_us(Duration::from_secs_f64(
        obs.run.api_longest_request_s.unwrap_or(0.0).max(0.0),
    ));
    let mut by_read = std::collections::BTreeMap::<(u64, u64), u64>::new();
    for r in obs.api_requests.iter().filter(|r| r.from_provider) {
        let Some(from) = r.sent_from_us else {
            continue;
        };
        *by_read
            .entry((r.at_us, from.saturating_sub(longest_us)))
            .or_default() += 1;
    }
    by_read
        .into_iter()
        .map(|((dated, from), n)| (from, dated, n))
        .collect()
}

/// An API-request verdict from a source that dates each request at the read of the
/// server's counters that first counted it (`reads`, from [`dated_reads`], those dated
/// within the check's range; empty for a source with each request's own time). A request
/// read at `dated` was sent within `[sent_from, dated]`, so the most requests sent in any
/// `window` lie between the most reads whose whole span fits in one `window` hold and the
/// most reads whose span meets one `window` hold. The check passes when the upper end is
/// within the limit and fails when the lower end is past it; between the two it is
/// UNMEASURED, with the band in the note.
pub(super) fn judged_by_dates(
    mut v: Verdict,
    reads: &[(u64, u64, u64)],
    window: Duration,
) -> Verdict {
    if reads.is_empty() || v.limit.is_nan() {
        return v;
    }
    let (low, high) = band(reads, window_us(window));
    if low == high {
        return v;
    }
    let band = format!(
        "the requests were dated at reads of the server's counters, each sent between the start of the read before (less the longest request) and its own read, so the most sent in any {} s is between {low} and {high}",
        fmt_num(window.as_secs_f64()),
    );
    if (high as f64) <= v.limit {
        v.pass = true;
    } else if (low as f64) > v.limit {
        v.pass = false;
    } else {
        v.pass = true;
        v.outcome = Outcome::Unmeasured;
        v.append_note(format!(
            "UNMEASURED: {band}, and the limit {} lies within that",
            fmt_num(v.limit)
        ));
        return v;
    }
    v.append_note(band);
    v
}

/// The least and the most requests that can have been sent in the busiest window of
/// `w` µs, given each read's `(sent_from, dated, n)` sorted by `dated` (and so by
/// `sent_from`, each read's start following the last's). The most: a window starting at
/// some read's date meets every later read that began before it ended. The least: a
/// window starting at some read's earliest send holds every later read dated before it
/// ended (and any window holds one request).
fn band(reads: &[(u64, u64, u64)], w: u64) -> (u64, u64) {
    let (mut low, mut high) = (reads.iter().map(|r| r.2).sum::<u64>().min(1), 0);
    for (j, &(from, dated, _)) in reads.iter().enumerate() {
        let met: u64 = reads[j..]
            .iter()
            .take_while(|r| r.0 <= dated.saturating_add(w))
            .map(|r| r.2)
            .sum();
        let held: u64 = reads[j..]
            .iter()
            .filter(|r| r.0 >= from)
            .take_while(|r| r.1 <= from.saturating_add(w))
            .map(|r| r.2)
            .sum();
        (low, high) = (low.max(held), high.max(met));
    }
    (low, high)
}

/// An API-request verdict as far as the count can judge it: a count that may include other
/// clients' requests shows a provider within its bound when it is within, and cannot show
/// it past; a count that may miss some of the provider's shows it past its bound when it
/// is past, and cannot show it within; an unknown count shows neither (UNMEASURED, with
/// the measured figure kept).
pub(super) fn judged_by_count(mut v: Verdict, count: ApiCount) -> Verdict {
    let why = match (count, v.pass) {
        (ApiCount::Exact, _)
        | (ApiCount::MayIncludeOthers, true)
        | (ApiCount::MayMissSome, false) => return v,
        (ApiCount::MayIncludeOthers, false) => {
            "past the limit, but the count includes other clients' requests, so it does not show the provider's past it"
        }
        (ApiCount::MayMissSome, true) => {
            "within the limit, but the count may miss some of the provider's requests, so it does not show the provider's within it"
        }
        (ApiCount::Unknown, _) => {
            "the provider's API requests were not measured apart from other clients' nor in full"
        }
    };
    let why = format!(
        "UNMEASURED: {why} (run.api_requests_measured_by and the run's notes say how they were counted)"
    );
    v.append_note(why);
    v.pass = true;
    v.outcome = Outcome::Unmeasured;
    v
}

/// An API-request verdict of a provider the server held back (429s, requests queued by
/// priority and fairness): within its bound it is not within by its own merit, since the
/// server let through less than it sent or later than it sent it, so it is UNMEASURED with
/// what the server did; past its bound it fails as it is.
pub(super) fn held_back_by_the_server(mut v: Verdict, th: Option<&ServerThrottling>) -> Verdict {
    let Some(th) = th.filter(|t| t.held_back()) else {
        return v;
    };
    let what = format!(
        "the server held the provider back ({} requests rejected with 429, {} queued more than 5 ms, {} s of waiting in all, at priority level {})",
        th.rejected,
        th.queued,
        fmt_num(th.queued_s),
        th.priority_level
    );
    let why = if v.pass && v.outcome != Outcome::Unmeasured {
        v.outcome = Outcome::Unmeasured;
        format!("UNMEASURED: within the limit, but {what}, so not by the provider's own limits")
    } else {
        what
    };
    v.append_note(why);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::evaluate;
    use crate::result::model::ApiRequestCount;
    use crate::result::observe::Observations;
    use crate::result::observe::{ApiRequest, PhaseSpan};

    const S: &str = "apiVersion: harness/v1\nname: api\nprovider: {maxReconcileRate: 10}\nresources:\n  - {name: b, kind: Bucket, count: 1}\nphases:\n  - {name: hold, action: hold, duration: 10s}\nassertions:\n  - {check: apiRequests, window: 1s, max: 5}\n";

    /// `n` of the provider's requests in the first second, counted as `count` says.
    fn verdict(n: u64, count: ApiCount) -> Verdict {
        let times: Vec<u64> = (0..n).map(|i| i * 1_000).collect();
        verdict_at(&times, count, None)
    }

    /// The provider's requests at `times` (µs), counted as `count` says; with `delay`,
    /// dated at reads that began `delay` seconds before (so sent that long before at most).
    fn verdict_at(times: &[u64], count: ApiCount, delay: Option<f64>) -> Verdict {
        let n = times.len() as u64;
        let s = crate::scenario::parse(S, "api.yaml").expect("valid");
        let plan = crate::predict::plan(&s);
        let mut obs = Observations {
            duration_us: 10_000_000,
            phases: vec![PhaseSpan::complete("hold", 0, 10_000_000)],
            api_requests: times
                .iter()
                .map(|&at_us| ApiRequest {
                    at_us,
                    verb: "get".into(),
                    resource: Some("secrets".into()),
                    from_provider: true,
                    object: None,
                    main_write: false,
                    sent_from_us: delay.map(|d| at_us - (d * 1e6) as u64),
                })
                .collect(),
            ..Observations::default()
        };
        obs.run.api_count = count;
        obs.run.api_longest_request_s = delay.map(|_| 0.0);
        let r = evaluate(&s, &plan, &obs);
        assert_eq!(
            r.api_requests_by,
            [ApiRequestCount {
                verb: "get".into(),
                resource: "secrets".into(),
                count: n
            }]
        );
        r.verdicts[0].clone()
    }

    /// Requests dated at reads 0.2 s apart at most (a read every 0.1 s, none slower than
    /// 0.1 s): a window's count is judged by the band the dating puts around it, against
    /// the limit of 5 in any second.
    #[test]
    fn requests_dated_at_reads_are_judged_by_the_band_their_dates_allow() {
        let at = |groups: &[(u64, u64)]| -> Vec<u64> {
            groups
                .iter()
                .flat_map(|&(n, us)| std::iter::repeat_n(us, n as usize))
                .collect()
        };
        let delay = Some(0.2);
        // 2 dated at 1 s and 2 at 2.1 s: at most 4 sent in any second, within 5.
        let v = verdict_at(
            &at(&[(2, 1_000_000), (2, 2_100_000)]),
            ApiCount::Exact,
            delay,
        );
        assert_eq!((v.outcome, v.observed), (Outcome::Pass, 2.0), "{v:?}");
        assert!(
            v.note.as_deref().unwrap_or_default().contains(
                "the requests were dated at reads of the server's counters, each sent between the start of the read before (less the longest request) and its own read, so the most sent in any 1 s is between 2 and 4"
            ),
            "{v:?}"
        );
        // 4 and 2: dated, no second holds more than 4, but the 6 may have been sent
        // within one second: the limit lies in the band.
        let v = verdict_at(
            &at(&[(4, 1_000_000), (2, 2_100_000)]),
            ApiCount::Exact,
            delay,
        );
        assert_eq!(
            (v.outcome, v.pass, v.observed),
            (Outcome::Unmeasured, true, 4.0)
        );
        assert!(
            v.note.as_deref().unwrap_or_default().contains(
                "UNMEASURED: the requests were dated at reads of the server's counters, each sent between the start of the read before (less the longest request) and its own read, so the most sent in any 1 s is between 4 and 6, and the limit 5 lies within that"
            ),
            "{v:?}"
        );
        // 6 and 1: 6 were sent within 0.2 s of each other: past the limit whatever the
        // dates hide.
        let v = verdict_at(
            &at(&[(6, 1_000_000), (1, 2_100_000)]),
            ApiCount::Exact,
            delay,
        );
        assert_eq!((v.outcome, v.pass), (Outcome::Fail, false), "{v:?}");
        // Reads so far apart that no window of sent requests is bounded from below but by
        // one request: 4 dated at one read are not known to be in one second.
        let v = verdict_at(&at(&[(4, 3_000_000)]), ApiCount::Exact, Some(1.5));
        assert!(
            v.note
                .as_deref()
                .unwrap_or_default()
                .contains("between 1 and 4"),
            "{v:?}"
        );
        // A source with each request's own time: no band.
        let v = verdict_at(
            &at(&[(4, 1_000_000), (2, 2_100_000)]),
            ApiCount::Exact,
            None,
        );
        assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
        assert!(!v.note.unwrap_or_default().contains("dated at reads"));
        // A count that may include others, past its limit only in the band's upper end:
        // UNMEASURED by the band (a pass by the count's rule would hide it).
        let v = verdict_at(
            &at(&[(4, 1_000_000), (2, 2_100_000)]),
            ApiCount::MayIncludeOthers,
            delay,
        );
        assert_eq!(v.outcome, Outcome::Unmeasured, "{v:?}");
    }

    #[test]
    fn a_provider_the_server_held_back_is_not_within_its_budget_by_its_own_merit() {
        let held = ServerThrottling {
            priority_level: "tiny".into(),
            rejected: 2,
            queued: 5,
            queued_s: 1.5,
        };
        let within = held_back_by_the_server(verdict(4, ApiCount::Exact), Some(&held));
        assert_eq!(within.outcome, Outcome::Unmeasured, "{within:?}");
        assert!(
            within.note.as_deref().unwrap_or_default().contains(
                "UNMEASURED: within the limit, but the server held the provider back (2 requests rejected with 429, 5 queued more than 5 ms, 1.5 s of waiting in all, at priority level tiny)"
            ),
            "{within:?}"
        );
        let past = held_back_by_the_server(verdict(7, ApiCount::Exact), Some(&held));
        assert_eq!(
            (past.outcome, past.pass),
            (Outcome::Fail, false),
            "{past:?}"
        );
        let free = ServerThrottling {
            priority_level: "tiny".into(),
            ..ServerThrottling::default()
        };
        let v = held_back_by_the_server(verdict(4, ApiCount::Exact), Some(&free));
        assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
    }

    #[test]
    fn a_count_that_cannot_judge_the_provider_is_unmeasured_on_the_side_it_cannot_judge() {
        use ApiCount::{Exact, MayIncludeOthers, MayMissSome, Unknown};
        // (observed, count) → outcome: within the limit of 5 at 4, past it at 7.
        for (n, count, outcome) in [
            (4, Exact, Outcome::Pass),
            (7, Exact, Outcome::Fail),
            (4, MayIncludeOthers, Outcome::Pass),
            (7, MayIncludeOthers, Outcome::Unmeasured),
            (4, MayMissSome, Outcome::Unmeasured),
            (7, MayMissSome, Outcome::Fail),
            (4, Unknown, Outcome::Unmeasured),
            (7, Unknown, Outcome::Unmeasured),
        ] {
            let v = verdict(n, count);
            let got = if v.outcome == Outcome::Unmeasured {
                Outcome::Unmeasured
            } else if v.pass {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            assert_eq!(got, outcome, "{n} {count:?}: {v:?}");
            assert_eq!(v.observed, n as f64);
            if outcome == Outcome::Unmeasured {
                assert!(v.pass, "not a failure unless --strict");
                assert!(
                    v.note
                        .as_deref()
                        .unwrap_or_default()
                        .contains("UNMEASURED: "),
                    "{v:?}"
                );
            }
        }
    }
}
