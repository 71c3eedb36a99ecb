//! Crossplane core's composite layer in a run: [`embedded`] starts the composer's XR
//! controllers in this process beside the provider (cached reads, as the composer binary
//! runs them; on the run's clock, so virtual time works), [`measure`] reads what core did
//! at the source (its requests in the API server's journal by its `User-Agent`, its
//! function calls, its breakers), [`xrs`] drives the XR groups' phases, [`phases`] core's
//! own (`compositionUpdate`, `functionFault`) and each phase's share of core's counters,
//! and [`faults`] switches the in-process functions' faults. [`process`] is core as a
//! process of its own (the process target with a core profile), [`cluster`] core as a
//! cluster runs it (the cluster target with XR groups).

pub mod cluster;
pub mod embedded;
pub mod faults;
pub mod measure;
pub mod phase_state;
pub mod phases;
pub mod process;
mod tally;
pub mod xrs;

/// What the `User-Agent` of core's requests starts with (the composer's name, as
/// client-go's convention begins it), which tells them apart in the API server's journal.
pub const CORE_USER_AGENT_PREFIX: &str = "composer/";

/// The `User-Agent` of core's requests: `composer/v0.1.0 (linux/amd64)`.
#[must_use]
pub fn core_user_agent() -> &'static str {
    static AGENT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        };
        format!(
            "{CORE_USER_AGENT_PREFIX}v{} ({}/{arch})",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS
        )
    });
    &AGENT
}
