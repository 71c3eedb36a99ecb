//! The request journal: one entry per request, with per-user-agent counts.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

/// What a request did, in Kubernetes audit terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    /// Read one object.
    Get,
    /// Read a collection.
    List,
    /// Stream changes.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
    /// Discovery, OpenAPI, version and health endpoints.
    Discovery,
}

impl Verb {
    /// The lowercase name used on the wire and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::List => "list",
            Self::Watch => "watch",
            Self::Create => "create",
            Self::Update => "update",
            Self::Patch => "patch",
            Self::Delete => "delete",
            Self::DeleteCollection => "deletecollection",
            Self::Discovery => "discovery",
        }
    }

    /// Whether the verb changes state.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Self::Create | Self::Update | Self::Patch | Self::Delete | Self::DeleteCollection
        )
    }
}

/// One journaled request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Sequence number, from 1, increasing by one per request.
    pub seq: u64,
    /// Wall-clock time the request arrived (RFC 3339, microseconds).
    pub time: String,
    /// Tokio time since the server started, at arrival.
    pub elapsed: Duration,
    /// What the request did.
    pub verb: Verb,
    /// API group, empty for core (and for non-resource paths).
    pub group: String,
    /// Plural resource, with `/status` for the subresource; the path for non-resource
    /// requests.
    pub resource: String,
    /// Namespace, empty when none.
    pub namespace: String,
    /// Object name, empty for collections.
    pub name: String,
    /// The `User-Agent` header, empty when absent (kube sends none by default).
    pub user_agent: String,
    /// HTTP status code answered.
    pub status: u16,
    /// Time to the response head (for watches: until the stream started).
    pub latency: Duration,
}

impl Entry {
    /// The entry as JSON (what `/mock/v1/requests` serves).
    pub fn to_json(&self) -> Value {
        json!({
            "seq": self.seq,
            "time": self.time,
            "elapsedSeconds": self.elapsed.as_secs_f64(),
            "verb": self.verb.as_str(),
            "group": self.group,
            "resource": self.resource,
            "namespace": self.namespace,
            "name": self.name,
            "userAgent": self.user_agent,
            "status": self.status,
            "latencySeconds": self.latency.as_secs_f64(),
        })
    }
}

#[derive(Debug, Default)]
struct Inner {
    entries: VecDeque<Entry>,
    next_seq: u64,
    by_user_agent: BTreeMap<String, u64>,
    /// `apiserver_request_total` series: (verb, group, resource, subresource, code).
    by_series: BTreeMap<(&'static str, String, String, String, u16), u64>,
}

impl Verb {
    /// The verb label of `apiserver_request_total`, or `None` for requests the real API
    /// server does not count by resource (discovery, health).
    pub fn metric_label(self) -> Option<&'static str> {
        Some(match self {
            Self::Get => "GET",
            Self::List => "LIST",
            Self::Watch => "WATCH",
            Self::Create => "POST",
            Self::Update => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
            Self::DeleteCollection => "DELETECOLLECTION",
            Self::Discovery => return None,
        })
    }
}

/// The journal. Keeps the last `capacity` entries; counts cover every request.
#[derive(Debug)]
pub struct Journal {
    inner: Mutex<Inner>,
    capacity: usize,
}

