// A target name outside [A-Za-z0-9_.$-].
// expect: CYXLA_TARGET: the target name must be 1 to 255 bytes of [A-Za-z0-9_.$-]
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error NoopImpl() { return ffi::Error::Success(); }

XLA_FFI_DEFINE_HANDLER_SYMBOL(Noop, NoopImpl, ffi::Ffi::Bind());
CYXLA_TARGET_EXPORT("my target", noop_cpp, Noop);
