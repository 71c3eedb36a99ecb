//! Create, update and delete through the whole in-process stack.

use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams};
use limiter::crossplane::Settings;
use mock_cloud::{Action, Collection};
use provider::crd::{Bucket, Database, Managed, Record};
use serde_json::json;

use crate::stack::{
    Stack, bucket, condition_of, database, eventually, is_ready, open_cloud, record,
};

const SECOND: Duration = Duration::from_secs(1);

/// Prints up to three `K`s that are not Ready, with their annotations and status.
async fn print_unready<K: Managed>(stack: &Stack) {
    for d in stack
        .list::<K>()
        .await
        .iter()
        .filter(|d| !is_ready(*d))
        .take(3)
    {
        eprintln!(
            "{} {:?} {:?}",
            d.name_any(),
            d.meta().annotations,
            d.managed_status()
        );
    }
}

#[tokio::test(start_paused = true)]
async fn two_hundred_resources_of_mixed_kinds_all_become_ready_and_the_cloud_holds_exactly_those() {
    let mut stack = Stack::new(Settings::default(), open_cloud()).await;
    stack.start();
    let mut expected = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..200 {
        match i % 3 {
            0 => {
                let name = format!("bucket-{i:03}");
                stack.create(&bucket(&name)).await;
                expected.0.push(name);
            }
            1 => {
                let name = format!("db-{i:03}");
                stack.create(&database(&name)).await;
                expected.1.push(name);
            }
            _ => {
                let name = format!("rec-{i:03}");
                stack.create(&record(&name, "A")).await;
                expected.2.push(name);
            }
        }
    }
    // Databases provision in 5 s and are seen Ready at the next poll (60 s ± 6 s).
    let ready = eventually(Duration::from_secs(300), SECOND, || async {
        stack.all_ready::<Bucket>().await
            && stack.all_ready::<Database>().await
            && stack.all_ready::<Record>().await
    })
    .await;
    if !ready {
        print_unready::<Database>(&stack).await;
        print_unready::<Bucket>(&stack).await;
        eprintln!("{}", stack.metrics.encode().unwrap());
    }
    assert!(ready, "not every resource became Ready within 300 s");
    assert_eq!(stack.inventory(Collection::Buckets), expected.0);
    assert_eq!(stack.inventory(Collection::Databases), expected.1);
    assert_eq!(stack.inventory(Collection::Records), expected.2);
    let creates = stack
        .cloud
        .calls()
        .into_iter()
        .filter(|c| c.action == Some(Action::Create) && c.status == 201)
        .count();
    assert_eq!(creates, 200, "one successful create per resource");
    for b in stack.list::<Bucket>().await {
        let synced = condition_of(&b, "Synced");
        assert_eq!(synced.observed_generation, Some(1));
        assert_eq!(
            b.annotations().get("crossplane.io/external-name"),
            Some(&b.metadata.name.clone().unwrap())
        );
        assert!(
            b.metadata
                .finalizers
                .as_ref()
                .unwrap()
                .contains(&"finalizer.managedresource.crossplane.io".to_owned())
        );
    }
    stack.stop().await;
    // The controllers are gone; their counts are not, as controller-runtime's outlive its
    // controllers: what a harness reads at the end of a run.
    let text = stack.metrics.encode().unwrap();
    let reconciles: u64 = text
        .lines()
        .filter(|l| {
            l.starts_with("controller_runtime_reconcile_total{controller=\"managed/bucket.mockcloud.example.org\",")
        })
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert!(reconciles >= 100, "{text}");
}

use kube::ResourceExt;

#[tokio::test(start_paused = true)]
async fn spec_updates_reach_the_cloud_and_are_recorded_with_the_new_generation() {
    let mut stack = Stack::new(Settings::default(), open_cloud()).await;
    stack.start();
    stack.create(&bucket("logs")).await;
    assert!(
        eventually(Duration::from_secs(30), SECOND, || async {
            stack
                .get::<Bucket>("logs")
                .await
                .is_some_and(|b| is_ready(&b))
        })
        .await
    );
    let patch = json!({"spec": {"forProvider": {"versioning": true, "storageClass": "ARCHIVE"}}});
    stack
        .api::<Bucket>()
        .patch("logs", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let updated = eventually(Duration::from_secs(10), SECOND, || async {
        stack.cloud.inventory().iter().any(|r| {
            r.name == "logs" && r.spec["versioning"] == true && r.spec["storageClass"] == "ARCHIVE"
        })
    })
    .await;
    assert!(updated, "the update did not reach the cloud");
    assert!(
        eventually(Duration::from_secs(10), SECOND, || async {
            let synced = stack.condition::<Bucket>("logs", "Synced").await;
            synced.status == "True" && synced.observed_generation == Some(2)
        })
        .await
    );
    assert_eq!(
        stack.calls(Action::Update, "logs").len(),
        1,
        "exactly one update call"
    );
    assert!(
        stack
            .event_reasons("logs")
            .await
            .contains(&"UpdatedExternalResource".to_owned())
    );
    stack.stop().await;
}

#[tokio::test(start_paused = true)]
async fn deletes_remove_the_cloud_resource_before_the_object() {
    let mut stack = Stack::new(Settings::default(), open_cloud()).await;
    stack.start();
    stack.create(&record("www", "A")).await;
    stack.create(&database("orders")).await;
    assert!(
        eventually(Duration::from_secs(120), SECOND, || async {
            stack.all_ready::<Record>().await && stack.all_ready::<Database>().await
        })
        .await
    );
    stack
        .api::<Record>()
        .delete("www", &DeleteParams::default())
        .await
        .unwrap();
    stack
        .api::<Database>()
        .delete("orders", &DeleteParams::default())
        .await
        .unwrap();
    // The invariant at every step: an object that is gone has no cloud resource left.
    let mut steps = 0;
    loop {
        let record_gone = stack.get::<Record>("www").await.is_none();
        let db_gone = stack.get::<Database>("orders").await.is_none();
        if record_gone {
            assert!(
                stack.inventory(Collection::Records).is_empty(),
                "object gone before its record"
            );
        }
        if db_gone {
            assert!(
                stack.inventory(Collection::Databases).is_empty(),
                "object gone before its database"
            );
        }
        if record_gone && db_gone {
            break;
        }
        steps += 1;
        if steps >= 600 {
            eprintln!("{:?}", stack.get::<Record>("www").await);
            eprintln!("{:?}", stack.get::<Database>("orders").await);
            eprintln!("{:?}", stack.cloud.calls());
        }
        assert!(steps < 600, "deletion did not finish within 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The database took its 3 s to delete: the finalizer held the object meanwhile.
    assert!(
        steps >= 20,
        "the database object went away before the cloud finished deleting"
    );
    assert_eq!(stack.calls(Action::Delete, "www").len(), 1);
    assert!(
        stack
            .event_reasons("www")
            .await
            .contains(&"DeletedExternalResource".to_owned())
    );
    stack.stop().await;
}
