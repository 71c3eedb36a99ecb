//! The `cloud` section: accounts, quotas, latencies, injected errors and provisioning times.

use std::collections::BTreeSet;

use mock_cloud::Rate;
use serde_saphyr::Spanned;

use super::checker::Checker;
use super::pos;
use crate::error::Pos;
use crate::model::{Account, Classes, Cloud, ErrorFault, Latency, Provisioning, Quota};
use crate::raw::{RawBucket, RawClasses, RawCloud, RawErrors, RawLatency, RawQuotas};

fn bucket(c: &mut Checker, b: &RawBucket) -> Option<Quota> {
    let burst = c.range(&b.burst, "burst", 1.0, false, f64::INFINITY);
    let per_second = per_second(c, &b.per_second);
    Some(Quota {
        burst: burst?,
        per_second: per_second?,
    })
}

/// A bucket's refill rate, within what mock-cloud's buckets take (`Rate::try_new`): from one
/// token a day to one a nanosecond.
fn per_second(c: &mut Checker, s: &Spanned<f64>) -> Option<f64> {
    let v = s.value;
    if (Rate::MIN_PER_SECOND..=Rate::MAX_PER_SECOND).contains(&v) {
        return Some(v);
    }
    c.err(
        pos(s),
        format!("perSecond {v} is out of range, expected a number from 1/86400 (a token a day) to 1e9 (a token a nanosecond)"),
    );
    None
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

pub(super) fn latencies(
    c: &mut Checker,
    raw: &RawClasses<RawLatency>,
    at: Pos,
) -> Classes<Latency> {
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

pub(super) fn status(c: &mut Checker, s: Option<&Spanned<u16>>) -> Option<u16> {
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

pub(super) fn cloud(c: &mut Checker, raw: &RawCloud) -> Cloud {
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
        c.unique(&mut seen, &a.name, "account");
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
    let latency = latencies(
        c,
        &raw.latency,
        Pos {
            line: 1,
            column: 1,
            source: 0,
        },
    );
    let errors = errors(c, &raw.errors);
    let mut or_default = |d: &Option<Spanned<String>>, what: &str, default| {
        d.as_ref()
            .and_then(|d| c.duration(d, what))
            .unwrap_or(default)
    };
    Cloud {
        accounts,
        latency,
        errors,
        provisioning: Provisioning {
            database_create: or_default(
                &raw.provisioning.database_create,
                "databaseCreate",
                prov.database_create,
            ),
            database_delete: or_default(
                &raw.provisioning.database_delete,
                "databaseDelete",
                prov.database_delete,
            ),
        },
    }
}
