//! Connect, as upjet's AWS providers do it: on each Connect, credentials from the
//! ProviderConfig (a Secret, or IRSA's AssumeRoleWithWebIdentity), then every role of
//! `assumeRoleChain` with STS AssumeRole, then STS GetCallerIdentity unless both
//! `skip_credentials_validation` and `skip_requesting_account_id` are set, then new SDK
//! clients. `--credential-cache` decides what survives between Connects (after
//! provider-upjet-aws#997 and #1235).
//!
//! STS calls per Connect: `none` = w + c + v, `irsa` = c + v after the first (the web identity
//! exchange is cached), `all` = 0 after the first until the credentials are 5 minutes from
//! expiry; w = 1 for `source: WebIdentity`, c = the chain's length, v = 1 unless both skips
//! are set.

mod clients;
mod credentials;
mod error;
mod modes;

use std::collections::HashMap;
use std::time::Duration;

use aws_credential_types::Credentials;
use aws_smithy_async::time::SharedTimeSource;
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use k8s_openapi::api::core::v1::Secret;
use parking_lot::Mutex;
use tokio::time::Instant;

pub use self::clients::Clients;
use self::clients::{Partitions, Sdk};
use self::credentials::{
    Expiring, fingerprint, missing_credentials, read_key, session_name, sts_credentials,
};
pub use self::error::ConnectError;
pub use self::modes::{CredentialCache, RetryMode, UnknownChoice};
use super::config::{
    ConfigError, CredentialsSource, ProviderConfigSpec, StaticKeys, check_region,
    parse_credentials_file,
};
use super::time::ClockTime;
use crate::reconciler::meta::Clock;

/// How long assumed-role credentials are asked for (STS's default).
pub const SESSION_DURATION: Duration = Duration::from_secs(3600);
/// Cached credentials are renewed this long before they expire.
pub const EXPIRY_MARGIN: Duration = Duration::from_secs(300);
/// The account ID when credential validation and the account lookup are both skipped.
pub const SKIPPED_ACCOUNT_ID: &str = "000000000000";

