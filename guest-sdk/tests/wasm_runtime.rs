//! Runs the bundled guests in wasmtime with a minimal host written here from
//! `abi` alone, to check the SDK's wasm32 side end to end: the exports, the
//! guest's `XLA_FFI_Api` table, frame decoding in the guest, errors through
//! `error_create`, host imports called by the guest, traps and the recorded
//! panic message. (The real host is `cyxla-host`; this only checks the
//! guest half of the contract.)
//!
//! Needs the `wasm32-unknown-unknown` Rust target (`scripts/setup.sh`).

mod common;

use std::path::PathBuf;

use cyxla_guest_sdk::abi;
use cyxla_guest_sdk::testing::{FrameBuilder, FrameImage, TestAttr};
use cyxla_guest_sdk::{DataType, Element, ErrorCode};
use wasmtime::{Caller, Engine, Instance, Linker, Memory, Module, Store, Trap};

/// Errors the guest created: (code, message); handle = index + 1.
#[derive(Default)]
struct HostState {
    errors: Vec<(u32, String)>,
}

const DEVICE_ORDINAL: i32 = 3;
const RUN_ID: i64 = 42;

/// Builds the guests once per test binary; returns `guests/out`.
fn guests_out() -> PathBuf {
    static OUT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    OUT.get_or_init(common::build_guests).clone()
}

fn memory(caller: &mut Caller<'_, HostState>) -> Memory {
    caller
        .get_export(abi::EXPORT_MEMORY)
        .and_then(|e| e.into_memory())
        .expect("guest exports memory")
}

fn read_u32(data: &[u8], at: u32) -> u32 {
    u32::from_le_bytes(data[at as usize..at as usize + 4].try_into().unwrap())
}

fn c_str(data: &[u8], at: u32) -> String {
    let bytes = &data[at as usize..];
    let n = bytes.iter().position(|&b| b == 0).expect("NUL-terminated");
    String::from_utf8(bytes[..n].to_vec()).expect("UTF-8")
}

fn new_error(caller: &mut Caller<'_, HostState>, code: u32, message: String) -> i32 {
    caller.data_mut().errors.push((code, message));
    caller.data().errors.len() as i32
}

/// Defines `import` as a context call that writes `value` (little-endian)
/// to the out-field at `offset` of its args struct and succeeds.
fn define_context_get<const N: usize>(
    linker: &mut Linker<HostState>,
    import: &str,
    offset: u32,
    value: [u8; N],
) {
    linker
        .func_wrap(
            abi::IMPORT_MODULE,
            import,
            move |mut caller: Caller<'_, HostState>, args: i32| -> i32 {
                let mem = memory(&mut caller);
                let at = args as u32 + offset;
                mem.write(&mut caller, at as usize, &value).unwrap();
                0
            },
        )
        .unwrap();
}

