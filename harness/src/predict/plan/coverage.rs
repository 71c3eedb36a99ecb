//! Where the formulas of §3 and §9 stop (docs/budget.md §9.7, §11): the reasons a hold is
//! coupled (the bucket binds while resources fail, a quota rejects polls). Under the
//! `crossplane` model the plan simulates such a hold ([`super::coupled`]); elsewhere it
//! records conditions `PHASE/unmodeled/N` naming the checks they take out of the model's
//! cover, whose verdicts then say UNMODELED with the reason and the measured figure instead of
//! failing against a limit that does not apply.

use limiter::crossplane::RateLimitModel;

use crate::predict::bounds;
use crate::predict::error_paths::WindowExcess;
use crate::predict::fmt_num;
use crate::predict::formula::{Meaning, Prediction};
use crate::predict::params::Params;
use crate::predict::scan;
use crate::predict::steady::Steady;

/// The checks a hold's steady and error-path formulas serve.
const HOLD_CHECKS: [&str; 4] = ["steadyRate", "pollPeriod", "perResourceCalls", "hotLoops"];

/// The windows over which a bucket that binds would show (s).
const BINDING_WINDOWS: [f64; 3] = [1.0, 10.0, 60.0];

/// Whether reconciles arriving at `rate` per second would, at level α over `t` seconds,
/// find the bucket empty in some window: the scan tolerance of the arrivals passes
/// ⌊B + R·W⌋, or the mean rate reaches R.
#[must_use]
pub(super) fn bucket_binds(p: &Params, rate: f64, t: f64, alpha: f64) -> bool {
    if !p.has_bucket() {
        return false;
    }
    rate >= p.r
        || BINDING_WINDOWS.iter().any(|&w| {
            w <= t.max(1.0)
                && scan::naus_tolerance(rate, w, t.max(w), alpha) as f64
                    > bounds::bucket_window(p.b, p.r, w)
        })
}

