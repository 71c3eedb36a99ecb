//! The admin API: the journal, the summary, the inventory, faults and reset. Admin
//! requests are not journalled and spend no quota. The bodies are the types of
//! [`crate::admin`], which its client reads back.

use std::fmt::Write as _;

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode};
use serde_json::json;

use super::respond::{self, ResponseBody};
use super::route::query_param;
use crate::admin::{
    CALLS_PAGE, CALLS_PATH, FAULTS_PATH, FaultsDocument, INVENTORY_PATH, Inventory, RESET_PATH,
    SUMMARY_PATH, X_DROPPED, X_EPOCH, X_NEXT_SEQ,
};
use crate::cloud::MockCloud;

impl MockCloud {
    /// Answers a request under `/admin/v1/` (`path` is the whole path).
    pub(crate) fn admin(
        &self,
        path: &str,
        method: &Method,
        query: Option<&str>,
        body: Result<Bytes, StatusCode>,
    ) -> Response<ResponseBody> {
        match (path, method) {
            (CALLS_PATH, &Method::GET) => self.admin_calls(query),
            (SUMMARY_PATH, &Method::GET) => respond::json(StatusCode::OK, &self.summary()),
            (INVENTORY_PATH, &Method::GET) => {
                let inventory = Inventory {
                    resources: self.inventory(),
                };
                respond::json(StatusCode::OK, &inventory)
            }
            (FAULTS_PATH, &Method::PUT) => self.admin_faults(body),
            (RESET_PATH, &Method::POST) => {
                self.reset();
                respond::json(StatusCode::OK, &json!({"reset": true}))
            }
            (CALLS_PATH | SUMMARY_PATH | INVENTORY_PATH, _) => respond::method_not_allowed("GET"),
            (FAULTS_PATH, _) => respond::method_not_allowed("PUT"),
            (RESET_PATH, _) => respond::method_not_allowed("POST"),
            _ => respond::error(StatusCode::NOT_FOUND, "NotFound", "no such admin endpoint"),
        }
    }

    /// `GET /admin/v1/calls?since=SEQ&limit=N`: a [`CallsPage`](crate::admin::CallsPage) as
    /// NDJSON, one call a line, oldest first, at most `N` (default and cap [`CALLS_PAGE`]) a
    /// response; `X-Next-Seq` is where the next page starts, `X-Dropped` how many entries
    /// the journal dropped, `X-Epoch` the wall-clock time (RFC 3339) at which the cloud's
    /// clock (`at_us`) read zero.
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
        let page = self.calls_page(since, usize::try_from(limit).unwrap_or(usize::MAX));
        let mut body = String::with_capacity(page.calls.len() * 200);
        for call in &page.calls {
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
        let Ok(epoch) = HeaderValue::try_from(page.epoch.to_string()) else {
            let message = "the epoch is not a valid header value";
            return respond::error(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", message);
        };
        let mut response = respond::bytes(StatusCode::OK, "application/x-ndjson", body);
        let headers = response.headers_mut();
        headers.insert(X_NEXT_SEQ, HeaderValue::from(page.next_seq));
        headers.insert(X_DROPPED, HeaderValue::from(page.dropped));
        headers.insert(X_EPOCH, epoch);
        response
    }

    /// `PUT /admin/v1/faults`: a [`FaultsDocument`], the shape of the config file's `faults`
    /// block, as JSON.
    fn admin_faults(&self, body: Result<Bytes, StatusCode>) -> Response<ResponseBody> {
        let body = match body {
            Ok(body) => body,
            Err(status) => return respond::body_error(status),
        };
        let document: FaultsDocument = match serde_json::from_slice(&body) {
            Ok(document) => document,
            Err(err) => return respond::bad_field("body", &format!("invalid faults: {err}")),
        };
        let faults = match document.into_faults() {
            Ok(faults) => faults,
            Err(problem) => return respond::bad_field("faults", &problem),
        };
        match self.set_faults(faults) {
            Ok(()) => respond::json(StatusCode::OK, &json!({"faults": "updated"})),
            Err(err) => respond::bad_field("faults", &err.to_string()),
        }
    }
}
