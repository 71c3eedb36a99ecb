//! provider: being built (see its issue).
