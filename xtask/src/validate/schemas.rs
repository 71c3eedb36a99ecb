//! Step 1's rendering and schema validation: `kubectl kustomize`, then
//! `kubernetes-validate --strict` against the pinned Kubernetes version.

use serde_json::Value;

use super::need;
use super::validation::Validation;
use crate::files::write;
use crate::step::{Error, Result};

/// The Kubernetes version of the pinned kind node image (ci/kind/cluster.yaml).
const K8S_VERSION: &str = "1.33.0";

impl Validation<'_> {
    /// `kubectl kustomize dir` into the scratch file `file`; its documents.
    pub(super) fn kustomize(&self, dir: &str, file: &str) -> Result<Vec<Value>> {
        self.steps.step(&format!("kubectl kustomize {dir}"));
        let text = self.succeed(
            self.command("kubectl", &["kustomize", dir]),
            &format!("kubectl kustomize {dir}"),
        )?;
        write(&self.work.join(file), &text)?;
        let docs = need::documents(&text, dir).map_err(Error::Failed)?;
        println!("{} objects rendered", docs.len());
        Ok(docs)
    }

    /// `kubernetes-validate --strict` on the scratch file `file`; a line of its output that
    /// does not contain `expected` (a kind without a schema is only a warning there), any
    /// line when none is expected, is an error here.
    pub(super) fn kubernetes_validate(
        &self,
        what: &str,
        file: &str,
        expected: Option<&str>,
    ) -> Result {
        self.steps.step(&format!(
            "kubernetes-validate --strict -k {K8S_VERSION} ({what})"
        ));
        let path = self.work.join(file).display().to_string();
        let out = self.output(
            self.command(
                "python3",
                &[
                    "-m",
                    "kubernetes_validate",
                    "--strict",
                    "--quiet",
                    "-k",
                    K8S_VERSION,
                    &path,
                ],
            ),
            "kubernetes-validate",
        )?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            print!("{text}");
            return Err(Error::Failed(format!(
                "{what} do not validate against Kubernetes {K8S_VERSION}"
            )));
        }
        let unexpected: Vec<&str> = text
            .lines()
            .filter(|l| !l.is_empty() && !expected.is_some_and(|e| l.contains(e)))
            .collect();
        if !unexpected.is_empty() {
            println!("{}", unexpected.join("\n"));
            return Err(Error::Failed(format!(
                "unexpected kubernetes-validate output for {what} (above)"
            )));
        }
        Ok(())
    }
}
