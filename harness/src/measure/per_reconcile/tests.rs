use super::*;

fn call(at_us: u64, name: &'static str, op: &'static str) -> Call<'static> {
    Call {
        at_us,
        name,
        op,
        throttled: false,
    }
}

fn bucket(name: &'static str, ends: &[u64], deleted_us: Option<u64>) -> Resource<'static> {
    Resource {
        kind: "Bucket",
        cloud_name: Some(name),
        ends: ends.to_vec(),
        deleted_us,
    }
}

#[test]
fn a_create_the_quota_throttled_is_not_the_paths_cost_and_its_retry_is_the_create() {
    let throttled = |at_us, op| Call {
        at_us,
        name: "a",
        op,
        throttled: true,
    };
    let calls = [
        // The create is answered 429: the reconcile wrote nothing.
        call(11, "a", "s3:HeadBucket"),
        throttled(12, "s3:CreateBucket"),
        // The next reconcile creates it.
        call(111, "a", "s3:HeadBucket"),
        call(112, "a", "s3:CreateBucket"),
        // A poll answered 429, and one that is not.
        throttled(211, "s3:HeadBucket"),
        call(311, "a", "s3:HeadBucket"),
    ];
    let out = per_reconcile(&calls, &[bucket("a", &[20, 120, 220, 320], None)], &[]);
    assert_eq!((out.attributed, out.throttled), (6, 2));
    let b = &out.kinds[0];
    let path = |p| b.path(p).expect("taken");
    assert_eq!(
        path(Path::Create).describe(),
        "2 calls: CreateBucket 1, HeadBucket 1"
    );
    assert_eq!(path(Path::Create).throttled, 0.0);
    assert_eq!(path(Path::FirstObserve).max, 1);
    assert_eq!(path(Path::FirstObserve).throttled, 1.0);
    // The reconcile whose only call was answered 429 made no call of its path.
    assert_eq!(b.empty, 1);
    assert_eq!(path(Path::Observe).reconciles, 1);
}

#[test]
fn each_reconcile_is_the_calls_up_to_its_status_write_and_paths_follow_the_resources_order() {
    let calls = [
        // create: connect, observe absent, create and tag
        call(10, "", "sts:GetCallerIdentity"),
        call(11, "a", "s3:HeadBucket"),
        call(12, "a", "s3:CreateBucket"),
        call(13, "a", "s3:PutBucketTagging"),
        // first observe
        call(110, "", "sts:GetCallerIdentity"),
        call(111, "a", "s3:HeadBucket"),
        call(112, "a", "s3:GetBucketTagging"),
        // steady observe, twice
        call(210, "", "sts:GetCallerIdentity"),
        call(211, "a", "s3:HeadBucket"),
        call(212, "a", "s3:GetBucketTagging"),
        call(310, "", "sts:GetCallerIdentity"),
        call(311, "a", "s3:HeadBucket"),
        call(312, "a", "s3:GetBucketTagging"),
        // update
        call(410, "", "sts:GetCallerIdentity"),
        call(411, "a", "s3:HeadBucket"),
        call(412, "a", "s3:GetBucketTagging"),
        call(413, "a", "s3:PutBucketTagging"),
        // delete, then the observe that finds it gone
        call(510, "", "sts:GetCallerIdentity"),
        call(511, "a", "s3:HeadBucket"),
        call(512, "a", "s3:GetBucketTagging"),
        call(513, "a", "s3:DeleteBucket"),
        call(610, "", "sts:GetCallerIdentity"),
        call(611, "a", "s3:HeadBucket"),
        // after the last end: not counted
        call(900, "a", "s3:HeadBucket"),
    ];
    let out = per_reconcile(
        &calls,
        &[bucket("a", &[20, 120, 220, 320, 420, 520, 620], Some(500))],
        &["sts"],
    );
    assert_eq!((out.attributed, out.open, out.unattributed), (23, 1, 0));
    let b = &out.kinds[0];
    let path = |p| b.path(p).expect("taken");
    assert_eq!(
        path(Path::Create).describe(),
        "3 calls: CreateBucket 1, HeadBucket 1, PutBucketTagging 1"
    );
    assert_eq!(path(Path::Create).writes_max, 2);
    assert_eq!(path(Path::FirstObserve).max, 2);
    assert_eq!(path(Path::Observe).reconciles, 2);
    assert_eq!(path(Path::Update).writes_max, 1);
    assert_eq!(path(Path::Delete).writes_max, 1);
    assert_eq!(path(Path::Deleting).max, 1);
    assert_eq!(b.connect.reconciles, 6, "the deleting span apart");
    assert_eq!((out.reconciles, out.connect_calls), (6, 6));
    assert_eq!(b.connect.describe(), "1 call: GetCallerIdentity 1");
    assert_eq!((b.empty, b.overlapped), (0, 0));
}

#[test]
fn an_unnamed_call_goes_to_the_reconcile_of_the_next_event_and_overlaps_are_counted() {
    let calls = [
        // a: connect, an unnamed create (the cloud assigns the ID), then its status write
        call(10, "", "sts:AssumeRole"),
        call(12, "", "ec2:CreateVpc"),
        // b's reconcile starts while a's runs
        call(14, "b", "ec2:DescribeVpcs"),
        call(30, "", "sts:AssumeRole"),
    ];
    let vpc = |name, ends: &[u64]| Resource {
        kind: "VPC",
        cloud_name: Some(name),
        ends: ends.to_vec(),
        deleted_us: None,
    };
    let out = per_reconcile(&calls, &[vpc("vpc-a", &[13]), vpc("b", &[20])], &["sts"]);
    let k = &out.kinds[0];
    assert_eq!(k.path(Path::Create).expect("a's").max, 1, "{k:?}");
    assert_eq!(k.path(Path::FirstObserve).expect("b's").max, 1);
    assert_eq!(k.connect.max, 1);
    assert_eq!(out.unattributed, 1, "nothing follows the last call");
    assert_eq!(k.overlapped, 0, "a's span is 10–13, b's 14–20");
    // Spans 10–15 and 11–20 overlap.
    let calls = [
        call(10, "vpc-a", "ec2:DescribeVpcs"),
        call(11, "b", "ec2:DescribeVpcs"),
    ];
    let out = per_reconcile(&calls, &[vpc("vpc-a", &[15]), vpc("b", &[20])], &["sts"]);
    assert_eq!(out.kinds[0].overlapped, 2);
}

#[test]
fn a_reconcile_given_the_same_unnamed_call_twice_counts_as_overlapped() {
    // a and b both connect before a's first named call; b starts after a ends, so their
    // spans do not overlap, but b's Connect went to a.
    let calls = [
        call(10, "", "sts:GetCallerIdentity"),
        call(11, "", "sts:GetCallerIdentity"),
        call(12, "vpc-a", "ec2:DescribeVpcs"),
        call(14, "vpc-b", "ec2:DescribeVpcs"),
    ];
    let vpc = |name, ends: &[u64]| Resource {
        kind: "VPC",
        cloud_name: Some(name),
        ends: ends.to_vec(),
        deleted_us: None,
    };
    let out = per_reconcile(
        &calls,
        &[vpc("vpc-a", &[13]), vpc("vpc-b", &[20])],
        &["sts"],
    );
    let k = &out.kinds[0];
    assert_eq!(k.overlapped, 2, "{k:?}");
    assert_eq!(out.connect_calls, 2);
    // With no reconcile alone, all of them measure Connect.
    assert_eq!((k.connect.reconciles, k.connect.max), (2, 2));
    // Beside a third reconcile alone in time, Connect's most is its one call.
    let calls = [
        &calls[..],
        &[call(30, "", "sts:GetCallerIdentity")],
        &[call(31, "vpc-c", "ec2:DescribeVpcs")],
    ]
    .concat();
    let out = per_reconcile(
        &calls,
        &[
            vpc("vpc-a", &[13]),
            vpc("vpc-b", &[20]),
            vpc("vpc-c", &[40]),
        ],
        &["sts"],
    );
    let k = &out.kinds[0];
    assert_eq!(
        (k.overlapped, k.connect.reconciles, k.connect.max),
        (2, 1, 1)
    );
}

#[test]
fn a_reconcile_without_calls_is_empty_and_takes_no_path() {
    let out = per_reconcile(
        &[call(5, "a", "generic:get")],
        &[bucket("a", &[1, 10], None)],
        &[],
    );
    let b = &out.kinds[0];
    assert_eq!(b.empty, 1);
    assert_eq!(b.path(Path::FirstObserve).expect("one").reconciles, 1);
}

#[test]
fn reads_are_gets_heads_describes_and_lists() {
    for op in [
        "s3:HeadBucket",
        "s3:GetBucketAcl",
        "ec2:DescribeVpcs",
        "dynamodb:ListTagsOfResource",
        "generic:get",
        "generic:list",
    ] {
        assert!(is_read(op), "{op}");
    }
    for op in [
        "s3:PutBucketTagging",
        "ec2:CreateTags",
        "dynamodb:TagResource",
        "generic:update",
        "s3:DeleteBucket",
    ] {
        assert!(!is_read(op), "{op}");
    }
}
