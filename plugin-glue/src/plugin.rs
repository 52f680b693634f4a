//! Loading a PJRT plugin: the shared library, its `PJRT_Api` table, its
//! extensions, and the FFI extension's handler registration.
//!
//! A [`Plugin`] is cheap to clone (an `Arc` inside) and is shared by the
//! [`crate::client::Client`]s created from it and by the handler registry.
//!
//! # Never unloaded
//!
//! The library is opened once per `Plugin::load` and **never closed**: XLA's
//! FFI handler registry, its thread pools and the function pointers handed
//! out in the `PJRT_Api` table all live inside the loaded image, and XLA
//! keeps calling registered handlers for as long as any executable exists
//! (docs/abi.md, "Registry"). Unloading would leave dangling code
//! pointers behind, so the `libloading` handle is leaked on purpose.

use std::collections::HashSet;
use std::ffi::c_void;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::ErrorCode;
use crate::error::{Error, Result};
use crate::ffi::pjrt::{
    self, ApiFunction, PJRT_Api, PJRT_Error, PJRT_Extension_Base, PJRT_FFI_Extension, slot,
};
use crate::ffi::xla_ffi::XLA_FFI_Handler;

/// Name of the entry point every PJRT plugin exports.
pub const GET_PJRT_API: &str = "GetPjrtApi";

/// The longest extension chain walked; a longer one is treated as cyclic or
/// corrupt and cut there.
pub const MAX_EXTENSIONS: usize = 64;

/// `const PJRT_Api* GetPjrtApi(void)`.
type GetPjrtApiFn = unsafe extern "C" fn() -> *const PJRT_Api;

/// One extension in the plugin's chain, as found at load time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extension {
    /// Its `PJRT_Extension_Type` value.
    pub kind: u32,
    /// Its `struct_size`.
    pub struct_size: usize,
}

impl Extension {
    /// The extension type's name in the 0.114 header, or `"?"`.
    pub fn name(&self) -> &'static str {
        usize::try_from(self.kind)
            .ok()
            .and_then(|k| pjrt::PJRT_EXTENSION_TYPE_NAMES.get(k))
            .copied()
            .unwrap_or("?")
    }
}

/// A loaded PJRT plugin.
///
/// # Thread safety
///
/// `Plugin` is `Send + Sync`: it only reads the plugin's immutable API table
/// and calls PJRT entry points, which XLA implements thread-safely.
#[derive(Clone)]
pub struct Plugin {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// The plugin's table; lives as long as the (never unloaded) library.
    api: *const PJRT_Api,
    version: (i32, i32),
    extensions: Vec<(Extension, *const PJRT_Extension_Base)>,
}

// SAFETY: `api` and the extension pointers point into the static data of a
// library that is never unloaded (see the module docs); the table and the
// extension structs are not mutated after `GetPjrtApi` returned them, and
// this crate only reads them. The functions they point to are XLA's PJRT C
// API, which is thread-safe (xla/pjrt/pjrt_client.h: a PjRtClient and its
// executables may be used from several threads; concurrent Execute calls were
// measured: docs/abi.md, "Concurrency").
unsafe impl Send for Inner {}
// SAFETY: as for `Send`: shared access only reads immutable plugin data and
// calls thread-safe PJRT entry points.
unsafe impl Sync for Inner {}

impl fmt::Debug for Plugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plugin")
            .field("path", &self.inner.path)
            .field("api_version", &self.inner.version)
            .field("extensions", &self.extensions())
            .finish()
    }
}

/// API tables that `PJRT_Plugin_Initialize` was already called for (by
/// address): loading the same plugin twice initialises it once.
static INITIALIZED: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

