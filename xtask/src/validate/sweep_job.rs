//! The sweep's Indexed Job: `harness sweep scenarios/sweep-r.yaml --kubernetes-job`, as
//! the built harness binary writes it (results in S3, and on a volume), checked for its
//! shape, validated against the Kubernetes schemas of the pinned version, and applied with
//! `kubectl apply --dry-run=server` to a mock-apiserver, which must store nothing.

use std::fs;

use serde_json::Value;

use super::manifests;
use super::need::{self, Need, report};
use super::tools::{Tool, Tools};
use super::validation::Validation;
use crate::files::{io_error, write};
use crate::step::{Error, Result};

/// The shipped sweep the Job is written from, and its number of points.
const SCENARIO: &str = "scenarios/sweep-r.yaml";
const POINTS: i64 = 5;

/// The Job's variants: a file name and the flags that choose where the results go.
const VARIANTS: [(&str, &[&str]); 2] = [
    (
        "sweep-job-s3.yaml",
        &[
            "--results",
            "s3://loadtest-sweeps/sweep-r",
            "--s3-endpoint",
            "http://mock-cloud.loadtest-system.svc:8080",
            "--s3-credentials-secret",
            "sweep-s3",
        ],
    ),
    (
        "sweep-job-volume.yaml",
        &["--results-volume", "sweep-results"],
    ),
];

/// What the harness must have written: a ConfigMap with the scenario, then an Indexed Job
/// of one completion per point whose pods take their index from the downward API.
fn check_shape(docs: &[Value], file: &str) -> std::result::Result<(), Vec<String>> {
    let mut n = Need::default();
    let kinds: Vec<&str> = docs.iter().map(|d| need::str_of(&d["kind"])).collect();
    n.need(
        kinds == ["ConfigMap", "Job"],
        format!("{file}: kinds {kinds:?}, expected a ConfigMap and a Job"),
    );
    if let [cm, job] = docs {
        n.need(
            cm["data"]["sweep-r.yaml"]
                .as_str()
                .is_some_and(|s| s.contains("name: sweep-r")),
            format!("{file}: the ConfigMap lacks sweep-r.yaml"),
        );
        let spec = &job["spec"];
        n.need(
            job["apiVersion"] == "batch/v1"
                && spec["completionMode"] == "Indexed"
                && spec["completions"].as_i64() == Some(POINTS)
                && spec["parallelism"].as_i64() == Some(2),
            format!("{file}: not an Indexed Job of {POINTS} completions, 2 at once: {spec}"),
        );
        let pod = &spec["template"]["spec"];
        let c = &pod["containers"][0];
        n.need(
            pod["restartPolicy"] == "Never",
            format!("{file}: restartPolicy"),
        );
        let index = need::items(&c["env"]).iter().any(|e| {
            e["name"] == "JOB_COMPLETION_INDEX"
                && e["valueFrom"]["fieldRef"]["fieldPath"]
                    == "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        });
        n.need(
            index,
            format!("{file}: JOB_COMPLETION_INDEX from the downward API"),
        );
        let args: Vec<&str> = need::items(&c["args"]).iter().map(need::str_of).collect();
        n.need(
            args.first() == Some(&"sweep")
                && args.get(1) == Some(&"/etc/harness/sweep/sweep-r.yaml"),
            format!("{file}: args {args:?}"),
        );
    }
    n.finish()
}

impl Validation<'_> {
    /// The sweep's Job, both variants: shape, schemas, server dry run.
    pub(super) fn sweep_job(&self, tools: &mut Tools) -> Result {
        self.steps.step(&format!(
            "harness sweep {SCENARIO} --kubernetes-job (results in S3; on a volume)"
        ));
        let harness = self.binary("harness")?;
        let harness = harness.display().to_string();
        for (file, flags) in VARIANTS {
            let mut args = vec![
                "sweep",
                SCENARIO,
                "--kubernetes-job",
                "--namespace",
                manifests::NAMESPACE,
                "--jobs",
                "2",
            ];
            args.extend(flags);
            let text = self.succeed(
                self.command(&harness, &args),
                "harness sweep --kubernetes-job",
            )?;
            write(&self.work.join(file), &text)?;
            let docs = need::documents(&text, file).map_err(Error::Failed)?;
            report(check_shape(&docs, file))?;
            println!("{file}: a ConfigMap and an Indexed Job of {POINTS} points");
        }
        if tools.have(
            Tool::Python("kubernetes_validate"),
            "schema validation of the sweep's Job",
        )? {
            for (file, _) in VARIANTS {
                self.kubernetes_validate(&format!("the sweep's Job ({file})"), file, None)?;
            }
            println!("valid");
        }

        self.steps
            .step("kubectl apply --dry-run=server of the sweep's Job against mock-apiserver");
        let dir = self.work.join("sweep-job");
        fs::create_dir(&dir).map_err(|e| io_error(&dir, e))?;
        let server = self.start_apiserver(&dir, &[])?;
        self.succeed(
            self.kubectl_in(&dir, &["create", "namespace", manifests::NAMESPACE]),
            "kubectl create namespace",
        )?;
        for (file, _) in VARIANTS {
            self.dry_run_in(&dir, file, 2, "the sweep Job's server dry run")?;
        }
        self.nothing_stored(&dir, "jobs,configmaps")?;
        println!("answered for every object, nothing stored");
        drop(server);
        Ok(())
    }
}
