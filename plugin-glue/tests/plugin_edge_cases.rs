//! Plugin loading edge cases, against the fake plugin (`cyxla-fake-plugin`)
//! and against files that are not plugins.
//!
//! The fake plugin picks its `PJRT_Api` table from `CYXLA_FAKE_PLUGIN_MODE`
//! at every `GetPjrtApi` call; the dynamic loader hands back the same image
//! for the same path, so every mode is tested in this one process. Tests
//! take [`MODE_LOCK`] so that they never change the environment while
//! another test loads.

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use cyxla_pjrt_client::Client;
use plugin_glue::ffi::xla_ffi::{XLA_FFI_CallFrame, XLA_FFI_Error};
use plugin_glue::plugin::{Extension, MAX_EXTENSIONS, Plugin};
use plugin_glue::{Error, ErrorCode};

const MODE_VAR: &str = "CYXLA_FAKE_PLUGIN_MODE";

static MODE_LOCK: Mutex<()> = Mutex::new(());

/// The built fake plugin: `target/<profile>/libcyxla_fake_plugin.so`, next
/// to the directory of this test executable (`target/<profile>/deps`).
fn fake_plugin_path() -> PathBuf {
    let name = format!(
        "{}cyxla_fake_plugin{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let exe = std::env::current_exe().expect("current test executable");
    let deps = exe.parent().expect("test executable directory");
    let mut candidates = vec![deps.join(&name)];
    if let Some(profile) = deps.parent() {
        candidates.insert(0, profile.join(&name));
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    candidates.push(workspace.join("target").join("debug").join(&name));
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "the fake plugin {name} is not built (looked in {candidates:?}); build it with \
                 `cargo build -p cyxla-fake-plugin` (`cargo test --workspace` builds it too)"
            )
        })
}

/// Loads the fake plugin with `mode` selected; holds the lock meanwhile.
fn load_mode(mode: &str) -> (Result<Plugin, Error>, MutexGuard<'static, ()>) {
    let guard = MODE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: `MODE_LOCK` serialises every test of this binary that touches
    // the environment or loads a library, and no other thread of this test
    // process reads the environment meanwhile.
    unsafe { std::env::set_var(MODE_VAR, mode) };
    // SAFETY: the fake plugin built from tests/fake-plugin keeps the
    // PJRT contract for every function it offers.
    let result = unsafe { Plugin::load(&fake_plugin_path()) };
    (result, guard)
}

fn load_ok(mode: &str) -> (Plugin, MutexGuard<'static, ()>) {
    let (result, guard) = load_mode(mode);
    let plugin = result.unwrap_or_else(|e| panic!("fake plugin in mode `{mode}`: {e}"));
    (plugin, guard)
}

unsafe extern "C" fn dummy_handler(_frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
    std::ptr::null_mut()
}

/// Asserts that the error `err` matches `pattern`, printing it if not.
macro_rules! assert_err {
    ($err:expr, $pattern:pat) => {{
        let err = &$err;
        assert!(matches!(err, $pattern), "{err:?}");
    }};
}

/// Asserts that `err` is the PJRT error `code: message` of `function`.
fn assert_pjrt_error(err: Error, function: &str, code: ErrorCode, message: &str) {
    match err {
        Error::Pjrt {
            function: got_function,
            code: got_code,
            message: got_message,
        } => {
            assert_eq!(got_function, function);
            assert_eq!(got_code, code);
            assert_eq!(got_message, message);
        }
        other => panic!("expected a PJRT error, got {other:?}"),
    }
}

/// Asserts that loading the fake plugin in `mode` fails with an error
/// matching `pattern`.
macro_rules! assert_load_fails {
    ($mode:expr, $pattern:pat) => {{
        let (result, _guard) = load_mode($mode);
        assert_err!(result.unwrap_err(), $pattern);
    }};
}

