//! Reading the call frame out of guest memory by guest address.
//!
//! Inside a guest, a guest address is a plain pointer into linear memory.
//! Reads of a frame that is input go through [`Memory`], which checks that
//! the range lies inside memory, is not at the null address and is aligned,
//! so a malformed frame gives an [`Error`] instead of undefined behaviour;
//! the frame the host wrote for a handler export is laid out as the host
//! guarantees (docs/abi.md, "What a guest may rely on") and is read with
//! the unchecked reads. On other targets (tests), a `Memory` is a byte
//! buffer standing in for linear memory, with guest addresses as offsets
//! into it.

use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::error::{Error, Result};

/// A view of guest memory: on wasm32 the linear memory itself (addresses
/// are pointers), elsewhere a buffer standing in for it.
///
/// On wasm32 it has no fields: the length is asked of the memory
/// (`memory.size`) only when a checked read needs it, so the trusted path,
/// which checks nothing, never asks, and frames and buffers carry nothing
/// for it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Memory<'a> {
    #[cfg(not(target_arch = "wasm32"))]
    base: *mut u8,
    #[cfg(not(target_arch = "wasm32"))]
    len: usize,
    /// The guest address of the buffer's first byte (a buffer may stand for
    /// any part of a 4 GiB memory); linear memory starts at 0.
    #[cfg(not(target_arch = "wasm32"))]
    origin: u32,
    _memory: PhantomData<&'a mut [u8]>,
}

