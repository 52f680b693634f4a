//! The `PJRT_Api` table this library serves: a copy of the real plugin's,
//! with the few slots cyxla must own replaced.
//!
//! | slot | ours because |
//! |---|---|
//! | 0–2 `PJRT_Error_{Destroy,Message,GetCode}`, 132 `PJRT_Error_ForEachPayload` | our errors (configuration, policy) travel beside the real plugin's |
//! | 3 `PJRT_Plugin_Initialize` | the real plugin was initialised when it was loaded |
//! | 10 `PJRT_Client_Create` | configure once, report a bad configuration, set the device count, drop the multi-process options the CPU plugin rejects |
//! | 20 `PJRT_Client_Compile` | XLA's "No FFI handler registered for T" gains why T has no handler here (the policy's decision, a rejected module) |
//! | `extension_start` | the FFI extension's `register_handler` applies policy |
//!
//! If the real plugin cannot be loaded (or the configuration is bad) the
//! table is a stand-in whose `PJRT_Client_Create` returns the reason.

use std::ffi::c_void;
use std::panic::catch_unwind;
use std::sync::OnceLock;

use plugin_glue::ffi::pjrt::{
    ApiFunction, PJRT_API_FUNCTIONS_OFFSET, PJRT_API_MAJOR, PJRT_API_MINOR, PJRT_Api,
    PJRT_Api_Version_STRUCT_SIZE, PJRT_Client_Compile_Args, PJRT_Client_Compile_Fn,
    PJRT_Client_Create_Args, PJRT_Client_Create_Fn, PJRT_Error, PJRT_NamedValue,
    PJRT_Plugin_Attributes_Args, PJRT_Plugin_Initialize_Args, slot, slot_count,
};

use crate::errors::{self, INTERNAL, INVALID_ARGUMENT, guard};
use crate::{ffi_extension, state};

/// The option that sets the CPU plugin's device count.
const DEVICE_COUNT_OPTION: &str = "cpu_device_count";

/// The options a multi-process JAX (jax.distributed) passes to every PJRT
/// plugin, which the XLA CPU plugins reject ("Unexpected option name").
const MULTI_PROCESS_OPTIONS: [&str; 3] = ["node_id", "num_nodes", "partition_index"];

/// Slots in the stand-in table (those of PJRT 0.115, the default plugin's).
const STAND_IN_SLOTS: usize = 138;

/// The table served, and the real functions that our slots forward to.
struct Table {
    /// The table, 8-byte aligned; leaked: clients keep pointers into it.
    words: &'static [u64],
    real_client_create: Option<PJRT_Client_Create_Fn>,
    real_client_compile: Option<PJRT_Client_Compile_Fn>,
}

static TABLE: OnceLock<Table> = OnceLock::new();

/// The table (built on first use). NULL only if building it panicked.
pub fn get() -> *const PJRT_Api {
    catch_unwind(|| table().words.as_ptr().cast::<PJRT_Api>()).unwrap_or(std::ptr::null())
}

fn table() -> &'static Table {
    TABLE.get_or_init(|| match &state::get().real {
        Ok(plugin) => wrap(plugin.table_bytes()),
        Err(_) => stand_in(),
    })
}

/// The slots cyxla owns in every table it serves, each as (word index,
/// word of our function). [`ApiFunction::word`] takes only a function of the
/// slot's signature.
fn own_slots() -> [(usize, u64); 7] {
    fn at<F: Copy>(slot: ApiFunction<F>, ours: F) -> (usize, u64) {
        (slot.offset() / 8, slot.word(ours))
    }
    [
        at(slot::PJRT_Error_Destroy, errors::destroy),
        at(slot::PJRT_Error_Message, errors::message),
        at(slot::PJRT_Error_GetCode, errors::get_code),
        // jaxlib calls it for every error when the table is longer than 1104 bytes.
        at(slot::PJRT_Error_ForEachPayload, errors::for_each_payload),
        at(slot::PJRT_Plugin_Initialize, plugin_initialize),
        at(slot::PJRT_Client_Create, client_create),
        at(slot::PJRT_Client_Compile, client_compile),
    ]
}

