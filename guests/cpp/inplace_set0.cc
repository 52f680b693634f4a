// In-place updates through input/output aliasing, in C++: built by
// guests/cpp/build.sh into guests/out/inplace_set0_cpp.wasm (and natively
// by the tests).
//
// Target inplace_set0_cpp:  value: f64;  x: T[...] -> y: T[...]  (T = f32, f64)
//   With y aliased with x (input_output_aliases={0: 0}, or a donated
//   argument): writes value (rounded to T) over the first element of every
//   row of y (along the last axis; the one element of a rank-0 array) and
//   nothing else, so the rest keeps x's values. Called without aliasing,
//   the other elements of y keep whatever the result buffer held (zeros in
//   the sandbox, unspecified natively), so that a sandbox that failed to
//   alias shows. y must have x's dtype and element count, else
//   INVALID_ARGUMENT; other dtypes: UNIMPLEMENTED
//   "inplace_set0_cpp: unsupported dtype".
//
// Target aliasing_cpp:  x: T[...] -> y: T[...]  (any T)
//   JAX's aliasing example (examples/ffi, cpu_examples.cc): does nothing but
//   check that x and y address the same data, as they do when the call
//   declares input_output_aliases={0: 0}; otherwise INVALID_ARGUMENT "When
//   aliased, the input and output buffers should point to the same data."
#include <cstddef>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

template <typename T>
void SetRowStarts(ffi::AnyBuffer& y, double value) {
  T* out = y.typed_data<T>();
  const auto dims = y.dimensions();
  const size_t row = dims.size() == 0 ? 1 : static_cast<size_t>(dims.back());
  if (row == 0) return;
  for (size_t i = 0; i < y.element_count(); i += row) {
    out[i] = static_cast<T>(value);
  }
}

ffi::Error InplaceSet0Impl(double value, ffi::AnyBuffer x,
                           ffi::Result<ffi::AnyBuffer> y) {
  if (y->element_type() != x.element_type() ||
      y->element_count() != x.element_count()) {
    return ffi::Error::InvalidArgument(
        "inplace_set0_cpp: y must have the dtype and size of x");
  }
  switch (x.element_type()) {
    case ffi::F32:
      SetRowStarts<float>(*y, value);
      break;
    case ffi::F64:
      SetRowStarts<double>(*y, value);
      break;
    default:
      return ffi::Error(ffi::ErrorCode::kUnimplemented,
                        "inplace_set0_cpp: unsupported dtype");
  }
  return ffi::Error::Success();
}

ffi::Error AliasingImpl(ffi::AnyBuffer input,
                        ffi::Result<ffi::AnyBuffer> output) {
  if (input.element_type() != output->element_type() ||
      input.element_count() != output->element_count()) {
    return ffi::Error::InvalidArgument(
        "The input and output data types and sizes must match.");
  }
  if (input.untyped_data() != output->untyped_data()) {
    return ffi::Error::InvalidArgument(
        "When aliased, the input and output buffers should point to the same "
        "data.");
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(InplaceSet0, InplaceSet0Impl,
                              ffi::Ffi::Bind()
                                  .Attr<double>("value")
                                  .Arg<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // y
);
XLA_FFI_DEFINE_HANDLER_SYMBOL(Aliasing, AliasingImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // y
);
CYXLA_TARGET(inplace_set0_cpp, InplaceSet0);
CYXLA_TARGET(aliasing_cpp, Aliasing);
