//! With feature `aws`: two "pods" run as local processes with `JOB_COMPLETION_INDEX`,
//! their results left in mock-cloud's S3 and collected from there into one report.

use super::*;
use serde_json::Value;

const BUCKET: &str = "sweeps";

/// mock-cloud on a loopback port, with bucket [`BUCKET`] created; its URL.
fn cloud(rt: &tokio::runtime::Runtime) -> String {
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let cloud = mock_cloud::MockCloud::new(mock_cloud::Config::default()).unwrap();
        tokio::spawn(mock_cloud::serve(listener, cloud, std::future::pending()));
        let s3 = aws_sdk_s3::Client::from_conf(
            aws_sdk_s3::Config::builder()
                .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
                .endpoint_url(&url)
                .region(aws_sdk_s3::config::Region::new("us-east-1"))
                .credentials_provider(aws_credential_types::Credentials::new(
                    "default",
                    "default",
                    None,
                    None,
                    "mock-cloud",
                ))
                .force_path_style(true)
                .http_client(aws_smithy_http_client::Builder::new().build_http())
                .build(),
        );
        s3.create_bucket().bucket(BUCKET).send().await.unwrap();
        url
    })
}

/// `harness sweep FILE args` with mock-cloud's credentials in the environment and
/// the completion index `index`, as a Job's pod has them.
fn pod(file: &Path, args: &[&str], index: Option<usize>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_harness"));
    c.arg("sweep")
        .arg(file)
        .args(args)
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("AWS_ENDPOINT_URL_S3")
        .env("AWS_ACCESS_KEY_ID", "default")
        .env("AWS_SECRET_ACCESS_KEY", "default")
        .env("AWS_REGION", "us-east-1");
    if let Some(i) = index {
        c.env("JOB_COMPLETION_INDEX", i.to_string());
    }
    c
}

#[test]
fn two_pods_leave_their_results_in_s3_and_collect_merges_them_into_one_report() {
    let _cores = crate::timing::heavy();
    let (file, dir) = setup("s3");
    let rt = runtime();
    let endpoint = cloud(&rt);
    let results = format!("s3://{BUCKET}/runs/r-1");
    let vary = "provider.maxReconcileRate=5,20";
    let common = [
        "--vary",
        vary,
        "--results",
        &results,
        "--s3-endpoint",
        &endpoint,
    ];
    // Two "pods", each with its own disk, at once.
    let pods: Vec<_> = (0..2)
        .map(|i| {
            let out = dir.join(format!("pod-{i}"));
            let mut args = common.to_vec();
            args.extend(["--out", out.to_str().unwrap()]);
            let child = pod(&file, &args, Some(i))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (out, child)
        })
        .collect();
    let pods: Vec<_> = pods
        .into_iter()
        .map(|(out, child)| (out, child.wait_with_output().unwrap()))
        .collect();
    for (i, (_, run)) in pods.iter().enumerate() {
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            stdout.contains(&format!(
                "uploaded to s3://{BUCKET}: runs/r-1/points/{i:03}/result.json, runs/r-1/points/{i:03}/junit.xml, runs/r-1/points/{i:03}/report.html"
            )),
            "pod {i}: {stdout}{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    // The collection has neither pod's disk: only the bucket.
    let out = dir.join("collected");
    let mut args = common.to_vec();
    args.extend(["--collect", "--out", out.to_str().unwrap()]);
    let collect = pod(&file, &args, None).output().unwrap();
    let stderr = String::from_utf8_lossy(&collect.stderr);
    assert!(
        stderr.contains(&format!("2 of 2 points' results downloaded from {results}")),
        "{stderr}"
    );
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p["status"], "ran", "{p}");
        // Each point's result is the one its pod wrote, byte for byte.
        let name = format!("points/{i:03}/result.json");
        assert_eq!(
            std::fs::read(out.join(&name)).unwrap(),
            std::fs::read(pods[i].0.join(&name)).unwrap()
        );
        assert!(out.join(format!("points/{i:03}/report.html")).exists());
        for figure in [
            "cloudCalls.10s",
            "timeToReady.p99",
            "pollPeriod",
            "drainTime",
        ] {
            assert!(
                p["figures"][figure]["measured"].as_f64().is_some(),
                "{figure} of point {i}: {p}"
            );
        }
    }
    // A faster rate, a higher measured peak and a faster wave.
    let measured = |i: usize, f: &str| points[i]["figures"][f]["measured"].as_f64().unwrap();
    assert!(measured(0, "cloudCalls.10s") < measured(1, "cloudCalls.10s"));
    assert!(measured(0, "timeToReady.p99") > measured(1, "timeToReady.p99"));
    assert!(out.join("sweep.html").exists());

    // A grid with a third point no pod ran: reported without a result, by its key, and
    // an earlier run's files in its directory do not stand in for what the bucket lacks.
    let out = dir.join("collected-3");
    let stale = out.join("points/002");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::copy(
        pods[0].0.join("points/000/result.json"),
        stale.join("result.json"),
    )
    .unwrap();
    std::fs::write(stale.join("report.html"), "an earlier run's").unwrap();
    let collect = pod(
        &file,
        &[
            "--vary",
            "provider.maxReconcileRate=5,20,50",
            "--results",
            &results,
            "--s3-endpoint",
            &endpoint,
            "--collect",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    )
    .output()
    .unwrap();
    assert_eq!(collect.status.code(), Some(1));
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(r["points"][0]["status"], "ran");
    assert_eq!(r["points"][2]["status"], "failed");
    assert_eq!(
        r["points"][2]["reason"],
        format!("no result at s3://{BUCKET}/runs/r-1/points/002/result.json (NoSuchKey)")
    );
    assert!(!stale.join("result.json").exists() && !stale.join("report.html").exists());
}

#[test]
fn a_point_without_credentials_says_where_they_come_from() {
    let (file, dir) = setup("s3-no-credentials");
    let out = dir.join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("sweep")
        .arg(&file)
        .args([
            "--vary",
            "seed=1,2",
            "--collect",
            "--results",
            "s3://sweeps/x",
            "--s3-endpoint",
            "http://127.0.0.1:9",
            "--out",
            out.to_str().unwrap(),
        ])
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("S3 needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
        "{stderr}"
    );
}
