//! The PJRT client against the real CPU plugins: P115 (default), P106, P81.
//!
//! The plugins come from the project's venv (`scripts/setup.sh`); a missing
//! plugin fails the test with that hint, it never skips.

mod common;

use cyxla_pjrt_client::{Buffer, Client};
use plugin_glue::ffi::xla_ffi::{XLA_FFI_CallFrame, XLA_FFI_Error};
use plugin_glue::{DType, Error, ErrorCode};

use common::{Which, f32_bytes, f32_values};

fn client(which: Which, devices: usize) -> Client {
    Client::new(&which.load(), Some(devices)).unwrap_or_else(|e| panic!("{which:?}: {e}"))
}

const ADD: &str = r#"module @m {
  func.func public @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}"#;

fn check_loads(which: Which, minor: i32, struct_size: usize) {
    let plugin = which.load();
    assert_eq!(plugin.api_version(), (0, minor));
    assert_eq!(plugin.api_struct_size(), struct_size);
    let ffi = plugin.ffi_extension().expect("FFI extension");
    assert_eq!(ffi.base.struct_size, 48);
    assert!(ffi.register_handler.is_some());
    let attributes = plugin.attributes().expect("attributes");
    assert!(
        attributes.contains(&("xla_version".to_string(), "2".to_string())),
        "{attributes:?}"
    );
    assert!(
        attributes
            .iter()
            .any(|(k, _)| k == "stablehlo_current_version"),
        "{attributes:?}"
    );
}

fn check_devices(which: Which) {
    let plugin = which.load();
    for n in [1, 4] {
        let client = Client::new(&plugin, Some(n)).unwrap();
        assert_eq!(client.addressable_device_count().unwrap(), n);
        assert_eq!(client.platform_name().unwrap(), "cpu");
    }
    let default = Client::new(&plugin, None).unwrap();
    assert_eq!(default.addressable_device_count().unwrap(), 4);
    assert!(matches!(
        Client::new(&plugin, Some(0)),
        Err(Error::InvalidInput(_))
    ));
}

fn check_compile_and_run(which: Which) {
    let client = client(which, 1);
    let exe = client.compile(ADD.as_bytes(), 1).expect("compile");
    assert_eq!(exe.num_outputs().unwrap(), 1);
    assert_eq!(exe.num_devices(), 1);
    assert_eq!(
        exe.parameter_shapes().unwrap(),
        vec![(DType::F32, vec![2, 3])]
    );
    assert_eq!(exe.output_shapes().unwrap(), vec![(DType::F32, vec![2, 3])]);
    let input = [1.0, 2.0, 3.0, -4.0, 0.5, 100.0];
    let x = client
        .buffer_from_host(&f32_bytes(&input), DType::F32, &[2, 3], 0)
        .unwrap();
    assert_eq!(x.dtype().unwrap(), DType::F32);
    assert_eq!(x.dims().unwrap(), vec![2, 3]);
    for _ in 0..2 {
        let out = exe.execute(&[vec![&x]]).expect("execute");
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].len(), 1);
        assert_eq!(out[0][0].dims().unwrap(), vec![2, 3]);
        let got = f32_values(&out[0][0].to_host().unwrap());
        let want: Vec<f32> = input.iter().map(|v| v + v).collect();
        assert_eq!(got, want);
    }
}

const SIGNATURE: &str = r#"module @sig {
  func.func public @main(%a: tensor<2x3xf32>, %b: tensor<4xi32>, %c: tensor<f64>, %d: tensor<0x5xbf16>)
      -> (tensor<4xi32>, tensor<f64>, tensor<3x2xf32>) {
    %0 = stablehlo.multiply %b, %b : tensor<4xi32>
    %1 = stablehlo.negate %c : tensor<f64>
    %2 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    return %0, %1, %2 : tensor<4xi32>, tensor<f64>, tensor<3x2xf32>
  }
}"#;

