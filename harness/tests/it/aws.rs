//! Groups named by `apiVersion` and `kind` (the provider's AWS flavour): they parse and
//! validate with errors that say where and what was expected, the budget takes their calls
//! per reconcile and the two scopes' buckets, and (with feature `aws`) a small
//! `aws-upjet` run makes the calls `provider/README.md` tables.

use harness::predict::plan;
use harness::scenario::{Catalogue, GroupKind, parse};

const HEAD: &str = "apiVersion: harness/v1\nname: t\n";

const CALLS: &str = "calls:
  - {apiVersion: s3.aws.loadtest.dev/v1beta1, kind: Bucket, connect: 1, observe: 15, create: 2, update: 1, delete: 1}
  - {apiVersion: s3.aws.m.loadtest.dev/v1beta1, kind: Bucket, connect: 1, observe: 15, create: 2, update: 1, delete: 1}
  - {apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1, kind: Table, connect: 1, observe: 2, create: 1, update: 2, delete: 1}
";

fn err(body: &str) -> String {
    parse(&format!("{HEAD}{body}"), "t.yaml")
        .expect_err("must not validate")
        .to_string()
}

/// Whether the provider is built with its AWS flavour, whose CRD schemas the checks use.
fn schemas() -> bool {
    Catalogue::embedded()
        .resolve("s3.aws.m.loadtest.dev/v1beta1", "Bucket")
        .is_ok_and(|s| s.schema.is_some())
}

#[test]
fn a_group_named_by_api_version_and_kind_gets_plural_scope_namespace_template_and_readiness() {
    let s = parse(
        &format!(
            "{HEAD}{CALLS}resources:
  - name: cb
    apiVersion: s3.aws.loadtest.dev/v1beta1
    kind: Bucket
    count: 2
    spec: {{region: eu-west-1}}
    template:
      metadata: {{labels: {{team: '{{{{group}}}}'}}, annotations: {{note: x}}}}
      spec: {{providerConfigRef: {{kind: ClusterProviderConfig, name: aws}}}}
  - name: nb
    apiVersion: s3.aws.m.loadtest.dev/v1beta1
    kind: Bucket
    namespace: team-a
    count: 1
    spec: {{region: eu-west-1}}
    ready: [{{type: Ready}}]
phases:
  - {{name: c, action: create}}
"
        ),
        "t.yaml",
    )
    .expect("valid");
    let GroupKind::Api(cb) = &s.groups[0].kind else {
        panic!("an API kind: {:?}", s.groups[0].kind);
    };
    assert_eq!(
        (cb.plural.as_str(), cb.namespaced, cb.aws),
        ("buckets", false, true)
    );
    assert_eq!(s.groups[0].kind.to_string(), "Bucket.s3.aws.loadtest.dev");
    assert_eq!(
        s.groups[0].ready,
        [
            ("Ready".to_owned(), "True".to_owned()),
            ("Synced".to_owned(), "True".to_owned())
        ]
    );
    assert_eq!(
        s.groups[0].resource_template(1, &s.name)["metadata"]["labels"]["team"],
        "cb"
    );
    assert!(s.groups[1].kind.namespaced());
    assert_eq!(s.groups[1].namespace.as_deref(), Some("team-a"));
    assert_eq!(s.groups[1].ready, [("Ready".to_owned(), "True".to_owned())]);
    assert_eq!(s.calls[&s.groups[0].kind].max(), 1 + 15 + 2);
    assert_eq!(s.calls[&s.groups[0].kind].poll(), 16);
    // The object the run creates: the template over forProvider.
    let obj = harness::run::objects::managed_resource(&s, &s.groups[0], 1);
    assert_eq!(obj.metadata.namespace, None, "cluster-scoped");
    assert_eq!(obj.data["spec"]["providerConfigRef"]["name"], "aws");
    assert_eq!(obj.data["spec"]["forProvider"]["region"], "eu-west-1");
    assert_eq!(obj.metadata.labels.unwrap()["team"], "cb");
    let nb = harness::run::objects::managed_resource(&s, &s.groups[1], 0);
    assert_eq!(nb.metadata.namespace.as_deref(), Some("team-a"));
}

#[test]
fn an_unknown_api_kind_names_its_place_and_what_the_target_serves() {
    let e = err(
        "resources:\n  - {name: b, apiVersion: example.org/v1, kind: Widget, count: 1}\nphases:\n  - {name: c, action: create}\n",
    );
    assert!(
        e.starts_with(
            "t.yaml:4:49: unknown kind example.org/v1 Widget, expected one the target serves: "
        ),
        "{e}"
    );
    assert!(e.contains("s3.aws.m.loadtest.dev/v1beta1 Bucket"), "{e}");
    let e = err(
        "resources:\n  - {name: b, kind: Bukket, count: 1}\nphases:\n  - {name: c, action: create}\n",
    );
    assert_eq!(
        e,
        "t.yaml:4:21: unknown kind \"Bukket\", expected one of Bucket, Database, Record, or an `apiVersion` with a kind the target serves"
    );
}

