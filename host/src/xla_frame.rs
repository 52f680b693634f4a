//! XLA's call frame as the layout reads it: the [`CallView`] of a
//! [`CallFrame`] (its operands, results and attributes, copied in and out
//! of guest memory) and the [`AttrSource`] of its attributes. Host-owned
//! calls (`call.rs`) implement the same two traits.

use plugin_glue::HandlerError;
use plugin_glue::frame::{Attr, Attrs, BufferView, CallFrame};

use crate::copy::Copier;
use crate::layout::{AttrSource, AttrValue, BufferDesc, CallView};

impl<'a> CallView for CallFrame<'a> {
    type Attrs<'s>
        = Attrs<'a>
    where
        Self: 's;

    fn num_args(&self) -> usize {
        CallFrame::num_args(self)
    }

    fn num_rets(&self) -> usize {
        CallFrame::num_rets(self)
    }

    fn arg(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
        CallFrame::arg(self, i).map(view_desc)
    }

    fn ret(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
        CallFrame::ret(self, i).map(view_desc)
    }

    fn attrs(&self) -> Attrs<'a> {
        CallFrame::attrs(self)
    }

    #[inline]
    fn read_arg(&self, i: usize, dst: &mut [u8], copier: Copier) -> Result<(), HandlerError> {
        if let Some(view) = with_data(CallFrame::arg(self, i)?, "operand", i, dst.len())? {
            // SAFETY: the frame is XLA's EXECUTE frame of the call in
            // progress, so the operand's data is valid for `byte_len` bytes
            // until the handler returns; no `&mut` to it is alive: result
            // slices are only made in `write_ret`, after every operand was
            // read and dropped.
            copier.copy(dst, unsafe { view.bytes() });
        }
        Ok(())
    }

    #[inline]
    fn write_ret(&self, i: usize, src: &[u8], copier: Copier) -> Result<(), HandlerError> {
        if let Some(view) = with_data(CallFrame::ret(self, i)?, "result", i, src.len())? {
            // SAFETY: result buffers are XLA's, valid and writable for
            // `byte_len` bytes during the call; the slice lives only for
            // this copy, and no operand slice is alive (operands are read
            // before the guest runs), so the exclusive borrow holds even
            // when a result aliases an operand.
            copier.copy_uninit(unsafe { view.uninit_bytes() }, src);
        }
        Ok(())
    }
}

/// What the layout needs of a buffer of XLA's frame.
fn view_desc(view: BufferView<'_>) -> BufferDesc<'_> {
    BufferDesc {
        dtype: view.dtype(),
        dims: view.dims(),
        byte_len: view.byte_len(),
        addr: view.data_ptr().addr(),
    }
}

/// `view` (`what` `i` of the frame) if it has data to copy, checked to hold
/// the `len` bytes the layout planned for it; `None` for tokens and empty
/// arrays, whose data pointer must not be touched.
fn with_data<'a>(
    view: BufferView<'a>,
    what: &str,
    i: usize,
    len: usize,
) -> Result<Option<BufferView<'a>>, HandlerError> {
    let held = view.byte_len();
    if held == 0 {
        return Ok(None);
    }
    if held != len {
        return Err(HandlerError::internal(format!(
            "{what} {i} holds {held} bytes, the layout expected {len}"
        )));
    }
    Ok(Some(view))
}

impl<'a> AttrSource for Attrs<'a> {
    fn count(&self) -> usize {
        self.len()
    }

    fn visit<F>(&self, mut f: F) -> Result<(), HandlerError>
    where
        F: FnMut(&[u8], AttrValue<'_, Self>) -> Result<(), HandlerError>,
    {
        for entry in self.iter() {
            let (name, attr) = entry?;
            match attr {
                Attr::Scalar(scalar) => {
                    let (bytes, len) = scalar.to_le_bytes();
                    f(
                        name,
                        AttrValue::Scalar {
                            dtype: scalar.dtype(),
                            value: &bytes[..len],
                        },
                    )?;
                }
                Attr::Array(array) => f(
                    name,
                    AttrValue::Array {
                        dtype: array.dtype(),
                        len: array.len(),
                        data: array.bytes(),
                    },
                )?,
                Attr::String(bytes) => f(name, AttrValue::String(bytes))?,
                Attr::Dictionary(inner) => f(name, AttrValue::Dictionary(inner))?,
            }
        }
        Ok(())
    }
}
