use proptest::prelude::*;

use super::{Composed, ComposedIndex, composed_by_xr, xr_of};
use crate::run::source::watches::{Key, Seen, SeenMap};

/// A resource's name: composed for XR `xr-0`…`xr-2` (12 hex characters or 5 random), or a
/// name no XR made; of a composed kind or of another.
fn key() -> impl Strategy<Value = Key> {
    let name = prop_oneof![
        (0..3u8, 0..4u8).prop_map(|(x, i)| format!("xr-{x}-00000000000{i}")),
        (0..3u8, 0..4u8).prop_map(|(x, i)| format!("xr-{x}-abcd{i}")),
        Just("standalone".to_owned()),
    ];
    (
        prop::sample::select(vec!["Bucket", "Record", "Widget"]),
        name,
    )
        .prop_map(|(kind, name)| (kind.to_owned(), name))
}

/// A watch event's effect on what the watches saw: Ready or not, or gone.
fn change() -> impl Strategy<Value = (Key, Option<bool>)> {
    (key(), prop::option::weighted(0.85, any::<bool>()))
}

fn apply(seen: &mut SeenMap, (key, state): &(Key, Option<bool>)) {
    let s = seen.entry(key.clone()).or_default();
    match state {
        Some(ready) => s.ready = *ready,
        None => {
            s.gone_us.get_or_insert(1);
            s.ready = false;
        }
    }
}

proptest! {
    /// After any batches of changes, the tally of every XR is what grouping everything the
    /// watches saw says.
    #[test]
    fn the_tally_is_the_grouping_of_everything_seen(
        before in prop::collection::vec(change(), 0..12),
        batches in prop::collection::vec(prop::collection::vec(change(), 0..6), 1..6),
    ) {
        let kinds = vec!["Bucket".to_owned(), "Record".to_owned()];
        let mut seen = SeenMap::new();
        for c in &before {
            apply(&mut seen, c);
        }
        let mut index = ComposedIndex::build(&kinds, &seen);
        for batch in &batches {
            for c in batch {
                apply(&mut seen, c);
            }
            index.apply(batch.iter().map(|(k, _)| k.clone()).collect(), &seen);
            let grouped = composed_by_xr(&seen, &kinds);
            for xr in ["xr-0", "xr-1", "xr-2", "standalone"] {
                let want = grouped.get(xr).map_or(Composed::NONE, |c| Composed {
                    seen: c.len(),
                    ready: c.iter().all(|s| s.ready && s.gone_us.is_none()),
                });
                prop_assert_eq!(index.get(xr), want, "{}", xr);
            }
        }
    }
}

#[test]
fn a_composed_name_is_the_xr_s_and_a_hash_or_five_characters() {
    let hashed = composer::composite::child_name("xr-smoke-1-", "uid", "bucket-0");
    assert_eq!(xr_of(&hashed), Some("xr-smoke-1"));
    assert!(composed_of("xr-smoke-1-38ce86992a27", "xr-smoke-1"));
    assert!(!composed_of("xr-smoke-10-38ce86992a27", "xr-smoke-1"));
    assert_eq!(xr_of("xr-smoke-1-38ce86992a2g"), None);
    assert!(composed_of("xr-smoke-1-bcd2f", "xr-smoke-1"));
    assert!(!composed_of("xr-smoke-10-bcd2f", "xr-smoke-1"));
    assert!(!composed_of("xr-smoke-1-bcd2", "xr-smoke-1"));
    assert_eq!(xr_of("xr-smoke-10-bcd2f"), Some("xr-smoke-10"));
    assert_eq!(xr_of("-bcd2f"), Some(""));
    assert_eq!(xr_of("bcd2f"), None);
    assert_eq!(xr_of("xr-smoke-1-bc-2f"), None);
}

#[test]
fn composed_resources_are_found_by_their_xr_of_the_kinds_named() {
    let mut seen = SeenMap::new();
    for (kind, name) in [
        ("Bucket", "xr-1-aaaaa"),
        ("Bucket", "xr-1-bbbbb"),
        ("Bucket", "xr-10-ccccc"),
        ("Table", "xr-1-ddddd"),
        ("XR", "xr-1"),
    ] {
        seen.insert((kind.to_owned(), name.to_owned()), Seen::default());
    }
    let by_xr = composed_by_xr(&seen, &["Bucket".to_owned()]);
    assert_eq!(by_xr.get("xr-1").map(Vec::len), Some(2));
    assert_eq!(by_xr.get("xr-10").map(Vec::len), Some(1));
    assert_eq!(by_xr.len(), 2);
    // The same answer as asking each name whether it is the XR's.
    for xr in ["xr-1", "xr-10"] {
        let scanned = seen
            .keys()
            .filter(|(k, n)| k == "Bucket" && composed_of(n, xr))
            .count();
        assert_eq!(by_xr[xr].len(), scanned);
    }
}

/// Whether `name` was generated from XR `xr`'s prefix (see [`xr_of`]).
fn composed_of(name: &str, xr: &str) -> bool {
    xr_of(name) == Some(xr)
}
