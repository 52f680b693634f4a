// y = x * factor for several element types: a handler that takes
// `ffi::AnyBuffer` and dispatches on its `element_type()`, as the "multiple
// dtypes" advice of JAX's FFI tutorial suggests. Built by guests/cpp/build.sh
// into guests/out/scale_any_cpp.wasm (and natively by the tests).
//
// Target scale_any_cpp:  factor: f64;  x: T[...] -> y: T[...]
//   T = f32, f64: y = x * factor, computed in T (factor rounded to T first)
//   T = s8, s32, s64, u8: y = x * (T)factor (integer wrap-around)
//   T = c64, c128: both parts scaled by factor (rounded to the part type)
//   other T: UNIMPLEMENTED "scale_any_cpp: unsupported dtype <T>"
//   y must have x's dtype and element count, else INVALID_ARGUMENT.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

template <typename T, typename F>
void Scale(const ffi::AnyBuffer& x, ffi::AnyBuffer& y, F factor) {
  const T* in = x.typed_data<T>();
  T* out = y.typed_data<T>();
  const F f = factor;
  for (size_t i = 0; i < x.element_count(); ++i) {
    out[i] = static_cast<T>(in[i] * f);
  }
}

// Unsigned arithmetic so that overflow wraps instead of being undefined.
template <typename T>
void ScaleInt(const ffi::AnyBuffer& x, ffi::AnyBuffer& y, double factor) {
  using U = std::make_unsigned_t<T>;
  const T* in = x.typed_data<T>();
  T* out = y.typed_data<T>();
  const U f = static_cast<U>(static_cast<T>(factor));
  for (size_t i = 0; i < x.element_count(); ++i) {
    out[i] = static_cast<T>(static_cast<U>(in[i]) * f);
  }
}

std::string DtypeName(ffi::DataType dtype) {
  const char* name = nullptr;
  switch (dtype) {
    case ffi::DataType::PRED: name = "pred"; break;
    case ffi::DataType::S16: name = "s16"; break;
    case ffi::DataType::U16: name = "u16"; break;
    case ffi::DataType::U32: name = "u32"; break;
    case ffi::DataType::U64: name = "u64"; break;
    case ffi::DataType::F16: name = "f16"; break;
    case ffi::DataType::BF16: name = "bf16"; break;
    default: break;
  }
  if (name != nullptr) return name;
  return "#" + std::to_string(static_cast<int>(dtype));
}

ffi::Error ScaleAnyImpl(double factor, ffi::AnyBuffer x,
                        ffi::Result<ffi::AnyBuffer> y) {
  if (y->element_type() != x.element_type()) {
    return ffi::Error::InvalidArgument(
        "scale_any_cpp: y must have the dtype of x");
  }
  if (y->element_count() != x.element_count()) {
    return ffi::Error::InvalidArgument(
        "scale_any_cpp: y must have as many elements as x");
  }
  switch (x.element_type()) {
    case ffi::F32:
      Scale<float>(x, *y, static_cast<float>(factor));
      break;
    case ffi::F64:
      Scale<double>(x, *y, factor);
      break;
    case ffi::C64:
      Scale<std::complex<float>>(x, *y, static_cast<float>(factor));
      break;
    case ffi::C128:
      Scale<std::complex<double>>(x, *y, factor);
      break;
    case ffi::S8:
      ScaleInt<int8_t>(x, *y, factor);
      break;
    case ffi::S32:
      ScaleInt<int32_t>(x, *y, factor);
      break;
    case ffi::S64:
      ScaleInt<int64_t>(x, *y, factor);
      break;
    case ffi::U8:
      ScaleInt<uint8_t>(x, *y, factor);
      break;
    default:
      return ffi::Error(ffi::ErrorCode::kUnimplemented,
                        "scale_any_cpp: unsupported dtype " +
                            DtypeName(x.element_type()));
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(ScaleAny, ScaleAnyImpl,
                              ffi::Ffi::Bind()
                                  .Attr<double>("factor")
                                  .Arg<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // y
);
CYXLA_TARGET(scale_any_cpp, ScaleAny);
