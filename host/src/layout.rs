//! The wasm32 call frame: a native XLA FFI call, laid out in guest memory.
//!
//! [`CallLayout::plan`] encodes, for a guest scratch region at `base`:
//!
//! ```text
//! base ─► XLA_FFI_CallFrame (104 + padding to 112)   struct_size 104, api,
//!         ctx cell (8 bytes)                         ctx, stage EXECUTE
//!         args.types[n]  args.args[n]  rets.types[m]  rets.rets[m]   (u32)
//!         XLA_FFI_Buffer × (n + m)  (32 bytes each, struct_size 28)
//!         dims of every buffer (int64)
//!         attributes: names, types, values, nested dictionaries
//!         ── 64-byte aligned ──
//!         input data × n, output data × m   (each 64-byte aligned)
//! ```
//!
//! Everything up to the data (the "header") is built in a reused host
//! buffer with absolute guest addresses and copied in one piece; input bytes
//! are copied straight from the native buffers; output regions are not
//! filled (a guest finds what it wrote there itself in an earlier call, or
//! zeros, never bytes the host copied in for an earlier call) and are copied
//! out after the call, from the regions and sizes the host computed here,
//! never from anything the guest left in the frame.
//!
//! Buffers that XLA aliases share one region. A result at exactly an
//! operand's native address and size (`input_output_aliases`, donation) gets
//! that operand's region: it holds the operand's bytes when the guest starts
//! and is copied out once, so in-place handlers behave as they do natively.
//! Operands at the same address and size share a region too (read-only, so
//! only the copy is saved). A result that overlaps an operand or another
//! result without being the same buffer is refused; zero-length buffers and
//! tokens (whose data pointer aliases other buffers) alias nothing.
//! Offsets and sizes come from [`cyxla_guest_abi`] (the wasm32 columns of
//! docs/abi.md, "Frame-side structs"); all arithmetic is checked.

use cyxla_guest_abi::{
    self as abi, args, array, attrs, buffer, byte_span, call_frame, rets, scalar,
};
use cyxla_xla_types::attr;
use plugin_glue::frame::{Attr, Attrs, BufferShape, BufferView, CallFrame, LazyFrame};
use plugin_glue::{DType, ErrorCode, HandlerError};

use crate::copy::Copier;

/// Alignment of every data region (XLA aligns buffers to 64 bytes too).
pub(crate) const DATA_ALIGN: u32 = 64;
/// Deepest nesting of attribute dictionaries accepted.
const MAX_ATTR_DEPTH: usize = 32;
/// Offset of the host-owned context cell that `frame.ctx` points at.
const CTX_OFFSET: u32 = call_frame::SIZE;
/// Size of the context cell.
const CTX_SIZE: u32 = 8;

/// One operand or result of a call, as the layout needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BufferDesc<'a> {
    /// Element type (its `XLA_FFI_DataType` number is written into the
    /// guest's frame, nowhere else).
    pub(crate) dtype: DType,
    /// Dimensions.
    pub(crate) dims: &'a [i64],
    /// Bytes of data.
    pub(crate) byte_len: usize,
    /// Native address of the data: only compared, to find buffers that XLA
    /// aliases, never dereferenced here. Ignored when `byte_len` is 0.
    pub(crate) addr: usize,
}

/// One attribute value, borrowed from a call: the model both sides of the
/// sandbox share ([`attr::Attr`]), with the shared array view and `D`, the
/// source's nested dictionary.
pub(crate) type AttrValue<'v, D> = attr::Attr<'v, attr::ArrayView<'v>, D>;

/// A sorted attribute dictionary.
pub(crate) trait AttrSource: Sized {
    /// Number of entries.
    fn count(&self) -> usize;
    /// Calls `f(name, value)` for each entry, in order.
    fn visit<F>(&self, f: F) -> Result<(), HandlerError>
    where
        F: FnMut(&[u8], AttrValue<'_, Self>) -> Result<(), HandlerError>;
}

/// A native call as the layout sees it: implemented for plugin-glue's
/// `CallFrame` and for host-owned calls in tests and benches.
pub(crate) trait CallView {
    /// The attribute dictionary type.
    type Attrs<'s>: AttrSource
    where
        Self: 's;
    /// Number of operands.
    fn num_args(&self) -> usize;
    /// Number of results.
    fn num_rets(&self) -> usize;
    /// Operand `i`.
    fn arg(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError>;
    /// Result `i`.
    fn ret(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError>;
    /// The attributes.
    fn attrs(&self) -> Self::Attrs<'_>;
    /// Slot `slot`'s native data address (operand `slot`, or result
    /// `slot - n_args`) if the slot has `like`'s dtype, dims and byte
    /// length; `Ok(None)` if anything differs (the caller then plans the
    /// call anew, which finds what is wrong with it).
    fn addr_if_like(
        &self,
        slot: usize,
        n_args: usize,
        like: &SlotShape<'_>,
    ) -> Result<Option<usize>, HandlerError> {
        addr_if_desc_like(self, slot, n_args, like)
    }
    /// Copies operand `i`'s bytes into `dst` (exactly its `byte_len`) with
    /// `copier`. `checked` is the operand's shape as the layout planned it
    /// ([`CallLayout::checked_shape`]), if it has one.
    fn read_arg(
        &self,
        i: usize,
        checked: Option<&BufferShape>,
        dst: &mut [u8],
        copier: Copier,
    ) -> Result<(), HandlerError>;
    /// Copies `src` (exactly result `i`'s `byte_len`) into result `i` with
    /// `copier`. `checked` as for [`CallView::read_arg`].
    fn write_ret(
        &self,
        i: usize,
        checked: Option<&BufferShape>,
        src: &[u8],
        copier: Copier,
    ) -> Result<(), HandlerError>;
}

/// A buffer's shape as a call was planned with it: what a later call's
/// buffer in the same slot is compared with ([`CallView::addr_if_like`]).
pub(crate) struct SlotShape<'s> {
    pub(crate) dtype: DType,
    pub(crate) byte_len: usize,
    pub(crate) dims: &'s [i64],
    /// The same dtype and dims with their sizes as plugin-glue computes
    /// them, kept when those are `byte_len` (every valid buffer but a
    /// host-owned call's INVALID dtype, whose size is not checked).
    pub(crate) checked: Option<&'s BufferShape>,
}

/// `a == b` without a call to `memcmp`, which the slices' `==` makes: the
/// shapes a call is checked against hold a few words each, and the two
/// library calls cost more than comparing them (3% of the samples of a
/// `copy16` call under perf).
#[inline]
pub(crate) fn same<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// A data region, relative to the scratch base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    /// Offset from the scratch base.
    pub(crate) offset: u32,
    /// Length in bytes.
    pub(crate) len: u32,
}

/// What a data region holds when the guest starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Operand `.0`'s bytes (and those of every operand or result that
    /// aliases it).
    Operand(usize),
    /// Nothing: a result that aliases no operand. Its region holds
    /// unspecified bytes when the guest starts, as XLA's result buffers do,
    /// but never bytes the host copied in for an earlier call (see
    /// `Instance::write_frame`).
    Unfilled,
}

/// One distinct data region and what fills it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fill {
    pub(crate) region: Region,
    pub(crate) source: Source,
}

/// A buffer's native byte range, for finding aliases.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: usize,
    end: usize,
    /// Operands first, then results (as in the frame).
    slot: usize,
}

impl Span {
    /// The span of slot `slot`'s `byte_len` bytes at native address
    /// `addr`, unless the buffer cannot alias anything (empty, or a token).
    fn of(dtype: DType, byte_len: usize, addr: usize, slot: usize) -> Option<Span> {
        (byte_len > 0 && dtype != DType::Token).then(|| Span {
            start: addr,
            end: addr.saturating_add(byte_len),
            slot,
        })
    }

    /// Whether the two spans share a byte.
    fn overlaps(&self, other: &Span) -> bool {
        self.start < other.end && other.start < self.end
    }
}

/// Up to this many buffer spans, [`CallLayout::find_aliases`] first checks
/// every pair for overlap instead of sorting.
const FEW_SPANS: usize = 8;

/// Whether no two of `spans` (each non-empty) share a byte.
fn pairwise_disjoint(spans: &[Span]) -> bool {
    spans
        .iter()
        .enumerate()
        .all(|(i, a)| spans[i + 1..].iter().all(|b| !a.overlaps(b)))
}

/// The encoded frame of one call; reused across calls (no allocation once
/// the buffers have grown to the largest call seen).
#[derive(Debug, Default)]
pub(crate) struct CallLayout {
    /// Header bytes, for guest addresses `[base, base + header.len())`.
    pub(crate) header: Vec<u8>,
    /// Input regions, one per operand (operands that XLA aliases share one).
    pub(crate) inputs: Vec<Region>,
    /// Output regions, one per result (a result that XLA aliases with an
    /// operand has that operand's region).
    pub(crate) outputs: Vec<Region>,
    /// Every distinct data region once, in increasing offset order, with
    /// what it holds when the guest starts.
    pub(crate) fills: Vec<Fill>,
    /// Bytes of scratch the whole call needs.
    pub(crate) total: u32,
    /// Bytes of the input regions, summed over the operands (an operand
    /// that shares another's region counted too): the statistics' bytes
    /// in, worked out when the regions are planned, not on every call.
    pub(crate) bytes_in: u64,
    /// Bytes of the output regions, summed over the results likewise.
    pub(crate) bytes_out: u64,
    /// Changes whenever the header's length or a data region may have
    /// changed (a plan anew, attributes encoded again, a failed plan):
    /// while it stays the same, so do the ranges of scratch the host copies
    /// into ([`CallLayout::ranges_version`]).
    version: u64,
    base: u32,
    depth: usize,
    /// Native spans of the buffers that can alias (non-empty, not tokens),
    /// sorted to find aliases.
    spans: Vec<Span>,
    /// Per slot, the slot whose region it uses (itself unless aliased).
    shared: Vec<usize>,
    /// What the header was last planned for, while it is valid.
    shape: Option<Shape>,
    /// Where the header's attributes are, entry by entry in the order
    /// [`CallLayout::encode_attrs`] wrote them, so that a call whose
    /// attributes have the same structure rewrites their bytes in place
    /// ([`CallLayout::refresh_attrs`]) instead of encoding them again.
    attr_slots: Vec<AttrSlot>,
    /// Entries of the outermost attribute dictionary last encoded.
    attr_count: usize,
}

