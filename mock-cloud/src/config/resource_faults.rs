//! Per-resource faults: rules that pick resources by name pattern, tag or a seeded share,
//! and what the cloud then does to them (a lasting error, NotFound after a create, drift
//! that never converges, a create that stays `creating`).

use std::fmt;
use std::time::Duration;

use strum::{EnumString, IntoStaticStr};

use crate::model::{Action, Collection};

/// The kind of resource a rule's `collection` names: a collection of the generic API, or
/// the resource of an AWS front end (`s3/buckets`, `dynamodb/tables`, `ec2/vpcs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceKind {
    /// A collection of the generic API (`buckets`, `databases`, `records`).
    Collection(Collection),
    /// S3's buckets (an object operation counts as its bucket's).
    S3Buckets,
    /// DynamoDB's tables.
    DynamoDbTables,
    /// EC2's VPCs.
    Ec2Vpcs,
}

impl ResourceKind {
    /// The AWS front ends' kinds, in a stable order.
    pub const AWS: [ResourceKind; 3] = [
        ResourceKind::S3Buckets,
        ResourceKind::DynamoDbTables,
        ResourceKind::Ec2Vpcs,
    ];

    /// The name in the config: the collection's, or `<service>/<resources>`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Collection(c) => c.as_str(),
            ResourceKind::S3Buckets => "s3/buckets",
            ResourceKind::DynamoDbTables => "dynamodb/tables",
            ResourceKind::Ec2Vpcs => "ec2/vpcs",
        }
    }

    /// Parses a name of [`ResourceKind::as_str`].
    pub fn parse(s: &str) -> Option<ResourceKind> {
        Collection::parse(s)
            .map(ResourceKind::Collection)
            .or_else(|| ResourceKind::AWS.into_iter().find(|k| k.as_str() == s))
    }

    /// Every name [`ResourceKind::parse`] reads.
    pub fn names() -> impl Iterator<Item = &'static str> {
        Collection::ALL
            .into_iter()
            .map(ResourceKind::Collection)
            .chain(ResourceKind::AWS)
            .map(ResourceKind::as_str)
    }
}

impl From<Collection> for ResourceKind {
    fn from(c: Collection) -> ResourceKind {
        ResourceKind::Collection(c)
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ResourceKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ResourceKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ResourceKind, D::Error> {
        let name = String::deserialize(d)?;
        ResourceKind::parse(&name).ok_or_else(|| {
            let known: Vec<&str> = ResourceKind::names().collect();
            serde::de::Error::custom(format!(
                "unknown collection {name:?}, expected one of {}",
                known.join(", ")
            ))
        })
    }
}

/// Which resources a [`ResourceFault`] applies to. Every part that is set must hold.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceSelector {
    /// Only resources of this kind: a generic collection, or an AWS front end's buckets,
    /// tables or VPCs.
    pub collection: Option<ResourceKind>,
    /// A name pattern: `*` matches any run of characters (`bench-*`, `*-7`, `db-?` is
    /// literal); `None` matches every name.
    pub name: Option<String>,
    /// A tag `(key, value)`: the resource's `spec.tags.<key>` must be the string `value`
    /// (as written in the create; for a resource that does not exist yet, its create body).
    /// On the AWS front ends, the resource's tags: those of its create request (S3's
    /// `CreateBucketConfiguration` `Tags`, DynamoDB's `Tags`, EC2's `TagSpecifications`),
    /// then as its tagging calls change them.
    pub tag: Option<(String, String)>,
    /// A share in percent (0 to 100) of the resources the other parts match, chosen by a
    /// hash of the fault seed and the name: the same names for a seed, whatever the order
    /// or number of requests.
    pub percent: Option<f64>,
}

/// A lasting error that a resource answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, IntoStaticStr, EnumString)]
pub enum LastingError {
    /// 403 `AccessDenied`: a missing permission. Every action fails.
    AccessDenied,
    /// 409 `Conflict`: the name is taken elsewhere (S3's `BucketAlreadyExists`). Creates fail;
    /// reads find nothing.
    Conflict,
    /// 400 `ValidationError`: a policy or a field the cloud refuses. Creates and updates fail.
    Validation,
}

