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

/// Writes [`kubeconfig`] for `url` to `path`, whole: to a file beside it first, then
/// renamed into place, so that whoever waits for `path` to appear never reads it half
/// written.
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

    #[test]
    fn the_kubeconfig_file_is_written_whole_and_nothing_is_left_beside_it() {
        let dir = std::env::temp_dir().join(format!("mock-apiserver-kc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kubeconfig");
        write_kubeconfig(&path, "http://127.0.0.1:6443").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            kubeconfig("http://127.0.0.1:6443")
        );
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["kubeconfig"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
