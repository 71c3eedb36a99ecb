//! The documents of S3's bucket subresources, checked as S3 checks them: the root element,
//! the required elements and the allowed values. A document that is not well-formed or
//! does not fit answers 400 `MalformedXML`; S3's more specific errors where it has them
//! (`InvalidTag`, `MalformedPolicy`, CORS's `InvalidRequest`).

use http::StatusCode;

use super::super::envelope::AwsError;
use super::super::xml::{self, Element};
use super::malformed_xml;

/// The values of `ObjectOwnership`.
pub(crate) const OWNERSHIPS: [&str; 3] = [
    "BucketOwnerPreferred",
    "ObjectWriter",
    "BucketOwnerEnforced",
];

/// Reads a document whose root must be `root`.
pub(crate) fn document(body: &[u8], root: &str) -> Result<Element, AwsError> {
    let element = xml::parse(body).map_err(|_| malformed_xml())?;
    if element.name != root {
        return Err(malformed_xml());
    }
    Ok(element)
}

fn invalid_tag(message: &str) -> AwsError {
    AwsError::new(StatusCode::BAD_REQUEST, "InvalidTag", message.to_owned())
}

/// `<Tagging><TagSet><Tag><Key/><Value/></Tag>…</TagSet></Tagging>`: at most 50 tags, keys
/// unique, 1 to 128 characters, values at most 256, no `aws:` prefix.
pub(crate) fn tagging(body: &[u8]) -> Result<Element, AwsError> {
    let root = document(body, "Tagging")?;
    let set = root.child("TagSet").ok_or_else(malformed_xml)?;
    check_tags(set)?;
    Ok(root)
}

/// Checks the `<Tag>`s of a `<TagSet>` (or of CreateBucket's `<Tags>`): keys unique, 1 to
/// 128 characters, values at most 256, no `aws:` prefix, at most 50.
pub(crate) fn check_tags(set: &Element) -> Result<(), AwsError> {
    let mut keys = std::collections::HashSet::new();
    for tag in &set.children {
        if tag.name != "Tag" {
            return Err(malformed_xml());
        }
        let (Some(key), Some(value)) = (tag.text_of("Key"), tag.text_of("Value")) else {
            return Err(malformed_xml());
        };
        if key.is_empty() || key.chars().count() > 128 {
            return Err(invalid_tag("The TagKey you have provided is invalid"));
        }
        if value.chars().count() > 256 {
            return Err(invalid_tag("The TagValue you have provided is invalid"));
        }
        if key.starts_with("aws:") {
            return Err(invalid_tag(
                "System tags cannot be added/updated by requester",
            ));
        }
        if !keys.insert(key) {
            return Err(invalid_tag(
                "Cannot provide multiple Tags with the same key",
            ));
        }
    }
    if keys.len() > 50 {
        return Err(AwsError::new(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "Bucket tag count cannot be greater than 50",
        ));
    }
    Ok(())
}

/// `<VersioningConfiguration><Status>Enabled|Suspended</Status><MfaDelete/>`.
pub(crate) fn versioning(body: &[u8]) -> Result<Element, AwsError> {
    let root = document(body, "VersioningConfiguration")?;
    if root
        .text_of("Status")
        .is_some_and(|s| !matches!(s, "Enabled" | "Suspended"))
    {
        return Err(malformed_xml());
    }
    if root
        .text_of("MfaDelete")
        .is_some_and(|s| !matches!(s, "Enabled" | "Disabled"))
    {
        return Err(malformed_xml());
    }
    Ok(root)
}

/// A bucket policy: a JSON object.
pub(crate) fn policy(body: &[u8]) -> Result<String, AwsError> {
    let malformed = |message: &str| {
        AwsError::new(
            StatusCode::BAD_REQUEST,
            "MalformedPolicy",
            message.to_owned(),
        )
    };
    let text = std::str::from_utf8(body)
        .map_err(|_| malformed("Policies must be valid JSON and the first byte must be '{'"))?;
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|_| malformed("Policies must be valid JSON and the first byte must be '{'"))?;
    let statements = value
        .get("Statement")
        .ok_or_else(|| malformed("Missing required field Statement"))?;
    if !(statements.is_array() || statements.is_object()) {
        return Err(malformed("Statement is not well-formed"));
    }
    Ok(text.to_owned())
}

/// `<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault>
/// <SSEAlgorithm>AES256|aws:kms|aws:kms:dsse</SSEAlgorithm>…`.
pub(crate) fn encryption(body: &[u8]) -> Result<Element, AwsError> {
    let root = document(body, "ServerSideEncryptionConfiguration")?;
    let mut rules = root.all("Rule").peekable();
    if rules.peek().is_none() {
        return Err(malformed_xml());
    }
    for rule in rules {
        let algorithm = rule
            .child("ApplyServerSideEncryptionByDefault")
            .and_then(|d| d.text_of("SSEAlgorithm"))
            .ok_or_else(malformed_xml)?;
        if !matches!(algorithm, "AES256" | "aws:kms" | "aws:kms:dsse") {
            return Err(malformed_xml());
        }
    }
    Ok(root)
}

