//! The figures a sweep compares its points on: four costs (what a setting spends of the
//! account's and the API server's capacity) and four benefits (how fast the provider
//! converges and notices change), each by name, unit and side. docs/sweep.md says what
//! each one is.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::predict::fmt_num;

/// Cost or benefit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Side {
    /// What the setting spends; a budget caps it.
    Cost,
    /// What the setting buys; an SLO asks for it.
    Benefit,
}

/// A figure of a point. Every one is better lower.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Figure {
    /// `cloudCalls.W`: the most cloud calls in any window of W seconds over the run.
    CloudCalls {
        /// W (s).
        window_s: f64,
    },
    /// `apiRequests.W`: the most of the provider's API requests in any window of W seconds
    /// starting on a whole second.
    ApiRequests {
        /// W (s).
        window_s: f64,
    },
    /// `steadyCalls.perHour`: cloud calls per hour over the holds.
    SteadyCallsPerHour,
    /// `throttles`: cloud calls the cloud throttled over the run.
    Throttles,
    /// `timeToReady.pQ`: quantile q of the first create phase's time to Ready.
    TimeToReady {
        /// q, one of 0.5, 0.9, 0.99.
        quantile: f64,
    },
    /// `pollPeriod`: the realised mean time between two polls of a resource.
    PollPeriod,
    /// `driftDetection`: the mean time from a change made outside the provider to the poll
    /// that sees it.
    DriftDetection,
    /// `drainTime`: the first restart phase's length, from the restart to every resource
    /// reconciled again.
    DrainTime,
}

/// The names of the figures, as `--slo`, `--budget` and `--cost` take them.
pub const NAMES: &str = "cloudCalls.W (W a duration such as 10s), apiRequests.W, steadyCalls.perHour, throttles, timeToReady.p50, timeToReady.p90, timeToReady.p99, pollPeriod, driftDetection, drainTime";

/// A name that is no figure.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown figure {0:?}, expected one of {NAMES}")]
pub struct UnknownFigure(pub String);

impl Figure {
    /// Cost or benefit.
    #[must_use]
    pub fn side(self) -> Side {
        match self {
            Figure::CloudCalls { .. }
            | Figure::ApiRequests { .. }
            | Figure::SteadyCallsPerHour
            | Figure::Throttles => Side::Cost,
            _ => Side::Benefit,
        }
    }

    /// The unit of its values.
    #[must_use]
    pub fn unit(self) -> &'static str {
        match self {
            Figure::CloudCalls { .. } | Figure::Throttles => "calls",
            Figure::ApiRequests { .. } => "requests",
            Figure::SteadyCallsPerHour => "calls/h",
            _ => "s",
        }
    }

    /// What it is, in words, for a chart's axis.
    #[must_use]
    pub fn title(self) -> String {
        match self {
            Figure::CloudCalls { window_s } => {
                format!("peak cloud calls in {}s", fmt_num(window_s))
            }
            Figure::ApiRequests { window_s } => {
                format!("peak API requests in {}s", fmt_num(window_s))
            }
            Figure::SteadyCallsPerHour => "steady cloud calls per hour".into(),
            Figure::Throttles => "throttled calls".into(),
            Figure::TimeToReady { quantile } => {
                format!("time to Ready p{}", fmt_num(quantile * 100.0))
            }
            Figure::PollPeriod => "realised poll period".into(),
            Figure::DriftDetection => "drift detection latency".into(),
            Figure::DrainTime => "drain time after the restart".into(),
        }
    }

    /// A value of it with its unit: durations as Go durations would read (`4m30s`), counts
    /// as numbers.
    #[must_use]
    pub fn show(self, v: Option<f64>) -> String {
        match v {
            None => "–".into(),
            Some(v) if !v.is_finite() => fmt_num(v),
            Some(v) if self.unit() == "s" => seconds(v),
            Some(v) => fmt_num(v),
        }
    }

    /// The default figures of a sweep, costs first.
    #[must_use]
    pub fn defaults(windows: &[f64]) -> Vec<Figure> {
        let mut out: Vec<Figure> = windows
            .iter()
            .map(|&w| Figure::CloudCalls { window_s: w })
            .collect();
        out.extend(windows.iter().map(|&w| Figure::ApiRequests { window_s: w }));
        out.extend([
            Figure::SteadyCallsPerHour,
            Figure::Throttles,
            Figure::TimeToReady { quantile: 0.5 },
            Figure::TimeToReady { quantile: 0.9 },
            Figure::TimeToReady { quantile: 0.99 },
            Figure::PollPeriod,
            Figure::DriftDetection,
            Figure::DrainTime,
        ]);
        out
    }
}

