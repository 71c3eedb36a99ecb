//! What the tests of this workspace's provider run as a separate process share, on the
//! cluster target (a Deployment rolled) and on the process target (a command line).

/// The phases and checks of a provider restarted: its Buckets created, held, the provider
/// restarted; the budgets, and what the restart must not leave behind or do twice.
pub const RESTART_PHASES: &str = "\
phases:
  - {name: create, action: create, rate: 40, timeout: 60s}
  - {name: hold, action: hold, duration: 3s}
  - {name: restart, action: restart, timeout: 60s}
assertions:
  - {check: cloudCalls, window: 1s}
  - {check: apiRequests, window: 1s}
  - {check: throttles}
  - {check: orphans}
  - {check: duplicates}
";

/// The Buckets' controller in a result's `provider` check: its figures by
/// controller-runtime's names, scraped and summed across the provider's restarts.
pub fn bucket_controller(provider: &serde_json::Value) -> &serde_json::Value {
    provider["controllers"]
        .as_array()
        .and_then(|cs| {
            cs.iter()
                .find(|c| c["controller"] == "managed/bucket.mockcloud.example.org")
        })
        .unwrap_or_else(|| panic!("the buckets' controller: {provider}"))
}
