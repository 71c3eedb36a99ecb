//! The admin API: the journal, the summary, the inventory, faults and reset. Admin
//! requests are not journalled and spend no quota.

use std::fmt::Write as _;

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode};
use serde_json::json;

use super::respond::{self, ResponseBody};
use super::route::query_param;
use crate::cloud::MockCloud;
use crate::config::RawFaults;

/// The most calls one `GET /admin/v1/calls` returns, so that the journal lock is held
/// for milliseconds, not seconds.
pub(crate) const CALLS_PAGE: u64 = 100_000;

impl MockCloud {
    pub(crate) fn admin(
        &self,
        what: &str,
        method: &Method,
        query: Option<&str>,
        body: Result<Bytes, StatusCode>,
    ) -> Response<ResponseBody> {
        match (what, method) {
            ("calls", &Method::GET) => self.admin_calls(query),
            ("summary", &Method::GET) => respond::json(StatusCode::OK, &self.summary()),
            ("inventory", &Method::GET) => {
                respond::json(StatusCode::OK, &json!({"resources": self.inventory()}))
            }
            ("faults", &Method::PUT) => self.admin_faults(body),
            ("reset", &Method::POST) => {
                self.reset();
                respond::json(StatusCode::OK, &json!({"reset": true}))
            }
            ("calls" | "summary" | "inventory", _) => respond::method_not_allowed("GET"),
            ("faults", _) => respond::method_not_allowed("PUT"),
            ("reset", _) => respond::method_not_allowed("POST"),
            _ => respond::error(StatusCode::NOT_FOUND, "NotFound", "no such admin endpoint"),
        }
    }

    /// `GET /admin/v1/calls?since=SEQ&limit=N`: NDJSON, one call a line, oldest first, at
    /// most `N` (default and cap [`CALLS_PAGE`]) a response; `X-Next-Seq` is where the next
    /// page starts, `X-Dropped` how many entries the journal dropped, `X-Epoch` the
    /// wall-clock time (RFC 3339) at which the cloud's clock (`at_us`) read zero.
    fn admin_calls(&self, query: Option<&str>) -> Response<ResponseBody> {
        let number = |key: &'static str| match query_param(query, key) {
            None => Ok(None),
            Some(v) => v.parse::<u64>().map(Some).map_err(|_| key),
        };
        let (since, limit) = match (number("since"), number("limit")) {
            (Ok(since), Ok(limit)) => (
                since.unwrap_or(0),
                limit.unwrap_or(CALLS_PAGE).min(CALLS_PAGE),
            ),
            (Err(key), _) | (_, Err(key)) => {
                return respond::bad_field(key, &format!("`{key}` must be a whole number"));
            }
        };
        let recorder = crate::cloud::lock(&self.inner.recorder);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let calls = recorder.journal.since(since, limit);
        let stats = recorder.journal.stats();
        drop(recorder);
        let mut body = String::with_capacity(calls.len() * 200);
        for call in &calls {
            match serde_json::to_string(call) {
                Ok(line) => {
                    let _ = writeln!(body, "{line}");
                }
                Err(err) => {
                    return respond::error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "InternalError",
                        &err.to_string(),
                    );
                }
            }
        }
        let next = calls
            .last()
            .map_or(stats.next_seq.max(since), |c| c.seq + 1);
        let Ok(epoch) = HeaderValue::try_from(self.epoch().to_string()) else {
            let message = "the epoch is not a valid header value";
            return respond::error(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", message);
        };
        let mut response = respond::bytes(StatusCode::OK, "application/x-ndjson", body);
        let headers = response.headers_mut();
        headers.insert("x-next-seq", HeaderValue::from(next));
        headers.insert("x-dropped", HeaderValue::from(stats.dropped));
        headers.insert("x-epoch", epoch);
        response
    }

    /// `PUT /admin/v1/faults`: the same shape as the config file's `faults` block, as JSON.
    fn admin_faults(&self, body: Result<Bytes, StatusCode>) -> Response<ResponseBody> {
        let body = match body {
            Ok(body) => body,
            Err(status) => return respond::body_error(status),
        };
        let raw: RawFaults = match serde_json::from_slice(&body) {
            Ok(raw) => raw,
            Err(err) => return respond::bad_field("body", &format!("invalid faults: {err}")),
        };
        let faults = match raw.into_faults() {
            Ok(faults) => faults,
            Err(problem) => return respond::bad_field("faults", &problem),
        };
        match self.set_faults(faults) {
            Ok(()) => respond::json(StatusCode::OK, &json!({"faults": "updated"})),
            Err(err) => respond::bad_field("faults", &err.to_string()),
        }
    }
}
