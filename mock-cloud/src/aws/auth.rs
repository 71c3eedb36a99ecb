//! Authenticating an AWS request: reading its SigV4 signature, finding its key's secret,
//! checking the time, the session token, S3's payload hash, and the signature itself.
//!
//! # Semantics
//! The checks run in the order AWS answers them: a signature that cannot be read; an
//! unknown access key; a request time outside the allowed skew (a presigned URL: past its
//! expiry); temporary credentials expired, or without their session token; S3's
//! `x-amz-content-sha256` (required, one of S3's markers or the payload's SHA-256); and
//! the signature. A request without any signature passes only where the operation needs
//! none (STS `AssumeRoleWithWebIdentity`).

use std::borrow::Cow;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::accounts::Caller;
use super::contract::AwsRequest;
use super::envelope::AwsError;
use super::signing::{self, Canonical};
use super::sigv4::{self, Unreadable};
use super::state::AwsState;
use crate::service::{Protocol, Service};

/// S3's payload markers: the payload is not signed, or is sent in aws-chunked encoding.
pub(crate) const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";
/// Unsigned chunks with a trailing checksum.
pub(crate) const STREAMING_UNSIGNED_TRAILER: &str = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
/// S3's other streaming markers (signed chunks, SigV4a).
const STREAMING_SIGNED: [&str; 4] = [
    "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
    "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
    "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD",
    "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER",
];

/// Authenticates `request` at wall-clock time `now`.
pub(crate) fn authenticate(
    aws: &AwsState,
    request: &AwsRequest<'_>,
    anonymous_allowed: bool,
    now: Timestamp,
    max_skew: Duration,
) -> Result<Caller, AwsError> {
    let protocol = request.protocol;
    let signed = match sigv4::read(request.headers, &request.query) {
        Ok(signed) => signed,
        Err(Unreadable::Missing) if anonymous_allowed => return Ok(None),
        Err(Unreadable::Missing) => return Err(protocol.missing_auth()),
        Err(Unreadable::Malformed(message)) => return Err(protocol.malformed_auth(&message)),
        Err(Unreadable::SignatureV2) => return Err(protocol.signature_v2()),
    };
    let Some(secret) = aws.credentials.lookup(signed.access_key) else {
        return Err(protocol.unknown_access_key(signed.access_key));
    };
    let Some(at) = parse_amz_date(signed.amz_date) else {
        return Err(protocol.malformed_auth(&format!(
            "X-Amz-Date {:?} must be in the ISO 8601 basic format YYYYMMDD'T'HHMMSS'Z'",
            signed.amz_date
        )));
    };
    if !signed.amz_date.starts_with(signed.date) {
        return Err(protocol.malformed_auth(&format!(
            "the credential's date {:?} is not the date of X-Amz-Date {:?}",
            signed.date, signed.amz_date
        )));
    }
    let skew = SignedDuration::try_from(max_skew).unwrap_or(SignedDuration::MAX);
    match signed.presigned_expires {
        Some(expires) => {
            let until = at + SignedDuration::from_secs(i64::try_from(expires).unwrap_or(i64::MAX));
            if now > until {
                return Err(protocol.presigned_expired(&iso8601(until), &iso8601(now)));
            }
            if at > now + skew {
                return Err(protocol.skewed(
                    signed.amz_date,
                    &amz_date(now),
                    &amz_date(now - skew),
                    max_skew,
                ));
            }
        }
        None => {
            if at < now - skew || at > now + skew {
                return Err(protocol.skewed(
                    signed.amz_date,
                    &amz_date(now),
                    &amz_date(now - skew),
                    max_skew,
                ));
            }
        }
    }
    if let Some((token, expires)) = &secret.session {
        if signed.security_token != Some(token.as_str()) {
            return Err(protocol.invalid_token(signed.access_key));
        }
        if now >= *expires {
            return Err(protocol.expired_token());
        }
    }
    let s3 = request.service == Service::S3;
    let payload_hash = payload_hash(request, s3, signed.presigned_expires.is_some())?;
    let canonical = Canonical {
        method: request.method.as_str(),
        raw_path: request.raw_path,
        raw_query: request.raw_query,
        headers: request.headers,
        authority: request.authority,
        s3,
        payload_hash: &payload_hash,
        presigned: signed.presigned_expires.is_some(),
    };
    let Some(canonical_request) = signing::canonical_request(&canonical, signed.signed_headers)
    else {
        return Err(
            protocol.malformed_auth("a header named in SignedHeaders is missing from the request")
        );
    };
    let string_to_sign = signing::string_to_sign(signed.amz_date, signed.scope, &canonical_request);
    let key = aws
        .credentials
        .signing_key(signed.access_key, &secret.secret, signed.scope);
    let expected = signing::signature(&key, &string_to_sign);
    if !signing::same_signature(&expected, signed.signature) {
        return Err(protocol.signature_mismatch(
            signed.access_key,
            &string_to_sign,
            &canonical_request,
        ));
    }
    Ok(Some(secret.principal.clone()))
}

