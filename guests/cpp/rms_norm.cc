// RMS normalization, forward and backward, as in JAX's FFI tutorial: a C++
// handler source written against XLA's `xla/ffi/api/ffi.h`, plus one
// CYXLA_TARGET line per target. The same file builds
//   * as a cyxla guest:  guests/cpp/build.sh  (-> guests/out/rms_norm_cpp.wasm)
//   * natively against jaxlib's headers, for `cyxla-host run --native`:
//       clang++-19 -std=c++17 -O3 -ffp-contract=off -fPIC -shared \
//         -I .venv/lib/python3.11/site-packages/jaxlib/include \
//         -idirafter guest-sdk/include -include cyxla/target.h \
//         guests/cpp/rms_norm.cc -o librms_norm_cpp.so
//
// Targets (all leading axes of x are batch axes, the last one is normalized):
//   rms_norm_cpp      eps: f32;  x: f32[..., n]  -> y: f32[..., n]
//   rms_norm_cpp_fwd  eps: f32;  x: f32[..., n]  -> y: f32[..., n], res: f32[...]
//   rms_norm_cpp_bwd  res: f32[...], x: f32[..., n], ct_y: f32[..., n] -> ct_x
// A rank-0 x is INVALID_ARGUMENT "RmsNorm input must be an array".
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <utility>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// y = x / sqrt(mean(x^2) + eps) over `size` elements; returns 1 / rms.
float RmsNormRow(float eps, int64_t size, const float* x, float* y) {
  float sum_sq = 0.0f;
  for (int64_t i = 0; i < size; ++i) {
    sum_sq += x[i] * x[i];
  }
  float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(size) + eps);
  for (int64_t i = 0; i < size; ++i) {
    y[i] = x[i] * inv_rms;
  }
  return inv_rms;
}

// The cotangent of x for one row, given res = 1 / rms of that row.
void RmsNormRowBwd(int64_t size, float res, const float* x, const float* ct_y,
                   float* ct_x) {
  float dot = 0.0f;
  for (int64_t i = 0; i < size; ++i) {
    dot += x[i] * ct_y[i];
  }
  float factor = dot * res * res * res / static_cast<float>(size);
  for (int64_t i = 0; i < size; ++i) {
    ct_x[i] = res * ct_y[i] - factor * x[i];
  }
}

// (total element count, length of the last axis); (0, 0) for rank 0.
template <ffi::DataType T>
std::pair<int64_t, int64_t> RowsOf(const ffi::Buffer<T>& buffer) {
  auto dims = buffer.dimensions();
  if (dims.size() == 0) {
    return std::make_pair(0, 0);
  }
  return std::make_pair(static_cast<int64_t>(buffer.element_count()), dims.back());
}

ffi::Error RmsNormImpl(float eps, ffi::Buffer<ffi::F32> x,
                       ffi::ResultBuffer<ffi::F32> y) {
  auto [total, last] = RowsOf(x);
  if (last == 0) {
    return ffi::Error(ffi::ErrorCode::kInvalidArgument,
                      "RmsNorm input must be an array");
  }
  for (int64_t n = 0; n < total; n += last) {
    RmsNormRow(eps, last, &(x.typed_data()[n]), &(y->typed_data()[n]));
  }
  return ffi::Error::Success();
}

ffi::Error RmsNormFwdImpl(float eps, ffi::Buffer<ffi::F32> x,
                          ffi::ResultBuffer<ffi::F32> y,
                          ffi::ResultBuffer<ffi::F32> res) {
  auto [total, last] = RowsOf(x);
  if (last == 0) {
    return ffi::Error::InvalidArgument("RmsNormFwd input must be an array");
  }
  for (int64_t n = 0, row = 0; n < total; n += last, ++row) {
    res->typed_data()[row] =
        RmsNormRow(eps, last, &(x.typed_data()[n]), &(y->typed_data()[n]));
  }
  return ffi::Error::Success();
}

ffi::Error RmsNormBwdImpl(ffi::Buffer<ffi::F32> res, ffi::Buffer<ffi::F32> x,
                          ffi::Buffer<ffi::F32> ct_y,
                          ffi::ResultBuffer<ffi::F32> ct_x) {
  auto [total, last] = RowsOf(x);
  if (last == 0) {
    return ffi::Error::InvalidArgument("RmsNormBwd inputs must be arrays");
  }
  for (int64_t n = 0, row = 0; n < total; n += last, ++row) {
    RmsNormRowBwd(last, res.typed_data()[row], &(x.typed_data()[n]),
                  &(ct_y.typed_data()[n]), &(ct_x->typed_data()[n]));
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNorm, RmsNormImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()  // x
                                  .Ret<ffi::Buffer<ffi::F32>>()  // y
);
CYXLA_TARGET(rms_norm_cpp, RmsNorm);

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNormFwd, RmsNormFwdImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()  // x
                                  .Ret<ffi::Buffer<ffi::F32>>()  // y
                                  .Ret<ffi::Buffer<ffi::F32>>()  // res
);
CYXLA_TARGET(rms_norm_cpp_fwd, RmsNormFwd);

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNormBwd, RmsNormBwdImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // res
                                  .Arg<ffi::Buffer<ffi::F32>>()  // x
                                  .Arg<ffi::Buffer<ffi::F32>>()  // ct_y
                                  .Ret<ffi::Buffer<ffi::F32>>()  // ct_x
);
CYXLA_TARGET(rms_norm_cpp_bwd, RmsNormBwd);
