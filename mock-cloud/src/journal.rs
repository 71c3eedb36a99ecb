//! The call journal: every API request, generic or AWS, in order, in 32 bytes an entry.
//!
//! # Semantics
//! Entries are numbered from 0 in the order their responses were decided. The journal
//! keeps the newest `cap` entries; when full, the oldest is dropped and counted in
//! [`JournalStats::dropped`], so a reader sees a gap in `seq`, never a silent loss.
//! Account and resource names are interned once and referred to by number; the interner
//! keeps every distinct name seen until [`crate::MockCloud::reset`].

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::FastMap;
use crate::model::{Action, Collection};
use crate::service::Operation;

/// One journalled request, as readers see it: a line of `GET /admin/v1/calls`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    /// Position in the journal, from 0, without gaps unless entries were dropped.
    pub seq: u64,
    /// Time since the cloud started when the request arrived, in microseconds.
    pub at_us: u64,
    /// The authenticated account, or empty if the request was not authenticated (a bad
    /// token, or a path that matched no route).
    pub account: String,
    /// The action, or `None` for a request that matched no API route (an empty string on
    /// the wire).
    #[serde(with = "crate::model::empty_is_none")]
    pub action: Option<Action>,
    /// The collection, or `None` for a request that matched none (an empty string on the
    /// wire).
    #[serde(with = "crate::model::empty_is_none")]
    pub collection: Option<Collection>,
    /// The service: `generic` for the JSON API, `s3`, `sts`, …; empty for a request that
    /// matched no service.
    #[serde(default)]
    pub service: String,
    /// The operation, named as on the wire (`HeadBucket`, `AssumeRole`; the generic API's
    /// are its actions: `create`, `get`, …); empty for a request that matched none.
    #[serde(default)]
    pub operation: String,
    /// The resource name (empty for creates without a valid body and for lists; the bucket
    /// of an S3 bucket operation, `bucket/key` of an object operation; the role ARN of an
    /// STS AssumeRole; the table of a DynamoDB operation, also when the request names its
    /// ARN; the VPC of an EC2 VPC operation (a DescribeVpcs of one `VpcId`, and
    /// CreateVpc by the ID its VPC gets), the first resource of a tag call).
    pub name: String,
    /// The response status.
    pub status: u16,
    /// Time from arrival to response, in microseconds (saturating at about 71 minutes).
    pub latency_us: u32,
    /// Refused by a rate quota (429 or the flavor's equivalent).
    pub throttled: bool,
    /// Would have been refused by a rate quota, let through by shadow mode.
    pub shadow_throttled: bool,
    /// Refused by a count quota.
    pub quota_exceeded: bool,
    /// Failed by an injected fault (error rate, outage or a per-resource error).
    pub fault: bool,
    /// The retry hint an error answer carried, in milliseconds (0: none): `x-amz-retry-after`
    /// where sent, else `Retry-After` in whole seconds. A client that honours hints makes no
    /// request for the resource before `at_us + latency_us + retry_after_ms·1000`.
    #[serde(default)]
    pub retry_after_ms: u32,
}

/// Flags of an entry.
pub(crate) const THROTTLED: u8 = 1;
pub(crate) const SHADOW_THROTTLED: u8 = 2;
pub(crate) const QUOTA_EXCEEDED: u8 = 4;
pub(crate) const FAULT: u8 = 8;

const NO_ACTION: u8 = u8::MAX;
const NO_COLLECTION: u8 = u8::MAX;
const NO_SERVICE: u8 = u8::MAX;

/// A journal entry as stored: names are interner numbers; `seq` is implied by position.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    at_us: u64,
    latency_us: u32,
    account: u32,
    name: u32,
    retry_after_ms: u32,
    status: u16,
    action: u8,
    collection: u8,
    service: u8,
    operation: u8,
    flags: u8,
}

/// What the HTTP layer records about one request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Record<'a> {
    pub at: Duration,
    pub latency: Duration,
    pub account: &'a str,
    pub action: Option<Action>,
    pub collection: Option<Collection>,
    pub operation: Option<Operation>,
    pub name: &'a str,
    pub status: u16,
    pub flags: u8,
    /// [`Call::retry_after_ms`].
    pub retry_after_ms: u32,
}

/// The retry hint of an answer, in milliseconds, as [`Call::retry_after_ms`] keeps it: only
/// error answers (a 201's `Retry-After` on a `creating` resource says when to look again,
/// not how long to wait); `x-amz-retry-after` (ms) before `Retry-After` (whole seconds).
pub(crate) fn retry_hint_ms(status: u16, headers: &http::HeaderMap) -> u32 {
    if status < 400 {
        return 0;
    }
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    number("x-amz-retry-after")
        .or_else(|| number("retry-after").map(|s| s.saturating_mul(1000)))
        .map_or(0, |ms| u32::try_from(ms).unwrap_or(u32::MAX))
}

