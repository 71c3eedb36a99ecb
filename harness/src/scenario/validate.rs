//! From [`RawScenario`] to [`Scenario`]: every value checked, every problem collected with its
//! place, in file order.

use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroU32;
use std::time::Duration;

use limiter::crossplane::{POLL_INTERVAL_ANNOTATION, RateLimitModel, Settings};
use limiter::go::GoDuration;
use serde_saphyr::Spanned;

use super::error::{Pos, Problem};
use super::model::{
    Account, Action, ApiCosts, Assertion, Check, Classes, Cloud, ErrorFault, Latency, Phase,
    PredictionInputs, Provisioning, Quota, ResourceGroup, Scenario, TtrLimit,
};
use super::raw::{
    ActionName, CheckName, Kind, ModelName, RawAssertion, RawBucket, RawClasses, RawCloud,
    RawErrors, RawGroup, RawLatency, RawPhase, RawPrediction, RawProvider, RawQuotas, RawScenario,
    Target, Until,
};
use super::template::{Template, check_json};

/// The format version this harness reads.
pub const API_VERSION: &str = "harness/v1";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_WINDOW: Duration = Duration::from_secs(10);

fn pos<T>(s: &Spanned<T>) -> Pos {
    Pos::of(&s.referenced)
}

#[derive(Default)]
struct Checker {
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
}

impl Checker {
    fn err(&mut self, at: Pos, message: impl Into<String>) {
        self.problems.push(Problem::new(at, message));
    }

    fn duration(&mut self, s: &Spanned<String>, what: &str) -> Option<Duration> {
        match GoDuration::parse(s.value.trim()) {
            Ok(d) if d < GoDuration::ZERO => {
                self.err(
                    pos(s),
                    format!("{what} {:?} is negative, expected a duration ≥ 0", s.value),
                );
                None
            }
            Ok(d) => Some(d.to_std()),
            Err(e) => {
                self.err(
                    pos(s),
                    format!("{what}: {e}, expected a Go duration such as 500ms, 10s, 1m or 1h30m"),
                );
                None
            }
        }
    }

    fn positive_duration(&mut self, s: &Spanned<String>, what: &str) -> Option<Duration> {
        let d = self.duration(s, what)?;
        if d.is_zero() {
            self.err(pos(s), format!("{what} is zero, expected a duration > 0"));
            return None;
        }
        Some(d)
    }

    fn opt_duration(
        &mut self,
        s: Option<&Spanned<String>>,
        what: &str,
        default: Duration,
    ) -> Duration {
        s.and_then(|s| self.positive_duration(s, what))
            .unwrap_or(default)
    }

    fn name(&mut self, s: &Spanned<String>, what: &str) {
        let ok = !s.value.is_empty()
            && s.value.len() <= 63
            && s.value
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !s.value.starts_with('-')
            && !s.value.ends_with('-');
        if !ok {
            self.err(
                pos(s),
                format!("{what} {:?} is not a DNS label, expected 1-63 of a-z, 0-9 and `-`, not starting or ending with `-`", s.value),
            );
        }
    }

    fn range(
        &mut self,
        s: &Spanned<f64>,
        what: &str,
        lo: f64,
        lo_open: bool,
        hi: f64,
    ) -> Option<f64> {
        let v = s.value;
        let ok = v.is_finite() && (if lo_open { v > lo } else { v >= lo }) && v <= hi;
        if ok {
            Some(v)
        } else {
            let open = if lo_open { "(" } else { "[" };
            let hi_s = if hi.is_infinite() {
                "∞)".to_owned()
            } else {
                format!("{hi}]")
            };
            self.err(
                pos(s),
                format!("{what} {v} is out of range, expected a number in {open}{lo}, {hi_s}"),
            );
            None
        }
    }
}

