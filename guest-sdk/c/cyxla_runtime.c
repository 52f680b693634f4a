/*
 * The cyxla guest runtime: the exports every guest module must have
 * (cyxla_abi_version, cyxla_api, cyxla_alloc) and the optional ones
 * (cyxla_free, cyxla_last_panic), and the guest's static XLA_FFI_Api whose
 * function pointers are the `cyxla` host imports.
 *
 * Link exactly one copy into each guest: this file from C builds,
 * cyxla_runtime.cc (which includes it) from C++ builds. Valid C11 and C++17.
 * wasm32 only.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* posix_memalign under -std=c11 */
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cyxla/abi.h"
#include "cyxla/imports.h"
#include "cyxla/runtime.h"
#include "xla/ffi/api/c_api.h"

#ifndef __wasm32__
#error "cyxla_runtime.c is the wasm32 guest runtime: compile it with --target=wasm32-wasi"
#endif

#ifdef __cplusplus
#define CYXLA_STATIC_ASSERT static_assert
#else
#define CYXLA_STATIC_ASSERT _Static_assert
#endif

CYXLA_STATIC_ASSERT(XLA_FFI_API_MAJOR == CYXLA_FFI_API_MAJOR &&
                        XLA_FFI_API_MINOR == CYXLA_FFI_API_MINOR,
                    "xla/ffi/api/c_api.h and cyxla/abi.h disagree on the API version");
CYXLA_STATIC_ASSERT(sizeof(void*) == 4, "the cyxla guest ABI is wasm32");

#define CYXLA_EXPORT(name) __attribute__((export_name(name)))

/* One slot of the XLA_FFI_Api function table per entry of CYXLA_IMPORTS.
 * Slots 1 and 6 are unions of their 0.5 and 0.3 names; an initializer
 * without braces fills the first member, the 0.5 one, which is what the
 * import is declared as. */
#define CYXLA_API_SLOT(name, NAME, function, returns) cyxla_import_##name,
#define CYXLA_COUNT_IMPORT(name, NAME, function, returns) +1
CYXLA_STATIC_ASSERT(0 CYXLA_IMPORTS(CYXLA_COUNT_IMPORT) == CYXLA_API_FN_SLOTS,
                    "CYXLA_IMPORTS lists one import per XLA_FFI_Api function slot");
CYXLA_STATIC_ASSERT(sizeof(XLA_FFI_Api) ==
                        offsetof(XLA_FFI_Api, XLA_FFI_Error_Create) +
                            CYXLA_API_FN_SLOTS * sizeof(void*),
                    "XLA_FFI_Api has CYXLA_API_FN_SLOTS function slots");

/* The function table every call frame points at. Its slots are the host
 * imports, in XLA_FFI_Api order; taking their addresses puts them into the
 * module's function table, so each pointer is a function-table index, as the
 * guest ABI requires. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wmissing-braces"
static const XLA_FFI_Api cyxla_api_table = {
    XLA_FFI_Api_STRUCT_SIZE,
    NULL,
    {XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR},
    NULL,
    CYXLA_IMPORTS(CYXLA_API_SLOT)
};
#pragma clang diagnostic pop

/* The message of the last cyxla_panic (a literal or other static string). */
static const char* cyxla_panic_message = NULL;

CYXLA_EXPORT(CYXLA_EXPORT_ABI_VERSION)
int32_t cyxla_abi_version(void) { return CYXLA_ABI_VERSION; }

CYXLA_EXPORT(CYXLA_EXPORT_API)
const XLA_FFI_Api* cyxla_api(void) { return &cyxla_api_table; }

const XLA_FFI_Api* XLA_FFI_GetApi(void) { return &cyxla_api_table; }

CYXLA_EXPORT(CYXLA_EXPORT_ALLOC)
void* cyxla_alloc(size_t size, size_t align) {
  void* ptr = NULL;
  if (align == 0) align = 1;
  if ((align & (align - 1)) != 0) return NULL; /* not a power of two */
  if (size == 0) size = 1;                      /* unique address */
  if (align < sizeof(void*)) align = sizeof(void*);
  if (posix_memalign(&ptr, align, size) != 0) return NULL;
  return ptr;
}

CYXLA_EXPORT(CYXLA_EXPORT_FREE)
void cyxla_free(void* ptr, size_t size, size_t align) {
  (void)size;
  (void)align;
  free(ptr);
}

CYXLA_EXPORT(CYXLA_EXPORT_LAST_PANIC)
const char* cyxla_last_panic(void) { return cyxla_panic_message; }

void cyxla_panic(const char* message) {
  cyxla_panic_message = message;
  __builtin_trap();
}

#ifdef __cplusplus
/* libc++ reports errors it cannot throw under -fno-exceptions (a bad
 * std::get, a vector growing past its maximum) through this function; its
 * own version prints to stderr, which would make every C++ guest import WASI
 * file functions. This one formats the message (%s, %d, %u and %% only) for
 * cyxla_last_panic and traps. */
#include <__verbose_abort>

