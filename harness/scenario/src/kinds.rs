//! What a resource group or a scenario object is made of: one of the sample provider's short
//! kinds, or an `apiVersion` and `kind` that the target serves, with the plural and scope
//! the CRDs give ([`Catalogue`]).

use std::fmt;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::ApiResource;
use limiter::crossplane::Scope;

use super::raw::Kind;

/// A kind named by `apiVersion` and `kind`, resolved against the served CRDs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiKind {
    /// API group (empty for the core group).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural.
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// The provider's AWS flavour serves it: an embedded run needs the harness built with
    /// feature `aws`.
    pub aws: bool,
}

impl ApiKind {
    /// `group/version`, or `version` for the core group.
    #[must_use]
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// kube's API resource of the kind.
    #[must_use]
    pub fn resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: self.api_version(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }
}

/// The kind of a resource group.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GroupKind {
    /// One of the sample provider's kinds, named without `apiVersion`.
    Short(Kind),
    /// Any served kind.
    Api(ApiKind),
}

impl GroupKind {
    /// The kind's scope, which picks its global bucket when the provider runs one per scope
    /// (`scopedBuckets`): `*.m.*` and other namespaced kinds are `Namespaced`.
    #[must_use]
    pub fn scope(&self) -> Scope {
        match self {
            GroupKind::Short(k) => k.scope(),
            GroupKind::Api(a) if a.namespaced => Scope::Namespaced,
            GroupKind::Api(_) => Scope::Cluster,
        }
    }

    /// Whether its objects live in a namespace.
    #[must_use]
    pub fn namespaced(&self) -> bool {
        self.scope() == Scope::Namespaced
    }

    /// The mock-cloud collection of a short kind (the AWS kinds' calls go to mock-cloud's
    /// AWS front ends, which have none).
    #[must_use]
    pub fn collection(&self) -> Option<&'static str> {
        match self {
            GroupKind::Short(k) => Some(k.collection()),
            GroupKind::Api(_) => None,
        }
    }

    /// Whether the cloud provisions it asynchronously for `cloud.provisioning`'s times: the
    /// sample Database, and the AWS flavour's DynamoDB Table, which mock-cloud keeps
    /// `CREATING` (and `DELETING`) for the same times.
    #[must_use]
    pub fn provisioned(&self) -> bool {
        let table = &provider::crd::AWS_KINDS[5];
        match self {
            GroupKind::Short(k) => *k == Kind::Database,
            GroupKind::Api(a) => a.aws && a.group == table.group && a.kind == table.kind,
        }
    }

    /// Its plural and API group, as the API server's paths name them.
    #[must_use]
    pub fn plural_and_group(&self) -> (String, &str) {
        match self {
            GroupKind::Short(k) => (format!("{k:?}s").to_lowercase(), provider::crd::GROUP),
            GroupKind::Api(a) => (a.plural.clone(), a.group.as_str()),
        }
    }

    /// Whether it is one of the AWS flavour's kinds.
    #[must_use]
    pub fn aws(&self) -> bool {
        matches!(self, GroupKind::Api(a) if a.aws)
    }
}

/// `Bucket` for a short kind, `Bucket.s3.aws.m.loadtest.dev` (kind and group, as kubectl
/// names them) for the others: unique among a run's kinds, and what reports key resources
/// by.
impl fmt::Display for GroupKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupKind::Short(k) => write!(f, "{k:?}"),
            GroupKind::Api(a) if a.group.is_empty() => f.write_str(&a.kind),
            GroupKind::Api(a) => write!(f, "{}.{}", a.kind, a.group),
        }
    }
}

/// One served kind and, for custom resources, its `openAPIV3Schema`.
#[derive(Clone, Debug)]
pub struct Served {
    /// The kind.
    pub kind: ApiKind,
    /// The schema rendered objects must pass (none for built-in kinds).
    pub schema: Option<serde_json::Value>,
}

/// The kinds a scenario may name: the CRDs the embedded target installs (the provider's,
/// with the AWS flavour's when the harness is built with feature `aws`), the AWS flavour's
/// kinds by name otherwise (so an error can name the feature), and the built-in `v1` Secret
/// and ConfigMap for scenario objects.
#[derive(Clone, Debug)]
pub struct Catalogue {
    served: Vec<Served>,
}

/// A kind nothing serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unknown;

