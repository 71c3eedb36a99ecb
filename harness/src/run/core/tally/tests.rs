use proptest::prelude::*;

use super::{Composed, Index};
use crate::run::core::xrs::composed_by_xr;
use crate::run::source::watches::{Key, SeenMap};

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
        let mut index = Index::build(&kinds, &seen);
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
