//! Who signs: the accounts' long-term access keys from the config, the temporary
//! credentials STS has issued, and a cache of SigV4 signing keys.
//!
//! # Semantics
//! A temporary credential (access key `ASIA…`) carries its session token, which every
//! request signed with it must send as `X-Amz-Security-Token`, and an expiry in the
//! cloud's wall-clock time (its epoch plus its clock), so paused-time tests expire it by
//! advancing the clock. Issued credentials are forgotten by a reset; expired ones are
//! dropped as new ones are issued.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use jiff::Timestamp;
use ring::hmac;

use super::signing;
use crate::FastMap;
use crate::config::AccountConfig;

/// The identity a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Principal {
    /// The mock-cloud account name (the journal's `account`).
    pub account: Arc<str>,
    /// The 12-digit AWS account ID.
    pub account_id: Arc<str>,
    /// `arn:aws:iam::<id>:root`, `…:user/<name>` or `arn:aws:sts::<id>:assumed-role/<role>/<session>`.
    pub arn: String,
    /// GetCallerIdentity's `UserId`.
    pub user_id: String,
}

/// An authenticated caller, or none for an operation that needs no signature.
pub(crate) type Caller = Option<Arc<Principal>>;

/// A credential's secret and what it acts as.
#[derive(Debug, Clone)]
pub(crate) struct Secret {
    pub secret: String,
    pub principal: Arc<Principal>,
    /// For a temporary credential: its session token and expiry.
    pub session: Option<(String, Timestamp)>,
}

/// Issued temporary credentials, as STS answers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issued {
    pub access_key: String,
    pub secret: String,
    pub token: String,
    pub expires: Timestamp,
}

/// Every credential of a cloud.
#[derive(Debug)]
pub(crate) struct Credentials {
    long_term: FastMap<String, Arc<Secret>>,
    temporary: RwLock<FastMap<String, Arc<Secret>>>,
    /// AWS account ID → account name.
    by_account_id: FastMap<String, Arc<str>>,
    /// Access key → credential scope → signing key (looked up without building a key).
    signing_keys: RwLock<FastMap<String, FastMap<String, hmac::Key>>>,
    issued: AtomicU64,
}

/// At most this many signing keys are cached (each is one key, one scope and one day).
const SIGNING_KEY_CACHE: usize = 4_096;

impl Credentials {
    pub fn new(accounts: &[AccountConfig]) -> Credentials {
        let mut long_term = FastMap::default();
        let mut by_account_id = FastMap::default();
        for account in accounts {
            let Some(aws) = &account.aws else { continue };
            let name: Arc<str> = Arc::from(account.name.as_str());
            let id: Arc<str> = Arc::from(aws.account_id.as_str());
            by_account_id.insert(aws.account_id.clone(), name.clone());
            for key in &aws.access_keys {
                let (arn, user_id) = match &key.user {
                    Some(user) => (
                        format!("arn:aws:iam::{id}:user/{user}"),
                        format!("AIDA{}", pseudo_id(&format!("{id}/{user}"), 17)),
                    ),
                    None => (format!("arn:aws:iam::{id}:root"), id.to_string()),
                };
                let principal = Arc::new(Principal {
                    account: name.clone(),
                    account_id: id.clone(),
                    arn,
                    user_id,
                });
                long_term.insert(
                    key.id.clone(),
                    Arc::new(Secret {
                        secret: key.secret.clone(),
                        principal,
                        session: None,
                    }),
                );
            }
        }
        Credentials {
            long_term,
            temporary: RwLock::new(FastMap::default()),
            by_account_id,
            signing_keys: RwLock::new(FastMap::default()),
            issued: AtomicU64::new(0),
        }
    }

    /// The secret of an access key, long-term or temporary.
    pub fn lookup(&self, access_key: &str) -> Option<Arc<Secret>> {
        if let Some(secret) = self.long_term.get(access_key) {
            return Some(secret.clone());
        }
        self.temporary.read().get(access_key).cloned()
    }

    /// The account name of an AWS account ID.
    pub fn account_of(&self, account_id: &str) -> Option<Arc<str>> {
        self.by_account_id.get(account_id).cloned()
    }

