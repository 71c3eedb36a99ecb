//! Responses built from requests, as function-sdk-go's `response` package builds them.

use super::proto::{
    ResponseMeta, Result as FnResult, RunFunctionRequest, RunFunctionResponse, Severity,
};

/// A response that passes `request`'s tag, desired state and context through, with no TTL:
/// function-sdk-go's `response.To` (which adds its 60 s default TTL; callers set their own).
#[must_use]
pub fn to(request: &RunFunctionRequest) -> RunFunctionResponse {
    RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: request
                .meta
                .as_ref()
                .map(|m| m.tag.clone())
                .unwrap_or_default(),
            ttl: None,
        }),
        desired: request.desired.clone(),
        context: request.context.clone(),
        ..RunFunctionResponse::default()
    }
}

/// [`to`] with one FATAL result: `response.Fatal(response.To(req), err)`.
#[must_use]
pub fn fatal(request: RunFunctionRequest, message: &str) -> RunFunctionResponse {
    RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: request.meta.map(|m| m.tag).unwrap_or_default(),
            ttl: None,
        }),
        desired: request.desired,
        context: request.context,
        results: vec![FnResult {
            severity: Severity::Fatal as i32,
            message: message.to_owned(),
            reason: None,
            target: None,
        }],
        ..RunFunctionResponse::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::proto::{RequestMeta, State};

    fn request() -> RunFunctionRequest {
        RunFunctionRequest {
            meta: Some(RequestMeta {
                tag: "t".into(),
                capabilities: vec![1],
            }),
            desired: Some(State::default()),
            context: Some(crate::function::proto::Struct::default()),
            input: Some(crate::function::proto::Struct::default()),
            ..Default::default()
        }
    }

    #[test]
    fn a_response_to_a_request_keeps_its_tag_desired_state_and_context_and_nothing_else() {
        let response = to(&request());
        assert_eq!(
            response.meta,
            Some(ResponseMeta {
                tag: "t".into(),
                ttl: None
            })
        );
        assert_eq!(response.desired, Some(State::default()));
        assert_eq!(
            response.context,
            Some(crate::function::proto::Struct::default())
        );
        assert_eq!(response.output, None);
        assert!(response.results.is_empty());
    }

    #[test]
    fn a_fatal_response_is_the_same_with_one_fatal_result() {
        let mut expected = to(&request());
        expected.results.push(FnResult {
            severity: Severity::Fatal as i32,
            message: "bad".into(),
            reason: None,
            target: None,
        });
        assert_eq!(fatal(request(), "bad"), expected);
    }
}