/// Validates a parsed scenario. `file` names it in errors.
///
/// # Errors
/// Every problem found, in file order.
pub fn validate(raw: RawScenario, file: &str) -> Result<Scenario, Vec<Problem>> {
    let mut c = Checker::default();
    if raw.api_version.value != API_VERSION {
        c.err(
            pos(&raw.api_version),
            format!(
                "unsupported apiVersion {:?}, expected {API_VERSION:?}",
                raw.api_version.value
            ),
        );
    }
    c.name(&raw.name, "scenario name");
    let settings = provider(&mut c, &raw.provider);
    let prediction = prediction(&mut c, &raw.prediction);
    let cloud = cloud(&mut c, &raw.cloud);
    let groups = groups(&mut c, &raw, &cloud, &settings);
    let phases = phases(&mut c, &raw.phases, &groups, &raw.name);
    let assertions = assertions(&mut c, &raw.assertions, &phases, &cloud);
    let Checker {
        mut problems,
        warnings,
    } = c;
    if !problems.is_empty() {
        problems.sort_by_key(|p| (p.pos.line, p.pos.column));
        return Err(problems);
    }
    Ok(Scenario {
        file: file.to_owned(),
        name: raw.name.value,
        description: raw.description.unwrap_or_default(),
        seed: raw.seed.unwrap_or(1),
        target: raw.target.map_or(Target::Embedded, |t| t.value),
        settings,
        prediction,
        cloud,
        groups,
        phases,
        assertions,
        warnings,
    })
}

fn provider(c: &mut Checker, raw: &RawProvider) -> Settings {
    let mut s = Settings::default();
    if let Some(r) = &raw.max_reconcile_rate {
        match NonZeroU32::new(r.value) {
            Some(r) => s.max_reconcile_rate = r,
            None => c.err(pos(r), "maxReconcileRate is 0, expected an integer ≥ 1"),
        }
    }
    if let Some(m) = &raw.rate_limit_model {
        s.model = match m.value {
            ModelName::Crossplane => RateLimitModel::Crossplane,
            ModelName::InQueue => RateLimitModel::InQueue,
            ModelName::ControllerRuntime => RateLimitModel::ControllerRuntime,
            ModelName::ConcurrencyOnly => RateLimitModel::ConcurrencyOnly,
        };
    }
    if let Some(p) = &raw.poll_interval {
        s.poll_interval = c
            .positive_duration(p, "pollInterval")
            .unwrap_or(s.poll_interval);
    }
    if let Some(j) = &raw.poll_jitter_percent {
        if j.value >= 100 {
            c.err(
                pos(j),
                format!(
                    "pollJitterPercent {} is too large, expected 0 to 99",
                    j.value
                ),
            );
        } else {
            s.poll_jitter_percent = j.value;
        }
    }
    if let Some(m) = &raw.min_poll_interval {
        s.min_poll_interval = c
            .positive_duration(m, "minPollInterval")
            .unwrap_or(s.min_poll_interval);
    }
    s
}

fn prediction(c: &mut Checker, raw: &RawPrediction) -> PredictionInputs {
    let d = PredictionInputs::default();
    let mean = c.opt_duration(
        raw.reconcile_duration.as_ref(),
        "reconcileDuration",
        d.reconcile,
    );
    let min = raw
        .min_reconcile_duration
        .as_ref()
        .and_then(|s| c.duration(s, "minReconcileDuration"))
        .unwrap_or(mean);
    let max = raw
        .max_reconcile_duration
        .as_ref()
        .and_then(|s| c.duration(s, "maxReconcileDuration"))
        .unwrap_or(mean);
    if min > mean
        && let Some(s) = &raw.min_reconcile_duration
    {
        c.err(
            pos(s),
            "minReconcileDuration is above reconcileDuration, expected min ≤ mean ≤ max",
        );
    }
    if max < mean
        && let Some(s) = &raw.max_reconcile_duration
    {
        c.err(
            pos(s),
            "maxReconcileDuration is below reconcileDuration, expected min ≤ mean ≤ max",
        );
    }
    let alpha = raw
        .alpha
        .as_ref()
        .and_then(|a| c.range(a, "alpha", 0.0, true, 0.5))
        .unwrap_or(d.alpha);
    let a = &raw.api_per_reconcile;
    let def = ApiCosts::default();
    PredictionInputs {
        reconcile: mean,
        min_reconcile: min,
        max_reconcile: max,
        self_event: raw.self_event.unwrap_or(d.self_event),
        alpha,
        api: ApiCosts {
            poll: a.poll.unwrap_or(def.poll),
            resync: a.resync.unwrap_or(def.resync),
            create: a.create.unwrap_or(def.create),
            observe: a.observe.unwrap_or(def.observe),
            update: a.update.unwrap_or(def.update),
            delete: a.delete.unwrap_or(def.delete),
            error: a.error.unwrap_or(def.error),
            before_create: a.before_create.unwrap_or(def.before_create),
        },
    }
}

