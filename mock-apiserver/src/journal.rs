//! The request journal: one entry per request, with per-user-agent counts, the request
//! metrics, and the page that `GET /mock/v1/requests?since=SEQ` serves (its wire type,
//! both ways).
//!
//! # Semantics
//! An entry is journaled when the response head is ready (a watch: when its stream
//! starts); the metrics count a watch when its stream ends, as the apiserver does.
//! Times are microseconds since the server's epoch ([`JournalPage::epoch`], the wall-clock
//! time at which the server's clock read zero; in-process also
//! [`ApiServer::epoch`](crate::ApiServer::epoch)), so a reader places every entry on its own
//! clock with one offset instead of parsing a wall time per entry.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::clock::Clock;
use crate::verb::Verb;

/// The path of the journal: `GET` with `since=SEQ` answers a [`JournalPage`] of the entries
/// after `SEQ`.
pub const JOURNAL_PATH: &str = "/mock/v1/requests";

/// The header of a journal page that carries the server's epoch, RFC 3339 (the same as
/// [`JournalPage::epoch`]).
pub const X_EPOCH: &str = "x-epoch";

/// One journaled request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Sequence number, from 1, increasing by one per request.
    pub seq: u64,
    /// Arrival, in microseconds since the server's epoch.
    pub at_us: u64,
    /// What the request did.
    pub verb: Verb,
    /// API group, empty for core (and for non-resource paths).
    pub group: Arc<str>,
    /// Plural resource, with `/status` for the subresource; the path for non-resource
    /// requests.
    pub resource: Arc<str>,
    /// Namespace, empty when none.
    pub namespace: Arc<str>,
    /// Object name, empty for collections.
    pub name: Arc<str>,
    /// The `User-Agent` header, empty when absent (kube sends none by default).
    pub user_agent: Arc<str>,
    /// HTTP status code answered.
    pub status: u16,
    /// Microseconds to the response head (for watches: until the stream started).
    pub latency_us: u64,
    /// For a PATCH (a server-side apply among them) that succeeded: whether it changed the
    /// stored object, i.e. gave it a new resourceVersion (`false`: a no-op, answered with
    /// the object as it was; a dry run counts as a no-op). `None` for any other request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<bool>,
}

/// What a write handler tells the journal through its response's extensions: whether the
/// write changed the stored object ([`Entry::changed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WriteOutcome {
    /// A new resourceVersion (or a create).
    pub(crate) changed: bool,
}

impl Entry {
    /// Arrival as a duration since the server's epoch.
    pub fn at(&self) -> Duration {
        Duration::from_micros(self.at_us)
    }
}

/// What `GET /mock/v1/requests?since=SEQ` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalPage {
    /// The wall-clock time at which the server's clock (every [`Entry::at_us`]) read zero.
    pub epoch: Timestamp,
    /// The sequence number of the latest entry (0 when none).
    pub last_seq: u64,
    /// The kept entries after `since`, oldest first; a gap before the first means the
    /// journal dropped entries.
    pub entries: Vec<Entry>,
    /// Requests per `User-Agent`, over the server's whole life.
    pub counts_by_user_agent: BTreeMap<String, u64>,
}

/// Microseconds in `d`, saturating.
pub(crate) fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A kept entry, compact: its strings as numbers in the journal's [`Strings`]. A run of
/// millions of requests names a few thousand objects, so an entry takes 48 bytes instead of
/// its five strings.
#[derive(Debug)]
struct Slot {
    seq: u64,
    at_us: u64,
    latency_us: u64,
    /// group, resource, namespace, name, user agent.
    text: [u32; 5],
    status: u16,
    verb: Verb,
    changed: Option<bool>,
}

/// Every distinct string of the kept entries, each held once; never shrinks (a string an
/// entry no longer uses stays, which costs little: the set of names is what grows).
#[derive(Debug, Default)]
struct Strings {
    ids: HashMap<Arc<str>, u32>,
    texts: Vec<Arc<str>>,
    /// Bytes of the texts.
    bytes: usize,
}