/// One attribute entry as [`CallLayout::encode_attrs`] laid it out.
///
/// Where the entries of a dictionary go, and so the whole header, depends
/// only on these fields (kinds, dtypes, counts and byte lengths), never on
/// the bytes of names and values: two dictionaries that agree on them
/// encode to the same header but for those bytes.
#[derive(Clone, Copy, Debug)]
struct AttrSlot {
    /// `abi::attr_type` of the value.
    kind: u32,
    /// Scalars and arrays: the element `XLA_FFI_DataType` (0 otherwise).
    dtype: u32,
    /// Arrays: elements; dictionaries: entries (0 otherwise).
    count: usize,
    /// Header offset of the name's bytes and their length.
    name: (u32, usize),
    /// Header offset and length of the value's bytes: a scalar's value, an
    /// array's data, a string's bytes (none for a dictionary).
    value: (u32, usize),
}

/// The shape of the call a [`CallLayout`] was planned for: everything the
/// header depends on except the attributes (which come last in the header:
/// rewritten in place when their structure is the last call's, see
/// [`CallLayout::refresh_attrs`], else encoded again).
#[derive(Debug, Default)]
struct Shape {
    base: u32,
    api: u32,
    n_args: usize,
    /// Per slot: dtype, byte length, rank.
    slots: Vec<(DType, usize, usize)>,
    /// Every slot's dims, one after another.
    dims: Vec<i64>,
    /// Per slot, its dtype and dims with their sizes, as plugin-glue
    /// computes them, where those are the slot's byte length
    /// ([`SlotShape::checked`]).
    checked: Vec<Option<BufferShape>>,
    /// Per slot, the native address of its data (what `shared` was found
    /// from, with the byte lengths).
    addrs: Vec<usize>,
    /// Per slot, the slot whose region it uses.
    shared: Vec<usize>,
    /// Whether every slot uses its own region (`shared[slot] == slot`): no
    /// buffer aliased another.
    unaliased: bool,
    /// Header length before the attributes.
    attrs_at: usize,
    /// Whether the call had no attributes (the header then ends with an
    /// empty table, the same for every call without them).
    no_attrs: bool,
    /// Offset of the first data region.
    data_at: u32,
}

impl Shape {
    /// Whether no two buffers that can alias ([`Span::of`]) share a byte at
    /// the addresses noted.
    fn disjoint(&self) -> bool {
        let span = |slot: usize| {
            let (dtype, byte_len, _) = self.slots[slot];
            Span::of(dtype, byte_len, self.addrs[slot], slot)
        };
        (0..self.slots.len()).all(|a| {
            span(a).is_none_or(|a| {
                (a.slot + 1..self.slots.len()).all(|b| span(b).is_none_or(|b| !a.overlaps(&b)))
            })
        })
    }
}

/// Slot `slot` of `call`: operand `slot`, or result `slot - n_args`.
fn slot_desc<C: CallView + ?Sized>(
    call: &C,
    slot: usize,
    n_args: usize,
) -> Result<BufferDesc<'_>, HandlerError> {
    if slot < n_args {
        call.arg(slot)
    } else {
        call.ret(slot - n_args)
    }
}

/// [`CallView::addr_if_like`] from the slot's [`BufferDesc`].
#[inline]
fn addr_if_desc_like<C: CallView + ?Sized>(
    call: &C,
    slot: usize,
    n_args: usize,
    like: &SlotShape<'_>,
) -> Result<Option<usize>, HandlerError> {
    let desc = slot_desc(call, slot, n_args)?;
    Ok(
        ((desc.dtype, desc.byte_len) == (like.dtype, like.byte_len) && same(desc.dims, like.dims))
            .then_some(desc.addr),
    )
}

#[cold]
#[inline(never)]
fn too_big(what: &str) -> HandlerError {
    HandlerError::new(
        ErrorCode::ResourceExhausted,
        format!("the call frame does not fit in a wasm32 address space ({what})"),
    )
}

#[inline]
fn to_u32(value: usize, what: &str) -> Result<u32, HandlerError> {
    match u32::try_from(value) {
        Ok(v) => Ok(v),
        Err(_) => Err(too_big(what)),
    }
}

#[inline]
fn align_up(value: u32, align: u32) -> Result<u32, HandlerError> {
    match value.checked_next_multiple_of(align) {
        Some(v) => Ok(v),
        None => Err(too_big("alignment")),
    }
}

/// Refuses a buffer whose byte length is not the size of its dtype and
/// dims: a guest reads its data as that many bytes, without checking them
/// again (docs/abi.md, "What a guest may rely on"), so its region must hold
/// them exactly. XLA's buffers always do; a host-owned call may not. The
/// INVALID dtype has no size and is left to the guest (the SDK refuses it).
/// Checked when a call is planned anew; a call replanned has the dtype,
/// dims and byte length of the one planned.
fn check_size(desc: &BufferDesc<'_>, slot: usize, n_args: usize) -> Result<(), HandlerError> {
    let dtype = desc.dtype;
    if dtype == DType::Invalid {
        return Ok(());
    }
    let size = desc
        .dims
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))
        .and_then(|count| dtype.byte_size(count));
    if size == Some(desc.byte_len as u64) {
        return Ok(());
    }
    let name = if slot < n_args {
        format!("operand {slot}")
    } else {
        format!("result {}", slot - n_args)
    };
    Err(HandlerError::invalid_argument(format!(
        "{name} holds {} bytes, not the size of a {dtype}{:?} buffer",
        desc.byte_len, desc.dims
    )))
}

/// Notes `desc`'s native span in `spans`, for finding aliases, unless it
/// cannot alias anything (empty, or a token).
fn push_span(spans: &mut Vec<Span>, desc: &BufferDesc<'_>, slot: usize) {
    spans.extend(Span::of(desc.dtype, desc.byte_len, desc.addr, slot));
}

impl CallLayout {
    /// Slot `slot`'s shape as plugin-glue computes it (operand `slot`, or
    /// result `slot - n_args`), for the call last planned, if it has one
    /// ([`SlotShape::checked`]).
    pub(crate) fn checked_shape(&self, slot: usize) -> Option<&BufferShape> {
        self.shape.as_ref()?.checked.get(slot)?.as_ref()
    }

    /// Guest address of the frame (valid after [`CallLayout::plan`]).
    pub(crate) fn frame_addr(&self) -> u32 {
        self.base
    }

    /// A number that stays the same from one plan to the next only while
    /// the header's length and every data region (offset, length, what
    /// fills it) do: a caller that noted it with what it derived from them
    /// (the ranges it copies into) need not derive them again while it
    /// holds. Never the same for two different layouts of one
    /// [`CallLayout`].
    pub(crate) fn ranges_version(&self) -> u64 {
        self.version
    }

    /// Encodes `call` for a scratch region at guest address `base`, with the
    /// guest's API table at `api`. Afterwards [`CallLayout::total`] says how
    /// much scratch it needs; if that is more than the region holds, grow it
    /// and plan again at the new base.
    ///
    /// # Errors
    ///
    /// The frame's own errors (a bad operand, attribute) or
    /// RESOURCE_EXHAUSTED if the call cannot fit in 4 GiB.
    pub(crate) fn plan<C: CallView>(
        &mut self,
        call: &C,
        base: u32,
        api: u32,
    ) -> Result<(), HandlerError> {
        match self.replan(call, base, api) {
            Ok(true) => Ok(()),
            Ok(false) => self.plan_anew(call, base, api),
            Err(e) => {
                self.shape = None;
                self.version += 1;
                Err(e)
            }
        }
    }

    /// The per-call fast path: if `call` has the shape the header was
    /// planned for (same base and API table, same operand and result
    /// dtypes, dims and sizes, the same buffers aliased), keeps the header
    /// up to the attributes and every data region, and redoes only the
    /// attributes (nothing when neither call has any; their bytes rewritten
    /// in place when their structure is the last call's, the usual case at
    /// one call site, a fifth of what encoding them again costs:
    /// docs/performance.md, "Frame layout"). Returns false
    /// (having changed nothing that [`CallLayout::plan_anew`] does not
    /// redo) if the shape differs.
    fn replan<C: CallView>(&mut self, call: &C, base: u32, api: u32) -> Result<bool, HandlerError> {
        // Borrowed, not taken: moving the shape out and back costs more than
        // the rest of a call without attributes.
        let Some(shape) = &mut self.shape else {
            return Ok(false);
        };
        let n_args = call.num_args();
        let n_slots = n_args + call.num_rets();
        if (shape.base, shape.api, shape.n_args, shape.slots.len()) != (base, api, n_args, n_slots)
        {
            return Ok(false);
        }
        let (attrs_at, data_at, had_attrs) = (shape.attrs_at, shape.data_at, !shape.no_attrs);
        let mut moved = false;
        let mut dims_at = 0;
        for (slot, &(dtype, byte_len, rank)) in shape.slots.iter().enumerate() {
            let like = SlotShape {
                dtype,
                byte_len,
                dims: &shape.dims[dims_at..dims_at + rank],
                checked: shape.checked[slot].as_ref(),
            };
            let Some(found) = call.addr_if_like(slot, n_args, &like)? else {
                return Ok(false);
            };
            dims_at += rank;
            // Noted as it goes, so that finding the aliases again asks the
            // call for nothing more: if the shape differs after all, the
            // caller plans anew (a new shape), and if this fails, `plan`
            // drops the shape.
            let addr = &mut shape.addrs[slot];
            moved |= found != *addr;
            *addr = found;
        }
        // Buffers at the native addresses of the last call (the usual case
        // at one call site) alias as they did: `shared` still holds.
        if moved && !self.realias(n_args)? {
            return Ok(false);
        }
        let attrs = call.attrs();
        let no_attrs = attrs.count() == 0;
        let kept = (no_attrs && !had_attrs) || self.refresh_attrs(&attrs)?;
        if !kept {
            // The header's length may change (the data regions may not).
            self.version += 1;
            self.header.truncate(attrs_at);
            self.encode_all_attrs(&attrs)?;
            if align_up(to_u32(self.header.len(), "header")?, DATA_ALIGN)? != data_at {
                return Ok(false);
            }
            if let Some(shape) = &mut self.shape {
                shape.no_attrs = no_attrs;
            }
        }
        Ok(true)
    }