fn bucket(c: &mut Checker, b: &RawBucket) -> Option<Quota> {
    let burst = c.range(&b.burst, "burst", 1.0, false, f64::INFINITY);
    let per_second = c.range(&b.per_second, "perSecond", 0.0, true, f64::INFINITY);
    Some(Quota {
        burst: burst?,
        per_second: per_second?,
    })
}

fn quotas(c: &mut Checker, raw: &RawQuotas, base: &Classes<Quota>) -> Classes<Quota> {
    let mut one = |r: &Option<RawBucket>, b: &Option<Quota>| match r {
        Some(r) => bucket(c, r),
        None => *b,
    };
    Classes {
        read: one(&raw.read, &base.read),
        list: one(&raw.list, &base.list),
        mutate: one(&raw.mutate, &base.mutate),
        delete: one(&raw.delete, &base.delete),
    }
}

fn latency(c: &mut Checker, raw: &RawLatency, at: Pos) -> Option<Latency> {
    let given = usize::from(raw.fixed.is_some())
        + usize::from(raw.uniform.is_some())
        + usize::from(raw.lognormal.is_some());
    if given != 1 {
        c.err(at, format!("latency has {given} distributions, expected exactly one of fixed, uniform, lognormal"));
        return None;
    }
    if let Some(f) = &raw.fixed {
        return c.duration(f, "fixed latency").map(Latency::Fixed);
    }
    if let Some(u) = &raw.uniform {
        let (min, max) = (
            c.duration(&u.min, "uniform min")?,
            c.duration(&u.max, "uniform max")?,
        );
        if max < min {
            c.err(pos(&u.max), "uniform max is below min, expected min ≤ max");
            return None;
        }
        return Some(Latency::Uniform { min, max });
    }
    let l = raw.lognormal.as_ref()?;
    let median = c.duration(&l.median, "lognormal median")?;
    let sigma = c.range(&l.sigma, "sigma", 0.0, false, 10.0)?;
    Some(Latency::Lognormal { median, sigma })
}

fn latencies(c: &mut Checker, raw: &RawClasses<RawLatency>, at: Pos) -> Classes<Latency> {
    let mut one = |r: &Option<RawLatency>| r.as_ref().and_then(|r| latency(c, r, at));
    Classes {
        read: one(&raw.read),
        list: one(&raw.list),
        mutate: one(&raw.mutate),
        delete: one(&raw.delete),
    }
}

fn errors(c: &mut Checker, raw: &RawClasses<RawErrors>) -> Classes<ErrorFault> {
    let mut one = |r: &Option<RawErrors>| {
        let r = r.as_ref()?;
        let rate = c.range(&r.rate, "error rate", 0.0, false, 1.0)?;
        let status = status(c, r.status.as_ref())?;
        Some(ErrorFault { rate, status })
    };
    Classes {
        read: one(&raw.read),
        list: one(&raw.list),
        mutate: one(&raw.mutate),
        delete: one(&raw.delete),
    }
}

