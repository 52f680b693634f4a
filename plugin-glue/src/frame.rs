//! Checked views of an `XLA_FFI_CallFrame` (being written).

use std::marker::PhantomData;

/// A view of one EXECUTE call frame.
pub struct CallFrame<'a> {
    _frame: PhantomData<&'a ()>,
}