/// A copy of the real table with our slots in it.
fn wrap(real: &'static [u8]) -> Table {
    let mut words = vec![0u64; real.len().div_ceil(8)];
    for (i, chunk) in real.chunks(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        words[i] = u64::from_ne_bytes(bytes);
    }
    // SAFETY: each read is of `words`, a copy of the real plugin's
    // `PJRT_Api` (its `struct_size` bytes), whose slots hold its functions
    // with the header's signatures (pjrt_c_api.h; the table is append-only:
    // docs/abi.md, "PJRT_Api and version negotiation"), or NULL.
    let real_errors = unsafe {
        match (
            slot::PJRT_Error_Destroy.read(&words),
            slot::PJRT_Error_Message.read(&words),
            slot::PJRT_Error_GetCode.read(&words),
        ) {
            (Some(destroy), Some(message), Some(get_code)) => Some(errors::RealErrorFns {
                destroy,
                message,
                get_code,
                for_each_payload: slot::PJRT_Error_ForEachPayload.read(&words),
            }),
            _ => None,
        }
    };
    // SAFETY: as above.
    let real_client_create = unsafe { slot::PJRT_Client_Create.read(&words) };
    // SAFETY: as above.
    let real_client_compile = unsafe { slot::PJRT_Client_Compile.read(&words) };
    let slots = slot_count(real.len());
    for (index, word) in own_slots() {
        // Only the slots the real table has: its struct_size stays the truth.
        if index < slot_word(slots) {
            words[index] = word;
        }
    }
    // extension_start, the table's second word.
    words[1] = ffi_extension::wrap_chain(words[1] as usize as *const c_void) as usize as u64;
    errors::forward_to(real_errors);
    Table {
        words: Vec::leak(words),
        real_client_create,
        real_client_compile,
    }
}

/// Word index of function slot `index`.
const fn slot_word(index: usize) -> usize {
    (PJRT_API_FUNCTIONS_OFFSET + 8 * index) / 8
}

/// The table served when there is no real plugin: enough for a client to
/// load it, initialise it and learn why no client can be created.
fn stand_in() -> Table {
    let size = PJRT_API_FUNCTIONS_OFFSET + 8 * STAND_IN_SLOTS;
    let mut words = vec![0u64; size / 8];
    words[0] = size as u64;
    words[2] = PJRT_Api_Version_STRUCT_SIZE as u64;
    // major_version (int, offset 32) and minor_version (int, offset 36).
    words[4] = u64::from(PJRT_API_MAJOR as u32) | (u64::from(PJRT_API_MINOR as u32) << 32);
    for index in 0..STAND_IN_SLOTS {
        words[slot_word(index)] = unavailable as *const c_void as usize as u64;
    }
    let attributes = slot::PJRT_Plugin_Attributes;
    let stand_in_only = (attributes.offset() / 8, attributes.word(plugin_attributes));
    for (index, word) in own_slots().into_iter().chain([stand_in_only]) {
        words[index] = word;
    }
    Table {
        words: Vec::leak(words),
        real_client_create: None,
        real_client_compile: None,
    }
}

/// Every other slot of the stand-in: all PJRT functions but the two error
/// readers take one args pointer and return a `PJRT_Error*`.
unsafe extern "C" fn unavailable(_args: *mut c_void) -> *mut PJRT_Error {
    guard(|| {
        let reason = match state::get().ready() {
            Err(message) => message,
            Ok(_) => "cyxla: no XLA PJRT plugin is loaded".to_owned(),
        };
        errors::new(INVALID_ARGUMENT, reason)
    })
}

/// `PJRT_Plugin_Initialize`: the real plugin was initialised when loaded.
unsafe extern "C" fn plugin_initialize(_args: *mut PJRT_Plugin_Initialize_Args) -> *mut PJRT_Error {
    std::ptr::null_mut()
}

/// `PJRT_Plugin_Attributes` of the stand-in: none.
///
/// # Safety
///
/// `args` must be a valid, writable `PJRT_Plugin_Attributes_Args`.
unsafe extern "C" fn plugin_attributes(args: *mut PJRT_Plugin_Attributes_Args) -> *mut PJRT_Error {
    guard(|| {
        if args.is_null() {
            return errors::new(INVALID_ARGUMENT, "PJRT_Plugin_Attributes: NULL args");
        }
        // SAFETY: non-NULL and valid (caller's contract).
        unsafe {
            (*args).attributes = std::ptr::null();
            (*args).num_attributes = 0;
        }
        std::ptr::null_mut()
    })
}

