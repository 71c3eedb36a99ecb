//! `GET /metrics`: Prometheus text built at scrape time from the aggregates and the
//! inventory, so the request path pays nothing for it.

use http::{Response, StatusCode};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::respond::{self, ResponseBody};
use crate::cloud::MockCloud;

type Labels = Vec<(&'static str, String)>;

impl MockCloud {
    /// The metrics in Prometheus text format.
    pub fn metrics_text(&self) -> String {
        let summary = self.summary();
        let requests = Family::<Labels, Counter>::default();
        for c in &summary.counts {
            let labels = vec![
                ("account", c.account.clone()),
                ("action", c.action.clone()),
                ("service", c.service.clone()),
                ("operation", c.operation.clone()),
                ("code", c.status.to_string()),
            ];
            requests.get_or_create(&labels).inc_by(c.count);
        }
        // Per service and operation, all accounts together: throttles (enforced and
        // shadow), errors other than throttles, and injected faults.
        let operation_throttled = Family::<Labels, Counter>::default();
        let operation_errors = Family::<Labels, Counter>::default();
        let operation_faults = Family::<Labels, Counter>::default();
        for o in &summary.operations {
            let labels = vec![
                ("service", o.service.clone()),
                ("operation", o.operation.clone()),
            ];
            let mode = |mode: &str| [labels.clone(), vec![("mode", mode.to_owned())]].concat();
            operation_throttled
                .get_or_create(&mode("enforced"))
                .inc_by(o.throttled);
            operation_throttled
                .get_or_create(&mode("shadow"))
                .inc_by(o.shadow_throttled);
            operation_errors.get_or_create(&labels).inc_by(o.errors);
            operation_faults.get_or_create(&labels).inc_by(o.faults);
        }
        let throttled = Family::<Labels, Counter>::default();
        // Every account and class is present from the start, at zero.
        for account in &self.inner.config.accounts {
            for class in crate::model::Class::ALL {
                for mode in ["enforced", "shadow"] {
                    let labels = vec![
                        ("account", account.name.clone()),
                        ("layer", format!("class:{class}")),
                        ("mode", mode.to_owned()),
                    ];
                    throttled.get_or_create(&labels).inc_by(0);
                }
            }
        }
        for v in &summary.violations {
            let labels = vec![("account", v.account.clone()), ("layer", v.layer.clone())];
            let mode = |mode: &str| [labels.clone(), vec![("mode", mode.to_owned())]].concat();
            throttled
                .get_or_create(&mode("enforced"))
                .inc_by(v.throttled);
            throttled
                .get_or_create(&mode("shadow"))
                .inc_by(v.shadow_throttled);
        }
        let live = Family::<Labels, Gauge>::default();
        let now = self.elapsed();
        for (account, collection, count) in self.inner.store.lock().counts(now) {
            let labels = vec![
                ("account", account),
                ("collection", collection.as_str().to_owned()),
            ];
            live.get_or_create(&labels)
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
        let dropped = Counter::<u64>::default();
        dropped.inc_by(summary.journal.dropped);
        let mut registry = Registry::with_prefix("mockcloud");
        registry.register(
            "requests",
            "API requests by account, action (generic API), service, operation and status",
            requests,
        );
        registry.register(
            "operation_throttled",
            "Rate-quota throttles by service and operation (enforced, or shadow mode's)",
            operation_throttled,
        );
        registry.register(
            "operation_errors",
            "Answers with a 4xx or 5xx status other than a throttle, by service and operation",
            operation_errors,
        );
        registry.register(
            "operation_faults",
            "Calls failed by an injected fault, by service and operation",
            operation_faults,
        );
        registry.register(
            "throttled",
            "Rate-quota violations by account and bucket",
            throttled,
        );
        registry.register(
            "live_resources",
            "Live resources, including ones deleting",
            live,
        );
        registry.register(
            "journal_dropped",
            "Journal entries dropped because it was full",
            dropped,
        );
        let mut text = String::new();
        match encode(&mut text, &registry) {
            Ok(()) => text,
            Err(_) => String::from("# encoding failed\n"),
        }
    }

    pub(crate) fn metrics_response(&self) -> Response<ResponseBody> {
        respond::bytes(
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            self.metrics_text(),
        )
    }
}
