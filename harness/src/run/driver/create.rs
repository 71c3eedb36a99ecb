//! `create`: the groups' resources created at the phase's rate, each [`Record`]ed with when
//! its create started and the poll interval it expects.

use kube::api::PostParams;

use super::log::Record;
use super::phase::PhaseAction;
use super::state::State;
use crate::run::objects;
use crate::run::target::CloudControl;
use crate::scenario::Phase;

/// Creates the resources of `groups`.
pub struct Create<'a> {
    /// Resources per second (all at once without).
    pub rate: Option<f64>,
    /// The groups.
    pub groups: &'a [usize],
}

impl PhaseAction for Create<'_> {
    async fn act(&self, state: &mut State<'_>, phase: &Phase, _cloud: &impl CloudControl) {
        let targets = state.targets(Some(self.groups));
        create(state, &phase.name, &targets, self.rate).await;
    }
}

/// Creates `targets` at `rate` and records them as created in `phase`.
async fn create(state: &mut State<'_>, phase: &str, targets: &[(usize, u32)], rate: Option<f64>) {
    let s = state.scenario;
    let done = state
        .paced(targets, rate, |g, i| {
            let api = state.api(g);
            let obj = objects::managed_resource(s, &s.groups[g], i);
            async move {
                match api.create(&PostParams::default(), &obj).await {
                    Ok(_) => true,
                    Err(e) => {
                        tracing::warn!(error = %e, "create failed");
                        false
                    }
                }
            }
        })
        .await;
    for ((g, i), at, ok) in done {
        let group = &s.groups[g];
        let expected = s.settings.effective_poll(
            group
                .resource_annotations(i, &s.name)
                .get(limiter::crossplane::POLL_INTERVAL_ANNOTATION)
                .map(String::as_str),
        );
        state.log.records.insert(
            (g, i),
            Record {
                kind: group.kind.to_string(),
                name: group.resource_name(i, &s.name),
                group: group.name.clone(),
                created_in: phase.to_owned(),
                created_us: at,
                deleted_us: None,
                expected_poll_s: expected.interval.as_secs_f64(),
                create_failed: !ok,
            },
        );
    }
}
