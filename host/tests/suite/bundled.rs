//! The bundled guests (`guests/out`, built by `guests/build.sh` with the Rust
//! guest SDK) run through the sandbox with host-owned calls: the host and
//! the SDK implement the same ABI.

use crate::common;

use std::sync::OnceLock;

use common::{assert_message, assert_message_contains};
use cyxla_sandbox::{
    AllowList, GuestHandler, HostAttr, HostBuffer, HostCall, Limits, Sandbox, Scalar,
};
use plugin_glue::{DType, ErrorCode};

/// Builds the bundled guests once per process and loads them.
fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        let dir = common::bundled_guests();
        let sandbox = Sandbox::new(&dir, AllowList::all(), Limits::default()).unwrap();
        assert!(
            sandbox.guests().rejected().is_empty(),
            "rejected bundled guests: {:#?}",
            sandbox.guests().rejected()
        );
        sandbox
    })
}

fn handler(target: &str) -> GuestHandler {
    sandbox()
        .handler(target)
        .unwrap_or_else(|| panic!("no bundled guest serves `{target}`"))
}

fn f32_attr(value: f32) -> HostAttr {
    HostAttr::Scalar(Scalar::F32(value))
}

fn string_attr(value: &str) -> HostAttr {
    HostAttr::String(value.as_bytes().to_vec())
}

#[test]
fn rms_norm_matches_a_reference() {
    let x = [1.0f32, 2.0, 3.0, -1.0, 0.5, 4.0];
    let call = HostCall::new()
        .arg(HostBuffer::f32(&[2, 3], &x))
        .ret(HostBuffer::zeros(DType::F32, &[2, 3]))
        .attr("eps", f32_attr(1e-5));
    handler("rms_norm").call_host(&call).unwrap();
    let y = call.result(0).to_f32();
    for (row, out) in x.chunks(3).zip(y.chunks(3)) {
        let ms = row.iter().map(|v| v * v).sum::<f32>() / 3.0;
        let scale = 1.0 / (ms + 1e-5).sqrt();
        for (v, o) in row.iter().zip(out) {
            assert!((v * scale - o).abs() < 1e-5, "{v} * {scale} vs {o}");
        }
    }
}

#[test]
fn a_guest_error_comes_back_with_its_code() {
    let call = HostCall::new()
        .attr("code", HostAttr::Scalar(Scalar::S64(3)))
        .attr("message", string_attr("no good"));
    let error = handler("fail").call_host(&call).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArgument);
    assert_eq!(error.message, "target `fail` (guest trap.wasm): no good");
    let error = handler("fail").call_host(&HostCall::new()).unwrap_err();
    assert_eq!(error.code, ErrorCode::FailedPrecondition);
    assert_message(&error, |m| m.ends_with("the `fail` target always fails"));
}

#[test]
fn a_panic_is_named() {
    let call = HostCall::new().attr("message", string_attr("on purpose"));
    let error = handler("panic").call_host(&call).unwrap_err();
    assert_message(&error, |m| {
        m.starts_with("target `panic` (guest trap.wasm): the guest panicked at ")
            && m.ends_with(": deliberate panic: on purpose")
    });
    // The next call works.
    handler("noop").call_host(&HostCall::new()).unwrap();
}

#[test]
fn a_trap_is_named() {
    let error = handler("trap").call_host(&HostCall::new()).unwrap_err();
    assert_message_contains(&error, "trapped: wasm `unreachable` instruction executed");
}

#[test]
fn frame_info_sees_device_ordinal_and_run_id() {
    let call = HostCall::new().ret(HostBuffer::new(DType::S64, &[2], vec![0xff; 16]));
    handler("frame_info").call_host(&call).unwrap();
    assert_eq!(call.result(0).bytes(), [0u8; 16]);
}

#[test]
fn scale_any_scales_f64() {
    let values = [1.0f64, -2.5, 1e300];
    let call = HostCall::new()
        .arg(HostBuffer::new(
            DType::F64,
            &[3],
            values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ))
        .ret(HostBuffer::zeros(DType::F64, &[3]))
        .attr("factor", HostAttr::Scalar(Scalar::F64(2.0)));
    handler("scale_any").call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f64(), [2.0, -5.0, 2e300]);
}

#[test]
fn echo_attrs_sees_attributes_as_xla_lays_them_out() {
    let call = HostCall::new()
        .ret(HostBuffer::zeros(DType::F64, &[64]))
        .attr("a", HostAttr::Scalar(Scalar::S32(-3)))
        .attr(
            "d",
            HostAttr::Dictionary(vec![("x".into(), string_attr("hi"))]),
        )
        .attr(
            "v",
            HostAttr::Array(
                DType::F32,
                2,
                [0.5f32.to_le_bytes(), 1.5f32.to_le_bytes()].concat(),
            ),
        );
    handler("echo_attrs").call_host(&call).unwrap();
    let out = call.result(0).to_f64();
    let expected: Vec<f64> = vec![
        3.0, // count
        1.0, 97.0, 3.0, 4.0, 1.0, -3.0, // a: scalar s32 -3
        1.0, 100.0, 2.0, 0.0, 1.0, // d: dictionary of 1
        1.0, 120.0, 4.0, 0.0, 2.0, 104.0, 105.0, // x: "hi"
        1.0, 118.0, 1.0, 11.0, 2.0, 0.5, 1.5, // v: f32 array [0.5, 1.5]
    ];
    let m = out[0] as usize;
    assert_eq!(m, expected.len() + 1, "{out:?}");
    assert_eq!(&out[1..m], &expected[..]);
}