impl Plugin {
    /// Opens the plugin at `path`, checks its API version and table size,
    /// calls `PJRT_Plugin_Initialize` (once per process and plugin) and
    /// records its extension chain.
    ///
    /// # Errors
    ///
    /// [`Error::LoadLibrary`] if the file cannot be opened as a shared
    /// library, [`Error::NotAPlugin`] if it has no `GetPjrtApi`,
    /// [`Error::NullApi`] if that returns NULL, [`Error::StructSize`] if its
    /// table is shorter than the `PJRT_Api` header,
    /// [`Error::UnsupportedApiVersion`] for a major version other than 0,
    /// [`Error::FunctionNotAvailable`] / [`Error::NullFunction`] if the table
    /// lacks the error functions or `PJRT_Plugin_Initialize`, and
    /// [`Error::Pjrt`] if initialisation fails.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use plugin_glue::plugin::Plugin;
    /// // SAFETY: the default XLA CPU plugin is a PJRT plugin.
    /// let plugin = unsafe { Plugin::load(".venv/lib/python3.11/site-packages/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so".as_ref()) }?;
    /// assert_eq!(plugin.api_version().0, 0);
    /// # Ok::<(), plugin_glue::Error>(())
    /// ```
    ///
    /// # Safety
    ///
    /// `path` must be a PJRT plugin: loading it runs its initialisers, and
    /// the functions of the table its `GetPjrtApi` returns are called as
    /// `pjrt_c_api.h` declares them. Nothing here can check that a library
    /// exporting `GetPjrtApi` keeps that contract; the caller vouches for it
    /// (as for libloading's `Library::new`).
    pub unsafe fn load(path: &Path) -> Result<Plugin> {
        // SAFETY: the caller vouches that `path` is a PJRT plugin.
        let library = unsafe { open_library(path) }?;
        // SAFETY: `GetPjrtApi` has this signature in every PJRT plugin
        // (pjrt_c_api.h: `const PJRT_Api* GetPjrtApi()`), and the caller
        // vouches that this library is one (this function's contract).
        let get_api =
            unsafe { library.get::<GetPjrtApiFn>(GET_PJRT_API.as_bytes()) }.map_err(|source| {
                Error::NotAPlugin {
                    path: path.to_owned(),
                    source,
                }
            })?;
        let get_api: GetPjrtApiFn = *get_api;
        // Never unload: see the module docs.
        std::mem::forget(library);

        // SAFETY: `get_api` is the plugin's `GetPjrtApi`, which takes no
        // arguments and returns a pointer to a static table (or NULL).
        let api = unsafe { get_api() };
        if api.is_null() {
            return Err(Error::NullApi {
                path: path.to_owned(),
            });
        }
        // SAFETY: `api` is non-NULL and points to the plugin's `PJRT_Api`,
        // which starts with its `size_t struct_size` in every PJRT version.
        let struct_size = unsafe { api.cast::<usize>().read() };
        if struct_size < pjrt::PJRT_API_FUNCTIONS_OFFSET {
            return Err(Error::StructSize {
                name: "PJRT_Api",
                expected: pjrt::PJRT_API_FUNCTIONS_OFFSET,
                got: struct_size,
            });
        }
        // SAFETY: the table's struct_size covers the 40-byte header
        // (struct_size, extension_start, pjrt_api_version), checked above.
        let header = unsafe { &*api };
        let version = (
            header.pjrt_api_version.major_version,
            header.pjrt_api_version.minor_version,
        );
        if version.0 != pjrt::PJRT_API_MAJOR {
            return Err(Error::UnsupportedApiVersion {
                path: path.to_owned(),
                major: version.0,
                minor: version.1,
            });
        }
        let extensions = walk_extensions(header.extension_start);
        let plugin = Plugin {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                api,
                version,
                extensions,
            }),
        };
        // The error functions must exist before anything can fail in PJRT.
        plugin.function(slot::PJRT_Error_Destroy)?;
        plugin.function(slot::PJRT_Error_Message)?;
        plugin.function(slot::PJRT_Error_GetCode)?;
        plugin.initialize()?;
        tracing::debug!(
            path = %path.display(),
            major = version.0,
            minor = version.1,
            slots = pjrt::slot_count(header.struct_size),
            extensions = ?plugin.extensions(),
            "loaded PJRT plugin"
        );
        Ok(plugin)
    }

    /// The path the plugin was loaded from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The plugin's PJRT API version `(major, minor)`.
    pub fn api_version(&self) -> (i32, i32) {
        self.inner.version
    }

    /// The plugin's `PJRT_Api.struct_size`.
    pub fn api_struct_size(&self) -> usize {
        self.api().struct_size
    }

    /// The plugin's whole `PJRT_Api` table as bytes (`struct_size` of them),
    /// for a library that wraps the plugin and serves a copy of its table.
    pub fn table_bytes(&self) -> &'static [u8] {
        let size = self.api().struct_size;
        // SAFETY: the table is at least `struct_size` bytes (its own header
        // says so, checked at load to cover the header), lives in the
        // never-unloaded library and is never mutated (see `Inner`).
        unsafe { std::slice::from_raw_parts(self.inner.api.cast::<u8>(), size) }
    }

    /// The extensions in the plugin's chain, in chain order.
    pub fn extensions(&self) -> Vec<Extension> {
        self.inner.extensions.iter().map(|(e, _)| *e).collect()
    }

    /// The FFI extension (`PJRT_Extension_Type_FFI`).
    ///
    /// # Errors
    ///
    /// [`Error::MissingExtension`] if the chain has none,
    /// [`Error::StructSize`] if its `struct_size` is below
    /// `PJRT_FFI_Extension_STRUCT_SIZE` (48).
    pub fn ffi_extension(&self) -> Result<&'static PJRT_FFI_Extension> {
        let (info, base) = self
            .inner
            .extensions
            .iter()
            .find(|(e, _)| e.kind == pjrt::PJRT_Extension_Type_FFI)
            .ok_or(Error::MissingExtension { extension: "FFI" })?;
        if info.struct_size < pjrt::PJRT_FFI_Extension_STRUCT_SIZE {
            return Err(Error::StructSize {
                name: "PJRT_FFI_Extension",
                expected: pjrt::PJRT_FFI_Extension_STRUCT_SIZE,
                got: info.struct_size,
            });
        }
        // SAFETY: `base` is a non-NULL extension of type FFI whose
        // struct_size covers the whole `PJRT_FFI_Extension`; it lives in the
        // never-unloaded library and is never mutated, so a `'static` shared
        // reference is sound.
        Ok(unsafe { &*base.cast::<PJRT_FFI_Extension>() })
    }

    /// Registers `handler` for the custom-call target `target` on the
    /// `Host` platform through the FFI extension's `register_handler`.
    ///
    /// XLA calls the handler synchronously, on this thread, with a metadata
    /// probe before this returns; a wrong answer makes XLA drop the
    /// registration silently while this still returns `Ok` (docs/abi.md,
    /// "Metadata probe"). Checking the probe is the registry's job.
    ///
    /// # Safety
    ///
    /// `handler` must implement the XLA FFI handler protocol for every call
    /// XLA makes (the metadata probe included, from any thread and
    /// concurrently) and stay callable for the rest of the process: XLA keeps
    /// the pointer forever.
    ///
    /// # Errors
    ///
    /// The FFI extension's errors (see [`Plugin::ffi_extension`]),
    /// [`Error::NullFunction`] if its `register_handler` is NULL, and
    /// [`Error::Pjrt`] (function `PJRT_FFI_Register_Handler`) if the plugin
    /// rejects the registration.
    pub unsafe fn register_handler(
        &self,
        target: &str,
        handler: XLA_FFI_Handler,
        traits: u32,
    ) -> Result<()> {
        let extension = self.ffi_extension()?;
        let register = extension.register_handler.ok_or(Error::NullFunction {
            function: "PJRT_FFI_Register_Handler",
        })?;
        let mut args = pjrt::PJRT_FFI_Register_Handler_Args::for_target(
            target,
            handler as *mut c_void,
            pjrt::PJRT_FFI_PLATFORM_HOST,
            traits,
        );
        // SAFETY: `register` is the plugin's FFI `register_handler`; `args`
        // is a fully initialised `PJRT_FFI_Register_Handler_Args` whose
        // strings (`target`, the static platform name) outlive the call; the
        // caller guarantees the handler's validity.
        let error = unsafe { register(&mut args) };
        // SAFETY: `error` is what the plugin's function just returned, ours.
        unsafe { self.check("PJRT_FFI_Register_Handler", error) }
    }

    /// The plugin's attributes (`PJRT_Plugin_Attributes`), values rendered
    /// as text: `xla_version`, `stablehlo_current_version`,
    /// `stablehlo_minimum_version`, ... Lists render as `[1, 2, 3]`.
    ///
    /// # Errors
    ///
    /// [`Error::FunctionNotAvailable`] / [`Error::NullFunction`] if the
    /// plugin lacks the function, [`Error::Pjrt`] if it fails.
    pub fn attributes(&self) -> Result<Vec<(String, String)>> {
        let mut args = pjrt::PJRT_Plugin_Attributes_Args::new();
        // SAFETY: `PJRT_Plugin_Attributes` only writes its out fields, and
        // `args` is initialised.
        unsafe { self.call(slot::PJRT_Plugin_Attributes, &mut args) }?;
        // SAFETY: on success the plugin set `attributes`/`num_attributes` to
        // an array that lives as long as the process (header contract).
        let values = unsafe { raw_slice(args.attributes, args.num_attributes) };
        values
            .iter()
            .map(|value| {
                // SAFETY: `value` is one of the plugin's `PJRT_NamedValue`s,
                // whose `name`/`value` fields follow the header's contract.
                unsafe { named_value_to_text(value) }
            })
            .collect()
    }

    /// The plugin's `PJRT_Api` table.
    pub fn api(&self) -> &PJRT_Api {
        // SAFETY: checked non-NULL at load; the table lives as long as the
        // never-unloaded library and is not mutated.
        unsafe { &*self.inner.api }
    }

    /// The function in `slot`, after checking that the plugin's table is
    /// long enough to hold it and that it is not NULL.
    pub fn function<F: Copy>(&self, slot: ApiFunction<F>) -> Result<F> {
        const {
            assert!(size_of::<F>() == size_of::<*const c_void>());
        }
        let api = self.api();
        if api.struct_size < slot.end() {
            return Err(Error::FunctionNotAvailable {
                function: slot.name(),
                major: self.inner.version.0,
                minor: self.inner.version.1,
            });
        }
        // SAFETY: `struct_size` says the table extends at least to
        // `slot.end()`, so the pointer-sized read at `slot.offset()` is in
        // bounds of the plugin's table; the field is a C function pointer
        // (possibly NULL), read as a raw pointer.
        let raw = unsafe {
            self.inner
                .api
                .cast::<u8>()
                .add(slot.offset())
                .cast::<*const c_void>()
                .read_unaligned()
        };
        if raw.is_null() {
            return Err(Error::NullFunction {
                function: slot.name(),
            });
        }
        // SAFETY: `ApiFunction<F>` values are only created in `ffi::pjrt::slot`,
        // with `F` the header's signature of the function at that index; `F`
        // is a pointer-sized `extern "C" fn` type (asserted above) and `raw`
        // is non-NULL.
        Ok(unsafe { std::mem::transmute_copy::<*const c_void, F>(&raw) })
    }

    /// Calls the fallible function in `slot` with `args` and turns the
    /// `PJRT_Error*` it returns into a `Result` naming that function.
    ///
    /// # Errors
    ///
    /// As [`Plugin::function`] if the slot is unavailable; [`Error::Pjrt`]
    /// with XLA's code and message if the call fails.
    ///
    /// # Safety
    ///
    /// `args` must meet the contract of the function in `slot`: the handles
    /// in it are live (and owned, for a function that destroys them) and
    /// every pointer in it is valid for what the function reads and writes.
    pub unsafe fn call<A>(
        &self,
        slot: ApiFunction<unsafe extern "C" fn(*mut A) -> *mut PJRT_Error>,
        args: &mut A,
    ) -> Result<()> {
        let function = self.function(slot)?;
        // SAFETY: `function` is the plugin's function in `slot`, which takes
        // `*mut A`; the caller vouches for `args`.
        let error = unsafe { function(args) };
        // SAFETY: `error` is what the plugin's function just returned, ours.
        unsafe { self.check(slot.name(), error) }
    }

    /// Turns a `PJRT_Error*` returned by `function` into a `Result`: reads
    /// code and message, destroys the error.
    ///
    /// # Errors
    ///
    /// [`Error::Pjrt`] with XLA's code and message if `error` is not NULL.
    ///
    /// # Safety
    ///
    /// `error` must be NULL or a live `PJRT_Error*` just returned by one of
    /// this plugin's functions, owned by the caller (it is destroyed here).
    pub unsafe fn check(&self, function: &'static str, error: *mut PJRT_Error) -> Result<()> {
        if error.is_null() {
            return Ok(());
        }
        // SAFETY: `error` is a non-NULL `PJRT_Error*` just returned by one of
        // this plugin's functions, owned by us and not yet destroyed
        // (this function's contract).
        let (code, message) = unsafe { self.take_error(error) };
        Err(Error::Pjrt {
            function,
            code,
            message,
        })
    }

    /// Reads and destroys a PJRT error.
    ///
    /// # Safety
    ///
    /// `error` must be a live `PJRT_Error*` of this plugin that the caller
    /// owns; it is destroyed here.
    unsafe fn take_error(&self, error: *mut PJRT_Error) -> (ErrorCode, String) {
        let message = match self.function(slot::PJRT_Error_Message) {
            Ok(message_fn) => {
                let mut args = pjrt::PJRT_Error_Message_Args::new();
                args.error = error;
                // SAFETY: `message_fn` is the plugin's `PJRT_Error_Message`
                // and `error` is live (caller's contract).
                unsafe { message_fn(&mut args) };
                // SAFETY: the plugin set `message`/`message_size` to bytes
                // that stay valid until the error is destroyed (below).
                let bytes = unsafe { raw_slice(args.message.cast::<u8>(), args.message_size) };
                String::from_utf8_lossy(bytes).into_owned()
            }
            Err(e) => format!("(no message: {e})"),
        };
        let code = match self.function(slot::PJRT_Error_GetCode) {
            Ok(code_fn) => {
                let mut args = pjrt::PJRT_Error_GetCode_Args::new();
                args.error = error;
                // SAFETY: `code_fn` is the plugin's `PJRT_Error_GetCode` and
                // `error` is live (caller's contract).
                let nested = unsafe { code_fn(&mut args) };
                if nested.is_null() {
                    ErrorCode::from_c(args.code)
                } else {
                    // Do not recurse: drop the nested error and report UNKNOWN.
                    // SAFETY: `nested` is a fresh error owned by us.
                    unsafe { self.destroy_error(nested) };
                    ErrorCode::Unknown
                }
            }
            Err(_) => ErrorCode::Unknown,
        };
        // SAFETY: `error` is live and owned (caller's contract); destroyed once.
        unsafe { self.destroy_error(error) };
        (code, message)
    }

    /// # Safety
    ///
    /// `error` must be a live `PJRT_Error*` of this plugin owned by the caller.
    unsafe fn destroy_error(&self, error: *mut PJRT_Error) {
        match self.function(slot::PJRT_Error_Destroy) {
            Ok(destroy) => {
                let mut args = pjrt::PJRT_Error_Destroy_Args::new();
                args.error = error;
                // SAFETY: `destroy` is the plugin's `PJRT_Error_Destroy` and
                // `error` is live and owned (caller's contract).
                unsafe { destroy(&mut args) };
            }
            Err(e) => tracing::warn!("leaking a PJRT error: {e}"),
        }
    }

    fn initialize(&self) -> Result<()> {
        let key = self.inner.api as usize;
        let mut done = INITIALIZED.lock().unwrap_or_else(|p| p.into_inner());
        let done = done.get_or_insert_with(HashSet::new);
        if done.contains(&key) {
            return Ok(());
        }
        let mut args = pjrt::PJRT_Plugin_Initialize_Args::new();
        // SAFETY: `PJRT_Plugin_Initialize` takes no input; the lock held
        // here makes it run once per table in this process.
        unsafe { self.call(slot::PJRT_Plugin_Initialize, &mut args) }?;
        done.insert(key);
        Ok(())
    }
}

