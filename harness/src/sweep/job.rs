//! A sweep as a Kubernetes Indexed Job: a ConfigMap with the scenario file and a `batch/v1`
//! Job with one completion per point, each pod running `harness sweep FILE … ` in the
//! harness image with its point from `JOB_COMPLETION_INDEX`, its results to S3 or to a
//! volume the user names. Typed k8s-openapi objects, written as YAML.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{
    Job, JobSpec, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, EmptyDirVolumeSource, EnvFromSource,
    EnvVar, EnvVarSource, ObjectFieldSelector, PersistentVolumeClaimVolumeSource,
    PodSecurityContext, PodSpec, PodTemplateSpec, ResourceRequirements, SeccompProfile,
    SecretEnvSource, SecurityContext, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::remote::S3Url;

/// The image `cargo xtask kind-images` builds from ci/docker/harness.Dockerfile.
pub const DEFAULT_IMAGE: &str = "loadtest/harness:dev";
/// The container's name, which the pod failure policy names.
pub const CONTAINER: &str = "harness";
/// Where the scenario's ConfigMap is mounted.
pub const SCENARIO_DIR: &str = "/etc/harness/sweep";
/// Where a results volume is mounted; the points write under `RESULTS_DIR/JOB-NAME`.
pub const RESULTS_DIR: &str = "/results";
/// A pod's scratch directory (an emptyDir, the root filesystem being read-only): its
/// output before the upload to S3.
pub const SCRATCH_DIR: &str = "/tmp";
/// The annotation Kubernetes puts the completion index in; `JOB_COMPLETION_INDEX` is
/// read from it through the downward API.
pub const INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";

/// Where the points' pods leave their results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Results {
    /// An object store, through the AWS SDK.
    S3 {
        /// The bucket and prefix.
        url: S3Url,
        /// The S3 endpoint, for a store other than AWS's.
        endpoint: Option<String>,
        /// The Secret whose keys (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, …) become the
        /// pods' environment.
        credentials_secret: Option<String>,
    },
    /// A PersistentVolumeClaim every pod mounts (ReadWriteMany when pods land on several
    /// nodes).
    Volume {
        /// The claim's name.
        claim: String,
    },
}

/// What the Job is made of.
#[derive(Clone, Debug)]
pub struct JobOptions {
    /// The Job's and the ConfigMap's name.
    pub name: String,
    /// Their namespace; none leaves it to the kubeconfig's context.
    pub namespace: Option<String>,
    /// The harness image.
    pub image: String,
    /// The grid's points: one completion each.
    pub completions: usize,
    /// Pods at once.
    pub parallelism: usize,
    /// The scenario's file name, its key in the ConfigMap.
    pub file_name: String,
    /// The scenario file's text.
    pub scenario: String,
    /// The sweep's definition, as `harness sweep` takes it (`--vary`, `--set`, `--slo`,
    /// `--budget`, `--cost`, `--real-time`).
    pub args: Vec<String>,
    /// Where the results go.
    pub results: Results,
    /// A point's wall-time limit (the pod's `activeDeadlineSeconds`).
    pub timeout_s: Option<u64>,
    /// The container's CPU request.
    pub cpu: String,
    /// The container's memory request and limit.
    pub memory: String,
}

/// A DNS-1123 label from `text`: lowercase, other characters as `-`, at most 52
/// characters (a Job's pods are named JOB-INDEX-RANDOM within 63).
#[must_use]
pub fn object_name(text: &str) -> String {
    let mut name = crate::run::objects::dns_label_chars(text);
    name.truncate(52);
    let name = name.trim_matches('-');
    if name.is_empty() {
        "sweep".to_owned()
    } else {
        name.to_owned()
    }
}

fn labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "app.kubernetes.io/name".to_owned(),
            "harness-sweep".to_owned(),
        ),
        ("app.kubernetes.io/instance".to_owned(), name.to_owned()),
    ])
}

fn meta(o: &JobOptions) -> ObjectMeta {
    ObjectMeta {
        name: Some(o.name.clone()),
        namespace: o.namespace.clone(),
        labels: Some(labels(&o.name)),
        ..ObjectMeta::default()
    }
}

/// The ConfigMap with the scenario file.
#[must_use]
pub fn config_map(o: &JobOptions) -> ConfigMap {
    ConfigMap {
        metadata: meta(o),
        data: Some(BTreeMap::from([(o.file_name.clone(), o.scenario.clone())])),
        ..ConfigMap::default()
    }
}

/// The command line of every pod: the scenario from the ConfigMap, the sweep's definition,
/// its output directory and results. The point comes from `JOB_COMPLETION_INDEX`.
#[must_use]
pub fn pod_args(o: &JobOptions) -> Vec<String> {
    let mut args = vec![
        "sweep".to_owned(),
        format!("{SCENARIO_DIR}/{}", o.file_name),
    ];
    args.extend(o.args.iter().cloned());
    match &o.results {
        Results::S3 { url, endpoint, .. } => {
            args.extend([
                "--out".to_owned(),
                format!("{SCRATCH_DIR}/sweep"),
                "--results".to_owned(),
                url.to_string(),
            ]);
            if let Some(e) = endpoint {
                args.extend(["--s3-endpoint".to_owned(), e.clone()]);
            }
        }
        Results::Volume { .. } => {
            args.extend(["--out".to_owned(), format!("{RESULTS_DIR}/{}", o.name)]);
        }
    }
    args
}

