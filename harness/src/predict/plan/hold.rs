//! Hold phases: the steady rate, its band, and the tolerance for the windowed maximum of
//! cloud calls (stationary, or the echo of a recent wave).

use limiter::crossplane::RateLimitModel;

use super::scope::windows;
use super::wave::Wave;
use crate::predict::bounds;
use crate::predict::echo::{self, EchoClass, WaveShape};
use crate::predict::error_paths::{self, WindowExcess};
use crate::predict::formula::{Meaning, Prediction};
use crate::predict::params::Params;
use crate::predict::quota;
use crate::predict::scan;
use crate::predict::steady::{PollClass, Steady};
use crate::scenario::Scenario;

#[allow(clippy::too_many_arguments)]
pub(super) fn hold_predictions(
    s: &Scenario,
    p: &Params,
    alive: &[bool],
    name: &str,
    t: f64,
    cls: &[PollClass],
    st: &Steady,
    wave: Option<(Wave, Vec<PollClass>)>,
    preds: &mut Vec<Prediction>,
) {
    let alpha = s.prediction.alpha;
    let n: f64 = cls.iter().map(|c| c.count).sum();
    preds.push(
        Prediction::new(
            format!("{name}/rate"),
            "expected reconciles (poll calls) per second",
            st.rate,
            "/s",
        )
        .formula(if st.saturated {
            "R (saturated: solve Σ 1/(P_i + L̄ + V) = R)"
        } else {
            "λ = Σ 1/(P_i + L̄)"
        })
        .input("N", n)
        .input("demand", st.demand)
        .input("V", st.wait)
        .input("R", p.r)
        .input("L̄", p.l)
        .meaning(Meaning::Expected)
        .source("[D][S] §3.2, §3.3")
        .phase(Some(name)),
    );
    preds.push(
        Prediction::new(
            format!("{name}/band"),
            "long-run band, high end",
            st.band.1,
            "/s",
        )
        .formula("Σ 1/(P_i − j_i) (low end Σ 1/(P_i + j_i))")
        .input("low", st.band.0)
        .input("high", st.band.1)
        .meaning(Meaning::Expected)
        .source("[D] §3.2")
        .phase(Some(name)),
    );
    preds.push(
        Prediction::new(
            format!("{name}/api-rate"),
            "expected API requests per second",
            st.rate * f64::from(p.api.poll),
            "/s",
        )
        .formula("Σ ā_i/μ_i")
        .input("ā", f64::from(p.api.poll))
        .input("λ", st.rate)
        .meaning(Meaning::Expected)
        .source("[D] §3.2")
        .phase(Some(name)),
    );
    if st.saturated && p.model == RateLimitModel::Crossplane {
        preds.push(
            Prediction::new(
                format!("{name}/flagged"),
                "flagged keys at any instant",
                st.flagged,
                "keys",
            )
            .formula("N_fl = Σ V/(P_i + L̄ + V)")
            .input("V", st.wait)
            .meaning(Meaning::Expected)
            .source("[A][S] §3.3")
            .phase(Some(name)),
        );
    }
    if p.c_poll > 1.0 {
        preds.push(
            Prediction::new(
                format!("{name}/call-rate"),
                "expected cloud calls per second, at most",
                st.rate * p.c_poll,
                "/s",
            )
            .formula("c_poll · λ (every poll makes at most c_poll calls)")
            .input("c_poll", p.c_poll)
            .input("λ", st.rate)
            .meaning(Meaning::Expected)
            .source("[D] §10")
            .phase(Some(name)),
        );
    }
    for w in windows(s) {
        let poll_calls = if p.c_poll > 1.0 {
            // A window of W holds the calls of the polls that start in W + Δ, each at most
            // c_poll of them (§10).
            let inner = steady_tolerance(
                p,
                name,
                w + p.l_max,
                t,
                alpha,
                cls,
                st,
                wave.as_ref(),
                s.retries_possible(),
            );
            let mut out = Prediction::new(
                format!("{name}/steady-max/{w}s"),
                format!("windowed maximum of cloud calls per {w}s in the hold"),
                (p.c_poll * inner.value).ceil(),
                "calls",
            )
            .input("c_poll", p.c_poll)
            .input("W", w)
            .input("Δ", p.l_max)
            .meaning(Meaning::Tolerance)
            .source("[D] §10")
            .phase(Some(name));
            out.formula = format!("c_poll · [{}] with W → W + Δ", inner.formula);
            out.note = Some(format!(
                "the reconcile tolerance is {} ({}); the conditioned echo of §3.6 (b) reads one Get per poll and is not applied",
                inner.value, inner.source
            ));
            out
        } else {
            steady_tolerance(
                p,
                name,
                w,
                t,
                alpha,
                cls,
                st,
                wave.as_ref(),
                s.retries_possible(),
            )
        };
        let failing = error_paths::window_excess(s, p, alive, w);
        preds.push(with_failing(p, poll_calls, &failing, w));
    }
    for account in &s.cloud.accounts {
        let Some(q) = account.quotas.read else {
            continue;
        };
        let share: f64 = s
            .groups
            .iter()
            .filter(|g| g.account == account.name)
            .map(|g| f64::from(g.count))
            .sum::<f64>()
            / n.max(1.0);
        let poll = if st.rate > 0.0 {
            n / st.demand - p.l
        } else {
            0.0
        };
        let (att, acc, rej, period) =
            quota::steady_overload(p, n * share, poll.max(0.0), q.per_second);
        preds.push(
            Prediction::new(
                format!("{name}/quota/{}/read-steady", account.name),
                format!("steady reads of {}: rejected per second", account.name),
                rej,
                "/s",
            )
            .formula("λ = min(R_eff, N/D̄(q)), q = min(1, r_a/λ); rejected = λ − r_a")
            .input("N", n * share)
            .input("P̄", poll)
            .input("r_a", q.per_second)
            .input("attempts", att)
            .input("accepted", acc)
            .input("period", period)
            .meaning(Meaning::Expected)
            .source("[A][S] §6.2")
            .phase(Some(name))
            .account(Some(&account.name)),
        );
    }
}

