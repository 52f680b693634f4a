// A handler taking the collectives extension of XLA FFI 0.5.
// expect: XLA FFI collectives (xla/ffi/api/collectives_api.h) are not supported in the cyxla sandbox
#include "xla/ffi/api/collectives_api.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

using Communicators = ffi::internal::CommunicatorContextBase<ffi::internal::ErrorPolicy>;
struct Collectives : ffi::internal::CollectivesExtensionBase<Communicators> {};

static ffi::Error AllReduceImpl(Communicators comms, ffi::Buffer<ffi::F32> x) {
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    AllReduce, AllReduceImpl,
    ffi::Ffi::Bind().Ctx<ffi::Extension<Collectives>>().Arg<ffi::Buffer<ffi::F32>>());
CYXLA_TARGET(all_reduce_cpp, AllReduce);