    /// The signing key of a secret for a credential scope, cached.
    pub fn signing_key(&self, access_key: &str, secret: &str, scope: &str) -> hmac::Key {
        if let Some(key) = self
            .signing_keys
            .read()
            .get(access_key)
            .and_then(|scopes| scopes.get(scope))
        {
            return key.clone();
        }
        let mut parts = scope.split('/');
        let (date, region, service) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        let key = signing::signing_key(secret, date, region, service);
        let mut cache = self.signing_keys.write();
        if cache.values().map(FastMap::len).sum::<usize>() >= SIGNING_KEY_CACHE {
            cache.clear();
        }
        cache
            .entry(access_key.to_owned())
            .or_default()
            .insert(scope.to_owned(), key.clone());
        key
    }

    /// Issues temporary credentials acting as `principal` until `expires`; drops the
    /// ones expired by `now`.
    pub fn issue(&self, principal: Principal, now: Timestamp, expires: Timestamp) -> Issued {
        let n = self.issued.fetch_add(1, Ordering::Relaxed);
        let seed = format!("{n}/{}/{}", principal.arn, now.as_nanosecond());
        let access_key = format!("ASIA{}", pseudo_id(&seed, 16));
        let secret = BASE64.encode(bytes(&format!("secret/{seed}"), 30));
        let token = format!(
            "FQoGZXIvYXdzE{}",
            BASE64.encode(bytes(&format!("token/{seed}"), 180))
        );
        let mut temporary = self.temporary.write();
        temporary.retain(|_, s| s.session.as_ref().is_none_or(|(_, e)| *e > now));
        temporary.insert(
            access_key.clone(),
            Arc::new(Secret {
                secret: secret.clone(),
                principal: Arc::new(principal),
                session: Some((token.clone(), expires)),
            }),
        );
        Issued {
            access_key,
            secret,
            token,
            expires,
        }
    }

    /// Forgets every temporary credential.
    pub fn clear_temporary(&self) {
        self.temporary.write().clear();
    }
}

/// `len` bytes derived from `seed` by SHA-256 in counter mode.
fn bytes(seed: &str, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 32);
    let mut counter = 0u32;
    while out.len() < len {
        let block = ring::digest::digest(
            &ring::digest::SHA256,
            format!("{counter}/{seed}").as_bytes(),
        );
        out.extend_from_slice(block.as_ref());
        counter += 1;
    }
    out.truncate(len);
    out
}

/// `len` characters of A-Z and 2-7 (AWS's key IDs are upper-case base32) derived from
/// `seed`.
pub(crate) fn pseudo_id(seed: &str, len: usize) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    bytes(seed, len)
        .into_iter()
        .map(|b| char::from(ALPHABET[usize::from(b & 31)]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AccessKey, AwsIdentity};

    fn credentials() -> Credentials {
        let account = AccountConfig::new("acme").with_aws(
            AwsIdentity::new("123456789012")
                .with_key(AccessKey::new("AKIAROOT", "s1"))
                .with_key(AccessKey::new("AKIAUSER", "s2").with_user("alice")),
        );
        Credentials::new(&[account, AccountConfig::new("no-aws")])
    }

    #[test]
    fn long_term_keys_act_as_the_root_or_their_user() {
        let c = credentials();
        let root = c.lookup("AKIAROOT").unwrap();
        assert_eq!(root.principal.arn, "arn:aws:iam::123456789012:root");
        assert_eq!(root.principal.user_id, "123456789012");
        let user = c.lookup("AKIAUSER").unwrap();
        assert_eq!(user.principal.arn, "arn:aws:iam::123456789012:user/alice");
        assert!(user.principal.user_id.starts_with("AIDA"));
        assert!(c.lookup("nope").is_none());
        assert_eq!(c.account_of("123456789012").as_deref(), Some("acme"));
    }

    #[test]
    fn issued_credentials_are_found_until_a_newer_issue_drops_them_after_expiry() {
        let c = credentials();
        let principal = c.lookup("AKIAROOT").unwrap().principal.as_ref().clone();
        let now = Timestamp::UNIX_EPOCH;
        let later = now + jiff::SignedDuration::from_secs(900);
        let first = c.issue(principal.clone(), now, later);
        assert!(first.access_key.starts_with("ASIA") && first.access_key.len() == 20);
        assert_eq!(first.secret.len(), 40);
        let found = c.lookup(&first.access_key).unwrap();
        assert_eq!(found.session, Some((first.token.clone(), later)));
        let second = c.issue(
            principal,
            later,
            later + jiff::SignedDuration::from_secs(900),
        );
        assert_ne!(second.access_key, first.access_key);
        assert!(c.lookup(&first.access_key).is_none(), "expired and dropped");
    }
}
