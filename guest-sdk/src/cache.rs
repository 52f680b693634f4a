//! [`FrameCache`]: what a target's last calls decoded, so that a call whose
//! frame is laid out as before is not decoded again.
//!
//! The host lays a call site's frame out once per shape signature and then
//! writes only the data, so most calls of a target find the frame, the
//! buffer structs and the dims arrays byte for byte as the call before.
//! Decoding them is a function of those bytes and of the memory view's
//! extent alone: every check asks whether a range is inside memory, not
//! null and aligned (see [`Memory::covers`]). So when every byte a decode
//! read is unchanged and memory still covers the extent it was checked
//! against (linear memory only grows), that decode's result is this call's
//! too. The cache compares the bytes and hands out the kept result instead
//! of reading and checking field by field again.
//!
//! Nothing here trusts the host more than decoding does: a frame that
//! differs in any byte the decode read is decoded as usual. Only successful
//! decodes are kept, so errors are reported as without the cache.
//!
//! Each [`target!`](crate::target) export has its own cache (a `static`).

use alloc::vec::Vec;
use core::cell::RefCell;

use crate::abi::{buffer as buffer_layout, call_frame as frame_layout};
use crate::buffer::{BufferAt, DimsOf, RawBuffer, Which};
use crate::header::Header;
use crate::memory::{Extent, Memory};

/// The frame's words a header decode reads: `struct_size` through the
/// inline attributes (`future`, after them, is not read).
const FRAME_WORDS: usize = (frame_layout::STRUCT_SIZE / 4) as usize;
/// A buffer struct's words its decode reads: `struct_size` through `dims`.
const BUFFER_WORDS: usize = (buffer_layout::STRUCT_SIZE / 4) as usize;
/// Buffers of a frame (operands, then results) whose decodes are kept.
const MAX_BUFFERS: usize = 16;
/// The largest rank whose decode is kept.
const MAX_RANK: usize = 8;

/// What one target's last calls decoded (see the [module](self)). Not a
/// public API: [`target!`](crate::target) declares one per export.
pub struct FrameCache {
    kept: RefCell<Kept>,
    #[cfg(test)]
    hits: core::cell::Cell<Hits>,
}

/// Hits, counted in tests.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Hits {
    pub(crate) headers: usize,
    pub(crate) buffers: usize,
}

struct Kept {
    header: Option<KeptHeader>,
    /// By slot (operands, then results) of the kept header's frame.
    buffers: Vec<Option<KeptBuffer>>,
}

/// A header decode: its result and what it read.
struct KeptHeader {
    extent: Extent,
    addr: u32,
    words: [u32; FRAME_WORDS],
    header: Header,
}

/// A buffer decode: its result and what it read.
struct KeptBuffer {
    extent: Extent,
    /// Guest address of the buffer struct.
    ptr: u32,
    words: [u32; BUFFER_WORDS],
    /// The first `at.rank` are the dims.
    dims: [i64; MAX_RANK],
    at: BufferAt,
}

// SAFETY: a wasm32 guest without the `atomics` feature has one thread (the
// host refuses shared memories), so the cache is never shared between
// threads; `target!` needs it `Sync` only to declare it as a `static`.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
unsafe impl Sync for FrameCache {}

/// A clone starts empty: a cache only saves work.
impl Clone for FrameCache {
    fn clone(&self) -> FrameCache {
        FrameCache::new()
    }
}

impl core::fmt::Debug for FrameCache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FrameCache").finish_non_exhaustive()
    }
}

impl Default for FrameCache {
    fn default() -> FrameCache {
        FrameCache::new()
    }
}

impl FrameCache {
    /// An empty cache.
    pub const fn new() -> FrameCache {
        FrameCache {
            kept: RefCell::new(Kept {
                header: None,
                buffers: Vec::new(),
            }),
            #[cfg(test)]
            hits: core::cell::Cell::new(Hits {
                headers: 0,
                buffers: 0,
            }),
        }
    }

    /// Hits so far.
    #[cfg(test)]
    pub(crate) fn hits(&self) -> Hits {
        self.hits.get()
    }

    #[cfg(test)]
    fn count(&self, f: impl FnOnce(&mut Hits)) {
        let mut hits = self.hits.get();
        f(&mut hits);
        self.hits.set(hits);
    }

