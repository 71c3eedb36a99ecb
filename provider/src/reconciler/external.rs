//! Connect and the four external calls: crossplane-runtime's `ExternalConnecter` and
//! `ExternalClient`, for the mock cloud.

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::{ObjectRef, Store};

use super::conditions;
use crate::cloud::{AccountClient, CloudClient, CloudError};
use crate::crd::{AtProvider, Condition, Managed, ProviderConfig, SpecError};

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
pub struct Observation {
    /// The cloud resource exists.
    pub exists: bool,
    /// Its spec matches `spec.forProvider` (always true while it is provisioning).
    pub up_to_date: bool,
    /// `Ready` as Observe sees it.
    pub ready: Option<Condition>,
    /// The cloud's view.
    pub at_provider: Option<AtProvider>,
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
    pub async fn observe<K: Managed>(
        &self,
        mr: &K,
        external_name: &str,
    ) -> Result<Observation, CloudError> {
        let Some(found) = self.client.get(K::COLLECTION, external_name).await? else {
            return Ok(Observation {
                exists: false,
                up_to_date: false,
                ready: None,
                at_provider: None,
            });
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
    pub async fn create<K: Managed>(
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
    pub async fn update<K: Managed>(
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
    pub async fn delete<K: Managed>(&self, external_name: &str) -> Result<(), CloudError> {
        self.client.delete(K::COLLECTION, external_name).await
    }
}
