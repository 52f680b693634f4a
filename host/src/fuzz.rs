//! Entry points for fuzzing (the cargo-fuzz targets in `fuzz/` and the
//! stable smoke test `host/tests/fuzz_smoke.rs` call them). Each takes
//! arbitrary bytes, builds an input from them, runs host code that handles
//! operator or XLA input, and checks an oracle: it panics only if a promise
//! is broken.
//!
//! - [`call_layout`]: a native call (operands, results, nested attributes)
//!   laid out as a wasm32 frame by the host's layout code; the frame is
//!   decoded back as a guest would and compared with the call.
//! - [`limits_file`]: a guest's limits side file, parsed and applied.
//! - [`limit_flag`]: a `--limit NAME=VALUE` flag, parsed and applied.
//!
//! Not a stable API.

use cyxla_guest_abi::{self as abi, call_frame};
use cyxla_guest_sdk as sdk;
use plugin_glue::DType;

use crate::call::{HostAttr, HostBuffer, HostCall};
use crate::layout::{CallLayout, DATA_ALIGN, Source};
use crate::limits::{LimitOverrides, Limits};

/// Reads values out of fuzzer bytes; zeros once they run out.
struct Input<'a> {
    data: &'a [u8],
}

impl Input<'_> {
    fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.u8()).collect()
    }

    fn dtype(&mut self) -> DType {
        const TYPES: [DType; 12] = [
            DType::Pred,
            DType::S8,
            DType::S32,
            DType::S64,
            DType::U8,
            DType::U64,
            DType::F16,
            DType::Bf16,
            DType::F32,
            DType::F64,
            DType::C128,
            DType::Token,
        ];
        TYPES[usize::from(self.u8()) % TYPES.len()]
    }

    fn buffer(&mut self) -> HostBuffer {
        let dtype = self.dtype();
        let rank = usize::from(self.u8() % 4);
        let dims: Vec<i64> = (0..rank).map(|_| i64::from(self.u8() % 5)).collect();
        let count: u64 = dims.iter().map(|&d| d as u64).product();
        let len = dtype.byte_size(count).unwrap_or(0) as usize;
        let data = self.bytes(len);
        HostBuffer::from_parts(dtype, &dims, data)
    }

    fn name(&mut self) -> String {
        let n = usize::from(self.u8() % 6);
        String::from_utf8_lossy(&self.bytes(n)).into_owned()
    }

    fn attr(&mut self, depth: usize) -> HostAttr {
        match self.u8() % 5 {
            0 => {
                let dtype = self.dtype();
                let n = dtype.byte_size(1).unwrap_or(0) as usize;
                HostAttr::Scalar(dtype, self.bytes(n))
            }
            1 => {
                let dtype = self.dtype();
                let len = usize::from(self.u8() % 6);
                let n = dtype.byte_size(len as u64).unwrap_or(0) as usize;
                HostAttr::Array(dtype, len, self.bytes(n))
            }
            2 => {
                let n = usize::from(self.u8() % 9);
                HostAttr::String(self.bytes(n))
            }
            3 if depth < 3 => HostAttr::Dictionary(self.attrs(depth + 1)),
            // Deep nesting, past the layout's limit of 32 levels sometimes.
            4 if depth == 0 => {
                let levels = usize::from(self.u8() % 40);
                let mut value = HostAttr::String(b"leaf".to_vec());
                for _ in 0..levels {
                    value = HostAttr::Dictionary(vec![("d".into(), value)]);
                }
                value
            }
            _ => HostAttr::String(Vec::new()),
        }
    }

    fn attrs(&mut self, depth: usize) -> Vec<(String, HostAttr)> {
        let n = usize::from(self.u8() % 4);
        (0..n).map(|_| (self.name(), self.attr(depth))).collect()
    }
}

