// Test kernels for the C++ guest SDK: each exercises part of the binding
// (attributes of every kind, dictionaries, struct decoding, inferred
// bindings, remaining arguments and results, context values) and writes what
// it decoded into its results, so that the same source built natively
// against jaxlib's headers and as a guest against cyxla's can be compared
// byte for byte (tests/integration/cpp_sdk.rs, programs from
// tests/gen_cpp_programs.py).
//
// Targets:
//   strict_cpp   eps: f32; x: f32[n] (rank 1 only) -> y = x * eps
//   attrs_cpp    name: str, arr: i64[], dct: {a: str, m: f64, z: i32},
//                f64: f64, flag: bool, i32: i32, f32arr: f32[];
//                any operands -> f64[32] summary, f32 (2 * operand 0),
//                u8[512] diagnostics text
//   dict_cpp     any attributes (.Attrs()) -> f64[32] summary, u8[256] names
//   params_cpp   {scale: f32, offset: i64, label: str} decoded into a struct;
//                x: f32[...] -> x * scale + offset + len(label)
//   auto_cpp     binding inferred from the signature: factor: f32 (Attr<T,
//                name>); x: f32[...] -> x * factor
//   frame_size_cpp, probe_cpp, stage_cpp
//                call strict_cpp's handler with a doctored copy of their frame:
//                struct_size + sizeof(void*) (fails: XLA's size check),
//                a metadata probe (-> s64[4] = [major, minor, traits,
//                state_type_id] answered), stage INSTANTIATE (fails)
//   bad_access_cpp
//                no operands -> s32[]; reads the value of an ErrorOr holding
//                an error: libc++ cannot throw in a guest and traps with its
//                message (guest only)
//   typed_data_mismatch_cpp
//                x: any -> y: any; reads x as double: with a non-f64 x the
//                SDK's assertion traps (never run natively: XLA's assert
//                aborts the process)
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <variant>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// ----------------------------------------------------------------------------
// strict_cpp
// ----------------------------------------------------------------------------

ffi::Error StrictImpl(float eps, ffi::BufferR1<ffi::F32> x,
                      ffi::ResultBufferR1<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) {
    y->typed_data()[i] = x.typed_data()[i] * eps;
  }
  return ffi::Error::Success();
}

// ----------------------------------------------------------------------------
// attrs_cpp
// ----------------------------------------------------------------------------

// Appends `text` and a newline to a byte buffer (truncating).
class Text {
 public:
  Text(uint8_t* data, size_t size) : data_(data), size_(size) {
    std::memset(data_, 0, size_);
  }
  void Line(std::string_view text) {
    for (char c : text) Put(static_cast<uint8_t>(c));
    Put('\n');
  }