fn status(c: &mut Checker, s: Option<&Spanned<u16>>) -> Option<u16> {
    match s {
        None => Some(503),
        Some(s) if s.value == 500 || s.value == 503 => Some(s.value),
        Some(s) => {
            c.err(
                pos(s),
                format!("status {} is not injectable, expected 500 or 503", s.value),
            );
            None
        }
    }
}

fn cloud(c: &mut Checker, raw: &RawCloud) -> Cloud {
    let base = quotas(c, &raw.quotas, &Classes::default());
    let mut seen = BTreeSet::new();
    let mut accounts = Vec::new();
    for a in &raw.accounts {
        let n = &a.name.value;
        let ok = !n.is_empty()
            && n.len() <= 64
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !ok {
            c.err(
                pos(&a.name),
                format!("account name {n:?} is invalid, expected 1-64 of a-z A-Z 0-9 - _ ."),
            );
        }
        if !seen.insert(n.clone()) {
            c.err(
                pos(&a.name),
                format!("account {n:?} is defined twice, expected unique names"),
            );
        }
        accounts.push(Account {
            name: n.clone(),
            quotas: quotas(c, &a.quotas, &base),
        });
    }
    if accounts.is_empty() {
        accounts.push(Account {
            name: "default".to_owned(),
            quotas: base,
        });
    }
    let prov = Provisioning::default();
    Cloud {
        accounts,
        latency: latencies(c, &raw.latency, Pos { line: 1, column: 1 }),
        errors: errors(c, &raw.errors),
        provisioning: Provisioning {
            database_create: raw
                .provisioning
                .database_create
                .as_ref()
                .and_then(|d| c.duration(d, "databaseCreate"))
                .unwrap_or(prov.database_create),
            database_delete: raw
                .provisioning
                .database_delete
                .as_ref()
                .and_then(|d| c.duration(d, "databaseDelete"))
                .unwrap_or(prov.database_delete),
        },
    }
}

fn template(c: &mut Checker, s: &Spanned<String>) -> Option<Template> {
    Template::parse(&s.value)
        .map_err(|e| c.err(pos(s), e.to_string()))
        .ok()
}

fn groups(
    c: &mut Checker,
    raw: &RawScenario,
    cloud: &Cloud,
    settings: &Settings,
) -> Vec<ResourceGroup> {
    if raw.resources.is_empty() {
        c.err(
            pos(&raw.name),
            "resources is empty, expected at least one group",
        );
    }
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    for g in &raw.resources {
        out.extend(group(c, g, cloud, settings, &raw.name.value, &mut names));
    }
    out
}

