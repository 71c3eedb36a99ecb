//! Composite scenarios' schema: XRDs, Compositions and Functions in `objects`, `core`'s
//! flags and XR groups; what core would refuse only after the start is an error at
//! file:line:column before anything starts.

use std::time::Duration;

use harness::scenario::composite::FunctionRuntime;
use harness::scenario::parse;

/// A scenario of `n` XRs with one built-in step composing 2 Buckets and one composing 3.
fn text(function: &str, xr_kind: &str, input_kind: &str) -> String {
    format!(
        "apiVersion: harness/v1
name: t
core: {{maxReconcileRate: 7, pollInterval: 30s, enableRealtimeCompositions: false, circuitBreakerMode: eager}}
objects:
  - apiVersion: pkg.crossplane.io/v1
    kind: Function
    metadata: {{name: resources, annotations: {{render.crossplane.io/runtime: InProcess}}}}
    spec: {{package: fn}}
  - apiVersion: apiextensions.crossplane.io/v2
    kind: CompositeResourceDefinition
    metadata: {{name: xsets.example.org}}
    spec:
      group: example.org
      names: {{kind: XSet, plural: xsets}}
      scope: Namespaced
      versions: [{{name: v1, served: true, referenceable: true, schema: {{openAPIV3Schema: {{type: object}}}}}}]
  - apiVersion: apiextensions.crossplane.io/v1
    kind: Composition
    metadata: {{name: sets}}
    spec:
      compositeTypeRef: {{apiVersion: example.org/v1, kind: XSet}}
      pipeline:
        - step: a
          functionRef: {{name: resources}}
          input: {{apiVersion: composer.loadtest.dev/v1alpha1, kind: Resources, ttl: 45s, resources: [{{name: a, count: 2, base: {{apiVersion: mockcloud.example.org/v1alpha1, kind: Bucket}}}}]}}
        - step: b
          functionRef: {{name: {function}}}
          input: {{apiVersion: composer.loadtest.dev/v1alpha1, kind: {input_kind}, resources: [{{name: b, count: 3, base: {{apiVersion: mockcloud.example.org/v1alpha1, kind: Bucket}}}}]}}
composites:
  - {{name: sets, apiVersion: example.org/v1, kind: {xr_kind}, count: 4, spec: {{region: eu-west-1}}}}
phases:
  - {{name: create, action: create}}
  - {{name: resync, action: resync, groups: [sets]}}
assertions:
  - {{check: breakerOpens}}
  - {{check: coreApiRequests, window: 10s, max: 100}}
"
    )
}

fn err(text: &str) -> String {
    parse(text, "t.yaml")
        .expect_err("must not validate")
        .to_string()
}

#[test]
fn a_composite_scenario_gives_the_xr_shape_and_core_s_flags() {
    let s = parse(&text("resources", "XSet", "Resources"), "t.yaml").expect("valid");
    let c = &s.composites;
    assert_eq!(c.functions[0].runtime, FunctionRuntime::Builtin);
    assert_eq!(c.core.max_reconcile_rate, 7);
    assert_eq!(c.core.poll_interval, Duration::from_secs(30));
    assert!(!c.core.realtime);
    assert!(
        c.core
            .args()
            .contains(&"--circuit-breaker-mode=eager".to_owned())
    );
    let g = &c.groups[0];
    assert_eq!((g.count, g.composition.as_str()), (4, "sets"));
    assert!(g.kind.namespaced);
    // N = 2 + 3 composed Buckets, F = 2 steps, the smallest TTL.
    assert_eq!(g.shape.resources_per_xr(), Some(5));
    assert_eq!(g.shape.steps_per_pipeline(), 2);
    assert_eq!(g.shape.ttl, Some(Duration::from_secs(45)));
    assert_eq!(
        c.composed_kinds(),
        [(
            "mockcloud.example.org/v1alpha1".to_owned(),
            "Bucket".to_owned()
        )]
    );
    // Phases act on XR groups: all of them without `groups`, the named ones with.
    assert_eq!(s.phases[0].composites, [0]);
    assert_eq!(s.phases[1].composites, [0]);
    let xr = g.xr(3, &s.name, Some("harness-t"));
    assert_eq!(xr["metadata"]["name"], "sets-3");
    assert_eq!(xr["metadata"]["namespace"], "harness-t");
    assert_eq!(xr["spec"]["crossplane"]["compositionRef"]["name"], "sets");
    assert_eq!(xr["spec"]["region"], "eu-west-1");
    // The Crossplane objects are the composite layer's, not objects the harness creates.
    assert!(s.objects.is_empty());
}

