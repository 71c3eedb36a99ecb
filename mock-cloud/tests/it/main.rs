//! The integration tests of mock-cloud: in-process under paused time, and over sockets
//! in real time.

mod admin;
mod aws_auth;
mod aws_dynamodb;
mod aws_ec2;
mod aws_resource_faults;
mod aws_s3;
mod aws_sts;
mod aws_support;
mod aws_wire;
mod binary;
#[cfg(feature = "client")]
mod client;
mod faults;
mod isolation;
mod journal;
mod quotas;
mod resource_faults;
mod resources;
mod secrets;
mod socket;
mod support;