 private:
  void Put(uint8_t c) {
    if (at_ < size_) data_[at_++] = c;
  }
  uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

double Code(const ffi::Error& error) {
  return static_cast<double>(static_cast<int>(*error.errc()));
}

ffi::Error AttrsImpl(std::string_view name, ffi::Span<const int64_t> arr,
                     ffi::Dictionary dct, double f64, bool flag, int32_t i32,
                     ffi::Span<const float> f32arr, int32_t device,
                     ffi::Context context, ffi::RemainingArgs args,
                     ffi::RemainingRets rets) {
  if (rets.size() != 3) {
    return ffi::Error::InvalidArgument("attrs_cpp: expected 3 results");
  }
  auto summary = rets.get<ffi::Buffer<ffi::F64>>(0);
  if (summary.has_error()) return summary.error();
  auto doubled = rets.get<ffi::Buffer<ffi::F32>>(1);
  if (doubled.has_error()) return doubled.error();
  auto text_buf = rets.get<ffi::Buffer<ffi::U8>>(2);
  if (text_buf.has_error()) return text_buf.error();
  if ((*summary)->element_count() < 32) {
    return ffi::Error::InvalidArgument("attrs_cpp: summary needs 32 elements");
  }

  double* v = (*summary)->typed_data();
  for (int i = 0; i < 32; ++i) v[i] = 0.0;
  Text text((*text_buf)->typed_data(), (*text_buf)->element_count());

  v[0] = static_cast<double>(name.size());
  for (char c : name) v[1] += static_cast<unsigned char>(c);
  for (int64_t a : arr) v[2] += static_cast<double>(a);
  v[3] = static_cast<double>(arr.size());
  v[4] = static_cast<double>(dct.size());

  auto z = dct.get<int32_t>("z");
  if (z.has_error()) return z.error();
  v[5] = *z;
  auto m = dct.get<double>("m");
  if (m.has_error()) return m.error();
  v[6] = *m;
  auto a = dct.get<std::string_view>("a");
  if (a.has_error()) return a.error();
  v[7] = static_cast<double>(a->size());
  v[8] = dct.contains("nope") ? 1.0 : 0.0;
  v[9] = f64;
  v[10] = flag ? 1.0 : 0.0;
  v[11] = i32;
  float f32sum = 0.0f;
  for (float f : f32arr) f32sum += f;
  v[12] = f32sum;
  v[13] = device;
  auto device_again = context.get<ffi::DeviceOrdinal>();
  if (device_again.has_error()) return device_again.error();
  v[14] = *device_again;
  v[15] = static_cast<double>(args.size());
  v[16] = static_cast<double>(rets.size());
  for (size_t k = 0; k < args.size(); ++k) {
    auto buf = args.get<ffi::AnyBuffer>(k);
    if (buf.has_error()) return buf.error();
    v[17] += static_cast<double>(buf->element_count());
    v[18] += static_cast<double>(buf->size_bytes());
  }

  // Failures, and their messages, must be the same as XLA's.
  auto out_of_range = args.get<ffi::AnyBuffer>(args.size());
  v[19] = out_of_range.has_error() ? Code(out_of_range.error()) : -1;
  if (out_of_range.has_error()) text.Line(out_of_range.error().message());
  auto wrong_dtype = args.get<ffi::Buffer<ffi::F64>>(0);
  v[20] = wrong_dtype.has_error() ? Code(wrong_dtype.error()) : -1;
  if (wrong_dtype.has_error()) text.Line(wrong_dtype.error().message());
  auto wrong_rank = args.get<ffi::BufferR4<ffi::F32>>(0);
  v[21] = wrong_rank.has_error() ? Code(wrong_rank.error()) : -1;
  if (wrong_rank.has_error()) text.Line(wrong_rank.error().message());
  auto z_as_float = dct.get<float>("z");
  v[22] = z_as_float.has_error() ? Code(z_as_float.error()) : -1;
  if (z_as_float.has_error()) text.Line(z_as_float.error().message());
  auto missing = dct.get<int32_t>("missing");
  v[23] = missing.has_error() ? Code(missing.error()) : -1;
  if (missing.has_error()) text.Line(missing.error().message());
  auto a_as_array = dct.get<ffi::Span<const int64_t>>("a");
  v[24] = a_as_array.has_error() ? Code(a_as_array.error()) : -1;
  if (a_as_array.has_error()) text.Line(a_as_array.error().message());
  auto ret_wrong = rets.get<ffi::Buffer<ffi::S32>>(0);
  v[25] = ret_wrong.has_error() ? Code(ret_wrong.error()) : -1;
  if (ret_wrong.has_error()) text.Line(ret_wrong.error().message());
  auto m_variant = dct.get<std::variant<int32_t, double>>("m");
  v[26] = m_variant.has_value() ? static_cast<double>(m_variant->index()) : -1;
  auto a_variant = dct.get<std::variant<int32_t, double>>("a");
  v[27] = a_variant.has_error() ? Code(a_variant.error()) : -1;
  if (a_variant.has_error()) text.Line(a_variant.error().message());
  v[28] = args.isa<ffi::Buffer<ffi::F32>>(0) ? 1.0 : 0.0;
  v[29] = rets.isa<ffi::Buffer<ffi::F64>>(0) ? 1.0 : 0.0;
  v[30] = dct.contains<int32_t>("z") ? 1.0 : 0.0;
  v[31] = dct.contains<double>("z") ? 1.0 : 0.0;

  // Result 1: twice operand 0 (which must be f32 with as many elements).
  auto x = args.get<ffi::Buffer<ffi::F32>>(0);
  if (x.has_error()) return x.error();
  if ((*doubled)->element_count() != x->element_count()) {
    return ffi::Error::InvalidArgument("attrs_cpp: result 1 must be shaped like operand 0");
  }
  for (size_t i = 0; i < x->element_count(); ++i) {
    (*doubled)->typed_data()[i] = 2.0f * x->typed_data()[i];
  }
  return ffi::Error::Success();
}

// ----------------------------------------------------------------------------
// dict_cpp
// ----------------------------------------------------------------------------

ffi::Error DictImpl(ffi::Dictionary attrs, ffi::ResultBuffer<ffi::F64> summary,
                    ffi::ResultBuffer<ffi::U8> names) {
  double* v = summary->typed_data();
  size_t n = summary->element_count();
  for (size_t i = 0; i < n; ++i) v[i] = 0.0;
  Text text(names->typed_data(), names->element_count());
  v[0] = static_cast<double>(attrs.size());
  size_t at = 1;
  for (auto it = attrs.begin(); it != attrs.end(); ++it) {
    std::string_view name = *it;
    text.Line(name);
    // One code per attribute: which of these types it decodes as.
    double kinds = 0;
    if (attrs.isa<float>(it)) kinds += 1;
    if (attrs.isa<double>(it)) kinds += 2;
    if (attrs.isa<int64_t>(it)) kinds += 4;
    if (attrs.isa<std::string_view>(it)) kinds += 8;
    if (attrs.isa<int32_t>(it)) kinds += 16;
    if (attrs.isa<bool>(it)) kinds += 32;
    if (at < n) v[at++] = kinds;
  }
  return ffi::Error::Success();
}

// ----------------------------------------------------------------------------
// params_cpp
// ----------------------------------------------------------------------------

struct Params {
  float scale;
  int64_t offset;
  std::string_view label;
};

}  // namespace

