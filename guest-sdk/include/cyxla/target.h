/*
 * Declaring the custom-call targets a cyxla guest serves: one line next to
 * the handler.
 *
 *   XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNorm, RmsNormImpl, ffi::Ffi::Bind()...);
 *   CYXLA_TARGET(rms_norm_cpp, RmsNorm);
 *
 * On wasm32 the line emits
 *   - a record `cyxla-target v1 rms_norm_cpp rms_norm_cpp\n` into the custom
 *     section `cyxla.targets` (through top-level assembly, see below), from
 *     which the host learns the target, and
 *   - the export `rms_norm_cpp: (frame: i32) -> i32` that calls the handler.
 * Anywhere else it only type-checks the handler, so the same source also
 * builds natively (for example against XLA's own headers, with
 * `-include cyxla/target.h`).
 *
 * Use it at namespace scope. Plain C (C11) and C++.
 */
#ifndef CYXLA_TARGET_H_
#define CYXLA_TARGET_H_

/** @file
 *  @brief CYXLA_TARGET: declare a target and export its handler. */

#include "cyxla/abi.h"
#include "cyxla/runtime.h"
#include "xla/ffi/api/c_api.h"

/** @brief Declares that this guest serves custom-call target `target` (an
 *  identifier) with `handler`, exported under the same name as the target.
 *
 *  `handler` is anything callable as `XLA_FFI_Error* (XLA_FFI_CallFrame*)`:
 *  the function XLA_FFI_DEFINE_HANDLER_SYMBOL defines, the variable
 *  XLA_FFI_DEFINE_HANDLER defines, or a plain C function. End the line with
 *  a semicolon. Declaring the same target twice in one module fails to
 *  compile (same file) or to link (different files). */
#define CYXLA_TARGET(target, handler) CYXLA_TARGET_EXPORT(#target, target, handler)

/** @brief Like CYXLA_TARGET for a target name that is not an identifier:
 *  `target_name` is a string literal of 1 to 255 bytes of `[A-Za-z0-9_.$-]`
 *  and `export_ident` the identifier to export the handler under. */
#define CYXLA_TARGET_EXPORT(target_name, export_ident, handler) \
  CYXLA_TARGET_RECORD_(target_name, export_ident)               \
  CYXLA_TARGET_ENTRY_(export_ident, handler)                    \
  CYXLA_TARGET_CHECK_(target_name, #export_ident)

/* ------------------------------------------------------------------------ */
/* Implementation                                                            */
/* ------------------------------------------------------------------------ */

#ifdef __cplusplus
#define CYXLA_EXTERN_C_ extern "C"
#else
#define CYXLA_EXTERN_C_
#endif

#if defined(__wasm32__)

/* The record goes into the custom section `cyxla.targets` through top-level
 * assembly: the wasm assembler turns a section named `.custom_section.<name>`
 * into a custom section, and lld concatenates those of all objects. (clang 19
 * places a C object with `__attribute__((section(".custom_section...")))` in
 * the data segment instead, so the attribute cannot be used.) Names contain
 * no quote or backslash, so they are safe inside `.ascii "..."`. */
#define CYXLA_TARGET_RECORD_(target_name, export_ident)                      \
  __asm__(".section .custom_section." CYXLA_TARGETS_SECTION ",\"\",@\n"      \
          ".ascii \"" CYXLA_RECORD_PREFIX target_name " " #export_ident        \
          "\\n\"\n"                                                          \
          ".text\n");

/* The entry refers to the runtime (cyxla_panic), so that a guest linked
 * without it fails to link naming what to do (see cyxla/runtime.h). */
#define CYXLA_TARGET_ENTRY_(export_ident, handler)                           \
  CYXLA_EXTERN_C_ __attribute__((export_name(#export_ident)))                \
  XLA_FFI_Error* cyxla_target_entry_##export_ident(                          \
      XLA_FFI_CallFrame* call_frame) {                                       \
    if (call_frame == 0) cyxla_panic(#export_ident ": null call frame");     \
    return (handler)(call_frame);                                            \
  }

#else /* not wasm32: no section, no export */

#define CYXLA_TARGET_RECORD_(target_name, export_ident)

#define CYXLA_TARGET_ENTRY_(export_ident, handler)                           \
  __attribute__((unused)) static inline XLA_FFI_Error*                       \
  cyxla_target_entry_##export_ident(                                         \
      XLA_FFI_CallFrame* call_frame) {                                       \
    return (handler)(call_frame);                                            \
  }

#endif /* __wasm32__ */

#ifdef __cplusplus

namespace cyxla_internal {

/** @brief Whether `name` (a string literal of `size` bytes with its NUL) is a
 *  valid target or export name: 1 to #CYXLA_MAX_NAME_LEN bytes of
 *  `[A-Za-z0-9_.$-]`. */
constexpr bool IsValidName(const char* name, unsigned long size) {
  if (size < 2 || size - 1 > CYXLA_MAX_NAME_LEN) return false;
  for (unsigned long i = 0; i + 1 < size; ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$' ||
              c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace cyxla_internal

#define CYXLA_TARGET_CHECK_(target_name, export_name)                        \
  static_assert(::cyxla_internal::IsValidName(target_name,                   \
                                              sizeof(target_name)),          \
                "CYXLA_TARGET: the target name must be 1 to 255 bytes of "   \
                "[A-Za-z0-9_.$-]");                                          \
  static_assert(::cyxla_internal::IsValidName(export_name,                   \
                                              sizeof(export_name)),          \
                "CYXLA_TARGET: the export name must be 1 to 255 bytes of "   \
                "[A-Za-z0-9_.$-]")

#else /* C: only the length can be checked at compile time */

#define CYXLA_TARGET_CHECK_(target_name, export_name)                        \
  _Static_assert(sizeof(target_name) > 1 &&                                  \
                     sizeof(target_name) - 1 <= CYXLA_MAX_NAME_LEN,          \
                 "CYXLA_TARGET: the target name must be 1 to 255 bytes");    \
  _Static_assert(sizeof(export_name) > 1 &&                                  \
                     sizeof(export_name) - 1 <= CYXLA_MAX_NAME_LEN,          \
                 "CYXLA_TARGET: the export name must be 1 to 255 bytes")

#endif /* __cplusplus */

#endif /* CYXLA_TARGET_H_ */
