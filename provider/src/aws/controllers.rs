//! The AWS kinds' controllers: crossplane-runtime's `ExternalConnecter` and `ExternalClient`
//! for [`super::kinds`], on the provider's managed reconciler.
//!
//! Connect resolves `spec.providerConfigRef` from the caches (a `ClusterProviderConfig`, or
//! a `ProviderConfig` in the resource's namespace), then runs [`Connector::connect`] for the
//! resource's region: the ProviderConfig's and region's checks, STS, new SDK clients (as
//! `--credential-cache` allows). Anything wrong there fails the reconcile at P7 with
//! `Synced=False`, a `CannotConnectToProvider` warning event and the per-item backoff; other
//! resources are not affected.

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store};
use limiter::crossplane::{FailureBackoff, Scope};

use super::AwsOptions;
use super::bucket::{self, BucketObservation};
use super::config::ProviderConfigSpec;
use super::connect::{Clients, ConnectError, Connector};
use super::kinds::{
    AwsKind, CLUSTER_PROVIDER_CONFIG, ClusterBucket, ClusterProviderConfig, NamespacedBucket,
    PROVIDER_CONFIG, ProviderConfig, Table,
};
use super::table::{self, TableObservation};
use super::{
    kinds::Vpc,
    vpc::{self, VpcObservation},
};
use crate::kinds::Kinds;
use crate::reconciler::conditions;
use crate::reconciler::{Connecter, ExternalClient, ExternalFailure, Observation};

/// Why an AWS kind could not connect.
#[derive(Debug, thiserror::Error)]
pub enum AwsConnectError {
    /// The referenced ProviderConfig is not in the cache.
    #[error(
        "cannot get {kind} {name:?}{}: create it, or fix spec.providerConfigRef",
        namespace.as_ref().map(|n| format!(" in namespace {n}")).unwrap_or_default()
    )]
    MissingProviderConfig {
        /// `ClusterProviderConfig` or `ProviderConfig`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// Its namespace, for a `ProviderConfig`.
        namespace: Option<String>,
    },
    /// `spec.providerConfigRef.kind` is neither kind, or a namespaced one for a
    /// cluster-scoped resource.
    #[error(
        "spec.providerConfigRef.kind {kind:?} cannot be used here: use ClusterProviderConfig{}",
        if *cluster_scoped { " (a cluster-scoped resource cannot use a namespaced ProviderConfig)" } else { " or ProviderConfig" }
    )]
    BadConfigKind {
        /// What was given.
        kind: String,
        /// Whether the resource is cluster-scoped.
        cluster_scoped: bool,
    },
    /// The ProviderConfig, its Secret, the region or STS.
    #[error(transparent)]
    Connect(#[from] ConnectError),
}

