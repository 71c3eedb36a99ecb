//! Crossplane's objects in a scenario's `objects`: XRDs, Compositions and Functions, read
//! as the composer reads them, for the composite layer (`composite`).

use composer::api::{CompositeResourceDefinition, Composition, Endpoint, Function};
use serde_saphyr::Spanned;

use super::checker::Checker;
use super::pos;
use crate::composite::{Composites, FunctionRuntime, ScenarioFunction};
use crate::error::Pos;
use crate::template::{Vars, check_json, render_json};

/// Whether `object` is one of Crossplane's (an XRD, a Composition, a Function), which the
/// composite layer reads rather than the provider's catalogue.
#[must_use]
pub(super) fn is_crossplane(object: &serde_json::Value) -> bool {
    object
        .get("apiVersion")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|v| {
            v.starts_with("apiextensions.crossplane.io/") || v.starts_with("pkg.crossplane.io/")
        })
}

/// One of Crossplane's objects, into `out`; `placed` remembers where each is.
pub(super) fn object(
    c: &mut Checker,
    o: &Spanned<serde_json::Value>,
    scenario: &str,
    out: &mut Composites,
    placed: &mut Vec<(Pos, String)>,
) {
    let at = pos(o);
    if let Err(e) = check_json(&o.value) {
        c.err(at, format!("object: {e}"));
        return;
    }
    let vars = Vars {
        index: 0,
        group: "",
        scenario,
    };
    let body = render_json(&o.value, vars);
    let text = |p: &str| body.pointer(p).and_then(serde_json::Value::as_str);
    let kind = text("/kind").unwrap_or_default().to_owned();
    let api_version = text("/apiVersion").unwrap_or_default().to_owned();
    let Some(name) = text("/metadata/name")
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
    else {
        c.err(
            at,
            format!("{kind} object has no metadata.name, expected a name"),
        );
        return;
    };
    let what = format!("{kind} {name}");
    if placed.iter().any(|(_, n)| *n == what) {
        c.err(
            at,
            format!("{what} is listed twice, expected each object once"),
        );
        return;
    }
    placed.push((at, what.clone()));
    let bad = |c: &mut Checker, e: &dyn std::fmt::Display| {
        c.err(at, format!("{what}: {e}"));
    };
    match (api_version.as_str(), kind.as_str()) {
        ("apiextensions.crossplane.io/v2", "CompositeResourceDefinition") => {
            match serde_json::from_value::<CompositeResourceDefinition>(body) {
                Ok(xrd) => match xrd.validate() {
                    Ok(()) => out.xrds.push(xrd),
                    Err(e) => bad(c, &e),
                },
                Err(e) => bad(c, &format!("{e}, expected an XRD as Crossplane v2 reads it")),
            }
        }
        ("apiextensions.crossplane.io/v1", "Composition") => {
            match serde_json::from_value::<Composition>(body) {
                Ok(comp) => out.compositions.push(comp),
                Err(e) => bad(
                    c,
                    &format!("{e}, expected a Composition in Pipeline mode as Crossplane reads it"),
                ),
            }
        }
        ("pkg.crossplane.io/v1" | "pkg.crossplane.io/v1beta1", "Function") => {
            let function = serde_json::from_value::<Function>(body.clone());
            match function.map_err(|e| e.to_string()).and_then(|f| {
                f.endpoint().map_err(|e| {
                    format!("{e}; expected the annotation render.crossplane.io/runtime: InProcess (the built-in function) or Development with render.crossplane.io/runtime-development-target: HOST:PORT")
                })
            }) {
                Ok(endpoint) => out.functions.push(ScenarioFunction {
                    name,
                    runtime: match endpoint {
                        Endpoint::InProcess => FunctionRuntime::Builtin,
                        Endpoint::Development(a) => FunctionRuntime::Address(a),
                    },
                    body,
                    pos: at,
                }),
                Err(e) => bad(c, &e),
            }
        }
        _ => c.err(
            at,
            format!(
                "{what} ({api_version}) is not a kind the composite layer reads, expected a CompositeResourceDefinition (apiextensions.crossplane.io/v2), a Composition (apiextensions.crossplane.io/v1) or a Function (pkg.crossplane.io/v1)"
            ),
        ),
    }
}