/// Calls of one shape whose attributes keep their structure but change
/// their values, as calls of one target from several call sites do: the
/// host rewrites the attributes' bytes in the frame it keeps, and the
/// guest sees each call's own values.
#[test]
fn attributes_that_change_value_between_calls_of_one_shape_arrive() {
    let echo = handler("echo_attrs");
    let scale = handler("scale_any");
    let values = [
        (-3i32, "hi", [0.5f32, 1.5]),
        (7, "yo", [2.5, -1.0]),
        (-3, "hi", [0.5, 1.5]),
    ];
    for round in 0..3 {
        for (i, &(a, s, v)) in values.iter().enumerate() {
            let call = HostCall::new()
                .ret(HostBuffer::zeros(DType::F64, &[64]))
                .attr("a", HostAttr::Scalar(Scalar::S32(a)))
                .attr(
                    "d",
                    HostAttr::Dictionary(vec![("x".into(), string_attr(s))]),
                )
                .attr(
                    "v",
                    HostAttr::Array(
                        DType::F32,
                        2,
                        [v[0].to_le_bytes(), v[1].to_le_bytes()].concat(),
                    ),
                );
            echo.call_host(&call).unwrap();
            let out = call.result(0).to_f64();
            let s = s.as_bytes();
            #[rustfmt::skip]
            let expected: Vec<f64> = vec![
                3.0, // count
                1.0, 97.0, 3.0, 4.0, 1.0, f64::from(a), // a: scalar s32
                1.0, 100.0, 2.0, 0.0, 1.0, // d: dictionary of 1
                1.0, 120.0, 4.0, 0.0, 2.0, f64::from(s[0]), f64::from(s[1]), // x: string
                1.0, 118.0, 1.0, 11.0, 2.0, f64::from(v[0]), f64::from(v[1]), // v: f32 array
            ];
            let m = out[0] as usize;
            assert_eq!(&out[1..m], &expected[..], "round {round}, call {i}");

            let factor = f64::from(a) / 2.0;
            let call = HostCall::new()
                .arg(HostBuffer::f64(&[2], &[1.0, -4.0]))
                .ret(HostBuffer::zeros(DType::F64, &[2]))
                .attr("factor", f64_attr(factor));
            scale.call_host(&call).unwrap();
            assert_eq!(
                call.result(0).to_f64(),
                [factor, -4.0 * factor],
                "round {round}, call {i}"
            );
        }
    }
}

fn f64_attr(value: f64) -> HostAttr {
    HostAttr::Scalar(Scalar::F64(value))
}

#[test]
fn inplace_set0_updates_an_aliased_result_in_rust_and_cpp() {
    for target in ["inplace_set0", "inplace_set0_cpp"] {
        // f32 [2, 3], y aliased with x: the first element of each row.
        let call = HostCall::new()
            .arg(HostBuffer::f32(&[2, 3], &[0.0, 2.0, 4.0, 6.0, 8.0, 10.0]))
            .ret_alias(0)
            .attr("value", f64_attr(42.0));
        handler(target).call_host(&call).unwrap();
        assert_eq!(
            call.result(0).to_f32(),
            [42.0, 2.0, 4.0, 42.0, 8.0, 10.0],
            "{target}"
        );
        // f64 with a batch dim.
        let x: Vec<f64> = (0..12).map(|i| f64::from(i) + 0.25).collect();
        let call = HostCall::new()
            .arg(HostBuffer::f64(&[2, 2, 3], &x))
            .ret_alias(0)
            .attr("value", f64_attr(-1e300));
        handler(target).call_host(&call).unwrap();
        let mut want = x.clone();
        for row in want.chunks_mut(3) {
            row[0] = -1e300;
        }
        assert_eq!(call.result(0).to_f64(), want, "{target}");
        // Without aliasing, the result's region is where the aliased call
        // before had x, which the host copied in: it scrubs that, so the
        // result starts zeroed (XLA's buffer held garbage), and only the
        // first element is written.
        let call = HostCall::new()
            .arg(HostBuffer::f64(&[4], &[1.0, 2.0, 3.0, 4.0]))
            .ret(HostBuffer::new(DType::F64, &[4], vec![0xff; 32]))
            .attr("value", f64_attr(7.0));
        handler(target).call_host(&call).unwrap();
        assert_eq!(call.result(0).to_f64(), [7.0, 0.0, 0.0, 0.0], "{target}");
    }
}

