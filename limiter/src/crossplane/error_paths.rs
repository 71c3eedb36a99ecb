//! How a provider requeues on its error paths: the per-item backoff (crossplane-runtime) or,
//! as a deliberately broken mode, at once; and the observe-only "resource missing" path
//! before and after crossplane-runtime#1088.

use std::time::Duration;

use strum::{Display, EnumString, IntoStaticStr};

/// The requeue of a reconcile that failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, IntoStaticStr, EnumString, Display)]
#[strum(serialize_all = "lowercase", parse_err_ty = UnknownMode, parse_err_fn = Self::unknown)]
pub enum ErrorRequeue {
    /// crossplane-runtime: a rate-limited requeue, on the per-item backoff (base·2^(k−1) up
    /// to its cap).
    #[default]
    Backoff,
    /// Broken on purpose, as upjet#592 reported: every failure requeues after
    /// [`ErrorRequeue::IMMEDIATE`], which resets the per-item backoff, so a failing resource
    /// loops as fast as the global bucket lets it. For showing that `hotLoops` catches it.
    Immediate,
}

impl ErrorRequeue {
    /// Both modes, in documentation order.
    pub const ALL: [ErrorRequeue; 2] = [ErrorRequeue::Backoff, ErrorRequeue::Immediate];

    /// The requeue delay of the broken mode: the least positive `RequeueAfter` (a zero one
    /// would mean no requeue at all).
    pub const IMMEDIATE: Duration = Duration::from_millis(1);

    /// The flag value (`backoff`, `immediate`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What an observe-only resource (`managementPolicies: [Observe]`) whose cloud resource is
/// absent requeues with (path P9 of the managed reconciler).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, IntoStaticStr, EnumString, Display)]
#[strum(serialize_all = "lowercase", parse_err_ty = UnknownMode, parse_err_fn = Self::unknown)]
pub enum ObserveOnlyAbsent {
    /// crossplane-runtime v2.4.0 (#1088): `RequeueAfter` the poll interval (annotation and
    /// jitter apply).
    #[default]
    Poll,
    /// Up to v2.3.x and in v1.x: `Requeue: true`, the error backoff, so an absent
    /// observe-only resource is observed about 60 times an hour at the 60 s cap.
    Backoff,
}

impl ObserveOnlyAbsent {
    /// Both modes, in documentation order.
    pub const ALL: [ObserveOnlyAbsent; 2] = [ObserveOnlyAbsent::Poll, ObserveOnlyAbsent::Backoff];

    /// The flag value (`poll`, `backoff`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A mode name that is not one of the listed ones.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {given:?} (expected {expected})")]
pub struct UnknownMode {
    /// Which setting.
    pub what: &'static str,
    /// What was given.
    pub given: String,
    /// The accepted values.
    pub expected: &'static str,
}

/// The parse error of a named mode: what it is and the names it takes (the names themselves,
/// its `as_str`, `Display` and `FromStr`, are strum's derives on the enum).
macro_rules! named {
    ($type:ty, $what:literal, $expected:literal) => {
        impl $type {
            /// The error for a name that is none of this setting's.
            fn unknown(given: &str) -> UnknownMode {
                UnknownMode {
                    what: $what,
                    given: given.to_owned(),
                    expected: $expected,
                }
            }
        }
    };
}

pub(super) use named;

named!(ErrorRequeue, "error requeue", "backoff or immediate");
named!(
    ObserveOnlyAbsent,
    "observe-only absent requeue",
    "poll or backoff"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_reads_back_from_its_name_and_others_are_refused() {
        for m in ErrorRequeue::ALL {
            assert_eq!(m.as_str().parse::<ErrorRequeue>(), Ok(m));
        }
        for m in ObserveOnlyAbsent::ALL {
            assert_eq!(m.to_string().parse::<ObserveOnlyAbsent>(), Ok(m));
        }
        let err = "never".parse::<ErrorRequeue>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown error requeue \"never\" (expected backoff or immediate)"
        );
    }
}
