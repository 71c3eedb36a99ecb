//! The vocabulary of the cloud: collections, actions and the quota classes they fall in.

use std::fmt;
use std::marker::PhantomData;

use strum::{Display, EnumString, IntoStaticStr, VariantNames};

/// An enum of lowercase words: parsed from and shown as its variants' names in
/// lowercase (strum), ordered, hashable and copied.
macro_rules! words {
    ($(#[$meta:meta])* pub enum $name:ident { $($body:tt)* }) => {
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            IntoStaticStr,
            EnumString,
            Display,
            VariantNames,
        )]
        #[strum(serialize_all = "lowercase")]
        $(#[$meta])*
        pub enum $name { $($body)* }
    };
}

words! {
    /// A kind of resource the cloud manages, addressed as `/v1/accounts/{account}/{collection}`.
    pub enum Collection {
        /// Storage buckets: created and deleted at once.
        Buckets,
        /// Databases: provisioned asynchronously (`creating` → `available`, `deleting` → gone).
        Databases,
        /// DNS records: created and deleted at once; the spec needs `type` and `value`.
        Records,
    }
}

impl Collection {
    /// Every collection, in a stable order.
    pub const ALL: [Collection; 3] = [
        Collection::Buckets,
        Collection::Databases,
        Collection::Records,
    ];

    /// The path segment and config key of this collection.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses a path segment or config key.
    pub fn parse(s: &str) -> Option<Collection> {
        s.parse().ok()
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

words! {
    /// What a request does to a collection.
    pub enum Action {
        /// `POST` on a collection.
        Create,
        /// `GET` on a resource.
        Get,
        /// `PUT` on a resource.
        Update,
        /// `DELETE` on a resource.
        Delete,
        /// `GET` on a collection (paginated).
        List,
    }
}

impl Action {
    /// Every action, in a stable order.
    pub const ALL: [Action; 5] = [
        Action::Create,
        Action::Get,
        Action::Update,
        Action::Delete,
        Action::List,
    ];

    /// The name used in the config, the journal and the metrics.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses an action name.
    pub fn parse(s: &str) -> Option<Action> {
        s.parse().ok()
    }

    /// The quota class whose bucket this action draws from (unless overridden per action).
    pub fn class(self) -> Class {
        match self {
            Action::Get => Class::Read,
            Action::List => Class::List,
            Action::Create | Action::Update => Class::Mutate,
            Action::Delete => Class::Delete,
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// A quota class: actions of one class share a token bucket, as EC2's categories and
/// ARM's reads/writes/deletes do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, IntoStaticStr, Display)]
#[strum(serialize_all = "lowercase")]
pub enum Class {
    /// Reads of a single resource.
    Read,
    /// Paginated lists.
    List,
    /// Creates and updates.
    Mutate,
    /// Deletes.
    Delete,
}

impl Class {
    /// Every class, in a stable order.
    pub const ALL: [Class; 4] = [Class::Read, Class::List, Class::Mutate, Class::Delete];

    /// The name used in the config and the metrics.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The lifecycle state of a resource.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, IntoStaticStr,
)]
#[strum(serialize_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Being provisioned (databases only).
    Creating,
    /// Ready for use and updates.
    Available,
    /// Being deleted (databases only); still counts against the count quota.
    Deleting,
}

impl State {
    /// The name used on the wire.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// On the wire, a collection or an action is its name.
macro_rules! serde_by_name {
    ($type:ty, $what:literal) => {
        impl serde::Serialize for $type {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$type, D::Error> {
                d.deserialize_str(NameVisitor {
                    what: $what,
                    names: <$type as strum::VariantNames>::VARIANTS,
                    parse: <$type>::parse,
                })
            }
        }
    };
}

serde_by_name!(Collection, "collection");
serde_by_name!(Action, "action");

/// Reads a name, refusing any that is not one of `names`.
struct NameVisitor<T: 'static> {
    what: &'static str,
    names: &'static [&'static str],
    parse: fn(&str) -> Option<T>,
}

impl<T> serde::de::Visitor<'_> for NameVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {} name", self.what)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).ok_or_else(|| E::unknown_variant(v, self.names))
    }
}

/// `Option<Collection>` and `Option<Action>` as journal lines write them: the name, or an
/// empty string for `None`.
pub(crate) mod empty_is_none {
    use super::{PhantomData, fmt};
    use serde::de::{self, IntoDeserializer as _};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize>(
        value: &Option<T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => value.serialize(s),
            None => s.serialize_str(""),
        }
    }

    pub fn deserialize<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        d.deserialize_str(Visitor(PhantomData))
    }

    struct Visitor<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> de::Visitor<'de> for Visitor<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a name or an empty string")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<T>, E> {
            if v.is_empty() {
                return Ok(None);
            }
            T::deserialize(v.into_deserializer()).map(Some)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_parse() {
        for c in Collection::ALL {
            assert_eq!(Collection::parse(c.as_str()), Some(c));
        }
        for a in Action::ALL {
            assert_eq!(Action::parse(a.as_str()), Some(a));
        }
        assert_eq!(Collection::parse("nope"), None);
        assert_eq!(
            <Collection as strum::VariantNames>::VARIANTS,
            Collection::ALL.map(Collection::as_str).as_slice()
        );
        assert_eq!(
            <Action as strum::VariantNames>::VARIANTS,
            Action::ALL.map(Action::as_str).as_slice()
        );
    }

    #[test]
    fn names_round_trip_through_serde_and_unknown_ones_are_refused() {
        for c in Collection::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{c}\""));
            assert_eq!(serde_json::from_str::<Collection>(&json).unwrap(), c);
        }
        for a in Action::ALL {
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(serde_json::from_str::<Action>(&json).unwrap(), a);
        }
        let err = serde_json::from_str::<Action>("\"patch\"").unwrap_err();
        assert!(err.to_string().contains("unknown variant `patch`"), "{err}");
    }

    #[test]
    fn every_action_falls_in_the_class_real_clouds_use() {
        assert_eq!(Action::Get.class(), Class::Read);
        assert_eq!(Action::List.class(), Class::List);
        assert_eq!(Action::Create.class(), Class::Mutate);
        assert_eq!(Action::Update.class(), Class::Mutate);
        assert_eq!(Action::Delete.class(), Class::Delete);
    }
}