#[test]
fn ok_mode_loads_with_version_extensions_and_attributes() {
    let (plugin, _guard) = load_ok("ok");
    assert_eq!(plugin.api_version(), (0, 81));
    assert_eq!(plugin.api_struct_size(), 984);
    assert_eq!(plugin.path(), fake_plugin_path());
    assert_eq!(
        plugin.extensions(),
        vec![
            Extension {
                kind: 4,
                struct_size: 80
            },
            Extension {
                kind: 5,
                struct_size: 48
            }
        ]
    );
    assert_eq!(plugin.extensions()[1].name(), "FFI");
    let ffi = plugin.ffi_extension().expect("FFI extension");
    assert_eq!(ffi.base.struct_size, 48);
    assert!(ffi.register_handler.is_some());
    assert_eq!(
        plugin.attributes().expect("attributes"),
        vec![
            ("xla_version".to_string(), "2".to_string()),
            ("fake_string".to_string(), "hello".to_string()),
            ("fake_list".to_string(), "[1, 2, 3]".to_string()),
            ("fake_float".to_string(), "0.5".to_string()),
            ("fake_bool".to_string(), "true".to_string()),
        ]
    );
    // Clones share the same plugin and can cross threads.
    let clone = plugin.clone();
    std::thread::spawn(move || assert_eq!(clone.api_version(), (0, 81)))
        .join()
        .unwrap();
}

#[test]
fn register_handler_sends_the_v3_layout_with_platform_host() {
    let (plugin, _guard) = load_ok("ok");
    // SAFETY: `dummy_handler` is never called by the fake plugin.
    unsafe { plugin.register_handler("my_target", dummy_handler, 0) }.expect("registration");
    // SAFETY: as above.
    let err = unsafe { plugin.register_handler("fake_echo_target", dummy_handler, 1) }.unwrap_err();
    assert_pjrt_error(
        err,
        "PJRT_FFI_Register_Handler",
        ErrorCode::InvalidArgument,
        "fake register_handler: target=fake_echo_target platform=Host traits=1 \
         struct_size=52 handler=non-null",
    );
}

#[test]
fn missing_client_functions_are_typed_errors() {
    // The 0.81-sized table has PJRT_Client_Create's slot, but it is NULL.
    let (plugin, _guard) = load_ok("ok");
    let err = Client::new(&plugin, Some(1)).unwrap_err();
    assert_err!(
        err,
        Error::NullFunction {
            function: "PJRT_Client_Create"
        }
    );
    assert!(err.to_string().contains("PJRT_Client_Create"), "{err}");
}

#[test]
fn short_table_names_function_and_version() {
    let (plugin, _guard) = load_ok("short");
    assert_eq!(plugin.api_struct_size(), 80);
    // Slots 0-4 are present, so attributes still work.
    assert!(plugin.attributes().is_ok());
    let err = Client::new(&plugin, None).unwrap_err();
    match &err {
        Error::FunctionNotAvailable {
            function,
            major,
            minor,
        } => {
            assert_eq!(*function, "PJRT_Client_Create");
            assert_eq!((*major, *minor), (0, 81));
        }
        other => panic!("expected FunctionNotAvailable, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("PJRT_Client_Create") && text.contains("0.81"),
        "{text}"
    );
}

#[test]
fn header_only_table_fails_at_load() {
    assert_load_fails!(
        "header-only",
        Error::FunctionNotAvailable {
            function: "PJRT_Error_Destroy",
            major: 0,
            minor: 81
        }
    );
}

#[test]
fn table_shorter_than_its_header_is_rejected() {
    assert_load_fails!(
        "tiny-api",
        Error::StructSize {
            name: "PJRT_Api",
            expected: 40,
            got: 16
        }
    );
}

#[test]
fn null_initialize_is_a_null_function_error() {
    assert_load_fails!(
        "null-init",
        Error::NullFunction {
            function: "PJRT_Plugin_Initialize"
        }
    );
}

#[test]
fn failing_initialize_reports_pjrt_code_and_message() {
    let (result, _guard) = load_mode("init-error");
    assert_pjrt_error(
        result.unwrap_err(),
        "PJRT_Plugin_Initialize",
        ErrorCode::InvalidArgument,
        "fake: initialization refused",
    );
}

#[test]
fn null_extension_chain_loads_without_ffi() {
    let (plugin, _guard) = load_ok("null-ext");
    assert!(plugin.extensions().is_empty());
    let err = plugin.ffi_extension().unwrap_err();
    assert_err!(err, Error::MissingExtension { extension: "FFI" });
    // SAFETY: the handler is never registered (no extension).
    let err = unsafe { plugin.register_handler("t", dummy_handler, 0) }.unwrap_err();
    assert_err!(err, Error::MissingExtension { .. });
}

#[test]
fn unknown_extension_types_are_skipped() {
    let (plugin, _guard) = load_ok("unknown-ext");
    let kinds: Vec<u32> = plugin.extensions().iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![9999, 12345, 5]);
    assert_eq!(plugin.extensions()[0].name(), "?");
    assert!(plugin.ffi_extension().is_ok());
}