impl Catalogue {
    /// The embedded target's kinds.
    #[must_use]
    pub fn embedded() -> Catalogue {
        let mut served: Vec<Served> = provider::crd::crds().iter().map(from_crd).collect();
        for k in provider::crd::AWS_KINDS {
            let listed = served
                .iter()
                .any(|s| s.kind.group == k.group && s.kind.kind == k.kind);
            if listed {
                continue;
            }
            served.push(Served {
                kind: ApiKind {
                    group: k.group.to_owned(),
                    version: k.version.to_owned(),
                    kind: k.kind.to_owned(),
                    plural: k.plural.to_owned(),
                    namespaced: k.namespaced,
                    aws: true,
                },
                schema: None,
            });
        }
        served.extend(builtin());
        Catalogue { served }
    }

    /// A profile's kinds, and the built-in `v1` Secret and ConfigMap (no schemas: the
    /// provider's CRDs are not the harness's to know).
    #[must_use]
    pub fn of_profile(kinds: &[ApiKind]) -> Catalogue {
        let mut served: Vec<Served> = kinds
            .iter()
            .map(|k| Served {
                kind: k.clone(),
                schema: None,
            })
            .collect();
        served.extend(builtin());
        Catalogue { served }
    }

    /// The served kind of `api_version` and `kind`. The AWS flavour's kinds resolve in every
    /// build (an embedded run of them needs feature `aws`, which the run checks); their
    /// schemas are known only when the provider is built with its feature `aws`.
    ///
    /// # Errors
    /// [`Unknown`] if nothing serves it.
    pub fn resolve(&self, api_version: &str, kind: &str) -> Result<&Served, Unknown> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let found = self
            .served
            .iter()
            .find(|s| s.kind.group == group && s.kind.version == version && s.kind.kind == kind)
            .ok_or(Unknown)?;
        Ok(found)
    }

    /// Every served `apiVersion kind`, for error messages.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.served
            .iter()
            .map(|s| format!("{} {}", s.kind.api_version(), s.kind.kind))
            .collect()
    }
}

/// The built-in kinds scenario objects may be: `v1` Secret and ConfigMap.
fn builtin() -> impl Iterator<Item = Served> {
    [("Secret", "secrets"), ("ConfigMap", "configmaps")]
        .into_iter()
        .map(|(kind, plural)| Served {
            kind: ApiKind {
                group: String::new(),
                version: "v1".to_owned(),
                kind: kind.to_owned(),
                plural: plural.to_owned(),
                namespaced: true,
                aws: false,
            },
            schema: None,
        })
}

fn from_crd(crd: &CustomResourceDefinition) -> Served {
    let version = crd
        .spec
        .versions
        .iter()
        .find(|v| v.storage)
        .or_else(|| crd.spec.versions.first());
    let aws = provider::crd::AWS_KINDS
        .iter()
        .any(|k| k.group == crd.spec.group && k.kind == crd.spec.names.kind);
    Served {
        kind: ApiKind {
            group: crd.spec.group.clone(),
            version: version.map(|v| v.name.clone()).unwrap_or_default(),
            kind: crd.spec.names.kind.clone(),
            plural: crd.spec.names.plural.clone(),
            namespaced: crd.spec.scope == "Namespaced",
            aws,
        },
        schema: version
            .and_then(|v| v.schema.as_ref())
            .and_then(|s| s.open_api_v3_schema.as_ref())
            .and_then(|s| serde_json::to_value(s).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_resolves_the_aws_kinds_with_their_plural_and_scope() {
        let c = Catalogue::embedded();
        let got = c
            .resolve("s3.aws.loadtest.dev/v1beta1", "Bucket")
            .expect("served");
        assert_eq!(got.kind.plural, "buckets");
        assert!(!got.kind.namespaced && got.kind.aws);
        let vpc = c
            .resolve("ec2.aws.m.loadtest.dev/v1beta1", "VPC")
            .expect("served");
        assert_eq!(
            (vpc.kind.plural.as_str(), vpc.kind.namespaced),
            ("vpcs", true)
        );
        assert!(vpc.kind.aws);
        assert_eq!(
            c.resolve("v1", "Secret").map(|s| s.kind.plural.as_str()),
            Ok("secrets")
        );
        assert_eq!(c.resolve("example.org/v1", "Thing").err(), Some(Unknown));
        let table = c
            .resolve("dynamodb.aws.m.loadtest.dev/v1beta1", "Table")
            .expect("served");
        assert!(GroupKind::Api(table.kind.clone()).provisioned());
        assert!(!GroupKind::Api(vpc.kind.clone()).provisioned());
        assert!(GroupKind::Short(Kind::Database).provisioned());
    }
}
