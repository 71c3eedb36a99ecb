//! crossplane's management policies (`spec.managementPolicies`), as the managed reconciler
//! reads them (crossplane-runtime's `ManagementPoliciesResolver`).
//!
//! # Semantics
//! Absent or containing `*`: everything is allowed. An empty list pauses the resource (P1).
//! `["Observe"]` alone is observe-only: no Create, Update or Delete, no finalizer, and an
//! absent cloud resource is an error (P9). Any other list allows the actions it names.
//! crossplane-runtime refuses some combinations (P2); this provider does not check them.

/// The policies of one resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Policies {
    observe: bool,
    create: bool,
    update: bool,
    delete: bool,
    paused: bool,
}

impl Policies {
    /// Reads `spec.managementPolicies`.
    pub fn of(list: Option<&[String]>) -> Policies {
        let Some(list) = list else {
            return Policies::all();
        };
        if list.iter().any(|p| p == "*") {
            return Policies::all();
        }
        let has = |name: &str| list.iter().any(|p| p == name);
        Policies {
            observe: has("Observe"),
            create: has("Create"),
            update: has("Update"),
            delete: has("Delete"),
            paused: list.is_empty(),
        }
    }

    fn all() -> Policies {
        Policies {
            observe: true,
            create: true,
            update: true,
            delete: true,
            paused: false,
        }
    }

    /// An empty list: reconciliation is paused.
    pub fn paused(self) -> bool {
        self.paused
    }

    /// Only `Observe`.
    pub fn observe_only(self) -> bool {
        self.observe && !self.create && !self.update && !self.delete
    }

    pub fn should_create(self) -> bool {
        self.create
    }

    pub fn should_update(self) -> bool {
        self.update
    }

    pub fn should_delete(self) -> bool {
        self.delete
    }
}

#[cfg(test)]
mod tests {
    use super::Policies;

    fn of(list: &[&str]) -> Policies {
        let list: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        Policies::of(Some(&list))
    }

    #[test]
    fn absent_or_star_allows_everything_and_empty_pauses() {
        let all = Policies::of(None);
        assert!(all.should_create() && all.should_update() && all.should_delete());
        assert!(!all.observe_only() && !all.paused());
        assert_eq!(of(&["*"]), all);
        assert!(of(&[]).paused());
    }

    #[test]
    fn observe_alone_is_observe_only_and_allows_no_write() {
        let observe = of(&["Observe"]);
        assert!(observe.observe_only());
        assert!(!observe.should_create() && !observe.should_update() && !observe.should_delete());
        assert!(!of(&["Observe", "Delete"]).observe_only());
        assert!(of(&["Observe", "Delete"]).should_delete());
    }
}