fn check_signature(which: Which) {
    let client = client(which, 1);
    let exe = client.compile(SIGNATURE.as_bytes(), 1).expect("compile");
    assert_eq!(
        exe.parameter_shapes().unwrap(),
        vec![
            (DType::F32, vec![2, 3]),
            (DType::S32, vec![4]),
            (DType::F64, vec![]),
            (DType::Bf16, vec![0, 5]),
        ]
    );
    assert_eq!(exe.num_outputs().unwrap(), 3);
    assert_eq!(
        exe.output_shapes().unwrap(),
        vec![
            (DType::S32, vec![4]),
            (DType::F64, vec![]),
            (DType::F32, vec![3, 2]),
        ]
    );
    let a = client
        .buffer_from_host(
            &f32_bytes(&[1., 2., 3., 4., 5., 6.]),
            DType::F32,
            &[2, 3],
            0,
        )
        .unwrap();
    let b_bytes: Vec<u8> = [1i32, -2, 3, 40000]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let b = client
        .buffer_from_host(&b_bytes, DType::S32, &[4], 0)
        .unwrap();
    let c = client
        .buffer_from_host(&2.5f64.to_le_bytes(), DType::F64, &[], 0)
        .unwrap();
    let d = client
        .buffer_from_host(&[], DType::Bf16, &[0, 5], 0)
        .unwrap();
    let out = exe.execute(&[vec![&a, &b, &c, &d]]).unwrap();
    assert_eq!(out[0].len(), 3);
    let squares: Vec<i32> = out[0][0]
        .to_host()
        .unwrap()
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(squares, vec![1, 4, 9, 1_600_000_000]);
    assert_eq!(out[0][1].to_host().unwrap(), (-2.5f64).to_le_bytes());
    assert_eq!(out[0][1].dims().unwrap(), Vec::<i64>::new());
    assert_eq!(
        f32_values(&out[0][2].to_host().unwrap()),
        vec![1., 4., 2., 5., 3., 6.]
    );
    assert_eq!(out[0][2].dtype().unwrap(), DType::F32);
}

/// `(dtype, MLIR element type, 3 elements as little-endian bytes)`.
fn dtype_cases() -> Vec<(DType, &'static str, Vec<u8>)> {
    fn le<T: Copy, const N: usize>(values: &[T], to: fn(T) -> [u8; N]) -> Vec<u8> {
        values.iter().flat_map(|v| to(*v)).collect()
    }
    vec![
        (
            DType::F32,
            "f32",
            le(&[1.5f32, -2.0, 3.25], f32::to_le_bytes),
        ),
        (
            DType::F64,
            "f64",
            le(&[1.5f64, -2.0e300, 3.25], f64::to_le_bytes),
        ),
        (
            DType::S32,
            "i32",
            le(&[-1i32, 0, i32::MAX], i32::to_le_bytes),
        ),
        (DType::U8, "ui8", vec![0, 200, 255]),
        (DType::Pred, "i1", vec![1, 0, 1]),
        (
            DType::C64,
            "complex<f32>",
            le(&[1.0f32, 2.0, 3.0, -4.0, 0.5, 0.0], f32::to_le_bytes),
        ),
        (
            DType::C128,
            "complex<f64>",
            le(&[1.0f64, 2.0, 3.0, -4.0, 0.5, 0.0], f64::to_le_bytes),
        ),
        // 1.0, -2.0, 0.5
        (
            DType::F16,
            "f16",
            le(&[0x3c00u16, 0xc000, 0x3800], u16::to_le_bytes),
        ),
        (
            DType::Bf16,
            "bf16",
            le(&[0x3f80u16, 0xc000, 0x3f00], u16::to_le_bytes),
        ),
        (
            DType::S64,
            "i64",
            le(&[i64::MIN, -1, i64::MAX], i64::to_le_bytes),
        ),
    ]
}

