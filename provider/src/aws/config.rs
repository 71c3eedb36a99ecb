//! The spec of upjet's AWS `ProviderConfig` (and `ClusterProviderConfig`), field for field
//! where this provider uses it (provider-upjet-aws `apis/v1beta1/types.go`), and its checks.
//!
//! Every check fails with a message a user can act on: it names the field, what it holds and
//! what is expected.

use std::collections::BTreeMap;
use std::time::Duration;

use limiter::crossplane::FailureBackoff;
use limiter::go::GoDuration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `spec` of a ProviderConfig.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfigSpec {
    /// Where the credentials come from.
    #[serde(default)]
    pub credentials: ProviderCredentials,
    /// Roles assumed in turn with STS AssumeRole on each Connect, each with the credentials
    /// of the one before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assume_role_chain: Vec<AssumeRoleOptions>,
    /// Custom endpoints (for mock-cloud).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<EndpointConfig>,
    /// Path-style S3 addressing (`/bucket/key`).
    #[serde(default, rename = "s3_use_path_style")]
    pub s3_use_path_style: bool,
    /// Skip the STS GetCallerIdentity that validates the credentials.
    #[serde(default, rename = "skip_credentials_validation")]
    pub skip_credentials_validation: bool,
    /// Skip the check that the region is a known AWS region.
    #[serde(default, rename = "skip_region_validation")]
    pub skip_region_validation: bool,
    /// Skip asking STS for the account ID (it becomes `000000000000` when credential
    /// validation is skipped too).
    #[serde(default, rename = "skip_requesting_account_id")]
    pub skip_requesting_account_id: bool,
    /// Skip the EC2 instance metadata service (this provider never calls it).
    #[serde(default, rename = "skip_metadata_api_check")]
    pub skip_metadata_api_check: bool,
    /// Per-ProviderConfig failure backoff (upjet#665); wins over `--backoff-base/-max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciliation_policy: Option<ReconciliationPolicy>,
}

/// `spec.credentials`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderCredentials {
    /// `Secret` (an AWS shared-credentials file in a Secret key) or `WebIdentity` (IRSA:
    /// a token exchanged with AssumeRoleWithWebIdentity).
    #[serde(default)]
    pub source: CredentialsSource,
    /// The Secret key, for `Secret`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
    /// The role and token, for `WebIdentity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_identity: Option<WebIdentityConfig>,
}

/// Where credentials come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CredentialsSource {
    /// No source given: always an error, named so.
    #[default]
    None,
    /// A Secret key holding an AWS shared-credentials file (`[default]`,
    /// `aws_access_key_id`, `aws_secret_access_key`, optional `aws_session_token`).
    Secret,
    /// IRSA: STS AssumeRoleWithWebIdentity with a token.
    WebIdentity,
}

/// A key of a Secret.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SecretKeySelector {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Key.
    pub key: String,
}

/// `spec.credentials.webIdentity`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebIdentityConfig {
    /// The role to assume.
    #[serde(rename = "roleARN")]
    pub role_arn: String,
    /// Where the token is (this provider reads it from a Secret key, as upjet's
    /// `tokenConfig.source: Secret` does).
    #[serde(rename = "tokenSecretRef")]
    pub token_secret_ref: SecretKeySelector,
}

/// One role of `spec.assumeRoleChain`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AssumeRoleOptions {
    /// The role to assume.
    #[serde(rename = "roleARN")]
    pub role_arn: String,
    /// The external ID the role's trust policy may require.
    #[serde(
        default,
        rename = "externalID",
        skip_serializing_if = "Option::is_none"
    )]
    pub external_id: Option<String>,
}

/// `spec.endpoint`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointConfig {
    /// Services the URL applies to (`s3`, `sts`, `ec2`, `dynamodb`); every other service
    /// goes to AWS.
    #[serde(default)]
    pub services: Vec<String>,
    /// Keep the host as given (no `bucket.host`).
    #[serde(default)]
    pub hostname_immutable: bool,
    /// The URL.
    pub url: EndpointUrl,
}

