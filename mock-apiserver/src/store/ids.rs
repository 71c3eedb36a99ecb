//! Random identifiers: uids and `generateName` suffixes.

use rand_xoshiro::SplitMix64;
use rand_xoshiro::rand_core::Rng as _;

fn next_random(state: &mut SplitMix64) -> u64 {
    state.next_u64()
}

pub(super) fn new_uid(state: &mut SplitMix64) -> String {
    let (a, b) = (next_random(state), next_random(state));
    let a = (a & 0xFFFF_FFFF_FFFF_0FFF) | 0x4000;
    let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0xFFFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

pub(super) fn random_suffix(state: &mut SplitMix64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = next_random(state);
    (0..5)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
            n /= ALPHABET.len() as u64;
            c
        })
        .collect()
}
