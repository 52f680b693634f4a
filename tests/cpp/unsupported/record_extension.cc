// A handler recording GPU commands through the record extension of XLA FFI 0.5.
// expect: the XLA FFI record extension (xla/ffi/api/record_api.h) is not supported in the cyxla sandbox
#include "xla/ffi/api/ffi.h"
#include "xla/ffi/api/record_api.h"

namespace ffi = xla::ffi;

using Recorder = ffi::internal::RecordContextBase<ffi::internal::ErrorPolicy>;
struct RecordExtension : ffi::internal::RecordExtensionBase<Recorder> {};

static ffi::Error LaunchImpl(Recorder recorder, ffi::Buffer<ffi::F32> x) {
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    Launch, LaunchImpl,
    ffi::Ffi::Bind().Ctx<ffi::Extension<RecordExtension>>().Arg<ffi::Buffer<ffi::F32>>());
CYXLA_TARGET(launch_cpp, Launch);