/// The windowed maximum of a hold's cloud calls with its faulted shares (§9.6): the polled
/// resources' tolerance plus what the shares on the backoff and the drifting ones may add.
/// A bound that counts reconciles through the bucket already holds the failing ones: only
/// their calls beyond one per reconcile are added.
fn with_failing(p: &Params, polls: Prediction, f: &WindowExcess, w: f64) -> Prediction {
    if f.terms.is_empty() && !f.takes_bucket {
        return polls;
    }
    let mut out = polls;
    let by_bucket = f.takes_bucket || out.formula.contains("⌊B + R·W⌋");
    if f.takes_bucket && !out.formula.contains("⌊B + R·W⌋") {
        // Errors requeued at once take what the bucket leaves: all reconciles are paced by it.
        out.value = p.c_poll.max(1.0) * bounds::bucket_window(p.b, p.r, w);
        out.formula = "c_poll·⌊B + R·W⌋ (errors requeued at once take the bucket)".to_owned();
        out.inputs.clear();
        out.note = None;
        out.source = "[A][S] §3.3".to_owned();
        out = out.input("B", p.b).input("R", p.r).input("W", w);
    }
    let add = if by_bucket { f.extra_calls } else { f.calls };
    out.value = (out.value + add).ceil();
    out.formula = format!(
        "{} + Σ faulted ({})",
        out.formula,
        if by_bucket {
            "calls beyond one per reconcile".to_owned()
        } else {
            f.terms.join(" + ")
        }
    );
    out = out
        .input("faulted calls", add)
        .input("Σ n_f/d_max", f.failing_rate);
    out.source = format!("{} §9.6", out.source);
    out
}

