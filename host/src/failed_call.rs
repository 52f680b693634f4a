//! Failing calls, captured whole so that `cyxla-host replay` can run them
//! again: the target, the guest, the operands, attributes, result shapes and
//! the error.
//!
//! Recording is off until a sink is set ([`record_failures`]); a call that
//! succeeds never looks at it, and a failing call reads one pointer to find
//! it unset. The sink (the application's) decides where records go and
//! bounds them: records hold user data.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use plugin_glue::{DType, HandlerError};

use crate::call::{HostAttr, HostBuffer};
use crate::copy::Copier;
use crate::layout::{AttrSource, AttrValue, CallView};

/// A call that failed, with everything needed to run it again.
#[derive(Clone, Debug)]
pub struct FailedCall {
    /// The target called.
    pub target: String,
    /// The guest module that served it.
    pub guest: PathBuf,
    /// That module's sha256 (hex).
    pub guest_sha256: String,
    /// The operands, with their bytes.
    pub operands: Vec<HostBuffer>,
    /// The attributes, in the frame's (sorted) order.
    pub attrs: Vec<(String, HostAttr)>,
    /// Each result's element type and dimensions.
    pub results: Vec<(DType, Vec<i64>)>,
    /// The guest's memory limit, in bytes.
    pub memory_bytes: u64,
    /// The call's deadline.
    pub call_timeout: Duration,
    /// The error the call returned (its message without the
    /// `target `t` (guest g): ` prefix).
    pub error: HandlerError,
}

/// Where failing calls go.
pub type Sink = Arc<dyn Fn(&FailedCall) + Send + Sync>;

static SINK: RwLock<Option<Sink>> = RwLock::new(None);

/// Sends every failing guest call of this process to `sink` from now on;
/// `None` stops recording.
pub fn record_failures(sink: Option<Sink>) {
    *SINK
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = sink;
}

/// The sink, if recording is on.
pub(crate) fn sink() -> Option<Sink> {
    SINK.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// What a record says of the call itself.
pub(crate) struct Captured {
    pub(crate) operands: Vec<HostBuffer>,
    pub(crate) attrs: Vec<(String, HostAttr)>,
    pub(crate) results: Vec<(DType, Vec<i64>)>,
}

/// Reads [`Captured`] from the call. `None` if an operand or attribute
/// cannot be read (the failed call checked the frame, so only a malformed
/// one does this; the call's own error stands either way).
pub(crate) fn capture<C: CallView>(call: &C) -> Option<Captured> {
    let mut operands = Vec::with_capacity(call.num_args());
    for i in 0..call.num_args() {
        let desc = call.arg(i).ok()?;
        let dtype = known(desc.dtype)?;
        let mut bytes = vec![0u8; desc.byte_len];
        call.read_arg(i, None, &mut bytes, Copier::new(1)).ok()?;
        operands.push(HostBuffer::new(dtype, desc.dims, bytes));
    }
    let mut results = Vec::with_capacity(call.num_rets());
    for i in 0..call.num_rets() {
        let desc = call.ret(i).ok()?;
        results.push((known(desc.dtype)?, desc.dims.to_vec()));
    }
    let attrs = attrs_of(&call.attrs())?;
    Some(Captured {
        operands,
        attrs,
        results,
    })
}

/// `dtype`, unless it is INVALID (which a record cannot hold).
fn known(dtype: DType) -> Option<DType> {
    (dtype != DType::Invalid).then_some(dtype)
}

fn attrs_of<A: AttrSource>(source: &A) -> Option<Vec<(String, HostAttr)>> {
    let mut out = Vec::with_capacity(source.count());
    let mut bad = false;
    let visited = source.visit(|name, value| {
        let value = match value {
            AttrValue::Scalar(scalar) => HostAttr::Scalar(scalar),
            AttrValue::Array(a) => match known(a.dtype()) {
                Some(d) => HostAttr::Array(d, a.len(), a.bytes().to_vec()),
                None => {
                    bad = true;
                    return Ok(());
                }
            },
            AttrValue::String(s) => HostAttr::String(s.to_vec()),
            AttrValue::Dictionary(d) => match attrs_of(&d) {
                Some(entries) => HostAttr::Dictionary(entries),
                None => {
                    bad = true;
                    return Ok(());
                }
            },
        };
        out.push((String::from_utf8_lossy(name).into_owned(), value));
        Ok(())
    });
    (visited.is_ok() && !bad).then_some(out)
}
