//! API requests from mock-apiserver's journal: in this process (read once at the end), or
//! over HTTP (`/mock/v1/requests?since=SEQ`, polled), both exact.

use mock_apiserver::{ApiServer, JOURNAL_PATH, JournalPage};

use super::report::{ApiMeasure, ApiReport};
use crate::result::ApiRequest;
use crate::run::clock::{Epoch, RunClock};
use crate::run::error::ApiReadError;
use crate::run::own::HARNESS_USER_AGENT;

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
        let requests = entries
            .into_iter()
            .filter_map(|entry| {
                let at = self.epoch.to_run(entry.at_us)?;
                Some(ApiRequest {
                    at_us: at.0,
                    verb: entry.verb.as_str().to_owned(),
                    from_provider: entry.user_agent != HARNESS_USER_AGENT,
                })
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
            .filter_map(|e| {
                Some(ApiRequest {
                    at_us: epoch.to_run(e.at_us)?.0,
                    verb: e.verb.as_str().to_owned(),
                    from_provider: e.user_agent != HARNESS_USER_AGENT,
                })
            })
            .collect();
        self.cursor = doc.last_seq.max(self.cursor);
        Ok((requests, missed))
    }
}