/// Checks that the SDK decoded `expected` from the frame: names, kinds,
/// dtypes, lengths and bytes, nested dictionaries too.
fn check_attrs(got: sdk::Attrs<'_>, expected: &[(String, HostAttr)]) {
    assert_eq!(got.len(), expected.len(), "attribute count");
    for (i, (name, value)) in expected.iter().enumerate() {
        let entry = got.entry(i);
        if let HostAttr::Scalar(dtype, _) = value
            && !is_scalar_attribute(*dtype)
        {
            // XLA delivers no such scalar; the SDK refuses it, naming it.
            let error = entry.expect_err("a scalar of a type XLA does not deliver");
            assert!(error.message.contains("unsupported"), "{}", error.message);
            continue;
        }
        let (got_name, got_value) =
            entry.unwrap_or_else(|e| panic!("attribute {i} ({name:?}): {}", e.message));
        assert_eq!(got_name, name.as_bytes());
        match (value, got_value) {
            (HostAttr::Scalar(dtype, bytes), sdk::Attr::Scalar(scalar)) => {
                assert_eq!(scalar.dtype(), *dtype);
                match scalar {
                    sdk::Scalar::Pred(v) => assert_eq!(v, bytes[0] != 0),
                    _ => assert_eq!(scalar_le_bytes(&scalar), *bytes),
                }
            }
            (HostAttr::Array(dtype, len, bytes), sdk::Attr::Array(array)) => {
                assert_eq!((array.dtype(), array.len()), (*dtype, *len));
                assert_eq!(array.bytes(), bytes.as_slice());
            }
            (HostAttr::String(bytes), sdk::Attr::String(got)) => assert_eq!(got, bytes.as_slice()),
            (HostAttr::Dictionary(inner), sdk::Attr::Dictionary(got)) => check_attrs(got, inner),
            (expected, got) => panic!("attribute {name:?}: laid out {expected:?}, decoded {got:?}"),
        }
    }
}

/// Whether XLA delivers scalar attributes of `dtype` (the SDK decodes
/// exactly these).
fn is_scalar_attribute(dtype: DType) -> bool {
    use DType::*;
    matches!(
        dtype,
        Pred | S8 | S16 | S32 | S64 | U8 | U16 | U32 | U64 | F32 | F64
    )
}

/// A decoded scalar's little-endian bytes.
fn scalar_le_bytes(scalar: &sdk::Scalar) -> Vec<u8> {
    match *scalar {
        sdk::Scalar::Pred(v) => vec![u8::from(v)],
        sdk::Scalar::S8(v) => v.to_le_bytes().to_vec(),
        sdk::Scalar::S16(v) => v.to_le_bytes().to_vec(),
        sdk::Scalar::S32(v) => v.to_le_bytes().to_vec(),
        sdk::Scalar::S64(v) => v.to_le_bytes().to_vec(),
        sdk::Scalar::U8(v) => vec![v],
        sdk::Scalar::U16(v) => v.to_le_bytes().to_vec(),
        sdk::Scalar::U32(v) => v.to_le_bytes().to_vec(),
        sdk::Scalar::U64(v) => v.to_le_bytes().to_vec(),
        sdk::Scalar::F32(v) => v.to_le_bytes().to_vec(),
        sdk::Scalar::F64(v) => v.to_le_bytes().to_vec(),
    }
}