    /// The header of the frame at `addr`, if the frame's bytes are those a
    /// kept decode read and `mem` covers the extent it checked against.
    #[inline]
    pub(crate) fn header(&self, mem: Memory<'_>, addr: u32) -> Option<Header> {
        let kept = self.kept.try_borrow().ok()?;
        let found = kept.header.as_ref().and_then(|k| {
            if k.addr != addr || !mem.covers(&k.extent) {
                return None;
            }
            let words = mem.words::<FRAME_WORDS>(addr, &"call frame").ok()?;
            same(&words, &k.words).then_some(k.header)
        });
        #[cfg(test)]
        if found.is_some() {
            self.count(|h| h.headers += 1);
        }
        found
    }

    /// Keeps `header`, just decoded from the frame at `addr` of `mem`, in
    /// place of the kept one, and forgets the buffers decoded for that one.
    pub(crate) fn keep_header(&self, mem: Memory<'_>, addr: u32, header: &Header) {
        let Ok(mut kept) = self.kept.try_borrow_mut() else {
            return;
        };
        // The decode read these bytes a moment ago (nothing wrote since):
        // they are inside memory.
        let Ok(words) = mem.words::<FRAME_WORDS>(addr, &"call frame") else {
            return;
        };
        kept.header = Some(KeptHeader {
            extent: mem.extent(),
            addr,
            words,
            header: *header,
        });
        let n = (header.num_args + header.num_rets).min(MAX_BUFFERS);
        kept.buffers.clear();
        kept.buffers.resize_with(n, || None);
    }

    /// Buffer `which` (slot `slot` of the frame), whose struct is at guest
    /// address `ptr`, if its struct and dims are the bytes a kept decode
    /// read and `mem` covers the extent it checked against. That decode
    /// depends on nothing else (the slot only says where it is kept).
    #[inline]
    pub(crate) fn buffer<'a>(
        &self,
        mem: Memory<'a>,
        slot: usize,
        ptr: u32,
        which: Which,
    ) -> Option<RawBuffer<'a>> {
        let kept = self.kept.try_borrow().ok()?;
        let found = kept.buffers.get(slot).and_then(|k| {
            let k = k.as_ref()?;
            if k.ptr != ptr || !mem.covers(&k.extent) {
                return None;
            }
            let words = mem.words::<BUFFER_WORDS>(ptr, &which).ok()?;
            if !same(&words, &k.words) {
                return None;
            }
            let rank = k.at.rank;
            // SAFETY: i64 has no invalid bit patterns; dims are only ever read.
            let dims: &'a [i64] =
                unsafe { mem.slice(k.at.dims_addr, rank, &DimsOf(which)) }.ok()?;
            let changed = dims
                .iter()
                .zip(&k.dims[..rank])
                .fold(0, |d, (a, b)| d | (a ^ b));
            (changed == 0).then(|| k.at.raw(mem, which, dims))
        });
        #[cfg(test)]
        if found.is_some() {
            self.count(|h| h.buffers += 1);
        }
        found
    }

    /// Keeps `raw`, just decoded from the buffer struct at `ptr` of `mem`,
    /// for slot `slot` of the kept header's frame.
    pub(crate) fn keep_buffer(&self, mem: Memory<'_>, slot: usize, ptr: u32, raw: &RawBuffer<'_>) {
        let rank = raw.dims.len();
        if rank > MAX_RANK {
            return;
        }
        let Ok(mut kept) = self.kept.try_borrow_mut() else {
            return;
        };
        let Some(entry) = kept.buffers.get_mut(slot) else {
            return;
        };
        // The decode read these bytes a moment ago: they are inside memory.
        let Ok(words) = mem.words::<BUFFER_WORDS>(ptr, &raw.which) else {
            return;
        };
        let mut dims = [0; MAX_RANK];
        dims[..rank].copy_from_slice(raw.dims);
        *entry = Some(KeptBuffer {
            extent: mem.extent(),
            ptr,
            words,
            dims,
            at: raw.at(),
        });
    }
}

/// Whether `a` and `b` are equal, without a call to `memcmp` (a byte loop
/// in a wasm guest).
#[inline(always)]
fn same<const N: usize>(a: &[u32; N], b: &[u32; N]) -> bool {
    a.iter().zip(b).fold(0, |d, (x, y)| d | (x ^ y)) == 0
}
