//! The dropped-requests tracker that computes a refusal's `Retry-After`.

/// `maxRetryAfter` of `dropped_requests_tracker.go`.
const MAX_RETRY_AFTER: u64 = 32;

/// `droppedRequestsStats`: dropped requests per second and the `Retry-After` they call for.
pub(super) struct Dropped {
    history: Vec<(u64, u64)>,
    current_second: u64,
    current_count: u64,
    pub(super) retry_after: u64,
    last_increase: u64,
}

impl Dropped {
    pub(super) fn new() -> Self {
        Self {
            history: Vec::new(),
            current_second: 0,
            current_count: 0,
            retry_after: 1,
            last_increase: 0,
        }
    }

    pub(super) fn record(&mut self, second: u64) {
        if self.current_second == second {
            self.current_count += 1;
            return;
        }
        self.history.push((self.current_second, self.current_count));
        let keep = (2 * self.retry_after).min(MAX_RETRY_AFTER);
        self.history.retain(|(at, _)| second - at <= keep);
        self.current_second = second;
        self.current_count = 1;
        let retry_after = self.retry_after;
        let dropped: u64 = self
            .history
            .iter()
            .filter(|(at, _)| second - at <= retry_after && *at < second)
            .map(|(_, n)| n)
            .sum();
        if second - self.last_increase >= retry_after && dropped >= 3 * retry_after {
            self.retry_after = (retry_after * 2).min(MAX_RETRY_AFTER);
            self.last_increase = second;
        } else if dropped < retry_after && retry_after > 1 {
            self.retry_after -= 1;
        }
    }
}
