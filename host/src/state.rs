//! The state of one guest instance (the `T` of its `Store<T>`): error
//! handles, registered types and states, the limiter, the WASI context and
//! its output pipes, and what the host functions need to know about the
//! native call in progress.

use std::fmt;

use plugin_glue::frame::CallContext;
use plugin_glue::{ErrorCode, HandlerError};
use std::sync::atomic::{AtomicU64, Ordering};

use wasmtime::{Memory, ResourceLimiter, TypedFunc};
use wasmtime_wasi::p1::WasiP1Ctx;

use crate::limits::Limits;
use crate::wasi::{self, LogPipe};

/// A guest did something no correct guest does (a pointer outside its
/// memory, an unknown error handle to a `void` function, ...). Host functions
/// return it as a trap; the call fails naming it and the instance is
/// discarded.
#[derive(Debug)]
pub(crate) struct GuestFault {
    /// The C API function (or host step) that found the fault.
    pub(crate) function: &'static str,
    /// What was wrong.
    pub(crate) message: String,
}

impl fmt::Display for GuestFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.function, self.message)
    }
}

impl std::error::Error for GuestFault {}

pub(crate) fn fault(function: &'static str, message: String) -> wasmtime::Error {
    wasmtime::Error::new(GuestFault { function, message })
}

/// An error a guest created with `XLA_FFI_Error_Create`.
#[derive(Debug)]
pub(crate) struct GuestError {
    /// The raw `XLA_FFI_Error_Code` the guest passed.
    pub(crate) code: i32,
    /// The message, lossily decoded and bounded.
    pub(crate) message: String,
    /// Guest address of the copy `XLA_FFI_Error_GetMessage` made, if any.
    pub(crate) guest_copy: Option<u32>,
}

impl GuestError {
    /// The error XLA sees: the guest's code (0 and unknown codes are mapped
    /// as XLA maps them) and message, after `prefix`.
    pub(crate) fn to_handler_error(&self, prefix: &str) -> HandlerError {
        if self.code == 0 {
            return HandlerError::internal(format!(
                "{prefix}returned an error with code OK (0): {}",
                self.message
            ));
        }
        HandlerError::new(
            ErrorCode::from_c(self.code),
            format!("{prefix}{}", self.message),
        )
    }
}

/// Error handles of one instance: opaque nonzero `i32`s (slot index + 1).
#[derive(Debug, Default)]
pub(crate) struct ErrorTable {
    slots: Vec<Option<GuestError>>,
    free: Vec<usize>,
    capacity: usize,
}

impl ErrorTable {
    fn new(capacity: usize) -> ErrorTable {
        ErrorTable {
            slots: Vec::new(),
            free: Vec::new(),
            capacity,
        }
    }

    pub(crate) fn insert(
        &mut self,
        error: GuestError,
        function: &'static str,
    ) -> wasmtime::Result<i32> {
        let index = match self.free.pop() {
            Some(index) => index,
            None if self.slots.len() < self.capacity => {
                self.slots.push(None);
                self.slots.len() - 1
            }
            None => {
                return Err(fault(
                    function,
                    format!(
                        "the guest holds {} error handles, the most one instance may hold",
                        self.capacity
                    ),
                ));
            }
        };
        self.slots[index] = Some(error);
        i32::try_from(index + 1).map_err(|_| fault(function, "too many error handles".into()))
    }

    fn index(&self, handle: i32) -> Option<usize> {
        let index = usize::try_from(handle).ok()?.checked_sub(1)?;
        matches!(self.slots.get(index), Some(Some(_))).then_some(index)
    }

    pub(crate) fn get_mut(&mut self, handle: i32) -> Option<&mut GuestError> {
        let index = self.index(handle)?;
        self.slots[index].as_mut()
    }

    /// Removes and returns the error behind `handle`, if the host issued it
    /// and it is still live.
    pub(crate) fn take(&mut self, handle: i32) -> Option<GuestError> {
        let index = self.index(handle)?;
        self.free.push(index);
        self.slots[index].take()
    }

    /// Forgets every error (at the end of each call: handles do not outlive
    /// the call that made them).
    pub(crate) fn clear(&mut self) {
        if self.slots.iter().all(Option::is_none) {
            return;
        }
        self.slots.clear();
        self.free.clear();
    }
}

/// Caps linear memory and tables; remembers a refused growth so that the
/// failure it causes later can name the limit.
pub(crate) struct GuestLimiter {
    memory_bytes: usize,
    /// The process-wide budget of guest linear memory.
    budget: u64,
    /// Bytes of linear memory this instance holds, counted in [`RESERVED`].
    reserved: u64,
    /// The budget and what all instances held, when a growth was refused
    /// for the budget.
    pub(crate) refused_budget: Option<(u64, u64)>,
    table_elements: usize,
    /// Size in bytes of the last refused memory growth.
    pub(crate) refused_memory: Option<usize>,
    /// Size in elements of the last refused table growth.
    pub(crate) refused_table: Option<usize>,
}

impl Drop for GuestLimiter {
    /// The instance is gone: its memory leaves the budget.
    fn drop(&mut self) {
        RESERVED.fetch_sub(self.reserved, Ordering::Relaxed);
    }
}

/// Linear memory held by every guest instance of the process.
static RESERVED: AtomicU64 = AtomicU64::new(0);

