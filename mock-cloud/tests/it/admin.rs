//! The admin module's wire types: a config or faults value survives its document and JSON,
//! and what the admin API writes reads back as the value the cloud holds.

use std::num::NonZeroUsize;
use std::path::Path;
use std::time::Duration;

use http_body_util::BodyExt;
use mock_cloud::admin::{
    CALLS_PATH, Call, ConfigDocument, ErrorBody, FaultsDocument, INVENTORY_PATH, Inventory,
    SUMMARY_PATH, Summary,
};
use mock_cloud::{
    AccountConfig, Action, Class, Collection, Config, ErrorRate, Faults, Flavor, Latency, Outage,
    Quotas, Rate,
};
use proptest::prelude::*;
use tokio::time::advance;

use crate::support::{call, cloud, create_named, get_json, request, send, two_accounts};

/// `config` → document → JSON → document → config, and the same JSON through the YAML
/// reader that `PUT /admin/v1/config` and `--config` use.
fn assert_round_trip(config: &Config) {
    let json = serde_json::to_string(&ConfigDocument::from(config)).unwrap();
    let document: ConfigDocument = serde_json::from_str(&json).unwrap();
    assert_eq!(document, ConfigDocument::from(config), "{json}");
    assert_eq!(&Config::try_from(document).unwrap(), config, "{json}");
    assert_eq!(
        &Config::from_yaml(&json, "document").unwrap(),
        config,
        "{json}"
    );
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A config that sets every key the document has, away from its default.
fn everything() -> Config {
    let quotas = Quotas::unlimited()
        .with_account(Some(Rate::new(200, 50.0)))
        .with_class(Class::Read, Some(Rate::new(3, 1.0 / 86_400.0)))
        .with_class(Class::Delete, Some(Rate::new(u32::MAX, 1e9)))
        .with_action(Action::Create, Some(Rate::new(5, 0.3)))
        .with_action(Action::List, Some(Rate::new(1, 0.1)))
        .with_count(Collection::Databases, Some(0))
        .with_count(Collection::Records, Some(u32::MAX));
    let faults = Faults::none()
        .with_seed(u64::MAX)
        .with_latency(Class::Read, Latency::Fixed(ms(1)))
        .with_latency(
            Class::Mutate,
            Latency::Uniform {
                min: ms(5),
                max: ms(20),
            },
        )
        .with_latency(
            Class::List,
            Latency::LogNormal {
                median: ms(10),
                sigma: 0.123_456_789,
            },
        )
        .with_errors(
            Class::Mutate,
            ErrorRate {
                probability: 0.01,
                status: 500,
            },
        )
        .with_errors(
            Class::Delete,
            ErrorRate {
                probability: 1.0,
                status: 503,
            },
        )
        .with_outage(Outage {
            start: Duration::from_secs(600),
            end: Duration::from_micros(660_000_001),
            status: 503,
        })
        .with_outage(Outage {
            start: Duration::ZERO,
            end: Duration::from_nanos(1),
            status: 500,
        });
    Config::empty()
        .with_account(
            AccountConfig::new("acme")
                .with_token("t1")
                .with_token("t2")
                .with_quotas(quotas),
        )
        .with_account(AccountConfig::new("no-tokens.or_quotas").with_quotas(Quotas::unlimited()))
        .with_account(AccountConfig::new("cloudy").with_token("t3"))
        .with_flavor(Flavor::AwsEc2)
        .with_shadow(true)
        .with_journal_cap(NonZeroUsize::new(7).unwrap())
        .with_provisioning(ms(0), ms(123_456))
        .with_faults(faults)
}

#[test]
fn a_table_of_configs_survives_the_document_and_json() {
    let example = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/mock-cloud.example.yaml"
    ));
    let configs = [
        Config::default(),
        Config::empty(),
        Config::default().with_flavor(Flavor::AwsJson),
        Config::load(example).unwrap(),
        everything(),
    ];
    for config in &configs {
        assert_round_trip(config);
    }
}

#[test]
fn the_document_writes_every_account_s_quotas_in_full() {
    let config =
        Config::empty().with_account(AccountConfig::new("a").with_quotas(Quotas::unlimited()));
    let json = serde_json::to_value(ConfigDocument::from(&config)).unwrap();
    assert_eq!(
        json["accounts"][0]["quotas"],
        serde_json::json!({"unlimited": true})
    );
    assert!(json.get("quotas").is_none(), "{json}");
    assert_eq!(json["provisioning"]["database_create_ms"], 5000);
}

