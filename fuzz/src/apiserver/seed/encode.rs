//! The inverse of `arbitrary`'s decoding for the types every input is built from:
//! integers, flags, options, collections, tuples, vocabulary words and JSON.

use crate::pick::{Pick, Vocabulary};

/// What a type writes so that `arbitrary` decodes it back.
pub trait Encode {
    /// Appends the bytes that decode into `self`.
    ///
    /// # Panics
    /// For free text (not a word of its vocabulary), which no byte string decodes into
    /// at a known place.
    fn encode(&self, out: &mut Vec<u8>);
}

/// Variant `index` of an enum of `count` variants: the `u32` whose
/// `(u32 × count) >> 32` is `index`.
pub(super) fn variant(out: &mut Vec<u8>, index: u32, count: u32) {
    assert!(index < count, "variant {index} of {count}");
    let value = (u64::from(index) << 32).div_ceil(u64::from(count));
    let value = u32::try_from(value).expect("a variant's u32");
    debug_assert_eq!(
        (u64::from(value) * u64::from(count)) >> 32,
        u64::from(index)
    );
    out.extend_from_slice(&value.to_le_bytes());
}

/// Variant `index` of `count`, then its fields in the order they are declared.
pub(super) fn variant_with(out: &mut Vec<u8>, index: u32, count: u32, fields: &[&dyn Encode]) {
    variant(out, index, count);
    for field in fields {
        field.encode(out);
    }
}

impl Encode for u8 {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(*self);
    }
}

/// Integers wider than a byte: little-endian.
macro_rules! little_endian {
    ($($t:ty),*) => {$(
        impl Encode for $t {
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

little_endian!(u16, i32, i64, u64);

impl Encode for f64 {
    fn encode(&self, out: &mut Vec<u8>) {
        self.to_bits().encode(out);
    }
}

impl Encode for bool {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
}

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.is_some().encode(out);
        if let Some(t) = self {
            t.encode(out);
        }
    }
}

impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        for item in self {
            true.encode(out);
            item.encode(out);
        }
        false.encode(out);
    }
}

impl<A: Encode, B: Encode> Encode for (A, B) {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out);
        self.1.encode(out);
    }
}

impl<A: Encode, B: Encode, C: Encode> Encode for (A, B, C) {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out);
        self.1.encode(out);
        self.2.encode(out);
    }
}

impl<V: Vocabulary> Encode for Pick<V> {
    fn encode(&self, out: &mut Vec<u8>) {
        let index = V::WORDS
            .iter()
            .position(|w| *w == self.as_str())
            .unwrap_or_else(|| panic!("{:?} is not a word of the vocabulary", self.as_str()));
        assert!(
            V::WORDS.len() <= 256 && V::ANY_TEXT_ONE_IN >= 2,
            "a vocabulary's index is one byte"
        );
        // `ratio(1, ANY_TEXT_ONE_IN)`: 1 + byte % n; 1 would be any text.
        out.push(1);
        out.push(u8::try_from(index).expect("checked above"));
    }
}

impl<V: Vocabulary> Encode for crate::pick::Name<V> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            crate::pick::Name::Few(i) => variant_with(out, 0, 2, &[i]),
            crate::pick::Name::Other(w) => variant_with(out, 1, 2, &[w]),
        }
    }
}

impl<V: Vocabulary> Encode for crate::json::Json<V> {
    fn encode(&self, out: &mut Vec<u8>) {
        use crate::json::Json as J;
        match self {
            J::Null => variant(out, 0, 7),
            J::Bool(b) => variant_with(out, 1, 7, &[b]),
            J::Int(i) => variant_with(out, 2, 7, &[i]),
            J::Float(f) => variant_with(out, 3, 7, &[f]),
            J::Str(w) => variant_with(out, 4, 7, &[w]),
            J::Array(items) => variant_with(out, 5, 7, &[items]),
            J::Object(fields) => variant_with(out, 6, 7, &[fields]),
        }
    }
}

#[cfg(test)]
mod tests {
    use arbitrary::{Arbitrary, Unstructured};

    use super::*;

    #[test]
    fn every_variant_index_decodes_back() {
        for count in 1..=17u32 {
            for index in 0..count {
                let mut out = Vec::new();
                variant(&mut out, index, count);
                let value = u32::arbitrary(&mut Unstructured::new(&out)).unwrap();
                assert_eq!(
                    (u64::from(value) * u64::from(count)) >> 32,
                    u64::from(index)
                );
            }
        }
    }

    #[test]
    fn words_outside_the_vocabulary_are_refused() {
        let refused = std::panic::catch_unwind(|| {
            crate::apiserver::input::Word::new("not a word here").encode(&mut Vec::new())
        });
        assert!(refused.is_err());
    }
}
