// The XLA FFI C++ API for cyxla guests.
//
// cyxla's own implementation, at XLA's include path, of the synchronous CPU
// subset of XLA's header-only `xla/ffi/api/ffi.h` (the header JAX's FFI
// tutorial uses): DataType and its aliases, Span, Error, ErrorOr, AnyBuffer,
// Buffer<dtype, rank>, Result/ResultBuffer, RemainingArgs/RemainingRets,
// attributes (scalars, strings, arrays as Span<const T>, Dictionary),
// Context, RunId, DeviceOrdinal, UserData and State, and what XLA FFI 0.4
// and 0.5 (jaxlib 0.12) added: buffer matching (match::Buffer, Verify,
// Match), ErrorOr from an Error, CustomOptions. A handler source written
// for XLA compiles unchanged for a wasm32 guest with
//
//   clang++-19 --target=wasm32-wasi -mexec-model=reactor -std=c++17 -O3 \
//     -msimd128 -mllvm -force-vector-interleave=4 -ffp-contract=off \
//     -fno-exceptions -fno-rtti -Wl,--strip-debug \
//     -Iguest-sdk/include kernel.cc guest-sdk/c/cyxla_runtime.cc -o kernel.wasm
//
// after adding one line per target next to its handler:
//
//   CYXLA_TARGET(my_target, MyHandler);   // see cyxla/target.h
//
// What the sandbox cannot do fails to compile with a static_assert that
// says so: Future/Promise/CountDownPromise (asynchronous handlers),
// PlatformStream, ScratchAllocator (device memory), ThreadPool,
// XLA_FFI_REGISTER_HANDLER, the RECORD stage (Ffi::BindRecord), the
// collectives and record extensions (xla/ffi/api/collectives_api.h,
// record_api.h), and Pointer<T> attributes on wasm32. Calling the
// corresponding C API functions directly through `call_frame->api` fails at
// run time with UNIMPLEMENTED "... is not supported in the cyxla sandbox".
//
// C++17; no exceptions, RTTI or iostreams needed.
#ifndef XLA_FFI_API_FFI_H_
#define XLA_FFI_API_FFI_H_

#ifdef XLA_FFI_FFI_H_
#error Two different XLA FFI implementations cannot be included together.
#endif

#include <algorithm>
#include <cassert>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "xla/ffi/api/api.h"
#include "xla/ffi/api/c_api.h"

/// @file
/// @brief XLA FFI C++ API (cyxla implementation for wasm32 guests).

