//! A small HTTP client for the provider's metrics, which a cluster run reads directly
//! (plain `http://`, usually through a port-forward).

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// How long one request to a remote service may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A request to a remote service that failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL does not parse.
    #[error("{url}: not a URL")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// The parser's complaint.
        #[source]
        source: http::uri::InvalidUri,
    },
    /// The URL parses, but cannot be used.
    #[error("{url}: {problem}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The request could not be built.
    #[error("{url}: cannot build the request")]
    Request {
        /// The URL.
        url: String,
        /// The builder's error.
        #[source]
        source: http::Error,
    },
    /// No answer: refused or reset.
    #[error("{method} {url}: no answer")]
    Unreachable {
        /// The method.
        method: Method,
        /// The URL.
        url: String,
        /// What happened.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No answer within [`REQUEST_TIMEOUT`].
    #[error("{method} {url}: no answer within {REQUEST_TIMEOUT:?}")]
    Timeout {
        /// The method.
        method: Method,
        /// The URL.
        url: String,
    },
    /// An answer other than 2xx.
    #[error("{method} {url}: HTTP {status}: {body}")]
    Status {
        /// The method.
        method: Method,
        /// The URL.
        url: String,
        /// The status.
        status: StatusCode,
        /// The start of the body.
        body: String,
    },
}

/// An `http://` base URL and a pooled client for it.
#[derive(Clone, Debug)]
pub struct Remote {
    base: String,
    client: Client<HttpConnector, Full<Bytes>>,
}

/// A successful answer.
pub struct Answer {
    /// Response headers.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
}

impl Remote {
    /// A client for `base` (`http://host:port` with an optional path prefix).
    ///
    /// # Errors
    /// The URL is not `http://`, or does not parse.
    pub fn new(base: &str) -> Result<Remote, RemoteError> {
        let bad = |problem: &'static str| RemoteError::Url {
            url: base.to_owned(),
            problem,
        };
        let uri: http::Uri = base.parse().map_err(|source| RemoteError::BadUrl {
            url: base.to_owned(),
            source,
        })?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(_) => {
                return Err(bad(
                    "only http:// is supported; port-forward the service to loopback",
                ));
            }
            None => return Err(bad("expected a URL such as http://127.0.0.1:18080")),
        }
        if uri.host().is_none() {
            return Err(bad("the URL has no host"));
        }
        let client = Client::builder(TokioExecutor::new()).build_http();
        Ok(Remote {
            base: base.trim_end_matches('/').to_owned(),
            client,
        })
    }

    /// A client for the scheme and authority of `url`, and the path (with query) it names
    /// (`/metrics` when it names none).
    ///
    /// # Errors
    /// See [`Remote::new`].
    pub fn for_url(url: &str) -> Result<(Remote, String), RemoteError> {
        let uri: http::Uri = url.parse().map_err(|source| RemoteError::BadUrl {
            url: url.to_owned(),
            source,
        })?;
        let base = format!(
            "{}://{}",
            uri.scheme_str().unwrap_or("http"),
            uri.authority().map_or("", |a| a.as_str())
        );
        let path = uri
            .path_and_query()
            .map_or("/metrics", |p| p.as_str())
            .to_owned();
        Ok((Remote::new(&base)?, path))
    }

    /// The base URL.
    #[must_use]
    pub fn base(&self) -> &str {
        &self.base
    }

    /// `method` on `path` (below the base URL), with an optional body.
    ///
    /// # Errors
    /// No answer within the timeout, or an answer other than 2xx.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<(&'static str, Bytes)>,
    ) -> Result<Answer, RemoteError> {
        let url = format!("{}{path}", self.base);
        let unreachable =
            |source: Box<dyn std::error::Error + Send + Sync>| RemoteError::Unreachable {
                method: method.clone(),
                url: url.clone(),
                source,
            };
        let mut builder = Request::builder().method(method.clone()).uri(&url);
        let body = match body {
            Some((content_type, bytes)) => {
                builder = builder.header(http::header::CONTENT_TYPE, content_type);
                Full::new(bytes)
            }
            None => Full::new(Bytes::new()),
        };
        let request = builder.body(body).map_err(|source| RemoteError::Request {
            url: url.clone(),
            source,
        })?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| unreachable(e.into()))?;
            let (parts, body) = response.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|e| unreachable(e.into()))?
                .to_bytes();
            Ok::<_, RemoteError>((parts, body))
        };
        let (parts, body) = tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| RemoteError::Timeout {
                method: method.clone(),
                url: url.clone(),
            })??;
        if !parts.status.is_success() {
            let text = String::from_utf8_lossy(&body);
            return Err(RemoteError::Status {
                method,
                url,
                status: parts.status,
                body: text.chars().take(500).collect(),
            });
        }
        Ok(Answer {
            headers: parts.headers,
            body,
        })
    }

    /// `GET path`, the body as text.
    ///
    /// # Errors
    /// See [`Remote::send`].
    pub async fn get_text(&self, path: &str) -> Result<String, RemoteError> {
        let answer = self.send(Method::GET, path, None).await?;
        Ok(String::from_utf8_lossy(&answer.body).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_urls_with_a_host_are_taken() {
        assert!(Remote::new("http://127.0.0.1:18080/").is_ok());
        assert_eq!(
            Remote::new("http://127.0.0.1:18080/").unwrap().base(),
            "http://127.0.0.1:18080"
        );
        let e = Remote::new("https://cloud.example")
            .unwrap_err()
            .to_string();
        assert!(e.contains("only http://"), "{e}");
        let e = Remote::new("127.0.0.1:18080").unwrap_err().to_string();
        assert!(e.contains("expected a URL"), "{e}");
    }
}
