//! The host functions a guest imports from module `cyxla`, one per
//! `XLA_FFI_Api` slot (names and argument layouts from
//! [`cyxla_guest_abi`]), plus WASI preview 1 ([`crate::wasi`], with
//! `poll_oneoff` and `random_get` served here). They work on the instance's
//! [`HostState`].
//!
//! Guest memory is hostile input: every pointer a guest passes is checked
//! against the memory's size before use, with `u32` arithmetic that cannot
//! wrap. A bad pointer in an argument struct is a guest fault: the call traps
//! with a [`GuestFault`] that names the function and the address, and the
//! instance is discarded. A well-formed request the sandbox cannot serve
//! returns an XLA error handle instead, as XLA itself would.

use cyxla_guest_abi::{self as abi, Import};
use plugin_glue::ErrorCode;
use wasmtime::{Caller, Extern, Linker, Memory};

use crate::state::{GuestError, HostState, fault};

/// Longest type name [`abi::IMPORT_TYPE_REGISTER`] accepts, in bytes.
const MAX_TYPE_NAME: u32 = 4096;
/// Most type ids and states one instance can register.
const MAX_TYPES: usize = 1024;

// ---------------------------------------------------------------------------
// Guest memory access
// ---------------------------------------------------------------------------

/// The byte range `[addr, addr + len)` of a memory of `size` bytes, if it
/// lies inside.
pub(crate) fn guest_range(size: usize, addr: u32, len: usize) -> Option<std::ops::Range<usize>> {
    let start = usize::try_from(addr).ok()?;
    let end = start.checked_add(len)?;
    (end <= size).then_some(start..end)
}

pub(crate) fn guest_memory(
    caller: &mut Caller<'_, HostState>,
    function: &'static str,
) -> wasmtime::Result<Memory> {
    if let Some(memory) = caller.data().memory {
        return Ok(memory);
    }
    // During the start function or `_initialize`, before the host cached it.
    match caller.get_export(abi::EXPORT_MEMORY) {
        Some(Extern::Memory(memory)) => Ok(memory),
        _ => Err(fault(function, "the guest exports no memory".into())),
    }
}

fn out_of_range(
    function: &'static str,
    what: &str,
    addr: u32,
    len: usize,
    size: usize,
) -> wasmtime::Error {
    fault(
        function,
        format!(
            "{what} at guest address {addr:#x} ({len} bytes) is outside guest memory ({size} bytes)"
        ),
    )
}

/// Copies `N` bytes at guest address `addr`.
fn read_bytes<const N: usize>(
    caller: &mut Caller<'_, HostState>,
    function: &'static str,
    what: &str,
    addr: u32,
) -> wasmtime::Result<[u8; N]> {
    let memory = guest_memory(caller, function)?;
    let data = memory.data(&*caller);
    let range = guest_range(data.len(), addr, N)
        .ok_or_else(|| out_of_range(function, what, addr, N, data.len()))?;
    let mut out = [0u8; N];
    out.copy_from_slice(&data[range]);
    Ok(out)
}

fn write_bytes(
    caller: &mut Caller<'_, HostState>,
    function: &'static str,
    what: &str,
    addr: u32,
    bytes: &[u8],
) -> wasmtime::Result<()> {
    let memory = guest_memory(caller, function)?;
    let data = memory.data_mut(&mut *caller);
    let size = data.len();
    let range = guest_range(size, addr, bytes.len())
        .ok_or_else(|| out_of_range(function, what, addr, bytes.len(), size))?;
    data[range].copy_from_slice(bytes);
    Ok(())
}

fn u32_at(bytes: &[u8], offset: u32) -> u32 {
    let start = offset as usize;
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[start..start + 4]);
    u32::from_le_bytes(word)
}

