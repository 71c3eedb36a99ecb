//! The end of every run of `cargo xtask kind`, whatever happened: the cluster's state and
//! the pods' logs into LOG_DIR, the background commands ended, kind's own logs after a
//! failure, and the cluster deleted if the run created it.

use std::fs::{self, File};
use std::process::{Command, Stdio};

use super::NAMESPACE as NS;
use super::session::{APPS, Run};

impl Run<'_> {
    /// Whatever happened: the cluster's state and the pods' logs into LOG_DIR, the
    /// background commands ended, kind's logs after a failure, and the cluster deleted if
    /// this run created it (unless KEEP_CLUSTER=1). Nothing here stops on a failure.
    pub(super) fn cleanup(&mut self, rc: i32) {
        let (s, ns) = (self.s, NS);
        self.steps
            .step(&format!("collecting logs into {}", s.log_dir));
        let have_kubeconfig = fs::metadata(&self.kubeconfig).is_ok_and(|m| m.len() > 0);
        if have_kubeconfig {
            std::thread::sleep(self.ctx.timing.settle); // the followers' last lines
            let state = [
                "-n",
                ns,
                "get",
                "deployments,replicasets,pods,services,events",
            ];
            let c = self.kubectl(&[&state[..], &["-o", "wide"]].concat());
            self.collect(c, "cluster-state.txt", true);
            let c = self.kubectl(&["-n", ns, "describe", "deployments,pods"]);
            self.collect(c, "describe.txt", true);
            // `logs deployment/NAME` waits up to --pod-running-timeout (20 s by default) for
            // a pod to exist; at cleanup the pods exist already or never will.
            for app in APPS {
                // Earlier runs of a container that restarted in place (crash, OOM kill).
                let file = format!("{app}.previous.log");
                let deployment = format!("deployment/{app}");
                let mut c = self.kubectl(&[&logs(&deployment)[..], &["--previous"]].concat());
                c.stderr(Stdio::null());
                if !self.collect(c, &file, false) {
                    let _ = fs::remove_file(self.log(&file));
                }
            }
        }
        for mut b in self.background.drain(..) {
            b.stop();
        }
        self.forwards = 0;
        for app in APPS {
            // The follower missed everything (it could not start): take what is there now.
            let file = format!("{app}.log");
            let empty = fs::metadata(self.log(&file)).map_or(true, |m| m.len() == 0);
            if have_kubeconfig && empty {
                let deployment = format!("deployment/{app}");
                self.collect(self.kubectl(&logs(&deployment)), &file, true);
            }
        }
        if self.created {
            if rc != 0 {
                let dir = format!("{}/kind", s.log_dir);
                let mut c = self.kind(&["export", "logs", "--name", &s.cluster, &dir]);
                let _ = c.stdout(Stdio::null()).stderr(Stdio::null()).status();
            }
            if s.keep_cluster {
                println!(
                    "kept cluster {0}: kind export kubeconfig --name {0}",
                    s.cluster
                );
            } else {
                self.steps
                    .step(&format!("kind delete cluster --name {}", s.cluster));
                let _ = self
                    .kind(&["delete", "cluster", "--name", &s.cluster])
                    .status();
            }
        }
    }

    /// Runs `c` with its stdout (and its stderr with `stderr`) into LOG_DIR/`file`;
    /// whether it succeeded.
    fn collect(&self, mut c: Command, file: &str, stderr: bool) -> bool {
        let Ok(out) = File::create(self.log(file)) else {
            return false;
        };
        if stderr && let Ok(err) = out.try_clone() {
            c.stderr(err);
        }
        c.stdout(out).stdin(Stdio::null());
        c.status().is_ok_and(|s| s.success())
    }
}

/// `-n NS logs DEPLOYMENT --all-containers --timestamps --pod-running-timeout=2s`.
fn logs(deployment: &str) -> [&str; 7] {
    let each = [
        "--all-containers",
        "--timestamps",
        "--pod-running-timeout=2s",
    ];
    ["-n", NS, "logs", deployment, each[0], each[1], each[2]]
}