/// Reasons a hold is coupled, each with the figures it was decided on.
pub(super) type Reasons = Vec<(String, Vec<(&'static str, f64)>)>;

/// Why a hold leaves the formulas of §3 and §9: the bucket binds while resources fail, or a
/// read quota rejects steady polls. Each reason with the figures it was decided on. Under the
/// `crossplane` model the simulation of §9.7 covers both (see [`super::coupled`]); elsewhere
/// they are UNMODELED ([`unmodeled`]).
pub(super) fn coupled_reasons(
    p: &Params,
    name: &str,
    t: f64,
    alpha: f64,
    st: &Steady,
    failing: Option<&WindowExcess>,
    preds: &[Prediction],
) -> Reasons {
    let mut reasons: Reasons = Vec::new();
    if let Some(f) = failing
        && p.model == RateLimitModel::Crossplane
        && !f.off_poll.is_empty()
        && !f.takes_bucket
    {
        let failing_n: f64 = f.off_poll.iter().map(|(_, n)| n).sum();
        // The failing resources at their cap, and the polled ones without waiting.
        let demand = st.demand + f.failing_rate;
        if bucket_binds(p, demand, t, alpha) {
            reasons.push((
                format!(
                    "the global bucket binds (demand {}/s against R = {}/s, burst {}) while {} resources fail: crossplane-runtime's middleware answers a reconcile the bucket delays with RequeueAfter, which resets the per-item backoff, so the failing resources do not follow the backoff ramp A(t) (§9.1)",
                    fmt_num(demand),
                    fmt_num(p.r),
                    fmt_num(p.b),
                    fmt_num(failing_n)
                ),
                vec![("demand", demand), ("R", p.r), ("B", p.b), ("failing", failing_n)],
            ));
        }
    }
    let rejected: f64 = preds
        .iter()
        .filter(|x| x.id.starts_with(&format!("{name}/quota/")) && x.id.ends_with("/read-steady"))
        .map(|x| x.value)
        .sum();
    if rejected > 0.0 {
        reasons.push((
            format!(
                "the cloud's read quota rejects {}/s of the steady polls: a throttled poll fails its reconcile and retries on the per-item backoff",
                fmt_num(rejected)
            ),
            vec![("rejected", rejected)],
        ));
    }
    reasons
}

/// The UNMODELED conditions `PHASE/unmodeled/N` of a hold whose `reasons` no model covers
/// (not the `crossplane` model, or errors requeued at once), each saying why.
pub(super) fn unmodeled(name: &str, reasons: Reasons, why_not: &str, preds: &mut Vec<Prediction>) {
    for (i, (why, inputs)) in reasons.into_iter().enumerate() {
        let mut pred = Prediction::new(
            format!("{name}/unmodeled/{i}"),
            format!("not modelled in this hold: {}", HOLD_CHECKS.join(", ")),
            1.0,
            "",
        )
        .formula("the checks' formulas do not cover the hold (§11)")
        .meaning(Meaning::Condition)
        .source("§11")
        .phase(Some(name))
        .checks(&HOLD_CHECKS)
        .note(format!("{why}; {why_not}"));
        for (k, v) in inputs {
            pred = pred.input(k, v);
        }
        preds.push(pred);
    }
}

#[cfg(test)]
mod tests {
    use crate::predict::plan;
    use crate::scenario::parse;

    /// A hold where the global bucket binds while a share fails, and where a read quota
    /// rejects polls: the mix of features.
    pub(crate) const MIXED: &str = "apiVersion: harness/v1\nname: mixed\nprovider: {maxReconcileRate: 5, pollInterval: 1m}\ncloud:\n  quotas:\n    read: {burst: 20, perSecond: 4}\nresources:\n  - name: b\n    kind: Bucket\n    count: 300\n    annotations: [{percent: 10, values: {crossplane.io/poll-interval: 10s}}]\n    faults: [{percent: 5, error: Conflict}]\nphases:\n  - {name: create, action: create, rate: 20}\n  - {name: hold, action: hold, duration: 1h}\nassertions:\n  - {check: steadyRate, phase: hold}\n  - {check: hotLoops, phase: hold, window: 10m}\n  - {check: cloudCalls, window: 10s}\n";

    fn reasons(yaml: &str) -> Vec<String> {
        let s = parse(yaml, "t.yaml").expect("valid");
        plan(&s)
            .all()
            .filter(|p| p.id.starts_with("hold/unmodeled/"))
            .map(|p| p.note.clone().unwrap_or_default())
            .collect()
    }

    fn ids(yaml: &str, prefix: &str) -> Vec<String> {
        let s = parse(yaml, "t.yaml").expect("valid");
        plan(&s)
            .all()
            .filter(|p| p.id.starts_with(prefix))
            .map(|p| p.id.clone())
            .collect()
    }

    #[test]
    fn the_crossplane_model_simulates_a_binding_bucket_with_failing_resources_and_a_rejecting_quota()
     {
        assert_eq!(reasons(MIXED), Vec::<String>::new());
        let s = parse(MIXED, "t.yaml").expect("valid");
        let plan = plan(&s);
        let regime = plan.find("hold/coupled/regime").expect("coupled");
        let note = regime.note.clone().unwrap_or_default();
        assert!(note.contains("the global bucket binds"), "{note}");
        assert!(note.contains("read quota rejects"), "{note}");
        // The Conflict share comes back at the bucket's pace, far above the ramp's 60 an hour.
        let conflict = plan
            .find("hold/coupled/b/Conflict/calls-per-hour")
            .expect("share");
        assert!(conflict.value > 2.0 * 60.0, "{conflict:?}");
        assert!(
            plan.find("hold/coupled/b/Conflict/per-resource/600s")
                .is_some()
        );
        let steady = plan.find("hold/steady-max/10s").expect("steady");
        assert!(
            steady.formula.contains("the bucket binds"),
            "{}",
            steady.formula
        );
    }

    #[test]
    fn other_models_and_errors_requeued_at_once_keep_the_reasons_unmodeled() {
        let cr = MIXED.replace(
            "provider: {maxReconcileRate: 5,",
            "provider: {rateLimitModel: controller-runtime, maxReconcileRate: 5,",
        );
        let r = reasons(&cr);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].contains("read quota rejects"), "{}", r[0]);
        assert!(r[0].contains("crossplane model"), "{}", r[0]);
        assert!(ids(&cr, "hold/coupled/").is_empty());
    }

    #[test]
    fn a_hold_the_model_covers_has_no_unmodeled_condition() {
        // No failing share, no tight quota: the bucket binds, but the model covers it.
        let covered = MIXED
            .replace("    faults: [{percent: 5, error: Conflict}]\n", "")
            .replace(
                "    read: {burst: 20, perSecond: 4}\n",
                "    read: {burst: 2000, perSecond: 400}\n",
            );
        assert_eq!(reasons(&covered), Vec::<String>::new());
        // Failing resources under a bucket that never binds: the backoff ramp holds.
        let idle = MIXED
            .replace("maxReconcileRate: 5", "maxReconcileRate: 100")
            .replace(
                "    read: {burst: 20, perSecond: 4}\n",
                "    read: {burst: 2000, perSecond: 400}\n",
            );
        assert_eq!(reasons(&idle), Vec::<String>::new());
    }

    #[test]
    fn the_bucket_binds_past_its_burst_and_refill_but_not_well_below_them() {
        let s = parse(MIXED, "t.yaml").expect("valid");
        let p = &plan(&s).phases[1].params;
        assert!(super::bucket_binds(p, 5.0, 3600.0, 0.001));
        assert!(super::bucket_binds(p, 4.9, 3600.0, 0.001));
        assert!(!super::bucket_binds(p, 1.0, 3600.0, 0.001));
    }
}
