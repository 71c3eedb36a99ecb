//! The waiting heap of client-go's delaying queue, with Go's `container/heap` algorithms
//! copied step for step, because the order in which entries with equal ready times come out
//! is observable (conformance vectors 26 and 32) and is not insertion order.

use std::collections::HashMap;
use std::hash::Hash;

use tokio::time::Instant;

#[derive(Debug)]
struct Entry<T> {
    item: T,
    ready_at: Instant,
}

/// Min-heap by ready time, one entry per item.
#[derive(Debug)]
pub(crate) struct WaitHeap<T> {
    entries: Vec<Entry<T>>,
    index: HashMap<T, usize>,
}

impl<T: Eq + Hash + Clone> WaitHeap<T> {
    pub(crate) fn new() -> Self {
        WaitHeap {
            entries: Vec::new(),
            index: HashMap::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.index.clear();
    }

    pub(crate) fn peek_ready_at(&self) -> Option<Instant> {
        self.entries.first().map(|e| e.ready_at)
    }

    fn less(&self, i: usize, j: usize) -> bool {
        self.entries[i].ready_at < self.entries[j].ready_at
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.entries.swap(i, j);
        *self.index.get_mut(&self.entries[i].item).expect("indexed") = i;
        *self.index.get_mut(&self.entries[j].item).expect("indexed") = j;
    }

    /// `container/heap.up`.
    fn up(&mut self, mut j: usize) {
        while j > 0 {
            let i = (j - 1) / 2;
            if !self.less(j, i) {
                break;
            }
            self.swap(i, j);
            j = i;
        }
    }

    /// `container/heap.down`; returns whether the element moved.
    fn down(&mut self, i0: usize, n: usize) -> bool {
        let mut i = i0;
        loop {
            let j1 = 2 * i + 1;
            if j1 >= n {
                break;
            }
            let mut j = j1;
            let j2 = j1 + 1;
            if j2 < n && self.less(j2, j1) {
                j = j2;
            }
            if !self.less(j, i) {
                break;
            }
            self.swap(i, j);
            i = j;
        }
        i > i0
    }

    /// client-go's `insert`: a new item is pushed; an item already waiting keeps the earlier of
    /// its two ready times. Returns whether `item` is now at the head.
    pub(crate) fn insert(&mut self, item: T, ready_at: Instant) -> bool {
        if let Some(&i) = self.index.get(&item) {
            if self.entries[i].ready_at > ready_at {
                self.entries[i].ready_at = ready_at;
                // heap.Fix
                if !self.down(i, self.entries.len()) {
                    self.up(i);
                }
            }
        } else {
            let n = self.entries.len();
            self.index.insert(item.clone(), n);
            self.entries.push(Entry {
                item: item.clone(),
                ready_at,
            });
            self.up(n);
        }
        self.index.get(&item) == Some(&0)
    }

    /// `heap.Pop` of the head if it is ready at `now` (ready time ≤ now).
    pub(crate) fn pop_ready(&mut self, now: Instant) -> Option<T> {
        if self.entries.first()?.ready_at > now {
            return None;
        }
        let n = self.entries.len() - 1;
        self.swap(0, n);
        self.down(0, n);
        let e = self.entries.pop().expect("non-empty");
        self.index.remove(&e.item);
        Some(e.item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn sixteen_equal_ready_times_come_out_in_go_heap_order() {
        let mut h = WaitHeap::new();
        let t = Instant::now() + Duration::from_secs(1);
        for i in 1..=16 {
            h.insert(format!("i{i:02}"), t);
        }
        let mut out = Vec::new();
        while let Some(x) = h.pop_ready(t) {
            out.push(x);
        }
        let expected: Vec<String> = std::iter::once(1)
            .chain((2..=16).rev())
            .map(|i| format!("i{i:02}"))
            .collect();
        assert_eq!(out, expected);
    }

    #[test]
    fn a_waiting_item_keeps_the_earlier_ready_time() {
        let mut h = WaitHeap::new();
        let t = Instant::now();
        h.insert("a", t + Duration::from_secs(1));
        h.insert("a", t + Duration::from_millis(500));
        h.insert("a", t + Duration::from_secs(2));
        assert_eq!(h.len(), 1);
        assert_eq!(h.peek_ready_at(), Some(t + Duration::from_millis(500)));
    }
}
