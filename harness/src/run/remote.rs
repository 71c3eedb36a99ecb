//! A small HTTP client for the services a cluster run reaches directly: mock-cloud's admin
//! API and the provider's metrics (plain `http://`, usually through a port-forward).

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// How long one request to a remote service may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A request to a remote service that failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL cannot be used.
    #[error("{url}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No answer: refused, reset, or timed out.
    #[error("{method} {url}: {reason}")]
    Unreachable {
        /// The method.
        method: Method,
        /// The URL.
        url: String,
        /// What happened.
        reason: String,
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
    /// A 2xx answer that is not what was expected.
    #[error("{url}: unexpected answer: {reason}")]
    Decode {
        /// The URL.
        url: String,
        /// What did not parse.
        reason: String,
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
        let bad = |reason: &str| RemoteError::Url {
            url: base.to_owned(),
            reason: reason.to_owned(),
        };
        let uri: http::Uri = base
            .parse()
            .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(other) => {
                return Err(bad(&format!(
                    "only http:// is supported (got {other}://); port-forward the service to loopback"
                )));
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
        let unreachable = |reason: String| RemoteError::Unreachable {
            method: method.clone(),
            url: url.clone(),
            reason,
        };
        let mut builder = Request::builder().method(method.clone()).uri(&url);
        let body = match body {
            Some((content_type, bytes)) => {
                builder = builder.header(http::header::CONTENT_TYPE, content_type);
                Full::new(bytes)
            }
            None => Full::new(Bytes::new()),
        };
        let request = builder.body(body).map_err(|e| RemoteError::Url {
            url: url.clone(),
            reason: e.to_string(),
        })?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| unreachable(format!("{e:#}")))?;
            let (parts, body) = response.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|e| unreachable(e.to_string()))?
                .to_bytes();
            Ok::<_, RemoteError>((parts, body))
        };
        let (parts, body) = tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| unreachable(format!("no answer within {REQUEST_TIMEOUT:?}")))??;
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

    /// `GET path`, the body as JSON.
    ///
    /// # Errors
    /// See [`Remote::send`]; or the body is not the JSON expected.
    pub async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<T, RemoteError> {
        let answer = self.send(Method::GET, path, None).await?;
        serde_json::from_slice(&answer.body).map_err(|e| RemoteError::Decode {
            url: format!("{}{path}", self.base),
            reason: e.to_string(),
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
