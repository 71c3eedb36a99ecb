//! Connect and the four external calls: crossplane-runtime's `ExternalConnecter` and
//! `ExternalClient`, for the mock cloud.

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::{ObjectRef, Store};
use limiter::crossplane::FailureBackoff;

use super::conditions;
use crate::cloud::{AccountClient, CloudClient, CloudError};
use crate::crd::{AtProvider, CloudKind, Condition, Managed, ProviderConfig, SpecError};

/// Why Connect failed (path P7: `connect failed: …`).
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No ProviderConfig of that name in the cache.
    #[error("cannot get ProviderConfig {0:?}")]
    MissingProviderConfig(String),
    /// The credentials Secret is not in the cache.
    #[error("cannot get credentials Secret {namespace}/{name}")]
    MissingSecret {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// The Secret has no such key, or its value is not UTF-8.
    #[error("credentials Secret {namespace}/{name} has no usable key {key:?}")]
    MissingKey {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// The key.
        key: String,
    },
}

/// Why a Create or Update did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    /// The spec cannot be sent.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The cloud refused or failed.
    #[error(transparent)]
    Cloud(#[from] CloudError),
}

/// What Observe found (crossplane-runtime's `ExternalObservation`, plus the conditions and
/// `atProvider` it sets on the resource).
#[derive(Clone, Debug, PartialEq)]
pub struct Observation<A = AtProvider> {
    /// The cloud resource exists.
    pub exists: bool,
    /// Its spec matches `spec.forProvider` (always true while it is provisioning).
    pub up_to_date: bool,
    /// `Ready` as Observe sees it.
    pub ready: Option<Condition>,
    /// The cloud's view.
    pub at_provider: Option<A>,
}

impl<A> Observation<A> {
    /// The resource does not exist.
    #[must_use]
    pub fn absent() -> Self {
        Observation {
            exists: false,
            up_to_date: false,
            ready: None,
            at_provider: None,
        }
    }
}

/// An external call's failure, as the reconciler reports it: the condition message and
/// event are its [`error_chain`](super::conditions::error_chain). Each flavour's calls fail
/// with their own error type ([`ConnectError`], [`ExternalError`], the AWS flavour's).
pub type ExternalFailure = Box<dyn std::error::Error + Send + Sync + 'static>;

/// crossplane-runtime's `ExternalConnecter`: builds the client of one reconcile.
pub trait Connecter<K: Managed>: Send + Sync + 'static {
    /// Connect for `mr` (path P7).
    fn connect<'a>(
        &'a self,
        mr: &'a K,
    ) -> BoxFuture<'a, Result<Box<dyn ExternalClient<K>>, ExternalFailure>>;

    /// The failure backoff that wins over the controller's for `mr` (an AWS ProviderConfig's
    /// `reconciliationPolicy`), if any.
    fn failure_backoff(&self, mr: &K) -> Option<FailureBackoff> {
        let _ = mr;
        None
    }
}

/// crossplane-runtime's `ExternalClient`: the four calls of one connected reconcile.
pub trait ExternalClient<K: Managed>: Send + Sync {
    /// Observe the resource named `external_name`.
    fn observe<'a>(
        &'a self,
        mr: &'a K,
        external_name: &'a str,
    ) -> BoxFuture<'a, Result<Observation<K::AtProvider>, ExternalFailure>>;

    /// Create it; returns the external name when the cloud assigned it (kinds with
    /// [`Managed::NAME_AS_EXTERNAL_NAME`] false).
    fn create<'a>(
        &'a self,
        mr: &'a K,
        external_name: &'a str,
        idempotency_key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, ExternalFailure>>;

    /// Update it to `spec.forProvider`; `observed` is what this reconcile's Observe found.
    fn update<'a>(
        &'a self,
        mr: &'a K,
        external_name: &'a str,
        observed: Option<&'a K::AtProvider>,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>>;

    /// Delete it; already gone counts as deleted.
    fn delete<'a>(
        &'a self,
        mr: &'a K,
        external_name: &'a str,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>>;
}

/// The mock-cloud kinds' [`Connecter`]: the ProviderConfig and its Secret from the caches.
pub struct CloudConnecter {
    cloud: CloudClient,
    provider_configs: Store<ProviderConfig>,
    secrets: Store<Secret>,
}

impl CloudConnecter {
    /// Connects through `cloud` with the cached ProviderConfigs and Secrets.
    #[must_use]
    pub fn new(
        cloud: CloudClient,
        provider_configs: Store<ProviderConfig>,
        secrets: Store<Secret>,
    ) -> Self {
        CloudConnecter {
            cloud,
            provider_configs,
            secrets,
        }
    }
}

impl<K: CloudKind> Connecter<K> for CloudConnecter {
    fn connect<'a>(
        &'a self,
        mr: &'a K,
    ) -> BoxFuture<'a, Result<Box<dyn ExternalClient<K>>, ExternalFailure>> {
        let connected = connect(
            &self.cloud,
            &self.provider_configs,
            &self.secrets,
            mr.provider_config_name(),
        );
        Box::pin(std::future::ready(
            connected
                .map(|e| Box::new(e) as Box<dyn ExternalClient<K>>)
                .map_err(Into::into),
        ))
    }
}