/// The depth of the deepest dictionary in `attrs` (1 for a flat one).
fn depth(attrs: &[(String, HostAttr)]) -> usize {
    1 + attrs
        .iter()
        .map(|(_, v)| match v {
            HostAttr::Dictionary(inner) => depth(inner),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// Lays out a call built from `data` for a scratch region at a base taken
/// from `data`, then checks the frame a guest would read: struct sizes,
/// stage, counts, each buffer's type, rank, dims and data pointer, every
/// attribute's name, type and value, and data regions that are 64-byte
/// aligned, disjoint, after the header and inside the planned total, except
/// that a result aliased with an operand (unless empty or a token) has that
/// operand's region.
///
/// # Panics
///
/// When the layout breaks one of these (a bug), never on odd input.
pub fn call_layout(data: &[u8]) {
    let mut input = Input { data };
    // The scratch base is 8-aligned and not 0 (the host checks what
    // `cyxla_alloc` returns: 0 is its failure).
    let base = match input.u8() % 3 {
        0 => (input.u32() & !7).max(8),
        1 => (u32::MAX - (input.u32() & 0xffff)) & !7,
        _ => 0x1_0000,
    };
    let api = input.u32();
    let mut call = HostCall::new();
    let n_args = usize::from(input.u8() % 5);
    let n_rets = usize::from(input.u8() % 4);
    let mut buffers = Vec::new();
    for _ in 0..n_args {
        let b = input.buffer();
        buffers.push(b.clone());
        call = call.arg(b);
    }
    // Per result, the operand it is aliased with (as XLA's
    // `input_output_aliases` makes it), if any.
    let mut aliases = Vec::new();
    for _ in 0..n_rets {
        if n_args > 0 && input.u8().is_multiple_of(3) {
            let i = usize::from(input.u8()) % n_args;
            buffers.push(buffers[i].clone());
            aliases.push(Some(i));
            call = call.ret_alias(i);
        } else {
            let b = input.buffer();
            buffers.push(b.clone());
            aliases.push(None);
            call = call.ret(b);
        }
    }
    // Aliases that share a region: tokens and empty buffers alias nothing.
    let shares = |i: usize| !buffers[i].bytes().is_empty() && buffers[i].dtype() != DType::Token;
    let shared: Vec<Option<usize>> = aliases
        .iter()
        .map(|alias| alias.filter(|&i| shares(i)))
        .collect();
    let shared_twice = shared
        .iter()
        .enumerate()
        .any(|(j, a)| a.is_some() && shared[..j].contains(a));
    let attributes = input.attrs(0);
    for (name, value) in &attributes {
        call = call.attr(name, value.clone());
    }

    let mut layout = CallLayout::default();
    let result = layout.plan(&call, base, api);
    if depth(&attributes) > 32 {
        assert!(
            result.is_err(),
            "attributes nested past the limit were accepted"
        );
        return;
    }
    if shared_twice {
        // Two results at one operand's address cannot both be copied out.
        assert!(
            result.is_err(),
            "two results aliasing one operand were accepted"
        );
        return;
    }
    if result.is_err() {
        // Only a frame that does not fit below 4 GiB may be refused (these
        // frames are all far smaller than 1 MiB).
        assert!(
            base > u32::MAX - (1 << 20),
            "a small frame at {base:#x} was refused: {result:?}"
        );
        return;
    }

    let header = &layout.header;
    assert!(header.len() as u64 <= u64::from(layout.total));
    assert!(u64::from(base) + u64::from(layout.total) <= u64::from(u32::MAX));
    // The fields the SDK does not expose: the API table and the future.
    let word =
        |at: u32| u32::from_le_bytes(header[at as usize..][..4].try_into().unwrap_or([0; 4]));
    assert_eq!(word(call_frame::API), api);
    assert_eq!(word(call_frame::FUTURE), 0);
    assert_eq!(layout.inputs.len(), n_args);
    assert_eq!(layout.outputs.len(), n_rets);

    // The rest as a guest reads it, with the SDK's own decoder, from the
    // scratch region (8-aligned words, as guest memory is) at `base`.
    let total = layout.total as usize;
    let mut words = vec![0u64; total.div_ceil(8)];
    // SAFETY: u64s are 8 bytes each, so the Vec's memory holds at least
    // `total` initialised bytes; the slice replaces `words` while it lives.
    let memory = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), total) };
    memory[..header.len()].copy_from_slice(header);
    for fill in &layout.fills {
        if let Source::Operand(i) = fill.source {
            let region =
                fill.region.offset as usize..(fill.region.offset + fill.region.len) as usize;
            memory[region].copy_from_slice(&buffers[i].bytes());
        }
    }
    let memory_at = memory.as_ptr().addr();
    // The guest address of a decoded slice.
    let address = |bytes: &[u8]| base as usize + (bytes.as_ptr().addr() - memory_at);

    // Operands and attributes first; then, decoded again (a handler that
    // views an operand may not take the result that aliases it), results.
    // SAFETY: results' data overlaps nothing else the frame refers to: the
    // layout puts each in a region of its own after the header (checked
    // below from the decoded addresses), or in its operand's.
    let frame = unsafe { sdk::CallFrame::from_memory_at(&mut *memory, base, base) }
        .unwrap_or_else(|e| panic!("the SDK refused the frame: {}", e.message));
    assert_eq!(frame.address(), base);
    assert_eq!(frame.stage(), abi::execution_stage::EXECUTE);
    assert_eq!((frame.num_args(), frame.num_rets()), (n_args, n_rets));
    let mut decoded = Vec::new();
    for (i, expected) in buffers.iter().enumerate().take(n_args) {
        let b = frame
            .any_arg(i)
            .unwrap_or_else(|e| panic!("operand {i}: {}", e.message));
        let bytes = b.bytes().expect("operand data inside memory");
        assert_eq!(bytes, expected.bytes(), "operand {i}'s bytes");
        if !bytes.is_empty() {
            assert_eq!(
                address(bytes),
                base as usize + layout.inputs[i].offset as usize
            );
        }
        decoded.push((b.dtype(), b.dims().to_vec(), b.byte_len()));
    }
    check_attrs(frame.attrs(), &attributes);
    // SAFETY: as above; the first view is no longer used.
    let frame = unsafe { sdk::CallFrame::from_memory_at(&mut *memory, base, base) }
        .expect("the same frame decodes twice");
    for (j, &alias) in shared.iter().enumerate() {
        assert_eq!(
            frame.aliased_arg(j).expect("a well-formed result"),
            alias,
            "result {j}'s aliased operand"
        );
        let b = frame
            .any_ret(j)
            .unwrap_or_else(|e| panic!("result {j}: {}", e.message));
        decoded.push((b.dtype(), b.dims().to_vec(), b.byte_len()));
        let bytes = b.into_bytes().expect("result data inside memory");
        if !bytes.is_empty() {
            assert_eq!(
                address(bytes),
                base as usize + layout.outputs[j].offset as usize
            );
        }
        if let Some(operand) = shared[j] {
            assert_eq!(
                *bytes,
                buffers[operand].bytes(),
                "result {j} starts as its operand"
            );
        }
    }

    let mut end = header.len() as u64;
    for (slot, expected) in buffers.iter().enumerate() {
        assert_eq!(
            decoded[slot],
            (
                expected.dtype(),
                expected.dims().to_vec(),
                expected.bytes().len()
            ),
            "dtype, dims and size of buffer {slot}"
        );
        let region = match slot.checked_sub(n_args) {
            None => layout.inputs[slot],
            Some(j) => layout.outputs[j],
        };
        assert_eq!(region.len as usize, expected.bytes().len());
        assert_eq!(region.offset % DATA_ALIGN, 0);
        if let Some(operand) = slot.checked_sub(n_args).and_then(|j| shared[j]) {
            // One region for the result and its operand.
            assert_eq!(
                region,
                layout.inputs[operand],
                "result {} region",
                slot - n_args
            );
            continue;
        }
        assert!(u64::from(region.offset) >= end, "regions overlap");
        end = u64::from(region.offset) + u64::from(region.len);
        assert!(end <= u64::from(layout.total));
    }
    // Every distinct region is filled once, in order: operands with their
    // bytes, results that alias nothing with zeros.
    let fills: Vec<_> = layout.fills.iter().map(|fill| fill.region).collect();
    let mut own: Vec<_> = layout.inputs.clone();
    own.extend(
        layout
            .outputs
            .iter()
            .zip(&shared)
            .filter(|(_, alias)| alias.is_none())
            .map(|(region, _)| *region),
    );
    assert_eq!(fills, own, "the regions filled before the call");
    drop(words);

    // Planning again gives the same bytes (the layout is reused per call).
    let first = (layout.header.clone(), layout.total);
    layout
        .plan(&call, base, api)
        .expect("the same call plans twice");
    assert_eq!((layout.header.clone(), layout.total), first);
}

