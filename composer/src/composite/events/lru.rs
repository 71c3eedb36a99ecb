//! `k8s.io/utils/lru` (groupcache's LRU): a `Get` or an `Add` makes an entry the most
//! recent; an `Add` beyond the capacity evicts the least recent.

use std::collections::{BTreeMap, HashMap};

/// A cache of at most `max` entries keyed by string.
#[derive(Debug)]
pub(super) struct Lru<V> {
    max: usize,
    entries: HashMap<String, (V, u64)>,
    /// Entries by their last use, oldest first.
    order: BTreeMap<u64, String>,
    tick: u64,
}

impl<V> Lru<V> {
    pub(super) fn new(max: usize) -> Self {
        Lru {
            max,
            entries: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
        }
    }

    fn touch(&mut self, key: &str) {
        if let Some((_, used)) = self.entries.get_mut(key) {
            self.order.remove(used);
            self.tick += 1;
            *used = self.tick;
            self.order.insert(self.tick, key.to_owned());
        }
    }

    /// The entry of `key`, now the most recent.
    pub(super) fn get(&mut self, key: &str) -> Option<&mut V> {
        self.touch(key);
        self.entries.get_mut(key).map(|(v, _)| v)
    }

    /// Sets `key` to `value`, the most recent entry; evicts the oldest beyond the capacity.
    pub(super) fn add(&mut self, key: String, value: V) {
        if let Some((v, _)) = self.entries.get_mut(&key) {
            *v = value;
            self.touch(&key);
            return;
        }
        self.tick += 1;
        self.order.insert(self.tick, key.clone());
        self.entries.insert(key, (value, self.tick));
        if self.entries.len() > self.max
            && let Some((_, oldest)) = self.order.pop_first()
        {
            self.entries.remove(&oldest);
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_keeps_an_entry_and_the_least_recent_is_evicted() {
        let mut lru = Lru::new(2);
        lru.add("a".into(), 1);
        lru.add("b".into(), 2);
        assert_eq!(lru.get("a").copied(), Some(1));
        lru.add("c".into(), 3);
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.get("b"), None);
        assert_eq!(lru.get("a").copied(), Some(1));
        lru.add("a".into(), 4);
        lru.add("d".into(), 5);
        assert_eq!(lru.get("c"), None);
        assert_eq!(lru.get("a").copied(), Some(4));
    }
}
