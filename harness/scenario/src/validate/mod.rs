//! From [`RawScenario`] to [`Scenario`]: every value checked, every problem collected with its
//! place, in file order.
//!
//! One file per section of the scenario file; [`checker`] holds what they share.

mod assertions;
mod calls;
mod checker;
mod cloud;
mod composite;
mod composite_checks;
mod core_phases;
mod crossplane_objects;
mod faults;
mod kinds;
mod objects;
mod phases;
mod profile;
mod provider;
mod resources;
mod settings;

use serde_saphyr::Spanned;

use super::error::{Pos, Problem};
use super::kinds::Catalogue;
use super::model::{AwsSettings, Check, Scenario};
use super::raw::{AwsRetryModeName, RawScenario, Target, TimeMode};
use super::set::Set;
use crate::profile::Profile;
pub(crate) use calls::calibration;
use checker::Checker;
pub(crate) use profile::profile;

/// The format version this harness reads.
pub const API_VERSION: &str = "harness/v1";

fn pos<T>(s: &Spanned<T>) -> Pos {
    Pos::of(&s.referenced)
}

/// What a scenario is loaded for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Purpose {
    /// To run or predict it: every kind named by `apiVersion` needs its calls per reconcile.
    #[default]
    Run,
    /// To calibrate it (`harness calibrate`), which measures the calls per reconcile: a kind
    /// without them is a warning, and its figures are 0 until measured.
    Calibrate,
}

/// Validates a parsed scenario. `file` names it in errors.
///
/// # Errors
/// Every problem found, in file order.
pub fn validate(
    raw: RawScenario,
    file: &str,
    sets: &[Set],
    (profile, purpose): (Option<Profile>, Purpose),
) -> Result<Scenario, Vec<Problem>> {
    let mut c = Checker::default();
    if raw.api_version.value != API_VERSION {
        c.err(
            pos(&raw.api_version),
            format!(
                "unsupported apiVersion {:?}, expected {API_VERSION:?}",
                raw.api_version.value
            ),
        );
    }
    c.name(&raw.name, "scenario name");
    let mut settings = provider::provider(&mut c, &raw.provider);
    let mut prediction = provider::prediction(&mut c, &raw.prediction);
    let cloud = cloud::cloud(&mut c, &raw.cloud);
    let catalogue = match &profile {
        Some(p) => {
            if let Some(at) = provider::first_set(&raw.provider) {
                c.err(
                    at,
                    "the scenario has a profile, which gives the provider's settings, expected no `provider` section (change the profile instead)",
                );
            }
            settings = p.settings.clone();
            prediction.client = Some(p.client);
            Catalogue::of_profile(&p.kinds)
        }
        None => {
            // Our own provider's shortest reconcile is known: its CPU time (slept in virtual
            // time), not the 50 ms mean a foreign provider is assumed to take. The worker
            // bounds are hard only with a true floor.
            if raw.prediction.min_reconcile_duration.is_none() {
                prediction.min_reconcile = prediction.reconcile_cpu.min(prediction.reconcile);
            }
            Catalogue::embedded()
        }
    };
    let groups = resources::groups(&mut c, &raw, &cloud, &settings, &catalogue);
    let group_names = groups.iter().map(|g| g.name.clone()).collect();
    let composites = composite::composites(&mut c, &raw, &group_names);
    // Every XR group's name, refused ones too: a phase naming one is no second problem
    // (a valid scenario has them all, in this order).
    let xr_names: Vec<String> = raw
        .composites
        .iter()
        .map(|g| g.name.value.clone())
        .collect();
    let objects = objects::objects(&mut c, &raw.objects, &catalogue, &raw.name.value);
    let calibrated = profile.as_ref().map_or(&[][..], |p| &p.calibration[..]);
    let (calls, call_detail) = calls::calls(
        &mut c,
        &raw.calls,
        (&raw.resources, &groups),
        &catalogue,
        (calibrated, purpose),
    );
    let aws_settings = AwsSettings {
        retry_mode: raw
            .provider
            .aws_retry_mode
            .as_ref()
            .map(|v| v.value)
            .unwrap_or_default(),
        credential_cache: raw
            .provider
            .credential_cache
            .as_ref()
            .map(|v| v.value)
            .unwrap_or_default(),
        set: raw.provider.aws_retry_mode.is_some() || raw.provider.credential_cache.is_some(),
    };
    let aws = aws_settings;
    if prediction.sdk_attempts == 0 {
        let aws = groups.iter().any(|g| g.kind.aws()) && profile.is_none();
        prediction.sdk_attempts = match aws.then_some(aws_settings.retry_mode) {
            Some(AwsRetryModeName::Standard | AwsRetryModeName::Adaptive) => 3,
            _ => 1,
        };
    }
    let declared = phases::phases(
        &mut c,
        &raw.phases,
        (&groups, &xr_names, &composites),
        &raw.name,
    );
    let assertions = assertions::assertions(&mut c, &raw.assertions, &declared, &cloud);
    // Every phase passed its checks unless a problem was reported, which returns below.
    let phases: Vec<_> = declared.into_iter().filter_map(|d| d.phase).collect();
    for a in &assertions {
        if matches!(a.check, Check::CallsPerReconcile { .. })
            && purpose == Purpose::Run
            && call_detail.values().all(|d| d.measured.is_empty())
        {
            c.err(
                a.pos,
                "callsPerReconcile compares a run with a calibration, and no kind has one: name a calibration file in the profile (`calibration`, which `harness calibrate` writes), or give `measured` in `calls`",
            );
        }
    }
    if let Some(t) = &raw.target
        && t.value != Target::Embedded
        && composites.any()
    {
        c.err(
            pos(t),
            "XR groups (`composites`) run on the embedded stack only (Crossplane core's composite layer is the composer's controllers in the harness's process), expected no `target` or `target: embedded`",
        );
    }
    let target = raw.target.map_or(Target::Embedded, |t| {
        if t.value == Target::Process && profile.as_ref().is_none_or(|p| p.process.is_none()) {
            c.err(
                pos(&t),
                "`target: process` runs the profile's provider command, expected a `profile` with a `command`",
            );
        }
        t.value
    });
    let time = raw.time.map_or(TimeMode::Real, |t| {
        if t.value == TimeMode::Virtual && target == Target::Cluster {
            c.err(
                pos(&t),
                "`time: virtual` runs the embedded stack on a paused clock; a cluster's API server, provider and cloud keep real time, so `target: cluster` cannot",
            );
        }
        if t.value == TimeMode::Virtual && target == Target::Process {
            c.err(
                pos(&t),
                "`time: virtual` runs the embedded stack on a paused clock; the process target's provider is another process on the wall clock, so `target: process` cannot",
            );
        }
        t.value
    });
    poll_period_measurable(
        &mut c,
        &assertions,
        &phases,
        (&groups, &settings, &raw.name.value),
    );
    let Checker {
        mut problems,
        warnings,
    } = c;
    if !problems.is_empty() {
        problems.sort_by_key(|p| (p.pos.source, p.pos.line, p.pos.column));
        return Err(problems);
    }
    Ok(Scenario {
        file: file.to_owned(),
        sets: sets.to_vec(),
        name: raw.name.value,
        description: raw.description.unwrap_or_default(),
        seed: raw.seed.unwrap_or(1),
        target,
        time,
        settings,
        prediction,
        profile,
        cloud,
        aws,
        objects,
        calls,
        call_detail,
        groups,
        composites,
        phases,
        assertions,
        warnings,
    })
}

