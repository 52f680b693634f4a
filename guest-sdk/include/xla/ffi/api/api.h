// The binding layer of the XLA FFI C++ API, for cyxla guests.
//
// cyxla's own implementation, at XLA's include path, of the synchronous CPU
// subset of XLA's header-only C++ FFI (`xla/ffi/api/api.h`): `Ffi::Bind()`,
// `Binding`, the decoding hooks (`ArgDecoding`, `RetDecoding`,
// `AttrDecoding`, `CtxDecoding`, `ResultEncoding`), `Handler`, `Result`,
// `Attr`, diagnostics and the `XLA_FFI_DEFINE_HANDLER*` macros. Handlers
// written against XLA's headers compile unchanged, and a frame that does not
// match a binding fails with the same InvalidArgument message as XLA's own
// binding.
//
// Differences from XLA's header, all forced by the sandbox:
//   * no exceptions, no RTTI, no iostreams (messages are built with a small
//     string builder; printing enums to a std::ostream still works);
//   * XLA_FFI_REGISTER_HANDLER does not compile (a guest declares its targets
//     with CYXLA_TARGET, see cyxla/target.h), nor does a binding for the
//     RECORD stage (command buffers, GPU only);
//   * no extension is ever found in a guest's context (Extension<T> decodes
//     fail with XLA's "not found" diagnostic), and custom options are an
//     empty dictionary;
//   * the call frame's struct_size is the wasm32 one (104) when compiled for
//     wasm32.
//
// XLA FFI API 0.5 (jaxlib 0.12), with what 0.4 and 0.5 added: buffer
// matching (`match::Buffer`, `Verify`, `Match`), `ErrorDetails`,
// `CustomOptions`, `Extension<T>`.
//
// C++17. Include "xla/ffi/api/ffi.h" rather than this file.
#ifndef XLA_FFI_API_API_H_
#define XLA_FFI_API_API_H_

#include <algorithm>
#include <array>
#include <cassert>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cyxla/runtime.h"
#include "cyxla/target.h"
#include "xla/ffi/api/c_api.h"

/// @file
/// @brief XLA FFI C++ binding (cyxla implementation).

#ifdef __has_builtin
#define XLA_FFI_HAS_BUILTIN(x) __has_builtin(x)
#else
#define XLA_FFI_HAS_BUILTIN(x) 0
#endif

#if __has_attribute(always_inline)
#define XLA_FFI_ATTRIBUTE_ALWAYS_INLINE __attribute__((always_inline))
#else
#define XLA_FFI_ATTRIBUTE_ALWAYS_INLINE
#endif

#if __has_attribute(noinline)
#define XLA_FFI_ATTRIBUTE_NEVER_INLINE __attribute__((noinline))
#else
#define XLA_FFI_ATTRIBUTE_NEVER_INLINE
#endif

#if XLA_FFI_HAS_BUILTIN(__builtin_expect)
#define XLA_FFI_PREDICT_FALSE(x) (__builtin_expect(false || (x), false))
#define XLA_FFI_PREDICT_TRUE(x) (__builtin_expect(false || (x), true))
#else
#define XLA_FFI_PREDICT_FALSE(x) (x)
#define XLA_FFI_PREDICT_TRUE(x) (x)
#endif

/// @brief Checks a programming error the way XLA's `assert`s do, but in a
/// guest traps with a message the host reports (cyxla_panic). Compiled out
/// with NDEBUG, like `assert`.
#ifdef NDEBUG
#define CYXLA_FFI_ASSERT(cond, message) ((void)0)
#elif defined(__wasm32__)
#define CYXLA_FFI_ASSERT(cond, message) \
  (XLA_FFI_PREDICT_TRUE(cond) ? (void)0 : ::cyxla_panic(message))
#else
#define CYXLA_FFI_ASSERT(cond, message) assert((cond) && (message))
#endif

//===----------------------------------------------------------------------===//
// Enum names, as XLA's pretty printers spell them
//===----------------------------------------------------------------------===//

namespace xla::ffi::internal {

/// @brief XLA's name of a data type (`F32`), or nullptr for an unknown value.
constexpr const char* DataTypeName(XLA_FFI_DataType dtype) {
  switch (dtype) {
    case XLA_FFI_DataType_INVALID: return "INVALID";
    case XLA_FFI_DataType_PRED: return "PRED";
    case XLA_FFI_DataType_S1: return "S1";
    case XLA_FFI_DataType_S2: return "S2";
    case XLA_FFI_DataType_S4: return "S4";
    case XLA_FFI_DataType_S8: return "S8";
    case XLA_FFI_DataType_S16: return "S16";
    case XLA_FFI_DataType_S32: return "S32";
    case XLA_FFI_DataType_S64: return "S64";
    case XLA_FFI_DataType_U1: return "U1";
    case XLA_FFI_DataType_U2: return "U2";
    case XLA_FFI_DataType_U4: return "U4";
    case XLA_FFI_DataType_U8: return "U8";
    case XLA_FFI_DataType_U16: return "U16";
    case XLA_FFI_DataType_U32: return "U32";
    case XLA_FFI_DataType_U64: return "U64";
    case XLA_FFI_DataType_F16: return "F16";
    case XLA_FFI_DataType_F32: return "F32";
    case XLA_FFI_DataType_F64: return "F64";
    case XLA_FFI_DataType_BF16: return "BF16";
    case XLA_FFI_DataType_C64: return "C64";
    case XLA_FFI_DataType_C128: return "C128";
    case XLA_FFI_DataType_TOKEN: return "TOKEN";
    case XLA_FFI_DataType_F4E2M1FN: return "F4E2M1FN";
    case XLA_FFI_DataType_F8E5M2: return "F8E5M2";
    case XLA_FFI_DataType_F8E3M4: return "F8E3M4";
    case XLA_FFI_DataType_F8E4M3: return "F8E4M3";
    case XLA_FFI_DataType_F8E4M3FN: return "F8E4M3FN";
    case XLA_FFI_DataType_F8E4M3B11FNUZ: return "F8E4M3B11FNUZ";
    case XLA_FFI_DataType_F8E5M2FNUZ: return "F8E5M2FNUZ";
    case XLA_FFI_DataType_F8E4M3FNUZ: return "F8E4M3FNUZ";
    case XLA_FFI_DataType_F8E8M0FNU: return "F8E8M0FNU";
  }
  return nullptr;
}

/// @brief XLA's name of an attribute kind (`scalar`), or nullptr.
constexpr const char* AttrTypeName(XLA_FFI_AttrType type) {
  switch (type) {
    case XLA_FFI_AttrType_ARRAY: return "array";
    case XLA_FFI_AttrType_DICTIONARY: return "dictionary";
    case XLA_FFI_AttrType_SCALAR: return "scalar";
    case XLA_FFI_AttrType_STRING: return "string";
  }
  return nullptr;
}

/// @brief XLA's name of an execution stage (`execute`), or nullptr.
constexpr const char* ExecutionStageName(XLA_FFI_ExecutionStage stage) {
  switch (stage) {
    case XLA_FFI_ExecutionStage_INSTANTIATE: return "instantiate";
    case XLA_FFI_ExecutionStage_PREPARE: return "prepare";
    case XLA_FFI_ExecutionStage_INITIALIZE: return "initialize";
    case XLA_FFI_ExecutionStage_EXECUTE: return "execute";
    case XLA_FFI_ExecutionStage_RECORD: return "record";
  }
  return nullptr;
}

/// @brief XLA's name of an argument kind (`buffer`), or nullptr.
constexpr const char* ArgTypeName(XLA_FFI_ArgType type) {
  return type == XLA_FFI_ArgType_BUFFER ? "buffer" : nullptr;
}

/// @brief XLA's name of a result kind (`buffer`), or nullptr.
constexpr const char* RetTypeName(XLA_FFI_RetType type) {
  return type == XLA_FFI_RetType_BUFFER ? "buffer" : nullptr;
}

//===----------------------------------------------------------------------===//
// A string builder (the binding's messages; no iostreams in a guest)
//===----------------------------------------------------------------------===//

/// @brief Builds a message from strings, integers and the C API enums,
/// formatted as XLA's `std::stringstream`-based messages are.
class StrBuf {
 public:
  /// @brief Appends a string.
  StrBuf& operator<<(std::string_view s) {
    str_.append(s.data(), s.size());
    return *this;
  }
  /// @brief Appends a NUL-terminated string.
  StrBuf& operator<<(const char* s) { return *this << std::string_view(s); }
  /// @brief Appends a string.
  StrBuf& operator<<(const std::string& s) {
    return *this << std::string_view(s);
  }
  /// @brief Appends a character.
  StrBuf& operator<<(char c) {
    str_.push_back(c);
    return *this;
  }
  /// @brief Appends `1` or `0` (as a stream without boolalpha does).
  StrBuf& operator<<(bool b) { return *this << (b ? '1' : '0'); }

  /// @brief Appends an integer in decimal.
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                 !std::is_same_v<T, char>,
                             int> = 0>
  StrBuf& operator<<(T value) {
    char digits[24];
    int n = 0;
    bool negative = false;
    unsigned long long magnitude;
    if constexpr (std::is_signed_v<T>) {
      negative = value < 0;
      magnitude = negative ? 0ull - static_cast<unsigned long long>(value)
                           : static_cast<unsigned long long>(value);
    } else {
      magnitude = static_cast<unsigned long long>(value);
    }
    do {
      digits[n++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    if (negative) str_.push_back('-');
    while (n > 0) str_.push_back(digits[--n]);
    return *this;
  }

  /// @brief Appends the name of a data type (its number if unknown).
  StrBuf& operator<<(XLA_FFI_DataType v) { return Name(DataTypeName(v), v); }
  /// @brief Appends the name of an attribute kind.
  StrBuf& operator<<(XLA_FFI_AttrType v) { return Name(AttrTypeName(v), v); }
  /// @brief Appends the name of an execution stage.
  StrBuf& operator<<(XLA_FFI_ExecutionStage v) {
    return Name(ExecutionStageName(v), v);
  }
  /// @brief Appends the name of an argument kind.
  StrBuf& operator<<(XLA_FFI_ArgType v) { return Name(ArgTypeName(v), v); }
  /// @brief Appends the name of a result kind.
  StrBuf& operator<<(XLA_FFI_RetType v) { return Name(RetTypeName(v), v); }

  /// @brief The text so far.
  const std::string& str() const& { return str_; }
  /// @brief The text, moved out.
  std::string str() && { return std::move(str_); }

 private:
  template <typename E>
  StrBuf& Name(const char* name, E value) {
    if (name != nullptr) return *this << name;
    return *this << static_cast<long long>(value);
  }

  std::string str_;
};

/// @brief Applies `os << name` for a standard output stream `os` (anything
/// with `rdbuf()`), so users can print the enums to a `std::ostream` without
/// this header including <ostream>.
template <typename Os>
auto PrintName(Os& os, const char* name, long long value)
    -> decltype(os.rdbuf(), os << name) {
  if (name != nullptr) return os << name;
  return os << value;
}

/// @brief Concatenates strings, integers and the C API enums (XLA 0.5's
/// `internal::StrCat`).
template <typename... Args>
std::string StrCat(Args&&... args) {
  StrBuf buf;
  (buf << ... << std::forward<Args>(args));
  return std::move(buf).str();
}

}  // namespace xla::ffi::internal

//===----------------------------------------------------------------------===//
// Printing the C API enums to streams (as XLA's operator<< do)
//===----------------------------------------------------------------------===//

/// @brief Prints a data type's name (`F32`) to a stream.
template <typename Os>
auto operator<<(Os& os, XLA_FFI_DataType v)
    -> decltype(xla::ffi::internal::PrintName(os, "", 0)) {
  return xla::ffi::internal::PrintName(os, xla::ffi::internal::DataTypeName(v), v);
}

/// @brief Prints an attribute kind's name (`scalar`) to a stream.
template <typename Os>
auto operator<<(Os& os, XLA_FFI_AttrType v)
    -> decltype(xla::ffi::internal::PrintName(os, "", 0)) {
  return xla::ffi::internal::PrintName(os, xla::ffi::internal::AttrTypeName(v), v);
}

/// @brief Prints an execution stage's name (`execute`) to a stream.
template <typename Os>
auto operator<<(Os& os, XLA_FFI_ExecutionStage v)
    -> decltype(xla::ffi::internal::PrintName(os, "", 0)) {
  return xla::ffi::internal::PrintName(
      os, xla::ffi::internal::ExecutionStageName(v), v);
}

//===----------------------------------------------------------------------===//
// Equality of C API structs (as in XLA's header)
//===----------------------------------------------------------------------===//

/// @brief Equal type ids.
inline bool operator==(const XLA_FFI_TypeId& a, const XLA_FFI_TypeId& b) {
  return a.type_id == b.type_id;
}
/// @brief Different type ids.
inline bool operator!=(const XLA_FFI_TypeId& a, const XLA_FFI_TypeId& b) {
  return !(a == b);
}
/// @brief Equal versions.
inline bool operator==(const XLA_FFI_Api_Version& a, const XLA_FFI_Api_Version& b) {
  return a.major_version == b.major_version && a.minor_version == b.minor_version;
}
/// @brief Different versions.
inline bool operator!=(const XLA_FFI_Api_Version& a, const XLA_FFI_Api_Version& b) {
  return !(a == b);
}
/// @brief Equal metadata.
inline bool operator==(const XLA_FFI_Metadata& a, const XLA_FFI_Metadata& b) {
  return a.api_version == b.api_version && a.traits == b.traits &&
         a.state_type_id == b.state_type_id;
}
/// @brief Different metadata.
inline bool operator!=(const XLA_FFI_Metadata& a, const XLA_FFI_Metadata& b) {
  return !(a == b);
}
/// @brief Equal bundles.
inline bool operator==(const XLA_FFI_Handler_Bundle& a, const XLA_FFI_Handler_Bundle& b) {
  return a.instantiate == b.instantiate && a.prepare == b.prepare &&
         a.initialize == b.initialize && a.execute == b.execute;
}
/// @brief Different bundles.
inline bool operator!=(const XLA_FFI_Handler_Bundle& a, const XLA_FFI_Handler_Bundle& b) {
  return !(a == b);
}

namespace xla::ffi {

/// @brief Execution stages (cyxla delivers only kExecute).
enum class ExecutionStage : uint8_t {
  kInstantiate = XLA_FFI_ExecutionStage_INSTANTIATE,  ///< At compile time.
  kPrepare = XLA_FFI_ExecutionStage_PREPARE,          ///< Before execution.
  kInitialize = XLA_FFI_ExecutionStage_INITIALIZE,    ///< Before execution.
  kExecute = XLA_FFI_ExecutionStage_EXECUTE,          ///< The call.
  kRecord = XLA_FFI_ExecutionStage_RECORD,            ///< Command buffers (GPU).
};

/// @brief Handler traits (meaningless on CPU; recorded in the metadata).
enum class Traits : uint32_t {
  /// Compatible with command buffers (GPU).
  kCmdBufferCompatible = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE,
};

template <ExecutionStage stage, typename... Ts>
class Binding;

template <ExecutionStage stage, typename Fn, typename... Ts>
class Handler;

/// @brief All attributes, by name (defined in ffi.h).
class Dictionary;
/// @brief The execution context (defined in ffi.h).
class Context;

//===----------------------------------------------------------------------===//
// Ffi: the base of every handler
//===----------------------------------------------------------------------===//

/// @brief Base class of handlers and home of the binding entry points.
class Ffi {
 public:
  /// @brief An empty binding: add `.Arg<T>()`, `.Ret<T>()`, `.Attr<T>(name)`,
  /// `.Attrs<T>()`, `.Ctx<T>()`, then `.To(fn)`.
  template <ExecutionStage stage = ExecutionStage::kExecute>
  static Binding<stage> Bind();

