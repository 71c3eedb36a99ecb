//! [`Switchable`]: a served cloud that `PUT /admin/v1/config` replaces as a whole, so that a
//! long-running mock-cloud (a pod in a test cluster) can be given each scenario's accounts,
//! quotas and faults without a restart.

use std::sync::Arc;

use parking_lot::RwLock;

use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use serde_json::json;

use super::{BoxError, ResponseBody, read_body, respond};
use crate::admin::CONFIG_PATH;
use crate::cloud::MockCloud;
use crate::config::{Config, ConfigError};

/// A [`MockCloud`] behind a slot: every request goes to the cloud in the slot, and
/// `PUT /admin/v1/config` (a config document in YAML or JSON, the shape of the `--config`
/// file) builds a new cloud and puts it there. Everything starts afresh with it: accounts,
/// tokens, quotas, faults and provisioning from the document; no resources; an empty
/// journal whose `seq` starts at 0; a clock (the journal's time base) starting at 0. A
/// request in flight at that moment finishes against the cloud it started on.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// use http_body_util::Full;
/// use tower::ServiceExt;
/// let switch = mock_cloud::Switchable::new(mock_cloud::MockCloud::new(mock_cloud::Config::default()).unwrap());
/// let put = http::Request::put("/admin/v1/config")
///     .body(Full::new(bytes::Bytes::from("accounts: [{name: acme, tokens: [t]}]")))
///     .unwrap();
/// let response = switch.clone().oneshot(put).await.unwrap();
/// assert_eq!(response.status(), 200);
/// assert_eq!(switch.current().config().accounts[0].name, "acme");
/// # });
/// ```
#[derive(Clone)]
pub struct Switchable {
    slot: Arc<RwLock<MockCloud>>,
}

impl std::fmt::Debug for Switchable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Switchable")
            .field("current", &self.current())
            .finish()
    }
}

impl Switchable {
    /// Serves `cloud` until a config replaces it.
    pub fn new(cloud: MockCloud) -> Switchable {
        Switchable {
            slot: Arc::new(RwLock::new(cloud)),
        }
    }

    /// The cloud requests go to now.
    pub fn current(&self) -> MockCloud {
        self.slot.read().clone()
    }

    /// Builds a cloud from `config` and makes it the current one.
    ///
    /// # Errors
    /// The config does not validate; the current cloud stays.
    pub fn replace(&self, config: Config) -> Result<MockCloud, ConfigError> {
        let cloud = MockCloud::new(config)?;
        *self.slot.write() = cloud.clone();
        tracing::info!(
            accounts = cloud.config().accounts.len(),
            "the cloud was replaced by a new config"
        );
        Ok(cloud)
    }

    /// Answers one HTTP request: `PUT /admin/v1/config` here, every other request in the
    /// current cloud ([`MockCloud::handle`]).
    pub async fn handle<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        if request.uri().path() != CONFIG_PATH {
            return self.current().handle(request).await;
        }
        if request.method() == Method::PUT {
            self.put_config(request).await
        } else {
            respond::method_not_allowed("PUT")
        }
    }

    async fn put_config<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = request.into_parts();
        let body = match read_body(body, &parts.headers).await {
            Ok(body) => body,
            Err(status) => return respond::body_error(status),
        };
        let Ok(text) = std::str::from_utf8(&body) else {
            return respond::bad_field("body", "the config must be UTF-8 text (YAML or JSON)");
        };
        let replaced = Config::from_yaml(text, "request body").and_then(|c| self.replace(c));
        match replaced {
            Ok(cloud) => {
                let config = cloud.config();
                let accounts: Vec<&str> = config.accounts.iter().map(|a| a.name.as_str()).collect();
                respond::json(
                    StatusCode::OK,
                    &json!({"replaced": true, "accounts": accounts}),
                )
            }
            Err(err) => respond::bad_field("body", &err.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use tower::ServiceExt;

    use super::*;

    fn request(method: Method, path: &str, body: &str) -> Request<Full<Bytes>> {
        Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", "Bearer t")
            .body(Full::new(Bytes::from(body.to_owned())))
            .unwrap()
    }

    async fn text(response: Response<ResponseBody>) -> String {
        let body = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(body.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_new_config_starts_a_new_cloud_and_a_bad_one_keeps_the_old() {
        let switch = Switchable::new(MockCloud::new(Config::default()).unwrap());
        let old = switch.current();
        let create = |body: &str| {
            request(
                Method::POST,
                "/v1/accounts/acme/buckets",
                &format!("{{\"name\":\"b1\",\"spec\":{body}}}"),
            )
        };
        // The default cloud has no account `acme`.
        let r = switch.clone().oneshot(create("{}")).await.unwrap();
        assert_eq!(r.status(), 401);
        let put = request(
            Method::PUT,
            CONFIG_PATH,
            "accounts: [{name: acme, tokens: [t], quotas: {unlimited: true}}]",
        );
        let r = switch.clone().oneshot(put).await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(text(r).await.contains("\"acme\""));
        assert!(
            switch.current().epoch() >= old.epoch(),
            "the new cloud has a new epoch"
        );
        let r = switch.clone().oneshot(create("{}")).await.unwrap();
        assert!(r.status().is_success(), "{}", r.status());
        let now = switch.current();
        assert_eq!(
            now.calls().len(),
            1,
            "the new journal holds only the new call"
        );
        assert_eq!(now.calls()[0].seq, 0);
        assert!(
            old.calls().iter().all(|c| c.status == 401),
            "the new call went to the new cloud only"
        );
        let quotas = &now.config().accounts[0].quotas;
        assert!(
            quotas.classes.is_empty() && quotas.counts.is_empty(),
            "unlimited: true"
        );

        let bad = request(
            Method::PUT,
            CONFIG_PATH,
            "accounts: [{name: acme, tokns: [t]}]",
        );
        let r = switch.clone().oneshot(bad).await.unwrap();
        assert_eq!(r.status(), 400);
        let message = text(r).await;
        assert!(message.contains("request body:1:"), "{message}");
        assert_eq!(
            switch.current().calls().len(),
            1,
            "the cloud was not replaced"
        );

        let get = request(Method::GET, CONFIG_PATH, "");
        assert_eq!(switch.clone().oneshot(get).await.unwrap().status(), 405);
    }
}
