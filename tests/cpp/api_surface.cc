// Compile-only check of source compatibility: this file uses much of the
// synchronous CPU API of XLA's xla/ffi/api/ffi.h and must compile both
// against jaxlib's real headers (natively) and against cyxla's (for wasm32).
// The test cpp_sdk::api_surface_compiles_with_both_header_sets builds it both
// ways. Nothing here runs.
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace surface {

enum class Mode : int32_t { kFast = 0, kExact = 1 };

// (Template arguments with commas need an alias inside the macros.)
using Either = std::variant<int64_t, double>;

struct Limits {
  int64_t lo;
  int64_t hi;
};

struct Counter {
  static ffi::TypeId id;
  int64_t value = 0;
};
ffi::TypeId Counter::id = {};

}  // namespace surface

XLA_FFI_REGISTER_ENUM_ATTR_DECODING(surface::Mode);
XLA_FFI_REGISTER_STRUCT_ATTR_DECODING(surface::Limits, ffi::StructMember<int64_t>("lo"),
                                      ffi::StructMember<int64_t>("hi"));

namespace surface {

// Types, aliases and constexpr helpers.
static_assert(std::is_same_v<ffi::NativeType<ffi::F32>, float>);
static_assert(std::is_same_v<ffi::NativeType<ffi::C128>, std::complex<double>>);
static_assert(ffi::ToComplex(ffi::F64) == ffi::C128);
static_assert(ffi::ToReal(ffi::C64) == ffi::F32);
static_assert(ffi::IsComplexType<ffi::C64>());
static_assert(ffi::ByteWidth(ffi::DataType::BF16) == 2);
static_assert(ffi::ByteWidth(ffi::S64) == 8);
static_assert(std::is_same_v<ffi::ResultBufferR2<ffi::F32>, ffi::Result<ffi::Buffer<ffi::F32, 2>>>);
static_assert(std::is_same_v<ffi::Token, ffi::BufferR0<ffi::DataType::TOKEN>>);

ffi::ErrorOr<int64_t> Half(int64_t x) {
  if (x % 2 != 0) return ffi::Unexpected(ffi::Error::InvalidArgument("odd"));
  return x / 2;
}

ffi::Error Everything(ffi::BufferR2<ffi::F32> matrix, std::optional<ffi::AnyBuffer> maybe,
                      ffi::Result<ffi::Buffer<ffi::S64>> out,
                      std::optional<ffi::Result<ffi::AnyBuffer>> maybe_out, Mode mode,
                      Either either, std::complex<float> c,
                      std::string_view text, ffi::Span<const double> weights, uint8_t small,
                      int32_t device, ffi::RunId run) {
  auto dims = matrix.dimensions();
  int64_t rows = dims.size() == 2 ? dims.front() : 0;
  int64_t cols = dims.back();
  ffi::Span<const int64_t> first = dims.first(1);
  int64_t* o = out->typed_data();
  o[0] = rows * cols + static_cast<int64_t>(first.size());
  o[0] += static_cast<int64_t>(matrix.size_bytes() + matrix.element_count());
  if (maybe.has_value()) {
    o[0] += static_cast<int64_t>(maybe->element_count());
    if (maybe->element_type() == ffi::DataType::F32) {
      o[0] += static_cast<int64_t>(maybe->typed_data<float>()[0]);
    }
    o[0] += static_cast<int64_t>(*maybe->reinterpret_data<uint8_t>());
  }
  if (maybe_out.has_value()) {
    (*maybe_out)->untyped_data();
  }
  o[0] += mode == Mode::kExact ? 1 : 0;
  if (std::holds_alternative<double>(either)) o[0] += 2;
  o[0] += static_cast<int64_t>(c.real()) + static_cast<int64_t>(text.size());
  for (double w : weights) o[0] += static_cast<int64_t>(w);
  o[0] += small + device + run.run_id;
  auto half = Half(o[0]);
  if (!half) return half.error();
  if (half.has_value()) o[0] = *half;
  ffi::Error e(XLA_FFI_Error_Code_INTERNAL, std::string("never"));
  if (e.failure() && e.errc() == ffi::ErrorCode::kInternal && !e.message().empty()) {
    return ffi::Error::Success();
  }
  return ffi::Error(ffi::ErrorCode::kUnimplemented, "unreachable");
}

ffi::Error WithStructAndState(Limits limits, Counter* counter, ffi::BufferR1<ffi::S32> x) {
  counter->value += limits.hi - limits.lo + static_cast<int64_t>(x.element_count());
  return ffi::Error::Success();
}

ffi::Error WithUserData(Counter* counter, ffi::Context ctx) {
  auto device = ctx.get<ffi::DeviceOrdinal>();
  if (device.has_error()) return device.error();
  counter->value += *device;
  return ffi::Error::Success();
}

ffi::Error Variadic(ffi::RemainingArgs args, ffi::RemainingRets rets, ffi::Dictionary attrs) {
  if (args.empty() || rets.empty()) return ffi::Error::InvalidArgument("nothing");
  if (!args.isa<ffi::AnyBuffer>(0) || !rets.isa<ffi::AnyBuffer>(0)) {
    return ffi::Error::InvalidArgument("not buffers");
  }
  auto in = args.get<ffi::AnyBuffer>(0);
  auto out = rets.get<ffi::AnyBuffer>(0);
  if (!in || !out) return ffi::Error::Internal("decode");
  for (std::string_view name : attrs) {
    if (attrs.contains<int64_t>(name)) {
      auto v = attrs.get<int64_t>(name);
      if (v.has_error()) return v.error();
    }
  }
  if (!attrs.contains("scale")) return ffi::Error::InvalidArgument("no scale");
  auto nested = attrs.get<ffi::Dictionary>("nested");
  if (nested.has_value() && nested->size() > 0) return ffi::Error::Success();
  return ffi::Error::Success();
}

static ffi::Error Wrapped(ffi::AnyBuffer x) {
  return x.size_bytes() > 0 ? ffi::Error::Success() : ffi::Error::Internal("empty");
}

}  // namespace surface

