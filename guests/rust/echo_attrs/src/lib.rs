//! Echoes every attribute it receives into its output, so host tests can
//! check that attributes arrive intact: target `echo_attrs`.
//!
//! Operands: any (ignored). Result 0: `f64[N]`. The output is
//!
//! ```text
//! [M, count, entry...]          M = number of values written (this header included),
//!                               count = number of top-level attributes
//! entry = [name_len, name bytes..., kind, dtype, len, values...]
//! ```
//!
//! in delivery order (XLA sorts by name, byte-wise), where for each kind
//! (`kind` is the `XLA_FFI_AttrType` value):
//!
//! | kind | dtype | len | values |
//! |---|---|---|---|
//! | 3 scalar | `XLA_FFI_DataType` (PRED 1, S32 4, S64 5, F32 11, F64 12, ...) | 1 | the value |
//! | 1 array | element dtype | element count | the elements |
//! | 4 string | 0 | byte count | the bytes |
//! | 2 dictionary | 0 | entry count | its entries, recursively, in the same form |
//!
//! Every value is converted to f64 (PRED as 0/1; 64-bit integers beyond
//! 2^53 are rounded). `N` must be at least `M`; `out[M..]` is zero. If `N`
//! is too small the call fails with
//! ``INVALID_ARGUMENT: output has N elements, the attributes need M``.
//!
//! Python reference for the expected vector:
//!
//! ```python
//! def encode(attrs):  # attrs: dict name -> value as given to ffi_call
//!     def entry(name, v):
//!         b = list(name.encode())
//!         out = [len(b), *b]
//!         if isinstance(v, dict):
//!             out += [2, 0, len(v)]
//!             for k in sorted(v, key=lambda k: k.encode()):
//!                 out += entry(k, v[k])
//!         elif isinstance(v, str):
//!             s = list(v.encode()); out += [4, 0, len(s), *s]
//!         elif isinstance(v, np.ndarray):
//!             out += [1, DTYPE[v.dtype], v.size, *v.ravel().tolist()]
//!         else:  # numpy scalar / bool
//!             out += [3, DTYPE[np.asarray(v).dtype], 1, float(v)]
//!         return out
//!     body = [len(attrs)]
//!     for k in sorted(attrs, key=lambda k: k.encode()):
//!         body += entry(k, attrs[k])
//!     return [len(body) + 1, *body]
//! ```
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::vec::Vec;

use cyxla_guest_sdk::abi::attr_type;
use cyxla_guest_sdk::{Attr, Attrs, CallFrame, Error, Result, target};

target!("echo_attrs", echo_attrs, echo_attrs_handler);

/// Deepest dictionary nesting echoed.
const MAX_DEPTH: usize = 32;

fn echo_attrs_handler(frame: &CallFrame<'_>) -> Result<()> {
    if frame.num_rets() != 1 {
        return Err(Error::invalid_argument(alloc::format!(
            "expected 1 result, got {}",
            frame.num_rets()
        )));
    }
    let mut values = alloc::vec![0.0, frame.attrs().len() as f64];
    encode(frame.attrs(), &mut values, 0)?;
    values[0] = values.len() as f64;
    let mut out = frame.ret::<f64>(0)?;
    if out.rank() != 1 {
        return Err(Error::invalid_argument(alloc::format!(
            "output must be f64[N], got f64{:?}",
            out.dims()
        )));
    }
    if out.len() < values.len() {
        return Err(Error::invalid_argument(alloc::format!(
            "output has {} elements, the attributes need {}",
            out.len(),
            values.len()
        )));
    }
    let (head, tail) = out.split_at_mut(values.len());
    head.copy_from_slice(&values);
    tail.fill(0.0);
    Ok(())
}

fn encode(attrs: Attrs<'_>, out: &mut Vec<f64>, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::invalid_argument(alloc::format!(
            "dictionaries nested deeper than {MAX_DEPTH}"
        )));
    }
    for entry in attrs.iter() {
        let (name, value) = entry?;
        out.push(name.len() as f64);
        out.extend(name.iter().map(|&b| f64::from(b)));
        match value {
            Attr::Scalar(s) => {
                out.extend([
                    f64::from(attr_type::SCALAR),
                    f64::from(s.dtype().to_raw()),
                    1.0,
                    s.to_f64(),
                ]);
            }
            Attr::Array(a) => {
                out.extend([
                    f64::from(attr_type::ARRAY),
                    f64::from(a.dtype().to_raw()),
                    a.len() as f64,
                ]);
                for i in 0..a.len() {
                    let v = a.get(i).ok_or_else(|| {
                        Error::invalid_argument(alloc::format!("unsupported {} array", a.dtype()))
                    })?;
                    out.push(v.to_f64());
                }
            }
            Attr::String(bytes) => {
                out.extend([f64::from(attr_type::STRING), 0.0, bytes.len() as f64]);
                out.extend(bytes.iter().map(|&b| f64::from(b)));
            }
            Attr::Dictionary(d) => {
                out.extend([f64::from(attr_type::DICTIONARY), 0.0, d.len() as f64]);
                encode(d, out, depth + 1)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cyxla_guest_sdk::DataType;
    use cyxla_guest_sdk::testing::{FrameBuilder, TestAttr};

    #[test]
    fn encodes_every_kind_in_sorted_order() {
        let mut call = FrameBuilder::new()
            .attr("b", 2.5f32)
            .attr("a", TestAttr::array(&[1i64, -2]))
            .attr("Z", "hé")
            .attr(
                "d",
                TestAttr::dict([("y", TestAttr::from(true)), ("x", TestAttr::from(7i32))]),
            )
            .ret(DataType::F64, &[64])
            .build();
        call.call(echo_attrs_handler).unwrap();
        let got = call.ret::<f64>(0);
        let body: Vec<f64> = [
            vec![4.0],
            // "Z": string "hé" (3 bytes)
            vec![1.0, 90.0, 4.0, 0.0, 3.0, 104.0, 195.0, 169.0],
            // "a": s64 array [1, -2]
            vec![1.0, 97.0, 1.0, 5.0, 2.0, 1.0, -2.0],
            // "b": f32 scalar 2.5
            vec![1.0, 98.0, 3.0, 11.0, 1.0, 2.5],
            // "d": dict {x: s32 7, y: pred true}
            vec![1.0, 100.0, 2.0, 0.0, 2.0],
            vec![1.0, 120.0, 3.0, 4.0, 1.0, 7.0],
            vec![1.0, 121.0, 3.0, 1.0, 1.0, 1.0],
        ]
        .concat();
        let m = body.len() + 1;
        assert_eq!(got[0], m as f64);
        assert_eq!(&got[1..m], &body[..]);
        assert!(got[m..].iter().all(|&v| v == 0.0));
    }

    #[test]
    fn too_small_output_says_what_is_needed() {
        let mut call = FrameBuilder::new()
            .attr("a", 1i64)
            .ret(DataType::F64, &[3])
            .build();
        let e = call.call(echo_attrs_handler).unwrap_err();
        assert_eq!(e.message, "output has 3 elements, the attributes need 8");
        let mut call = FrameBuilder::new().ret(DataType::F64, &[2]).build();
        call.call(echo_attrs_handler).unwrap();
        assert_eq!(call.ret::<f64>(0), [2.0, 0.0]);
    }
}