fn check_dtypes_round_trip(which: Which) {
    let client = client(which, 1);
    for (dtype, mlir, bytes) in dtype_cases() {
        let program = format!(
            "module @id {{\n  func.func public @main(%x: tensor<3x{mlir}>) -> tensor<3x{mlir}> {{\n    return %x : tensor<3x{mlir}>\n  }}\n}}"
        );
        let exe = client
            .compile(program.as_bytes(), 1)
            .unwrap_or_else(|e| panic!("{which:?} {dtype}: {e}"));
        assert_eq!(
            exe.parameter_shapes().unwrap(),
            vec![(dtype, vec![3])],
            "{dtype}"
        );
        assert_eq!(
            exe.output_shapes().unwrap(),
            vec![(dtype, vec![3])],
            "{dtype}"
        );
        let x = client.buffer_from_host(&bytes, dtype, &[3], 0).unwrap();
        assert_eq!(x.dtype().unwrap(), dtype);
        assert_eq!(x.to_host().unwrap(), bytes, "{dtype}: input read back");
        let out = exe.execute(&[vec![&x]]).unwrap();
        assert_eq!(out[0][0].dtype().unwrap(), dtype);
        assert_eq!(out[0][0].dims().unwrap(), vec![3]);
        assert_eq!(
            out[0][0].to_host().unwrap(),
            bytes,
            "{which:?} {dtype}: output"
        );
    }
}

fn check_replicated(which: Which) {
    let client = client(which, 4);
    let exe = client
        .compile(ADD.as_bytes(), 4)
        .expect("compile for 4 replicas");
    assert_eq!(exe.num_devices(), 4);
    let inputs: Vec<Vec<f32>> = (0..4)
        .map(|d| (0..6).map(|i| (d * 10 + i) as f32).collect())
        .collect();
    let buffers: Vec<Buffer> = inputs
        .iter()
        .enumerate()
        .map(|(d, v)| {
            client
                .buffer_from_host(&f32_bytes(v), DType::F32, &[2, 3], d)
                .unwrap()
        })
        .collect();
    let args: Vec<Vec<&Buffer>> = buffers.iter().map(|b| vec![b]).collect();
    let out = exe.execute(&args).expect("replicated execute");
    assert_eq!(out.len(), 4);
    for (d, per_device) in out.iter().enumerate() {
        let want: Vec<f32> = inputs[d].iter().map(|v| v * 2.0).collect();
        assert_eq!(
            f32_values(&per_device[0].to_host().unwrap()),
            want,
            "device {d}"
        );
    }
    // One argument list per device is required.
    assert_invalid_input(&exe.execute(&args[..1]).unwrap_err(), "4 device");
}

/// Asserts that `err` is [`Error::InvalidInput`] with `needle` in its message.
fn assert_invalid_input(err: &Error, needle: &str) {
    assert!(
        matches!(err, Error::InvalidInput(m) if m.contains(needle)),
        "{err:?}"
    );
}

fn check_compile_errors(which: Which) {
    let client = client(which, 2);
    let err = client
        .compile(b"module @m { this is not mlir", 1)
        .unwrap_err();
    match &err {
        Error::Pjrt {
            function, message, ..
        } => {
            assert_eq!(*function, "PJRT_Client_Compile");
            assert!(!message.is_empty());
        }
        other => panic!("{which:?}: expected a PJRT compile error, got {other:?}"),
    }

    let nope = r#"module @m {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.custom_call @cyxla_nope(%arg0) {api_version = 4 : i32, backend_config = {}} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}"#;
    match client.compile(nope.as_bytes(), 1).unwrap_err() {
        Error::Pjrt {
            function,
            code,
            message,
        } => {
            assert_eq!(function, "PJRT_Client_Compile");
            assert_eq!(code, ErrorCode::NotFound, "{message}");
            assert!(
                message.contains("No FFI handler registered for cyxla_nope"),
                "{message}"
            );
        }
        other => panic!("{which:?}: expected NOT_FOUND, got {other:?}"),
    }

    for replicas in [0, 3] {
        let err = client.compile(ADD.as_bytes(), replicas).unwrap_err();
        assert_invalid_input(&err, "2 device");
    }
}