/// Defines the 18 `cyxla` imports: errors, run id and device ordinal work;
/// the rest answer UNIMPLEMENTED.
fn linker(engine: &Engine) -> Linker<HostState> {
    let mut linker = Linker::new(engine);
    let m = abi::IMPORT_MODULE;
    linker
        .func_wrap(
            m,
            abi::IMPORT_ERROR_CREATE,
            |mut caller: Caller<'_, HostState>, args: i32| -> i32 {
                let mem = memory(&mut caller);
                let data = mem.data(&caller);
                let a = args as u32;
                assert_eq!(read_u32(data, a), abi::error_create_args::STRUCT_SIZE);
                let message = c_str(data, read_u32(data, a + abi::error_create_args::MESSAGE));
                let code = read_u32(data, a + abi::error_create_args::ERRC);
                new_error(&mut caller, code, message)
            },
        )
        .unwrap();
    linker
        .func_wrap(
            m,
            abi::IMPORT_ERROR_GET_MESSAGE,
            |mut caller: Caller<'_, HostState>, args: i32| {
                let mem = memory(&mut caller);
                let a = args as u32;
                let handle = read_u32(mem.data(&caller), a + abi::error_get_message_args::ERROR);
                let struct_size = read_u32(mem.data(&caller), a);
                let code = caller.data().errors[handle as usize - 1].0;
                let mut text = caller.data().errors[handle as usize - 1]
                    .1
                    .clone()
                    .into_bytes();
                text.push(0);
                let alloc = caller
                    .get_export(abi::EXPORT_ALLOC)
                    .and_then(|e| e.into_func())
                    .unwrap();
                let alloc = alloc.typed::<(i32, i32), i32>(&caller).unwrap();
                let at = alloc.call(&mut caller, (text.len() as i32, 1)).unwrap() as u32;
                mem.write(&mut caller, at as usize, &text).unwrap();
                let out = a + abi::error_get_message_args::MESSAGE;
                mem.write(&mut caller, out as usize, &at.to_le_bytes())
                    .unwrap();
                // XLA_FFI_Error_GetDetails_Args (0.5) has room for the code.
                if struct_size >= abi::error_get_details_args::STRUCT_SIZE {
                    let out = a + abi::error_get_details_args::ERRC;
                    mem.write(&mut caller, out as usize, &code.to_le_bytes())
                        .unwrap();
                }
            },
        )
        .unwrap();
    linker
        .func_wrap(
            m,
            abi::IMPORT_ERROR_DESTROY,
            |_: Caller<'_, HostState>, _args: i32| {},
        )
        .unwrap();
    define_context_get(
        &mut linker,
        abi::IMPORT_RUN_ID_GET,
        abi::run_id_get_args::RUN_ID,
        RUN_ID.to_le_bytes(),
    );
    define_context_get(
        &mut linker,
        abi::IMPORT_DEVICE_ORDINAL_GET,
        abi::device_ordinal_get_args::DEVICE_ORDINAL,
        DEVICE_ORDINAL.to_le_bytes(),
    );
    let defined = [
        abi::IMPORT_ERROR_CREATE,
        abi::IMPORT_ERROR_GET_MESSAGE,
        abi::IMPORT_ERROR_DESTROY,
        abi::IMPORT_RUN_ID_GET,
        abi::IMPORT_DEVICE_ORDINAL_GET,
    ];
    for imp in abi::IMPORT_TABLE
        .iter()
        .filter(|i| !defined.contains(&i.name))
    {
        let name = imp.name;
        linker
            .func_wrap(
                m,
                name,
                move |mut caller: Caller<'_, HostState>, _args: i32| -> i32 {
                    new_error(
                        &mut caller,
                        ErrorCode::Unimplemented.to_raw(),
                        format!("{name} is not supported"),
                    )
                },
            )
            .unwrap();
    }
    linker
}

struct Guest {
    store: Store<HostState>,
    instance: Instance,
    memory: Memory,
    scratch: u32,
}

const SCRATCH: u32 = 1 << 16;

impl Guest {
    /// The bundled guest `file` (in `guests/out`), instantiated.
    fn load(file: &str) -> Guest {
        let engine = Engine::default();
        let module = Module::from_file(&engine, guests_out().join(file)).unwrap();
        let linker = linker(&engine);
        let mut store = Store::new(&engine, HostState::default());
        let instance = linker.instantiate(&mut store, &module).unwrap();
        let memory = instance.get_memory(&mut store, abi::EXPORT_MEMORY).unwrap();
        let alloc = instance
            .get_typed_func::<(i32, i32), i32>(&mut store, abi::EXPORT_ALLOC)
            .unwrap();
        let scratch = alloc.call(&mut store, (SCRATCH as i32, 64)).unwrap() as u32;
        assert!(
            scratch != 0 && scratch.is_multiple_of(64),
            "cyxla_alloc gave {scratch:#x}"
        );
        Guest {
            store,
            instance,
            memory,
            scratch,
        }
    }

    fn image(&self, call: FrameBuilder) -> FrameImage {
        let image = call.image_at(self.scratch);
        assert!(image.bytes.len() <= SCRATCH as usize);
        image
    }

    /// Writes the call into guest memory and runs `export`; Ok(handle).
    fn call(&mut self, export: &str, image: &FrameImage) -> wasmtime::Result<u32> {
        self.memory
            .write(&mut self.store, image.base as usize, &image.bytes)
            .unwrap();
        let f = self
            .instance
            .get_typed_func::<i32, i32>(&mut self.store, export)
            .unwrap();
        f.call(&mut self.store, image.frame as i32)
            .map(|h| h as u32)
    }

    fn ret<T: Copy>(&self, image: &FrameImage, i: usize, from: fn(&[u8]) -> T) -> Vec<T> {
        let (at, len) = image.rets[i];
        let data = &self.memory.data(&self.store)[at as usize..at as usize + len];
        data.chunks_exact(size_of::<T>()).map(from).collect()
    }

    fn error(&self, handle: u32) -> (u32, String) {
        assert_ne!(handle, 0, "expected an error handle");
        self.store.data().errors[handle as usize - 1].clone()
    }

