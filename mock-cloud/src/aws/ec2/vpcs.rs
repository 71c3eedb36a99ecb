//! CreateVpc, DescribeVpcs, DeleteVpc and ModifyVpcAttribute.

use std::collections::BTreeMap;

use http::StatusCode;

use super::super::envelope::AwsError;
use super::query::{Filter, invalid_value, missing};
use super::store::{Region, Store, Vpc};
use super::{Answer, Call, check_filters, dry_run, new_tags, wire};

/// The filters DescribeVpcs knows (botocore's model); `tag:<key>` besides.
const VPC_FILTERS: [&str; 14] = [
    "cidr",
    "cidr-block-association.cidr-block",
    "cidr-block-association.association-id",
    "cidr-block-association.state",
    "dhcp-options-id",
    "ipv6-cidr-block-association.ipv6-cidr-block",
    "ipv6-cidr-block-association.ipv6-pool",
    "ipv6-cidr-block-association.association-id",
    "ipv6-cidr-block-association.state",
    "is-default",
    "owner-id",
    "state",
    "tag-key",
    "vpc-id",
];

/// `InvalidVpcID.NotFound` for one or more IDs, worded as EC2 words it.
pub(crate) fn not_found(ids: &[&str]) -> AwsError {
    let message = match ids {
        [one] => format!("The vpc ID '{one}' does not exist"),
        many => format!("The vpc IDs '{}' do not exist", many.join(", ")),
    };
    AwsError::new(StatusCode::BAD_REQUEST, "InvalidVpcID.NotFound", message)
}

impl Region {
    /// Checks that every VPC of `ids` exists (`InvalidVpcID.NotFound` naming the others).
    pub(crate) fn check_vpcs(&self, ids: &[&str]) -> Result<(), AwsError> {
        let absent: Vec<&str> = ids
            .iter()
            .copied()
            .filter(|id| !self.vpcs.contains_key(*id))
            .collect();
        if absent.is_empty() {
            Ok(())
        } else {
            Err(not_found(&absent))
        }
    }
}

/// Checks an IPv4 CIDR block for a VPC: a valid block (`InvalidParameterValue`) with a
/// prefix of /16 to /28 (`InvalidVpc.Range`).
fn check_cidr(cidr: &str) -> Result<(), AwsError> {
    let invalid = || {
        invalid_value(format!(
            "Value ({cidr}) for parameter cidrBlock is invalid. This is not a valid CIDR block."
        ))
    };
    let (address, prefix) = cidr.split_once('/').ok_or_else(invalid)?;
    let address: std::net::Ipv4Addr = address.parse().map_err(|_| invalid())?;
    if prefix.is_empty() || prefix.len() > 2 || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    let prefix: u32 = prefix.parse().map_err(|_| invalid())?;
    if prefix > 32 {
        return Err(invalid());
    }
    // Host bits must be clear: 10.0.0.1/16 is not a block.
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    if u32::from(address) & !mask != 0 {
        return Err(invalid());
    }
    if !(16..=28).contains(&prefix) {
        return Err(AwsError::new(
            StatusCode::BAD_REQUEST,
            "InvalidVpc.Range",
            format!("The CIDR '{cidr}' is invalid."),
        ));
    }
    Ok(())
}