/// # Safety
///
/// Loading a library runs its initialisers: `path` must be one the caller
/// vouches for (see [`Plugin::load`]).
unsafe fn open_library(path: &Path) -> Result<libloading::Library> {
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading a library runs its initialisers; the caller
        // vouches for the file (this function's contract).
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
            .map(libloading::Library::from)
            .map_err(|source| Error::LoadLibrary {
                path: path.to_owned(),
                source,
            })
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above.
        unsafe { libloading::Library::new(path) }.map_err(|source| Error::LoadLibrary {
            path: path.to_owned(),
            source,
        })
    }
}

/// Walks the extension chain from `start`, at most [`MAX_EXTENSIONS`] links.
/// NULL ends it; an entry too small to hold a `PJRT_Extension_Base` is
/// recorded and ends it (its `next` cannot be trusted).
fn walk_extensions(
    start: *mut PJRT_Extension_Base,
) -> Vec<(Extension, *const PJRT_Extension_Base)> {
    let mut found = Vec::new();
    let mut current = start.cast_const();
    while !current.is_null() {
        if found.len() == MAX_EXTENSIONS {
            tracing::warn!(
                "PJRT extension chain longer than {MAX_EXTENSIONS} entries (cyclic?); ignoring the rest"
            );
            break;
        }
        // SAFETY: `current` is non-NULL and was reached from the plugin's
        // `extension_start` through `next` links of extensions whose
        // struct_size covers `next`; every extension begins with a
        // `PJRT_Extension_Base` (header contract).
        let base = unsafe { &*current };
        found.push((
            Extension {
                kind: base.type_,
                struct_size: base.struct_size,
            },
            current,
        ));
        if base.struct_size < pjrt::PJRT_Extension_Base_STRUCT_SIZE {
            tracing::warn!(
                kind = base.type_,
                struct_size = base.struct_size,
                "PJRT extension smaller than PJRT_Extension_Base; ending the walk"
            );
            break;
        }
        current = base.next.cast_const();
    }
    found
}