#[test]
fn a_composition_naming_an_undeclared_function_is_refused_at_the_composition() {
    let e = err(&text("patch-and-transform", "XSet", "Resources"));
    assert_eq!(
        e,
        "t.yaml:17:5: Composition sets: step \"b\" calls Function \"patch-and-transform\", which the scenario does not declare, expected one of the Functions in `objects`: resources"
    );
}

#[test]
fn an_xr_group_whose_kind_no_xrd_defines_is_refused_at_its_kind() {
    let e = err(&text("resources", "XSett", "Resources"));
    assert_eq!(
        e,
        "t.yaml:30:52: no XRD in `objects` defines kind XSett (example.org/v1), expected one of: XSet (example.org/v1)"
    );
}

#[test]
fn a_step_input_the_built_in_function_does_not_accept_is_refused() {
    let e = err(&text("resources", "XSet", "Patches"));
    assert!(e.starts_with("t.yaml:17:5: Composition sets: step \"b\" gives the built-in function \"resources\" an input it does not accept: "), "{e}");
    assert!(e.contains("expected {apiVersion: composer.loadtest.dev/v1alpha1, kind: Resources, resources: [...]}"), "{e}");
}

#[test]
fn core_without_xr_groups_is_refused_and_a_check_without_its_limit_reads_the_plan() {
    let no_groups = text("resources", "XSet", "Resources").replace(
        "composites:\n  - {name: sets, apiVersion: example.org/v1, kind: XSet, count: 4, spec: {region: eu-west-1}}\n",
        "resources:\n  - {name: b, kind: Bucket, count: 1}\n",
    ).replace("groups: [sets]", "groups: [b]");
    let e = err(&no_groups);
    assert!(e.contains("t.yaml:3:7: `core` sets Crossplane core's flags, and the scenario has no XR group to run it for, expected `composites`"), "{e}");
    let no_max = text("resources", "XSet", "Resources").replace(
        "{check: coreApiRequests, window: 10s, max: 100}",
        "{check: functionCalls}",
    );
    let s = parse(&no_max, "t.yaml").expect("valid: the limit is the plan's");
    assert!(s.assertions.iter().any(|a| matches!(
        a.check,
        harness::scenario::Check::Core(harness::scenario::composite::CoreCheck::FunctionCalls {
            max: None
        })
    )));
    let plan = harness::predict::plan(&s);
    let bound = plan.find("core/function-calls").expect("the check's bound");
    assert!(bound.value > 0.0, "{bound:?}");
}

#[test]
fn xr_groups_run_on_the_embedded_stack_only() {
    let cluster =
        text("resources", "XSet", "Resources").replace("name: t\n", "name: t\ntarget: cluster\n");
    let e = err(&cluster);
    assert!(
        e.contains("t.yaml:3:9: XR groups (`composites`) run on the embedded stack only"),
        "{e}"
    );
}

#[test]
fn core_s_flags_and_an_xr_group_s_count_can_be_set_on_the_command_line() {
    use harness::scenario::Set;
    let sets: Vec<Set> = [
        "core.circuitBreakerMode=released",
        "core.circuitBreakerBurst=300",
        "core.enableRealtimeCompositions=true",
        "core.syncInterval=10m",
        "composites.sets.count=9",
    ]
    .iter()
    .map(|s| s.parse().expect("PATH=VALUE"))
    .collect();
    let s = harness::scenario::parse_with(&text("resources", "XSet", "Resources"), "t.yaml", &sets)
        .expect("valid");
    let c = &s.composites;
    assert_eq!(
        c.core.breaker.mode,
        limiter::crossplane::circuit::Mode::Released
    );
    assert_eq!(c.core.breaker.burst, 300.0);
    assert!(c.core.realtime);
    assert_eq!(c.core.sync_interval, Duration::from_secs(600));
    // The file's other flags stay.
    assert_eq!(c.core.max_reconcile_rate, 7);
    assert_eq!(c.groups[0].count, 9);
    // A value is checked as the file's would be, and placed at its --set.
    let bad = ["core.circuitBreakerMode=lazy".parse().expect("PATH=VALUE")];
    let e = harness::scenario::parse_with(&text("resources", "XSet", "Resources"), "t.yaml", &bad)
        .expect_err("not a mode")
        .to_string();
    assert!(e.starts_with("--set core.circuitBreakerMode: "), "{e}");
    let bad = ["composites.nope.count=3".parse().expect("PATH=VALUE")];
    let e = harness::scenario::parse_with(&text("resources", "XSet", "Resources"), "t.yaml", &bad)
        .expect_err("no such group")
        .to_string();
    assert!(
        e.contains("no XR group named \"nope\", expected one of sets"),
        "{e}"
    );
}