impl<'a> Memory<'a> {
    /// The instance's linear memory (as large as it is when read).
    #[cfg(target_arch = "wasm32")]
    #[inline(always)]
    pub(crate) fn linear() -> Memory<'a> {
        Memory {
            _memory: PhantomData,
        }
    }

    /// The size of the view in bytes: on wasm32 the linear memory's size
    /// now.
    #[inline(always)]
    fn len(&self) -> usize {
        #[cfg(target_arch = "wasm32")]
        return core::arch::wasm32::memory_size(0).saturating_mul(65536);
        #[cfg(not(target_arch = "wasm32"))]
        return self.len;
    }

    /// A buffer standing in for guest addresses `origin..origin + len`:
    /// guest address `a` is `base + (a - origin)`.
    ///
    /// # Safety
    ///
    /// `base..base + len` must be valid for reads and writes for `'a`, and
    /// nothing else may access it during `'a` except through this view.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) unsafe fn from_raw_parts(base: *mut u8, len: usize, origin: u32) -> Memory<'a> {
        Memory {
            base,
            len,
            origin,
            _memory: PhantomData,
        }
    }

    /// Where guest address `addr` lies in the view (bytes from its start),
    /// if not before it.
    #[inline(always)]
    fn index(&self, addr: u32) -> Option<usize> {
        #[cfg(target_arch = "wasm32")]
        return Some(addr as usize);
        #[cfg(not(target_arch = "wasm32"))]
        return addr.checked_sub(self.origin).map(|a| a as usize);
    }

    /// Pointer to guest range `addr..addr + len`, checked to be inside memory,
    /// not null (unless empty) and aligned to `align`. `what` names the range
    /// in errors.
    #[inline(always)]
    fn range(
        &self,
        addr: u32,
        len: usize,
        align: usize,
        what: &dyn core::fmt::Display,
    ) -> Result<*mut u8> {
        let start = self.index(addr).unwrap_or(usize::MAX);
        let inside = start.checked_add(len).is_some_and(|end| end <= self.len());
        #[cfg(target_arch = "wasm32")]
        let ptr = core::ptr::with_exposed_provenance_mut::<u8>(start);
        // Inside base..base+len when `inside` (otherwise never used).
        #[cfg(not(target_arch = "wasm32"))]
        let ptr = self.base.wrapping_add(start);
        if inside && addr != 0 && (ptr as usize).is_multiple_of(align) {
            Ok(ptr)
        } else {
            Err(self.range_error(addr, len, align, what))
        }
    }

    /// The error [`Memory::range`] reports for a range it refuses: out of
    /// memory first, then null, then misaligned. Kept out of line so that
    /// the checks on every read stay a few instructions.
    #[cold]
    #[inline(never)]
    fn range_error(
        &self,
        addr: u32,
        len: usize,
        align: usize,
        what: &dyn core::fmt::Display,
    ) -> Error {
        let start = self.index(addr).unwrap_or(usize::MAX);
        if start.checked_add(len).is_none_or(|end| end > self.len()) {
            Error::internal(alloc::format!(
                "{what}: guest range {addr:#x}+{len} is outside guest memory ({} bytes)",
                self.len()
            ))
        } else if addr == 0 {
            Error::internal(alloc::format!("{what}: null guest address"))
        } else {
            Error::internal(alloc::format!(
                "{what}: guest address {start:#x} is not aligned to {align} bytes"
            ))
        }
    }

    /// Checks that `addr..addr + len` could be viewed as elements aligned to
    /// `align` (see [`Memory::slice`]) without creating a reference.
    #[inline(always)]
    pub(crate) fn check(
        &self,
        addr: u32,
        len: usize,
        align: usize,
        what: &dyn core::fmt::Display,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        self.range(addr, len, align, what).map(|_| ())
    }

    /// Reads a little-endian `u32` at `addr`.
    #[inline(always)]
    pub(crate) fn u32(&self, addr: u32, what: &dyn core::fmt::Display) -> Result<u32> {
        let p = self.range(addr, 4, 1, what)?;
        // SAFETY: range() checked that the 4 bytes are inside memory, which is
        // valid for reads for 'a; read_unaligned has no alignment requirement.
        Ok(unsafe { p.cast::<u32>().read_unaligned() })
    }

    /// Reads a little-endian `i64` at `addr`.
    #[inline(always)]
    pub(crate) fn i64(&self, addr: u32, what: &dyn core::fmt::Display) -> Result<i64> {
        let p = self.range(addr, 8, 1, what)?;
        // SAFETY: as in u32(): 8 in-bounds bytes, unaligned read.
        Ok(unsafe { p.cast::<i64>().read_unaligned() })
    }

    /// Where guest address `addr` of this view is, as a pointer to `T`
    /// (the address itself on wasm32; the view's base plus its offset
    /// elsewhere). Nothing is read: the callers say why their reads are
    /// sound.
    #[cfg(target_arch = "wasm32")]
    #[inline(always)]
    fn pointer<T>(&self, addr: u32) -> *const T {
        core::ptr::with_exposed_provenance::<T>(addr as usize)
    }

    /// See the wasm32 version.
    #[cfg(not(target_arch = "wasm32"))]
    #[inline(always)]
    fn pointer<T>(&self, addr: u32) -> *const T {
        self.base
            .wrapping_add(addr.wrapping_sub(self.origin) as usize)
            .cast::<T>()
            .cast_const()
    }

    /// Reads a `T` at guest address `addr` (any alignment) without checking
    /// the range: for the frame the host wrote, whose layout the host
    /// guarantees (docs/abi.md, "What a guest may rely on").
    ///
    /// # Safety
    ///
    /// `addr..addr + size_of::<T>()` must lie inside the view, and every bit
    /// pattern of that size must be a valid `T`.
    #[inline(always)]
    pub(crate) unsafe fn read_unchecked<T: Copy>(&self, addr: u32) -> T {
        let p = self.pointer::<T>(addr);
        // SAFETY: the caller guarantees the bytes are inside the view, which
        // is valid for reads for 'a, and valid as a `T`; read_unaligned has
        // no alignment requirement.
        unsafe { p.read_unaligned() }
    }

    /// `count` elements of `T` at `addr`, shared, without checking the
    /// range (see [`Memory::read_unchecked`]).
    ///
    /// # Safety
    ///
    /// As for [`Memory::slice`], and the range must lie inside the view,
    /// be aligned for `T` and not start at the null address.
    #[inline(always)]
    pub(crate) unsafe fn slice_unchecked<T>(&self, addr: u32, count: usize) -> &'a [T] {
        if count == 0 {
            return &[];
        }
        let p = self.pointer::<T>(addr);
        // SAFETY: the caller guarantees a non-null, aligned range inside the
        // view (valid for reads for 'a), valid bit patterns and no `&mut`.
        unsafe { core::slice::from_raw_parts(p, count) }
    }

    /// `count` elements of `T` at `addr`, exclusive, without checking the
    /// range (see [`Memory::read_unchecked`]).
    ///
    /// # Safety
    ///
    /// As for [`Memory::slice_mut`], and the range must lie inside the view,
    /// be aligned for `T` and not start at the null address.
    #[inline(always)]
    pub(crate) unsafe fn slice_mut_unchecked<T>(&self, addr: u32, count: usize) -> &'a mut [T] {
        if count == 0 {
            return &mut [];
        }
        let p = self.pointer::<T>(addr).cast_mut();
        // SAFETY: the caller guarantees a non-null, aligned range inside the
        // view (valid for reads and writes for 'a), valid bit patterns and
        // no other reference to it.
        unsafe { core::slice::from_raw_parts_mut(p, count) }
    }

    /// Address arithmetic on guest addresses, failing instead of wrapping.
    #[inline(always)]
    pub(crate) fn offset(addr: u32, by: u64, what: &dyn core::fmt::Display) -> Result<u32> {
        match u64::from(addr)
            .checked_add(by)
            .and_then(|a| u32::try_from(a).ok())
        {
            Some(a) => Ok(a),
            None => Err(offset_error(addr, by, what)),
        }
    }

    /// The address of `count` elements of `T` at `addr`, checked for bounds,
    /// null and alignment; a dangling (non-null, aligned) pointer when the
    /// elements take no bytes.
    fn elements<T>(
        &self,
        addr: u32,
        count: usize,
        what: &dyn core::fmt::Display,
    ) -> Result<*mut T> {
        let len = count
            .checked_mul(size_of::<T>())
            .ok_or_else(|| Error::internal(alloc::format!("{what}: size overflows")))?;
        if len == 0 {
            return Ok(NonNull::<T>::dangling().as_ptr());
        }
        Ok(self.range(addr, len, align_of::<T>(), what)?.cast::<T>())
    }

    /// `count` elements of `T` at `addr`, shared.
    ///
    /// # Safety
    ///
    /// Every bit pattern must be a valid `T`, and no `&mut` to any of these
    /// bytes may be alive during `'a`.
    pub(crate) unsafe fn slice<T>(
        &self,
        addr: u32,
        count: usize,
        what: &dyn core::fmt::Display,
    ) -> Result<&'a [T]> {
        let p = self.elements::<T>(addr, count, what)?;
        // SAFETY: elements() checked bounds, non-null and alignment (or
        // returned a dangling pointer for an empty slice); the caller
        // guarantees validity of the bit patterns and the absence of &mut.
        Ok(unsafe { core::slice::from_raw_parts(p, count) })
    }

    /// `count` elements of `T` at `addr`, exclusive.
    ///
    /// # Safety
    ///
    /// Every bit pattern must be a valid `T`, and no other reference to any of
    /// these bytes may be alive during `'a`.
    pub(crate) unsafe fn slice_mut<T>(
        &self,
        addr: u32,
        count: usize,
        what: &dyn core::fmt::Display,
    ) -> Result<&'a mut [T]> {
        let p = self.elements::<T>(addr, count, what)?;
        // SAFETY: elements() checked bounds, non-null and alignment (or
        // returned a dangling pointer for an empty slice); the caller
        // guarantees validity and exclusivity.
        Ok(unsafe { core::slice::from_raw_parts_mut(p, count) })
    }

    /// The bytes of the NUL-terminated string at `addr` (without the NUL),
    /// looking at most `max` bytes ahead.
    #[cfg_attr(
        all(not(target_arch = "wasm32"), not(test)),
        expect(dead_code, reason = "used for host messages on wasm32")
    )]
    pub(crate) fn c_str(&self, addr: u32, max: usize) -> Result<&'a [u8]> {
        let what = "string";
        let len = self.len();
        let at = self.index(addr).unwrap_or(len);
        let avail = len.saturating_sub(at).min(max);
        // SAFETY: bytes are always valid; the string is only read, and the
        // caller does not hold a mutable reference into it.
        let bytes: &'a [u8] = unsafe { self.slice(addr, avail.max(1), &what) }?;
        let n = bytes.iter().position(|&b| b == 0).ok_or_else(|| {
            Error::internal(alloc::format!(
                "{what} at {addr:#x} has no NUL within {max} bytes"
            ))
        })?;
        Ok(&bytes[..n])
    }

    /// Writes `value` at `addr` (used to answer the metadata probe).
    #[cfg_attr(
        all(not(target_arch = "wasm32"), not(test)),
        expect(dead_code, reason = "used for the probe on wasm32")
    )]
    pub(crate) fn write_u32(
        &self,
        addr: u32,
        value: u32,
        what: &dyn core::fmt::Display,
    ) -> Result<()> {
        let p = self.range(addr, 4, 1, what)?;
        // SAFETY: 4 in-bounds bytes of memory valid for writes for 'a.
        unsafe { p.cast::<u32>().write_unaligned(value) };
        Ok(())
    }
}