#[test]
fn aliasing_cpp_sees_one_data_pointer_only_when_aliased() {
    let call = HostCall::new()
        .arg(HostBuffer::f32(&[3], &[1.0, 2.0, 3.0]))
        .ret_alias(0);
    handler("aliasing_cpp").call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f32(), [1.0, 2.0, 3.0]);
    let call = HostCall::new()
        .arg(HostBuffer::f32(&[3], &[1.0, 2.0, 3.0]))
        .ret(HostBuffer::zeros(DType::F32, &[3]));
    let error = handler("aliasing_cpp").call_host(&call).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArgument);
    assert_eq!(
        error.message,
        "target `aliasing_cpp` (guest inplace_set0_cpp.wasm): When aliased, the input and \
         output buffers should point to the same data."
    );
}

/// The guest SDK reuses a target's last decode of a frame whose bytes are
/// unchanged (the host rewrites only the data while the shapes stay): calls
/// that change shape, dtype and attribute values between and within runs of
/// equal shapes must each see their own.
#[test]
fn guests_see_each_calls_shapes_dtypes_and_attributes() {
    let x = [1.0f32, 2.0, 3.0, -1.0, 0.5, 4.0];
    let rms = |dims: &[i64]| -> Vec<f32> {
        let n = *dims.last().unwrap() as usize;
        let len = dims.iter().product::<i64>() as usize;
        x[..len]
            .chunks(n)
            .flat_map(|row| {
                let scale = 1.0 / (row.iter().map(|v| v * v).sum::<f32>() / n as f32 + 1e-5).sqrt();
                row.iter().map(move |v| v * scale)
            })
            .collect()
    };
    let scale = handler("scale_any");
    let norm = handler("rms_norm");
    let f64_attr = |v: f64| HostAttr::Scalar(Scalar::F64(v));
    // Equal shapes in a row, then each change: the last axis, the element
    // count at the same rank, the rank.
    let shapes: [&[i64]; 7] = [&[2, 3], &[2, 3], &[3, 2], &[2, 2], &[6], &[1, 6], &[1, 5]];
    for round in 0..3 {
        for (k, dims) in shapes.iter().enumerate() {
            // rms_norm's result depends on the last axis.
            let len = dims.iter().product::<i64>() as usize;
            let call = HostCall::new()
                .arg(HostBuffer::f32(dims, &x[..len]))
                .ret(HostBuffer::zeros(DType::F32, dims))
                .attr("eps", f32_attr(1e-5));
            norm.call_host(&call).unwrap();
            let got = call.result(0).to_f32();
            assert_eq!(got.len(), len);
            for (got, want) in got.iter().zip(rms(dims)) {
                assert!(
                    (got - want).abs() < 1e-5,
                    "rms_norm {dims:?}: {got} vs {want}"
                );
            }

            // scale_any's on the dtype and the factor.
            let factor = 0.5 + (round * shapes.len() + k) as f64;
            let values: Vec<f64> = x[..len].iter().map(|&v| f64::from(v) - k as f64).collect();
            if k % 2 == 0 {
                let x32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
                let call = HostCall::new()
                    .arg(HostBuffer::f32(dims, &x32))
                    .ret(HostBuffer::zeros(DType::F32, dims))
                    .attr("factor", f64_attr(factor));
                scale.call_host(&call).unwrap();
                let want: Vec<f32> = x32
                    .iter()
                    .map(|&v| (f64::from(v) * factor) as f32)
                    .collect();
                assert_eq!(call.result(0).to_f32(), want, "round {round}, f32 {dims:?}");
            } else {
                let call = HostCall::new()
                    .arg(HostBuffer::f64(dims, &values))
                    .ret(HostBuffer::zeros(DType::F64, dims))
                    .attr("factor", f64_attr(factor));
                scale.call_host(&call).unwrap();
                let want: Vec<f64> = values.iter().map(|v| v * factor).collect();
                assert_eq!(call.result(0).to_f64(), want, "round {round}, f64 {dims:?}");
            }
        }
        // Right after a call of x and y f32[2, 3], a y of f32[3, 2] is
        // refused, and the next call of the earlier shapes works.
        let call = |ret: &[i64]| {
            HostCall::new()
                .arg(HostBuffer::f32(&[2, 3], &x))
                .ret(HostBuffer::zeros(DType::F32, ret))
                .attr("factor", f64_attr(2.0))
        };
        scale.call_host(&call(&[2, 3])).unwrap();
        let error = scale.call_host(&call(&[3, 2])).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidArgument);
        assert_message_contains(&error, "y is f32 [3, 2], expected x's f32 [2, 3]");
        let good = call(&[2, 3]);
        scale.call_host(&good).unwrap();
        assert_eq!(good.result(0).to_f32(), x.map(|v| v * 2.0));
    }
}
