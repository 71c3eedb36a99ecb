//! Every markdown file of the repository points only at what a clone has: each relative
//! link `[x](path)` or `[x](path#anchor)` names a file of the repository (and a heading of
//! it), each backquoted `something.md` is a file, and no doc sends the reader to specs kept
//! outside the repository.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository")
}

/// Every `.md` file under `dir`, leaving out build output and hidden directories.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("readable directory")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "target" || name.starts_with("target-") {
            continue;
        }
        if path.is_dir() {
            markdown_files(&path, out);
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The text of `doc` outside fenced code blocks, line by line with their numbers.
fn prose(doc: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in doc.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(title: &str) -> String {
    title
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of `doc`'s headings, with GitHub's `-1`, `-2` … for repeated ones.
fn anchors(doc: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, line) in prose(doc) {
        if !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#'));
        let mut anchor = base.clone();
        let mut n = 0;
        while !out.insert(anchor.clone()) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
    }
    out
}

/// The targets of the inline links on `line`: what stands between `](` and `)`.
fn link_targets(line: &str) -> Vec<&str> {
    let re = regex_lite::Regex::new(r"\]\(([^)\s]+)(?:\s+\x22[^\x22]*\x22)?\)").expect("regex");
    re.captures_iter(line)
        .map(|c| c.get(1).expect("group").as_str())
        .collect()
}

fn is_external(target: &str) -> bool {
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|s| target.starts_with(s))
}

/// Every broken reference of the markdown file `file`, as `file:line: why`.
fn broken_in(root: &Path, file: &Path) -> Vec<String> {
    let doc = std::fs::read_to_string(file).expect("readable markdown");
    let dir = file.parent().expect("a directory");
    let shown = file
        .strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string();
    let mut broken = Vec::new();
    let backquoted = regex_lite::Regex::new(r"`([^`\s]+\.md)`").expect("regex");
    for (n, line) in prose(&doc) {
        for forbidden in ["../shared/", "shared/specs"] {
            if line.contains(forbidden) {
                broken.push(format!(
                    "{shown}:{n}: mentions {forbidden}, which a clone does not have"
                ));
            }
        }
        for target in link_targets(line) {
            if is_external(target) {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
            let resolved = if path.is_empty() {
                file.to_path_buf()
            } else {
                dir.join(path)
            };
            let Ok(resolved) = resolved.canonicalize() else {
                broken.push(format!("{shown}:{n}: {target}: no such file"));
                continue;
            };
            if !resolved.starts_with(root) {
                broken.push(format!("{shown}:{n}: {target}: outside the repository"));
                continue;
            }
            if !anchor.is_empty() && resolved.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&resolved).expect("readable markdown");
                if !anchors(&text).contains(anchor) {
                    broken.push(format!("{shown}:{n}: {target}: no heading #{anchor}"));
                }
            }
        }
        for c in backquoted.captures_iter(line) {
            let named = c.get(1).expect("group").as_str();
            if !dir.join(named).exists() && !root.join(named).exists() {
                broken.push(format!("{shown}:{n}: `{named}`: no such file"));
            }
        }
    }
    broken
}

#[test]
fn every_link_and_markdown_file_named_in_the_docs_resolves_inside_the_repository() {
    let root = root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("docs/budget.md")),
        "the walk found the docs: {files:?}"
    );
    let broken: Vec<String> = files.iter().flat_map(|f| broken_in(&root, f)).collect();
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_link_check_reports_a_missing_file_a_missing_heading_and_a_spec_outside() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("doc-links");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("writable temp dir");
    let dir = dir.canonicalize().expect("temp dir");
    std::fs::write(dir.join("other.md"), "# Other\n\n## The second part\n").expect("write");
    let doc = dir.join("doc.md");
    std::fs::write(
        &doc,
        "# Doc\n\n[ok](other.md#the-second-part) [gone](nowhere.md)\n[bad](other.md#third)\n\
         see ../shared/specs/x.md and `missing.md`\n\n```\n[code](not-checked.md)\n```\n\
         [web](https://example.com/x.md) [self](#doc)\n",
    )
    .expect("write");
    assert_eq!(
        broken_in(&dir, &doc),
        [
            "doc.md:3: nowhere.md: no such file",
            "doc.md:4: other.md#third: no heading #third",
            "doc.md:5: mentions ../shared/, which a clone does not have",
            "doc.md:5: mentions shared/specs, which a clone does not have",
            "doc.md:5: `missing.md`: no such file",
        ]
    );
}

#[test]
fn anchors_follow_githubs_slugs() {
    let a = anchors(
        "## 10. Calls per reconcile by kind and path\n## The stuck create (path P5)\n## Repeat\n## Repeat\n",
    );
    assert!(
        a.contains("10-calls-per-reconcile-by-kind-and-path"),
        "{a:?}"
    );
    assert!(a.contains("the-stuck-create-path-p5"), "{a:?}");
    assert!(a.contains("repeat") && a.contains("repeat-1"), "{a:?}");
}
