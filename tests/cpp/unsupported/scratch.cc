// A handler asking for device scratch memory.
// expect: xla::ffi::ScratchAllocator is not supported in the cyxla sandbox
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error ScratchImpl(ffi::ScratchAllocator scratch, ffi::Buffer<ffi::F32> x) {
  auto memory = scratch.Allocate(64);
  return memory.has_value() ? ffi::Error::Success() : ffi::Error::Internal("no memory");
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    Scratch, ScratchImpl,
    ffi::Ffi::Bind().Ctx<ffi::ScratchAllocator>().Arg<ffi::Buffer<ffi::F32>>());
CYXLA_TARGET(scratch_cpp, Scratch);
