//! The `cloud_config` target: mock-cloud's config file (`--config`, and the body of
//! `PUT /admin/v1/config`), YAML parsed and validated into a `Config`, and a cloud built
//! from it.
//!
//! Input: config text.
//!
//! Asserts: no panic; every parse error names the file, a line and a column from 1 and
//! says what is wrong; a valid config builds a cloud, and reads back as itself when
//! written as a document.

use mock_cloud::admin::ConfigDocument;
use mock_cloud::{Config, ConfigError, MockCloud};

/// Runs one input.
///
/// # Panics
/// When mock-cloud's config reader breaks a promise (see the module's docs).
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::from_yaml(text, "fuzz.yaml") {
        Err(ConfigError::Parse {
            file,
            line,
            column,
            message,
        }) => {
            assert_eq!(file, "fuzz.yaml");
            assert!(line >= 1 && column >= 1, "no position: {line}:{column}");
            assert!(!message.trim().is_empty(), "no message");
        }
        Err(ConfigError::InvalidAt {
            file,
            line,
            column,
            problem,
        }) => {
            assert_eq!(file, "fuzz.yaml");
            assert!(line >= 1 && column >= 1, "no position: {line}:{column}");
            assert!(!problem.trim().is_empty(), "no message");
        }
        Err(ConfigError::Invalid { problem }) => {
            assert!(!problem.trim().is_empty(), "no message");
        }
        Err(ConfigError::Read { .. }) => panic!("from_yaml reads no file"),
        Ok(config) => {
            let document = ConfigDocument::from(&config);
            let json = serde_json::to_string(&document).expect("a document serializes");
            let again = Config::from_yaml(&json, "again.json")
                .unwrap_or_else(|e| panic!("a written config does not read back: {e}\n{json}"));
            assert_eq!(
                again, config,
                "a written config reads back as another\n{json}"
            );
            crate::runtime().block_on(async {
                MockCloud::new(config).expect("a validated config builds a cloud");
            });
        }
    }
}
