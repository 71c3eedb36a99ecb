//! The Dockerfiles of ci/docker beyond what hadolint checks: their COPY sources exist,
//! .dockerignore keeps the build context small, and each builds the cargo package and
//! binary it is named after on a pinned Rust builder, into distroless/static as the
//! nonroot user.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::need::{Need, items, str_of};

/// What the check needs of `cargo metadata --no-deps`: each binary target's package.
pub fn binaries(metadata: &Value) -> HashMap<String, String> {
    let mut bins = HashMap::new();
    for p in items(&metadata["packages"]) {
        for t in items(&p["targets"]) {
            if items(&t["kind"]).iter().any(|k| k == "bin") {
                bins.insert(str_of(&t["name"]).to_owned(), str_of(&p["name"]).to_owned());
            }
        }
    }
    bins
}

/// The package names of `cargo metadata --no-deps`.
pub fn packages(metadata: &Value) -> Vec<String> {
    items(&metadata["packages"])
        .iter()
        .map(|p| str_of(&p["name"]).to_owned())
        .collect()
}

/// The entries .dockerignore must have: build outputs and the git directory.
const IGNORED: [&str; 4] = ["target", "target-*", ".git", "out"];

/// Checks .dockerignore's text.
pub fn check_dockerignore(text: &str) -> Result<(), Vec<String>> {
    let entries: Vec<&str> = text.split_whitespace().collect();
    let mut n = Need::default();
    for needed in IGNORED {
        n.need(
            entries.contains(&needed),
            format!(".dockerignore must exclude {needed}"),
        );
    }
    n.finish()
}

/// The source of a `COPY SRC DEST` line from the build context (not `--from`), flags
/// skipped; `None` for other lines and for COPYs of several sources.
fn copy_source(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    if !line.starts_with("COPY") || words.next() != Some("COPY") {
        return None;
    }
    let rest: Vec<&str> = words.collect();
    if rest.first().is_some_and(|w| w.starts_with("--from")) {
        return None;
    }
    let flags = rest.iter().take_while(|w| w.starts_with("--")).count();
    match &rest[flags..] {
        [source, _dest] => Some(source),
        _ => None,
    }
}

/// Whether `s` is `rust:MAJOR.MINOR-alpine`.
fn pinned_rust_alpine(s: &str) -> bool {
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    s.strip_prefix("rust:")
        .and_then(|v| v.strip_suffix("-alpine"))
        .and_then(|v| v.split_once('.'))
        .is_some_and(|(major, minor)| digits(major) && digits(minor))
}