/// The argument struct of `import` at `args`, as its first `N` bytes, and
/// whether its `struct_size` is large enough (`Err(message)` if not).
fn read_args<const N: usize>(
    caller: &mut Caller<'_, HostState>,
    import: &Import,
    args: i32,
) -> wasmtime::Result<([u8; N], Result<(), String>)> {
    if crate::deadline::overdue() {
        return Err(wasmtime::Trap::Interrupt.into());
    }
    let args_addr = args.cast_unsigned();
    if args_addr == 0 {
        return Err(fault(
            import.c_name,
            "the argument struct pointer is NULL".into(),
        ));
    }
    let bytes = read_bytes::<N>(caller, import.c_name, "the argument struct", args_addr)?;
    let struct_size = u32_at(&bytes, abi::STRUCT_SIZE_OFFSET);
    // Without the function's name: a fault names it, an error returned to
    // the guest adds it.
    let check = if struct_size < import.args_struct_size {
        Err(format!(
            "{}_Args has struct_size {struct_size}, expected at least {}",
            import.c_name, import.args_struct_size
        ))
    } else {
        Ok(())
    };
    Ok((bytes, check))
}

/// [`read_args`] for a host function that fails as a guest fault when the
/// struct is short.
fn read_args_or_fault<const N: usize>(
    caller: &mut Caller<'_, HostState>,
    import: &Import,
    args: i32,
) -> wasmtime::Result<[u8; N]> {
    let (bytes, size_ok) = read_args::<N>(caller, import, args)?;
    size_ok.map_err(|message| fault(import.c_name, message))?;
    Ok(bytes)
}

/// Allocates `len` bytes aligned to `align` in guest memory through the
/// guest's `cyxla_alloc`; a guest fault (naming `function`) if it cannot.
fn guest_alloc(
    caller: &mut Caller<'_, HostState>,
    function: &'static str,
    what: &str,
    len: i32,
    align: i32,
) -> wasmtime::Result<u32> {
    let Some(alloc) = caller.data().alloc.clone() else {
        return Err(fault(
            function,
            "called before the guest was initialised".into(),
        ));
    };
    let addr = alloc.call(&mut *caller, (len, align))?.cast_unsigned();
    if addr == 0 {
        return Err(fault(
            function,
            format!(
                "`{}` returned 0 for the {len}-byte {what}",
                abi::EXPORT_ALLOC
            ),
        ));
    }
    Ok(addr)
}

/// Gives the guest an error handle (`code`) for a call of `import`, whose
/// message names the C function: `` `XLA_FFI_…`: detail ``.
fn import_error(
    state: &mut HostState,
    import: &Import,
    code: ErrorCode,
    detail: std::fmt::Arguments<'_>,
) -> wasmtime::Result<i32> {
    let message = format!("`{}`: {detail}", import.c_name);
    state.error(code, message, import.c_name)
}

/// [`read_args`] for a host function that returns an error to the guest
/// (INVALID_ARGUMENT) when the struct is short: `Ok(Err(handle))` then.
fn read_args_or_error<const N: usize>(
    caller: &mut Caller<'_, HostState>,
    import: &Import,
    args: i32,
) -> wasmtime::Result<Result<[u8; N], i32>> {
    let (bytes, size_ok) = read_args::<N>(caller, import, args)?;
    match size_ok {
        Ok(()) => Ok(Ok(bytes)),
        Err(message) => import_error(
            caller.data_mut(),
            import,
            ErrorCode::InvalidArgument,
            format_args!("{message}"),
        )
        .map(Err),
    }
}

/// Reads a NUL-terminated string at `addr`, at most `limit` bytes of it;
/// invalid UTF-8 is replaced.
fn read_c_string(
    caller: &mut Caller<'_, HostState>,
    function: &'static str,
    addr: u32,
    limit: usize,
) -> wasmtime::Result<String> {
    if addr == 0 {
        return Err(fault(function, "the message pointer is NULL".into()));
    }
    let memory = guest_memory(caller, function)?;
    let data = memory.data(&*caller);
    let start = usize::try_from(addr).unwrap_or(usize::MAX);
    if start >= data.len() {
        return Err(out_of_range(function, "the message", addr, 1, data.len()));
    }
    let window = &data[start..data.len().min(start.saturating_add(limit))];
    match window.iter().position(|&b| b == 0) {
        Some(len) => Ok(String::from_utf8_lossy(&window[..len]).into_owned()),
        None if window.len() == limit => {
            let mut text = String::from_utf8_lossy(window).into_owned();
            text.push_str(&format!("… (message cut at {limit} bytes)"));
            Ok(text)
        }
        None => Err(fault(
            function,
            format!(
                "the message at guest address {addr:#x} runs to the end of guest memory without a NUL"
            ),
        )),
    }
}

