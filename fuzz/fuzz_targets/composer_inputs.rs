//! libFuzzer's entry for the `composer_inputs` target; what it fuzzes and asserts: `fuzz::composer`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::composer::check(data));
