use super::*;

#[test]
fn module_declarations_are_read_through_attributes_and_visibility() {
    assert_eq!(
        module_declared("#[allow(x)]\npub(crate) mod shape_vpc;"),
        Some("shape_vpc")
    );
    assert_eq!(module_declared("mod _vpc;"), Some("_vpc"));
    assert_eq!(module_declared("pub mod builders { }"), None);
    assert_eq!(module_declared("pub use crate::types::_vpc::Vpc;"), None);
}

#[test]
fn containers_are_named_by_their_first_keyword() {
    assert_eq!(container("impl<T> From<T> for Error "), Some("impl"));
    assert_eq!(
        container("#[non_exhaustive]\npub enum Error "),
        Some("enum")
    );
    assert_eq!(container("pub fn f() -> impl Trait "), None);
    assert_eq!(container("pub struct S "), None);
}

#[test]
fn paths_are_read_up_to_their_identifier_end() {
    let text = "crate::types::builders::VpcBuilder, crate::types::_tag::Tag>";
    assert_eq!(
        paths_after(text, "crate::types::").collect::<Vec<_>>(),
        ["VpcBuilder", "_tag"]
    );
}

/// A crate shaped like smithy-rs's output, with two operations: `keep` (whose input
/// names the shape `Used`, which names `Nested`) and `gone` (whose output names `Other`).
const CRATE: [(&str, &str); 17] = [
    (
        "Cargo.toml",
        "[package]\nname = \"sdk\"\n\n[dev-dependencies.x]\nversion = \"1\"\n",
    ),
    ("tests/t.rs", "#[test] fn t() {}\n"),
    (
        "src/lib.rs",
        "pub mod client;\npub mod error_meta;\npub mod operation;\npub mod protocol_serde;\npub mod types;\npub mod waiters;\n",
    ),
    (
        "src/operation.rs",
        "/// Keep.\npub mod keep;\n/// Gone.\npub mod gone;\n",
    ),
    (
        "src/operation/keep.rs",
        "pub struct Keep(pub crate::types::Used);\nfn ser() { crate::protocol_serde::shape_used::ser(); }\n",
    ),
    (
        "src/operation/keep/builders.rs",
        "pub struct KeepFluentBuilder(crate::types::builders::UsedBuilder);\n",
    ),
    (
        "src/operation/gone.rs",
        "pub struct Gone(pub crate::types::Other);\n",
    ),
    (
        "src/client.rs",
        "mod keep;\n\nmod gone;\n\npub trait Waiters {\n    /// Wait for gone.\n    fn wait_until_gone(&self) -> crate::waiters::gone::Fluent;\n    fn kept(&self);\n}\n",
    ),
    (
        "src/client/keep.rs",
        "impl super::Client { pub fn keep(&self) -> crate::operation::keep::builders::KeepFluentBuilder { todo() } }\n",
    ),
    (
        "src/client/gone.rs",
        "impl super::Client { pub fn gone(&self) {} }\n",
    ),
    (
        "src/error_meta.rs",
        "#[non_exhaustive]\npub enum Error {\n    Gone(crate::operation::gone::GoneError),\n    /// Unhandled.\n    Unhandled(u8),\n}\nimpl From<crate::operation::keep::KeepError> for Error { fn from(e: _) -> Self { todo!(\"{\") } }\nimpl From<crate::operation::gone::GoneError> for Error { fn from(e: _) -> Self { todo!() } }\n",
    ),
    (
        "src/types.rs",
        "pub use crate::types::_used::Used;\n\npub use crate::types::_nested::Nested;\n\npub use crate::types::_other::Other;\n\nmod _nested;\n\nmod _other;\n\nmod _used;\n\n/// Builders\npub mod builders;\n",
    ),
    (
        "src/types/builders.rs",
        "pub use crate::types::_used::UsedBuilder;\n\npub use crate::types::_other::OtherBuilder;\n",
    ),
    (
        "src/types/_used.rs",
        "pub struct Used(crate::types::Nested);\npub struct UsedBuilder;\n",
    ),
    ("src/types/_nested.rs", "pub struct Nested;\n"),
    (
        "src/types/_other.rs",
        "pub struct Other;\npub struct OtherBuilder;\n",
    ),
    ("src/waiters.rs", "pub mod gone;\n"),
];