/// The tolerance for the windowed maximum of cloud calls in a hold of `t` seconds.
#[allow(clippy::too_many_arguments)]
fn steady_tolerance(
    p: &Params,
    name: &str,
    w: f64,
    t: f64,
    alpha: f64,
    cls: &[PollClass],
    st: &Steady,
    wave: Option<&(Wave, Vec<PollClass>)>,
    retries: bool,
) -> Prediction {
    let id = format!("{name}/steady-max/{w}s");
    let what = format!("windowed maximum of cloud calls per {w}s in the hold");
    if st.saturated && p.has_bucket() {
        return Prediction::new(id, what, bounds::bucket_window(p.b, p.r, w), "calls")
            .formula("⌊B + R·W⌋ (saturated: paced by the bucket)")
            .input("B", p.b)
            .input("R", p.r)
            .input("W", w)
            .meaning(Meaning::Tolerance)
            .source("[A][S] §3.3")
            .phase(Some(name));
    }
    let n: f64 = cls.iter().map(|c| c.count).sum();
    let mu = if st.rate > 0.0 {
        n / st.rate
    } else {
        f64::INFINITY
    };
    let j = p.jitter_of(mu - p.l);
    if wave.is_some() && j <= 0.0 {
        return deterministic_echo(p, (id, what), w, (cls, retries)).phase(Some(name));
    }
    let mut settled_note = None;
    if let Some((wave, wave_cls)) = wave {
        let classes: Vec<EchoClass> = wave_cls
            .iter()
            .map(|c| EchoClass {
                n: c.count,
                interval: c.interval,
                mu: c.interval + p.l + st.wait,
                jitter: p.jitter_of(c.interval),
            })
            .collect();
        let shape = WaveShape {
            spread: wave.spread,
            burst: wave.burst,
        };
        let e = echo::tolerance(st.rate, &classes, &shape, w, t, alpha);
        let (union, _) = scan::union_tolerance(st.rate, w, t, alpha);
        let peaks = e
            .by_cycle
            .iter()
            .map(|(k, m)| format!("{k}: {}", crate::predict::fmt_num(m.round())))
            .collect::<Vec<_>>()
            .join(", ");
        let mut dephased = if e.dephased_cycles.is_finite() {
            format!(
                "it dephases (ripple ≤ 10 %) after {} cycles, {} s after the wave",
                crate::predict::fmt_num(e.dephased_cycles),
                crate::predict::fmt_num(e.dephased_after.round())
            )
        } else {
            "it does not dephase within 2⁴⁰ cycles".to_owned()
        };
        if e.uncovered > 0.0 {
            dephased.push_str(&format!(
                "; {} of its resources poll within W + δ of their last poll (P_i − j_i ≤ W + δ): a window holds two of their cycles, which the echo model does not describe, and they keep their stationary mean",
                crate::predict::fmt_num(e.uncovered)
            ));
        }
        if e.k > union {
            let first = e.by_cycle.first().map_or(0.0, |x| x.1);
            return Prediction::new(id, what, e.k as f64, "calls")
                .formula("least k with Σ_g P(Poisson(m_g) ≥ k) ≤ α over grid windows of W + δ; m_g = λ·(W + δ) + Σ_c n_c·(W + δ)/μ_c·ripple_c(k_g), k_g the window's poll cycle after the wave; ripple_c(k) = 2·min(Σ_m s_m^k·w_m, Σ_m |a_m|·|s_m|^k·|w_m|), s_m = sinc(2πm·j_c/μ_c), w_m = sinc(πm·(W + δ)/μ_c), |a_m| ≤ b₀/N + (1 − b₀/N)·|sinc(πm·D/μ_c)|")
                .input("N", n)
                .input("λ", st.rate)
                .input("N_wave", wave.size)
                .input("D", wave.spread)
                .input("b₀/N", wave.burst)
                .input("busiest W mean", first)
                .input("cycles to 10% ripple", e.dephased_cycles)
                .input("W", w)
                .input("δ", e.delta)
                .input("T", t)
                .input("α", alpha)
                .input("stationary union bound", union as f64)
                .meaning(Meaning::Tolerance)
                .source("[D][A][S] §3.5, §3.6")
                .phase(Some(name))
                .note(format!("the hold follows a wave of {} resources whose polls come back together: its echo, not the stationary count, sets the maximum; the busiest window's mean by poll cycle after the wave is {peaks}; {dephased}; after a run the verdict uses the bound conditioned on the observed last polls (§3.6 b) where it applies", crate::predict::fmt_num(wave.size)));
        }
        settled_note = Some(format!(
            "the wave before the hold echoes (busiest window's mean by poll cycle: {peaks}; {dephased}) within the stationary tolerance"
        ));
    }
    let naus = scan::naus_tolerance(st.rate, w, t, alpha);
    let (union, delta) = scan::union_tolerance(st.rate, w, t, alpha);
    Prediction::new(id, what, naus as f64, "calls")
        .formula(
            "Naus (1982) scan approximation: least k with P(M ≥ k) ≤ α (union bound alongside)",
        )
        .input("λ", st.rate)
        .input("W", w)
        .input("T", t)
        .input("α", alpha)
        .input("union bound", union as f64)
        .input("δ", delta)
        .input("mean", st.rate * w)
        .input("sd", st.window_var.sqrt())
        .meaning(Meaning::Tolerance)
        .source("[D][A][S] §3.4, §3.5")
        .phase(Some(name))
        .note(match settled_note {
            Some(echo) => format!("above Naus: anomaly at level ≈ α; above the union bound: proven at level ≤ α; {echo}"),
            None => "above Naus: anomaly at level ≈ α; above the union bound: proven at level ≤ α".to_owned(),
        })
}