fn volume(name: &str) -> Volume {
    Volume {
        name: name.to_owned(),
        ..Volume::default()
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

/// The pod template: one container, the scenario and scratch space mounted, the results
/// volume when there is one; non-root, read-only root filesystem.
fn pod_template(o: &JobOptions) -> PodTemplateSpec {
    let mut volumes = vec![
        Volume {
            config_map: Some(ConfigMapVolumeSource {
                name: o.name.clone(),
                ..ConfigMapVolumeSource::default()
            }),
            ..volume("scenario")
        },
        Volume {
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..volume("scratch")
        },
    ];
    let mut mounts = vec![
        mount("scenario", SCENARIO_DIR, true),
        mount("scratch", SCRATCH_DIR, false),
    ];
    let mut env_from = None;
    match &o.results {
        Results::Volume { claim } => {
            volumes.push(Volume {
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: claim.clone(),
                    read_only: None,
                }),
                ..volume("results")
            });
            mounts.push(mount("results", RESULTS_DIR, false));
        }
        Results::S3 {
            credentials_secret: Some(secret),
            ..
        } => {
            env_from = Some(vec![EnvFromSource {
                secret_ref: Some(SecretEnvSource {
                    name: secret.clone(),
                    optional: None,
                }),
                ..EnvFromSource::default()
            }]);
        }
        Results::S3 { .. } => {}
    }
    let quantity = |q: &str| Quantity(q.to_owned());
    let container = Container {
        name: CONTAINER.to_owned(),
        image: Some(o.image.clone()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        args: Some(pod_args(o)),
        env: Some(vec![
            // Kubernetes sets the same for an Indexed Job's containers; written out, the
            // wiring is in the manifest for anyone to read.
            EnvVar {
                name: "JOB_COMPLETION_INDEX".to_owned(),
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        field_path: format!("metadata.annotations['{INDEX_ANNOTATION}']"),
                        api_version: None,
                    }),
                    ..EnvVarSource::default()
                }),
                value: None,
            },
        ]),
        env_from,
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_owned(), quantity(&o.cpu)),
                ("memory".to_owned(), quantity(&o.memory)),
            ])),
            limits: Some(BTreeMap::from([("memory".to_owned(), quantity(&o.memory))])),
            ..ResourceRequirements::default()
        }),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: Some(true),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                add: None,
            }),
            ..SecurityContext::default()
        }),
        volume_mounts: Some(mounts),
        ..Container::default()
    };
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(&o.name)),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            restart_policy: Some("Never".to_owned()),
            active_deadline_seconds: o.timeout_s.and_then(|t| i64::try_from(t).ok()),
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                run_as_user: Some(65532),
                run_as_group: Some(65532),
                fs_group: Some(65532),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".to_owned(),
                    localhost_profile: None,
                }),
                ..PodSecurityContext::default()
            }),
            containers: vec![container],
            volumes: Some(volumes),
            ..PodSpec::default()
        }),
    }
}

/// The Indexed Job: a completion per point, `parallelism` at once. A point's pod is tried
/// again once when it fails otherwise (`backoffLimitPerIndex: 1`); an exit of 1 (the point
/// ran and an assertion failed: its result is written) or 2 (bad input) fails its index
/// at once, since a second run would measure or refuse the same; a pod evicted or
/// preempted (`DisruptionTarget`) is replaced without counting.
#[must_use]
pub fn job(o: &JobOptions) -> Job {
    let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    Job {
        metadata: meta(o),
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".to_owned()),
            completions: Some(count(o.completions)),
            parallelism: Some(count(o.parallelism.clamp(1, o.completions.max(1)))),
            backoff_limit_per_index: Some(1),
            pod_failure_policy: Some(PodFailurePolicy {
                rules: vec![
                    PodFailurePolicyRule {
                        action: "FailIndex".to_owned(),
                        on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                            container_name: Some(CONTAINER.to_owned()),
                            operator: "In".to_owned(),
                            values: vec![1, 2],
                        }),
                        on_pod_conditions: None,
                    },
                    PodFailurePolicyRule {
                        action: "Ignore".to_owned(),
                        on_exit_codes: None,
                        on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                            type_: "DisruptionTarget".to_owned(),
                            status: "True".to_owned(),
                        }]),
                    },
                ],
            }),
            template: pod_template(o),
            ..JobSpec::default()
        }),
        status: None,
    }
}

/// The ConfigMap and the Job as one YAML stream, ConfigMap first (`kubectl apply -f`),
/// each mapping's keys in alphabetical order. Both go through a JSON value on their way
/// to YAML: the YAML writer is then compiled for that one type rather than for each of the
/// Job's nested structs (about a fortieth of the harness library's machine code).
///
/// # Errors
/// The YAML writer's.
pub fn render(o: &JobOptions) -> Result<String, serde_saphyr::SerializeError> {
    let yaml = |value: serde_json::Value| serde_saphyr::to_string(&value);
    Ok(format!(
        "---\n{}---\n{}",
        yaml(as_value(&config_map(o)))?,
        yaml(as_value(&job(o)))?
    ))
}

/// `object` as a JSON value: Kubernetes objects always are one.
fn as_value(object: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(object).expect("a Kubernetes object is a JSON value")
}
