//! The flag choices of a Connect: the SDK's retry mode and what the credential cache keeps.

use aws_smithy_types::retry::RetryConfig;
use strum::{EnumString, IntoStaticStr};

/// The SDK's retry mode (`--aws-retry-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, IntoStaticStr, EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = UnknownChoice, parse_err_fn = unknown_retry_mode)]
pub enum RetryMode {
    /// The SDK's standard mode: 3 attempts, exponential backoff with jitter, a retry quota
    /// of 500 tokens (5 a retry, 10 a timeout).
    #[default]
    Standard,
    /// Standard plus the client-side send rate (CUBIC) that switches on at the first throttle.
    Adaptive,
    /// One attempt: every throttle is the reconciler's error.
    Off,
}

impl RetryMode {
    /// The three, in documentation order.
    pub const ALL: [RetryMode; 3] = [RetryMode::Standard, RetryMode::Adaptive, RetryMode::Off];

    /// The flag value.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The SDK's retry config.
    #[must_use]
    pub fn retry_config(self) -> RetryConfig {
        match self {
            RetryMode::Standard => RetryConfig::standard(),
            RetryMode::Adaptive => RetryConfig::adaptive(),
            RetryMode::Off => RetryConfig::disabled(),
        }
    }
}

/// What `--credential-cache` keeps between Connects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, IntoStaticStr, EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = UnknownChoice, parse_err_fn = unknown_credential_cache)]
pub enum CredentialCache {
    /// Nothing: every Connect calls STS and builds new clients (upjet before #1235).
    #[default]
    None,
    /// The web identity exchange only (provider-upjet-aws#1235).
    Irsa,
    /// The final credentials, account ID and clients, per ProviderConfig, region and Secret
    /// content (what provider-upjet-aws#997 asks for).
    All,
}

impl CredentialCache {
    /// The three, in documentation order.
    pub const ALL: [CredentialCache; 3] = [
        CredentialCache::None,
        CredentialCache::Irsa,
        CredentialCache::All,
    ];

    /// The flag value.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A flag value that is not one of the choices.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {value:?} (expected one of {expected})")]
pub struct UnknownChoice {
    /// What was given.
    pub value: String,
    /// The choices.
    pub expected: &'static str,
}

fn unknown_credential_cache(value: &str) -> UnknownChoice {
    UnknownChoice {
        value: value.to_owned(),
        expected: "none, irsa, all",
    }
}

fn unknown_retry_mode(value: &str) -> UnknownChoice {
    UnknownChoice {
        value: value.to_owned(),
        expected: "standard, adaptive, off",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_values_round_trip_and_unknown_ones_list_the_choices() {
        for m in RetryMode::ALL {
            assert_eq!(m.as_str().parse::<RetryMode>(), Ok(m));
        }
        for c in CredentialCache::ALL {
            assert_eq!(c.as_str().parse::<CredentialCache>(), Ok(c));
        }
        assert_eq!(
            "legacy".parse::<RetryMode>().unwrap_err().to_string(),
            "unknown value \"legacy\" (expected one of standard, adaptive, off)"
        );
        assert_eq!(RetryMode::Standard.retry_config().max_attempts(), 3);
        assert_eq!(RetryMode::Off.retry_config().max_attempts(), 1);
    }
}