namespace xla::ffi {

/// @brief The runtime's API table; in a guest, the guest's own table.
inline const XLA_FFI_Api* GetXlaFfiApi() { return XLA_FFI_GetApi(); }

/// @brief A registered type's identifier.
using TypeId = XLA_FFI_TypeId;  // NOLINT
/// @brief Information about a registered type.
using TypeInfo = XLA_FFI_TypeInfo;  // NOLINT

//===----------------------------------------------------------------------===//
// DataType
//===----------------------------------------------------------------------===//

/// @brief Element types (XLA's PrimitiveType numbering).
enum class DataType : uint8_t {
  INVALID = XLA_FFI_DataType_INVALID,              ///< Invalid.
  PRED = XLA_FFI_DataType_PRED,                    ///< bool.
  S1 = XLA_FFI_DataType_S1,                        ///< 1-bit signed.
  S2 = XLA_FFI_DataType_S2,                        ///< 2-bit signed.
  S4 = XLA_FFI_DataType_S4,                        ///< 4-bit signed.
  S8 = XLA_FFI_DataType_S8,                        ///< int8_t.
  S16 = XLA_FFI_DataType_S16,                      ///< int16_t.
  S32 = XLA_FFI_DataType_S32,                      ///< int32_t.
  S64 = XLA_FFI_DataType_S64,                      ///< int64_t.
  U1 = XLA_FFI_DataType_U1,                        ///< 1-bit unsigned.
  U2 = XLA_FFI_DataType_U2,                        ///< 2-bit unsigned.
  U4 = XLA_FFI_DataType_U4,                        ///< 4-bit unsigned.
  U8 = XLA_FFI_DataType_U8,                        ///< uint8_t.
  U16 = XLA_FFI_DataType_U16,                      ///< uint16_t.
  U32 = XLA_FFI_DataType_U32,                      ///< uint32_t.
  U64 = XLA_FFI_DataType_U64,                      ///< uint64_t.
  F16 = XLA_FFI_DataType_F16,                      ///< half.
  F32 = XLA_FFI_DataType_F32,                      ///< float.
  F64 = XLA_FFI_DataType_F64,                      ///< double.
  BF16 = XLA_FFI_DataType_BF16,                    ///< bfloat16.
  C64 = XLA_FFI_DataType_C64,                      ///< complex<float>.
  C128 = XLA_FFI_DataType_C128,                    ///< complex<double>.
  TOKEN = XLA_FFI_DataType_TOKEN,                  ///< Token.
  F8E5M2 = XLA_FFI_DataType_F8E5M2,                ///< 8-bit float.
  F8E4M3 = XLA_FFI_DataType_F8E4M3,                ///< 8-bit float.
  F8E4M3FN = XLA_FFI_DataType_F8E4M3FN,            ///< 8-bit float.
  F8E4M3B11FNUZ = XLA_FFI_DataType_F8E4M3B11FNUZ,  ///< 8-bit float.
  F8E5M2FNUZ = XLA_FFI_DataType_F8E5M2FNUZ,        ///< 8-bit float.
  F8E4M3FNUZ = XLA_FFI_DataType_F8E4M3FNUZ,        ///< 8-bit float.
  F8E3M4 = XLA_FFI_DataType_F8E3M4,                ///< 8-bit float.
  F4E2M1FN = XLA_FFI_DataType_F4E2M1FN,            ///< 4-bit float.
  F8E8M0FNU = XLA_FFI_DataType_F8E8M0FNU,          ///< 8-bit float.
};

/// @brief Aliases of every DataType in xla::ffi (`ffi::F32`).
inline constexpr DataType PRED = DataType::PRED;
inline constexpr DataType S1 = DataType::S1;                        ///< Alias.
inline constexpr DataType S2 = DataType::S2;                        ///< Alias.
inline constexpr DataType S4 = DataType::S4;                        ///< Alias.
inline constexpr DataType S8 = DataType::S8;                        ///< Alias.
inline constexpr DataType S16 = DataType::S16;                      ///< Alias.
inline constexpr DataType S32 = DataType::S32;                      ///< Alias.
inline constexpr DataType S64 = DataType::S64;                      ///< Alias.
inline constexpr DataType U1 = DataType::U1;                        ///< Alias.
inline constexpr DataType U2 = DataType::U2;                        ///< Alias.
inline constexpr DataType U4 = DataType::U4;                        ///< Alias.
inline constexpr DataType U8 = DataType::U8;                        ///< Alias.
inline constexpr DataType U16 = DataType::U16;                      ///< Alias.
inline constexpr DataType U32 = DataType::U32;                      ///< Alias.
inline constexpr DataType U64 = DataType::U64;                      ///< Alias.
inline constexpr DataType F16 = DataType::F16;                      ///< Alias.
inline constexpr DataType F32 = DataType::F32;                      ///< Alias.
inline constexpr DataType F64 = DataType::F64;                      ///< Alias.
inline constexpr DataType BF16 = DataType::BF16;                    ///< Alias.
inline constexpr DataType C64 = DataType::C64;                      ///< Alias.
inline constexpr DataType C128 = DataType::C128;                    ///< Alias.
inline constexpr DataType TOKEN = DataType::TOKEN;                  ///< Alias.
inline constexpr DataType F8E5M2 = DataType::F8E5M2;                ///< Alias.
inline constexpr DataType F8E4M3 = DataType::F8E4M3;                ///< Alias.
inline constexpr DataType F8E4M3FN = DataType::F8E4M3FN;            ///< Alias.
inline constexpr DataType F8E4M3B11FNUZ = DataType::F8E4M3B11FNUZ;  ///< Alias.
inline constexpr DataType F8E5M2FNUZ = DataType::F8E5M2FNUZ;        ///< Alias.
inline constexpr DataType F8E4M3FNUZ = DataType::F8E4M3FNUZ;        ///< Alias.
inline constexpr DataType F8E3M4 = DataType::F8E3M4;                ///< Alias.
inline constexpr DataType F4E2M1FN = DataType::F4E2M1FN;            ///< Alias.
inline constexpr DataType F8E8M0FNU = DataType::F8E8M0FNU;          ///< Alias.

/// @brief Appends a DataType's name (`F32`) to a binding message.
inline internal::StrBuf& operator<<(internal::StrBuf& buf, DataType dtype) {
  return buf << static_cast<XLA_FFI_DataType>(dtype);
}

/// @brief Prints a DataType's name (`F32`) to a stream.
template <typename Os>
auto operator<<(Os& os, DataType dtype) -> decltype(internal::PrintName(os, "", 0)) {
  auto v = static_cast<XLA_FFI_DataType>(dtype);
  return internal::PrintName(os, internal::DataTypeName(v), v);
}

/// @brief Bytes per element (0 for INVALID and TOKEN; sub-byte types: 1).
constexpr size_t ByteWidth(DataType dtype) {
  switch (dtype) {
    case DataType::INVALID:
    case DataType::TOKEN:
      return 0;
    case DataType::PRED:
    case DataType::S1:
    case DataType::S2:
    case DataType::S4:
    case DataType::S8:
    case DataType::U1:
    case DataType::U2:
    case DataType::U4:
    case DataType::U8:
    case DataType::F8E5M2:
    case DataType::F8E4M3:
    case DataType::F8E4M3FN:
    case DataType::F8E4M3B11FNUZ:
    case DataType::F8E5M2FNUZ:
    case DataType::F8E4M3FNUZ:
    case DataType::F8E3M4:
    case DataType::F4E2M1FN:
    case DataType::F8E8M0FNU:
      return 1;
    case DataType::S16:
    case DataType::U16:
    case DataType::F16:
    case DataType::BF16:
      return 2;
    case DataType::S32:
    case DataType::U32:
    case DataType::F32:
      return 4;
    case DataType::S64:
    case DataType::U64:
    case DataType::F64:
    case DataType::C64:
      return 8;
    case DataType::C128:
      return 16;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Span
//===----------------------------------------------------------------------===//

/// @brief A non-owning view of `size` contiguous T.
template <typename T>
class Span {
 public:
  /// @brief An empty span.
  constexpr Span() : data_(nullptr), size_(0) {}
  /// @brief `size` elements at `data`.
  Span(T* data, size_t size) : data_(data), size_(size) {}
  /// @brief The elements of `vec`.
  Span(const std::vector<std::remove_const_t<T>>& vec)  // NOLINT
      : Span(vec.data(), vec.size()) {}

  /// @brief Element `index`.
  T& operator[](size_t index) const { return data_[index]; }
  /// @brief Same elements.
  bool operator==(const Span<T>& other) const {
    return size() == other.size() && std::equal(begin(), end(), other.begin());
  }
  /// @brief The first element.
  T& front() const { return data_[0]; }
  /// @brief The last element.
  T& back() const { return data_[size_ - 1]; }
  /// @brief The first `n` elements.
  Span<T> first(size_t n) const { return Span<T>(data_, n); }
  /// @brief The last `n` elements.
  Span<T> last(size_t n) const { return Span<T>(data_ + size_ - n, n); }
  /// @brief Number of elements.
  size_t size() const { return size_; }
  /// @brief Start.
  T* begin() const { return data_; }
  /// @brief End.
  T* end() const { return data_ + size_; }

 private:
  T* data_;
  size_t size_;
};

//===----------------------------------------------------------------------===//
// Error, Expected, ErrorOr
//===----------------------------------------------------------------------===//

/// @brief Error codes (abseil numbering).
enum class ErrorCode : uint8_t {
  kOk = XLA_FFI_Error_Code_OK,                                   ///< OK.
  kCancelled = XLA_FFI_Error_Code_CANCELLED,                     ///< Cancelled.
  kUnknown = XLA_FFI_Error_Code_UNKNOWN,                         ///< Unknown.
  kInvalidArgument = XLA_FFI_Error_Code_INVALID_ARGUMENT,        ///< Invalid argument.
  kDeadlineExceeded = XLA_FFI_Error_Code_DEADLINE_EXCEEDED,      ///< Deadline exceeded.
  kNotFound = XLA_FFI_Error_Code_NOT_FOUND,                      ///< Not found.
  kAlreadyExists = XLA_FFI_Error_Code_ALREADY_EXISTS,            ///< Already exists.
  kPermissionDenied = XLA_FFI_Error_Code_PERMISSION_DENIED,      ///< Permission denied.
  kResourceExhausted = XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,    ///< Resource exhausted.
  kFailedPrecondition = XLA_FFI_Error_Code_FAILED_PRECONDITION,  ///< Failed precondition.
  kAborted = XLA_FFI_Error_Code_ABORTED,                         ///< Aborted.
  kOutOfRange = XLA_FFI_Error_Code_OUT_OF_RANGE,                 ///< Out of range.
  kUnimplemented = XLA_FFI_Error_Code_UNIMPLEMENTED,             ///< Unimplemented.
  kInternal = XLA_FFI_Error_Code_INTERNAL,                       ///< Internal.
  kUnavailable = XLA_FFI_Error_Code_UNAVAILABLE,                 ///< Unavailable.
  kDataLoss = XLA_FFI_Error_Code_DATA_LOSS,                      ///< Data loss.
  kUnauthenticated = XLA_FFI_Error_Code_UNAUTHENTICATED,         ///< Unauthenticated.
};

/// @brief A handler's outcome: success, or a code and a message that reach
/// the client unchanged.
class Error {
 public:
  /// @brief Success.
  Error() = default;
  /// @brief An error with code `errc`.
  Error(ErrorCode errc, std::string message) : errc_(errc), message_(std::move(message)) {}
  /// @brief An error with C code `errc`.
  Error(XLA_FFI_Error_Code errc, std::string message)
      : Error(static_cast<ErrorCode>(errc), std::move(message)) {}

  /// @brief Whether this is success.
  bool success() const { return errc_ == ErrorCode::kOk; }
  /// @brief Whether this is an error.
  bool failure() const { return !success(); }
  /// @brief The code (kOk for success).
  std::optional<ErrorCode> errc() const { return errc_; }
  /// @brief The message.
  const std::string& message() const { return message_; }

  /// @brief Success.
  static Error Success() { return Error(); }
  /// @brief An INTERNAL error.
  static Error Internal(std::string message) {
    return Error(ErrorCode::kInternal, std::move(message));
  }
  /// @brief An INVALID_ARGUMENT error.
  static Error InvalidArgument(std::string message) {
    return Error(ErrorCode::kInvalidArgument, std::move(message));
  }

 private:
  ErrorCode errc_ = ErrorCode::kOk;
  std::string message_;
};

template <typename E>
class Unexpected;

/// @brief A T or an E (like C++23 std::expected).
template <typename T, typename E>
class Expected {
 public:
  /// @brief A value.
  constexpr Expected(T value) : data_(std::move(value)) {}  // NOLINT
  /// @brief An error.
  constexpr Expected(Unexpected<E> u);  // NOLINT

  /// @brief Whether it holds a value.
  constexpr operator bool() const { return has_value(); }  // NOLINT
  /// @brief The value.
  constexpr T& operator*() & { return value(); }
  /// @brief The value.
  constexpr const T& operator*() const& { return value(); }
  /// @brief The value.
  constexpr T&& operator*() && { return std::move(value()); }
  /// @brief The value.
  constexpr const T& operator*() const&& { return std::move(value()); }
  /// @brief The value.
  constexpr T* operator->() { return &value(); }
  /// @brief The value.
  constexpr const T* operator->() const { return &value(); }

  /// @brief Whether it holds a value.
  constexpr bool has_value() const { return std::holds_alternative<T>(data_); }
  /// @brief Whether it holds an error.
  constexpr bool has_error() const { return std::holds_alternative<E>(data_); }

  /// @brief The value. Without one: std::bad_variant_access, which in a
  /// guest (no exceptions) traps with libc++'s message.
  constexpr T& value() & { return std::get<T>(data_); }
  /// @brief The value (see above).
  constexpr const T& value() const& { return std::get<T>(data_); }
  /// @brief The value (see above).
  constexpr T&& value() && { return std::get<T>(std::move(data_)); }
  /// @brief The value (see above).
  constexpr const T& value() const&& { return std::get<T>(std::move(data_)); }

  /// @brief The error (traps like value() if there is none).
  constexpr E& error() & { return std::get<E>(data_); }
  /// @brief The error (see above).
  constexpr const E& error() const& { return std::get<E>(data_); }
  /// @brief The error (see above).
  constexpr E&& error() && { return std::get<E>(std::move(data_)); }
  /// @brief The error (see above).
  constexpr const E&& error() const&& { return std::get<E>(std::move(data_)); }

 private:
  std::variant<T, E> data_;
};

/// @brief An error for Expected.
template <typename E>
class Unexpected {
 public:
  /// @brief Wraps `error`.
  constexpr Unexpected(E error) : error_(std::move(error)) {}  // NOLINT

 private:
  template <typename, typename>
  friend class Expected;
  E error_;
};

Unexpected(const char*) -> Unexpected<std::string>;

template <typename T, typename E>
constexpr Expected<T, E>::Expected(Unexpected<E> u) : data_(std::move(u.error_)) {}

/// @brief A T or an Error.
template <typename T>
class ErrorOr : public Expected<T, Error> {
 public:
  using Expected<T, Error>::Expected;

  /// @brief A failure, as status-or types are made from an error status
  /// (0.5). `error` must not be a success.
  ErrorOr(Error error)  // NOLINT
      : Expected<T, Error>(Unexpected<Error>(std::move(error))) {
    CYXLA_FFI_ASSERT(this->error().failure(),
                     "ErrorOr cannot be constructed from a successful Error");
  }
};

//===----------------------------------------------------------------------===//
// Error policy (0.5): how the shared parts of the API report errors
//===----------------------------------------------------------------------===//

namespace internal {

/// @brief Error policy of the external, header-only FFI.
struct ErrorPolicy {
  using Status = xla::ffi::Error;  ///< An outcome.

  /// @brief A value or an outcome.
  template <typename T>
  using StatusOr = xla::ffi::ErrorOr<T>;

  /// @brief Success.
  static Status Ok() { return Status::Success(); }

  /// @brief An error with `errc` and `message`.
  static Status FromErrorCode(XLA_FFI_Error_Code errc, std::string_view message) {
    return Status(errc, std::string(message));
  }

  /// @brief Takes ownership of `error` (non-null): its code and message.
  static Status TakeError(const XLA_FFI_Api* api, XLA_FFI_Error* error) {
    CYXLA_FFI_ASSERT(error != nullptr, "TakeError: error must not be null");
    ErrorDetails details = GetErrorDetails(api, error);
    std::string message = details.message != nullptr ? details.message : "";
    DestroyError(api, error);
    return Status(details.errc, std::move(message));
  }
};

}  // namespace internal

//===----------------------------------------------------------------------===//
// Unsupported in the sandbox: asynchronous completion
//===----------------------------------------------------------------------===//

/// @brief Not supported in the cyxla sandbox (see Future).
template <typename Tag = void>
class BasicPromise {
  static_assert(internal::DependentFalse<Tag>::value,
                "xla::ffi::Promise is not supported in the cyxla sandbox: a guest "
                "handler runs synchronously to completion; return xla::ffi::Error");

 public:
  /// @brief Not supported.
  void SetAvailable() {}
  /// @brief Not supported.
  void SetError(Error) {}
};

/// @brief Not supported in the cyxla sandbox (see Future).
template <typename Tag = void>
class BasicCountDownPromise {
  static_assert(internal::DependentFalse<Tag>::value,
                "xla::ffi::CountDownPromise is not supported in the cyxla sandbox: a "
                "guest handler runs synchronously to completion; return "
                "xla::ffi::Error");

 public:
  /// @brief Not supported.
  bool CountDown(Error = Error::Success()) { return false; }
};

/// @brief Not supported in the cyxla sandbox: asynchronous handlers. A guest
/// handler runs to completion on the calling thread and returns Error.
template <typename Tag = void>
class BasicFuture {
  static_assert(internal::DependentFalse<Tag>::value,
                "xla::ffi::Future is not supported in the cyxla sandbox: a guest "
                "handler runs synchronously to completion; return xla::ffi::Error");

 public:
  /// @brief Not supported.
  template <typename... Args>
  explicit BasicFuture(Args&&...) {}
  /// @brief Not supported.
  template <typename F>
  void OnReady(F&&) {}
};

using Promise = BasicPromise<>;                   ///< Not supported (static_assert).
using CountDownPromise = BasicCountDownPromise<>; ///< Not supported (static_assert).
using Future = BasicFuture<>;                     ///< Not supported (static_assert).

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

namespace internal {

template <DataType dtype>
struct AlwaysFalse : std::false_type {};

/// @brief The native type of a DataType.
template <DataType dtype>
struct DataTypeToNative {
  static_assert(AlwaysFalse<dtype>::value, "unsupported data type");
};

#define CYXLA_FFI_DATATYPE_MAPPING(data_type_value, actual_type) \
  template <>                                                    \
  struct DataTypeToNative<data_type_value> {                     \
    using type = actual_type;                                    \
  };

CYXLA_FFI_DATATYPE_MAPPING(DataType::PRED, bool)
CYXLA_FFI_DATATYPE_MAPPING(DataType::U8, uint8_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::U16, uint16_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::U32, uint32_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::U64, uint64_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::S8, int8_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::S16, int16_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::S32, int32_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::S64, int64_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::F16, uint16_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::F32, float)
CYXLA_FFI_DATATYPE_MAPPING(DataType::F64, double)
CYXLA_FFI_DATATYPE_MAPPING(DataType::BF16, uint16_t)
CYXLA_FFI_DATATYPE_MAPPING(DataType::C64, std::complex<float>)
CYXLA_FFI_DATATYPE_MAPPING(DataType::C128, std::complex<double>)
CYXLA_FFI_DATATYPE_MAPPING(DataType::TOKEN, void)

#undef CYXLA_FFI_DATATYPE_MAPPING

/// @brief The rank of a Buffer that accepts any rank (0.3's name;
/// xla::ffi::kDynamicRank since 0.5).
using ::xla::ffi::kDynamicRank;

}  // namespace internal

/// @brief The complex type with real part `dtype` (INVALID if none).
constexpr DataType ToComplex(DataType dtype) {
  switch (dtype) {
    case DataType::F32:
      return DataType::C64;
    case DataType::F64:
      return DataType::C128;
    default:
      return DataType::INVALID;
  }
}

/// @brief The real part type of `dtype` (itself if not complex).
constexpr DataType ToReal(DataType dtype) {
  switch (dtype) {
    case DataType::C64:
      return DataType::F32;
    case DataType::C128:
      return DataType::F64;
    default:
      return dtype;
  }
}

/// @brief The imaginary part type of `dtype` (itself if not complex).
constexpr DataType ToImag(DataType dtype) { return ToReal(dtype); }

/// @brief The native element type of `dtype` (`float` for F32).
template <DataType dtype>
using NativeType = typename internal::DataTypeToNative<dtype>::type;

/// @brief Whether `dtype` is complex.
template <DataType dtype>
constexpr bool IsComplexType() {
  return std::is_same_v<NativeType<dtype>, std::complex<NativeType<ToReal(dtype)>>>;
}

static_assert(ToReal(DataType::C64) == DataType::F32);
static_assert(ToComplex(DataType::F64) == DataType::C128);
static_assert(IsComplexType<DataType::C128>());
static_assert(!IsComplexType<DataType::F32>());

/// @brief A buffer of any dtype and rank (checked by the handler, not by
/// decoding).
class AnyBuffer {
 public:
  /// @brief Its dimensions.
  using Dimensions = Span<const int64_t>;

  friend struct internal::BufferCast;

  /// @brief A view of `buf`.
  explicit AnyBuffer(const XLA_FFI_Buffer* buf) : buf_(buf) {
    CYXLA_FFI_ASSERT(buf != nullptr, "XLA_FFI_Buffer must be non-null");
  }

  /// @brief The element type.
  DataType element_type() const { return DataType(buf_->dtype); }
  /// @brief The dimensions (row-major).
  Dimensions dimensions() const {
    return Dimensions(buf_->dims, static_cast<size_t>(buf_->rank));
  }
  /// @brief Bytes of data.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE size_t size_bytes() const {
    return ByteWidth(element_type()) * element_count();
  }
  /// @brief Product of the dimensions.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE size_t element_count() const {
    Dimensions dims = dimensions();
    return static_cast<size_t>(
        std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>()));
  }
  /// @brief The data.
  void* untyped_data() const { return buf_->data; }

