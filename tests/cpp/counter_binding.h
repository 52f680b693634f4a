// The binding that counter_cpp (statics.cc) and relock_cpp (relock.cc)
// share, so that the test programs can call either: the attribute `index`
// (s64), the operand x: f32[n], the results y: f32[n] and count: s32[].
#ifndef CYXLA_TESTS_CPP_COUNTER_BINDING_H_
#define CYXLA_TESTS_CPP_COUNTER_BINDING_H_

#include <cstdint>

#include "xla/ffi/api/ffi.h"

inline auto CounterBinding() {
  namespace ffi = xla::ffi;
  return ffi::Ffi::Bind()
      .Attr<int64_t>("index")
      .Arg<ffi::Buffer<ffi::F32>>()
      .Ret<ffi::Buffer<ffi::F32>>()
      .Ret<ffi::BufferR0<ffi::S32>>();
}

#endif  // CYXLA_TESTS_CPP_COUNTER_BINDING_H_
