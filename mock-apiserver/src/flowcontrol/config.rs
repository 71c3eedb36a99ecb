//! API Priority and Fairness configuration: priority levels and flow schemas, read from
//! `flowcontrol.apiserver.k8s.io/v1` objects (the bootstrap set, `bootstrap.yaml`, and any
//! a user adds), and matched as `k8s.io/apiserver/pkg/util/flowcontrol/rule.go` matches
//! them.

use std::time::Duration;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::identity::{User, service_account};

/// kube-apiserver's default configuration (`apis/flowcontrol/bootstrap/default.go`).
const BOOTSTRAP: &str = include_str!("bootstrap.yaml");

/// API Priority and Fairness settings: what [`FlowControl::PriorityAndFairness`](super::FlowControl::PriorityAndFairness)
/// (crate::FlowControl) runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorityAndFairness {
    /// Seats the limited priority levels share, in proportion to their
    /// `nominalConcurrencyShares` (each gets `ceil(limit × shares ÷ sum of shares)`).
    /// kube-apiserver's is `--max-requests-inflight` + `--max-mutating-requests-inflight`,
    /// 400 + 200 by default.
    pub server_concurrency_limit: usize,
    /// How long a request may wait in its queue before it is rejected (`time-out`):
    /// kube-apiserver allows a quarter of `--request-timeout` (60 s), 15 s.
    pub request_wait_limit: Duration,
    /// The priority levels.
    pub priority_levels: Vec<PriorityLevel>,
    /// The flow schemas, in matching order (precedence, then name).
    pub flow_schemas: Vec<FlowSchema>,
}

impl Default for PriorityAndFairness {
    /// kube-apiserver's defaults: the bootstrap priority levels and flow schemas, 600
    /// seats, 15 s in a queue at most.
    fn default() -> Self {
        let mut apf = Self {
            server_concurrency_limit: 600,
            request_wait_limit: Duration::from_secs(15),
            priority_levels: Vec::new(),
            flow_schemas: Vec::new(),
        };
        apf.add_objects_yaml(BOOTSTRAP)
            .expect("the bootstrap configuration is valid");
        apf
    }
}

/// A priority level (`PriorityLevelConfiguration`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorityLevel {
    /// Its name.
    pub name: String,
    /// Its uid, sent in `X-Kubernetes-PF-PriorityLevel-UID`.
    pub uid: String,
    /// Exempt, or limited and how.
    pub kind: LevelKind,
}

/// What a priority level does with requests beyond its seats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelKind {
    /// No limit (`type: Exempt`).
    Exempt,
    /// `type: Limited`.
    Limited {
        /// `nominalConcurrencyShares`.
        shares: u32,
        /// `limitResponse`.
        response: LimitResponse,
    },
}

/// `limitResponse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitResponse {
    /// `type: Reject`: a request beyond the seats is rejected at once.
    Reject,
    /// `type: Queue`: it waits in one of `queues`, chosen by shuffle sharding from a hand
    /// of `hand_size`, and is rejected when that queue holds `queue_length_limit`.
    Queue {
        /// `queues`.
        queues: u32,
        /// `handSize`.
        hand_size: u32,
        /// `queueLengthLimit`.
        queue_length_limit: u32,
    },
}

/// A flow schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSchema {
    /// Its name.
    pub name: String,
    /// Its uid, sent in `X-Kubernetes-PF-FlowSchema-UID`.
    pub uid: String,
    /// The priority level's name.
    pub priority_level: String,
    /// `matchingPrecedence`: lower matches first.
    pub matching_precedence: u32,
    /// `distinguisherMethod`: what separates flows (and so queues).
    pub distinguisher: Option<Distinguisher>,
    /// `rules`: the schema matches a request any of them matches.
    pub rules: Vec<PolicyRules>,
}

/// `distinguisherMethod.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distinguisher {
    /// One flow per user.
    ByUser,
    /// One flow per namespace.
    ByNamespace,
}

/// `PolicyRulesWithSubjects`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyRules {
    /// `subjects`.
    pub subjects: Vec<Subject>,
    /// `resourceRules`.
    pub resource_rules: Vec<ResourceRule>,
    /// `nonResourceRules`.
    pub non_resource_rules: Vec<NonResourceRule>,
}