  /// @brief An empty binding for the instantiate stage.
  static Binding<ExecutionStage::kInstantiate> BindInstantiate();
  /// @brief An empty binding for the prepare stage.
  static Binding<ExecutionStage::kPrepare> BindPrepare();
  /// @brief An empty binding for the initialize stage.
  static Binding<ExecutionStage::kInitialize> BindInitialize();
  /// @brief An empty binding for the execute stage.
  static Binding<ExecutionStage::kExecute> BindExecute();
  /// @brief An empty binding for the record stage: does not compile in a
  /// cyxla guest (command-buffer recording is GPU-only).
  template <typename Tag = void>
  static auto BindRecord() {
    static_assert(!std::is_same_v<Tag, Tag>,
                  "the RECORD execution stage (xla::ffi::Ffi::BindRecord) is not supported "
                  "in the cyxla sandbox: it records GPU command buffers, and the cyxla host "
                  "calls a guest only to execute");
    // (Dependent on Tag, so that nothing is instantiated before a use.)
    using RecordBinding =
        std::conditional_t<std::is_same_v<Tag, Tag>, Binding<ExecutionStage::kRecord>, void>;
    return RecordBinding();
  }

  /// @brief Infers the binding from `fn`'s parameter types and binds it.
  template <typename Fn, ExecutionStage stage = ExecutionStage::kExecute>
  static auto BindTo(Fn fn, std::initializer_list<Traits> traits = {});

  virtual ~Ffi() = default;

  /// @brief Decodes the frame and calls the bound function.
  virtual XLA_FFI_Error* Call(XLA_FFI_CallFrame* call_frame) const = 0;

  /// @brief Registers a bundle through `api` (in a guest the host refuses:
  /// UNIMPLEMENTED; declare targets with CYXLA_TARGET instead).
  static XLA_FFI_Error* RegisterStaticHandler(const XLA_FFI_Api* api,
                                              std::string_view name,
                                              std::string_view platform,
                                              XLA_FFI_Handler_Bundle bundle,
                                              XLA_FFI_Handler_Traits traits = 0);

  /// @brief Registers an execute-only handler through `api` (see above).
  static XLA_FFI_Error* RegisterStaticHandler(const XLA_FFI_Api* api,
                                              std::string_view name,
                                              std::string_view platform,
                                              XLA_FFI_Handler* execute,
                                              XLA_FFI_Handler_Traits traits = 0) {
    return RegisterStaticHandler(
        api, name, platform,
        XLA_FFI_Handler_Bundle{nullptr, nullptr, nullptr, execute, nullptr}, traits);
  }

  /// @brief Registers a type for State and UserData; fills `type_id`.
  static XLA_FFI_Error* RegisterTypeId(const XLA_FFI_Api* api, std::string_view name,
                                       XLA_FFI_TypeId* type_id,
                                       XLA_FFI_TypeInfo type_info);

  /// @brief Registers a type for State and UserData; fills `type_id`.
  static XLA_FFI_Error* RegisterTypeId(const XLA_FFI_Api* api, std::string_view name,
                                       XLA_FFI_TypeId* type_id,
                                       const XLA_FFI_TypeInfo* type_info);

  /// @brief Turns a function pointer into a compile-time callable.
  template <auto fn>
  struct Wrapper;

  /// @brief Turns a function pointer into a compile-time callable.
  template <typename Ret, typename... Args, Ret (*fn)(Args...)>
  struct Wrapper<fn> {
    /// @brief Calls `fn`.
    XLA_FFI_ATTRIBUTE_ALWAYS_INLINE Ret operator()(Args... args) const {
      return fn(std::forward<Args>(args)...);
    }
  };

 protected:
  /// @brief Concatenates strings, integers and enums.
  template <typename... Args>
  static std::string StrCat(Args... args) {
    internal::StrBuf buf;
    (buf << ... << args);
    return std::move(buf).str();
  }

  /// @brief No error.
  static XLA_FFI_Error* Success() { return nullptr; }

  /// @brief An error with code `errc` and `message`, made through `api`.
  static XLA_FFI_Error* MakeError(const XLA_FFI_Api* api, XLA_FFI_Error_Code errc,
                                  std::string message) {
    XLA_FFI_Error_Create_Args args;
    args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.errc = errc;
    args.message = message.c_str();
    return api->XLA_FFI_Error_Create(&args);
  }

  /// @brief An INVALID_ARGUMENT error.
  static XLA_FFI_Error* InvalidArgument(const XLA_FFI_Api* api, std::string message) {
    return MakeError(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, std::move(message));
  }

  /// @brief A FAILED_PRECONDITION error.
  static XLA_FFI_Error* FailedPrecondition(const XLA_FFI_Api* api, std::string message) {
    return MakeError(api, XLA_FFI_Error_Code_FAILED_PRECONDITION, std::move(message));
  }

  /// @brief INVALID_ARGUMENT unless `actual == expected`.
  static XLA_FFI_Error* CheckStructSize(const XLA_FFI_Api* api,
                                        std::string_view struct_name,
                                        size_t expected, size_t actual) {
    if (XLA_FFI_PREDICT_FALSE(expected != actual)) {
      return InvalidArgument(
          api, StrCat("Unexpected ", struct_name, " size: expected ", expected,
                      " got ", actual, ". Check installed software versions."));
    }
    return nullptr;
  }

  /// @brief INVALID_ARGUMENT unless `actual >= expected`.
  static XLA_FFI_Error* StructSizeIsGreaterOrEqual(const XLA_FFI_Api* api,
                                                   std::string_view struct_name,
                                                   size_t expected, size_t actual) {
    if (XLA_FFI_PREDICT_FALSE(actual < expected)) {
      return InvalidArgument(
          api, StrCat("Unexpected ", struct_name, " size: expected at least ",
                      expected, " got ", actual,
                      ". Check installed software versions."));
    }
    return nullptr;
  }
};

inline XLA_FFI_Error* Ffi::RegisterStaticHandler(const XLA_FFI_Api* api,
                                                 std::string_view name,
                                                 std::string_view platform,
                                                 XLA_FFI_Handler_Bundle bundle,
                                                 XLA_FFI_Handler_Traits traits) {
  XLA_FFI_Handler_Register_Args args;
  args.struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.name = XLA_FFI_ByteSpan{name.data(), name.size()};
  args.platform = XLA_FFI_ByteSpan{platform.data(), platform.size()};
  args.bundle = bundle;
  args.traits = traits;
  return api->XLA_FFI_Handler_Register(&args);
}

inline XLA_FFI_Error* Ffi::RegisterTypeId(const XLA_FFI_Api* api, std::string_view name,
                                          XLA_FFI_TypeId* type_id,
                                          XLA_FFI_TypeInfo type_info) {
  return RegisterTypeId(api, name, type_id, &type_info);
}

inline XLA_FFI_Error* Ffi::RegisterTypeId(const XLA_FFI_Api* api, std::string_view name,
                                          XLA_FFI_TypeId* type_id,
                                          const XLA_FFI_TypeInfo* type_info) {
  CYXLA_FFI_ASSERT(type_id != nullptr, "RegisterTypeId: type_id must not be null");
  XLA_FFI_Type_Register_Args args;
  args.struct_size = XLA_FFI_Type_Register_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.name = XLA_FFI_ByteSpan{name.data(), name.size()};
  args.type_id = type_id;
  args.type_info = type_info;
  return api->XLA_FFI_Type_Register(&args);
}

namespace internal {

/// @brief Frees `error` through `api`.
inline void DestroyError(const XLA_FFI_Api* api, XLA_FFI_Error* error) {
  XLA_FFI_Error_Destroy_Args args;
  args.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.error = error;
  api->XLA_FFI_Error_Destroy(&args);
}

/// @brief The code and message of an error (XLA_FFI_Error_GetDetails).
struct ErrorDetails {
  XLA_FFI_Error_Code errc;  ///< The code.
  const char* message;      ///< Valid until the error is destroyed.
};

/// @brief The code and message of `error`.
inline ErrorDetails GetErrorDetails(const XLA_FFI_Api* api, XLA_FFI_Error* error) {
  XLA_FFI_Error_GetDetails_Args args;
  args.struct_size = XLA_FFI_Error_GetDetails_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.error = error;
  args.message = nullptr;
  args.errc = XLA_FFI_Error_Code_INTERNAL;
  api->XLA_FFI_Error_GetDetails(&args);
  return ErrorDetails{args.errc, args.message};
}

/// @brief The message of `error` (valid until it is destroyed).
inline const char* GetErrorMessage(const XLA_FFI_Api* api, XLA_FFI_Error* error) {
  return GetErrorDetails(api, error).message;
}

}  // namespace internal

/// @brief Context tag for the call's per-execution custom options, as a
/// Dictionary: `Ffi::Bind().Ctx<CustomOptions>()`. Separate from the static
/// attributes; in a cyxla guest always empty (the sandbox passes none).
struct CustomOptions {};

namespace internal {

//===----------------------------------------------------------------------===//
// Binding tags
//===----------------------------------------------------------------------===//

/// @brief Tag: a required argument of type T.
template <typename T>
struct ArgTag {};
/// @brief Tag: an optional argument of type T.
template <typename T>
struct OptionalArgTag {};
/// @brief Tag: all remaining arguments.
struct RemainingArgsTag {};
/// @brief Tag: a required result of type T.
template <typename T>
struct RetTag {};
/// @brief Tag: an optional result of type T.
template <typename T>
struct OptionalRetTag {};
/// @brief Tag: all remaining results.
struct RemainingRetsTag {};
/// @brief Tag: a named attribute of type T.
template <typename T>
struct AttrTag {};
/// @brief Tag: all attributes, as T (a Dictionary or a decoded struct).
template <typename T>
struct AttrsTag {};
/// @brief Tag: a value from the execution context.
template <typename T>
struct CtxTag {};

/// @brief Number of `Tag<...>` types in `Ts`.
template <template <typename> typename Tag, typename... Ts>
struct NumTagged;

template <template <typename> typename Tag>
struct NumTagged<Tag> {
  static constexpr int64_t value = 0;
};

template <template <typename> typename Tag, typename T, typename... Ts>
struct NumTagged<Tag, Tag<T>, Ts...> {
  static constexpr int64_t value = 1 + NumTagged<Tag, Ts...>::value;
};

template <template <typename> typename Tag, typename T, typename... Ts>
struct NumTagged<Tag, T, Ts...> {
  static constexpr int64_t value = NumTagged<Tag, Ts...>::value;
};

template <typename T>
struct IsOptionalArgTag : std::false_type {};
template <typename T>
struct IsOptionalArgTag<OptionalArgTag<T>> : std::true_type {};
template <typename T>
struct IsOptionalRetTag : std::false_type {};
template <typename T>
struct IsOptionalRetTag<OptionalRetTag<T>> : std::true_type {};

/// @brief Whether `Ts` has an optional argument.
template <typename... Ts>
using HasOptionalArgTag = std::disjunction<IsOptionalArgTag<Ts>...>;
/// @brief Whether `Ts` has remaining arguments.
template <typename... Ts>
using HasRemainingArgsTag = std::disjunction<std::is_same<RemainingArgsTag, Ts>...>;
/// @brief Whether `Ts` has an optional result.
template <typename... Ts>
using HasOptionalRetTag = std::disjunction<IsOptionalRetTag<Ts>...>;
/// @brief Whether `Ts` has remaining results.
template <typename... Ts>
using HasRemainingRetsTag = std::disjunction<std::is_same<RemainingRetsTag, Ts>...>;

/// @brief The data type of native type T (as XLA maps them).
template <typename T>
constexpr XLA_FFI_DataType NativeTypeToCApiDataType() {
  if constexpr (std::is_same_v<T, char>) {
    return XLA_FFI_DataType_U8;
  } else if constexpr (std::is_same_v<T, bool>) {
    return XLA_FFI_DataType_PRED;
  } else if constexpr (std::is_same_v<T, int8_t>) {
    return XLA_FFI_DataType_S8;
  } else if constexpr (std::is_same_v<T, int16_t>) {
    return XLA_FFI_DataType_S16;
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return XLA_FFI_DataType_S32;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return XLA_FFI_DataType_S64;
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return XLA_FFI_DataType_U8;
  } else if constexpr (std::is_same_v<T, uint16_t>) {
    return XLA_FFI_DataType_U16;
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    return XLA_FFI_DataType_U32;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return XLA_FFI_DataType_U64;
  } else if constexpr (std::is_same_v<T, float>) {
    return XLA_FFI_DataType_F32;
  } else if constexpr (std::is_same_v<T, double>) {
    return XLA_FFI_DataType_F64;
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    return XLA_FFI_DataType_C64;
  } else {
    static_assert(std::is_same_v<T, std::complex<double>>, "unsupported FFI data type");
    return XLA_FFI_DataType_C128;
  }
}

/// @brief `false`, dependent on T (for static_asserts in templates).
template <typename T>
struct DependentFalse : std::false_type {};

}  // namespace internal

//===----------------------------------------------------------------------===//
// Binding: the handler's signature
//===----------------------------------------------------------------------===//

/// @brief A handler signature under construction. Each method returns a
/// longer binding; `To(fn)` makes the handler.
template <ExecutionStage stage, typename... Ts>
class Binding {
  static_assert(stage != ExecutionStage::kRecord,
                "the RECORD execution stage (ExecutionStage::kRecord) is not supported "
                "in the cyxla sandbox: it records GPU command buffers, and the cyxla host "
                "calls a guest only to execute");