XLA_FFI_REGISTER_STRUCT_ATTR_DECODING(Params, ffi::StructMember<float>("scale"),
                                      ffi::StructMember<int64_t>("offset"),
                                      ffi::StructMember<std::string_view>("label"));

namespace {

ffi::Error ParamsImpl(Params params, ffi::Buffer<ffi::F32> x,
                      ffi::ResultBuffer<ffi::F32> y) {
  float add = static_cast<float>(params.offset) + static_cast<float>(params.label.size());
  for (size_t i = 0; i < x.element_count(); ++i) {
    y->typed_data()[i] = x.typed_data()[i] * params.scale + add;
  }
  return ffi::Error::Success();
}

// ----------------------------------------------------------------------------
// auto_cpp
// ----------------------------------------------------------------------------

constexpr char kFactor[] = "factor";

ffi::Error AutoImpl(ffi::Buffer<ffi::F32> x, ffi::Attr<float, kFactor> factor,
                    ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) {
    y->typed_data()[i] = x.typed_data()[i] * *factor;
  }
  return ffi::Error::Success();
}

// ----------------------------------------------------------------------------
// typed_data_mismatch_cpp
// ----------------------------------------------------------------------------

ffi::Error TypedDataMismatchImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  const double* wrong = x.typed_data<double>();  // asserts x is F64
  std::memcpy(y->untyped_data(), wrong, y->size_bytes());
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(Strict, StrictImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::BufferR1<ffi::F32>>()
                                  .Ret<ffi::BufferR1<ffi::F32>>());
CYXLA_TARGET(strict_cpp, Strict);

XLA_FFI_DEFINE_HANDLER_SYMBOL(Attrs, AttrsImpl,
                              ffi::Ffi::Bind()
                                  .Attr<std::string_view>("name")
                                  .Attr<ffi::Span<const int64_t>>("arr")
                                  .Attr<ffi::Dictionary>("dct")
                                  .Attr<double>("f64")
                                  .Attr<bool>("flag")
                                  .Attr<int32_t>("i32")
                                  .Attr<ffi::Span<const float>>("f32arr")
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Ctx()
                                  .RemainingArgs()
                                  .RemainingRets());
