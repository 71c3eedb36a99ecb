//! libFuzzer's entry for the `apiserver_requests` target; what it fuzzes and asserts: `fuzz::apiserver`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::apiserver::check(data));