  /// @brief The data as T (T must be the native type of the element type).
  template <typename T>
  T* typed_data() const {
    CYXLA_FFI_ASSERT(internal::NativeTypeToCApiDataType<T>() == buf_->dtype,
                     "Template type must match the underlying buffer dtype");
    return reinterpret_cast<T*>(buf_->data);
  }

  /// @brief The data as any T of the element type's width and alignment.
  template <typename T>
  T* reinterpret_data() const {
    CYXLA_FFI_ASSERT(sizeof(T) == ByteWidth(element_type()) &&
                         !(reinterpret_cast<std::uintptr_t>(buf_->data) % alignof(T)),
                     "Requested type must have the same byte width and alignment as "
                     "the underlying buffer type");
    return reinterpret_cast<T*>(buf_->data);
  }

 private:
  const XLA_FFI_Buffer* buf_;
};

/// @brief A buffer whose dtype (and rank, unless kDynamicRank) decoding
/// checks.
template <DataType dtype, size_t rank = internal::kDynamicRank>
class Buffer {
 public:
  /// @brief Its dimensions.
  using Dimensions = AnyBuffer::Dimensions;

  friend struct internal::BufferCast;

  /// @brief A view of `buf`.
  explicit Buffer(const XLA_FFI_Buffer* buf) : buf_(buf) {
    CYXLA_FFI_ASSERT(buf_ != nullptr, "XLA_FFI_Buffer must be non-null");
  }

