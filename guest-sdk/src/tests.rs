//! Decoding call frames laid out by [`testing`](crate::testing) (the same
//! wasm32 layout the host writes), and the [`target!`](crate::target) macro.

use alloc::string::ToString;
use alloc::vec::Vec;

use crate::abi;
use crate::testing::{FrameBuilder, TestAttr};
use crate::{
    Attr, Attrs, Buffer, CallFrame, Complex, DataType, Error, ErrorCode, Result, ResultBuffer,
    Scalar,
};

fn ok(_: &CallFrame<'_>) -> Result<()> {
    Ok(())
}

crate::target!("sdk_test.ok", sdk_test_ok, ok);
crate::target!(
    "sdk_test-closure$",
    sdk_test_closure,
    |frame: &CallFrame| -> Result<(), Error> { frame.expect_arity(0, 0) }
);

#[test]
fn records_match_the_abi() {
    const N: usize = crate::__private::record_len("rms_norm", "rms_norm_handler");
    let record: [u8; N] = crate::__private::record("rms_norm", "rms_norm_handler");
    assert_eq!(&record[..], b"cyxla-target v1 rms_norm rms_norm_handler\n");
    assert_eq!(
        abi::parse_targets(&record).unwrap(),
        [("rms_norm", "rms_norm_handler")]
    );
    assert!(record.starts_with(abi::RECORD_PREFIX.as_bytes()));
}