impl Strings {
    fn id(&mut self, text: &Arc<str>) -> u32 {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = u32::try_from(self.texts.len()).expect("fewer than 2^32 distinct strings");
        self.ids.insert(text.clone(), id);
        self.texts.push(text.clone());
        self.bytes += text.len();
        id
    }

    fn text(&self, id: u32) -> Arc<str> {
        self.texts[id as usize].clone()
    }

    /// Heap bytes: the texts, and the table and list that hold them.
    fn heap_bytes(&self) -> usize {
        let arc = std::mem::size_of::<Arc<str>>();
        self.bytes
            + self.texts.capacity() * arc
            + self.ids.capacity() * (arc + std::mem::size_of::<u32>())
    }
}

impl Slot {
    fn of(entry: &Entry, strings: &mut Strings) -> Slot {
        Slot {
            seq: entry.seq,
            at_us: entry.at_us,
            latency_us: entry.latency_us,
            text: [
                strings.id(&entry.group),
                strings.id(&entry.resource),
                strings.id(&entry.namespace),
                strings.id(&entry.name),
                strings.id(&entry.user_agent),
            ],
            status: entry.status,
            verb: entry.verb,
            changed: entry.changed,
        }
    }

    fn entry(&self, strings: &Strings) -> Entry {
        let [group, resource, namespace, name, user_agent] = self.text.map(|id| strings.text(id));
        Entry {
            seq: self.seq,
            at_us: self.at_us,
            verb: self.verb,
            group,
            resource,
            namespace,
            name,
            user_agent,
            status: self.status,
            latency_us: self.latency_us,
            changed: self.changed,
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    entries: VecDeque<Slot>,
    strings: Strings,
    next_seq: u64,
    by_user_agent: BTreeMap<String, u64>,
    /// `apiserver_request_total` series: their labels and the HTTP code.
    by_series: BTreeMap<(Series, u16), u64>,
    /// `apiserver_request_duration_seconds` histograms.
    durations: BTreeMap<Series, Histogram>,
    /// `apiserver_longrunning_requests`: the open watches of each series.
    long_running: BTreeMap<Series, u64>,
}

impl Inner {
    /// The kept entries with a sequence number above `seq`, read back.
    fn after(&self, seq: u64) -> Vec<Entry> {
        let skip = self.entries.partition_point(|e| e.seq <= seq);
        self.entries
            .iter()
            .skip(skip)
            .map(|e| e.entry(&self.strings))
            .collect()
    }

    /// Counts a finished request of `series` that answered `code` after `seconds`.
    fn count(&mut self, series: Series, code: u16, seconds: f64) {
        match self.durations.get_mut(&series) {
            Some(histogram) => histogram.observe(seconds),
            None => {
                let mut histogram = Histogram::default();
                histogram.observe(seconds);
                self.durations.insert(series.clone(), histogram);
            }
        }
        *self.by_series.entry((series, code)).or_default() += 1;
    }
}

/// The labels of a request series but the code: verb, group, version, resource,
/// subresource, scope, component.
pub(crate) type Series = (
    &'static str,
    String,
    String,
    String,
    String,
    &'static str,
    &'static str,
);

/// The series of `entry` counted under `verb` and `version`.
fn series_of(entry: &Entry, verb: &'static str, version: &str) -> Series {
    let (resource, subresource) = entry
        .resource
        .split_once('/')
        .unwrap_or((&*entry.resource, ""));
    (
        verb,
        entry.group.to_string(),
        version.to_owned(),
        resource.to_owned(),
        subresource.to_owned(),
        scope(entry),
        "apiserver",
    )
}

/// The series kube-apiserver counts a request to `path` under when the path names no
/// resource, for the paths it counts ([`Verb::non_resource_label`]): those whose handlers
/// it wraps in `metrics.InstrumentHandlerFunc` with verb `GET` (whatever the method),
/// empty group, version, resource, scope and component, and the label in `subresource`
/// (kube-aggregator's `specProxier` for OpenAPI v3, `healthz.InstallPathHandler`).
fn non_resource_series(path: &str) -> Option<Series> {
    let subresource = Verb::non_resource_label(path)?;
    Some((
        "GET",
        String::new(),
        String::new(),
        String::new(),
        subresource.to_owned(),
        "",
        "",
    ))
}

/// `apiserver_request_duration_seconds`'s buckets (`endpoints/metrics/metrics.go`).
const DURATION_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// One histogram: counts per bucket (not cumulative), sum and count.
#[derive(Debug, Default)]
struct Histogram {
    buckets: [u64; DURATION_BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if let Some(i) = DURATION_BUCKETS.iter().position(|b| seconds <= *b) {
            self.buckets[i] += 1;
        }
        self.sum += seconds;
        self.count += 1;
    }
}

/// Where a request sits, as `CleanScope` (`endpoints/metrics/metrics.go`) names it:
/// `resource` for one object (and any create), `namespace` for a namespace's
/// collection, `cluster` for the whole collection.
pub(crate) fn scope(entry: &Entry) -> &'static str {
    if !entry.name.is_empty() || entry.verb == Verb::Create {
        "resource"
    } else if !entry.namespace.is_empty() {
        "namespace"
    } else {
        "cluster"
    }
}

/// The journal. Keeps the last `capacity` entries; counts cover every request.
#[derive(Debug)]
pub struct Journal {
    inner: Mutex<Inner>,
    capacity: usize,
    clock: Clock,
}

impl Journal {
    /// A journal keeping at most `capacity` entries, timed by `clock`.
    pub fn new(capacity: usize, clock: Clock) -> Self {
        Self {
            inner: Mutex::new(Inner {
                next_seq: 1,
                ..Inner::default()
            }),
            capacity,
            clock,
        }
    }

