//! kube-rs's typed API against the in-process service: CRUD, patches, status,
//! finalizers, selectors, conflicts and events.

mod controllers;
mod journal;
mod lists;
mod writes;

fn api_code(error: kube::Error) -> (u16, String) {
    match error {
        kube::Error::Api(status) => (status.code, status.reason),
        other => panic!("expected an API error, got {other:?}"),
    }
}
