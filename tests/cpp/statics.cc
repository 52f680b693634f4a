// Statics guarded the way native XLA FFI handlers guard them (JAX's
// examples/ffi counter): std::mutex, std::lock_guard, std::unique_lock,
// std::scoped_lock, std::call_once and std::unordered_map, unchanged. In a
// wasm32 guest <mutex> comes through guest-sdk/include/mutex (libc++ for
// wasm32 has no threads; cyxla/mutex.h provides single-threaded versions).
//
// counter_cpp(x: f32[n], index: s64) -> (y: f32[n], count: s32[]):
// count = how many times this instance has been called with `index`
// (including this call), y = x + count * scale, where scale = 1 comes from
// a table built once with std::call_once. Statics are per instance: a pool
// of several instances counts per instance (set `instances = 1` in the
// guest's limits file for one count per process).
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "counter_binding.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

std::mutex counter_mutex;
std::once_flag table_once;
float scale_table[4];

ffi::Error CounterImpl(int64_t index, ffi::Buffer<ffi::F32> x,
                       ffi::ResultBuffer<ffi::F32> y,
                       ffi::Result<ffi::BufferR0<ffi::S32>> count) {
  if (x.element_count() != y->element_count()) {
    return ffi::Error::InvalidArgument("y must have the shape of x");
  }
  std::call_once(table_once, [] {
    for (int i = 0; i < 4; ++i) scale_table[i] = 1.0f;
  });
  static auto& cache = *new std::unordered_map<int64_t, int32_t>();
  int32_t value = 0;
  {
    std::lock_guard<std::mutex> lock(counter_mutex);
    value = ++cache[index];
  }
  {
    // The other guards compile and behave too (one thread: no waiting).
    std::unique_lock<std::mutex> lock(counter_mutex);
    lock.unlock();
    std::scoped_lock again(counter_mutex);
  }
  count->typed_data()[0] = value;
  const float add = static_cast<float>(value) * scale_table[index & 3];
  for (size_t i = 0; i < x.element_count(); ++i) {
    y->typed_data()[i] = x.typed_data()[i] + add;
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(Counter, CounterImpl, CounterBinding());

CYXLA_TARGET(counter_cpp, Counter);
