// A handler that locks a std::mutex it already holds: natively a deadlock
// (never run natively by the tests); in a guest, cyxla/mutex.h's
// single-threaded std::mutex traps with a message the host reports.
// The binding of counter_cpp (tests/cpp/statics.cc; counter_binding.h), so
// that test programs can call either; a module of its own, so that its trap
// discards none of counter_cpp's instances.
#include <cstdint>
#include <mutex>

#include "counter_binding.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

std::mutex relock_mutex;

ffi::Error RelockImpl(int64_t index, ffi::Buffer<ffi::F32> x,
                      ffi::ResultBuffer<ffi::F32> y,
                      ffi::Result<ffi::BufferR0<ffi::S32>> count) {
  (void)index;
  (void)x;
  (void)y;
  std::lock_guard<std::mutex> outer(relock_mutex);
  if (relock_mutex.try_lock()) {
    return ffi::Error::Internal("try_lock succeeded on a locked mutex");
  }
  std::lock_guard<std::mutex> inner(relock_mutex);  // traps in the sandbox
  count->typed_data()[0] = -1;
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(Relock, RelockImpl, CounterBinding());

CYXLA_TARGET(relock_cpp, Relock);
