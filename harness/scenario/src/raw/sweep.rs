//! The scenario file's `sweep` section as written: `harness sweep` reads its entries (the
//! command line's syntax) into a grid, SLOs and budgets.

use schemars::JsonSchema;
use serde::Deserialize;

/// A scenario's `sweep` section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawSweep {
    /// The axes, as `--vary` takes them: `PATH=V1,V2,…` with PATH one `--set` accepts,
    /// e.g. `provider.maxReconcileRate=5,10,20,50,100`. A `--vary` of the same path
    /// replaces the file's.
    #[serde(default)]
    pub vary: Vec<String>,
    /// SLOs on benefits, as `--slo` takes them: `timeToReady.p99<=5m`. Any `--slo`
    /// replaces them all.
    #[serde(default)]
    pub slo: Vec<String>,
    /// Budgets on costs, as `--budget` takes them: `cloudCalls.10s<=400`. Any `--budget`
    /// replaces them all.
    #[serde(default)]
    pub budget: Vec<String>,
    /// The cost the cheapest point is the least of, as `--cost` takes it [default: the
    /// first budget's figure, else cloudCalls.10s].
    #[serde(default)]
    pub cost: Option<String>,
}

/// The `sweep` section of scenario `text`, `None` when it has none. Only that section is
/// read: the scenario's own checks are [`crate::parse`]'s.
///
/// # Errors
/// The YAML parser's message when the text is not YAML or the section is not a sweep.
pub fn section(text: &str) -> Result<Option<RawSweep>, String> {
    #[derive(Deserialize)]
    struct Doc {
        #[serde(default)]
        sweep: Option<RawSweep>,
    }
    serde_saphyr::from_str::<Doc>(text)
        .map(|doc| doc.sweep)
        .map_err(|e| e.to_string())
}
