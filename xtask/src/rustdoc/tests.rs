use super::*;

fn strings(s: &[&str]) -> Vec<String> {
    s.iter().map(|s| (*s).to_owned()).collect()
}

/// A library's compile as cargo starts it under a workspace wrapper (the wrapper's
/// arguments after the compiler's path).
fn lib_compile() -> Vec<String> {
    strings(&[
        "--crate-name",
        "limiter",
        "--edition=2024",
        "limiter/src/lib.rs",
        "--error-format=json",
        "--json=diagnostic-rendered-ansi,artifacts,future-incompat",
        "--crate-type",
        "lib",
        "--emit=dep-info,metadata,link",
        "-C",
        "embed-bitcode=no",
        "-C",
        "debuginfo=line-tables-only",
        "--cfg",
        "feature=\"default\"",
        "--check-cfg",
        "cfg(docsrs,test)",
        "-C",
        "metadata=0a1b2c",
        "--out-dir",
        "/t/debug/deps",
        "-L",
        "dependency=/t/debug/deps",
        "--extern",
        "tokio=/t/debug/deps/libtokio-1.rlib",
        "--warn=rust_2018_idioms",
        "--forbid=unsafe_code",
        "-Wclippy::todo",
    ])
}

#[test]
fn a_library_or_binary_is_recorded_as_itself_or_as_its_tests_and_probes_are_not() {
    assert_eq!(
        to_record(&lib_compile(), false),
        Some(("limiter".into(), "lib"))
    );
    let bin = strings(&[
        "--crate-name",
        "xtask",
        "--crate-type",
        "bin",
        "xtask/src/main.rs",
    ]);
    assert_eq!(to_record(&bin, true), Some(("xtask".into(), "bin")));
    let test = strings(&["--crate-name", "limiter", "--test", "limiter/src/lib.rs"]);
    assert_eq!(
        to_record(&test, false),
        Some(("limiter".into(), "lib.test"))
    );
    let test = strings(&["--crate-name", "loadgen", "--test", "src/main.rs"]);
    assert_eq!(to_record(&test, true), Some(("loadgen".into(), "bin.test")));
    let probe = strings(&[
        "-",
        "--crate-name",
        "___",
        "--print=file-names",
        "--crate-type",
        "bin",
    ]);
    assert_eq!(to_record(&probe, false), None);
    let macros = strings(&[
        "--crate-name",
        "m",
        "--crate-type",
        "proc-macro",
        "m/src/lib.rs",
    ]);
    assert_eq!(to_record(&macros, false), None);
}

#[test]
fn rustdoc_gets_the_crate_its_cfgs_dependencies_and_lints_and_no_code_generation() {
    let args = rustdoc_args(&lib_compile()).unwrap();
    assert_eq!(
        args,
        strings(&[
            "--crate-name",
            "limiter",
            "--edition",
            "2024",
            "--crate-type",
            "lib",
            "--cfg",
            "feature=\"default\"",
            "--check-cfg",
            "cfg(docsrs,test)",
            "-L",
            "dependency=/t/debug/deps",
            "--extern",
            "tokio=/t/debug/deps/libtokio-1.rlib",
            "--warn",
            "rust_2018_idioms",
            "--forbid",
            "unsafe_code",
            "-W",
            "clippy::todo",
            "limiter/src/lib.rs",
        ])
    );
}

#[test]
fn an_unknown_flag_or_a_missing_source_is_an_error_naming_it() {
    let mut args = lib_compile();
    args.push("--frobnicate".into());
    let e = rustdoc_args(&args).unwrap_err();
    assert!(e.contains("--frobnicate"), "{e}");
    assert!(rustdoc_args(&strings(&["--crate-name", "x"])).is_err());
    assert!(rustdoc_args(&strings(&["--crate-name"])).is_err());
}

#[test]
fn a_record_reads_back_as_written() {
    let r = Record {
        cwd: "/w".into(),
        args: lib_compile(),
        env: [("CARGO_PKG_VERSION".to_owned(), "0.1.0".to_owned())].into(),
    };
    assert_eq!(Record::from_json(&r.to_json()), Some(r));
    assert_eq!(Record::from_json("{}"), None);
}

#[test]
fn the_jobserver_is_not_recorded_and_the_package_and_out_dir_are() {
    assert!(recorded_var("CARGO_PKG_VERSION"));
    assert!(recorded_var("CARGO_MANIFEST_DIR"));
    assert!(recorded_var("OUT_DIR"));
    assert!(!recorded_var("CARGO_MAKEFLAGS"));
    assert!(!recorded_var("PATH"));
}

#[test]
fn cargo_doc_documents_libraries_and_binaries_not_named_as_their_library() {
    let metadata = serde_json::json!({
        "workspace_members": ["a 0.1.0", "b 0.1.0"],
        "packages": [
            {"id": "a 0.1.0", "name": "a-pkg", "targets": [
                {"name": "a-pkg", "kind": ["lib"], "doc": true},
                {"name": "a-pkg", "kind": ["bin"], "doc": true},
                {"name": "a-replay", "kind": ["bin"], "doc": true},
                {"name": "it", "kind": ["test"], "doc": false},
                {"name": "window", "kind": ["bench"], "doc": false},
            ]},
            {"id": "b 0.1.0", "name": "b", "targets": [
                {"name": "b", "kind": ["bin"], "doc": true},
                {"name": "corpus", "kind": ["bin"], "doc": false},
            ]},
            {"id": "dep 1.0.0", "name": "dep", "targets": [
                {"name": "dep", "kind": ["lib"], "doc": true},
            ]},
        ],
    });
    let t = |package: &str, krate: &str, kind| Target {
        package: package.into(),
        krate: krate.into(),
        kind,
    };
    assert_eq!(
        documented(&metadata),
        vec![
            t("a-pkg", "a_pkg", Kind::Lib),
            t("a-pkg", "a_replay", Kind::Bin),
            t("b", "b", Kind::Bin),
        ]
    );
    let lib = t("a-pkg", "a_pkg", Kind::Lib);
    assert_eq!(lib.key(), "a-pkg.a_pkg.lib");
    assert_eq!(
        lib.records(Path::new("r")),
        [
            PathBuf::from("r/a-pkg.a_pkg.lib.json"),
            PathBuf::from("r/a-pkg.a_pkg.lib.test.json")
        ]
    );
}
