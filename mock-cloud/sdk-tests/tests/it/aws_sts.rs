//! STS through the real aws-sdk-sts: the caller's identity, assumed roles whose temporary
//! credentials S3 then accepts, web identities without a signature, and credentials that
//! expire on the cloud's clock.

use std::time::Duration;

use aws_credential_types::Credentials;
use aws_sdk_sts::error::ProvideErrorMetadata;
use aws_smithy_types::retry::RetryConfig;
use mock_cloud::{Config, MockCloud};

use crate::aws_support::{cloud_now, element, keys, s3, serve, signed, sts, text};

const ROLE: &str = "arn:aws:iam::000000000000:role/deployer";

#[tokio::test]
async fn the_default_key_is_the_root_of_account_000000000000() {
    let served = serve(Config::default()).await;
    let who = sts(&served.url, Some(keys("default", "default")))
        .get_caller_identity()
        .send()
        .await
        .unwrap();
    assert_eq!(who.account(), Some("000000000000"));
    assert_eq!(who.arn(), Some("arn:aws:iam::000000000000:root"));
    assert_eq!(who.user_id(), Some("000000000000"));
}

#[tokio::test]
async fn assumed_role_credentials_sign_s3_calls_and_name_the_session() {
    let served = serve(Config::default()).await;
    let client = sts(&served.url, Some(keys("default", "default")));
    let assumed = client
        .assume_role()
        .role_arn(ROLE)
        .role_session_name("reconcile-1")
        .duration_seconds(900)
        .send()
        .await
        .unwrap();
    let c = assumed.credentials().unwrap();
    assert!(c.access_key_id().starts_with("ASIA"));
    let user = assumed.assumed_role_user().unwrap();
    assert_eq!(
        user.arn(),
        "arn:aws:sts::000000000000:assumed-role/deployer/reconcile-1"
    );
    let remaining = c.expiration().secs() - jiff::Timestamp::now().as_second();
    assert!((890..=900).contains(&remaining), "{remaining}");

    let temporary = Credentials::new(
        c.access_key_id(),
        c.secret_access_key(),
        Some(c.session_token().to_owned()),
        None,
        "assumed",
    );
    let who = sts(&served.url, Some(temporary.clone()))
        .get_caller_identity()
        .send()
        .await
        .unwrap();
    assert_eq!(who.arn(), Some(user.arn()));
    assert!(who.user_id().unwrap().ends_with(":reconcile-1"));
    let bucket_client = s3(
        &served.url,
        temporary.clone(),
        "us-east-1",
        RetryConfig::disabled(),
    );
    send!(bucket_client.create_bucket("from-a-role")).unwrap();

    // Without its session token the key is refused.
    let tokenless = Credentials::new(c.access_key_id(), c.secret_access_key(), None, None, "x");
    let e = sts(&served.url, Some(tokenless.clone()))
        .get_caller_identity()
        .send()
        .await
        .unwrap_err();
    assert_eq!(e.into_service_error().code(), Some("InvalidClientTokenId"));
    let e = s3(&served.url, tokenless, "us-east-1", RetryConfig::disabled())
        .list_buckets()
        .send()
        .await
        .unwrap_err();
    assert_eq!(e.into_service_error().code(), Some("InvalidToken"));

    let calls = served.cloud.calls();
    let ops: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|c| (c.service.as_str(), c.operation.as_str(), c.account.as_str()))
        .collect();
    assert_eq!(
        ops[..3],
        [
            ("sts", "AssumeRole", "default"),
            ("sts", "GetCallerIdentity", "default"),
            ("s3", "CreateBucket", "default"),
        ]
    );
    assert_eq!(calls[0].name, ROLE);
}