    /// Finds the aliases of the call's buffers again, from the shape (whose
    /// dtypes and byte lengths [`CallLayout::replan`] found to be the
    /// call's) and the native addresses it noted there, which are not the
    /// ones `shared` was found from; returns whether the buffers alias as
    /// they did then.
    fn realias(&mut self, n_args: usize) -> Result<bool, HandlerError> {
        let Some(shape) = &self.shape else {
            return Ok(false);
        };
        // The usual case, XLA's buffers of a chain of calls: none shared
        // another's region when the header was planned, and none overlaps
        // another now, so none does. Checked from the shape, without
        // gathering spans: about 100 instructions fewer a call through XLA
        // (docs/performance.md, "Instructions per call").
        if shape.unaliased && shape.slots.len() <= FEW_SPANS && shape.disjoint() {
            return Ok(true);
        }
        self.spans.clear();
        for (slot, (&(dtype, byte_len, _), &addr)) in
            shape.slots.iter().zip(&shape.addrs).enumerate()
        {
            self.spans.extend(Span::of(dtype, byte_len, addr, slot));
        }
        for (slot, owner) in self.shared.iter_mut().enumerate() {
            *owner = slot;
        }
        self.find_aliases(n_args)?;
        Ok(self
            .shape
            .as_ref()
            .is_some_and(|shape| same(&self.shared, &shape.shared)))
    }

    /// Plans the whole header and every region (see [`CallLayout::plan`]).
    fn plan_anew<C: CallView>(
        &mut self,
        call: &C,
        base: u32,
        api: u32,
    ) -> Result<(), HandlerError> {
        self.shape = None;
        self.version += 1;
        self.header.clear();
        self.inputs.clear();
        self.outputs.clear();
        self.fills.clear();
        self.spans.clear();
        self.shared.clear();
        self.base = base;
        self.depth = 0;
        let n_args = call.num_args();
        let n_rets = call.num_rets();
        let mut shape = Shape {
            base,
            api,
            n_args,
            ..Shape::default()
        };

        // Frame and context cell.
        self.reserve(CTX_OFFSET + CTX_SIZE, call_frame::ALIGN)?;
        self.put_u32(call_frame::STRUCT_SIZE_OFFSET, call_frame::STRUCT_SIZE);
        self.put_u32(call_frame::API, api);
        self.put_u32(call_frame::CTX, self.addr(CTX_OFFSET)?);
        self.put_u32(call_frame::STAGE, abi::execution_stage::EXECUTE);

        // Operand and result lists, with their type and pointer arrays.
        let args_ptrs =
            self.put_buffer_list(call_frame::ARGS, n_args, abi::arg_type::BUFFER, "args")?;
        let rets_ptrs =
            self.put_buffer_list(call_frame::RETS, n_rets, abi::ret_type::BUFFER, "rets")?;

        // Buffers and their dims; data pointers are patched below.
        let buffers = self.reserve(
            buffer::SIZE
                .checked_mul(to_u32(n_args + n_rets, "buffers")?)
                .ok_or_else(|| too_big("buffers"))?,
            buffer::ALIGN,
        )?;
        for slot in 0..n_args + n_rets {
            let desc = slot_desc(call, slot, n_args)?;
            check_size(&desc, slot, n_args)?;
            shape
                .slots
                .push((desc.dtype, desc.byte_len, desc.dims.len()));
            shape.dims.extend_from_slice(desc.dims);
            shape.checked.push(
                BufferShape::new(desc.dtype, desc.dims)
                    .ok()
                    .filter(|checked| checked.byte_len() == desc.byte_len),
            );
            let b = buffers + buffer::SIZE * to_u32(slot, "buffers")?;
            let rank = desc.dims.len();
            let dims = self.reserve(
                to_u32(rank, "rank")?
                    .checked_mul(8)
                    .ok_or_else(|| too_big("dims"))?,
                8,
            )?;
            for (d, dim) in desc.dims.iter().enumerate() {
                self.put_i64(dims + 8 * to_u32(d, "rank")?, *dim);
            }
            self.put_u32(b + buffer::STRUCT_SIZE_OFFSET, buffer::STRUCT_SIZE);
            self.put_u32(b + buffer::DTYPE, desc.dtype.to_xla());
            self.put_i64(
                b + buffer::RANK,
                i64::try_from(rank).map_err(|_| too_big("rank"))?,
            );
            self.put_u32(b + buffer::DIMS, self.addr(dims)?);
            let ptrs = if slot < n_args {
                args_ptrs + 4 * to_u32(slot, "args")?
            } else {
                rets_ptrs + 4 * to_u32(slot - n_args, "rets")?
            };
            self.put_u32(ptrs, self.addr(b)?);
            let region = Region {
                offset: 0,
                len: to_u32(desc.byte_len, "buffer size")?,
            };
            self.shared.push(slot);
            shape.addrs.push(desc.addr);
            push_span(&mut self.spans, &desc, slot);
            if slot < n_args {
                self.inputs.push(region);
            } else {
                self.outputs.push(region);
            }
        }

        // Attributes, inline in the frame, last in the header.
        let attrs_at = self.header.len();
        let attrs = call.attrs();
        shape.no_attrs = attrs.count() == 0;
        self.encode_all_attrs(&attrs)?;

        self.find_aliases(n_args)?;

        // Data regions after the header; an aliased buffer takes the region
        // of the (earlier) slot it aliases.
        let data_at = align_up(to_u32(self.header.len(), "header")?, DATA_ALIGN)?;
        let mut cursor = data_at;
        for slot in 0..n_args + n_rets {
            let owner = self.shared[slot];
            let offset = if owner != slot {
                self.region(owner, n_args).offset
            } else {
                let offset = cursor;
                let len = self.region(slot, n_args).len;
                cursor = align_up(
                    cursor.checked_add(len).ok_or_else(|| too_big("data"))?,
                    DATA_ALIGN,
                )?;
                let source = if slot < n_args {
                    Source::Operand(slot)
                } else {
                    Source::Unfilled
                };
                self.fills.push(Fill {
                    region: Region { offset, len },
                    source,
                });
                offset
            };
            let region = if slot < n_args {
                &mut self.inputs[slot]
            } else {
                &mut self.outputs[slot - n_args]
            };
            region.offset = offset;
            let data_addr = base
                .checked_add(region.offset)
                .ok_or_else(|| too_big("data"))?;
            let b = buffers + buffer::SIZE * to_u32(slot, "buffers")?;
            self.put_u32(b + buffer::DATA, data_addr);
        }
        // The whole region must be addressable.
        base.checked_add(cursor).ok_or_else(|| too_big("scratch"))?;
        self.total = cursor;
        self.bytes_in = self.inputs.iter().map(|r| u64::from(r.len)).sum();
        self.bytes_out = self.outputs.iter().map(|r| u64::from(r.len)).sum();
        shape.attrs_at = attrs_at;
        shape.data_at = data_at;
        shape.shared.clone_from(&self.shared);
        shape.unaliased = self
            .shared
            .iter()
            .enumerate()
            .all(|(slot, &owner)| owner == slot);
        self.shape = Some(shape);
        Ok(())
    }

    /// The region of `slot` (operands first, then results).
    fn region(&self, slot: usize, n_args: usize) -> Region {
        if slot < n_args {
            self.inputs[slot]
        } else {
            self.outputs[slot - n_args]
        }
    }

