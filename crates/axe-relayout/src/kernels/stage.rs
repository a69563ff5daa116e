//! Per-thread staging buffers, for the transposes that go through one: 2 MiB-aligned and on huge pages
//! where they are that large.

#![allow(unsafe_code)]

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Buffers of at least this many bytes start on a 2 MiB boundary, and on Linux are advised onto
/// transparent huge pages (`MADV_HUGEPAGE`).
///
/// On small pages a buffer's physical frames are whatever the system hands out, and the cache sets its
/// lines fall into with them: with rows of a power-of-two tensor in the same sets, a few frames can
/// halve a transpose. The portable 2-D transpose of `f32[8192,8192]` ran at 11 GB/s in one build and
/// 20 GB/s in another, every run, with its code byte for byte the same and at the same addresses,
/// two source rows' loads holding most of its time in the slow one; with its 2 MiB buffer on a huge
/// page it ran at 21.2–21.9 GB/s in each, wherever in the page the buffer started (Zen 5, one thread).
pub(super) const HUGE_STAGE: usize = 2 << 20;

/// A growable buffer of bytes (zeroed when allocated), 64-byte aligned, 2 MiB-aligned from
/// [`HUGE_STAGE`] bytes on (see there).
pub(super) struct Stage {
    ptr: *mut u8,
    layout: Layout,
}

impl Stage {
    /// No buffer yet.
    pub(super) const fn new() -> Self {
        Stage {
            ptr: std::ptr::null_mut(),
            layout: Layout::new::<u8>(),
        }
    }

    /// The buffer, grown to at least `len` bytes (its contents are then lost).
    ///
    /// # Panics
    /// Where the allocation fails (as a `Vec` does).
    pub(super) fn get(&mut self, len: usize) -> *mut u8 {
        if self.ptr.is_null() || self.layout.size() < len {
            self.release();
            let align = if len >= HUGE_STAGE { HUGE_STAGE } else { 64 };
            let layout =
                Layout::from_size_align(len.max(1), align).expect("a staging buffer's size");
            // SAFETY: the layout's size is not zero.
            let ptr = unsafe { alloc_zeroed(layout) };
            if ptr.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            #[cfg(target_os = "linux")]
            if len >= HUGE_STAGE {
                // SAFETY: the range is the allocation just made, page-aligned. Advice only: a buffer
                // the kernel leaves on small pages works the same.
                unsafe { libc::madvise(ptr.cast(), len, libc::MADV_HUGEPAGE) };
            }
            (self.ptr, self.layout) = (ptr, layout);
        }
        self.ptr
    }

    fn release(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: `ptr` was allocated with `layout` and not freed since.
            unsafe { dealloc(self.ptr, self.layout) };
            self.ptr = std::ptr::null_mut();
        }
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_grow_aligned_and_zeroed() {
        let mut stage = Stage::new();
        for (len, align) in [
            (100, 64),
            (5000, 64),
            (HUGE_STAGE + 4096, HUGE_STAGE),
            (10, HUGE_STAGE),
        ] {
            let p = stage.get(len);
            assert!((p as usize).is_multiple_of(align), "{len} bytes at {p:p}");
            // SAFETY: the buffer holds at least `len` bytes.
            let bytes = unsafe { std::slice::from_raw_parts_mut(p, len) };
            if len > 10 {
                assert!(
                    bytes.iter().all(|&b| b == 0),
                    "a new buffer of {len} bytes is zeroed"
                );
            }
            bytes.fill(1);
        }
    }
}
