//! crossplane-function-pythonic (PyPI), a function nobody here wrote, run as a process and
//! called after our built-in function. It needs Python 3.12 or later: the test uses the
//! first of `$PYTHONIC_PYTHON`, `python3`, `python3.13` and `python3.12` that imports it.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use composer::function::builtin::{self, Resources};
use composer::function::pipeline::{self, Step};
use composer::function::proto::{Ready, State};
use composer::function::value::{from_struct, to_struct};
use composer::function::{Functions, GrpcRunner, InProcessRunner};
use serde_json::json;
use tokio::time::Instant;

use crate::support::{builtin_input, free_port, json_of, object, observed};

const FUNCTIONS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/functions");

/// A Python with function-pythonic, or the reason there is none.
fn python() -> Result<String, String> {
    let candidates = std::env::var("PYTHONIC_PYTHON")
        .into_iter()
        .chain(["python3", "python3.13", "python3.12"].map(String::from));
    for python in candidates {
        let imports = Command::new(&python)
            .args(["-c", "import crossplane.pythonic"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if imports.is_ok_and(|s| s.success()) {
            return Ok(python);
        }
    }
    Err(
        "no python3 (3.12 or later) with crossplane-function-pythonic \
         (pip install crossplane-function-pythonic==0.6.3; or set PYTHONIC_PYTHON)"
            .into(),
    )
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn our_builtin_function_then_function_pythonic_compose_one_desired_state() {
    let python = match python() {
        Ok(python) => python,
        Err(reason) => {
            assert!(
                std::env::var_os("REQUIRE_TOOLS").is_none(),
                "REQUIRE_TOOLS is set: {reason}"
            );
            eprintln!("skipped: {reason}");
            return;
        }
    };
    let address = free_port();
    let _pythonic = Killed(
        Command::new(python)
            .args([
                "-m",
                "crossplane.pythonic",
                "grpc",
                "--insecure",
                "--python-path",
                FUNCTIONS_DIR,
            ])
            .args(["--address", &address.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("function-pythonic starts"),
    );
    let functions = Functions::new()
        .with("resources", InProcessRunner::new(Resources))
        .with("function-pythonic", GrpcRunner::new(address));
    let pythonic_input = to_struct(&object(json!({
        "apiVersion": "pythonic.fn.crossplane.io/v1alpha1",
        "kind": "Composite",
        "composite": "queue_composite.QueueComposite",
    })));
    let steps = [
        Step::new("buckets", "resources", Some(builtin_input(2, "30s"))),
        Step::new("queue", "function-pythonic", Some(pythonic_input)),
    ];
    let deadline = Instant::now() + Duration::from_secs(60);
    let outcome = pipeline::run(&functions, &steps, observed(), State::default(), deadline)
        .await
        .unwrap();

    let resources = &outcome.desired.resources;
    assert_eq!(
        resources.keys().collect::<Vec<_>>(),
        ["bucket-0", "bucket-1", "queue"]
    );
    assert_eq!(
        json_of(&resources["queue"]),
        json!({
            "apiVersion": "sqs.aws.upbound.io/v1beta1",
            "kind": "Queue",
            "spec": {"forProvider": {"region": "eu-west-1"}},
        })
    );
    assert_eq!(
        json_of(&resources["bucket-1"])["spec"]["forProvider"]["region"],
        "eu-west-1"
    );
    // Our readiness survives function-pythonic's step.
    assert_eq!(resources["bucket-0"].ready(), Ready::True);
    let context = from_struct(outcome.context.as_ref().unwrap());
    assert_eq!(
        context[builtin::CONTEXT_KEY],
        json!(["bucket-0", "bucket-1"])
    );
    assert_eq!(context["example.org/queues"], json!(["after 2 resources"]));
    assert_eq!(outcome.ttl, Some(Duration::from_secs(25)));
}
