//! Objects, enough for buckets to hold something: PutObject (plain, or aws-chunked with
//! unsigned chunks and a trailing checksum), GetObject, HeadObject and DeleteObject.
//!
//! # Semantics
//! - An aws-chunked body (`x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER`) is
//!   decoded and its length checked against `x-amz-decoded-content-length`; signed chunks
//!   are refused before this with S3's 501 `NotImplemented` (see `aws/auth.rs`).
//! - A CRC32, CRC32C, SHA-1 or SHA-256 checksum, in a header or a trailer, is checked
//!   (400 `BadDigest` when wrong); CRC64NVME is accepted unchecked.
//! - `Content-MD5`, when sent, is checked against the payload's MD5 (400 `InvalidDigest`
//!   for a value that is not one, 400 `BadDigest` for another MD5).
//! - The ETag is the payload's MD5 in hex, quoted, as S3 answers for a single-part upload.
//! - Objects live in memory, at most [`crate::MAX_BODY`] bytes each.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use md5::Digest as _;

use super::super::accounts::Principal;
use super::super::auth::STREAMING_UNSIGNED_TRAILER;
use super::super::envelope::AwsError;
use super::buckets::{owned, owned_mut};
use super::store::{Object, Store};
use super::{Ctx, empty};
use crate::http::respond::ResponseBody;
use crate::service::S3Operation;

pub(crate) fn handle(
    ctx: &Ctx<'_>,
    store: &mut Store,
    caller: &Arc<Principal>,
    op: S3Operation,
    bucket: &str,
    key: &str,
) -> Result<Response<ResponseBody>, AwsError> {
    if key.len() > 1024 {
        return Err(AwsError::new(
            StatusCode::BAD_REQUEST,
            "KeyTooLongError",
            "Your key is too long",
        )
        .with_field("MaxSizeAllowed", "1024")
        .with_field("Size", key.len().to_string()));
    }
    match op {
        S3Operation::PutObject => {
            let (data, trailers) = payload(ctx)?;
            check_checksums(
                ctx.request
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.to_str().unwrap_or(""))),
                &data,
            )?;
            check_checksums(
                trailers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                &data,
            )?;
            let md5 = md5::Md5::digest(&data);
            check_content_md5(ctx.request.headers, &md5)?;
            let target = owned_mut(store, caller, bucket)?;
            let mut etag = String::with_capacity(34);
            etag.push('"');
            super::super::signing::push_hex(&mut etag, &md5);
            etag.push('"');
            let content_type = ctx
                .request
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            target.objects.insert(
                key.to_owned(),
                Object {
                    data,
                    etag: etag.clone(),
                    last_modified: ctx.now,
                    content_type,
                },
            );
            let mut response = empty(ctx, StatusCode::OK);
            if let Ok(etag) = HeaderValue::from_str(&etag) {
                response.headers_mut().insert(header::ETAG, etag);
            }
            Ok(response)
        }
        S3Operation::DeleteObject => {
            owned_mut(store, caller, bucket)?.objects.remove(key);
            Ok(empty(ctx, StatusCode::NO_CONTENT))
        }
        _ => {
            let object = owned(store, caller, bucket)?
                .objects
                .get(key)
                .ok_or_else(|| {
                    AwsError::new(
                        StatusCode::NOT_FOUND,
                        "NoSuchKey",
                        "The specified key does not exist.",
                    )
                    .with_field("Key", key)
                })?;
            let content_type = object
                .content_type
                .clone()
                .unwrap_or_else(|| "binary/octet-stream".to_owned());
            let mut response = super::super::envelope::respond(
                &ctx.reply,
                StatusCode::OK,
                "",
                object.data.clone(),
            );
            let headers = response.headers_mut();
            if let Ok(v) = HeaderValue::from_str(&content_type) {
                headers.insert(header::CONTENT_TYPE, v);
            }
            if let Ok(v) = HeaderValue::from_str(&object.etag) {
                headers.insert(header::ETAG, v);
            }
            if let Ok(v) = HeaderValue::from_str(&http_date(object.last_modified)) {
                headers.insert(header::LAST_MODIFIED, v);
            }
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(object.data.len()));
            Ok(response)
        }
    }
}

/// The object's bytes and trailing headers: the body itself, or its aws-chunked decoding.
fn payload(ctx: &Ctx<'_>) -> Result<(Bytes, Trailers), AwsError> {
    let headers = ctx.request.headers;
    let streaming = headers
        .get("x-amz-content-sha256")
        .is_some_and(|v| v.as_bytes() == STREAMING_UNSIGNED_TRAILER.as_bytes());
    if !streaming {
        return Ok((ctx.request.body.clone(), Vec::new()));
    }
    let incomplete = || {
        AwsError::new(
            StatusCode::BAD_REQUEST,
            "IncompleteBody",
            "The request body terminated unexpectedly",
        )
    };
    let (data, trailers) = decode_chunked(&ctx.request.body).ok_or_else(incomplete)?;
    let declared = headers
        .get("x-amz-decoded-content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    match declared {
        Some(n) if n == data.len() => Ok((Bytes::from(data), trailers)),
        Some(_) => Err(incomplete()),
        None => Err(AwsError::new(
            StatusCode::LENGTH_REQUIRED,
            "MissingContentLength",
            "You must provide the Content-Length HTTP header.",
        )),
    }
}

