//! Pieces both documents use: a value per action class, and durations as whole
//! milliseconds.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::Class;

/// A value per action class, each optional.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ByClass<T> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutate: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete: Option<T>,
}

impl<T: Copy> ByClass<T> {
    pub fn entries(&self) -> impl Iterator<Item = (Class, T)> + '_ {
        [
            (Class::Read, self.read),
            (Class::List, self.list),
            (Class::Mutate, self.mutate),
            (Class::Delete, self.delete),
        ]
        .into_iter()
        .filter_map(|(class, value)| Some((class, value?)))
    }

    /// The entries of `map`, each written as `write` makes it; `None` for an empty map.
    pub fn from_map<V>(map: &BTreeMap<Class, V>, write: impl Fn(&V) -> T) -> Option<ByClass<T>> {
        if map.is_empty() {
            return None;
        }
        let get = |class| map.get(&class).map(&write);
        Some(ByClass {
            read: get(Class::Read),
            list: get(Class::List),
            mutate: get(Class::Mutate),
            delete: get(Class::Delete),
        })
    }
}

/// Whole milliseconds, truncated (saturating at `u64::MAX`).
pub(super) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
