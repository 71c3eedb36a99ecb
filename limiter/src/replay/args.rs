//! The words of one script line, parsed the way Go's harness parses them (`strconv.Atoi`,
//! `strconv.ParseFloat`, `strconv.ParseBool`, `time.ParseDuration`), with the column of every
//! word for error messages.

use super::CommandError;
use crate::go::GoDuration;
use crate::rate::Limit;

/// A word of the line and the 1-based column it starts at.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Word<'a> {
    pub(crate) text: &'a str,
    pub(crate) column: usize,
}

/// An error in one command, at a column of its line.
#[derive(Debug)]
pub(crate) struct Located {
    pub(crate) column: usize,
    pub(crate) error: CommandError,
}

pub(crate) type Result<T> = std::result::Result<T, Located>;

impl<'a> Word<'a> {
    fn fail(self, error: CommandError) -> Located {
        Located {
            column: self.column,
            error,
        }
    }

    fn expected(self, expected: &'static str) -> Located {
        self.fail(CommandError::Expected {
            expected,
            got: self.text.to_owned(),
        })
    }

    /// A Go `int` (`strconv.Atoi`): any sign.
    pub(crate) fn int(self, what: &'static str) -> Result<i64> {
        self.text.parse().map_err(|_| self.expected(what))
    }

    /// A Go `float64` (`strconv.ParseFloat`; `inf` is IEEE infinity, as in Go). Like Go, a
    /// finite number too large for a `float64` (`1e400`) is out of range, and NaN takes no sign.
    pub(crate) fn float(self, what: &'static str) -> Result<f64> {
        let f: f64 = self.text.parse().map_err(|_| self.expected(what))?;
        let unsigned = self.text.trim_start_matches(['+', '-']);
        let spelled_inf =
            unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity");
        let signed_nan = f.is_nan() && unsigned.len() != self.text.len();
        if (f.is_infinite() && !spelled_inf) || signed_nan {
            return Err(self.expected(what));
        }
        Ok(f)
    }

    /// A Go `time.Duration` (`time.ParseDuration`): any sign.
    pub(crate) fn duration(self, what: &'static str) -> Result<GoDuration> {
        GoDuration::parse(self.text).map_err(|source| {
            self.fail(CommandError::Duration {
                what,
                got: self.text.to_owned(),
                source,
            })
        })
    }

    /// A priority (`priority=N`): a Go `int`, any sign.
    pub(crate) fn priority(self) -> Result<i64> {
        self.int("an integer priority")
    }

    /// A `bool` as `strconv.ParseBool` reads it.
    pub(crate) fn bool(self, what: &'static str) -> Result<bool> {
        match self.text {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
            _ => Err(self.expected(what)),
        }
    }

    /// A rate limit: `inf` is `rate.Inf` (`math.MaxFloat64`), `every=D` is `rate.Every(D)`,
    /// anything else a number of events per second.
    pub(crate) fn limit(self) -> Result<Limit> {
        const WHAT: &str = "a limit: inf, every=DURATION or events per second";
        if self.text == "inf" {
            return Ok(Limit::INF);
        }
        if let Some(d) = self.text.strip_prefix("every=") {
            let d = Word {
                text: d,
                column: self.column + "every=".len(),
            };
            return Ok(Limit::every(d.duration("the interval of every=")?));
        }
        self.float(WHAT).map(Limit).map_err(|_| self.expected(WHAT))
    }

    /// The value after `key=` of an option word, as a word of its own.
    pub(crate) fn value_of(self, key: &str) -> Option<Word<'a>> {
        let value = self.text.strip_prefix(key)?.strip_prefix('=')?;
        Some(Word {
            text: value,
            column: self.column + key.len() + 1,
        })
    }

    /// This word is not one the command knows.
    pub(crate) fn unknown(self, expected: &'static str) -> Located {
        self.expected(expected)
    }

    /// An error about what this word names (a name that is not defined, a queue of the wrong
    /// kind).
    pub(crate) fn error(self, error: CommandError) -> Located {
        self.fail(error)
    }
}