    /// The wall-clock time at which the journal's clock read zero.
    pub fn epoch(&self) -> Timestamp {
        self.clock.epoch()
    }

    /// Appends an entry, assigning its sequence number (the `seq` given is ignored).
    pub fn record(&self, entry: Entry) -> u64 {
        let label = entry.verb.metric_label();
        self.record_labelled(entry, label, "", false).0
    }

    /// [`Journal::record`], counting the request in `apiserver_request_total` under
    /// `metric_verb` (`APPLY` for a server-side apply, as the real server's `CleanVerb`)
    /// and the API `version` of its path, and timing it in
    /// `apiserver_request_duration_seconds`, unless `ends_later`: then the request (a
    /// watch whose stream outlives this call) is an open long-running request until
    /// [`Journal::long_running_ended`] counts it, as the apiserver's `MonitorRequest`
    /// counts a watch when its handler returns (`endpoints/metrics/metrics.go`).
    ///
    /// Returns the sequence number and, when the request is counted later, its series.
    pub(crate) fn record_labelled(
        &self,
        mut entry: Entry,
        metric_verb: Option<&'static str>,
        version: &str,
        ends_later: bool,
    ) -> (u64, Option<Series>) {
        let mut inner = self.inner.lock();
        entry.seq = inner.next_seq;
        inner.next_seq += 1;
        match inner.by_user_agent.get_mut(&*entry.user_agent) {
            Some(n) => *n += 1,
            None => {
                inner.by_user_agent.insert(entry.user_agent.to_string(), 1);
            }
        }
        let mut open = None;
        let series = match metric_verb {
            Some(verb) => Some(series_of(&entry, verb, version)),
            None if entry.verb == Verb::Discovery => non_resource_series(&entry.resource),
            None => None,
        };
        if let Some(series) = series {
            if ends_later {
                *inner.long_running.entry(series.clone()).or_default() += 1;
                open = Some(series);
            } else {
                inner.count(series, entry.status, entry.latency_us as f64 / 1e6);
            }
        }
        if self.capacity == 0 {
            return (entry.seq, open);
        }
        if inner.entries.len() >= self.capacity {
            inner.entries.pop_front();
        } else if inner.entries.len() == inner.entries.capacity() {
            // Grow by a quarter, not double: a journal of millions would otherwise hold up
            // to twice the slots it uses.
            let more = (inner.entries.len() / 4)
                .max(1024)
                .min(self.capacity - inner.entries.len());
            inner.entries.reserve_exact(more);
        }
        let slot = Slot::of(&entry, &mut inner.strings);
        inner.entries.push_back(slot);
        (entry.seq, open)
    }

