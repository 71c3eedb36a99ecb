//! The AWS state of one cloud: credentials, S3's buckets, DynamoDB's tables, EC2's VPCs,
//! the request counter. A leaf
//! that `cloud.rs` holds; a new service with state of its own adds a field here (behind
//! its own lock) and clears it in [`AwsState::reset`].

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::accounts::Credentials;
use super::dynamodb::table::Store as DynamoDbStore;
use super::ec2::store::Store as Ec2Store;
use super::s3::store::Store as S3Store;
use crate::config::Config;

/// The AWS state of one cloud: credentials, S3's buckets, EC2's VPCs, the request counter.
pub(crate) struct AwsState {
    pub credentials: Credentials,
    pub s3: Mutex<S3Store>,
    pub dynamodb: Mutex<DynamoDbStore>,
    pub ec2: Mutex<Ec2Store>,
    requests: AtomicU64,
}

impl AwsState {
    pub fn new(config: &Config) -> AwsState {
        AwsState {
            credentials: Credentials::new(&config.accounts),
            s3: Mutex::new(S3Store::default()),
            dynamodb: Mutex::new(DynamoDbStore::default()),
            ec2: Mutex::new(Ec2Store::default()),
            requests: AtomicU64::new(0),
        }
    }

    /// The number of the next AWS request (it seeds the request's ID).
    pub fn next_request(&self) -> u64 {
        self.requests.fetch_add(1, Ordering::Relaxed)
    }

    /// Forgets buckets, tables, VPCs and issued credentials.
    pub fn reset(&self) {
        *self.s3.lock() = S3Store::default();
        *self.dynamodb.lock() = DynamoDbStore::default();
        *self.ec2.lock() = Ec2Store::default();
        self.credentials.clear_temporary();
    }
}
