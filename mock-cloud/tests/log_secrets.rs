//! The secrets test in a process of its own: it captures tracing's output, and tracing
//! caches per call site whether any subscriber wants a line. Beside the other tests of the
//! `it` binary (threads with no subscriber reaching the request pipeline's line at the same
//! moment), that cache could say "nobody" while this test's subscriber was installed, and
//! the test missed the line it checks it captured.

#[allow(dead_code)] // the helpers the secrets test does not use
#[path = "it/aws_support.rs"]
mod aws_support;
#[path = "it/secrets.rs"]
mod secrets;
