// An asynchronous handler (returns xla::ffi::Future): fails to compile for a
// cyxla guest.
// expect: xla::ffi::Future is not supported in the cyxla sandbox
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Future AsyncImpl(ffi::Buffer<ffi::F32> x) {
  ffi::Promise promise;
  ffi::Future future(promise);
  promise.SetAvailable();
  return future;
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(Async, AsyncImpl, ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>());
CYXLA_TARGET(async_cpp, Async);
