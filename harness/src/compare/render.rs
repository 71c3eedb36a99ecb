//! A comparison as text: the header, the problems, the table, and what changed in calls
//! per reconcile.

use std::fmt::Write as _;

use super::Comparison;
use crate::measure::per_reconcile::Path;
use crate::predict::fmt_num;

/// What a `deleting` line adds: why its span holds more than one reconcile.
const DELETING_NOTE: &str = "; reconciles that find it gone write nothing and share that span: \
a delete within 30 s of the create has the provider requeue such reconciles with backoff \
until the creation grace has passed, one Observe each (its requeue count shows them)";

/// What changed in calls per reconcile, a line per (kind, path) whose mean moved by at
/// least 0.05 calls, with the operations that moved: `Bucket.… observe: 15 → 19 calls per
/// reconcile (+4: s3:GetBucketX +4)`.
#[must_use]
pub fn per_reconcile_changes(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.rows {
        let Some(rest) = r.metric.strip_prefix("per reconcile ") else {
            continue;
        };
        let (Some(o), Some(n)) = (r.old, r.new) else {
            continue;
        };
        let is_path = rest == "connect"
            || Path::ALL
                .iter()
                .any(|p| rest.ends_with(&format!(" {}", p.as_str())));
        if !is_path || (n - o).abs() < 0.05 {
            continue;
        }
        let ops: Vec<String> = c
            .rows
            .iter()
            .filter_map(|x| {
                let op = x.metric.strip_prefix(&format!("{} ", r.metric))?;
                let d = x.new? - x.old?;
                (d.abs() >= 0.05).then(|| {
                    format!(
                        "{op} {}{}",
                        if d > 0.0 { "+" } else { "" },
                        fmt_num((d * 100.0).round() / 100.0)
                    )
                })
            })
            .collect();
        let d = n - o;
        // A `deleting` span is not one reconcile: every reconcile that finds the deleted
        // resource gone and requeues writes nothing, so they all share the span that the
        // finalizer's removal ends (budget.md §10).
        let deleting = rest.ends_with(&format!(" {}", Path::Deleting.as_str()));
        out.push(format!(
            "{rest}: {} → {} calls {} ({}{}{}){}",
            fmt_num((o * 100.0).round() / 100.0),
            fmt_num((n * 100.0).round() / 100.0),
            if deleting {
                "per deleted resource, from its delete to its finalizer's removal"
            } else {
                "per reconcile"
            },
            if d > 0.0 { "+" } else { "" },
            fmt_num((d * 100.0).round() / 100.0),
            if ops.is_empty() {
                String::new()
            } else {
                format!(": {}", ops.join(", "))
            },
            if deleting { DELETING_NOTE } else { "" }
        ));
    }
    out
}

fn header(o: &mut String, c: &Comparison) {
    let fields: [(&str, &str, &str); 7] = [
        ("scenario", &c.old.scenario, &c.new.scenario),
        ("settings", &c.old.settings, &c.new.settings),
        ("overrides", &c.old.overrides, &c.new.overrides),
        ("commit", &c.old.commit, &c.new.commit),
        ("build", &c.old.build, &c.new.build),
        ("started", &c.old.started, &c.new.started),
        ("outcome", &c.old.outcome, &c.new.outcome),
    ];
    for (name, old, new) in fields {
        let mark = if old == new { "" } else { "  (differs)" };
        let _ = writeln!(o, "{name:<10} OLD {old}");
        let _ = writeln!(o, "{:<10} NEW {new}{mark}", "");
    }
    if !c.settings_changed.is_empty() {
        let _ = writeln!(
            o,
            "settings changed: {}\nthe rows below are the effect of that change; only budget use and time to Ready gate as regressions",
            c.settings_changed.join("; ")
        );
    }
    o.push('\n');
}

/// The comparison as text: the header, why it cannot be trusted (if so), the table, and a
/// closing line.
#[must_use]
pub fn render(c: &Comparison) -> String {
    let mut o = String::new();
    header(&mut o, c);
    for p in &c.problems {
        let _ = writeln!(o, "not comparable: {}", p.text());
    }
    if !c.problems.is_empty() {
        o.push('\n');
    }
    if !c.rows.is_empty() {
        let w = c
            .rows
            .iter()
            .map(|r| r.metric.chars().count())
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(
            o,
            "{:<w$}  {:>10}  {:>10}  {:>9}",
            "metric", "old", "new", "change"
        );
        let num = |v: Option<f64>| v.map_or_else(|| "missing".to_owned(), fmt_num);
        for r in &c.rows {
            let change = match r.change_pct() {
                None => "—".to_owned(),
                Some(x) if x.is_infinite() => "from 0".to_owned(),
                Some(x) => format!("{x:+.1}%"),
            };
            let _ = writeln!(
                o,
                "{:<w$}  {:>10}  {:>10}  {:>9}{}",
                r.metric,
                num(r.old),
                num(r.new),
                change,
                if r.regression { "  REGRESSION" } else { "" }
            );
        }
    }
    let changes = per_reconcile_changes(c);
    if !changes.is_empty() {
        let _ = writeln!(o, "\ncalls per reconcile that changed:");
        for l in changes {
            let _ = writeln!(o, "  {l}");
        }
        o.push('\n');
    }
    let n = c.regressions().count();
    if c.comparable() {
        let _ = writeln!(
            o,
            "{n} regression(s) past {}%",
            fmt_num(c.max_regression_pct)
        );
    } else {
        let _ = writeln!(
            o,
            "NOT COMPARABLE: {} problem(s) above; {n} regression(s) past {}% among the metrics both runs have",
            c.problems.len(),
            fmt_num(c.max_regression_pct)
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Row, Side};

    fn side() -> Side {
        Side {
            scenario: "smoke (scenarios/smoke.yaml)".into(),
            settings: String::new(),
            overrides: "none".into(),
            commit: "unknown".into(),
            build: "default".into(),
            started: "unknown".into(),
            outcome: "PASS".into(),
        }
    }

    fn row(metric: &str, old: f64, new: f64) -> Row {
        Row {
            metric: metric.into(),
            old: Some(old),
            new: Some(new),
            regression: false,
        }
    }

    /// smoke at R = 10 against R = 20: the faster run deletes within the creation grace, and
    /// the provider requeues 2.17 more reconciles per Bucket that find it gone, one get each.
    #[test]
    fn a_deleting_span_is_reported_per_deleted_resource_not_per_reconcile() {
        let c = Comparison {
            old: side(),
            new: side(),
            problems: Vec::new(),
            rows: vec![
                row("per reconcile Bucket delete", 2.0, 2.0),
                row("per reconcile Bucket deleting", 1.0, 3.17),
                row("per reconcile Bucket deleting generic:get", 1.0, 3.17),
                row("per reconcile Bucket observe", 1.0, 1.5),
                row("per reconcile Bucket observe generic:get", 1.0, 1.5),
            ],
            settings_changed: vec!["maxReconcileRate: 10 → 20".into()],
            max_regression_pct: 10.0,
        };
        let lines = per_reconcile_changes(&c);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with(
                "Bucket deleting: 1 → 3.17 calls per deleted resource, from its delete to its \
                 finalizer's removal (+2.17: generic:get +2.17); reconciles that find it gone"
            ),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines[1],
            "Bucket observe: 1 → 1.5 calls per reconcile (+0.5: generic:get +0.5)"
        );
    }
}
