//! The `aws_requests` generator is structure-aware: inputs of random bytes mostly become
//! calls that pass authentication and reach every service's handlers.

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use fuzz::aws::{Answer, Session, run};

/// The codes with which the front ends refuse a caller (authentication, not the call).
const REFUSALS: &[&str] = &[
    "AuthFailure",
    "AuthorizationHeaderMalformed",
    "ExpiredToken",
    "IncompleteSignature",
    "InvalidAccessKeyId",
    "InvalidClientTokenId",
    "InvalidSignatureException",
    "InvalidToken",
    "MissingAuthenticationToken",
    "RequestExpired",
    "RequestTimeTooSkewed",
    "SignatureDoesNotMatch",
    "UnrecognizedClientException",
    "Signature expired",
];

/// Bytes from a fixed seed (splitmix64), so that the test is the same on every run.
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    use rand_xoshiro::rand_core::{Rng as _, SeedableRng as _};
    let mut out = vec![0; len];
    rand_xoshiro::SplitMix64::seed_from_u64(seed).fill_bytes(&mut out);
    out
}

fn answers(sessions: u64) -> Vec<Answer> {
    let runtime = fuzz::runtime();
    let mut all = Vec::new();
    for seed in 0..sessions {
        let data = bytes(seed, 1024);
        let Ok(session) = Session::arbitrary_take_rest(Unstructured::new(&data)) else {
            continue;
        };
        all.extend(runtime.block_on(run(&session)));
    }
    all
}

fn refused(answer: &Answer) -> bool {
    (answer.status == 400 || answer.status == 401 || answer.status == 403)
        && REFUSALS.iter().any(|code| answer.body.contains(code))
}

#[test]
fn random_inputs_mostly_pass_authentication_and_reach_every_service() {
    let all = answers(800);
    let calls: Vec<&Answer> = all.iter().filter(|a| a.service != "admin").collect();
    let passed = calls.iter().filter(|a| !refused(a)).count();
    let mut ok_by_service: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &calls {
        if (200..300).contains(&a.status) {
            *ok_by_service.entry(a.service).or_default() += 1;
        }
    }
    assert!(
        calls.len() >= 500,
        "only {} calls were generated",
        calls.len()
    );
    assert!(
        passed * 4 >= calls.len() * 3,
        "{passed} of {} calls passed authentication",
        calls.len()
    );
    for service in ["s3", "sts", "ec2", "dynamodb"] {
        assert!(
            ok_by_service.get(service).copied().unwrap_or(0) > 0,
            "no call of {service} succeeded: {ok_by_service:?}"
        );
    }
}

#[test]
fn a_call_signed_well_is_refused_only_for_what_the_generator_broke() {
    let all = answers(400);
    let well: Vec<&Answer> = all.iter().filter(|a| a.signed_well).collect();
    let refused: Vec<&&Answer> = well.iter().filter(|a| refused(a)).collect();
    assert!(!well.is_empty());
    // A well-signed call may still be refused for a header the generator added (a
    // session token with a long-term key), never for its signature (`run` asserts that).
    assert!(
        refused.len() * 10 <= well.len(),
        "{} of {} well-signed calls were refused: {:#?}",
        refused.len(),
        well.len(),
        refused.iter().take(3).collect::<Vec<_>>()
    );
}