pub(crate) fn create(c: Call<'_, '_>, store: &mut Store) -> Answer {
    if c.params.get("Ipv4IpamPoolId").is_some()
        || c.params.get("Ipv6IpamPoolId").is_some()
        || c.params.get("Ipv6Pool").is_some()
        || c.params.get("Ipv6CidrBlock").is_some()
        || c.params.flag("AmazonProvidedIpv6CidrBlock")? == Some(true)
    {
        return Err(AwsError::new(
            StatusCode::BAD_REQUEST,
            "UnsupportedOperation",
            "mock-cloud does not model IPAM pools or IPv6 CIDR blocks",
        ));
    }
    let Some(cidr) = c.params.get("CidrBlock") else {
        return Err(AwsError::new(
            StatusCode::BAD_REQUEST,
            "MissingParameter",
            "Either 'cidrBlock' or 'ipv4IpamPoolId' should be provided.",
        ));
    };
    check_cidr(cidr)?;
    let tenancy = c.params.get("InstanceTenancy").unwrap_or("default");
    if !matches!(tenancy, "default" | "dedicated") {
        return Err(invalid_value(format!(
            "Value ({tenancy}) for parameter instanceTenancy is invalid."
        )));
    }
    let mut tags = BTreeMap::new();
    for spec in c.params.tag_specifications() {
        match spec.resource_type.as_deref() {
            Some("vpc") => {}
            Some(other) => {
                return Err(invalid_value(format!(
                    "'{other}' is not a valid taggable resource type for this operation."
                )));
            }
            None => return Err(missing("ResourceType")),
        }
        new_tags(&mut tags, &spec.tags)?;
    }
    dry_run(c.params)?;
    let region = c.ctx.request.region.as_str();
    let id = match &c.ctx.new_id {
        Some(id) => id.clone(),
        None => store.new_id("vpc", &c.caller.account, region),
    };
    let association_id = store.new_id("vpc-cidr-assoc", &c.caller.account, region);
    let place = store.region(&c.caller.account, region);
    let vpc = Vpc {
        id: id.clone(),
        owner_id: c.caller.account_id.to_string(),
        cidr: cidr.to_owned(),
        association_id,
        dhcp_options_id: place.dhcp_options_id.clone(),
        tenancy: tenancy.to_owned(),
        dns_support: true,
        dns_hostnames: false,
        network_address_usage_metrics: false,
        tags,
        created: c.ctx.now,
        available_at: {
            let hold = c.ctx.slow_create.unwrap_or_default();
            let hold = jiff::SignedDuration::try_from(hold).unwrap_or(jiff::SignedDuration::MAX);
            c.ctx.now.saturating_add(hold).unwrap_or(c.ctx.now)
        },
    };
    // EC2 answers a new VPC as `pending`; here it is `available` from the next call on,
    // unless a per-resource slow create holds it `pending`.
    let inner = format!("    <vpc>{}</vpc>\n", wire::vpc(&vpc, "pending"));
    place.vpcs.insert(id, vpc);
    Ok(wire::answer(c.ctx, "CreateVpc", &inner))
}

fn matches(f: &Filter, vpc: &Vpc, now: jiff::Timestamp) -> bool {
    match f.name.as_str() {
        "cidr" | "cidr-block-association.cidr-block" => f.matches(&vpc.cidr),
        "cidr-block-association.association-id" => f.matches(&vpc.association_id),
        "cidr-block-association.state" => f.matches("associated"),
        "dhcp-options-id" => f.matches(&vpc.dhcp_options_id),
        "is-default" => f.matches("false"),
        "owner-id" => f.matches(&vpc.owner_id),
        "state" => f.matches(vpc.state(now)),
        "tag-key" => f.matches_any(vpc.tags.keys().map(String::as_str)),
        "vpc-id" => f.matches(&vpc.id),
        name => match name.strip_prefix("tag:") {
            Some(key) => vpc.tags.get(key).is_some_and(|v| f.matches(v)),
            // The IPv6 associations: a VPC here has none.
            None => false,
        },
    }
}

pub(crate) fn describe(c: Call<'_, '_>, store: &mut Store) -> Answer {
    let filters = c.params.filters()?;
    check_filters(&filters, &VPC_FILTERS)?;
    let max = c.params.max_results()?;
    let ids = c.params.list("VpcId");
    dry_run(c.params)?;
    let place = c.place(store);
    place.check_vpcs(&ids)?;
    let selected: Vec<(String, &Vpc)> = place
        .vpcs
        .values()
        .filter(|vpc| ids.is_empty() || ids.contains(&vpc.id.as_str()))
        .filter(|vpc| filters.iter().all(|f| matches(f, vpc, c.ctx.now)))
        .map(|vpc| (vpc.id.clone(), vpc))
        .collect();
    let (vpcs, next) = wire::page(selected, c.params.get("NextToken"), max)?;
    let mut inner = String::from("    <vpcSet>");
    for vpc in vpcs {
        let item = match &c.ctx.drift {
            Some(field) => {
                let mut drifted = vpc.clone();
                super::super::resource_faults::drift_tags(&mut drifted.tags, field.as_deref());
                wire::vpc(&drifted, vpc.state(c.ctx.now))
            }
            None => wire::vpc(vpc, vpc.state(c.ctx.now)),
        };
        inner.push_str(&format!("<item>{item}</item>"));
    }
    inner.push_str("</vpcSet>\n");
    inner.push_str(&wire::next_token(next.as_deref()));
    Ok(wire::answer(c.ctx, "DescribeVpcs", &inner))
}

