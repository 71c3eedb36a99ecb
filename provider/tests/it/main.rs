//! Integration tests of the provider: in-process against mock-apiserver and mock-cloud
//! (paused time), and one run over real sockets.

mod annotations;
#[cfg(feature = "aws")]
mod aws;
#[cfg(feature = "aws")]
mod aws_kinds;
mod cloud_client;
mod crds;
mod error_paths;
mod failures;
mod lifecycle;
mod sockets;
mod stack;