/// A `pollPeriod` check measures the time between two polls of a resource in its hold: a
/// hold shorter than every resource's poll interval has none to measure, and is refused
/// rather than failed after the run.
fn poll_period_measurable(
    c: &mut Checker,
    assertions: &[crate::model::Assertion],
    phases: &[crate::model::Phase],
    (groups, settings, scenario): (
        &[crate::model::ResourceGroup],
        &limiter::crossplane::Settings,
        &str,
    ),
) {
    use crate::model::Action;
    let shortest = || {
        groups
            .iter()
            .flat_map(|g| {
                let covered: u32 = g.annotations.iter().map(|s| s.end - s.start).sum();
                let default = (covered < g.count).then_some(settings.poll_interval);
                // A share whose interval does not use {{index}} is rendered once.
                g.annotations
                    .iter()
                    .flat_map(move |s| {
                        let per_index = s
                            .values
                            .get(limiter::crossplane::POLL_INTERVAL_ANNOTATION)
                            .is_some_and(|t| t.uses_index());
                        let end = if per_index {
                            s.end
                        } else {
                            s.end.min(s.start + 1)
                        };
                        s.start..end
                    })
                    .map(move |i| g.poll_interval_of(i, settings, scenario))
                    .chain(default)
            })
            .min()
    };
    for a in assertions {
        let (Check::PollPeriod { .. }, Some(phase)) = (&a.check, a.phase) else {
            continue;
        };
        let Some(Action::Hold { duration }) = phases.get(phase).map(|p| &p.action) else {
            continue;
        };
        if let Some(p) = shortest()
            && *duration < p
        {
            c.err(
                a.pos,
                format!(
                    "pollPeriod measures the time between two polls of a resource in hold {:?}, which lasts {:?} while the shortest poll interval is {:?}: no resource polls twice; expected a hold longer than the shortest poll interval (two intervals or more measure it well)",
                    phases[phase].name,
                    duration,
                    p,
                ),
            );
        }
    }
}