  /// @brief The element type.
  DataType element_type() const { return dtype; }
  /// @brief The dimensions (row-major).
  Dimensions dimensions() const {
    return Dimensions(buf_->dims, rank == internal::kDynamicRank
                                      ? static_cast<size_t>(buf_->rank)
                                      : rank);
  }
  /// @brief Bytes of data.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE size_t size_bytes() const {
    return ByteWidth(dtype) * element_count();
  }
  /// @brief Product of the dimensions.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE size_t element_count() const {
    Dimensions dims = dimensions();
    return static_cast<size_t>(
        std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>()));
  }
  /// @brief The data.
  void* untyped_data() const { return buf_->data; }
  /// @brief The data as the native type.
  NativeType<dtype>* typed_data() const {
    return reinterpret_cast<NativeType<dtype>*>(untyped_data());
  }

 private:
  const XLA_FFI_Buffer* buf_;
};

template <DataType dtype>
using BufferR0 = Buffer<dtype, 0>;  ///< Rank 0.
template <DataType dtype>
using BufferR1 = Buffer<dtype, 1>;  ///< Rank 1.
template <DataType dtype>
using BufferR2 = Buffer<dtype, 2>;  ///< Rank 2.
template <DataType dtype>
using BufferR3 = Buffer<dtype, 3>;  ///< Rank 3.
template <DataType dtype>
using BufferR4 = Buffer<dtype, 4>;  ///< Rank 4.

using Token = BufferR0<DataType::TOKEN>;  ///< A token. // NOLINT

namespace internal {

/// @brief Whether `buf` has `dtype` and `rank`.
template <DataType dtype, size_t rank>
XLA_FFI_ATTRIBUTE_ALWAYS_INLINE inline bool IsaBuffer(XLA_FFI_Buffer* buf) {
  return static_cast<DataType>(buf->dtype) == dtype &&
         (rank == internal::kDynamicRank || buf->rank == static_cast<int64_t>(rank));
}

/// @brief `buf` as a Buffer<dtype, rank>, or a diagnostic.
template <DataType dtype, size_t rank>
XLA_FFI_ATTRIBUTE_ALWAYS_INLINE inline std::optional<Buffer<dtype, rank>> DecodeBuffer(
    XLA_FFI_Buffer* buf, DiagnosticEngine& diagnostic) {
  if (auto buf_dtype = static_cast<DataType>(buf->dtype);
      XLA_FFI_PREDICT_FALSE(buf_dtype != dtype)) {
    return diagnostic.Emit("Wrong buffer dtype: expected ") << dtype << " but got "
                                                            << buf_dtype;
  }
  if constexpr (rank != internal::kDynamicRank) {
    if (XLA_FFI_PREDICT_FALSE(buf->rank != static_cast<int64_t>(rank))) {
      return diagnostic.Emit("Wrong buffer rank: expected ") << rank << " but got "
                                                             << buf->rank;
    }
  }
  return Buffer<dtype, rank>(buf);
}

}  // namespace internal

/// @brief A result buffer parameter.
template <DataType dtype, size_t rank = internal::kDynamicRank>
using ResultBuffer = Result<Buffer<dtype, rank>>;