    /// Finds the buffers XLA aliases, from their native spans: buffers with
    /// the same span share the region of the first of them (an operand if
    /// any is), so `shared[slot] <= slot`. Refuses two results with the same
    /// span and a result that overlaps another buffer without having its
    /// span. Sorting keeps this O(n log n) without allocating in steady
    /// state.
    fn find_aliases(&mut self, n_args: usize) -> Result<(), HandlerError> {
        if self.spans.len() < 2 {
            return Ok(());
        }
        // The usual call: a few buffers, none overlapping another. Checking
        // every pair is cheaper than sorting, and leaves `shared` as it is
        // (each buffer its own region), as the walk below would.
        if self.spans.len() <= FEW_SPANS && pairwise_disjoint(&self.spans) {
            return Ok(());
        }
        self.spans
            .sort_unstable_by_key(|span| (span.start, span.end, span.slot));
        let name = |slot: usize| {
            if slot < n_args {
                format!("operand {slot}")
            } else {
                format!("result {}", slot - n_args)
            }
        };
        let refuse = |a: &Span, b: &Span, how: &str| {
            let (a, b) = if a.slot <= b.slot { (a, b) } else { (b, a) };
            HandlerError::invalid_argument(format!(
                "{} ({} bytes) and {} ({} bytes) {how}; the sandbox only aliases a result \
                 with an operand at the same address and of the same size",
                name(a.slot),
                a.end - a.start,
                name(b.slot),
                b.end - b.start,
            ))
        };
        const SAME: &str = "are the same memory in XLA";
        const PARTIAL: &str = "overlap in XLA's memory without being the same buffer";
        // Over the earlier groups of equal spans: the span reaching furthest,
        // and the result span reaching furthest.
        let mut furthest: Option<Span> = None;
        let mut furthest_result: Option<Span> = None;
        let mut group = 0;
        while group < self.spans.len() {
            let first = self.spans[group];
            let mut end = group + 1;
            while end < self.spans.len()
                && (self.spans[end].start, self.spans[end].end) == (first.start, first.end)
            {
                end += 1;
            }
            let members = &self.spans[group..end];
            let mut result = None;
            for span in members {
                if span.slot >= n_args {
                    if let Some(other) = result {
                        return Err(refuse(&other, span, SAME));
                    }
                    result = Some(*span);
                }
                // `first` has the lowest slot: an operand if any member is.
                self.shared[span.slot] = first.slot;
            }
            if let Some(earlier) = furthest.filter(|f| first.start < f.end)
                && let Some(mine) = result.or((earlier.slot >= n_args).then_some(first))
            {
                return Err(refuse(&earlier, &mine, PARTIAL));
            }
            if let Some(earlier) = furthest_result.filter(|f| first.start < f.end) {
                return Err(refuse(&earlier, &first, PARTIAL));
            }
            if furthest.is_none_or(|f| first.end > f.end) {
                furthest = Some(first);
            }
            if let Some(result) = result
                && furthest_result.is_none_or(|f| result.end > f.end)
            {
                furthest_result = Some(result);
            }
            group = end;
        }
        Ok(())
    }

    /// Guest address of header offset `offset`.
    #[inline]
    fn addr(&self, offset: u32) -> Result<u32, HandlerError> {
        self.base
            .checked_add(offset)
            .ok_or_else(|| too_big("address"))
    }

    /// Reserves the type array and the pointer array of `n` buffers, sets
    /// every type to `kind`, and writes the `XLA_FFI_Args` or
    /// `XLA_FFI_Rets` at header offset `list` pointing at them; returns the
    /// pointer array's offset. `what` names the list in errors.
    fn put_buffer_list(
        &mut self,
        list: u32,
        n: usize,
        kind: u32,
        what: &str,
    ) -> Result<u32, HandlerError> {
        // One layout (both from `buffer_list!` in `cyxla_guest_abi`): either
        // list is written with `args`' offsets.
        const {
            assert!(
                args::SIZE == rets::SIZE
                    && args::STRUCT_SIZE == rets::STRUCT_SIZE
                    && args::STRUCT_SIZE_OFFSET == rets::STRUCT_SIZE_OFFSET
                    && args::SIZE_FIELD == rets::SIZE_FIELD
                    && args::TYPES == rets::TYPES
                    && args::ARGS == rets::RETS
            );
        }
        let types = self.reserve_array(n)?;
        let ptrs = self.reserve_array(n)?;
        for i in 0..n {
            self.put_u32(types + 4 * to_u32(i, what)?, kind);
        }
        self.put_u32(list + args::STRUCT_SIZE_OFFSET, args::STRUCT_SIZE);
        self.put_i64(
            list + args::SIZE_FIELD,
            i64::try_from(n).map_err(|_| too_big(what))?,
        );
        self.put_u32(list + args::TYPES, self.addr(types)?);
        self.put_u32(list + args::ARGS, self.addr(ptrs)?);
        Ok(ptrs)
    }

    /// Appends `len` zero bytes at `align`; returns their offset.
    #[inline]
    fn reserve(&mut self, len: u32, align: u32) -> Result<u32, HandlerError> {
        let start = align_up(to_u32(self.header.len(), "header")?, align)?;
        let end = start.checked_add(len).ok_or_else(|| too_big("header"))?;
        // The header must stay addressable from `base`.
        self.base
            .checked_add(end)
            .ok_or_else(|| too_big("header"))?;
        self.header.resize(end as usize, 0);
        Ok(start)
    }

    #[inline]
    fn reserve_array(&mut self, n: usize) -> Result<u32, HandlerError> {
        let len = to_u32(n, "array")?
            .checked_mul(4)
            .ok_or_else(|| too_big("array"))?;
        self.reserve(len, 4)
    }

    #[inline]
    fn put_bytes(&mut self, offset: u32, bytes: &[u8]) {
        let start = offset as usize;
        self.header[start..start + bytes.len()].copy_from_slice(bytes);
    }

    #[inline]
    fn put_u32(&mut self, offset: u32, value: u32) {
        self.put_bytes(offset, &value.to_le_bytes());
    }

    #[inline]
    fn put_i64(&mut self, offset: u32, value: i64) {
        self.put_bytes(offset, &value.to_le_bytes());
    }

    /// Appends `bytes` at `align`; returns their header offset.
    fn append(&mut self, bytes: &[u8], align: u32) -> Result<u32, HandlerError> {
        let offset = self.reserve(to_u32(bytes.len(), "attribute")?, align)?;
        self.put_bytes(offset, bytes);
        Ok(offset)
    }

    /// Writes a byte span struct for `bytes` and the bytes; returns the
    /// struct's guest address and the header offset of the bytes.
    fn append_span(&mut self, bytes: &[u8]) -> Result<(u32, u32), HandlerError> {
        let span = self.reserve(byte_span::SIZE, byte_span::ALIGN)?;
        let data = self.append(bytes, 1)?;
        self.put_u32(span + byte_span::PTR, self.addr(data)?);
        self.put_u32(span + byte_span::LEN, to_u32(bytes.len(), "attribute")?);
        Ok((self.addr(span)?, data))
    }

    /// Encodes the call's attribute dictionary into the frame's
    /// `XLA_FFI_Attrs` (already reserved), after the rest of the header, and
    /// notes where each entry went ([`CallLayout::attr_slots`]). A failure
    /// leaves half a record, but also no [`CallLayout::shape`], so the next
    /// call is planned anew and never reads it.
    fn encode_all_attrs<A: AttrSource>(&mut self, source: &A) -> Result<(), HandlerError> {
        self.depth = 0;
        self.attr_slots.clear();
        self.attr_count = source.count();
        self.encode_attrs(source, call_frame::ATTRS)
    }

    /// Rewrites the names' and values' bytes of the attributes in the
    /// header with `source`'s, if `source` has the structure the header was
    /// encoded for (the same kinds, dtypes, counts and byte lengths, entry
    /// by entry): the header is then what encoding `source` anew would give
    /// (see [`AttrSlot`]). Returns false otherwise, having perhaps
    /// rewritten some bytes: the caller encodes the attributes anew.
    fn refresh_attrs<A: AttrSource>(&mut self, source: &A) -> Result<bool, HandlerError> {
        let mut next = 0;
        let same = self.refresh_dict(source, self.attr_count, &mut next)?;
        Ok(same && next == self.attr_slots.len())
    }

    /// [`CallLayout::refresh_attrs`] for one dictionary of `expected`
    /// entries, whose first entry is `attr_slots[*next]`; advances `next`
    /// past its entries.
    fn refresh_dict<A: AttrSource>(
        &mut self,
        source: &A,
        expected: usize,
        next: &mut usize,
    ) -> Result<bool, HandlerError> {
        if source.count() != expected {
            return Ok(false);
        }
        let mut same = true;
        let mut seen = 0;
        source.visit(|name, value| {
            seen += 1;
            let slot = match self.attr_slots.get(*next) {
                Some(&slot) if same && slot.name.1 == name.len() => slot,
                _ => {
                    same = false;
                    return Ok(());
                }
            };
            *next += 1;
            let scalar;
            let value = match value {
                AttrValue::Scalar(s) => {
                    scalar = s.to_le_bytes();
                    let bytes = &scalar.0[..scalar.1];
                    (abi::attr_type::SCALAR, s.dtype().to_xla(), 0, bytes)
                }
                AttrValue::Array(a) => (
                    abi::attr_type::ARRAY,
                    a.dtype().to_xla(),
                    a.len(),
                    a.bytes(),
                ),
                AttrValue::String(bytes) => (abi::attr_type::STRING, 0, 0, bytes),
                AttrValue::Dictionary(inner) => {
                    same = slot.kind == abi::attr_type::DICTIONARY
                        && self.refresh_dict(&inner, slot.count, next)?;
                    if same {
                        self.put_bytes(slot.name.0, name);
                    }
                    return Ok(());
                }
            };
            let (kind, dtype, count, bytes) = value;
            same = (slot.kind, slot.dtype, slot.count, slot.value.1)
                == (kind, dtype, count, bytes.len());
            if same {
                self.put_bytes(slot.name.0, name);
                self.put_bytes(slot.value.0, bytes);
            }
            Ok(())
        })?;
        Ok(same && seen == expected)
    }

