//! The provider's Kubernetes REST clients, and how many client-side limiters they have.
//!
//! A controller-runtime provider sets QPS and burst on its `rest.Config`
//! (`LimitRESTConfig`), not a shared `RateLimiter`, so client-go builds one token bucket per
//! REST client: the manager's client, the event recorder's own clientset and the leader
//! election client each get QPS 5R and burst 10R of their own. Our provider puts every
//! request through one limiter by default, and can run like a real one.
use strum::{Display, EnumString, IntoStaticStr};

use super::error_paths::{UnknownMode, named};

/// Which client the provider's event recorder writes Events with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, IntoStaticStr, EnumString, Display)]
#[strum(serialize_all = "lowercase", parse_err_ty = UnknownMode, parse_err_fn = Self::unknown)]
pub enum EventClient {
    /// The controllers' client: one limiter (QPS 5R, burst 10R) for every request of the
    /// process.
    #[default]
    Shared,
    /// A client of its own with a separate bucket of the same QPS and burst, as
    /// controller-runtime's event recorder provider builds its clientset from the manager's
    /// `rest.Config`.
    Separate,
}

impl EventClient {
    /// Both modes, in documentation order.
    pub const ALL: [EventClient; 2] = [EventClient::Shared, EventClient::Separate];

    /// The flag value (`shared`, `separate`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The client-side limiters the provider's requests go through: 1 or 2.
    #[must_use]
    pub fn limiters(self) -> usize {
        match self {
            EventClient::Shared => 1,
            EventClient::Separate => 2,
        }
    }
}

named!(EventClient, "event client", "shared or separate");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_reads_back_from_its_name_and_counts_its_limiters() {
        for m in EventClient::ALL {
            assert_eq!(m.as_str().parse::<EventClient>(), Ok(m));
        }
        assert_eq!(EventClient::Shared.limiters(), 1);
        assert_eq!(EventClient::Separate.limiters(), 2);
        let err = "own".parse::<EventClient>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown event client \"own\" (expected shared or separate)"
        );
    }
}
