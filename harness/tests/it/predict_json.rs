//! `harness predict --json` on shipped scenarios: the shape of its output, and values that
//! follow from docs/budget.md for each scenario's settings.

use std::process::Command;

use serde_json::Value;

use crate::fixture::scenario;

/// Runs `harness predict --json` on a shipped scenario; asserts exit 0 and parses stdout.
fn predict(name: &str) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["predict", "--json", &scenario(name)])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    json.as_array().expect("an array of predictions").clone()
}

fn find<'a>(preds: &'a [Value], id: &str) -> &'a Value {
    preds
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no prediction {id}"))
}

fn value(preds: &[Value], id: &str) -> f64 {
    find(preds, id)["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{id} has no numeric value"))
}

fn input(p: &Value, name: &str) -> f64 {
    p["inputs"]
        .as_array()
        .and_then(|i| i.iter().find(|i| i["name"] == name))
        .and_then(|i| i["value"].as_f64())
        .unwrap_or_else(|| panic!("{} has no input {name}", p["id"]))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Every prediction names itself, its formula, its inputs, its meaning and its source.
fn assert_complete(preds: &[Value]) {
    assert!(!preds.is_empty());
    let meanings = [
        "upperBound",
        "expected",
        "tolerance",
        "lowerBound",
        "condition",
    ];
    let mut ids = std::collections::BTreeSet::new();
    for p in preds {
        let id = p["id"].as_str().expect("id");
        assert!(ids.insert(id.to_owned()), "{id} appears twice");
        for field in ["what", "formula", "source", "unit"] {
            assert!(p[field].is_string(), "{id}: {field} missing");
        }
        for field in ["what", "formula", "source"] {
            assert!(p[field] != "", "{id}: {field} empty");
        }
        assert!(
            meanings.contains(&p["meaning"].as_str().unwrap_or("")),
            "{id}: meaning {}",
            p["meaning"]
        );
        // Non-finite numbers are written as strings ("inf", "nan"); finite ones as numbers.
        assert!(
            p["value"].is_number() || p["value"].is_string(),
            "{id}: value"
        );
        let inputs = p["inputs"].as_array().expect("inputs");
        assert!(!inputs.is_empty(), "{id}: no inputs");
        for i in inputs {
            assert!(i["name"].as_str().is_some_and(|n| !n.is_empty()), "{id}");
            assert!(i["value"].is_number() || i["value"].is_string(), "{id}");
        }
        if let Some(phase) = p["phase"].as_str() {
            assert!(
                id.starts_with(&format!("{phase}/")),
                "{id} in phase {phase}"
            );
        } else {
            // Run-wide, or Crossplane core's (budget.md §12).
            assert!(
                id.starts_with("run/") || id.starts_with("core/"),
                "{id} has no phase"
            );
        }
    }
}

#[test]
fn predict_json_gives_the_in_queue_nominal_bound_burst_plus_rate_times_window() {
    // models-in-queue.yaml: R = 10, so B = 10R = 100; L_max = Δ = 50 ms; c_max = 2.
    let preds = predict("models-in-queue.yaml");
    assert_complete(&preds);
    let (r, b): (f64, f64) = (10.0, 100.0);
    for w in [1.0, 10.0] {
        // §2.1: reconciles(t, W) ≤ ⌊B + R·W⌋ (the other caps are larger here).
        let id = format!("run/reconciles/{w}s");
        let p = find(&preds, &id);
        assert_eq!(p["meaning"], "upperBound");
        assert_eq!(value(&preds, &id), (b + r * w).floor(), "{id}");
        assert!(close(input(p, "B"), b) && close(input(p, "R"), r) && close(input(p, "W"), w));
        // Cloud calls: c_max · ⌊B + R·(W + Δ)⌋ in every phase (Lemma 4).
        for phase in ["create", "hold", "resync", "restart"] {
            let id = format!("{phase}/cloud-calls/{w}s");
            assert_eq!(
                value(&preds, &id),
                2.0 * (b + r * (w + 0.05)).floor(),
                "{id}"
            );
        }
        // §2.5: API requests ≤ ⌊10R + 5R·W⌋ + k watch starts (k = 2 kinds) where one
        // provider process runs; a window that can hold the restart has a second limiter
        // instance (§2.5 (3)): one more burst and k more watch starts.
        assert_eq!(
            value(&preds, &format!("hold/api-requests/{w}s")),
            (10.0 * r + 5.0 * r * w).floor() + 2.0
        );
        for scope in ["run", "restart"] {
            assert_eq!(
                value(&preds, &format!("{scope}/api-requests/{w}s")),
                (2.0 * 10.0 * r + 5.0 * r * w).floor() + 2.0 * 2.0,
                "{scope}"
            );
        }
    }
    // The hold is saturated (Σ 1/(P + L̄) = 2000/120.05 > R): paced by the bucket (§3.3).
    let hold = find(&preds, "hold/steady-max/10s");
    assert_eq!(hold["meaning"], "tolerance");
    assert_eq!(value(&preds, "hold/steady-max/10s"), b + r * 10.0);
    assert!(close(value(&preds, "hold/rate"), r));
    // §4.2: a restart backlog of N drains in (N − B)/R.
    assert!(close(value(&preds, "restart/drain"), (2000.0 - b) / r));
}

#[test]
fn predict_json_gives_the_stationary_rate_and_tolerance_of_an_unsaturated_hold() {
    // steady-1k.yaml: N = 1,000 at P = 1m, R = 100, L̄ = 50 ms, α = 0.001 (default).
    let preds = predict("steady-1k.yaml");
    assert_complete(&preds);
    let lambda = 1000.0 / 60.05;
    assert!(close(value(&preds, "hold/rate"), lambda));
    let band = find(&preds, "hold/band");
    assert!(close(input(band, "low"), 1000.0 / 66.0) && close(input(band, "high"), 1000.0 / 54.0));
    let tol = find(&preds, "hold/steady-max/10s");
    assert_eq!(tol["meaning"], "tolerance");
    assert!(close(input(tol, "λ"), lambda) && close(input(tol, "α"), 0.001));
    assert!(close(input(tol, "T"), 900.0));
    // §3.5: above the mean by several standard deviations, the union bound above Naus, and
    // both in the range §3.5's worked example gives for λ = 16.65/s over an hour (238, 248).
    let (naus, union) = (
        value(&preds, "hold/steady-max/10s"),
        input(tol, "union bound"),
    );
    let (mean, sd) = (input(tol, "mean"), input(tol, "sd"));
    assert!(close(mean, lambda * 10.0));
    assert!(naus >= mean + 4.0 * sd, "{naus} vs {mean} ± {sd}");
    assert!(
        union >= naus && union <= 248.0 && naus <= 238.0,
        "{naus} {union}"
    );
    // The 45-minute settle is longer than the 15-minute hold: its tolerance is not lower.
    assert!(value(&preds, "settle/steady-max/10s") >= naus);
    // The creation wave: B = 1,000 = N, so the first second is R·1 s of creates at r_h = 100.
    assert_eq!(value(&preds, "create/first-second"), 100.0);
}

#[test]
fn predict_json_predicts_the_echo_of_a_wave_for_a_hold_right_after_it() {
    // restart-burst.yaml: N = 2,000, R = 10, B = 100, P = 10m, 10 % jitter → j = 60 s.
    let preds = predict("restart-burst.yaml");
    assert_complete(&preds);
    let echo = find(&preds, "hold/steady-max/10s");
    assert!(
        echo["source"].as_str().unwrap_or("").contains("§3.6"),
        "{echo}"
    );
    // §3.6: the first echo's busiest 10 s is above the stationary N·W/μ and at most what
    // a wave at one instant puts there, N·W/(2j).
    let (n, b, r, j) = (2000.0_f64, 100.0, 10.0, 60.0);
    let first = input(echo, "busiest W mean");
    assert!(
        first > n * 10.0 / 600.05 && first <= n * 10.0 / (2.0 * j) + 1e-6,
        "{echo}"
    );
    assert!(value(&preds, "hold/steady-max/10s") > input(echo, "busiest W mean"));
    // §4.2 for the restart: first second min(N, B + R, …), drain (N − B)/R.
    assert_eq!(value(&preds, "restart/first-second"), b + r);
    assert!(close(value(&preds, "restart/drain"), (n - b) / r));
    let phys = find(&preds, "restart/physical-limit");
    assert_eq!(phys["meaning"], "lowerBound");
    assert!(value(&preds, "restart/physical-limit") >= (n - b) / r);
}

#[test]
fn predict_on_a_broken_file_exits_two_with_file_line_and_column() {
    let dir = std::env::temp_dir().join(format!("harness-predict-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("broken.yaml");
    std::fs::write(
        &file,
        "apiVersion: harness/v1\nname: broken\nprovider: {maxReconcileRate: 0}\nresources:\n  - {name: b, kind: Bucket, count: 3}\nphases:\n  - {name: create, action: create}\n",
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["predict", "--json"])
        .arg(&file)
        .output()
        .expect("runs");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "{}:3:30: maxReconcileRate is 0, expected an integer ≥ 1",
        file.display()
    );
    assert!(err.contains(&want), "{err}");
}
