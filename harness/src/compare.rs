//! A/B comparison of two results: calls per phase and operation, peak windowed rates,
//! time-to-Ready quantiles and throttles; a regression is a rise past a threshold.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::predict::fmt_num;
use crate::result::RunResult;

/// One compared metric (for every metric here, higher is worse).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// What.
    pub metric: String,
    /// Old value (NaN: absent).
    pub old: f64,
    /// New value (NaN: absent).
    pub new: f64,
    /// Change in percent of the old value (∞ when old is 0).
    pub change_pct: f64,
    /// Past the threshold.
    pub regression: bool,
}

/// The comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Every metric of either run, sorted.
    pub rows: Vec<Row>,
    /// The threshold (percent).
    pub max_regression_pct: f64,
}

impl Comparison {
    /// The rows that regressed.
    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.regression)
    }
}

fn metrics(r: &RunResult) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for p in &r.phases {
        for (op, n) in &p.calls {
            m.insert(format!("calls {} {op}", p.name), *n as f64);
        }
        for k in &p.peaks {
            m.insert(
                format!("peak {} per {}s", p.name, fmt_num(k.window_s)),
                k.count as f64,
            );
        }
        if let Some(t) = &p.ttr {
            for (q, v) in &t.quantiles {
                m.insert(format!("ttr {} p{}", p.name, q * 100.0), *v);
            }
        }
        m.insert(format!("throttles {}", p.name), p.throttles as f64);
        m.insert(format!("api requests {}", p.name), p.api_requests as f64);
    }
    m.insert("throttles total".into(), r.throttles() as f64);
    m
}

/// Compares `old` with `new`. A metric regresses when it rises by more than
/// `max_regression_pct` percent (any rise from 0 counts; a metric missing in `new` does not).
#[must_use]
pub fn compare(old: &RunResult, new: &RunResult, max_regression_pct: f64) -> Comparison {
    let (a, b) = (metrics(old), metrics(new));
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let rows = keys
        .into_iter()
        .map(|k| {
            let o = a.get(k).copied().unwrap_or(f64::NAN);
            let n = b.get(k).copied().unwrap_or(f64::NAN);
            let base = if o.is_nan() { 0.0 } else { o };
            let change_pct = if base == 0.0 {
                if n > 0.0 { f64::INFINITY } else { 0.0 }
            } else {
                (n - base) / base * 100.0
            };
            let regression = !n.is_nan() && n > base && change_pct > max_regression_pct;
            Row {
                metric: k.clone(),
                old: o,
                new: n,
                change_pct,
                regression,
            }
        })
        .collect();
    Comparison {
        rows,
        max_regression_pct,
    }
}

/// The comparison as a table.
#[must_use]
pub fn render(c: &Comparison) -> String {
    let w = c
        .rows
        .iter()
        .map(|r| r.metric.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<w$}  {:>10}  {:>10}  {:>9}",
        "metric", "old", "new", "change"
    );
    for r in &c.rows {
        let change = if r.change_pct.is_infinite() {
            "new".to_owned()
        } else {
            format!("{:+.1}%", r.change_pct)
        };
        let _ = writeln!(
            o,
            "{:<w$}  {:>10}  {:>10}  {:>9}{}",
            r.metric,
            fmt_num(r.old),
            fmt_num(r.new),
            change,
            if r.regression { "  REGRESSION" } else { "" }
        );
    }
    let n = c.regressions().count();
    let _ = writeln!(
        o,
        "{n} regression(s) past {}%",
        fmt_num(c.max_regression_pct)
    );
    o
}
