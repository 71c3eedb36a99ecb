//! Kubeconfig files that point kubectl and kube clients at a server.

use std::path::Path;

/// A kubeconfig for `url` (e.g. `http://127.0.0.1:6443`) with one cluster, user and
/// context named `mock-apiserver`, namespace `default`, and no credentials.
pub fn kubeconfig(url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: mock-apiserver
  cluster:
    server: {url}
users:
- name: mock-apiserver
  user: {{}}
contexts:
- name: mock-apiserver
  context:
    cluster: mock-apiserver
    user: mock-apiserver
    namespace: default
current-context: mock-apiserver
preferences: {{}}
"
    )
}

/// Writes [`kubeconfig`] for `url` to `path`: to a file beside it first, renamed into
/// place, so that a reader waiting for `path` to appear never reads it half written (an
/// empty file has no current context).
pub fn write_kubeconfig(path: &Path, url: &str) -> std::io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    std::fs::write(&partial, kubeconfig(url))?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubeconfig_names_the_server_and_a_current_context() {
        let text = kubeconfig("http://127.0.0.1:6443");
        let value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(
            value["clusters"][0]["cluster"]["server"],
            "http://127.0.0.1:6443"
        );
        assert_eq!(value["current-context"], "mock-apiserver");
    }
}
