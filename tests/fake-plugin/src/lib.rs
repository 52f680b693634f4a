//! cyxla-fake-plugin: a fake PJRT plugin for plugin-glue's edge-case tests.
//!
//! It exports `GetPjrtApi`, which reads `CYXLA_FAKE_PLUGIN_MODE` **on every
//! call** and returns the `PJRT_Api` table of that mode, so one process can
//! load the same library (the dynamic loader hands back the same handle for
//! the same path) and see every mode in turn:
//!
//! | mode | table |
//! |---|---|
//! | unset, `ok` | PJRT 0.81-sized table (984 bytes); error functions, `PJRT_Plugin_Initialize` and `PJRT_Plugin_Attributes` implemented, every other slot NULL; extensions Layouts(4) → FFI(5) |
//! | `short` | only slots 0–4 (`struct_size` 80): `PJRT_Client_Create` is beyond the table |
//! | `header-only` | `struct_size` 40: not even `PJRT_Error_Destroy` |
//! | `tiny-api` | `struct_size` 16: shorter than the `PJRT_Api` header |
//! | `null-init` | `PJRT_Plugin_Initialize` is NULL |
//! | `init-error` | `PJRT_Plugin_Initialize` fails with INVALID_ARGUMENT |
//! | `null-ext` | `extension_start` is NULL |
//! | `unknown-ext` | extensions of unknown types 9999 and 12345 before the FFI one |
//! | `bad-ffi-size` | the FFI extension says `struct_size` 40 (< 48) |
//! | `cyclic-ext` | an extension whose `next` points at itself |
//! | `tiny-ext` | an extension with `struct_size` 8 whose `next` points at the FFI one |
//! | `major1` | `major_version` 1 |
//! | `null-api` | `GetPjrtApi` returns NULL |
//!
//! The FFI extension's `register_handler` checks its arguments like XLA
//! does (`struct_size` ≥ 52, non-NULL handler) and succeeds, except for
//! targets starting with `fake_echo`, for which it fails with
//! INVALID_ARGUMENT and a message echoing every field it read, so tests can
//! see the layout the caller used.
//!
//! Nothing here is a model of a real plugin's behaviour beyond the header
//! layouts; it is a test fixture.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::Mutex;

/// The environment variable that selects the table.
pub const MODE_VAR: &str = "CYXLA_FAKE_PLUGIN_MODE";

const SLOTS: usize = 118; // PJRT 0.81
const FUNCTIONS_OFFSET: usize = 40;
const INVALID_ARGUMENT: i32 = 3;

// ----------------------------------------------------------------------------
// The C side: just the layouts this fixture writes or reads.
// ----------------------------------------------------------------------------

#[repr(C)]
struct PJRT_Extension_Base {
    struct_size: usize,
    type_: u32,
    next: *mut PJRT_Extension_Base,
}

#[repr(C)]
struct PJRT_FFI_Extension {
    base: PJRT_Extension_Base,
    type_register: *mut c_void,
    user_data_add: *mut c_void,
    register_handler: *mut c_void,
}

#[repr(C)]
struct PJRT_Api_Version {
    struct_size: usize,
    extension_start: *mut PJRT_Extension_Base,
    major_version: i32,
    minor_version: i32,
}

#[repr(C)]
struct Api {
    struct_size: usize,
    extension_start: *mut PJRT_Extension_Base,
    pjrt_api_version: PJRT_Api_Version,
    functions: [*mut c_void; SLOTS],
}

const _: () = assert!(std::mem::offset_of!(Api, functions) == FUNCTIONS_OFFSET);
const _: () = assert!(std::mem::size_of::<Api>() == 984);
const _: () = assert!(std::mem::size_of::<PJRT_FFI_Extension>() == 48);

#[repr(C)]
struct ErrorDestroyArgs {
    struct_size: usize,
    extension_start: *mut c_void,
    error: *mut FakeError,
}

#[repr(C)]
struct ErrorMessageArgs {
    struct_size: usize,
    extension_start: *mut c_void,
    error: *const FakeError,
    message: *const c_char,
    message_size: usize,
}

#[repr(C)]
struct ErrorGetCodeArgs {
    struct_size: usize,
    extension_start: *mut c_void,
    error: *const FakeError,
    code: i32,
}

#[repr(C)]
struct PluginAttributesArgs {
    struct_size: usize,
    extension_start: *mut c_void,
    attributes: *const NamedValue,
    num_attributes: usize,
}

#[repr(C)]
struct NamedValue {
    struct_size: usize,
    extension_start: *mut c_void,
    name: *const c_char,
    name_size: usize,
    type_: u32,
    value: u64,
    value_size: usize,
}

