//! The writing verbs: create, update, patch, delete and deletecollection.

use std::sync::Arc;

use http::{Response, StatusCode};
use serde_json::Value;

use super::{Context, Request, decode, dry_run};
use crate::error::ApiError;
use crate::events;
use crate::object::StoredObject;
use crate::patch::{self, PatchError};
use crate::protobuf;
use crate::registry::{ResourceKind, View};
use crate::response::{ResponseBody, with_warnings};
use crate::schema::FieldValidation;
use crate::ssa;
use crate::store::{Fields, Preconditions, Propagation, Subresource, WriteOptions, Written};

impl Context<'_> {
    pub(super) fn create(&self, request: &Request<'_>) -> Result<Response<ResponseBody>, ApiError> {
        let body = self.incoming(decode(self.kind, request.content_type, &request.body)?)?;
        let options = client_write(request)?;
        let written = self.store_write(options.dry_run, || {
            self.server
                .shared
                .store
                .create(self.store_kind, self.namespace(), body, options)
        })?;
        Ok(self.written(StatusCode::CREATED, &written))
    }

    pub(super) fn update(
        &self,
        request: &Request<'_>,
        name: &str,
    ) -> Result<Response<ResponseBody>, ApiError> {
        let body = self.incoming(decode(self.kind, request.content_type, &request.body)?)?;
        let options = WriteOptions {
            require_resource_version: self.kind.custom,
            create_if_missing: false,
            ..client_write(request)?
        };
        let written = self.update_stored(name, options, |_| Ok(body))?;
        Ok(self.written(StatusCode::OK, &written))
    }

    pub(super) fn patch(
        &self,
        request: &Request<'_>,
        name: &str,
    ) -> Result<Response<ResponseBody>, ApiError> {
        let media = request
            .content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim();
        let parse = |body: &[u8]| -> Result<Value, ApiError> {
            serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!("the patch could not be decoded as JSON: {e}"))
            })
        };
        let mut apply = false;
        let mut patch_value = match media {
            "application/merge-patch+json" | "application/json-patch+json" => parse(&request.body)?,
            "application/strategic-merge-patch+json" if self.kind.custom => {
                return Err(ApiError::UnsupportedMediaType {
                    accepted: "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                        .into(),
                });
            }
            "application/strategic-merge-patch+json" => parse(&request.body)?,
            "application/apply-patch+yaml" => {
                if request.query.get("fieldManager").is_none_or(str::is_empty) {
                    return Err(patch_options_invalid(
                        "FieldValueRequired",
                        "fieldManager",
                        "Required value: is required for apply patch",
                    ));
                }
                apply = true;
                let text = std::str::from_utf8(&request.body)
                    .map_err(|_| ApiError::bad_request("the body is not UTF-8"))?;
                super::apply_body::parse(text).map_err(|e| {
                    ApiError::bad_request(format!(
                        "the apply configuration could not be decoded: {e}"
                    ))
                })?
            }
            _ => {
                return Err(ApiError::UnsupportedMediaType {
                    accepted: "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json".into(),
                });
            }
        };
        if !apply && request.query.get("force").is_some() {
            return Err(patch_options_invalid(
                "FieldValueForbidden",
                "force",
                "Forbidden: may not be specified for non-apply patch",
            ));
        }
        let json_patch = media == "application/json-patch+json";
        let strategic = media == "application/strategic-merge-patch+json";
        if !json_patch && !patch_value.is_object() {
            return Err(ApiError::bad_request("the patch must be a JSON object"));
        }
        if apply {
            patch_value = self.incoming(patch_value)?;
        }
        let manager = manager(request);
        let options = WriteOptions {
            dry_run: dry_run(request.query),
            require_resource_version: false,
            create_if_missing: apply,
            field_validation: FieldValidation::parse(request.query.get("fieldValidation"))?,
            fields: if apply {
                Fields::Applied
            } else {
                Fields::Update(manager)
            },
        };
        let force = request.query.bool_option("force") == Some(true);
        let api_version = self.kind.api_version();
        let now = self.server.shared.store.clock().rfc3339();
        let writer = ssa::Writer {
            manager,
            api_version: &api_version,
            kind: &self.store_kind.kind,
            status: self.subresource == Subresource::Status,
            status_subresource: self.store_kind.status_subresource,
            shape: ssa::Shape::of(self.store_kind),
            now: &now,
        };
        let core_view = self.kind.view == View::CoreEvents;
        // The stored object's resourceVersion before the patch: the same after it is a
        // no-op (the journal counts those apart).
        let mut before: Option<u64> = None;
        let written = self.update_stored(name, options, |old| {
            before = old.and_then(|o| o["metadata"]["resourceVersion"].as_str()?.parse().ok());
            if apply {
                if let Some(meta) = patch_value
                    .get_mut("metadata")
                    .and_then(Value::as_object_mut)
                {
                    // An apply configuration does not carry a resourceVersion
                    // precondition unless it sets one explicitly.
                    meta.remove("resourceVersion");
                }
                return ssa::apply(&writer, old, &patch_value, force).map_err(ssa::api_error);
            }
            let Some(old) = old else {
                return Ok(patch_value.clone());
            };
            let mut target = if core_view {
                events::to_core(old)
            } else {
                old.clone()
            };
            if json_patch {
                patch::json_patch(&mut target, &patch_value).map_err(patch_error)?;
            } else if strategic {
                crate::strategic::apply(&self.store_kind.kind, &mut target, &patch_value)
                    .map_err(strategic_error)?;
            } else {
                patch::merge_patch(&mut target, &patch_value);
            }
            Ok(if core_view {
                events::from_core(&target)
            } else {
                target
            })
        })?;
        let code = if written.created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        let mut response = self.written(code, &written);
        response
            .extensions_mut()
            .insert(crate::journal::WriteOutcome {
                changed: written.created || before != Some(written.object.resource_version),
            });
        Ok(response)
    }

    /// Updates (or, as `options` allow, creates) the object `name` of this request's kind,
    /// namespace and subresource to what `change` makes of the stored one, through
    /// [`Context::store_write`].
    fn update_stored(
        &self,
        name: &str,
        options: WriteOptions<'_>,
        change: impl FnOnce(Option<&Value>) -> Result<Value, ApiError>,
    ) -> Result<Written, ApiError> {
        self.store_write(options.dry_run, || {
            self.server.shared.store.update(
                self.store_kind,
                self.namespace(),
                name,
                self.subresource,
                options,
                change,
            )
        })
    }

    /// Runs a store write; a CRD's (not a dry run's) reaches the server's kinds before
    /// any request can look them up ([`ApiServer::write_crd`](crate::ApiServer::write_crd)).
    fn store_write(
        &self,
        dry_run: bool,
        write: impl FnOnce() -> Result<Written, ApiError>,
    ) -> Result<Written, ApiError> {
        if self.is_crd() && !dry_run {
            self.server.write_crd(write)
        } else {
            write()
        }
    }

    /// The answer to a write: the object with `code` and the write's warnings.
    fn written(&self, code: StatusCode, written: &Written) -> Response<ResponseBody> {
        with_warnings(
            self.renderer.object_response(code, &written.object),
            &written.warnings,
        )
    }

    fn delete_options(
        &self,
        request: &Request<'_>,
    ) -> Result<(Preconditions, bool, Propagation), ApiError> {
        let mut dry = dry_run(request.query);
        let mut preconditions = Preconditions::default();
        let mut policy = request.query.get("propagationPolicy").map(str::to_owned);
        let mut orphan = request.query.bool_option("orphanDependents");
        if !request.body.iter().all(u8::is_ascii_whitespace) {
            let options: Value = if request.body.starts_with(b"k8s\0") {
                protobuf::decode_delete_options(&request.body).map_err(|e| {
                    ApiError::bad_request(format!(
                        "the delete options could not be decoded: {}",
                        super::error_chain(&e)
                    ))
                })?
            } else {
                serde_json::from_slice(&request.body).map_err(|e| {
                    ApiError::bad_request(format!("the delete options could not be decoded: {e}"))
                })?
            };
            let pre = &options["preconditions"];
            preconditions.uid = pre["uid"].as_str().map(str::to_owned);
            preconditions.resource_version = pre["resourceVersion"].as_str().map(str::to_owned);
            dry |= options["dryRun"]
                .as_array()
                .is_some_and(|a| a.iter().any(|v| v == "All"));
            if let Some(p) = options["propagationPolicy"].as_str() {
                policy = Some(p.to_owned());
            }
            if let Some(o) = options["orphanDependents"].as_bool() {
                orphan = Some(o);
            }
        }
        let propagation = match (policy.as_deref(), orphan) {
            (Some(_), Some(_)) => {
                return Err(ApiError::bad_request(
                    "orphanDependents and propagationPolicy cannot both be set",
                ));
            }
            (Some("Foreground"), None) => Propagation::Foreground,
            (Some("Orphan"), None) | (None, Some(true)) => Propagation::Orphan,
            (Some("Background") | None, _) => Propagation::Background,
            (Some(other), None) => {
                return Err(ApiError::bad_request(format!(
                    "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: {other:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""
                )));
            }
        };
        Ok((preconditions, dry, propagation))
    }

    pub(super) fn delete(
        &self,
        request: &Request<'_>,
        name: &str,
    ) -> Result<Response<ResponseBody>, ApiError> {
        let (preconditions, dry, policy) = self.delete_options(request)?;
        let object = self.store_delete(dry, || {
            self.server.shared.store.delete(
                self.store_kind,
                self.namespace(),
                name,
                &preconditions,
                dry,
                policy,
            )
        })?;
        Ok(self.renderer.object_response(StatusCode::OK, &object))
    }

    /// Runs a store delete and what follows it (not in a dry run): a namespace's contents
    /// go, a CRD's kinds stop being served before any request can look them up
    /// ([`ApiServer::delete_crd`](crate::ApiServer::delete_crd)).
    fn store_delete(
        &self,
        dry_run: bool,
        delete: impl FnOnce() -> Result<Arc<StoredObject>, ApiError>,
    ) -> Result<Arc<StoredObject>, ApiError> {
        if dry_run {
            return delete();
        }
        if self.is_crd() {
            return self.server.delete_crd(delete);
        }
        let object = delete()?;
        if self.kind.group.is_empty()
            && self.kind.plural == "namespaces"
            && object.to_value()["metadata"]
                .get("deletionTimestamp")
                .is_none()
        {
            let kinds: Vec<Arc<ResourceKind>> = self.server.registry().all().cloned().collect();
            self.server
                .shared
                .store
                .delete_namespace_contents(&kinds, &object.name);
        }
        Ok(object)
    }

    pub(super) fn delete_collection(
        &self,
        request: &Request<'_>,
    ) -> Result<Response<ResponseBody>, ApiError> {
        let filter = self.filter(request.query, None)?;
        let (_, dry, policy) = self.delete_options(request)?;
        let store = &self.server.shared.store;
        let (items, _) = store.list(self.store_kind, self.path.namespace.as_deref(), |o| {
            filter(o)
        });
        let mut deleted = Vec::with_capacity(items.len());
        for item in items {
            // An object deleted concurrently is simply not in the answer.
            if let Ok(object) = self.store_delete(dry, || {
                store.delete(
                    self.store_kind,
                    &item.namespace,
                    &item.name,
                    &Preconditions::default(),
                    dry,
                    policy,
                )
            }) {
                deleted.push(object);
            }
        }
        Ok(self
            .renderer
            .list_response(&deleted, store.resource_version(), None, None))
    }
}

