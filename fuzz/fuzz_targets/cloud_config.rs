//! libFuzzer's entry for the `cloud_config` target; what it fuzzes and asserts: `fuzz::cloud_config`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::cloud_config::check(data));