/// A subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A user name, or `*`.
    User(String),
    /// A group name, or `*`.
    Group(String),
    /// A service account in a namespace; the name may be `*`.
    ServiceAccount {
        /// Its namespace.
        namespace: String,
        /// Its name, or `*`.
        name: String,
    },
}

/// `ResourcePolicyRule`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceRule {
    /// `verbs`.
    pub verbs: Vec<String>,
    /// `apiGroups`.
    pub api_groups: Vec<String>,
    /// `resources` (`resource` or `resource/subresource`).
    pub resources: Vec<String>,
    /// `namespaces`.
    pub namespaces: Vec<String>,
    /// `clusterScope`.
    pub cluster_scope: bool,
}

/// `NonResourcePolicyRule`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NonResourceRule {
    /// `verbs`.
    pub verbs: Vec<String>,
    /// `nonResourceURLs` (`*`, an exact path, or a prefix ending in `/*`).
    pub urls: Vec<String>,
}

/// What a request is, for matching (`RequestDigest`).
#[derive(Debug, Clone)]
pub struct RequestDigest<'a> {
    /// Who sent it.
    pub user: &'a User,
    /// A resource request (`/api/v1/...`, `/apis/g/v/...`) or not.
    pub resource_request: bool,
    /// The verb: `get`, `list`, `watch`, `create`, ... for resources; the lowercase
    /// method otherwise.
    pub verb: &'a str,
    /// The API group.
    pub api_group: &'a str,
    /// The resource (plural).
    pub resource: &'a str,
    /// The subresource.
    pub subresource: &'a str,
    /// The namespace, empty for cluster-scoped requests.
    pub namespace: &'a str,
    /// The path, for non-resource requests.
    pub path: &'a str,
}

/// A configuration object that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The YAML did not parse.
    #[error("invalid yaml: {0}")]
    Yaml(#[source] serde_saphyr::Error),
    /// A document is wrong; `at` names it and the field.
    #[error("document {index} ({name}): {message}")]
    Invalid {
        /// Index of the document in the file, from 0.
        index: usize,
        /// `kind/name`, as far as known.
        name: String,
        /// What was expected.
        message: String,
    },
}

/// A stable uid for a bootstrap object, formatted as a uuid (a real cluster's are random).
fn uid_for(kind: &str, name: &str) -> String {
    let hash = Sha256::digest(format!("{kind}/{name}").as_bytes());
    let h: String = hash.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn strings(value: &Value, field: &str) -> Result<Vec<String>, String> {
    match value.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{field}: expected strings, found {v}"))
            })
            .collect(),
        Some(other) => Err(format!(
            "{field}: expected a list of strings, found {other}"
        )),
    }
}

fn uint(value: &Value, field: &str, default: u32) -> Result<u32, String> {
    match value.get(field) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{field}: expected a non-negative integer, found {v}")),
    }
}

fn priority_level(object: &Value, name: &str) -> Result<LevelKind, String> {
    let spec = &object["spec"];
    match spec["type"].as_str() {
        Some("Exempt") => Ok(LevelKind::Exempt),
        Some("Limited") => {
            let limited = &spec["limited"];
            // v1 defaults nominalConcurrencyShares to 30 (defaults.go).
            let shares = uint(limited, "nominalConcurrencyShares", 30)
                .map_err(|e| format!("spec.limited.{e}"))?;
            let response = &limited["limitResponse"];
            let response = match response["type"].as_str() {
                Some("Reject") => LimitResponse::Reject,
                Some("Queue") => {
                    let q = &response["queuing"];
                    let at = |e: String| format!("spec.limited.limitResponse.queuing.{e}");
                    let queues = uint(q, "queues", 64).map_err(at)?;
                    let hand_size = uint(q, "handSize", 8).map_err(at)?;
                    let queue_length_limit = uint(q, "queueLengthLimit", 50).map_err(at)?;
                    if queues == 0 || hand_size == 0 || hand_size > queues || hand_size > 8 {
                        return Err(format!(
                            "spec.limited.limitResponse.queuing: expected 1 <= handSize <= queues and handSize <= 8, found queues {queues}, handSize {hand_size}"
                        ));
                    }
                    LimitResponse::Queue {
                        queues,
                        hand_size,
                        queue_length_limit,
                    }
                }
                other => {
                    return Err(format!(
                        "spec.limited.limitResponse.type: expected Queue or Reject, found {other:?}"
                    ));
                }
            };
            Ok(LevelKind::Limited { shares, response })
        }
        other => Err(format!(
            "spec.type of priority level {name}: expected Exempt or Limited, found {other:?}"
        )),
    }
}

