//! What can go wrong talking to the admin API.

use std::num::ParseIntError;
use std::time::Duration;

use http::StatusCode;
use jiff::Timestamp;

/// A failed exchange with the admin API. Each names the URL; the cause is the source.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The URL cannot address a mock-cloud: not a URL, not `http://`, no host, or a query.
    #[error("bad mock-cloud URL {url:?}: {problem}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        problem: &'static str,
        /// The parser's error, if it could not parse the URL at all.
        #[source]
        source: Option<http::Error>,
    },
    /// No answer: the connection could not be made or broke before the answer began.
    #[error("cannot reach {url}")]
    Unreachable {
        /// The request's URL.
        url: String,
        /// Why.
        #[source]
        source: hyper_util::client::legacy::Error,
    },
    /// The answer broke off.
    #[error("the answer from {url} broke off")]
    Interrupted {
        /// The request's URL.
        url: String,
        /// Why.
        #[source]
        source: hyper::Error,
    },
    /// No whole answer within the client's timeout.
    #[error("no answer from {url} within {after:?}")]
    Timeout {
        /// The request's URL.
        url: String,
        /// The timeout.
        after: Duration,
    },
    /// The server answered with a status other than 2xx.
    #[error("{url} answered {status}: {body}")]
    Status {
        /// The request's URL.
        url: String,
        /// The status.
        status: StatusCode,
        /// The error's message, or the body's text if it is not an error envelope;
        /// trimmed.
        body: String,
    },
    /// The request body could not be written as JSON.
    #[error("cannot write the body of a request to {url}")]
    Encode {
        /// The request's URL.
        url: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The answer is not what the admin API sends.
    #[error("cannot read the answer from {url}")]
    Decode {
        /// The request's URL.
        url: String,
        /// What is wrong with it.
        #[source]
        source: DecodeError,
    },
    /// The cloud was replaced (`PUT /admin/v1/config`) between two pages of its journal,
    /// so the pages do not belong together.
    #[error(
        "the cloud at {url} was replaced while its journal was read (epoch {before} became {after})"
    )]
    EpochChanged {
        /// The URL of the page whose epoch differs.
        url: String,
        /// The epoch of the pages before.
        before: Timestamp,
        /// The epoch of this page.
        after: Timestamp,
    },
}

/// What is wrong with an answer.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The body is not the JSON expected (for the journal: a line is not a call).
    #[error("the body is not the JSON expected")]
    Json(#[source] serde_json::Error),
    /// A header the answer must have is missing.
    #[error("the header {name} is missing")]
    MissingHeader {
        /// The header.
        name: &'static str,
    },
    /// A header is not visible ASCII.
    #[error("the header {name} is not text")]
    NotText {
        /// The header.
        name: &'static str,
        /// Why.
        #[source]
        source: http::header::ToStrError,
    },
    /// A header that holds a count is not a whole number.
    #[error("the header {name} is not a whole number")]
    NotNumber {
        /// The header.
        name: &'static str,
        /// Why.
        #[source]
        source: ParseIntError,
    },
    /// A header that holds a time is not RFC 3339.
    #[error("the header {name} is not an RFC 3339 time")]
    NotTime {
        /// The header.
        name: &'static str,
        /// Why.
        #[source]
        source: jiff::Error,
    },
}
