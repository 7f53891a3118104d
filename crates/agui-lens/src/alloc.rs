//! The binary's allocator: mimalloc for the many small blocks a stream parses into, the system
//! allocator for large buffers.
//!
//! Events are parsed on worker threads and dropped on the thread that checks them in order;
//! glibc's allocator spends about a third of a check on that hand-over, mimalloc does not. But
//! mimalloc grows a large buffer by allocating, copying and freeing, and keeps what it freed
//! for a while: a line read up to the 64 MiB cap peaked near 220 MiB. glibc maps large blocks
//! on their own, grows them in place and hands them back at once, so large blocks go there.
//!
//! A block's owner follows from its size alone, which Rust passes unchanged to every call on
//! the block: under [`LARGE`] bytes it is mimalloc's, from [`LARGE`] up the system's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

use mimalloc::MiMalloc;

/// Blocks of this size or more go to the system allocator.
pub const LARGE: usize = 1 << 20;

pub struct Split;

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_t`, mimalloc.h).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Tunes both allocators; called before `main` (see the binary), before any thread starts.
///
/// The system allocator gets large blocks only: each is mapped on its own and unmapped when
/// freed (glibc otherwise raises that threshold as blocks are freed, and keeps them).
/// mimalloc returns freed memory to the system after 10 ms instead of a second: a command
/// that reads a stream twice (compaction, then its verification) otherwise holds the first
/// pass's pages through the second, about 20 MiB more at its peak, at no measurable cost in
/// time.
///
/// Transparent huge pages are turned off for the process. mimalloc asks for them on its
/// arenas, so every thread's first small block, and every block after a purge, faulted in
/// and zeroed a whole 2 MiB page: an eighth of a compaction's CPU time went to clearing
/// pages, and each thread's partly used huge pages counted whole in its resident size
/// (compact at 100 MB peaked at 51 MiB with them, 33 MiB without).
pub fn init() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts glibc's tuning; no other thread is running yet.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE as libc::c_int);
    }
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE only sets a flag on this process's address space; on a
    // kernel without it the call fails and nothing changes.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    // SAFETY: mi_option_set is not thread safe, and no other thread is running yet.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 10);
    }
}

fn large(size: usize) -> bool {
    size >= LARGE
}

unsafe impl GlobalAlloc for Split {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe {
            if large(layout.size()) {
                System.alloc(layout)
            } else {
                MiMalloc.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe {
            if large(layout.size()) {
                System.alloc_zeroed(layout)
            } else {
                MiMalloc.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `layout` is the one the block was allocated with, so its size names the
        // allocator that owns it.
        unsafe {
            if large(layout.size()) {
                System.dealloc(ptr, layout)
            } else {
                MiMalloc.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `layout` describes the block at `ptr`; when the owner changes, the new block
        // is allocated with the same alignment, the smaller of the two sizes is copied, and the
        // old block is freed by its owner.
        unsafe {
            match (large(layout.size()), large(new_size)) {
                (false, false) => MiMalloc.realloc(ptr, layout, new_size),
                (true, true) => System.realloc(ptr, layout, new_size),
                (_, to_large) => {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = if to_large {
                        System.alloc(new_layout)
                    } else {
                        MiMalloc.alloc(new_layout)
                    };
                    if !new.is_null() {
                        ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks crossing the threshold in either direction keep their bytes.
    #[test]
    fn blocks_keep_their_bytes_across_owners() {
        let a = Split;
        unsafe {
            let small = Layout::from_size_align(LARGE - 8, 16).unwrap();
            let p = a.alloc(small);
            assert!(!p.is_null());
            for i in 0..small.size() {
                *p.add(i) = (i % 251) as u8;
            }
            let big = a.realloc(p, small, LARGE * 3);
            assert!(!big.is_null());
            assert_eq!(big as usize % 16, 0);
            assert!((0..small.size()).all(|i| *big.add(i) == (i % 251) as u8));
            let grown = Layout::from_size_align(LARGE * 3, 16).unwrap();
            let back = a.realloc(big, grown, 100);
            assert!((0..100).all(|i| *back.add(i) == (i % 251) as u8));
            a.dealloc(back, Layout::from_size_align(100, 16).unwrap());

            let zeroed = Layout::from_size_align(LARGE * 2, 8).unwrap();
            let z = a.alloc_zeroed(zeroed);
            assert!((0..zeroed.size()).step_by(4096).all(|i| *z.add(i) == 0));
            a.dealloc(z, zeroed);
        }
    }
}