/// `PJRT_Client_Create`: configure (once), then the real plugin's, with the
/// configured device count unless the client sets one.
///
/// # Safety
///
/// `args` must be a valid `PJRT_Client_Create_Args` (PJRT contract).
unsafe extern "C" fn client_create(args: *mut PJRT_Client_Create_Args) -> *mut PJRT_Error {
    guard(|| {
        if args.is_null() {
            return errors::new(INVALID_ARGUMENT, "PJRT_Client_Create: NULL args");
        }
        let state = state::get();
        if let Err(message) = state.ready() {
            return errors::new(INVALID_ARGUMENT, message);
        }
        let Some(real) = table().real_client_create else {
            return errors::new(INTERNAL, "cyxla: the XLA plugin has no PJRT_Client_Create");
        };
        let devices = state.config.as_ref().ok().and_then(|c| c.devices);
        // SAFETY: `args` is valid (caller's contract); its options array has
        // `num_options` entries (PJRT contract).
        let options: &[PJRT_NamedValue] = unsafe {
            let args = &*args;
            if args.create_options.is_null() || args.num_options == 0 {
                &[]
            } else {
                std::slice::from_raw_parts(args.create_options, args.num_options)
            }
        };
        let add_count = devices.filter(|_| !options.iter().any(|o| named(o, DEVICE_COUNT_OPTION)));
        let multi_process = options
            .iter()
            .any(|o| MULTI_PROCESS_OPTIONS.iter().any(|name| named(o, name)));
        if add_count.is_none() && !multi_process {
            // SAFETY: the real plugin's `PJRT_Client_Create`, with the
            // client's own valid arguments.
            return unsafe { real(args) };
        }
        if multi_process {
            tracing::warn!(
                "the XLA CPU PJRT plugin has no multi-process support: this client serves only \
                 this process's devices (options {} dropped)",
                MULTI_PROCESS_OPTIONS.join(", ")
            );
        }
        let mut rewritten: Vec<PJRT_NamedValue> = Vec::with_capacity(options.len() + 1);
        for option in options {
            if MULTI_PROCESS_OPTIONS.iter().any(|name| named(option, name)) {
                continue;
            }
            // SAFETY: `PJRT_NamedValue` is plain data (integers, pointers, a
            // union of scalars); a bitwise copy borrows the same strings and
            // arrays, which outlive this call (the client's).
            rewritten.push(unsafe { std::ptr::read(option) });
        }
        if let Some(devices) = add_count {
            rewritten.push(PJRT_NamedValue::int64(
                DEVICE_COUNT_OPTION,
                i64::from(devices),
            ));
        }
        // SAFETY: `args` is valid and writable; the options are swapped for
        // a copy that lives until after the call and restored afterwards.
        unsafe {
            let saved = ((*args).create_options, (*args).num_options);
            (*args).create_options = rewritten.as_ptr();
            (*args).num_options = rewritten.len();
            let error = real(args);
            ((*args).create_options, (*args).num_options) = saved;
            error
        }
    })
}

/// `PJRT_Client_Compile`: the real plugin's; when XLA finds no handler for
/// a custom call's target, its error gains why (see
/// [`cyxla_setup::process::Host::hint_for_client`]), and the refusal is
/// counted and audited.
///
/// # Safety
///
/// `args` must be a valid `PJRT_Client_Compile_Args` (PJRT contract).
unsafe extern "C" fn client_compile(args: *mut PJRT_Client_Compile_Args) -> *mut PJRT_Error {
    guard(|| {
        let Some(real) = table().real_client_compile else {
            return errors::new(INTERNAL, "cyxla: the XLA plugin has no PJRT_Client_Compile");
        };
        // SAFETY: the real plugin's `PJRT_Client_Compile`, with the client's
        // own valid arguments.
        let error = unsafe { real(args) };
        // SAFETY: `error` is NULL or the real plugin's, now ours to return.
        unsafe {
            errors::amend(error, |message| {
                let target = cyxla_setup::process::unregistered_target(message)?;
                cyxla_sandbox::stats::refused(target);
                let state = state::get();
                let hint = (state.ready().ok())
                    .zip(state.config.as_ref().ok())
                    .and_then(|(host, config)| host.hint_for_client(config, target));
                cyxla_sandbox::audit::refused_target(target, hint.as_deref().unwrap_or(message));
                hint
            })
        }
    })
}

/// Whether `option` is named `name`.
fn named(option: &PJRT_NamedValue, name: &str) -> bool {
    if option.name.is_null() {
        return false;
    }
    // SAFETY: a client's option names `name_size` bytes at `name`.
    let bytes = unsafe { std::slice::from_raw_parts(option.name.cast::<u8>(), option.name_size) };
    bytes == name.as_bytes()
}
