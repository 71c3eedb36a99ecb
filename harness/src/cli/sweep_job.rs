//! `harness sweep`'s points apart from the sweep: the Indexed Job that runs them on a
//! cluster (written, or applied through kube), and their results in S3 (a point's upload,
//! `--collect`'s download).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use harness::sweep::Sweep;
use harness::sweep::job::{self, JobOptions, Results};
use harness::sweep::remote::S3Url;

use super::stdout::{out, outln};

/// The options of a sweep's points run apart: as an Indexed Job, their results in S3.
#[derive(Debug, Args)]
#[command(next_help_heading = "Points apart: a Kubernetes Indexed Job, results in S3")]
pub struct RemoteArgs {
    /// Run nothing: write the sweep as a Kubernetes Indexed Job, a ConfigMap with the
    /// scenario file and a batch/v1 Job of one completion per point, --jobs pods at once
    /// [default: every point], each pod running `harness sweep FILE … ` in --image with
    /// its point from JOB_COMPLETION_INDEX and the sweep's --vary, --set, --slo, --budget,
    /// --cost and --real-time. The manifests go to standard output (pipe them to `kubectl
    /// apply -f -`), and to OUT/job.yaml when --out is given. Needs --results s3://… or
    /// --results-volume.
    #[arg(long, conflicts_with_all = ["collect", "point"])]
    pub kubernetes_job: bool,
    /// Apply the ConfigMap and the Job (server-side apply) to the cluster of --kubeconfig
    /// instead of printing them. A Job's pod template cannot change: delete a Job of the
    /// same name before applying another sweep under it.
    #[arg(long, requires = "kubernetes_job")]
    pub apply: bool,
    /// The kubeconfig --apply uses [default: KUBECONFIG, else ~/.kube/config, else the
    /// in-cluster config].
    #[arg(long, value_name = "FILE", requires = "apply")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context --apply uses [default: its current context].
    #[arg(long, value_name = "NAME", requires = "apply")]
    pub context: Option<String>,
    /// The Job's and the ConfigMap's namespace [default: the kubeconfig context's, for
    /// --apply; none written otherwise, so kubectl's applies].
    #[arg(long, value_name = "NAME", requires = "kubernetes_job")]
    pub namespace: Option<String>,
    /// The Job's and the ConfigMap's name [default: SCENARIO-NAME-sweep].
    #[arg(long, value_name = "NAME", requires = "kubernetes_job")]
    pub job_name: Option<String>,
    /// The harness image the pods run (ci/docker/harness.Dockerfile, built with feature
    /// `aws`; `cargo xtask kind-images` builds and loads it) [default: loadtest/harness:dev].
    #[arg(long, value_name = "IMAGE", requires = "kubernetes_job")]
    pub image: Option<String>,
    /// The PersistentVolumeClaim (in the Job's namespace) the pods write their points to,
    /// mounted at /results, each point into /results/JOB-NAME/points/NNN; ReadWriteMany
    /// when the pods land on several nodes. Copy /results/JOB-NAME out and give it to
    /// `--collect --out`.
    #[arg(
        long,
        value_name = "CLAIM",
        requires = "kubernetes_job",
        conflicts_with = "results"
    )]
    pub results_volume: Option<String>,
    /// The Secret (in the Job's namespace) whose keys become the pods' environment: the
    /// S3 credentials AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN,
    /// AWS_REGION). Without it the pods have no credentials of their own.
    #[arg(long, value_name = "NAME", requires = "kubernetes_job")]
    pub s3_credentials_secret: Option<String>,
    /// A pod's CPU request.
    #[arg(long, value_name = "QUANTITY", default_value = "1")]
    pub pod_cpu: String,
    /// A pod's memory request and limit.
    #[arg(long, value_name = "QUANTITY", default_value = "1Gi")]
    pub pod_memory: String,
    /// Where points run apart leave their results: s3://BUCKET/PREFIX, each point's files
    /// (result.json, junit.xml, report.html) at PREFIX/points/NNN/. With --point, the point
    /// uploads them after its run (PutObject); with --collect, each point's are downloaded
    /// by its key into --out first (GetObject); with --kubernetes-job, the pods are given
    /// it. The bucket must exist. Credentials and region from the environment
    /// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION); needs a
    /// harness built with feature `aws`, except to write a Job.
    #[arg(long, value_name = "s3://BUCKET/PREFIX")]
    pub results: Option<S3Url>,
    /// The S3 endpoint, for a store other than AWS's (mock-cloud, MinIO), addressed
    /// path-style; passed on to a Job's pods [default: AWS_ENDPOINT_URL_S3, else
    /// AWS_ENDPOINT_URL, else AWS's].
    #[arg(long, value_name = "URL", requires = "results")]
    pub s3_endpoint: Option<String>,
}

