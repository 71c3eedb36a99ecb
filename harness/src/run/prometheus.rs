//! Reading the Prometheus text format: samples of a metric, their labels, and counters
//! summed across label sets and across resets. A leaf: it knows nothing of runs.

/// The samples of metric `name` in Prometheus text: each line's labels (without braces,
/// empty when it has none) and value.
pub fn samples<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = (&'a str, f64)> + 'a {
    text.lines().filter_map(move |line| {
        let rest = line.strip_prefix(name)?;
        let (labels, value) = if let Some(rest) = rest.strip_prefix('{') {
            rest.rsplit_once("} ")?
        } else {
            ("", rest.strip_prefix(' ')?)
        };
        Some((labels, value.trim().parse::<f64>().ok()?))
    })
}

/// The value of label `key` in a sample's labels, as written (an escaped `\"` or `\\`
/// stays escaped). Values may hold commas: upjet's controllers are named
/// `managed/s3.aws.upbound.io/v1beta1, kind=bucket`.
#[must_use]
pub fn label_value<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    let mut rest = labels;
    loop {
        let (name, after) = rest.split_once("=\"")?;
        let bytes = after.as_bytes();
        let mut end = 0;
        while end < bytes.len() && bytes[end] != b'"' {
            end += if bytes[end] == b'\\' { 2 } else { 1 };
        }
        let value = after.get(..end)?;
        if name.trim_start_matches(',').trim() == key {
            return Some(value);
        }
        rest = after.get(end + 1..)?;
    }
}

/// Whether a sample's labels include `key="value"`.
#[must_use]
pub fn has_label(labels: &str, key: &str, value: &str) -> bool {
    label_value(labels, key) == Some(value)
}

/// How much a counter grew between two scrapes; a counter that went down was reset (its
/// process restarted), so all of its new value is growth.
#[must_use]
pub fn counter_increase(before: u64, now: u64) -> u64 {
    if now >= before { now - before } else { now }
}

/// A counter's value in Prometheus text, summed over its label sets.
#[must_use]
pub fn counter(text: &str, name: &str) -> u64 {
    samples(text, name).map(|(_, v)| v).sum::<f64>() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_is_summed_over_its_label_sets() {
        let text = "# TYPE limiter_early_runs_total counter\n\
                    limiter_early_runs_total 3\n\
                    limiter_reservations_total{controller=\"a\"} 5\n\
                    limiter_reservations_total{controller=\"b\"} 7\n";
        assert_eq!(counter(text, "limiter_reservations_total"), 12);
        assert_eq!(counter(text, "limiter_early_runs_total"), 3);
        assert_eq!(counter(text, "limiter_missing_total"), 0);
    }

    #[test]
    fn labels_are_found_by_key() {
        let labels = "code=\"200\",verb=\"LIST\"";
        assert_eq!(label_value(labels, "verb"), Some("LIST"));
        assert!(has_label(labels, "code", "200"));
        assert!(!has_label(labels, "code", "500"));
        assert_eq!(label_value(labels, "erb"), None);
    }

    #[test]
    fn a_label_value_may_hold_commas_equals_signs_and_escaped_quotes() {
        let labels = "controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",name=\"a \\\"b\\\"\",result=\"error\"";
        assert_eq!(
            label_value(labels, "controller"),
            Some("managed/s3.aws.upbound.io/v1beta1, kind=bucket")
        );
        assert_eq!(label_value(labels, "name"), Some("a \\\"b\\\""));
        assert_eq!(label_value(labels, "result"), Some("error"));
        assert_eq!(label_value(labels, "kind"), None);
    }

    #[test]
    fn a_counter_that_went_down_was_reset() {
        assert_eq!(counter_increase(10, 15), 5);
        assert_eq!(counter_increase(10, 4), 4);
    }
}
