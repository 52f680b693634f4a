// A handler written against XLA FFI API 0.5 (jaxlib 0.12's headers), built
// unchanged natively against jaxlib's headers and as a cyxla guest
// (tests/python/test_ffi_0_5.py): buffer matching (`ffi::Match`,
// `ffi::Verify`, `ffi::match::Buffer`, dimension captures), an `ErrorOr`
// made from an `Error`, custom options (`ffi::CustomOptions`), error details
// (`XLA_FFI_Error_GetDetails`) and the renamed invoke context.
#include <cstdint>
#include <string>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// The code and message of an error made through the API, read back with
// XLA_FFI_Error_GetDetails (0.5): the code must survive the round trip.
static ffi::Error CheckErrorDetails(const XLA_FFI_Api* api) {
  XLA_FFI_Error_Create_Args create;
  create.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  create.extension_start = nullptr;
  create.message = "details probe";
  create.errc = XLA_FFI_Error_Code_NOT_FOUND;
  XLA_FFI_Error* error = api->XLA_FFI_Error_Create(&create);

  XLA_FFI_Error_GetDetails_Args details;
  details.struct_size = XLA_FFI_Error_GetDetails_Args_STRUCT_SIZE;
  details.extension_start = nullptr;
  details.error = error;
  details.message = nullptr;
  details.errc = XLA_FFI_Error_Code_OK;
  api->XLA_FFI_Error_GetDetails(&details);
  const bool ok = details.errc == XLA_FFI_Error_Code_NOT_FOUND && details.message != nullptr &&
                  std::string_view(details.message) == "details probe";

  XLA_FFI_Error_Destroy_Args destroy;
  destroy.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  destroy.extension_start = nullptr;
  destroy.error = error;
  api->XLA_FFI_Error_Destroy(&destroy);
  if (!ok) return ffi::Error::Internal("XLA_FFI_Error_GetDetails lost the code or message");
  return ffi::Error::Success();
}

// x: f32[rows, cols] (taken untyped and matched), scale: f32[cols],
// y = x * scale + offset, per row.
static ffi::ErrorOr<ffi::Buffer<ffi::F32, 2>> MatchX(ffi::AnyBuffer x, int64_t* rows,
                                                     int64_t* cols) {
  if (x.element_count() == 0) return ffi::Error::InvalidArgument("x is empty");
  return ffi::Match("x", x, ffi::match::Buffer<ffi::F32, 2>().WithDims(rows, cols));
}

static ffi::Error ScaleRowsImpl(ffi::Context ctx, ffi::Dictionary options, float offset,
                                ffi::AnyBuffer x, ffi::Buffer<ffi::F32> scale,
                                ffi::Result<ffi::AnyBuffer> y) {
  if (ffi::Error error = CheckErrorDetails(ctx.api()); error.failure()) return error;
  XLA_FFI_InvokeContext* invoke = ctx.ctx();
  XLA_FFI_ExecutionContext* same = invoke;  // the 0.3 name is kept
  if (same == nullptr) return ffi::Error::Internal("no invoke context");
  if (!options.empty()) {
    return ffi::Error::InvalidArgument("expected no custom options, got " +
                                       std::to_string(options.size()));
  }
  int64_t rows = 0;
  int64_t cols = 0;
  ffi::ErrorOr<ffi::Buffer<ffi::F32, 2>> xs = MatchX(x, &rows, &cols);
  if (xs.has_error()) return xs.error();
  if (ffi::Error error =
          ffi::Verify("scale", scale, ffi::match::Buffer<ffi::F32, 1>().WithDims(cols));
      error.failure()) {
    return error;
  }
  auto ys = ffi::Match("y", y, ffi::match::Buffer<ffi::F32, 2>().WithDims(rows, cols));
  if (ys.has_error()) return ys.error();
  const float* in = xs->typed_data();
  const float* s = scale.typed_data();
  float* out = (**ys).typed_data();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = in[r * cols + c] * s[c] + offset;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ScaleRows05, ScaleRowsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::Context>()
                                  .Ctx<ffi::CustomOptions>()
                                  .Attr<float>("offset")
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::AnyBuffer>());
CYXLA_TARGET(scale_rows_05, ScaleRows05);
