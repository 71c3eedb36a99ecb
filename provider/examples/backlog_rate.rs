//! Measures the reconcile rate the provider reaches under a backlog, against
//! `--max-reconcile-rate`.
//!
//! It runs the whole stack in-process (mock-apiserver, mock-cloud without quotas, the
//! provider), creates N buckets at once, and samples `provider_reconciles_total` every
//! second until all are Ready. Each bucket needs 2 reconciles (create, then confirm), so the
//! backlog is 2N reconciles; the global bucket lets 10R through at once, then R per second.
//!
//! ```text
//! cargo run --release -p provider --example backlog_rate -- [N] [R] [MODEL] [virtual|real]
//! ```
//! Defaults: 1000 buckets, R = 10, model crossplane, virtual (paused tokio) time. `real`
//! runs on the wall clock, where CPU can also limit the rate.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, PostParams};
use limiter::crossplane::{RateLimitModel, Settings};
use provider::crd::{
    Bucket, BucketSpec, Managed, ProviderConfig, ProviderConfigSpec, ProviderCredentials,
    SecretKeySelector,
};
use provider::{CloudClient, Provider, ProviderMetrics, ProviderOptions};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map_or(Ok(1000), |s| s.parse())?;
    let rate: u32 = args.get(1).map_or(Ok(10), |s| s.parse())?;
    let model: RateLimitModel = args
        .get(2)
        .map_or(Ok(RateLimitModel::Crossplane), |s| s.parse())?;
    let real = args.get(3).is_some_and(|s| s == "real");
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_all();
    if !real {
        builder.start_paused(true);
    }
    builder.build()?.block_on(measure(n, rate, model))
}

async fn measure(n: usize, rate: u32, model: RateLimitModel) -> anyhow::Result<()> {
    let settings = Settings::new(NonZeroU32::new(rate).expect("R > 0")).model(model);
    let api = mock_apiserver::ApiServer::default();
    api.load_crd_yaml(&provider::crd::crds_yaml()?)?;
    let cloud = mock_cloud::MockCloud::new(
        mock_cloud::Config::empty().with_account(
            mock_cloud::AccountConfig::new("default")
                .with_token("default")
                .with_quotas(mock_cloud::Quotas::unlimited()),
        ),
    )?;
    let client = kube::Client::new(api.service(), "default");
    setup_provider_config(&client).await?;
    let buckets: Api<Bucket> = Api::default_namespaced(client.clone());
    for i in 0..n {
        let spec = BucketSpec::in_region("eu");
        buckets
            .create(
                &PostParams::default(),
                &Bucket::new(&format!("b{i:05}"), spec),
            )
            .await?;
    }

    let metrics = Arc::new(ProviderMetrics::new());
    let options = ProviderOptions::from_service(
        settings.clone(),
        api.service(),
        CloudClient::new(cloud.clone(), "http://mock-cloud"),
        Arc::clone(&metrics),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(Provider::new(options).run(async {
        stopped.await.ok();
    }));

    let start = tokio::time::Instant::now();
    let mut samples = vec![0u64];
    let mut at = vec![Duration::ZERO];
    let limit = Duration::from_secs(((2 * n) as u64 / u64::from(rate)).max(10) * 3 + 120);
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        samples.push(metrics.reconciles().total("Bucket"));
        at.push(start.elapsed());
        let list = buckets.list(&ListParams::default()).await?;
        let ready = list.items.iter().all(|b| {
            b.managed_status()
                .is_some_and(|s| s.is_true("Ready") && s.is_true("Synced"))
        });
        if ready || start.elapsed() > limit {
            break;
        }
    }
    let elapsed = start.elapsed();
    stop.send(()).ok();
    running.await??;

    let burst = 10 * rate as u64;
    // The window where the bucket binds: after the initial burst is spent, before the tail.
    let end = samples.len() - 1;
    let first = samples
        .iter()
        .position(|c| *c >= burst)
        .unwrap_or(0)
        .clamp(1, end);
    let last = samples.len().saturating_sub(3).max(first + 1).min(end);
    let first = first.min(last - 1);
    let window = (at[last] - at[first]).as_secs_f64();
    let observed = (samples[last] - samples[first]) as f64 / window;
    let total = *samples.last().unwrap_or(&0);
    let physical = (total.saturating_sub(burst)) as f64 / f64::from(rate);
    println!("model {model}, R = {rate}/s, {n} buckets, backlog {total} reconciles");
    println!(
        "drained in {:.1} s; physical limit (total - 10R)/R = {physical:.1} s; efficiency {:.1} %",
        elapsed.as_secs_f64(),
        100.0 * physical / elapsed.as_secs_f64()
    );
    println!(
        "steady rate from {:.1} s to {:.1} s: {observed:.2} reconciles/s = {:.1} % of R",
        at[first].as_secs_f64(),
        at[last].as_secs_f64(),
        100.0 * observed / f64::from(rate)
    );
    Ok(())
}

async fn setup_provider_config(client: &kube::Client) -> anyhow::Result<()> {
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("creds".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            "token".to_owned(),
            ByteString(b"default".to_vec()),
        )])),
        ..Default::default()
    };
    Api::<Secret>::default_namespaced(client.clone())
        .create(&PostParams::default(), &secret)
        .await?;
    let pc = ProviderConfig::new(
        "default",
        ProviderConfigSpec {
            account: "default".into(),
            credentials: ProviderCredentials {
                secret_ref: SecretKeySelector {
                    namespace: "default".into(),
                    name: "creds".into(),
                    key: "token".into(),
                },
            },
        },
    );
    Api::<ProviderConfig>::all(client.clone())
        .create(&PostParams::default(), &pc)
        .await?;
    Ok(())
}