#[repr(C)]
struct RegisterHandlerArgs {
    struct_size: usize,
    target_name: *const c_char,
    target_name_size: usize,
    handler: *mut c_void,
    platform_name: *const c_char,
    platform_name_size: usize,
    traits: u32,
}

const _: () = assert!(std::mem::offset_of!(RegisterHandlerArgs, traits) == 48);
const _: () = assert!(std::mem::size_of::<NamedValue>() == 56);

/// The fixture's `PJRT_Error`.
struct FakeError {
    code: i32,
    message: String,
}

fn new_error(code: i32, message: String) -> *mut c_void {
    Box::into_raw(Box::new(FakeError { code, message })).cast()
}

/// Runs `body`, turning a panic into `fallback` (nothing unwinds into C).
fn guard<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// A byte slice from C (pointer, length); `(NULL, _)` and `(_, 0)` give `[]`.
///
/// # Safety
///
/// If non-NULL and `len > 0`, `ptr` must point to `len` readable bytes.
unsafe fn bytes<'a>(ptr: *const c_char, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: caller's contract.
        unsafe { std::slice::from_raw_parts(ptr.cast(), len) }
    }
}

// ----------------------------------------------------------------------------
// Functions in the table
// ----------------------------------------------------------------------------

unsafe extern "C" fn error_destroy(args: *mut ErrorDestroyArgs) {
    guard((), || {
        // SAFETY: the caller passes valid args (PJRT contract).
        let args = unsafe { &*args };
        if !args.error.is_null() {
            // SAFETY: every error this fixture hands out is a leaked
            // `Box<FakeError>`, destroyed once by the caller.
            drop(unsafe { Box::from_raw(args.error) });
        }
    })
}

unsafe extern "C" fn error_message(args: *mut ErrorMessageArgs) {
    guard((), || {
        // SAFETY: the caller passes valid args and a live error (PJRT contract).
        let args = unsafe { &mut *args };
        // SAFETY: as above.
        let error = unsafe { &*args.error };
        args.message = error.message.as_ptr().cast();
        args.message_size = error.message.len();
    })
}

unsafe extern "C" fn error_get_code(args: *mut ErrorGetCodeArgs) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: the caller passes valid args and a live error (PJRT contract).
        let args = unsafe { &mut *args };
        // SAFETY: as above.
        args.code = unsafe { &*args.error }.code;
        ptr::null_mut()
    })
}

unsafe extern "C" fn plugin_initialize(_args: *mut c_void) -> *mut c_void {
    ptr::null_mut()
}

unsafe extern "C" fn plugin_initialize_fails(_args: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        new_error(INVALID_ARGUMENT, "fake: initialization refused".to_string())
    })
}

/// Attribute storage: names and values with static lifetime.
struct Attributes([NamedValue; 5]);
// SAFETY: the pointers inside point to `'static` immutable data.
unsafe impl Send for Attributes {}
// SAFETY: as above; the array is never mutated after construction.
unsafe impl Sync for Attributes {}

static LIST: [i64; 3] = [1, 2, 3];

fn named(name: &'static str, type_: u32, value: u64, value_size: usize) -> NamedValue {
    NamedValue {
        struct_size: 56,
        extension_start: ptr::null_mut(),
        name: name.as_ptr().cast(),
        name_size: name.len(),
        type_,
        value,
        value_size,
    }
}

fn attributes() -> &'static Attributes {
    static ATTRIBUTES: std::sync::OnceLock<Attributes> = std::sync::OnceLock::new();
    ATTRIBUTES.get_or_init(|| {
        let text = "hello";
        Attributes([
            named("xla_version", 1, 2, 1),
            named("fake_string", 0, text.as_ptr() as u64, text.len()),
            named("fake_list", 2, LIST.as_ptr() as u64, LIST.len()),
            named("fake_float", 3, u64::from(0.5f32.to_bits()), 1),
            named("fake_bool", 4, 1, 1),
        ])
    })
}

unsafe extern "C" fn plugin_attributes(args: *mut PluginAttributesArgs) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: the caller passes valid args (PJRT contract).
        let args = unsafe { &mut *args };
        let attributes = &attributes().0;
        args.attributes = attributes.as_ptr();
        args.num_attributes = attributes.len();
        ptr::null_mut()
    })
}