    /// Encodes the dictionary `source` into the `XLA_FFI_Attrs` struct at
    /// header offset `at` (already reserved).
    fn encode_attrs<A: AttrSource>(&mut self, source: &A, at: u32) -> Result<(), HandlerError> {
        self.depth += 1;
        if self.depth > MAX_ATTR_DEPTH {
            return Err(HandlerError::invalid_argument(format!(
                "attribute dictionaries are nested deeper than {MAX_ATTR_DEPTH} levels"
            )));
        }
        let n = source.count();
        let types = self.reserve_array(n)?;
        let names = self.reserve_array(n)?;
        let values = self.reserve_array(n)?;
        self.put_u32(at + attrs::STRUCT_SIZE_OFFSET, attrs::STRUCT_SIZE);
        self.put_i64(
            at + attrs::SIZE_FIELD,
            i64::try_from(n).map_err(|_| too_big("attributes"))?,
        );
        self.put_u32(at + attrs::TYPES, self.addr(types)?);
        self.put_u32(at + attrs::NAMES, self.addr(names)?);
        self.put_u32(at + attrs::ATTRS, self.addr(values)?);
        let mut i: u32 = 0;
        source.visit(|name, value| {
            if i as usize >= n {
                return Err(HandlerError::internal(format!(
                    "the attribute dictionary announced {n} entries but holds more"
                )));
            }
            let (name_addr, name_at) = self.append_span(name)?;
            self.put_u32(names + 4 * i, name_addr);
            let mut slot = AttrSlot {
                kind: 0,
                dtype: 0,
                count: 0,
                name: (name_at, name.len()),
                value: (0, 0),
            };
            let (kind, value_addr) = match value {
                AttrValue::Scalar(value) => {
                    let (bytes, len) = value.to_le_bytes();
                    let dtype = value.dtype().to_xla();
                    let s = self.reserve(scalar::SIZE, scalar::ALIGN)?;
                    let v = self.append(&bytes[..len], 8)?;
                    self.put_u32(s + scalar::DTYPE, dtype);
                    self.put_u32(s + scalar::VALUE, self.addr(v)?);
                    (slot.dtype, slot.value) = (dtype, (v, len));
                    (abi::attr_type::SCALAR, self.addr(s)?)
                }
                AttrValue::Array(a) => {
                    let (dtype, len, data) = (a.dtype().to_xla(), a.len(), a.bytes());
                    let s = self.reserve(array::SIZE, array::ALIGN)?;
                    let d = self.append(data, 8)?;
                    self.put_u32(s + array::DTYPE, dtype);
                    self.put_u32(s + array::SIZE_FIELD, to_u32(len, "attribute array")?);
                    self.put_u32(s + array::DATA, self.addr(d)?);
                    (slot.dtype, slot.count, slot.value) = (dtype, len, (d, data.len()));
                    (abi::attr_type::ARRAY, self.addr(s)?)
                }
                AttrValue::String(bytes) => {
                    let (span, at) = self.append_span(bytes)?;
                    slot.value = (at, bytes.len());
                    (abi::attr_type::STRING, span)
                }
                AttrValue::Dictionary(inner) => {
                    let s = self.reserve(attrs::SIZE, attrs::ALIGN)?;
                    // The dictionary's entry comes before its own entries.
                    slot.kind = abi::attr_type::DICTIONARY;
                    slot.count = inner.count();
                    self.attr_slots.push(slot);
                    self.encode_attrs(&inner, s)?;
                    (abi::attr_type::DICTIONARY, self.addr(s)?)
                }
            };
            if kind != abi::attr_type::DICTIONARY {
                slot.kind = kind;
                self.attr_slots.push(slot);
            }
            self.put_u32(types + 4 * i, kind);
            self.put_u32(values + 4 * i, value_addr);
            i += 1;
            Ok(())
        })?;
        if i as usize != n {
            return Err(HandlerError::internal(format!(
                "the attribute dictionary announced {n} entries but holds {i}"
            )));
        }
        self.depth -= 1;
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// XLA's call frame as the layout reads it: the [`CallView`] of a
// [`CallFrame`] (its operands, results and attributes, copied in and out
// of guest memory) and the [`AttrSource`] of its attributes. Host-owned
// calls (`call.rs`) implement the same two traits.
// ---------------------------------------------------------------------------

impl<'a> CallView for CallFrame<'a> {
    type Attrs<'s>
        = Attrs<'a>
    where
        Self: 's;

    fn num_args(&self) -> usize {
        CallFrame::num_args(self)
    }

    fn num_rets(&self) -> usize {
        CallFrame::num_rets(self)
    }

    fn arg(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
        CallFrame::arg(self, i).map(view_desc)
    }

    fn ret(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
        CallFrame::ret(self, i).map(view_desc)
    }

    fn attrs(&self) -> Attrs<'a> {
        CallFrame::attrs(self)
    }

    #[inline]
    fn read_arg(
        &self,
        i: usize,
        _: Option<&BufferShape>,
        dst: &mut [u8],
        copier: Copier,
    ) -> Result<(), HandlerError> {
        read_view(CallFrame::arg(self, i)?, i, dst, copier)
    }

    #[inline]
    fn write_ret(
        &self,
        i: usize,
        _: Option<&BufferShape>,
        src: &[u8],
        copier: Copier,
    ) -> Result<(), HandlerError> {
        write_view(CallFrame::ret(self, i)?, i, src, copier)
    }
}

/// Copies operand `i`'s bytes, `view` of XLA's frame of the call in
/// progress, into `dst` (which must be as long: see [`with_data`]).
#[inline(always)]
fn read_view(
    view: BufferView<'_>,
    i: usize,
    dst: &mut [u8],
    copier: Copier,
) -> Result<(), HandlerError> {
    if let Some(view) = with_data(view, "operand", i, dst.len())? {
        // SAFETY: the frame is XLA's EXECUTE frame of the call in progress,
        // so the operand's data is valid for `byte_len` bytes until the
        // handler returns; no `&mut` to it is alive: result slices are only
        // made in `write_view`, after every operand was read and dropped.
        copier.copy(dst, unsafe { view.bytes() });
    }
    Ok(())
}

/// Copies `src` into result `i`, `view` of XLA's frame of the call in
/// progress (which must be as long: see [`with_data`]).
#[inline(always)]
fn write_view(
    view: BufferView<'_>,
    i: usize,
    src: &[u8],
    copier: Copier,
) -> Result<(), HandlerError> {
    if let Some(view) = with_data(view, "result", i, src.len())? {
        // SAFETY: result buffers are XLA's, valid and writable for
        // `byte_len` bytes during the call; the slice lives only for this
        // copy, and no operand slice is alive (operands are read before the
        // guest runs), so the exclusive borrow holds even when a result
        // aliases an operand.
        copier.copy_uninit(unsafe { view.uninit_bytes() }, src);
    }
    Ok(())
}

/// A buffer of a [`LazyFrame`] that its check refused: what was wrong,
/// named as for a frame checked in full.
#[cold]
#[inline(never)]
fn invalid_frame(e: HandlerError) -> HandlerError {
    HandlerError::new(e.code, format!("invalid call frame: {}", e.message))
}

/// XLA's call frame with its buffers checked as the layout reads them: a
/// buffer with the shape planned at this call site (the usual case) is
/// compared with it ([`LazyFrame::arg_shaped`]), any other checked in
/// full. Each buffer is so checked once per call, where a [`CallFrame`]
/// checks it in full and the layout compares it with the shape again.
impl<'a> CallView for LazyFrame<'a> {
    type Attrs<'s>
        = Attrs<'a>
    where
        Self: 's;

    fn num_args(&self) -> usize {
        LazyFrame::num_args(self)
    }

    fn num_rets(&self) -> usize {
        LazyFrame::num_rets(self)
    }

    fn arg(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
        LazyFrame::arg(self, i)
            .map(view_desc)
            .map_err(invalid_frame)
    }

    fn ret(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
        LazyFrame::ret(self, i)
            .map(view_desc)
            .map_err(invalid_frame)
    }

    fn attrs(&self) -> Attrs<'a> {
        LazyFrame::attrs(self)
    }

    #[inline]
    fn addr_if_like(
        &self,
        slot: usize,
        n_args: usize,
        like: &SlotShape<'_>,
    ) -> Result<Option<usize>, HandlerError> {
        let Some(checked) = like.checked else {
            return addr_if_desc_like(self, slot, n_args, like);
        };
        let view = if slot < n_args {
            self.arg_shaped(slot, checked)
        } else {
            self.ret_shaped(slot - n_args, checked)
        };
        Ok(view.map(|view| view.data_ptr().addr()))
    }

    #[inline]
    fn read_arg(
        &self,
        i: usize,
        checked: Option<&BufferShape>,
        dst: &mut [u8],
        copier: Copier,
    ) -> Result<(), HandlerError> {
        let view = match checked.and_then(|shape| self.arg_shaped(i, shape)) {
            Some(view) => view,
            None => LazyFrame::arg(self, i).map_err(invalid_frame)?,
        };
        read_view(view, i, dst, copier)
    }

    #[inline]
    fn write_ret(
        &self,
        i: usize,
        checked: Option<&BufferShape>,
        src: &[u8],
        copier: Copier,
    ) -> Result<(), HandlerError> {
        let view = match checked.and_then(|shape| self.ret_shaped(i, shape)) {
            Some(view) => view,
            None => LazyFrame::ret(self, i).map_err(invalid_frame)?,
        };
        write_view(view, i, src, copier)
    }
}

/// What the layout needs of a buffer of XLA's frame.
fn view_desc(view: BufferView<'_>) -> BufferDesc<'_> {
    BufferDesc {
        dtype: view.dtype(),
        dims: view.dims(),
        byte_len: view.byte_len(),
        addr: view.data_ptr().addr(),
    }
}

/// `view` (`what` `i` of the frame) if it has data to copy, checked to hold
/// the `len` bytes the layout planned for it; `None` for tokens and empty
/// arrays, whose data pointer must not be touched.
fn with_data<'a>(
    view: BufferView<'a>,
    what: &str,
    i: usize,
    len: usize,
) -> Result<Option<BufferView<'a>>, HandlerError> {
    let held = view.byte_len();
    if held == 0 {
        return Ok(None);
    }
    if held != len {
        return Err(HandlerError::internal(format!(
            "{what} {i} holds {held} bytes, the layout expected {len}"
        )));
    }
    Ok(Some(view))
}

