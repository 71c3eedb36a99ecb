//! The grid of a sweep: `--vary PATH=V1,V2,…` axes, and their points, the product of the
//! axes' values (the first axis varies slowest).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::scenario::Set;

/// One `--vary PATH=V1,V2,…`: a path `--set` accepts and the values it takes in turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    /// The path, such as `provider.maxReconcileRate`.
    pub path: String,
    /// The values, as YAML, in the order given.
    pub values: Vec<String>,
}

/// A `--vary` argument that is not `PATH=V1,V2,…`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "--vary {given:?}: {problem}, expected PATH=V1,V2,… such as provider.maxReconcileRate=5,10,20"
)]
pub struct VarySyntaxError {
    given: String,
    problem: &'static str,
}

impl FromStr for Axis {
    type Err = VarySyntaxError;

    fn from_str(s: &str) -> Result<Axis, VarySyntaxError> {
        let fail = |problem| VarySyntaxError {
            given: s.to_owned(),
            problem,
        };
        let (path, values) = s.split_once('=').ok_or_else(|| fail("no `=`"))?;
        let path = path.trim();
        if path.is_empty() {
            return Err(fail("no path before `=`"));
        }
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_owned()).collect();
        if values.iter().any(String::is_empty) {
            return Err(fail("an empty value"));
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(fail("a value given twice"));
            }
        }
        Ok(Axis {
            path: path.to_owned(),
            values,
        })
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.path, self.values.join(","))
    }
}

/// The axes of a sweep, each path once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    /// The axes, the first varying slowest.
    pub axes: Vec<Axis>,
}

/// Two axes of one path.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("--vary {0} is given twice, expected each path once (list every value in one --vary)")]
pub struct DuplicateAxis(String);

impl Grid {
    /// The grid of `axes`: refused when two vary the same path.
    ///
    /// # Errors
    /// [`DuplicateAxis`] naming the path.
    pub fn new(axes: Vec<Axis>) -> Result<Grid, DuplicateAxis> {
        for (i, a) in axes.iter().enumerate() {
            if axes[..i].iter().any(|b| b.path == a.path) {
                return Err(DuplicateAxis(a.path.clone()));
            }
        }
        Ok(Grid { axes })
    }

    /// `base`'s axes with `over`'s in place of those of the same path, and `over`'s others
    /// after them: the command line's `--vary` over the scenario file's.
    #[must_use]
    pub fn overlaid(base: &Grid, over: &Grid) -> Grid {
        let mut axes: Vec<Axis> = base
            .axes
            .iter()
            .map(|a| {
                over.axes
                    .iter()
                    .find(|b| b.path == a.path)
                    .unwrap_or(a)
                    .clone()
            })
            .collect();
        for b in &over.axes {
            if !axes.iter().any(|a| a.path == b.path) {
                axes.push(b.clone());
            }
        }
        Grid { axes }
    }

    /// How many points: the product of the axes' lengths (1 for no axis).
    #[must_use]
    pub fn len(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).product()
    }

    /// Whether there is no axis.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.axes.is_empty()
    }

    /// Point `index`'s sets, one per axis in axis order; `None` past the last point.
    #[must_use]
    pub fn point(&self, index: usize) -> Option<Vec<Set>> {
        if index >= self.len() {
            return None;
        }
        let mut rest = index;
        let mut sets = Vec::with_capacity(self.axes.len());
        for a in self.axes.iter().rev() {
            let n = a.values.len();
            sets.push(Set {
                path: a.path.clone(),
                value: a.values[rest % n].clone(),
            });
            rest /= n;
        }
        sets.reverse();
        Some(sets)
    }

    /// Every point's sets, in index order.
    #[must_use]
    pub fn points(&self) -> Vec<Vec<Set>> {
        (0..self.len()).filter_map(|i| self.point(i)).collect()
    }
}

/// A point's label: its values, `PATH=VALUE` joined by `, ` (the last segment of each path
/// when that is unambiguous is not enough: two groups' `count`s would read alike).
#[must_use]
pub fn label(sets: &[Set]) -> String {
    sets.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(s: &str) -> Axis {
        s.parse().unwrap()
    }

    #[test]
    fn a_vary_is_a_path_and_its_comma_separated_values() {
        assert_eq!(
            axis("provider.maxReconcileRate = 5, 10,20"),
            Axis {
                path: "provider.maxReconcileRate".into(),
                values: vec!["5".into(), "10".into(), "20".into()]
            }
        );
        assert_eq!(axis("provider.pollInterval=1m").values, ["1m"]);
    }

    #[test]
    fn a_bad_vary_says_what_was_expected() {
        for (given, problem) in [
            ("provider.maxReconcileRate", "no `=`"),
            ("=5,10", "no path before `=`"),
            ("seed=1,,2", "an empty value"),
            ("seed=", "an empty value"),
            ("seed=1,2,1", "a value given twice"),
        ] {
            let e = given.parse::<Axis>().unwrap_err().to_string();
            assert!(e.contains(problem), "{given}: {e}");
            assert!(e.contains("expected PATH=V1,V2,…"), "{e}");
        }
    }

    #[test]
    fn points_are_the_product_of_the_axes_with_the_first_varying_slowest() {
        let g = Grid::new(vec![
            axis("provider.maxReconcileRate=5,10"),
            axis("provider.scopedBuckets=false,true"),
        ])
        .unwrap();
        assert_eq!(g.len(), 4);
        let labels: Vec<String> = g.points().iter().map(|p| label(p)).collect();
        assert_eq!(
            labels,
            [
                "provider.maxReconcileRate=5, provider.scopedBuckets=false",
                "provider.maxReconcileRate=5, provider.scopedBuckets=true",
                "provider.maxReconcileRate=10, provider.scopedBuckets=false",
                "provider.maxReconcileRate=10, provider.scopedBuckets=true",
            ]
        );
        assert_eq!(g.point(4), None);
    }

    #[test]
    fn a_path_varied_twice_is_refused_and_the_command_line_replaces_the_files_axis() {
        assert!(Grid::new(vec![axis("seed=1,2"), axis("seed=3")]).is_err());
        let file = Grid::new(vec![axis("seed=1,2"), axis("resources.b.count=10,20")]).unwrap();
        let flags = Grid::new(vec![axis("resources.b.count=5"), axis("time=virtual")]).unwrap();
        let g = Grid::overlaid(&file, &flags);
        let paths: Vec<String> = g.axes.iter().map(ToString::to_string).collect();
        assert_eq!(paths, ["seed=1,2", "resources.b.count=5", "time=virtual"]);
    }
}
