//! libFuzzer's entry for the `scenario` target; what it fuzzes and asserts: `fuzz::scenario`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::scenario::check(data));
