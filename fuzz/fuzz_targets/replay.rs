//! libFuzzer's entry for the `replay` target; what it fuzzes and asserts: `fuzz::replay`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::replay::check(data));