    /// Runs `export`, which must return the error `code` with `message`.
    fn assert_error(&mut self, export: &str, image: &FrameImage, code: u32, message: &str) {
        let handle = self.call(export, image).unwrap();
        assert_eq!(self.error(handle), (code, message.to_string()));
    }

    fn u32_export(&mut self, name: &str) -> u32 {
        let f = self
            .instance
            .get_typed_func::<(), i32>(&mut self.store, name)
            .unwrap();
        f.call(&mut self.store, ()).unwrap() as u32
    }
}

/// A call of `scale_any` on the vector `x`, by 2, into a result of `dtype`.
fn scale_any_by_two<T: Element>(x: &[T], dtype: DataType) -> FrameBuilder {
    let dims = [x.len() as i64];
    FrameBuilder::new()
        .arg(&dims, x)
        .ret(dtype, &dims)
        .attr("factor", 2.0f64)
}

fn f32s(b: &[u8]) -> f32 {
    f32::from_le_bytes(b.try_into().unwrap())
}

fn f64s(b: &[u8]) -> f64 {
    f64::from_le_bytes(b.try_into().unwrap())
}

#[test]
fn exports_and_api_table() {
    let mut g = Guest::load("noop.wasm");
    assert_eq!(g.u32_export(abi::EXPORT_ABI_VERSION), abi::ABI_VERSION);
    assert_eq!(g.u32_export(abi::EXPORT_LAST_PANIC), 0);
    let api = g.u32_export(abi::EXPORT_API);
    let data = g.memory.data(&g.store);
    assert_eq!(read_u32(data, api), abi::api::STRUCT_SIZE);
    assert_eq!(read_u32(data, api + abi::api::EXTENSION_START), 0);
    let v = api + abi::api::API_VERSION;
    assert_eq!(read_u32(data, v), abi::api_version::STRUCT_SIZE);
    assert_eq!(read_u32(data, v + abi::api_version::MAJOR_VERSION), 0);
    assert_eq!(read_u32(data, v + abi::api_version::MINOR_VERSION), 5);
    let mut slots: Vec<u32> = (0..abi::API_FN_SLOTS)
        .map(|i| read_u32(data, api + abi::api::slot_offset(i)))
        .collect();
    assert!(
        slots.iter().all(|&s| s != 0),
        "every slot is a table index: {slots:?}"
    );
    slots.sort_unstable();
    slots.dedup();
    assert_eq!(
        slots.len(),
        abi::API_FN_SLOTS,
        "distinct functions in every slot"
    );
}

#[test]
fn rms_norm_runs_in_wasm() {
    let mut g = Guest::load("rms_norm.wasm");
    let x: Vec<f32> = (0..2 * 19).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
    let image = g.image(
        FrameBuilder::new()
            .arg(&[2, 19], &x)
            .ret(DataType::F32, &[2, 19])
            .ret(DataType::F32, &[2])
            .attr("eps", 1e-5f32),
    );
    assert_eq!(g.call("rms_norm_fwd", &image).unwrap(), 0);
    let y = g.ret(&image, 0, f32s);
    let res = g.ret(&image, 1, f32s);
    for (r, row) in x.chunks(19).enumerate() {
        let mean = row.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>() / 19.0;
        let want = 1.0 / (mean + 1e-5).sqrt();
        assert!(
            (f64::from(res[r]) - want).abs() < 1e-5 * want,
            "res[{r}] {} vs {want}",
            res[r]
        );
        for (j, v) in row.iter().enumerate() {
            let w = f64::from(*v) * want;
            assert!((f64::from(y[r * 19 + j]) - w).abs() < 1e-5 * w.abs().max(1.0));
        }
    }
    // The same instance serves the next call; errors come back through error_create.
    let image = g.image(
        FrameBuilder::new()
            .arg(&[], &[1.0f32])
            .ret(DataType::F32, &[])
            .attr("eps", 1e-5f32),
    );
    g.assert_error(
        "rms_norm",
        &image,
        3,
        "input must be an array (rank >= 1), got a rank-0 x",
    );
}

#[test]
fn malformed_frame_is_an_internal_error() {
    let mut g = Guest::load("scale_any.wasm");
    let mut image = g.image(scale_any_by_two(&[1.0f64, 2.0], DataType::F64));
    let at = (image.frame - image.base) as usize;
    image.bytes[at..at + 4].copy_from_slice(&168u32.to_le_bytes());
    g.assert_error(
        "scale_any",
        &image,
        13,
        "call frame struct_size is 168, expected 104 (wasm32 XLA_FFI_CallFrame)",
    );
}