template <DataType dtype>
using ResultBufferR0 = ResultBuffer<dtype, 0>;  ///< Rank 0.
template <DataType dtype>
using ResultBufferR1 = ResultBuffer<dtype, 1>;  ///< Rank 1.
template <DataType dtype>
using ResultBufferR2 = ResultBuffer<dtype, 2>;  ///< Rank 2.
template <DataType dtype>
using ResultBufferR3 = ResultBuffer<dtype, 3>;  ///< Rank 3.
template <DataType dtype>
using ResultBufferR4 = ResultBuffer<dtype, 4>;  ///< Rank 4.

//===----------------------------------------------------------------------===//
// Buffer matching (0.5)
//===----------------------------------------------------------------------===//

namespace internal {

/// @brief Views a matched buffer as another buffer type.
struct BufferCast {
  /// @brief `buffer` as a To (only after a match confirmed dtype and rank).
  template <typename To, typename From>
  static To Cast(const From& buffer) {
    return To(buffer.buf_);
  }
};

}  // namespace internal

namespace match {

/// @brief A buffer pattern over DataType.
template <typename DTypes = DTypeSet<DataType>, typename Ranks = RankSet<>>
using BufferPattern = internal::BufferPatternBase<DTypes, Ranks>;

/// @brief A pattern of one dtype (and one rank unless kDynamicRank).
template <DataType dtype, size_t rank = kDynamicRank>
auto Buffer() {
  if constexpr (rank == kDynamicRank) {
    return BufferPattern<DTypeSet<DataType, dtype>>();
  } else {
    return BufferPattern<DTypeSet<DataType, dtype>, RankSet<rank>>();
  }
}

/// @brief A pattern any buffer matches (until constrained).
inline BufferPattern<> Buffer() { return {}; }

}  // namespace match

/// @brief Success if `buffer` matches `pattern` (captures written), else
/// INVALID_ARGUMENT "Buffer '<name>' failed to match <pattern>: <why>".
template <typename BufferType, typename DTypes, typename Ranks>
Error Verify(std::string_view name, BufferType buffer,
             const match::BufferPattern<DTypes, Ranks>& pattern) {
  return internal::VerifyBuffer<internal::ErrorPolicy>(name, buffer, pattern);
}

/// @brief An AnyBuffer as the Buffer<dtype, rank> of a pattern of exactly
/// one dtype and one rank, or Verify's error.
template <DataType dtype, size_t rank>
ErrorOr<Buffer<dtype, rank>> Match(
    std::string_view name, AnyBuffer buffer,
    const match::BufferPattern<match::DTypeSet<DataType, dtype>, match::RankSet<rank>>&
        pattern) {
  return internal::MatchBuffer<internal::ErrorPolicy, Buffer<dtype, rank>>(
      name, buffer, pattern, [](AnyBuffer buffer) {
        return internal::BufferCast::Cast<Buffer<dtype, rank>>(buffer);
      });
}

/// @brief A typed buffer checked against `pattern`, or Verify's error.
template <DataType dtype, size_t rank, typename DTypes, typename Ranks>
ErrorOr<Buffer<dtype, rank>> Match(std::string_view name, Buffer<dtype, rank> buffer,
                                   const match::BufferPattern<DTypes, Ranks>& pattern) {
  return internal::MatchBuffer<internal::ErrorPolicy, Buffer<dtype, rank>>(
      name, buffer, pattern, [](Buffer<dtype, rank> buffer) { return buffer; });
}

namespace internal {

/// @brief A matched buffer as a Result, or its error.
template <typename Buffer>
ErrorOr<Result<Buffer>> WrapResult(ErrorOr<Buffer> buffer) {
  if (buffer.has_error()) return Unexpected(std::move(buffer).error());
  return Result<Buffer>(std::move(buffer).value());
}

}  // namespace internal

/// @brief A result buffer checked against `pattern`, or Verify's error.
template <typename BufferType, typename DTypes, typename Ranks>
auto Match(std::string_view name, Result<BufferType> buffer,
           const match::BufferPattern<DTypes, Ranks>& pattern) {
  return internal::WrapResult(Match(name, *buffer, pattern));
}

//===----------------------------------------------------------------------===//
// Argument and result bindings and decodings
//===----------------------------------------------------------------------===//

/// @brief AnyBuffer parameters are arguments.
template <>
struct ArgBinding<AnyBuffer> {
  using Arg = AnyBuffer;  ///< Decoded as AnyBuffer.
};

/// @brief Buffer parameters are arguments.
template <DataType dtype, size_t rank>
struct ArgBinding<Buffer<dtype, rank>> {
  using Arg = Buffer<dtype, rank>;  ///< Decoded as Buffer.
};

/// @brief Result<AnyBuffer> parameters are results.
template <>
struct RetBinding<Result<AnyBuffer>> {
  using Ret = AnyBuffer;  ///< Decoded as AnyBuffer.
};

/// @brief ResultBuffer parameters are results.
template <DataType dtype, size_t rank>
struct RetBinding<Result<Buffer<dtype, rank>>> {
  using Ret = Buffer<dtype, rank>;  ///< Decoded as Buffer.
};

/// @brief Decodes any buffer argument.
template <>
struct ArgDecoding<AnyBuffer> {
  /// @brief Whether it is a buffer.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static bool Isa(XLA_FFI_ArgType type, void*) {
    return type == XLA_FFI_ArgType_BUFFER;
  }
  /// @brief The buffer, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<AnyBuffer> Decode(
      XLA_FFI_ArgType type, void* arg, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_ArgType_BUFFER)) {
      return diagnostic.Emit("Wrong argument type: expected ")
             << XLA_FFI_ArgType_BUFFER << " but got " << type;
    }
    return AnyBuffer(reinterpret_cast<XLA_FFI_Buffer*>(arg));
  }
};

/// @brief Decodes a buffer argument, checking dtype and rank.
template <DataType dtype, size_t rank>
struct ArgDecoding<Buffer<dtype, rank>> {
  /// @brief Whether it is a buffer of that dtype and rank.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static bool Isa(XLA_FFI_ArgType type, void* arg) {
    return type == XLA_FFI_ArgType_BUFFER &&
           internal::IsaBuffer<dtype, rank>(reinterpret_cast<XLA_FFI_Buffer*>(arg));
  }
  /// @brief The buffer, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Buffer<dtype, rank>> Decode(
      XLA_FFI_ArgType type, void* arg, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_ArgType_BUFFER)) {
      return diagnostic.Emit("Wrong argument type: expected ")
             << XLA_FFI_ArgType_BUFFER << " but got " << type;
    }
    return internal::DecodeBuffer<dtype, rank>(reinterpret_cast<XLA_FFI_Buffer*>(arg),
                                               diagnostic);
  }
};

/// @brief The arguments not bound individually (`.RemainingArgs()`).
class RemainingArgs : public internal::RemainingArgsBase {
 public:
  using internal::RemainingArgsBase::RemainingArgsBase;

  /// @brief Remaining argument `index` decoded as T, or an error
  /// (InvalidArgument "Index out of range", Internal with the diagnostic).
  template <typename T>
  ErrorOr<T> get(size_t index) const {
    size_t idx = offset() + index;
    if (XLA_FFI_PREDICT_FALSE(static_cast<int64_t>(idx) >= args()->size)) {
      return Unexpected(Error(ErrorCode::kInvalidArgument, "Index out of range"));
    }
    DiagnosticEngine diagnostic;
    std::optional<T> value =
        ArgDecoding<T>::Decode(args()->types[idx], args()->args[idx], diagnostic);
    if (XLA_FFI_PREDICT_FALSE(!value.has_value())) {
      return Unexpected(Error::Internal(diagnostic.Result()));
    }
    return *value;
  }
};

