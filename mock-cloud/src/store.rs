//! The inventory: every resource of every account, with the database lifecycle and
//! idempotent creates.
//!
//! # Semantics
//! Time is passed in as `now`, the time since the cloud started. A database is `creating`
//! until `database_create` has passed since its create, then `available`; after a delete
//! it is `deleting` for `database_delete`, then gone. Buckets and records are available at
//! once and gone at once. Transitions happen lazily, when the resource is next looked at,
//! so they are exact to the microsecond whatever the traffic. Resources still deleting
//! count against the count quota and block a create of the same name.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::{Collection, State};

/// A resource as the API and the inventory show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// The owning account.
    pub account: String,
    /// The collection.
    pub collection: Collection,
    /// The name, unique in its account and collection.
    pub name: String,
    /// The lifecycle state.
    pub state: State,
    /// 1 at creation, +1 on every update.
    pub generation: u64,
    /// Time since the cloud started when it was created, in microseconds.
    pub created_at_us: u64,
    /// The user's spec, as last written.
    pub spec: serde_json::Value,
}

/// A resource borrowed from the store, serialized like [`Resource`] without copying it.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct ResourceRef<'a> {
    account: &'a str,
    collection: Collection,
    name: &'a str,
    state: State,
    generation: u64,
    created_at_us: u64,
    spec: &'a serde_json::Value,
}

/// Why a store operation did not happen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StoreError {
    NotFound,
    AlreadyExists,
    NotAvailable(State),
    QuotaExceeded { limit: u32 },
}

/// A successful create, or the replay of an earlier one with the same idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Created {
    New(Resource),
    Replayed(Resource),
}

/// A successful delete: gone at once, or deleting for a while (databases).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Deleted {
    Gone(Resource),
    Deleting(Resource),
}

#[derive(Debug, Clone)]
struct Stored {
    spec: serde_json::Value,
    generation: u64,
    created_at: Duration,
    ready_at: Duration,
    gone_at: Option<Duration>,
}

impl Stored {
    fn state(&self, now: Duration) -> Option<State> {
        match self.gone_at {
            Some(gone_at) if now >= gone_at => None,
            Some(_) => Some(State::Deleting),
            None if now < self.ready_at => Some(State::Creating),
            None => Some(State::Available),
        }
    }
}

#[derive(Debug, Default)]
struct Shelf {
    resources: BTreeMap<String, Stored>,
    deleting: usize,
}

impl Shelf {
    /// Removes what finished deleting.
    fn purge(&mut self, now: Duration) {
        if self.deleting == 0 {
            return;
        }
        let before = self.resources.len();
        self.resources.retain(|_, r| r.state(now).is_some());
        self.deleting -= before - self.resources.len();
    }

    fn lookup(&mut self, name: &str, now: Duration) -> Option<(&mut Stored, State)> {
        let state = self.resources.get(name)?.state(now);
        match state {
            Some(state) => self.resources.get_mut(name).map(|r| (r, state)),
            None => {
                self.resources.remove(name);
                self.deleting -= 1;
                None
            }
        }
    }
}

#[derive(Debug, Default)]
struct AccountStore {
    shelves: [Shelf; 3],
    replays: HashMap<String, Resource>,
}

/// Every account's resources.
#[derive(Debug)]
pub(crate) struct Store {
    accounts: BTreeMap<String, AccountStore>,
    database_create: Duration,
    database_delete: Duration,
}

