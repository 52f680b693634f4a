//! End-to-end tests of the registry against the real XLA CPU plugins
//! (P115: FFI runtime 0.4, P106: 0.3, P81: 0.2), installed in the
//! workspace's `.venv` by `scripts/setup.sh`.
//!
//! Registrations are process-wide and permanent (XLA keeps the first one
//! per name and plugin image), so every test uses its own target names.

mod common;

use std::ffi::c_int;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cyxla_pjrt_client::Client;
use plugin_glue::ffi::xla_ffi::{
    XLA_FFI_CallFrame, XLA_FFI_Error, XLA_FFI_Extension_Metadata, XLA_FFI_Metadata_Extension,
};
use plugin_glue::frame::{Attr, Attrs, CallFrame, Scalar};
use plugin_glue::plugin::Plugin;
use plugin_glue::registry::{self, TargetKind};
use plugin_glue::{DType, Error, ErrorCode, Handler, HandlerError};

use common::{ALL, Which, f32_bytes, f32_values};

// ---------------------------------------------------------------------------
// Plugins and programs
// ---------------------------------------------------------------------------

/// `f32[4] -> f32[4]` through `custom_call @target` with `config` as the
/// typed-FFI attribute dictionary.
fn program(target: &str, config: &str) -> String {
    format!(
        r#"module @m {{
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {{
    %0 = stablehlo.custom_call @{target}(%arg0) {{api_version = 4 : i32, backend_config = {{{config}}}}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }}
}}"#
    )
}

/// Compiles `program` for one device and runs it on `input`.
/// Registers `handler` for `target` on `plugin`, then opens a client with
/// `devices` devices.
fn register_and_connect(
    plugin: &Plugin,
    target: &str,
    handler: Arc<dyn Handler>,
    devices: usize,
) -> Client {
    registry::register(plugin, target, handler).unwrap();
    Client::new(plugin, Some(devices)).unwrap()
}

fn run(client: &Client, program: &str, input: &[f32]) -> plugin_glue::Result<Vec<f32>> {
    let exe = client.compile(program.as_bytes(), 1)?;
    let x = client.buffer_from_host(&f32_bytes(input), DType::F32, &[4], 0)?;
    let out = exe.execute(&[vec![&x]])?;
    Ok(f32_values(&out[0][0].to_host()?))
}

const INPUT: [f32; 4] = [1.0, 2.0, 3.0, 4.0];

// ---------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------

/// `y = x * factor` with an f32 attribute `factor`.
struct Scale;

impl Handler for Scale {
    fn execute(&self, frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        let factor = match frame.attrs().scalar("factor")? {
            Scalar::F32(f) => f,
            other => {
                return Err(HandlerError::invalid_argument(format!(
                    "factor must be f32, got {other:?}"
                )));
            }
        };
        // SAFETY: the program does not alias the operand and the result.
        let x = unsafe { frame.arg(0)?.as_slice::<f32>() }?;
        // SAFETY: the only view of the result.
        let y = unsafe { frame.ret(0)?.as_uninit_slice::<f32>() }?;
        if x.len() != y.len() {
            return Err(HandlerError::invalid_argument("shape mismatch"));
        }
        for (y, x) in y.iter_mut().zip(x) {
            y.write(x * factor);
        }
        Ok(())
    }
}

/// Copies arg 0 to ret 0.
fn copy_through(frame: &CallFrame<'_>) -> Result<(), HandlerError> {
    // SAFETY: no aliasing in these programs.
    let x = unsafe { frame.arg(0)?.as_slice::<f32>() }?;
    // SAFETY: the only view of the result.
    unsafe { frame.ret(0)?.as_uninit_slice::<f32>() }?.write_copy_of_slice(x);
    Ok(())
}

/// Always fails with OUT_OF_RANGE.
struct Fails;

impl Handler for Fails {
    fn execute(&self, _frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        Err(HandlerError::new(
            ErrorCode::OutOfRange,
            "cyxla test: factor 9 is out of range",
        ))
    }
}