/// @brief Decodes `.RemainingArgs()`.
template <>
struct internal::Decode<internal::RemainingArgsTag> {
  /// @brief The arguments from the current offset on.
  static std::optional<RemainingArgs> call(DecodingOffsets& offsets, DecodingContext& ctx,
                                           DiagnosticEngine&) {
    return RemainingArgs(&ctx.call_frame->args, static_cast<size_t>(offsets.args));
  }
};

/// @brief Decodes any buffer result.
template <>
struct RetDecoding<AnyBuffer> {
  /// @brief Whether it is a buffer.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static bool Isa(XLA_FFI_RetType type, void*) {
    return type == XLA_FFI_RetType_BUFFER;
  }
  /// @brief The buffer, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Result<AnyBuffer>> Decode(
      XLA_FFI_RetType type, void* ret, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_RetType_BUFFER)) {
      return diagnostic.Emit("Wrong result type: expected ")
             << XLA_FFI_RetType_BUFFER << " but got " << type;
    }
    return AnyBuffer(reinterpret_cast<XLA_FFI_Buffer*>(ret));
  }
};

/// @brief Decodes a buffer result, checking dtype and rank.
template <DataType dtype, size_t rank>
struct RetDecoding<Buffer<dtype, rank>> {
  /// @brief Whether it is a buffer of that dtype and rank.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static bool Isa(XLA_FFI_RetType type, void* ret) {
    return type == XLA_FFI_RetType_BUFFER &&
           internal::IsaBuffer<dtype, rank>(reinterpret_cast<XLA_FFI_Buffer*>(ret));
  }
  /// @brief The buffer, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Result<Buffer<dtype, rank>>> Decode(
      XLA_FFI_RetType type, void* ret, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_RetType_BUFFER)) {
      return diagnostic.Emit("Wrong result type: expected ")
             << XLA_FFI_RetType_BUFFER << " but got " << type;
    }
    return internal::DecodeBuffer<dtype, rank>(reinterpret_cast<XLA_FFI_Buffer*>(ret),
                                               diagnostic);
  }
};

/// @brief The results not bound individually (`.RemainingRets()`).
class RemainingRets : public internal::RemainingRetsBase {
 public:
  using internal::RemainingRetsBase::RemainingRetsBase;

  /// @brief Remaining result `index` decoded as T, or an error.
  template <typename T>
  ErrorOr<Result<T>> get(size_t index) const {
    size_t idx = offset() + index;
    if (XLA_FFI_PREDICT_FALSE(static_cast<int64_t>(idx) >= rets()->size)) {
      return Unexpected(Error(ErrorCode::kInvalidArgument, "Index out of range"));
    }
    DiagnosticEngine diagnostic;
    std::optional<Result<T>> value =
        RetDecoding<T>::Decode(rets()->types[idx], rets()->rets[idx], diagnostic);
    if (XLA_FFI_PREDICT_FALSE(!value.has_value())) {
      return Unexpected(Error::Internal(diagnostic.Result()));
    }
    return *value;
  }
};

/// @brief Decodes `.RemainingRets()`.
template <>
struct internal::Decode<internal::RemainingRetsTag> {
  /// @brief The results from the current offset on.
  static std::optional<RemainingRets> call(DecodingOffsets& offsets, DecodingContext& ctx,
                                           DiagnosticEngine&) {
    return RemainingRets(&ctx.call_frame->rets, static_cast<size_t>(offsets.rets));
  }
};

//===----------------------------------------------------------------------===//
// Attributes: arrays, strings, pointers
//===----------------------------------------------------------------------===//

#define CYXLA_FFI_ARRAY_ATTR_DECODING(T, TYPE)                                     \
  template <>                                                                      \
  struct AttrDecoding<Span<const T>> {                                             \
    using Type = Span<const T>;                                                    \
    XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Type> Decode(             \
        XLA_FFI_AttrType type, void* attr, DiagnosticEngine& diagnostic) {         \
      if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_ARRAY)) {                 \
        return diagnostic.Emit("Wrong attribute type: expected ")                  \
               << XLA_FFI_AttrType_ARRAY << " but got " << type;                   \
      }                                                                            \
      auto* array = reinterpret_cast<XLA_FFI_Array*>(attr);                        \
      if (XLA_FFI_PREDICT_FALSE(array->dtype != TYPE)) {                           \
        return diagnostic.Emit("Wrong array data type: expected ")                 \
               << TYPE << " but got " << array->dtype;                             \
      }                                                                            \
      return Span<const T>(reinterpret_cast<T*>(array->data), array->size);        \
    }                                                                              \
  };

CYXLA_FFI_ARRAY_ATTR_DECODING(int8_t, XLA_FFI_DataType_S8)
CYXLA_FFI_ARRAY_ATTR_DECODING(int16_t, XLA_FFI_DataType_S16)
CYXLA_FFI_ARRAY_ATTR_DECODING(int32_t, XLA_FFI_DataType_S32)
CYXLA_FFI_ARRAY_ATTR_DECODING(int64_t, XLA_FFI_DataType_S64)
CYXLA_FFI_ARRAY_ATTR_DECODING(uint8_t, XLA_FFI_DataType_U8)
CYXLA_FFI_ARRAY_ATTR_DECODING(uint16_t, XLA_FFI_DataType_U16)
CYXLA_FFI_ARRAY_ATTR_DECODING(uint32_t, XLA_FFI_DataType_U32)
CYXLA_FFI_ARRAY_ATTR_DECODING(uint64_t, XLA_FFI_DataType_U64)
CYXLA_FFI_ARRAY_ATTR_DECODING(float, XLA_FFI_DataType_F32)
CYXLA_FFI_ARRAY_ATTR_DECODING(double, XLA_FFI_DataType_F64)

#undef CYXLA_FFI_ARRAY_ATTR_DECODING

/// @brief Decodes a string attribute (not NUL-terminated).
template <>
struct AttrDecoding<std::string_view> {
  using Type = std::string_view;  ///< The bytes.
  /// @brief Whether it is a string.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static bool Isa(XLA_FFI_AttrType type, void*) {
    return type == XLA_FFI_AttrType_STRING;
  }
  /// @brief The string, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<std::string_view> Decode(
      XLA_FFI_AttrType type, void* attr, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_STRING)) {
      return diagnostic.Emit("Wrong attribute type: expected ")
             << XLA_FFI_AttrType_STRING << " but got " << type;
    }
    auto* span = reinterpret_cast<XLA_FFI_ByteSpan*>(attr);
    return std::string_view(span->ptr, span->len);
  }
};

/// @brief Tag: an i64 attribute carrying a pointer to T.
template <typename T>
struct Pointer {};

/// @brief Decodes an i64 scalar as a T* (64-bit targets only).
template <typename T>
struct AttrDecoding<Pointer<T>> {
  static_assert(sizeof(uintptr_t) == sizeof(int64_t),
                "xla::ffi::Pointer<T> attributes are not supported in the cyxla "
                "sandbox: they carry 64-bit host addresses, which mean nothing in a "
                "wasm32 guest");
  using Type = T*;  ///< The pointer.
  /// @brief The pointer, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Type> Decode(
      XLA_FFI_AttrType type, void* attr, DiagnosticEngine& diagnostic) {
    auto* scalar = reinterpret_cast<XLA_FFI_Scalar*>(attr);
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_SCALAR ||
                              scalar->dtype != XLA_FFI_DataType_S64)) {
      return diagnostic.Emit("Wrong attribute type: ")
             << "expected i64 scalar for passing pointer but got " << type;
    }
    uintptr_t ptr;
    std::memcpy(&ptr, scalar->value, sizeof(ptr));
    return reinterpret_cast<Type>(ptr);
  }
};

