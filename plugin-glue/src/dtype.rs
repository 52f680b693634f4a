//! Element types: XLA's [`DataType`](cyxla_xla_types::DataType) (the table
//! the guest SDK and the host share), named `DType` here. It converts to and
//! from both numberings a plugin uses: `XLA_FFI_DataType` (`from_xla`,
//! `to_xla`) and `PJRT_Buffer_Type` (`from_pjrt`, `to_pjrt`).

pub use cyxla_xla_types::DataType as DType;