/// `spec.endpoint.url`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndpointUrl {
    /// `Static` (the only type this provider supports) or `Dynamic`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The URL, for `Static`.
    #[serde(default, rename = "static", skip_serializing_if = "Option::is_none")]
    pub static_url: Option<String>,
}

/// `spec.reconciliationPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReconciliationPolicy {
    /// The per-resource failure backoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exponential_failure_rate_limiter: Option<ExponentialFailureRateLimiter>,
}

/// `spec.reconciliationPolicy.exponentialFailureRateLimiter` (Go durations).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExponentialFailureRateLimiter {
    /// First delay, at least 1s (upjet's validation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_delay: Option<String>,
    /// Cap, at least 60s (upjet's validation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay: Option<String>,
}

/// What is wrong with a ProviderConfig, a credentials Secret or a region. The message is
/// what a user reads in the `Synced=False` condition and the event.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// `spec.credentials.source` is missing or `None`.
    #[error(
        "spec.credentials.source is not set: set it to Secret (with spec.credentials.secretRef) or WebIdentity (with spec.credentials.webIdentity)"
    )]
    NoCredentials,
    /// The source needs a field that is missing.
    #[error("spec.credentials.source is {given} but {field} is missing")]
    MissingField {
        /// The source given.
        given: &'static str,
        /// The missing field.
        field: &'static str,
    },
    /// The Secret does not exist.
    #[error(
        "cannot get credentials Secret {namespace}/{name}: create it, or fix spec.credentials.secretRef"
    )]
    MissingSecret {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// The Secret exists but has no such key (or it is not UTF-8).
    #[error("credentials Secret {namespace}/{name} has no key {key:?} (or it is not UTF-8 text)")]
    MissingKey {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Key.
        key: String,
    },
    /// The shared-credentials file lacks a key id or secret.
    #[error(
        "credentials Secret {namespace}/{name} key {key:?} has no [default] profile with aws_access_key_id and aws_secret_access_key"
    )]
    BadCredentialsFile {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Key.
        key: String,
    },
    /// An endpoint URL type this provider does not speak.
    #[error(
        "spec.endpoint.url.type {0:?} is not supported: use Static with spec.endpoint.url.static"
    )]
    UnsupportedUrlType(String),
    /// `url.static` is not an http(s) URL.
    #[error(
        "spec.endpoint.url.static {url:?} is not a URL: expected http://host:port or https://host:port ({reason})"
    )]
    BadUrl {
        /// What was given.
        url: String,
        /// Why.
        reason: String,
    },
    /// A role ARN that is not one.
    #[error(
        "{field} {arn:?} is not a role ARN: expected arn:aws:iam::<12-digit account>:role/<name>"
    )]
    BadRoleArn {
        /// Which field.
        field: String,
        /// What was given.
        arn: String,
    },
    /// A region that is not a region.
    #[error(
        "region {0:?} is not an AWS region: expected a name such as us-east-1 or eu-west-2 (or set skip_region_validation)"
    )]
    BadRegion(String),
    /// A reconciliation policy delay that is not a Go duration or below upjet's minimum.
    #[error("spec.reconciliationPolicy.exponentialFailureRateLimiter.{field} {value:?} {reason}")]
    BadDelay {
        /// `baseDelay` or `maxDelay`.
        field: &'static str,
        /// What was given.
        value: String,
        /// Why.
        reason: String,
    },
}

