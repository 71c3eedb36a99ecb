//! The cloud side: a client for the mock cloud's API, over any tower `Service`.

mod client;
mod error;
mod unreachable;

pub use client::{
    AccountClient, CloudClient, CloudRequestLabels, CloudRequests, CloudResource,
    DEFAULT_CLOUD_TIMEOUT,
};
pub use error::CloudError;