/// Whether a growth to `desired` stays within `limit`; if not, `desired` is
/// kept in `refused` for the failure it causes to name.
fn within(desired: usize, limit: usize, refused: &mut Option<usize>) -> bool {
    if desired > limit {
        *refused = Some(desired);
        return false;
    }
    true
}

impl ResourceLimiter for GuestLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if !within(desired, self.memory_bytes, &mut self.refused_memory) {
            return Ok(false);
        }
        let desired = desired as u64;
        let extra = desired.saturating_sub(self.reserved);
        let mut held = RESERVED.load(Ordering::Relaxed);
        loop {
            if held.saturating_add(extra) > self.budget {
                self.refused_memory = Some(desired as usize);
                self.refused_budget = Some((self.budget, held));
                return Ok(false);
            }
            match RESERVED.compare_exchange_weak(
                held,
                held + extra,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => held = now,
            }
        }
        self.reserved = self.reserved.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(within(
            desired,
            self.table_elements,
            &mut self.refused_table,
        ))
    }

    fn instances(&self) -> usize {
        1
    }

    fn memories(&self) -> usize {
        1
    }

    fn tables(&self) -> usize {
        8
    }
}

/// What the host functions need to know about the native call in progress.
///
/// XLA is asked for the device ordinal and run id only when the guest asks
/// (most guests never do), not on every call.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CallInfo {
    /// A host-owned call (no XLA): device 0, run 0.
    Host,
    /// XLA's call in progress.
    Xla(CallContext),
}

impl CallInfo {
    /// `XLA_FFI_DeviceOrdinal_Get` on the native call (0 for a host call).
    pub(crate) fn device_ordinal(&self) -> Result<i32, HandlerError> {
        match self {
            CallInfo::Host => Ok(0),
            // SAFETY: a `CallInfo` lives in `HostState::call` only while its
            // call runs: `Instance::call` stores it before guest code runs
            // and clears it before returning to XLA.
            CallInfo::Xla(context) => unsafe { context.device_ordinal() },
        }
    }

    /// `XLA_FFI_RunId_Get` on the native call (0 for a host call).
    pub(crate) fn run_id(&self) -> Result<i64, HandlerError> {
        match self {
            CallInfo::Host => Ok(0),
            // SAFETY: as for `device_ordinal`.
            CallInfo::Xla(context) => unsafe { context.run_id() },
        }
    }
}

/// The state of one guest instance (the `T` of its `Store<T>`).
pub(crate) struct HostState {
    pub(crate) limiter: GuestLimiter,
    pub(crate) wasi: WasiP1Ctx,
    pub(crate) stdout: LogPipe,
    pub(crate) stderr: LogPipe,
    /// The guest's exported memory, once instantiated.
    pub(crate) memory: Option<Memory>,
    /// The guest's `cyxla_alloc`, once instantiated.
    pub(crate) alloc: Option<TypedFunc<(i32, i32), i32>>,
    pub(crate) errors: ErrorTable,
    /// Registered type names and their ids.
    pub(crate) types: Vec<(Box<str>, i64)>,
    /// `XLA_FFI_State_Set` values by type id.
    pub(crate) states: Vec<(i64, u32)>,
    /// Set while a call runs.
    pub(crate) call: Option<CallInfo>,
    pub(crate) error_message_bytes: usize,
    /// Guest address of the `XLA_FFI_Attrs` that `XLA_FFI_CustomOptions_Get`
    /// answers with, once allocated (through `cyxla_alloc`).
    pub(crate) custom_options: Option<u32>,
}

impl HostState {
    /// Fresh state for a new instance under `limits`.
    pub(crate) fn new(limits: &Limits) -> HostState {
        let stdout = LogPipe::new(limits.log_bytes);
        let stderr = LogPipe::new(limits.log_bytes);
        HostState {
            limiter: GuestLimiter {
                memory_bytes: usize::try_from(limits.memory).unwrap_or(usize::MAX),
                budget: limits.memory_budget,
                reserved: 0,
                refused_budget: None,
                table_elements: limits.table_elements,
                refused_memory: None,
                refused_table: None,
            },
            wasi: wasi::context(&stdout, &stderr),
            stdout,
            stderr,
            memory: None,
            alloc: None,
            errors: ErrorTable::new(limits.error_handles),
            types: Vec::new(),
            states: Vec::new(),
            call: None,
            error_message_bytes: limits.error_message,
            custom_options: None,
        }
    }

    pub(crate) fn error(
        &mut self,
        code: ErrorCode,
        message: String,
        function: &'static str,
    ) -> wasmtime::Result<i32> {
        self.errors.insert(
            GuestError {
                code: code.to_c(),
                message,
                guest_copy: None,
            },
            function,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_handles_are_issued_and_checked() {
        let mut table = ErrorTable::new(2);
        let error = |m: &str| GuestError {
            code: 3,
            message: m.into(),
            guest_copy: None,
        };
        let a = table.insert(error("a"), "t").unwrap();
        let b = table.insert(error("b"), "t").unwrap();
        assert!(a != 0 && b != 0 && a != b);
        assert!(
            table.insert(error("c"), "t").is_err(),
            "capacity is enforced"
        );
        assert_eq!(table.take(a).unwrap().message, "a");
        assert!(table.take(a).is_none(), "a handle is taken once");
        assert!(table.take(0).is_none() && table.take(-1).is_none() && table.take(77).is_none());
        table.clear();
        assert!(table.take(b).is_none());
    }
}
