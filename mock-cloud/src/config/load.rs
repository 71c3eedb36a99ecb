//! Reading a config document (a YAML file, or the document itself): parse it, then build
//! and check the config, naming file, line and column on every error a file has.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use serde_saphyr::{Location, Spanned};

use super::document::ConfigDocument;
use super::{AccountConfig, AwsIdentity, Config, ConfigError, Quotas, is_path_segment};

impl Config {
    /// Reads and validates a YAML config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::from_yaml(&text, &path.display().to_string())
    }

    /// Parses and validates YAML text; `file` names it in errors. Keys that are not set
    /// keep their defaults; an empty document is the default config.
    ///
    /// ```
    /// let config = mock_cloud::Config::from_yaml("shadow: true\n", "inline.yaml").unwrap();
    /// assert!(config.shadow);
    /// let err = mock_cloud::Config::from_yaml("shadw: true\n", "inline.yaml").unwrap_err();
    /// assert!(err.to_string().starts_with("invalid config inline.yaml:1:1"));
    /// ```
    pub fn from_yaml(text: &str, file: &str) -> Result<Config, ConfigError> {
        let document: ConfigDocument = if is_blank(text) {
            ConfigDocument::default()
        } else {
            serde_saphyr::from_str(text).map_err(|source| {
                let location = source.location().unwrap_or(Location::UNKNOWN);
                let (line, column) = (location.line(), location.column());
                // The parser's own text repeats the location, and its snippet names no file.
                let text = source.without_snippet().to_string();
                let suffix = format!(" at line {line}, column {column}");
                let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
                ConfigError::Parse {
                    file: file.to_owned(),
                    line,
                    column,
                    message,
                }
            })?
        };
        build(document, Some(file))
    }
}

impl TryFrom<ConfigDocument> for Config {
    type Error = ConfigError;

    /// Builds and checks the config a document describes, as [`Config::from_yaml`] does.
    /// A problem is reported without a place: the document may not come from a file.
    fn try_from(document: ConfigDocument) -> Result<Config, ConfigError> {
        build(document, None)
    }
}

fn is_blank(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .all(|line| line.is_empty() || line.starts_with('#') || line == "---")
}