#[test]
fn a_kind_without_calls_a_namespace_on_a_cluster_kind_and_a_bad_template_are_errors() {
    let e = err("resources:
  - {name: t, apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1, kind: Table, count: 1}
  - name: b
    apiVersion: s3.aws.loadtest.dev/v1beta1
    kind: Bucket
    namespace: x
    count: 1
    template: {metadata: {name: fixed}, status: {}}
phases:
  - {name: c, action: create}
");
    let want = "t.yaml:4:70: no cloud calls per reconcile for Table.dynamodb.aws.m.loadtest.dev, expected a `calls` entry {apiVersion, kind, observe, create, update, delete, connect} (provider/README.md tables the AWS flavour's) or a profile `calibration` that has the kind (`harness calibrate` writes one)\n\
t.yaml:7:11: no cloud calls per reconcile for Bucket.s3.aws.loadtest.dev, expected a `calls` entry {apiVersion, kind, observe, create, update, delete, connect} (provider/README.md tables the AWS flavour's) or a profile `calibration` that has the kind (`harness calibrate` writes one)\n\
t.yaml:8:16: Bucket.s3.aws.loadtest.dev is cluster-scoped, expected no namespace\n\
t.yaml:10:15: template.metadata.name is set by the harness or not allowed, expected only `labels` and `annotations`\n\
t.yaml:10:15: template.status is not allowed, expected only `metadata` and `spec`";
    let got: Vec<&str> = e.lines().filter(|l| !l.contains("renders")).collect();
    assert_eq!(got.join("\n"), want, "{e}");
}

#[test]
fn a_template_that_does_not_render_into_a_valid_object_is_refused_with_the_schemas_words() {
    if !schemas() {
        eprintln!("skipped: the provider is built without feature aws, so no AWS schemas");
        return;
    }
    let e = err(&format!(
        "{CALLS}resources:
  - name: t
    apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1
    kind: Table
    count: 1
    spec: {{region: eu-west-1, colour: red}}
    template: {{spec: {{providerConfigRef: {{name: 7}}}}}}
phases:
  - {{name: c, action: create}}
"
    ));
    assert!(
        e.contains(
            "t.yaml:13:15: the template of t's resource 0 renders an unknown field spec.forProvider.colour, expected only fields the schema of Table declares"
        ),
        "{e}"
    );
    assert!(
        e.contains("t.yaml:13:15: the template of t's resource 0 renders an invalid object: spec.providerConfigRef.name: Invalid value: \"integer\": spec.providerConfigRef.name in body must be of type string: \"integer\", expected an object the schema of Table accepts"),
        "{e}"
    );
    assert!(
        e.contains("spec.forProvider.billingMode"),
        "required fields are named: {e}"
    );
}

#[test]
fn scenario_objects_are_checked_and_default_to_the_runs_namespace() {
    let e = err(
        "objects:
  - {apiVersion: v1, kind: Secret}
  - {apiVersion: example.org/v1, kind: Gadget, metadata: {name: g}}
  - {apiVersion: aws.m.loadtest.dev/v1beta1, kind: ClusterProviderConfig, metadata: {name: d, namespace: x}}
resources:
  - {name: b, kind: Bucket, count: 1}
phases:
  - {name: c, action: create}
",
    );
    assert!(
        e.contains("t.yaml:4:5: Secret object has no metadata.name, expected a name"),
        "{e}"
    );
    assert!(
        e.contains("t.yaml:5:5: unknown kind example.org/v1 Gadget"),
        "{e}"
    );
    assert!(
        e.contains(
            "t.yaml:6:5: ClusterProviderConfig d is cluster-scoped, expected no metadata.namespace"
        ),
        "{e}"
    );
    let s = parse(
        &format!(
            "{HEAD}objects:\n  - {{apiVersion: v1, kind: Secret, metadata: {{name: 'creds-{{{{scenario}}}}'}}, stringData: {{k: v}}}}\nresources:\n  - {{name: b, kind: Bucket, count: 1}}\nphases:\n  - {{name: c, action: create}}\n"
        ),
        "t.yaml",
    )
    .expect("valid");
    let (resource, ns, obj) = harness::run::objects::scene_object(&s, &s.objects[0]);
    assert_eq!(resource.plural, "secrets");
    assert_eq!(ns.as_deref(), Some("harness-t"));
    assert_eq!(obj.metadata.name.as_deref(), Some("creds-t"));
    assert_eq!(obj.data["stringData"]["k"], "v");
}

#[test]
fn two_scopes_with_scoped_buckets_predict_2r_with_burst_20r_and_the_calls_per_reconcile() {
    let s = parse(
        &format!(
            "{HEAD}provider: {{maxReconcileRate: 10, scopedBuckets: true, pollInterval: 5m}}\n{CALLS}resources:
  - {{name: cb, apiVersion: s3.aws.loadtest.dev/v1beta1, kind: Bucket, count: 100, spec: {{region: eu-west-1}}}}
  - {{name: nb, apiVersion: s3.aws.m.loadtest.dev/v1beta1, kind: Bucket, count: 100, spec: {{region: eu-west-1}}}}
  - name: t
    apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1
    kind: Table
    count: 50
    spec: {{region: eu-west-1, billingMode: PAY_PER_REQUEST, hashKey: id, attribute: [{{name: id, type: S}}]}}
phases:
  - {{name: create, action: create, timeout: 10m}}
  - {{name: hold, action: hold, duration: 10m}}
assertions:
  - {{check: cloudCalls, window: 10s}}
  - {{check: steadyRate, phase: hold, window: 60s}}
"
        ),
        "t.yaml",
    )
    .expect("valid");
    let p = plan(&s);
    let global = p.find("run/global-budget").expect("scoped buckets");
    assert_eq!(global.value, 20.0, "2R/s with R = 10");
    assert_eq!(global.get("B"), Some(200.0), "burst 20R");
    let create = &p.phases[0];
    assert_eq!(create.params.scopes, 2);
    assert_eq!(
        (create.params.r, create.params.b),
        (20.0, 200.0),
        "the phase's buckets"
    );
    assert_eq!(
        create.params.c_max, 18.0,
        "1 connect + 15 observe + 2 create"
    );
    assert_eq!(create.params.c_poll, 16.0);
    // The windowed cloud-call bound is c_max · ⌊B + R·(W + Δ)⌋.
    let calls = create
        .predictions
        .iter()
        .find(|x| x.id.contains("cloud-calls") && x.get("W") == Some(10.0))
        .expect("a 10s cloud-call bound");
    assert_eq!(calls.get("c_max"), Some(18.0));
    assert!(
        calls.value > 0.0 && (calls.value / 18.0).fract() == 0.0,
        "{calls:?}"
    );
    // The hold's expected call rate: c_poll per poll.
    let hold = &p.phases[1];
    let rate = hold
        .predictions
        .iter()
        .find(|x| x.id == "hold/rate")
        .unwrap()
        .value;
    let call_rate = hold
        .predictions
        .iter()
        .find(|x| x.id == "hold/call-rate")
        .expect("c_poll > 1 gives a call rate");
    assert!((call_rate.value - 16.0 * rate).abs() < 1e-9);
    let steady = hold
        .predictions
        .iter()
        .find(|x| x.id == "hold/steady-max/60s")
        .expect("a steady tolerance");
    assert_eq!(steady.get("c_poll"), Some(16.0));
    // The same scenario with one shared bucket keeps R and 10R.
    let mut one = s.clone();
    one.settings.scoped_buckets = false;
    let p1 = plan(&one);
    assert!(p1.find("run/global-budget").is_none());
    assert_eq!(
        (p1.phases[0].params.r, p1.phases[0].params.b),
        (10.0, 100.0)
    );
}

#[test]
fn the_short_kinds_keep_c_max_2() {
    let s = parse(
        &format!("{HEAD}resources:\n  - {{name: b, kind: Bucket, count: 10}}\nphases:\n  - {{name: c, action: create}}\n"),
        "t.yaml",
    )
    .unwrap();
    let p = plan(&s);
    assert_eq!(
        (p.phases[0].params.c_max, p.phases[0].params.c_poll),
        (2.0, 1.0)
    );
}

#[cfg(not(feature = "aws"))]
#[test]
fn without_feature_aws_an_embedded_run_of_the_aws_flavours_vpcs_is_refused_naming_the_feature() {
    let s = harness::scenario::load(
        &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/aws-upjet.yaml"),
    )
    .expect("valid in every build");
    let runtime = harness::run::time::runtime(s.time).unwrap();
    let refused = runtime.block_on(harness::run::run_embedded(
        &s,
        &harness::run::Progress::quiet(),
        std::future::pending(),
    ));
    let Err(e) = refused else {
        panic!("an embedded run of the AWS flavour's VPCs must be refused without feature aws");
    };
    assert!(e.to_string().contains("--features aws`"), "{e}");
}

#[cfg(feature = "aws")]
mod run {
    use std::collections::BTreeMap;
    use std::path::PathBuf;
    use std::sync::Arc;

    use harness::run::{Progress, run};
    use mock_cloud::MockCloud;

    use crate::keeping::Keeping;

    /// Terraform's S3 read, as provider/README.md tables it.
    const BUCKET_READ: [&str; 15] = [
        "HeadBucket",
        "GetBucketPolicy",
        "GetBucketAcl",
        "GetBucketCors",
        "GetBucketWebsite",
        "GetBucketVersioning",
        "GetBucketAccelerateConfiguration",
        "GetBucketRequestPayment",
        "GetBucketLogging",
        "GetBucketLifecycleConfiguration",
        "GetBucketReplication",
        "GetBucketEncryption",
        "GetObjectLockConfiguration",
        "GetBucketLocation",
        "GetBucketTagging",
    ];

    type Kept = crate::keeping::Kept<MockCloud>;

    /// Splits `ops` into `prefix`, repetitions of `unit`, then `suffix`; returns the
    /// repetitions, or fails with the whole list.
    fn split(ops: &[&str], prefix: &[&str], unit: &[&str], suffix: &[&str]) -> usize {
        let ok = ops.len() >= prefix.len() + suffix.len()
            && ops[..prefix.len()] == *prefix
            && ops[ops.len() - suffix.len()..] == *suffix;
        assert!(ok, "expected {prefix:?} … {suffix:?}, got {ops:?}");
        let middle = &ops[prefix.len()..ops.len() - suffix.len()];
        assert!(
            middle.len().is_multiple_of(unit.len()) && middle.chunks(unit.len()).all(|c| c == unit),
            "expected repetitions of {unit:?}, got {middle:?}"
        );
        middle.len() / unit.len()
    }

    #[test]
    fn a_small_aws_upjet_run_passes_with_the_calls_per_reconcile_the_provider_documents() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/aws-upjet.yaml");
        let sets: Vec<harness::scenario::Set> = [
            "resources.cluster-bucket.count=3",
            "resources.bucket.count=3",
            "resources.vpc.count=3",
            "resources.table.count=3",
            "phases.hold.duration=12m",
        ]
        .iter()
        .map(|s| s.parse().expect("a set"))
        .collect();
        let s = harness::scenario::load_with(&path, &sets).expect("valid");
        let kept: Kept = Arc::default();
        let runtime = harness::run::time::runtime(s.time).unwrap();
        let out = runtime
            .block_on(run::<Keeping<MockCloud>, _>(
                &s,
                Arc::clone(&kept),
                &Progress::quiet(),
                std::future::pending,
            ))
            .expect("the stack starts");
        let r = out.result;
        let failed: Vec<_> = r.verdicts.iter().filter(|v| !v.pass).collect();
        assert!(r.passed(), "{}: {:#?} {failed:#?}", r.headline(), r.stopped);
        let cloud = kept.lock().unwrap().take().expect("kept");
        let calls = cloud.calls();
        let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for c in &calls {
            by_name
                .entry(c.name.as_str())
                .or_default()
                .push(c.operation.as_str());
        }
        // Buckets of both scopes: Observe of the absent bucket (1), CreateBucket and its
        // tags (2); every later Observe is the 15-call read; the delete's Observe (15),
        // DeleteBucket, and the absent bucket's HeadBucket.
        for prefix in ["aws-upjet-c-", "aws-upjet-n-"] {
            for i in 0..3 {
                let name = format!("{prefix}{i}");
                let ops = &by_name[name.as_str()];
                let reads = split(
                    ops,
                    &["HeadBucket", "CreateBucket", "PutBucketTagging"],
                    &BUCKET_READ,
                    &["DeleteBucket", "HeadBucket"],
                );
                // Created, then polled every 5 minutes through a 12-minute hold, and the
                // delete's own observe: at least 3 reads.
                assert!(reads >= 3, "{name}: {reads} reads: {ops:?}");
            }
        }
        // Connect: one GetCallerIdentity per reconcile (`credentialCache: none`, the
        // ProviderConfig validates its credentials). Every reconcile of a bucket starts
        // with HeadBucket, of a table with DescribeTable, of a VPC with DescribeVpcs, except
        // a VPC's first (no ID yet: 0 calls, then CreateVpc).
        let count = |op: &str| calls.iter().filter(|c| c.operation == op).count();
        let reconciles = count("HeadBucket")
            + count("DescribeTable")
            + count("DescribeVpcs")
            + count("CreateVpc");
        assert_eq!(count("GetCallerIdentity"), reconciles);
        assert_eq!(count("CreateVpc"), 3);
        assert_eq!(count("CreateTable"), 3);
        assert_eq!(count("DeleteVpc"), 3);
        // A table's Observe of an existing table is DescribeTable + ListTagsOfResource.
        assert!(count("ListTagsOfResource") > 0);
        assert!(count("ListTagsOfResource") <= count("DescribeTable"));
        // The provider counts its SDK's attempts as the journal does.
        let check = r.provider.as_ref().expect("read in process");
        assert_eq!(check.agrees(), Some(true), "{}", check.summary());
    }
}
