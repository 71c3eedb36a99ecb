//! Who sent a request: the user name and groups that API Priority and Fairness classifies
//! by.
//!
//! The server authenticates no one (every request is served). A request is the
//! configured default user ([`Config::user`](crate::Config::user), `system:anonymous` in
//! `system:unauthenticated` unless set, as a real server with anonymous authentication
//! calls a request without credentials), or the user its impersonation headers name
//! (`Impersonate-User`, `Impersonate-Group`: what `kubectl --as --as-group` and
//! kube-rs's `impersonate` settings send), with the groups the apiserver's impersonation
//! filter adds (`endpoints/filters/impersonation/impersonation.go`).

use http::HeaderMap;

/// The group of every authenticated user.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// The group of every unauthenticated request.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// The user of an unauthenticated request.
pub const ANONYMOUS: &str = "system:anonymous";

const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// A user as the apiserver's authenticators name one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// The user name (`system:serviceaccount:NS:NAME` for a service account).
    pub name: String,
    /// Its groups, including `system:authenticated` or `system:unauthenticated`.
    pub groups: Vec<String>,
}

impl Default for User {
    /// `system:anonymous` in `system:unauthenticated`.
    fn default() -> Self {
        Self::anonymous()
    }
}

impl User {
    /// `system:anonymous` in `system:unauthenticated`.
    pub fn anonymous() -> Self {
        Self {
            name: ANONYMOUS.into(),
            groups: vec![ALL_UNAUTHENTICATED.into()],
        }
    }

    /// `name` in `groups`, with the groups an authenticated user gets added: a service
    /// account's (`system:serviceaccounts`, `system:serviceaccounts:NS`) when `groups` is
    /// empty, and `system:authenticated` unless `system:authenticated` or
    /// `system:unauthenticated` is among them (`system:unauthenticated` for
    /// `system:anonymous`), as impersonating `name` with `groups` does.
    pub fn new(name: impl Into<String>, groups: impl IntoIterator<Item = String>) -> Self {
        let name = name.into();
        let mut groups: Vec<String> = groups.into_iter().collect();
        if groups.is_empty()
            && let Some((namespace, _)) = service_account(&name)
        {
            groups = vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
            ];
        }
        if name == ANONYMOUS {
            if !groups.iter().any(|g| g == ALL_UNAUTHENTICATED) {
                groups.push(ALL_UNAUTHENTICATED.into());
            }
        } else if !groups
            .iter()
            .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
        {
            groups.push(ALL_AUTHENTICATED.into());
        }
        Self { name, groups }
    }

    /// The user of a request with `headers`: the impersonated one, else `default`.
    ///
    /// # Errors
    /// Groups without a user, as the apiserver refuses them (400 here; the apiserver
    /// answers an internal error).
    pub fn of_request(headers: &HeaderMap, default: &User) -> Result<User, String> {
        let user = headers
            .get("impersonate-user")
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty());
        let groups: Vec<String> = headers
            .get_all("impersonate-group")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect();
        match user {
            Some(name) => Ok(User::new(name, groups)),
            None if groups.is_empty() => Ok(default.clone()),
            None => Err(format!(
                "requested impersonation of groups {groups:?} without impersonating a user"
            )),
        }
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

/// The namespace and name of a service account user name.
pub fn service_account(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix(SERVICE_ACCOUNT_PREFIX)?.split_once(':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impersonated_users_get_the_groups_the_impersonation_filter_adds() {
        let sa = User::new("system:serviceaccount:crossplane-system:provider", []);
        assert_eq!(
            sa.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:crossplane-system",
                "system:authenticated"
            ]
        );
        let admin = User::new("admin", ["system:masters".to_owned()]);
        assert_eq!(admin.groups, ["system:masters", "system:authenticated"]);
        assert_eq!(User::new(ANONYMOUS, []), User::anonymous());
    }

    #[test]
    fn headers_name_the_user_or_the_default_stands() {
        let mut headers = HeaderMap::new();
        assert_eq!(
            User::of_request(&headers, &User::anonymous()),
            Ok(User::anonymous())
        );
        headers.append("impersonate-group", "system:masters".parse().unwrap());
        assert!(User::of_request(&headers, &User::anonymous()).is_err());
        headers.append("impersonate-user", "alice".parse().unwrap());
        headers.append("impersonate-group", "dev".parse().unwrap());
        let user = User::of_request(&headers, &User::anonymous()).unwrap();
        assert_eq!(user.name, "alice");
        assert_eq!(
            user.groups,
            ["system:masters", "dev", "system:authenticated"]
        );
    }
}
