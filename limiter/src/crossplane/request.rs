//! The `crossplane.io/reconcile-requested-at` annotation, and whether a provider tracks it.
use strum::{Display, EnumString, IntoStaticStr};

use super::error_paths::{UnknownMode, named};

/// Annotation whose new value asks for an immediate reconcile.
pub const RECONCILE_REQUESTED_AT_ANNOTATION: &str = "crossplane.io/reconcile-requested-at";

/// The token to handle, if the annotation carries one that differs from
/// `status.lastHandledReconcileAt`: a new token means "reconcile now and record it"; the same
/// token again is a no-op.
#[must_use]
pub fn pending_reconcile_request<'a>(
    annotation: Option<&'a str>,
    last_handled: Option<&str>,
) -> Option<&'a str> {
    let token = annotation?;
    if token.is_empty() || Some(token) == last_handled {
        None
    } else {
        Some(token)
    }
}

/// Whether a provider tracks reconcile requests.
///
/// crossplane-runtime (v2.3.0+, #982) records the annotation's token in
/// `status.lastHandledReconcileAt` only for a managed type that implements
/// `GetLastHandledReconcileAt` and `SetLastHandledReconcileAt`; provider-template's types do
/// not. For such a type the annotation's change still passes the event filter, so it brings
/// one reconcile on the normal path, but no `ReconcileRequestHandled` event and no token in
/// the status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, IntoStaticStr, EnumString, Display)]
#[strum(serialize_all = "lowercase", parse_err_ty = UnknownMode, parse_err_fn = Self::unknown)]
pub enum ReconcileRequests {
    /// A new token is announced with a `ReconcileRequestHandled` event and recorded by the
    /// reconcile's status write (a type with the interface).
    #[default]
    Honour,
    /// The token is neither announced nor recorded (a type without the interface).
    Ignore,
}

impl ReconcileRequests {
    /// Both modes, in documentation order.
    pub const ALL: [ReconcileRequests; 2] = [ReconcileRequests::Honour, ReconcileRequests::Ignore];

    /// The flag value (`honour`, `ignore`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The token a reconcile handles: [`pending_reconcile_request`] when requests are
    /// honoured, none when they are ignored.
    #[must_use]
    pub fn pending<'a>(
        self,
        annotation: Option<&'a str>,
        last_handled: Option<&str>,
    ) -> Option<&'a str> {
        match self {
            ReconcileRequests::Honour => pending_reconcile_request(annotation, last_handled),
            ReconcileRequests::Ignore => None,
        }
    }
}

named!(
    ReconcileRequests,
    "reconcile-request mode",
    "honour or ignore"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ignored_request_is_never_pending() {
        let honour = ReconcileRequests::Honour;
        assert_eq!(honour.pending(Some("t1"), None), Some("t1"));
        assert_eq!(ReconcileRequests::Ignore.pending(Some("t1"), None), None);
        for m in ReconcileRequests::ALL {
            assert_eq!(m.as_str().parse::<ReconcileRequests>(), Ok(m));
        }
        assert!("honor".parse::<ReconcileRequests>().is_err());
    }

    #[test]
    fn a_new_token_is_handled_once() {
        assert_eq!(pending_reconcile_request(Some("t1"), None), Some("t1"));
        assert_eq!(pending_reconcile_request(Some("t1"), Some("t1")), None);
        assert_eq!(
            pending_reconcile_request(Some("t2"), Some("t1")),
            Some("t2")
        );
        assert_eq!(pending_reconcile_request(None, Some("t1")), None);
    }
}
