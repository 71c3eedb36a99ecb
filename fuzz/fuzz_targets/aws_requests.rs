//! libFuzzer's entry for the `aws_requests` target; what it fuzzes and asserts: `fuzz::aws`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::aws::check(data));
