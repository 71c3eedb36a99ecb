//! Composed resources' names: core's deterministic child name (crossplane/crossplane
//! `internal/names`, since v2.1), so every reconcile of an XR names its composed resource
//! the same, whatever its cache holds.

use ring::digest::{SHA256, digest};

/// The longest Kubernetes object name.
const MAX_NAME: usize = 63;
/// Hex characters of the hash a child name ends with.
const HASH_LENGTH: usize = 12;

/// The name of the composed resource `child` (its composition resource name) of the parent
/// named by `prefix` (its generateName, `<xr>-`) with uid `uid`: the prefix with exactly
/// one trailing hyphen, then the first 12 hex characters of SHA-256(`uid` + `child`). A
/// name longer than 63 characters cuts the prefix to fit, ending it with a hyphen.
#[must_use]
pub fn child_name(prefix: &str, uid: &str, child: &str) -> String {
    let hash = digest(&SHA256, format!("{uid}{child}").as_bytes());
    let suffix: String = hash
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()[..HASH_LENGTH]
        .to_owned();
    let mut parent = prefix.to_owned();
    if !parent.is_empty() && !parent.ends_with('-') {
        parent.push('-');
    }
    if parent.len() + HASH_LENGTH <= MAX_NAME {
        return parent + &suffix;
    }
    // Names are ASCII (validated as DNS labels), so byte offsets are character ones.
    let keep = MAX_NAME - HASH_LENGTH;
    let cut = &parent[..keep];
    if cut.ends_with('-') {
        format!("{cut}{suffix}")
    } else {
        format!("{}-{suffix}", &parent[..keep - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UID: &str = "75e4a668-035f-4ce8-8c45-f4d3ac850155";

    /// crossplane/crossplane's own cases for `ChildName` and `GenerateName`.
    #[test]
    fn child_names_match_cores() {
        for (prefix, uid, child, want) in [
            (
                "cool-resource-",
                UID,
                "database",
                "cool-resource-38ce86992a27",
            ),
            (
                &"very-long-parent-name-".repeat(3),
                UID,
                "database",
                "very-long-parent-name-very-long-parent-name-very-l-38ce86992a27",
            ),
            ("resource", UID, "database", "resource-38ce86992a27"),
            ("resource-", UID, "database", "resource-38ce86992a27"),
            (
                &"very-long-parent-name-without-ending-hyphen".repeat(2),
                UID,
                "database",
                "very-long-parent-name-without-ending-hyphenvery-lo-38ce86992a27",
            ),
            ("", UID, "database", "38ce86992a27"),
            ("parent-", "uid-123", "database", "parent-5f968d238736"),
            ("parent-", "uid-456", "database", "parent-bd4f105d0576"),
            ("cool-resource-", UID, "kid1", "cool-resource-12d400e0a9a6"),
            (
                "cool-resource-with-a-really-long-name-that-can-not-fit-all-in-one-place-",
                UID,
                "pipeline-name-of-cool-resource",
                "cool-resource-with-a-really-long-name-that-can-not-414af43727ed",
            ),
        ] {
            let name = child_name(prefix, uid, child);
            assert_eq!(name, want, "{prefix:?} {uid} {child}");
            assert!(name.len() <= MAX_NAME);
        }
    }
}
