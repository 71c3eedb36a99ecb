//! The processes of a cluster run: mock-apiserver, mock-cloud and the provider each a child
//! process killed when dropped, and the provider started again the way the kubelet would
//! after its Deployment is rolled.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A loopback port free now and not handed out before by this process. The kernel may give
/// a port just released to the next `bind(0)`: a test that took mock-apiserver's port and
/// then mock-cloud's before either server bound its own once got the same port twice, and
/// mock-apiserver could not listen.
pub(super) fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// A child process killed when dropped, so a failing test leaves nothing running.
pub(super) struct Proc(pub(super) Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(super) fn spawn(cmd: &mut Command, log: &Path) -> Proc {
    let out = std::fs::File::create(log).expect("log file");
    let err = out.try_clone().expect("log file");
    Proc(
        cmd.stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .spawn()
            .expect("the binary starts"),
    )
}

pub(super) fn wait_for(what: &str, deadline: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < deadline, "{what} did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(super) fn listening(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

pub(super) struct Provider {
    pub(super) bin: PathBuf,
    pub(super) kubeconfig: PathBuf,
    pub(super) cloud: String,
    pub(super) metrics_port: u16,
    pub(super) logs: PathBuf,
    pub(super) starts: u32,
    /// Its settings' flags (`--poll-interval=5s`, …): what the Deployment would pass.
    pub(super) flags: Vec<String>,
}

/// The flags of the provider that `ci/manifests` would deploy for the settings
/// `--max-reconcile-rate=10 --rate-limit-model=crossplane --poll-interval=5s`.
pub(super) fn default_flags() -> Vec<String> {
    [
        "--max-reconcile-rate=10",
        "--rate-limit-model=crossplane",
        "--poll-interval=5s",
    ]
    .map(str::to_owned)
    .to_vec()
}

impl Provider {
    pub(super) fn start(&mut self) -> Proc {
        self.starts += 1;
        let p = spawn(
            Command::new(&self.bin)
                .arg("--kubeconfig")
                .arg(&self.kubeconfig)
                .args(["--cloud-endpoint", &self.cloud])
                .args([
                    "--metrics-addr",
                    &format!("127.0.0.1:{}", self.metrics_port),
                ])
                .args(["--shutdown-timeout", "5s"])
                .args(&self.flags),
            &self.logs.join(format!("provider-{}.log", self.starts)),
        );
        wait_for("the provider", Duration::from_secs(30), || {
            listening(self.metrics_port)
        });
        p
    }
}

pub(super) fn sigterm(p: &mut Proc) {
    let _ = Command::new("kill")
        .args(["-TERM", &p.0.id().to_string()])
        .status();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(15) {
        if let Ok(Some(_)) = p.0.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