fn check_buffer_errors(which: Which) {
    let client = client(which, 1);
    let err = client
        .buffer_from_host(&[0u8; 20], DType::F32, &[2, 3], 0)
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, Error::InvalidInput(_)) && text.contains("24 bytes") && text.contains("20"),
        "{text}"
    );
    let err = client
        .buffer_from_host(&[0u8; 4], DType::F32, &[1], 1)
        .unwrap_err();
    assert_invalid_input(&err, "device 1");
    let err = client
        .buffer_from_host(&[], DType::F32, &[-1], 0)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
}

/// A `jax.export` artifact (portable StableHLO bytecode) of
/// `f(x, y) = x * 2 + y` on `f32[3]`, made with jax 0.10.2:
///
/// ```python
/// import jax, jax.numpy as jnp
/// from jax import export
/// spec = jax.ShapeDtypeStruct((3,), jnp.float32)
/// exp = export.export(jax.jit(lambda x, y: x * 2.0 + y))(spec, spec)
/// data = exp.mlir_module_serialized
/// ```
const MUL2ADD_BYTECODE: &[u8] = &[
    0x4d, 0x4c, 0xef, 0x52, 0x0d, 0x53, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x48, 0x4c, 0x4f, 0x5f, 0x76,
    0x31, 0x2e, 0x31, 0x35, 0x2e, 0x30, 0x00, 0x01, 0x1f, 0x05, 0x01, 0x05, 0x0f, 0x01, 0x03, 0x0b,
    0x03, 0x0d, 0x0f, 0x13, 0x17, 0x1b, 0x1f, 0x23, 0x03, 0x75, 0x51, 0x11, 0x01, 0x3b, 0x07, 0x0f,
    0x0b, 0x0f, 0x0f, 0x0f, 0x0b, 0x23, 0x0b, 0x0f, 0x0b, 0x0b, 0x0b, 0x0f, 0x0b, 0x0f, 0x0b, 0x0b,
    0x0b, 0x1b, 0x0b, 0x0f, 0x0f, 0x1b, 0x0f, 0x0b, 0x0f, 0x0f, 0x1b, 0x03, 0x17, 0x0b, 0x13, 0x0b,
    0x0f, 0x13, 0x0b, 0x0b, 0x0b, 0x0b, 0x1f, 0x0f, 0x01, 0x05, 0x0b, 0x0f, 0x03, 0x0d, 0x13, 0x07,
    0x0f, 0x1b, 0x13, 0x07, 0x02, 0x42, 0x02, 0x1f, 0x1d, 0x25, 0x27, 0x05, 0x13, 0x11, 0x03, 0x05,
    0x1d, 0x23, 0x03, 0x1d, 0x29, 0x2b, 0x05, 0x15, 0x03, 0x07, 0x11, 0x13, 0x15, 0x07, 0x17, 0x07,
    0x05, 0x17, 0x11, 0x01, 0x00, 0x05, 0x19, 0x05, 0x1b, 0x05, 0x1d, 0x1d, 0x1d, 0x01, 0x05, 0x1f,
    0x1d, 0x21, 0x01, 0x05, 0x21, 0x05, 0x23, 0x05, 0x25, 0x2d, 0x05, 0x07, 0x09, 0x0d, 0xe3, 0x05,
    0x27, 0x15, 0x2d, 0x03, 0x1d, 0x0d, 0x2f, 0x2d, 0x05, 0x07, 0x07, 0x29, 0x37, 0x1d, 0x33, 0x35,
    0x05, 0x29, 0x15, 0x37, 0x03, 0x1d, 0x0d, 0x39, 0x2d, 0x05, 0x07, 0x07, 0x29, 0x3f, 0x0d, 0x01,
    0x03, 0x05, 0x3b, 0x3b, 0x23, 0x0b, 0x03, 0x03, 0x43, 0x0d, 0x03, 0x45, 0x47, 0x1d, 0x2b, 0x1d,
    0x2d, 0x1d, 0x2f, 0x1d, 0x31, 0x1f, 0x09, 0x09, 0x00, 0x00, 0x00, 0x40, 0x1f, 0x0d, 0x01, 0x01,
    0x09, 0x01, 0x02, 0x02, 0x29, 0x03, 0x0d, 0x07, 0x09, 0x29, 0x01, 0x07, 0x11, 0x05, 0x05, 0x05,
    0x03, 0x05, 0x29, 0x03, 0x01, 0x0f, 0x1d, 0x04, 0x7f, 0x05, 0x01, 0x51, 0x01, 0x0f, 0x01, 0x07,
    0x04, 0x6d, 0x03, 0x01, 0x05, 0x03, 0x50, 0x01, 0x03, 0x07, 0x04, 0x59, 0x03, 0x0d, 0x17, 0x05,
    0x0b, 0x1b, 0x0b, 0x1f, 0x00, 0x05, 0x42, 0x09, 0x05, 0x03, 0x09, 0x07, 0x46, 0x0b, 0x07, 0x03,
    0x05, 0x03, 0x05, 0x09, 0x06, 0x0b, 0x03, 0x05, 0x05, 0x01, 0x07, 0x0b, 0x06, 0x31, 0x03, 0x05,
    0x05, 0x09, 0x03, 0x0d, 0x04, 0x09, 0x03, 0x0b, 0x06, 0x03, 0x01, 0x05, 0x01, 0x00, 0x4a, 0x04,
    0x33, 0x0f, 0x0b, 0x0f, 0x21, 0x17, 0x17, 0x13, 0x0f, 0x05, 0x05, 0x0d, 0x25, 0x29, 0x39, 0x05,
    0x11, 0x15, 0x0f, 0x19, 0x29, 0x19, 0x11, 0x0f, 0x0b, 0x11, 0x62, 0x75, 0x69, 0x6c, 0x74, 0x69,
    0x6e, 0x00, 0x76, 0x68, 0x6c, 0x6f, 0x00, 0x6d, 0x6f, 0x64, 0x75, 0x6c, 0x65, 0x00, 0x66, 0x75,
    0x6e, 0x63, 0x5f, 0x76, 0x31, 0x00, 0x63, 0x6f, 0x6e, 0x73, 0x74, 0x61, 0x6e, 0x74, 0x5f, 0x76,
    0x31, 0x00, 0x62, 0x72, 0x6f, 0x61, 0x64, 0x63, 0x61, 0x73, 0x74, 0x5f, 0x69, 0x6e, 0x5f, 0x64,
    0x69, 0x6d, 0x5f, 0x76, 0x31, 0x00, 0x6d, 0x75, 0x6c, 0x74, 0x69, 0x70, 0x6c, 0x79, 0x5f, 0x76,
    0x31, 0x00, 0x61, 0x64, 0x64, 0x5f, 0x76, 0x31, 0x00, 0x72, 0x65, 0x74, 0x75, 0x72, 0x6e, 0x5f,
    0x76, 0x31, 0x00, 0x3c, 0x73, 0x74, 0x64, 0x69, 0x6e, 0x3e, 0x00, 0x66, 0x00, 0x6a, 0x61, 0x78,
    0x2e, 0x75, 0x73, 0x65, 0x73, 0x5f, 0x73, 0x68, 0x61, 0x70, 0x65, 0x5f, 0x70, 0x6f, 0x6c, 0x79,
    0x6d, 0x6f, 0x72, 0x70, 0x68, 0x69, 0x73, 0x6d, 0x00, 0x6d, 0x68, 0x6c, 0x6f, 0x2e, 0x6e, 0x75,
    0x6d, 0x5f, 0x70, 0x61, 0x72, 0x74, 0x69, 0x74, 0x69, 0x6f, 0x6e, 0x73, 0x00, 0x6d, 0x68, 0x6c,
    0x6f, 0x2e, 0x6e, 0x75, 0x6d, 0x5f, 0x72, 0x65, 0x70, 0x6c, 0x69, 0x63, 0x61, 0x73, 0x00, 0x6a,
    0x69, 0x74, 0x5f, 0x66, 0x00, 0x78, 0x00, 0x79, 0x00, 0x6a, 0x69, 0x74, 0x28, 0x66, 0x29, 0x00,
    0x3c, 0x6d, 0x6f, 0x64, 0x75, 0x6c, 0x65, 0x3e, 0x00, 0x6a, 0x69, 0x74, 0x28, 0x66, 0x29, 0x2f,
    0x6d, 0x75, 0x6c, 0x00, 0x6a, 0x69, 0x74, 0x28, 0x66, 0x29, 0x2f, 0x61, 0x64, 0x64, 0x00, 0x6a,
    0x61, 0x78, 0x2e, 0x72, 0x65, 0x73, 0x75, 0x6c, 0x74, 0x5f, 0x69, 0x6e, 0x66, 0x6f, 0x00, 0x72,
    0x65, 0x73, 0x75, 0x6c, 0x74, 0x00, 0x6d, 0x61, 0x69, 0x6e, 0x00, 0x70, 0x75, 0x62, 0x6c, 0x69,
    0x63, 0x00, 0x08, 0x1d, 0x09, 0x05, 0x33, 0x01, 0x0b, 0x3d, 0x3f, 0x41, 0x49, 0x4b, 0x03, 0x4d,
    0x03, 0x4f,
];