// ---------------------------------------------------------------------------
// The host functions
// ---------------------------------------------------------------------------

fn import(name: &str) -> &'static Import {
    // Every name used below is one of abi::IMPORTS; a typo is a bug caught
    // by the linker test.
    abi::find_import(name).unwrap_or(&abi::IMPORT_TABLE[0])
}

fn error_create(mut caller: Caller<'_, HostState>, args: i32) -> wasmtime::Result<i32> {
    use abi::error_create_args as a;
    let imp = import(abi::IMPORT_ERROR_CREATE);
    let bytes = read_args_or_fault::<{ a::SIZE as usize }>(&mut caller, imp, args)?;
    let limit = caller.data().error_message_bytes;
    let message = read_c_string(&mut caller, imp.c_name, u32_at(&bytes, a::MESSAGE), limit)?;
    let code = u32_at(&bytes, a::ERRC).cast_signed();
    caller.data_mut().errors.insert(
        GuestError {
            code,
            message,
            guest_copy: None,
        },
        imp.c_name,
    )
}

/// Slot 1: `XLA_FFI_Error_GetDetails` (0.5), and `XLA_FFI_Error_GetMessage`
/// (0.3) of guests built before it, told apart by `struct_size`: the
/// message always, the code when the struct has room for it.
fn error_get_message(mut caller: Caller<'_, HostState>, args: i32) -> wasmtime::Result<()> {
    use abi::error_get_details_args as d;
    use abi::error_get_message_args as a;
    let imp = import(abi::IMPORT_ERROR_GET_MESSAGE);
    let (bytes, _) = read_args::<{ a::SIZE as usize }>(&mut caller, imp, args)?;
    let struct_size = u32_at(&bytes, abi::STRUCT_SIZE_OFFSET);
    if struct_size < a::STRUCT_SIZE {
        return Err(fault(
            imp.c_name,
            format!(
                "{}_Args has struct_size {struct_size}, expected at least {} (XLA_FFI_Error_GetMessage_Args) or {}",
                imp.c_name,
                a::STRUCT_SIZE,
                d::STRUCT_SIZE
            ),
        ));
    }
    let handle = u32_at(&bytes, a::ERROR).cast_signed();
    let Some(error) = caller.data_mut().errors.get_mut(handle) else {
        return Err(fault(
            imp.c_name,
            format!("{handle:#x} is not a live error handle"),
        ));
    };
    let copy = match error.guest_copy {
        Some(copy) => copy,
        None => {
            let mut text = Vec::with_capacity(error.message.len() + 1);
            text.extend_from_slice(error.message.as_bytes());
            text.push(0);
            let len = i32::try_from(text.len())
                .map_err(|_| fault(imp.c_name, "message too long".into()))?;
            let addr = guest_alloc(&mut caller, imp.c_name, "message copy", len, 1)?;
            write_bytes(&mut caller, imp.c_name, "the message copy", addr, &text)?;
            if let Some(error) = caller.data_mut().errors.get_mut(handle) {
                error.guest_copy = Some(addr);
            }
            addr
        }
    };
    let code = caller
        .data_mut()
        .errors
        .get_mut(handle)
        .map_or(0, |error| error.code);
    let out = args.cast_unsigned().saturating_add(a::MESSAGE);
    write_bytes(
        &mut caller,
        imp.c_name,
        "the message field",
        out,
        &copy.to_le_bytes(),
    )?;
    if struct_size >= d::STRUCT_SIZE {
        let out = args.cast_unsigned().saturating_add(d::ERRC);
        write_bytes(
            &mut caller,
            imp.c_name,
            "the errc field",
            out,
            &code.to_le_bytes(),
        )?;
    }
    Ok(())
}