/// The field manager of a write: `fieldManager`, else the user agent's program name.
/// The options of a client's create or update (not an apply): `dryRun`, `fieldValidation`
/// and the field manager.
fn client_write<'r>(request: &Request<'r>) -> Result<WriteOptions<'r>, ApiError> {
    Ok(WriteOptions {
        dry_run: dry_run(request.query),
        field_validation: FieldValidation::parse(request.query.get("fieldValidation"))?,
        fields: Fields::Update(manager(request)),
        ..WriteOptions::default()
    })
}

fn manager<'r>(request: &Request<'r>) -> &'r str {
    match request.query.get("fieldManager") {
        Some(manager) if !manager.is_empty() => manager,
        _ => ssa::manager_from_user_agent(request.user_agent),
    }
}

/// `ValidatePatchOptions`' answer: 422 on `PatchOptions.meta.k8s.io`.
fn patch_options_invalid(reason: &'static str, field: &str, message: &str) -> ApiError {
    ApiError::Invalid {
        kind: "PatchOptions.meta.k8s.io".into(),
        name: String::new(),
        causes: vec![crate::error::Cause {
            reason,
            field: field.into(),
            message: message.into(),
        }],
        details: Box::new(crate::error::Details::new(
            "",
            "meta.k8s.io",
            "PatchOptions",
        )),
    }
}

/// `interpretStrategicMergePatchError`: malformed directives are 400, the rest 500.
fn strategic_error(error: crate::strategic::StrategicError) -> ApiError {
    use crate::strategic::StrategicError;
    match error {
        StrategicError::RetainKeys
        | StrategicError::PrimitiveList
        | StrategicError::SetElementOrder => ApiError::bad_request(error.to_string()),
        StrategicError::PatchType(..)
        | StrategicError::NoMergeKey(..)
        | StrategicError::SetElementOrderMismatch(..) => ApiError::internal(error.to_string()),
    }
}

fn patch_error(error: PatchError) -> ApiError {
    match error {
        PatchError::NotAList | PatchError::BadOperation { .. } => {
            ApiError::bad_request(error.to_string())
        }
        PatchError::MissingPath { .. } | PatchError::TestFailed { .. } => {
            tracing::debug!(%error, "json patch not applied");
            ApiError::PatchNotApplied
        }
    }
}
