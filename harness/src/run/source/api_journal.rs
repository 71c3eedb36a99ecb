//! API requests from mock-apiserver's journal: in this process (read once at the end), or
//! over HTTP (`/mock/v1/requests?since=SEQ`, polled), both exact.

use mock_apiserver::{ApiServer, Entry, JOURNAL_PATH, JournalPage, Verb};

use super::api_metrics::scraper::get_text;
use super::intern::Interner;
use super::report::{ApiMeasure, ApiReport};
use crate::result::{ApiCount, ApiRequest, object_key};
use crate::run::clock::{Epoch, RunClock};
use crate::run::error::ApiReadError;
use crate::run::own::{ProviderAgent, discovery_name, resource_name};

/// The resource a journal entry names, as [`crate::run::own::RequestKey`] names it: its
/// path for a request that names none.
fn resource(entry: &Entry, names: &mut Interner) -> std::sync::Arc<str> {
    if entry.verb == Verb::Discovery {
        return names.get(format_args!("{}", discovery_name(&entry.resource)));
    }
    let (plural, sub) = entry
        .resource
        .split_once('/')
        .unwrap_or((&*entry.resource, ""));
    names.get(format_args!("{}", resource_name(&entry.group, plural, sub)))
}

/// A journal entry as an [`ApiRequest`] at `at_us` on the run's clock, the provider's when
/// `agent` says its `User-Agent` is: the provider's writes of a custom resource (built-in
/// kinds are in `*.k8s.io` groups or in one without a dot), of its status or of the object
/// itself, name the object.
fn request(entry: &Entry, at_us: u64, agent: &ProviderAgent, names: &mut Interner) -> ApiRequest {
    let from_provider = agent.is_provider(&entry.user_agent);
    let write = matches!(entry.verb, Verb::Update | Verb::Patch);
    // The object's plural, and whether the write is of the object itself (not its status);
    // other subresources name nothing.
    let target = match entry.resource.strip_suffix("/status") {
        Some(plural) => Some((plural, false)),
        None if !entry.resource.contains('/') => Some((&*entry.resource, true)),
        None => None,
    }
    .filter(|_| from_provider && write && custom(&entry.group) && !entry.name.is_empty());
    let object = target.map(|(plural, _)| {
        names.get(format_args!(
            "{}",
            object_key(plural, &entry.group, &entry.name)
        ))
    });
    ApiRequest {
        at_us,
        verb: entry.verb.as_str().to_owned(),
        resource: Some(resource(entry, names)),
        from_provider,
        object,
        main_write: target.is_some_and(|(_, main)| main),
        sent_from_us: None,
    }
}

/// How a journal read with `agent` counts the provider's requests.
#[must_use]
pub fn count_of(agent: &ProviderAgent) -> (ApiCount, Option<String>) {
    if agent.exact() {
        (ApiCount::Exact, None)
    } else {
        (
            ApiCount::MayIncludeOthers,
            Some(format!(
                "API requests attributed to the provider by {}",
                agent.describe()
            )),
        )
    }
}

fn custom(group: &str) -> bool {
    group.contains('.') && group != "k8s.io" && !group.ends_with(".k8s.io")
}

/// The journal of an in-process mock-apiserver.
pub struct InProcess {
    apiserver: ApiServer,
    epoch: Epoch,
    agent: ProviderAgent,
}

impl InProcess {
    /// Reads `apiserver`'s journal at the end; its times are µs since `epoch`; `agent`
    /// tells the provider's requests apart.
    #[must_use]
    pub fn start(apiserver: ApiServer, epoch: Epoch, agent: ProviderAgent) -> InProcess {
        InProcess {
            apiserver,
            epoch,
            agent,
        }
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
                Some(request(&entry, at.0, &self.agent, &mut objects))
            })
            .collect();
        // The harness's own server: only the harness and the provider talk to it.
        ApiReport {
            requests,
            measure: ApiMeasure::Journal,
            count: ApiCount::Exact,
            interval: std::time::Duration::ZERO,
            max_gap: None,
            longest_request: None,
            throttling: None,
            dropped,
            notes: Vec::new(),
        }
    }
}

/// mock-apiserver's journal over HTTP.
pub struct Http {
    client: kube::Client,
    clock: RunClock,
    cursor: u64,
    objects: Interner,
    agent: ProviderAgent,
}

impl Http {
    /// Probes the server for a journal; requests before now are not counted.
    ///
    /// # Errors
    /// The server has no journal.
    pub async fn probe(
        client: kube::Client,
        clock: RunClock,
        agent: ProviderAgent,
    ) -> Result<Http, ApiReadError> {
        let text = get_text(&client, &format!("{JOURNAL_PATH}?since={}", u64::MAX)).await?;
        let doc: JournalPage = serde_json::from_str(&text).map_err(ApiReadError::Decode)?;
        Ok(Http {
            client,
            clock,
            cursor: doc.last_seq,
            objects: Interner::default(),
            agent,
        })
    }

    /// How the journal counts the provider's requests, and a note when not exactly.
    #[must_use]
    pub fn count(&self) -> (ApiCount, Option<String>) {
        count_of(&self.agent)
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
            .filter_map(|e| {
                let at = epoch.to_run(e.at_us)?.0;
                Some(request(e, at, &self.agent, &mut self.objects))
            })
            .collect();
        self.cursor = doc.last_seq.max(self.cursor);
        Ok((requests, missed))
    }
}
