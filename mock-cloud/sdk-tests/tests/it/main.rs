//! mock-cloud's tests with aws-sdk-rust's clients, over loopback sockets in real time, and
//! with requests signed by the SDK's signer under paused time.

/// `client.op()` on the bucket `b` with the further setters, sent:
/// `send!(s3.put_bucket_cors(b).cors_configuration(cors))`. Each operation's builder is a
/// type of its own.
macro_rules! send {
    ($client:ident . $op:ident ($bucket:expr) $(. $set:ident ($value:expr))*) => {
        $client.$op().bucket($bucket)$(.$set($value))*.send().await
    };
}

mod aws_auth;
mod aws_dynamodb;
mod aws_dynamodb_wire;
mod aws_ec2;
mod aws_ec2_wire;
mod aws_resource_faults;
mod aws_resource_windows;
mod aws_s3;
mod aws_s3_owners;
mod aws_sts;
mod aws_support;
// The SigV4 signing helpers are mock-cloud's own tests' (one file, two test crates); these
// tests use some of them.
#[allow(dead_code)]
#[path = "../../../tests/it/aws_support.rs"]
mod signing;