fn check_bytecode(which: Which) {
    assert!(
        MUL2ADD_BYTECODE.starts_with(b"ML\xefR"),
        "MLIR bytecode magic"
    );
    let client = client(which, 1);
    let exe = client
        .compile(MUL2ADD_BYTECODE, 1)
        .expect("compile jax.export bytecode");
    assert_eq!(
        exe.parameter_shapes().unwrap(),
        vec![(DType::F32, vec![3]), (DType::F32, vec![3])]
    );
    let x = client
        .buffer_from_host(&f32_bytes(&[1.0, 2.0, 3.0]), DType::F32, &[3], 0)
        .unwrap();
    let y = client
        .buffer_from_host(&f32_bytes(&[0.5, 0.25, -10.0]), DType::F32, &[3], 0)
        .unwrap();
    let out = exe.execute(&[vec![&x, &y]]).unwrap();
    assert_eq!(
        f32_values(&out[0][0].to_host().unwrap()),
        vec![2.5, 4.25, -4.0]
    );
}

// ---------------------------------------------------------------------------
// A handler that fails, to see execution errors surface (sync and async).
// Raw offsets (x86_64) from docs/abi.md, "Frame-side structs",
// "Service-call argument structs", "XLA_FFI_Api", "Metadata probe".
// ---------------------------------------------------------------------------

