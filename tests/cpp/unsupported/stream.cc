// A GPU-style handler binding a platform stream.
// expect: xla::ffi::PlatformStream is not supported in the cyxla sandbox
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

struct FakeStream;

static ffi::Error StreamImpl(FakeStream* stream, ffi::Buffer<ffi::F32> x) {
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    Stream, StreamImpl,
    ffi::Ffi::Bind().Ctx<ffi::PlatformStream<FakeStream*>>().Arg<ffi::Buffer<ffi::F32>>());
CYXLA_TARGET(stream_cpp, Stream);