static char cyxla_abort_message[256];

static void cyxla_append(size_t* at, const char* text) {
  while (*text != '\0' && *at + 1 < sizeof(cyxla_abort_message)) {
    cyxla_abort_message[(*at)++] = *text++;
  }
}

static void cyxla_append_unsigned(size_t* at, unsigned long long value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + value % 10);
    value /= 10;
  } while (value != 0);
  char text[25];
  int k = 0;
  while (n > 0) text[k++] = digits[--n];
  text[k] = '\0';
  cyxla_append(at, text);
}

/* libc++ 20 declares it noexcept (unless _LIBCPP_VERBOSE_ABORT_NOT_NOEXCEPT
 * is defined), libc++ 21 and later always do (zig's libc++ 22, for one);
 * libc++ 19 (Debian's wasm32 libc++) does not. The definition matches. */
#if _LIBCPP_VERSION >= 210000 || \
    (_LIBCPP_VERSION >= 200000 && !defined(_LIBCPP_VERBOSE_ABORT_NOT_NOEXCEPT))
#define CYXLA_VERBOSE_ABORT_NOEXCEPT noexcept
#else
#define CYXLA_VERBOSE_ABORT_NOEXCEPT
#endif

void std::__libcpp_verbose_abort(const char* format, ...)
    CYXLA_VERBOSE_ABORT_NOEXCEPT {
  va_list args;
  va_start(args, format);
  size_t at = 0;
  for (const char* p = format; *p != '\0'; ++p) {
    if (p[0] == '%' && p[1] == 's') {
      const char* text = va_arg(args, const char*);
      cyxla_append(&at, text != NULL ? text : "(null)");
      ++p;
    } else if (p[0] == '%' && p[1] == 'd') {
      int value = va_arg(args, int);
      if (value < 0) cyxla_append(&at, "-");
      cyxla_append_unsigned(&at, value < 0 ? 0ull - (unsigned long long)value
                                           : (unsigned long long)value);
      ++p;
    } else if (p[0] == '%' && p[1] == 'u') {
      cyxla_append_unsigned(&at, va_arg(args, unsigned));
      ++p;
    } else if (p[0] == '%' && p[1] == '%') {
      cyxla_append(&at, "%");
      ++p;
    } else {
      char one[2] = {*p, '\0'};
      cyxla_append(&at, one);
    }
  }
  va_end(args);
  cyxla_abort_message[at] = '\0';
  cyxla_panic(cyxla_abort_message);
}

/* libc++'s operator new calls the new-handler machinery, which reports
 * failures on stderr (WASI imports again); these allocate with malloc and
 * trap with a message when memory runs out. */
#include <new>

static void* cyxla_new(size_t size) {
  void* ptr = malloc(size != 0 ? size : 1);
  if (ptr == NULL) cyxla_panic("operator new: out of memory");
  return ptr;
}

static void* cyxla_new_aligned(size_t size, size_t align) {
  void* ptr = cyxla_alloc(size, align);
  if (ptr == NULL) cyxla_panic("operator new: out of memory");
  return ptr;
}

void* operator new(size_t size) { return cyxla_new(size); }
void* operator new[](size_t size) { return cyxla_new(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return malloc(size != 0 ? size : 1);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return malloc(size != 0 ? size : 1);
}
void* operator new(size_t size, std::align_val_t align) {
  return cyxla_new_aligned(size, (size_t)align);
}
void* operator new[](size_t size, std::align_val_t align) {
  return cyxla_new_aligned(size, (size_t)align);
}
void* operator new(size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return cyxla_alloc(size, (size_t)align);
}
void* operator new[](size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return cyxla_alloc(size, (size_t)align);
}
void operator delete(void* ptr) noexcept { free(ptr); }
void operator delete[](void* ptr) noexcept { free(ptr); }
void operator delete(void* ptr, size_t) noexcept { free(ptr); }
void operator delete[](void* ptr, size_t) noexcept { free(ptr); }
void operator delete(void* ptr, const std::nothrow_t&) noexcept { free(ptr); }
void operator delete[](void* ptr, const std::nothrow_t&) noexcept { free(ptr); }
void operator delete(void* ptr, std::align_val_t) noexcept { free(ptr); }
void operator delete[](void* ptr, std::align_val_t) noexcept { free(ptr); }
void operator delete(void* ptr, size_t, std::align_val_t) noexcept { free(ptr); }
void operator delete[](void* ptr, size_t, std::align_val_t) noexcept { free(ptr); }
void operator delete(void* ptr, std::align_val_t, const std::nothrow_t&) noexcept { free(ptr); }
void operator delete[](void* ptr, std::align_val_t, const std::nothrow_t&) noexcept {
  free(ptr);
}

/* Called through a vtable slot of a pure virtual function (a bug). */
extern "C" void __cxa_pure_virtual(void) { cyxla_panic("pure virtual function called"); }
extern "C" void __cxa_deleted_virtual(void) { cyxla_panic("deleted virtual function called"); }
#endif /* __cplusplus */
