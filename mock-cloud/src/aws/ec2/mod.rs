//! Amazon EC2 (ec2Query, version 2016-11-15): VPCs and their tags. CreateVpc,
//! DescribeVpcs, DeleteVpc, ModifyVpcAttribute, CreateTags, DeleteTags and DescribeTags,
//! with the parameter names and answer elements of botocore's model.
//!
//! # Semantics
//! - VPCs belong to an account and a region (the credential scope's); another region
//!   does not see them. IDs have EC2's shape (`vpc-` and 17 hex digits). No default VPC
//!   exists, and nothing depends on a VPC, so a delete always succeeds.
//! - CreateVpc needs an IPv4 `CidrBlock` of /16 to /28 (`InvalidVpc.Range` otherwise;
//!   a malformed block or one with host bits set is `InvalidParameterValue`). Its answer
//!   says `pending`; describes say `available` (or `pending` while a per-resource slow
//!   create holds it). IPAM pools and IPv6 blocks are not
//!   modelled: asking for one is `UnsupportedOperation`, never silently ignored.
//! - DescribeVpcs takes `VpcId.N` (any unknown ID: `InvalidVpcID.NotFound` naming them
//!   all) and the filters of the model (`vpc-id`, `cidr`, `state`, `owner-id`,
//!   `tag:<key>`, `tag-key`, …, with `*` and `?` wildcards); an unknown filter is
//!   `InvalidParameterValue` "The filter '…' is invalid". Filters are ANDed, a filter's
//!   values ORed. The journal names the VPC of one that reads exactly one (`VpcId.1`
//!   alone, as Terraform's read does), as per-resource faults select it.
//! - Describe calls page as EC2 does: `MaxResults` of 5 to 1,000 (all results without
//!   it), an opaque `NextToken` while more remain; a token that cannot be read is
//!   `InvalidPaginationToken`.
//! - ModifyVpcAttribute sets exactly one of `EnableDnsSupport`, `EnableDnsHostnames`,
//!   `EnableNetworkAddressUsageMetrics` (`InvalidParameterCombination` otherwise).
//! - Tags: at most 50 per resource (`TagLimitExceeded`), keys of 1 to 128 characters not
//!   starting with `aws:`, values of at most 256. DeleteTags without tags deletes all; a
//!   tag with a value deletes it only if the value matches. A resource ID that is not a
//!   VPC's is `InvalidID`.
//! - `DryRun=true` on a request that would succeed answers 412 `DryRunOperation`.
//! - Unknown actions are `InvalidAction`; a missing required parameter is
//!   `MissingParameter`.

mod query;
pub(crate) mod store;
mod tags;
mod vpcs;
mod wire;

use std::collections::BTreeMap;

use http::{Method, Response, StatusCode};

use super::accounts::Principal;
use super::contract::{AwsRequest, Ctx, Routed, Unrouted};
use super::envelope::AwsError;
use super::params;
use crate::http::respond::ResponseBody;
use crate::service::{Ec2Operation, Operation};
use query::{Params, TagParam, invalid_value};
use store::{Region, Store};

const VERSION: &str = "2016-11-15";

/// What an action's handler is given besides the store: the call, its parameters and
/// its caller.
#[derive(Clone, Copy)]
pub(crate) struct Call<'a, 'c> {
    pub(crate) ctx: &'a Ctx<'c>,
    pub(crate) params: &'a Params,
    pub(crate) caller: &'a Principal,
}

impl Call<'_, '_> {
    /// The caller's account's resources in the request's region.
    fn place(self, store: &mut Store) -> &mut Region {
        store.region(&self.caller.account, &self.ctx.request.region)
    }
}

/// What an action's handler answers.
type Answer = Result<Response<ResponseBody>, AwsError>;

/// The request's parameters: the form body of a POST, the query of a GET.
fn parameters(request: &AwsRequest<'_>) -> Params {
    if request.method == Method::POST {
        Params::new(params::pairs(&request.body))
    } else {
        Params::new(params::owned(&request.query))
    }
}

/// The quota class of an operation: EC2's request-token category.
fn class(op: Ec2Operation) -> u8 {
    use Ec2Operation as Op;
    match op {
        Op::DescribeVpcs | Op::DescribeTags => 0,
        Op::CreateVpc | Op::DeleteVpc | Op::ModifyVpcAttribute => 1,
        Op::CreateTags | Op::DeleteTags => 2,
    }
}

pub(crate) fn route(request: &AwsRequest<'_>) -> Result<Routed, Unrouted> {
    let params = parameters(request);
    let action = params.get("Action").unwrap_or_default();
    let Some(op) = Ec2Operation::parse(action) else {
        return Err(Unrouted::new(
            request.protocol.unknown_operation(action, VERSION),
        ));
    };
    let name = match op {
        Ec2Operation::DeleteVpc | Ec2Operation::ModifyVpcAttribute => params.get("VpcId"),
        Ec2Operation::CreateTags | Ec2Operation::DeleteTags => params.get("ResourceId.1"),
        // A read of one VPC by its ID names it (a provider's Observe).
        Ec2Operation::DescribeVpcs => params
            .get("VpcId.1")
            .filter(|_| params.get("VpcId.2").is_none()),
        // A new VPC's ID is reserved later ([`reserve_id`]).
        Ec2Operation::CreateVpc | Ec2Operation::DescribeTags => None,
    };
    Ok(Routed {
        op: Operation::from(op),
        class: class(op),
        resource: String::new(),
        name: name.unwrap_or_default().to_owned(),
        anonymous: false,
    })
}

