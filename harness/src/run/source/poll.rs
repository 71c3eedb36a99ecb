//! A source that reads another process every interval in the background, and
//! once more when it finishes, so the tail is in.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;

use super::api_journal;
use super::api_metrics::{FlowSchema, RequestTotals};
use super::report::{ApiMeasure, ApiReport};
use crate::result::{ApiCount, ApiRequest};
use crate::run::error::ApiReadError;

/// What a poller reads.
pub enum Reader {
    /// mock-apiserver's journal over HTTP, of each replica.
    Journal(Vec<api_journal::Http>),
    /// `apiserver_request_total`.
    Metrics(Box<RequestTotals>),
    /// The provider's FlowSchema counter.
    FlowSchema(Box<FlowSchema>),
}

impl Reader {
    fn measure(&self) -> ApiMeasure {
        match self {
            Reader::Journal(_) => ApiMeasure::Journal,
            Reader::Metrics(_) => ApiMeasure::Metrics,
            Reader::FlowSchema(_) => ApiMeasure::FlowSchema,
        }
    }

    /// Whether what it reads is the provider's, all of it and only it, and why not.
    fn count(&self) -> (ApiCount, Option<String>) {
        match self {
            Reader::Journal(j) => j
                .first()
                .map_or((ApiCount::Unknown, None), api_journal::Http::count),
            Reader::Metrics(_) => (
                ApiCount::MayIncludeOthers,
                Some(
                    "apiserver_request_total has no client label: every client's requests but the harness's count as the provider's, so a count within its bound is the provider's within it, and one past it is UNMEASURED (install the FlowSchema loadtest-provider for the provider's ServiceAccount: `harness flowschema`)"
                        .to_owned(),
                ),
            ),
            Reader::FlowSchema(_) => (ApiCount::Exact, None),
        }
    }

    async fn read(&mut self) -> Result<(Vec<ApiRequest>, u64), ApiReadError> {
        match self {
            Reader::Journal(replicas) => {
                let (mut requests, mut missed) = (Vec::new(), 0);
                for j in replicas {
                    let (r, m) = j.read().await?;
                    requests.extend(r);
                    missed += m;
                }
                Ok((requests, missed))
            }
            Reader::Metrics(m) => Ok((m.read().await?, 0)),
            Reader::FlowSchema(f) => Ok((f.read().await?, 0)),
        }
    }

    /// For a source that dates requests at its reads of the server's counters: the
    /// longest request the server answered, seconds (`None`: longer than its histogram's
    /// last bucket).
    fn longest_request(&self) -> Option<f64> {
        match self {
            Reader::Journal(_) => Some(0.0),
            Reader::Metrics(m) => m.longest_request(),
            Reader::FlowSchema(f) => f.longest_request(),
        }
    }
}

#[derive(Default)]
struct Collected {
    requests: Vec<ApiRequest>,
    /// Journal entries that left the server's journal before they were read.
    missed: u64,
    errors: u64,
    last_error: Option<String>,
    /// When the last read that succeeded began (at first, the source's baseline read).
    last_start: Option<tokio::time::Instant>,
    /// When the first read began (the baseline's) and when the last that succeeded ended.
    span: Option<(tokio::time::Instant, tokio::time::Instant)>,
    /// The longest time from the start of a read that succeeded to the end of the next:
    /// the longest a request the server answered can wait to be dated at a read.
    max_gap: std::time::Duration,
}

/// A [`Reader`] read every interval.
pub struct Poller {
    measure: ApiMeasure,
    /// What the result must say of the API server's replicas, and whether the count may
    /// miss some of their requests.
    replicas: (Option<String>, bool),
    interval: std::time::Duration,
    collected: Arc<Mutex<Collected>>,
    stop: Arc<AtomicBool>,
    task: JoinHandle<Reader>,
}