/// A slice from a C (pointer, length) pair; `(NULL, 0)` and `(_, 0)` give `[]`.
///
/// # Safety
///
/// If `len > 0`, `ptr` must point to `len` initialised `T`s valid for `'a`.
pub unsafe fn raw_slice<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if len == 0 || ptr.is_null() {
        &[]
    } else {
        // SAFETY: non-NULL, `len` elements valid for 'a (caller's contract).
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// Renders a plugin attribute as `(name, text)`.
///
/// # Safety
///
/// `value` must follow the header's `PJRT_NamedValue` contract: `name` has
/// `name_size` bytes, and the union member selected by `type_` is valid with
/// `value_size` elements.
unsafe fn named_value_to_text(value: &pjrt::PJRT_NamedValue) -> Result<(String, String)> {
    // SAFETY: caller's contract.
    let name = unsafe { raw_slice(value.name.cast::<u8>(), value.name_size) };
    let name = String::from_utf8_lossy(name).into_owned();
    let text = match value.type_ {
        pjrt::PJRT_NamedValue_kString => {
            // SAFETY: kString: `string_value` has `value_size` bytes.
            let bytes =
                unsafe { raw_slice(value.value.string_value.cast::<u8>(), value.value_size) };
            String::from_utf8_lossy(bytes).into_owned()
        }
        // SAFETY: kInt64: `int64_value` is the live member.
        pjrt::PJRT_NamedValue_kInt64 => unsafe { value.value.int64_value }.to_string(),
        pjrt::PJRT_NamedValue_kInt64List => {
            // SAFETY: kInt64List: `int64_array_value` has `value_size` elements.
            let list = unsafe { raw_slice(value.value.int64_array_value, value.value_size) };
            let items: Vec<String> = list.iter().map(i64::to_string).collect();
            format!("[{}]", items.join(", "))
        }
        // SAFETY: kFloat: `float_value` is the live member.
        pjrt::PJRT_NamedValue_kFloat => unsafe { value.value.float_value }.to_string(),
        pjrt::PJRT_NamedValue_kBool => {
            // Read the byte rather than a Rust `bool`, so a C value other
            // than 0/1 cannot be an invalid `bool`.
            // SAFETY: kBool: the union's first byte is the live `bool` member.
            let byte = unsafe { std::ptr::from_ref(&value.value).cast::<u8>().read() };
            (byte != 0).to_string()
        }
        other => {
            return Err(Error::InvalidInput(format!(
                "plugin attribute `{name}` has unknown PJRT_NamedValue_Type {other}"
            )));
        }
    };
    Ok((name, text))
}