fn subject(value: &Value) -> Result<Subject, String> {
    let name = |outer: &str| {
        value[outer]["name"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("subjects: a {outer} subject needs {outer}.name"))
    };
    match value["kind"].as_str() {
        Some("User") => Ok(Subject::User(name("user")?)),
        Some("Group") => Ok(Subject::Group(name("group")?)),
        Some("ServiceAccount") => Ok(Subject::ServiceAccount {
            namespace: value["serviceAccount"]["namespace"]
                .as_str()
                .map(str::to_owned)
                .ok_or("subjects: a ServiceAccount subject needs serviceAccount.namespace")?,
            name: name("serviceAccount")?,
        }),
        other => Err(format!(
            "subjects[].kind: expected User, Group or ServiceAccount, found {other:?}"
        )),
    }
}

fn items<T>(
    value: &Value,
    field: &str,
    read: impl Fn(&Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    match value.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => list.iter().map(read).collect(),
        Some(other) => Err(format!("{field}: expected a list, found {other}")),
    }
}

fn flow_schema(
    object: &Value,
) -> Result<(String, u32, Option<Distinguisher>, Vec<PolicyRules>), String> {
    let spec = &object["spec"];
    let level = spec["priorityLevelConfiguration"]["name"]
        .as_str()
        .ok_or("spec.priorityLevelConfiguration.name: expected the priority level's name")?
        .to_owned();
    let precedence = uint(spec, "matchingPrecedence", 1000).map_err(|e| format!("spec.{e}"))?;
    if !(1..=10_000).contains(&precedence) {
        return Err(format!(
            "spec.matchingPrecedence: expected 1 to 10000, found {precedence}"
        ));
    }
    let distinguisher = match spec["distinguisherMethod"]["type"].as_str() {
        None => None,
        Some("ByUser") => Some(Distinguisher::ByUser),
        Some("ByNamespace") => Some(Distinguisher::ByNamespace),
        Some(other) => {
            return Err(format!(
                "spec.distinguisherMethod.type: expected ByUser or ByNamespace, found {other:?}"
            ));
        }
    };
    let rules = items(spec, "rules", |rule| {
        Ok(PolicyRules {
            subjects: items(rule, "subjects", subject)?,
            resource_rules: items(rule, "resourceRules", |r| {
                Ok(ResourceRule {
                    verbs: strings(r, "verbs")?,
                    api_groups: strings(r, "apiGroups")?,
                    resources: strings(r, "resources")?,
                    namespaces: strings(r, "namespaces")?,
                    cluster_scope: r["clusterScope"].as_bool().unwrap_or(false),
                })
            })?,
            non_resource_rules: items(rule, "nonResourceRules", |r| {
                Ok(NonResourceRule {
                    verbs: strings(r, "verbs")?,
                    urls: strings(r, "nonResourceURLs")?,
                })
            })?,
        })
    })
    .map_err(|e| format!("spec.rules: {e}"))?;
    Ok((level, precedence, distinguisher, rules))
}

impl PriorityAndFairness {
    /// Only kube-apiserver's two mandatory levels and schemas (`exempt` and `catch-all`),
    /// for a configuration built from scratch.
    pub fn mandatory_only() -> Self {
        let mut apf = Self::default();
        apf.priority_levels
            .retain(|l| l.name == "exempt" || l.name == "catch-all");
        apf.flow_schemas
            .retain(|s| s.name == "exempt" || s.name == "catch-all");
        apf
    }

