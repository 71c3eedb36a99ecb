//! The provider's own metrics in a result: the names every controller-runtime and client-go
//! provider exports (reconciles by controller and result, work-queue adds and depth, API
//! requests by code, method and host), and this workspace's provider's extra ones where
//! present, each set beside the ground truth it can be checked against. A name the provider
//! does not export is `None` or empty, and the reports say so instead of comparing a zero.

use std::collections::BTreeMap;

use super::model::{Concurrency, ProviderCheck};
use super::observe::Observations;
pub use super::standard_metrics::{ApiRequestsCheck, ControllerMetrics, RestRequests};
use crate::scenario::Scenario;

/// Sums `by` per key.
fn per(by: &[RestRequests], key: fn(&RestRequests) -> &str) -> Vec<(&str, u64)> {
    let mut out: BTreeMap<&str, u64> = BTreeMap::new();
    for r in by {
        *out.entry(key(r)).or_default() += r.count;
    }
    out.into_iter().collect()
}

fn listed(pairs: &[(&str, u64)]) -> String {
    pairs
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The provider's metrics in the result, or `None` when they were not read.
#[must_use]
pub fn provider_check(s: &Scenario, obs: &Observations, end_us: u64) -> Option<ProviderCheck> {
    let m = obs.provider_metrics.as_ref()?;
    let run_s = end_us as f64 / 1e6;
    Some(ProviderCheck {
        journal_cloud_calls: obs.cloud_calls.len() as u64,
        provider_cloud_calls: m.cloud_calls,
        reservations: m.reservations,
        early_runs: m.early_runs,
        concurrency: m
            .busy_s
            .iter()
            .map(|(controller, &busy_s)| Concurrency {
                controller: controller.clone(),
                busy_s,
                mean_busy: if run_s > 0.0 { busy_s / run_s } else { 0.0 },
                workers: s.settings.workers_per_controller(),
            })
            .collect(),
        controllers: m.controllers.clone(),
        api_requests: m.rest_requests.as_ref().map(|by| ApiRequestsCheck {
            provider: by.iter().map(|r| r.count).sum(),
            api_server: obs.api_requests.iter().filter(|r| r.from_provider).count() as u64,
            by: by.clone(),
        }),
    })
}

impl ProviderCheck {
    /// Whether the provider's count of cloud calls matches the journal; `None` when it
    /// exports no such count.
    #[must_use]
    pub fn agrees(&self) -> Option<bool> {
        self.provider_cloud_calls
            .map(|n| n == self.journal_cloud_calls)
    }

    /// One line for reports: the provider's own count of cloud calls against the journal
    /// (or that it exports none), and the limiter's counters where it has them.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut line = match self.provider_cloud_calls {
            Some(n) => format!(
                "provider's own count: {n} cloud calls, journal: {} ({})",
                self.journal_cloud_calls,
                if n == self.journal_cloud_calls {
                    "agree"
                } else {
                    "DIFFER"
                }
            ),
            None => format!(
                "provider's own count: the provider exports no cloud-call counter (provider_cloud_requests_total); journal: {} cloud calls",
                self.journal_cloud_calls
            ),
        };
        if let (Some(r), Some(e)) = (self.reservations, self.early_runs) {
            line.push_str(&format!("; limiter: {r} reservations, {e} early runs"));
        }
        line
    }

    /// One line for reports on the provider's count of its API requests.
    #[must_use]
    pub fn api_summary(&self) -> String {
        match &self.api_requests {
            Some(a) => format!(
                "provider's own count: {} API requests (rest_client_requests_total by method: {}; by code: {}), API server: {}",
                a.provider,
                listed(&per(&a.by, |r| &r.method)),
                listed(&per(&a.by, |r| &r.code)),
                a.api_server
            ),
            None => "provider's own count: the provider exports no API-request counter (rest_client_requests_total)".to_owned(),
        }
    }

    /// One line for reports on the controllers' concurrency; `None` when not reported.
    #[must_use]
    pub fn concurrency_summary(&self) -> Option<String> {
        if self.concurrency.is_empty() {
            return None;
        }
        let each: Vec<String> = self
            .concurrency
            .iter()
            .map(|c| {
                format!(
                    "{} {:.2} of {} ({:.1} %)",
                    c.controller,
                    c.mean_busy,
                    c.workers,
                    100.0 * c.mean_busy / c.workers.max(1) as f64
                )
            })
            .collect();
        Some(format!(
            "mean busy workers per controller over the run: {}",
            each.join(", ")
        ))
    }

    /// The controllers' standard metrics as rows of cells, with a header row: reconciles
    /// by result, errors, work-queue adds and largest depth; `-` where not exported.
    /// Empty when the provider exports none of them.
    #[must_use]
    pub fn controller_rows(&self) -> Vec<[String; 9]> {
        if self.controllers.is_empty() {
            return Vec::new();
        }
        let dash = || "-".to_owned();
        let n = |v: Option<u64>| v.map_or_else(dash, |v| v.to_string());
        let mut rows = vec![
            [
                "controller",
                "reconciles",
                "success",
                "error",
                "requeue",
                "requeue_after",
                "errors",
                "queue adds",
                "max depth",
            ]
            .map(str::to_owned),
        ];
        for c in &self.controllers {
            let result = |r: &str| {
                if c.reconciles.is_empty() {
                    dash()
                } else {
                    c.reconciles.get(r).copied().unwrap_or(0).to_string()
                }
            };
            rows.push([
                c.controller.clone(),
                n(c.reconciles_total()),
                result("success"),
                result("error"),
                result("requeue"),
                result("requeue_after"),
                n(c.reconcile_errors),
                n(c.queue_adds),
                c.queue_depth_max.map_or_else(dash, crate::predict::fmt_num),
            ]);
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check() -> ProviderCheck {
        ProviderCheck {
            journal_cloud_calls: 40,
            ..ProviderCheck::default()
        }
    }

    #[test]
    fn a_provider_without_a_cloud_call_counter_is_said_to_have_none_instead_of_differing() {
        let c = check();
        assert_eq!(c.agrees(), None);
        assert_eq!(
            c.summary(),
            "provider's own count: the provider exports no cloud-call counter (provider_cloud_requests_total); journal: 40 cloud calls"
        );
        let c = ProviderCheck {
            provider_cloud_calls: Some(40),
            reservations: Some(7),
            early_runs: Some(0),
            ..check()
        };
        assert_eq!(c.agrees(), Some(true));
        assert_eq!(
            c.summary(),
            "provider's own count: 40 cloud calls, journal: 40 (agree); limiter: 7 reservations, 0 early runs"
        );
    }

    #[test]
    fn an_older_results_provider_section_reads_with_its_counters_exported() {
        let old = r#"{"journal_cloud_calls": 5, "provider_cloud_calls": 5, "reservations": 3, "early_runs": 0}"#;
        let c: ProviderCheck = serde_json::from_str(old).expect("reads");
        assert_eq!(c.agrees(), Some(true));
        assert_eq!((c.reservations, c.early_runs), (Some(3), Some(0)));
        assert!(c.controllers.is_empty() && c.api_requests.is_none());
    }

    #[test]
    fn api_requests_are_summed_by_method_and_by_code() {
        let r = |code: &str, method: &str, count| RestRequests {
            code: code.to_owned(),
            method: method.to_owned(),
            host: "10.0.0.1:6443".to_owned(),
            count,
        };
        let c = ProviderCheck {
            api_requests: Some(ApiRequestsCheck {
                provider: 14,
                api_server: 15,
                by: vec![r("200", "GET", 5), r("200", "PUT", 6), r("409", "PUT", 3)],
            }),
            ..check()
        };
        assert_eq!(
            c.api_summary(),
            "provider's own count: 14 API requests (rest_client_requests_total by method: GET 5, PUT 9; by code: 200 11, 409 3), API server: 15"
        );
        assert!(
            check()
                .api_summary()
                .contains("exports no API-request counter")
        );
    }

    #[test]
    fn a_controller_row_shows_a_dash_where_a_metric_is_not_exported() {
        let c = ProviderCheck {
            controllers: vec![ControllerMetrics {
                controller: "managed/bucket".to_owned(),
                queue_adds: Some(12),
                ..ControllerMetrics::default()
            }],
            ..check()
        };
        let rows = c.controller_rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].join(" "), "managed/bucket - - - - - - 12 -");
        assert!(check().controller_rows().is_empty());
    }
}
