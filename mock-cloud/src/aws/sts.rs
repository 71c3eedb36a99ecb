//! AWS STS (awsQuery, version 2011-06-15): GetCallerIdentity, AssumeRole and
//! AssumeRoleWithWebIdentity, issuing temporary credentials that SigV4 then accepts.
//!
//! # Semantics
//! - A role ARN must be `arn:aws:iam::<12 digits>:role/<name>`; its account ID must be one
//!   of the config's, and the credentials act as that account (cross-account roles are
//!   allowed; there are no IAM policies). Any other account ID is refused with 403
//!   `AccessDenied`.
//! - `DurationSeconds` is 900 to 43,200 (default 3,600); the credentials expire then, on
//!   the cloud's clock. Roles' `MaxSessionDuration` is not modelled.
//! - `AssumeRoleWithWebIdentity` needs no signature. Its token must be a JWT (three
//!   base64url parts, a JSON payload); its signature is not checked, its `exp` is. The
//!   answer carries the token's `sub`, `aud` and `iss`.
//! - Parameter errors are STS's `ValidationError` ("1 validation error detected: …").

use base64::Engine as _;
use http::{Method, Response, StatusCode};

use super::accounts::{Principal, pseudo_id};
use super::auth::iso8601;
use super::contract::{AwsRequest, Ctx, Routed, Unrouted};
use super::envelope::{self, AwsError};
use super::params;
use super::xml::escape;
use crate::http::respond::ResponseBody;
use crate::service::{Operation, Service, StsOperation};

const VERSION: &str = "2011-06-15";

/// The request's parameters: the form body of a POST, the query of a GET.
fn parameters(request: &AwsRequest<'_>) -> Vec<(String, String)> {
    if request.method == Method::POST {
        params::pairs(&request.body)
    } else {
        params::owned(&request.query)
    }
}

pub(crate) fn route(request: &AwsRequest<'_>) -> Result<Routed, Unrouted> {
    let params = parameters(request);
    let action = params::get(&params, "Action").unwrap_or_default();
    let Some(op) = StsOperation::parse(action) else {
        let name = if action.is_empty() { "" } else { action };
        return Err(Unrouted::new(
            request.protocol.unknown_operation(name, VERSION),
        ));
    };
    let name = params::get(&params, "RoleArn")
        .unwrap_or_default()
        .to_owned();
    Ok(Routed {
        op: Operation::from(op),
        class: 0,
        resource: String::new(),
        name,
        anonymous: op == StsOperation::AssumeRoleWithWebIdentity,
    })
}

pub(crate) fn handle(ctx: &Ctx<'_>, routed: &Routed) -> Result<Response<ResponseBody>, AwsError> {
    let params = parameters(ctx.request);
    let op = StsOperation::of(routed.op).unwrap_or(StsOperation::GetCallerIdentity);
    let result = match op {
        StsOperation::GetCallerIdentity => {
            let Some(caller) = ctx.caller else {
                return Err(ctx.request.protocol.missing_auth());
            };
            format!(
                "<Arn>{}</Arn><UserId>{}</UserId><Account>{}</Account>",
                escape(&caller.arn),
                escape(&caller.user_id),
                caller.account_id
            )
        }
        StsOperation::AssumeRole => {
            let role = Role::read(ctx, &params)?;
            let issued = role.issue(ctx);
            format!("{}{}", role.assumed_user(), credentials(&issued))
        }
        StsOperation::AssumeRoleWithWebIdentity => {
            let token = required(&params, "WebIdentityToken", "webIdentityToken")?;
            let claims = WebIdentity::read(token, ctx.now)?;
            let role = Role::read(ctx, &params)?;
            let issued = role.issue(ctx);
            format!(
                "<SubjectFromWebIdentityToken>{}</SubjectFromWebIdentityToken><Audience>{}</Audience>{}{}<Provider>{}</Provider>",
                escape(&claims.subject),
                escape(&claims.audience),
                role.assumed_user(),
                credentials(&issued),
                escape(&claims.issuer)
            )
        }
    };
    let name = op.name();
    let body = format!(
        "<{name}Response xmlns=\"{}\">\n  <{name}Result>{result}</{name}Result>\n  <ResponseMetadata>\n    <RequestId>{}</RequestId>\n  </ResponseMetadata>\n</{name}Response>\n",
        Service::Sts.xml_namespace(),
        ctx.reply.request_id.id()
    );
    Ok(envelope::respond(
        &ctx.reply,
        StatusCode::OK,
        "text/xml",
        body,
    ))
}