/// The trailing headers of an aws-chunked body: lower-case names and their values.
type Trailers = Vec<(String, String)>;

/// Decodes `size[;ext]\r\ndata\r\n…0\r\ntrailer:value\r\n\r\n`.
fn decode_chunked(body: &[u8]) -> Option<(Vec<u8>, Trailers)> {
    let mut data = Vec::with_capacity(body.len());
    let mut rest = body;
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let line = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(line.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            break;
        }
        if rest.len() < size + 2 || &rest[size..size + 2] != b"\r\n" {
            return None;
        }
        data.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
    let mut trailers = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let line = std::str::from_utf8(&rest[..line_end]).ok()?;
        rest = &rest[line_end + 2..];
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        trailers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    Some((data, trailers))
}

/// Checks `Content-MD5`, if sent, against the MD5 of the payload, as S3 does: a value that
/// is not the base64 of 16 bytes is 400 `InvalidDigest`; another MD5 is 400 `BadDigest`,
/// naming the MD5 expected (the header's, in hex) and the one calculated (in base64).
pub(crate) fn check_content_md5(headers: &HeaderMap, md5: &[u8]) -> Result<(), AwsError> {
    let Some(value) = headers.get("content-md5") else {
        return Ok(());
    };
    let expected = BASE64
        .decode(value.as_bytes())
        .ok()
        .filter(|digest| digest.len() == 16)
        .ok_or_else(|| {
            AwsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidDigest",
                "The Content-MD5 you specified was invalid.",
            )
        })?;
    if expected != md5 {
        let mut expected_hex = String::with_capacity(32);
        super::super::signing::push_hex(&mut expected_hex, &expected);
        return Err(AwsError::new(
            StatusCode::BAD_REQUEST,
            "BadDigest",
            "The Content-MD5 you specified did not match what we received.",
        )
        .with_field("CalculatedDigest", BASE64.encode(md5))
        .with_field("ExpectedDigest", expected_hex));
    }
    Ok(())
}

/// Checks every `x-amz-checksum-<algorithm>` among `fields` against `data`.
fn check_checksums<'a>(
    fields: impl Iterator<Item = (&'a str, &'a str)>,
    data: &[u8],
) -> Result<(), AwsError> {
    for (name, value) in fields {
        let Some(algorithm) = name.strip_prefix("x-amz-checksum-") else {
            continue;
        };
        let computed = match algorithm {
            "crc32" => BASE64.encode(crc32(data, 0xEDB8_8320).to_be_bytes()),
            "crc32c" => BASE64.encode(crc32(data, 0x82F6_3B78).to_be_bytes()),
            "sha256" => BASE64.encode(ring::digest::digest(&ring::digest::SHA256, data).as_ref()),
            "sha1" => BASE64.encode(
                ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, data).as_ref(),
            ),
            _ => continue,
        };
        if computed != value {
            return Err(AwsError::new(
                StatusCode::BAD_REQUEST,
                "BadDigest",
                format!(
                    "The {} you specified did not match the calculated checksum.",
                    algorithm.to_ascii_uppercase()
                ),
            ));
        }
    }
    Ok(())
}

/// A reflected CRC-32 with this polynomial (IEEE: `0xEDB88320`; Castagnoli: `0x82F63B78`).
fn crc32(data: &[u8], polynomial: u32) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ polynomial
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// An HTTP date: `Tue, 24 Nov 2026 13:48:44 GMT`.
fn http_date(t: jiff::Timestamp) -> String {
    let dt = t.to_zoned(jiff::tz::TimeZone::UTC);
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        DAYS[dt.weekday().to_monday_zero_offset() as usize],
        dt.day(),
        MONTHS[(dt.month() - 1) as usize],
        dt.year(),
        dt.hour(),
        dt.minute(),
        dt.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_and_crc32c_match_their_check_values() {
        assert_eq!(crc32(b"123456789", 0xEDB8_8320), 0xCBF4_3926);
        assert_eq!(crc32(b"123456789", 0x82F6_3B78), 0xE306_9283);
    }

    #[test]
    fn an_aws_chunked_body_decodes_into_its_data_and_trailers() {
        let body = b"5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n";
        let (data, trailers) = decode_chunked(body).unwrap();
        assert_eq!(data, b"hello world");
        assert_eq!(
            trailers,
            [("x-amz-checksum-crc32".to_owned(), "DUoRhQ==".to_owned())]
        );
        assert!(
            check_checksums(
                trailers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                &data
            )
            .is_ok()
        );
        assert!(
            check_checksums([("x-amz-checksum-crc32", "AAAAAA==")].into_iter(), &data).is_err()
        );
        assert!(decode_chunked(b"5\r\nhel").is_none());
    }

    #[test]
    fn http_dates_are_rfc_1123() {
        let t: jiff::Timestamp = "2026-11-24T13:48:44Z".parse().unwrap();
        assert_eq!(http_date(t), "Tue, 24 Nov 2026 13:48:44 GMT");
    }
}
