//! Turns a checked XLA call frame ([`CallFrame`]) into a [`Call`]: the
//! buffers as (dtype, dims, pointer) and the attributes reduced to the kinds
//! these targets use. Attributes these targets do not know are kept (and
//! ignored by name lookup), so newer jaxlib attributes do no harm.

use crate::call::{AttrValue, Buf, Call};
use plugin_glue::frame::{Attr, CallFrame};
use plugin_glue::handler::HandlerError;

/// The buffers and attributes of `frame`, for target `target`.
///
/// # Errors
///
/// What the frame's accessors report (a malformed buffer or attribute).
pub(crate) fn call_from_frame<'a>(
    target: &'a str,
    frame: &CallFrame<'a>,
) -> Result<Call<'a>, HandlerError> {
    let named = |e: HandlerError| HandlerError::new(e.code, format!("{target}: {}", e.message));
    let buf = |v: plugin_glue::frame::BufferView<'a>| Buf {
        dtype: v.dtype(),
        dims: v.dims(),
        ptr: v.data_ptr(),
    };
    let args = (0..frame.num_args())
        .map(|i| frame.arg(i).map(buf))
        .collect::<Result<Vec<_>, _>>()
        .map_err(named)?;
    let rets = (0..frame.num_rets())
        .map(|i| frame.ret(i).map(buf))
        .collect::<Result<Vec<_>, _>>()
        .map_err(named)?;
    let mut attrs = Vec::with_capacity(frame.attrs().len());
    for entry in frame.attrs().iter() {
        let (name, attr) = entry.map_err(named)?;
        attrs.push((name, attr_value(&attr)));
    }
    Ok(Call {
        target,
        args,
        rets,
        attrs,
    })
}

fn attr_value(attr: &Attr<'_>) -> AttrValue {
    match attr {
        Attr::Scalar(s) => AttrValue::Scalar(*s),
        other => AttrValue::Other(other.kind()),
    }
}