const FAILURE_MESSAGE: &str = "cyxla test failure";

#[repr(C)]
struct ErrorCreateArgs {
    struct_size: usize,
    extension_start: *mut u8,
    message: *const u8,
    errc: i32,
}

type ErrorCreate = unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut XLA_FFI_Error;

/// Answers the metadata probe with API version 0.1; fails every execution
/// with FAILED_PRECONDITION.
unsafe extern "C" fn failing_handler(frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
    let frame = frame.cast::<u8>();
    // SAFETY: XLA passes a valid frame: extension_start at 8, api at 16.
    let extension = unsafe { frame.add(8).cast::<*mut u8>().read() };
    if !extension.is_null() {
        // SAFETY: in the probe, extension_start is the metadata extension
        // (metadata pointer at 24); the metadata's api_version is inline at 8
        // (major at 8 + 16, minor at 8 + 20).
        unsafe {
            let metadata = extension.add(24).cast::<*mut u8>().read();
            metadata.add(24).cast::<i32>().write(0);
            metadata.add(28).cast::<i32>().write(1);
        }
        return std::ptr::null_mut();
    }
    // SAFETY: `api` at 16 is the runtime's XLA_FFI_Api; XLA_FFI_Error_Create
    // is its slot 0, at byte 48.
    let create: ErrorCreate = unsafe {
        let api = frame.add(16).cast::<*const u8>().read();
        std::mem::transmute::<*const u8, ErrorCreate>(api.add(48).cast::<*const u8>().read())
    };
    let mut args = ErrorCreateArgs {
        struct_size: 28,
        extension_start: std::ptr::null_mut(),
        message: c"cyxla test failure".as_ptr().cast(),
        errc: 9, // FAILED_PRECONDITION
    };
    // SAFETY: `create` is XLA_FFI_Error_Create with complete args.
    unsafe { create(&mut args) }
}