unsafe extern "C" fn register_handler(args: *mut RegisterHandlerArgs) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: the caller passes args at least as large as the
        // struct_size it declares; `struct_size` is the first field.
        let size = unsafe { (*args).struct_size };
        if size < 52 {
            return new_error(
                INVALID_ARGUMENT,
                format!("Unexpected PJRT_FFI_Register_Handler_Args size: expected 52, got {size}"),
            );
        }
        // SAFETY: the struct is at least 52 bytes (checked), i.e. complete.
        let args = unsafe { &*args };
        if args.handler.is_null() {
            return new_error(INVALID_ARGUMENT, "fake: handler is NULL".to_string());
        }
        // SAFETY: the strings have the sizes the caller declares.
        let target = unsafe { bytes(args.target_name, args.target_name_size) };
        // SAFETY: as above.
        let platform = unsafe { bytes(args.platform_name, args.platform_name_size) };
        let target = String::from_utf8_lossy(target);
        if target.starts_with("fake_echo") {
            return new_error(
                INVALID_ARGUMENT,
                format!(
                    "fake register_handler: target={target} platform={} traits={} struct_size={size} handler=non-null",
                    String::from_utf8_lossy(platform),
                    args.traits
                ),
            );
        }
        ptr::null_mut()
    })
}

// ----------------------------------------------------------------------------
// Tables
// ----------------------------------------------------------------------------

fn leak<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

fn extension(
    type_: u32,
    struct_size: usize,
    next: *mut PJRT_Extension_Base,
) -> *mut PJRT_Extension_Base {
    leak(PJRT_Extension_Base {
        struct_size,
        type_,
        next,
    })
}

fn ffi_extension(struct_size: usize, next: *mut PJRT_Extension_Base) -> *mut PJRT_Extension_Base {
    leak(PJRT_FFI_Extension {
        base: PJRT_Extension_Base {
            struct_size,
            type_: 5,
            next,
        },
        type_register: ptr::null_mut(),
        user_data_add: ptr::null_mut(),
        register_handler: register_handler as *mut c_void,
    })
    .cast()
}

/// Builds (and leaks: tables live for the process) the table of `mode`,
/// or `None` for `null-api` and unknown modes.
fn build(mode: &str) -> Option<*mut Api> {
    let mut functions = [ptr::null_mut(); SLOTS];
    functions[0] = error_destroy as *mut c_void;
    functions[1] = error_message as *mut c_void;
    functions[2] = error_get_code as *mut c_void;
    functions[3] = plugin_initialize as *mut c_void;
    functions[4] = plugin_attributes as *mut c_void;
    let mut struct_size = std::mem::size_of::<Api>();
    let mut major = 0;
    let layouts_then_ffi = || extension(4, 80, ffi_extension(48, ptr::null_mut()));
    let extensions = match mode {
        "" | "ok" => layouts_then_ffi(),
        "short" => {
            struct_size = FUNCTIONS_OFFSET + 5 * 8;
            layouts_then_ffi()
        }
        "header-only" => {
            struct_size = FUNCTIONS_OFFSET;
            layouts_then_ffi()
        }
        "tiny-api" => {
            struct_size = 16;
            layouts_then_ffi()
        }
        "null-init" => {
            functions[3] = ptr::null_mut();
            layouts_then_ffi()
        }
        "init-error" => {
            functions[3] = plugin_initialize_fails as *mut c_void;
            layouts_then_ffi()
        }
        "null-ext" => ptr::null_mut(),
        "unknown-ext" => extension(
            9999,
            24,
            extension(12345, 200, ffi_extension(48, ptr::null_mut())),
        ),
        "bad-ffi-size" => ffi_extension(40, ptr::null_mut()),
        "cyclic-ext" => {
            let cyclic = extension(11, 24, ptr::null_mut());
            // SAFETY: `cyclic` was just leaked from a Box and is not shared yet.
            unsafe { (*cyclic).next = cyclic };
            cyclic
        }
        "tiny-ext" => extension(10, 8, ffi_extension(48, ptr::null_mut())),
        "major1" => {
            major = 1;
            layouts_then_ffi()
        }
        _ => return None,
    };
    Some(leak(Api {
        struct_size,
        extension_start: extensions,
        pjrt_api_version: PJRT_Api_Version {
            struct_size: 24,
            extension_start: ptr::null_mut(),
            major_version: major,
            minor_version: 81,
        },
        functions,
    }))
}

/// The PJRT entry point: the table selected by [`MODE_VAR`] now.
#[unsafe(no_mangle)]
pub extern "C" fn GetPjrtApi() -> *const c_void {
    guard(ptr::null(), || {
        let mode = std::env::var(MODE_VAR).unwrap_or_default();
        // Tables by mode, as addresses (one table per mode per process).
        static TABLES: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);
        let mut tables = TABLES.lock().unwrap_or_else(|p| p.into_inner());
        let tables = tables.get_or_insert_with(HashMap::new);
        if let Some(address) = tables.get(&mode) {
            return *address as *const c_void;
        }
        match build(&mode) {
            Some(table) => {
                tables.insert(mode, table as usize);
                table.cast_const().cast()
            }
            None => ptr::null(),
        }
    })
}
