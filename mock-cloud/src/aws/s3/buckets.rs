//! Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket and
//! GetBucketLocation.

use std::sync::Arc;

use http::{HeaderValue, Response, StatusCode};

use super::super::accounts::Principal;
use super::super::auth::iso8601;
use super::super::envelope::AwsError;
use super::super::xml::{self, escape};
use super::store::{Bucket, Store, ownership};
use super::{Ctx, NAMESPACE, access_denied, empty, malformed_xml, no_such_bucket};
use crate::http::respond::ResponseBody;

/// The region whose creates of an owned bucket answer 200 (S3's legacy behaviour).
const US_EAST_1: &str = "us-east-1";

/// S3's canonical user ID of an account: 64 hex digits.
pub(crate) fn canonical_id(account_id: &str) -> String {
    super::super::signing::sha256_hex(format!("canonical/{account_id}").as_bytes())
}

/// The bucket `name` of the caller: 404 if there is none, 403 if another account owns it.
pub(crate) fn owned<'a>(
    store: &'a Store,
    caller: &Principal,
    name: &str,
) -> Result<&'a Bucket, AwsError> {
    the_callers(store.buckets.get(name), caller, name)
}

/// [`owned`], mutable.
pub(crate) fn owned_mut<'a>(
    store: &'a mut Store,
    caller: &Principal,
    name: &str,
) -> Result<&'a mut Bucket, AwsError> {
    the_callers(store.buckets.get_mut(name), caller, name)
}

/// `bucket`, found as `name`, if the caller owns it: 404 if there is none, 403 if another
/// account owns it.
fn the_callers<B: std::borrow::Borrow<Bucket>>(
    bucket: Option<B>,
    caller: &Principal,
    name: &str,
) -> Result<B, AwsError> {
    let bucket = bucket.ok_or_else(|| no_such_bucket(name))?;
    if bucket.borrow().owner != caller.account {
        return Err(access_denied());
    }
    Ok(bucket)
}

/// S3's `InvalidArgument`: `message`, naming the argument `name` and its `value`.
fn invalid_argument(message: &'static str, name: &'static str, value: &str) -> AwsError {
    AwsError::new(StatusCode::BAD_REQUEST, "InvalidArgument", message)
        .with_field("ArgumentName", name)
        .with_field("ArgumentValue", value)
}

/// Whether `name` follows S3's general-purpose bucket naming rules.
pub(crate) fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (3..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-'))
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && !name.contains("..")
        && !name.starts_with("xn--")
        && !name.ends_with("-s3alias")
        && name.split('.').filter(|p| p.parse::<u8>().is_ok()).count() != 4
}

pub(crate) fn list(
    ctx: &Ctx<'_>,
    store: &Store,
    caller: &Arc<Principal>,
) -> Result<Response<ResponseBody>, AwsError> {
    let query = &ctx.request.query;
    let param = |k: &str| super::super::params::get(query, k);
    let prefix = param("prefix").unwrap_or_default();
    let region = param("bucket-region");
    let after = param("continuation-token");
    let max = match param("max-buckets") {
        None => 10_000,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=10_000).contains(&n) => n,
            _ => {
                return Err(invalid_argument(
                    "Argument max-buckets must be an integer between 1 and 10000.",
                    "max-buckets",
                    text,
                ));
            }
        },
    };
    let mine = store.buckets.iter().filter(|(name, b)| {
        b.owner == caller.account
            && name.starts_with(prefix)
            && region.is_none_or(|r| b.region == r)
            && after.is_none_or(|a| name.as_str() > a)
    });
    let mut body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListAllMyBucketsResult xmlns=\"{NAMESPACE}\"><Owner><ID>{}</ID></Owner><Buckets>",
        canonical_id(&caller.account_id)
    );
    let mut last = None;
    let mut more = false;
    for (i, (name, bucket)) in mine.enumerate() {
        if i == max {
            more = true;
            break;
        }
        body.push_str(&format!(
            "<Bucket><Name>{}</Name><CreationDate>{}</CreationDate><BucketRegion>{}</BucketRegion></Bucket>",
            escape(name),
            iso8601(bucket.created),
            escape(&bucket.region)
        ));
        last = Some(name.clone());
    }
    body.push_str("</Buckets>");
    if more && let Some(last) = last {
        body.push_str(&format!(
            "<ContinuationToken>{}</ContinuationToken>",
            escape(&last)
        ));
    }
    if !prefix.is_empty() {
        body.push_str(&format!("<Prefix>{}</Prefix>", escape(prefix)));
    }
    body.push_str("</ListAllMyBucketsResult>");
    Ok(super::xml(ctx, StatusCode::OK, body))
}