/// The account an anonymous call acted as: the account of the role it assumed.
pub(crate) fn assumed_account(ctx: &Ctx<'_>, routed: &Routed) -> Option<std::sync::Arc<str>> {
    if routed.op != Operation::from(StsOperation::AssumeRoleWithWebIdentity) {
        return None;
    }
    let (account_id, _) = role_parts(&routed.name)?;
    ctx.state().credentials.account_of(account_id)
}

fn credentials(issued: &super::accounts::Issued) -> String {
    format!(
        "<Credentials><AccessKeyId>{}</AccessKeyId><SecretAccessKey>{}</SecretAccessKey><SessionToken>{}</SessionToken><Expiration>{}</Expiration></Credentials>",
        issued.access_key,
        escape(&issued.secret),
        escape(&issued.token),
        iso8601(issued.expires)
    )
}

fn validation(message: String) -> AwsError {
    AwsError::new(
        StatusCode::BAD_REQUEST,
        "ValidationError",
        format!("1 validation error detected: {message}"),
    )
}

fn required<'a>(
    params: &'a [(String, String)],
    key: &str,
    member: &str,
) -> Result<&'a str, AwsError> {
    params::get(params, key).ok_or_else(|| {
        validation(format!(
            "Value null at '{member}' failed to satisfy constraint: Member must not be null"
        ))
    })
}

/// `arn:aws:iam::<account id>:role/<path/name>` → (account ID, role name).
fn role_parts(arn: &str) -> Option<(&str, &str)> {
    let rest = arn.strip_prefix("arn:aws:iam::")?;
    let (account, resource) = rest.split_once(':')?;
    let name = resource.strip_prefix("role/")?.rsplit('/').next()?;
    (crate::config::is_account_id(account) && !name.is_empty()).then_some((account, name))
}

/// A role to assume, read and checked.
struct Role {
    arn: String,
    name: String,
    session: String,
    account: String,
    account_id: String,
    duration: i64,
}

impl Role {
    fn read(ctx: &Ctx<'_>, params: &[(String, String)]) -> Result<Role, AwsError> {
        let arn = required(params, "RoleArn", "roleArn")?;
        let session = required(params, "RoleSessionName", "roleSessionName")?;
        if !(20..=2048).contains(&arn.len()) {
            return Err(validation(format!(
                "Value '{arn}' at 'roleArn' failed to satisfy constraint: Member must have length greater than or equal to 20"
            )));
        }
        let valid_session = (2..=64).contains(&session.len())
            && session
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_+=,.@-".contains(&b));
        if !valid_session {
            return Err(validation(format!(
                "Value '{session}' at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]* and have length from 2 to 64"
            )));
        }
        let duration = match params::get(params, "DurationSeconds") {
            None => 3_600,
            Some(text) => match text.parse::<i64>() {
                Ok(d) if (900..=43_200).contains(&d) => d,
                _ => {
                    return Err(validation(format!(
                        "Value '{text}' at 'durationSeconds' failed to satisfy constraint: Member must have value between 900 and 43200"
                    )));
                }
            },
        };
        let Some((account_id, name)) = role_parts(arn) else {
            return Err(validation(format!(
                "Value '{arn}' at 'roleArn' failed to satisfy constraint: Member must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)"
            )));
        };
        let Some(account) = ctx.state().credentials.account_of(account_id) else {
            let caller = ctx
                .caller
                .as_ref()
                .map_or_else(|| "an anonymous caller".to_owned(), |c| c.arn.clone());
            return Err(AwsError::new(
                StatusCode::FORBIDDEN,
                "AccessDenied",
                format!(
                    "User: {caller} is not authorized to perform: sts:AssumeRole on resource: {arn}"
                ),
            ));
        };
        Ok(Role {
            arn: arn.to_owned(),
            name: name.to_owned(),
            session: session.to_owned(),
            account: account.to_string(),
            account_id: account_id.to_owned(),
            duration,
        })
    }