impl<K: CloudKind> ExternalClient<K> for External {
    fn observe<'a>(
        &'a self,
        mr: &'a K,
        external_name: &'a str,
    ) -> BoxFuture<'a, Result<Observation, ExternalFailure>> {
        Box::pin(async move { Ok(External::observe(self, mr, external_name).await?) })
    }

    fn create<'a>(
        &'a self,
        mr: &'a K,
        external_name: &'a str,
        idempotency_key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, ExternalFailure>> {
        Box::pin(async move {
            External::create(self, mr, external_name, idempotency_key).await?;
            Ok(None)
        })
    }

    fn update<'a>(
        &'a self,
        mr: &'a K,
        external_name: &'a str,
        _observed: Option<&'a AtProvider>,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>> {
        Box::pin(async move { Ok(External::update(self, mr, external_name).await?) })
    }

    fn delete<'a>(
        &'a self,
        _mr: &'a K,
        external_name: &'a str,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>> {
        Box::pin(async move { Ok(External::delete::<K>(self, external_name).await?) })
    }
}

/// A connected client for one resource's account.
#[derive(Clone, Debug)]
pub struct External {
    client: AccountClient,
}

/// Connect: the ProviderConfig and its Secret come from the caches; no API request.
///
/// # Errors
/// A missing ProviderConfig, Secret or key.
pub fn connect(
    cloud: &CloudClient,
    provider_configs: &Store<ProviderConfig>,
    secrets: &Store<Secret>,
    name: &str,
) -> Result<External, ConnectError> {
    let pc = provider_configs
        .get(&ObjectRef::new(name))
        .ok_or_else(|| ConnectError::MissingProviderConfig(name.to_owned()))?;
    let selector = &pc.spec.credentials.secret_ref;
    let secret = secrets
        .get(&ObjectRef::new(&selector.name).within(&selector.namespace))
        .ok_or_else(|| ConnectError::MissingSecret {
            namespace: selector.namespace.clone(),
            name: selector.name.clone(),
        })?;
    let token = secret
        .data
        .as_ref()
        .and_then(|d| d.get(&selector.key))
        .and_then(|v| std::str::from_utf8(&v.0).ok())
        .map(|t| t.trim().to_owned())
        .or_else(|| {
            secret
                .string_data
                .as_ref()
                .and_then(|d| d.get(&selector.key))
                .cloned()
        })
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ConnectError::MissingKey {
            namespace: selector.namespace.clone(),
            name: selector.name.clone(),
            key: selector.key.clone(),
        })?;
    Ok(External {
        client: cloud.account(&pc.spec.account, &token),
    })
}

impl External {
    /// Observe: one GET.
    ///
    /// # Errors
    /// Any cloud error but 404.
    pub async fn observe<K: CloudKind>(
        &self,
        mr: &K,
        external_name: &str,
    ) -> Result<Observation, CloudError> {
        let Some(found) = self.client.get(K::COLLECTION, external_name).await? else {
            return Ok(Observation::absent());
        };
        let (ready, up_to_date) = match found.state.as_str() {
            "available" => (
                conditions::available(),
                mr.cloud_spec().is_ok_and(|spec| spec == found.spec),
            ),
            "creating" => (conditions::creating(), true),
            "deleting" => (conditions::deleting(), true),
            _ => (conditions::unavailable(), true),
        };
        Ok(Observation {
            exists: true,
            up_to_date,
            ready: Some(ready),
            at_provider: Some(AtProvider {
                state: Some(found.state),
                generation: Some(found.generation),
            }),
        })
    }

    /// Create: one POST with an idempotency key (none if the spec is invalid).
    ///
    /// # Errors
    /// An invalid spec or a cloud error.
    pub async fn create<K: CloudKind>(
        &self,
        mr: &K,
        external_name: &str,
        idempotency_key: &str,
    ) -> Result<(), ExternalError> {
        let spec = mr.cloud_spec()?;
        self.client
            .create(K::COLLECTION, external_name, &spec, idempotency_key)
            .await?;
        Ok(())
    }

    /// Update: one PUT (none if the spec is invalid).
    ///
    /// # Errors
    /// An invalid spec or a cloud error.
    pub async fn update<K: CloudKind>(
        &self,
        mr: &K,
        external_name: &str,
    ) -> Result<(), ExternalError> {
        let spec = mr.cloud_spec()?;
        self.client
            .update(K::COLLECTION, external_name, &spec)
            .await?;
        Ok(())
    }

    /// Delete: one DELETE; already gone counts as deleted.
    ///
    /// # Errors
    /// A cloud error.
    pub async fn delete<K: CloudKind>(&self, external_name: &str) -> Result<(), CloudError> {
        self.client.delete(K::COLLECTION, external_name).await
    }
}
