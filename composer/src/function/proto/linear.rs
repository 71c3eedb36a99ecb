//! [`Struct`]: `google.protobuf.Struct` with an encoder whose work grows with the message's
//! size only.
//!
//! prost writes a nested message as its length, then its fields, and computes that length
//! by walking the whole sub-message. Encoding a message therefore walks each node once for
//! every message above it: a `Struct` holding a Kubernetes object nests three protobuf
//! messages (map entry, `Value`, `Struct`) per level of JSON, so an object six levels deep
//! is walked about twenty times. The composer sends every observed and desired resource as
//! a `Struct`, twice per function call (request and response), and in the xr-smoke run the
//! length walks were the largest part of the function calls' CPU.
//!
//! [`Struct`] writes the same bytes as prost (a property test compares them on generated
//! values): one walk collects the lengths of the nested messages in the order they are
//! written, a second writes. Decoding is prost's.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use prost::bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType, encode_key, encode_varint, encoded_len_varint};
use prost::{DecodeError, Message};
use prost_types::value::Kind;
use prost_types::{ListValue, Value};

/// `google.protobuf.Struct`, as [`prost_types::Struct`] (which it dereferences to), encoded in
/// time linear in its size. The bytes are prost's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Struct(pub prost_types::Struct);

impl Struct {
    /// The `prost_types` value.
    #[must_use]
    pub fn into_inner(self) -> prost_types::Struct {
        self.0
    }
}

impl From<prost_types::Struct> for Struct {
    fn from(s: prost_types::Struct) -> Self {
        Struct(s)
    }
}

impl From<Struct> for prost_types::Struct {
    fn from(s: Struct) -> Self {
        s.0
    }
}

impl Deref for Struct {
    type Target = prost_types::Struct;

    fn deref(&self) -> &prost_types::Struct {
        &self.0
    }
}

impl DerefMut for Struct {
    fn deref_mut(&mut self) -> &mut prost_types::Struct {
        &mut self.0
    }
}