/// Parses `data` as a limits side file; when it parses, applies it to the
/// defaults. Never panics; a file that applies leaves every limit in its
/// range.
///
/// # Panics
///
/// When an accepted file produces limits outside their documented ranges.
pub fn limits_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(overrides) = LimitOverrides::parse(text) else {
        return;
    };
    let mut limits = Limits::default();
    if limits.apply(&overrides).is_ok() {
        check_ranges(&limits);
    }
}

/// Applies `data` as a `--limit NAME=VALUE` flag (split at the first `=`)
/// to the defaults.
///
/// # Panics
///
/// When an accepted flag produces limits outside their documented ranges.
pub fn limit_flag(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (name, value) = text.split_once('=').unwrap_or((&text, ""));
    let mut limits = Limits::default();
    if limits.set(name, value).is_ok() {
        check_ranges(&limits);
    }
    let _ = text.parse::<crate::limits::LimitSetting>();
}

fn check_ranges(limits: &Limits) {
    assert!((64 << 10..=4 << 30).contains(&limits.memory));
    assert!((1..=1024).contains(&limits.instances));
    assert!(limits.stack as u64 <= crate::limits::MAX_STACK_BYTES);
    assert!(!limits.call_timeout.is_zero() && !limits.instantiate_timeout.is_zero());
    assert!(limits.deadline_ticks() >= 2);
}

/// The deadline of each call and instantiation in [`guest_module`]: short,
/// so that looping modules cost little fuzzing time (the deadline machinery
/// is the same at any length).
pub const GUEST_DEADLINE: std::time::Duration = std::time::Duration::from_millis(10);

/// How long a call in [`guest_module`] may take before it counts as a hang:
/// the deadline plus room for a loaded machine (a fuzzer at low priority
/// beside builds). A deadline that does not cover some host work overshoots
/// by seconds to minutes (issue 16), far past this.
pub const GUEST_HANG: std::time::Duration = std::time::Duration::from_secs(2);

