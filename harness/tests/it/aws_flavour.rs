//! The provider's AWS flavour as the tests describe a foreign provider: its settings' flags,
//! a profile that starts it, the ProviderConfig and Secret that point it at mock-cloud, its
//! three kinds by `apiVersion` and `kind`, and the calls per path `provider/README.md`
//! documents, which a calibration must find.

use std::path::Path;

/// The settings' flags (its Deployment's args in cluster mode), polling every `poll`,
/// with `--credential-cache=CACHE`.
pub fn settings_flags(poll: &str, cache: &str) -> Vec<String> {
    vec![
        "--max-reconcile-rate=5".to_owned(),
        format!("--poll-interval={poll}"),
        "--poll-jitter-percent=5".to_owned(),
        "--poll-jitter-sizing=poll-interval".to_owned(),
        "--min-poll-interval=0s".to_owned(),
        "--scoped-buckets".to_owned(),
        format!("--credential-cache={cache}"),
    ]
}

/// A process-target profile that starts `provider` with [`settings_flags`] (read in the
/// `loadtest` family), its metrics on `{{metricsPort}}`, the CRDs of `crds.yaml` beside it,
/// its kinds, and then `tail` (more fields, such as `calibration`).
pub fn profile(provider: &Path, poll: &str, cache: &str, tail: &str) -> String {
    let mut command = vec![
        provider.display().to_string(),
        "--kubeconfig={{kubeconfig}}".to_owned(),
        "--cloud-endpoint={{cloudUrl}}".to_owned(),
        "--metrics-addr=127.0.0.1:{{metricsPort}}".to_owned(),
        "--shutdown-timeout=5s".to_owned(),
    ];
    command.extend(settings_flags(poll, cache));
    let lines: String = command.iter().map(|c| format!("  - {c}\n")).collect();
    format!(
        "flags: loadtest
command:
{lines}metricsUrl: http://127.0.0.1:{{{{metricsPort}}}}/metrics
crds: [crds.yaml]
{KINDS}{tail}"
    )
}

/// The kinds a profile lists (a `kinds:` section).
pub const KINDS: &str = "kinds:
  - {apiVersion: s3.aws.m.loadtest.dev/v1beta1, kind: Bucket, scope: Namespaced}
  - {apiVersion: ec2.aws.m.loadtest.dev/v1beta1, kind: VPC, scope: Namespaced}
  - {apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1, kind: Table, scope: Namespaced}
  - {apiVersion: aws.m.loadtest.dev/v1beta1, kind: ClusterProviderConfig, scope: Cluster}
";

/// A scenario's `objects`: mock-cloud's default keys in a Secret, and a
/// ClusterProviderConfig whose endpoint is mock-cloud (`{{cloudUrl}}`).
pub const OBJECTS: &str = r#"objects:
  - apiVersion: v1
    kind: Secret
    metadata: {name: aws-creds}
    stringData:
      credentials: "[default]\naws_access_key_id = default\naws_secret_access_key = default\n"
  - apiVersion: aws.m.loadtest.dev/v1beta1
    kind: ClusterProviderConfig
    metadata: {name: default}
    spec:
      credentials:
        source: Secret
        secretRef: {namespace: "harness-{{scenario}}", name: aws-creds, key: credentials}
      endpoint:
        services: [s3, sts, ec2, dynamodb]
        hostnameImmutable: true
        url: {type: Static, static: "{{cloudUrl}}"}
      s3_use_path_style: true
"#;

/// A scenario's `resources`: `count` Buckets, VPCs and Tables, tagged.
pub fn resources(count: u32) -> String {
    format!(
        r#"resources:
  - name: bucket
    apiVersion: s3.aws.m.loadtest.dev/v1beta1
    kind: Bucket
    count: {count}
    namePattern: "{{{{scenario}}}}-{{{{index}}}}"
    spec: {{region: eu-west-1, tags: {{team: load}}}}
  - name: vpc
    apiVersion: ec2.aws.m.loadtest.dev/v1beta1
    kind: VPC
    count: {count}
    spec: {{region: eu-west-1, cidrBlock: 10.0.0.0/16, tags: {{team: load}}}}
  - name: table
    apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1
    kind: Table
    count: {count}
    spec:
      region: eu-west-1
      billingMode: PAY_PER_REQUEST
      hashKey: id
      attribute: [{{name: id, type: S}}]
      tags: {{team: load}}
"#
    )
}

/// `provider/README.md`'s calls per path of each kind, in a calibration file's figures:
/// observe (present), create, update (tags), delete (beyond the observe that precedes
/// them), and Connect (one GetCallerIdentity without a credential cache).
pub const DOCUMENTED: [(&str, [u64; 5]); 3] = [
    ("Bucket", [15, 2, 1, 1, 1]),
    ("VPC", [1, 1, 1, 1, 1]),
    ("Table", [2, 1, 1, 1, 1]),
];

/// The figures' names in a calibration file, in [`DOCUMENTED`]'s order.
pub const FIGURES: [&str; 5] = ["observe", "create", "update", "delete", "connect"];

/// Whether `calls` (a kind's entry in a calibration file) gives path `p` the documented
/// `figure`: as its figure, or, where the measured reconciles of the path spread around
/// it, as their mean. On a loaded machine some reconciles overlap others in real time and
/// calibrate cannot tell all their calls apart: a call goes to one of them, which widens
/// the range (13 to 17 for 15) and moves the figure calibrate writes, not the mean.
fn documented(calls: &serde_json::Value, p: &str, figure: u64) -> bool {
    if calls[p].as_u64() == Some(figure) {
        return true;
    }
    let measured = &calls["measured"][p];
    let (min, max) = (measured["min"].as_f64(), measured["max"].as_f64());
    let spread = matches!((min, max), (Some(lo), Some(hi)) if lo < hi);
    #[allow(clippy::cast_precision_loss)]
    let mean = measured["mean"].as_f64() == Some(figure as f64);
    spread && mean
}

/// Asserts that the calibration file `text` gives every kind its [`DOCUMENTED`] figures
/// ([`documented`]); returns each kind's entry, in [`DOCUMENTED`]'s order.
pub fn assert_documented_calls(text: &str) -> Vec<serde_json::Value> {
    let file: serde_json::Value = serde_saphyr::from_str(text).unwrap();
    DOCUMENTED
        .iter()
        .map(|(kind, figures)| {
            let calls = file["calls"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["kind"] == *kind)
                .unwrap_or_else(|| panic!("{kind} calibrated: {text}"))
                .clone();
            for (p, figure) in FIGURES.iter().zip(figures) {
                assert!(
                    documented(&calls, p, *figure),
                    "{kind} {p}: documented {figure}: {calls:#}"
                );
            }
            calls
        })
        .collect()
}