fn group(
    c: &mut Checker,
    g: &RawGroup,
    cloud: &Cloud,
    settings: &Settings,
    scenario: &str,
    names: &mut BTreeSet<String>,
) -> Option<ResourceGroup> {
    c.name(&g.name, "group name");
    if !names.insert(g.name.value.clone()) {
        c.err(
            pos(&g.name),
            format!(
                "group {:?} is defined twice, expected unique names",
                g.name.value
            ),
        );
    }
    if g.count.value == 0 {
        c.err(pos(&g.count), "count is 0, expected at least 1");
    }
    let account = match &g.account {
        Some(a) if cloud.account(&a.value).is_none() => {
            let known: Vec<_> = cloud.accounts.iter().map(|a| a.name.as_str()).collect();
            c.err(
                pos(a),
                format!(
                    "unknown account {:?}, expected one of {}",
                    a.value,
                    known.join(", ")
                ),
            );
            None
        }
        Some(a) => Some(a.value.clone()),
        None => Some(cloud.accounts[0].name.clone()),
    };
    let name_pattern = match &g.name_pattern {
        Some(p) => {
            let t = template(c, p);
            if let Some(t) = &t
                && g.count.value > 1
                && !t.uses_index()
            {
                c.err(
                    pos(p),
                    "namePattern gives every resource the same name, expected it to use {{index}}",
                );
            }
            t
        }
        None => Template::parse("{{group}}-{{index}}").ok(),
    };
    let spec = match &g.spec {
        Some(s) => {
            if let Err(e) = check_json(&s.value) {
                c.err(pos(s), format!("spec: {e}"));
            }
            s.value.clone()
        }
        None => default_spec(g.kind.value),
    };
    let mut annotations = Vec::new();
    let mut next = 0u32;
    let mut total = 0.0;
    for share in &g.annotations {
        let Some(pct) = c.range(&share.percent, "percent", 0.0, true, 100.0) else {
            continue;
        };
        total += pct;
        if total > 100.0 + 1e-9 {
            c.err(
                pos(&share.percent),
                format!("annotation shares add up to {total}%, expected at most 100%"),
            );
            continue;
        }
        let end = ((total / 100.0) * f64::from(g.count.value)).round() as u32;
        let mut values = BTreeMap::new();
        for (k, v) in &share.values.value {
            match Template::parse(v) {
                Ok(t) => {
                    if k == POLL_INTERVAL_ANNOTATION {
                        let sample = t.render(super::template::Vars {
                            index: next,
                            group: &g.name.value,
                            scenario,
                        });
                        let eff = settings.effective_poll(Some(&sample));
                        if let Some(r) = eff.rejected {
                            c.warnings.push(Problem::new(
                                pos(&share.values),
                                format!(
                                    "{r}: those resources poll at the default {}",
                                    GoDuration::from_std(settings.poll_interval)
                                ),
                            ));
                        } else if eff.clamped {
                            c.warnings.push(Problem::new(pos(&share.values), format!("{POLL_INTERVAL_ANNOTATION} {sample:?} is below minPollInterval: clamped to {}", GoDuration::from_std(eff.interval))));
                        }
                    }
                    values.insert(k.clone(), t);
                }
                Err(e) => c.err(pos(&share.values), format!("annotation {k}: {e}")),
            }
        }
        annotations.push(super::model::AnnotationShare {
            start: next,
            end,
            values,
        });
        next = end;
    }
    Some(ResourceGroup {
        name: g.name.value.clone(),
        kind: g.kind.value,
        count: g.count.value,
        account: account?,
        name_pattern: name_pattern?,
        spec,
        annotations,
    })
}

/// Which optional phase fields an action takes.
fn allowed(action: ActionName) -> &'static [&'static str] {
    match action {
        ActionName::Create | ActionName::Resync | ActionName::Delete => &["rate", "groups"],
        ActionName::Update => &["rate", "groups", "spec"],
        ActionName::Hold => &["duration"],
        ActionName::CloudOutage => &["duration", "status"],
        ActionName::CloudLatency => &["duration", "latency"],
        ActionName::Restart => &[],
    }
}

fn action_str(a: ActionName) -> &'static str {
    match a {
        ActionName::Create => "create",
        ActionName::Hold => "hold",
        ActionName::Resync => "resync",
        ActionName::Update => "update",
        ActionName::CloudOutage => "cloudOutage",
        ActionName::CloudLatency => "cloudLatency",
        ActionName::Restart => "restart",
        ActionName::Delete => "delete",
    }
}

fn phases(
    c: &mut Checker,
    raw: &[RawPhase],
    groups: &[ResourceGroup],
    scenario: &Spanned<String>,
) -> Vec<Phase> {
    if raw.is_empty() {
        c.err(
            pos(scenario),
            "phases is empty, expected at least one phase",
        );
    }
    let mut names = BTreeSet::new();
    raw.iter()
        .filter_map(|p| phase(c, p, groups, &mut names))
        .collect()
}

