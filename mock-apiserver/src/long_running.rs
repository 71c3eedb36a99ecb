//! A response body that runs a callback once when its stream ends: a long-running
//! request (a watch) is counted in the metrics then, as the apiserver counts it when its
//! handler returns (`endpoints/metrics/metrics.go`, `MonitorRequest` in
//! `InstrumentRouteFunc`).
//!
//! # Semantics
//! The callback runs once: when the stream yields its last frame (the watch timed out,
//! the server stopped, the stream failed), or when the body is dropped before that (the
//! client went away), whichever comes first.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use crate::response::ResponseBody;

/// `inner`, running `on_end` once when it ends or is dropped.
pub(crate) struct OnEnd<F: FnOnce() + Unpin> {
    inner: ResponseBody,
    on_end: Option<F>,
}

impl<F: FnOnce() + Unpin> OnEnd<F> {
    pub(crate) fn new(inner: ResponseBody, on_end: F) -> Self {
        Self {
            inner,
            on_end: Some(on_end),
        }
    }

    fn end(&mut self) {
        if let Some(on_end) = self.on_end.take() {
            on_end();
        }
    }
}

impl<F: FnOnce() + Unpin> Body for OnEnd<F> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.end();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<F: FnOnce() + Unpin> Drop for OnEnd<F> {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::stream;
    use http_body_util::BodyExt;

    use super::*;
    use crate::response::stream_response;

    fn counted(chunks: Vec<&'static str>) -> (OnEnd<impl FnOnce() + Unpin>, Arc<AtomicUsize>) {
        let ends = Arc::new(AtomicUsize::new(0));
        let seen = ends.clone();
        let body = stream_response(
            "application/json",
            stream::iter(chunks.into_iter().map(|c| Bytes::from_static(c.as_bytes()))),
        )
        .into_body();
        let on_end = move || {
            seen.fetch_add(1, Ordering::SeqCst);
        };
        (OnEnd::new(body, on_end), ends)
    }

    #[tokio::test]
    async fn the_callback_runs_once_when_the_stream_ends_and_not_again_on_drop() {
        let (mut body, ends) = counted(vec!["a\n", "b\n"]);
        assert_eq!(
            body.frame().await.unwrap().unwrap().into_data().unwrap(),
            "a\n"
        );
        assert_eq!(ends.load(Ordering::SeqCst), 0, "still open");
        body.frame().await.unwrap().unwrap();
        assert!(body.frame().await.is_none());
        assert_eq!(ends.load(Ordering::SeqCst), 1);
        drop(body);
        assert_eq!(ends.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_body_dropped_before_its_end_runs_the_callback() {
        let (mut body, ends) = counted(vec!["a\n", "b\n"]);
        body.frame().await.unwrap().unwrap();
        drop(body);
        assert_eq!(ends.load(Ordering::SeqCst), 1);
    }
}