/// Panics on its first call, copies afterwards.
struct PanicsOnce(AtomicUsize);

impl Handler for PanicsOnce {
    fn execute(&self, frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("cyxla test panic {}", 42);
        }
        copy_through(frame)
    }
}

/// Records a dump of its attributes, copies arg to ret.
struct DumpAttrs(Mutex<Vec<String>>);

impl Handler for DumpAttrs {
    fn execute(&self, frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        let attrs = frame.attrs();
        let mut text = dump(attrs)?;
        // Lookups by name, including inside the dictionary.
        let dct = attrs
            .require("dct")?
            .as_dictionary()
            .expect("dct is a dictionary");
        text.push_str(&format!(
            " | get f64={:?} i32={:?} dct.z={:?} dct.a={:?} missing={:?}",
            attrs.scalar("f64")?,
            attrs.scalar("i32")?.to_i64(),
            dct.scalar("z")?,
            dct.get("a")?.and_then(|a| a.as_str()),
            attrs.get("missing")?.is_some(),
        ));
        self.0.lock().unwrap().push(text);
        copy_through(frame)
    }
}

fn dump(attrs: Attrs<'_>) -> Result<String, HandlerError> {
    let mut parts = Vec::new();
    for entry in attrs.iter() {
        let (name, value) = entry?;
        let value = match value {
            Attr::Scalar(s) => format!("{s:?}"),
            Attr::Array(a) => match a.dtype() {
                DType::S64 => format!("{:?}", a.as_slice::<i64>()?),
                DType::F32 => format!("{:?}", a.as_slice::<f32>()?),
                other => format!("{other}[{}]", a.len()),
            },
            Attr::String(s) => format!("{:?}", String::from_utf8_lossy(s)),
            Attr::Dictionary(d) => format!("{{{}}}", dump(d)?),
        };
        parts.push(format!("{}={value}", String::from_utf8_lossy(name)));
    }
    Ok(parts.join(", "))
}

/// Writes `device_ordinal` and `run_id` (as f32) into ret 0.
struct Ordinal;

