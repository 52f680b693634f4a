// Static registration with an XLA runtime instead of CYXLA_TARGET.
// expect: XLA_FFI_REGISTER_HANDLER is not supported in the cyxla sandbox
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error NoopImpl() { return ffi::Error::Success(); }

XLA_FFI_DEFINE_HANDLER_SYMBOL(Noop, NoopImpl, ffi::Ffi::Bind());
XLA_FFI_REGISTER_HANDLER(ffi::GetXlaFfiApi(), "noop_cpp", "Host", Noop);