/// Checks the Dockerfile `path` (`NAME.Dockerfile`, relative to `root`) with text `text`
/// against the workspace's `packages` and `bins` (binary → package); returns the line that
/// says what it builds.
pub fn check_dockerfile(
    root: &Path,
    path: &str,
    text: &str,
    packages: &[String],
    bins: &HashMap<String, String>,
) -> Result<String, Vec<String>> {
    let name = Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .and_then(|f| f.strip_suffix(".Dockerfile"))
        .unwrap_or_default();
    let mut n = Need::default();
    let lines: Vec<&str> = text.lines().collect();
    for source in lines.iter().filter_map(|l| copy_source(l)) {
        n.need(
            root.join(source).exists(),
            format!("{path}: COPY source {source} does not exist"),
        );
    }
    const BUILD: &str = "cargo build --release --locked -p ";
    let mut built: Vec<&str> = text
        .match_indices(BUILD)
        .filter_map(|(i, _)| text[i + BUILD.len()..].split_whitespace().next())
        .collect();
    built.sort_unstable();
    built.dedup();
    let package = match built.as_slice() {
        [p] => *p,
        _ => "",
    };
    n.need(
        package == name && packages.iter().any(|p| p == package),
        format!("{path}: builds {built:?}, not the one package {name}"),
    );
    n.need(
        text.contains(&format!("target/release/{name}"))
            && bins.get(name).map(String::as_str) == Some(package),
        format!("{path}: binary {name}"),
    );
    n.need(
        lines.iter().any(|l| {
            l.strip_prefix("FROM ")
                .and_then(|l| l.strip_suffix(" AS build"))
                .is_some_and(pinned_rust_alpine)
        }),
        format!("{path}: builder pinned (FROM rust:X.Y-alpine AS build)"),
    );
    let last_from = lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("FROM "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default();
    n.need(
        last_from.starts_with("gcr.io/distroless/static") && last_from.ends_with(":nonroot"),
        format!("{path}: the final image is {last_from:?}, not distroless/static's nonroot"),
    );
    n.need(
        lines.contains(&"USER 65532:65532"),
        format!("{path}: USER 65532"),
    );
    n.need(
        text.contains(&format!(r#"ENTRYPOINT ["/usr/local/bin/{name}"]"#)),
        format!("{path}: ENTRYPOINT"),
    );
    n.finish()?;
    Ok(format!(
        "{path}: cargo build -p {package}, COPY sources present, distroless nonroot"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::workspace_root;

    const PATH: &str = "ci/docker/provider.Dockerfile";

    fn dockerfile() -> String {
        std::fs::read_to_string(workspace_root().join(PATH)).unwrap()
    }

    fn check(text: &str) -> Result<String, Vec<String>> {
        let packages = vec!["provider".to_owned(), "mock-cloud".to_owned()];
        let bins = [("provider", "provider"), ("mock-cloud", "mock-cloud")]
            .map(|(b, p)| (b.to_owned(), p.to_owned()))
            .into();
        check_dockerfile(&workspace_root(), PATH, text, &packages, &bins)
    }

    #[track_caller]
    fn fails_with(text: &str, expected: &str) {
        let errors = check(text).expect_err("the check should fail");
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "no error with {expected:?} in {errors:?}"
        );
    }

    #[test]
    fn the_dockerfiles_and_dockerignore_pass() {
        let root = workspace_root();
        let out = check(&dockerfile()).unwrap();
        assert!(out.contains("cargo build -p provider"), "{out}");
        let text = std::fs::read_to_string(root.join(".dockerignore")).unwrap();
        assert_eq!(check_dockerignore(&text), Ok(()));
        let meta = serde_json::json!({"packages": [
            {"name": "mock-cloud", "targets": [{"name": "mock-cloud", "kind": ["bin"]}, {"name": "mock_cloud", "kind": ["lib"]}]},
        ]});
        let path = "ci/docker/mock-cloud.Dockerfile";
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        assert!(check_dockerfile(&root, path, &text, &packages(&meta), &binaries(&meta)).is_ok());
    }

    #[test]
    fn each_broken_line_is_named() {
        let good = dockerfile();
        let cases = [
            ("COPY . .", "COPY missing-dir .", "COPY source missing-dir"),
            ("-p provider", "-p mock-cloud", "builds [\"mock-cloud\"]"),
            (
                "target/release/provider",
                "target/release/prov",
                "binary provider",
            ),
            (
                "FROM rust:1.95-alpine AS build",
                "FROM rust:latest AS build",
                "builder pinned",
            ),
            (
                "static-debian12:nonroot",
                "static-debian12:latest",
                "the final image",
            ),
            ("USER 65532:65532", "USER root", "USER 65532"),
            (
                r#"ENTRYPOINT ["/usr/local/bin/provider"]"#,
                r#"ENTRYPOINT ["provider"]"#,
                "ENTRYPOINT",
            ),
        ];
        for (from, to, expected) in cases {
            assert!(good.contains(from), "{from}");
            fails_with(&good.replace(from, to), expected);
        }
        assert_eq!(
            check_dockerignore(".git\ntarget\nout\n"),
            Err(vec![".dockerignore must exclude target-*".to_owned()])
        );
    }

    #[test]
    fn copy_sources_are_single_sources_from_the_context() {
        assert_eq!(copy_source("COPY . ."), Some("."));
        assert_eq!(copy_source("COPY --chown=1:1 src /dst"), Some("src"));
        assert_eq!(
            copy_source("COPY --from=build /out/x /usr/local/bin/x"),
            None
        );
        assert_eq!(copy_source("COPY a b /dst/"), None);
        assert_eq!(copy_source("COPYING a b"), None);
        assert!(pinned_rust_alpine("rust:1.95-alpine"));
        assert!(!pinned_rust_alpine("rust:1-alpine"));
        assert!(!pinned_rust_alpine("rust:1.95-slim"));
    }
}
