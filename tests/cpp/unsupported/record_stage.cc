// A handler for the RECORD stage of XLA FFI 0.5 (GPU command buffers).
// expect: the RECORD execution stage (xla::ffi::Ffi::BindRecord) is not supported in the cyxla sandbox
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error RecordImpl(ffi::Buffer<ffi::F32> x) { return ffi::Error::Success(); }

XLA_FFI_DEFINE_HANDLER_SYMBOL(Record, RecordImpl,
                              ffi::Ffi::BindRecord().Arg<ffi::Buffer<ffi::F32>>());
CYXLA_TARGET(record_cpp, Record);