/// `<LifecycleConfiguration><Rule>…<Status>Enabled|Disabled</Status></Rule>…`.
pub(crate) fn lifecycle(body: &[u8]) -> Result<Element, AwsError> {
    let root = document(body, "LifecycleConfiguration")?;
    let rules: Vec<&Element> = root.all("Rule").collect();
    if rules.is_empty() || rules.len() > 1_000 {
        return Err(malformed_xml());
    }
    for rule in rules {
        if !matches!(rule.text_of("Status"), Some("Enabled" | "Disabled")) {
            return Err(malformed_xml());
        }
    }
    Ok(root)
}

/// `<CORSConfiguration><CORSRule><AllowedMethod/>…<AllowedOrigin/>…</CORSRule>…`.
pub(crate) fn cors(body: &[u8]) -> Result<Element, AwsError> {
    let root = document(body, "CORSConfiguration")?;
    let rules: Vec<&Element> = root.all("CORSRule").collect();
    if rules.is_empty() || rules.len() > 100 {
        return Err(malformed_xml());
    }
    for rule in rules {
        let methods: Vec<&Element> = rule.all("AllowedMethod").collect();
        if methods.is_empty() || rule.child("AllowedOrigin").is_none() {
            return Err(malformed_xml());
        }
        for method in methods {
            if !matches!(
                method.text.as_str(),
                "GET" | "PUT" | "POST" | "DELETE" | "HEAD"
            ) {
                return Err(AwsError::new(
                    StatusCode::BAD_REQUEST,
                    "InvalidRequest",
                    format!(
                        "Found unsupported HTTP method in CORS config. Unsupported method is {}",
                        method.text
                    ),
                ));
            }
        }
    }
    Ok(root)
}

/// `<PublicAccessBlockConfiguration>` with up to four `true`/`false` flags (missing ones
/// are `false`).
pub(crate) fn public_access_block(body: &[u8]) -> Result<Element, AwsError> {
    let root = document(body, "PublicAccessBlockConfiguration")?;
    const FLAGS: [&str; 4] = [
        "BlockPublicAcls",
        "IgnorePublicAcls",
        "BlockPublicPolicy",
        "RestrictPublicBuckets",
    ];
    for child in &root.children {
        if !FLAGS.contains(&child.name.as_str()) || !matches!(child.text.as_str(), "true" | "false")
        {
            return Err(malformed_xml());
        }
    }
    let children = FLAGS
        .iter()
        .map(|flag| Element {
            name: (*flag).to_owned(),
            text: root.text_of(flag).unwrap_or("false").to_owned(),
            children: Vec::new(),
        })
        .collect();
    Ok(Element {
        name: root.name,
        text: String::new(),
        children,
    })
}

/// `<OwnershipControls><Rule><ObjectOwnership>…</ObjectOwnership></Rule></OwnershipControls>`.
pub(crate) fn ownership_controls(body: &[u8]) -> Result<Element, AwsError> {
    let root = document(body, "OwnershipControls")?;
    let rules: Vec<&Element> = root.all("Rule").collect();
    if rules.len() != 1 {
        return Err(malformed_xml());
    }
    let value = rules[0]
        .text_of("ObjectOwnership")
        .ok_or_else(malformed_xml)?;
    if !OWNERSHIPS.contains(&value) {
        return Err(malformed_xml());
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_sets_refuse_duplicate_keys_and_system_tags() {
        let ok = b"<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>";
        assert!(tagging(ok).is_ok());
        let dup = b"<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag></TagSet></Tagging>";
        assert_eq!(tagging(dup).unwrap_err().code, "InvalidTag");
        let sys =
            b"<Tagging><TagSet><Tag><Key>aws:x</Key><Value>1</Value></Tag></TagSet></Tagging>";
        assert_eq!(tagging(sys).unwrap_err().code, "InvalidTag");
        assert_eq!(tagging(b"<Tagging>").unwrap_err().code, "MalformedXML");
        assert_eq!(tagging(b"<Other/>").unwrap_err().code, "MalformedXML");
    }

    #[test]
    fn values_outside_the_schema_are_malformed_xml() {
        let v = b"<VersioningConfiguration><Status>On</Status></VersioningConfiguration>";
        assert_eq!(versioning(v).unwrap_err().code, "MalformedXML");
        let e = b"<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>DES</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>";
        assert_eq!(encryption(e).unwrap_err().code, "MalformedXML");
        let c = b"<CORSConfiguration><CORSRule><AllowedMethod>PATCH</AllowedMethod><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>";
        assert_eq!(cors(c).unwrap_err().code, "InvalidRequest");
        let o = b"<OwnershipControls><Rule><ObjectOwnership>Mine</ObjectOwnership></Rule></OwnershipControls>";
        assert_eq!(ownership_controls(o).unwrap_err().code, "MalformedXML");
        assert_eq!(policy(b"not json").unwrap_err().code, "MalformedPolicy");
        assert!(policy(br#"{"Version":"2012-10-17","Statement":[]}"#).is_ok());
    }

    #[test]
    fn a_public_access_block_fills_missing_flags_with_false() {
        let p = public_access_block(b"<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls></PublicAccessBlockConfiguration>").unwrap();
        let mut out = String::new();
        p.write(&mut out);
        assert_eq!(
            out,
            "<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls><IgnorePublicAcls>false</IgnorePublicAcls><BlockPublicPolicy>false</BlockPublicPolicy><RestrictPublicBuckets>false</RestrictPublicBuckets></PublicAccessBlockConfiguration>"
        );
    }
}