fn phase(
    c: &mut Checker,
    p: &RawPhase,
    groups: &[ResourceGroup],
    names: &mut BTreeSet<String>,
) -> Option<Phase> {
    c.name(&p.name, "phase name");
    if !names.insert(p.name.value.clone()) {
        c.err(
            pos(&p.name),
            format!(
                "phase {:?} is defined twice, expected unique names",
                p.name.value
            ),
        );
    }
    let a = p.action.value;
    let ok = allowed(a);
    let present: [(&str, Option<Pos>); 6] = [
        ("rate", p.rate.as_ref().map(pos)),
        ("groups", p.groups.as_ref().and_then(|g| g.first()).map(pos)),
        ("duration", p.duration.as_ref().map(pos)),
        ("spec", p.spec.as_ref().map(pos)),
        ("latency", p.latency.as_ref().map(|_| pos(&p.action))),
        ("status", p.status.as_ref().map(pos)),
    ];
    for (field, at) in present {
        if let Some(at) = at
            && !ok.contains(&field)
        {
            let expected = if ok.is_empty() {
                "no other fields".to_owned()
            } else {
                ok.join(", ")
            };
            c.err(
                at,
                format!(
                    "`{field}` does not apply to a {} phase, expected only {expected}",
                    action_str(a)
                ),
            );
        }
    }
    let rate = p
        .rate
        .as_ref()
        .and_then(|r| c.range(r, "rate", 0.0, true, f64::INFINITY));
    let group_ids: Vec<usize> = match &p.groups {
        None => (0..groups.len()).collect(),
        Some(gs) => gs
            .iter()
            .filter_map(|g| {
                let i = groups.iter().position(|x| x.name == g.value);
                if i.is_none() {
                    let known: Vec<_> = groups.iter().map(|x| x.name.as_str()).collect();
                    c.err(
                        pos(g),
                        format!(
                            "unknown group {:?}, expected one of {}",
                            g.value,
                            known.join(", ")
                        ),
                    );
                }
                i
            })
            .collect(),
    };
    let duration = p
        .duration
        .as_ref()
        .and_then(|d| c.positive_duration(d, "duration"));
    let needs = |c: &mut Checker, field: &str| {
        c.err(
            pos(&p.action),
            format!("a {} phase needs `{field}`", action_str(a)),
        )
    };
    let action = match a {
        ActionName::Create => Action::Create {
            rate,
            groups: group_ids,
        },
        ActionName::Resync => Action::Resync {
            rate,
            groups: group_ids,
        },
        ActionName::Delete => Action::Delete {
            rate,
            groups: group_ids,
        },
        ActionName::Update => {
            let spec = match &p.spec {
                Some(s) => {
                    if let Err(e) = check_json(&s.value) {
                        c.err(pos(s), format!("spec: {e}"));
                    }
                    s.value.clone()
                }
                None => {
                    needs(c, "spec");
                    serde_json::Value::Null
                }
            };
            Action::Update {
                rate,
                groups: group_ids,
                spec,
            }
        }
        ActionName::Hold => match duration {
            Some(duration) => Action::Hold { duration },
            None => {
                if p.duration.is_none() {
                    needs(c, "duration");
                }
                return None;
            }
        },
        ActionName::CloudOutage => {
            let status = status(c, p.status.as_ref())?;
            match duration {
                Some(duration) => Action::CloudOutage { duration, status },
                None => {
                    if p.duration.is_none() {
                        needs(c, "duration");
                    }
                    return None;
                }
            }
        }
        ActionName::CloudLatency => match &p.latency {
            Some(l) => Action::CloudLatency {
                latency: latencies(c, l, pos(&p.action)),
                duration,
            },
            None => {
                needs(c, "latency");
                return None;
            }
        },
        ActionName::Restart => Action::Restart,
    };
    let until = match &p.until {
        Some(u) => {
            if u.value == Until::Elapsed && duration.is_none() {
                c.err(
                    pos(u),
                    format!(
                        "`until: elapsed` needs a duration, and a {} phase has none",
                        action_str(a)
                    ),
                );
            }
            if a == ActionName::Hold && u.value != Until::Elapsed {
                c.err(pos(u), "a hold phase ends when its duration has elapsed, expected `until: elapsed` or no `until`");
            }
            u.value
        }
        None => match a {
            ActionName::Hold => Until::Elapsed,
            ActionName::Resync => Until::AllHandled,
            ActionName::Delete => Until::AllGone,
            _ => Until::AllReady,
        },
    };
    let timeout = c.opt_duration(p.timeout.as_ref(), "timeout", DEFAULT_TIMEOUT);
    if let (Some(d), Some(t)) = (duration, &p.timeout)
        && d > timeout
    {
        c.err(
            pos(t),
            "timeout is shorter than the phase's duration, expected timeout ≥ duration",
        );
    }
    Some(Phase {
        name: p.name.value.clone(),
        action,
        until,
        timeout,
    })
}