 public:
  /// @brief Adds an argument decoded as T.
  template <typename T>
  Binding<stage, Ts..., internal::ArgTag<T>> Arg() && {
    static_assert(!internal::HasOptionalArgTag<Ts...>::value,
                  "argument can't be passed after optional argument");
    static_assert(!internal::HasRemainingArgsTag<Ts...>::value,
                  "argument can't be passed after remaining arguments");
    return {std::move(*this)};
  }

  /// @brief Adds a result decoded as T (the function receives Result<T>).
  template <typename T>
  Binding<stage, Ts..., internal::RetTag<T>> Ret() && {
    static_assert(!internal::HasOptionalRetTag<Ts...>::value,
                  "result can't be passed after optional result");
    static_assert(!internal::HasRemainingRetsTag<Ts...>::value,
                  "result can't be passed after remaining results");
    return {std::move(*this)};
  }

  /// @brief Adds an optional argument (std::optional<T>).
  template <typename T>
  Binding<stage, Ts..., internal::OptionalArgTag<T>> OptionalArg() && {
    static_assert(!internal::HasRemainingArgsTag<Ts...>::value,
                  "optional argument can't be passed after remaining arguments");
    return {std::move(*this)};
  }

  /// @brief Adds an optional result (std::optional<Result<T>>).
  template <typename T>
  Binding<stage, Ts..., internal::OptionalRetTag<T>> OptionalRet() && {
    static_assert(!internal::HasRemainingRetsTag<Ts...>::value,
                  "optional result can't be passed after remaining results");
    return {std::move(*this)};
  }

  /// @brief Adds all remaining arguments (RemainingArgs).
  Binding<stage, Ts..., internal::RemainingArgsTag> RemainingArgs() && {
    static_assert(!internal::HasRemainingArgsTag<Ts...>::value,
                  "remaining arguments can be passed just once");
    return {std::move(*this)};
  }

  /// @brief Adds all remaining results (RemainingRets).
  Binding<stage, Ts..., internal::RemainingRetsTag> RemainingRets() && {
    static_assert(!internal::HasRemainingRetsTag<Ts...>::value,
                  "remaining results can be passed just once");
    return {std::move(*this)};
  }

  /// @brief Adds a value from the execution context (CtxDecoding<T>).
  template <typename T>
  Binding<stage, Ts..., internal::CtxTag<T>> Ctx() && {
    return {std::move(*this)};
  }

  /// @brief Adds the execution context itself.
  Binding<stage, Ts..., internal::CtxTag<Context>> Ctx() && {
    return {std::move(*this)};
  }

  /// @brief Adds the attribute `attr`, decoded as T.
  template <typename T>
  Binding<stage, Ts..., internal::AttrTag<T>> Attr(std::string attr) && {
    static_assert(internal::NumTagged<internal::AttrsTag, Ts...>::value == 0,
                  "dictionary attributes can't be mixed with regular ones");
    attrs_.push_back(std::move(attr));
    return {std::move(*this)};
  }

  /// @brief Adds all attributes, as T (default: Dictionary).
  template <typename T = Dictionary>
  Binding<stage, Ts..., internal::AttrsTag<T>> Attrs() && {
    static_assert(internal::NumTagged<internal::AttrTag, Ts...>::value == 0,
                  "dictionary attributes can't be mixed with regular ones");
    return {std::move(*this)};
  }

  /// @brief Makes the handler that decodes a frame by this binding and calls
  /// `fn`.
  template <typename Fn>
  std::unique_ptr<Handler<stage, Fn, Ts...>> To(Fn fn,
                                                std::initializer_list<Traits> traits = {}) {
    return std::unique_ptr<Handler<stage, Fn, Ts...>>(
        new Handler<stage, Fn, Ts...>(std::move(fn), traits, attrs_));
  }

 private:
  template <ExecutionStage, typename...>
  friend class Binding;
  friend class Ffi;

  explicit Binding() { static_assert(sizeof...(Ts) == 0, "arguments must be empty"); }

  template <typename... TTs>
  Binding(Binding<stage, TTs...>&& other)  // NOLINT
      : attrs_(std::move(other.attrs_)) {}

  Binding(Binding&) = delete;

  std::vector<std::string> attrs_;  // names of bound attributes, in order
};

template <ExecutionStage stage>
Binding<stage> Ffi::Bind() {
  return xla::ffi::Binding<stage>();
}

inline Binding<ExecutionStage::kInstantiate> Ffi::BindInstantiate() {
  return Bind<ExecutionStage::kInstantiate>();
}

inline Binding<ExecutionStage::kPrepare> Ffi::BindPrepare() {
  return Bind<ExecutionStage::kPrepare>();
}

inline Binding<ExecutionStage::kInitialize> Ffi::BindInitialize() {
  return Bind<ExecutionStage::kInitialize>();
}

inline Binding<ExecutionStage::kExecute> Ffi::BindExecute() {
  return Bind<ExecutionStage::kExecute>();
}


//===----------------------------------------------------------------------===//
// Inferring a binding from a function's parameter types
//===----------------------------------------------------------------------===//

/// @brief Specialize with `using Arg = T;` to bind parameter type T as an
/// argument.
template <typename T>
struct ArgBinding {
  using Arg = void;  ///< Not an argument.
};

/// @brief Specialize with `using Ret = T;` to bind parameter type T as a
/// result.
template <typename T>
struct RetBinding {
  using Ret = void;  ///< Not a result.
};

/// @brief Specialize with `using Attr = T;` and `static constexpr
/// std::string_view name()` to bind T as a named attribute.
template <typename T>
struct AttrBinding {
  using Attr = void;  ///< Not an attribute.
};

/// @brief Specialize with `using Attrs = T;` to bind T as all attributes.
template <typename T>
struct AttrsBinding {
  using Attrs = void;  ///< Not an attributes struct.
};

/// @brief Specialize with `using Ctx = C;` to bind T from the context.
template <typename T>
struct CtxBinding {
  using Ctx = void;  ///< Not a context value.
};

namespace internal {

template <typename Param>
inline constexpr bool is_arg_binding_v = !std::is_void_v<typename ArgBinding<Param>::Arg>;
template <typename Param>
inline constexpr bool is_ret_binding_v = !std::is_void_v<typename RetBinding<Param>::Ret>;
template <typename Param>
inline constexpr bool is_attr_binding_v = !std::is_void_v<typename AttrBinding<Param>::Attr>;
template <typename Param>
inline constexpr bool is_attrs_binding_v =
    !std::is_void_v<typename AttrsBinding<Param>::Attrs>;
template <typename Param>
inline constexpr bool is_ctx_binding_v = !std::is_void_v<typename CtxBinding<Param>::Ctx>;

/// @brief Binds `Params` one at a time, then `Fn`.
template <typename Fn, typename... Params>
struct BindOne;

template <typename Fn, typename Param, typename... Params>
struct BindOne<Fn, Param, Params...> {
  template <typename InFlightBinding>
  static auto To(Fn fn, InFlightBinding binding, std::initializer_list<Traits> traits) {
    if constexpr (is_arg_binding_v<Param>) {
      return BindOne<Fn, Params...>::To(
          std::move(fn),
          std::move(binding).template Arg<typename ArgBinding<Param>::Arg>(), traits);
    } else if constexpr (is_ret_binding_v<Param>) {
      return BindOne<Fn, Params...>::To(
          std::move(fn),
          std::move(binding).template Ret<typename RetBinding<Param>::Ret>(), traits);
    } else if constexpr (is_attr_binding_v<Param>) {
      return BindOne<Fn, Params...>::To(
          std::move(fn),
          std::move(binding).template Attr<typename AttrBinding<Param>::Attr>(
              std::string(AttrBinding<Param>::name())),
          traits);
    } else if constexpr (is_attrs_binding_v<Param>) {
      return BindOne<Fn, Params...>::To(
          std::move(fn),
          std::move(binding).template Attrs<typename AttrsBinding<Param>::Attrs>(),
          traits);
    } else if constexpr (is_ctx_binding_v<Param>) {
      return BindOne<Fn, Params...>::To(
          std::move(fn),
          std::move(binding).template Ctx<typename CtxBinding<Param>::Ctx>(), traits);
    } else {
      static_assert(DependentFalse<Param>::value, "parameter is not supported for binding");
    }
  }
};

template <typename Fn>
struct BindOne<Fn> {
  template <typename InFlightBinding>
  static auto To(Fn fn, InFlightBinding binding, std::initializer_list<Traits> traits) {
    return binding.To(std::move(fn), traits);
  }
};

template <ExecutionStage stage, typename Fn>
struct Bind;

template <ExecutionStage stage, typename ResultType, typename... Params>
struct Bind<stage, ResultType (*)(Params...)> {
  using Fn = ResultType (*)(Params...);
  static auto To(Fn fn, std::initializer_list<Traits> traits) {
    return BindOne<Fn, Params...>::To(std::move(fn), Ffi::Bind<stage>(), traits);
  }
};

template <ExecutionStage stage, typename ResultType, typename Fn, typename... Params>
struct Bind<stage, ResultType (Fn::*)(Params...) const> {
  static auto To(Fn fn, std::initializer_list<Traits> traits) {
    return BindOne<Fn, Params...>::To(std::move(fn), Ffi::Bind<stage>(), traits);
  }
};

}  // namespace internal

template <typename Fn, ExecutionStage stage>
auto Ffi::BindTo(Fn fn, std::initializer_list<Traits> traits) {
  if constexpr (std::is_pointer_v<Fn>) {
    return internal::Bind<stage, Fn>::To(fn, traits);
  } else {
    return internal::Bind<stage, decltype(&Fn::operator())>::To(std::move(fn), traits);
  }
}

/// @brief A result parameter: a T (usually a Buffer) to write into.
template <typename T>
class Result {
 public:
  /// @brief Wraps `value`.
  Result(T value) : value_(value) {}  // NOLINT
  /// @brief The wrapped value.
  T& operator*() { return value_; }
  /// @brief The wrapped value.
  const T& operator*() const { return value_; }
  /// @brief The wrapped value.
  T* operator->() { return &value_; }
  /// @brief The wrapped value.
  const T* operator->() const { return &value_; }

