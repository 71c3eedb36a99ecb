//! Random scenarios across the schema, for the predictor's property tests and
//! `harness selfcheck`: every provider setting, cloud quotas, latency and errors,
//! per-resource poll intervals, fault shares, drift, and every phase the budget models,
//! mixed as users mix them, with edge values (jitter 0 and 99, R = 1, P = 1 s and 24 h,
//! 1 and 100,000 resources).
//!
//! [`generate`] writes scenario text (YAML), so a generated scenario goes through the same
//! parser and validation as a user's file, and a failing one can be saved and run again.
//! The same seed and [`Shape`] give the same text.
//!
//! ```
//! use harness_scenario::generate::{Shape, generate};
//! let text = generate(7, &Shape::default());
//! let s = harness_scenario::parse(&text, "generated.yaml").unwrap();
//! assert!(s.total_resources() >= 1);
//! assert_eq!(text, generate(7, &Shape::default()));
//! ```

use std::fmt::Write as _;

use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng as _, SeedableRng as _};

/// What the generator may draw: the predictor's test takes the whole range, a selfcheck
/// keeps scenarios small enough to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// The counts a group may have.
    pub counts: Vec<u32>,
    /// The poll intervals the provider may have.
    pub polls: Vec<&'static str>,
    /// The hold durations a hold phase may have.
    pub holds: Vec<&'static str>,
    /// Writes `time: virtual`.
    pub virtual_time: bool,
}

impl Default for Shape {
    /// The whole range: 1 to 100,000 resources, P from 1 s to 24 h, holds up to a day.
    fn default() -> Self {
        Shape {
            counts: vec![1, 3, 10, 50, 200, 1_000, 10_000, 100_000],
            polls: vec!["1s", "10s", "1m", "5m", "1h", "24h"],
            holds: vec!["10s", "1m", "10m", "2h", "24h"],
            virtual_time: false,
        }
    }
}

impl Shape {
    /// Scenarios a selfcheck runs in virtual time in seconds of wall time each: at most
    /// 300 resources, P up to 10 m, holds up to 30 m.
    #[must_use]
    pub fn runnable() -> Self {
        Shape {
            counts: vec![1, 5, 20, 60, 150, 300],
            polls: vec!["10s", "30s", "1m", "5m", "10m"],
            holds: vec!["1m", "5m", "10m", "30m"],
            virtual_time: true,
        }
    }
}

/// A seeded draw.
struct Draw(Xoshiro256PlusPlus);

