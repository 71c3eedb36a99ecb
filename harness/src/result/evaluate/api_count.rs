//! What an API-request verdict can say given how the requests were counted and whether the
//! server held the provider back.

use crate::predict::fmt_num;
use crate::result::model::{ApiCount, Outcome, ServerThrottling, Verdict};

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
        let s = crate::scenario::parse(S, "api.yaml").expect("valid");
        let plan = crate::predict::plan(&s);
        let mut obs = Observations {
            duration_us: 10_000_000,
            phases: vec![PhaseSpan::complete("hold", 0, 10_000_000)],
            api_requests: (0..n)
                .map(|i| ApiRequest {
                    at_us: i * 1_000,
                    verb: "get".into(),
                    resource: Some("secrets".into()),
                    from_provider: true,
                    object: None,
                    main_write: false,
                })
                .collect(),
            ..Observations::default()
        };
        obs.run.api_count = count;
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