impl Journal {
    /// A journal keeping at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                next_seq: 1,
                ..Inner::default()
            }),
            capacity,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Appends an entry, assigning its sequence number (the `seq` given is ignored).
    pub fn record(&self, mut entry: Entry) -> u64 {
        let mut inner = self.lock();
        entry.seq = inner.next_seq;
        inner.next_seq += 1;
        *inner
            .by_user_agent
            .entry(entry.user_agent.clone())
            .or_default() += 1;
        if let Some(verb) = entry.verb.metric_label() {
            let (resource, subresource) = entry
                .resource
                .split_once('/')
                .unwrap_or((entry.resource.as_str(), ""));
            let key = (
                verb,
                entry.group.clone(),
                resource.to_owned(),
                subresource.to_owned(),
                entry.status,
            );
            *inner.by_series.entry(key).or_default() += 1;
        }
        if self.capacity == 0 {
            return entry.seq;
        }
        if inner.entries.len() >= self.capacity {
            inner.entries.pop_front();
        }
        let seq = entry.seq;
        inner.entries.push_back(entry);
        seq
    }

    /// Entries with a sequence number above `seq` (0 for all kept entries).
    pub fn since(&self, seq: u64) -> Vec<Entry> {
        let inner = self.lock();
        let skip = inner.entries.partition_point(|e| e.seq <= seq);
        inner.entries.iter().skip(skip).cloned().collect()
    }

    /// The sequence number of the latest entry (0 when empty).
    pub fn last_seq(&self) -> u64 {
        self.lock().next_seq - 1
    }

    /// Requests per `User-Agent`, over the server's whole life.
    pub fn counts_by_user_agent(&self) -> BTreeMap<String, u64> {
        self.lock().by_user_agent.clone()
    }

    /// `apiserver_request_total` in Prometheus text, over the server's whole life, with the
    /// labels the real API server gives it (`version`, `scope` and `dry_run` left empty).
    pub fn prometheus_text(&self) -> String {
        use std::fmt::Write as _;
        let inner = self.lock();
        let mut out = String::from(
            "# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, group, resource, subresource and HTTP response code.\n# TYPE apiserver_request_total counter\n",
        );
        for ((verb, group, resource, subresource, code), n) in &inner.by_series {
            let _ = writeln!(
                out,
                "apiserver_request_total{{code=\"{code}\",component=\"apiserver\",dry_run=\"\",group=\"{group}\",resource=\"{resource}\",scope=\"\",subresource=\"{subresource}\",verb=\"{verb}\",version=\"\"}} {n}"
            );
        }
        out
    }

    /// The `/mock/v1/requests?since=SEQ` document.
    pub fn to_json(&self, since: u64) -> Value {
        let entries: Vec<Value> = self.since(since).iter().map(Entry::to_json).collect();
        json!({
            "lastSeq": self.last_seq(),
            "entries": entries,
            "countsByUserAgent": self.counts_by_user_agent(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(agent: &str) -> Entry {
        Entry {
            seq: 0,
            time: String::new(),
            elapsed: Duration::ZERO,
            verb: Verb::List,
            group: String::new(),
            resource: "configmaps".into(),
            namespace: "default".into(),
            name: String::new(),
            user_agent: agent.into(),
            status: 200,
            latency: Duration::from_millis(1),
        }
    }

    #[test]
    fn entries_are_numbered_and_read_back_from_a_sequence_number() {
        let journal = Journal::new(10);
        for agent in ["a", "b", "a"] {
            journal.record(entry(agent));
        }
        assert_eq!(journal.last_seq(), 3);
        assert_eq!(
            journal.since(1).iter().map(|e| e.seq).collect::<Vec<_>>(),
            [2, 3]
        );
        assert_eq!(journal.counts_by_user_agent()["a"], 2);
        assert_eq!(journal.to_json(2)["entries"][0]["verb"], "list");
    }

    #[test]
    fn a_full_journal_drops_its_oldest_entries_but_keeps_counting() {
        let journal = Journal::new(2);
        for _ in 0..5 {
            journal.record(entry("a"));
        }
        assert_eq!(
            journal.since(0).iter().map(|e| e.seq).collect::<Vec<_>>(),
            [4, 5]
        );
        assert_eq!(journal.counts_by_user_agent()["a"], 5);
    }

    #[test]
    fn request_totals_count_every_request_by_series_like_the_real_metric() {
        let journal = Journal::new(1);
        let mut patch = entry("p");
        patch.verb = Verb::Patch;
        patch.group = "mockcloud.example.org".into();
        patch.resource = "buckets/status".into();
        for e in [entry("a"), entry("b"), patch, {
            let mut d = entry("a");
            d.verb = Verb::Discovery;
            d
        }] {
            journal.record(e);
        }
        let text = journal.prometheus_text();
        assert!(text.contains("# TYPE apiserver_request_total counter"));
        assert!(text.contains(
            "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"configmaps\",scope=\"\",subresource=\"\",verb=\"LIST\",version=\"\"} 2\n"
        ), "{text}");
        assert!(text.contains(
            "group=\"mockcloud.example.org\",resource=\"buckets\",scope=\"\",subresource=\"status\",verb=\"PATCH\""
        ), "{text}");
        assert_eq!(
            text.lines().filter(|l| !l.starts_with('#')).count(),
            2,
            "discovery is not counted"
        );
    }
}
