//! EC2 below the SDK, in process under paused time: errors in EC2's envelope with its
//! request ID, the request-token buckets per action and category, faults per operation.

use std::time::Duration;

use mock_cloud::{Config, ErrorRate, Faults, MockCloud, OperationFaults, Service};

use crate::aws_support::{Payload, Signing, cloud_now, element, keys, text};

const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");

async fn post(cloud: &MockCloud, body: &str) -> (u16, http::HeaderMap, String) {
    let request = Signing::new("POST", "/", "ec2")
        .headers(&[FORM])
        .body(body.as_bytes())
        .payload(Payload::NotS3)
        .sign(&keys("default", "default"), cloud_now(cloud));
    let response = cloud.handle(request).await;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, text(response).await)
}

#[tokio::test(start_paused = true)]
async fn errors_are_in_ec2s_envelope_with_its_request_id() {
    let cloud = MockCloud::new(Config::default()).unwrap();
    let (status, headers, body) = post(&cloud, "Action=RunInstances&Version=2016-11-15").await;
    assert_eq!(status, 400);
    let id = headers["x-amzn-requestid"].to_str().unwrap();
    assert_eq!(
        body,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>InvalidAction</Code><Message>The action RunInstances is not valid for this web service.</Message></Error></Errors><RequestID>{id}</RequestID></Response>"
        )
    );
    assert_eq!(headers["content-type"], "text/xml;charset=UTF-8");

    let (status, headers, body) = post(
        &cloud,
        "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.0.0.0%2F16",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let id = headers["x-amzn-requestid"].to_str().unwrap();
    assert!(
        body.starts_with(&format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CreateVpcResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\n    <requestId>{id}</requestId>\n    <vpc><vpcId>vpc-"
        )),
        "{body}"
    );
    let vpc = element(&body, "vpcId").unwrap().to_owned();
    let (status, _, body) = post(
        &cloud,
        &format!("Action=DeleteVpc&Version=2016-11-15&VpcId={vpc}"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(element(&body, "return"), Some("true"));
    // A body that is not a form is no action at all.
    let (status, _, body) = post(&cloud, "\u{1}<xml/>").await;
    assert_eq!(
        (status, element(&body, "Code")),
        (400, Some("InvalidAction"))
    );
}

#[tokio::test(start_paused = true)]
async fn the_default_buckets_are_per_action_by_category_as_ec2_documents() {
    let cloud = MockCloud::new(Config::default()).unwrap();
    let create = "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.0.0.0%2F16";
    // Mutating: 50 tokens, then RequestLimitExceeded; 5 a second come back.
    for i in 0..50 {
        let (status, _, body) = post(&cloud, create).await;
        assert_eq!(status, 200, "create {i}: {body}");
    }
    let (status, _, body) = post(&cloud, create).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (503, Some("RequestLimitExceeded"))
    );
    // Other actions have buckets of their own: ModifyVpcAttribute (mutating) and the
    // non-mutating DescribeVpcs (100 tokens), CreateTags (uncategorized, 100).
    let (status, _, body) = post(&cloud, "Action=DescribeVpcs&Version=2016-11-15").await;
    assert_eq!(status, 200);
    let vpc = element(&body, "vpcId").unwrap().to_owned();
    let modify = format!(
        "Action=ModifyVpcAttribute&Version=2016-11-15&VpcId={vpc}&EnableDnsSupport.Value=false"
    );
    assert_eq!(post(&cloud, &modify).await.0, 200);
    for _ in 0..99 {
        assert_eq!(
            post(&cloud, "Action=DescribeVpcs&Version=2016-11-15")
                .await
                .0,
            200
        );
    }
    assert_eq!(
        post(&cloud, "Action=DescribeVpcs&Version=2016-11-15")
            .await
            .0,
        503
    );
    let tag = format!(
        "Action=CreateTags&Version=2016-11-15&ResourceId.1={vpc}&Tag.1.Key=a&Tag.1.Value=b"
    );
    assert_eq!(post(&cloud, &tag).await.0, 200);
    tokio::time::advance(Duration::from_millis(200)).await;
    assert_eq!(post(&cloud, create).await.0, 200, "one token refilled");
    let summary = cloud.summary();
    let layers: Vec<&str> = summary
        .violations
        .iter()
        .map(|v| v.layer.as_str())
        .collect();
    assert!(layers.iter().any(|l| l.starts_with("ec2:")), "{layers:?}");
}

#[tokio::test(start_paused = true)]
async fn operation_faults_answer_in_ec2s_envelope() {
    let faults = Faults::none().with_operation(
        Service::Ec2,
        "CreateVpc",
        OperationFaults::none().with_errors(ErrorRate {
            probability: 1.0,
            status: 503,
        }),
    );
    let cloud = MockCloud::new(Config::default().with_faults(faults)).unwrap();
    let (status, _, body) = post(
        &cloud,
        "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.0.0.0%2F16",
    )
    .await;
    assert_eq!((status, element(&body, "Code")), (503, Some("Unavailable")));
    assert!(body.contains("<Response><Errors><Error>"), "{body}");
    let (status, _, _) = post(&cloud, "Action=DescribeVpcs&Version=2016-11-15").await;
    assert_eq!(status, 200, "other operations are untouched");
    let calls = cloud.calls();
    assert!(calls[0].fault && calls[0].operation == "CreateVpc");
    let summary = cloud.summary();
    let create = summary
        .operations
        .iter()
        .find(|o| o.service == "ec2" && o.operation == "CreateVpc")
        .unwrap();
    assert_eq!(create.faults, 1);
}
