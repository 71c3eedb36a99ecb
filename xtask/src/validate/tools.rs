//! The tools the checks need, and what to do when one is missing.

use std::process::{Command, Stdio};

use crate::step::{self, Error, Result};

/// A tool a check needs.
#[derive(Clone, Copy, Debug)]
pub(super) enum Tool {
    /// A program on PATH.
    Program(&'static str),
    /// A module python3 imports.
    Python(&'static str),
}

impl Tool {
    pub(super) fn name(self) -> String {
        match self {
            Tool::Program(p) => p.to_owned(),
            Tool::Python("kubernetes_validate") => "kubernetes-validate".to_owned(),
            Tool::Python(m) => format!("python3's module {m}"),
        }
    }

    pub(super) fn installed(self) -> bool {
        match self {
            Tool::Program(p) => step::which(p).is_some(),
            Tool::Python(m) => Command::new("python3")
                .args(["-c", &format!("import {m}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success()),
        }
    }
}

/// Which tools are missing, and whether that is an error.
pub(super) struct Tools {
    required: bool,
    pub(super) skipped: Vec<String>,
}

impl Tools {
    pub(super) fn from_env() -> Tools {
        let set = |name| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        Tools {
            required: set("CI") || set("REQUIRE_TOOLS"),
            skipped: Vec::new(),
        }
    }

    /// Whether `tool` can be used for the checks `what`: a missing tool fails when CI or
    /// REQUIRE_TOOLS is set and skips them otherwise.
    pub(super) fn have(&mut self, tool: Tool, what: &str) -> Result<bool> {
        if tool.installed() {
            return Ok(true);
        }
        let name = tool.name();
        if self.required {
            return Err(Error::Usage(format!(
                "{name} is not installed (needed for: {what}); .ci/run installs it"
            )));
        }
        println!(
            "SKIP {what}: {name} is not installed (CI and REQUIRE_TOOLS are unset, so this is not an error)"
        );
        self.skipped.push(what.to_owned());
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_an_error_only_when_required() {
        let missing = Tool::Program("no-such-tool-for-xtask");
        let mut optional = Tools {
            required: false,
            skipped: Vec::new(),
        };
        assert!(!optional.have(missing, "a check").unwrap());
        assert_eq!(optional.skipped, ["a check"]);
        let mut required = Tools {
            required: true,
            skipped: Vec::new(),
        };
        let err = required.have(missing, "a check").unwrap_err();
        assert_eq!(err.code(), 2);
        assert!(err.to_string().contains("needed for: a check"), "{err}");
    }
}
