//! The vocabulary of the cloud: collections, actions and the quota classes they fall in.

use std::fmt;

/// A kind of resource the cloud manages, addressed as `/v1/accounts/{account}/{collection}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Collection {
    /// Storage buckets: created and deleted at once.
    Buckets,
    /// Databases: provisioned asynchronously (`creating` → `available`, `deleting` → gone).
    Databases,
    /// DNS records: created and deleted at once; the spec needs `type` and `value`.
    Records,
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
        match self {
            Collection::Buckets => "buckets",
            Collection::Databases => "databases",
            Collection::Records => "records",
        }
    }

    /// Parses a path segment or config key.
    pub fn parse(s: &str) -> Option<Collection> {
        Collection::ALL.into_iter().find(|c| c.as_str() == s)
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl serde::Serialize for Collection {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl fmt::Display for Collection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a request does to a collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
        match self {
            Action::Create => "create",
            Action::Get => "get",
            Action::Update => "update",
            Action::Delete => "delete",
            Action::List => "list",
        }
    }

    /// Parses an action name.
    pub fn parse(s: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == s)
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

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A quota class: actions of one class share a token bucket, as EC2's categories and
/// ARM's reads/writes/deletes do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
        match self {
            Class::Read => "read",
            Class::List => "list",
            Class::Mutate => "mutate",
            Class::Delete => "delete",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The lifecycle state of a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
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
        match self {
            State::Creating => "creating",
            State::Available => "available",
            State::Deleting => "deleting",
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
