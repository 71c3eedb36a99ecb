//! The stand-ins for docker, kind, kubectl, cargo and the harness that the tests of
//! `cargo xtask kind` put first on PATH, and the forwarded ports' answers. Self-contained:
//! the crate's unit tests and its integration test (tests/kind.rs) both include it.
//!
//! Every stub appends `NAME ARGS` to the file STUB_CALLS and fails (exit 1) when STUB_FAIL
//! is a prefix of that line. The processes that stay up (port-forwards, log followers)
//! append their pid to STUB_PIDS; counters and what the harness saw go into STUB_STATE.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

/// Appends the call, then fails it if STUB_FAIL is a prefix of it.
pub const PRELUDE: &str = r#"#!/bin/sh
call="$(basename "$0") $*"
printf '%s\n' "$call" >> "$STUB_CALLS"
if [ -n "$STUB_FAIL" ]; then
  case "$call" in "$STUB_FAIL"*) echo "$call: failing, as the test asks" >&2; exit 1 ;; esac
fi
"#;

pub const DOCKER: &str = r#"[ "$DOCKER_BUILDKIT" = 1 ] || { echo "no BuildKit" >&2; exit 3; }
"#;

pub const KIND: &str = r#"case "$1 $2" in
  "get clusters") for c in $STUB_CLUSTERS; do echo "$c"; done ;;
  "create cluster" | "export kubeconfig")
    printf 'apiVersion: v1\nkind: Config\nusers: [{name: admin, user: {client-key-data: c2VjcmV0}}]\n' >"$KUBECONFIG" ;;
  "export logs") mkdir -p "$5" && echo "node logs" >"$5/kind.log" ;;
  "version "*) echo "kind v0.31.0 (stub)" ;;
esac
"#;

/// Port-forwards: STUB_FORWARD_DIES ends the first run of that Service's at once,
/// STUB_FORWARD_ENDS ends each run of it after 0.2 s; otherwise they stay up.
pub const KUBECTL: &str = r#"case " $* " in
  *" port-forward "*)
    for a in "$@"; do case $a in svc/*) svc=${a#svc/} ;; esac; done
    n=$(cat "$STUB_STATE/forward-$svc" 2>/dev/null || echo 0)
    n=$((n + 1))
    echo "$n" >"$STUB_STATE/forward-$svc"
    if [ "$STUB_FORWARD_DIES" = "$svc" ] && [ "$n" = 1 ]; then
      echo "error: lost connection to pod" >&2
      exit 1
    fi
    if [ "$STUB_FORWARD_ENDS" = "$svc" ]; then
      sleep 0.2
      echo "error: lost connection to pod" >&2
      exit 1
    fi
    echo "Forwarding from 127.0.0.1 -> 8080"
    echo $$ >>"$STUB_PIDS"
    exec sleep 300 ;;
  *" logs --follow "*)
    for a in "$@"; do case $a in app.kubernetes.io/name=*) app=${a#*=} ;; esac; done
    echo "$app: a log line"
    echo $$ >>"$STUB_PIDS"
    exec sleep 300 ;;
  *" --previous "*) echo "previous terminated container not found" >&2; exit 1 ;;
  *" logs deployment/"*) echo "logs of $*" ;;
  " version ") echo "Client Version: v1.33.7 (stub)" ;;
  *" get "* | *" describe "*) echo "state of $*" ;;
esac
"#;

/// `run` writes junit.xml into --out; with STUB_HARNESS_WAITS it then waits to be
/// signalled, and exits 130 as the harness does.
pub const HARNESS: &str = r#"case $1 in
  provider-args) echo '["--max-reconcile-rate=7","--poll-interval=20s"]' ;;
  run)
    echo "$KUBECONFIG" >"$STUB_STATE/harness-kubeconfig"
    while [ $# -gt 0 ]; do
      case $1 in
        --out) out=$2; shift ;;
        --kubeconfig) kubeconfig=$2; shift ;;
      esac
      shift
    done
    [ -s "$kubeconfig" ] || { echo "no kubeconfig at $kubeconfig" >&2; exit 9; }
    mkdir -p "$out" && echo '<testsuites/>' >"$out/junit.xml"
    if [ -n "$STUB_HARNESS_WAITS" ]; then
      trap 'kill $child; echo stopped >"$out/harness-stopped"; exit 130' INT TERM
      sleep 300 &
      child=$!
      echo $$ >"$STUB_STATE/harness.pid"
      wait $child
    fi
    exit "${STUB_HARNESS_EXIT:-0}" ;;
esac
"#;

pub const CARGO: &str = r#"mkdir -p "$CARGO_TARGET_DIR/release" && cp "$STUB_BIN/harness" "$CARGO_TARGET_DIR/release/harness"
"#;

/// Writes the stubs into `bin`, executable.
pub fn write(bin: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for (name, body) in [
        ("docker", DOCKER),
        ("kind", KIND),
        ("kubectl", KUBECTL),
        ("harness", HARNESS),
        ("cargo", CARGO),
    ] {
        let path = bin.join(name);
        std::fs::write(&path, format!("{PRELUDE}{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// A loopback port that answers every request with 200, for the life of the tests.
pub fn answering_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut request = [0; 1024];
            let _ = conn.read(&mut request);
            let _ = conn.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n");
        }
    });
    port
}
