// The XLA FFI record extension's C++ wrappers (XLA FFI 0.5) for cyxla
// guests: present so that a source including xla/ffi/api/record_api.h gets
// a clear message instead of a missing header, and refused on use. The
// extension records GPU command buffers (kernel launches, device-to-device
// copies) in the RECORD execution stage; a cyxla guest runs on the CPU and
// is called only to execute (Ffi::BindRecord does not compile for it
// either).
//
// C++17.
#ifndef XLA_FFI_API_RECORD_API_H_
#define XLA_FFI_API_RECORD_API_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "xla/ffi/api/api.h"
#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/record_c_api.h"

namespace xla::ffi {

/// @brief Mirrors XLA_FFI_SourceFormat.
enum class SourceFormat {
  kPtx = XLA_FFI_SourceFormat_PTX,                   ///< PTX.
  kCubin = XLA_FFI_SourceFormat_CUBIN,               ///< CUBIN.
  kFunctionPtr = XLA_FFI_SourceFormat_FUNCTION_PTR,  ///< Function pointer.
};

/// @brief Mirrors XLA_FFI_RecordAction.
enum class RecordAction {
  kCreate = XLA_FFI_RecordAction_Create,  ///< Create.
  kUpdate = XLA_FFI_RecordAction_Update,  ///< Update.
};

#define CYXLA_FFI_RECORD_UNSUPPORTED                                                   \
  "the XLA FFI record extension (xla/ffi/api/record_api.h) is not supported in the " \
  "cyxla sandbox: it records GPU command buffers, and a cyxla guest runs on the CPU "  \
  "and is called only to execute"

/// @brief Not supported in the cyxla sandbox (see the top of this file).
template <typename Tag = void>
class BasicBoundedCommandVector {
  static_assert(!std::is_same_v<Tag, Tag>, CYXLA_FFI_RECORD_UNSUPPORTED);
};
/// @brief Not supported in the cyxla sandbox.
using BoundedCommandVector = BasicBoundedCommandVector<>;

namespace internal {

/// @brief Not supported in the cyxla sandbox.
template <typename ErrorPolicy>
class RecordContextBase {
  static_assert(!std::is_same_v<ErrorPolicy, ErrorPolicy>, CYXLA_FFI_RECORD_UNSUPPORTED);
};

/// @brief Not supported in the cyxla sandbox.
template <typename RecordContextT>
struct RecordExtensionBase {
  static_assert(!std::is_same_v<RecordContextT, RecordContextT>, CYXLA_FFI_RECORD_UNSUPPORTED);
};

}  // namespace internal

/// @brief Not supported in the cyxla sandbox (XLA's runtime side builds
/// this extension, never a guest).
template <typename Tag = void>
void BuildRecordCExtension(XLA_FFI_RecordFrame* frame) {
  static_assert(!std::is_same_v<Tag, Tag>, CYXLA_FFI_RECORD_UNSUPPORTED);
  (void)frame;
}

}  // namespace xla::ffi

#endif  // XLA_FFI_API_RECORD_API_H_
