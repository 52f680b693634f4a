// f32 matrix product with naive i-k-j loops: the compute-bound kernel of
// bench `kernels` (goal P3). The same source builds natively, as a kernel
// author's wheel would (guests/cpp/build.sh --native: clang++ -O3
// -ffp-contract=off, the compiler's default x86-64 target), and as a cyxla
// guest (guests/cpp/build.sh: -O3 -msimd128).
//
// Target bench_matmul_cpp:  a: f32[m, k], b: f32[k, n] -> c: f32[m, n]
//
// Each c[i][j] is summed over p in order, one multiply and one add per
// term (no contraction): both builds compute bit-identical results.
#include <cstdint>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

ffi::Error MatmulImpl(ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                      ffi::ResultBuffer<ffi::F32> c) {
  auto ad = a.dimensions();
  auto bd = b.dimensions();
  auto cd = c->dimensions();
  if (ad.size() != 2 || bd.size() != 2 || cd.size() != 2 || ad[1] != bd[0] ||
      cd[0] != ad[0] || cd[1] != bd[1]) {
    return ffi::Error::InvalidArgument(
        "bench_matmul_cpp: expected a: f32[m, k], b: f32[k, n], c: f32[m, n]");
  }
  const int64_t m = ad[0], k = ad[1], n = bd[1];
  const float* x = a.typed_data();
  const float* y = b.typed_data();
  float* z = c->typed_data();
  for (int64_t i = 0; i < m * n; ++i) {
    z[i] = 0.0f;
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      const float xip = x[i * k + p];
      for (int64_t j = 0; j < n; ++j) {
        z[i * n + j] += xip * y[p * n + j];
      }
    }
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(BenchMatmul, MatmulImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // a
                                  .Arg<ffi::Buffer<ffi::F32>>()  // b
                                  .Ret<ffi::Buffer<ffi::F32>>()  // c
);
CYXLA_TARGET(bench_matmul_cpp, BenchMatmul);