 private:
  T value_;
};

/// @brief An attribute parameter whose name is a compile-time string.
template <typename T, char const* attr_name>
class Attr {
 public:
  /// @brief Wraps `value`.
  Attr(T value) : value_(value) {}  // NOLINT
  /// @brief The wrapped value.
  T& operator*() { return value_; }
  /// @brief The wrapped value.
  T* operator->() { return &value_; }

 private:
  T value_;
};

/// @brief Binding of `Attr<T, name>` parameters.
template <typename T, const char* attr_name>
struct AttrBinding<Attr<T, attr_name>> {
  using Attr = T;  ///< Decoded as T.
  /// @brief The attribute's name.
  static constexpr std::string_view name() { return attr_name; }
};

/// @brief Binding of `Dictionary` parameters (all attributes).
template <>
struct AttrsBinding<Dictionary> {
  using Attrs = Dictionary;  ///< All attributes.
};

//===----------------------------------------------------------------------===//
// Decoding hooks (specialized in ffi.h and by users)
//===----------------------------------------------------------------------===//

/// @brief `static std::optional<T> Decode(XLA_FFI_ArgType, void*,
/// DiagnosticEngine&)` and `static bool Isa(XLA_FFI_ArgType, void*)`.
template <typename T>
struct ArgDecoding;

/// @brief `static std::optional<Result<T>> Decode(XLA_FFI_RetType, void*,
/// DiagnosticEngine&)` and `static bool Isa(XLA_FFI_RetType, void*)`.
template <typename T>
struct RetDecoding;

/// @brief `using Type = ...;`, `static std::optional<Type>
/// Decode(XLA_FFI_AttrType, void*, DiagnosticEngine&)` and optionally `Isa`.
template <typename T>
struct AttrDecoding;

/// @brief `using Type = ...;` and `static std::optional<Type> Decode(const
/// XLA_FFI_Api*, XLA_FFI_ExecutionContext*, DiagnosticEngine&)`.
template <typename T>
struct CtxDecoding;

/// @brief `static XLA_FFI_Error* Encode(const XLA_FFI_Api*,
/// XLA_FFI_ExecutionContext*, T)`: turns a handler's return value into an
/// FFI error (NULL on success).
template <ExecutionStage stage, typename T>
struct ResultEncoding;

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

class DiagnosticEngine;

/// @brief A diagnostic being built; appended to its engine when destroyed.
/// Converts to any empty std::optional, so decoders can
/// `return diagnostic.Emit("...") << x;`.
class InFlightDiagnostic {
 public:
  /// @brief Starts a diagnostic with text `s`.
  explicit InFlightDiagnostic(DiagnosticEngine* engine, std::string s) : engine_(engine) {
    buf_ << s;
  }
  InFlightDiagnostic(const InFlightDiagnostic&) = delete;
  InFlightDiagnostic& operator=(const InFlightDiagnostic&) = delete;

  ~InFlightDiagnostic();

  /// @brief Appends `arg`.
  template <typename Arg>
  InFlightDiagnostic& operator<<(Arg&& arg) {
    buf_ << std::forward<Arg>(arg);
    return *this;
  }

  /// @brief An empty optional (decoding failed).
  template <typename T>
  operator std::optional<T>() const {  // NOLINT
    return std::nullopt;
  }

 private:
  DiagnosticEngine* engine_;
  internal::StrBuf buf_;
};

/// @brief Collects the diagnostics of one decoding.
class DiagnosticEngine {
 public:
  DiagnosticEngine() = default;
  DiagnosticEngine(const DiagnosticEngine&) = delete;
  DiagnosticEngine& operator=(const DiagnosticEngine&) = delete;

  /// @brief Starts a diagnostic.
  InFlightDiagnostic Emit(std::string message) {
    return InFlightDiagnostic(this, std::move(message));
  }

  /// @brief All diagnostics, concatenated.
  std::string Result() const& { return acc_; }
  /// @brief All diagnostics, moved out.
  std::string Result() && { return std::exchange(acc_, {}); }

 private:
  friend class InFlightDiagnostic;
  void append(const std::string& s) { acc_.append(s); }
  std::string acc_;
};

inline InFlightDiagnostic::~InFlightDiagnostic() { engine_->append(buf_.str()); }

//===----------------------------------------------------------------------===//
// Buffers: the dynamic rank (0.5 moved it out of `internal`)
//===----------------------------------------------------------------------===//

/// @brief The rank of a buffer (or pattern) whose rank is not statically
/// known: it accepts any rank.
inline constexpr size_t kDynamicRank = std::numeric_limits<size_t>::max();

/// @brief Whether any of the ranks is kDynamicRank.
template <size_t rank, size_t... ranks>
constexpr bool IsDynamicRank() {
  return rank == kDynamicRank || ((ranks == kDynamicRank) || ...);
}

//===----------------------------------------------------------------------===//
// Buffer matching (XLA FFI 0.5): match::Buffer patterns, Verify, Match
//===----------------------------------------------------------------------===//

namespace internal {

/// @brief A sequence of values of an integral or enum type.
template <typename T, T... values>
struct ValueSequence {
  using ValueType = T;  ///< The type of the values.
  /// @brief Their number.
  static constexpr size_t size() { return sizeof...(values); }
};

}  // namespace internal

namespace match {

/// @brief Type-level set of the dtypes a pattern accepts (empty: any).
template <typename DType, DType... dtypes>
using DTypeSet = internal::ValueSequence<DType, dtypes...>;

/// @brief Type-level set of the ranks a pattern accepts (empty: any).
template <size_t... ranks>
using RankSet = internal::ValueSequence<size_t, ranks...>;

}  // namespace match

namespace internal {

/// @brief Reinterprets a buffer as a concrete `Buffer<dtype, rank>` once a
/// match has confirmed its dtype and rank (defined in ffi.h).
struct BufferCast;

/// @brief Prints one constraint value into a message.
template <typename T>
struct ValuePrinter {
  /// @brief Appends the value to a message.
  friend StrBuf& operator<<(StrBuf& buf, ValuePrinter printer) { return buf << printer.value; }
  T value;  ///< The value.
};

inline constexpr char kDType[] = "dtype";  ///< Name of the dtype constraint.
inline constexpr char kRank[] = "rank";    ///< Name of the rank constraint.

template <const char* name, typename Values>
class ValueSet;

/// @brief A set of accepted values of constraint `name`.
template <const char* name, typename T, T... values>
class ValueSet<name, ValueSequence<T, values...>> {
  using Values = ValueSequence<T, values...>;

 public:
  /// @brief std::nullopt if `value` is accepted, else why not.
  static std::optional<std::string> Match(T value) {
    if (XLA_FFI_PREDICT_TRUE(empty() || std::find(kValues.begin(), kValues.end(), value) !=
                                            kValues.end())) {
      return std::nullopt;
    }
    if (kValues.size() == 1) {
      return StrCat("expected ", name, " ", ValuePrinter<T>{kValues.front()}, " but got ",
                    ValuePrinter<T>{value});
    }
    StrBuf message;
    message << "expected " << name;
    message << " to be one of [" << ValuePrinter<T>{kValues.front()};
    for (size_t i = 1; i < kValues.size(); ++i) {
      message << ", " << ValuePrinter<T>{kValues[i]};
    }
    message << "] but got " << ValuePrinter<T>{value};
    return std::move(message).str();
  }

  /// @brief The constraint in words ("" if there is none).
  static std::string Describe() {
    StrBuf description;
    if (kValues.empty()) return std::move(description).str();
    description << name;
    if (kValues.size() == 1) {
      description << " " << ValuePrinter<T>{kValues.front()};
      return std::move(description).str();
    }
    description << " in [" << ValuePrinter<T>{kValues.front()};
    for (size_t i = 1; i < kValues.size(); ++i) {
      description << ", " << ValuePrinter<T>{kValues[i]};
    }
    description << "]";
    return std::move(description).str();
  }

  /// @brief Whether any value is accepted.
  static constexpr bool empty() { return Values::size() == 0; }

 private:
  static constexpr std::array<T, Values::size()> kValues = {values...};
};

template <typename Values>
using DTypeValues = ValueSet<kDType, Values>;  // NOLINT
template <typename Values>
using RankValues = ValueSet<kRank, Values>;  // NOLINT

template <typename DTypes, typename Ranks>
class BufferPatternBase;

}  // namespace internal

namespace match {

/// @brief Matches one dimension: any extent, a fixed one, or one captured
/// into an `int64_t` (equal extents wherever the same capture appears).
class DimPattern {
 public:
  /// @brief Any extent.
  DimPattern() = default;

  /// @brief Exactly `value`.
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
  DimPattern(T value) : value_(static_cast<int64_t>(value)) {  // NOLINT
    static_assert(sizeof(T) <= sizeof(int64_t),
                  "Integral dimension value must fit in 64-bit integer.");
  }

  /// @brief Any extent, written to `*value` after a successful match.
  DimPattern(int64_t* value) : value_(value) {  // NOLINT
    CYXLA_FFI_ASSERT(value != nullptr, "dimension capture must be non-null");
  }

  /// @brief std::nullopt if dimension `index` of extent `value` matches.
  std::optional<std::string> Match(int64_t value, size_t index) const {
    const int64_t* expected = std::get_if<int64_t>(&value_);
    if (XLA_FFI_PREDICT_TRUE(expected == nullptr || value == *expected)) {
      return std::nullopt;
    }
    return internal::StrCat("expected dimension ", index, " to be ", *expected, " but got ",
                            value);
  }

  /// @brief Writes `value` to the capture, if any.
  void Capture(int64_t value) const {
    if (auto capture = std::get_if<int64_t*>(&value_);
        XLA_FFI_PREDICT_FALSE(capture != nullptr)) {
      **capture = value;
    }
  }

  /// @brief The constraint in words.
  std::string Describe() const {
    if (auto value = std::get_if<int64_t>(&value_)) return internal::StrCat(*value);
    return std::holds_alternative<int64_t*>(value_) ? "any dimension (captured)"
                                                    : "any dimension";
  }

 private:
  template <typename, typename>
  friend class internal::BufferPatternBase;

  int64_t* capture() const {
    auto capture = std::get_if<int64_t*>(&value_);
    return capture == nullptr ? nullptr : *capture;
  }

  std::variant<std::monostate, int64_t, int64_t*> value_;
};

}  // namespace match

namespace internal {

/// @brief An immutable pattern of buffer metadata (dtype, rank, dimensions).
/// The dtype and rank sets are in its type, so that matching an AnyBuffer
/// against a pattern of one dtype and one rank gives a typed Buffer.
template <typename DTypes, typename Ranks>
class BufferPatternBase {
  using DType = typename DTypes::ValueType;

 public:
  BufferPatternBase() = default;

  /// @brief Accepts only these ranks.
  template <size_t rank, size_t... ranks>
  auto WithRank() const {
    static_assert(!IsDynamicRank<rank, ranks...>(),
                  "dynamic rank is represented by an empty rank set");
    using WithRankSet = match::RankSet<rank, ranks...>;
    return BufferPatternBase<DTypes, WithRankSet>(*this);
  }

  /// @brief Accepts only these dtypes.
  template <DType dtype, DType... dtypes>
  auto WithDType() const {
    using WithDTypeSet = match::DTypeSet<DType, dtype, dtypes...>;
    return BufferPatternBase<WithDTypeSet, Ranks>(*this);
  }