impl<'a> AttrSource for Attrs<'a> {
    fn count(&self) -> usize {
        self.len()
    }

    fn visit<F>(&self, mut f: F) -> Result<(), HandlerError>
    where
        F: FnMut(&[u8], AttrValue<'_, Self>) -> Result<(), HandlerError>,
    {
        for entry in self.iter() {
            let (name, attr) = entry?;
            let value = match attr {
                Attr::Scalar(scalar) => AttrValue::Scalar(scalar),
                Attr::Array(array) => AttrValue::Array(*array),
                Attr::String(bytes) => AttrValue::String(bytes),
                Attr::Dictionary(inner) => AttrValue::Dictionary(inner),
            };
            f(name, value)?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::call::{HostAttr, HostBuffer, HostCall};
    use cyxla_xla_types::attr::Scalar;
    use plugin_glue::DType;

    fn u32_at(bytes: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
    }

    fn i64_at(bytes: &[u8], at: usize) -> i64 {
        i64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
    }

    /// `call` planned at `base` with the API table at `api`.
    fn planned(call: &HostCall, base: u32, api: u32) -> CallLayout {
        let mut layout = CallLayout::default();
        layout.plan(call, base, api).unwrap();
        assert_eq!(layout.base, base);
        layout
    }

    /// Reads the header as a guest would, with `base` subtracted.
    struct Reader<'a> {
        header: &'a [u8],
        base: u32,
    }

    impl Reader<'_> {
        /// Reads `layout`'s header at the addresses the guest sees.
        fn of(layout: &CallLayout) -> Reader<'_> {
            Reader {
                header: &layout.header,
                base: layout.base,
            }
        }
        fn at(&self, addr: u32) -> usize {
            (addr - self.base) as usize
        }
        fn u32(&self, addr: u32) -> u32 {
            u32_at(self.header, self.at(addr))
        }
        fn i64(&self, addr: u32) -> i64 {
            i64_at(self.header, self.at(addr))
        }
        fn span(&self, addr: u32) -> &[u8] {
            let ptr = self.u32(addr + byte_span::PTR);
            let len = self.u32(addr + byte_span::LEN) as usize;
            &self.header[self.at(ptr)..self.at(ptr) + len]
        }
    }

    /// A layout planned call after call (which keeps the header while the
    /// shape holds and redoes only the attributes) equals a layout
    /// planned afresh for each call: same header bytes, regions and fills.
    #[test]
    fn planning_again_equals_planning_afresh() {
        let buffers = |call: HostCall, dims: &[i64]| {
            let n = dims.iter().product::<i64>() as usize;
            call.arg(HostBuffer::new(DType::F32, dims, vec![0; 4 * n]))
                .ret(HostBuffer::new(DType::F32, dims, vec![0; 4 * n]))
        };
        let scalar = |v: f32| HostAttr::Scalar(Scalar::F32(v));
        let string = |s: &str| HostAttr::String(s.as_bytes().to_vec());
        let calls = [
            buffers(HostCall::new(), &[2, 3]).attr("eps", scalar(1e-6)),
            buffers(HostCall::new(), &[2, 3]).attr("eps", scalar(1e-6)),
            buffers(HostCall::new(), &[2, 3]).attr("eps", scalar(0.5)),
            buffers(HostCall::new(), &[2, 3])
                .attr("eps", scalar(0.5))
                .attr(
                    "mode",
                    string("a much longer attribute than before, past one region"),
                ),
            buffers(HostCall::new(), &[3, 2]).attr("eps", scalar(0.5)),
            buffers(HostCall::new(), &[3, 2]),
            buffers(HostCall::new(), &[3, 2]),
            buffers(HostCall::new(), &[3, 2]).arg(HostBuffer::new(DType::S32, &[1], vec![0; 4])),
            HostCall::new()
                .arg(HostBuffer::new(DType::F32, &[3, 2], vec![0; 24]))
                .ret_alias(0),
            buffers(HostCall::new(), &[3, 2]),
            buffers(HostCall::new(), &[2, 3]).attr("eps", scalar(1e-6)),
        ];
        let mut again = CallLayout::default();
        // In order, each at one base twice and then another; then calls of
        // one shape in turn: aliased and not (same addresses or not), with
        // and without attributes.
        let order = (0..calls.len())
            .flat_map(|i| [(i, 0x1_0000), (i, 0x1_0000), (i, 0x2_0000)])
            .chain(
                [8, 9, 8, 8, 9, 9, 4, 5, 5, 4, 6, 6, 5]
                    .into_iter()
                    .map(|i| (i, 0x1_0000)),
            );
        for (i, base) in order {
            let call = &calls[i];
            let mut fresh = CallLayout::default();
            fresh.plan(call, base, 0x400).unwrap();
            again.plan(call, base, 0x400).unwrap();
            assert_eq!(again.header, fresh.header, "call {i} at {base:#x}: header");
            assert_eq!(again.inputs, fresh.inputs, "call {i}: inputs");
            assert_eq!(again.outputs, fresh.outputs, "call {i}: outputs");
            assert_eq!(again.fills, fresh.fills, "call {i}: fills");
            assert_eq!(again.total, fresh.total, "call {i}: total");
        }
    }