impl ProviderConfigSpec {
    /// The checks that need no Secret: credentials shape, endpoint URL, role ARNs and the
    /// reconciliation policy.
    ///
    /// # Errors
    /// The first problem found, in field order.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self.credentials.source {
            CredentialsSource::None => return Err(ConfigError::NoCredentials),
            CredentialsSource::Secret if self.credentials.secret_ref.is_none() => {
                return Err(ConfigError::MissingField {
                    given: "Secret",
                    field: "spec.credentials.secretRef",
                });
            }
            CredentialsSource::WebIdentity => match &self.credentials.web_identity {
                None => {
                    return Err(ConfigError::MissingField {
                        given: "WebIdentity",
                        field: "spec.credentials.webIdentity",
                    });
                }
                Some(w) => check_role_arn("spec.credentials.webIdentity.roleARN", &w.role_arn)?,
            },
            CredentialsSource::Secret => {}
        }
        for (i, role) in self.assume_role_chain.iter().enumerate() {
            check_role_arn(
                &format!("spec.assumeRoleChain[{i}].roleARN"),
                &role.role_arn,
            )?;
        }
        self.endpoint_url()?;
        self.failure_backoff()?;
        Ok(())
    }

    /// The static endpoint URL, if one is set.
    ///
    /// # Errors
    /// A `Dynamic` type, or a URL that is not http(s)://host.
    pub fn endpoint_url(&self) -> Result<Option<&str>, ConfigError> {
        let Some(e) = &self.endpoint else {
            return Ok(None);
        };
        if e.url.kind != "Static" {
            return Err(ConfigError::UnsupportedUrlType(e.url.kind.clone()));
        }
        let url = e.url.static_url.as_deref().unwrap_or("");
        let bad = |reason: &str| ConfigError::BadUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let uri: http::Uri = url
            .parse()
            .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
        match uri.scheme_str() {
            Some("http" | "https") => {}
            Some(_) => return Err(bad("the scheme must be http or https")),
            None => return Err(bad("no scheme")),
        }
        if uri.host().is_none_or(str::is_empty) {
            return Err(bad("no host"));
        }
        Ok(Some(url))
    }

    /// The endpoint URL for `service` (`s3`, `sts`, …): the static URL if the service is
    /// listed in `spec.endpoint.services`, else none (AWS's own endpoint).
    ///
    /// # Errors
    /// As [`ProviderConfigSpec::endpoint_url`].
    pub fn endpoint_for(&self, service: &str) -> Result<Option<&str>, ConfigError> {
        let url = self.endpoint_url()?;
        Ok(url.filter(|_| {
            self.endpoint
                .as_ref()
                .is_some_and(|e| e.services.iter().any(|s| s == service))
        }))
    }

    /// The failure backoff this ProviderConfig sets, each bound that is set: it wins over the
    /// provider's `--backoff-base`/`--backoff-max` (`fallback`) bound by bound.
    ///
    /// # Errors
    /// A delay that is not a Go duration, below upjet's minimum (1s, 60s), or a max below
    /// the base.
    pub fn failure_backoff(&self) -> Result<(Option<Duration>, Option<Duration>), ConfigError> {
        let Some(l) = self
            .reconciliation_policy
            .as_ref()
            .and_then(|p| p.exponential_failure_rate_limiter.as_ref())
        else {
            return Ok((None, None));
        };
        let parse = |field: &'static str, v: &Option<String>, min: Duration| {
            v.as_ref()
                .map(|s| {
                    let d = GoDuration::parse(s).map_err(|e| ConfigError::BadDelay {
                        field,
                        value: s.clone(),
                        reason: format!("is not a Go duration such as 5s or 2m ({e})"),
                    })?;
                    let d = d.to_std();
                    if d < min {
                        return Err(ConfigError::BadDelay {
                            field,
                            value: s.clone(),
                            reason: format!("is below the minimum {}s", min.as_secs()),
                        });
                    }
                    Ok(d)
                })
                .transpose()
        };
        let base = parse("baseDelay", &l.base_delay, Duration::from_secs(1))?;
        let max = parse("maxDelay", &l.max_delay, Duration::from_secs(60))?;
        if let (Some(b), Some(m)) = (base, max)
            && m < b
        {
            return Err(ConfigError::BadDelay {
                field: "maxDelay",
                value: l.max_delay.clone().unwrap_or_default(),
                reason: format!(
                    "is below baseDelay {:?}",
                    l.base_delay.as_deref().unwrap_or("")
                ),
            });
        }
        Ok((base, max))
    }

    /// The backoff a controller runs for resources of this ProviderConfig: its policy's
    /// bounds where set, else `provider_wide` (the flags' or the model's).
    ///
    /// # Errors
    /// As [`ProviderConfigSpec::failure_backoff`], and a policy max below the flags' base.
    pub fn effective_backoff(
        &self,
        provider_wide: FailureBackoff,
    ) -> Result<FailureBackoff, ConfigError> {
        let (base, max) = self.failure_backoff()?;
        let b = FailureBackoff {
            base: base.unwrap_or(provider_wide.base),
            max: max.unwrap_or(provider_wide.max),
        };
        if b.max < b.base {
            return Err(ConfigError::BadDelay {
                field: "maxDelay",
                value: GoDuration::from_std(b.max).to_string(),
                reason: format!(
                    "is below the effective base delay {}",
                    GoDuration::from_std(b.base)
                ),
            });
        }
        Ok(b)
    }
}

