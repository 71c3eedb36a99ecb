use super::*;

fn spec(yaml: &str) -> ProviderConfigSpec {
    serde_saphyr::from_str(yaml).expect("parses")
}

#[test]
fn upjets_field_names_parse() {
    let s = spec(
        "credentials: {source: Secret, secretRef: {namespace: ns, name: aws, key: credentials}}\n\
             assumeRoleChain: [{roleARN: 'arn:aws:iam::000000000000:role/a'}, {roleARN: 'arn:aws:iam::000000000000:role/b', externalID: x}]\n\
             endpoint: {services: [s3, sts], hostnameImmutable: true, url: {type: Static, static: 'http://127.0.0.1:8080'}}\n\
             s3_use_path_style: true\nskip_credentials_validation: true\n\
             reconciliationPolicy: {exponentialFailureRateLimiter: {baseDelay: 5s, maxDelay: 5m}}\n",
    );
    assert_eq!(s.validate(), Ok(()));
    assert_eq!(s.assume_role_chain.len(), 2);
    assert_eq!(s.endpoint_for("s3"), Ok(Some("http://127.0.0.1:8080")));
    assert_eq!(s.endpoint_for("ec2"), Ok(None), "not listed: AWS's own");
    assert!(s.s3_use_path_style && s.skip_credentials_validation);
    assert_eq!(
        s.failure_backoff(),
        Ok((Some(Duration::from_secs(5)), Some(Duration::from_secs(300))))
    );
}

#[test]
fn the_policy_wins_over_the_flags_bound_by_bound() {
    let flags = FailureBackoff {
        base: Duration::from_secs(2),
        max: Duration::from_secs(120),
    };
    let s = spec(
        "credentials: {source: Secret, secretRef: {namespace: n, name: a, key: k}}\n\
             reconciliationPolicy: {exponentialFailureRateLimiter: {maxDelay: 10m}}\n",
    );
    assert_eq!(
        s.effective_backoff(flags),
        Ok(FailureBackoff {
            base: Duration::from_secs(2),
            max: Duration::from_secs(600)
        })
    );
    let none = spec("credentials: {source: Secret, secretRef: {namespace: n, name: a, key: k}}\n");
    assert_eq!(none.effective_backoff(flags), Ok(flags));
}

#[test]
fn bad_configs_say_what_to_fix() {
    let msg = |yaml: &str| spec(yaml).validate().unwrap_err().to_string();
    assert_eq!(
        msg("credentials: {}\n"),
        "spec.credentials.source is not set: set it to Secret (with spec.credentials.secretRef) or WebIdentity (with spec.credentials.webIdentity)"
    );
    assert_eq!(
        msg("credentials: {source: Secret}\n"),
        "spec.credentials.source is Secret but spec.credentials.secretRef is missing"
    );
    assert_eq!(
        msg(
            "credentials: {source: Secret, secretRef: {namespace: n, name: a, key: k}}\nendpoint: {url: {type: Static, static: 'mock-cloud:8080'}}\n"
        ),
        "spec.endpoint.url.static \"mock-cloud:8080\" is not a URL: expected http://host:port or https://host:port (no scheme)"
    );
    assert_eq!(
        msg(
            "credentials: {source: Secret, secretRef: {namespace: n, name: a, key: k}}\nendpoint: {url: {type: Dynamic}}\n"
        ),
        "spec.endpoint.url.type \"Dynamic\" is not supported: use Static with spec.endpoint.url.static"
    );
    assert_eq!(
        msg(
            "credentials: {source: Secret, secretRef: {namespace: n, name: a, key: k}}\nassumeRoleChain: [{roleARN: deployer}]\n"
        ),
        "spec.assumeRoleChain[0].roleARN \"deployer\" is not a role ARN: expected arn:aws:iam::<12-digit account>:role/<name>"
    );
    assert_eq!(
        msg(
            "credentials: {source: Secret, secretRef: {namespace: n, name: a, key: k}}\nreconciliationPolicy: {exponentialFailureRateLimiter: {baseDelay: 100ms}}\n"
        ),
        "spec.reconciliationPolicy.exponentialFailureRateLimiter.baseDelay \"100ms\" is below the minimum 1s"
    );
    assert!(
            msg("credentials: {source: Secret, secretRef: {namespace: n, name: a, key: k}}\nreconciliationPolicy: {exponentialFailureRateLimiter: {maxDelay: soon}}\n")
                .starts_with("spec.reconciliationPolicy.exponentialFailureRateLimiter.maxDelay \"soon\" is not a Go duration")
        );
}

#[test]
fn regions_are_checked_by_shape() {
    for ok in [
        "us-east-1",
        "eu-west-2",
        "us-gov-west-1",
        "cn-north-1",
        "ap-southeast-4",
    ] {
        assert_eq!(check_region(ok), Ok(()), "{ok}");
    }
    for bad in [
        "",
        "useast1",
        "US-EAST-1",
        "us-east",
        "mars-north-1",
        "us-east-1a",
        "eu-west-100",
    ] {
        assert_eq!(
            check_region(bad),
            Err(ConfigError::BadRegion(bad.to_owned())),
            "{bad}"
        );
    }
}

#[test]
fn a_shared_credentials_file_gives_the_default_profile() {
    let keys = parse_credentials_file(
            "# mock-cloud\n[other]\naws_access_key_id = no\n[default]\naws_access_key_id = default\naws_secret_access_key = s3cr3t\n",
        )
        .expect("has keys");
    assert_eq!(keys.access_key_id, "default");
    assert_eq!(keys.secret_access_key, "s3cr3t");
    assert_eq!(keys.session_token, None);
    assert!(
        !format!("{keys:?}").contains("s3cr3t"),
        "secrets stay out of logs"
    );
    assert!(parse_credentials_file("[default]\naws_access_key_id = a\n").is_none());
    assert!(parse_credentials_file("aws_access_key_id = a\naws_secret_access_key = b\n").is_none());
}