/// Loads `wasm` (a module a guest author could write: e.g. generated by
/// wasm-smith with the ABI's exports) as the guest `fz.wasm`, with a target
/// record for every export of type `(i32) -> i32`, under tight limits; if it
/// loads, calls every target twice with a small frame.
///
/// The oracle is the sandbox's promise: loading and calling return (no
/// panic, no crash, no hang past the limits: a [`GUEST_DEADLINE`] per call
/// and per instantiation), and every failure names the guest.
///
/// One engine serves every module of the process (the limits are
/// constant), as one serves every guest of a server: state an engine keeps
/// across guests (the memory budget, the deadline timer) is exercised by
/// every input after the first.
///
/// # Panics
///
/// When an error does not name the guest file, or a call takes longer than
/// [`GUEST_HANG`].
pub fn guest_module(wasm: &[u8]) {
    use wasmparser::{Parser, Payload, TypeRef};

    let mut types: Vec<bool> = Vec::new(); // per type index: is (i32) -> i32
    let mut funcs: Vec<bool> = Vec::new(); // per function index
    let mut exports: Vec<String> = Vec::new();
    for payload in Parser::new(0).parse_all(wasm) {
        let Ok(payload) = payload else { return };
        match payload {
            Payload::TypeSection(reader) => {
                for group in reader.into_iter().flatten() {
                    for ty in group.types() {
                        let ok = match &ty.composite_type.inner {
                            wasmparser::CompositeInnerType::Func(f) => {
                                f.params() == [wasmparser::ValType::I32]
                                    && f.results() == [wasmparser::ValType::I32]
                            }
                            _ => false,
                        };
                        types.push(ok);
                    }
                }
            }
            Payload::ImportSection(reader) => {
                for import in reader.into_imports().flatten() {
                    if let TypeRef::Func(t) = import.ty {
                        funcs.push(types.get(t as usize).copied().unwrap_or(false));
                    }
                }
            }
            Payload::FunctionSection(reader) => {
                for t in reader.into_iter().flatten() {
                    funcs.push(types.get(t as usize).copied().unwrap_or(false));
                }
            }
            Payload::ExportSection(reader) => {
                for export in reader.into_iter().flatten() {
                    if export.kind == wasmparser::ExternalKind::Func
                        && funcs.get(export.index as usize).copied().unwrap_or(false)
                        && cyxla_guest_abi::is_valid_name(export.name)
                    {
                        exports.push(export.name.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    let mut records = String::new();
    for (i, export) in exports.iter().enumerate().take(16) {
        records.push_str(&format!(
            "{}fz{i} {export}\n",
            cyxla_guest_abi::RECORD_PREFIX
        ));
    }
    let mut module = wasm.to_vec();
    let name = cyxla_guest_abi::TARGETS_SECTION.as_bytes();
    let mut payload = leb(name.len() as u64);
    payload.extend_from_slice(name);
    payload.extend_from_slice(records.as_bytes());
    module.push(0);
    module.extend(leb(payload.len() as u64));
    module.extend(payload);

    static ENGINE: std::sync::OnceLock<crate::Engine> = std::sync::OnceLock::new();
    let engine = ENGINE.get_or_init(|| {
        let limits = Limits {
            memory: 16 << 20,
            call_timeout: GUEST_DEADLINE,
            instantiate_timeout: GUEST_DEADLINE,
            instance_wait: std::time::Duration::from_millis(100),
            instances: 2,
            tick: std::time::Duration::from_millis(1),
            ..Limits::default()
        };
        crate::Engine::new(&limits).expect("the fuzzing engine")
    });
    let path = std::path::Path::new("fz.wasm");
    let guest = match crate::Guest::from_bytes(engine, path, &module) {
        Ok(guest) => guest,
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains("fz.wasm"),
                "a rejection that does not name the guest: {text}"
            );
            return;
        }
    };
    let dir = std::path::Path::new(".");
    let guests = crate::Guests::from_loaded(dir, engine, vec![std::sync::Arc::new(guest)]);
    let sandbox = crate::Sandbox::with_guests(guests, crate::AllowList::all());
    for i in 0..exports.len().min(16) {
        let Some(handler) = sandbox.handler(&format!("fz{i}")) else {
            continue;
        };
        for _ in 0..2 {
            let call = HostCall::new()
                .arg(HostBuffer::f32(&[4], &[1.0, 2.0, 3.0, 4.0]))
                .ret(HostBuffer::zeros(DType::F32, &[4]));
            let started = std::time::Instant::now();
            if let Err(e) = handler.call_host(&call) {
                assert!(
                    e.message.contains("fz.wasm") || e.message.contains(&format!("fz{i}")),
                    "an error that names neither the target nor the guest: {}",
                    e.message
                );
            }
            assert!(
                started.elapsed() < GUEST_HANG,
                "a call ran {:?} past a {GUEST_DEADLINE:?} deadline",
                started.elapsed()
            );
        }
    }
}

fn leb(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}