impl Handler for Ordinal {
    fn execute(&self, frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        let ordinal = frame.device_ordinal()?;
        let run_id = frame.run_id()?;
        // SAFETY: the only view of the result.
        let y = unsafe { frame.ret(0)?.as_zeroed_slice::<f32>() }?;
        y[0] = ordinal as f32;
        y[1] = if run_id == i64::MIN { -1.0 } else { 1.0 };
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Foreign handlers written against the raw C API
// ---------------------------------------------------------------------------

/// If `frame` is XLA's metadata probe, answers it with API version
/// `0.minor` and returns true.
///
/// # Safety
///
/// `frame` must be a frame built by XLA.
unsafe fn answer_probe(frame: *mut XLA_FFI_CallFrame, minor: c_int) -> bool {
    // SAFETY: caller contract: XLA's frame; a probe's metadata is writable.
    unsafe {
        let ext = (*frame).extension_start;
        if ext.is_null() || (*ext).type_ != XLA_FFI_Extension_Metadata {
            return false;
        }
        let metadata = (*ext.cast::<XLA_FFI_Metadata_Extension>()).metadata;
        (*metadata).api_version.major_version = 0;
        (*metadata).api_version.minor_version = minor;
    }
    true
}

/// Ignores the probe (leaves 0.0): XLA drops it.
unsafe extern "C" fn foreign_ignores_probe(_frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
    ptr::null_mut()
}

/// Answers 0.3 (too new for P81) and negates arg 0 into ret 0.
unsafe extern "C" fn foreign_negate_v03(frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
    // SAFETY: XLA's frame.
    if unsafe { answer_probe(frame, 3) } {
        return ptr::null_mut();
    }
    // SAFETY: an EXECUTE frame from XLA, valid for this call.
    if let Ok(view) = unsafe { CallFrame::from_raw(frame) } {
        // SAFETY: no aliasing in the program; the only view of the result.
        let (x, y) = unsafe {
            (
                view.arg(0).and_then(|b| b.as_slice::<f32>()),
                view.ret(0).and_then(|b| b.as_uninit_slice::<f32>()),
            )
        };
        if let (Ok(x), Ok(y)) = (x, y) {
            for (y, x) in y.iter_mut().zip(x) {
                y.write(-x);
            }
        }
    }
    ptr::null_mut()
}

/// Answers 0.99, a version no runtime accepts and beyond the compatible range.
unsafe extern "C" fn foreign_v099(frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
    // SAFETY: XLA's frame.
    unsafe { answer_probe(frame, 99) };
    ptr::null_mut()
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn scale_runs_on_every_plugin() {
    for which in ALL {
        let plugin = which.load();
        let target = format!("cyxla_glue_scale_{}", which.label());
        let handler: Arc<dyn Handler> = Arc::new(Scale);
        registry::register(&plugin, &target, handler.clone())
            .unwrap_or_else(|e| panic!("{which:?}: {e}"));
        let client = Client::new(&plugin, Some(1)).unwrap();
        let out = run(&client, &program(&target, "factor = 2.5 : f32"), &INPUT)
            .unwrap_or_else(|e| panic!("{which:?}: {e}"));
        assert_eq!(out, [2.5, 5.0, 7.5, 10.0], "{which:?}");
        // Executing again reuses the registration.
        let out = run(&client, &program(&target, "factor = -1.0 : f32"), &INPUT).unwrap();
        assert_eq!(out, [-1.0, -2.0, -3.0, -4.0], "{which:?}");

        let entry = registry::lookup(&plugin, &target).expect("registered");
        assert_eq!(entry.kind, TargetKind::Native);
        assert_eq!(
            entry.api_version,
            (0, 3).min(which.runtime_ffi()),
            "{which:?}"
        );
        assert!(registry::registered().contains(&entry));
    }
}

#[test]
fn handler_errors_reach_the_client_with_code_and_message() {
    for which in ALL {
        let plugin = which.load();
        let target = format!("cyxla_glue_fails_{}", which.label());
        let client = register_and_connect(&plugin, &target, Arc::new(Fails), 1);
        match run(&client, &program(&target, ""), &INPUT) {
            Err(Error::Pjrt { code, message, .. }) => {
                assert_eq!(code, ErrorCode::OutOfRange, "{which:?}: {message}");
                assert!(
                    message.contains("cyxla test: factor 9 is out of range"),
                    "{which:?}: {message}"
                );
            }
            other => panic!("{which:?}: expected a PJRT error, got {other:?}"),
        }
    }
}

#[test]
fn a_panicking_handler_fails_its_call_only() {
    for which in ALL {
        let plugin = which.load();
        let target = format!("cyxla_glue_panics_{}", which.label());
        let handler = Arc::new(PanicsOnce(AtomicUsize::new(0)));
        let client = register_and_connect(&plugin, &target, handler, 1);
        let program = program(&target, "");
        match run(&client, &program, &INPUT) {
            Err(Error::Pjrt { code, message, .. }) => {
                assert_eq!(code, ErrorCode::Internal, "{which:?}: {message}");
                assert!(
                    message.contains(&format!(
                        "handler for target `{target}` panicked: cyxla test panic 42"
                    )),
                    "{which:?}: {message}"
                );
            }
            other => panic!("{which:?}: expected a PJRT error, got {other:?}"),
        }
        assert_eq!(run(&client, &program, &INPUT).unwrap(), INPUT, "{which:?}");
    }
}

#[test]
fn attributes_of_every_kind_are_decoded() {
    let config = r#"arr = array<i64: 1, 2, 3>, b = true, dct = {z = 5 : i32, a = "s"}, empty = "", f32 = 1.5 : f32, f64 = 2.25 : f64, farr = array<f32: 0.5, 1.5>, i32 = -3 : i32, i64 = -7 : i64, name = "h\C3\A9llo", u8 = 200 : ui8, Zupper = 1 : i32"#;
    let expected = r#"Zupper=S32(1), arr=[1, 2, 3], b=Pred(true), dct={a="s", z=S32(5)}, empty="", f32=F32(1.5), f64=F64(2.25), farr=[0.5, 1.5], i32=S32(-3), i64=S64(-7), name="héllo", u8=U8(200) | get f64=F64(2.25) i32=Some(-3) dct.z=S32(5) dct.a=Some("s") missing=false"#;
    for which in ALL {
        let plugin = which.load();
        let target = format!("cyxla_glue_attrs_{}", which.label());
        let handler = Arc::new(DumpAttrs(Mutex::new(Vec::new())));
        let client = register_and_connect(&plugin, &target, handler.clone(), 1);
        let out = run(&client, &program(&target, config), &INPUT)
            .unwrap_or_else(|e| panic!("{which:?}: {e}"));
        assert_eq!(out, INPUT);
        let dumps = handler.0.lock().unwrap();
        assert_eq!(dumps.len(), 1, "{which:?}");
        assert_eq!(dumps[0], expected, "{which:?}");
    }
}

#[test]
fn a_foreign_handler_that_ignores_the_probe_is_reported_dropped() {
    for which in ALL {
        let plugin = which.load();
        let target = format!("cyxla_glue_foreign_ignores_{}", which.label());
        let error = registry::register_foreign(
            &plugin,
            &target,
            foreign_ignores_probe,
            "test fn foreign_ignores_probe".into(),
        )
        .unwrap_err();
        let (max_major, max_minor) = which.runtime_ffi();
        match &error {
            Error::RegistrationDropped { target: t, reason } => {
                assert_eq!(t, &target);
                assert_eq!(
                    reason,
                    &format!(
                        "its metadata probe answered version 0.0 (expected 0.1..={max_major}.{max_minor})"
                    )
                );
            }
            other => panic!("{which:?}: expected RegistrationDropped, got {other:?}"),
        }
        assert!(registry::lookup(&plugin, &target).is_none());
        // XLA really dropped it: the program does not compile.
        let client = Client::new(&plugin, Some(1)).unwrap();
        match client.compile(program(&target, "").as_bytes(), 1) {
            Err(Error::Pjrt { code, message, .. }) => {
                assert_eq!(code, ErrorCode::NotFound, "{which:?}: {message}");
                assert!(message.contains(&target), "{which:?}: {message}");
            }
            other => panic!("{which:?}: expected NOT_FOUND, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn a_foreign_handler_is_checked_against_the_runtime_version() {
    // Built against 0.3 headers: runs everywhere, its answer clamped to the
    // runtime's version where that is older (P81 runs 0.2).
    for which in ALL {
        let plugin = which.load();
        let target = format!("cyxla_glue_foreign_negate_{}", which.label());
        registry::register_foreign(
            &plugin,
            &target,
            foreign_negate_v03,
            "test fn foreign_negate_v03".into(),
        )
        .unwrap_or_else(|e| panic!("{which:?}: {e}"));
        let client = Client::new(&plugin, Some(1)).unwrap();
        let entry = registry::lookup(&plugin, &target).unwrap();
        assert_eq!(entry.kind, TargetKind::Foreign);
        assert_eq!(entry.origin, "test fn foreign_negate_v03");
        assert_eq!(
            entry.api_version,
            which.runtime_ffi().min((0, 3)),
            "{which:?}"
        );
        let out = run(&client, &program(&target, ""), &INPUT).unwrap();
        assert_eq!(out, [-1.0, -2.0, -3.0, -4.0], "{which:?}");
    }
    // A version beyond the layout-compatible range is not clamped: dropped.
    for which in ALL {
        let plugin = which.load();
        let target = format!("cyxla_glue_foreign_v99_{}", which.label());
        match registry::register_foreign(&plugin, &target, foreign_v099, "test fn v0.99".into()) {
            Err(Error::RegistrationDropped { reason, .. }) => {
                assert!(reason.contains("answered version 0.99"), "{reason}")
            }
            other => panic!("{which:?}: expected RegistrationDropped, got {other:?}"),
        }
        let client = Client::new(&plugin, Some(1)).unwrap();
        assert!(client.compile(program(&target, "").as_bytes(), 1).is_err());
    }
}

#[test]
fn registering_a_target_twice() {
    let plugin = Which::P115.load();
    let target = "cyxla_glue_twice";
    let first: Arc<dyn Handler> = Arc::new(Scale);
    registry::register(&plugin, target, first.clone()).unwrap();
    // The same handler again: fine (also through a second load of the plugin).
    registry::register(&plugin, target, first.clone()).unwrap();
    registry::register(&Which::P115.load(), target, first).unwrap();
    // Another handler: XLA would keep the first, so it is refused.
    match registry::register_with_origin(&plugin, target, Arc::new(Scale), "the second".into()) {
        Err(e @ Error::DuplicateTarget { .. }) => assert_eq!(
            e.to_string(),
            format!(
                "target `{target}` is already registered by native handler, which keeps serving \
                 it (XLA keeps the first handler of a name); the second cannot serve it too"
            )
        ),
        other => panic!("expected DuplicateTarget, got {other:?}"),
    }
    assert_eq!(
        registry::registered()
            .iter()
            .filter(|r| r.target == target)
            .count(),
        1
    );
    // Another plugin image has its own registry.
    registry::register(&Which::P106.load(), target, Arc::new(Scale)).unwrap();
    let client = Client::new(&plugin, Some(1)).unwrap();
    let out = run(&client, &program(target, "factor = 3.0 : f32"), &INPUT).unwrap();
    assert_eq!(out, [3.0, 6.0, 9.0, 12.0]);
}

#[test]
fn device_ordinal_and_run_id_come_from_xla() {
    let plugin = Which::P115.load();
    let target = "cyxla_glue_ordinal";
    let client = register_and_connect(&plugin, target, Arc::new(Ordinal), 2);
    let exe = client.compile(program(target, "").as_bytes(), 2).unwrap();
    let x0 = client
        .buffer_from_host(&f32_bytes(&INPUT), DType::F32, &[4], 0)
        .unwrap();
    let x1 = client
        .buffer_from_host(&f32_bytes(&INPUT), DType::F32, &[4], 1)
        .unwrap();
    let out = exe.execute(&[vec![&x0], vec![&x1]]).unwrap();
    let mut ordinals: Vec<f32> = out
        .iter()
        .map(|device| {
            let y = f32_values(&device[0].to_host().unwrap());
            assert_eq!(y[1], 1.0, "run_id was readable");
            y[0]
        })
        .collect();
    ordinals.sort_by(f32::total_cmp);
    assert_eq!(ordinals, [0.0, 1.0]);
}

#[test]
fn concurrent_executions_share_one_handler() {
    let plugin = Which::P115.load();
    let target = "cyxla_glue_concurrent";
    let client = register_and_connect(&plugin, target, Arc::new(Scale), 1);
    let exe = client
        .compile(program(target, "factor = 0.5 : f32").as_bytes(), 1)
        .unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let (client, exe) = (&client, &exe);
            s.spawn(move || {
                for i in 0..25 {
                    let v = (t * 100 + i) as f32;
                    let x = client
                        .buffer_from_host(
                            &f32_bytes(&[v, v + 1.0, v + 2.0, v + 3.0]),
                            DType::F32,
                            &[4],
                            0,
                        )
                        .unwrap();
                    let out = exe.execute(&[vec![&x]]).unwrap();
                    let y = f32_values(&out[0][0].to_host().unwrap());
                    assert_eq!(
                        y,
                        [v * 0.5, (v + 1.0) * 0.5, (v + 2.0) * 0.5, (v + 3.0) * 0.5]
                    );
                }
            });
        }
    });
}