    /// A call whose attributes have the structure the header was encoded
    /// for (kinds, dtypes, counts, byte lengths, entry by entry) gets them
    /// rewritten in place, and the header is byte for byte a fresh
    /// encoding's; any other change is refused (the caller then encodes
    /// anew). Either way, planning the call gives the fresh header.
    #[test]
    fn attributes_of_the_same_structure_are_rewritten_in_place() {
        let f32_ = |v: f32| HostAttr::Scalar(Scalar::F32(v));
        let s32 = |v: i32| HostAttr::Scalar(Scalar::S32(v));
        let f64_ = |v: f64| HostAttr::Scalar(Scalar::F64(v));
        let s64s = |v: &[i64]| {
            HostAttr::Array(
                DType::S64,
                v.len(),
                v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            )
        };
        let string = |s: &str| HostAttr::String(s.as_bytes().to_vec());
        let dict = |entries: Vec<(&str, HostAttr)>| {
            HostAttr::Dictionary(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            )
        };
        let call = |attrs: Vec<(&str, HostAttr)>| {
            attrs.into_iter().fold(
                HostCall::new()
                    .arg(HostBuffer::new(DType::F32, &[4], vec![0; 16]))
                    .ret(HostBuffer::new(DType::F32, &[4], vec![0; 16])),
                |call, (name, value)| call.attr(name, value),
            )
        };
        let first = || {
            vec![
                ("axes", s64s(&[0, 1])),
                ("eps", f32_(1e-6)),
                ("mode", string("fast")),
                ("nested", dict(vec![("a", s32(1)), ("b", string("xy"))])),
            ]
        };
        let with = |i: usize, entry: (&'static str, HostAttr)| {
            let mut attrs = first();
            attrs[i] = entry;
            attrs
        };
        type Attrs = Vec<(&'static str, HostAttr)>;
        let cases: Vec<(&str, Attrs, bool)> = vec![
            ("the same attributes", first(), true),
            (
                "new values of every kind",
                vec![
                    ("axes", s64s(&[5, -7])),
                    ("eps", f32_(0.25)),
                    ("mode", string("slow")),
                    ("nested", dict(vec![("a", s32(9)), ("b", string("zw"))])),
                ],
                true,
            ),
            (
                "a name of the same length",
                with(1, ("ept", f32_(1e-6))),
                true,
            ),
            (
                "a scalar of another dtype, same width",
                with(1, ("eps", s32(7))),
                false,
            ),
            ("a wider scalar", with(1, ("eps", f64_(1e-6))), false),
            ("a longer array", with(0, ("axes", s64s(&[0, 1, 2]))), false),
            (
                "a longer string",
                with(2, ("mode", string("faster"))),
                false,
            ),
            (
                "a string for a scalar",
                with(1, ("eps", string("abcd"))),
                false,
            ),
            ("a longer name", with(1, ("epsilon", f32_(1e-6))), false),
            ("one entry fewer", first()[..3].to_vec(), false),
            (
                "one entry more",
                [first(), vec![("zeta", f32_(2.0))]].concat(),
                false,
            ),
            (
                "a nested entry fewer",
                with(3, ("nested", dict(vec![("a", s32(1))]))),
                false,
            ),
            (
                "a nested dictionary for a string",
                with(
                    3,
                    (
                        "nested",
                        dict(vec![("a", s32(1)), ("b", dict(vec![("xy", s32(2))]))]),
                    ),
                ),
                false,
            ),
            ("no attributes", Vec::new(), false),
        ];
        let (base, api) = (0x1_0000, 0x400);
        for (what, attrs, kept) in cases {
            let next = call(attrs);
            let mut fresh = CallLayout::default();
            fresh.plan(&next, base, api).unwrap();
            let mut layout = CallLayout::default();
            layout.plan(&call(first()), base, api).unwrap();
            assert_eq!(
                layout.refresh_attrs(&next.attrs()).unwrap(),
                kept,
                "{what}: rewritten in place"
            );
            if kept {
                assert_eq!(layout.header, fresh.header, "{what}: header in place");
            }
            layout.plan(&next, base, api).unwrap();
            assert_eq!(layout.header, fresh.header, "{what}: header planned");
            assert_eq!(layout.total, fresh.total, "{what}: total");
        }
    }

    #[test]
    fn frame_buffers_and_regions() {
        let call = HostCall::new()
            .arg(HostBuffer::new(DType::F32, &[2, 3], vec![0; 24]))
            .arg(HostBuffer::new(DType::S64, &[], vec![0; 8]))
            .ret(HostBuffer::new(DType::F32, &[2, 3], vec![0; 24]));
        let base = 0x1_0000;
        let layout = planned(&call, base, 0x400);
        let r = Reader::of(&layout);
        assert_eq!(r.u32(base), 104);
        assert_eq!(r.u32(base + call_frame::EXTENSION_START), 0);
        assert_eq!(r.u32(base + call_frame::API), 0x400);
        assert_eq!(r.u32(base + call_frame::CTX), base + 112);
        assert_eq!(r.u32(base + call_frame::STAGE), 3);
        assert_eq!(r.u32(base + call_frame::FUTURE), 0);
        let a = base + call_frame::ARGS;
        assert_eq!(r.u32(a), 24);
        assert_eq!(r.i64(a + args::SIZE_FIELD), 2);
        let types = r.u32(a + args::TYPES);
        assert_eq!((r.u32(types), r.u32(types + 4)), (1, 1));
        let ptrs = r.u32(a + args::ARGS);
        let b0 = r.u32(ptrs);
        assert_eq!(b0 % 8, 0);
        assert_eq!(r.u32(b0), 28);
        assert_eq!(r.u32(b0 + buffer::DTYPE), 11);
        assert_eq!(r.i64(b0 + buffer::RANK), 2);
        let dims = r.u32(b0 + buffer::DIMS);
        assert_eq!((r.i64(dims), r.i64(dims + 8)), (2, 3));
        let b1 = r.u32(ptrs + 4);
        assert_eq!(r.i64(b1 + buffer::RANK), 0);
        assert_ne!(r.u32(b1 + buffer::DIMS), 0, "rank-0 dims are non-NULL");
        let rr = base + call_frame::RETS;
        assert_eq!(r.u32(rr), 24);
        assert_eq!(r.i64(rr + rets::SIZE_FIELD), 1);
        let ret0 = r.u32(r.u32(rr + rets::RETS));
        assert_eq!(r.u32(ret0 + buffer::DTYPE), 11);
        // Data regions: 64-aligned, after the header, in order, and the
        // buffers point at them.
        let regions: Vec<Region> = layout
            .inputs
            .iter()
            .chain(&layout.outputs)
            .copied()
            .collect();
        assert_eq!(
            regions.iter().map(|r| r.len).collect::<Vec<_>>(),
            [24, 8, 24]
        );
        let mut end = layout.header.len() as u32;
        for (region, buf) in regions.iter().zip([b0, b1, ret0]) {
            assert_eq!(region.offset % DATA_ALIGN, 0);
            assert!(region.offset >= end);
            end = region.offset + region.len;
            assert_eq!(r.u32(buf + buffer::DATA), base + region.offset);
        }
        assert!(layout.total >= end);
        // Attributes: an empty dictionary.
        let at = base + call_frame::ATTRS;
        assert_eq!(r.u32(at), 28);
        assert_eq!(r.i64(at + attrs::SIZE_FIELD), 0);
    }

    #[test]
    fn attributes_nest_and_keep_order() {
        let call = HostCall::new()
            .attr("a", HostAttr::Scalar(Scalar::S32(-3)))
            .attr(
                "b",
                HostAttr::Array(
                    DType::F64,
                    2,
                    [1.5f64.to_le_bytes(), 2.5f64.to_le_bytes()].concat(),
                ),
            )
            .attr(
                "d",
                HostAttr::Dictionary(vec![
                    ("x".into(), HostAttr::String(b"hi".to_vec())),
                    ("y".into(), HostAttr::Scalar(Scalar::Pred(true))),
                ]),
            )
            .attr("s", HostAttr::String(Vec::new()));
        let base = 0x2000;
        let layout = planned(&call, base, 0x10);
        let r = Reader::of(&layout);
        let at = base + call_frame::ATTRS;
        assert_eq!(r.i64(at + attrs::SIZE_FIELD), 4);
        let types = r.u32(at + attrs::TYPES);
        let names = r.u32(at + attrs::NAMES);
        let values = r.u32(at + attrs::ATTRS);
        let kinds: Vec<u32> = (0..4).map(|i| r.u32(types + 4 * i)).collect();
        assert_eq!(kinds, [3, 1, 2, 4]);
        let name_list: Vec<&[u8]> = (0..4).map(|i| r.span(r.u32(names + 4 * i))).collect();
        assert_eq!(name_list, [&b"a"[..], b"b", b"d", b"s"]);
        let s = r.u32(values);
        assert_eq!(r.u32(s + scalar::DTYPE), 4);
        let v = r.u32(s + scalar::VALUE);
        assert_eq!(v % 8, 0);
        assert_eq!(r.u32(v) as i32, -3);
        let arr = r.u32(values + 4);
        assert_eq!(r.u32(arr + array::DTYPE), 12);
        assert_eq!(r.u32(arr + array::SIZE_FIELD), 2);
        let data = r.u32(arr + array::DATA);
        assert_eq!(f64::from_bits(r.i64(data + 8) as u64), 2.5);
        let dict = r.u32(values + 8);
        assert_eq!(r.u32(dict), 28);
        assert_eq!(r.i64(dict + attrs::SIZE_FIELD), 2);
        let inner_names = r.u32(dict + attrs::NAMES);
        assert_eq!(r.span(r.u32(inner_names + 4)), b"y");
        let inner_values = r.u32(dict + attrs::ATTRS);
        assert_eq!(r.span(r.u32(inner_values)), b"hi");
        assert_eq!(r.span(r.u32(values + 12)), b"");
    }

    #[test]
    fn empty_buffers_and_tokens_get_valid_pointers() {
        let call = HostCall::new()
            .arg(HostBuffer::zeros(DType::Token, &[]))
            .arg(HostBuffer::zeros(DType::F32, &[0, 3]))
            .ret(HostBuffer::zeros(DType::F32, &[2]));
        let base = 0x4000;
        let layout = planned(&call, base, 0x10);
        let r = Reader::of(&layout);
        let ptrs = r.u32(base + call_frame::ARGS + args::ARGS);
        let token = r.u32(ptrs);
        assert_eq!(r.u32(token + buffer::DTYPE), 17);
        assert_eq!(r.i64(token + buffer::RANK), 0);
        assert_ne!(r.u32(token + buffer::DATA), 0);
        let empty = r.u32(ptrs + 4);
        assert_eq!(r.i64(empty + buffer::RANK), 2);
        let dims = r.u32(empty + buffer::DIMS);
        assert_eq!((r.i64(dims), r.i64(dims + 8)), (0, 3));
        assert_ne!(r.u32(empty + buffer::DATA), 0);
        assert_eq!(layout.inputs.iter().map(|r| r.len).sum::<u32>(), 0);
        assert_eq!(layout.outputs[0].len, 8);
    }

    /// A buffer at a native address: `(dtype, byte_len, addr)`.
    type At = (DType, usize, usize);

    /// A call whose buffers claim native addresses (each of rank 1, of
    /// its byte length; tokens of rank 0).
    struct AddrCall {
        /// Operands, then results, each with its dims.
        slots: Vec<(At, Vec<i64>)>,
        n_args: usize,
    }

    impl AddrCall {
        fn new(args: &[At], rets: &[At]) -> AddrCall {
            let slots = args
                .iter()
                .chain(rets)
                .map(|&(dtype, byte_len, addr)| {
                    let dims = match dtype.bits() {
                        0 => Vec::new(),
                        bits => vec![(byte_len as u64 * 8 / u64::from(bits)) as i64],
                    };
                    ((dtype, byte_len, addr), dims)
                })
                .collect();
            AddrCall {
                slots,
                n_args: args.len(),
            }
        }

        /// Operand `slot`, or result `slot - n_args`.
        fn slot(&self, slot: usize) -> Result<BufferDesc<'_>, HandlerError> {
            let ((dtype, byte_len, addr), dims) = &self.slots[slot];
            Ok(BufferDesc {
                dtype: *dtype,
                dims,
                byte_len: *byte_len,
                addr: *addr,
            })
        }
    }

    impl CallView for AddrCall {
        type Attrs<'s> = &'s [(String, HostAttr)];
        fn num_args(&self) -> usize {
            self.n_args
        }
        fn num_rets(&self) -> usize {
            self.slots.len() - self.n_args
        }
        fn arg(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
            assert!(i < self.n_args, "operand {i} of {}", self.n_args);
            self.slot(i)
        }
        fn ret(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
            self.slot(self.n_args + i)
        }
        fn attrs(&self) -> &[(String, HostAttr)] {
            &[]
        }
        fn read_arg(
            &self,
            _: usize,
            _: Option<&BufferShape>,
            _: &mut [u8],
            _: Copier,
        ) -> Result<(), HandlerError> {
            unreachable!("planning reads no data")
        }
        fn write_ret(
            &self,
            _: usize,
            _: Option<&BufferShape>,
            _: &[u8],
            _: Copier,
        ) -> Result<(), HandlerError> {
            unreachable!("planning writes no data")
        }
    }

    fn plan(args: &[At], rets: &[At]) -> CallLayout {
        try_plan(args, rets).unwrap()
    }

    fn try_plan(args: &[At], rets: &[At]) -> Result<CallLayout, HandlerError> {
        let call = AddrCall::new(args, rets);
        let mut layout = CallLayout::default();
        layout.plan(&call, 0x1_0000, 0x10)?;
        Ok(layout)
    }

    /// The data pointers the guest sees: operands, then results.
    fn data_pointers(layout: &CallLayout) -> Vec<u32> {
        let r = Reader::of(layout);
        let mut out = Vec::new();
        for (field, n) in [
            (call_frame::ARGS + args::ARGS, layout.inputs.len()),
            (call_frame::RETS + rets::RETS, layout.outputs.len()),
        ] {
            let ptrs = r.u32(layout.base + field);
            for i in 0..n as u32 {
                out.push(r.u32(r.u32(ptrs + 4 * i) + buffer::DATA));
            }
        }
        out
    }