async fn read_into(reader: &mut Reader, out: &Mutex<Collected>) {
    let started = tokio::time::Instant::now();
    let result = reader.read().await;
    let now = tokio::time::Instant::now();
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    match result {
        Ok((requests, missed)) => {
            out.requests.extend(requests);
            out.missed += missed;
            if let Some(last) = out.last_start.replace(started) {
                out.max_gap = out.max_gap.max(now - last);
            }
            if let Some(span) = &mut out.span {
                span.1 = now;
            }
        }
        Err(e) => {
            out.errors += 1;
            out.last_error = Some(format!("{e}: {}", error_chain(&e)));
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = Vec::new();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push(c.to_string());
        cause = c.source();
    }
    text.join(": ")
}

impl Poller {
    /// Starts reading `reader` in the background, every `interval`; `replicas` is what
    /// the result must say of the API server's replicas and whether the count may be
    /// partial for them; `baseline` is when the reader's baseline read began (what it
    /// counts was answered after).
    #[must_use]
    pub fn start(
        mut reader: Reader,
        interval: std::time::Duration,
        replicas: (Option<String>, bool),
        baseline: tokio::time::Instant,
    ) -> Poller {
        let measure = reader.measure();
        let collected = Arc::new(Mutex::new(Collected {
            last_start: Some(baseline),
            span: Some((baseline, baseline)),
            ..Collected::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let task = {
            let (collected, stop) = (Arc::clone(&collected), Arc::clone(&stop));
            tokio::spawn(async move {
                loop {
                    let stopping = stop.load(Ordering::Acquire);
                    read_into(&mut reader, &collected).await;
                    if stopping {
                        return reader;
                    }
                    tokio::time::sleep(interval).await;
                    if stop.load(Ordering::Acquire) {
                        // One last read after the stop, so the tail is in.
                        read_into(&mut reader, &collected).await;
                        return reader;
                    }
                }
            })
        };
        Poller {
            measure,
            replicas,
            interval,
            collected,
            stop,
            task,
        }
    }

    /// What it reads.
    #[must_use]
    pub fn measure(&self) -> ApiMeasure {
        self.measure
    }

    /// Reads one last time and stops.
    pub async fn finish(self) -> ApiReport {
        self.stop.store(true, Ordering::Release);
        let reader = self.task.await.ok();
        let mut c = self.collected.lock().unwrap_or_else(|e| e.into_inner());
        let mut requests = std::mem::take(&mut c.requests);
        requests.sort_by_key(|r| r.at_us);
        let mut notes = Vec::new();
        let mut count = ApiCount::Unknown;
        let mut throttling = None;
        let mut longest_request = None;
        if let Some(mut reader) = reader {
            if self.measure != ApiMeasure::Journal {
                longest_request = Some(match reader.longest_request() {
                    Some(longest) => std::time::Duration::from_secs_f64(longest),
                    None => {
                        notes.push(
                            "a request took longer than the last bucket of the server's apiserver_request_duration_seconds: when a request dated at a read was sent is bounded only by the first read".to_owned(),
                        );
                        c.span.map_or(c.max_gap, |(first, last)| last - first)
                    }
                });
            }
            let (c, note) = reader.count();
            count = c;
            notes.extend(note);
            if let Reader::FlowSchema(f) = &mut reader {
                throttling = Some(f.throttling());
                let (c, settled) = f.settle(&mut requests);
                count = count.and(c);
                notes.extend(settled);
            }
        }
        if c.errors > 0 || self.replicas.1 {
            count = count.and(ApiCount::MayMissSome);
        }
        notes.extend(self.replicas.0.clone());
        if c.missed > 0 {
            notes.push(format!(
                "{} API requests left the server's journal before they were read",
                c.missed
            ));
        }
        if c.errors > 0 {
            notes.push(format!(
                "{} reads of the API server's {} failed (last: {})",
                c.errors,
                if self.measure == ApiMeasure::Journal {
                    "journal"
                } else {
                    "metrics"
                },
                c.last_error.as_deref().unwrap_or("?")
            ));
        }
        ApiReport {
            requests,
            measure: self.measure,
            count,
            interval: self.interval,
            max_gap: (self.measure != ApiMeasure::Journal).then_some(c.max_gap),
            longest_request,
            throttling,
            dropped: 0,
            notes,
        }
    }
}
