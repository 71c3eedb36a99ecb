//! Which requests are AWS requests, and to which service they go.
//!
//! A request is an AWS request if it carries a SigV4 signature (an `Authorization:
//! AWS4-HMAC-SHA256 …` header or a presigned URL's `X-Amz-Credential`), or if it is an
//! unsigned form `POST /` (the query protocols' shape; STS `AssumeRoleWithWebIdentity`
//! needs no signature). Its service is the credential scope's service name; an unsigned
//! form post goes to STS; a request signed with S3's legacy Signature Version 2 goes to S3,
//! which refuses it. Everything else (bearer tokens, the admin API) is not.

use http::request::Parts;
use http::{Method, header};

use super::sigv4;
use crate::service::Service;

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Destination {
    /// Not an AWS request: the generic API's routing decides.
    NotAws,
    /// An AWS service mock-cloud speaks.
    Service(Service),
    /// Signed for a service mock-cloud does not speak.
    UnknownService(String),
}

/// Where `parts` goes, by its signature's credential scope.
pub(crate) fn destination(parts: &Parts) -> Destination {
    if let Some(name) = sigv4::scope_service(&parts.headers, parts.uri.query()) {
        return match Service::from_signing_name(name) {
            Some(service) => Destination::Service(service),
            None => Destination::UnknownService(name.to_owned()),
        };
    }
    if sigv4::is_signature_v2(&parts.headers, parts.uri.query()) {
        // Signature Version 2 was S3's; S3 refuses it in its own envelope.
        return Destination::Service(Service::S3);
    }
    let form = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let unsigned = !parts.headers.contains_key(header::AUTHORIZATION);
    if parts.method == Method::POST && parts.uri.path() == "/" && form && unsigned {
        return Destination::Service(Service::Sts);
    }
    Destination::NotAws
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: &str, uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut builder = http::Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        builder.body(()).unwrap().into_parts().0
    }

    #[test]
    fn the_credential_scope_names_the_service() {
        let auth = "AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=0";
        assert_eq!(
            destination(&parts("HEAD", "/b", &[("authorization", auth)])),
            Destination::Service(Service::S3)
        );
        let iam = auth.replace("/s3/", "/iam/");
        assert_eq!(
            destination(&parts("POST", "/", &[("authorization", &iam)])),
            Destination::UnknownService("iam".into())
        );
        let presigned = "/b?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20260101%2Fus-east-1%2Fs3%2Faws4_request";
        assert_eq!(
            destination(&parts("HEAD", presigned, &[])),
            Destination::Service(Service::S3)
        );
    }

    #[test]
    fn bearer_requests_are_not_aws_and_unsigned_form_posts_go_to_sts() {
        let bearer = [("authorization", "Bearer default")];
        assert_eq!(
            destination(&parts("GET", "/v1/accounts/a/buckets", &bearer)),
            Destination::NotAws
        );
        let form = [(
            "content-type",
            "application/x-www-form-urlencoded; charset=utf-8",
        )];
        assert_eq!(
            destination(&parts("POST", "/", &form)),
            Destination::Service(Service::Sts)
        );
        assert_eq!(destination(&parts("GET", "/", &[])), Destination::NotAws);
    }
}