fn check_role_arn(field: &str, arn: &str) -> Result<(), ConfigError> {
    let bad = || ConfigError::BadRoleArn {
        field: field.to_owned(),
        arn: arn.to_owned(),
    };
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [scheme, partition, service, region, account, resource] = parts[..] else {
        return Err(bad());
    };
    let ok = scheme == "arn"
        && partition.starts_with("aws")
        && service == "iam"
        && region.is_empty()
        && account.len() == 12
        && account.bytes().all(|b| b.is_ascii_digit())
        && resource
            .strip_prefix("role/")
            .is_some_and(|n| !n.is_empty());
    if ok { Ok(()) } else { Err(bad()) }
}

/// Whether `region` has the shape of an AWS region: `<area>-<direction>-<n>` in lower case,
/// with an optional partition part (`us-gov-west-1`, `cn-north-1`, `eu-central-2`).
///
/// # Errors
/// [`ConfigError::BadRegion`].
pub fn check_region(region: &str) -> Result<(), ConfigError> {
    let parts: Vec<&str> = region.split('-').collect();
    let letters = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase());
    let ok = (3..=4).contains(&parts.len())
        && parts[0].len() == 2
        && letters(parts[0])
        && parts[1..parts.len() - 1].iter().all(|p| letters(p))
        && parts.last().is_some_and(|n| {
            !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit())
        });
    if ok {
        Ok(())
    } else {
        Err(ConfigError::BadRegion(region.to_owned()))
    }
}

/// Static credentials read from a shared-credentials file's `[default]` profile.
#[derive(Clone, PartialEq, Eq)]
pub struct StaticKeys {
    /// `aws_access_key_id`.
    pub access_key_id: String,
    /// `aws_secret_access_key`.
    pub secret_access_key: String,
    /// `aws_session_token`, if any.
    pub session_token: Option<String>,
}

impl std::fmt::Debug for StaticKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticKeys")
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// Parses the `[default]` profile of an AWS shared-credentials file (INI: `key = value`,
/// `#` and `;` comments), as upjet reads a `source: Secret` key.
#[must_use]
pub fn parse_credentials_file(text: &str) -> Option<StaticKeys> {
    let mut section = String::new();
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.trim().to_owned();
            continue;
        }
        if section != "default" {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            values.insert(k.trim().to_owned(), v.trim().to_owned());
        }
    }
    Some(StaticKeys {
        access_key_id: values
            .remove("aws_access_key_id")
            .filter(|v| !v.is_empty())?,
        secret_access_key: values
            .remove("aws_secret_access_key")
            .filter(|v| !v.is_empty())?,
        session_token: values.remove("aws_session_token"),
    })
}

#[cfg(test)]
mod tests;
