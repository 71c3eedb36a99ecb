//! The breaker's settings: `circuit.Config` and its options (token_bucket.go:28-83), with the
//! defaults of `NewTokenBucketBreaker` (token_bucket.go:121-128), and the close mode.
use strum::{Display, EnumString, IntoStaticStr};

use crate::go::GoDuration;

/// When an open circuit whose cooldown has passed closes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, IntoStaticStr, EnumString, Display)]
#[strum(serialize_all = "lowercase", parse_err_ty = UnknownBreakerMode, parse_err_fn = unknown_mode)]
pub enum Mode {
    /// Crossplane as released: only `RecordEvent` closes it, on the first event after the
    /// cooldown (token_bucket.go:188-203); `GetState` never looks at the cooldown
    /// (token_bucket.go:238-259), so an XR whose events stopped reads as open for ever.
    #[default]
    Released,
    /// crossplane/crossplane PR #7725 (the fix for issue #7703): `GetState` evaluates the
    /// cooldown itself, mirroring `RecordEvent`'s check, and closes the circuit as soon as the
    /// cooldown has passed. The PR was open and its diff not at hand when this was written:
    /// this follows its description, closing the circuit in `GetState` exactly as
    /// `RecordEvent` closes it (the close counted, the source ring emptied). The PR's other
    /// half, the XR reconciler requeueing while the circuit is open, is not modelled here.
    #[strum(serialize = "eager")]
    EagerClose,
}

impl Mode {
    /// Both modes.
    pub const ALL: [Mode; 2] = [Mode::Released, Mode::EagerClose];

    /// The mode's name in scripts and flags.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A name that is not a [`Mode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown circuit breaker mode {0:?} (expected released or eager)")]
pub struct UnknownBreakerMode(pub String);

fn unknown_mode(name: &str) -> UnknownBreakerMode {
    UnknownBreakerMode(name.to_owned())
}

/// `circuit.Config`: the token bucket and the open-circuit timings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakerConfig {
    /// `capacity`: the bucket's size, which it starts full at (`WithBurst`, `--circuit-breaker-burst`).
    pub burst: f64,
    /// `refillRatePerSecond` (`WithRefillRatePerSecond`, `--circuit-breaker-refill-rate`).
    pub refill_per_second: f64,
    /// `cooldownTime`: how long the circuit stays open (`WithOpenDuration`,
    /// `--circuit-breaker-cooldown`).
    pub cooldown: GoDuration,
    /// `halfOpenInterval`: one event is let through this often while open
    /// (`WithHalfOpenInterval`; no flag).
    pub half_open_interval: GoDuration,
    /// `expireAfter`: a target not refilled for longer is forgotten when another target is
    /// first seen (`WithGarbageCollectTargetsAfter`; no flag).
    pub expire_after: GoDuration,
    /// When a circuit closes.
    pub mode: Mode,
}

impl Default for BreakerConfig {
    /// `NewTokenBucketBreaker`'s defaults (token_bucket.go:121-128), which are also the flags'
    /// (cmd/crossplane/core/core.go:118-120): burst 100, 1 token/s, cooldown 5m, a half-open
    /// event every 30s, targets forgotten after 24h; released mode.
    fn default() -> Self {
        BreakerConfig {
            burst: 100.0,
            refill_per_second: 1.0,
            cooldown: GoDuration(5 * 60 * 1_000_000_000),
            half_open_interval: GoDuration(30 * 1_000_000_000),
            expire_after: GoDuration(24 * 3600 * 1_000_000_000),
            mode: Mode::Released,
        }
    }
}

impl BreakerConfig {
    /// With a burst (`WithBurst`).
    #[must_use]
    pub fn burst(mut self, b: f64) -> Self {
        self.burst = b;
        self
    }

    /// With a refill rate (`WithRefillRatePerSecond`).
    #[must_use]
    pub fn refill_per_second(mut self, r: f64) -> Self {
        self.refill_per_second = r;
        self
    }

    /// With a cooldown (`WithOpenDuration`).
    #[must_use]
    pub fn cooldown(mut self, d: GoDuration) -> Self {
        self.cooldown = d;
        self
    }

    /// With a half-open interval (`WithHalfOpenInterval`).
    #[must_use]
    pub fn half_open_interval(mut self, d: GoDuration) -> Self {
        self.half_open_interval = d;
        self
    }

    /// With a garbage-collection age (`WithGarbageCollectTargetsAfter`).
    #[must_use]
    pub fn expire_after(mut self, d: GoDuration) -> Self {
        self.expire_after = d;
        self
    }

    /// With a close mode.
    #[must_use]
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_new_token_bucket_breakers() {
        let c = BreakerConfig::default();
        assert_eq!((c.burst, c.refill_per_second), (100.0, 1.0));
        assert_eq!(c.cooldown.to_string(), "5m0s");
        assert_eq!(c.half_open_interval.to_string(), "30s");
        assert_eq!(c.expire_after.to_string(), "24h0m0s");
        assert_eq!(c.mode, Mode::Released);
    }

    #[test]
    fn modes_parse_from_their_names() {
        for m in Mode::ALL {
            assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
        }
        assert!("lazy".parse::<Mode>().is_err());
    }
}