impl LastingError {
    /// Every lasting error, in a stable order.
    pub const ALL: [LastingError; 3] = [
        LastingError::AccessDenied,
        LastingError::Conflict,
        LastingError::Validation,
    ];

    /// The name in the config and in scenarios.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses a name.
    pub fn parse(s: &str) -> Option<LastingError> {
        s.parse().ok()
    }

    /// The HTTP status.
    pub fn status(self) -> u16 {
        match self {
            LastingError::AccessDenied => 403,
            LastingError::Conflict => 409,
            LastingError::Validation => 400,
        }
    }

    /// The error code the response carries unless the rule names another.
    pub fn default_code(self) -> &'static str {
        match self {
            LastingError::AccessDenied => "AccessDenied",
            LastingError::Conflict => "Conflict",
            LastingError::Validation => "ValidationError",
        }
    }

    /// The actions it fails unless the rule names them.
    pub fn default_actions(self) -> &'static [Action] {
        match self {
            LastingError::AccessDenied => {
                &[Action::Create, Action::Get, Action::Update, Action::Delete]
            }
            LastingError::Conflict => &[Action::Create],
            LastingError::Validation => &[Action::Create, Action::Update],
        }
    }
}

/// What the cloud does to a selected resource.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceEffect {
    /// Every request of `actions` on the resource fails with the error.
    Error {
        /// Which error.
        error: LastingError,
        /// The code in the response (`None`: the error's own).
        code: Option<String>,
        /// The actions that fail (`None`: the error's defaults).
        actions: Option<Vec<Action>>,
    },
    /// Reads answer 404 until `duration` has passed since the resource was created
    /// (eventual consistency).
    NotFoundAfterCreate {
        /// How long it stays invisible.
        duration: Duration,
    },
    /// Every read reports `spec.<field>` different from what was written, so the resource
    /// never looks up to date (`None`: an extra field `drift` the writer never sets).
    Drift {
        /// The top-level spec field that drifts.
        field: Option<String>,
    },
    /// A create leaves the resource `creating` for `duration` (whatever its collection; on
    /// AWS a DynamoDB table `CREATING`, an EC2 VPC `pending`; S3 has no creating state, so
    /// it selects no S3 bucket, and a rule with `collection: s3/buckets` is refused).
    SlowCreate {
        /// How long it stays `creating`.
        duration: Duration,
    },
    /// The resource's lasting-error answers (another rule's [`ResourceEffect::Error`])
    /// carry a retry hint: `Retry-After` in whole seconds (rounded up) and, on the AWS
    /// front ends, `x-amz-retry-after` in milliseconds. A client that honours hints makes
    /// no request for the resource before it has passed.
    RetryAfter {
        /// The wait the hint asks for.
        after: Duration,
    },
}

/// One per-resource fault rule.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceFault {
    /// The resources it applies to.
    pub select: ResourceSelector,
    /// What happens to them.
    pub effect: ResourceEffect,
}

impl ResourceSelector {
    /// Whether the name matches the pattern (no tag or share check).
    pub fn name_matches(&self, name: &str) -> bool {
        self.name.as_deref().is_none_or(|p| glob(p, name))
    }
}

/// `*`-only glob match, iterative with one backtrack point.
pub(crate) fn glob(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && p[i] == b'*' {
            star = Some((i, j));
            i += 1;
        } else if i < p.len() && p[i] == n[j] {
            i += 1;
            j += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn a_glob_matches_runs_of_any_characters_only_at_its_stars() {
        assert!(glob("bench-*", "bench-17"));
        assert!(glob("*-7", "bench-7"));
        assert!(glob("b*h-*7", "bench-17"));
        assert!(glob("*", ""));
        assert!(!glob("bench-*", "bench"));
        assert!(!glob("db-?", "db-1"));
        assert!(glob("db-?", "db-?"));
        assert!(!glob("a*b", "acbd"));
    }
}
