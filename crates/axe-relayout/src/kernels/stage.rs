//! Per-thread staging buffers, for the transposes that go through one: 2 MiB-aligned and on huge pages
//! where they are that large.

#![allow(unsafe_code)]

use std::alloc::{alloc, dealloc, Layout};

/// Buffers of at least this many bytes start on a 2 MiB boundary, and on Linux are advised onto
/// transparent huge pages (`MADV_HUGEPAGE`).
///
/// On small pages a buffer's physical frames are whatever the system hands out, in the order the kernels
/// first touch its pages, and they decide which cache sets its lines share with the rows of a
/// power-of-two tensor. The portable 2-D transpose of `f32[8192,8192]`, its 2 MiB buffer then a `Vec`
/// on small pages, ran at 11 GB/s for twenty minutes in one build while a build of the same code ran
/// at 20 GB/s, two source rows' loads holding half its time, and at 20 GB/s itself once other work had
/// churned the machine's memory. With the buffer on a huge page it ran at 20.8–21.3 GB/s, against
/// 19.9–20.1 for the `Vec` in the same minutes (Zen 5, one thread).
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
    /// Where the allocation fails, the process aborts (as for a `Vec`).
    pub(super) fn get(&mut self, len: usize) -> *mut u8 {
        if self.ptr.is_null() || self.layout.size() < len {
            self.release();
            let align = if len >= HUGE_STAGE { HUGE_STAGE } else { 64 };
            let layout =
                Layout::from_size_align(len.max(1), align).expect("a staging buffer's size");
            // SAFETY: the layout's size is not zero.
            let ptr = unsafe { alloc(layout) };
            if ptr.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            #[cfg(target_os = "linux")]
            if len >= HUGE_STAGE {
                // Before any page is touched, so that the first touch of each 2 MiB gets a huge
                // page. SAFETY: the range is the allocation just made, page-aligned. Advice only: a
                // buffer the kernel leaves on small pages works the same.
                unsafe { libc::madvise(ptr.cast(), len, libc::MADV_HUGEPAGE) };
            }
            // Zeroed, which also has every page backed now rather than in the order the kernels
            // first touch them. SAFETY: the allocation holds `layout.size()` bytes.
            unsafe { ptr.write_bytes(0, layout.size()) };
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