/// The payload hash the canonical request ends with. S3 takes it from
/// `x-amz-content-sha256` (required with a header signature) and checks a hex value
/// against the body; every other service hashes the body.
fn payload_hash<'a>(
    request: &'a AwsRequest<'_>,
    s3: bool,
    presigned: bool,
) -> Result<Cow<'a, str>, AwsError> {
    if !s3 {
        return Ok(Cow::Owned(signing::sha256_hex(&request.body)));
    }
    let declared = request
        .headers
        .get("x-amz-content-sha256")
        .and_then(|v| v.to_str().ok());
    let Some(declared) = declared else {
        if presigned {
            return Ok(Cow::Borrowed(UNSIGNED_PAYLOAD));
        }
        return Err(AwsError::new(
            http::StatusCode::BAD_REQUEST,
            "InvalidRequest",
            "Missing required header for this request: x-amz-content-sha256",
        ));
    };
    if declared == UNSIGNED_PAYLOAD
        || declared == STREAMING_UNSIGNED_TRAILER
        || STREAMING_SIGNED.contains(&declared)
    {
        return Ok(Cow::Borrowed(declared));
    }
    if declared.len() != 64 || !declared.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(AwsError::new(
            http::StatusCode::BAD_REQUEST,
            "InvalidArgument",
            "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER or a valid sha256 value.",
        )
        .with_field("ArgumentName", "x-amz-content-sha256")
        .with_field("ArgumentValue", declared));
    }
    let computed = signing::sha256_hex(&request.body);
    if !declared.eq_ignore_ascii_case(&computed) {
        return Err(AwsError::new(
            http::StatusCode::BAD_REQUEST,
            "XAmzContentSHA256Mismatch",
            "The provided 'x-amz-content-sha256' header does not match what was computed.",
        )
        .with_field("ClientComputedContentSHA256", declared)
        .with_field("S3ComputedContentSHA256", computed));
    }
    Ok(Cow::Owned(declared.to_ascii_lowercase()))
}

/// Whether S3 must refuse this payload marker: signed streaming uploads are not
/// supported, and S3's own answer for an unsupported mechanism is 501 `NotImplemented`.
pub(crate) fn unsupported_streaming(
    protocol: Protocol,
    request: &AwsRequest<'_>,
) -> Option<AwsError> {
    let declared = request.headers.get("x-amz-content-sha256")?.to_str().ok()?;
    (protocol == Protocol::RestXml && STREAMING_SIGNED.contains(&declared)).then(|| {
        AwsError::new(
            http::StatusCode::NOT_IMPLEMENTED,
            "NotImplemented",
            "A header you provided implies functionality that is not implemented",
        )
        .with_field("Header", "x-amz-content-sha256")
    })
}

/// `20150830T123600Z` as a timestamp.
pub(crate) fn parse_amz_date(text: &str) -> Option<Timestamp> {
    let b = text.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i32> {
        let s = text.get(range)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let date = jiff::civil::Date::new(
        i16::try_from(num(0..4)?).ok()?,
        i8::try_from(num(4..6)?).ok()?,
        i8::try_from(num(6..8)?).ok()?,
    )
    .ok()?;
    let time = jiff::civil::Time::new(
        i8::try_from(num(9..11)?).ok()?,
        i8::try_from(num(11..13)?).ok()?,
        i8::try_from(num(13..15)?).ok()?,
        0,
    )
    .ok()?;
    date.to_datetime(time)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

/// `t` in UTC to the second, `YYYY MM DD T hh mm ss` with `date` between the date's fields
/// and `time` between the time's.
fn utc_seconds(t: Timestamp, date: &str, time: &str) -> String {
    let dt = t.to_zoned(jiff::tz::TimeZone::UTC).datetime();
    format!(
        "{:04}{date}{:02}{date}{:02}T{:02}{time}{:02}{time}{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    )
}

/// A timestamp as `20150830T123600Z`.
pub(crate) fn amz_date(t: Timestamp) -> String {
    format!("{}Z", utc_seconds(t, "", ""))
}

/// A timestamp as `2015-08-30T12:36:00Z` (AWS's XML dates; milliseconds when present).
pub(crate) fn iso8601(t: Timestamp) -> String {
    let millis = t
        .to_zoned(jiff::tz::TimeZone::UTC)
        .datetime()
        .subsec_nanosecond()
        / 1_000_000;
    let base = utc_seconds(t, "-", ":");
    if millis == 0 {
        format!("{base}Z")
    } else {
        format!("{base}.{millis:03}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amz_dates_round_trip_and_bad_ones_are_refused() {
        let t = parse_amz_date("20150830T123600Z").unwrap();
        assert_eq!(amz_date(t), "20150830T123600Z");
        assert_eq!(iso8601(t), "2015-08-30T12:36:00Z");
        for bad in [
            "20150830T123600",
            "2015-08-30T12:36:00Z",
            "20151330T123600Z",
            "2015083xT123600Z",
        ] {
            assert!(parse_amz_date(bad).is_none(), "{bad}");
        }
    }
}