//===----------------------------------------------------------------------===//
// Dictionary
//===----------------------------------------------------------------------===//

/// @brief Attributes by name: all of a call's (`.Attrs()`), or a dictionary
/// attribute's.
class Dictionary : public internal::DictionaryBase {
 public:
  using internal::DictionaryBase::DictionaryBase;

  /// @brief The attribute at `it` decoded as T, or an Internal error.
  template <typename T>
  ErrorOr<T> get(const Iterator& it) const {
    DiagnosticEngine diagnostic;
    auto value = internal::DictionaryBase::get<T>(it, diagnostic);
    if (XLA_FFI_PREDICT_FALSE(!value.has_value())) {
      return Unexpected(Error::Internal(diagnostic.Result()));
    }
    return *value;
  }

  /// @brief Attribute `name` decoded as T, or an Internal error
  /// ("Unexpected attribute: <name>" when missing).
  template <typename T>
  ErrorOr<T> get(std::string_view name) const {
    DiagnosticEngine diagnostic;
    auto value = internal::DictionaryBase::get<T>(name, diagnostic);
    if (XLA_FFI_PREDICT_FALSE(!value.has_value())) {
      return Unexpected(Error::Internal(diagnostic.Result()));
    }
    return *value;
  }
};

/// @brief Decodes `.Attrs()` as the Dictionary of all attributes.
template <>
struct internal::Decode<internal::AttrsTag<Dictionary>> {
  /// @brief The frame's attributes.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Dictionary> call(
      DecodingOffsets&, DecodingContext& ctx, DiagnosticEngine&) {
    return Dictionary(&ctx.call_frame->attrs);
  }
};

/// @brief Decodes a dictionary attribute.
template <>
struct AttrDecoding<Dictionary> {
  using Type = Dictionary;  ///< The dictionary.
  /// @brief The dictionary, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Dictionary> Decode(
      XLA_FFI_AttrType type, void* attr, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_DICTIONARY)) {
      return diagnostic.Emit("Wrong attribute type: expected ")
             << XLA_FFI_AttrType_DICTIONARY << " but got " << type;
    }
    return Dictionary(reinterpret_cast<XLA_FFI_Attrs*>(attr));
  }
};

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

/// @brief The execution context; `get<T>()` decodes a context value.
class Context : public internal::ContextBase {
 public:
  using internal::ContextBase::ContextBase;

  /// @brief Context value T, or an Internal error.
  template <typename T>
  ErrorOr<typename CtxDecoding<T>::Type> get() const {
    DiagnosticEngine diagnostic;
    auto value = internal::ContextBase::get<T>(diagnostic);
    if (XLA_FFI_PREDICT_FALSE(!value.has_value())) {
      return Unexpected(Error::Internal(diagnostic.Result()));
    }
    return *value;
  }
};

/// @brief Decodes `.Ctx<CustomOptions>()`: the call's custom options as a
/// Dictionary (0.5; always empty in a cyxla guest).
template <>
struct CtxDecoding<CustomOptions> : internal::CustomOptionsDecoding<Dictionary> {};

/// @brief Decodes `.Ctx()` / `.Ctx<Context>()`.
template <>
struct CtxDecoding<Context> {
  using Type = Context;  ///< The context.
  /// @brief The context.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Context> Decode(
      const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx, DiagnosticEngine&) {
    return Context(api, ctx);
  }
};

//===----------------------------------------------------------------------===//
// Result encoding
//===----------------------------------------------------------------------===//

namespace internal {

/// @brief `error` as an XLA_FFI_Error made through `api`.
inline XLA_FFI_Error* CreateError(const XLA_FFI_Api* api, const Error& error) {
  XLA_FFI_Error_Create_Args args;
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.errc = static_cast<XLA_FFI_Error_Code>(*error.errc());
  args.message = error.message().c_str();
  return api->XLA_FFI_Error_Create(&args);
}

}  // namespace internal

/// @brief Encodes an Error (NULL for success).
template <ExecutionStage stage>
struct ResultEncoding<stage, Error> {
  /// @brief NULL, or the error.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static XLA_FFI_Error* Encode(const XLA_FFI_Api* api,
                                                               XLA_FFI_ExecutionContext*,
                                                               Error error) {
    if (XLA_FFI_PREDICT_TRUE(error.success())) return nullptr;
    return internal::CreateError(api, error);
  }
};

/// @brief Encodes a state created at a non-execute stage (never delivered by
/// cyxla, which calls only the execute stage).
template <typename T, ExecutionStage stage>
struct ResultEncoding<stage, ErrorOr<std::unique_ptr<T>>> {
  static_assert(stage != ExecutionStage::kExecute,
                "Execute stage doesn't support setting a state");
  static_assert(std::is_same_v<decltype(T::id), TypeId>,
                "State type must have a static `TypeId id` field");

  /// @brief The state's type id.
  static XLA_FFI_TypeId state_type_id(const XLA_FFI_Api*) { return T::id; }

  /// @brief Stores the state, or returns the error.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static XLA_FFI_Error* Encode(
      const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
      ErrorOr<std::unique_ptr<T>> state) {
    if (XLA_FFI_PREDICT_TRUE(state.has_value())) {
      XLA_FFI_State_Set_Args args;
      args.struct_size = XLA_FFI_State_Set_Args_STRUCT_SIZE;
      args.extension_start = nullptr;
      args.stage = static_cast<XLA_FFI_ExecutionStage>(stage);
      args.ctx = ctx;
      args.type_id = &T::id;
      args.state = state.value().release();
      return api->XLA_FFI_State_Set(&args);
    }
    return internal::CreateError(api, state.error());
  }
};

//===----------------------------------------------------------------------===//
// Unsupported in the sandbox: streams, device memory, thread pools
//===----------------------------------------------------------------------===//

/// @brief Tag for a platform (GPU) stream context value.
template <typename T>
struct PlatformStream {};

/// @brief Not supported in the cyxla sandbox.
template <typename T>
struct CtxDecoding<PlatformStream<T>> {
  static_assert(internal::DependentFalse<T>::value,
                "xla::ffi::PlatformStream is not supported in the cyxla sandbox: "
                "guests run on the CPU and have no device stream");
  using Type = T;  ///< The stream type.
};

/// @brief Not supported in the cyxla sandbox: device memory. Allocate host
/// memory (std::vector, malloc) inside the handler instead.
template <typename Tag = void>
class BasicScratchAllocator {
  static_assert(internal::DependentFalse<Tag>::value,
                "xla::ffi::ScratchAllocator is not supported in the cyxla sandbox: "
                "there is no device memory; allocate with std::vector or malloc in "
                "the handler");

 public:
  /// @brief Not supported.
  std::optional<void*> Allocate(size_t, size_t = 1) { return std::nullopt; }
};

/// @brief Not supported (static_assert).
using ScratchAllocator = BasicScratchAllocator<>;

/// @brief Not supported in the cyxla sandbox.
template <typename Tag>
struct CtxDecoding<BasicScratchAllocator<Tag>> {
  static_assert(internal::DependentFalse<Tag>::value,
                "xla::ffi::ScratchAllocator is not supported in the cyxla sandbox: "
                "there is no device memory; allocate with std::vector or malloc in "
                "the handler");
  using Type = BasicScratchAllocator<Tag>;  ///< The allocator.
};