fn check_execution_errors_surface(which: Which) {
    let plugin = which.load();
    // SAFETY: `failing_handler` follows the FFI protocol above and is a
    // plain function, valid for the whole process.
    unsafe { plugin.register_handler("cyxla_test_fail", failing_handler, 0) }.unwrap();
    let program = r#"module @fail {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.custom_call @cyxla_test_fail(%arg0) {api_version = 4 : i32, backend_config = {}} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}"#;
    // 1 device runs inline (Execute fails); 4 replicas run on worker threads
    // (the events carry the error).
    for devices in [1, 4] {
        let client = Client::new(&plugin, Some(devices)).unwrap();
        let exe = client
            .compile(program.as_bytes(), devices)
            .unwrap_or_else(|e| panic!("{which:?}: compile with a registered handler: {e}"));
        let buffers: Vec<Buffer> = (0..devices)
            .map(|d| {
                client
                    .buffer_from_host(&f32_bytes(&[1.0, 2.0]), DType::F32, &[2], d)
                    .unwrap()
            })
            .collect();
        let args: Vec<Vec<&Buffer>> = buffers.iter().map(|b| vec![b]).collect();
        for _ in 0..2 {
            match exe.execute(&args).unwrap_err() {
                Error::Pjrt {
                    function,
                    code,
                    message,
                } => {
                    assert_eq!(function, "PJRT_LoadedExecutable_Execute");
                    assert_eq!(
                        code,
                        ErrorCode::FailedPrecondition,
                        "{which:?} {devices}: {message}"
                    );
                    assert_eq!(message, FAILURE_MESSAGE, "{which:?} {devices}");
                }
                other => panic!("{which:?}: expected a PJRT error, got {other:?}"),
            }
        }
    }
}

macro_rules! plugin_tests {
    ($($module:ident: $which:expr, minor $minor:expr, struct_size $size:expr;)*) => {
        $(
            mod $module {
                use super::*;

                #[test]
                fn loads_with_version_and_ffi_extension() {
                    check_loads($which, $minor, $size);
                }

                #[test]
                fn clients_with_1_and_4_devices() {
                    check_devices($which);
                }

                #[test]
                fn compiles_runs_and_reads_back() {
                    check_compile_and_run($which);
                }

                #[test]
                fn compiles_jax_export_bytecode() {
                    check_bytecode($which);
                }

                #[test]
                fn parameter_and_output_shapes() {
                    check_signature($which);
                }

                #[test]
                fn dtypes_round_trip() {
                    check_dtypes_round_trip($which);
                }

                #[test]
                fn replicated_over_4_devices() {
                    check_replicated($which);
                }

                #[test]
                fn compile_errors_carry_xla_code_and_message() {
                    check_compile_errors($which);
                }

                #[test]
                fn host_buffer_errors_name_expected_and_got() {
                    check_buffer_errors($which);
                }

                #[test]
                fn execution_errors_surface_with_xla_code_and_message() {
                    check_execution_errors_surface($which);
                }
            }
        )*
    };
}

plugin_tests! {
    p115: Which::P115, minor 115, struct_size 1144;
    p106: Which::P106, minor 106, struct_size 1128;
    p81: Which::P81, minor 81, struct_size 984;
}