/// Distinct strings, numbered from 0 (the empty string).
#[derive(Debug)]
pub(crate) struct Interner {
    ids: FastMap<Arc<str>, u32>,
    names: Vec<Arc<str>>,
    text_bytes: usize,
}

impl Default for Interner {
    fn default() -> Interner {
        let empty: Arc<str> = Arc::from("");
        Interner {
            ids: FastMap::from_iter([(empty.clone(), 0)]),
            names: vec![empty],
            text_bytes: 0,
        }
    }
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        let name: Arc<str> = Arc::from(s);
        self.text_bytes += s.len();
        self.names.push(name.clone());
        self.ids.insert(name, id);
        id
    }

    pub fn resolve(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", |s| s)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Heap bytes held: the text, each name's `Arc` header (16), its slot in the list (16)
    /// and in the map (an `Arc<str>` and a `u32`, 24, plus a control byte), counting the
    /// spare capacity of both.
    pub fn memory_bytes(&self) -> usize {
        self.text_bytes
            + 16 * self.names.len()
            + 16 * self.names.capacity()
            + 25 * self.ids.capacity()
    }
}

/// Counters that describe the journal itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalStats {
    /// The `seq` the next entry will get (= requests journalled since start).
    pub next_seq: u64,
    /// Entries held now.
    pub len: usize,
    /// The most entries held.
    pub cap: usize,
    /// Entries dropped because the journal was full.
    pub dropped: u64,
    /// Bytes of memory one entry takes.
    pub bytes_per_entry: usize,
    /// Distinct account and resource names interned.
    pub interned_names: usize,
    /// Heap bytes the journal holds: entry slots (including spare capacity) plus the
    /// interned names.
    pub memory_bytes: usize,
}

/// The bounded, compact journal.
#[derive(Debug)]
pub(crate) struct Journal {
    entries: VecDeque<Entry>,
    first_seq: u64,
    cap: usize,
    dropped: u64,
    interner: Interner,
}

impl Journal {
    pub fn new(cap: usize) -> Journal {
        Journal {
            entries: VecDeque::with_capacity(cap.min(1 << 16)),
            first_seq: 0,
            cap,
            dropped: 0,
            interner: Interner::default(),
        }
    }

    /// Appends an entry and returns its `seq` and the account's interned number.
    pub fn push(&mut self, record: &Record<'_>) -> (u64, u32) {
        if self.entries.len() == self.cap {
            self.entries.pop_front();
            self.first_seq += 1;
            self.dropped += 1;
        }
        let account = self.interner.intern(record.account);
        let entry = Entry {
            at_us: u64::try_from(record.at.as_micros()).unwrap_or(u64::MAX),
            latency_us: u32::try_from(record.latency.as_micros()).unwrap_or(u32::MAX),
            account,
            name: self.interner.intern(record.name),
            retry_after_ms: record.retry_after_ms,
            status: record.status,
            action: record.action.map_or(NO_ACTION, |a| a.index() as u8),
            collection: record.collection.map_or(NO_COLLECTION, |c| c.index() as u8),
            service: record
                .operation
                .map_or(NO_SERVICE, |o| o.service().index() as u8),
            operation: record.operation.map_or(0, Operation::index),
            flags: record.flags,
        };
        self.entries.push_back(entry);
        (self.next_seq() - 1, account)
    }

    pub fn next_seq(&self) -> u64 {
        self.first_seq + self.entries.len() as u64
    }

    /// The name interned as `id`.
    pub fn resolve(&self, id: u32) -> &str {
        self.interner.resolve(id)
    }

    /// Up to `limit` entries with `seq >= since`, oldest first.
    pub fn since(&self, since: u64, limit: usize) -> Vec<Call> {
        let skip = usize::try_from(since.saturating_sub(self.first_seq)).unwrap_or(usize::MAX);
        self.entries
            .iter()
            .enumerate()
            .skip(skip)
            .take(limit)
            .map(|(i, e)| self.expand(self.first_seq + i as u64, e))
            .collect()
    }

