//! limiter (work in progress).
