//! Matching a request's path to what it addresses.

use crate::model::Collection;

/// What a path addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route<'a> {
    /// `/v1/accounts/{account}/{collection}` (name `None`) or `.../{name}`.
    Api {
        account: &'a str,
        collection: Collection,
        name: Option<&'a str>,
    },
    /// `/admin/v1/...`: the whole path.
    Admin(&'a str),
    /// `/metrics`.
    Metrics,
    /// Anything else.
    NotFound,
}

pub(crate) fn route(path: &str) -> Route<'_> {
    if path == "/metrics" {
        return Route::Metrics;
    }
    if path.starts_with("/admin/v1/") {
        return Route::Admin(path);
    }
    let Some(rest) = path.strip_prefix("/v1/accounts/") else {
        return Route::NotFound;
    };
    let mut parts = rest.split('/');
    let (Some(account), Some(collection)) = (parts.next(), parts.next()) else {
        return Route::NotFound;
    };
    let name = parts.next();
    let Some(collection) = Collection::parse(collection) else {
        return Route::NotFound;
    };
    if account.is_empty() || name == Some("") || parts.next().is_some() {
        return Route::NotFound;
    }
    Route::Api {
        account,
        collection,
        name,
    }
}

/// The value of `key` in a query string, undecoded.
pub(crate) fn query_param<'a>(query: Option<&'a str>, key: &str) -> Option<&'a str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_paths_name_account_collection_and_resource() {
        assert_eq!(
            route("/v1/accounts/acme/buckets/b1"),
            Route::Api {
                account: "acme",
                collection: Collection::Buckets,
                name: Some("b1")
            }
        );
        assert_eq!(
            route("/v1/accounts/acme/records"),
            Route::Api {
                account: "acme",
                collection: Collection::Records,
                name: None
            }
        );
    }

    #[test]
    fn anything_else_is_not_found() {
        for path in [
            "/",
            "/v1/accounts/acme",
            "/v1/accounts/acme/disks",
            "/v1/accounts//buckets",
            "/v1/accounts/acme/buckets/",
            "/v1/accounts/acme/buckets/a/b",
        ] {
            assert_eq!(route(path), Route::NotFound, "{path}");
        }
        assert_eq!(
            route("/admin/v1/summary"),
            Route::Admin("/admin/v1/summary")
        );
    }

    #[test]
    fn query_params_are_found_by_key() {
        assert_eq!(query_param(Some("since=5&limit=2"), "limit"), Some("2"));
        assert_eq!(query_param(Some("flag"), "flag"), Some(""));
        assert_eq!(query_param(None, "since"), None);
    }
}