#[test]
fn too_small_ffi_extension_is_rejected() {
    let (plugin, _guard) = load_ok("bad-ffi-size");
    let expected = |err: &Error| {
        matches!(
            err,
            Error::StructSize {
                name: "PJRT_FFI_Extension",
                expected: 48,
                got: 40
            }
        )
    };
    let err = plugin.ffi_extension().unwrap_err();
    assert!(expected(&err), "{err:?}");
    // SAFETY: registration is refused before the extension is used.
    let err = unsafe { plugin.register_handler("t", dummy_handler, 0) }.unwrap_err();
    assert!(expected(&err), "{err:?}");
}

#[test]
fn cyclic_extension_chain_walk_is_bounded() {
    let (plugin, _guard) = load_ok("cyclic-ext");
    assert_eq!(plugin.extensions().len(), MAX_EXTENSIONS);
    assert!(matches!(
        plugin.ffi_extension(),
        Err(Error::MissingExtension { .. })
    ));
}

#[test]
fn extension_smaller_than_its_base_ends_the_walk() {
    let (plugin, _guard) = load_ok("tiny-ext");
    assert_eq!(
        plugin.extensions(),
        vec![Extension {
            kind: 10,
            struct_size: 8
        }]
    );
    assert!(matches!(
        plugin.ffi_extension(),
        Err(Error::MissingExtension { .. })
    ));
}

#[test]
fn major_version_one_is_unsupported() {
    assert_load_fails!(
        "major1",
        Error::UnsupportedApiVersion {
            major: 1,
            minor: 81,
            ..
        }
    );
}

#[test]
fn get_pjrt_api_returning_null_is_reported() {
    let (result, _guard) = load_mode("null-api");
    let err = result.unwrap_err();
    match &err {
        Error::NullApi { path } => assert_eq!(path, &fake_plugin_path()),
        other => panic!("expected NullApi, got {other:?}"),
    }
}

#[test]
fn plain_file_is_not_a_library() {
    let _guard = MODE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-plugin.so");
    std::fs::write(&path, b"this is text, not ELF").unwrap();
    // SAFETY: a library the test wrote to be refused before anything of it runs.
    let err = unsafe { Plugin::load(&path) }.unwrap_err();
    match &err {
        Error::LoadLibrary { path: p, .. } => assert_eq!(p, &path),
        other => panic!("expected LoadLibrary, got {other:?}"),
    }
    assert!(err.to_string().contains("not-a-plugin.so"), "{err}");
}

#[test]
fn missing_file_is_a_load_error() {
    let _guard = MODE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: no such file: nothing is loaded.
    let err = unsafe { Plugin::load(Path::new("/nonexistent/cyxla/plugin.so")) }.unwrap_err();
    assert_err!(err, Error::LoadLibrary { .. });
}

#[test]
fn a_real_library_without_get_pjrt_api_is_not_a_plugin() {
    let _guard = MODE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: libm's initialisers are the C library's; it has no GetPjrtApi,
    // so none of it is called as a plugin.
    let err = unsafe { Plugin::load(Path::new("libm.so.6")) }.unwrap_err();
    match &err {
        Error::NotAPlugin { path, .. } => assert_eq!(path, Path::new("libm.so.6")),
        other => panic!("expected NotAPlugin, got {other:?}"),
    }
    assert!(err.to_string().contains("GetPjrtApi"), "{err}");
}

#[test]
fn loading_twice_shares_one_initialised_table() {
    let (first, guard) = load_ok("ok");
    drop(guard);
    let (second, _guard) = load_ok("ok");
    assert_eq!(first.api_version(), second.api_version());
    let a: *const c_void = std::ptr::from_ref(first.ffi_extension().unwrap()).cast();
    let b: *const c_void = std::ptr::from_ref(second.ffi_extension().unwrap()).cast();
    assert_eq!(a, b);
}