/// The words of a command line.
pub(crate) struct Words<'a> {
    words: Vec<Word<'a>>,
    /// Column just past the last character, where a missing word would go.
    end: usize,
}

impl<'a> Words<'a> {
    /// Splits `line` on whitespace, keeping columns (counted in characters, 1-based).
    pub(crate) fn split(line: &'a str) -> Self {
        let mut words = Vec::new();
        let mut start: Option<(usize, usize)> = None;
        let mut column = 0;
        for (i, c) in line.char_indices() {
            column += 1;
            match (c.is_whitespace(), start) {
                (false, None) => start = Some((i, column)),
                (true, Some((s, col))) => {
                    words.push(Word {
                        text: &line[s..i],
                        column: col,
                    });
                    start = None;
                }
                _ => {}
            }
        }
        if let Some((s, col)) = start {
            words.push(Word {
                text: &line[s..],
                column: col,
            });
        }
        Words {
            words,
            end: column + 1,
        }
    }

    /// Word `i`, which must be there.
    pub(crate) fn get(&self, i: usize, what: &'static str) -> Result<Word<'a>> {
        self.words.get(i).copied().ok_or(Located {
            column: self.end,
            error: CommandError::Missing(what),
        })
    }

    /// Word `i`, if there is one.
    pub(crate) fn opt(&self, i: usize) -> Option<Word<'a>> {
        self.words.get(i).copied()
    }

    /// Words from `i` on.
    pub(crate) fn from(&self, i: usize) -> &[Word<'a>] {
        self.words.get(i..).unwrap_or_default()
    }

    /// Removes and returns the last word if it is `key=VALUE`.
    pub(crate) fn pop_option(&mut self, key: &str) -> Option<Word<'a>> {
        let value = self.words.last()?.value_of(key)?;
        self.words.pop();
        Some(value)
    }

    /// An error at the end of the line.
    pub(crate) fn at_end(&self, error: CommandError) -> Located {
        Located {
            column: self.end,
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_their_columns() {
        let w = Words::split("  reserve  L 3");
        let cols: Vec<(&str, usize)> = w.from(0).iter().map(|w| (w.text, w.column)).collect();
        assert_eq!(cols, [("reserve", 3), ("L", 12), ("3", 14)]);
        let missing = w.get(3, "a name").unwrap_err();
        assert_eq!(missing.column, 15);
    }

    #[test]
    fn numbers_and_durations_take_any_sign_as_go_does() {
        let w = Words::split("x -3 -1.5 -5ms");
        assert_eq!(w.get(1, "n").unwrap().int("n").unwrap(), -3);
        assert_eq!(w.get(2, "f").unwrap().float("f").unwrap(), -1.5);
        assert_eq!(
            w.get(3, "d").unwrap().duration("d").unwrap(),
            GoDuration(-5_000_000)
        );
    }

    #[test]
    fn inf_is_rate_inf_not_ieee_infinity() {
        let w = Words::split("inf every=0s 2.5");
        assert!(w.get(0, "").unwrap().limit().unwrap().is_inf());
        assert_eq!(w.get(0, "").unwrap().limit().unwrap().0, f64::MAX);
        assert!(w.get(1, "").unwrap().limit().unwrap().is_inf());
        assert_eq!(w.get(2, "").unwrap().limit().unwrap().0, 2.5);
    }

    #[test]
    fn a_bad_value_names_what_was_expected_and_where() {
        let w = Words::split("whenx R a lots");
        let e = w
            .get(3, "a count")
            .unwrap()
            .int("an integer count")
            .unwrap_err();
        assert_eq!(e.column, 11);
        assert_eq!(
            e.error.to_string(),
            "expected an integer count, got \"lots\""
        );
    }
}
