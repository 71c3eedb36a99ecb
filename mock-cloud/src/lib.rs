//! mock-cloud (work in progress).