    /// A long-running request of `series` (a watch) ended after `elapsed`, answering
    /// `code`: it leaves `apiserver_longrunning_requests` (`RecordLongRunning`) and is
    /// counted in `apiserver_request_total` and timed in
    /// `apiserver_request_duration_seconds` over its whole life (`MonitorRequest`), so a
    /// watch longer than the last bucket lands in `+Inf` only.
    pub(crate) fn long_running_ended(&self, series: Series, code: u16, elapsed: Duration) {
        let mut inner = self.inner.lock();
        if let Some(open) = inner.long_running.get_mut(&series) {
            *open = open.saturating_sub(1);
        }
        inner.count(series, code, elapsed.as_secs_f64());
    }

    /// Heap bytes the kept entries take: their slots (spare capacity included) and the
    /// distinct strings they name. The per-series and per-`User-Agent` counts are not
    /// included (they grow with distinct labels, not with requests).
    pub fn heap_bytes(&self) -> usize {
        let inner = self.inner.lock();
        inner.entries.capacity() * std::mem::size_of::<Slot>() + inner.strings.heap_bytes()
    }

    /// Entries with a sequence number above `seq` (0 for all kept entries).
    pub fn since(&self, seq: u64) -> Vec<Entry> {
        self.inner.lock().after(seq)
    }

    /// The sequence number of the latest entry (0 when empty).
    pub fn last_seq(&self) -> u64 {
        self.inner.lock().next_seq - 1
    }

    /// Requests per `User-Agent`, over the server's whole life.
    pub fn counts_by_user_agent(&self) -> BTreeMap<String, u64> {
        self.inner.lock().by_user_agent.clone()
    }

    /// `apiserver_request_total`, `apiserver_request_duration_seconds` and
    /// `apiserver_longrunning_requests` in Prometheus text, over the server's whole life,
    /// with the labels the real API server gives them (`dry_run` left empty).
    pub fn prometheus_text(&self) -> String {
        use std::fmt::Write as _;
        let inner = self.inner.lock();
        let mut out = String::from(
            "# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, group, resource, subresource and HTTP response code.\n# TYPE apiserver_request_total counter\n",
        );
        for ((series, code), n) in &inner.by_series {
            let (verb, group, version, resource, subresource, scope, component) = series;
            let _ = writeln!(
                out,
                "apiserver_request_total{{code=\"{code}\",component=\"{component}\",dry_run=\"\",group=\"{group}\",resource=\"{resource}\",scope=\"{scope}\",subresource=\"{subresource}\",verb=\"{verb}\",version=\"{version}\"}} {n}"
            );
        }
        out.push_str("# HELP apiserver_request_duration_seconds Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.\n# TYPE apiserver_request_duration_seconds histogram\n");
        for (series, histogram) in &inner.durations {
            let (verb, group, version, resource, subresource, scope, component) = series;
            let labels = format!(
                "component=\"{component}\",dry_run=\"\",group=\"{group}\",resource=\"{resource}\",scope=\"{scope}\",subresource=\"{subresource}\",verb=\"{verb}\",version=\"{version}\""
            );
            crate::prometheus::write_histogram(
                &mut out,
                "apiserver_request_duration_seconds",
                &labels,
                &DURATION_BUCKETS,
                &histogram.buckets,
                histogram.count,
                histogram.sum,
            );
        }
        out.push_str("# HELP apiserver_longrunning_requests Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.\n# TYPE apiserver_longrunning_requests gauge\n");
        for (series, open) in &inner.long_running {
            let (verb, group, version, resource, subresource, scope, component) = series;
            let _ = writeln!(
                out,
                "apiserver_longrunning_requests{{component=\"{component}\",group=\"{group}\",resource=\"{resource}\",scope=\"{scope}\",subresource=\"{subresource}\",verb=\"{verb}\",version=\"{version}\"}} {open}"
            );
        }
        out
    }

    /// The page of entries after `since` (what `/mock/v1/requests?since=SEQ` serves).
    pub fn page(&self, since: u64) -> JournalPage {
        let inner = self.inner.lock();
        JournalPage {
            epoch: self.clock.epoch(),
            last_seq: inner.next_seq - 1,
            entries: inner.after(since),
            counts_by_user_agent: inner.by_user_agent.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