#[test]
fn a_trim_keeps_what_the_operations_reach_and_drops_every_item_that_names_the_rest() {
    let from = crate::step::WorkDir::create("trim-sdk-from").unwrap();
    let out = crate::step::WorkDir::create("trim-sdk-out").unwrap();
    for (path, text) in CRATE.iter().chain(&[
        ("src/protocol_serde.rs", "pub(crate) mod shape_used;\n"),
        ("src/protocol_serde/shape_used.rs", "pub fn ser() {}\n"),
        ("src/waiters/gone.rs", "pub struct Fluent;\n"),
    ]) {
        let file = from.0.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }
    let trim = Trim::new(&from.0.join("src"), &["keep"]).unwrap();
    assert_eq!(trim.types, ["_nested", "_used"].map(String::from).into());
    assert_eq!(trim.shapes, ["shape_used"].map(String::from).into());
    let dest = out.0.join("sdk");
    trim.write(&from.0, &dest).unwrap();
    let kept = |p: &str| fs::read_to_string(dest.join(p)).ok();
    for gone in [
        "tests/t.rs",
        "src/operation/gone.rs",
        "src/client/gone.rs",
        "src/types/_other.rs",
        "src/waiters/gone.rs",
    ] {
        assert_eq!(kept(gone), None, "{gone}");
    }
    for (path, want) in [
        ("src/operation.rs", "/// Keep.\npub mod keep;\n"),
        (
            "src/client.rs",
            "mod keep;\n\npub trait Waiters {\n    fn kept(&self);\n}\n",
        ),
        (
            "src/error_meta.rs",
            "#[non_exhaustive]\npub enum Error {\n    /// Unhandled.\n    Unhandled(u8),\n}\nimpl From<crate::operation::keep::KeepError> for Error { fn from(e: _) -> Self { todo!(\"{\") } }\n",
        ),
        (
            "src/types.rs",
            "pub use crate::types::_used::Used;\n\npub use crate::types::_nested::Nested;\n\nmod _nested;\n\nmod _used;\n\n/// Builders\npub mod builders;\n",
        ),
        (
            "src/types/builders.rs",
            "pub use crate::types::_used::UsedBuilder;\n",
        ),
        ("src/waiters.rs", "\n"),
    ] {
        assert_eq!(kept(path).as_deref(), Some(want), "{path}");
    }
    for same in [
        "src/operation/keep.rs",
        "src/operation/keep/builders.rs",
        "src/types/_used.rs",
        "src/protocol_serde/shape_used.rs",
    ] {
        assert_eq!(
            kept(same),
            fs::read_to_string(from.0.join(same)).ok(),
            "{same}"
        );
    }
    assert!(
        kept("Cargo.toml")
            .unwrap()
            .starts_with("[package]\nname = \"sdk\"\n\n[lints.rust]")
    );
    assert_eq!(differences(&dest, &dest).unwrap(), Vec::<String>::new());
}

#[test]
fn each_vendored_copy_is_of_its_published_version() {
    for sdk in &SDKS {
        let toml = crate::step::workspace_root()
            .join(sdk.vendored())
            .join("Cargo.toml");
        let toml = read(&toml).unwrap();
        let package = toml
            .split("\n[")
            .find(|t| t.starts_with("[package]") || t.starts_with("package]"));
        let version = format!("version = \"{}\"", sdk.version);
        assert!(
            package.is_some_and(|p| p.lines().any(|l| l == version)),
            "{}: not {version}",
            sdk.name
        );
    }
}

#[test]
fn the_manifest_loses_dev_dependencies_tests_and_hints() {
    let toml = "[package]\nname = \"x\"\n\n[[test]]\nname = \"t\"\n\n[dev-dependencies.a]\nversion = \"1\"\n\n[hints]\nmostly-unused = true\n\n[dependencies.b]\nversion = \"1\"\n";
    let out = manifest(toml);
    assert!(
        out.starts_with("[package]\nname = \"x\"\n\n[dependencies.b]\nversion = \"1\"\n"),
        "{out}"
    );
    assert!(out.contains("dead_code = \"allow\""));
}
