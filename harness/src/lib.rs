//! harness: being built (see its issue).
