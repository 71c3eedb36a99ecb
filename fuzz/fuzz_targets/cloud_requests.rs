//! libFuzzer's entry for the `cloud_requests` target; what it fuzzes and asserts: `fuzz::cloud`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::cloud::check(data));
