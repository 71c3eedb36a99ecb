use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::result::ReconcileResult;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Reconciles one item; what controller-runtime calls a `Reconciler`.
pub trait Reconciler<T>: Send + Sync + 'static {
    /// Brings the item's world in line with its desired state.
    fn reconcile(&self, item: T) -> BoxFuture<'_, ReconcileResult>;
}

/// A shareable reconciler.
pub type SharedReconciler<T> = Arc<dyn Reconciler<T>>;

/// A reconciler from an async closure.
pub struct FnReconciler<F>(pub F);

impl<T, F, Fut> Reconciler<T> for FnReconciler<F>
where
    T: Send + 'static,
    F: Fn(T) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ReconcileResult> + Send + 'static,
{
    fn reconcile(&self, item: T) -> BoxFuture<'_, ReconcileResult> {
        Box::pin((self.0)(item))
    }
}

impl<T, R: Reconciler<T> + ?Sized> Reconciler<T> for Arc<R> {
    fn reconcile(&self, item: T) -> BoxFuture<'_, ReconcileResult> {
        (**self).reconcile(item)
    }
}