  /// @brief Accepts only `buffer`'s shape.
  template <typename Buffer>
  auto WithShapeOf(Buffer buffer) const {
    using Pattern = BufferPatternBase<DTypes, match::RankSet<>>;
    Pattern pattern(*this);
    auto dimensions = buffer.dimensions();
    pattern.rank_ = dimensions.size();
    pattern.dimensions_.assign(dimensions.begin(), dimensions.end());
    return pattern;
  }

  /// @brief Accepts only `buffer`'s dtype and shape.
  template <typename Buffer>
  auto Like(Buffer buffer) const {
    auto shape = WithShapeOf(buffer);
    using Pattern = BufferPatternBase<match::DTypeSet<DType>, match::RankSet<>>;
    Pattern pattern(shape);
    pattern.dtype_ = buffer.element_type();
    return pattern;
  }

  /// @brief Constrains every dimension, in order (the rank is their number).
  template <typename... Args,
            typename = std::enable_if_t<(std::is_convertible_v<Args, match::DimPattern> && ...)>>
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE auto WithDims(Args&&... dimensions) const {
    using WithRank = match::RankSet<sizeof...(Args)>;
    BufferPatternBase<DTypes, WithRank> pattern(*this);
    pattern.dimensions_ = {match::DimPattern(std::forward<Args>(dimensions))...};
    return pattern;
  }

  /// @brief Constrains dimension `index`, leaving the rest (and the rank) free.
  BufferPatternBase WithDim(size_t index, match::DimPattern dimension) const {
    BufferPatternBase pattern(*this);
    auto& dimensions = pattern.dimensions_;
    dimensions.resize(std::max(dimensions.size(), index + 1));
    dimensions[index] = std::move(dimension);
    return pattern;
  }

  /// @brief Constrains dimension `index`.
  template <size_t index>
  BufferPatternBase WithDim(match::DimPattern dimension) const {
    return WithDim(index, std::move(dimension));
  }

  /// @brief std::nullopt if `buffer` matches, else the first constraint it fails.
  template <typename Buffer>
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE std::optional<std::string> Match(Buffer buffer) const {
    if (auto error = DTypeValues<DTypes>::Match(buffer.element_type());
        XLA_FFI_PREDICT_FALSE(error.has_value())) {
      return error;
    }
    if (XLA_FFI_PREDICT_FALSE(dtype_.has_value() && buffer.element_type() != *dtype_)) {
      return StrCat("expected dtype ", ValuePrinter<DType>{*dtype_}, " but got ",
                    ValuePrinter<DType>{buffer.element_type()});
    }
    auto dimensions = buffer.dimensions();
    if (auto error = RankValues<Ranks>::Match(dimensions.size());
        XLA_FFI_PREDICT_FALSE(error.has_value())) {
      return error;
    }
    if (XLA_FFI_PREDICT_FALSE(rank_.has_value() && dimensions.size() != *rank_)) {
      return StrCat("expected rank ", *rank_, " but got ", dimensions.size());
    }
    if (XLA_FFI_PREDICT_FALSE(dimensions_.size() > dimensions.size())) {
      return StrCat("expected dimension ", dimensions_.size() - 1, " but buffer rank is ",
                    dimensions.size());
    }
    size_t count = dimensions_.size();
    for (size_t i = 0; i < count; ++i) {
      const match::DimPattern& dimension = dimensions_[i];
      if (auto error = dimension.Match(dimensions[i], i);
          XLA_FFI_PREDICT_FALSE(error.has_value())) {
        return error;
      }
      int64_t* capture = dimension.capture();
      if (XLA_FFI_PREDICT_TRUE(capture == nullptr)) continue;
      for (size_t j = 0; j < i; ++j) {
        if (dimensions_[j].capture() != capture) continue;
        if (dimensions[i] == dimensions[j]) break;
        return StrCat("expected dimension ", i, " to be ", dimensions[j], " but got ",
                      dimensions[i]);
      }
    }
    return std::nullopt;
  }

  /// @brief Writes `buffer`'s extents to the captures.
  template <typename Buffer>
  void Capture(Buffer buffer) const {
    auto dimensions = buffer.dimensions();
    size_t count = std::min(dimensions_.size(), dimensions.size());
    for (size_t i = 0; i < count; ++i) dimensions_[i].Capture(dimensions[i]);
  }

  /// @brief The pattern in words.
  std::string Describe() const {
    StrBuf description;
    description << "a buffer";
    if (!DTypeValues<DTypes>::empty()) {
      description << " with " << DTypeValues<DTypes>::Describe();
    }
    if (dtype_.has_value()) description << " with dtype " << ValuePrinter<DType>{*dtype_};
    if (!RankValues<Ranks>::empty()) description << " with " << RankValues<Ranks>::Describe();
    if (rank_.has_value()) description << " with rank " << *rank_;
    if (!dimensions_.empty()) {
      description << " with dimensions [";
      for (size_t i = 0; i < dimensions_.size(); ++i) {
        if (i != 0) description << ", ";
        description << dimensions_[i].Describe();
      }
      description << "]";
    }
    return std::move(description).str();
  }

 private:
  template <typename, typename>
  friend class BufferPatternBase;

  template <typename OtherDTypes, typename OtherRanks>
  explicit BufferPatternBase(const BufferPatternBase<OtherDTypes, OtherRanks>& other)
      : dtype_(other.dtype_), rank_(other.rank_), dimensions_(other.dimensions_) {
    // A constraint is either in the type or at run time, never both.
    if constexpr (DTypes::size() != 0) dtype_.reset();
    if constexpr (Ranks::size() != 0) rank_.reset();
  }

  std::optional<DType> dtype_;
  std::optional<size_t> rank_;
  std::vector<match::DimPattern> dimensions_;
};

}  // namespace internal

namespace match {

/// @brief Any extent.
inline DimPattern Dim() { return DimPattern(); }
/// @brief Exactly `value`.
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
inline DimPattern Dim(T value) {
  return DimPattern(value);
}
/// @brief Any extent, captured into `*value`.
inline DimPattern Dim(int64_t* value) { return DimPattern(value); }

}  // namespace match

namespace internal {

/// @brief std::nullopt if `buffer` matches `pattern` (then the captures are
/// written), else XLA's message naming the buffer.
template <typename Buffer, typename Pattern>
XLA_FFI_ATTRIBUTE_ALWAYS_INLINE std::optional<std::string> TryMatchBuffer(
    std::string_view name, Buffer buffer, const Pattern& pattern) {
  if (auto error = pattern.Match(buffer); XLA_FFI_PREDICT_FALSE(error.has_value())) {
    return StrCat("Buffer '", name, "' failed to match ", pattern.Describe(), ": ", *error);
  }
  pattern.Capture(buffer);
  return std::nullopt;
}

/// @brief OK, or INVALID_ARGUMENT with TryMatchBuffer's message.
template <typename ErrorPolicy, typename Buffer, typename Pattern>
XLA_FFI_ATTRIBUTE_ALWAYS_INLINE typename ErrorPolicy::Status VerifyBuffer(
    std::string_view name, Buffer buffer, const Pattern& pattern) {
  if (auto error = TryMatchBuffer(name, buffer, pattern);
      XLA_FFI_PREDICT_FALSE(error.has_value())) {
    return ErrorPolicy::FromErrorCode(XLA_FFI_Error_Code_INVALID_ARGUMENT, *error);
  }
  return ErrorPolicy::Ok();
}

/// @brief `on_match(buffer)`, or INVALID_ARGUMENT with TryMatchBuffer's message.
template <typename ErrorPolicy, typename T, typename Buffer, typename Pattern,
          typename OnMatch>
XLA_FFI_ATTRIBUTE_ALWAYS_INLINE typename ErrorPolicy::template StatusOr<T> MatchBuffer(
    std::string_view name, Buffer buffer, const Pattern& pattern, OnMatch&& on_match) {
  using Result = typename ErrorPolicy::template StatusOr<T>;
  if (auto error = TryMatchBuffer(name, buffer, pattern);
      XLA_FFI_PREDICT_FALSE(error.has_value())) {
    return Result(ErrorPolicy::FromErrorCode(XLA_FFI_Error_Code_INVALID_ARGUMENT, *error));
  }
  return Result(std::forward<OnMatch>(on_match)(buffer));
}

}  // namespace internal

//===----------------------------------------------------------------------===//
// Extensions of the invoke context (XLA FFI 0.5)
//===----------------------------------------------------------------------===//

namespace internal {

/// @brief Whether T defines `static bool Support(int32_t major, int32_t minor)`.
template <typename T, typename = void>
struct HasExtensionSupport : std::false_type {};
template <typename T>
struct HasExtensionSupport<
    T, std::enable_if_t<std::is_same_v<decltype(T::Support), bool(int32_t, int32_t)>>>
    : std::true_type {};

}  // namespace internal

/// @brief Context tag for a C API extension of the invoke context, decoded
/// as `T::Type` (see XLA's api.h for what T defines). A cyxla guest's
/// context has no extension: the decoding fails with XLA's diagnostic
/// "Extension <name> not found in context".
template <typename T>
struct Extension {};

/// @brief Decodes `Extension<T>` through XLA_FFI_InvokeContext_FindExtension.
template <typename T>
struct CtxDecoding<Extension<T>> {
  using Type = typename T::Type;  ///< What T makes of the extension.

  /// @brief The decoded extension, or a diagnostic.
  static std::optional<Type> Decode(const XLA_FFI_Api* api, XLA_FFI_InvokeContext* ctx,
                                    DiagnosticEngine& diagnostic) {
    XLA_FFI_InvokeContext_FindExtension_Args args;
    args.struct_size = XLA_FFI_InvokeContext_FindExtension_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.ctx = ctx;
    args.extension_type = T::kExtensionType;
    args.extension = nullptr;

    XLA_FFI_Error* error = api->XLA_FFI_InvokeContext_FindExtension(&args);
    if (error != nullptr) {
      diagnostic.Emit("Failed to find extension ")
          << T::kName << ": " << internal::GetErrorMessage(api, error);
      internal::DestroyError(api, error);
      return std::nullopt;
    }
    if (args.extension == nullptr) {
      diagnostic.Emit("Extension ") << T::kName << " not found in context";
      return std::nullopt;
    }
    const auto emit_version_mismatch = [&]() {
      diagnostic.Emit("Extension version mismatch for ")
          << T::kName << ": actual(" << args.extension->id.major_version << "."
          << args.extension->id.minor_version << ") vs current(" << T::kMajorVersion << "."
          << T::kMinorVersion << ")";
    };
    if constexpr (internal::HasExtensionSupport<T>::value) {
      if (!T::Support(args.extension->id.major_version, args.extension->id.minor_version)) {
        emit_version_mismatch();
        return std::nullopt;
      }
    } else {
      if (args.extension->id.major_version != T::kMajorVersion ||
          args.extension->id.minor_version != T::kMinorVersion) {
        emit_version_mismatch();
        return std::nullopt;
      }
    }
    return T::Create(api, reinterpret_cast<const typename T::CExtension*>(args.extension));
  }
};

/// @brief The header of an extension struct of type T (its `CExtension`).
template <typename T>
inline XLA_FFI_Extension MakeExtensionHeader() {
  return XLA_FFI_Extension{
      /*.struct_size=*/sizeof(typename T::CExtension),
      /*.id=*/
      XLA_FFI_ExtensionId{/*extension_type=*/T::kExtensionType,
                          /*major_version=*/T::kMajorVersion,
                          /*minor_version=*/T::kMinorVersion},
      /*.next=*/nullptr,
  };
}

namespace internal {

/// @brief Decodes the call's custom options (XLA_FFI_CustomOptions_Get) as
/// a Dictionary. In a cyxla guest they are always empty.
template <typename Dictionary>
struct CustomOptionsDecoding {
  using Type = Dictionary;  ///< The options.

