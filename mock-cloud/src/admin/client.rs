//! [`Client`]: the admin API over HTTP/1.1, on hyper-util's client.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use jiff::Timestamp;
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use super::client_error::{ClientError, DecodeError};
use super::wire::{
    CALLS_PAGE, CALLS_PATH, CONFIG_PATH, CallsPage, ErrorBody, FAULTS_PATH, INVENTORY_PATH,
    Inventory, RESET_PATH, SUMMARY_PATH, X_DROPPED, X_EPOCH, X_NEXT_SEQ,
};
use crate::config::{Config, ConfigDocument, Faults, FaultsDocument};
use crate::journal::Call;
use crate::summary::Summary;

/// How long a request may take, connection and whole body included, unless
/// [`Client::with_timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest error message kept from an answer's body.
const MAX_MESSAGE: usize = 1024;

/// When a served cloud's clock read zero, on the caller's tokio clock: the zero lies
/// within `uncertainty / 2` of `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Epoch {
    /// The middle of the exchange that started the cloud.
    pub at: Instant,
    /// How long that exchange took.
    pub uncertainty: Duration,
}

/// A client of a served mock-cloud's admin API (`http://` only; HTTP/1.1 with keep-alive).
///
/// Every method is one exchange (or, for [`Client::all_calls_since`], one per page), each
/// bounded by the client's timeout. A status other than 2xx is [`ClientError::Status`] with
/// the server's message.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use mock_cloud::admin::Client;
/// use mock_cloud::{AccountConfig, Config, MockCloud};
///
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let url = format!("http://{}", listener.local_addr().unwrap());
/// let cloud = MockCloud::new(Config::default()).unwrap();
/// tokio::spawn(mock_cloud::serve(listener, cloud, std::future::pending()));
///
/// let client = Client::new(&url).unwrap();
/// let config = Config::empty().with_account(AccountConfig::new("acme").with_token("t"));
/// let epoch = client.put_config(&config).await.unwrap();
/// assert!(epoch.uncertainty < std::time::Duration::from_secs(30));
/// let page = client.all_calls_since(0).await.unwrap();
/// assert!(page.calls.is_empty());
/// assert_eq!(client.summary().await.unwrap().epoch, page.epoch);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    /// `http://host[:port][/prefix]`, without a trailing `/`.
    base: String,
    http: HttpClient<HttpConnector, Full<Bytes>>,
    timeout: Duration,
    page_limit: u64,
}

impl Client {
    /// A client of the mock-cloud at `base_url` (`http://host:port`, optionally with a path
    /// prefix). Connects only when a request is made.
    ///
    /// # Errors
    /// [`ClientError::BadUrl`]: not a URL, a scheme other than `http`, no host, or a query
    /// or fragment.
    pub fn new(base_url: &str) -> Result<Client, ClientError> {
        let bad = |problem, source| ClientError::BadUrl {
            url: base_url.to_owned(),
            problem,
            source,
        };
        let uri: Uri = base_url
            .parse()
            .map_err(|e: http::uri::InvalidUri| bad("not a URL", Some(e.into())))?;
        if uri.scheme_str() != Some("http") {
            return Err(bad("only http:// URLs are supported", None));
        }
        if uri.host().is_none_or(str::is_empty) {
            return Err(bad("no host", None));
        }
        if uri.query().is_some() || base_url.contains('#') {
            return Err(bad("a base URL has no query or fragment", None));
        }
        let base = base_url.trim_end_matches('/').to_owned();
        let http = HttpClient::builder(TokioExecutor::new()).build_http();
        Ok(Client {
            base,
            http,
            timeout: DEFAULT_TIMEOUT,
            page_limit: CALLS_PAGE,
        })
    }