/// The config `raw` describes; `file` names where it was read from, for errors.
fn build(raw: ConfigDocument, file: Option<&str>) -> Result<Config, ConfigError> {
    let at = |location: Location, problem: String| match file {
        Some(file) if location != Location::UNKNOWN => ConfigError::InvalidAt {
            file: file.to_owned(),
            line: location.line(),
            column: location.column(),
            problem,
        },
        _ => ConfigError::Invalid { problem },
    };
    let defaults = Config::default();
    let mut base_quotas = Quotas::cloud_default();
    if let Some(quotas) = &raw.quotas {
        quotas
            .apply_to(&mut base_quotas)
            .map_err(|(location, problem)| at(location, problem))?;
    }
    let accounts = match raw.accounts {
        None => vec![
            AccountConfig::new("default")
                .with_token("default")
                .with_aws(AwsIdentity::default_account())
                .with_quotas(base_quotas),
        ],
        Some(raw_accounts) => {
            let mut names = HashSet::new();
            let mut tokens = HashSet::new();
            let mut account_ids = HashSet::new();
            let mut access_keys = HashSet::new();
            let mut accounts = Vec::with_capacity(raw_accounts.len());
            for raw_account in raw_accounts {
                let Spanned {
                    value: name,
                    referenced,
                    ..
                } = raw_account.name;
                if !is_path_segment(&name) {
                    return Err(at(
                        referenced,
                        format!(
                            "account name {name:?} must be 1 to 64 of a-z, A-Z, 0-9, '-', '_', '.'"
                        ),
                    ));
                }
                if !names.insert(name.clone()) {
                    return Err(at(referenced, format!("account {name:?} is defined twice")));
                }
                let mut quotas = base_quotas.clone();
                if let Some(own) = &raw_account.quotas {
                    own.apply_to(&mut quotas)
                        .map_err(|(location, problem)| at(location, problem))?;
                }
                let mut account = AccountConfig::new(name).with_quotas(quotas);
                if let Some(aws) = &raw_account.aws {
                    let id = &aws.account_id;
                    if !super::is_account_id(&id.value) {
                        return Err(at(
                            id.referenced,
                            format!("aws.account_id {:?} must be 12 digits", id.value),
                        ));
                    }
                    if !account_ids.insert(id.value.clone()) {
                        return Err(at(
                            id.referenced,
                            format!("aws.account_id {:?} is used twice", id.value),
                        ));
                    }
                    for key in &aws.access_keys {
                        if !access_keys.insert(key.id.value.clone()) {
                            return Err(at(
                                key.id.referenced,
                                format!("access key {:?} is used twice", key.id.value),
                            ));
                        }
                    }
                    account = account.with_aws(aws.identity());
                }
                for token in raw_account.tokens {
                    if token.value.is_empty() || !tokens.insert(token.value.clone()) {
                        return Err(at(
                            token.referenced,
                            format!("token {:?} is empty or used twice", token.value),
                        ));
                    }
                    account = account.with_token(token.value);
                }
                accounts.push(account);
            }
            accounts
        }
    };
    let faults = match raw.faults {
        None => defaults.faults,
        Some(Spanned {
            value, referenced, ..
        }) => value
            .into_faults()
            .map_err(|problem| at(referenced, format!("faults: {problem}")))?,
    };
    let mut aws = defaults.aws;
    if let Some(doc) = &raw.aws {
        doc.apply_to(&mut aws);
    }
    let provisioning = raw.provisioning;
    let create = provisioning.as_ref().and_then(|p| p.database_create_ms);
    let delete = provisioning.as_ref().and_then(|p| p.database_delete_ms);
    let config = Config {
        accounts,
        flavor: raw.flavor.unwrap_or(defaults.flavor),
        shadow: raw.shadow.unwrap_or(defaults.shadow),
        journal_cap: raw.journal_cap.unwrap_or(defaults.journal_cap),
        database_create: create.map_or(defaults.database_create, Duration::from_millis),
        database_delete: delete.map_or(defaults.database_delete, Duration::from_millis),
        faults,
        aws,
    };
    config.validate()?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Flavor, Rate};
    use crate::model::{Action, Class, Collection};

    #[test]
    fn an_empty_file_gives_the_default_config() {
        let config = Config::from_yaml("# nothing here\n", "empty.yaml").unwrap();
        assert_eq!(config, Config::default());
    }

    #[test]
    fn account_quotas_override_top_level_quotas_key_by_key() {
        let text = "\
flavor: aws-json
quotas:
  classes:
    read: { burst: 10, per_second: 1 }
  counts:
    buckets: 3
accounts:
  - name: a
    tokens: [ta]
    quotas:
      classes:
        read: { burst: 7, per_second: 0.5 }
      actions:
        create: { burst: 5, per_second: 2 }
  - name: b
    tokens: [tb]
";
        let config = Config::from_yaml(text, "two.yaml").unwrap();
        assert_eq!(config.flavor, Flavor::AwsJson);
        let a = &config.accounts[0].quotas;
        let b = &config.accounts[1].quotas;
        assert_eq!(a.classes[&Class::Read], Rate::new(7, 0.5));
        assert_eq!(b.classes[&Class::Read], Rate::new(10, 1.0));
        assert_eq!(a.actions[&Action::Create], Rate::new(5, 2.0));
        assert!(b.actions.is_empty());
        assert_eq!(a.counts[&Collection::Buckets], 3);
        assert_eq!(b.classes[&Class::Mutate], Rate::new(50, 5.0));
    }

    #[test]
    fn an_unknown_key_is_reported_with_file_line_and_column() {
        let text = "shadow: true\nquotas:\n  clases: {}\n";
        let err = Config::from_yaml(text, "typo.yaml").unwrap_err();
        assert!(
            err.to_string().starts_with("invalid config typo.yaml:3:3"),
            "{err}"
        );
    }

    #[test]
    fn a_zero_burst_is_reported_where_it_is_written() {
        let text = "quotas:\n  classes:\n    read: { burst: 0, per_second: 1 }\n";
        let err = Config::from_yaml(text, "zero.yaml").unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("invalid config zero.yaml:3:"),
            "{message}"
        );
        assert!(message.contains("burst >= 1"), "{message}");
    }

    #[test]
    fn a_duplicate_token_is_reported_at_the_second_use() {
        let text = "accounts:\n  - name: a\n    tokens: [t]\n  - name: b\n    tokens: [t]\n";
        let err = Config::from_yaml(text, "dup.yaml").unwrap_err();
        assert!(
            err.to_string().starts_with("invalid config dup.yaml:5:"),
            "{err}"
        );
        assert!(err.to_string().contains("used twice"), "{err}");
    }

    #[test]
    fn bad_faults_name_the_field_and_the_faults_block() {
        let text = "faults:\n  errors:\n    read: { rate: 2 }\n";
        let err = Config::from_yaml(text, "faults.yaml").unwrap_err();
        assert!(err.to_string().contains("errors.read.rate"), "{err}");
        assert!(
            err.to_string().starts_with("invalid config faults.yaml:"),
            "{err}"
        );
    }
}