XLA_FFI_DECLARE_HANDLER_SYMBOL(SurfaceEverything);

XLA_FFI_DEFINE_HANDLER_SYMBOL(SurfaceEverything, surface::Everything,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::BufferR2<ffi::F32>>()
                                  .OptionalArg<ffi::AnyBuffer>()
                                  .Ret<ffi::Buffer<ffi::S64>>()
                                  .OptionalRet<ffi::AnyBuffer>()
                                  .Attr<surface::Mode>("mode")
                                  .Attr<surface::Either>("either")
                                  .Attr<std::complex<float>>("c")
                                  .Attr<std::string_view>("text")
                                  .Attr<ffi::Span<const double>>("weights")
                                  .Attr<uint8_t>("small")
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Ctx<ffi::RunId>());
CYXLA_TARGET(surface_everything, SurfaceEverything);

XLA_FFI_DEFINE_HANDLER_SYMBOL(SurfaceState, surface::WithStructAndState,
                              ffi::Ffi::Bind()
                                  .Attrs<surface::Limits>()
                                  .Ctx<ffi::State<surface::Counter>>()
                                  .Arg<ffi::BufferR1<ffi::S32>>());
CYXLA_TARGET(surface_state, SurfaceState);

XLA_FFI_DEFINE_HANDLER_SYMBOL(SurfaceUserData, surface::WithUserData,
                              ffi::Ffi::Bind().Ctx<ffi::UserData<surface::Counter>>().Ctx());
CYXLA_TARGET(surface_user_data, SurfaceUserData);

XLA_FFI_DEFINE_HANDLER_SYMBOL(SurfaceVariadic, surface::Variadic,
                              ffi::Ffi::Bind().RemainingArgs().RemainingRets().Attrs());
CYXLA_TARGET(surface_variadic, SurfaceVariadic);

// A handler constant at function scope, with the compile-time wrapper.
XLA_FFI_Error* SurfaceScoped(XLA_FFI_CallFrame* frame);
XLA_FFI_Error* SurfaceScoped(XLA_FFI_CallFrame* frame) {
  XLA_FFI_DEFINE_HANDLER(handler, ffi::Ffi::Wrapper<surface::Wrapped>(),
                         ffi::Ffi::Bind().Arg<ffi::AnyBuffer>());
  return handler(frame);
}
CYXLA_TARGET_EXPORT("surface.scoped-v1$", surface_scoped, SurfaceScoped);

// A lambda bound with an inferred binding.
XLA_FFI_DEFINE_HANDLER(kSurfaceLambda, [](ffi::Buffer<ffi::F64> x,
                                          ffi::ResultBuffer<ffi::F64> y) {
  y->typed_data()[0] = x.typed_data()[0];
  return ffi::Error::Success();
});
CYXLA_TARGET(surface_lambda, kSurfaceLambda);
