//! Connect: its STS calls per credential source and cache policy, and the ProviderConfigs
//! it refuses before calling anything.

use mock_cloud::Config;
use provider::aws::config::ProviderConfigSpec;
use provider::aws::connect::{ConnectError, Connector, CredentialCache, RetryMode};

use super::{connect, connect_times, ops_since, serve, spec, sts_ops};

#[tokio::test]
async fn a_secret_connect_validates_with_one_get_caller_identity_and_none_with_both_skips() {
    let served = serve(Config::default()).await;
    let connector = Connector::new(RetryMode::Off, CredentialCache::None);
    let clients = connect(&connector, &spec(&served.url, ""), "us-east-1")
        .await
        .expect("connects");
    assert_eq!(clients.account_id, "000000000000");
    assert_eq!(sts_ops(&served.cloud.calls()), ["GetCallerIdentity"]);
    let skipping = spec(
        &served.url,
        "skip_credentials_validation: true\nskip_requesting_account_id: true\n",
    );
    connect(&connector, &skipping, "us-east-1")
        .await
        .expect("connects");
    assert_eq!(sts_ops(&served.cloud.calls()).len(), 1, "no STS call");
}

#[tokio::test]
async fn an_assume_role_chain_costs_one_assume_role_per_role_on_every_connect_unless_all_is_cached()
{
    let served = serve(Config::default()).await;
    let chain = spec(
        &served.url,
        "assumeRoleChain: [{roleARN: 'arn:aws:iam::000000000000:role/a'}, {roleARN: 'arn:aws:iam::000000000000:role/b'}]\n",
    );
    connect_times(CredentialCache::None, &chain, "eu-west-1", 2).await;
    assert_eq!(
        sts_ops(&served.cloud.calls()),
        ["AssumeRole", "AssumeRole", "GetCallerIdentity"].repeat(2)
    );
    let before = served.cloud.calls().len();
    let all = connect_times(CredentialCache::All, &chain, "eu-west-1", 3).await;
    assert_eq!(
        ops_since(&served.cloud.calls(), before),
        ["AssumeRole", "AssumeRole", "GetCallerIdentity"],
        "one Connect's calls, then the cache"
    );
    // Another region is another set of clients.
    connect(&all, &chain, "eu-west-2").await.expect("connects");
    assert_eq!(served.cloud.calls().len(), before + 6);
}

#[tokio::test]
async fn irsa_caching_keeps_only_the_web_identity_exchange() {
    let served = serve(Config::default()).await;
    let irsa = serde_saphyr::from_str::<ProviderConfigSpec>(&format!(
        "credentials: {{source: WebIdentity, webIdentity: {{roleARN: 'arn:aws:iam::000000000000:role/provider', tokenSecretRef: {{namespace: crossplane-system, name: irsa, key: credentials}}}}}}\n\
         assumeRoleChain: [{{roleARN: 'arn:aws:iam::000000000000:role/deployer'}}]\n\
         endpoint: {{services: [s3, sts], url: {{type: Static, static: '{}'}}}}\n",
        served.url
    ))
    .expect("valid");
    connect_times(CredentialCache::Irsa, &irsa, "us-east-1", 2).await;
    assert_eq!(
        sts_ops(&served.cloud.calls()),
        [
            "AssumeRoleWithWebIdentity",
            "AssumeRole",
            "GetCallerIdentity",
            "AssumeRole",
            "GetCallerIdentity"
        ]
    );
    let before = served.cloud.calls().len();
    connect_times(CredentialCache::None, &irsa, "us-east-1", 2).await;
    assert_eq!(
        ops_since(&served.cloud.calls(), before),
        [
            "AssumeRoleWithWebIdentity",
            "AssumeRole",
            "GetCallerIdentity"
        ]
        .repeat(2)
    );
}

#[tokio::test]
async fn bad_provider_configs_fail_connect_with_a_message_to_act_on_and_call_nothing() {
    let served = serve(Config::default()).await;
    let connector = Connector::new(RetryMode::Standard, CredentialCache::All);
    let cases = [
        (
            spec(&served.url, "").with_secret("crossplane-system", "missing", "credentials"),
            "us-east-1",
            "cannot get credentials Secret crossplane-system/missing: create it, or fix spec.credentials.secretRef",
        ),
        (
            spec(&served.url, "").with_secret("crossplane-system", "aws", "creds"),
            "us-east-1",
            "credentials Secret crossplane-system/aws has no key \"creds\" (or it is not UTF-8 text)",
        ),
        (
            spec(&served.url, "").with_secret("crossplane-system", "empty", "credentials"),
            "us-east-1",
            "credentials Secret crossplane-system/empty key \"credentials\" has no [default] profile with aws_access_key_id and aws_secret_access_key",
        ),
        (
            spec(&served.url, ""),
            "moon-base-1",
            "region \"moon-base-1\" is not an AWS region: expected a name such as us-east-1 or eu-west-2 (or set skip_region_validation)",
        ),
        (
            spec("127.0.0.1:8080", ""),
            "us-east-1",
            "spec.endpoint.url.static \"127.0.0.1:8080\" is not a URL: expected http://host:port or https://host:port (no scheme)",
        ),
    ];
    for (spec, region, want) in cases {
        let err = connect(&connector, &spec, region)
            .await
            .expect_err("a bad config");
        assert!(matches!(err, ConnectError::Config(_)), "{err:?}");
        assert_eq!(err.to_string(), want);
    }
    let mut no_sts = spec(&served.url, "");
    if let Some(e) = no_sts.endpoint.as_mut() {
        e.services.retain(|s| s != "sts");
    }
    let err = connect(&connector, &no_sts, "us-east-1")
        .await
        .expect_err("no STS endpoint");
    assert_eq!(
        err.to_string(),
        "service sts is not in spec.endpoint.services: this provider reaches only the endpoints given there (it has no TLS for AWS's own)"
    );
    assert!(served.cloud.calls().is_empty(), "nothing reached the cloud");
    // A role of an account mock-cloud does not know: STS refuses, with its code.
    let stranger = spec(
        &served.url,
        "assumeRoleChain: [{roleARN: 'arn:aws:iam::999999999999:role/x'}]\n",
    );
    match connect(&connector, &stranger, "us-east-1").await {
        Err(ConnectError::Sts(e)) => {
            assert_eq!((e.service, e.operation), ("STS", "AssumeRole"));
            assert!(e.code.is_some(), "STS answered a code");
        }
        other => panic!("expected an STS error, got {other:?}"),
    }
}

trait WithSecret {
    fn with_secret(self, ns: &str, name: &str, key: &str) -> Self;
}

impl WithSecret for ProviderConfigSpec {
    fn with_secret(mut self, ns: &str, name: &str, key: &str) -> Self {
        let r = self
            .credentials
            .secret_ref
            .as_mut()
            .expect("a Secret source");
        r.namespace = ns.to_owned();
        r.name = name.to_owned();
        r.key = key.to_owned();
        self
    }
}
