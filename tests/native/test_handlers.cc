// Native XLA FFI handlers used by the cyxla integration tests and benches.
//
// Written against jaxlib's real XLA FFI headers (`xla/ffi/api/ffi.h`, API
// 0.3) exactly as a kernel author would write them for JAX (see JAX's FFI
// tutorial), and exported with C linkage by XLA_FFI_DEFINE_HANDLER_SYMBOL.
// tests/build.rs compiles this file into libcyxla_test_handlers.so.
//
// The numpy oracles in tests/gen_programs.py implement the same formulas;
// keep the two in sync (the formulas are repeated there).
//
// Note: like every handler built from these headers, each one answers the
// metadata probe with the header version (0.3), which a 0.2 runtime (the
// P81 plugin) rejects; hosts that forward the probe must clamp the answer.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// Checks that the result dimensions `od` equal the argument dimensions `xd`.
ffi::Error SameShape(std::string_view target, ffi::Span<const int64_t> xd,
                     ffi::Span<const int64_t> od) {
  bool same = xd.size() == od.size();
  for (size_t i = 0; same && i < xd.size(); ++i) same = xd[i] == od[i];
  if (!same) {
    return ffi::Error(ffi::ErrorCode::kInvalidArgument,
                      std::string(target) +
                          ": result shape differs from the argument's shape");
  }
  return ffi::Error::Success();
}

// Names the dictionary entry of `cyxla_test_attrs` that failed to decode.
ffi::Error DictError(std::string_view key, const ffi::Error& err) {
  return ffi::Error(ffi::ErrorCode::kInvalidArgument,
                    "cyxla_test_attrs: attribute dct." + std::string(key) +
                        ": " + err.message());
}

// cyxla_test_attrs: out[i] = x[i] * f32 + float(c), where (in double, in this
// order of summation)
//   c = f64 + 2*i32 + 3*i64 + 5*flag + 7*len(name) + sum_k (k+1)*arr[k]
//       + 11*dct.Bias + 13*dct.count + 17*len(dct.label) + 19*dct.weight
// `x[i] * f32` is rounded to f32 before the addition (no contraction).
// The distinct weights make a swapped or misdecoded attribute visible.
ffi::Error AttrsImpl(ffi::Buffer<ffi::F32> x,
                     ffi::ResultBuffer<ffi::F32> out, float f32, double f64,
                     int32_t i32, int64_t i64, bool flag,
                     std::string_view name, ffi::Span<const int64_t> arr,
                     ffi::Dictionary dct) {
  if (ffi::Error err =
          SameShape("cyxla_test_attrs", x.dimensions(), out->dimensions());
      err.failure()) {
    return err;
  }
  ffi::ErrorOr<float> bias = dct.get<float>("Bias");
  if (bias.has_error()) return DictError("Bias", bias.error());
  ffi::ErrorOr<int32_t> count = dct.get<int32_t>("count");
  if (count.has_error()) return DictError("count", count.error());
  ffi::ErrorOr<std::string_view> label = dct.get<std::string_view>("label");
  if (label.has_error()) return DictError("label", label.error());
  ffi::ErrorOr<double> weight = dct.get<double>("weight");
  if (weight.has_error()) return DictError("weight", weight.error());
  if (dct.size() != 4) {
    return ffi::Error(ffi::ErrorCode::kInvalidArgument,
                      "cyxla_test_attrs: dictionary `dct` must have exactly "
                      "4 entries (Bias, count, label, weight), got " +
                          std::to_string(dct.size()));
  }

  double c = f64;
  c += 2.0 * static_cast<double>(i32);
  c += 3.0 * static_cast<double>(i64);
  c += 5.0 * (flag ? 1.0 : 0.0);
  c += 7.0 * static_cast<double>(name.size());
  for (size_t k = 0; k < arr.size(); ++k) {
    c += static_cast<double>(k + 1) * static_cast<double>(arr[k]);
  }
  c += 11.0 * static_cast<double>(*bias);
  c += 13.0 * static_cast<double>(*count);
  c += 17.0 * static_cast<double>(label->size());
  c += 19.0 * *weight;
  const float cf = static_cast<float>(c);

  const float* in = x.typed_data();
  float* res = out->typed_data();
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; ++i) {
    const float scaled = in[i] * f32;
    res[i] = scaled + cf;
  }
  return ffi::Error::Success();
}

// cyxla_test_fail: always fails with FAILED_PRECONDITION (code 9) and the
// message "cyxla_test_fail: deliberate failure for <reason>".
ffi::Error FailImpl(ffi::Buffer<ffi::F32> /*x*/,
                    ffi::ResultBuffer<ffi::F32> /*out*/,
                    std::string_view reason) {
  return ffi::Error(
      ffi::ErrorCode::kFailedPrecondition,
      "cyxla_test_fail: deliberate failure for " + std::string(reason));
}

// cyxla_test_add_one: out = x + 1, any f32 shape.
ffi::Error AddOneImpl(ffi::Buffer<ffi::F32> x,
                      ffi::ResultBuffer<ffi::F32> out) {
  if (ffi::Error err =
          SameShape("cyxla_test_add_one", x.dimensions(), out->dimensions());
      err.failure()) {
    return err;
  }
  const float* in = x.typed_data();
  float* res = out->typed_data();
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; ++i) res[i] = in[i] + 1.0f;
  return ffi::Error::Success();
}

// cyxla_test_copy16: out = x for exactly 16 f32 elements (bench kernel).
ffi::Error Copy16Impl(ffi::Buffer<ffi::F32> x,
                      ffi::ResultBuffer<ffi::F32> out) {
  if (x.element_count() != 16 || out->element_count() != 16) {
    return ffi::Error(ffi::ErrorCode::kInvalidArgument,
                      "cyxla_test_copy16: expected 16 f32 elements in and "
                      "out, got " +
                          std::to_string(x.element_count()) + " in and " +
                          std::to_string(out->element_count()) + " out");
  }
  const float* in = x.typed_data();
  float* res = out->typed_data();
  for (size_t i = 0; i < 16; ++i) res[i] = in[i];
  return ffi::Error::Success();
}

// cyxla_test_device: out = x + device_ordinal, any f32 shape.
ffi::Error DeviceImpl(int32_t device_ordinal, ffi::Buffer<ffi::F32> x,
                      ffi::ResultBuffer<ffi::F32> out) {
  if (ffi::Error err =
          SameShape("cyxla_test_device", x.dimensions(), out->dimensions());
      err.failure()) {
    return err;
  }
  const float d = static_cast<float>(device_ordinal);
  const float* in = x.typed_data();
  float* res = out->typed_data();
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; ++i) res[i] = in[i] + d;
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(cyxla_test_attrs, AttrsImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("f32")
                                  .Attr<double>("f64")
                                  .Attr<int32_t>("i32")
                                  .Attr<int64_t>("i64")
                                  .Attr<bool>("flag")
                                  .Attr<std::string_view>("name")
                                  .Attr<ffi::Span<const int64_t>>("arr")
                                  .Attr<ffi::Dictionary>("dct"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(cyxla_test_fail, FailImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<std::string_view>("reason"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(cyxla_test_add_one, AddOneImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(cyxla_test_copy16, Copy16Impl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(cyxla_test_device, DeviceImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