pub(crate) fn delete(c: Call<'_, '_>, store: &mut Store) -> Answer {
    let id = c.params.required("VpcId")?;
    let place = c.place(store);
    if !place.vpcs.contains_key(id) {
        return Err(not_found(&[id]));
    }
    dry_run(c.params)?;
    place.vpcs.remove(id);
    Ok(wire::done(c.ctx, "DeleteVpc"))
}

/// The attributes ModifyVpcAttribute sets, as parameters and as EC2 names them.
const ATTRIBUTES: [(&str, &str); 3] = [
    ("EnableDnsSupport", "enableDnsSupport"),
    ("EnableDnsHostnames", "enableDnsHostnames"),
    (
        "EnableNetworkAddressUsageMetrics",
        "enableNetworkAddressUsageMetrics",
    ),
];

pub(crate) fn modify_attribute(c: Call<'_, '_>, store: &mut Store) -> Answer {
    let id = c.params.required("VpcId")?;
    let mut given = Vec::new();
    for (param, name) in ATTRIBUTES {
        if let Some(value) = c.params.flag(&format!("{param}.Value"))? {
            given.push((name, value));
        }
    }
    let combination = |message: String| {
        AwsError::new(
            StatusCode::BAD_REQUEST,
            "InvalidParameterCombination",
            message,
        )
    };
    let (name, value) = match given[..] {
        [] => return Err(combination("No attributes specified.".to_owned())),
        [one] => one,
        _ => {
            let names: Vec<&str> = given.iter().map(|(n, _)| *n).collect();
            return Err(combination(format!(
                "Fields for multiple attribute types specified: {}",
                names.join(", ")
            )));
        }
    };
    let place = c.place(store);
    let Some(vpc) = place.vpcs.get_mut(id) else {
        return Err(not_found(&[id]));
    };
    dry_run(c.params)?;
    match name {
        "enableDnsSupport" => vpc.dns_support = value,
        "enableDnsHostnames" => vpc.dns_hostnames = value,
        _ => vpc.network_address_usage_metrics = value,
    }
    Ok(wire::done(c.ctx, "ModifyVpcAttribute"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_blocks_are_checked_for_shape_host_bits_and_range() {
        assert!(check_cidr("10.0.0.0/16").is_ok());
        assert!(check_cidr("172.31.0.0/28").is_ok());
        assert_eq!(
            check_cidr("10.0.0.0/8").err().unwrap().code,
            "InvalidVpc.Range"
        );
        assert_eq!(
            check_cidr("10.0.0.0/29").err().unwrap().code,
            "InvalidVpc.Range"
        );
        for bad in [
            "10.0.0.0",
            "10.0.0/16",
            "10.0.0.1/16",
            "x/16",
            "10.0.0.0/33",
        ] {
            assert_eq!(
                check_cidr(bad).err().unwrap().code,
                "InvalidParameterValue",
                "{bad}"
            );
        }
    }

    #[test]
    fn vpc_ids_not_found_are_named_together() {
        assert_eq!(
            not_found(&["vpc-1"]).message,
            "The vpc ID 'vpc-1' does not exist"
        );
        assert_eq!(
            not_found(&["vpc-1", "vpc-2"]).message,
            "The vpc IDs 'vpc-1, vpc-2' do not exist"
        );
    }
}