  /// @brief The options, or a diagnostic.
  static std::optional<Type> Decode(const XLA_FFI_Api* api, XLA_FFI_InvokeContext* ctx,
                                    DiagnosticEngine& diagnostic) {
    if (api->struct_size < XLA_FFI_STRUCT_SIZE(XLA_FFI_Api, XLA_FFI_CustomOptions_Get) ||
        api->XLA_FFI_CustomOptions_Get == nullptr) {
      return diagnostic.Emit("Custom options are not supported by this FFI API");
    }
    XLA_FFI_CustomOptions_Get_Args args = {XLA_FFI_CustomOptions_Get_Args_STRUCT_SIZE, nullptr,
                                           ctx, nullptr};
    if (XLA_FFI_Error* error = api->XLA_FFI_CustomOptions_Get(&args)) {
      diagnostic.Emit("Failed to get custom options: ") << GetErrorMessage(api, error);
      DestroyError(api, error);
      return std::nullopt;
    }
    return Dictionary(args.attrs);
  }
};

}  // namespace internal

//===----------------------------------------------------------------------===//
// Decoding the frame
//===----------------------------------------------------------------------===//

namespace internal {

/// @brief How many arguments, results and attributes were decoded so far.
struct DecodingOffsets {
  int64_t args = 0;   ///< Arguments.
  int64_t rets = 0;   ///< Results.
  int64_t attrs = 0;  ///< Attributes.
};

/// @brief What decoders need: the frame and the bound attribute names.
struct DecodingContext {
  XLA_FFI_CallFrame* call_frame;  ///< The frame.
  const std::string* attrs_names; ///< Bound names, in binding order.
  const std::size_t* attrs_idx;   ///< Their indices in the sorted names.
};

/// @brief Decodes one bound parameter.
template <typename T>
struct Decode;

template <typename T>
struct Decode<ArgTag<T>> {
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<T> call(
      DecodingOffsets& offsets, DecodingContext& ctx, DiagnosticEngine& diagnostic) {
    int64_t idx = offsets.args++;
    return ArgDecoding<T>::Decode(ctx.call_frame->args.types[idx],
                                  ctx.call_frame->args.args[idx], diagnostic);
  }
};

template <typename T>
struct Decode<OptionalArgTag<T>> {
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<std::optional<T>> call(
      DecodingOffsets& offsets, DecodingContext& ctx, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(offsets.args >= ctx.call_frame->args.size)) {
      return std::optional<T>(std::nullopt);
    }
    return Decode<ArgTag<T>>::call(offsets, ctx, diagnostic);
  }
};

template <typename T>
struct Decode<RetTag<T>> {
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Result<T>> call(
      DecodingOffsets& offsets, DecodingContext& ctx, DiagnosticEngine& diagnostic) {
    int64_t idx = offsets.rets++;
    return RetDecoding<T>::Decode(ctx.call_frame->rets.types[idx],
                                  ctx.call_frame->rets.rets[idx], diagnostic);
  }
};

template <typename T>
struct Decode<OptionalRetTag<T>> {
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<std::optional<Result<T>>> call(
      DecodingOffsets& offsets, DecodingContext& ctx, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(offsets.rets >= ctx.call_frame->rets.size)) {
      return std::optional<Result<T>>(std::nullopt);
    }
    return Decode<RetTag<T>>::call(offsets, ctx, diagnostic);
  }
};

template <typename T>
struct Decode<AttrTag<T>> {
  using R = typename AttrDecoding<T>::Type;

  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<R> call(
      DecodingOffsets& offsets, DecodingContext& ctx, DiagnosticEngine& diagnostic) {
    // The i-th bound attribute is expected at its index among the sorted
    // bound names (the frame sorts attributes by name).
    int64_t i = offsets.attrs++;
    size_t idx = ctx.attrs_idx[i];

    XLA_FFI_AttrType attr_type = ctx.call_frame->attrs.types[idx];
    XLA_FFI_ByteSpan* attr_name = ctx.call_frame->attrs.names[idx];
    void* attr = ctx.call_frame->attrs.attrs[idx];

    std::string_view got(attr_name->ptr, attr_name->len);
    if (XLA_FFI_PREDICT_FALSE(got != ctx.attrs_names[i])) {
      return diagnostic.Emit("Attribute name mismatch: ")
             << got << " vs " << ctx.attrs_names[i];
    }
    return AttrDecoding<T>::Decode(attr_type, attr, diagnostic);
  }
};

template <typename T>
struct Decode<CtxTag<T>> {
  using R = typename CtxDecoding<T>::Type;

  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<R> call(
      DecodingOffsets&, DecodingContext& ctx, DiagnosticEngine& diagnostic) {
    return CtxDecoding<T>::Decode(ctx.call_frame->api, ctx.call_frame->ctx, diagnostic);
  }
};

//===----------------------------------------------------------------------===//
// Bases of RemainingArgs, RemainingRets, Dictionary and Context
//===----------------------------------------------------------------------===//

/// @brief The arguments from `offset` on.
class RemainingArgsBase {
 public:
  /// @brief Arguments `offset..` of `args`.
  RemainingArgsBase(const XLA_FFI_Args* args, size_t offset) : args_(args), offset_(offset) {
    CYXLA_FFI_ASSERT(static_cast<int64_t>(offset) <= args_->size,
                     "illegal remaining args offset");
  }

  /// @brief Whether remaining argument `index` decodes as T.
  template <typename T>
  bool isa(size_t index) const {
    size_t idx = offset() + index;
    CYXLA_FFI_ASSERT(static_cast<int64_t>(idx) < args_->size,
                     "illegal remaining args index");
    return ArgDecoding<T>::Isa(args_->types[idx], args_->args[idx]);
  }

  /// @brief Number of remaining arguments.
  size_t size() const { return static_cast<size_t>(args_->size) - offset_; }
  /// @brief Whether there are none.
  bool empty() const { return size() == 0; }

 protected:
  /// @brief All arguments.
  const XLA_FFI_Args* args() const { return args_; }
  /// @brief Index of the first remaining one.
  size_t offset() const { return offset_; }

 private:
  const XLA_FFI_Args* args_;
  size_t offset_;
};

/// @brief The results from `offset` on.
class RemainingRetsBase {
 public:
  /// @brief Results `offset..` of `rets`.
  RemainingRetsBase(const XLA_FFI_Rets* rets, size_t offset) : rets_(rets), offset_(offset) {
    CYXLA_FFI_ASSERT(static_cast<int64_t>(offset) <= rets_->size,
                     "illegal remaining rets offset");
  }

  /// @brief Whether remaining result `index` decodes as T.
  template <typename T>
  bool isa(size_t index) const {
    size_t idx = offset_ + index;
    CYXLA_FFI_ASSERT(static_cast<int64_t>(idx) < rets_->size,
                     "illegal remaining rets index");
    return RetDecoding<T>::Isa(rets_->types[idx], rets_->rets[idx]);
  }

  /// @brief Number of remaining results.
  size_t size() const { return static_cast<size_t>(rets_->size) - offset_; }
  /// @brief Whether there are none.
  bool empty() const { return size() == 0; }

 protected:
  /// @brief All results.
  const XLA_FFI_Rets* rets() const { return rets_; }
  /// @brief Index of the first remaining one.
  size_t offset() const { return offset_; }

 private:
  const XLA_FFI_Rets* rets_;
  size_t offset_;
};

template <typename T, typename... Ts>
struct DecodeDictionaryAttr;

/// @brief Attributes by name (sorted; binary search).
class DictionaryBase {
 public:
  /// @brief A view of `attrs`.
  explicit DictionaryBase(const XLA_FFI_Attrs* attrs) : attrs_(attrs) {}

  /// @brief Iterates over the attribute names.
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;  ///< Forward.
    using difference_type = ptrdiff_t;                    ///< Distance.
    using value_type = std::string_view;                  ///< A name.

    /// @brief Same position.
    bool operator==(const Iterator& it) const { return idx_ == it.idx_; }
    /// @brief Different position.
    bool operator!=(const Iterator& it) const { return idx_ != it.idx_; }
    /// @brief The name here.
    std::string_view operator*() const {
      return std::string_view{attrs_->names[idx_]->ptr, attrs_->names[idx_]->len};
    }
    /// @brief Advances.
    Iterator& operator++() {
      ++idx_;
      return *this;
    }

   private:
    friend class DictionaryBase;
    Iterator(const XLA_FFI_Attrs* attrs, size_t idx) : attrs_(attrs), idx_(idx) {}
    const XLA_FFI_Attrs* attrs_;
    size_t idx_ = 0;
  };

  /// @brief Number of attributes.
  size_t size() const { return static_cast<size_t>(attrs_->size); }
  /// @brief Whether there are none.
  bool empty() const { return size() == 0; }
  /// @brief Whether `name` is present.
  bool contains(std::string_view name) const { return Find(name).has_value(); }
  /// @brief The first name.
  Iterator begin() const { return Iterator(attrs_, 0); }
  /// @brief Past the last name.
  Iterator end() const { return Iterator(attrs_, size()); }

  /// @brief Whether `name` is present and decodes as T.
  template <typename T>
  bool contains(std::string_view name) const {
    std::optional<size_t> idx = Find(name);
    if (XLA_FFI_PREDICT_FALSE(!idx.has_value())) return false;
    return AttrDecoding<T>::Isa(attrs_->types[*idx], attrs_->attrs[*idx]);
  }

  /// @brief Whether the attribute at `it` decodes as T.
  template <typename T>
  bool isa(const Iterator& it) const {
    return AttrDecoding<T>::Isa(attrs_->types[it.idx_], attrs_->attrs[it.idx_]);
  }

 protected:
  template <typename T, typename... Ts>
  friend struct DecodeDictionaryAttr;

  /// @brief Decodes the attribute at `it` as T.
  template <typename T>
  std::optional<T> get(const Iterator& it, DiagnosticEngine& diagnostic) const {
    return AttrDecoding<T>::Decode(attrs_->types[it.idx_], attrs_->attrs[it.idx_],
                                   diagnostic);
  }

  /// @brief Decodes attribute `name` as T.
  template <typename T>
  std::optional<T> get(std::string_view name, DiagnosticEngine& diagnostic) const {
    std::optional<size_t> idx = Find(name);
    if (XLA_FFI_PREDICT_FALSE(!idx.has_value())) {
      return diagnostic.Emit("Unexpected attribute: ") << name;
    }
    return AttrDecoding<T>::Decode(attrs_->types[*idx], attrs_->attrs[*idx], diagnostic);
  }

 private:
  std::optional<size_t> Find(std::string_view name) const {
    // Empty dictionaries can have null backing arrays.
    if (attrs_->size == 0) return std::nullopt;
    XLA_FFI_ByteSpan** begin = attrs_->names;
    XLA_FFI_ByteSpan** end = begin + attrs_->size;
    auto lt = [](XLA_FFI_ByteSpan* a, std::string_view b) {
      return std::string_view{a->ptr, a->len} < b;
    };
    XLA_FFI_ByteSpan** it = std::lower_bound(begin, end, name, lt);
    if (it == end || std::string_view{(*it)->ptr, (*it)->len} != name) {
      return std::nullopt;
    }
    return static_cast<size_t>(it - begin);
  }

  const XLA_FFI_Attrs* attrs_;
};

}  // namespace internal

/// @brief All attributes decoded as T (via AttrDecoding<T>, e.g. a struct
/// registered with XLA_FFI_REGISTER_STRUCT_ATTR_DECODING).
template <typename T>
struct internal::Decode<internal::AttrsTag<T>> {
  /// @brief Decodes the frame's attributes as a dictionary of type T.
  static std::optional<T> call(DecodingOffsets&, DecodingContext& ctx,
                               DiagnosticEngine& diagnostic) {
    return AttrDecoding<T>::Decode(XLA_FFI_AttrType_DICTIONARY, &ctx.call_frame->attrs,
                                   diagnostic);
  }
};

namespace internal {

/// @brief The API table and execution context of a call.
class ContextBase {
 public:
  /// @brief A view of `api` and `ctx`.
  ContextBase(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx) : api_(api), ctx_(ctx) {}
  /// @brief The API table.
  const XLA_FFI_Api* api() const { return api_; }
  /// @brief The execution context.
  XLA_FFI_ExecutionContext* ctx() const { return ctx_; }

 protected:
  /// @brief Decodes a context value of type T.
  template <typename T>
  std::optional<typename CtxDecoding<T>::Type> get(DiagnosticEngine& diagnostic) const {
    return CtxDecoding<T>::Decode(api_, ctx_, diagnostic);
  }

 private:
  const XLA_FFI_Api* api_;
  XLA_FFI_ExecutionContext* ctx_;
};

}  // namespace internal

class RemainingArgs;
class RemainingRets;

