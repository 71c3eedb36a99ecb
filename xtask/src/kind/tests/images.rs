//! `cargo xtask kind-images` against the stubs.

use super::*;
use crate::kind::images::{self, Args};

fn images(f: &Fake, build_only: bool, load_only: bool) -> Result<(), String> {
    let env = Env::fixed(f.vars.clone());
    let args = Args {
        build_only,
        load_only,
    };
    images::run(&step::workspace_root(), &args, &env).map_err(|e| e.to_string())
}

const BUILDS: [&str; 3] = [
    "docker build --file ci/docker/provider.Dockerfile --tag loadtest/provider:dev .",
    "docker build --file ci/docker/mock-cloud.Dockerfile --tag loadtest/mock-cloud:dev .",
    "docker build --file ci/docker/harness.Dockerfile --tag loadtest/harness:dev .",
];

#[test]
fn the_three_images_are_built_with_buildkit_then_loaded() {
    let f = Fake::new();
    assert_eq!(images(&f, false, false), Ok(()));
    let load = "kind load docker-image --name stub loadtest/provider:dev loadtest/mock-cloud:dev loadtest/harness:dev";
    assert_eq!(f.calls(), [BUILDS[0], BUILDS[1], BUILDS[2], load]);

    let f = Fake::new();
    assert_eq!(images(&f, true, false), Ok(()));
    assert_eq!(f.calls(), BUILDS);
}

#[test]
fn loading_alone_takes_the_cluster_and_tag_from_the_environment() {
    let mut f = Fake::new();
    f.set("CLUSTER_NAME", "other").set("IMAGE_TAG", "t2");
    assert_eq!(images(&f, false, true), Ok(()));
    assert_eq!(
        f.calls(),
        [
            "kind load docker-image --name other loadtest/provider:t2 loadtest/mock-cloud:t2 loadtest/harness:t2"
        ]
    );
    // Only the tool a step runs is looked for: kind for the load (kind calls docker
    // itself, and says so if it is missing).
    let mut f = Fake::new();
    std::fs::remove_file(f.dir.0.join("bin/docker")).unwrap();
    let bin = f.dir.0.join("bin").display().to_string();
    f.set("PATH", &bin);
    assert_eq!(images(&f, false, true), Ok(()));
    assert_eq!(
        images(&f, true, false),
        Err("docker is not installed".to_owned())
    );
}

#[test]
fn a_failed_build_stops_before_the_load() {
    let mut f = Fake::new();
    f.set(
        "STUB_FAIL",
        "docker build --file ci/docker/provider.Dockerfile",
    );
    let err = images(&f, false, false).unwrap_err();
    assert_eq!(
        err,
        "docker build loadtest/provider:dev failed (exit status: 1)"
    );
    assert_eq!(f.calls(), [BUILDS[0]]);
}