    #[test]
    fn a_result_aliased_with_an_operand_shares_its_region() {
        use DType::F32;
        // x, w, y = x (XLA's input_output_aliases {0: 0}), z.
        let layout = plan(
            &[(F32, 24, 0x1000), (F32, 8, 0x2000)],
            &[(F32, 24, 0x1000), (F32, 8, 0x3000)],
        );
        assert_eq!(layout.outputs[0], layout.inputs[0]);
        assert_ne!(layout.outputs[1], layout.inputs[1]);
        let ptrs = data_pointers(&layout);
        assert_eq!(ptrs[2], ptrs[0], "the guest sees one address");
        assert_ne!(ptrs[3], ptrs[1]);
        // Three regions, filled once each, in order: x's bytes, w's, zeros.
        let fills: Vec<(Region, Source)> =
            layout.fills.iter().map(|f| (f.region, f.source)).collect();
        assert_eq!(
            fills,
            [
                (layout.inputs[0], Source::Operand(0)),
                (layout.inputs[1], Source::Operand(1)),
                (layout.outputs[1], Source::Unfilled),
            ]
        );
        assert!(
            fills
                .windows(2)
                .all(|w| w[0].0.offset + w[0].0.len <= w[1].0.offset)
        );
        // Less scratch than without the alias.
        let unaliased = plan(
            &[(F32, 24, 0x1000), (F32, 8, 0x2000)],
            &[(F32, 24, 0x5000), (F32, 8, 0x3000)],
        );
        assert_eq!(unaliased.fills.len(), 4);
        assert!(layout.total < unaliased.total);
    }

    #[test]
    fn a_result_may_alias_a_later_operand_and_operands_share_a_region() {
        use DType::F64;
        // x, x again (the same buffer passed twice), v; y aliases v.
        let layout = plan(
            &[(F64, 16, 0x1000), (F64, 16, 0x1000), (F64, 8, 0x9000)],
            &[(F64, 8, 0x9000)],
        );
        assert_eq!(layout.inputs[1], layout.inputs[0]);
        assert_eq!(layout.outputs[0], layout.inputs[2]);
        let sources: Vec<Source> = layout.fills.iter().map(|f| f.source).collect();
        assert_eq!(sources, [Source::Operand(0), Source::Operand(2)]);
    }

    #[test]
    fn tokens_and_empty_buffers_alias_nothing() {
        use DType::{F32, Token};
        // A token's data pointer aliases another buffer; an empty result at
        // an operand's address is not an alias either.
        let layout = plan(
            &[(F32, 8, 0x1000), (Token, 0, 0x1000)],
            &[(Token, 0, 0x1000), (F32, 0, 0x1000), (F32, 8, 0x2000)],
        );
        assert_eq!(layout.fills.len(), 5);
        let sources: Vec<Source> = layout.fills.iter().map(|f| f.source).collect();
        assert_eq!(
            sources,
            [
                Source::Operand(0),
                Source::Operand(1),
                Source::Unfilled,
                Source::Unfilled,
                Source::Unfilled
            ]
        );
        assert_eq!(layout.outputs[2].len, 8);
        assert_ne!(layout.outputs[2].offset, layout.inputs[0].offset);
    }

    #[test]
    fn partial_overlaps_are_refused_naming_both_buffers() {
        use DType::{F32, F64};
        let cases: [(&[At], &[At], &str); 5] = [
            // A result inside an operand.
            (
                &[(F32, 24, 0x1000)],
                &[(F32, 8, 0x1008)],
                "operand 0 (24 bytes) and result 0 (8 bytes) overlap",
            ),
            // Same start, different size.
            (
                &[(F64, 24, 0x1000)],
                &[(F64, 16, 0x1000)],
                "operand 0 (24 bytes) and result 0 (16 bytes) overlap",
            ),
            // A result straddling the end of one operand, after an exact
            // alias of another.
            (
                &[(F32, 16, 0x1000), (F32, 16, 0x2000)],
                &[(F32, 16, 0x1000), (F32, 16, 0x2008)],
                "operand 1 (16 bytes) and result 1 (16 bytes) overlap",
            ),
            // An operand starting inside a result.
            (
                &[(F32, 8, 0x2000), (F32, 64, 0x1ff8)],
                &[(F32, 16, 0x1ff0)],
                "overlap in XLA's memory without being the same buffer",
            ),
            // Two results.
            (
                &[],
                &[(F32, 16, 0x1000), (F32, 16, 0x1008)],
                "result 0 (16 bytes) and result 1 (16 bytes) overlap",
            ),
        ];
        for (args, rets, expected) in cases {
            let error = try_plan(args, rets).unwrap_err();
            assert_eq!(error.code, ErrorCode::InvalidArgument);
            assert!(
                error.message.contains(expected)
                    && error
                        .message
                        .ends_with("only aliases a result with an operand at the same address and of the same size"),
                "{args:?} {rets:?}: {}",
                error.message
            );
        }
        let error = try_plan(&[], &[(F32, 16, 0x1000), (F32, 16, 0x1000)]).unwrap_err();
        assert!(
            error.message.starts_with(
                "result 0 (16 bytes) and result 1 (16 bytes) are the same memory in XLA"
            ),
            "{}",
            error.message
        );
        // Operands may overlap each other partially: read-only, each gets
        // its own copy.
        let layout = plan(&[(F32, 16, 0x1000), (F32, 16, 0x1008)], &[]);
        assert_ne!(layout.inputs[0], layout.inputs[1]);
        assert_eq!(layout.fills.len(), 2);
    }

    #[test]
    fn buffers_that_move_between_calls_alias_as_planning_afresh_finds() {
        use DType::{F32, Token};
        // One layout across a call site's calls, whose buffers move from
        // call to call as XLA's do; each call must come out as planning it
        // afresh does: the same regions, or the same error.
        // Per call: the addresses of a 16-byte operand, a token and a
        // 16-byte result.
        let steps: [(usize, usize, usize); 7] = [
            // Disjoint, with the token at the operand's address.
            (0x1000, 0x1000, 0x2000),
            // Moved, still disjoint (the fast path).
            (0x3000, 0x3000, 0x3010),
            // The result moved onto the operand: they alias.
            (0x4000, 0x9000, 0x4000),
            // Apart again.
            (0x4000, 0x9000, 0x5000),
            // Overlapping without being the same buffer.
            (0x6000, 0x9000, 0x6008),
            // Disjoint after the error.
            (0x7000, 0x7000, 0x7010),
            // Touching but not sharing a byte, the other way round.
            (0x8010, 0x8010, 0x8000),
        ];
        let mut layout = CallLayout::default();
        for (step, (operand, token, result)) in steps.into_iter().enumerate() {
            let (args, rets) = (
                &[(F32, 16, operand), (Token, 0, token)][..],
                &[(F32, 16, result)][..],
            );
            let call = AddrCall::new(args, rets);
            let got = layout.plan(&call, 0x1_0000, 0x10);
            match (got, try_plan(args, rets)) {
                (Ok(()), Ok(fresh)) => {
                    assert_eq!(
                        (
                            &layout.inputs,
                            &layout.outputs,
                            &layout.fills,
                            &layout.header
                        ),
                        (&fresh.inputs, &fresh.outputs, &fresh.fills, &fresh.header),
                        "step {step}"
                    );
                }
                (Err(got), Err(fresh)) => assert_eq!(got, fresh, "step {step}"),
                (got, fresh) => panic!(
                    "step {step}: {got:?} against afresh {:?}",
                    fresh.map(|_| ())
                ),
            }
        }
    }

    #[test]
    fn host_calls_declare_aliases() {
        let call = HostCall::new()
            .arg(HostBuffer::f32(&[3], &[1.0, 2.0, 3.0]))
            .ret_alias(0);
        let mut layout = CallLayout::default();
        layout.plan(&call, 0x1_0000, 0x10).unwrap();
        assert_eq!(layout.outputs[0], layout.inputs[0]);
        assert_eq!(layout.fills.len(), 1);
        let call = HostCall::new()
            .arg(HostBuffer::f32(&[3], &[1.0, 2.0, 3.0]))
            .ret_overlapping(0, 4, HostBuffer::zeros(DType::F32, &[2]));
        let error = layout.plan(&call, 0x1_0000, 0x10).unwrap_err();
        assert!(
            error
                .message
                .starts_with("operand 0 (12 bytes) and result 0 (8 bytes) overlap"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_buffer_must_hold_the_size_of_its_shape() {
        let mut layout = CallLayout::default();
        for (dims, len) in [(&[2, 3][..], 20), (&[2, 3][..], 28), (&[-1][..], 0)] {
            let call = HostCall::new().ret(HostBuffer::sized(DType::F32, dims, len));
            let error = layout.plan(&call, 0x1_0000, 0x10).unwrap_err();
            assert_eq!(error.code, ErrorCode::InvalidArgument);
            assert!(
                error.message.starts_with(&format!(
                    "result 0 holds {len} bytes, not the size of a f32"
                )),
                "{}",
                error.message
            );
        }
        let call = HostCall::new().arg(HostBuffer::sized(DType::Pred, &[3], 3));
        layout.plan(&call, 0x1_0000, 0x10).unwrap();
    }

    #[test]
    fn a_frame_that_cannot_fit_is_refused() {
        let call = HostCall::new().arg(HostBuffer::zeros(DType::U8, &[4096]));
        let mut layout = CallLayout::default();
        let err = layout.plan(&call, u32::MAX - 1024, 0).unwrap_err();
        assert_eq!(err.code, ErrorCode::ResourceExhausted);
    }
}