/// @brief Not supported in the cyxla sandbox: a guest runs one call at a time
/// on one thread. Do the work on the calling thread.
template <typename Tag = void>
class BasicThreadPool {
  static_assert(internal::DependentFalse<Tag>::value,
                "xla::ffi::ThreadPool is not supported in the cyxla sandbox: a guest "
                "runs each call on a single thread; do the work in the handler");

 public:
  /// @brief Not supported.
  template <typename F>
  void Schedule(F&&) {}
  /// @brief Not supported.
  int64_t num_threads() const { return 0; }
};

/// @brief Not supported (static_assert).
using ThreadPool = BasicThreadPool<>;

/// @brief Not supported in the cyxla sandbox.
template <typename Tag>
struct CtxDecoding<BasicThreadPool<Tag>> {
  static_assert(internal::DependentFalse<Tag>::value,
                "xla::ffi::ThreadPool is not supported in the cyxla sandbox: a guest "
                "runs each call on a single thread; do the work in the handler");
  using Type = BasicThreadPool<Tag>;  ///< The pool.
};

//===----------------------------------------------------------------------===//
// Types, user data, state
//===----------------------------------------------------------------------===//

/// @brief Type info whose deleter deletes a T.
template <typename T>
constexpr XLA_FFI_TypeInfo MakeTypeInfo() {
  return XLA_FFI_TypeInfo{
      XLA_FFI_TypeInfo_STRUCT_SIZE,
      /*extension_start=*/nullptr,
      /*deleter=*/[](void* ptr) { delete static_cast<T*>(ptr); },
  };
}

namespace internal {

/// @brief Registers a type at static initialization; traps (guest) or
/// aborts with the runtime's message on failure.
inline bool RegisterTypeOrDie(const XLA_FFI_Api* api, std::string_view name,
                              XLA_FFI_TypeId* type_id, const XLA_FFI_TypeInfo* type_info) {
  if (XLA_FFI_Error* error = Ffi::RegisterTypeId(api, name, type_id, type_info)) {
    DestroyError(api, error);
#if defined(__wasm32__)
    cyxla_panic("Failed to register XLA FFI type");
#else
    std::abort();
#endif
  }
  return true;
}

}  // namespace internal

/// @brief Registers a type with the runtime at static initialization.
#define XLA_FFI_REGISTER_TYPE(API, NAME, TYPE_ID, TYPE_INFO) \
  XLA_FFI_REGISTER_TYPE_(API, NAME, TYPE_ID, TYPE_INFO, __COUNTER__)
#define XLA_FFI_REGISTER_TYPE_(API, NAME, TYPE_ID, TYPE_INFO, N) \
  XLA_FFI_REGISTER_TYPE__(API, NAME, TYPE_ID, TYPE_INFO, N)
#define XLA_FFI_REGISTER_TYPE__(API, NAME, TYPE_ID, TYPE_INFO, N)     \
  [[maybe_unused]] static const bool xla_ffi_type_##N##_registered_ = \
      ::xla::ffi::internal::RegisterTypeOrDie(API, NAME, TYPE_ID, TYPE_INFO)

/// @brief Tag: user data of type T from the execution context.
template <typename T>
struct UserData {};

/// @brief Decodes user data of type T (`T::id` must be registered).
template <typename T>
struct CtxDecoding<UserData<T>> {
  using Type = T*;  ///< The data.
  static_assert(std::is_same_v<decltype(T::id), TypeId>,
                "UserData type must have a static `TypeId id` field");

  /// @brief The data, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Type> Decode(
      const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx, DiagnosticEngine& diagnostic) {
    XLA_FFI_ExecutionContext_Get_Args args;
    args.struct_size = XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.ctx = ctx;
    args.type_id = &T::id;
    args.data = nullptr;
    if (XLA_FFI_Error* err = api->XLA_FFI_ExecutionContext_Get(&args); err) {
      diagnostic.Emit("Failed to get user data from execution context: ")
          << internal::GetErrorMessage(api, err);
      internal::DestroyError(api, err);
      return std::nullopt;
    }
    return static_cast<Type>(args.data);
  }
};

/// @brief Tag: state of type T created at `stage`.
template <typename T, ExecutionStage stage = ExecutionStage::kInstantiate>
struct State {};

template <typename T>
using Prepared = State<T, ExecutionStage::kPrepare>;  ///< Prepare-stage state.
template <typename T>
using Initialized = State<T, ExecutionStage::kInitialize>;  ///< Initialize-stage state.

/// @brief Decodes a state of type T.
template <typename T, ExecutionStage stage>
struct CtxDecoding<State<T, stage>> {
  using Type = T*;  ///< The state.
  static_assert(std::is_same_v<decltype(T::id), TypeId>,
                "State type must have a static `TypeId id` field");

  /// @brief The state, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Type> Decode(
      const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx, DiagnosticEngine& diagnostic) {
    XLA_FFI_State_Get_Args args;
    args.struct_size = XLA_FFI_State_Get_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.stage = static_cast<XLA_FFI_ExecutionStage>(stage);
    args.ctx = ctx;
    args.type_id = &T::id;
    args.state = nullptr;
    if (XLA_FFI_Error* err = api->XLA_FFI_State_Get(&args); err) {
      diagnostic.Emit("Failed to get state from execution context: ")
          << internal::GetErrorMessage(api, err);
      internal::DestroyError(api, err);
      return std::nullopt;
    }
    return static_cast<Type>(args.state);
  }
};

//===----------------------------------------------------------------------===//
// RunId and DeviceOrdinal
//===----------------------------------------------------------------------===//

/// @brief The run id of the current execution.
struct RunId {
  int64_t run_id;  ///< The id.
};

/// @brief Decodes `.Ctx<RunId>()`.
template <>
struct CtxDecoding<RunId> {
  using Type = RunId;  ///< The id.
  /// @brief The id, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Type> Decode(
      const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx, DiagnosticEngine& diagnostic) {
    XLA_FFI_RunId_Get_Args args;
    args.struct_size = XLA_FFI_RunId_Get_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.ctx = ctx;
    args.run_id = 0;
    if (XLA_FFI_Error* err = api->XLA_FFI_RunId_Get(&args); err) {
      diagnostic.Emit("Failed to get run id from execution context: ")
          << internal::GetErrorMessage(api, err);
      internal::DestroyError(api, err);
      return std::nullopt;
    }
    return RunId{args.run_id};
  }
};

/// @brief Tag: the device ordinal (an int32_t).
struct DeviceOrdinal {};

/// @brief Decodes `.Ctx<DeviceOrdinal>()`.
template <>
struct CtxDecoding<DeviceOrdinal> {
  using Type = int32_t;  ///< The ordinal.
  /// @brief The ordinal, or a diagnostic.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Type> Decode(
      const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx, DiagnosticEngine& diagnostic) {
    XLA_FFI_DeviceOrdinal_Get_Args args;
    args.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.ctx = ctx;
    args.device_ordinal = 0;
    if (XLA_FFI_Error* err = api->XLA_FFI_DeviceOrdinal_Get(&args); err) {
      diagnostic.Emit("Failed to get device ordinal from execution context: ")
          << internal::GetErrorMessage(api, err);
      internal::DestroyError(api, err);
      return std::nullopt;
    }
    return args.device_ordinal;
  }
};

}  // namespace xla::ffi

#endif  // XLA_FFI_API_FFI_H_