impl Message for Struct {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        let mut lengths = Vec::new();
        struct_len(&self.0.fields, &mut Some(&mut lengths));
        let mut lengths = lengths.into_iter();
        write_struct(&self.0.fields, &mut lengths, buf);
        debug_assert!(lengths.next().is_none(), "every length is written once");
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        self.0.merge_field(tag, wire_type, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        struct_len(&self.0.fields, &mut None)
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// The lengths of the nested `Struct`s and `ListValue`s, in the order [`write_struct`] meets
/// them: each pushed before its children (a placeholder, set when they are summed).
type Lengths<'a> = Option<&'a mut Vec<usize>>;

/// The length of a key and its tag: the key of field 1 or 2 is one byte.
const KEY: usize = 1;

/// The length of a length-delimited field (a string or a message) of `body` bytes: its key,
/// its length and its bytes.
fn delimited(body: usize) -> usize {
    KEY + encoded_len_varint(body as u64) + body
}

fn struct_len(fields: &BTreeMap<String, Value>, lengths: &mut Lengths<'_>) -> usize {
    fields
        .iter()
        .map(|(key, value)| {
            let entry = entry_len(key, value, lengths);
            delimited(entry)
        })
        .sum()
}

/// A map entry's length: its key (field 1, left out when empty) and its value (field 2,
/// left out when it has no kind), as prost's map encoding skips a field at its default.
fn entry_len(key: &str, value: &Value, lengths: &mut Lengths<'_>) -> usize {
    let value_len = if value.kind.is_none() {
        0
    } else {
        delimited(value_len(value, lengths))
    };
    key_len(key) + value_len
}

/// A map key's length: left out when empty, as prost's map encoding skips a key at its
/// default.
fn key_len(key: &str) -> usize {
    if key.is_empty() {
        0
    } else {
        delimited(key.len())
    }
}

/// A `Value`'s length: its one field of the oneof, written even at its default.
fn value_len(value: &Value, lengths: &mut Lengths<'_>) -> usize {
    match &value.kind {
        None => 0,
        Some(Kind::StructValue(s)) => {
            let body = nested(lengths, |lengths| struct_len(&s.fields, lengths));
            delimited(body)
        }
        Some(Kind::ListValue(list)) => {
            let body = nested(lengths, |lengths| list_len(list, lengths));
            delimited(body)
        }
        Some(scalar) => scalar_len(scalar),
    }
}

/// The length of a `Value` that holds no message.
fn scalar_len(kind: &Kind) -> usize {
    match kind {
        // An enum is an int32: a negative one is ten bytes, as prost writes it.
        #[allow(clippy::cast_sign_loss)]
        Kind::NullValue(n) => KEY + encoded_len_varint(i64::from(*n) as u64),
        Kind::NumberValue(_) => KEY + 8,
        Kind::StringValue(s) => delimited(s.len()),
        Kind::BoolValue(_) => KEY + 1,
        Kind::StructValue(_) | Kind::ListValue(_) => {
            unreachable!("a nested message's length is recorded, not computed here")
        }
    }
}

fn list_len(list: &ListValue, lengths: &mut Lengths<'_>) -> usize {
    list.values
        .iter()
        .map(|value| {
            let body = value_len(value, lengths);
            delimited(body)
        })
        .sum()
}

/// The length of a nested message, recorded in pre-order when `lengths` collects them.
fn nested(lengths: &mut Lengths<'_>, body: impl FnOnce(&mut Lengths<'_>) -> usize) -> usize {
    let slot = lengths.as_mut().map(|l| {
        l.push(0);
        l.len() - 1
    });
    let len = body(lengths);
    if let (Some(l), Some(slot)) = (lengths.as_mut(), slot) {
        l[slot] = len;
    }
    len
}

type Recorded = std::vec::IntoIter<usize>;

fn write_struct(fields: &BTreeMap<String, Value>, lengths: &mut Recorded, buf: &mut impl BufMut) {
    for (key, value) in fields {
        // The entry's length needs the value's, which is recorded only for nested messages,
        // so the value's length is taken before the entry's key is written.
        let value_body = value.kind.as_ref().map(|kind| written_len(kind, lengths));
        let value_len = value_body.map_or(0, |(body, _)| delimited(body));
        encode_key(1, WireType::LengthDelimited, buf);
        encode_varint((key_len(key) + value_len) as u64, buf);
        if !key.is_empty() {
            prost::encoding::string::encode(1, key, buf);
        }
        if let (Some(kind), Some((body, nested))) = (&value.kind, value_body) {
            encode_key(2, WireType::LengthDelimited, buf);
            encode_varint(body as u64, buf);
            write_kind(kind, nested, lengths, buf);
        }
    }
}

/// A `Value`'s length as written, a nested message's taken from the record; with the
/// nested message's own length.
fn written_len(kind: &Kind, lengths: &mut Recorded) -> (usize, Option<usize>) {
    match kind {
        Kind::StructValue(_) | Kind::ListValue(_) => {
            let body = lengths
                .next()
                .expect("a recorded length for each nested message");
            (delimited(body), Some(body))
        }
        scalar => (scalar_len(scalar), None),
    }
}

fn write_kind(kind: &Kind, nested: Option<usize>, lengths: &mut Recorded, buf: &mut impl BufMut) {
    match kind {
        Kind::NullValue(n) => prost::encoding::int32::encode(1, n, buf),
        Kind::NumberValue(x) => prost::encoding::double::encode(2, x, buf),
        Kind::StringValue(s) => prost::encoding::string::encode(3, s, buf),
        Kind::BoolValue(b) => prost::encoding::bool::encode(4, b, buf),
        Kind::StructValue(s) => {
            encode_key(5, WireType::LengthDelimited, buf);
            encode_varint(nested.unwrap_or_default() as u64, buf);
            write_struct(&s.fields, lengths, buf);
        }
        Kind::ListValue(list) => {
            encode_key(6, WireType::LengthDelimited, buf);
            encode_varint(nested.unwrap_or_default() as u64, buf);
            for value in &list.values {
                let (body, nested) = match &value.kind {
                    Some(kind) => written_len(kind, lengths),
                    None => (0, None),
                };
                encode_key(1, WireType::LengthDelimited, buf);
                encode_varint(body as u64, buf);
                if let Some(kind) = &value.kind {
                    write_kind(kind, nested, lengths, buf);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