/// Builds [`Clients`] for a ProviderConfig, caching as `--credential-cache` says. One per
/// provider process.
pub struct Connector {
    sdk: Sdk,
    cache: CredentialCache,
    web_identity: Mutex<HashMap<u64, Expiring<Credentials>>>,
    clients: Mutex<HashMap<u64, Expiring<Clients>>>,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("retry", &self.sdk.retry)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl Connector {
    /// A connector with the SDK's `retry` mode and the `cache` policy, over plain http.
    #[must_use]
    pub fn new(retry: RetryMode, cache: CredentialCache) -> Self {
        Connector::unclocked(retry, cache).with_clock(Clock::new())
    }

    fn unclocked(retry: RetryMode, cache: CredentialCache) -> Self {
        Connector {
            sdk: Sdk {
                retry,
                http: aws_smithy_http_client::Builder::new().build_http(),
                time: None,
                partitions: Partitions::new(0.0),
                attempts: None,
            },
            cache,
            web_identity: Mutex::new(HashMap::new()),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The same, with the SDK clients on `http` (an in-process transport, for example).
    #[must_use]
    pub fn with_http_client(mut self, http: SharedHttpClient) -> Self {
        self.sdk.http = http;
        self
    }

    /// The same, with every HTTP attempt of its SDK clients counted into `requests`
    /// (`provider_cloud_requests_total`; see [`super::attempts`]).
    #[must_use]
    pub fn with_requests(mut self, requests: crate::cloud::CloudRequests) -> Self {
        self.sdk.attempts = Some(super::attempts::CountAttempts::new(requests));
        self
    }

    /// The same, with the SDK clients signing (and pacing) on `clock`'s time rather than the
    /// system's: the provider's one clock, which follows tokio's, so that a run on paused
    /// time signs with the time the in-process cloud checks.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        let time = ClockTime::new(clock);
        self.sdk.partitions = Partitions::new(time.seconds_since_epoch());
        self.sdk.time = Some(SharedTimeSource::new(time));
        self
    }

    /// The retry mode.
    #[must_use]
    pub fn retry_mode(&self) -> RetryMode {
        self.sdk.retry
    }

    /// The cache policy.
    #[must_use]
    pub fn credential_cache(&self) -> CredentialCache {
        self.cache
    }

    /// Connect for a resource of `region` managed through the ProviderConfig `spec` (named
    /// `config_name`); `secrets` looks a Secret up by namespace and name (the provider's
    /// cache).
    ///
    /// # Errors
    /// [`ConnectError::Config`] for anything the user must fix in the ProviderConfig, its
    /// Secret or the region; [`ConnectError::NoEndpoint`]; [`ConnectError::Sts`] when STS
    /// refuses (a role of another account, expired credentials, a throttle past the retries).
    pub async fn connect(
        &self,
        config_name: &str,
        spec: &ProviderConfigSpec,
        region: &str,
        secrets: &(dyn Fn(&str, &str) -> Option<Secret> + Sync),
    ) -> Result<Clients, ConnectError> {
        spec.validate()?;
        if !spec.skip_region_validation {
            check_region(region)?;
        }
        let spec_json = serde_json::to_string(spec).unwrap_or_default();
        // The Secret is read on every Connect (from the cache: no API request), so a rotated
        // key is a new cache entry.
        let (base, secret_text) =
            match spec.credentials.source {
                CredentialsSource::Secret => {
                    let sel =
                        spec.credentials
                            .secret_ref
                            .as_ref()
                            .ok_or(ConfigError::MissingField {
                                given: "Secret",
                                field: "spec.credentials.secretRef",
                            })?;
                    let text = read_key(sel, secrets)?;
                    let keys: StaticKeys = parse_credentials_file(&text).ok_or_else(|| {
                        ConfigError::BadCredentialsFile {
                            namespace: sel.namespace.clone(),
                            name: sel.name.clone(),
                            key: sel.key.clone(),
                        }
                    })?;
                    let c = Credentials::new(
                        keys.access_key_id,
                        keys.secret_access_key,
                        keys.session_token,
                        None,
                        "secret",
                    );
                    (Some(c), text)
                }
                CredentialsSource::WebIdentity => {
                    let w = spec.credentials.web_identity.as_ref().ok_or(
                        ConfigError::MissingField {
                            given: "WebIdentity",
                            field: "spec.credentials.webIdentity",
                        },
                    )?;
                    (None, read_key(&w.token_secret_ref, secrets)?)
                }
                CredentialsSource::None => return Err(ConfigError::NoCredentials.into()),
            };
        let key = fingerprint(&[config_name, region, &spec_json, &secret_text]);
        if self.cache == CredentialCache::All
            && let Some(c) = self.cached(&self.clients, key)
        {
            return Ok(c);
        }
        let sts_url = spec
            .endpoint_for("sts")?
            .ok_or(ConnectError::NoEndpoint("sts"))?;
        let mut renew_at = None;
        let mut creds =
            match base {
                Some(c) => c,
                None => {
                    let w = spec.credentials.web_identity.as_ref().ok_or(
                        ConfigError::MissingField {
                            given: "WebIdentity",
                            field: "spec.credentials.webIdentity",
                        },
                    )?;
                    let cached = (self.cache != CredentialCache::None)
                        .then(|| self.cached(&self.web_identity, key))
                        .flatten();
                    match cached {
                        Some(c) => c,
                        None => {
                            let sts = self.sdk.sts(sts_url, region, None);
                            let out = sts
                                .assume_role_with_web_identity()
                                .role_arn(&w.role_arn)
                                .role_session_name(session_name(config_name))
                                .web_identity_token(secret_text.trim())
                                .duration_seconds(SESSION_DURATION.as_secs() as i32)
                                .send()
                                .await
                                .map_err(|e| ConnectError::sts("AssumeRoleWithWebIdentity", e))?;
                            let c = out
                                .credentials()
                                .map(sts_credentials)
                                .ok_or_else(|| missing_credentials("AssumeRoleWithWebIdentity"))?;
                            let at = Instant::now() + SESSION_DURATION - EXPIRY_MARGIN;
                            renew_at = Some(at);
                            if self.cache != CredentialCache::None {
                                self.web_identity.lock().insert(
                                    key,
                                    Expiring {
                                        value: c.clone(),
                                        renew_at: Some(at),
                                    },
                                );
                            }
                            c
                        }
                    }
                }
            };
        for role in &spec.assume_role_chain {
            let sts = self.sdk.sts(sts_url, region, Some(creds));
            let mut req = sts
                .assume_role()
                .role_arn(&role.role_arn)
                .role_session_name(session_name(config_name))
                .duration_seconds(SESSION_DURATION.as_secs() as i32);
            if let Some(x) = &role.external_id {
                req = req.external_id(x);
            }
            let out = req
                .send()
                .await
                .map_err(|e| ConnectError::sts("AssumeRole", e))?;
            creds = out
                .credentials()
                .map(sts_credentials)
                .ok_or_else(|| missing_credentials("AssumeRole"))?;
            let at = Instant::now() + SESSION_DURATION - EXPIRY_MARGIN;
            renew_at = Some(renew_at.map_or(at, |t: Instant| t.min(at)));
        }
        let sts = self.sdk.sts(sts_url, region, Some(creds.clone()));
        let account_id = if spec.skip_credentials_validation && spec.skip_requesting_account_id {
            SKIPPED_ACCOUNT_ID.to_owned()
        } else {
            let out = sts
                .get_caller_identity()
                .send()
                .await
                .map_err(|e| ConnectError::sts("GetCallerIdentity", e))?;
            out.account().unwrap_or(SKIPPED_ACCOUNT_ID).to_owned()
        };
        let clients = self.sdk.clients(spec, region, creds, sts, account_id)?;
        if self.cache == CredentialCache::All {
            self.clients.lock().insert(
                key,
                Expiring {
                    value: clients.clone(),
                    renew_at,
                },
            );
        }
        Ok(clients)
    }

    fn cached<T: Clone>(&self, map: &Mutex<HashMap<u64, Expiring<T>>>, key: u64) -> Option<T> {
        let mut map = map.lock();
        match map.get(&key).map(Expiring::fresh) {
            Some(Some(v)) => Some(v),
            Some(None) => {
                map.remove(&key);
                None
            }
            None => None,
        }
    }
}
