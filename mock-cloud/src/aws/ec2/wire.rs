//! EC2's answers on the wire: `<{Action}Response xmlns=…><requestId/>…</…>` in
//! `text/xml;charset=UTF-8`, VPCs and tags in the element names of botocore's model
//! (`vpcSet`/`item`, `tagSet`/`item`/`key`/`value`), and the pages of describe calls.

use std::collections::BTreeMap;

use base64::Engine as _;
use http::{Response, StatusCode};

use super::super::contract::Ctx;
use super::super::envelope::{self, AwsError};
use super::super::xml::escape;
use super::store::Vpc;
use crate::http::respond::ResponseBody;
use crate::service::Service;

/// A `200` answer to `action` with `inner` after its `requestId`.
pub(crate) fn answer(ctx: &Ctx<'_>, action: &str, inner: &str) -> Response<ResponseBody> {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{action}Response xmlns=\"{}\">\n    <requestId>{}</requestId>\n{inner}</{action}Response>",
        Service::Ec2.xml_namespace(),
        ctx.reply.request_id.id()
    );
    envelope::respond(&ctx.reply, StatusCode::OK, "text/xml;charset=UTF-8", body)
}

/// The answer of an action without output (`<return>true</return>`).
pub(crate) fn done(ctx: &Ctx<'_>, action: &str) -> Response<ResponseBody> {
    answer(ctx, action, "    <return>true</return>\n")
}

/// A `tagSet`, left out when there are no tags (as EC2 does).
pub(crate) fn tag_set(tags: &BTreeMap<String, String>) -> String {
    if tags.is_empty() {
        return String::new();
    }
    let mut out = String::from("<tagSet>");
    for (k, v) in tags {
        out.push_str(&format!(
            "<item><key>{}</key><value>{}</value></item>",
            escape(k),
            escape(v)
        ));
    }
    out.push_str("</tagSet>");
    out
}

/// A VPC's elements (without the enclosing element), in `state`.
pub(crate) fn vpc(vpc: &Vpc, state: &str) -> String {
    format!(
        "<vpcId>{}</vpcId><ownerId>{}</ownerId><state>{state}</state><cidrBlock>{}</cidrBlock>\
<cidrBlockAssociationSet><item><cidrBlock>{}</cidrBlock><associationId>{}</associationId>\
<cidrBlockState><state>associated</state></cidrBlockState></item></cidrBlockAssociationSet>\
<dhcpOptionsId>{}</dhcpOptionsId>{}<instanceTenancy>{}</instanceTenancy><isDefault>false</isDefault>\
<blockPublicAccessStates><internetGatewayBlockMode>off</internetGatewayBlockMode></blockPublicAccessStates>",
        vpc.id,
        vpc.owner_id,
        vpc.cidr,
        vpc.cidr,
        vpc.association_id,
        vpc.dhcp_options_id,
        tag_set(&vpc.tags),
        vpc.tenancy
    )
}

/// One page of `items` (in key order): the items from `token` on, at most `max` of them
/// (all without a `max`), and the token of the next page if there is one. A token is the
/// key of the page's first item, so pages stay right when items come and go between
/// calls.
pub(crate) fn page<T>(
    items: Vec<(String, T)>,
    token: Option<&str>,
    max: Option<usize>,
) -> Result<(Vec<T>, Option<String>), AwsError> {
    let start = match token {
        None => None,
        Some(token) => Some(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(token)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| {
                    AwsError::new(
                        StatusCode::BAD_REQUEST,
                        "InvalidPaginationToken",
                        format!("Invalid pagination token: {token}"),
                    )
                })?,
        ),
    };
    let mut rest = items
        .into_iter()
        .skip_while(|(key, _)| start.as_ref().is_some_and(|s| key < s));
    let limit = max.unwrap_or(usize::MAX);
    let page: Vec<T> = rest.by_ref().take(limit).map(|(_, item)| item).collect();
    let next = rest
        .next()
        .map(|(key, _)| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key));
    Ok((page, next))
}

/// `<nextToken>` if there is a next page.
pub(crate) fn next_token(next: Option<&str>) -> String {
    next.map_or_else(String::new, |t| format!("    <nextToken>{t}</nextToken>\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_their_tokens_to_the_end() {
        let items: Vec<(String, u32)> = (0..7).map(|i| (format!("k{i}"), i)).collect();
        let (first, next) = page(items.clone(), None, Some(5)).ok().unwrap();
        assert_eq!(first, [0, 1, 2, 3, 4]);
        let (second, last) = page(items.clone(), next.as_deref(), Some(5)).ok().unwrap();
        assert_eq!((second, last), (vec![5, 6], None));
        let (all, none) = page(items, None, None).ok().unwrap();
        assert_eq!((all.len(), none), (7, None));
        let err = page(Vec::<(String, u32)>::new(), Some("!"), None)
            .err()
            .unwrap();
        assert_eq!(err.code, "InvalidPaginationToken");
    }

    #[test]
    fn empty_tag_sets_are_left_out_and_text_is_escaped() {
        assert_eq!(tag_set(&BTreeMap::new()), "");
        let tags = BTreeMap::from([("a&b".to_owned(), "<v>".to_owned())]);
        assert_eq!(
            tag_set(&tags),
            "<tagSet><item><key>a&amp;b</key><value>&lt;v&gt;</value></item></tagSet>"
        );
    }
}
