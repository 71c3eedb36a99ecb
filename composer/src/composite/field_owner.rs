//! The field managers core's server-side applies use, from crossplane/crossplane's
//! `composite/composition_functions.go` (`FieldOwnerXR`, `ComposedFieldOwnerName`).

use ring::digest::{SHA256, digest};

/// The manager of the XR's `resourceRefs` apply and its status apply.
pub const FIELD_OWNER_XR: &str = "apiextensions.crossplane.io/composite";
/// The prefix of the manager of composed resources' applies.
pub const FIELD_OWNER_COMPOSED_PREFIX: &str = "apiextensions.crossplane.io/composed";

/// The manager of one XR's composed resources: the prefix, `/`, and the hex SHA-256 of the
/// XR's name followed by its GroupKind (`Kind.group`, or `Kind` for the core group). The
/// name and kind, not the uid or version, so it survives restores and version changes.
#[must_use]
pub fn composed_field_owner(xr_name: &str, kind: &str, group: &str) -> String {
    let group_kind = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    let hash = digest(&SHA256, format!("{xr_name}{group_kind}").as_bytes());
    let hex: String = hash.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("{FIELD_OWNER_COMPOSED_PREFIX}/{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_composed_owner_hashes_the_name_and_group_kind() {
        // sha256sum of "oneXBucket.example.org", as Go's fmt %x prints it.
        let owner = composed_field_owner("one", "XBucket", "example.org");
        assert_eq!(
            owner,
            "apiextensions.crossplane.io/composed/\
             9b13951a4e2b9201bdef46dcfea3278531701e37f0c2033ca71ff290544402f8"
        );
        assert_eq!(owner.len(), FIELD_OWNER_COMPOSED_PREFIX.len() + 1 + 64);
        assert_ne!(owner, composed_field_owner("two", "XBucket", "example.org"));
        assert_ne!(owner, composed_field_owner("one", "XQueue", "example.org"));
    }
}
