//! Account isolation, randomised: many accounts, each with a bearer token and an access
//! key, call each other's resources on the generic API and the AWS front ends (S3 buckets,
//! DynamoDB tables by ARN, EC2 VPCs by id). No call reads or writes across accounts, and
//! no answer tells a caller anything of another account it did not send itself.

use std::collections::{BTreeMap, BTreeSet};

use aws_credential_types::Credentials;
use mock_cloud::{AccessKey, AccountConfig, AwsIdentity, Collection, Config, MockCloud, Quotas};
use proptest::prelude::*;
use serde_json::Value;

use crate::aws_support::{Payload, Signing, cloud_now, element, text};
use crate::support::{request, send};

/// One account: its name, token, AWS account id and key.
#[derive(Debug, Clone)]
struct Account {
    name: String,
    token: String,
    id: String,
    key: String,
    secret: String,
}

impl Account {
    fn new(i: usize) -> Account {
        Account {
            name: format!("tenant{i}"),
            token: format!("tok-{i}-q7x{i}w"),
            id: format!("{:012}", 310_000_000_000 + i * 1_111),
            key: format!("AKIAISOLATION{i:07}"),
            secret: format!("secret-{i}-z8k"),
        }
    }

    fn credentials(&self) -> Credentials {
        Credentials::new(&self.key, &self.secret, None, None, "isolation")
    }

    /// What nobody but this account may learn from the cloud (its name, id, token, key).
    fn identifiers(&self) -> [&str; 5] {
        [&self.name, &self.id, &self.token, &self.key, &self.secret]
    }
}

/// A call by one account (`actor`) on what may be another's (`owner`).
#[derive(Debug, Clone)]
enum Op {
    /// The generic API on `owner`'s path with `actor`'s token.
    Generic { method: u8, records: bool, name: u8 },
    /// S3 on bucket `b{name}` (bucket names are global, as in AWS).
    S3 { op: u8, name: u8 },
    /// DynamoDB: a table of the actor's own namespace by name, or `owner`'s by ARN.
    Dynamo { op: u8, name: u8 },
    /// EC2: create a VPC, or address the `nth` VPC that `owner` holds.
    Ec2 { op: u8, nth: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..5u8, any::<bool>(), 0..3u8).prop_map(|(method, records, name)| Op::Generic {
            method,
            records,
            name
        }),
        (0..5u8, 0..3u8).prop_map(|(op, name)| Op::S3 { op, name }),
        (0..5u8, 0..3u8).prop_map(|(op, name)| Op::Dynamo { op, name }),
        (0..4u8, 0..3u8).prop_map(|(op, nth)| Op::Ec2 { op, nth }),
    ]
}

/// What each account owns, from the answers to its own calls.
#[derive(Debug, Default)]
struct Model {
    generic: BTreeMap<usize, BTreeSet<(Collection, String)>>,
    buckets: BTreeMap<String, usize>,
    tables: BTreeMap<usize, BTreeSet<String>>,
    vpcs: BTreeMap<usize, Vec<String>>,
}

fn config(accounts: &[Account]) -> Config {
    let mut config = Config::empty();
    for a in accounts {
        config = config.with_account(
            AccountConfig::new(&a.name)
                .with_token(&a.token)
                .with_quotas(Quotas::unlimited())
                .with_aws(AwsIdentity::new(&a.id).with_key(AccessKey::new(&a.key, &a.secret))),
        );
    }
    config
}

/// One answer: status and body.
struct Answer {
    status: u16,
    body: String,
}

