//! A sweep's results in S3 (feature `aws`), through the AWS SDK: a point run apart
//! uploads its directory's files with PutObject; `--collect` downloads each point's by its
//! key with GetObject (the grid gives the keys: nothing is listed, so a store without
//! ListObjectsV2, such as mock-cloud's, serves too).
//!
//! The client reads what the AWS SDKs read from the environment: `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` (static credentials only); the region
//! from `AWS_REGION` or `AWS_DEFAULT_REGION` (default `us-east-1`); the endpoint, when not
//! given, from `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`. An endpoint other than AWS's is
//! addressed path-style (`ENDPOINT/BUCKET/KEY`), as MinIO and mock-cloud expect.

use std::collections::BTreeMap;
use std::path::Path;

use aws_credential_types::Credentials;
use aws_sdk_s3::config::{BehaviorVersion, Region};
use aws_sdk_s3::primitives::ByteStream;
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use provider::reconciler::conditions::error_chain;

use super::model::point_dir;
use super::remote::{POINT_FILES, S3Url};

/// Why the results could not go to or come from S3.
#[derive(Debug, thiserror::Error)]
pub enum S3Error {
    /// No credentials in the environment.
    #[error(
        "S3 needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones); a Job's pods take them from the Secret of --s3-credentials-secret"
    )]
    NoCredentials,
    /// A local file that could not be read or written.
    #[error("{}", path.display())]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A request S3 refused or that did not arrive.
    #[error("{operation} s3://{bucket}/{key}: {message}")]
    Request {
        /// PutObject or GetObject.
        operation: &'static str,
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// The SDK's error, with its causes.
        message: String,
    },
}

/// The first environment variable of `names` that is set and not empty.
fn env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
}

/// The endpoint a client uses: `flag`, else the environment's.
#[must_use]
pub fn endpoint(flag: Option<&str>) -> Option<String> {
    flag.map(str::to_owned)
        .or_else(|| env(&["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]))
}

/// An S3 client on `endpoint` (AWS's when none) with the environment's credentials and
/// region.
///
/// # Errors
/// [`S3Error::NoCredentials`].
pub fn client(endpoint: Option<&str>) -> Result<aws_sdk_s3::Client, S3Error> {
    let (Some(key), Some(secret)) = (env(&["AWS_ACCESS_KEY_ID"]), env(&["AWS_SECRET_ACCESS_KEY"]))
    else {
        return Err(S3Error::NoCredentials);
    };
    let credentials = Credentials::new(
        key,
        secret,
        env(&["AWS_SESSION_TOKEN"]),
        None,
        "environment",
    );
    let region = env(&["AWS_REGION", "AWS_DEFAULT_REGION"]).unwrap_or_else(|| "us-east-1".into());
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
        .build_https();
    let mut b = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region))
        .credentials_provider(credentials)
        .http_client(http);
    if let Some(url) = endpoint {
        b = b.endpoint_url(url).force_path_style(true);
    }
    Ok(aws_sdk_s3::Client::from_conf(b.build()))
}

/// Uploads the files of point `index`'s directory under `out` ([`POINT_FILES`], those
/// that exist) to `url`; their keys.
///
/// # Errors
/// A file that cannot be read, or a PutObject that fails.
pub async fn upload_point(
    client: &aws_sdk_s3::Client,
    url: &S3Url,
    index: usize,
    out: &Path,
) -> Result<Vec<String>, S3Error> {
    let dir = out.join(point_dir(index));
    let mut keys = Vec::new();
    for file in POINT_FILES {
        let path = dir.join(file);
        let data = match std::fs::read(&path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(S3Error::File { path, source }),
        };
        let key = url.key(index, file);
        client
            .put_object()
            .bucket(&url.bucket)
            .key(&key)
            .content_type(content_type(file))
            .body(ByteStream::from(data))
            .send()
            .await
            .map_err(|e| S3Error::Request {
                operation: "PutObject",
                bucket: url.bucket.clone(),
                key: key.clone(),
                message: error_chain(&e),
            })?;
        keys.push(key);
    }
    Ok(keys)
}

fn content_type(file: &str) -> &'static str {
    match file.rsplit_once('.').map(|(_, ext)| ext) {
        Some("json") => "application/json",
        Some("xml") => "application/xml",
        Some("html") => "text/html; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Downloads the files of points `0..points` from `url` into `out/points/NNN/`, each
/// point's result by its key; for each point whose result is not there, why (its key and
/// S3's answer). A report missing beside a result is left out quietly. The points'
/// directories end up as the bucket has them: a file of [`POINT_FILES`] the bucket does
/// not have is removed from them, so no earlier run's report stands in for it.
///
/// # Errors
/// A file that cannot be written or removed, or a GetObject that fails otherwise than
/// with `NoSuchKey`.
pub async fn download_points(
    client: &aws_sdk_s3::Client,
    url: &S3Url,
    points: usize,
    out: &Path,
) -> Result<BTreeMap<usize, String>, S3Error> {
    let mut missing = BTreeMap::new();
    for index in 0..points {
        let dir = out.join(point_dir(index));
        for file in POINT_FILES {
            let key = url.key(index, file);
            let request = |message: String| S3Error::Request {
                operation: "GetObject",
                bucket: url.bucket.clone(),
                key: key.clone(),
                message,
            };
            let object = match client
                .get_object()
                .bucket(&url.bucket)
                .key(&key)
                .send()
                .await
            {
                Ok(o) => o,
                Err(e) if e.as_service_error().is_some_and(|s| s.is_no_such_key()) => {
                    let path = dir.join(file);
                    match std::fs::remove_file(&path) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                            return Err(S3Error::File { path, source: e });
                        }
                        _ => {}
                    }
                    if file == POINT_FILES[0] {
                        missing.insert(
                            index,
                            format!("no result at s3://{}/{key} (NoSuchKey)", url.bucket),
                        );
                    }
                    continue;
                }
                Err(e) => return Err(request(error_chain(&e))),
            };
            let data = object
                .body
                .collect()
                .await
                .map_err(|e| request(error_chain(&e)))?
                .into_bytes();
            std::fs::create_dir_all(&dir).map_err(|source| S3Error::File {
                path: dir.clone(),
                source,
            })?;
            let path = dir.join(file);
            std::fs::write(&path, &data).map_err(|source| S3Error::File { path, source })?;
        }
    }
    Ok(missing)
}
