//! The images ci/manifests runs, loadtest/provider and loadtest/mock-cloud, and the one a
//! sweep's Indexed Job runs, loadtest/harness (`harness sweep --kubernetes-job`): built
//! from ci/docker/*.Dockerfile and loaded into a kind cluster, where the manifests and the
//! Job run them with imagePullPolicy IfNotPresent. `cargo xtask kind` builds and loads the
//! manifests' two; `cargo xtask kind-images` all three.

use std::path::Path;
use std::process::Command;

use super::env::Env;
use crate::step::{self, Error, Result};

/// The images ci/manifests runs, by the name of their Dockerfile and cargo package.
pub const IMAGES: [&str; 2] = ["provider", "mock-cloud"];

/// Every image of ci/docker: the manifests' and the harness's, which a sweep's Indexed Job
/// runs.
pub const ALL_IMAGES: [&str; 3] = ["provider", "mock-cloud", "harness"];

/// `cargo xtask kind-images`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Environment: CLUSTER_NAME, the kind cluster to load into (default: \
loadtest); IMAGE_TAG, the images' tag (default: dev; ci/manifests runs dev, so change it only \
together with an overlay's images:). Building needs docker with BuildKit (the default since \
Docker 23); loading needs kind."
)]
pub struct Args {
    /// Only build the images.
    #[arg(long, conflicts_with = "load_only")]
    pub build_only: bool,
    /// Only load the images (built before) into the cluster.
    #[arg(long)]
    pub load_only: bool,
}

/// A heading and its command.
pub type Step = (String, Command);

/// `DOCKER_BUILDKIT=1 docker build …` of each of `images`, in `root`.
pub fn build(env: &Env, root: &Path, docker: &Path, tag: &str, images: &[&str]) -> Vec<Step> {
    images
        .iter()
        .map(|name| {
            let image = format!("loadtest/{name}:{tag}");
            let file = format!("ci/docker/{name}.Dockerfile");
            let mut c = env.command(
                root,
                docker,
                &["build", "--file", &file, "--tag", &image, "."],
            );
            c.env("DOCKER_BUILDKIT", "1");
            (format!("==> docker build {image}"), c)
        })
        .collect()
}

/// `kind load docker-image` of `images` into `cluster`, in `root`.
pub fn load(
    env: &Env,
    root: &Path,
    kind: &Path,
    cluster: &str,
    tag: &str,
    images: &[&str],
) -> Step {
    let refs: Vec<String> = images
        .iter()
        .map(|name| format!("loadtest/{name}:{tag}"))
        .collect();
    let mut args = vec!["load", "docker-image", "--name", cluster];
    args.extend(refs.iter().map(String::as_str));
    (
        format!(
            "==> kind load docker-image --name {cluster} {}",
            refs.join(" ")
        ),
        env.command(root, kind, &args),
    )
}

/// `cargo xtask kind-images` in `env`.
pub fn run(root: &Path, a: &Args, env: &Env) -> Result {
    let tag = env.get("IMAGE_TAG").unwrap_or_else(|| "dev".to_owned());
    let cluster = env
        .get("CLUSTER_NAME")
        .unwrap_or_else(|| "loadtest".to_owned());
    let tool = |name: &str| {
        env.tool(name)
            .ok_or_else(|| Error::Usage(format!("{name} is not installed")))
    };
    let mut steps = Vec::new();
    if !a.load_only {
        steps.extend(build(env, root, &tool("docker")?, &tag, &ALL_IMAGES));
    }
    if !a.build_only {
        steps.push(load(env, root, &tool("kind")?, &cluster, &tag, &ALL_IMAGES));
    }
    for (heading, c) in steps {
        println!("{heading}");
        step::run(c, heading.trim_start_matches("==> "))?;
    }
    Ok(())
}