    /// Seats the limited priority levels share.
    #[must_use]
    pub fn with_server_concurrency_limit(mut self, seats: usize) -> Self {
        self.server_concurrency_limit = seats;
        self
    }

    /// The longest wait in a queue.
    #[must_use]
    pub fn with_request_wait_limit(mut self, limit: Duration) -> Self {
        self.request_wait_limit = limit;
        self
    }

    /// Adds or replaces (by name) the `PriorityLevelConfiguration` and `FlowSchema`
    /// objects in `yaml` (one or more documents), as creating or updating them in a
    /// cluster does. The mandatory `exempt` and `catch-all` objects cannot be changed
    /// (kube-apiserver restores them).
    ///
    /// # Errors
    /// A document that does not parse, is another kind, or has a field of the wrong shape;
    /// a flow schema naming a priority level that does not exist.
    pub fn add_objects_yaml(&mut self, yaml: &str) -> Result<(), ConfigError> {
        let documents: Vec<Value> = serde_saphyr::from_multiple(yaml).map_err(ConfigError::Yaml)?;
        let mandatory = !self.priority_levels.is_empty();
        for (index, object) in documents.iter().enumerate() {
            if object.is_null() {
                continue;
            }
            let kind = object["kind"].as_str().unwrap_or_default();
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            let invalid = |message: String| ConfigError::Invalid {
                index,
                name: format!("{kind}/{name}"),
                message,
            };
            if name.is_empty() {
                return Err(invalid("metadata.name: expected a name".into()));
            }
            if mandatory && (name == "exempt" || name == "catch-all") {
                return Err(invalid(format!(
                    "{name} is a mandatory object; kube-apiserver keeps its spec as bootstrapped"
                )));
            }
            let uid = object["metadata"]["uid"]
                .as_str()
                .map_or_else(|| uid_for(kind, name), str::to_owned);
            match kind {
                "PriorityLevelConfiguration" => {
                    let level = PriorityLevel {
                        name: name.to_owned(),
                        uid,
                        kind: priority_level(object, name).map_err(invalid)?,
                    };
                    if mandatory && matches!(level.kind, LevelKind::Exempt) {
                        return Err(invalid(
                            "spec.type: only the mandatory exempt level is Exempt".into(),
                        ));
                    }
                    self.put_level(level);
                }
                "FlowSchema" => {
                    let (priority_level, matching_precedence, distinguisher, rules) =
                        flow_schema(object).map_err(invalid)?;
                    if !self
                        .priority_levels
                        .iter()
                        .any(|l| l.name == priority_level)
                    {
                        return Err(invalid(format!(
                            "spec.priorityLevelConfiguration.name: no priority level {priority_level:?} (add it first)"
                        )));
                    }
                    let schema = FlowSchema {
                        name: name.to_owned(),
                        uid,
                        priority_level,
                        matching_precedence,
                        distinguisher,
                        rules,
                    };
                    self.flow_schemas.retain(|s| s.name != schema.name);
                    self.flow_schemas.push(schema);
                    self.flow_schemas.sort_by(|a, b| {
                        (a.matching_precedence, &a.name).cmp(&(b.matching_precedence, &b.name))
                    });
                }
                other => {
                    return Err(invalid(format!(
                        "kind: expected PriorityLevelConfiguration or FlowSchema (apiVersion flowcontrol.apiserver.k8s.io/v1), found {other:?}"
                    )));
                }
            }
        }
        Ok(())
    }

    fn put_level(&mut self, level: PriorityLevel) {
        match self
            .priority_levels
            .iter_mut()
            .find(|l| l.name == level.name)
        {
            Some(old) => *old = level,
            None => self.priority_levels.push(level),
        }
    }

