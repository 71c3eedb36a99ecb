//! docs/budget.md is where every formula points: each section (§n, §n.m) and lemma the
//! harness cites, in its source and in what it prints (the `predict` listing, the JSON, the
//! assertion table, JUnit and HTML, `--help`), is a heading there, and every symbol a
//! prediction takes as an input is in its glossary.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use harness::predict::core::{CoreShape, Step, predict as predict_core};
use harness::predict::{Prediction, plan};
use harness::report::{assertion_table, html, junit, plan_listing};
use harness::result::evaluate;
use harness::scenario::load;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn budget_md() -> String {
    std::fs::read_to_string(root().join("docs/budget.md")).expect("docs/budget.md exists")
}

/// What a heading names: `2` for `## 2. Hard …`, `2.2` for `### 2.2 crossplane`, `Lemma 1`.
fn headings(doc: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in doc.lines().filter(|l| l.starts_with('#')) {
        let title = line.trim_start_matches('#').trim();
        if let Some(n) = title.strip_prefix("Lemma ") {
            out.insert(format!("Lemma {}", n.trim()));
            continue;
        }
        out.extend(section_number(title));
    }
    out
}

/// The section number `text` starts with (`7.5` of `7.5. Slow provisioning`), if any.
fn section_number(text: &str) -> Option<String> {
    let number: String = text
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let number = number.trim_end_matches('.');
    (!number.is_empty()).then(|| number.to_owned())
}

/// Every `§n`, `§n.m` and `Lemma n` in `text`.
fn references(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices('§') {
        out.extend(section_number(text[i + '§'.len_utf8()..].trim_start()));
    }
    for (i, _) in text.match_indices("Lemma ") {
        let n: String = text[i + "Lemma ".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !n.is_empty() {
            out.insert(format!("Lemma {n}"));
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn scenarios() -> Vec<harness::scenario::Scenario> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .expect("scenarios/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files.iter().map(|f| load(f).expect("loads")).collect()
}

/// Crossplane core's predictions (docs/budget.md §12) for a shape of each kind: TTL polling
/// with two functions, no TTL with a storm of Composition edits, realtime off.
fn core_predictions() -> Vec<Prediction> {
    let base = CoreShape::new(100.0, 5.0, vec![Step::new("a"), Step::new("b")]);
    let shapes = [
        base.clone(),
        CoreShape {
            ttl: 0.0,
            edit_interval: 1.0,
            composed: 60.0,
            watched_per_kind: 60.0,
            ..base.clone()
        },
        CoreShape {
            realtime: false,
            ..base
        },
    ];
    shapes
        .iter()
        .flat_map(|s| predict_core(s).all().cloned().collect::<Vec<_>>())
        .collect()
}

/// What the harness prints: the plan listing and predictions of every shipped scenario,
/// core's predictions, the reports of the fixtures, and every command's help.
fn printed() -> String {
    let mut text = String::new();
    text.push_str(&serde_json::to_string(&core_predictions()).expect("json"));
    for s in scenarios() {
        let p = plan(&s);
        text.push_str(&plan_listing(&s, &p));
        text.push_str(&serde_json::to_string(&p.all().collect::<Vec<_>>()).expect("json"));
    }
    let smoke = scenarios()
        .into_iter()
        .find(|s| s.name == "smoke")
        .expect("smoke");
    for obs in [
        crate::fixture::smoke_observations(),
        crate::fixture::interrupted_observations(),
    ] {
        let r = evaluate(&smoke, &plan(&smoke), &obs);
        text.push_str(&assertion_table(&r));
        text.push_str(&junit(&r));
        text.push_str(&html(&r));
        text.push_str(&serde_json::to_string(&r).expect("json"));
    }
    for cmd in [
        &["--help"][..],
        &["run", "--help"],
        &["predict", "--help"],
        &["validate", "--help"],
        &["compare", "--help"],
        &["report", "--help"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(cmd)
            .output()
            .expect("runs");
        text.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    text
}

#[test]
fn every_section_and_lemma_the_harness_prints_is_a_heading_of_docs_budget_md() {
    let have = headings(&budget_md());
    let text = printed();
    let missing: Vec<String> = references(&text).difference(&have).cloned().collect();
    assert!(
        missing.is_empty(),
        "not headings of docs/budget.md: {missing:?}"
    );
    assert!(
        text.contains("docs/budget.md"),
        "the output names the document"
    );
    assert!(
        !text.contains("specs/budget.md") && !text.contains("DESIGN.md"),
        "the output cites a document users do not have"
    );
}

#[test]
fn every_section_and_lemma_the_source_cites_is_a_heading_of_docs_budget_md() {
    let have = headings(&budget_md());
    let mut files = Vec::new();
    rust_files(&root().join("harness/src"), &mut files);
    let mut missing = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable");
        assert!(
            !text.contains("specs/budget.md") && !text.contains("DESIGN.md"),
            "{} cites a document outside the repository",
            f.display()
        );
        for r in references(&text).difference(&have) {
            missing.push(format!("{}: §{r}", f.display()));
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn every_input_symbol_of_every_prediction_is_in_the_glossary() {
    let doc = budget_md();
    let glossary: BTreeSet<String> = doc
        .lines()
        .skip_while(|l| !l.starts_with("## 0."))
        .take_while(|l| !l.starts_with("## 1."))
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(" | ").next())
        .flat_map(|first| first.split(", ").map(str::to_owned).collect::<Vec<_>>())
        .collect();
    let mut missing = BTreeSet::new();
    for p in core_predictions() {
        for input in &p.inputs {
            if !glossary.contains(input.name.as_str()) {
                missing.insert(format!("{} (in {})", input.name, p.id));
            }
        }
    }
    for s in scenarios() {
        for p in plan(&s).all() {
            for input in &p.inputs {
                let name = if input.name.starts_with("quota ") {
                    "quota ACCOUNT/CLASS"
                } else {
                    input.name.as_str()
                };
                if !glossary.contains(name) {
                    missing.insert(format!("{name} (in {})", p.id));
                }
            }
        }
    }
    assert!(missing.is_empty(), "not in docs/budget.md §0: {missing:#?}");
}

#[test]
fn the_reference_reader_finds_sections_rows_and_lemmas() {
    let refs = references("[D][S] §2.2 M1.2, §8 row 3, (§ 4.5) and Lemma 4.");
    let want: BTreeSet<String> = ["2.2", "8", "4.5", "Lemma 4"].map(str::to_owned).into();
    assert_eq!(refs, want);
    let heads = headings("# Title\n## 2. Hard\n### 2.2 crossplane\n### Lemma 4\ntext §9\n");
    let want: BTreeSet<String> = ["2", "2.2", "Lemma 4"].map(str::to_owned).into();
    assert_eq!(heads, want);
    // The printed output cites many sections: the test above is not vacuous.
    let cited = references(&printed());
    assert!(cited.len() > 15, "{cited:?}");
}