fn view(account: &str, collection: Collection, name: &str, r: &Stored, state: State) -> Resource {
    Resource {
        account: account.to_owned(),
        collection,
        name: name.to_owned(),
        state,
        generation: r.generation,
        created_at_us: micros(r.created_at),
        spec: r.spec.clone(),
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Store {
    pub fn new<'a>(
        accounts: impl IntoIterator<Item = &'a str>,
        database_create: Duration,
        database_delete: Duration,
    ) -> Store {
        Store {
            accounts: accounts
                .into_iter()
                .map(|a| (a.to_owned(), AccountStore::default()))
                .collect(),
            database_create,
            database_delete,
        }
    }

    fn shelf(&mut self, account: &str, collection: Collection) -> Option<&mut Shelf> {
        let store = self.accounts.get_mut(account)?;
        Some(&mut store.shelves[collection.index()])
    }

    /// Creates a resource, or replays the first create made with `idempotency_key`.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        &mut self,
        account: &str,
        collection: Collection,
        name: &str,
        spec: serde_json::Value,
        idempotency_key: Option<&str>,
        count_limit: Option<u32>,
        now: Duration,
    ) -> Result<Created, StoreError> {
        let ready_at = match collection {
            Collection::Databases => now + self.database_create,
            Collection::Buckets | Collection::Records => now,
        };
        let store = self.accounts.get_mut(account).ok_or(StoreError::NotFound)?;
        if let Some(replay) = idempotency_key.and_then(|key| store.replays.get(key)) {
            return Ok(Created::Replayed(replay.clone()));
        }
        let shelf = &mut store.shelves[collection.index()];
        shelf.purge(now);
        if shelf.resources.contains_key(name) {
            return Err(StoreError::AlreadyExists);
        }
        if let Some(limit) = count_limit
            && shelf.resources.len() >= limit as usize
        {
            return Err(StoreError::QuotaExceeded { limit });
        }
        let stored = Stored {
            spec,
            generation: 1,
            created_at: now,
            ready_at,
            gone_at: None,
        };
        let state = stored.state(now).unwrap_or(State::Available);
        let resource = view(account, collection, name, &stored, state);
        shelf.resources.insert(name.to_owned(), stored);
        if let Some(key) = idempotency_key {
            store.replays.insert(key.to_owned(), resource.clone());
        }
        Ok(Created::New(resource))
    }

    /// Keeps a resource `creating` until `until` (a slow create), if it exists.
    pub fn hold_creating(
        &mut self,
        account: &str,
        collection: Collection,
        name: &str,
        until: Duration,
    ) {
        if let Some(stored) = self
            .shelf(account, collection)
            .and_then(|shelf| shelf.resources.get_mut(name))
        {
            stored.ready_at = stored.ready_at.max(until);
        }
    }

    /// Calls `f` with the resource, borrowed.
    pub fn read<R>(
        &mut self,
        account: &str,
        collection: Collection,
        name: &str,
        now: Duration,
        f: impl FnOnce(ResourceRef<'_>) -> R,
    ) -> Result<R, StoreError> {
        let shelf = self
            .shelf(account, collection)
            .ok_or(StoreError::NotFound)?;
        let (stored, state) = shelf.lookup(name, now).ok_or(StoreError::NotFound)?;
        Ok(f(ResourceRef {
            account,
            collection,
            name,
            state,
            generation: stored.generation,
            created_at_us: micros(stored.created_at),
            spec: &stored.spec,
        }))
    }

    pub fn update(
        &mut self,
        account: &str,
        collection: Collection,
        name: &str,
        spec: serde_json::Value,
        now: Duration,
    ) -> Result<Resource, StoreError> {
        let shelf = self
            .shelf(account, collection)
            .ok_or(StoreError::NotFound)?;
        let (stored, state) = shelf.lookup(name, now).ok_or(StoreError::NotFound)?;
        if state != State::Available {
            return Err(StoreError::NotAvailable(state));
        }
        stored.spec = spec;
        stored.generation += 1;
        Ok(view(account, collection, name, stored, state))
    }

    pub fn delete(
        &mut self,
        account: &str,
        collection: Collection,
        name: &str,
        now: Duration,
    ) -> Result<Deleted, StoreError> {
        let delete_time = self.database_delete;
        let shelf = self
            .shelf(account, collection)
            .ok_or(StoreError::NotFound)?;
        let (stored, state) = shelf.lookup(name, now).ok_or(StoreError::NotFound)?;
        if collection != Collection::Databases {
            let resource = view(account, collection, name, stored, state);
            shelf.resources.remove(name);
            return Ok(Deleted::Gone(resource));
        }
        let newly_deleting = state != State::Deleting;
        if newly_deleting {
            stored.gone_at = Some(now + delete_time);
        }
        let resource = view(account, collection, name, stored, State::Deleting);
        if newly_deleting {
            shelf.deleting += 1;
        }
        if delete_time.is_zero() {
            shelf.purge(now);
        }
        Ok(Deleted::Deleting(resource))
    }

    /// Up to `limit` resources named after `after`, in name order, and whether more follow.
    pub fn list(
        &mut self,
        account: &str,
        collection: Collection,
        after: Option<&str>,
        limit: usize,
        now: Duration,
    ) -> Result<(Vec<Resource>, bool), StoreError> {
        let shelf = self
            .shelf(account, collection)
            .ok_or(StoreError::NotFound)?;
        shelf.purge(now);
        let range = match after {
            Some(after) => shelf
                .resources
                .range::<str, _>((std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded)),
            None => shelf.resources.range::<str, _>(..),
        };
        let mut items = Vec::new();
        let mut more = false;
        for (name, stored) in range {
            if items.len() == limit {
                more = true;
                break;
            }
            let state = stored.state(now).unwrap_or(State::Deleting);
            items.push(view(account, collection, name, stored, state));
        }
        Ok((items, more))
    }

    /// Live resources (including ones creating or deleting) of every account.
    pub fn inventory(&mut self, now: Duration) -> Vec<Resource> {
        let mut all = Vec::new();
        for (account, store) in &mut self.accounts {
            for collection in Collection::ALL {
                let shelf = &mut store.shelves[collection.index()];
                shelf.purge(now);
                for (name, stored) in &shelf.resources {
                    let state = stored.state(now).unwrap_or(State::Deleting);
                    all.push(view(account, collection, name, stored, state));
                }
            }
        }
        all
    }

    /// Live resources per account and collection.
    pub fn counts(&mut self, now: Duration) -> Vec<(String, Collection, usize)> {
        let mut counts = Vec::new();
        for (account, store) in &mut self.accounts {
            for collection in Collection::ALL {
                let shelf = &mut store.shelves[collection.index()];
                shelf.purge(now);
                counts.push((account.clone(), collection, shelf.resources.len()));
            }
        }
        counts
    }

    /// Forgets every resource and idempotency key.
    pub fn clear(&mut self) {
        for store in self.accounts.values_mut() {
            *store = AccountStore::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SEC: Duration = Duration::from_secs(1);

    fn store() -> Store {
        Store::new(["a"], 5 * SEC, 3 * SEC)
    }

    fn create(
        store: &mut Store,
        c: Collection,
        name: &str,
        now: Duration,
    ) -> Result<Created, StoreError> {
        store.create("a", c, name, json!({}), None, None, now)
    }

    #[test]
    fn a_database_is_creating_then_available_then_deleting_then_gone() {
        let mut s = store();
        let Ok(Created::New(db)) = create(&mut s, Collection::Databases, "db", Duration::ZERO)
        else {
            panic!("create failed");
        };
        assert_eq!(db.state, State::Creating);
        let at = |s: &mut Store, t| s.read("a", Collection::Databases, "db", t, |r| r.state);
        assert_eq!(
            at(&mut s, 5 * SEC - Duration::from_micros(1)),
            Ok(State::Creating)
        );
        assert_eq!(
            s.update("a", Collection::Databases, "db", json!({"x": 1}), 4 * SEC),
            Err(StoreError::NotAvailable(State::Creating))
        );
        assert_eq!(at(&mut s, 5 * SEC), Ok(State::Available));
        assert!(matches!(
            s.delete("a", Collection::Databases, "db", 10 * SEC),
            Ok(Deleted::Deleting(_))
        ));
        assert_eq!(at(&mut s, 12 * SEC), Ok(State::Deleting));
        assert_eq!(
            s.update("a", Collection::Databases, "db", json!({}), 12 * SEC),
            Err(StoreError::NotAvailable(State::Deleting))
        );
        assert_eq!(at(&mut s, 13 * SEC), Err(StoreError::NotFound));
        assert!(s.inventory(13 * SEC).is_empty());
    }

    #[test]
    fn deleting_resources_count_against_the_count_quota() {
        let mut s = store();
        let limited = |s: &mut Store, name: &str, now| {
            s.create(
                "a",
                Collection::Databases,
                name,
                json!({}),
                None,
                Some(1),
                now,
            )
        };
        assert!(limited(&mut s, "one", Duration::ZERO).is_ok());
        s.delete("a", Collection::Databases, "one", 6 * SEC)
            .unwrap();
        assert_eq!(
            limited(&mut s, "two", 8 * SEC),
            Err(StoreError::QuotaExceeded { limit: 1 })
        );
        assert!(limited(&mut s, "two", 9 * SEC).is_ok());
    }

    #[test]
    fn an_idempotency_key_replays_the_first_create() {
        let mut s = store();
        let mut create_with_key = |name: &str| {
            s.create(
                "a",
                Collection::Buckets,
                name,
                json!({}),
                Some("k"),
                None,
                Duration::ZERO,
            )
        };
        let Ok(Created::New(first)) = create_with_key("b") else {
            panic!()
        };
        assert_eq!(create_with_key("b"), Ok(Created::Replayed(first)));
        assert_eq!(s.inventory(SEC).len(), 1);
        assert_eq!(
            create(&mut s, Collection::Buckets, "b", SEC),
            Err(StoreError::AlreadyExists)
        );
    }

    #[test]
    fn lists_page_in_name_order() {
        let mut s = store();
        for name in ["c", "a", "b"] {
            create(&mut s, Collection::Records, name, Duration::ZERO).unwrap();
        }
        let (page, more) = s.list("a", Collection::Records, None, 2, SEC).unwrap();
        assert_eq!(
            page.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert!(more);
        let (page, more) = s.list("a", Collection::Records, Some("b"), 2, SEC).unwrap();
        assert_eq!(page[0].name, "c");
        assert!(!more);
    }

    #[test]
    fn buckets_are_gone_at_once_and_updates_bump_the_generation() {
        let mut s = store();
        create(&mut s, Collection::Buckets, "b", Duration::ZERO).unwrap();
        let updated = s
            .update("a", Collection::Buckets, "b", json!({"v": 2}), SEC)
            .unwrap();
        assert_eq!((updated.generation, updated.spec), (2, json!({"v": 2})));
        assert!(matches!(
            s.delete("a", Collection::Buckets, "b", SEC),
            Ok(Deleted::Gone(_))
        ));
        assert_eq!(
            s.delete("a", Collection::Buckets, "b", SEC),
            Err(StoreError::NotFound)
        );
    }
}
