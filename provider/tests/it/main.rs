//! Integration tests of the provider: in-process against mock-apiserver and mock-cloud
//! (paused time), and one run over real sockets.

mod crds;
mod lifecycle;
mod stack;