    fn role_id(&self) -> String {
        format!("AROA{}", pseudo_id(&self.arn, 17))
    }

    fn session_arn(&self) -> String {
        format!(
            "arn:aws:sts::{}:assumed-role/{}/{}",
            self.account_id, self.name, self.session
        )
    }

    fn assumed_user(&self) -> String {
        format!(
            "<AssumedRoleUser><AssumedRoleId>{}:{}</AssumedRoleId><Arn>{}</Arn></AssumedRoleUser>",
            self.role_id(),
            escape(&self.session),
            escape(&self.session_arn())
        )
    }

    fn issue(&self, ctx: &Ctx<'_>) -> super::accounts::Issued {
        let principal = Principal {
            account: self.account.as_str().into(),
            account_id: self.account_id.as_str().into(),
            arn: self.session_arn(),
            user_id: format!("{}:{}", self.role_id(), self.session),
        };
        let expires = ctx.now + jiff::SignedDuration::from_secs(self.duration);
        ctx.state().credentials.issue(principal, ctx.now, expires)
    }
}

/// The claims of a web identity token that STS reports.
struct WebIdentity {
    subject: String,
    audience: String,
    issuer: String,
}

impl WebIdentity {
    fn read(token: &str, now: jiff::Timestamp) -> Result<WebIdentity, AwsError> {
        let invalid = || {
            AwsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidIdentityToken",
                "The web identity token that was passed could not be validated by AWS. Get a new identity token from the identity provider and then retry the request.",
            )
        };
        let parts: Vec<&str> = token.split('.').collect();
        let [_, payload, _] = parts[..] else {
            return Err(invalid());
        };
        // JWTs are unpadded base64url; padding is tolerated.
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD_INDIFFERENT
            .decode(payload)
            .map_err(|_| invalid())?;
        let claims: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
        let text = |key: &str| claims.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        let audience = match claims.get("aud") {
            Some(serde_json::Value::String(aud)) => aud.clone(),
            Some(serde_json::Value::Array(auds)) => auds
                .first()
                .and_then(|a| a.as_str())
                .unwrap_or_default()
                .to_owned(),
            _ => String::new(),
        };
        if let Some(exp) = claims.get("exp").and_then(serde_json::Value::as_i64) {
            let expires = jiff::Timestamp::from_second(exp).map_err(|_| invalid())?;
            if now >= expires {
                return Err(AwsError::new(
                    StatusCode::BAD_REQUEST,
                    "ExpiredTokenException",
                    format!(
                        "Token expired: current date/time {} must be before the expiration date/time {}",
                        now.as_second(),
                        exp
                    ),
                ));
            }
        }
        let issuer = text("iss").unwrap_or_default();
        Ok(WebIdentity {
            subject: text("sub").ok_or_else(invalid)?,
            audience,
            issuer: issuer
                .strip_prefix("https://")
                .unwrap_or(&issuer)
                .to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_arns_give_their_account_and_name() {
        assert_eq!(
            role_parts("arn:aws:iam::123456789012:role/path/to/deployer"),
            Some(("123456789012", "deployer"))
        );
        assert_eq!(role_parts("arn:aws:iam::1234:role/x"), None);
        assert_eq!(role_parts("arn:aws:iam::123456789012:user/x"), None);
    }

    #[test]
    fn web_identity_tokens_give_their_claims_and_expire() {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"sub":"system:serviceaccount:ns:sa","aud":["sts.amazonaws.com"],"iss":"https://oidc.example","exp":2000000000}"#);
        let token = format!("e30.{payload}.sig");
        let now = jiff::Timestamp::from_second(1_900_000_000).unwrap();
        let claims = WebIdentity::read(&token, now).ok().unwrap();
        assert_eq!(claims.subject, "system:serviceaccount:ns:sa");
        assert_eq!(claims.audience, "sts.amazonaws.com");
        assert_eq!(claims.issuer, "oidc.example");
        let late = jiff::Timestamp::from_second(2_000_000_001).unwrap();
        let err = WebIdentity::read(&token, late).err().unwrap();
        assert_eq!(err.code, "ExpiredTokenException");
        let err = WebIdentity::read("not-a-jwt", now).err().unwrap();
        assert_eq!(err.code, "InvalidIdentityToken");
    }
}