/// The error of [`Memory::offset`], out of line as [`Memory::range_error`].
#[cold]
#[inline(never)]
fn offset_error(addr: u32, by: u64, what: &dyn core::fmt::Display) -> Error {
    Error::internal(alloc::format!(
        "{what}: guest address {addr:#x}+{by} overflows"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_bounds_null_and_alignment() {
        let mut buf = [0u64; 4];
        // SAFETY: buf outlives mem and is only accessed through it.
        let mem = unsafe { Memory::from_raw_parts(buf.as_mut_ptr().cast(), 32, 0) };
        mem.write_u32(8, 7, &"x").unwrap();
        assert_eq!(mem.u32(8, &"x").unwrap(), 7);
        assert!(mem.u32(0, &"x").unwrap_err().message.contains("null"));
        assert!(
            mem.u32(30, &"x")
                .unwrap_err()
                .message
                .contains("outside guest memory")
        );
        assert!(mem.u32(u32::MAX, &"x").is_err());
        // SAFETY: u64 has no invalid bit patterns, no &mut is alive.
        let e = unsafe { mem.slice::<u64>(4, 1, &"dims") }.unwrap_err();
        assert!(
            e.message
                .starts_with("dims: guest address 0x4 is not aligned"),
            "{}",
            e.message
        );
        // SAFETY: as above.
        assert_eq!(unsafe { mem.slice::<u64>(0, 0, &"x") }.unwrap().len(), 0);
        assert!(Memory::offset(u32::MAX, 1, &"x").is_err());
    }

    #[test]
    fn a_buffer_may_stand_for_memory_far_from_address_zero() {
        let origin = u32::MAX - 31;
        let mut buf = [0u64; 4];
        // SAFETY: buf outlives mem and is only accessed through it.
        let mem = unsafe { Memory::from_raw_parts(buf.as_mut_ptr().cast(), 32, origin) };
        mem.write_u32(origin + 8, 7, &"x").unwrap();
        assert_eq!(mem.u32(origin + 8, &"x").unwrap(), 7);
        assert_eq!(buf[1], 7, "guest address origin + 8 is byte 8");
        for outside in [8, origin - 4, origin - 1, u32::MAX - 2] {
            let e = mem.u32(outside, &"x").unwrap_err();
            assert!(
                e.message.contains("outside guest memory"),
                "{outside:#x}: {}",
                e.message
            );
        }
        assert_eq!(mem.c_str(origin + 8, 64).unwrap(), &[7]);
    }
}