/// A call that needs what this reconcile's Observe read, without it.
#[derive(Debug, thiserror::Error)]
#[error("{0} needs the resource's observed state, and Observe returned none")]
pub struct NotObserved(&'static str);

/// The ProviderConfig caches Connect reads.
#[derive(Clone)]
pub struct Caches {
    cluster_configs: Store<ClusterProviderConfig>,
    configs: Store<ProviderConfig>,
}

impl Caches {
    /// Watches ClusterProviderConfigs and ProviderConfigs (all namespaces) into caches.
    pub(crate) fn watch(client: &kube::Client, watches: &mut tokio::task::JoinSet<()>) -> Self {
        let (cluster_configs, writer) = kube::runtime::reflector::store();
        watches.spawn(crate::watch::reflect_only(
            Api::<ClusterProviderConfig>::all(client.clone()),
            writer,
            "ClusterProviderConfig",
        ));
        let (configs, writer) = kube::runtime::reflector::store();
        watches.spawn(crate::watch::reflect_only(
            Api::<ProviderConfig>::all(client.clone()),
            writer,
            "ProviderConfig.aws.m.loadtest.dev",
        ));
        Caches {
            cluster_configs,
            configs,
        }
    }

    /// Waits until both caches hold their initial lists.
    pub(crate) async fn wait_until_ready(&self) {
        let _ = self.cluster_configs.wait_until_ready().await;
        let _ = self.configs.wait_until_ready().await;
    }
}

/// Connect for the AWS kinds.
pub struct AwsConnecter {
    connector: Connector,
    caches: Caches,
    secrets: Store<Secret>,
    provider_wide: FailureBackoff,
}

impl AwsConnecter {
    /// Connects through `connector`, reading ProviderConfigs from `caches` and Secrets from
    /// `secrets`; `provider_wide` is the flags' failure backoff, which a ProviderConfig's
    /// `reconciliationPolicy` overrides.
    #[must_use]
    pub fn new(
        connector: Connector,
        caches: Caches,
        secrets: Store<Secret>,
        provider_wide: FailureBackoff,
    ) -> Self {
        AwsConnecter {
            connector,
            caches,
            secrets,
            provider_wide,
        }
    }

    /// The ProviderConfig `mr` references, with its name.
    fn config_of<K: AwsKind>(
        &self,
        mr: &K,
    ) -> Result<(String, ProviderConfigSpec), AwsConnectError> {
        let reference = mr.config_ref();
        let cluster_scoped = K::SCOPE == Scope::Cluster;
        match reference.kind.as_str() {
            CLUSTER_PROVIDER_CONFIG => self
                .caches
                .cluster_configs
                .get(&ObjectRef::new(&reference.name))
                .map(|pc| (reference.name.clone(), pc.spec.config.clone()))
                .ok_or_else(|| AwsConnectError::MissingProviderConfig {
                    kind: CLUSTER_PROVIDER_CONFIG,
                    name: reference.name.clone(),
                    namespace: None,
                }),
            PROVIDER_CONFIG if !cluster_scoped => {
                let namespace = mr.namespace().unwrap_or_default();
                self.caches
                    .configs
                    .get(&ObjectRef::new(&reference.name).within(&namespace))
                    .map(|pc| {
                        (
                            format!("{namespace}.{}", reference.name),
                            pc.spec.config.clone(),
                        )
                    })
                    .ok_or(AwsConnectError::MissingProviderConfig {
                        kind: PROVIDER_CONFIG,
                        name: reference.name.clone(),
                        namespace: Some(namespace),
                    })
            }
            other => Err(AwsConnectError::BadConfigKind {
                kind: other.to_owned(),
                cluster_scoped,
            }),
        }
    }

    async fn clients<K: AwsKind>(&self, mr: &K) -> Result<Clients, AwsConnectError> {
        let (name, spec) = self.config_of(mr)?;
        let secrets = |namespace: &str, name: &str| {
            self.secrets
                .get(&ObjectRef::new(name).within(namespace))
                .map(|s| Secret::clone(&s))
        };
        Ok(self
            .connector
            .connect(&name, &spec, mr.region(), &secrets)
            .await?)
    }
}

/// The kinds [`AwsConnecter`] connects: each builds its external client from the clients.
pub trait AwsExternal: AwsKind {
    /// The external client of one reconcile.
    fn external(clients: Clients) -> Box<dyn ExternalClient<Self>>;
}

impl<K: AwsExternal> Connecter<K> for AwsConnecter {
    fn connect<'a>(
        &'a self,
        mr: &'a K,
    ) -> BoxFuture<'a, Result<Box<dyn ExternalClient<K>>, ExternalFailure>> {
        Box::pin(async move {
            let clients = self.clients(mr).await?;
            Ok(K::external(clients))
        })
    }

    fn failure_backoff(&self, mr: &K) -> Option<FailureBackoff> {
        let (_, spec) = self.config_of(mr).ok()?;
        match spec.failure_backoff() {
            Ok((None, None)) | Err(_) => None,
            Ok(_) => spec.effective_backoff(self.provider_wide).ok(),
        }
    }
}

/// The S3 Bucket's external client, for both scopes.
struct BucketClient {
    s3: aws_sdk_s3::Client,
}

/// The parameters of either Bucket kind.
trait BucketKind: AwsKind<AtProvider = BucketObservation> {
    fn parameters(&self) -> &bucket::BucketParameters;
}

impl BucketKind for ClusterBucket {
    fn parameters(&self) -> &bucket::BucketParameters {
        &self.spec.for_provider
    }
}

impl BucketKind for NamespacedBucket {
    fn parameters(&self) -> &bucket::BucketParameters {
        &self.spec.for_provider
    }
}

impl<K: BucketKind> ExternalClient<K> for BucketClient {
    fn observe<'a>(
        &'a self,
        mr: &'a K,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Observation<BucketObservation>, ExternalFailure>> {
        Box::pin(async move {
            Ok(match bucket::observe(&self.s3, name).await? {
                None => Observation::absent(),
                Some(o) => Observation {
                    exists: true,
                    up_to_date: o.up_to_date(mr.parameters()),
                    ready: Some(conditions::available()),
                    at_provider: Some(o),
                },
            })
        })
    }

    fn create<'a>(
        &'a self,
        mr: &'a K,
        name: &'a str,
        _idempotency_key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, ExternalFailure>> {
        Box::pin(async move {
            bucket::create(&self.s3, name, mr.parameters()).await?;
            Ok(None)
        })
    }

    fn update<'a>(
        &'a self,
        mr: &'a K,
        name: &'a str,
        observed: Option<&'a BucketObservation>,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>> {
        Box::pin(async move {
            let observed = observed.ok_or(NotObserved("Bucket update"))?;
            Ok(bucket::update(&self.s3, name, mr.parameters(), observed).await?)
        })
    }

    fn delete<'a>(
        &'a self,
        _mr: &'a K,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>> {
        Box::pin(async move { Ok(bucket::delete(&self.s3, name).await?) })
    }
}

impl AwsExternal for ClusterBucket {
    fn external(clients: Clients) -> Box<dyn ExternalClient<Self>> {
        Box::new(BucketClient { s3: clients.s3 })
    }
}