pub(crate) fn handle(ctx: &Ctx<'_>, routed: &Routed) -> Result<Response<ResponseBody>, AwsError> {
    use Ec2Operation as Op;
    let Some(caller) = ctx.caller else {
        return Err(ctx.request.protocol.missing_auth());
    };
    let params = parameters(ctx.request);
    let op = Ec2Operation::of(routed.op).unwrap_or(Op::DescribeVpcs);
    let mut store = ctx.state().ec2.lock();
    let call = Call {
        ctx,
        params: &params,
        caller,
    };
    let handler = match op {
        Op::CreateVpc => vpcs::create,
        Op::DescribeVpcs => vpcs::describe,
        Op::DeleteVpc => vpcs::delete,
        Op::ModifyVpcAttribute => vpcs::modify_attribute,
        Op::CreateTags => tags::create,
        Op::DeleteTags => tags::delete,
        Op::DescribeTags => tags::describe,
    };
    handler(call, &mut store)
}

/// The ID a CreateVpc's new VPC gets, reserved before the call is handled so the journal
/// names the call by it (`None` for every other call, and for an unauthenticated one).
pub(crate) fn reserve_id(ctx: &Ctx<'_>, routed: &Routed) -> Option<String> {
    let caller = ctx.caller.as_deref()?;
    (Ec2Operation::of(routed.op) == Some(Ec2Operation::CreateVpc)).then(|| {
        ctx.state()
            .ec2
            .lock()
            .new_id("vpc", &caller.account, ctx.request.region.as_str())
    })
}

/// What per-resource faults need of the VPC `id` (see
/// [`super::resource_faults::Facts`]): for CreateVpc, the ID the new VPC gets (reserved
/// now, so the rules read the name it will have) and the tags of its `vpc`
/// `TagSpecifications`; for an existing VPC, its tags, creation time and
/// `InvalidVpcID.NotFound` for a read.
pub(crate) fn facts(
    ctx: &Ctx<'_>,
    _routed: &Routed,
    id: &str,
    action: crate::model::Action,
    tags: bool,
) -> super::resource_faults::Facts {
    use super::resource_faults::Facts;
    let Some(caller) = ctx.caller.as_deref() else {
        return Facts::default();
    };
    let region = ctx.request.region.as_str();
    let mut store = ctx.state().ec2.lock();
    if action == crate::model::Action::Create {
        let requested = || {
            let mut out = BTreeMap::new();
            for spec in parameters(ctx.request).tag_specifications() {
                if spec.resource_type.as_deref() == Some("vpc") {
                    for tag in &spec.tags {
                        let key = tag.key.clone().unwrap_or_default();
                        out.insert(key, tag.value.clone().unwrap_or_default());
                    }
                }
            }
            out
        };
        return Facts {
            tags: tags.then(requested),
            new_id: Some(store.new_id("vpc", &caller.account, region)),
            ..Facts::default()
        };
    }
    let Some(vpc) = store.region(&caller.account, region).vpcs.get(id) else {
        return Facts::default();
    };
    Facts {
        tags: tags.then(|| vpc.tags.clone()),
        created: Some(vpc.created),
        not_found: (action == crate::model::Action::Get).then(|| vpcs::not_found(&[id])),
        new_id: None,
    }
}

/// `DryRun=true`: the request would have succeeded, so it answers 412 `DryRunOperation`.
fn dry_run(params: &Params) -> Result<(), AwsError> {
    if params.flag("DryRun")? == Some(true) {
        return Err(AwsError::new(
            StatusCode::PRECONDITION_FAILED,
            "DryRunOperation",
            "Request would have succeeded, but DryRun flag is set.",
        ));
    }
    Ok(())
}

/// Checks that every filter is one of `known` or `tag:<key>`; an unknown one is
/// `InvalidParameterValue` "The filter '…' is invalid", even when nothing would match.
fn check_filters(filters: &[query::Filter], known: &[&str]) -> Result<(), AwsError> {
    for f in filters {
        let tag = f.name.strip_prefix("tag:").is_some_and(|k| !k.is_empty());
        if !tag && !known.contains(&f.name.as_str()) {
            return Err(invalid_value(format!("The filter '{}' is invalid", f.name)));
        }
    }
    Ok(())
}

/// Checks `tags` and sets them in `into` (a missing value is the empty string).
fn new_tags(into: &mut BTreeMap<String, String>, tags: &[TagParam]) -> Result<(), AwsError> {
    for tag in tags {
        let key = tag.key.as_deref().unwrap_or_default();
        let value = tag.value.as_deref().unwrap_or_default();
        let bad_key = |why: &str| {
            invalid_value(format!(
                "Value ( {key} ) for parameter key is invalid. {why}"
            ))
        };
        if key.is_empty() {
            return Err(bad_key("Tag keys must not be empty."));
        }
        if key.chars().count() > 128 {
            return Err(bad_key("Length exceeds maximum of 128."));
        }
        if key.starts_with("aws:") {
            return Err(bad_key(
                "Tag keys starting with 'aws:' are reserved for internal use",
            ));
        }
        if value.chars().count() > 256 {
            return Err(invalid_value(format!(
                "Value ( {value} ) for parameter value is invalid. Length exceeds maximum of 256."
            )));
        }
        into.insert(key.to_owned(), value.to_owned());
    }
    Ok(())
}
