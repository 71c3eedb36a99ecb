//! The `crossplane.io/reconcile-requested-at` annotation.

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

#[cfg(test)]
mod tests {
    use super::*;

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