    fn expand(&self, seq: u64, e: &Entry) -> Call {
        let operation = Operation::from_parts(e.service, e.operation);
        Call {
            seq,
            at_us: e.at_us,
            account: self.interner.resolve(e.account).to_owned(),
            action: Action::ALL.get(usize::from(e.action)).copied(),
            collection: Collection::ALL.get(usize::from(e.collection)).copied(),
            service: operation.map_or("", |o| o.service().as_str()).to_owned(),
            operation: operation.map_or("", Operation::name).to_owned(),
            name: self.interner.resolve(e.name).to_owned(),
            status: e.status,
            latency_us: e.latency_us,
            throttled: e.flags & THROTTLED != 0,
            shadow_throttled: e.flags & SHADOW_THROTTLED != 0,
            quota_exceeded: e.flags & QUOTA_EXCEEDED != 0,
            fault: e.flags & FAULT != 0,
            retry_after_ms: e.retry_after_ms,
        }
    }

    pub fn stats(&self) -> JournalStats {
        JournalStats {
            next_seq: self.next_seq(),
            len: self.entries.len(),
            cap: self.cap,
            dropped: self.dropped,
            bytes_per_entry: std::mem::size_of::<Entry>(),
            interned_names: self.interner.len(),
            memory_bytes: self.entries.capacity() * std::mem::size_of::<Entry>()
                + self.interner.memory_bytes(),
        }
    }

    /// Forgets every entry and name; `seq` keeps counting so readers never see it go back.
    pub fn clear(&mut self) {
        self.first_seq = self.next_seq();
        self.entries.clear();
        self.dropped = 0;
        self.interner = Interner::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str) -> Record<'_> {
        Record {
            at: Duration::from_micros(7),
            latency: Duration::from_micros(3),
            account: "acme",
            action: Some(Action::Get),
            collection: Some(Collection::Buckets),
            operation: Some(Operation::from(Action::Get)),
            name,
            status: 200,
            flags: SHADOW_THROTTLED,
            retry_after_ms: 0,
        }
    }

    #[test]
    fn an_entry_takes_at_most_32_bytes() {
        assert!(
            std::mem::size_of::<Entry>() <= 32,
            "{}",
            std::mem::size_of::<Entry>()
        );
        assert_eq!(
            Journal::new(1).stats().bytes_per_entry,
            std::mem::size_of::<Entry>()
        );
    }

    #[test]
    fn entries_come_back_expanded_and_in_order() {
        let mut journal = Journal::new(10);
        assert_eq!(journal.push(&record("a")).0, 0);
        assert_eq!(journal.push(&record("b")).0, 1);
        let calls = journal.since(0, usize::MAX);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].seq, 1);
        assert_eq!(calls[1].name, "b");
        assert_eq!(calls[0].account, "acme");
        assert_eq!(calls[0].action, Some(Action::Get));
        assert_eq!(
            (calls[0].service.as_str(), calls[0].operation.as_str()),
            ("generic", "get")
        );
        assert_eq!(calls[0].at_us, 7);
        assert!(calls[0].shadow_throttled && !calls[0].throttled);
        assert_eq!(journal.since(1, 1)[0].name, "b");
        assert!(journal.since(2, 10).is_empty());
    }

    #[test]
    fn only_an_error_answers_retry_hint_is_kept_and_amz_milliseconds_come_first() {
        let mut headers = http::HeaderMap::new();
        headers.insert("retry-after", http::HeaderValue::from_static("2"));
        assert_eq!(retry_hint_ms(429, &headers), 2000);
        assert_eq!(retry_hint_ms(201, &headers), 0);
        headers.insert("x-amz-retry-after", http::HeaderValue::from_static("1500"));
        assert_eq!(retry_hint_ms(400, &headers), 1500);
        assert_eq!(retry_hint_ms(503, &http::HeaderMap::new()), 0);
        let mut journal = Journal::new(4);
        journal.push(&Record {
            retry_after_ms: 1500,
            ..record("a")
        });
        assert_eq!(journal.since(0, 1)[0].retry_after_ms, 1500);
    }

    #[test]
    fn a_full_journal_drops_the_oldest_and_counts_it() {
        let mut journal = Journal::new(2);
        for name in ["a", "b", "c"] {
            journal.push(&record(name));
        }
        let stats = journal.stats();
        assert_eq!((stats.len, stats.dropped, stats.next_seq), (2, 1, 3));
        let calls = journal.since(0, 10);
        assert_eq!(calls.iter().map(|c| c.seq).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn names_are_interned_once() {
        let mut journal = Journal::new(100);
        for _ in 0..50 {
            journal.push(&record("same"));
        }
        // "", "acme", "same"
        assert_eq!(journal.stats().interned_names, 3);
    }

    #[test]
    fn clearing_keeps_seq_counting() {
        let mut journal = Journal::new(10);
        journal.push(&record("a"));
        journal.clear();
        assert_eq!(journal.push(&record("b")).0, 1);
        assert_eq!(journal.since(0, 10)[0].seq, 1);
    }
}
