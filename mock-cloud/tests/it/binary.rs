//! The example config file and the binary: command line, config errors, serving, SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mock_cloud::{Action, Class, Collection, Config, Flavor, Per, Rate, Service};

fn example() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/mock-cloud.example.yaml"
    ))
}

#[test]
fn the_example_config_loads_with_every_key_applied() {
    let config = Config::load(example()).unwrap();
    assert_eq!(config.flavor, Flavor::Generic);
    assert_eq!(config.accounts.len(), 2);
    let acme = &config.accounts[0];
    assert_eq!(acme.tokens, ["acme-token"]);
    assert_eq!(acme.quotas.account, Some(Rate::new(200, 50.0)));
    assert_eq!(acme.quotas.actions[&Action::Create], Rate::new(5, 2.0));
    let tight = &config.accounts[1].quotas;
    assert_eq!(tight.classes[&Class::Read], Rate::new(10, 1.0));
    assert_eq!(tight.classes[&Class::List], Rate::new(50, 10.0));
    assert_eq!(tight.counts[&Collection::Databases], 2);
    assert_eq!(config.faults.seed, 42);
    assert_eq!(config.faults.latency.len(), 3);
    assert_eq!(config.faults.outages.len(), 1);
    assert_eq!(config.database_create.as_millis(), 5000);
    let aws = acme.aws.as_ref().unwrap();
    assert_eq!(aws.account_id, "111111111111");
    assert_eq!(aws.access_keys[1].user.as_deref(), Some("alice"));
    let s3 = &acme.quotas.services[&Service::S3];
    assert_eq!(s3.operations["ListBuckets"], Rate::new(100, 10.0));
    assert_eq!(s3.classes["read"].per, Per::Resource);
    assert_eq!(
        acme.quotas.services[&Service::Sts].service,
        Some(Rate::new(100, 20.0))
    );
    assert_eq!(config.aws.max_clock_skew.as_secs(), 900);
    assert_eq!(config.faults.services[&Service::S3].len(), 2);
    let assume = &config.faults.services[&Service::Sts]["AssumeRole"];
    assert_eq!(assume.outages.len(), 1);
    mock_cloud::MockCloud::new(config).unwrap();
}

#[test]
fn the_readmes_aws_config_example_loads() {
    let readme = include_str!("../../README.md");
    let aws = &readme[readme
        .find("### Quotas, faults and the journal per service and operation")
        .unwrap()..];
    let start = aws.find("```yaml\n").unwrap() + "```yaml\n".len();
    let yaml = &aws[start..start + aws[start..].find("```").unwrap()];
    let config = Config::from_yaml(yaml, "README.md").unwrap();
    let team = &config.accounts[0];
    assert_eq!(team.aws.as_ref().unwrap().account_id, "111111111111");
    assert!(team.quotas.services.contains_key(&Service::Sts));
    assert_eq!(config.faults.services[&Service::S3].len(), 2);
}

#[test]
fn the_binary_checks_the_example_config() {
    let output = Command::new(env!("CARGO_BIN_EXE_mock-cloud"))
        .args(["--check", "--config"])
        .arg(example())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("2 account(s)"));
}

#[test]
fn the_binary_names_file_line_and_column_of_a_bad_config_and_exits_2() {
    let dir = std::env::temp_dir().join(format!("mock-cloud-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.yaml");
    std::fs::write(
        &file,
        "shadow: true\naccounts:\n  - name: a\n    tokenz: [x]\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_mock-cloud"))
        .arg("--config")
        .arg(&file)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.yaml:4:5"), "{stderr}");
    assert!(stderr.contains("tokenz"), "{stderr}");
}

#[test]
fn help_explains_every_flag() {
    let output = Command::new(env!("CARGO_BIN_EXE_mock-cloud"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    for flag in ["--listen", "--config", "--check", "--help", "--version"] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}

#[test]
fn the_binary_serves_on_the_address_it_prints_and_stops_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-cloud"))
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("mock-cloud listening on http://")
        .expect(&line)
        .to_owned();

    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = "GET /v1/accounts/default/buckets HTTP/1.1\r\nhost: x\r\nauthorization: Bearer default\r\nconnection: close\r\n\r\n";
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the binary did not stop within 10 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
