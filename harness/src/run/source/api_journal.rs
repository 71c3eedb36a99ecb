//! API requests from mock-apiserver's journal: in this process (read once at the end), or
//! over HTTP (`/mock/v1/requests?since=SEQ`, polled), both exact.

use mock_apiserver::{ApiServer, Entry, JOURNAL_PATH, JournalPage, Verb};

use super::intern::Interner;
use super::report::{ApiMeasure, ApiReport};
use crate::result::{ApiRequest, object_key};
use crate::run::clock::{Epoch, RunClock};
use crate::run::error::ApiReadError;
use crate::run::own::HARNESS_USER_AGENT;

/// A journal entry as an [`ApiRequest`] at `at_us` on the run's clock: the provider's writes
/// of a custom resource (built-in kinds are in `*.k8s.io` groups or in one without a dot),
/// of its status or of the object itself, name the object.
fn request(entry: &Entry, at_us: u64, objects: &mut Interner) -> ApiRequest {
    let from_provider = entry.user_agent != HARNESS_USER_AGENT;
    let write = matches!(entry.verb, Verb::Update | Verb::Patch);
    // The object's plural, and whether the write is of the object itself (not its status);
    // other subresources name nothing.
    let target = match entry.resource.strip_suffix("/status") {
        Some(plural) => Some((plural, false)),
        None if !entry.resource.contains('/') => Some((entry.resource.as_str(), true)),
        None => None,
    }
    .filter(|_| from_provider && write && custom(&entry.group) && !entry.name.is_empty());
    let object = target.map(|(plural, _)| {
        objects.get(format_args!(
            "{}",
            object_key(plural, &entry.group, &entry.name)
        ))
    });
    ApiRequest {
        at_us,
        verb: entry.verb.as_str().to_owned(),
        from_provider,
        object,
        main_write: target.is_some_and(|(_, main)| main),
    }
}

fn custom(group: &str) -> bool {
    group.contains('.') && group != "k8s.io" && !group.ends_with(".k8s.io")
}

/// The journal of an in-process mock-apiserver.
pub struct InProcess {
    apiserver: ApiServer,
    epoch: Epoch,
}

impl InProcess {
    /// Reads `apiserver`'s journal at the end; its times are µs since `epoch`.
    #[must_use]
    pub fn start(apiserver: ApiServer, epoch: Epoch) -> InProcess {
        InProcess { apiserver, epoch }
    }

    /// Every journalled request.
    #[must_use]
    pub fn finish(self) -> ApiReport {
        let entries = self.apiserver.journal().since(0);
        let dropped = entries.first().map_or(0, |e| e.seq.saturating_sub(1));
        let mut objects = Interner::default();
        let requests = entries
            .into_iter()
            .filter_map(|entry| {
                let at = self.epoch.to_run(entry.at_us)?;
                Some(request(&entry, at.0, &mut objects))
            })
            .collect();
        ApiReport {
            requests,
            measure: ApiMeasure::Journal,
            dropped,
            notes: Vec::new(),
        }
    }
}

async fn get_text(client: &kube::Client, path: &str) -> Result<String, ApiReadError> {
    let request = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| ApiReadError::Request(kube::Error::HttpError(e)))?;
    client
        .request_text(request)
        .await
        .map_err(ApiReadError::Request)
}

/// mock-apiserver's journal over HTTP.
pub struct Http {
    client: kube::Client,
    clock: RunClock,
    cursor: u64,
    objects: Interner,
}

impl Http {
    /// Probes the server for a journal; requests before now are not counted.
    ///
    /// # Errors
    /// The server has no journal.
    pub async fn probe(client: kube::Client, clock: RunClock) -> Result<Http, ApiReadError> {
        let text = get_text(&client, &format!("{JOURNAL_PATH}?since={}", u64::MAX)).await?;
        let doc: JournalPage = serde_json::from_str(&text).map_err(ApiReadError::Decode)?;
        Ok(Http {
            client,
            clock,
            cursor: doc.last_seq,
            objects: Interner::default(),
        })
    }

    /// The requests journalled since the last read, and how many left the journal unread.
    ///
    /// # Errors
    /// The journal cannot be read.
    pub async fn read(&mut self) -> Result<(Vec<ApiRequest>, u64), ApiReadError> {
        let text = get_text(
            &self.client,
            &format!("{JOURNAL_PATH}?since={}", self.cursor),
        )
        .await?;
        let doc: JournalPage = serde_json::from_str(&text).map_err(ApiReadError::Decode)?;
        let missed = doc
            .entries
            .first()
            .map_or(0, |e| e.seq.saturating_sub(self.cursor + 1));
        let epoch = self.clock.epoch_of_wall(doc.epoch);
        let requests = doc
            .entries
            .iter()
            .filter_map(|e| Some(request(e, epoch.to_run(e.at_us)?.0, &mut self.objects)))
            .collect();
        self.cursor = doc.last_seq.max(self.cursor);
        Ok((requests, missed))
    }
}
