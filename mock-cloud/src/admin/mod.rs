//! The admin API's wire types, and (with the `client` feature) a client for it.
//!
//! The admin API lives under `/admin/v1/` beside the cloud API; it is not journalled,
//! spends no quota and needs no token. Every body it reads or writes is a type of this
//! module, which serializes and deserializes alike, so the server and a reader cannot
//! drift apart:
//!
//! | request | body |
//! |---|---|
//! | `PUT /admin/v1/config` | a [`ConfigDocument`] (YAML or JSON) replaces the cloud |
//! | `PUT /admin/v1/faults` | a [`FaultsDocument`] (JSON) replaces the faults |
//! | `GET /admin/v1/calls?since=SEQ&limit=N` | NDJSON [`Call`] lines: a [`CallsPage`] with its headers [`X_NEXT_SEQ`], [`X_DROPPED`], [`X_EPOCH`] |
//! | `GET /admin/v1/summary` | a [`Summary`] |
//! | `GET /admin/v1/inventory` | an [`Inventory`] |
//! | `POST /admin/v1/reset` | clears resources, journal, summary and buckets |
//!
//! An error answer carries an [`ErrorBody`].
//!
//! # Time
//! Times in these types (`at_us`, `created_at_us`, the summary's timeline) count from the
//! cloud's epoch: the wall-clock time at which its clock read zero, published as
//! [`Summary::epoch`], [`CallsPage::epoch`] and [`MockCloud::epoch`](crate::MockCloud::epoch).
//! `PUT /admin/v1/config` starts a new cloud, and so a new epoch; a reset keeps it.
//!
//! # Client
//! With the `client` feature, `Client` speaks this API over HTTP/1.1 on hyper-util's
//! client (`http://` only): `put_config` (which also says when the new cloud's clock
//! started, on the caller's tokio clock), `put_faults`, `calls`, `all_calls_since`,
//! `summary`, `next_seq`, `inventory` and `reset`, each bounded by a timeout, with typed
//! errors (`ClientError`) that name the URL.
//!
//! # Client
//! With the `client` feature, `Client` speaks this API over HTTP/1.1 (hyper-util's
//! client; `http://` only).

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "client")]
mod client_error;
mod wire;

#[cfg(feature = "client")]
pub use client::{Client, DEFAULT_TIMEOUT, Epoch};
#[cfg(feature = "client")]
pub use client_error::{ClientError, DecodeError};
pub use wire::{
    CALLS_PAGE, CALLS_PATH, CONFIG_PATH, CallsPage, ErrorBody, ErrorDetail, FAULTS_PATH,
    INVENTORY_PATH, Inventory, RESET_PATH, SUMMARY_PATH, X_DROPPED, X_EPOCH, X_NEXT_SEQ,
};

pub use crate::config::{ConfigDocument, FaultsDocument};
pub use crate::journal::{Call, JournalStats};
pub use crate::store::Resource;
pub use crate::summary::{OperationCount, Second, StatusCount, Summary, Violations};
