//! The provider's client-side limiters of API requests: one token bucket per REST client that
//! has one of its own (docs/budget.md §2.5).
//!
//! # Semantics
//! client-go builds a new bucket for every REST client whose `rest.Config` has QPS and burst
//! but no `RateLimiter`, and crossplane-runtime's `LimitRESTConfig` sets only QPS and burst.
//! So a controller-runtime provider has a bucket for its manager's client, one for its event
//! recorder's clientset and, with leader election on, one for the leader election client:
//! each QPS 5R and burst 10R. Our provider shares one bucket, or gives Events a second one
//! (`--event-client`). Every request passes exactly one limiter; the API-request bound sums
//! over them.

use std::num::NonZeroU32;

use limiter::crossplane::EventClient;

/// The API client's token bucket: QPS and burst (client-go's `rest.Config`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClientLimits {
    /// Requests per second.
    pub qps: f64,
    /// Burst.
    pub burst: f64,
}

impl ClientLimits {
    /// crossplane-runtime's `LimitRESTConfig(cfg, R)`: QPS 5R, burst 10R.
    #[must_use]
    pub fn limit_rest_config(r: NonZeroU32) -> ClientLimits {
        let r = f64::from(r.get());
        ClientLimits {
            qps: 5.0 * r,
            burst: 10.0 * r,
        }
    }
}

/// One client-side limiter: a REST client's bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientLimiter {
    /// The client it limits (`manager`, `events`, `leader-election`, `shared`, …).
    pub name: String,
    /// Its QPS and burst.
    pub limits: ClientLimits,
}

impl ClientLimiter {
    /// The limiter `name` with `limits`.
    #[must_use]
    pub fn new(name: &str, limits: ClientLimits) -> ClientLimiter {
        ClientLimiter {
            name: name.to_owned(),
            limits,
        }
    }
}

/// A controller-runtime provider's limiters (crossplane-runtime's and upjet's mains): the
/// manager's client, the event recorder's and, when `leader_election` is on, the leader
/// election client's, each with `limits`.
#[must_use]
pub fn per_rest_client(limits: ClientLimits, leader_election: bool) -> Vec<ClientLimiter> {
    let mut out = vec![
        ClientLimiter::new("manager", limits),
        ClientLimiter::new("events", limits),
    ];
    if leader_election {
        out.push(ClientLimiter::new("leader-election", limits));
    }
    out
}

/// Our provider's limiters: one `shared` by every request, or with a separate event client
/// the `controllers`' and the `events`'.
#[must_use]
pub fn of_event_client(limits: ClientLimits, mode: EventClient) -> Vec<ClientLimiter> {
    match mode {
        EventClient::Shared => vec![ClientLimiter::new("shared", limits)],
        EventClient::Separate => vec![
            ClientLimiter::new("controllers", limits),
            ClientLimiter::new("events", limits),
        ],
    }
}

/// The limiters' names, joined: `manager, events`.
#[must_use]
pub fn names(limiters: &[ClientLimiter]) -> String {
    limiters
        .iter()
        .map(|l| l.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_controller_runtime_provider_has_a_bucket_per_rest_client() {
        let r10 = ClientLimits::limit_rest_config(NonZeroU32::new(10).unwrap());
        assert_eq!((r10.qps, r10.burst), (50.0, 100.0));
        assert_eq!(names(&per_rest_client(r10, false)), "manager, events");
        assert_eq!(
            names(&per_rest_client(r10, true)),
            "manager, events, leader-election"
        );
        assert!(per_rest_client(r10, true).iter().all(|l| l.limits == r10));
        assert_eq!(names(&of_event_client(r10, EventClient::Shared)), "shared");
        assert_eq!(
            names(&of_event_client(r10, EventClient::Separate)),
            "controllers, events"
        );
    }
}
