//! The lines a report prints of a run's calls per reconcile.

use crate::measure::per_reconcile::Path;
use crate::predict::fmt_num;
use crate::result::RunResult;

/// One line per kind (the mean calls of each path it took, Connect's apart) and one for
/// Connect over the provider; none when calls per reconcile were not measured.
#[must_use]
pub fn lines(r: &RunResult) -> Vec<String> {
    let Some(per) = &r.calls_per_reconcile else {
        return Vec::new();
    };
    let mean = |v: f64| fmt_num((v * 100.0).round() / 100.0);
    let mut out = vec!["cloud calls per reconcile, mean by path (Connect's apart):".to_owned()];
    for k in &per.kinds {
        let paths: Vec<String> = Path::ALL
            .iter()
            .filter_map(|p| {
                let st = k.path(*p)?;
                Some(format!(
                    "{} {} (n = {})",
                    p.words(),
                    mean(st.mean),
                    st.reconciles
                ))
            })
            .collect();
        if paths.is_empty() {
            continue;
        }
        out.push(format!("  {}: {}", k.kind, paths.join(", ")));
    }
    if per.reconciles > 0 {
        out.push(format!(
            "  connect: {} per reconcile over the provider ({} calls in {} reconciles)",
            mean(per.connect_calls as f64 / per.reconciles as f64),
            per.connect_calls,
            per.reconciles
        ));
    }
    if per.open + per.unattributed > 0 {
        out.push(format!(
            "  {} calls were in reconciles still open at the end, {} in none",
            per.open, per.unattributed
        ));
    }
    out
}
