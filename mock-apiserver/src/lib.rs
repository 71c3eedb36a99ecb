//! mock-apiserver (work in progress).
