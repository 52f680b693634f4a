/*
 * The exports every cyxla guest has, implemented once by the cyxla runtime
 * translation unit (guest-sdk/c/cyxla_runtime.c, or cyxla_runtime.cc for C++
 * builds): link exactly one copy into each guest module.
 *
 * Plain C; usable from C and C++.
 */
#ifndef CYXLA_RUNTIME_H_
#define CYXLA_RUNTIME_H_

/** @file
 *  @brief The guest runtime: required exports, allocation and traps. */

#include <stddef.h>
#include <stdint.h>

#include "cyxla/abi.h"
#include "xla/ffi/api/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Export #CYXLA_EXPORT_ABI_VERSION: returns #CYXLA_ABI_VERSION. */
int32_t cyxla_abi_version(void);

/** @brief Export #CYXLA_EXPORT_API: the guest's static XLA_FFI_Api (API 0.3),
 *  whose function pointers are the `cyxla` host imports. Every call frame the
 *  host writes points at it (`call_frame->api`). Same as XLA_FFI_GetApi(). */
const XLA_FFI_Api* cyxla_api(void);

/** @brief Export #CYXLA_EXPORT_ALLOC: `size` bytes aligned to `align` (a power
 *  of two; 0 means 1) from the guest heap (wasi-libc's malloc), or NULL.
 *  The host uses it for scratch space (frames, buffers, error messages). */
void* cyxla_alloc(size_t size, size_t align);

/** @brief Export #CYXLA_EXPORT_FREE: frees what cyxla_alloc returned (`size`
 *  and `align` as passed to it; NULL is ignored). */
void cyxla_free(void* ptr, size_t size, size_t align);

/** @brief Export #CYXLA_EXPORT_LAST_PANIC: the message given to the last
 *  cyxla_panic(), or NULL. The host reads it after a trap to name the cause. */
const char* cyxla_last_panic(void);

/** @brief The link-time name of cyxla_panic. Every CYXLA_TARGET entry point
 *  refers to it, so a guest linked without the runtime fails with
 *  `undefined symbol: cyxla_panic__link_guest_sdk_c_cyxla_runtime_cc_or_use_the_cmake_toolchain`:
 *  add `guest-sdk/c/cyxla_runtime.cc` (C: `cyxla_runtime.c`) to the link, or
 *  build with `guest-sdk/cmake/wasm32-cyxla.cmake` and `cyxla_add_guest`. */
#define CYXLA_PANIC_SYMBOL_ \
  "cyxla_panic__link_guest_sdk_c_cyxla_runtime_cc_or_use_the_cmake_toolchain"

/** @brief Records `message` (a string that must stay valid, e.g. a literal)
 *  for cyxla_last_panic() and traps. The host fails the current call with
 *  the message and discards the instance. */
__attribute__((noreturn)) void cyxla_panic(const char* message)
    __asm__(CYXLA_PANIC_SYMBOL_);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CYXLA_RUNTIME_H_ */