/// Seconds as `1h2m3s`, `4m30s`, `12.5s`.
#[must_use]
pub fn seconds(v: f64) -> String {
    if v < 60.0 {
        return format!("{}s", fmt_num(v));
    }
    let total = v.round() as u64;
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 || (h > 0 && s > 0) {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 {
        out.push_str(&format!("{s}s"));
    }
    out
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Figure::CloudCalls { window_s } => write!(f, "cloudCalls.{}", seconds(*window_s)),
            Figure::ApiRequests { window_s } => write!(f, "apiRequests.{}", seconds(*window_s)),
            Figure::SteadyCallsPerHour => f.write_str("steadyCalls.perHour"),
            Figure::Throttles => f.write_str("throttles"),
            Figure::TimeToReady { quantile } => {
                write!(f, "timeToReady.p{}", fmt_num(quantile * 100.0))
            }
            Figure::PollPeriod => f.write_str("pollPeriod"),
            Figure::DriftDetection => f.write_str("driftDetection"),
            Figure::DrainTime => f.write_str("drainTime"),
        }
    }
}

impl FromStr for Figure {
    type Err = UnknownFigure;

    fn from_str(s: &str) -> Result<Figure, UnknownFigure> {
        let unknown = || UnknownFigure(s.to_owned());
        let window = |w: &str| {
            limiter::go::GoDuration::parse(w)
                .ok()
                .map(|d| d.to_std().as_secs_f64())
                .filter(|w| *w > 0.0)
                .ok_or_else(unknown)
        };
        Ok(match s.trim() {
            "steadyCalls.perHour" => Figure::SteadyCallsPerHour,
            "throttles" => Figure::Throttles,
            "timeToReady.p50" => Figure::TimeToReady { quantile: 0.5 },
            "timeToReady.p90" => Figure::TimeToReady { quantile: 0.9 },
            "timeToReady.p99" => Figure::TimeToReady { quantile: 0.99 },
            "pollPeriod" => Figure::PollPeriod,
            "driftDetection" => Figure::DriftDetection,
            "drainTime" => Figure::DrainTime,
            t => match t.split_once('.') {
                Some(("cloudCalls", w)) => Figure::CloudCalls {
                    window_s: window(w)?,
                },
                Some(("apiRequests", w)) => Figure::ApiRequests {
                    window_s: window(w)?,
                },
                _ => return Err(unknown()),
            },
        })
    }
}

impl From<Figure> for String {
    fn from(f: Figure) -> String {
        f.to_string()
    }
}

impl TryFrom<String> for Figure {
    type Error = UnknownFigure;

    fn try_from(s: String) -> Result<Figure, UnknownFigure> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_reads_back_from_its_name() {
        for f in Figure::defaults(&[1.0, 10.0, 300.0]) {
            assert_eq!(f.to_string().parse::<Figure>(), Ok(f), "{f}");
        }
        assert_eq!(
            "cloudCalls.5m".parse::<Figure>(),
            Ok(Figure::CloudCalls { window_s: 300.0 })
        );
        assert_eq!(
            Figure::CloudCalls { window_s: 300.0 }.to_string(),
            "cloudCalls.5m"
        );
    }

    #[test]
    fn an_unknown_figure_lists_the_known_ones() {
        for bad in [
            "cloudCalls",
            "cloudCalls.x",
            "cloudCalls.0s",
            "timeToReady.p95",
            "ttr",
        ] {
            let e = bad.parse::<Figure>().unwrap_err().to_string();
            assert!(e.contains("expected one of cloudCalls.W"), "{bad}: {e}");
        }
    }

    #[test]
    fn seconds_read_as_durations() {
        assert_eq!(seconds(12.5), "12.5s");
        assert_eq!(seconds(270.0), "4m30s");
        assert_eq!(seconds(3600.0), "1h");
        assert_eq!(seconds(3725.0), "1h2m5s");
    }
}
