//! CreateTags, DeleteTags and DescribeTags, over the resources this cloud has (VPCs).

use http::StatusCode;

use super::super::envelope::AwsError;
use super::super::xml::escape;
use super::query::{Filter, Params, missing};
use super::store::{Region, Store, resource_type};
use super::{Answer, Call, check_filters, dry_run, new_tags, wire};

/// The most tags a resource carries.
const MAX_TAGS: usize = 50;

/// The resources of a tag call, checked to exist.
fn resources<'a>(params: &'a Params, place: &Region) -> Result<Vec<&'a str>, AwsError> {
    let ids = params.list("ResourceId");
    if ids.is_empty() {
        return Err(missing("ResourceId"));
    }
    for id in &ids {
        if resource_type(id).is_none() {
            return Err(AwsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidID",
                format!("The ID '{id}' is not valid"),
            ));
        }
    }
    place.check_vpcs(&ids)?;
    Ok(ids)
}

pub(crate) fn create(c: Call<'_, '_>, store: &mut Store) -> Answer {
    let place = c.place(store);
    let ids = resources(c.params, place)?;
    let tags = c.params.tags("Tag");
    if tags.is_empty() {
        return Err(missing("Tag"));
    }
    let mut updated = Vec::with_capacity(ids.len());
    for id in &ids {
        let mut merged = place.vpcs[*id].tags.clone();
        new_tags(&mut merged, &tags)?;
        if merged.len() > MAX_TAGS {
            return Err(AwsError::new(
                StatusCode::BAD_REQUEST,
                "TagLimitExceeded",
                format!("The maximum number of Tags for a resource has been reached. ({MAX_TAGS})"),
            ));
        }
        updated.push(merged);
    }
    dry_run(c.params)?;
    for (id, merged) in ids.iter().zip(updated) {
        if let Some(vpc) = place.vpcs.get_mut(*id) {
            vpc.tags = merged;
        }
    }
    Ok(wire::done(c.ctx, "CreateTags"))
}

pub(crate) fn delete(c: Call<'_, '_>, store: &mut Store) -> Answer {
    let place = c.place(store);
    let ids = resources(c.params, place)?;
    let tags = c.params.tags("Tag");
    dry_run(c.params)?;
    for id in ids {
        let Some(vpc) = place.vpcs.get_mut(id) else {
            continue;
        };
        if tags.is_empty() {
            // No tags named: every tag of the resource goes.
            vpc.tags.clear();
            continue;
        }
        for tag in &tags {
            let Some(key) = &tag.key else { continue };
            // A value given deletes the tag only if it has that value (even "").
            let matches = match &tag.value {
                None => true,
                Some(value) => vpc.tags.get(key) == Some(value),
            };
            if matches {
                vpc.tags.remove(key);
            }
        }
    }
    Ok(wire::done(c.ctx, "DeleteTags"))
}

/// The filters DescribeTags knows (botocore's model); `tag:<key>` besides.
const TAG_FILTERS: [&str; 4] = ["key", "resource-id", "resource-type", "value"];

/// One tag of one resource.
struct Described<'a> {
    resource: &'a str,
    kind: &'static str,
    key: &'a str,
    value: &'a str,
    /// Every tag of the resource (for `tag:<key>` filters).
    all: &'a std::collections::BTreeMap<String, String>,
}

fn matches(f: &Filter, tag: &Described<'_>) -> bool {
    match f.name.as_str() {
        "key" => f.matches(tag.key),
        "resource-id" => f.matches(tag.resource),
        "resource-type" => f.matches(tag.kind),
        "value" => f.matches(tag.value),
        name => name
            .strip_prefix("tag:")
            .and_then(|key| tag.all.get(key))
            .is_some_and(|v| f.matches(v)),
    }
}

pub(crate) fn describe(c: Call<'_, '_>, store: &mut Store) -> Answer {
    let filters = c.params.filters()?;
    check_filters(&filters, &TAG_FILTERS)?;
    let max = c.params.max_results()?;
    dry_run(c.params)?;
    let place = c.place(store);
    let selected: Vec<(String, Described<'_>)> = place
        .vpcs
        .values()
        .flat_map(|vpc| {
            vpc.tags.iter().map(|(key, value)| Described {
                resource: &vpc.id,
                kind: "vpc",
                key,
                value,
                all: &vpc.tags,
            })
        })
        .filter(|tag| filters.iter().all(|f| matches(f, tag)))
        .map(|tag| (format!("{}\n{}", tag.resource, tag.key), tag))
        .collect();
    let (tags, next) = wire::page(selected, c.params.get("NextToken"), max)?;
    let mut inner = String::from("    <tagSet>");
    for tag in tags {
        inner.push_str(&format!(
            "<item><resourceId>{}</resourceId><resourceType>{}</resourceType><key>{}</key><value>{}</value></item>",
            tag.resource,
            tag.kind,
            escape(tag.key),
            escape(tag.value)
        ));
    }
    inner.push_str("</tagSet>\n");
    inner.push_str(&wire::next_token(next.as_deref()));
    Ok(wire::answer(c.ctx, "DescribeTags", &inner))
}