#[test]
fn a_document_that_does_not_validate_is_an_error_without_a_place() {
    let document: ConfigDocument = serde_json::from_str(
        r#"{"accounts": [{"name": "a", "tokens": ["t"]}, {"name": "b", "tokens": ["t"]}]}"#,
    )
    .unwrap();
    let err = Config::try_from(document).unwrap_err();
    assert!(
        matches!(err, mock_cloud::ConfigError::Invalid { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("used twice"), "{err}");
    let unknown = serde_json::from_str::<ConfigDocument>(r#"{"shadw": true}"#).unwrap_err();
    assert!(
        unknown.to_string().contains("unknown field `shadw`"),
        "{unknown}"
    );
}

#[test]
fn bad_faults_are_refused_by_the_faults_document_naming_the_field() {
    let document: FaultsDocument =
        serde_json::from_str(r#"{"errors": {"read": {"rate": 2}}}"#).unwrap();
    let err = Faults::try_from(document).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid config: faults: errors.read.rate must be within 0 and 1"
    );
}

fn duration_ms() -> impl Strategy<Value = Duration> {
    (0u64..100_000_000).prop_map(Duration::from_millis)
}

fn rate() -> impl Strategy<Value = Rate> {
    (1u32.., Rate::MIN_PER_SECOND..=Rate::MAX_PER_SECOND)
        .prop_map(|(burst, per_second)| Rate::new(burst, per_second))
}

fn quotas() -> impl Strategy<Value = Quotas> {
    let class = prop::sample::select(Class::ALL.to_vec());
    let action = prop::sample::select(Action::ALL.to_vec());
    let collection = prop::sample::select(Collection::ALL.to_vec());
    (
        prop::option::of(rate()),
        prop::collection::btree_map(class, rate(), 0..=4),
        prop::collection::btree_map(action, rate(), 0..=5),
        prop::collection::btree_map(collection, any::<u32>(), 0..=3),
        prop::option::of(service_quotas(mock_cloud::Service::S3)),
        prop::option::of(service_quotas(mock_cloud::Service::Sts)),
    )
        .prop_map(|(account, classes, actions, counts, s3, sts)| {
            let quotas = Quotas {
                account,
                classes,
                actions,
                counts,
                services: Default::default(),
            };
            quotas
                .with_service(mock_cloud::Service::S3, s3)
                .with_service(mock_cloud::Service::Sts, sts)
        })
}

fn service_quotas(
    service: mock_cloud::Service,
) -> impl Strategy<Value = mock_cloud::ServiceQuotas> {
    use mock_cloud::{ClassQuota, Per};
    let per = prop::sample::select(vec![Per::Class, Per::Operation, Per::Resource]);
    let class = prop::sample::select(service.classes().to_vec());
    let operation = prop::sample::select(service.operations().to_vec());
    (
        prop::option::of(rate()),
        prop::collection::btree_map(class, (rate(), per), 0..=2),
        prop::collection::btree_map(operation, rate(), 0..=3),
    )
        .prop_map(|(service, classes, operations)| mock_cloud::ServiceQuotas {
            service,
            classes: classes
                .into_iter()
                .map(|(k, (rate, per))| (k.to_owned(), ClassQuota::new(rate, per)))
                .collect(),
            operations: operations
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        })
}

fn latency() -> impl Strategy<Value = Latency> {
    prop_oneof![
        duration_ms().prop_map(Latency::Fixed),
        (duration_ms(), duration_ms()).prop_map(|(a, b)| Latency::Uniform {
            min: a.min(b),
            max: a.max(b),
        }),
        (duration_ms(), 0.0..10.0f64)
            .prop_map(|(median, sigma)| Latency::LogNormal { median, sigma }),
    ]
}

fn resource_fault() -> impl Strategy<Value = mock_cloud::ResourceFault> {
    use mock_cloud::{
        Action, Collection, LastingError, ResourceEffect, ResourceKind, ResourceSelector,
    };
    let kinds: Vec<ResourceKind> = Collection::ALL
        .into_iter()
        .map(ResourceKind::from)
        .chain(ResourceKind::AWS)
        .collect();
    let select = (
        prop::option::of(prop::sample::select(kinds)),
        prop::option::of(prop::sample::select(vec!["b*", "*-1", "db"])),
        prop::option::of(prop::sample::select(vec![("team", "red"), ("env", "x")])),
        prop::option::of(0.0..=100.0f64),
    )
        .prop_map(|(collection, name, tag, percent)| ResourceSelector {
            collection,
            name: name.map(str::to_owned),
            tag: tag.map(|(k, v)| (k.to_owned(), v.to_owned())),
            percent,
        });
    let seconds = || (0u64..1 << 40).prop_map(Duration::from_nanos);
    let effect = prop_oneof![
        (
            prop::sample::select(LastingError::ALL.to_vec()),
            prop::option::of(prop::sample::select(vec!["BucketAlreadyExists"])),
            prop::option::of(prop::collection::vec(
                prop::sample::select(Action::ALL.to_vec()),
                0..3
            )),
        )
            .prop_map(|(error, code, actions)| ResourceEffect::Error {
                error,
                code: code.map(str::to_owned),
                actions,
            }),
        seconds().prop_map(|duration| ResourceEffect::NotFoundAfterCreate { duration }),
        prop::option::of(prop::sample::select(vec!["versioning"])).prop_map(|field| {
            ResourceEffect::Drift {
                field: field.map(str::to_owned),
            }
        }),
        seconds().prop_map(|duration| ResourceEffect::SlowCreate { duration }),
    ];
    // S3 has no creating state: a slow create naming its buckets is refused.
    (select, effect)
        .prop_filter("a slow create of s3/buckets", |(select, effect)| {
            !(select.collection == Some(ResourceKind::S3Buckets)
                && matches!(effect, ResourceEffect::SlowCreate { .. }))
        })
        .prop_map(|(select, effect)| mock_cloud::ResourceFault { select, effect })
}

fn faults() -> impl Strategy<Value = Faults> {
    let class = || prop::sample::select(Class::ALL.to_vec());
    let status = || prop::sample::select(vec![500u16, 503]);
    let errors = (0.0..=1.0f64, status()).prop_map(|(probability, status)| ErrorRate {
        probability,
        status,
    });
    // Windows up to about eleven days, to the nanosecond.
    let outage =
        (0u64..1 << 50, 1u64..1 << 40, status()).prop_map(|(start, length, status)| Outage {
            start: Duration::from_nanos(start),
            end: Duration::from_nanos(start + length),
            status,
        });
    let operation = prop::sample::select(
        std::iter::once("*")
            .chain(mock_cloud::S3Operation::NAMES.iter().copied())
            .collect::<Vec<_>>(),
    );
    let op_faults = (
        prop::option::of(latency()),
        prop::option::of(errors.clone()),
        prop::collection::vec(outage.clone(), 0..2),
        prop::option::of(prop::sample::select(vec!["SlowDown", "InternalError"])),
    )
        .prop_map(
            |(latency, errors, outages, code)| mock_cloud::OperationFaults {
                latency,
                errors,
                outages,
                code: code.map(str::to_owned),
            },
        );
    (
        any::<u64>(),
        prop::collection::btree_map(class(), latency(), 0..=4),
        prop::collection::btree_map(class(), errors, 0..=4),
        prop::collection::vec(outage, 0..4),
        prop::collection::btree_map(operation, op_faults, 0..=3),
        prop::collection::vec(resource_fault(), 0..3),
    )
        .prop_map(|(seed, latency, errors, outages, s3, resources)| Faults {
            latency,
            errors,
            outages,
            seed,
            resources,
            services: if s3.is_empty() {
                Default::default()
            } else {
                [(
                    mock_cloud::Service::S3,
                    s3.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                )]
                .into()
            },
        })
}

fn config() -> impl Strategy<Value = Config> {
    let flavor = prop::sample::select(vec![Flavor::Generic, Flavor::AwsJson, Flavor::AwsEc2]);
    let accounts = prop::collection::vec((0usize..3, quotas(), any::<bool>(), 0usize..3), 0..4)
        .prop_map(|accounts| {
            accounts
                .into_iter()
                .enumerate()
                .map(|(i, (tokens, quotas, aws, keys))| {
                    let account = (0..tokens).fold(
                        AccountConfig::new(format!("account-{i}")).with_quotas(quotas),
                        |account, t| account.with_token(format!("t{i}.{t}")),
                    );
                    if !aws {
                        return account;
                    }
                    let identity = (0..keys).fold(
                        mock_cloud::AwsIdentity::new(format!("{i:012}")),
                        |identity, k| {
                            let key = mock_cloud::AccessKey::new(
                                format!("AKIA{i}K{k}"),
                                format!("secret/{k}"),
                            );
                            identity.with_key(if k == 1 { key.with_user("alice") } else { key })
                        },
                    );
                    account.with_aws(identity)
                })
                .collect::<Vec<_>>()
        });
    let aws = (0u64..100_000, any::<bool>()).prop_map(|(skew, retry_after_header)| {
        mock_cloud::AwsSettings {
            max_clock_skew: Duration::from_secs(skew),
            retry_after_header,
        }
    });
    (
        accounts,
        flavor,
        any::<bool>(),
        1usize..10_000_000,
        duration_ms(),
        duration_ms(),
        faults(),
        aws,
    )
        .prop_map(
            |(accounts, flavor, shadow, cap, create, delete, faults, aws)| Config {
                accounts,
                flavor,
                shadow,
                journal_cap: NonZeroUsize::new(cap).unwrap(),
                database_create: create,
                database_delete: delete,
                faults,
                aws,
            },
        )
}

proptest! {
    #[test]
    fn any_config_survives_the_document_and_json(config in config()) {
        assert_round_trip(&config);
    }

    #[test]
    fn any_faults_survive_the_faults_document_and_json(faults in faults()) {
        let json = serde_json::to_string(&FaultsDocument::from(&faults)).unwrap();
        let document: FaultsDocument = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(Faults::try_from(document).unwrap(), faults);
    }
}

#[tokio::test(start_paused = true)]
async fn faults_put_through_the_admin_api_are_the_faults_written() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    let faults = everything().faults;
    let json = serde_json::to_string(&FaultsDocument::from(&faults)).unwrap();
    let (status, _) = call(&cloud, "PUT", "/admin/v1/faults", "", &json).await;
    assert_eq!(status, 200);
    assert_eq!(cloud.faults(), faults);
}

async fn text(cloud: &mock_cloud::MockCloud, path: &str) -> String {
    let response = send(cloud, request("GET", path, None, "")).await;
    assert_eq!(response.status(), 200, "{path}");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

#[tokio::test(start_paused = true)]
async fn what_the_admin_api_writes_reads_back_as_the_cloud_s_own_values() {
    let config = two_accounts(Quotas::unlimited().with_class(Class::Read, Some(Rate::new(1, 1.0))));
    let cloud = cloud(config);
    let db = r#"{"name":"db","spec":{"size":2.5,"tags":["a"],"nested":{"x":null}}}"#;
    call(&cloud, "POST", "/v1/accounts/acme/databases", "t-acme", db).await;
    create_named(&cloud, "other", "buckets", "b").await;
    advance(Duration::from_millis(1_250)).await;
    get_json(&cloud, "/v1/accounts/acme/databases/db", "t-acme").await;
    get_json(&cloud, "/v1/accounts/acme/databases/db", "t-acme").await;
    get_json(&cloud, "/nowhere", "t-acme").await;
    get_json(&cloud, "/v1/accounts/acme/buckets/b", "bad-token").await;

    let lines = text(&cloud, CALLS_PATH).await;
    let calls: Vec<Call> = lines
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(calls, cloud.calls());
    assert_eq!(calls.len(), 6);
    assert!(
        calls[3].throttled,
        "the second read met the one-token bucket"
    );
    assert_eq!((calls[4].action, calls[4].collection), (None, None));
    assert_eq!(calls[2].at_us, 1_250_000);

    let summary: Summary = serde_json::from_str(&text(&cloud, SUMMARY_PATH).await).unwrap();
    assert_eq!(summary, cloud.summary());
    assert_eq!(summary.epoch, cloud.epoch());
    assert_eq!(summary.throttled, 1);

    let inventory: Inventory = serde_json::from_str(&text(&cloud, INVENTORY_PATH).await).unwrap();
    assert_eq!(inventory.resources, cloud.inventory());
    assert_eq!(cloud.resource_count(), inventory.resources.len());
    assert_eq!(inventory.resources[0].spec["size"], 2.5);
}

#[test]
fn a_call_line_with_an_unknown_action_is_refused() {
    let line = r#"{"seq":0,"at_us":0,"account":"a","action":"patch","collection":"buckets","name":"",
        "status":200,"latency_us":0,"throttled":false,"shadow_throttled":false,
        "quota_exceeded":false,"fault":false}"#;
    let err = serde_json::from_str::<Call>(line).unwrap_err();
    assert!(err.to_string().contains("unknown variant `patch`"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn an_error_answer_is_an_error_body_naming_the_field() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    let response = send(&cloud, request("GET", "/admin/v1/calls?limit=x", None, "")).await;
    assert_eq!(response.status(), 400);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let body: ErrorBody = serde_json::from_slice(&body).unwrap();
    assert_eq!(body.error.code, "InvalidArgument");
    assert_eq!(body.error.field.as_deref(), Some("limit"));
    assert_eq!(body.error.message, "`limit` must be a whole number");
}