impl Draw {
    fn below(&mut self, n: usize) -> usize {
        // Lemire's multiply-shift; the bias is below 2⁻³² for the small n used here.
        ((u128::from(self.0.next_u64()) * n as u128) >> 64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }
}

const KINDS: [&str; 3] = ["Bucket", "Database", "Record"];
const MODELS: [&str; 4] = [
    "crossplane",
    "in-queue",
    "controller-runtime",
    "concurrency-only",
];
const FAULTS: [&str; 4] = [
    "{error: AccessDenied}",
    "{error: Conflict}",
    "{error: Validation}",
    "{notFoundAfterCreate: 30s}",
];

/// The scenario text for `seed` within `shape`.
#[must_use]
pub fn generate(seed: u64, shape: &Shape) -> String {
    let mut d = Draw(Xoshiro256PlusPlus::seed_from_u64(seed));
    let mut y = String::new();
    let _ = writeln!(y, "# generated: seed {seed}");
    let _ = writeln!(y, "apiVersion: harness/v1");
    let _ = writeln!(y, "name: generated-{seed}");
    let _ = writeln!(y, "seed: {}", seed % 1_000_000);
    if shape.virtual_time {
        let _ = writeln!(y, "time: virtual");
    }
    let model = *d.pick(&MODELS);
    let poll = *d.pick(&shape.polls);
    let _ = writeln!(y, "provider:");
    let _ = writeln!(
        y,
        "  maxReconcileRate: {}",
        d.pick(&[1, 2, 5, 10, 20, 50, 100])
    );
    let _ = writeln!(y, "  rateLimitModel: {model}");
    let _ = writeln!(y, "  pollInterval: {poll}");
    let _ = writeln!(
        y,
        "  pollJitterPercent: {}",
        d.pick(&[0, 0, 1, 10, 10, 50, 99])
    );
    if d.chance(20) {
        let _ = writeln!(y, "  scopedBuckets: true");
    }
    if d.chance(15) {
        let _ = writeln!(y, "  eventClient: separate");
    }
    if d.chance(10) {
        let _ = writeln!(y, "  errorRequeue: immediate");
    }
    if d.chance(15) {
        let (base, max) = *d.pick(&[("10ms", "10s"), ("1s", "60s"), ("5s", "5m")]);
        let _ = writeln!(y, "  backoffBase: {base}\n  backoffMax: {max}");
    }
    cloud(&mut d, &mut y);
    let (groups, shortest) = resources(&mut d, shape, seconds(poll), &mut y);
    phases_and_assertions(&mut d, shape, (&groups, shortest), &mut y);
    y
}

fn cloud(d: &mut Draw, y: &mut String) {
    let mut lines = Vec::new();
    if d.chance(40) {
        let mut q = String::from("  quotas:\n");
        if d.chance(70) {
            let (burst, per) = *d.pick(&[(10, 1.0), (100, 20.0), (50, 5.0), (1000, 200.0)]);
            let _ = writeln!(q, "    read: {{burst: {burst}, perSecond: {per}}}");
        }
        if d.chance(50) {
            let (burst, per) = *d.pick(&[(5, 1.0), (50, 5.0), (200, 50.0)]);
            let _ = writeln!(q, "    mutate: {{burst: {burst}, perSecond: {per}}}");
        }
        if q.lines().count() > 1 {
            lines.push(q);
        }
    }
    if d.chance(30) {
        let l = *d.pick(&[
            "    read: {fixed: 1ms}\n",
            "    read: {fixed: 50ms}\n    mutate: {uniform: {min: 5ms, max: 20ms}}\n",
            "    read: {lognormal: {median: 10ms, sigma: 0.5}}\n",
        ]);
        lines.push(format!("  latency:\n{l}"));
    }
    if d.chance(15) {
        let e = *d.pick(&[
            "    mutate: {rate: 0.01, status: 503}\n",
            "    read: {rate: 0.05, status: 500}\n",
        ]);
        lines.push(format!("  errors:\n{e}"));
    }
    if !lines.is_empty() {
        let _ = writeln!(y, "cloud:");
        for l in lines {
            y.push_str(&l);
        }
    }
}

/// Writes `resources:`, and returns the groups' names and the shortest poll interval any
/// resource has (s): an annotated share's that holds a resource, or the provider's `poll`
/// where a group's shares leave resources without the annotation.
fn resources(d: &mut Draw, shape: &Shape, poll: f64, y: &mut String) -> (Vec<String>, f64) {
    let n = 1 + d.below(3);
    let mut names = Vec::new();
    let mut shortest = f64::INFINITY;
    let _ = writeln!(y, "resources:");
    for g in 0..n {
        let kind = *d.pick(&KINDS);
        let name = format!("{}-{g}", kind.to_ascii_lowercase());
        let count = *d.pick(&shape.counts);
        let _ = writeln!(y, "  - name: {name}\n    kind: {kind}\n    count: {count}");
        let mut annotated = 0.0;
        if d.chance(35) {
            let _ = writeln!(y, "    annotations:");
            // A share is the resources between its cumulative percentages, rounded, as the
            // validator cuts it: a small group's 5 % may hold none.
            let at = |percent: f64| (percent / 100.0 * f64::from(count)).round();
            let mut covered = 0.0;
            for _ in 0..=d.below(2) {
                let pct = *d.pick(&[5, 20, 40]);
                let every = *d.pick(&["1s", "10s", "1m", "1h", "24h"]);
                if at(covered + f64::from(pct)) > at(covered) {
                    shortest = shortest.min(seconds(every));
                }
                covered += f64::from(pct);
                annotated = at(covered);
                let _ = writeln!(
                    y,
                    "      - {{percent: {pct}, values: {{crossplane.io/poll-interval: {every}}}}}"
                );
            }
        }
        // Resources no share holds poll at the provider's interval.
        if annotated < f64::from(count) {
            shortest = shortest.min(poll);
        }
        if d.chance(35) {
            let _ = writeln!(y, "    faults:");
            for _ in 0..=d.below(3) {
                let pct = *d.pick(&[1, 2, 5, 10]);
                let f = d.pick(&FAULTS);
                let _ = writeln!(y, "      - {{percent: {pct}, {}", &f[1..]);
            }
        }
        if kind == "Bucket" && d.chance(20) {
            let _ = writeln!(y, "    drift: {{percent: {}}}", d.pick(&[1, 2, 10]));
        }
        names.push(name);
    }
    (names, shortest)
}

/// `groups` with the shortest poll interval any resource has (s), which a `pollPeriod`
/// check's hold must exceed to see a resource poll twice.
fn phases_and_assertions(
    d: &mut Draw,
    shape: &Shape,
    (groups, shortest): (&[String], f64),
    y: &mut String,
) {
    let mut holds = Vec::new();
    let mut restarts = Vec::new();
    let _ = writeln!(y, "phases:");
    let rate = if d.chance(50) {
        format!(", rate: {}", d.pick(&[1, 10, 50, 500]))
    } else {
        String::new()
    };
    let _ = writeln!(y, "  - {{name: create, action: create{rate}, timeout: 2h}}");
    let middle = d.below(5);
    for i in 0..middle {
        let name = format!("p{i}");
        match d.below(9) {
            0..=2 => {
                let duration = *d.pick(&shape.holds);
                let _ = writeln!(
                    y,
                    "  - {{name: {name}, action: hold, duration: {duration}}}"
                );
                holds.push((name, seconds(duration)));
            }
            3 => {
                let _ = writeln!(y, "  - {{name: {name}, action: resync, timeout: 2h}}");
            }
            4 => {
                let _ = writeln!(y, "  - {{name: {name}, action: restart, timeout: 2h}}");
                restarts.push(name);
            }
            5 => {
                let _ = writeln!(
                    y,
                    "  - {{name: {name}, action: cloudOutage, duration: {}}}",
                    d.pick(&["10s", "2m"])
                );
            }
            6 => {
                let _ = writeln!(
                    y,
                    "  - {{name: {name}, action: cloudLatency, latency: {{read: {{fixed: 200ms}}}}, duration: 1m}}"
                );
            }
            7 => {
                let g = d.pick(groups);
                let f = d.pick(&FAULTS);
                let _ = writeln!(
                    y,
                    "  - {{name: {name}, action: cloudFault, groups: [{g}], faults: [{{percent: {}, {}], duration: {}}}",
                    d.pick(&[5, 10, 50]),
                    &f[1..],
                    d.pick(&["1m", "10m"])
                );
            }
            _ => {
                let _ = writeln!(
                    y,
                    "  - {{name: {name}, action: update, spec: {{generation: {i}}}, timeout: 2h}}"
                );
            }
        }
    }
    if d.chance(80) {
        let _ = writeln!(y, "  - {{name: delete, action: delete, timeout: 2h}}");
    }
    let _ = writeln!(y, "assertions:");
    for w in ["1s", "10s"] {
        if d.chance(60) {
            let _ = writeln!(y, "  - {{check: cloudCalls, window: {w}}}");
        }
    }
    if d.chance(60) {
        let _ = writeln!(y, "  - {{check: apiRequests, window: 1s}}");
    }
    let _ = writeln!(
        y,
        "  - {{check: timeToReady, phase: create, quantile: 0.99}}"
    );
    for (h, duration) in &holds {
        let _ = writeln!(y, "  - {{check: steadyRate, phase: {h}}}");
        // The draw is made either way, so a scenario's other choices do not depend on it.
        if d.chance(50) && *duration >= 2.0 * shortest {
            let _ = writeln!(y, "  - {{check: pollPeriod, phase: {h}}}");
        }
        if d.chance(50) {
            let _ = writeln!(
                y,
                "  - {{check: perResourceCalls, phase: {h}, window: 1m}}\n  - {{check: hotLoops, phase: {h}, window: 1m}}"
            );
        }
    }
    for r in &restarts {
        if d.chance(50) {
            let _ = writeln!(y, "  - {{check: drainEfficiency, phase: {r}, min: 0.5}}");
        }
    }
    let _ = writeln!(y, "  - {{check: orphans}}\n  - {{check: duplicates}}");
}

/// Seconds in one of the generator's own durations ("10ms", "1s", "5m", "2h"), read as
/// the provider reads a poll interval: a Go duration.
fn seconds(d: &str) -> f64 {
    limiter::go::GoDuration::parse(d).map_or(f64::NAN, limiter::go::GoDuration::seconds)
}