    /// Bounds every request, connection and whole body included (default
    /// [`DEFAULT_TIMEOUT`]).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = timeout;
        self
    }

    /// The most calls [`Client::all_calls_since`] asks for a page (default and cap
    /// [`CALLS_PAGE`], the server's own cap).
    #[must_use]
    pub fn with_page_limit(mut self, limit: u64) -> Client {
        self.page_limit = limit.clamp(1, CALLS_PAGE);
        self
    }

    /// The base URL, without a trailing `/`.
    pub fn url(&self) -> &str {
        &self.base
    }

    /// `PUT /admin/v1/config`: replaces the served cloud with a new one built from
    /// `config`, its journal empty and its clock at zero, and says when that zero was.
    ///
    /// # Errors
    /// [`ClientError::Status`] 400 if the server refuses the config (the old cloud stays);
    /// any failure of the exchange.
    pub async fn put_config(&self, config: &Config) -> Result<Epoch, ClientError> {
        let url = self.url_of(CONFIG_PATH);
        let body = encode(&url, &ConfigDocument::from(config))?;
        let start = Instant::now();
        self.exchange(Method::PUT, url, Some(body)).await?;
        let uncertainty = start.elapsed();
        Ok(Epoch {
            at: start + uncertainty / 2,
            uncertainty,
        })
    }

    /// `PUT /admin/v1/faults`: replaces the faults in force.
    ///
    /// # Errors
    /// [`ClientError::Status`] 400, naming the field, if the server refuses them; any
    /// failure of the exchange.
    pub async fn put_faults(&self, faults: &Faults) -> Result<(), ClientError> {
        let url = self.url_of(FAULTS_PATH);
        let body = encode(&url, &FaultsDocument::from(faults))?;
        self.exchange(Method::PUT, url, Some(body)).await?;
        Ok(())
    }

    /// `GET /admin/v1/calls`: one page of the journal from `since`, of at most `limit`
    /// calls (the server's default and cap: [`CALLS_PAGE`]).
    ///
    /// # Errors
    /// Any failure of the exchange; [`ClientError::Decode`] if a line is not a call or a
    /// header is missing.
    pub async fn calls(&self, since: u64, limit: Option<u64>) -> Result<CallsPage, ClientError> {
        let mut path = format!("{CALLS_PATH}?since={since}");
        if let Some(limit) = limit {
            path.push_str(&format!("&limit={limit}"));
        }
        let url = self.url_of(&path);
        let answer = self.exchange(Method::GET, url.clone(), None).await?;
        let decode = |source| ClientError::Decode {
            url: url.clone(),
            source,
        };
        let calls = serde_json::Deserializer::from_slice(&answer.body)
            .into_iter::<Call>()
            .collect::<Result<Vec<Call>, _>>()
            .map_err(|e| decode(DecodeError::Json(e)))?;
        let headers = &answer.headers;
        Ok(CallsPage {
            calls,
            next_seq: number(headers, X_NEXT_SEQ).map_err(decode)?,
            dropped: number(headers, X_DROPPED).map_err(decode)?,
            epoch: time(headers, X_EPOCH).map_err(decode)?,
        })
    }

    /// Every call from `since` on, following pages until one comes back short (the
    /// journal's end at that moment). `next_seq` and `dropped` are the last page's.
    ///
    /// # Errors
    /// Those of [`Client::calls`]; [`ClientError::EpochChanged`] if the cloud was replaced
    /// between two pages.
    pub async fn all_calls_since(&self, since: u64) -> Result<CallsPage, ClientError> {
        let limit = Some(self.page_limit);
        let mut all = self.calls(since, limit).await?;
        let mut last_len = all.calls.len();
        while last_len as u64 >= self.page_limit {
            let page = self.calls(all.next_seq, limit).await?;
            if page.epoch != all.epoch {
                return Err(ClientError::EpochChanged {
                    url: self.url_of(CALLS_PATH),
                    before: all.epoch,
                    after: page.epoch,
                });
            }
            last_len = page.calls.len();
            all.calls.extend(page.calls);
            all.next_seq = page.next_seq;
            all.dropped = page.dropped;
        }
        Ok(all)
    }

    /// `GET /admin/v1/summary`.
    ///
    /// # Errors
    /// Any failure of the exchange, or a body that is not a summary.
    pub async fn summary(&self) -> Result<Summary, ClientError> {
        self.get_json(SUMMARY_PATH).await
    }

    /// The `seq` the next journalled call will get (from the summary).
    ///
    /// # Errors
    /// Those of [`Client::summary`].
    pub async fn next_seq(&self) -> Result<u64, ClientError> {
        Ok(self.summary().await?.journal.next_seq)
    }

    /// `GET /admin/v1/inventory`.
    ///
    /// # Errors
    /// Any failure of the exchange, or a body that is not an inventory.
    pub async fn inventory(&self) -> Result<Inventory, ClientError> {
        self.get_json(INVENTORY_PATH).await
    }

    /// `POST /admin/v1/reset`: clears resources, journal (its `seq` keeps counting),
    /// summary and buckets; faults and the clock stay.
    ///
    /// # Errors
    /// Any failure of the exchange.
    pub async fn reset(&self) -> Result<(), ClientError> {
        self.exchange(Method::POST, self.url_of(RESET_PATH), None)
            .await?;
        Ok(())
    }

    fn url_of(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.base)
    }

    async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let url = self.url_of(path);
        let answer = self.exchange(Method::GET, url.clone(), None).await?;
        serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode {
            url,
            source: DecodeError::Json(e),
        })
    }

    /// One request, its whole answer within the timeout; a status other than 2xx is an
    /// error.
    async fn exchange(
        &self,
        method: Method,
        url: String,
        body: Option<Vec<u8>>,
    ) -> Result<Answer, ClientError> {
        let mut request = Request::builder().method(method).uri(url.as_str());
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|source| ClientError::BadUrl {
                url: url.clone(),
                problem: "not a URL",
                source: Some(source),
            })?;
        let exchange =
            async {
                let response = self.http.request(request).await.map_err(|source| {
                    ClientError::Unreachable {
                        url: url.clone(),
                        source,
                    }
                })?;
                let (parts, body) = response.into_parts();
                let body = body
                    .collect()
                    .await
                    .map_err(|source| ClientError::Interrupted {
                        url: url.clone(),
                        source,
                    })?
                    .to_bytes();
                Ok(Answer {
                    status: parts.status,
                    headers: parts.headers,
                    body,
                })
            };
        let answer = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| ClientError::Timeout {
                url: url.clone(),
                after: self.timeout,
            })??;
        if !answer.status.is_success() {
            return Err(ClientError::Status {
                url,
                status: answer.status,
                body: message(&answer.body),
            });
        }
        Ok(answer)
    }
}

