// An attribute carrying a host pointer.
// expect: xla::ffi::Pointer<T> attributes are not supported in the cyxla sandbox
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error PointerImpl(int* p) { return ffi::Error::Success(); }

XLA_FFI_DEFINE_HANDLER_SYMBOL(Pointer, PointerImpl,
                              ffi::Ffi::Bind().Attr<ffi::Pointer<int>>("p"));
CYXLA_TARGET(pointer_cpp, Pointer);
