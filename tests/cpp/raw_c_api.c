/*
 * Test kernels written in plain C against the XLA FFI C API
 * (xla/ffi/api/c_api.h) only: no C++ binding. They answer the metadata probe
 * themselves and call the API table directly.
 *
 * Targets:
 *   raw_fail_c     always fails: FAILED_PRECONDITION "raw_fail_c: deliberate
 *                  failure (<n> operands)"
 *   raw_device_c   no operands -> s32[2] = [device ordinal, 7]
 *   raw_threads_c  no operands -> s64[] = 1 if XLA_FFI_ThreadPool_NumThreads
 *                  reports threads; the sandbox has no thread pool, so in a
 *                  guest the call fails and the handler returns that error
 *                  (UNIMPLEMENTED ... is not supported in the cyxla sandbox)
 * The handlers are exported C symbols so that a native build can register
 * them (cyxla-host run --native raw_fail_c=libraw_c_api_c.so:RawFail).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cyxla/target.h"
#include "xla/ffi/api/c_api.h"

/* Answers a metadata probe with API version min(0.3, the runtime's).
 * Returns 1 if `frame` was a probe. */
static int answer_probe(XLA_FFI_CallFrame* frame) {
  XLA_FFI_Extension_Base* ext = frame->extension_start;
  if (ext == NULL || ext->type != XLA_FFI_Extension_Metadata) return 0;
  XLA_FFI_Metadata* metadata = ((XLA_FFI_Metadata_Extension*)ext)->metadata;
  int major = frame->api->api_version.major_version;
  int minor = frame->api->api_version.minor_version;
  if (major > XLA_FFI_API_MAJOR || (major == XLA_FFI_API_MAJOR && minor > XLA_FFI_API_MINOR)) {
    major = XLA_FFI_API_MAJOR;
    minor = XLA_FFI_API_MINOR;
  }
  metadata->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  metadata->api_version.extension_start = NULL;
  metadata->api_version.major_version = major;
  metadata->api_version.minor_version = minor;
  metadata->traits = 0;
  return 1;
}

static XLA_FFI_Error* make_error(XLA_FFI_CallFrame* frame, XLA_FFI_Error_Code errc,
                                 const char* message) {
  XLA_FFI_Error_Create_Args args;
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.extension_start = NULL;
  args.message = message;
  args.errc = errc;
  return frame->api->XLA_FFI_Error_Create(&args);
}

/* The single result, if it has `dtype` and `count` elements; else NULL. */
static XLA_FFI_Buffer* single_result(XLA_FFI_CallFrame* frame, XLA_FFI_DataType dtype,
                                     int64_t count) {
  if (frame->rets.size != 1 || frame->rets.types[0] != XLA_FFI_RetType_BUFFER) return NULL;
  XLA_FFI_Buffer* out = (XLA_FFI_Buffer*)frame->rets.rets[0];
  int64_t n = 1;
  for (int64_t i = 0; i < out->rank; ++i) n *= out->dims[i];
  return out->dtype == dtype && n == count ? out : NULL;
}

XLA_FFI_Error* RawFail(XLA_FFI_CallFrame* frame) {
  if (answer_probe(frame)) return NULL;
  char message[96];
  snprintf(message, sizeof message, "raw_fail_c: deliberate failure (%d operands)",
           (int)frame->args.size);
  return make_error(frame, XLA_FFI_Error_Code_FAILED_PRECONDITION, message);
}

/* What a handler with a single result does once the probe is answered and
 * the result checked. */
typedef XLA_FFI_Error* (*ResultBody)(XLA_FFI_CallFrame* frame, XLA_FFI_Buffer* out);

/* A handler with a single result of `dtype` and `count` elements: answers
 * the probe, fails INVALID_ARGUMENT with `expected` if the result is not
 * that, else runs `body`. */
static XLA_FFI_Error* with_single_result(XLA_FFI_CallFrame* frame, XLA_FFI_DataType dtype,
                                         int64_t count, const char* expected, ResultBody body) {
  if (answer_probe(frame)) return NULL;
  XLA_FFI_Buffer* out = single_result(frame, dtype, count);
  if (out == NULL) return make_error(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, expected);
  return body(frame, out);
}

static XLA_FFI_Error* device_body(XLA_FFI_CallFrame* frame, XLA_FFI_Buffer* out) {
  XLA_FFI_DeviceOrdinal_Get_Args args;
  args.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE;
  args.extension_start = NULL;
  args.ctx = frame->ctx;
  args.device_ordinal = -1;
  XLA_FFI_Error* error = frame->api->XLA_FFI_DeviceOrdinal_Get(&args);
  if (error != NULL) return error;
  int32_t* data = (int32_t*)out->data;
  data[0] = args.device_ordinal;
  data[1] = 7;
  return NULL;
}

XLA_FFI_Error* RawDevice(XLA_FFI_CallFrame* frame) {
  return with_single_result(frame, XLA_FFI_DataType_S32, 2,
                            "raw_device_c: expected one s32[2] result", device_body);
}

static XLA_FFI_Error* threads_body(XLA_FFI_CallFrame* frame, XLA_FFI_Buffer* out) {
  int64_t threads = 0;
  XLA_FFI_ThreadPool_NumThreads_Args args;
  args.struct_size = XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE;
  args.extension_start = NULL;
  args.ctx = frame->ctx;
  args.num_threads = &threads;
  XLA_FFI_Error* error = frame->api->XLA_FFI_ThreadPool_NumThreads(&args);
  if (error != NULL) return error;
  *(int64_t*)out->data = threads > 0 ? 1 : 0;
  return NULL;
}

XLA_FFI_Error* RawThreads(XLA_FFI_CallFrame* frame) {
  return with_single_result(frame, XLA_FFI_DataType_S64, 1,
                            "raw_threads_c: expected one s64[] result", threads_body);
}

CYXLA_TARGET(raw_fail_c, RawFail);
CYXLA_TARGET(raw_device_c, RawDevice);
CYXLA_TARGET(raw_threads_c, RawThreads);
