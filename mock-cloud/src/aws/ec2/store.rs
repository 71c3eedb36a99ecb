//! EC2's state: per account and region, its VPCs with their attributes and tags, and
//! the IDs EC2 would give them.

use std::collections::{BTreeMap, HashMap};

use jiff::Timestamp;

/// One VPC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vpc {
    pub id: String,
    /// The owner's AWS account ID.
    pub owner_id: String,
    pub cidr: String,
    pub association_id: String,
    pub dhcp_options_id: String,
    /// `default` or `dedicated`.
    pub tenancy: String,
    pub dns_support: bool,
    pub dns_hostnames: bool,
    pub network_address_usage_metrics: bool,
    pub tags: BTreeMap<String, String>,
    /// When it was created, on the cloud's wall clock.
    pub created: Timestamp,
    /// When it turns from `pending` to `available` (its create time, unless a
    /// per-resource slow create holds it `pending`).
    pub available_at: Timestamp,
}

impl Vpc {
    /// Its state at `now`: `pending` until it is available.
    pub fn state(&self, now: Timestamp) -> &'static str {
        if now < self.available_at {
            "pending"
        } else {
            "available"
        }
    }
}

/// The VPCs of one account in one region, by ID (the order EC2's pages follow here).
#[derive(Debug, Default)]
pub(crate) struct Region {
    pub vpcs: BTreeMap<String, Vpc>,
    /// The default DHCP options every VPC of the region gets.
    pub dhcp_options_id: String,
}

/// Every account's and region's VPCs.
#[derive(Debug, Default)]
pub(crate) struct Store {
    regions: HashMap<(String, String), Region>,
    /// IDs issued so far (it seeds the next one).
    issued: u64,
}

impl Store {
    /// The region `region` of `account`, created empty on first use.
    pub fn region(&mut self, account: &str, region: &str) -> &mut Region {
        self.regions
            .entry((account.to_owned(), region.to_owned()))
            .or_insert_with(|| Region {
                vpcs: BTreeMap::new(),
                dhcp_options_id: format!("dopt-{}", hex_id(&format!("{account}/{region}"))),
            })
    }

    /// A new ID with EC2's shape: `prefix-` and 17 hex digits, unique in this cloud and
    /// the same for the same sequence of creates.
    pub fn new_id(&mut self, prefix: &str, account: &str, region: &str) -> String {
        self.issued += 1;
        format!(
            "{prefix}-{}",
            hex_id(&format!("{account}/{region}/{}", self.issued))
        )
    }
}

/// 17 lower-case hex digits derived from `seed` (EC2's long resource IDs).
fn hex_id(seed: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, seed.as_bytes());
    let mut out = String::with_capacity(17);
    for b in digest.as_ref().iter().take(9) {
        out.push_str(&format!("{b:02x}"));
    }
    out.truncate(17);
    out
}

/// The kind of resource an ID names, by its prefix (`vpc-…`), for the tag calls.
pub(crate) fn resource_type(id: &str) -> Option<&'static str> {
    let (prefix, rest) = id.split_once('-')?;
    let hex = !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_hexdigit());
    match prefix {
        "vpc" if hex => Some("vpc"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_ec2s_shape_and_differ_per_create() {
        let mut store = Store::default();
        let a = store.new_id("vpc", "default", "us-east-1");
        let b = store.new_id("vpc", "default", "us-east-1");
        assert_ne!(a, b);
        assert_eq!(a.len(), "vpc-".len() + 17);
        assert_eq!(resource_type(&a), Some("vpc"));
        assert_eq!(resource_type("vpc-xyz"), None);
        assert_eq!(resource_type("i-0abc"), None);
        let dopt = store.region("default", "us-east-1").dhcp_options_id.clone();
        assert!(dopt.starts_with("dopt-"));
    }
}
