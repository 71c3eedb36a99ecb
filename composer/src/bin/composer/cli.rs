//! The command line: core's flag names (`cmd/crossplane/core/core.go`), their defaults,
//! and their validation.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use limiter::crossplane::circuit::{BreakerConfig, Mode};
use limiter::go::GoDuration;

/// Crossplane core's composite controllers: one controller per
/// CompositeResourceDefinition, composing its XRs through their Composition's function
/// pipeline.
///
/// At start it reads the Functions, Compositions, CompositionRevisions and XRDs from the
/// API server, applies each XRD's XR CRD, and starts one controller per XRD with watches
/// on its XRs and on CompositionRevisions. A Function annotated
/// `render.crossplane.io/runtime: InProcess` is the built-in function, run in this
/// process; one annotated `render.crossplane.io/runtime: Development` (with
/// `render.crossplane.io/runtime-development-target: HOST:PORT`) is called over plaintext
/// gRPC. An XRD created after the start gets its XR CRD and controller from a watch on
/// XRDs; Compositions and their revisions are watched too; Functions are read at start
/// only (restart to pick up a new one). The API server must serve Crossplane's kinds:
/// `--print-crds` prints open CRDs of them for one without Crossplane installed.
///
/// Exit codes: 0 stopped by SIGTERM or Ctrl-C; 1 a failure while running; 2 bad flags or
/// a failed setup (no cluster, no readable kubeconfig, a port in use).
#[derive(Debug, Parser)]
#[command(name = "composer", version)]
pub struct Cli {
    /// The kubeconfig to use; without it, the in-cluster config, else `KUBECONFIG` or
    /// `~/.kube/config`.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Workers per XR controller (core's `--max-reconcile-rate`; also accepted as
    /// `--max-concurrent-reconciles`).
    #[arg(long, alias = "max-concurrent-reconciles", default_value_t = 100, value_parser = positive_count)]
    pub max_reconcile_rate: usize,

    /// How often an XR is reconciled when realtime compositions are off (a Go duration:
    /// 30s, 1m, 1h30m).
    #[arg(long, default_value = "1m", value_parser = positive_duration)]
    pub poll_interval: Duration,

    /// The lower bound of an XR's `crossplane.io/poll-interval` annotation.
    #[arg(long, default_value = "1s", value_parser = positive_duration)]
    pub min_poll_interval: Duration,

    /// How often every XR is queued again, whatever happened.
    #[arg(long, default_value = "1h", value_parser = positive_duration)]
    pub sync_interval: Duration,

    /// Reconcile XRs when their watch events arrive, through the circuit breaker
    /// (`--enable-realtime-compositions=false` turns it off: XRs are polled).
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set, value_name = "BOOL")]
    pub enable_realtime_compositions: bool,

    /// The circuit breaker's bucket: events an XR may receive at once.
    #[arg(long, default_value_t = 100.0, value_parser = positive_rate)]
    pub circuit_breaker_burst: f64,

    /// Tokens per second the breaker's bucket refills.
    #[arg(long, default_value_t = 1.0, value_parser = positive_rate)]
    pub circuit_breaker_refill_rate: f64,

    /// How long an open circuit stays open.
    #[arg(long, default_value = "5m", value_parser = positive_duration)]
    pub circuit_breaker_cooldown: Duration,

    /// When an open circuit closes: `released` (as Crossplane releases it, on the first
    /// event after the cooldown) or `eager` (crossplane/crossplane PR #7725: as soon as the
    /// cooldown has passed).
    #[arg(long, default_value = "released", value_name = "MODE")]
    pub circuit_breaker_mode: Mode,

    /// Serve Prometheus metrics (core's function metrics) at `http://ADDR/metrics`.
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<SocketAddr>,

    /// Print open CRDs of the Crossplane kinds the composer reads (XRDs, Compositions,
    /// CompositionRevisions, Functions) as YAML documents and exit: for an API server
    /// without Crossplane (`mock-apiserver --crd FILE`, or `kubectl apply -f FILE`).
    #[arg(long)]
    pub print_crds: bool,
}

impl Cli {
    /// The breaker's settings from the flags.
    pub fn breaker(&self) -> BreakerConfig {
        BreakerConfig::default()
            .burst(self.circuit_breaker_burst)
            .refill_per_second(self.circuit_breaker_refill_rate)
            .cooldown(GoDuration::from_std(self.circuit_breaker_cooldown))
            .mode(self.circuit_breaker_mode)
    }
}

fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = GoDuration::parse(s)
        .map_err(|e| format!("{e} (a Go duration such as 30s, 1m or 1h30m)"))?;
    if d.as_nanos() <= 0 {
        return Err(format!("{s:?} is not a positive duration"));
    }
    Ok(d.to_std())
}

fn positive_rate(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("{s:?} is not a number above 0"));
    }
    Ok(v)
}

fn positive_count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{s:?} is not a whole number above 0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_core_s() {
        let cli = Cli::try_parse_from(["composer"]).unwrap();
        assert_eq!(cli.max_reconcile_rate, 100);
        assert_eq!(cli.poll_interval, Duration::from_secs(60));
        assert_eq!(cli.min_poll_interval, Duration::from_secs(1));
        assert_eq!(cli.sync_interval, Duration::from_secs(3600));
        assert!(cli.enable_realtime_compositions);
        assert_eq!(cli.breaker(), BreakerConfig::default());
    }

    #[test]
    fn flags_parse_as_core_spells_them() {
        let cli = Cli::try_parse_from([
            "composer",
            "--max-concurrent-reconciles=7",
            "--poll-interval=1h30m",
            "--enable-realtime-compositions=false",
            "--circuit-breaker-cooldown=90s",
            "--circuit-breaker-mode=eager",
            "--circuit-breaker-refill-rate=0.5",
        ])
        .unwrap();
        assert_eq!(cli.max_reconcile_rate, 7);
        assert_eq!(cli.poll_interval, Duration::from_secs(5400));
        assert!(!cli.enable_realtime_compositions);
        let breaker = cli.breaker();
        assert_eq!(
            breaker.cooldown,
            GoDuration::from_std(Duration::from_secs(90))
        );
        assert_eq!(breaker.mode, Mode::EagerClose);
        assert!((breaker.refill_per_second - 0.5).abs() < f64::EPSILON);
        let on = Cli::try_parse_from(["composer", "--enable-realtime-compositions"]).unwrap();
        assert!(on.enable_realtime_compositions);
    }

    #[test]
    fn bad_values_are_refused_with_the_reason() {
        for (flag, words) in [
            ("--poll-interval=60", "Go duration"),
            ("--sync-interval=0s", "not a positive duration"),
            ("--circuit-breaker-refill-rate=0", "above 0"),
            ("--circuit-breaker-burst=NaN", "above 0"),
            ("--max-reconcile-rate=0", "above 0"),
            ("--circuit-breaker-mode=fast", "released or eager"),
        ] {
            let error = Cli::try_parse_from(["composer", flag])
                .unwrap_err()
                .to_string();
            assert!(error.contains(words), "{flag}: {error}");
        }
    }
}
