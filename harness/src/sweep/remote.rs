//! Where a sweep's points leave their results when they run apart (as an Indexed Job's
//! pods): an S3 location, `s3://BUCKET/PREFIX`, under which point `I`'s files are
//! `PREFIX/points/NNN/FILE`, the same layout as a sweep's `--out`.

use std::fmt;
use std::str::FromStr;

use super::model::point_dir;

/// The files of a point's directory that go to and come from the object store: its result
/// first (the one `--collect` needs), then its reports.
pub const POINT_FILES: [&str; 3] = ["result.json", "junit.xml", "report.html"];

/// `s3://BUCKET/PREFIX`: a bucket and a key prefix (without its slashes at either end;
/// empty for the bucket's root).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Url {
    /// The bucket.
    pub bucket: String,
    /// The prefix, without leading or trailing `/`.
    pub prefix: String,
}

impl S3Url {
    /// The key of `file` of point `index`: `PREFIX/points/NNN/FILE`.
    #[must_use]
    pub fn key(&self, index: usize, file: &str) -> String {
        let path = format!("{}/{file}", point_dir(index));
        if self.prefix.is_empty() {
            path
        } else {
            format!("{}/{path}", self.prefix)
        }
    }
}

impl fmt::Display for S3Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.prefix.is_empty() {
            write!(f, "s3://{}", self.bucket)
        } else {
            write!(f, "s3://{}/{}", self.bucket, self.prefix)
        }
    }
}

/// Why a `--results` value is no S3 location.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum S3UrlError {
    /// Another scheme, or none.
    #[error("{0} is not an S3 location: expected s3://BUCKET/PREFIX")]
    Scheme(String),
    /// A bucket name S3 does not take.
    #[error(
        "{0}: the bucket name must be 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit"
    )]
    Bucket(String),
}

impl FromStr for S3Url {
    type Err = S3UrlError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let rest = text
            .strip_prefix("s3://")
            .ok_or_else(|| S3UrlError::Scheme(text.to_owned()))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let edge =
            |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let valid = (3..=63).contains(&bucket.len())
            && bucket
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
            && edge(bucket.chars().next())
            && edge(bucket.chars().last());
        if !valid {
            return Err(S3UrlError::Bucket(text.to_owned()));
        }
        Ok(S3Url {
            bucket: bucket.to_owned(),
            prefix: prefix.trim_matches('/').to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_names_a_bucket_and_the_points_keys_under_its_prefix() {
        let u: S3Url = "s3://sweeps/runs/r-2026/".parse().unwrap();
        assert_eq!(u.bucket, "sweeps");
        assert_eq!(u.prefix, "runs/r-2026");
        assert_eq!(
            u.key(7, "result.json"),
            "runs/r-2026/points/007/result.json"
        );
        assert_eq!(u.to_string(), "s3://sweeps/runs/r-2026");
        let root: S3Url = "s3://sweeps".parse().unwrap();
        assert_eq!(root.key(0, "junit.xml"), "points/000/junit.xml");
        assert_eq!(root.to_string(), "s3://sweeps");
    }

    #[test]
    fn other_schemes_and_bad_bucket_names_are_refused() {
        assert_eq!(
            "/data/sweep".parse::<S3Url>(),
            Err(S3UrlError::Scheme("/data/sweep".into()))
        );
        for bad in [
            "s3://",
            "s3://ab",
            "s3://Sweeps/x",
            "s3://-sweeps",
            "s3://a_b/x",
        ] {
            assert!(
                matches!(bad.parse::<S3Url>(), Err(S3UrlError::Bucket(_))),
                "{bad}"
            );
        }
    }
}