/// A hold after a wave with no jitter (§3.6 with j = 0): every resource keeps the phase the
/// wave's last reconciles gave it, so each poll cycle replays them and the echo never
/// dephases. Those phases follow whichever limiter released the wave's last steps (the API
/// client's, the cloud's latency), so no spread of the wave bounds them: the hard bounds do,
/// the reconciles the bucket and the workers let through in W (§3.3, Lemma 3), and each
/// resource's own polls: one every P_i + L_min at the most, so ⌊W/(P_i + L_min)⌋ + 1 in W,
/// unless the cloud may throttle or fail a call (`retries`), whose retry comes on the
/// backoff, not on the resource's interval.
fn deterministic_echo(
    p: &Params,
    (id, what): (String, String),
    w: f64,
    (cls, retries): (&[PollClass], bool),
) -> Prediction {
    let bucket = if p.has_bucket() {
        bounds::bucket_window(p.b, p.r, w)
    } else {
        f64::INFINITY
    };
    let workers = bounds::worker_cap(p, w);
    let own: f64 = if retries {
        f64::INFINITY
    } else {
        cls.iter()
            .map(|c| c.count * ((w / (c.interval + p.l_min).max(1e-9) + 1e-9).floor() + 1.0))
            .sum()
    };
    let n: f64 = cls.iter().map(|c| c.count).sum();
    let mut pred = Prediction::new(id, what, own.min(bucket).min(workers), "calls");
    if !retries {
        pred = pred.input("Σ_i (⌊W/(P_i + L_min)⌋ + 1)", own);
    }
    pred
        .formula("min(Σ_i (⌊W/(P_i + L_min)⌋ + 1), ⌊B + R·W⌋, Σ_c w·(⌊W/L_min⌋ + 1)) (jitter 0: every cycle replays the wave's phases)")
        .input("N", n)
        .input("B", p.b)
        .input("R", p.r)
        .input("w", p.w)
        .input("L_min", p.l_min)
        .input("W", w)
        .meaning(Meaning::Tolerance)
        .source("[P] §3.3, §3.6")
        .note(if retries {
            "no poll jitter: every cycle replays the phases of the wave's last reconciles, which never dephase; only the hard bounds hold, and not the resources' own intervals, since the cloud may throttle or fail a call and its retry comes on the backoff"
        } else {
            "no poll jitter: every cycle replays the phases of the wave's last reconciles, which never dephase; only the hard bounds hold"
        })
}
