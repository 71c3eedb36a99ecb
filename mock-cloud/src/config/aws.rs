//! AWS settings: an account's AWS identity (its 12-digit ID and access keys) and the
//! cloud-wide settings of the AWS endpoints (clock skew, the retry hint).

use std::time::Duration;

/// The AWS account ID of the default account.
pub const DEFAULT_ACCOUNT_ID: &str = "000000000000";

/// An access key: its ID and secret, and optionally the IAM user it belongs to (without
/// one, the key is the account's root key: `arn:aws:iam::<id>:root`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessKey {
    /// The access key ID, as SDKs send it in the credential scope.
    pub id: String,
    /// The secret access key.
    pub secret: String,
    /// The IAM user name (`arn:aws:iam::<id>:user/<name>`), or `None` for the root.
    pub user: Option<String>,
}

impl AccessKey {
    /// A root access key.
    pub fn new(id: impl Into<String>, secret: impl Into<String>) -> AccessKey {
        AccessKey {
            id: id.into(),
            secret: secret.into(),
            user: None,
        }
    }

    /// Makes it an IAM user's key.
    #[must_use]
    pub fn with_user(mut self, user: impl Into<String>) -> AccessKey {
        self.user = Some(user.into());
        self
    }
}

/// An account as AWS knows it: its 12-digit account ID and its access keys. An account
/// without access keys can still be the target of `sts:AssumeRole`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsIdentity {
    /// The 12-digit AWS account ID.
    pub account_id: String,
    /// The long-term access keys that sign as this account.
    pub access_keys: Vec<AccessKey>,
}

impl AwsIdentity {
    /// An identity with this account ID and no key yet.
    pub fn new(account_id: impl Into<String>) -> AwsIdentity {
        AwsIdentity {
            account_id: account_id.into(),
            access_keys: Vec::new(),
        }
    }

    /// Adds an access key.
    #[must_use]
    pub fn with_key(mut self, key: AccessKey) -> AwsIdentity {
        self.access_keys.push(key);
        self
    }

    /// The default account's: ID `000000000000`, access key `default`, secret `default`.
    pub fn default_account() -> AwsIdentity {
        AwsIdentity::new(DEFAULT_ACCOUNT_ID).with_key(AccessKey::new("default", "default"))
    }
}

/// Settings of the AWS endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AwsSettings {
    /// How far a request's `X-Amz-Date` may be from the cloud's time (AWS: 15 minutes).
    /// Presigned URLs are bound by their own expiry instead.
    pub max_clock_skew: Duration,
    /// Send `x-amz-retry-after` (milliseconds) with throttles, as the SDKs' 2026 retry
    /// mode reads it. AWS does not document sending it; off by default.
    pub retry_after_header: bool,
}

impl Default for AwsSettings {
    fn default() -> AwsSettings {
        AwsSettings {
            max_clock_skew: Duration::from_secs(15 * 60),
            retry_after_header: false,
        }
    }
}

/// Whether `id` is a 12-digit AWS account ID.
pub(crate) fn is_account_id(id: &str) -> bool {
    id.len() == 12 && id.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `id` can be an access key ID: 1 to 128 of A-Z, a-z, 0-9 (AWS's own are 16 to
/// 128; `default` is allowed so the default account works with any SDK).
pub(crate) fn is_access_key_id(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Checks an identity: a 12-digit ID not used before, key IDs not used before, secrets
/// not empty.
pub(crate) fn check_identity<'a>(
    aws: &'a AwsIdentity,
    account_ids: &mut std::collections::HashSet<&'a str>,
    access_keys: &mut std::collections::HashSet<&'a str>,
) -> Result<(), String> {
    if !is_account_id(&aws.account_id) {
        return Err(format!(
            "aws.account_id {:?} must be 12 digits",
            aws.account_id
        ));
    }
    if !account_ids.insert(&aws.account_id) {
        return Err(format!("aws.account_id {:?} is used twice", aws.account_id));
    }
    for key in &aws.access_keys {
        if !is_access_key_id(&key.id) {
            return Err(format!(
                "access key {:?} must be 1 to 128 letters and digits",
                key.id
            ));
        }
        if !access_keys.insert(&key.id) {
            return Err(format!("access key {:?} is used twice", key.id));
        }
        if key.secret.is_empty() {
            return Err(format!("the secret of access key {:?} is empty", key.id));
        }
    }
    Ok(())
}