/// `--kubernetes-job`: the ConfigMap and the Job of `sw`, printed (and written to
/// `out/job.yaml` when given) or applied.
pub(super) fn kubernetes_job(
    sw: &Sweep,
    r: &RemoteArgs,
    definition: Vec<String>,
    jobs: Option<usize>,
    timeout_s: Option<u64>,
    out_dir: Option<&Path>,
) -> Result<()> {
    let results = match (&r.results, &r.results_volume) {
        (Some(url), None) => Results::S3 {
            url: url.clone(),
            endpoint: r.s3_endpoint.clone(),
            credentials_secret: r.s3_credentials_secret.clone(),
        },
        (None, Some(claim)) => Results::Volume {
            claim: claim.clone(),
        },
        _ => bail!(
            "--kubernetes-job needs --results s3://BUCKET/PREFIX or --results-volume CLAIM: a pod's own files go with it"
        ),
    };
    let file_name = sw
        .file
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .context("the scenario path names no file")?;
    let scenario = std::fs::read_to_string(&sw.file)
        .with_context(|| format!("cannot read {}", sw.file.display()))?;
    let o = JobOptions {
        name: job::object_name(
            r.job_name
                .as_deref()
                .unwrap_or(&format!("{}-sweep", sw.name)),
        ),
        namespace: r.namespace.clone(),
        image: r
            .image
            .clone()
            .unwrap_or_else(|| job::DEFAULT_IMAGE.to_owned()),
        completions: sw.grid.len(),
        parallelism: jobs.unwrap_or(sw.grid.len()),
        file_name,
        scenario,
        args: definition,
        results,
        timeout_s,
        cpu: r.pod_cpu.clone(),
        memory: r.pod_memory.clone(),
    };
    let yaml = job::render(&o).context("cannot write the Job as YAML")?;
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("job.yaml");
        std::fs::write(&path, &yaml).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !r.apply {
        out!("{yaml}")?;
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (ns, name) = runtime.block_on(harness::sweep::apply::apply(
        r.kubeconfig.as_deref(),
        r.context.clone(),
        r.namespace.clone(),
        &job::config_map(&o),
        &job::job(&o),
    ))?;
    outln!(
        "configmap/{name} and job.batch/{name} applied in namespace {ns}: {} points, {} at once; `kubectl -n {ns} get job {name}` follows them",
        o.completions,
        o.parallelism.clamp(1, o.completions.max(1))
    )?;
    Ok(())
}

/// The error of `--results s3://…` in a harness built without feature `aws`.
#[cfg(not(feature = "aws"))]
fn needs_aws(url: &S3Url) -> anyhow::Error {
    anyhow::anyhow!(
        "--results {url} reads and writes S3 through the AWS SDK, which this harness is built without: build it with feature `aws` (cargo build --release -p harness --features aws)"
    )
}

/// The S3 client of `r`'s endpoint (or the environment's) and a runtime to drive it.
#[cfg(feature = "aws")]
fn s3_session(r: &RemoteArgs) -> Result<(aws_sdk_s3::Client, tokio::runtime::Runtime)> {
    let endpoint = harness::sweep::s3::endpoint(r.s3_endpoint.as_deref());
    let client = harness::sweep::s3::client(endpoint.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    Ok((client, runtime))
}

/// After point `index`'s run into `out`: its files uploaded to `url`.
pub(super) fn upload(r: &RemoteArgs, url: &S3Url, index: usize, out: &Path) -> Result<()> {
    #[cfg(feature = "aws")]
    {
        let (client, runtime) = s3_session(r)?;
        let keys = runtime.block_on(harness::sweep::s3::upload_point(&client, url, index, out))?;
        outln!(
            "uploaded to s3://{}: {}",
            url.bucket,
            if keys.is_empty() {
                "nothing (the run wrote no file)".to_owned()
            } else {
                keys.join(", ")
            }
        )?;
        Ok(())
    }
    #[cfg(not(feature = "aws"))]
    {
        let _ = (r, index, out);
        Err(needs_aws(url))
    }
}

/// Before `--collect`: the points' files downloaded from `url` into `out`; the points
/// without a result there, each with why.
pub(super) fn download(
    r: &RemoteArgs,
    url: &S3Url,
    points: usize,
    out: &Path,
) -> Result<BTreeMap<usize, String>> {
    #[cfg(feature = "aws")]
    {
        let (client, runtime) = s3_session(r)?;
        let missing = runtime.block_on(harness::sweep::s3::download_points(
            &client, url, points, out,
        ))?;
        eprintln!(
            "sweep: {} of {points} points' results downloaded from {url} into {}",
            points - missing.len(),
            out.display()
        );
        Ok(missing)
    }
    #[cfg(not(feature = "aws"))]
    {
        let _ = (r, points, out);
        Err(needs_aws(url))
    }
}