/// A whole answer.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

fn encode(url: &str, value: &impl serde::Serialize) -> Result<Vec<u8>, ClientError> {
    serde_json::to_vec(value).map_err(|source| ClientError::Encode {
        url: url.to_owned(),
        source,
    })
}

/// The message of an error answer: the envelope's `message`, else the body's text;
/// trimmed and at most [`MAX_MESSAGE`] bytes.
fn message(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<ErrorBody>(body) {
        Ok(envelope) => envelope.error.message,
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text = text.trim();
    if text.len() <= MAX_MESSAGE {
        return text.to_owned();
    }
    let end = (0..=MAX_MESSAGE)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", &text[..end])
}

fn header<'a>(headers: &'a HeaderMap, name: &'static str) -> Result<&'a str, DecodeError> {
    headers
        .get(name)
        .ok_or(DecodeError::MissingHeader { name })?
        .to_str()
        .map_err(|source| DecodeError::NotText { name, source })
}

fn number(headers: &HeaderMap, name: &'static str) -> Result<u64, DecodeError> {
    header(headers, name)?
        .parse()
        .map_err(|source| DecodeError::NotNumber { name, source })
}

fn time(headers: &HeaderMap, name: &'static str) -> Result<Timestamp, DecodeError> {
    header(headers, name)?
        .parse()
        .map_err(|source| DecodeError::NotTime { name, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_must_be_plain_http_with_a_host() {
        for (url, problem) in [
            ("https://cloud:8080", "only http:// URLs are supported"),
            ("cloud:8080", "only http:// URLs are supported"),
            ("http://", "not a URL"),
            ("http://cloud/ x", "not a URL"),
            (
                "http://cloud:8080/?a=1",
                "a base URL has no query or fragment",
            ),
        ] {
            match Client::new(url) {
                Err(ClientError::BadUrl { problem: got, .. }) => assert_eq!(got, problem, "{url}"),
                other => panic!("{url}: {other:?}"),
            }
        }
        let client = Client::new("http://cloud:8080/prefix/").unwrap();
        assert_eq!(client.url(), "http://cloud:8080/prefix");
        assert_eq!(
            client.url_of(SUMMARY_PATH),
            "http://cloud:8080/prefix/admin/v1/summary"
        );
    }

    #[test]
    fn an_error_message_is_the_envelope_s_message_or_the_trimmed_text() {
        let envelope = br#"{"error":{"code":"InvalidArgument","message":"no","field":"x"}}"#;
        assert_eq!(message(envelope), "no");
        assert_eq!(message(b"  plain text\n"), "plain text");
        let long = "é".repeat(MAX_MESSAGE);
        let cut = message(long.as_bytes());
        assert!(cut.len() <= MAX_MESSAGE + '…'.len_utf8(), "{}", cut.len());
        assert!(cut.ends_with('…'));
    }
}