pub(crate) fn create(
    ctx: &Ctx<'_>,
    store: &mut Store,
    caller: &Arc<Principal>,
    name: &str,
) -> Result<Response<ResponseBody>, AwsError> {
    if !valid_name(name) {
        return Err(AwsError::new(
            StatusCode::BAD_REQUEST,
            "InvalidBucketName",
            "The specified bucket is not valid.",
        )
        .with_field("BucketName", name));
    }
    let region = ctx.request.region.as_str();
    let (constraint, tags) = match configuration(&ctx.request.body)? {
        None => (None, None),
        Some(root) => {
            let tags = root.child("Tags").cloned();
            if let Some(tags) = &tags {
                super::schema::check_tags(tags)?;
            }
            (root.text_of("LocationConstraint").map(str::to_owned), tags)
        }
    };
    match (region, constraint.as_deref()) {
        (US_EAST_1, None) => {}
        (US_EAST_1, Some(_)) => {
            return Err(AwsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidLocationConstraint",
                "The specified location-constraint is not valid",
            )
            .with_field("LocationConstraint", constraint.unwrap_or_default()));
        }
        (_, None) => {
            return Err(AwsError::new(
                StatusCode::BAD_REQUEST,
                "IllegalLocationConstraintException",
                "The unspecified location constraint is incompatible for the region specific endpoint this request was sent to.",
            ));
        }
        (region, Some(c)) if c != region => {
            return Err(AwsError::new(
                StatusCode::BAD_REQUEST,
                "IllegalLocationConstraintException",
                format!(
                    "The {c} location constraint is incompatible for the region specific endpoint this request was sent to."
                ),
            ));
        }
        _ => {}
    }
    if let Some(existing) = store.buckets.get(name) {
        if existing.owner != caller.account {
            return Err(AwsError::new(
                StatusCode::CONFLICT,
                "BucketAlreadyExists",
                "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.",
            )
            .with_field("BucketName", name));
        }
        if existing.region != US_EAST_1 || region != US_EAST_1 {
            return Err(AwsError::new(
                StatusCode::CONFLICT,
                "BucketAlreadyOwnedByYou",
                "Your previous request to create the named bucket succeeded and you already own it.",
            )
            .with_field("BucketName", name));
        }
    } else {
        let mut bucket = Bucket::new(
            caller.account.clone(),
            caller.account_id.clone(),
            region.to_owned(),
            ctx.now,
        );
        let ownership_header = ctx
            .request
            .headers
            .get("x-amz-object-ownership")
            .and_then(|v| v.to_str().ok());
        if let Some(value) = ownership_header {
            if !super::schema::OWNERSHIPS.contains(&value) {
                return Err(invalid_argument(
                    "Invalid x-amz-object-ownership header",
                    "x-amz-object-ownership",
                    value,
                ));
            }
            bucket.ownership = Some(ownership(value));
        }
        // Tags given to the create are the bucket's tag set (GetBucketTagging reads them).
        bucket.tagging = tags.map(|tags| xml::Element {
            name: "Tagging".to_owned(),
            text: String::new(),
            children: vec![xml::Element {
                name: "TagSet".to_owned(),
                ..tags
            }],
        });
        store.buckets.insert(name.to_owned(), bucket);
    }
    let mut response = empty(ctx, StatusCode::OK);
    if let Ok(location) = HeaderValue::from_str(&format!("/{name}")) {
        response
            .headers_mut()
            .insert(http::header::LOCATION, location);
    }
    Ok(response)
}

/// CreateBucket's `<CreateBucketConfiguration>`, if the body has one.
fn configuration(body: &[u8]) -> Result<Option<xml::Element>, AwsError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let root = xml::parse(body).map_err(|_| malformed_xml())?;
    if root.name != "CreateBucketConfiguration" {
        return Err(malformed_xml());
    }
    Ok(Some(root))
}

/// The tags a CreateBucket asks for (none if its body cannot be read: the create then
/// fails on it).
pub(crate) fn create_tags(body: &[u8]) -> std::collections::BTreeMap<String, String> {
    let tags = configuration(body).ok().flatten();
    let tags = tags.as_ref().and_then(|root| root.child("Tags"));
    super::super::resource_faults::tag_set(tags)
}

pub(crate) fn head(
    ctx: &Ctx<'_>,
    store: &Store,
    caller: &Arc<Principal>,
    name: &str,
) -> Result<Response<ResponseBody>, AwsError> {
    let bucket = owned(store, caller, name)?;
    let mut response = empty(ctx, StatusCode::OK);
    let headers = response.headers_mut();
    if let Ok(region) = HeaderValue::from_str(&bucket.region) {
        headers.insert("x-amz-bucket-region", region);
    }
    headers.insert(
        "x-amz-access-point-alias",
        HeaderValue::from_static("false"),
    );
    Ok(response)
}

pub(crate) fn delete(
    ctx: &Ctx<'_>,
    store: &mut Store,
    caller: &Arc<Principal>,
    name: &str,
) -> Result<Response<ResponseBody>, AwsError> {
    let bucket = owned(store, caller, name)?;
    if !bucket.objects.is_empty() {
        return Err(AwsError::new(
            StatusCode::CONFLICT,
            "BucketNotEmpty",
            "The bucket you tried to delete is not empty",
        )
        .with_field("BucketName", name));
    }
    store.buckets.remove(name);
    Ok(empty(ctx, StatusCode::NO_CONTENT))
}

pub(crate) fn location(
    ctx: &Ctx<'_>,
    store: &Store,
    caller: &Arc<Principal>,
    name: &str,
) -> Result<Response<ResponseBody>, AwsError> {
    let bucket = owned(store, caller, name)?;
    let body = if bucket.region == US_EAST_1 {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<LocationConstraint xmlns=\"{NAMESPACE}\"/>"
        )
    } else {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<LocationConstraint xmlns=\"{NAMESPACE}\">{}</LocationConstraint>",
            escape(&bucket.region)
        )
    };
    Ok(super::xml(ctx, StatusCode::OK, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names_follow_s3s_rules() {
        for good in ["abc", "my-bucket.logs", "a1-b2", &"a".repeat(63)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in [
            "ab",
            "Abc",
            "-abc",
            "abc-",
            "a..b",
            "192.168.1.1",
            "a_b",
            "xn--abc",
            &"a".repeat(64),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