#[test]
fn tridiag_and_scale_any_dispatch_on_dtype() {
    let mut g = Guest::load("tridiag_solve.wasm");
    let image = g.image(
        FrameBuilder::new()
            .arg(&[3], &[0.0f64, 1.0, 1.0])
            .arg(&[3], &[4.0f64, 4.0, 4.0])
            .arg(&[3], &[1.0f64, 1.0, 0.0])
            .arg(&[3], &[5.0f64, 6.0, 5.0])
            .ret(DataType::F64, &[3]),
    );
    assert_eq!(g.call("tridiag_solve", &image).unwrap(), 0);
    let x = g.ret(&image, 0, f64s);
    for (got, want) in x.iter().zip([1.0, 1.0, 1.0]) {
        assert!((got - want).abs() < 1e-12, "{x:?}");
    }
    let mut g = Guest::load("scale_any.wasm");
    let image = g.image(scale_any_by_two(&[1.5f32, -2.0], DataType::F32));
    assert_eq!(g.call("scale_any", &image).unwrap(), 0);
    assert_eq!(g.ret(&image, 0, f32s), [3.0, -4.0]);
    let image = g.image(scale_any_by_two(&[1u8], DataType::U8));
    g.assert_error(
        "scale_any",
        &image,
        12,
        "unsupported dtype u8 for x; scale_any supports f32 and f64",
    );
}

#[test]
fn echo_attrs_round_trip() {
    let mut g = Guest::load("echo_attrs.wasm");
    let image = g.image(
        FrameBuilder::new()
            .attr("s", "ab")
            .attr("d", TestAttr::dict([("k", TestAttr::from(-1i8))]))
            .attr("a", TestAttr::array(&[0.5f32]))
            .ret(DataType::F64, &[40]),
    );
    assert_eq!(g.call("echo_attrs", &image).unwrap(), 0);
    let got = g.ret(&image, 0, f64s);
    let body = [
        3.0, // count
        1.0, 97.0, 1.0, 11.0, 1.0, 0.5, // a: f32 array [0.5]
        1.0, 100.0, 2.0, 0.0, 1.0, // d: dictionary of 1
        1.0, 107.0, 3.0, 2.0, 1.0, -1.0, // k: s8 scalar -1
        1.0, 115.0, 4.0, 0.0, 2.0, 97.0, 98.0, // s: "ab"
    ];
    assert_eq!(got[0], (body.len() + 1) as f64);
    assert_eq!(&got[1..=body.len()], &body);
}

#[test]
fn host_imports_reach_the_guest() {
    let mut g = Guest::load("noop.wasm");
    let image = g.image(FrameBuilder::new().ret(DataType::S64, &[2]));
    assert_eq!(g.call("frame_info", &image).unwrap(), 0);
    assert_eq!(
        g.ret(&image, 0, |b| i64::from_le_bytes(b.try_into().unwrap())),
        [i64::from(DEVICE_ORDINAL), RUN_ID]
    );
    let image = g.image(
        FrameBuilder::new()
            .arg(&[1], &[0u8])
            .ret(DataType::U8, &[1]),
    );
    assert_eq!(g.call("noop", &image).unwrap(), 0);
}

#[test]
fn fail_trap_and_panic() {
    let mut g = Guest::load("trap.wasm");
    let image = g.image(
        FrameBuilder::new()
            .attr("code", 8i64)
            .attr("message", "out of quota"),
    );
    g.assert_error("fail", &image, 8, "out of quota");

    let image = g.image(FrameBuilder::new());
    let e = g.call("trap", &image).unwrap_err();
    assert_eq!(
        e.downcast_ref::<Trap>(),
        Some(&Trap::UnreachableCodeReached),
        "{e:?}"
    );

    let mut g = Guest::load("trap.wasm");
    let image = g.image(FrameBuilder::new().attr("message", "boom"));
    let e = g.call("panic_now", &image).unwrap_err();
    assert_eq!(
        e.downcast_ref::<Trap>(),
        Some(&Trap::UnreachableCodeReached),
        "{e:?}"
    );
    let at = g.u32_export(abi::EXPORT_LAST_PANIC);
    assert_ne!(at, 0);
    let message = c_str(g.memory.data(&g.store), at);
    assert!(
        message.starts_with("panicked at rust/trap/src/lib.rs:"),
        "{message}"
    );
    assert!(message.ends_with(": deliberate panic: boom"), "{message}");
}
