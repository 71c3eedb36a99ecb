//! [`Functions`]: runners by function name, itself a [`FunctionRunner`], as core finds a
//! function's endpoint from its name.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::time::Instant;

use super::error::FunctionError;
use super::proto::RunFunctionRequest;
use super::runner::{FunctionRunner, RunFuture};

/// The functions a control plane has installed, by name.
#[derive(Clone, Default)]
pub struct Functions {
    runners: BTreeMap<String, Arc<dyn FunctionRunner>>,
}

impl Functions {
    /// No functions.
    #[must_use]
    pub fn new() -> Self {
        Functions::default()
    }

    /// Adds (or replaces) the function `name`.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, runner: impl FunctionRunner + 'static) -> Self {
        self.runners.insert(name.into(), Arc::new(runner));
        self
    }

    /// Adds (or replaces) the function `name`, shared.
    pub fn insert(&mut self, name: impl Into<String>, runner: Arc<dyn FunctionRunner>) {
        self.runners.insert(name.into(), runner);
    }

    /// The function names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.runners.keys().map(String::as_str)
    }
}

impl FunctionRunner for Functions {
    fn run<'a>(
        &'a self,
        name: &'a str,
        request: RunFunctionRequest,
        deadline: Instant,
    ) -> RunFuture<'a> {
        match self.runners.get(name) {
            Some(runner) => runner.run(name, request, deadline),
            None => Box::pin(std::future::ready(Err(FunctionError::UnknownFunction {
                function: name.to_owned(),
            }))),
        }
    }
}