fn check_str(k: CheckName) -> &'static str {
    match k {
        CheckName::CloudCalls => "cloudCalls",
        CheckName::ApiRequests => "apiRequests",
        CheckName::SteadyRate => "steadyRate",
        CheckName::Throttles => "throttles",
        CheckName::TimeToReady => "timeToReady",
        CheckName::Orphans => "orphans",
        CheckName::Duplicates => "duplicates",
        CheckName::DrainEfficiency => "drainEfficiency",
    }
}

fn assertions(
    c: &mut Checker,
    raw: &[RawAssertion],
    phases: &[Phase],
    cloud: &Cloud,
) -> Vec<Assertion> {
    raw.iter()
        .filter_map(|a| assertion(c, a, phases, cloud))
        .collect()
}

fn assertion(
    c: &mut Checker,
    a: &RawAssertion,
    phases: &[Phase],
    cloud: &Cloud,
) -> Option<Assertion> {
    let k = a.check.value;
    let allowed: &[&str] = match k {
        CheckName::CloudCalls => &["phase", "account", "window", "max"],
        CheckName::ApiRequests | CheckName::SteadyRate => &["phase", "window", "max"],
        CheckName::Throttles => &["phase", "account", "max"],
        CheckName::TimeToReady => &["phase", "quantile", "tolerancePercent", "maxDuration"],
        CheckName::Orphans | CheckName::Duplicates => &["max"],
        CheckName::DrainEfficiency => &["phase", "min"],
    };
    let present = [
        ("phase", a.phase.as_ref().map(pos)),
        ("account", a.account.as_ref().map(pos)),
        ("window", a.window.as_ref().map(pos)),
        ("max", a.max.as_ref().map(pos)),
        ("maxDuration", a.max_duration.as_ref().map(pos)),
        ("min", a.min.as_ref().map(pos)),
        ("quantile", a.quantile.as_ref().map(pos)),
        ("tolerancePercent", a.tolerance_percent.as_ref().map(pos)),
    ];
    for (field, at) in present {
        if let Some(at) = at
            && !allowed.contains(&field)
        {
            c.err(
                at,
                format!(
                    "`{field}` does not apply to a {} check, expected only {}",
                    check_str(k),
                    allowed.join(", ")
                ),
            );
        }
    }
    let phase = match &a.phase {
        Some(p) => {
            let i = phases.iter().position(|x| x.name == p.value);
            if i.is_none() {
                let known: Vec<_> = phases.iter().map(|x| x.name.as_str()).collect();
                c.err(
                    pos(p),
                    format!(
                        "unknown phase {:?}, expected one of {}",
                        p.value,
                        known.join(", ")
                    ),
                );
                return None;
            }
            i
        }
        None => None,
    };
    let phase_action = phase.map(|i| &phases[i].action);
    let need_phase = |c: &mut Checker, what: &str, ok: bool| -> bool {
        if !ok {
            c.err(
                pos(&a.check),
                format!("a {} check needs `phase` naming {what}", check_str(k)),
            );
        }
        ok
    };
    if let Some(acc) = &a.account
        && cloud.account(&acc.value).is_none()
    {
        let known: Vec<_> = cloud.accounts.iter().map(|a| a.name.as_str()).collect();
        c.err(
            pos(acc),
            format!(
                "unknown account {:?}, expected one of {}",
                acc.value,
                known.join(", ")
            ),
        );
    }
    let window = c.opt_duration(a.window.as_ref(), "window", DEFAULT_WINDOW);
    let max = a
        .max
        .as_ref()
        .and_then(|m| c.range(m, "max", 0.0, false, f64::INFINITY));
    let count = max.map_or(0, |m| m as u64);
    let check = match k {
        CheckName::CloudCalls => Check::CloudCalls { window, max },
        CheckName::ApiRequests => Check::ApiRequests { window, max },
        CheckName::SteadyRate => {
            if !need_phase(
                c,
                "a hold phase",
                matches!(phase_action, Some(Action::Hold { .. })),
            ) {
                return None;
            }
            Check::SteadyRate { window, max }
        }
        CheckName::Throttles => Check::Throttles { max: count },
        CheckName::Orphans => Check::Orphans { max: count },
        CheckName::Duplicates => Check::Duplicates { max: count },
        CheckName::TimeToReady => {
            if !need_phase(
                c,
                "a create phase",
                matches!(phase_action, Some(Action::Create { .. })),
            ) {
                return None;
            }
            let quantile = a
                .quantile
                .as_ref()
                .map_or(Some(0.99), |q| c.range(q, "quantile", 0.0, true, 1.0))?;
            let limit = match (&a.max_duration, &a.tolerance_percent) {
                (Some(d), _) => TtrLimit::Fixed(c.positive_duration(d, "maxDuration")?),
                (None, Some(t)) => TtrLimit::Predicted {
                    tolerance_percent: c.range(t, "tolerancePercent", 0.0, false, f64::INFINITY)?,
                },
                (None, None) => TtrLimit::Predicted {
                    tolerance_percent: 25.0,
                },
            };
            Check::TimeToReady { quantile, limit }
        }
        CheckName::DrainEfficiency => {
            let backlog = matches!(
                phase_action,
                Some(
                    Action::Create { .. }
                        | Action::Resync { .. }
                        | Action::Update { .. }
                        | Action::Delete { .. }
                        | Action::Restart
                )
            );
            if !need_phase(
                c,
                "a create, resync, update, restart or delete phase",
                backlog,
            ) {
                return None;
            }
            let min = a
                .min
                .as_ref()
                .map_or(Some(0.8), |m| c.range(m, "min", 0.0, true, 1.0))?;
            Check::DrainEfficiency { min }
        }
    };
    let name = match &a.name {
        Some(n) => n.value.clone(),
        None => default_name(
            k,
            &check,
            phase.map(|i| phases[i].name.as_str()),
            a.account.as_ref().map(|s| s.value.as_str()),
        ),
    };
    Some(Assertion {
        name,
        check,
        phase,
        account: a.account.as_ref().map(|s| s.value.clone()),
        pos: pos(&a.check),
    })
}

