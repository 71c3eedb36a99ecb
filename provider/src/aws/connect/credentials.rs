//! Credentials: the ProviderConfig's Secret, STS's answers, the cache entries they live in,
//! and the session name STS is given.

use std::hash::{DefaultHasher, Hash, Hasher};

use aws_credential_types::Credentials;
use k8s_openapi::api::core::v1::Secret;
use tokio::time::Instant;

use super::error::ConnectError;
use crate::aws::config::{ConfigError, SecretKeySelector};
use crate::aws::error::AwsError;

/// A cached value and when to renew it.
#[derive(Clone)]
pub(super) struct Expiring<T> {
    pub(super) value: T,
    /// When to renew (tokio's clock); `None` for static keys.
    pub(super) renew_at: Option<Instant>,
}

impl<T: Clone> Expiring<T> {
    pub(super) fn fresh(&self) -> Option<T> {
        match self.renew_at {
            Some(t) if Instant::now() >= t => None,
            _ => Some(self.value.clone()),
        }
    }
}

/// Reads a Secret's key as text (`data`, then `stringData`).
fn secret_key(secret: &Secret, key: &str) -> Option<String> {
    if let Some(v) = secret.data.as_ref().and_then(|d| d.get(key)) {
        return String::from_utf8(v.0.clone()).ok();
    }
    secret
        .string_data
        .as_ref()
        .and_then(|d| d.get(key))
        .cloned()
}

pub(super) fn read_key(
    sel: &SecretKeySelector,
    secrets: &(dyn Fn(&str, &str) -> Option<Secret> + Sync),
) -> Result<String, ConfigError> {
    let secret = secrets(&sel.namespace, &sel.name).ok_or_else(|| ConfigError::MissingSecret {
        namespace: sel.namespace.clone(),
        name: sel.name.clone(),
    })?;
    secret_key(&secret, &sel.key).ok_or_else(|| ConfigError::MissingKey {
        namespace: sel.namespace.clone(),
        name: sel.name.clone(),
        key: sel.key.clone(),
    })
}

pub(super) fn fingerprint(parts: &[&str]) -> u64 {
    let mut h = DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

pub(super) fn sts_credentials(c: &aws_sdk_sts::types::Credentials) -> Credentials {
    Credentials::new(
        c.access_key_id(),
        c.secret_access_key(),
        Some(c.session_token().to_owned()),
        None,
        "sts",
    )
}

pub(super) fn missing_credentials(operation: &'static str) -> ConnectError {
    ConnectError::Sts(AwsError::other(
        "STS",
        operation,
        "the answer carried no credentials",
    ))
}

/// `RoleSessionName`: 2–64 of `[\w+=,.@-]`, from the ProviderConfig's name.
pub(super) fn session_name(config_name: &str) -> String {
    let mut s: String = config_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "+=,.@-_".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(50)
        .collect();
    s.insert_str(0, "provider-");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_are_what_sts_accepts() {
        assert_eq!(session_name("default"), "provider-default");
        assert_eq!(session_name("a b/c"), "provider-a-b-c");
        assert!(session_name(&"x".repeat(200)).len() <= 64);
    }
}
