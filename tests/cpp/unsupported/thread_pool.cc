// A handler binding the intra-op thread pool.
// expect: xla::ffi::ThreadPool is not supported in the cyxla sandbox
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error PoolImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x) {
  pool.Schedule([] {});
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(Pool, PoolImpl,
                              ffi::Ffi::Bind().Ctx<ffi::ThreadPool>().Arg<ffi::Buffer<ffi::F32>>());
CYXLA_TARGET(pool_cpp, Pool);
