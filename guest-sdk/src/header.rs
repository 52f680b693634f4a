//! [`Header`]: the scalar fields of a wasm32 `XLA_FFI_CallFrame`, read and
//! checked.

use crate::abi::{self, call_frame as layout};
use crate::attrs::{Attrs, AttrsAt};
use crate::error::{Error, Result};
use crate::memory::Memory;

/// Largest number of operands or results accepted in a frame.
const MAX_BUFFERS: i64 = 1 << 16;

/// A [`CallFrame`](crate::CallFrame) without its memory view and slots:
/// the frame's scalar fields, read and checked, or read from the host's
/// frame ([`Header::trusted`]).
#[derive(Clone, Copy)]
pub(crate) struct Header {
    pub(crate) addr: u32,
    pub(crate) ctx: u32,
    pub(crate) stage: u32,
    pub(crate) num_args: usize,
    pub(crate) arg_types: u32,
    pub(crate) args: u32,
    pub(crate) num_rets: usize,
    pub(crate) ret_types: u32,
    pub(crate) rets: u32,
    pub(crate) attrs: AttrsAt,
}

impl Header {
    /// Reads the frame the host wrote at guest address `addr`, without
    /// checks (docs/abi.md, "What a guest may rely on").
    ///
    /// # Safety
    ///
    /// `addr` must be the frame the host passed to a handler export for
    /// the call in progress (or a frame [`CallFrame::validated`] accepted):
    /// a wasm32 `XLA_FFI_CallFrame` inside `mem`.
    ///
    /// [`CallFrame::validated`]: crate::CallFrame
    #[inline(always)]
    pub(crate) unsafe fn trusted(mem: Memory<'_>, addr: u32) -> Header {
        // SAFETY: the frame's fields are inside memory (caller); integers.
        let (ctx, stage, num_args, arg_types, args, num_rets, ret_types, rets) = unsafe {
            (
                mem.read_unchecked::<u32>(addr + layout::CTX),
                mem.read_unchecked::<u32>(addr + layout::STAGE),
                mem.read_unchecked::<i64>(addr + layout::ARGS + abi::args::SIZE_FIELD),
                mem.read_unchecked::<u32>(addr + layout::ARGS + abi::args::TYPES),
                mem.read_unchecked::<u32>(addr + layout::ARGS + abi::args::ARGS),
                mem.read_unchecked::<i64>(addr + layout::RETS + abi::rets::SIZE_FIELD),
                mem.read_unchecked::<u32>(addr + layout::RETS + abi::rets::TYPES),
                mem.read_unchecked::<u32>(addr + layout::RETS + abi::rets::RETS),
            )
        };
        Header {
            addr,
            ctx,
            stage,
            // Out of range (never from the host) reads as usize::MAX, which
            // CallFrame::trusted turns down.
            num_args: usize::try_from(num_args).unwrap_or(usize::MAX),
            arg_types,
            args,
            num_rets: usize::try_from(num_rets).unwrap_or(usize::MAX),
            ret_types,
            rets,
            // SAFETY: the inline attributes are inside the frame.
            attrs: unsafe { AttrsAt::trusted(mem, addr + layout::ATTRS) },
        }
    }

    /// Reads and checks the frame at guest address `addr` of `mem`.
    pub(crate) fn decode(mem: Memory<'_>, addr: u32) -> Result<Header> {
        let what = "call frame";
        let at = |off: u32| Memory::offset(addr, u64::from(off), &what);
        let struct_size = mem.u32(addr, &what)?;
        if struct_size != layout::STRUCT_SIZE {
            return Err(Error::internal(alloc::format!(
                "call frame struct_size is {struct_size}, expected {} (wasm32 XLA_FFI_CallFrame)",
                layout::STRUCT_SIZE
            )));
        }
        mem.check(addr, layout::SIZE as usize, 8, &what)?;
        let count = |off: u32, kind: &str| -> Result<usize> {
            let n = mem.i64(at(off)?, &what)?;
            if (0..=MAX_BUFFERS).contains(&n) {
                Ok(n as usize)
            } else {
                Err(Error::internal(alloc::format!("call frame has {n} {kind}")))
            }
        };
        let num_args = count(layout::ARGS + abi::args::SIZE_FIELD, "arguments")?;
        let num_rets = count(layout::RETS + abi::rets::SIZE_FIELD, "results")?;
        let header = Header {
            addr,
            ctx: mem.u32(at(layout::CTX)?, &what)?,
            stage: mem.u32(at(layout::STAGE)?, &what)?,
            num_args,
            arg_types: mem.u32(at(layout::ARGS + abi::args::TYPES)?, &what)?,
            args: mem.u32(at(layout::ARGS + abi::args::ARGS)?, &what)?,
            num_rets,
            ret_types: mem.u32(at(layout::RETS + abi::rets::TYPES)?, &what)?,
            rets: mem.u32(at(layout::RETS + abi::rets::RETS)?, &what)?,
            attrs: Attrs::decode(mem, at(layout::ATTRS)?)?.at(),
        };
        mem.check(header.arg_types, num_args * 4, 1, &"argument types")?;
        mem.check(header.args, num_args * 4, 1, &"arguments")?;
        mem.check(header.ret_types, num_rets * 4, 1, &"result types")?;
        mem.check(header.rets, num_rets * 4, 1, &"results")?;
        Ok(header)
    }
}
