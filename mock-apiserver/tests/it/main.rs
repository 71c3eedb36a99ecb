//! Integration tests: real clients (kube-rs, kubectl) against the server, in-process
//! and over loopback sockets.

mod apply;
mod bad_input;
mod binary;
mod gc;
mod kube_rs;
mod kubectl;
mod priority_fairness;
mod protobuf;
mod python;
mod replicas;
mod rollout;
mod schema;
mod socket;
mod support;
mod watch;
