//! Words drawn mostly from a vocabulary: the names a parser knows, so that generated input
//! reaches past its first lookup, and now and then any text, so that it also meets names
//! nobody wrote down.

use std::fmt;
use std::marker::PhantomData;

use arbitrary::{Arbitrary, Unstructured};

/// The words a [`Pick`] draws from.
pub trait Vocabulary {
    /// The known words.
    const WORDS: &'static [&'static str];
    /// One draw in this many is any text instead of a known word.
    const ANY_TEXT_ONE_IN: u8 = 8;
}

/// A word from `V`'s vocabulary, or (one draw in [`Vocabulary::ANY_TEXT_ONE_IN`]) any text.
pub struct Pick<V>(pub String, PhantomData<V>);

impl<V> Pick<V> {
    /// A given word.
    #[must_use]
    pub fn new(word: impl Into<String>) -> Self {
        Pick(word.into(), PhantomData)
    }

    /// The word.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<V> fmt::Debug for Pick<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<V> Clone for Pick<V> {
    fn clone(&self) -> Self {
        Pick(self.0.clone(), PhantomData)
    }
}

impl<'a, V: Vocabulary> Arbitrary<'a> for Pick<V> {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let any = u.ratio(1, V::ANY_TEXT_ONE_IN)?;
        let word = if any || V::WORDS.is_empty() {
            String::arbitrary(u)?
        } else {
            (*u.choose(V::WORDS)?).to_owned()
        };
        Ok(Pick(word, PhantomData))
    }
}

/// An object's name: one of a few (`n0`, `n1`, `n2`), so that requests meet what earlier
/// ones made, or a word of `V`.
#[derive(Arbitrary, Debug, Clone)]
pub enum Name<V: Vocabulary> {
    Few(u8),
    Other(Pick<V>),
}

impl<V: Vocabulary> Name<V> {
    /// The name.
    #[must_use]
    pub fn text(&self) -> String {
        match self {
            Name::Few(i) => format!("n{}", i % 3),
            Name::Other(w) => w.as_str().to_owned(),
        }
    }
}

/// Declares a vocabulary: `vocabulary!(Name, one_in, ["a", "b"])`.
macro_rules! vocabulary {
    ($(#[$doc:meta])* $name:ident, $one_in:expr, [$($word:expr),* $(,)?]) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, arbitrary::Arbitrary)]
        pub struct $name;

        impl $crate::pick::Vocabulary for $name {
            const WORDS: &'static [&'static str] = &[$($word),*];
            const ANY_TEXT_ONE_IN: u8 = $one_in;
        }
    };
}
pub(crate) use vocabulary;

#[cfg(test)]
mod tests {
    use super::*;

    vocabulary!(Colours, 4, ["red", "green"]);

    #[test]
    fn most_draws_are_known_words_and_some_are_any_text() {
        let bytes: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut u = Unstructured::new(&bytes);
        let mut known = 0;
        let mut other = 0;
        for _ in 0..200 {
            let Ok(p) = Pick::<Colours>::arbitrary(&mut u) else {
                break;
            };
            if Colours::WORDS.contains(&p.as_str()) {
                known += 1;
            } else {
                other += 1;
            }
        }
        assert!(known > other, "{known} known, {other} other");
        assert!(other > 0, "no draw was any text");
    }
}