fn error_destroy(mut caller: Caller<'_, HostState>, args: i32) -> wasmtime::Result<()> {
    use abi::error_destroy_args as a;
    let imp = import(abi::IMPORT_ERROR_DESTROY);
    let bytes = read_args_or_fault::<{ a::SIZE as usize }>(&mut caller, imp, args)?;
    let handle = u32_at(&bytes, a::ERROR).cast_signed();
    match caller.data_mut().errors.take(handle) {
        Some(_) => Ok(()),
        None => Err(fault(
            imp.c_name,
            format!("{handle:#x} is not a live error handle"),
        )),
    }
}

/// Reads the `XLA_FFI_TypeId` (an `int64_t`) that `ptr` points at.
fn read_type_id(
    caller: &mut Caller<'_, HostState>,
    function: &'static str,
    ptr: u32,
) -> wasmtime::Result<i64> {
    if ptr == 0 {
        return Err(fault(function, "the type id pointer is NULL".into()));
    }
    Ok(i64::from_le_bytes(read_bytes::<8>(
        caller,
        function,
        "the type id",
        ptr,
    )?))
}

/// Answers an import whose arguments (`SIZE` bytes) point, at offset
/// `type_id`, at a type id: reads them as [`read_args_or_error`] does (a
/// short struct gets the guest an error handle) and the id with
/// [`read_type_id`], then answers with `answer(caller, bytes, id)`.
fn with_type_id<const SIZE: usize>(
    mut caller: Caller<'_, HostState>,
    args: i32,
    imp: &'static Import,
    type_id: u32,
    answer: impl FnOnce(Caller<'_, HostState>, [u8; SIZE], i64) -> wasmtime::Result<i32>,
) -> wasmtime::Result<i32> {
    let bytes = match read_args_or_error::<SIZE>(&mut caller, imp, args)? {
        Ok(bytes) => bytes,
        Err(handle) => return Ok(handle),
    };
    let id = read_type_id(&mut caller, imp.c_name, u32_at(&bytes, type_id))?;
    answer(caller, bytes, id)
}

fn type_register(mut caller: Caller<'_, HostState>, args: i32) -> wasmtime::Result<i32> {
    use abi::type_register_args as a;
    let imp = import(abi::IMPORT_TYPE_REGISTER);
    let bytes = match read_args_or_error::<{ a::STRUCT_SIZE as usize }>(&mut caller, imp, args)? {
        Ok(bytes) => bytes,
        Err(handle) => return Ok(handle),
    };
    let name_ptr = u32_at(&bytes, a::NAME + abi::byte_span::PTR);
    let name_len = u32_at(&bytes, a::NAME + abi::byte_span::LEN);
    if name_len > MAX_TYPE_NAME {
        return import_error(
            caller.data_mut(),
            imp,
            ErrorCode::InvalidArgument,
            format_args!("type name of {name_len} bytes, longer than {MAX_TYPE_NAME}"),
        );
    }
    let name = {
        let memory = guest_memory(&mut caller, imp.c_name)?;
        let data = memory.data(&caller);
        let len = name_len as usize;
        let range = guest_range(data.len(), name_ptr, len)
            .ok_or_else(|| out_of_range(imp.c_name, "the type name", name_ptr, len, data.len()))?;
        String::from_utf8_lossy(&data[range]).into_owned()
    };
    let id_ptr = u32_at(&bytes, a::TYPE_ID);
    let requested = read_type_id(&mut caller, imp.c_name, id_ptr)?;
    let state = caller.data_mut();
    let existing = state
        .types
        .iter()
        .find(|(n, _)| **n == *name)
        .map(|(_, id)| *id);
    let id = match existing {
        Some(id) if requested == 0 || requested == id => id,
        Some(id) => {
            return import_error(
                state,
                imp,
                ErrorCode::AlreadyExists,
                format_args!("type `{name}` is already registered with id {id}, not {requested}"),
            );
        }
        None => {
            if state.types.len() >= MAX_TYPES {
                let detail = format_args!("more than {MAX_TYPES} types registered");
                return import_error(state, imp, ErrorCode::ResourceExhausted, detail);
            }
            if requested != 0 && state.types.iter().any(|(_, id)| *id == requested) {
                let detail = format_args!("type id {requested} is already taken");
                return import_error(state, imp, ErrorCode::AlreadyExists, detail);
            }
            let id = if requested != 0 {
                requested
            } else {
                state
                    .types
                    .iter()
                    .map(|(_, id)| *id)
                    .max()
                    .unwrap_or(0)
                    .max(0)
                    + 1
            };
            state.types.push((name.into_boxed_str(), id));
            id
        }
    };
    write_bytes(
        &mut caller,
        imp.c_name,
        "the type id",
        id_ptr,
        &id.to_le_bytes(),
    )?;
    Ok(0)
}

fn execution_context_get(caller: Caller<'_, HostState>, args: i32) -> wasmtime::Result<i32> {
    use abi::execution_context_get_args as a;
    let imp = import(abi::IMPORT_EXECUTION_CONTEXT_GET);
    with_type_id::<{ a::SIZE as usize }>(caller, args, imp, a::TYPE_ID, |mut caller, _, type_id| {
        import_error(
            caller.data_mut(),
            imp,
            ErrorCode::NotFound,
            format_args!(
                "no user data with type id {type_id} (the cyxla sandbox passes no execution context data to guests)"
            ),
        )
    })
}

fn state_set(caller: Caller<'_, HostState>, args: i32) -> wasmtime::Result<i32> {
    use abi::state_set_args as a;
    let imp = import(abi::IMPORT_STATE_SET);
    with_type_id::<{ a::SIZE as usize }>(
        caller,
        args,
        imp,
        a::TYPE_ID,
        |mut caller, bytes, type_id| {
            let value = u32_at(&bytes, a::STATE);
            let state = caller.data_mut();
            if state.states.iter().any(|(id, _)| *id == type_id) {
                let detail = format_args!("state of type id {type_id} is already set");
                return import_error(state, imp, ErrorCode::AlreadyExists, detail);
            }
            if state.states.len() >= MAX_TYPES {
                let detail = format_args!("more than {MAX_TYPES} states set");
                return import_error(state, imp, ErrorCode::ResourceExhausted, detail);
            }
            state.states.push((type_id, value));
            Ok(0)
        },
    )
}

fn state_get(caller: Caller<'_, HostState>, args: i32) -> wasmtime::Result<i32> {
    use abi::state_get_args as a;
    let imp = import(abi::IMPORT_STATE_GET);
    with_type_id::<{ a::SIZE as usize }>(caller, args, imp, a::TYPE_ID, |mut caller, _, type_id| {
        let found = caller
            .data()
            .states
            .iter()
            .find(|(id, _)| *id == type_id)
            .map(|(_, v)| *v);
        let Some(value) = found else {
            let detail = format_args!("no state of type id {type_id} has been set");
            return import_error(caller.data_mut(), imp, ErrorCode::NotFound, detail);
        };
        let out = args.cast_unsigned().saturating_add(a::STATE);
        write_bytes(
            &mut caller,
            imp.c_name,
            "the state field",
            out,
            &value.to_le_bytes(),
        )?;
        Ok(0)
    })
}

/// Slot 18 (0.5): no extension is attached to a guest's context, so
/// `extension` is NULL whatever the type asked for, as XLA answers for a
/// type its context does not hold.
fn invoke_context_find_extension(
    mut caller: Caller<'_, HostState>,
    args: i32,
) -> wasmtime::Result<i32> {
    use abi::invoke_context_find_extension_args as a;
    let imp = import(abi::IMPORT_INVOKE_CONTEXT_FIND_EXTENSION);
    if let Err(handle) = read_args_or_error::<{ a::SIZE as usize }>(&mut caller, imp, args)? {
        return Ok(handle);
    }
    let out = args.cast_unsigned().saturating_add(a::EXTENSION);
    write_bytes(&mut caller, imp.c_name, "the extension field", out, &[0; 4])?;
    Ok(0)
}

/// Slot 19 (0.5): the sandbox passes no per-execution options, so the
/// answer is an empty dictionary, an `XLA_FFI_Attrs` of size 0 that the
/// host allocates in guest memory once per instance and writes anew on
/// every call (the guest may have written over it).
fn custom_options_get(mut caller: Caller<'_, HostState>, args: i32) -> wasmtime::Result<i32> {
    use abi::attrs as at;
    use abi::custom_options_get_args as a;
    let imp = import(abi::IMPORT_CUSTOM_OPTIONS_GET);
    if let Err(handle) = read_args_or_error::<{ a::SIZE as usize }>(&mut caller, imp, args)? {
        return Ok(handle);
    }
    let attrs = match caller.data().custom_options {
        Some(addr) => addr,
        None => {
            let addr = guest_alloc(
                &mut caller,
                imp.c_name,
                "empty dictionary",
                at::SIZE as i32,
                at::ALIGN as i32,
            )?;
            caller.data_mut().custom_options = Some(addr);
            addr
        }
    };
    let mut empty = [0u8; at::SIZE as usize];
    empty[..4].copy_from_slice(&at::STRUCT_SIZE.to_le_bytes());
    write_bytes(
        &mut caller,
        imp.c_name,
        "the empty dictionary",
        attrs,
        &empty,
    )?;
    let out = args.cast_unsigned().saturating_add(a::ATTRS);
    write_bytes(
        &mut caller,
        imp.c_name,
        "the attrs field",
        out,
        &attrs.to_le_bytes(),
    )?;
    Ok(0)
}

/// Defines, a row each, the imports that answer a fact of the running call
/// with [`call_info_get`]: `name: args struct, import, FIELD = fact as
/// integer type` (the fact is the `CallInfo` method that gives it and the
/// name of its field in errors).
macro_rules! call_info_imports {
    ($($name:ident: $args:ident, $konst:ident, $offset:ident = $fact:ident as $int:ty;)*) => {$(
        fn $name(caller: Caller<'_, HostState>, args: i32) -> wasmtime::Result<i32> {
            use abi::$args as a;
            call_info_get::<{ a::SIZE as usize }, { size_of::<$int>() }>(
                caller,
                args,
                import(abi::$konst),
                (a::$offset, concat!("the ", stringify!($fact), " field")),
                |info| info.$fact().map(<$int>::to_le_bytes),
            )
        }
    )*};
}

call_info_imports! {
    run_id_get: run_id_get_args, IMPORT_RUN_ID_GET, RUN_ID = run_id as i64;
    device_ordinal_get: device_ordinal_get_args, IMPORT_DEVICE_ORDINAL_GET, DEVICE_ORDINAL = device_ordinal as i32;
}

/// Answers an import that reports a fact of the running call (`SIZE` bytes
/// of arguments): `value` of the call's [`CallInfo`](crate::state::CallInfo),
/// written at `args + field.0` (named `field.1` in errors). Outside a call,
/// or if XLA could not say, the guest gets an error handle.
fn call_info_get<const SIZE: usize, const N: usize>(
    mut caller: Caller<'_, HostState>,
    args: i32,
    imp: &'static Import,
    field: (u32, &str),
    value: impl FnOnce(&crate::state::CallInfo) -> Result<[u8; N], plugin_glue::HandlerError>,
) -> wasmtime::Result<i32> {
    let _ = match read_args_or_error::<SIZE>(&mut caller, imp, args)? {
        Ok(bytes) => bytes,
        Err(handle) => return Ok(handle),
    };
    let bytes = match caller.data().call.as_ref().map(value) {
        Some(Ok(bytes)) => bytes,
        Some(Err(error)) => {
            let detail = format_args!("{}", error.message);
            return import_error(caller.data_mut(), imp, error.code, detail);
        }
        None => {
            let detail = format_args!("called outside a custom call");
            return import_error(
                caller.data_mut(),
                imp,
                ErrorCode::FailedPrecondition,
                detail,
            );
        }
    };
    let (offset, what) = field;
    let out = args.cast_unsigned().saturating_add(offset);
    write_bytes(&mut caller, imp.c_name, what, out, &bytes)?;
    Ok(0)
}

/// Bytes [`random_get`] fills between deadline checks.
pub(crate) const CHUNK: usize = 64 << 10;
/// Subscriptions [`poll_oneoff`] answers between deadline checks.
pub(crate) const EVENTS_PER_CHECK: usize = 4096;

/// WASI preview 1 errnos.
const ERRNO_SUCCESS: i32 = 0;
const ERRNO_BADF: i32 = 8;
const ERRNO_FAULT: i32 = 21;
const ERRNO_INVAL: i32 = 28;
const ERRNO_IO: i32 = 29;

/// Size of a WASI `subscription` and of an `event`.
const SUBSCRIPTION_SIZE: usize = 48;
const EVENT_SIZE: usize = 32;

/// WASI `random_get(buf, len)`: fills `len` bytes of guest memory at `buf`
/// with random bytes from the OS, [`CHUNK`] bytes at a time, checking the
/// deadline between chunks.
pub(crate) fn random_get(
    mut caller: Caller<'_, HostState>,
    buf: i32,
    len: i32,
) -> wasmtime::Result<i32> {
    crate::deadline::check()?;
    let memory = guest_memory(&mut caller, "random_get")?;
    let data = memory.data_mut(&mut caller);
    let Some(range) = guest_range(
        data.len(),
        buf.cast_unsigned(),
        len.cast_unsigned() as usize,
    ) else {
        return Ok(ERRNO_FAULT);
    };
    for chunk in data[range].chunks_mut(CHUNK) {
        crate::deadline::check()?;
        if getrandom::fill(chunk).is_err() {
            return Ok(ERRNO_IO);
        }
    }
    Ok(ERRNO_SUCCESS)
}

/// WASI `poll_oneoff(in, out, nsubscriptions, nevents)`, without blocking.
///
/// The guest's clock is frozen (see the module docs), so every clock
/// subscription, relative or absolute, is reported as fired at once. stdout
/// and stderr are always ready for writing, stdin (closed) for reading at
/// its end; any other descriptor gets `EBADF` in its event. Every
/// subscription gets an event, in order. Bad pointers get `EFAULT`,
/// misaligned ones and unknown subscription kinds `EINVAL`.
pub(crate) fn poll_oneoff(
    mut caller: Caller<'_, HostState>,
    subscriptions: i32,
    events: i32,
    count: i32,
    nevents: i32,
) -> wasmtime::Result<i32> {
    crate::deadline::check()?;
    let (subscriptions, events, count, nevents) = (
        subscriptions.cast_unsigned(),
        events.cast_unsigned(),
        count.cast_unsigned(),
        nevents.cast_unsigned(),
    );
    if count == 0 {
        return Ok(ERRNO_INVAL);
    }
    if subscriptions % 8 != 0 || events % 8 != 0 || nevents % 4 != 0 {
        return Ok(ERRNO_INVAL);
    }
    let memory = guest_memory(&mut caller, "poll_oneoff")?;
    let data = memory.data_mut(&mut caller);
    let n = usize::try_from(count).unwrap_or(usize::MAX);
    let (Some(inputs), Some(outputs), Some(counter)) = (
        n.checked_mul(SUBSCRIPTION_SIZE)
            .and_then(|len| guest_range(data.len(), subscriptions, len)),
        n.checked_mul(EVENT_SIZE)
            .and_then(|len| guest_range(data.len(), events, len)),
        guest_range(data.len(), nevents, 4),
    ) else {
        return Ok(ERRNO_FAULT);
    };
    // Read every subscription before writing any event: the two arrays may
    // overlap.
    for i in 0..n {
        if i.is_multiple_of(EVENTS_PER_CHECK) {
            crate::deadline::check()?;
        }
        let tag = data[inputs.start + i * SUBSCRIPTION_SIZE + 8];
        if tag > 2 {
            return Ok(ERRNO_INVAL);
        }
    }
    for i in 0..n {
        if i.is_multiple_of(EVENTS_PER_CHECK) {
            crate::deadline::check()?;
        }
        let sub = inputs.start + i * SUBSCRIPTION_SIZE;
        let mut userdata = [0u8; 8];
        userdata.copy_from_slice(&data[sub..sub + 8]);
        let tag = data[sub + 8];
        let mut fd = [0u8; 4];
        fd.copy_from_slice(&data[sub + 16..sub + 20]);
        let fd = u32::from_le_bytes(fd);
        // (error, bytes ready, flags) of the event.
        let (error, ready, flags): (u16, u64, u16) = match tag {
            0 => (0, 0, 0),
            // stdin is closed: readable, at its end (hang-up).
            1 if fd == 0 => (0, 0, 1),
            2 if fd == 1 || fd == 2 => (0, 64 << 10, 0),
            _ => (ERRNO_BADF as u16, 0, 0),
        };
        let out = outputs.start + i * EVENT_SIZE;
        let event = &mut data[out..out + EVENT_SIZE];
        event.fill(0);
        event[..8].copy_from_slice(&userdata);
        event[8..10].copy_from_slice(&error.to_le_bytes());
        event[10] = tag;
        event[16..24].copy_from_slice(&ready.to_le_bytes());
        event[24..26].copy_from_slice(&flags.to_le_bytes());
    }
    data[counter].copy_from_slice(&count.to_le_bytes());
    Ok(ERRNO_SUCCESS)
}

/// Registers each import of module `cyxla` ([`abi::for_each_import!`]): a
/// `served` one as the host function of its name above, an `unimplemented`
/// one as [`link_unimplemented`].
macro_rules! link_imports {
    ($( $(#[doc = $doc:literal])*
        $slot:literal $name:ident $konst:ident $c_function:ident
        $args:ident $returns:ident $host:ident $sdk:tt; )*) => {
        fn link_imports(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
            $( link_import!(linker, $name, $host); )*
            Ok(())
        }
    };
}

macro_rules! link_import {
    ($linker:ident, $name:ident, served) => {
        $linker.func_wrap(abi::IMPORT_MODULE, stringify!($name), $name)?;
    };
    ($linker:ident, $name:ident, unimplemented) => {
        link_unimplemented($linker, stringify!($name))?;
    };
}

abi::for_each_import!(link_imports);

/// Registers import `name` as a function that answers UNIMPLEMENTED.
fn link_unimplemented(linker: &mut Linker<HostState>, name: &'static str) -> wasmtime::Result<()> {
    let c_name = import(name).c_name;
    linker.func_wrap(
        abi::IMPORT_MODULE,
        name,
        move |mut caller: Caller<'_, HostState>, _args: i32| {
            if crate::deadline::overdue() {
                return Err(wasmtime::Trap::Interrupt.into());
            }
            let message = format!("`{c_name}` is not supported in the cyxla sandbox");
            caller
                .data_mut()
                .error(ErrorCode::Unimplemented, message, c_name)
        },
    )?;
    Ok(())
}

/// The linker every guest is instantiated with: module `cyxla` and WASI
/// preview 1.
///
/// # Errors
///
/// Only on a name clash inside the linker (a bug).
pub(crate) fn linker(engine: &wasmtime::Engine) -> wasmtime::Result<Linker<HostState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |state: &mut HostState| &mut state.wasi)?;
    // Two WASI functions whose work the guest sizes are the sandbox's own:
    // `poll_oneoff` never sleeps, `random_get` fills in bounded chunks
    // (see `crate::wasi` and below).
    linker.allow_shadowing(true);
    linker.func_wrap(abi::WASI_MODULE, "poll_oneoff", poll_oneoff)?;
    linker.func_wrap(abi::WASI_MODULE, "random_get", random_get)?;
    linker.allow_shadowing(false);
    link_imports(&mut linker)?;
    Ok(linker)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;

    #[test]
    fn every_import_is_in_the_linker_with_its_signature() {
        let engine = wasmtime::Engine::default();
        let linker = linker(&engine).unwrap();
        let mut store = wasmtime::Store::new(&engine, HostState::new(&Limits::default()));
        for imp in abi::IMPORT_TABLE {
            let Ok(Extern::Func(func)) = linker.get(&mut store, abi::IMPORT_MODULE, imp.name)
            else {
                panic!("`{}` missing from the linker", imp.name);
            };
            let ty = func.ty(&store);
            assert_eq!(ty.params().len(), 1, "{}", imp.name);
            assert_eq!(
                ty.results().len(),
                usize::from(imp.returns_error),
                "{}",
                imp.name
            );
        }
    }

    #[test]
    fn guest_ranges_do_not_wrap() {
        assert_eq!(guest_range(16, 8, 8), Some(8..16));
        assert_eq!(guest_range(16, 9, 8), None);
        assert_eq!(guest_range(16, u32::MAX, 8), None);
        assert_eq!(guest_range(usize::MAX, 1, usize::MAX), None);
    }
}