CYXLA_TARGET(attrs_cpp, Attrs);

XLA_FFI_DEFINE_HANDLER_SYMBOL(Dict, DictImpl,
                              ffi::Ffi::Bind()
                                  .Attrs()
                                  .Ret<ffi::Buffer<ffi::F64>>()
                                  .Ret<ffi::Buffer<ffi::U8>>());
CYXLA_TARGET(dict_cpp, Dict);

XLA_FFI_DEFINE_HANDLER_SYMBOL(ParamsHandler, ParamsImpl,
                              ffi::Ffi::Bind()
                                  .Attrs<Params>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
CYXLA_TARGET(params_cpp, ParamsHandler);

// No binding: inferred from AutoImpl's parameter types.
XLA_FFI_DEFINE_HANDLER_SYMBOL(AutoScale, AutoImpl);
CYXLA_TARGET(auto_cpp, AutoScale);

XLA_FFI_DEFINE_HANDLER_SYMBOL(TypedDataMismatch, TypedDataMismatchImpl,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());
CYXLA_TARGET(typed_data_mismatch_cpp, TypedDataMismatch);

// ----------------------------------------------------------------------------
// Doctored frames: the binding's own checks (struct size, probe, stage)
// ----------------------------------------------------------------------------

extern "C" XLA_FFI_Error* FrameSize(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr) return Strict(frame);  // the real probe
  XLA_FFI_CallFrame copy = *frame;
  copy.struct_size += sizeof(void*);
  return Strict(&copy);
}
CYXLA_TARGET(frame_size_cpp, FrameSize);

extern "C" XLA_FFI_Error* Probe(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr) return Strict(frame);  // the real probe
  if (frame->rets.size != 1) {
    return ffi::internal::CreateError(frame->api,
                                      ffi::Error::InvalidArgument("probe_cpp: one result"));
  }
  XLA_FFI_Metadata metadata;
  std::memset(&metadata, 0, sizeof metadata);
  metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  metadata.state_type_id.type_id = -1;
  XLA_FFI_Metadata_Extension extension;
  extension.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  extension.extension_base.type = XLA_FFI_Extension_Metadata;
  extension.extension_base.next = nullptr;
  extension.metadata = &metadata;
  XLA_FFI_CallFrame copy = *frame;
  copy.extension_start = &extension.extension_base;
  if (XLA_FFI_Error* error = Strict(&copy)) return error;
  auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  auto* v = static_cast<int64_t*>(out->data);
  // The version relative to the headers' own: 0.0 when the binding answers
  // the version it was built against (0.3 natively against jaxlib 0.10's
  // headers, 0.5 as a guest of this SDK).
  v[0] = metadata.api_version.major_version - XLA_FFI_API_MAJOR;
  v[1] = metadata.api_version.minor_version - XLA_FFI_API_MINOR;
  v[2] = metadata.traits;
  v[3] = metadata.state_type_id.type_id;
  return nullptr;
}
CYXLA_TARGET(probe_cpp, Probe);

extern "C" XLA_FFI_Error* Stage(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr) return Strict(frame);  // the real probe
  XLA_FFI_CallFrame copy = *frame;
  copy.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  return Strict(&copy);
}
CYXLA_TARGET(stage_cpp, Stage);

// ----------------------------------------------------------------------------
// bad_access_cpp
// ----------------------------------------------------------------------------

namespace {

ffi::ErrorOr<int32_t> NoValue() { return ffi::Unexpected(ffi::Error::Internal("no value")); }

ffi::Error BadAccessImpl(ffi::ResultBuffer<ffi::S32> out) {
  ffi::ErrorOr<int32_t> result = NoValue();
  out->typed_data()[0] = result.value();  // there is none
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(BadAccess, BadAccessImpl,
                              ffi::Ffi::Bind().Ret<ffi::Buffer<ffi::S32>>());
CYXLA_TARGET(bad_access_cpp, BadAccess);
