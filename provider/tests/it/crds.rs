//! The generated CRD files in `ci/manifests/crds/` are current.
//!
//! Regenerate them with `cargo run -p provider -- crds --out ci/manifests/crds`.

use std::path::PathBuf;

use provider::crd::{crd_file_name, crd_yaml, crds};

#[test]
fn the_crd_manifests_in_ci_are_current() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ci/manifests/crds");
    for crd in crds() {
        let path = dir.join(crd_file_name(&crd));
        let expected = format!("---\n{}", crd_yaml(&crd).unwrap());
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            actual == expected,
            "{} is stale or missing; run `cargo run -p provider -- crds --out ci/manifests/crds`",
            path.display()
        );
    }
}

#[test]
fn the_crds_load_into_the_mock_api_server() {
    let server = mock_apiserver::ApiServer::default();
    let yaml = provider::crd::crds_yaml().unwrap();
    assert_eq!(server.load_crd_yaml(&yaml).unwrap(), crds().len());
    assert_eq!(
        server.object_count("mockcloud.example.org", "v1alpha1", "buckets"),
        0
    );
}