    /// Each priority level's seats: `ceil(server limit × shares ÷ sum of shares)` for a
    /// limited one (`apf_controller.go`, `finishQueueSetReconfigsLocked`), none for exempt.
    pub fn nominal_limits(&self) -> Vec<(String, Option<usize>)> {
        let sum: u64 = self
            .priority_levels
            .iter()
            .map(|l| match l.kind {
                LevelKind::Limited { shares, .. } => u64::from(shares),
                LevelKind::Exempt => 0,
            })
            .sum();
        self.priority_levels
            .iter()
            .map(|l| {
                let limit = match l.kind {
                    LevelKind::Exempt => None,
                    LevelKind::Limited { shares, .. } if sum > 0 => Some(
                        (self.server_concurrency_limit as u64 * u64::from(shares)).div_ceil(sum)
                            as usize,
                    ),
                    LevelKind::Limited { .. } => Some(0),
                };
                (l.name.clone(), limit)
            })
            .collect()
    }
}

fn listed(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

impl Subject {
    fn matches(&self, user: &User) -> bool {
        match self {
            Subject::User(name) => name == "*" || *name == user.name,
            Subject::Group(group) => group == "*" || user.in_group(group),
            Subject::ServiceAccount { namespace, name } => service_account(&user.name)
                .is_some_and(|(ns, n)| ns == namespace && (name == "*" || n == name)),
        }
    }
}

impl ResourceRule {
    fn matches(&self, digest: &RequestDigest<'_>) -> bool {
        let resource = self.resources.iter().any(|r| {
            r == "*"
                || if digest.subresource.is_empty() {
                    r == digest.resource
                } else {
                    r.strip_prefix(digest.resource)
                        .and_then(|rest| rest.strip_prefix('/'))
                        == Some(digest.subresource)
                }
        });
        let namespace = if digest.namespace.is_empty() {
            self.cluster_scope
        } else {
            listed(&self.namespaces, digest.namespace)
        };
        listed(&self.verbs, digest.verb)
            && listed(&self.api_groups, digest.api_group)
            && resource
            && namespace
    }
}

impl NonResourceRule {
    fn matches(&self, digest: &RequestDigest<'_>) -> bool {
        listed(&self.verbs, digest.verb)
            && self.urls.iter().any(|u| {
                u == "*"
                    || u == digest.path
                    || u.strip_suffix('*')
                        .is_some_and(|prefix| u.ends_with("/*") && digest.path.starts_with(prefix))
            })
    }
}

impl FlowSchema {
    /// Whether the schema matches the request (`matchesFlowSchema`).
    pub fn matches(&self, digest: &RequestDigest<'_>) -> bool {
        self.rules.iter().any(|rule| {
            rule.subjects.iter().any(|s| s.matches(digest.user))
                && if digest.resource_request {
                    rule.resource_rules.iter().any(|r| r.matches(digest))
                } else {
                    rule.non_resource_rules.iter().any(|r| r.matches(digest))
                }
        })
    }

    /// The flow's distinguisher for a request.
    pub fn distinguisher_of<'a>(&self, digest: &RequestDigest<'a>) -> &'a str {
        match self.distinguisher {
            None => "",
            Some(Distinguisher::ByUser) => &digest.user.name,
            Some(Distinguisher::ByNamespace) => digest.namespace,
        }
    }
}

/// `hashFlowID`: the first 8 bytes (little-endian) of SHA-256 of `schema \0 distinguisher`.
pub fn hash_flow(schema: &str, distinguisher: &str) -> u64 {
    let mut hash = Sha256::new();
    hash.update(schema.as_bytes());
    hash.update([0]);
    hash.update(distinguisher.as_bytes());
    let sum = hash.finalize();
    let mut first = [0; 8];
    first.copy_from_slice(&sum[..8]);
    u64::from_le_bytes(first)
}

/// Shuffle sharding (`util/shufflesharding`, `Dealer.Deal`): `hand_size` distinct queue
/// indices below `deck` from `hash`.
pub fn deal(mut hash: u64, deck: usize, hand_size: usize) -> Vec<usize> {
    let mut remainders = Vec::with_capacity(hand_size);
    for i in 0..hand_size {
        let size = (deck - i) as u64;
        remainders.push((hash % size) as usize);
        hash /= size;
    }
    (0..hand_size)
        .map(|i| {
            let mut card = remainders[i];
            for j in (1..=i).rev() {
                if card >= remainders[j - 1] {
                    card += 1;
                }
            }
            card
        })
        .collect()
}
