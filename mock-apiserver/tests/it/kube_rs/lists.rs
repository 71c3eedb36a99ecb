//! Lists through kube-rs: label and field selectors, pages, their continue tokens and
//! remaining counts.

use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams};
use mock_apiserver::Config;

use super::api_code;
use crate::support::{Bucket, bucket, client, create_bucket, server_with_buckets};

#[tokio::test(start_paused = true)]
async fn label_and_field_selectors_filter_lists() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    for (name, tier) in [("a", "gold"), ("b", "silver"), ("c", "gold")] {
        let mut b = bucket(name, "eu");
        b.metadata.labels = Some([("tier".to_owned(), tier.to_owned())].into());
        buckets.create(&PostParams::default(), &b).await.unwrap();
    }
    let names = |list: kube::core::ObjectList<Bucket>| {
        list.items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>()
    };
    let gold = buckets
        .list(&ListParams::default().labels("tier=gold"))
        .await
        .unwrap();
    assert_eq!(names(gold), ["a", "c"]);
    let not_gold = buckets
        .list(&ListParams::default().labels("tier notin (gold)"))
        .await
        .unwrap();
    assert_eq!(names(not_gold), ["b"]);
    let by_name = buckets
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .unwrap();
    assert_eq!(names(by_name), ["b"]);
    let except = buckets
        .list(&ListParams::default().fields("metadata.name!=b,metadata.namespace=default"))
        .await
        .unwrap();
    assert_eq!(names(except), ["a", "c"]);
    let all: Api<Bucket> = Api::all(client(&server));
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        3
    );
}

#[tokio::test(start_paused = true)]
async fn paged_lists_keep_the_first_pages_version_and_expired_tokens_are_410() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    for i in 0..5 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    let first = buckets.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(
        first
            .items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>(),
        ["b0", "b1"]
    );
    let token = first.metadata.continue_.clone().expect("more pages");
    create_bucket(&buckets, "b9", "eu").await;

    let second = buckets
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(
        second
            .items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>(),
        ["b2", "b3"]
    );
    assert_eq!(
        second.metadata.resource_version, first.metadata.resource_version,
        "one version for all pages"
    );
    let third = buckets
        .list(
            &ListParams::default()
                .limit(2)
                .continue_token(second.metadata.continue_.as_deref().unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(
        third
            .items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>(),
        ["b4", "b9"]
    );
    assert!(
        third.metadata.continue_.is_none(),
        "the last page has no continue token"
    );

    // kubectl's `limit=500&resourceVersion=0` (kube drops the 0 when paging).
    let request = http::Request::get(
        "/apis/example.org/v1alpha1/namespaces/default/buckets?limit=2&resourceVersion=0",
    )
    .body(http_body_util::Empty::<bytes::Bytes>::new())
    .unwrap();
    let response = tower::ServiceExt::oneshot(server.service(), request)
        .await
        .unwrap();
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    let all: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        all["items"].as_array().unwrap().len(),
        6,
        "resourceVersion=0 ignores the limit, like the watch cache"
    );
    assert!(all["metadata"].get("continue").is_none());

    server.expire_watches();
    let expired = buckets
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap_err();
    assert_eq!(api_code(expired), (410, "Expired".into()));
}

#[tokio::test(start_paused = true)]
async fn a_limited_list_counts_what_follows_unless_it_is_filtered() {
    // storage/etcd3/store.go GetList: remainingItemCount when the predicate is empty.
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    for i in 0..5 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    let first = buckets.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let token = first.metadata.continue_.clone().unwrap();
    let second = buckets
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(second.metadata.remaining_item_count, Some(1));
    let filtered = buckets
        .list(&ListParams::default().limit(2).labels("!absent"))
        .await
        .unwrap();
    assert_eq!(filtered.items.len(), 2);
    assert_eq!(filtered.metadata.remaining_item_count, None);
    let all = buckets.list(&ListParams::default().limit(5)).await.unwrap();
    assert_eq!(all.metadata.remaining_item_count, None);
}