fn default_name(k: CheckName, check: &Check, phase: Option<&str>, account: Option<&str>) -> String {
    let mut n = check_str(k).to_owned();
    match check {
        Check::CloudCalls { window, .. }
        | Check::ApiRequests { window, .. }
        | Check::SteadyRate { window, .. } => {
            n.push_str(&format!(" per {}", GoDuration::from_std(*window)));
        }
        Check::TimeToReady { quantile, .. } => n.push_str(&format!(" p{}", quantile * 100.0)),
        _ => {}
    }
    if let Some(p) = phase {
        n.push_str(&format!(" [{p}]"));
    }
    if let Some(a) = account {
        n.push_str(&format!(" account {a}"));
    }
    n
}

/// The `spec.forProvider` a group gets when it gives none: valid values for the provider's
/// schema, so a scenario can name only a kind and a count.
fn default_spec(kind: Kind) -> serde_json::Value {
    match kind {
        Kind::Bucket => serde_json::json!({"region": "eu-west-1"}),
        Kind::Database => serde_json::json!({"engine": "postgres", "version": "16", "sizeGb": 20}),
        Kind::Record => serde_json::json!({
            "type": "TXT",
            "value": "{{scenario}}-{{group}}-{{index}}",
            "ttl": 300,
        }),
    }
}