impl Answer {
    fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

async fn aws(
    cloud: &MockCloud,
    actor: &Account,
    method: &str,
    uri: &str,
    service: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut signing = Signing::new(method, uri, service)
        .headers(headers)
        .body(body.as_bytes());
    if service != "s3" {
        signing = signing.payload(Payload::NotS3);
    }
    let request = signing.sign(&actor.credentials(), cloud_now(cloud));
    let response = cloud.handle(request).await;
    let status = response.status().as_u16();
    Answer {
        status,
        body: text(response).await,
    }
}

async fn query(cloud: &MockCloud, actor: &Account, form: &str) -> Answer {
    let headers = [("content-type", "application/x-www-form-urlencoded")];
    aws(cloud, actor, "POST", "/", "ec2", &headers, form).await
}

async fn dynamo(cloud: &MockCloud, actor: &Account, target: &str, body: &str) -> Answer {
    let target = format!("DynamoDB_20120810.{target}");
    let headers = [
        ("content-type", "application/x-amz-json-1.0"),
        ("x-amz-target", target.as_str()),
    ];
    aws(cloud, actor, "POST", "/", "dynamodb", &headers, body).await
}

fn table_body(name: &str) -> String {
    format!(
        r#"{{"TableName":"{name}","AttributeDefinitions":[{{"AttributeName":"id","AttributeType":"S"}}],"KeySchema":[{{"AttributeName":"id","KeyType":"HASH"}}],"BillingMode":"PAY_PER_REQUEST"}}"#
    )
}

/// Runs one call; returns the answer and whether it addressed another account's
/// resource.
async fn call(
    cloud: &MockCloud,
    accounts: &[Account],
    model: &mut Model,
    actor: usize,
    owner: usize,
    op: &Op,
) -> (Answer, bool) {
    let me = &accounts[actor];
    match *op {
        Op::Generic {
            method,
            records,
            name,
        } => {
            let (collection, path) = if records {
                (Collection::Records, "records")
            } else {
                (Collection::Buckets, "buckets")
            };
            let name = format!("n{name}");
            let base = format!("/v1/accounts/{}/{path}", accounts[owner].name);
            let spec = if records {
                r#"{"type":"A","value":"1.2.3.4"}"#
            } else {
                r#"{"region":"eu-west-1"}"#
            };
            let (m, uri, body) = match method {
                0 => (
                    "POST",
                    base,
                    format!(r#"{{"name":"{name}","spec":{spec}}}"#),
                ),
                1 => ("GET", format!("{base}/{name}"), String::new()),
                2 => (
                    "PUT",
                    format!("{base}/{name}"),
                    format!(r#"{{"spec":{spec}}}"#),
                ),
                3 => ("DELETE", format!("{base}/{name}"), String::new()),
                _ => ("GET", base, String::new()),
            };
            let response = send(cloud, request(m, &uri, Some(&me.token), &body)).await;
            let answer = Answer {
                status: response.status().as_u16(),
                body: text(response).await,
            };
            if answer.ok() && actor == owner {
                let mine = model.generic.entry(actor).or_default();
                match method {
                    0 => {
                        mine.insert((collection, name));
                    }
                    3 => {
                        mine.remove(&(collection, name));
                    }
                    _ => {}
                }
            }
            (answer, actor != owner)
        }
        Op::S3 { op, name } => {
            let bucket = format!("iso-b{name}");
            let holder = model.buckets.get(&bucket).copied();
            let cross = holder.is_some_and(|h| h != actor);
            let answer = match op {
                0 => aws(cloud, me, "PUT", &format!("/{bucket}"), "s3", &[], "").await,
                1 => aws(cloud, me, "HEAD", &format!("/{bucket}"), "s3", &[], "").await,
                2 => {
                    aws(
                        cloud,
                        me,
                        "GET",
                        &format!("/{bucket}?location"),
                        "s3",
                        &[],
                        "",
                    )
                    .await
                }
                3 => aws(cloud, me, "DELETE", &format!("/{bucket}"), "s3", &[], "").await,
                _ => aws(cloud, me, "GET", "/", "s3", &[], "").await,
            };
            if answer.ok() && !cross {
                match op {
                    0 => {
                        model.buckets.insert(bucket, actor);
                    }
                    3 => {
                        model.buckets.remove(&bucket);
                    }
                    _ => {}
                }
            }
            (answer, cross && op != 4)
        }
        Op::Dynamo { op, name } => {
            let table = format!("iso-t{name}");
            let arn = format!(
                "arn:aws:dynamodb:us-east-1:{}:table/{table}",
                accounts[owner].id
            );
            let (answer, cross) = match op {
                0 => (
                    dynamo(cloud, me, "CreateTable", &table_body(&table)).await,
                    false,
                ),
                1 => {
                    let body = format!(r#"{{"TableName":"{table}"}}"#);
                    (dynamo(cloud, me, "DescribeTable", &body).await, false)
                }
                2 => {
                    let body = format!(r#"{{"TableName":"{table}"}}"#);
                    (dynamo(cloud, me, "DeleteTable", &body).await, false)
                }
                3 => {
                    let body = format!(r#"{{"ResourceArn":"{arn}"}}"#);
                    (
                        dynamo(cloud, me, "ListTagsOfResource", &body).await,
                        actor != owner,
                    )
                }
                _ => {
                    let body =
                        format!(r#"{{"ResourceArn":"{arn}","Tags":[{{"Key":"k","Value":"v"}}]}}"#);
                    (
                        dynamo(cloud, me, "TagResource", &body).await,
                        actor != owner,
                    )
                }
            };
            if answer.ok() {
                let mine = model.tables.entry(actor).or_default();
                match op {
                    0 => {
                        mine.insert(table);
                    }
                    2 => {
                        mine.remove(&table);
                    }
                    _ => {}
                }
            }
            (answer, cross)
        }
        Op::Ec2 { op, nth } => {
            let theirs = model.vpcs.get(&owner).cloned().unwrap_or_default();
            let vpc = theirs
                .get(usize::from(nth) % theirs.len().max(1))
                .cloned()
                .unwrap_or_else(|| "vpc-0123456789abcdef0".to_owned());
            let cross = op != 0 && actor != owner && !theirs.is_empty();
            let v = "Version=2016-11-15";
            let answer = match op {
                0 => {
                    query(
                        cloud,
                        me,
                        &format!("Action=CreateVpc&{v}&CidrBlock=10.0.0.0%2F16"),
                    )
                    .await
                }
                1 => query(cloud, me, &format!("Action=DescribeVpcs&{v}&VpcId.1={vpc}")).await,
                2 => query(cloud, me, &format!("Action=DeleteVpc&{v}&VpcId={vpc}")).await,
                _ => {
                    let form = format!(
                        "Action=CreateTags&{v}&ResourceId.1={vpc}&Tag.1.Key=k&Tag.1.Value=v"
                    );
                    query(cloud, me, &form).await
                }
            };
            if answer.ok() {
                match op {
                    0 => {
                        let id = element(&answer.body, "vpcId").expect("a VPC id").to_owned();
                        model.vpcs.entry(actor).or_default().push(id);
                    }
                    2 if !cross => {
                        if let Some(mine) = model.vpcs.get_mut(&actor) {
                            mine.retain(|v| *v != vpc);
                        }
                    }
                    _ => {}
                }
            }
            (answer, cross)
        }
    }
}

/// The names of `<tag>` elements in `xml`.
fn elements(xml: &str, tag: &str) -> BTreeSet<String> {
    let open = format!("<{tag}>");
    xml.split(&open)
        .skip(1)
        .filter_map(|rest| rest.split(&format!("</{tag}>")).next())
        .map(str::to_owned)
        .collect()
}

/// Each account's view of its own resources matches what its own calls made.
async fn check_owned(cloud: &MockCloud, accounts: &[Account], model: &Model) {
    let mut generic: BTreeMap<usize, BTreeSet<(Collection, String)>> = BTreeMap::new();
    for r in cloud.inventory() {
        let i = accounts.iter().position(|a| a.name == r.account).unwrap();
        generic.entry(i).or_default().insert((r.collection, r.name));
    }
    for (i, a) in accounts.iter().enumerate() {
        let empty = BTreeSet::new();
        assert_eq!(
            generic.get(&i).unwrap_or(&empty),
            model.generic.get(&i).unwrap_or(&empty),
            "{}'s generic resources",
            a.name
        );
        let listed = aws(cloud, a, "GET", "/", "s3", &[], "").await;
        let mine: BTreeSet<String> = model
            .buckets
            .iter()
            .filter(|(_, o)| **o == i)
            .map(|(b, _)| b.clone())
            .collect();
        assert_eq!(elements(&listed.body, "Name"), mine, "{}'s buckets", a.name);
        let tables = dynamo(cloud, a, "ListTables", "{}").await;
        let tables: Value = serde_json::from_str(&tables.body).unwrap();
        let tables: BTreeSet<String> = tables["TableNames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            &tables,
            model.tables.get(&i).unwrap_or(&BTreeSet::new()),
            "{}'s tables",
            a.name
        );
        let vpcs = query(cloud, a, "Action=DescribeVpcs&Version=2016-11-15").await;
        let mine: BTreeSet<String> = model
            .vpcs
            .get(&i)
            .map(|v| v.iter().cloned().collect())
            .unwrap_or_default();
        let listed: BTreeSet<String> = elements(&vpcs.body, "vpcId");
        assert!(
            mine.is_subset(&listed) && listed.iter().all(|v| !owned_by_other(model, i, v)),
            "{}'s VPCs: listed {listed:?}, made {mine:?}",
            a.name
        );
    }
}

fn owned_by_other(model: &Model, me: usize, vpc: &str) -> bool {
    model
        .vpcs
        .iter()
        .any(|(owner, vpcs)| *owner != me && vpcs.iter().any(|v| v == vpc))
}

async fn scenario(n: usize, calls: Vec<(usize, usize, Op)>) {
    let accounts: Vec<Account> = (0..n).map(Account::new).collect();
    let cloud = MockCloud::new(config(&accounts)).expect("valid config");
    let mut model = Model::default();
    for (actor, owner, op) in &calls {
        let (actor, owner) = (actor % n, owner % n);
        let (answer, cross) = call(&cloud, &accounts, &mut model, actor, owner, op).await;
        assert!(
            !(cross && answer.ok()),
            "{} reached {}'s resource with {op:?}: {} {}",
            accounts[actor].name,
            accounts[owner].name,
            answer.status,
            answer.body
        );
        for (i, other) in accounts.iter().enumerate() {
            if i == actor {
                continue;
            }
            for secret in other.identifiers() {
                // What the caller sent (another account's name in a path, its id in an
                // ARN) may come back; nothing else of another account may.
                let sent = match op {
                    Op::Generic { .. } | Op::Dynamo { .. } => i == owner,
                    Op::S3 { .. } | Op::Ec2 { .. } => false,
                };
                let ours = sent && (secret == other.name || secret == other.id);
                assert!(
                    ours || !answer.body.contains(secret),
                    "{}'s answer to {op:?} on {} reveals {secret:?} of {}: {} {}",
                    accounts[actor].name,
                    accounts[owner].name,
                    other.name,
                    answer.status,
                    answer.body
                );
            }
        }
        // Provisioning (tables) finishes in virtual time between calls.
        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
    }
    check_owned(&cloud, &accounts, &model).await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_account_reads_or_writes_anothers_resources_and_refusals_reveal_nothing(
        n in 2..7usize,
        calls in proptest::collection::vec((0..7usize, 0..7usize, op()), 1..60),
    ) {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap()
            .block_on(scenario(n, calls));
    }
}