impl AwsExternal for NamespacedBucket {
    fn external(clients: Clients) -> Box<dyn ExternalClient<Self>> {
        Box::new(BucketClient { s3: clients.s3 })
    }
}

/// The EC2 VPC's external client.
struct VpcClient {
    ec2: aws_sdk_ec2::Client,
}

impl ExternalClient<Vpc> for VpcClient {
    fn observe<'a>(
        &'a self,
        mr: &'a Vpc,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Observation<VpcObservation>, ExternalFailure>> {
        Box::pin(async move {
            Ok(match vpc::observe(&self.ec2, id).await? {
                None => Observation::absent(),
                Some(o) => {
                    let available = o.state == "available";
                    Observation {
                        exists: true,
                        up_to_date: !available || o.up_to_date(&mr.spec.for_provider),
                        ready: Some(if available {
                            conditions::available()
                        } else {
                            conditions::creating()
                        }),
                        at_provider: Some(o),
                    }
                }
            })
        })
    }

    fn create<'a>(
        &'a self,
        mr: &'a Vpc,
        _name: &'a str,
        _idempotency_key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, ExternalFailure>> {
        Box::pin(async move { Ok(Some(vpc::create(&self.ec2, &mr.spec.for_provider).await?)) })
    }

    fn update<'a>(
        &'a self,
        mr: &'a Vpc,
        _id: &'a str,
        observed: Option<&'a VpcObservation>,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>> {
        Box::pin(async move {
            let observed = observed.ok_or(NotObserved("VPC update"))?;
            Ok(vpc::update(&self.ec2, &mr.spec.for_provider, observed).await?)
        })
    }

    fn delete<'a>(
        &'a self,
        _mr: &'a Vpc,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>> {
        Box::pin(async move { Ok(vpc::delete(&self.ec2, id).await?) })
    }
}

impl AwsExternal for Vpc {
    fn external(clients: Clients) -> Box<dyn ExternalClient<Self>> {
        Box::new(VpcClient { ec2: clients.ec2 })
    }
}

/// The DynamoDB Table's external client.
struct TableClient {
    dynamodb: aws_sdk_dynamodb::Client,
}

impl ExternalClient<Table> for TableClient {
    fn observe<'a>(
        &'a self,
        mr: &'a Table,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Observation<TableObservation>, ExternalFailure>> {
        Box::pin(async move {
            Ok(match table::observe(&self.dynamodb, name).await? {
                None => Observation::absent(),
                Some(o) => {
                    let ready = match o.status.as_str() {
                        "ACTIVE" => conditions::available(),
                        "CREATING" => conditions::creating(),
                        "DELETING" => conditions::deleting(),
                        _ => conditions::unavailable(),
                    };
                    // A table that is not ACTIVE cannot be tagged: up to date until it is.
                    Observation {
                        exists: true,
                        up_to_date: !o.ready() || o.up_to_date(&mr.spec.for_provider),
                        ready: Some(ready),
                        at_provider: Some(o),
                    }
                }
            })
        })
    }

    fn create<'a>(
        &'a self,
        mr: &'a Table,
        name: &'a str,
        _idempotency_key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, ExternalFailure>> {
        Box::pin(async move {
            table::create(&self.dynamodb, name, &mr.spec.for_provider).await?;
            Ok(None)
        })
    }

    fn update<'a>(
        &'a self,
        mr: &'a Table,
        _name: &'a str,
        observed: Option<&'a TableObservation>,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>> {
        Box::pin(async move {
            let observed = observed.ok_or(NotObserved("Table update"))?;
            Ok(table::update(&self.dynamodb, &mr.spec.for_provider, observed).await?)
        })
    }

    fn delete<'a>(
        &'a self,
        _mr: &'a Table,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), ExternalFailure>> {
        Box::pin(async move { Ok(table::delete(&self.dynamodb, name).await?) })
    }
}

impl AwsExternal for Table {
    fn external(clients: Clients) -> Box<dyn ExternalClient<Self>> {
        Box::new(TableClient {
            dynamodb: clients.dynamodb,
        })
    }
}

/// Starts the AWS controllers, their SDK calls counted
/// into `requests`.
pub(crate) fn start(
    kinds: &mut Kinds<'_>,
    caches: Caches,
    secrets: Store<Secret>,
    options: &AwsOptions,
    requests: crate::cloud::CloudRequests,
) {
    let mut connector = Connector::new(options.retry_mode, options.credential_cache)
        .with_clock(kinds.ctx.clock)
        .with_requests(requests);
    if let Some(http) = &options.http {
        connector = connector.with_http_client(http.clone());
    }
    let provider_wide = kinds.ctx.settings.failure_backoff();
    let connecter = Arc::new(AwsConnecter::new(connector, caches, secrets, provider_wide));
    kinds.start::<ClusterBucket>(connecter.clone());
    kinds.start::<NamespacedBucket>(connecter.clone());
    kinds.start::<Vpc>(connecter.clone());
    kinds.start::<Table>(connecter);
}