#[test]
fn buffers_decode_with_shapes_and_dtypes() {
    let mut call = FrameBuilder::new()
        .arg(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .arg(&[], &[7i64])
        .arg(
            &[2],
            &[
                Complex {
                    re: 1.0f64,
                    im: -1.0,
                },
                Complex { re: 0.5, im: 2.0 },
            ],
        )
        .arg::<u8>(&[0, 4], &[])
        .ret(DataType::F64, &[3])
        .ret(DataType::S32, &[2, 0])
        .build();
    call.call(|frame| {
        assert_eq!((frame.num_args(), frame.num_rets()), (4, 2));
        assert_eq!(frame.stage(), abi::execution_stage::EXECUTE);
        frame.expect_arity(4, 2)?;
        let x = frame.arg::<f32>(0)?;
        assert_eq!(
            (x.dims(), x.rank(), x.element_count(), x.last_dim()),
            (&[2i64, 3][..], 2, 6, Some(3))
        );
        assert_eq!(&x[..], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let s = frame.arg::<i64>(1)?;
        assert_eq!((s.rank(), s.last_dim(), s.data()), (0, None, &[7i64][..]));
        let c = frame.arg::<Complex<f64>>(2)?;
        assert_eq!(c[1], Complex { re: 0.5, im: 2.0 });
        let empty = frame.any_arg(3)?;
        assert_eq!(
            (empty.dtype(), empty.element_count(), empty.byte_len()),
            (DataType::U8, 0, 0)
        );
        assert_eq!(empty.bytes()?.len(), 0);
        let mut y = frame.ret::<f64>(0)?;
        y.copy_from_slice(&[1.5, 2.5, 3.5]);
        let z = frame.any_ret(1)?;
        assert_eq!((z.dtype(), z.dims()), (DataType::S32, &[2i64, 0][..]));
        assert_eq!(z.into_bytes()?.len(), 0);
        Ok(())
    })
    .unwrap();
    assert_eq!(call.ret::<f64>(0), [1.5, 2.5, 3.5]);
}

#[test]
fn buffer_errors_name_the_buffer() {
    let mut call = FrameBuilder::new()
        .arg(&[2], &[1.0f64, 2.0])
        .ret(DataType::F32, &[2])
        .build();
    let msg = |r: Result<()>| r.unwrap_err().to_string();
    assert_eq!(
        msg(call.call(|f| f.arg::<f32>(0).map(drop))),
        "INVALID_ARGUMENT: argument 0: expected a f32 buffer, got f64 [2]"
    );
    assert_eq!(
        msg(call.call(|f| f.arg::<f64>(1).map(drop))),
        "INVALID_ARGUMENT: argument 1 requested, but the call has 1 operand(s)"
    );
    assert_eq!(
        msg(call.call(|f| f.ret::<f32>(3).map(drop))),
        "INVALID_ARGUMENT: result 3 requested, but the call has 1 result(s)"
    );
    assert_eq!(
        msg(call.call(|f| f.expect_arity(1, 2))),
        "INVALID_ARGUMENT: expected 1 operand(s) and 2 result(s), got 1 and 1"
    );
    // A result can be taken once.
    let e = call
        .call(|f| {
            let _first = f.ret::<f32>(0)?;
            f.ret::<f32>(0).map(drop)
        })
        .unwrap_err();
    assert_eq!(e.message, "result 0 was already taken");
}

/// XLA FFI 0.5's buffer matching in Rust: dimensions bound by rank, other
/// buffers held to them, each mismatch named.
#[test]
fn buffers_match_shapes_by_rank_and_dims() {
    // y[m, n] = a[m, k] @ b[k, n]
    fn matmul_shapes(f: &CallFrame<'_>) -> Result<()> {
        let [m, k] = f.arg::<f32>(0)?.dims_of_rank::<2>()?;
        let [_, n] = f.arg::<f32>(1)?.dims_of_rank::<2>()?;
        f.arg::<f32>(1)?.expect_dims(&[k, n])?;
        f.any_ret(0)?.expect_dims(&[m, n])?;
        assert_eq!([m, k, n], [2, 3, 4], "the shapes of the good call");
        Ok(())
    }
    let mut good = FrameBuilder::new()
        .arg(&[2, 3], &[0.0f32; 6])
        .arg(&[3, 4], &[0.0f32; 12])
        .ret(DataType::F32, &[2, 4])
        .build();
    good.call(matmul_shapes).unwrap();
    let msg = |shapes: [&[i64]; 3]| {
        let mut call = FrameBuilder::new()
            .arg(
                shapes[0],
                &alloc::vec![0.0f32; shapes[0].iter().product::<i64>() as usize],
            )
            .arg(
                shapes[1],
                &alloc::vec![0.0f32; shapes[1].iter().product::<i64>() as usize],
            )
            .ret(DataType::F32, shapes[2])
            .build();
        call.call(matmul_shapes).unwrap_err().to_string()
    };
    assert_eq!(
        msg([&[6], &[3, 4], &[2, 4]]),
        "INVALID_ARGUMENT: argument 0: expected rank 2, got f32 [6]"
    );
    assert_eq!(
        msg([&[2, 3], &[5, 4], &[2, 4]]),
        "INVALID_ARGUMENT: argument 1: expected dims [3, 4], got f32 [5, 4]: dimension 0 is 5, \
         expected 3"
    );
    assert_eq!(
        msg([&[2, 3], &[3, 4], &[2, 4, 1]]),
        "INVALID_ARGUMENT: result 0: expected dims [2, 4], got f32 [2, 4, 1]: rank 3, expected 2"
    );
}

/// Reads a little-endian u32 at `addr` of a test memory.
fn get_u32(mem: &[u8], addr: u32) -> u32 {
    u32::from_le_bytes(mem[addr as usize..addr as usize + 4].try_into().unwrap())
}

fn put_u32(mem: &mut [u8], addr: u32, v: u32) {
    mem[addr as usize..addr as usize + 4].copy_from_slice(&v.to_le_bytes());
}

/// Guest address of the XLA_FFI_Buffer of result `i` (or argument `i`).
fn buffer_addr(mem: &[u8], frame: u32, ret: bool, i: u32) -> u32 {
    let (off, ptrs) = if ret {
        (abi::call_frame::RETS, abi::rets::RETS)
    } else {
        (abi::call_frame::ARGS, abi::args::ARGS)
    };
    let array = get_u32(mem, frame + off + ptrs);
    get_u32(mem, array + 4 * i)
}

#[test]
fn in_place_updates_take_the_result_first() {
    let build = || {
        FrameBuilder::new()
            .arg(&[6], &[0.0f32, 2.0, 4.0, 6.0, 8.0, 10.0])
            .arg(&[2], &[1.5f64, 2.5])
            .ret_alias(0)
            .ret(DataType::F64, &[2])
            .build()
    };
    // The aliased result holds the operand's values; the handler changes
    // one and the others stay.
    let mut call = build();
    call.call(|frame| {
        assert_eq!(
            (frame.aliased_arg(0)?, frame.aliased_arg(1)?),
            (Some(0), None)
        );
        let mut y = frame.ret::<f32>(0)?;
        assert_eq!(&y[..], &[0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        y[0] = 42.0;
        // The operand can no longer be viewed: its values are in the result.
        let e = frame.arg::<f32>(0).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(
            e.message,
            "argument 0 is aliased with result 0 (in place), which was taken: \
             its values are in result 0"
        );
        assert!(frame.any_arg(0).is_err());
        // Other buffers keep their rules.
        let w = frame.arg::<f64>(1)?;
        let mut z = frame.ret::<f64>(1)?;
        z.copy_from_slice(&[w[0] * 2.0, w[1] * 2.0]);
        assert_eq!(
            frame.ret::<f32>(0).unwrap_err().message,
            "result 0 was already taken"
        );
        Ok(())
    })
    .unwrap();
    assert_eq!(call.ret::<f32>(0), [42.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    assert_eq!(call.ret::<f64>(1), [3.0, 5.0]);

    // Viewing the operand first, even without reading it, rules out taking
    // the result.
    let mut call = build();
    let e = call
        .call(|frame| {
            let _x = frame.any_arg(0)?;
            frame.ret::<f32>(0).map(drop)
        })
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(
        e.message,
        "result 0 is aliased with argument 0 (in place), which was already viewed: \
         take result 0 first and read the argument's values through it"
    );
    // Viewing another operand does not.
    build()
        .call(|frame| {
            let _w = frame.arg::<f64>(1)?;
            frame.ret::<f32>(0).map(drop)
        })
        .unwrap();
}

#[test]
fn malformed_frames_are_errors_not_ub() {
    let build = || {
        FrameBuilder::new()
            .arg(&[2], &[1.0f32, 2.0])
            .ret(DataType::F32, &[2])
            .build()
    };
    let take_all = |f: &CallFrame<'_>| -> Result<()> {
        let _x = f.arg::<f32>(0)?;
        f.ret::<f32>(0).map(drop)
    };

    // Wrong struct_size (the x86_64 value).
    let mut call = build();
    let frame = call.frame_address();
    put_u32(call.memory_mut(), frame, 168);
    let e = call.call(ok).unwrap_err();
    assert_eq!(e.code, ErrorCode::Internal);
    assert_eq!(
        e.message,
        "call frame struct_size is 168, expected 104 (wasm32 XLA_FFI_CallFrame)"
    );

    // Result partly overlapping the operand.
    let mut call = build();
    let mem = call.memory_mut();
    let arg = buffer_addr(mem, frame, false, 0);
    let ret = buffer_addr(mem, frame, true, 0);
    let arg_data = get_u32(mem, arg + abi::buffer::DATA);
    put_u32(mem, ret + abi::buffer::DATA, arg_data + 4);
    let e = call.call(take_all).unwrap_err();
    assert_eq!(e.code, ErrorCode::Internal);
    assert_eq!(e.message, "result 0: its memory overlaps argument 0");

    // Result aliasing the operand exactly, taken after the operand was
    // viewed (see `in_place_updates_take_the_result_first`).
    let mut call = build();
    let mem = call.memory_mut();
    put_u32(mem, ret + abi::buffer::DATA, arg_data);
    let e = call.call(take_all).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(
        e.message,
        "result 0 is aliased with argument 0 (in place), which was already viewed: \
         take result 0 first and read the argument's values through it"
    );

    // Result data outside memory.
    let mut call = build();
    let mem = call.memory_mut();
    put_u32(mem, ret + abi::buffer::DATA, 0xffff_fff0);
    let e = call.call(take_all).unwrap_err();
    assert!(
        e.message
            .starts_with("result 0: guest range 0xfffffff0+8 is outside guest memory"),
        "{}",
        e.message
    );

    // Misaligned data for the element type.
    let mut call = build();
    let mem = call.memory_mut();
    put_u32(mem, arg + abi::buffer::DATA, arg_data + 1);
    let e = call.call(take_all).unwrap_err();
    assert!(
        e.message.ends_with("is not aligned to 4 bytes"),
        "{}",
        e.message
    );

    // Unknown dtype, negative dimension, bad argument type.
    let mut call = build();
    let mem = call.memory_mut();
    put_u32(mem, arg + abi::buffer::DTYPE, 14);
    assert_eq!(
        call.call(take_all).unwrap_err().message,
        "argument 0: unknown dtype 14"
    );
    let mut call = build();
    let mem = call.memory_mut();
    let dims = get_u32(mem, arg + abi::buffer::DIMS);
    mem[dims as usize..dims as usize + 8].copy_from_slice(&(-2i64).to_le_bytes());
    assert_eq!(
        call.call(take_all).unwrap_err().message,
        "argument 0: dimension 0 is -2"
    );
    let mut call = build();
    let mem = call.memory_mut();
    let types = get_u32(mem, frame + abi::call_frame::ARGS + abi::args::TYPES);
    put_u32(mem, types, 7);
    assert_eq!(
        call.call(take_all).unwrap_err().message,
        "argument 0 has type 7, expected a buffer (1)"
    );

    // Null frame.
    let mut call = build();
    let mem = call.memory_mut();
    // SAFETY: no results are taken.
    let e = unsafe { CallFrame::from_memory(mem, 0) }.unwrap_err();
    assert_eq!(e.message, "call frame: null guest address");
}

#[test]
fn attributes_decode_by_name_in_sorted_order() {
    let mut call = FrameBuilder::new()
        .attr("eps", 1e-5f32)
        .attr("n", 3i64)
        .attr("flag", true)
        .attr("mode", "fast")
        .attr("raw", TestAttr::String(alloc::vec![0xff, 0]))
        .attr("axes", TestAttr::array(&[0i64, 2]))
        .attr("weights", TestAttr::array(&[0.5f64, 1.5]))
        .attr("Upper", 1u8)
        .attr(
            "cfg",
            TestAttr::dict([
                ("b", TestAttr::from(2i32)),
                ("a", TestAttr::dict([("z", TestAttr::from("deep"))])),
            ]),
        )
        .build();
    call.call(|frame| {
        let attrs = frame.attrs();
        assert_eq!(attrs.len(), 9);
        let names: Vec<&[u8]> = attrs
            .iter()
            .map(|e| e.map(|(n, _)| n))
            .collect::<Result<_>>()?;
        let want: [&[u8]; 9] = [
            b"Upper", b"axes", b"cfg", b"eps", b"flag", b"mode", b"n", b"raw", b"weights",
        ];
        assert_eq!(names, want);
        assert_eq!(frame.attr::<f32>("eps")?, 1e-5);
        assert_eq!(frame.attr::<i64>("n")?, 3);
        assert!(frame.attr::<bool>("flag")?);
        assert_eq!(frame.attr::<&str>("mode")?, "fast");
        assert_eq!(frame.attr::<&[i64]>("axes")?, &[0, 2]);
        assert_eq!(frame.attr::<&[f64]>("weights")?, &[0.5, 1.5]);
        assert_eq!(frame.attr::<u8>("Upper")?, 1);
        assert_eq!(frame.attr::<Scalar>("n")?.to_f64(), 3.0);
        let cfg: crate::Attrs<'_> = frame.attr("cfg")?;
        assert_eq!(cfg.get::<i32>("b")?, 2);
        let inner: crate::Attrs<'_> = cfg.get("a")?;
        assert_eq!(inner.get::<&str>("z")?, "deep");
        match frame.attr::<Attr<'_>>("raw")? {
            Attr::String(b) => assert_eq!(b, [0xff, 0]),
            other => panic!("raw: {other:?}"),
        }
        let weights: crate::Array<'_> = frame.attr("weights")?;
        assert_eq!(
            (weights.dtype(), weights.len(), weights.get(1)),
            (DataType::F64, 2, Some(Scalar::F64(1.5)))
        );
        assert_eq!(frame.attrs().get_opt::<f32>("absent")?, None);
        Ok(())
    })
    .unwrap();

    let msg = |name: &'static str, f: fn(&CallFrame<'_>, &str) -> Result<()>| {
        let mut c = call.clone();
        c.call(|frame| f(frame, name)).unwrap_err().message
    };
    assert_eq!(
        msg("eps", |f, n| f.attr::<f64>(n).map(drop)),
        "attribute `eps`: expected a f64 scalar, got a f32 scalar"
    );
    assert_eq!(
        msg("axes", |f, n| f.attr::<&[i32]>(n).map(drop)),
        "attribute `axes`: expected a s32 array, got a s64 array"
    );
    assert_eq!(
        msg("mode", |f, n| f.attr::<crate::Attrs<'_>>(n).map(drop)),
        "attribute `mode`: expected a dictionary, got a string"
    );
    assert!(
        msg("raw", |f, n| f.attr::<&str>(n).map(drop))
            .starts_with("attribute `raw`: expected a UTF-8 string")
    );
    assert_eq!(
        msg("nope", |f, n| f.attr::<f32>(n).map(drop)),
        "missing attribute `nope` (a f32 scalar)"
    );
}

#[test]
fn empty_calls_decode() {
    let mut call = FrameBuilder::new().build();
    call.call(|frame| {
        assert_eq!(
            (frame.num_args(), frame.num_rets(), frame.attrs().len()),
            (0, 0, 0)
        );
        assert!(frame.attrs().is_empty());
        assert_eq!(
            frame.device_ordinal().unwrap_err().code,
            ErrorCode::Unimplemented
        );
        Ok(())
    })
    .unwrap();
    call.call(ok).unwrap();
}

/// What a handler saw of argument 0 (dims and values), or the error.
type Seen = core::result::Result<(Vec<i64>, Vec<f32>), alloc::string::String>;

/// Views argument 0, takes result 0 and fills it with ones.
fn see(call: &mut crate::testing::TestCall) -> Seen {
    let mut seen = None;
    call.call(|f| {
        let x = f.arg::<f32>(0)?;
        seen = Some((x.dims().to_vec(), x.to_vec()));
        f.ret::<f32>(0)?.fill(1.0);
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(seen.expect("the handler ran"))
}

#[test]
fn a_repeated_call_reads_new_values() {
    let mut call = FrameBuilder::new()
        .arg(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .ret(DataType::F32, &[2, 3])
        .attr("factor", 2.0f32)
        .build();
    let frame = call.frame_address();
    let scale = |f: &CallFrame<'_>| -> Result<()> {
        let factor: f32 = f.attr("factor")?;
        let x = f.arg::<f32>(0)?;
        let mut y = f.ret::<f32>(0)?;
        for (y, x) in y.iter_mut().zip(x.iter()) {
            *y = x * factor;
        }
        Ok(())
    };
    assert!(call.trusted(), "laid out as the host lays out frames");
    call.call(scale).unwrap();
    assert_eq!(call.ret::<f32>(0), [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);

    // New operand values and a new attribute value: the frame's own bytes
    // are unchanged, and the values are new.
    let mem = call.memory_mut();
    let arg = buffer_addr(mem, frame, false, 0);
    let data = get_u32(mem, arg + abi::buffer::DATA) as usize;
    mem[data..data + 4].copy_from_slice(&10.0f32.to_le_bytes());
    let values = get_u32(mem, frame + abi::call_frame::ATTRS + abi::attrs::ATTRS);
    let factor = get_u32(mem, get_u32(mem, values) + abi::scalar::VALUE) as usize;
    assert_eq!(mem[factor..factor + 4], 2.0f32.to_le_bytes());
    mem[factor..factor + 4].copy_from_slice(&3.0f32.to_le_bytes());
    call.call(scale).unwrap();
    assert_eq!(call.ret::<f32>(0), [30.0, 6.0, 9.0, 12.0, 15.0, 18.0]);
}

/// A scalar attribute of a dtype XLA does not deliver (f16, bf16 and the
/// rest: XLA refuses them at compile time, and the host's attribute model
/// cannot hold them) is an error that names the dtype, not a value.
#[test]
fn scalars_of_dtypes_xla_does_not_deliver_are_errors() {
    let mut call = FrameBuilder::new().attr("h", 1.0f32).build();
    let frame = call.frame_address();
    let mem = call.memory_mut();
    let values = get_u32(mem, frame + abi::call_frame::ATTRS + abi::attrs::ATTRS);
    let scalar = get_u32(mem, values);
    assert_eq!(
        get_u32(mem, scalar + abi::scalar::DTYPE),
        DataType::F32.to_xla()
    );
    for dtype in [
        DataType::F16,
        DataType::Bf16,
        DataType::C64,
        DataType::Token,
    ] {
        put_u32(
            call.memory_mut(),
            scalar + abi::scalar::DTYPE,
            dtype.to_xla(),
        );
        let e = call
            .call(|f: &CallFrame<'_>| f.attr::<Attr<'_>>("h").map(drop))
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{dtype}");
        assert!(
            e.message
                .contains(&alloc::format!("unsupported {dtype} scalar")),
            "{dtype}: {}",
            e.message
        );
    }
    put_u32(
        call.memory_mut(),
        scalar + abi::scalar::DTYPE,
        DataType::F32.to_xla(),
    );
    call.call(|f: &CallFrame<'_>| {
        assert_eq!(f.attr::<f32>("h")?, 1.0);
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_frame_changed_after_a_call_decodes_as_a_fresh_frame_would() {
    type Change = fn(&mut [u8], u32);
    fn dims_of(mem: &[u8], frame: u32, ret: bool) -> usize {
        get_u32(mem, buffer_addr(mem, frame, ret, 0) + abi::buffer::DIMS) as usize
    }
    let changes: [(&str, Change); 14] = [
        ("frame struct_size", |m, f| put_u32(m, f, 168)),
        ("operand count", |m, f| {
            let at = (f + abi::call_frame::ARGS + abi::args::SIZE_FIELD) as usize;
            m[at..at + 8].copy_from_slice(&70_000i64.to_le_bytes());
        }),
        ("attribute count", |m, f| {
            let at = (f + abi::call_frame::ATTRS + abi::attrs::SIZE_FIELD) as usize;
            m[at..at + 8].copy_from_slice(&(-1i64).to_le_bytes());
        }),
        ("operand type", |m, f| {
            let types = get_u32(m, f + abi::call_frame::ARGS + abi::args::TYPES);
            put_u32(m, types, 7);
        }),
        ("buffer struct_size", |m, f| {
            put_u32(m, buffer_addr(m, f, false, 0), 20);
        }),
        ("dtype", |m, f| {
            put_u32(m, buffer_addr(m, f, false, 0) + abi::buffer::DTYPE, 14);
        }),
        ("rank", |m, f| {
            let at = (buffer_addr(m, f, false, 0) + abi::buffer::RANK) as usize;
            m[at..at + 8].copy_from_slice(&65i64.to_le_bytes());
        }),
        ("negative dimension", |m, f| {
            let d = dims_of(m, f, false);
            m[d..d + 8].copy_from_slice(&(-2i64).to_le_bytes());
        }),
        ("misaligned dims", |m, f| {
            let at = buffer_addr(m, f, false, 0) + abi::buffer::DIMS;
            put_u32(m, at, get_u32(m, at) + 4);
        }),
        ("result outside memory", |m, f| {
            put_u32(
                m,
                buffer_addr(m, f, true, 0) + abi::buffer::DATA,
                0xffff_fff0,
            );
        }),
        ("result overlapping the operand", |m, f| {
            let data = get_u32(m, buffer_addr(m, f, false, 0) + abi::buffer::DATA);
            put_u32(m, buffer_addr(m, f, true, 0) + abi::buffer::DATA, data + 4);
        }),
        ("operand pointer to the result's buffer", |m, f| {
            let ptrs = get_u32(m, f + abi::call_frame::ARGS + abi::args::ARGS);
            put_u32(m, ptrs, buffer_addr(m, f, true, 0));
        }),
        ("new shapes, same element count", |m, f| {
            for ret in [false, true] {
                let d = dims_of(m, f, ret);
                m[d..d + 8].copy_from_slice(&3i64.to_le_bytes());
                m[d + 8..d + 16].copy_from_slice(&2i64.to_le_bytes());
            }
        }),
        ("a shorter operand", |m, f| {
            let d = dims_of(m, f, false);
            m[d + 8..d + 16].copy_from_slice(&1i64.to_le_bytes());
        }),
    ];
    let build = || {
        FrameBuilder::new()
            .arg(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
            .ret(DataType::F32, &[2, 3])
            .attr("factor", 2.0f32)
            .build()
    };
    let mut errors = 0;
    for (what, change) in changes {
        let mut fresh = build();
        let frame = fresh.frame_address();
        change(fresh.memory_mut(), frame);
        let want = see(&mut fresh);

        let mut call = build();
        assert_eq!(
            see(&mut call),
            Ok((alloc::vec![2, 3], alloc::vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        );
        change(call.memory_mut(), frame);
        assert_eq!(see(&mut call), want, "{what}");
        // And once more, now that the changed frame may have been kept.
        assert_eq!(see(&mut call), want, "{what}, called again");
        errors += usize::from(want.is_err());
    }
    assert_eq!(errors, 12, "every change but the last two is an error");
}

#[test]
fn high_ranks_and_many_buffers_are_read_each_call() {
    // 17 operands (one of rank 9): trusted. 65 operands: more than a
    // trusted frame tracks, decoded and checked instead; the same answers.
    for extra in [16, 64] {
        let mut builder = FrameBuilder::new().arg(&[1; 9], &[100.0f32]);
        for i in 1..=extra {
            builder = builder.arg(&[1], &[i as f32]);
        }
        let mut call = builder
            .ret(DataType::F32, &[1])
            .ret(DataType::F32, &[])
            .build();
        assert_eq!(call.trusted(), extra < 64, "{extra}");
        let sum = |f: &CallFrame<'_>| -> Result<()> {
            let mut total = 0.0;
            for i in 0..f.num_args() {
                total += f.arg::<f32>(i)?[0];
            }
            f.ret::<f32>(0)?[0] = total;
            f.ret::<f32>(1)?[0] = -total;
            assert_eq!(
                f.ret::<f32>(1).unwrap_err().message,
                "result 1 was already taken"
            );
            Ok(())
        };
        let total = 100.0 + (extra * (extra + 1) / 2) as f32;
        for _ in 1..=2 {
            call.call(sum).unwrap();
            assert_eq!(
                (call.ret::<f32>(0), call.ret::<f32>(1)),
                (alloc::vec![total], alloc::vec![-total])
            );
        }
    }
}

/// Frames a test corrupted are not trusted: their flaws are errors (see
/// `malformed_frames_are_errors_not_ub`), as those of a frame decoded in a
/// guest.
#[test]
fn only_frames_laid_out_as_the_host_does_are_trusted() {
    let build = || {
        FrameBuilder::new()
            .arg(&[2], &[1.0f32, 2.0])
            .arg(&[2], &[1.0f32, 2.0])
            .ret_alias(0)
            .ret(DataType::F32, &[2])
            .build()
    };
    assert!(build().trusted());
    let mut call = build();
    let frame = call.frame_address();
    let mem = call.memory_mut();
    let (arg, ret1) = (
        buffer_addr(mem, frame, false, 1),
        buffer_addr(mem, frame, true, 1),
    );
    let arg_data = get_u32(mem, arg + abi::buffer::DATA);
    // Two results at one address.
    let ret0_data = get_u32(mem, buffer_addr(mem, frame, true, 0) + abi::buffer::DATA);
    put_u32(mem, ret1 + abi::buffer::DATA, ret0_data);
    assert!(!call.trusted());
    // A result inside an operand.
    let mut call = build();
    put_u32(call.memory_mut(), ret1 + abi::buffer::DATA, arg_data + 4);
    assert!(!call.trusted());
    // A result over the operand's dims.
    let mut call = build();
    let mem = call.memory_mut();
    let dims = get_u32(mem, arg + abi::buffer::DIMS);
    put_u32(mem, ret1 + abi::buffer::DATA, dims);
    assert!(!call.trusted());
    // Data not aligned for every element type, or at 0: typed views of a
    // trusted frame are slices without checks.
    for data in [arg_data + 4, 0] {
        let mut call = build();
        put_u32(call.memory_mut(), arg + abi::buffer::DATA, data);
        assert!(!call.trusted(), "{data}");
    }
    // Two operands at one address are one region, read-only: trusted.
    let mut call = build();
    let mem = call.memory_mut();
    let arg0_data = get_u32(mem, buffer_addr(mem, frame, false, 0) + abi::buffer::DATA);
    put_u32(mem, arg + abi::buffer::DATA, arg0_data);
    assert!(call.trusted());
    call.call(|f| {
        assert_eq!(f.aliased_arg(0)?, Some(0));
        let _y = f.ret::<f32>(0)?;
        assert!(f.arg::<f32>(1).is_err(), "aliased by result 0 too");
        f.ret::<f32>(1).map(drop)
    })
    .unwrap();
}

/// A frame whose counts are out of range (never one of the host's) is not
/// read as trusted, on wasm32 too, where usize is 32 bits: it is decoded.
#[test]
fn counts_out_of_range_are_not_trusted() {
    for count in [65i64, 1 << 32, (1 << 32) + 1, -1] {
        let mut call = FrameBuilder::new()
            .arg(&[1], &[1.0f32])
            .ret(DataType::F32, &[1])
            .build();
        let frame = call.frame_address();
        let mem = call.memory_mut();
        let at = (frame + abi::call_frame::ARGS + abi::args::SIZE_FIELD) as usize;
        mem[at..at + 8].copy_from_slice(&count.to_le_bytes());
        let len = mem.len();
        // SAFETY: the call's memory outlives the view, only read through it.
        let view = unsafe { crate::memory::Memory::from_raw_parts(mem.as_mut_ptr(), len, 0) };
        // SAFETY: the frame's fields are inside the view (only the count
        // is out of range, which is what is tested).
        let trusted = unsafe { CallFrame::trusted(view, frame) };
        assert!(trusted.is_none(), "{count}");
        assert!(call.call(ok).is_err(), "{count}");
    }
}

/// `arg::<T>` and `ret::<T>` read a trusted frame's buffer of `T`'s dtype
/// without decoding it (`CallFrame::trusted_as`): what they give is what the
/// general path gives, for every element type and ranks 0 to 3, empty
/// buffers included, and another dtype falls back to it and its error.
#[test]
fn typed_views_of_trusted_frames_match_the_general_path() {
    fn check<T: crate::Element + Copy + PartialEq + core::fmt::Debug>(values: &[T]) {
        // The typed path takes a buffer's byte size from `T`'s.
        assert_eq!(8 * size_of::<T>() as u32, T::DTYPE.bits(), "{:?}", T::DTYPE);
        for dims in [
            &[][..],
            &[0][..],
            &[3][..],
            &[1, 3][..],
            &[3, 1, 1][..],
            &[2, 0, 5][..],
        ] {
            let n = dims.iter().product::<i64>() as usize;
            let data = &values[..n.min(values.len())];
            let mut call = FrameBuilder::new()
                .arg(dims, data)
                .ret(T::DTYPE, dims)
                .build();
            assert!(call.trusted());
            call.call(|f| {
                let general = f.any_arg(0)?.typed::<T>()?;
                let typed = f.arg::<T>(0)?;
                assert_eq!(
                    (typed.dims(), typed.element_count(), &typed[..]),
                    (general.dims(), general.element_count(), &general[..]),
                    "{:?} {dims:?}",
                    T::DTYPE
                );
                assert_eq!(typed.dtype(), T::DTYPE);
                let mut y = f.ret::<T>(0)?;
                assert_eq!((y.dims(), y.len()), (dims, n));
                y.copy_from_slice(&typed);
                Ok(())
            })
            .unwrap();
            assert_eq!(call.ret::<T>(0), data);
            // Another dtype: the general path's error.
            let (e, other) = if T::DTYPE == DataType::U8 {
                (call.call(|f| f.arg::<i8>(0).map(drop)), "s8")
            } else {
                (call.call(|f| f.arg::<u8>(0).map(drop)), "u8")
            };
            let e = e.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument);
            assert!(
                e.message
                    .starts_with(&alloc::format!("argument 0: expected a {other} buffer")),
                "{e}"
            );
        }
    }
    check(&[1.5f32, -2.0, 3.25]);
    check(&[1.5f64, -2.0, 3.25]);
    check(&[1i8, -2, 3]);
    check(&[1i16, -2, 3]);
    check(&[1i32, -2, 3]);
    check(&[1i64, -2, 3]);
    check(&[1u8, 2, 3]);
    check(&[1u16, 2, 3]);
    check(&[1u32, 2, 3]);
    check(&[1u64, 2, 3]);
    check(
        &[Complex {
            re: 1.0f32,
            im: 2.0,
        }; 3],
    );
    check(
        &[Complex {
            re: 1.0f64,
            im: 2.0,
        }; 3],
    );
}

/// y = x * factor, as a kernel.
fn kernel_scale(x: Buffer<'_, f32>, mut y: ResultBuffer<'_, f32>, attrs: Attrs<'_>) -> Result<()> {
    let factor: f32 = attrs.get("factor")?;
    y.iter_mut()
        .zip(x.iter())
        .for_each(|(y, x)| *y = x * factor);
    Ok(())
}

crate::kernel!("sdk_test.kernel_scale", sdk_test_kernel_scale, kernel_scale);
crate::kernel!(
    "sdk_test.kernel_none",
    sdk_test_kernel_none,
    || -> Result<()> { Ok(()) }
);

/// A kernel takes its parameters from the call in order, operands and
/// results counted apart, and gives what a `CallFrame` handler would.
#[test]
fn kernels_take_their_buffers_in_order() {
    let mut call = FrameBuilder::new()
        .arg(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0])
        .ret(DataType::F32, &[2, 2])
        .attr("factor", 2.5f32)
        .build();
    call.kernel(kernel_scale).unwrap();
    assert_eq!(call.ret::<f32>(0), [2.5, 5.0, 7.5, 10.0]);

    // Results and operands interleaved, of several dtypes, with dims.
    fn split(
        sum: ResultBuffer<'_, f64>,
        x: Buffer<'_, f64>,
        count: ResultBuffer<'_, i32>,
        w: Buffer<'_, i64>,
    ) -> Result<()> {
        let (mut sum, mut count) = (sum, count);
        assert_eq!(
            (x.dims(), w.dims(), sum.dims()),
            (&[3i64][..], &[][..], &[1i64][..])
        );
        sum[0] = x.iter().sum::<f64>() * w[0] as f64;
        count[0] = x.len() as i32;
        Ok(())
    }
    let mut call = FrameBuilder::new()
        .arg(&[3], &[1.0f64, 2.0, 3.5])
        .arg(&[], &[2i64])
        .ret(DataType::F64, &[1])
        .ret(DataType::S32, &[1])
        .build();
    assert!(call.trusted());
    call.kernel(split).unwrap();
    assert_eq!(
        (call.ret::<f64>(0), call.ret::<i32>(1)),
        (alloc::vec![13.0], alloc::vec![3])
    );

    // No parameters: a call of no buffers.
    FrameBuilder::new().build().kernel(|| Ok(())).unwrap();
}

/// What a kernel refuses, in the words a `CallFrame` handler's accessors
/// use; the kernel does not run.
#[test]
fn kernels_refuse_calls_unlike_their_signature() {
    let msg = |r: Result<()>| r.unwrap_err().to_string();
    let build = || {
        FrameBuilder::new()
            .arg(&[3], &[1.0f64, 2.0, 3.0])
            .ret(DataType::F32, &[3])
            .attr("factor", 2.0f32)
            .build()
    };
    assert_eq!(
        msg(build().kernel(kernel_scale)),
        "INVALID_ARGUMENT: argument 0: expected a f32 buffer, got f64 [3]"
    );
    assert_eq!(
        msg(build().kernel(|_: Buffer<'_, f64>| Ok(()))),
        "INVALID_ARGUMENT: expected 1 operand(s) and 0 result(s), got 1 and 1"
    );
    assert_eq!(
        msg(build().kernel(|_: Buffer<'_, f64>, _: ResultBuffer<'_, f64>| Ok(()))),
        "INVALID_ARGUMENT: result 0: expected a f64 buffer, got f32 [3]"
    );
    let mut call = FrameBuilder::new()
        .arg(&[3], &[1.0f32, 2.0, 3.0])
        .ret(DataType::F32, &[3])
        .build();
    assert_eq!(
        msg(call.kernel(kernel_scale)),
        "INVALID_ARGUMENT: missing attribute `factor` (a f32 scalar)"
    );

    // An in-place update needs a CallFrame.
    let mut call = FrameBuilder::new()
        .arg(&[2], &[1.0f32, 2.0])
        .ret_alias(0)
        .build();
    let e = call
        .kernel(
            |_: Buffer<'_, f32>, _: ResultBuffer<'_, f32>| -> Result<()> {
                unreachable!("refused before it runs")
            },
        )
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(
        e.message
            .starts_with("result 0 is aliased with argument 0 (in place)"),
        "{e}"
    );
    // An empty result at an operand's address is no alias.
    let mut call = FrameBuilder::new()
        .arg::<f32>(&[0], &[])
        .ret_alias(0)
        .build();
    call.kernel(|x: Buffer<'_, f32>, y: ResultBuffer<'_, f32>| {
        assert_eq!((x.len(), y.len()), (0, 0));
        Ok(())
    })
    .unwrap();
}
