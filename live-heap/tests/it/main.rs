//! The count with the wrapper installed as this test binary's global allocator.

use std::sync::Mutex;

#[global_allocator]
static ALLOCATOR: live_heap::Counting<std::alloc::System> =
    live_heap::Counting::new(std::alloc::System);

/// The tests of this binary run in parallel, and the count is the process's: each test
/// holds this while it measures.
static ALONE: Mutex<()> = Mutex::new(());

const MIB: usize = 1 << 20;

/// How far the count may move while a test measures: libtest's own threads allocate and
/// settle meanwhile (a few settling steps).
const SLACK: usize = 4 * live_heap::SETTLE_BYTES.unsigned_abs();

fn near(a: usize, b: usize) -> bool {
    a.abs_diff(b) <= SLACK
}

#[test]
fn a_block_is_counted_while_it_is_held_and_not_after() {
    let _alone = ALONE.lock().unwrap();
    let before = live_heap::live_bytes();
    let block = vec![1u8; MIB];
    let held = live_heap::live_bytes();
    assert!(near(held, before + MIB), "{before} → {held}");
    drop(block);
    let after = live_heap::live_bytes();
    assert!(near(after, before), "{before} → {after}");
}

#[test]
fn growing_a_block_counts_its_new_size() {
    let _alone = ALONE.lock().unwrap();
    let before = live_heap::live_bytes();
    let mut block: Vec<u8> = Vec::with_capacity(MIB);
    block.reserve_exact(3 * MIB);
    let held = live_heap::live_bytes();
    assert!(near(held, before + block.capacity()), "{before} → {held}");
    drop(block);
    let after = live_heap::live_bytes();
    assert!(near(after, before), "{before} → {after}");
}

#[test]
fn another_threads_blocks_are_counted_within_its_settling_step() {
    let _alone = ALONE.lock().unwrap();
    let before = live_heap::live_bytes();
    let blocks = std::thread::spawn(|| (0..64).map(|_| vec![0u8; 1000]).collect::<Vec<_>>())
        .join()
        .unwrap();
    // The spawned thread's last unsettled count (under one settling step) is lost with it.
    let held = live_heap::live_bytes();
    assert!(near(held, before + 64_000), "{before} → {held}");
    // Freed here, on this thread.
    drop(blocks);
    let after = live_heap::live_bytes();
    assert!(near(after, before), "{before} → {after}");
}
