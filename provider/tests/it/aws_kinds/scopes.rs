//! The two scopes' buckets: a backlog drains at twice the rate with a bucket per scope.

use std::time::Duration;

use kube::api::{Api, ListParams, PostParams};
use provider::aws::connect::RetryMode;
use provider::aws::kinds::{ClusterBucket, Vpc};

use super::{AwsStack, NO_STS, NS, settings};
use crate::stack::{eventually, is_ready};

/// Reconciles per second, from 5 s to 10 s after a provider restart, of a backlog of 200
/// cluster-scoped Buckets and 200 VPCs that are ready: every one is observed once, with one
/// status write. The bursts come first (with two buckets, their 2 × 100 tokens outrun the
/// API client's QPS 5R with burst 10R: 50/s for 4 s), then R/s per global bucket. The
/// resources are created once; each of `scoped_buckets` is then a restart of its own.
async fn backlog_rates(scoped_buckets: [bool; 2]) -> [f64; 2] {
    let mut stack = AwsStack::start(
        settings(),
        mock_cloud::Config::default(),
        RetryMode::Standard,
        NO_STS,
    )
    .await;
    let buckets = Api::<ClusterBucket>::all(stack.client.clone());
    for i in 0..200 {
        let b: ClusterBucket = serde_saphyr::from_str(&format!(
            "apiVersion: s3.aws.loadtest.dev/v1beta1\nkind: Bucket\nmetadata: {{name: b-{i}}}\n\
             spec: {{forProvider: {{region: us-east-1}}}}\n"
        ))
        .unwrap();
        buckets.create(&PostParams::default(), &b).await.unwrap();
        stack
            .create::<Vpc>(&format!(
                "apiVersion: ec2.aws.m.loadtest.dev/v1beta1\nkind: VPC\nmetadata: {{name: v-{i}, namespace: default}}\n\
                 spec: {{forProvider: {{region: us-east-1, cidrBlock: 10.0.0.0/16}}}}\n"
            ))
            .await;
    }
    let all_ready = eventually(Duration::from_secs(600), Duration::from_secs(1), || async {
        let b = buckets.list(&ListParams::default()).await.unwrap().items;
        let v = Api::<Vpc>::namespaced(stack.client.clone(), NS)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        b.iter().all(is_ready) && v.iter().all(is_ready)
    })
    .await;
    assert!(all_ready, "the 400 resources became ready");
    assert!(stack.stop().await.drained);
    let total = |s: &AwsStack| {
        s.metrics.reconciles().total("Bucket.s3.aws.loadtest.dev")
            + s.metrics.reconciles().total("VPC.ec2.aws.m.loadtest.dev")
    };
    let mut rates = [0.0; 2];
    for (rate, scoped) in rates.iter_mut().zip(scoped_buckets) {
        stack.settings = settings().scoped_buckets(scoped);
        stack.launch();
        tokio::time::sleep(Duration::from_secs(5)).await;
        let before = total(&stack);
        tokio::time::sleep(Duration::from_secs(5)).await;
        *rate = (total(&stack) - before) as f64 / 5.0;
        assert!(stack.stop().await.drained);
    }
    rates
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn two_scopes_at_r_10_drain_at_20_per_second_with_scoped_buckets_and_10_without() {
    let [scoped, shared] = backlog_rates([true, false]).await;
    assert!((19.0..=21.0).contains(&scoped), "scoped: {scoped}/s");
    assert!((9.5..=10.5).contains(&shared), "shared: {shared}/s");
}