#[tokio::test]
async fn a_web_identity_needs_no_signature_and_bad_parameters_are_validation_errors() {
    let served = serve(Config::default()).await;
    let anonymous = sts(&served.url, None);
    let payload = r#"{"sub":"system:serviceaccount:crossplane-system:provider-aws","aud":"sts.amazonaws.com","iss":"https://oidc.example.com"}"#;
    let token = format!(
        "eyJhbGciOiJSUzI1NiJ9.{}.c2ln",
        base64url(payload.as_bytes())
    );
    let out = anonymous
        .assume_role_with_web_identity()
        .role_arn(ROLE)
        .role_session_name("irsa")
        .web_identity_token(token)
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.subject_from_web_identity_token(),
        Some("system:serviceaccount:crossplane-system:provider-aws")
    );
    assert_eq!(out.audience(), Some("sts.amazonaws.com"));
    assert!(
        out.credentials()
            .unwrap()
            .access_key_id()
            .starts_with("ASIA")
    );
    let e = anonymous
        .assume_role_with_web_identity()
        .role_arn(ROLE)
        .role_session_name("irsa")
        .web_identity_token("not-a-jwt")
        .send()
        .await
        .unwrap_err();
    assert_eq!(e.into_service_error().code(), Some("InvalidIdentityToken"));

    let signed_client = sts(&served.url, Some(keys("default", "default")));
    let e = signed_client
        .assume_role()
        .role_arn("arn:aws:iam::999999999999:role/elsewhere")
        .role_session_name("s1")
        .send()
        .await
        .unwrap_err();
    assert_eq!(e.into_service_error().code(), Some("AccessDenied"));
    let e = signed_client
        .assume_role()
        .role_arn(ROLE)
        .role_session_name("x")
        .send()
        .await
        .unwrap_err();
    let e = e.into_service_error();
    assert_eq!(e.code(), Some("ValidationError"));
    assert!(e.message().unwrap().contains("roleSessionName"), "{e:?}");
    let calls = served.cloud.calls();
    assert_eq!(
        calls[0].account, "default",
        "a web identity call acts as the role's account"
    );
    assert_eq!(calls[0].operation, "AssumeRoleWithWebIdentity");
}

fn base64url(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(TABLE[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

async fn assume(cloud: &MockCloud) -> Credentials {
    let body = format!(
        "Action=AssumeRole&Version=2011-06-15&RoleArn={}&RoleSessionName=s1&DurationSeconds=900",
        ROLE.replace(':', "%3A").replace('/', "%2F")
    );
    let request = signed(
        "POST",
        "/",
        &[("content-type", "application/x-www-form-urlencoded")],
        body.as_bytes(),
        "sts",
        &keys("default", "default"),
        cloud_now(cloud),
        false,
    );
    let response = cloud.handle(request).await;
    assert_eq!(response.status(), 200);
    let xml = text(response).await;
    Credentials::new(
        element(&xml, "AccessKeyId").unwrap(),
        element(&xml, "SecretAccessKey").unwrap(),
        Some(element(&xml, "SessionToken").unwrap().to_owned()),
        None,
        "in-process",
    )
}

fn caller_identity(
    cloud: &MockCloud,
    credentials: &Credentials,
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    signed(
        "POST",
        "/",
        &[("content-type", "application/x-www-form-urlencoded")],
        b"Action=GetCallerIdentity&Version=2011-06-15",
        "sts",
        credentials,
        cloud_now(cloud),
        false,
    )
}

#[tokio::test(start_paused = true)]
async fn temporary_credentials_expire_on_the_clouds_clock_as_sts_says() {
    let cloud = MockCloud::new(Config::default()).unwrap();
    let temporary = assume(&cloud).await;
    let ok = cloud.handle(caller_identity(&cloud, &temporary)).await;
    assert_eq!(ok.status(), 200);
    tokio::time::advance(Duration::from_secs(901)).await;
    let expired = cloud.handle(caller_identity(&cloud, &temporary)).await;
    assert_eq!(expired.status(), 403);
    let xml = text(expired).await;
    assert_eq!(element(&xml, "Code"), Some("ExpiredToken"), "{xml}");
    assert_eq!(element(&xml, "Type"), Some("Sender"));
    let s3_request = signed(
        "GET",
        "/",
        &[],
        b"",
        "s3",
        &temporary,
        cloud_now(&cloud),
        true,
    );
    let s3_expired = cloud.handle(s3_request).await;
    assert_eq!(s3_expired.status(), 400);
    assert_eq!(
        element(&text(s3_expired).await, "Code"),
        Some("ExpiredToken")
    );
}