namespace internal {

/// @brief The type the bound function receives for tag T.
template <typename T>
struct FnArgType;

template <typename T>
struct FnArgType<ArgTag<T>> {
  using Type = T;
};
template <typename T>
struct FnArgType<OptionalArgTag<T>> {
  using Type = std::optional<T>;
};
template <>
struct FnArgType<RemainingArgsTag> {
  using Type = RemainingArgs;
};
template <typename T>
struct FnArgType<RetTag<T>> {
  using Type = Result<T>;
};
template <typename T>
struct FnArgType<OptionalRetTag<T>> {
  using Type = std::optional<Result<T>>;
};
template <>
struct FnArgType<RemainingRetsTag> {
  using Type = RemainingRets;
};
template <typename T>
struct FnArgType<AttrTag<T>> {
  using Type = typename AttrDecoding<T>::Type;
};
template <typename T>
struct FnArgType<AttrsTag<T>> {
  using Type = T;
};
template <typename T>
struct FnArgType<CtxTag<T>> {
  using Type = typename CtxDecoding<T>::Type;
};

/// @brief Whether a result encoding creates a state (has
/// `static XLA_FFI_TypeId state_type_id(const XLA_FFI_Api*)`).
template <typename Encoding, typename = void>
struct IsStateConstructor : std::false_type {};

template <typename Encoding>
struct IsStateConstructor<
    Encoding, std::enable_if_t<std::is_same_v<
                  XLA_FFI_TypeId,
                  decltype(Encoding::state_type_id(std::declval<const XLA_FFI_Api*>()))>>>
    : std::true_type {};

template <typename Encoding>
static constexpr bool is_state_constructor_v = IsStateConstructor<Encoding>::value;

}  // namespace internal

//===----------------------------------------------------------------------===//
// Handler: decodes a frame and calls the bound function
//===----------------------------------------------------------------------===//

/// @brief A handler made by `Binding::To`: checks the frame, decodes every
/// bound parameter, calls `Fn` and encodes its result.
template <ExecutionStage stage, typename Fn, typename... Ts>
class Handler : public Ffi {
  static constexpr int64_t kSize = sizeof...(Ts);
  static constexpr int64_t kNumArgs = internal::NumTagged<internal::ArgTag, Ts...>::value;
  static constexpr int64_t kNumOptionalArgs =
      internal::NumTagged<internal::OptionalArgTag, Ts...>::value;
  static constexpr int64_t kNumRets = internal::NumTagged<internal::RetTag, Ts...>::value;
  static constexpr int64_t kNumOptionalRets =
      internal::NumTagged<internal::OptionalRetTag, Ts...>::value;
  static constexpr int64_t kNumAttrs = internal::NumTagged<internal::AttrTag, Ts...>::value;
  static constexpr int64_t kNumDictAttrs =
      internal::NumTagged<internal::AttrsTag, Ts...>::value;

  static_assert(kNumAttrs == 0 || kNumDictAttrs == 0,
                "dictionary attributes can't be mixed with regular ones");

  template <typename T>
  using FnArgType = typename internal::FnArgType<T>::Type;

  static_assert(std::is_invocable_v<Fn, FnArgType<Ts>...>,
                "FFI binding signature is not compatible with a function type");

  using ResultType = std::invoke_result_t<Fn, FnArgType<Ts>...>;

 public:
  /// @brief Handles one frame (the checks and messages are XLA's).
  XLA_FFI_Error* Call(XLA_FFI_CallFrame* call_frame) const override {
    if (XLA_FFI_Error* err = CheckStructSize(call_frame->api, "XLA_FFI_CallFrame",
                                             XLA_FFI_CallFrame_STRUCT_SIZE,
                                             call_frame->struct_size);
        XLA_FFI_PREDICT_FALSE(err)) {
      return err;
    }

    // A metadata probe: answer it and touch nothing else.
    if (XLA_FFI_PREDICT_FALSE(call_frame->extension_start != nullptr &&
                              call_frame->extension_start->type ==
                                  XLA_FFI_Extension_Metadata)) {
      return PopulateMetadata(
          call_frame->api,
          reinterpret_cast<XLA_FFI_Metadata_Extension*>(call_frame->extension_start));
    }

    if (XLA_FFI_PREDICT_FALSE(call_frame->stage !=
                              static_cast<XLA_FFI_ExecutionStage>(stage))) {
      return InvalidArgument(
          call_frame->api,
          StrCat("Wrong execution stage: expected `",
                 static_cast<XLA_FFI_ExecutionStage>(stage), "` but got `",
                 call_frame->stage, "`"));
    }

    if constexpr (internal::HasRemainingArgsTag<Ts...>::value) {
      if (XLA_FFI_PREDICT_FALSE(call_frame->args.size < kNumArgs)) {
        return InvalidArgument(
            call_frame->api,
            StrCat("[", call_frame->stage, "] ",
                   "Wrong number of arguments: expected at least ",
                   kNumArgs - kNumOptionalArgs - 1, " but got ", call_frame->args.size));
      }
    } else if constexpr (internal::HasOptionalArgTag<Ts...>::value) {
      if (XLA_FFI_PREDICT_FALSE(call_frame->args.size < kNumArgs)) {
        return InvalidArgument(
            call_frame->api,
            StrCat("[", call_frame->stage, "] ",
                   "Wrong number of arguments: expected at least ",
                   kNumArgs - kNumOptionalArgs, " but got ", call_frame->args.size));
      }
    } else {
      if (XLA_FFI_PREDICT_FALSE(call_frame->args.size != kNumArgs && kNumArgs > 0)) {
        return InvalidArgument(
            call_frame->api,
            StrCat("[", call_frame->stage, "] ", "Wrong number of arguments: expected ",
                   kNumArgs, " but got ", call_frame->args.size));
      }
    }

    if constexpr (internal::HasRemainingRetsTag<Ts...>::value) {
      if (XLA_FFI_PREDICT_FALSE(call_frame->rets.size < kNumRets)) {
        return InvalidArgument(
            call_frame->api,
            StrCat("[", call_frame->stage, "] ",
                   "Wrong number of results: expected at least ",
                   kNumRets - kNumOptionalRets - 1, " but got ", call_frame->rets.size));
      }
    } else if constexpr (internal::HasOptionalRetTag<Ts...>::value) {
      if (XLA_FFI_PREDICT_FALSE(call_frame->rets.size < kNumRets)) {
        return InvalidArgument(
            call_frame->api,
            StrCat("[", call_frame->stage, "] ",
                   "Wrong number of results: expected at least ",
                   kNumRets - kNumOptionalRets, " but got ", call_frame->rets.size));
      }
    } else {
      if (XLA_FFI_PREDICT_FALSE(call_frame->rets.size != kNumRets && kNumRets > 0)) {
        return InvalidArgument(
            call_frame->api,
            StrCat("[", call_frame->stage, "] ", "Wrong number of results: expected ",
                   kNumRets, " but got ", call_frame->rets.size));
      }
    }

    // Individually bound attributes must match the frame's one for one;
    // a dictionary binding takes whatever is there.
    if (XLA_FFI_PREDICT_FALSE(kNumDictAttrs == 0 && kNumAttrs > 0 &&
                              call_frame->attrs.size != kNumAttrs)) {
      internal::StrBuf msg;
      msg << "[" << call_frame->stage << "] "
          << "Wrong number of attributes: expected " << kNumAttrs << " but got "
          << call_frame->attrs.size;
      if (call_frame->attrs.size > 0) {
        msg << " with name(s): ";
        for (int64_t n = 0; n < call_frame->attrs.size; ++n) {
          if (n > 0) msg << ", ";
          msg << std::string_view(call_frame->attrs.names[n]->ptr,
                                  call_frame->attrs.names[n]->len);
        }
      }
      return InvalidArgument(call_frame->api, std::move(msg).str());
    }

    return Call(call_frame, std::make_index_sequence<kSize>{});
  }

 private:
  XLA_FFI_Error* PopulateMetadata(const XLA_FFI_Api* api,
                                  XLA_FFI_Metadata_Extension* extension) const {
    if (XLA_FFI_Error* err = StructSizeIsGreaterOrEqual(
            api, "XLA_FFI_Metadata_Extension", XLA_FFI_Metadata_Extension_STRUCT_SIZE,
            extension->extension_base.struct_size)) {
      return err;
    }
    if (XLA_FFI_Error* err = StructSizeIsGreaterOrEqual(
            api, "XLA_FFI_Metadata", XLA_FFI_Metadata_STRUCT_SIZE,
            extension->metadata->struct_size)) {
      return err;
    }

    extension->metadata->api_version = XLA_FFI_Api_Version{
        XLA_FFI_Api_Version_STRUCT_SIZE,
        /*extension_start=*/nullptr,
        XLA_FFI_API_MAJOR,
        XLA_FFI_API_MINOR,
    };

    XLA_FFI_Handler_Traits traits = 0;
    for (const Traits& trait : traits_) {
      traits |= static_cast<XLA_FFI_Handler_Traits>(trait);
    }
    extension->metadata->traits = traits;

    using Encoding = ResultEncoding<stage, ResultType>;
    if constexpr (internal::is_state_constructor_v<Encoding>) {
      if (Encoding::state_type_id(api) == XLA_FFI_UNKNOWN_TYPE_ID) {
        return FailedPrecondition(api,
                                  "Types used by FFI handlers must be registered "
                                  "before the handler registration");
      }
      extension->metadata->state_type_id = Encoding::state_type_id(api);
    } else {
      extension->metadata->state_type_id = XLA_FFI_UNKNOWN_TYPE_ID;
    }
    return Success();
  }

  template <size_t... Is>
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE XLA_FFI_Error* Call(XLA_FFI_CallFrame* call_frame,
                                                      std::index_sequence<Is...>) const {
    internal::DecodingOffsets offsets;
    internal::DecodingContext ctx = {call_frame, attrs_.data(), attrs_idx_.data()};
    DiagnosticEngine diagnostic;

    // Braced initialization: decoders run left to right, all of them, so
    // every failure is reported.
    std::tuple<std::optional<FnArgType<Ts>>...> args = {
        internal::Decode<Ts>::call(offsets, ctx, diagnostic)...};

    if constexpr (sizeof...(Ts) > 0) {
      bool all_decoded = (std::get<Is>(args).has_value() & ...);
      if (XLA_FFI_PREDICT_FALSE(!all_decoded)) {
        return FailedDecodeError(call_frame, {std::get<Is>(args).has_value()...},
                                 diagnostic);
      }
    }

    ResultType result = fn_(std::move(*std::get<Is>(args))...);
    auto encoded = ResultEncoding<stage, ResultType>::Encode(call_frame->api,
                                                             call_frame->ctx,
                                                             std::move(result));
    static_assert(std::is_same_v<decltype(encoded), XLA_FFI_Error*>,
                  "asynchronous handlers (returning xla::ffi::Future) are not "
                  "supported in the cyxla sandbox: return xla::ffi::Error");
    return encoded;
  }

  XLA_FFI_Error* FailedDecodeError(const XLA_FFI_CallFrame* call_frame,
                                   std::array<bool, kSize> decoded,
                                   const DiagnosticEngine& diagnostic) const {
    internal::StrBuf message;
    message << "[" << call_frame->stage << "] "
            << "Failed to decode all FFI handler operands (bad operands at: ";
    for (size_t cnt = 0, idx = 0; idx < static_cast<size_t>(kSize); ++idx) {
      if (!decoded[idx]) {
        if (cnt++) message << ", ";
        message << idx;
      }
    }
    message << ")";
    if (std::string s = diagnostic.Result(); !s.empty()) {
      message << "\nDiagnostics:\n" << s;
    }
    return InvalidArgument(call_frame->api, std::move(message).str());
  }

  template <ExecutionStage, typename...>
  friend class Binding;

  Handler(Fn fn, std::vector<Traits> traits, std::vector<std::string> attrs)
      : fn_(std::move(fn)), traits_(std::move(traits)), attrs_(std::move(attrs)) {
    // The frame delivers attributes sorted by name (without duplicates):
    // remember where each bound name should be.
    std::vector<std::string> sorted = attrs_;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    for (const std::string& name : attrs_) {
      attrs_idx_.push_back(static_cast<size_t>(
          std::find(sorted.begin(), sorted.end(), name) - sorted.begin()));
    }
  }

  Fn fn_;
  std::vector<Traits> traits_;
  std::vector<std::string> attrs_;
  std::vector<size_t> attrs_idx_;
};

//===----------------------------------------------------------------------===//
// Scalar attributes
//===----------------------------------------------------------------------===//

/// @brief Decodes a scalar attribute of data type TYPE as T.
#define XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(T, TYPE)                                  \
  template <>                                                                           \
  struct AttrDecoding<T> {                                                              \
    using Type = T;                                                                     \
    XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static bool Isa(XLA_FFI_AttrType type, void* attr) { \
      return type == XLA_FFI_AttrType_SCALAR &&                                         \
             reinterpret_cast<XLA_FFI_Scalar*>(attr)->dtype == TYPE;                    \
    }                                                                                   \
    XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<T> Decode(                     \
        XLA_FFI_AttrType type, void* attr, DiagnosticEngine& diagnostic) {              \
      if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_SCALAR)) {                     \
        return diagnostic.Emit("Wrong attribute type: expected ")                       \
               << XLA_FFI_AttrType_SCALAR << " but got " << type;                       \
      }                                                                                 \
      auto* scalar = reinterpret_cast<XLA_FFI_Scalar*>(attr);                           \
      if (XLA_FFI_PREDICT_FALSE(scalar->dtype != TYPE)) {                               \
        return diagnostic.Emit("Wrong scalar data type: expected ")                     \
               << TYPE << " but got " << scalar->dtype;                                 \
      }                                                                                 \
      T value;                                                                          \
      std::memcpy(&value, scalar->value, sizeof(T));                                    \
      return value;                                                                     \
    }                                                                                   \
  }

XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(bool, XLA_FFI_DataType_PRED);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(int8_t, XLA_FFI_DataType_S8);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(int16_t, XLA_FFI_DataType_S16);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(int32_t, XLA_FFI_DataType_S32);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(int64_t, XLA_FFI_DataType_S64);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(uint8_t, XLA_FFI_DataType_U8);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(uint16_t, XLA_FFI_DataType_U16);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(uint32_t, XLA_FFI_DataType_U32);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(uint64_t, XLA_FFI_DataType_U64);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(float, XLA_FFI_DataType_F32);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(double, XLA_FFI_DataType_F64);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(std::complex<float>, XLA_FFI_DataType_C64);
XLA_FFI_REGISTER_SCALAR_ATTR_DECODING(std::complex<double>, XLA_FFI_DataType_C128);

#undef XLA_FFI_REGISTER_SCALAR_ATTR_DECODING

/// @brief Decodes an attribute as the first of `T0, T1, Ts...` it matches.
template <typename T0, typename T1, typename... Ts>
struct AttrDecoding<std::variant<T0, T1, Ts...>> {
  using Type = std::variant<T0, T1, Ts...>;  ///< The variant.

  /// @brief Whether any alternative matches.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static bool Isa(XLA_FFI_AttrType type, void* attr) {
    return AttrDecoding<T0>::Isa(type, attr) || AttrDecoding<T1>::Isa(type, attr) ||
           (AttrDecoding<Ts>::Isa(type, attr) || ...);
  }

  /// @brief Decodes the first matching alternative.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Type> Decode(
      XLA_FFI_AttrType type, void* attr, DiagnosticEngine& diagnostic) {
    return DecodeFirst<T0, T1, Ts...>(type, attr, diagnostic);
  }

 private:
  template <typename U, typename... Us>
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Type> DecodeFirst(
      XLA_FFI_AttrType type, void* attr, DiagnosticEngine& diagnostic) {
    if (AttrDecoding<U>::Isa(type, attr)) {
      if (auto decoded = AttrDecoding<U>::Decode(type, attr, diagnostic);
          XLA_FFI_PREDICT_TRUE(decoded)) {
        return Type(std::move(*decoded));
      }
      return std::nullopt;
    }
    if constexpr (sizeof...(Us) > 0) {
      return DecodeFirst<Us...>(type, attr, diagnostic);
    }
    return diagnostic.Emit("Wrong attribute type: it doesn't match any of the variant types");
  }
};

//===----------------------------------------------------------------------===//
// Dictionaries decoded into structs
//===----------------------------------------------------------------------===//

/// @brief A struct member decoded from the dictionary entry `name`.
template <typename T>
struct StructMember {
  using Type = T;  ///< The member's type.
  /// @brief Member `name`.
  explicit StructMember(std::string_view name) : name(name) {}
  std::string_view name;  ///< The attribute's name.
};

namespace internal {

/// @brief Decodes a dictionary into T, constructed from `Ts` in order.
template <typename T, typename... Ts>
struct DecodeDictionaryAttr {
  static constexpr size_t kSize = sizeof...(Ts);  ///< Number of members.

  /// @brief Decodes `attrs` into T by `names`.
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<T> Decode(
      const XLA_FFI_Attrs* attrs, std::array<std::string_view, kSize> names,
      DiagnosticEngine& diagnostic) {
    return Decode(attrs, names, std::make_index_sequence<kSize>{}, diagnostic);
  }

  /// @brief Decodes `attrs` into T by `names`.
  template <size_t... Is>
  XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<T> Decode(
      const XLA_FFI_Attrs* attrs, std::array<std::string_view, kSize> names,
      std::index_sequence<Is...>, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(static_cast<int64_t>(kSize) != attrs->size)) {
      return diagnostic.Emit("Wrong number of attributes: expected ")
             << kSize << " attributes but got " << attrs->size;
    }
    internal::DictionaryBase dict(attrs);
    std::tuple<std::optional<Ts>...> members = {dict.get<Ts>(names[Is], diagnostic)...};
    bool all_decoded = (std::get<Is>(members).has_value() && ...);
    if (XLA_FFI_PREDICT_FALSE(!all_decoded)) return std::nullopt;
    return T{std::move(*std::get<Is>(members))...};
  }
};

/// @brief The names of struct members.
template <typename... Members>
auto StructMemberNames(Members... m) {
  return std::array<std::string_view, sizeof...(Members)>{m.name...};
}

/// @brief The decoder for struct T with `Members`.
template <typename T, typename... Members>
auto DictionaryDecoder(Members...) {
  return DecodeDictionaryAttr<T, typename Members::Type...>();
}

}  // namespace internal

/// @brief Registers decoding of a dictionary attribute (or of all attributes,
/// with `.Attrs<T>()`) into struct T from `StructMember<U>("name")`s.
#define XLA_FFI_REGISTER_STRUCT_ATTR_DECODING(T, ...)                                \
  namespace xla::ffi {                                                               \
  template <>                                                                        \
  struct AttrsBinding<T> {                                                           \
    using Attrs = T;                                                                 \
  };                                                                                 \
  template <>                                                                        \
  struct AttrDecoding<T> {                                                           \
    using Type = T;                                                                  \
    XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<T> Decode(                  \
        XLA_FFI_AttrType type, void* attr, DiagnosticEngine& diagnostic) {           \
      if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_DICTIONARY)) {              \
        diagnostic.Emit("Wrong attribute type: expected ")                           \
            << XLA_FFI_AttrType_DICTIONARY << " but got " << type;                   \
        return std::nullopt;                                                         \
      }                                                                              \
      auto decoder = ::xla::ffi::internal::DictionaryDecoder<T>(__VA_ARGS__);        \
      return decltype(decoder)::Decode(reinterpret_cast<const XLA_FFI_Attrs*>(attr), \
                                       internal::StructMemberNames(__VA_ARGS__),     \
                                       diagnostic);                                  \
    }                                                                                \
  };                                                                                 \
  } /* namespace xla::ffi */                                                         \
  static_assert(std::is_class_v<::xla::ffi::AttrsBinding<T>>);                       \
  static_assert(std::is_class_v<::xla::ffi::AttrDecoding<T>>)

/// @brief Registers decoding of enum class T from a scalar of its underlying
/// type.
#define XLA_FFI_REGISTER_ENUM_ATTR_DECODING(T)                                   \
  namespace xla::ffi {                                                           \
  template <>                                                                    \
  struct AttrDecoding<T> {                                                       \
    using Type = T;                                                              \
    using U = std::underlying_type_t<Type>;                                      \
    static_assert(std::is_enum<Type>::value, "Expected enum class");             \
    XLA_FFI_ATTRIBUTE_ALWAYS_INLINE static std::optional<Type> Decode(           \
        XLA_FFI_AttrType attr_type, void* attr, DiagnosticEngine& diagnostic) {  \
      if (XLA_FFI_PREDICT_FALSE(attr_type != XLA_FFI_AttrType_SCALAR)) {         \
        return diagnostic.Emit("Wrong attribute type: expected ")                \
               << XLA_FFI_AttrType_SCALAR << " but got " << attr_type;           \
      }                                                                          \
      auto* scalar = reinterpret_cast<XLA_FFI_Scalar*>(attr);                    \
      constexpr auto expected_dtype =                                            \
          ::xla::ffi::internal::NativeTypeToCApiDataType<U>();                   \
      if (XLA_FFI_PREDICT_FALSE(scalar->dtype != expected_dtype)) {              \
        return diagnostic.Emit("Wrong scalar data type: expected ")              \
               << expected_dtype << " but got " << scalar->dtype;                \
      }                                                                          \
      U underlying;                                                              \
      std::memcpy(&underlying, scalar->value, sizeof(U));                        \
      return static_cast<Type>(underlying);                                      \
    }                                                                            \
  };                                                                             \
  } /* namespace xla::ffi */                                                     \
  static_assert(std::is_class_v<::xla::ffi::AttrDecoding<T>>)

//===----------------------------------------------------------------------===//
// Defining handlers
//===----------------------------------------------------------------------===//

/// @brief Defines `fn` (a static XLA_FFI_Handler* constant) calling `impl`
/// through `binding` with `traits`.
#define XLA_FFI_DEFINE_HANDLER_EXPLICIT_WITH_TRAITS(fn, impl, binding, traits) \
  static constexpr XLA_FFI_Handler* fn = +[](XLA_FFI_CallFrame* call_frame) {  \
    static auto* handler = binding.To(impl, traits).release();                 \
    return handler->Call(call_frame);                                          \
  }

/// @brief Defines `fn` (a static XLA_FFI_Handler* constant) calling `impl`
/// through `binding`.
#define XLA_FFI_DEFINE_HANDLER_EXPLICIT(fn, impl, binding)                    \
  static constexpr XLA_FFI_Handler* fn = +[](XLA_FFI_CallFrame* call_frame) { \
    static auto* handler = binding.To(impl).release();                        \
    return handler->Call(call_frame);                                         \
  }

/// @brief Defines `fn` calling `impl` with a binding inferred from its
/// parameter types.
#define XLA_FFI_DEFINE_HANDLER_AUTO(fn, impl)                                 \
  static constexpr XLA_FFI_Handler* fn = +[](XLA_FFI_CallFrame* call_frame) { \
    static auto* handler = ::xla::ffi::Ffi::BindTo(impl).release();           \
    return handler->Call(call_frame);                                         \
  }

#define XLA_FFI_DEFINE_HANDLER_X(x, fn, impl, binding, traits, FUNC, ...) FUNC

/// @brief `XLA_FFI_DEFINE_HANDLER(fn, impl[, binding[, traits]])`: defines the
/// handler constant `fn` (usable at any scope).
#define XLA_FFI_DEFINE_HANDLER(fn, impl, ...)                               \
  XLA_FFI_DEFINE_HANDLER_X(                                                 \
      , fn, impl, ##__VA_ARGS__,                                            \
      XLA_FFI_DEFINE_HANDLER_EXPLICIT_WITH_TRAITS(fn, impl, ##__VA_ARGS__), \
      XLA_FFI_DEFINE_HANDLER_EXPLICIT(fn, impl, ##__VA_ARGS__),             \
      XLA_FFI_DEFINE_HANDLER_AUTO(fn, impl))

/// @brief Not available in the cyxla sandbox: static registration with an
/// XLA runtime. Declare the target with CYXLA_TARGET(target, handler).
#define XLA_FFI_REGISTER_HANDLER(API, NAME, PLATFORM, FUNC, ...)                     \
  static_assert(::xla::ffi::internal::DependentFalse<void>::value,                  \
                "XLA_FFI_REGISTER_HANDLER is not supported in the cyxla sandbox: "   \
                "declare the target next to its handler with "                       \
                "CYXLA_TARGET(target, handler) (cyxla/target.h)")

/// @brief Declares the C handler symbol `fn`.
#define XLA_FFI_DECLARE_HANDLER_SYMBOL(fn) \
  extern "C" XLA_FFI_Error* fn(XLA_FFI_CallFrame* call_frame)

/// @brief Declares a C function returning a type id.
#define XLA_FFI_DECLARE_TYPE_ID_SYMBOL(type_id_fn) extern "C" XLA_FFI_TypeId* type_id_fn()

/// @brief Declares a C function returning type info.
#define XLA_FFI_DECLARE_TYPE_INFO_SYMBOL(type_info_fn) \
  extern "C" const XLA_FFI_TypeInfo* type_info_fn()

/// @brief Defines the C handler symbol `fn` calling `impl` through the
/// binding (or an inferred one). In a guest, export it with
/// `CYXLA_TARGET(target, fn);`.
#define XLA_FFI_DEFINE_HANDLER_SYMBOL(fn, impl, ...)                           \
  extern "C" XLA_FFI_Error* fn(XLA_FFI_CallFrame* call_frame) {                \
    XLA_FFI_DEFINE_HANDLER(handler, impl, ##__VA_ARGS__);                      \
    return (*handler)(call_frame);                                             \
  }                                                                            \
  static_assert(                                                               \
      std::is_invocable_r_v<XLA_FFI_Error*, decltype(fn), XLA_FFI_CallFrame*>, \
      "FFI handler must return XLA_FFI_Error* and accept XLA_FFI_CallFrame*")

}  // namespace xla::ffi

#endif  // XLA_FFI_API_API_H_
