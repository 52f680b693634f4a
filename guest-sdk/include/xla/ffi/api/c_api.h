/*
 * The XLA FFI C API (version 0.5) for cyxla guests.
 *
 * cyxla's own header at XLA's include path: the same type, field, enum and
 * function names as `xla/ffi/api/c_api.h` of XLA, so that sources written
 * against XLA's header compile unchanged. Compiled for wasm32 it gives the
 * wasm32 layouts the cyxla host writes into guest memory (pointers and
 * `size_t` are 4 bytes, `int64_t` is 8-aligned); the test
 * `cpp_sdk::header_constants_match_abi_rs` checks every size, alignment,
 * offset and `*_STRUCT_SIZE` against `abi/src/lib.rs`.
 *
 * Version 0.5 as jaxlib 0.12 ships it. The names that 0.5 renamed are
 * still accepted, so that sources written against 0.3 and 0.4 compile
 * unchanged: `XLA_FFI_ExecutionContext` (now `XLA_FFI_InvokeContext`, as in
 * XLA), `XLA_FFI_Extension_Base` and `XLA_FFI_Extension_Type` (now
 * `XLA_FFI_InternalExtension[_Type]`), `XLA_FFI_ExecutionContext_Get[_Args]`
 * (now `XLA_FFI_InvokeContext_Get[_Args]`) and `XLA_FFI_Error_GetMessage[_Args]`
 * (slot 1, now `XLA_FFI_Error_GetDetails`, which also returns the code).
 *
 * Plain C (C11 or later) and C++.
 */
#ifndef XLA_FFI_API_C_API_H_
#define XLA_FFI_API_C_API_H_

#include <stddef.h>
#include <stdint.h>

/** @file
 *  @brief XLA FFI C API 0.5: the call frame a handler receives and the
 *  function table it calls back through. */

/** @brief Size of `struct_type` up to and including `last_field`: the value
 *  of a struct's `struct_size` field (it can be smaller than `sizeof`). */
#define XLA_FFI_STRUCT_SIZE(struct_type, last_field) \
  (offsetof(struct_type, last_field) + sizeof(((struct_type*)0)->last_field))

/** @brief Defines `<sname>_STRUCT_SIZE` as #XLA_FFI_STRUCT_SIZE of
 *  `last_field`. The typedef `sname` must already exist. */
#define XLA_FFI_DEFINE_STRUCT_TRAITS(sname, last_field) \
  enum { sname##_STRUCT_SIZE = XLA_FFI_STRUCT_SIZE(sname, last_field) }

/** @brief Major version of this API. */
#define XLA_FFI_API_MAJOR 0
/** @brief Minor version of this API. */
#define XLA_FFI_API_MINOR 5

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Opaque handles and forward declarations                                   */
/* ------------------------------------------------------------------------ */

/** @brief The function table of the runtime (here: of the guest). */
typedef struct XLA_FFI_Api XLA_FFI_Api;
/** @brief Opaque runtime internals (always NULL in a guest). */
typedef struct XLA_FFI_InternalApi XLA_FFI_InternalApi;
/** @brief Opaque error handle. Made by `XLA_FFI_Error_Create`; ownership
 *  passes to whoever receives it from a handler; freed with
 *  `XLA_FFI_Error_Destroy`. */
typedef struct XLA_FFI_Error XLA_FFI_Error;
/** @brief Opaque per-call context (`XLA_FFI_CallFrame::ctx`). */
typedef struct XLA_FFI_InvokeContext XLA_FFI_InvokeContext;
/** @brief The 0.3 name of XLA_FFI_InvokeContext (XLA keeps it too). */
typedef XLA_FFI_InvokeContext XLA_FFI_ExecutionContext;
/** @brief Opaque asynchronous completion handle (not supported by cyxla). */
typedef struct XLA_FFI_Future XLA_FFI_Future;

/** @brief Header of an internal extension record (the metadata probe). */
typedef struct XLA_FFI_InternalExtension XLA_FFI_InternalExtension;
/** @brief The 0.3 name of XLA_FFI_InternalExtension. */
typedef XLA_FFI_InternalExtension XLA_FFI_Extension_Base;
/** @brief Identifies an extension of the invoke context: type and version. */
typedef struct XLA_FFI_ExtensionId XLA_FFI_ExtensionId;
/** @brief Header of an extension attached to the invoke context (none in a
 *  cyxla guest). */
typedef struct XLA_FFI_Extension XLA_FFI_Extension;
/** @brief An API version. */
typedef struct XLA_FFI_Api_Version XLA_FFI_Api_Version;
/** @brief Arguments of `XLA_FFI_Error_Create`. */
typedef struct XLA_FFI_Error_Create_Args XLA_FFI_Error_Create_Args;
/** @brief Arguments of `XLA_FFI_Error_GetDetails`. */
typedef struct XLA_FFI_Error_GetDetails_Args XLA_FFI_Error_GetDetails_Args;
/** @brief Arguments of `XLA_FFI_Error_GetMessage` (0.3; no code). */
typedef struct XLA_FFI_Error_GetMessage_Args XLA_FFI_Error_GetMessage_Args;
/** @brief Arguments of `XLA_FFI_Error_Destroy`. */
typedef struct XLA_FFI_Error_Destroy_Args XLA_FFI_Error_Destroy_Args;
/** @brief A buffer (argument or result) of a call. */
typedef struct XLA_FFI_Buffer XLA_FFI_Buffer;
/** @brief A byte string that is not NUL-terminated by contract. */
typedef struct XLA_FFI_ByteSpan XLA_FFI_ByteSpan;
/** @brief A scalar attribute. */
typedef struct XLA_FFI_Scalar XLA_FFI_Scalar;
/** @brief An array attribute. */
typedef struct XLA_FFI_Array XLA_FFI_Array;
/** @brief A registered type's identifier. */
typedef struct XLA_FFI_TypeId XLA_FFI_TypeId;
/** @brief Information about a registered type. */
typedef struct XLA_FFI_TypeInfo XLA_FFI_TypeInfo;
/** @brief Arguments of `XLA_FFI_Future_Create`. */
typedef struct XLA_FFI_Future_Create_Args XLA_FFI_Future_Create_Args;
/** @brief Arguments of `XLA_FFI_Future_SetAvailable`. */
typedef struct XLA_FFI_Future_SetAvailable_Args XLA_FFI_Future_SetAvailable_Args;
/** @brief Arguments of `XLA_FFI_Future_SetError`. */
typedef struct XLA_FFI_Future_SetError_Args XLA_FFI_Future_SetError_Args;
/** @brief The arguments of a call. */
typedef struct XLA_FFI_Args XLA_FFI_Args;
/** @brief The results of a call. */
typedef struct XLA_FFI_Rets XLA_FFI_Rets;
/** @brief The attributes of a call (or of a dictionary attribute). */
typedef struct XLA_FFI_Attrs XLA_FFI_Attrs;
/** @brief Everything a handler receives for one call. */
typedef struct XLA_FFI_CallFrame XLA_FFI_CallFrame;
/** @brief Handlers for the execution stages. */
typedef struct XLA_FFI_Handler_Bundle XLA_FFI_Handler_Bundle;
/** @brief Arguments of `XLA_FFI_Handler_Register`. */
typedef struct XLA_FFI_Handler_Register_Args XLA_FFI_Handler_Register_Args;
/** @brief Arguments of `XLA_FFI_Type_Register`. */
typedef struct XLA_FFI_Type_Register_Args XLA_FFI_Type_Register_Args;
/** @brief Arguments of `XLA_FFI_InvokeContext_Get`. */
typedef struct XLA_FFI_InvokeContext_Get_Args XLA_FFI_InvokeContext_Get_Args;
/** @brief The 0.3 name of XLA_FFI_InvokeContext_Get_Args. */
typedef XLA_FFI_InvokeContext_Get_Args XLA_FFI_ExecutionContext_Get_Args;
/** @brief Arguments of `XLA_FFI_InvokeContext_FindExtension`. */
typedef struct XLA_FFI_InvokeContext_FindExtension_Args
    XLA_FFI_InvokeContext_FindExtension_Args;
/** @brief Arguments of `XLA_FFI_CustomOptions_Get`. */
typedef struct XLA_FFI_CustomOptions_Get_Args XLA_FFI_CustomOptions_Get_Args;
/** @brief Arguments of `XLA_FFI_State_Set`. */
typedef struct XLA_FFI_State_Set_Args XLA_FFI_State_Set_Args;
/** @brief Arguments of `XLA_FFI_State_Get`. */
typedef struct XLA_FFI_State_Get_Args XLA_FFI_State_Get_Args;
/** @brief Arguments of `XLA_FFI_Stream_Get`. */
typedef struct XLA_FFI_Stream_Get_Args XLA_FFI_Stream_Get_Args;
/** @brief Arguments of `XLA_FFI_DeviceMemory_Allocate`. */
typedef struct XLA_FFI_DeviceMemory_Allocate_Args XLA_FFI_DeviceMemory_Allocate_Args;
/** @brief Arguments of `XLA_FFI_DeviceMemory_Free`. */
typedef struct XLA_FFI_DeviceMemory_Free_Args XLA_FFI_DeviceMemory_Free_Args;
/** @brief Arguments of `XLA_FFI_ThreadPool_Schedule`. */
typedef struct XLA_FFI_ThreadPool_Schedule_Args XLA_FFI_ThreadPool_Schedule_Args;
/** @brief Arguments of `XLA_FFI_ThreadPool_NumThreads`. */
typedef struct XLA_FFI_ThreadPool_NumThreads_Args XLA_FFI_ThreadPool_NumThreads_Args;
/** @brief Arguments of `XLA_FFI_RunId_Get`. */
typedef struct XLA_FFI_RunId_Get_Args XLA_FFI_RunId_Get_Args;
/** @brief Arguments of `XLA_FFI_DeviceOrdinal_Get`. */
typedef struct XLA_FFI_DeviceOrdinal_Get_Args XLA_FFI_DeviceOrdinal_Get_Args;
/** @brief Handler metadata, filled in answer to a metadata probe. */
typedef struct XLA_FFI_Metadata XLA_FFI_Metadata;
/** @brief The metadata extension of a probe frame. */
typedef struct XLA_FFI_Metadata_Extension XLA_FFI_Metadata_Extension;

/* ------------------------------------------------------------------------ */
/* Enums                                                                     */
/* ------------------------------------------------------------------------ */

/** @brief Kinds of internal extension records. */
typedef enum {
  XLA_FFI_Extension_Metadata = 1, /**< An XLA_FFI_Metadata_Extension. */
} XLA_FFI_InternalExtension_Type;
/** @brief The 0.3 name of XLA_FFI_InternalExtension_Type. */
typedef XLA_FFI_InternalExtension_Type XLA_FFI_Extension_Type;

/** @brief Error codes (abseil numbering). */
typedef enum {
  XLA_FFI_Error_Code_OK = 0,                   /**< Not an error. */
  XLA_FFI_Error_Code_CANCELLED = 1,            /**< Cancelled. */
  XLA_FFI_Error_Code_UNKNOWN = 2,              /**< Unknown. */
  XLA_FFI_Error_Code_INVALID_ARGUMENT = 3,     /**< Invalid argument. */
  XLA_FFI_Error_Code_DEADLINE_EXCEEDED = 4,    /**< Deadline exceeded. */
  XLA_FFI_Error_Code_NOT_FOUND = 5,            /**< Not found. */
  XLA_FFI_Error_Code_ALREADY_EXISTS = 6,       /**< Already exists. */
  XLA_FFI_Error_Code_PERMISSION_DENIED = 7,    /**< Permission denied. */
  XLA_FFI_Error_Code_RESOURCE_EXHAUSTED = 8,   /**< Resource exhausted. */
  XLA_FFI_Error_Code_FAILED_PRECONDITION = 9,  /**< Failed precondition. */
  XLA_FFI_Error_Code_ABORTED = 10,             /**< Aborted. */
  XLA_FFI_Error_Code_OUT_OF_RANGE = 11,        /**< Out of range. */
  XLA_FFI_Error_Code_UNIMPLEMENTED = 12,       /**< Unimplemented. */
  XLA_FFI_Error_Code_INTERNAL = 13,            /**< Internal. */
  XLA_FFI_Error_Code_UNAVAILABLE = 14,         /**< Unavailable. */
  XLA_FFI_Error_Code_DATA_LOSS = 15,           /**< Data loss. */
  XLA_FFI_Error_Code_UNAUTHENTICATED = 16      /**< Unauthenticated. */
} XLA_FFI_Error_Code;

/** @brief Element types; the values are XLA's `PrimitiveType` numbers (not
 *  `PJRT_Buffer_Type`). */
typedef enum {
  XLA_FFI_DataType_INVALID = 0,        /**< Invalid. */
  XLA_FFI_DataType_PRED = 1,           /**< bool, 1 byte. */
  XLA_FFI_DataType_S8 = 2,             /**< int8_t. */
  XLA_FFI_DataType_S16 = 3,            /**< int16_t. */
  XLA_FFI_DataType_S32 = 4,            /**< int32_t. */
  XLA_FFI_DataType_S64 = 5,            /**< int64_t. */
  XLA_FFI_DataType_U8 = 6,             /**< uint8_t. */
  XLA_FFI_DataType_U16 = 7,            /**< uint16_t. */
  XLA_FFI_DataType_U32 = 8,            /**< uint32_t. */
  XLA_FFI_DataType_U64 = 9,            /**< uint64_t. */
  XLA_FFI_DataType_F16 = 10,           /**< IEEE half. */
  XLA_FFI_DataType_F32 = 11,           /**< float. */
  XLA_FFI_DataType_F64 = 12,           /**< double. */
  XLA_FFI_DataType_C64 = 15,           /**< complex of two floats. */
  XLA_FFI_DataType_BF16 = 16,          /**< bfloat16. */
  XLA_FFI_DataType_TOKEN = 17,         /**< Token (no data). */
  XLA_FFI_DataType_C128 = 18,          /**< complex of two doubles. */
  XLA_FFI_DataType_F8E5M2 = 19,        /**< 8-bit float E5M2. */
  XLA_FFI_DataType_F8E4M3FN = 20,      /**< 8-bit float E4M3FN. */
  XLA_FFI_DataType_S4 = 21,            /**< 4-bit signed. */
  XLA_FFI_DataType_U4 = 22,            /**< 4-bit unsigned. */
  XLA_FFI_DataType_F8E4M3B11FNUZ = 23, /**< 8-bit float E4M3B11FNUZ. */
  XLA_FFI_DataType_F8E5M2FNUZ = 24,    /**< 8-bit float E5M2FNUZ. */
  XLA_FFI_DataType_F8E4M3FNUZ = 25,    /**< 8-bit float E4M3FNUZ. */
  XLA_FFI_DataType_S2 = 26,            /**< 2-bit signed. */
  XLA_FFI_DataType_U2 = 27,            /**< 2-bit unsigned. */
  XLA_FFI_DataType_F8E4M3 = 28,        /**< 8-bit float E4M3. */
  XLA_FFI_DataType_F8E3M4 = 29,        /**< 8-bit float E3M4. */
  XLA_FFI_DataType_S1 = 30,            /**< 1-bit signed. */
  XLA_FFI_DataType_U1 = 31,            /**< 1-bit unsigned. */
  XLA_FFI_DataType_F4E2M1FN = 32,      /**< 4-bit float E2M1FN. */
  XLA_FFI_DataType_F8E8M0FNU = 33,     /**< 8-bit float E8M0FNU. */
} XLA_FFI_DataType;

/** @brief Kinds of arguments. */
typedef enum {
  XLA_FFI_ArgType_BUFFER = 1, /**< An XLA_FFI_Buffer (tokens too). */
} XLA_FFI_ArgType;

/** @brief Kinds of results. */
typedef enum {
  XLA_FFI_RetType_BUFFER = 1, /**< An XLA_FFI_Buffer. */
} XLA_FFI_RetType;

/** @brief Kinds of attributes. */
typedef enum {
  XLA_FFI_AttrType_ARRAY = 1,      /**< An XLA_FFI_Array. */
  XLA_FFI_AttrType_DICTIONARY = 2, /**< A nested XLA_FFI_Attrs. */
  XLA_FFI_AttrType_SCALAR = 3,     /**< An XLA_FFI_Scalar. */
  XLA_FFI_AttrType_STRING = 4,     /**< An XLA_FFI_ByteSpan. */
} XLA_FFI_AttrType;

/** @brief Execution stages. cyxla delivers only EXECUTE; RECORD (0.5)
 *  records GPU command buffers. */
typedef enum {
  XLA_FFI_ExecutionStage_INSTANTIATE = 0, /**< At compile time. */
  XLA_FFI_ExecutionStage_PREPARE = 1,     /**< Before execution (GPU). */
  XLA_FFI_ExecutionStage_INITIALIZE = 2,  /**< Before execution (GPU). */
  XLA_FFI_ExecutionStage_EXECUTE = 3,     /**< The call itself. */
  XLA_FFI_ExecutionStage_RECORD = 4,      /**< Command-buffer recording (GPU; 0.5). */
} XLA_FFI_ExecutionStage;

/** @brief Bits of XLA_FFI_Handler_Traits. */
enum XLA_FFI_Handler_TraitsBits {
  /** The handler may be captured in a command buffer (GPU only). */
  XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0,
};

/** @brief A set of XLA_FFI_Handler_TraitsBits. */
typedef uint32_t XLA_FFI_Handler_Traits;

/* ------------------------------------------------------------------------ */
/* Structs                                                                   */
/* ------------------------------------------------------------------------ */

/** @brief Header of an internal extension record; they form a linked list
 *  (`XLA_FFI_CallFrame::extension_start`: the metadata probe). */
struct XLA_FFI_InternalExtension {
  size_t struct_size;                     /**< XLA_FFI_InternalExtension_STRUCT_SIZE or more. */
  XLA_FFI_InternalExtension_Type type;    /**< What follows the header. */
  struct XLA_FFI_InternalExtension* next; /**< Next record, or NULL. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_InternalExtension, next);
/** @brief The 0.3 name of XLA_FFI_InternalExtension_STRUCT_SIZE. */
enum { XLA_FFI_Extension_Base_STRUCT_SIZE = XLA_FFI_InternalExtension_STRUCT_SIZE };

/** @brief Type and version of an extension of the invoke context. */
struct XLA_FFI_ExtensionId {
  int64_t extension_type; /**< Unique among a context's extensions. */
  int32_t major_version;  /**< The extension's own major version. */
  int32_t minor_version;  /**< Its minor version. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ExtensionId, minor_version);

/** @brief Header of an extension of the invoke context (found with
 *  `XLA_FFI_InvokeContext_FindExtension`). A cyxla guest has none: the
 *  runtime's collectives and command-buffer recording (the only extensions
 *  XLA defines) do not reach a sandbox. */
struct XLA_FFI_Extension {
  size_t struct_size;             /**< Size of the whole extension struct. */
  XLA_FFI_ExtensionId id;         /**< Its type and version. */
  const XLA_FFI_Extension* next;  /**< Next extension, or NULL. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Extension, next);

/** @brief An API version (major, minor). */
struct XLA_FFI_Api_Version {
  size_t struct_size;                      /**< XLA_FFI_Api_Version_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  int major_version;                       /**< Major version. */
  int minor_version;                       /**< Minor version. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Api_Version, minor_version);

/** @brief Arguments of XLA_FFI_Error_Create. */
struct XLA_FFI_Error_Create_Args {
  size_t struct_size;                      /**< XLA_FFI_Error_Create_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  const char* message;                     /**< NUL-terminated; copied. */
  XLA_FFI_Error_Code errc;                 /**< Not XLA_FFI_Error_Code_OK. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_Create_Args, errc);

/** @brief Arguments of XLA_FFI_Error_GetDetails (0.5). */
struct XLA_FFI_Error_GetDetails_Args {
  size_t struct_size;                         /**< XLA_FFI_Error_GetDetails_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_Error* error;                       /**< The error. */
  const char* message;                        /**< Out: valid until the error is destroyed. */
  XLA_FFI_Error_Code errc;                    /**< Out: the error's code. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_GetDetails_Args, errc);

/** @brief Arguments of XLA_FFI_Error_GetMessage (0.3): XLA_FFI_Error_GetDetails_Args
 *  without `errc`. Slot 1 takes either (the cyxla host tells them apart by
 *  `struct_size`). */
struct XLA_FFI_Error_GetMessage_Args {
  size_t struct_size;                      /**< XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_Error* error;                    /**< The error. */
  const char* message;                     /**< Out: valid until the error is destroyed. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_GetMessage_Args, message);

/** @brief Arguments of XLA_FFI_Error_Destroy. */
struct XLA_FFI_Error_Destroy_Args {
  size_t struct_size;                      /**< XLA_FFI_Error_Destroy_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_Error* error;                    /**< The error to free. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_Destroy_Args, error);

/** @brief A dense, row-major buffer. */
struct XLA_FFI_Buffer {
  size_t struct_size;                      /**< XLA_FFI_Buffer_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_DataType dtype;                  /**< Element type. */
  void* data;                              /**< The elements. */
  int64_t rank;                            /**< Number of dimensions. */
  int64_t* dims;                           /**< `rank` dimensions. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Buffer, dims);

/** @brief A byte string; not NUL-terminated by contract. */
struct XLA_FFI_ByteSpan {
  const char* ptr; /**< The bytes. */
  size_t len;      /**< Their number. */
};

/** @brief A scalar attribute: `value` points at one element of `dtype`. */
struct XLA_FFI_Scalar {
  XLA_FFI_DataType dtype; /**< Its type. */
  void* value;            /**< Points at the value. */
};

/** @brief An array attribute: `size` contiguous elements of `dtype`. */
struct XLA_FFI_Array {
  XLA_FFI_DataType dtype; /**< Element type. */
  size_t size;            /**< Element count. */
  void* data;             /**< The elements. */
};

/** @brief A registered type's identifier (0: unknown, assign one). */
struct XLA_FFI_TypeId {
  int64_t type_id; /**< The identifier. */
};

/** @brief Information about a registered type. */
struct XLA_FFI_TypeInfo {
  size_t struct_size;                      /**< XLA_FFI_TypeInfo_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  void (*deleter)(void* object);           /**< Destroys an object of the type. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_TypeInfo, deleter);

/** @brief Arguments of XLA_FFI_Future_Create. */
struct XLA_FFI_Future_Create_Args {
  size_t struct_size;                      /**< XLA_FFI_Future_Create_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_Future* future;                  /**< Out. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_Create_Args, extension_start);

/** @brief Arguments of XLA_FFI_Future_SetAvailable. */
struct XLA_FFI_Future_SetAvailable_Args {
  size_t struct_size;                      /**< XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_Future* future;                  /**< The future. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_SetAvailable_Args, future);

/** @brief Arguments of XLA_FFI_Future_SetError. */
struct XLA_FFI_Future_SetError_Args {
  size_t struct_size;                      /**< XLA_FFI_Future_SetError_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_Future* future;                  /**< The future. */
  XLA_FFI_Error* error;                    /**< Ownership passes to the runtime. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_SetError_Args, error);

/** @brief The arguments of a call. */
struct XLA_FFI_Args {
  size_t struct_size;                      /**< XLA_FFI_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  int64_t size;                            /**< Number of arguments. */
  XLA_FFI_ArgType* types;                  /**< `size` kinds. */
  void** args;                             /**< `size` pointers (XLA_FFI_Buffer*). */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Args, args);

/** @brief The results of a call. */
struct XLA_FFI_Rets {
  size_t struct_size;                      /**< XLA_FFI_Rets_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  int64_t size;                            /**< Number of results. */
  XLA_FFI_RetType* types;                  /**< `size` kinds. */
  void** rets;                             /**< `size` pointers (XLA_FFI_Buffer*). */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Rets, rets);

/** @brief Attributes, sorted by name (byte-wise); also a dictionary's
 *  contents. */
struct XLA_FFI_Attrs {
  size_t struct_size;                      /**< XLA_FFI_Attrs_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  int64_t size;                            /**< Number of attributes. */
  XLA_FFI_AttrType* types;                 /**< `size` kinds. */
  XLA_FFI_ByteSpan** names;                /**< `size` names. */
  void** attrs;                            /**< `size` values (by kind). */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Attrs, attrs);

/** @brief Everything a handler receives for one call. Its `struct_size` is
 *  XLA_FFI_CallFrame_STRUCT_SIZE: `future` lies outside it. */
struct XLA_FFI_CallFrame {
  size_t struct_size;                      /**< XLA_FFI_CallFrame_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL, or a metadata probe. */
  const XLA_FFI_Api* api;                  /**< The function table. */
  XLA_FFI_InvokeContext* ctx;              /**< Per-call context. */
  XLA_FFI_ExecutionStage stage;            /**< The stage (EXECUTE). */
  XLA_FFI_Args args;                       /**< Arguments. */
  XLA_FFI_Rets rets;                       /**< Results. */
  XLA_FFI_Attrs attrs;                     /**< Attributes. */
  XLA_FFI_Future* future;                  /**< Out: asynchronous completion (unsupported). */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_CallFrame, attrs);

/** @brief A handler: returns NULL on success or an error made with
 *  `call_frame->api->XLA_FFI_Error_Create`. */
typedef XLA_FFI_Error* XLA_FFI_Handler(XLA_FFI_CallFrame* call_frame);

/** @brief Handlers for the five execution stages. */
struct XLA_FFI_Handler_Bundle {
  XLA_FFI_Handler* instantiate; /**< Optional. */
  XLA_FFI_Handler* prepare;     /**< Optional. */
  XLA_FFI_Handler* initialize;  /**< Optional. */
  XLA_FFI_Handler* execute;     /**< Required. */
  XLA_FFI_Handler* record;      /**< Optional (0.5). */
};

/** @brief Arguments of XLA_FFI_Handler_Register (unsupported in a guest:
 *  declare targets with CYXLA_TARGET). */
struct XLA_FFI_Handler_Register_Args {
  size_t struct_size;                      /**< XLA_FFI_Handler_Register_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_ByteSpan name;                   /**< Target name. */
  XLA_FFI_ByteSpan platform;               /**< Platform name. */
  XLA_FFI_Handler_Bundle bundle;           /**< The handlers. */
  XLA_FFI_Handler_Traits traits;           /**< Traits. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Handler_Register_Args, traits);

/** @brief Arguments of XLA_FFI_Type_Register. */
struct XLA_FFI_Type_Register_Args {
  size_t struct_size;                      /**< XLA_FFI_Type_Register_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_ByteSpan name;                   /**< Unique type name. */
  XLA_FFI_TypeId* type_id;                 /**< In/out. */
  const XLA_FFI_TypeInfo* type_info;       /**< Outside STRUCT_SIZE. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Type_Register_Args, type_id);

/** @brief Arguments of XLA_FFI_InvokeContext_Get (0.3: XLA_FFI_ExecutionContext_Get). */
struct XLA_FFI_InvokeContext_Get_Args {
  size_t struct_size;                      /**< XLA_FFI_InvokeContext_Get_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  XLA_FFI_TypeId* type_id;                 /**< Type of the user data. */
  void* data;                              /**< Out. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_InvokeContext_Get_Args, data);
/** @brief The 0.3 name of XLA_FFI_InvokeContext_Get_Args_STRUCT_SIZE. */
enum {
  XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE = XLA_FFI_InvokeContext_Get_Args_STRUCT_SIZE
};

/** @brief Arguments of XLA_FFI_InvokeContext_FindExtension (0.5). */
struct XLA_FFI_InvokeContext_FindExtension_Args {
  size_t struct_size;                         /**< XLA_FFI_InvokeContext_FindExtension_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;                 /**< The frame's ctx. */
  int64_t extension_type;                     /**< The extension wanted. */
  const XLA_FFI_Extension* extension;         /**< Out: it, or NULL (always NULL in a guest). */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_InvokeContext_FindExtension_Args, extension);

/** @brief Arguments of XLA_FFI_CustomOptions_Get (0.5). */
struct XLA_FFI_CustomOptions_Get_Args {
  size_t struct_size;                         /**< XLA_FFI_CustomOptions_Get_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;                 /**< The frame's ctx. */
  const XLA_FFI_Attrs* attrs;                 /**< Out: the options (a dictionary). */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_CustomOptions_Get_Args, attrs);

/** @brief Arguments of XLA_FFI_State_Set. */
struct XLA_FFI_State_Set_Args {
  size_t struct_size;                      /**< XLA_FFI_State_Set_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  XLA_FFI_ExecutionStage stage;            /**< Stage owning the state. */
  XLA_FFI_TypeId* type_id;                 /**< Type of the state. */
  void* state;                             /**< The state. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_State_Set_Args, state);

/** @brief Arguments of XLA_FFI_State_Get. */
struct XLA_FFI_State_Get_Args {
  size_t struct_size;                      /**< XLA_FFI_State_Get_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  XLA_FFI_ExecutionStage stage;            /**< Stage owning the state. */
  XLA_FFI_TypeId* type_id;                 /**< Type of the state. */
  void* state;                             /**< Out. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_State_Get_Args, state);

/** @brief Arguments of XLA_FFI_Stream_Get (unsupported in a guest). */
struct XLA_FFI_Stream_Get_Args {
  size_t struct_size;                      /**< XLA_FFI_Stream_Get_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  void* stream;                            /**< Out. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Stream_Get_Args, stream);

/** @brief Arguments of XLA_FFI_DeviceMemory_Allocate (unsupported in a guest). */
struct XLA_FFI_DeviceMemory_Allocate_Args {
  size_t struct_size;                      /**< XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  size_t size;                             /**< Bytes. */
  size_t alignment;                        /**< Alignment. */
  void* data;                              /**< Out. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceMemory_Allocate_Args, data);

/** @brief Arguments of XLA_FFI_DeviceMemory_Free (unsupported in a guest). */
struct XLA_FFI_DeviceMemory_Free_Args {
  size_t struct_size;                      /**< XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  size_t size;                             /**< Bytes. */
  void* data;                              /**< The memory. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceMemory_Free_Args, data);

/** @brief A task for XLA_FFI_ThreadPool_Schedule. */
typedef void XLA_FFI_Task(void* data);

/** @brief Arguments of XLA_FFI_ThreadPool_Schedule (unsupported in a guest). */
struct XLA_FFI_ThreadPool_Schedule_Args {
  size_t struct_size;                      /**< XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  XLA_FFI_Task* task;                      /**< The task. */
  void* data;                              /**< Its argument. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ThreadPool_Schedule_Args, data);

/** @brief Arguments of XLA_FFI_ThreadPool_NumThreads (unsupported in a guest). */
struct XLA_FFI_ThreadPool_NumThreads_Args {
  size_t struct_size;                      /**< XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  int64_t* num_threads;                    /**< Out. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ThreadPool_NumThreads_Args, num_threads);

/** @brief Arguments of XLA_FFI_RunId_Get. */
struct XLA_FFI_RunId_Get_Args {
  size_t struct_size;                      /**< XLA_FFI_RunId_Get_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  int64_t run_id;                          /**< Out. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_RunId_Get_Args, run_id);

/** @brief Arguments of XLA_FFI_DeviceOrdinal_Get. */
struct XLA_FFI_DeviceOrdinal_Get_Args {
  size_t struct_size;                      /**< XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_InvokeContext* ctx;              /**< The frame's ctx. */
  int32_t device_ordinal;                  /**< Out. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal);

/** @brief Handler metadata, written by a handler in answer to a probe.
 *  `state_type_id` lies outside XLA_FFI_Metadata_STRUCT_SIZE. */
struct XLA_FFI_Metadata {
  size_t struct_size;                  /**< XLA_FFI_Metadata_STRUCT_SIZE. */
  XLA_FFI_Api_Version api_version;     /**< Out: the handler's API version. */
  XLA_FFI_Handler_Traits traits;       /**< Out: its traits. */
  XLA_FFI_TypeId state_type_id;        /**< Out: its state type, or 0. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Metadata, traits);

/** @brief The metadata extension of a probe frame. */
struct XLA_FFI_Metadata_Extension {
  XLA_FFI_InternalExtension extension_base; /**< type = XLA_FFI_Extension_Metadata. */
  XLA_FFI_Metadata* metadata;            /**< Where to write the answer. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Metadata_Extension, metadata);

/* ------------------------------------------------------------------------ */
/* The function table                                                        */
/* ------------------------------------------------------------------------ */

/** @brief Makes an error (the message is copied). */
typedef XLA_FFI_Error* XLA_FFI_Error_Create(XLA_FFI_Error_Create_Args* args);
/** @brief Reads an error's message and code. */
typedef void XLA_FFI_Error_GetDetails(XLA_FFI_Error_GetDetails_Args* args);
/** @brief Reads an error's message (0.3; the same slot as XLA_FFI_Error_GetDetails). */
typedef void XLA_FFI_Error_GetMessage(XLA_FFI_Error_GetMessage_Args* args);
/** @brief Frees an error. */
typedef void XLA_FFI_Error_Destroy(XLA_FFI_Error_Destroy_Args* args);
/** @brief Registers a handler bundle (unsupported in a guest). */
typedef XLA_FFI_Error* XLA_FFI_Handler_Register(XLA_FFI_Handler_Register_Args* args);
/** @brief Gets the platform stream (unsupported in a guest). */
typedef XLA_FFI_Error* XLA_FFI_Stream_Get(XLA_FFI_Stream_Get_Args* args);
/** @brief Registers a type. */
typedef XLA_FFI_Error* XLA_FFI_Type_Register(XLA_FFI_Type_Register_Args* args);
/** @brief Gets user data from the invoke context. */
typedef XLA_FFI_Error* XLA_FFI_InvokeContext_Get(XLA_FFI_InvokeContext_Get_Args* args);
/** @brief The 0.3 name of XLA_FFI_InvokeContext_Get. */
typedef XLA_FFI_InvokeContext_Get XLA_FFI_ExecutionContext_Get;
/** @brief Sets a state. */
typedef XLA_FFI_Error* XLA_FFI_State_Set(XLA_FFI_State_Set_Args* args);
/** @brief Gets a state. */
typedef XLA_FFI_Error* XLA_FFI_State_Get(XLA_FFI_State_Get_Args* args);
/** @brief Allocates device memory (unsupported in a guest). */
typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Allocate(XLA_FFI_DeviceMemory_Allocate_Args* args);
/** @brief Frees device memory (unsupported in a guest). */
typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Free(XLA_FFI_DeviceMemory_Free_Args* args);
/** @brief Schedules a task (unsupported in a guest). */
typedef XLA_FFI_Error* XLA_FFI_ThreadPool_Schedule(XLA_FFI_ThreadPool_Schedule_Args* args);
/** @brief Number of pool threads (unsupported in a guest). */
typedef XLA_FFI_Error* XLA_FFI_ThreadPool_NumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args);
/** @brief Creates a future (unsupported in a guest). */
typedef XLA_FFI_Error* XLA_FFI_Future_Create(XLA_FFI_Future_Create_Args* args);
/** @brief Completes a future (unsupported in a guest). */
typedef XLA_FFI_Error* XLA_FFI_Future_SetAvailable(XLA_FFI_Future_SetAvailable_Args* args);
/** @brief Fails a future (unsupported in a guest). */
typedef XLA_FFI_Error* XLA_FFI_Future_SetError(XLA_FFI_Future_SetError_Args* args);
/** @brief Gets the run id. */
typedef XLA_FFI_Error* XLA_FFI_RunId_Get(XLA_FFI_RunId_Get_Args* args);
/** @brief Gets the device ordinal. */
typedef XLA_FFI_Error* XLA_FFI_DeviceOrdinal_Get(XLA_FFI_DeviceOrdinal_Get_Args* args);
/** @brief Finds an extension of the invoke context (0.5; none in a guest). */
typedef XLA_FFI_Error* XLA_FFI_InvokeContext_FindExtension(
    XLA_FFI_InvokeContext_FindExtension_Args* args);
/** @brief Gets the call's custom options (0.5; an empty dictionary in a guest). */
typedef XLA_FFI_Error* XLA_FFI_CustomOptions_Get(XLA_FFI_CustomOptions_Get_Args* args);

/** @brief The function table (API version 0.5: 20 slots). In a guest it
 *  lives in guest memory and its slots are the `cyxla` host imports. Slots 1
 *  and 6 answer to their 0.5 and their 0.3 names. */
struct XLA_FFI_Api {
  size_t struct_size;                      /**< XLA_FFI_Api_STRUCT_SIZE. */
  XLA_FFI_InternalExtension* extension_start; /**< NULL. */
  XLA_FFI_Api_Version api_version;         /**< 0.5. */
  const XLA_FFI_InternalApi* internal_api; /**< NULL. */
  XLA_FFI_Error_Create* XLA_FFI_Error_Create;                   /**< Slot 0. */
  union {
    XLA_FFI_Error_GetDetails* XLA_FFI_Error_GetDetails;         /**< Slot 1. */
    XLA_FFI_Error_GetMessage* XLA_FFI_Error_GetMessage;         /**< Slot 1 (0.3 name). */
  };
  XLA_FFI_Error_Destroy* XLA_FFI_Error_Destroy;                 /**< Slot 2. */
  XLA_FFI_Handler_Register* XLA_FFI_Handler_Register;           /**< Slot 3. */
  XLA_FFI_Stream_Get* XLA_FFI_Stream_Get;                       /**< Slot 4. */
  XLA_FFI_Type_Register* XLA_FFI_Type_Register;                 /**< Slot 5. */
  union {
    XLA_FFI_InvokeContext_Get* XLA_FFI_InvokeContext_Get;       /**< Slot 6. */
    XLA_FFI_ExecutionContext_Get* XLA_FFI_ExecutionContext_Get; /**< Slot 6 (0.3 name). */
  };
  XLA_FFI_State_Set* XLA_FFI_State_Set;                         /**< Slot 7. */
  XLA_FFI_State_Get* XLA_FFI_State_Get;                         /**< Slot 8. */
  XLA_FFI_DeviceMemory_Allocate* XLA_FFI_DeviceMemory_Allocate; /**< Slot 9. */
  XLA_FFI_DeviceMemory_Free* XLA_FFI_DeviceMemory_Free;         /**< Slot 10. */
  XLA_FFI_ThreadPool_Schedule* XLA_FFI_ThreadPool_Schedule;     /**< Slot 11. */
  XLA_FFI_ThreadPool_NumThreads* XLA_FFI_ThreadPool_NumThreads; /**< Slot 12. */
  XLA_FFI_Future_Create* XLA_FFI_Future_Create;                 /**< Slot 13. */
  XLA_FFI_Future_SetAvailable* XLA_FFI_Future_SetAvailable;     /**< Slot 14. */
  XLA_FFI_Future_SetError* XLA_FFI_Future_SetError;             /**< Slot 15. */
  XLA_FFI_RunId_Get* XLA_FFI_RunId_Get;                         /**< Slot 16. */
  XLA_FFI_DeviceOrdinal_Get* XLA_FFI_DeviceOrdinal_Get;         /**< Slot 17. */
  XLA_FFI_InvokeContext_FindExtension* XLA_FFI_InvokeContext_FindExtension; /**< Slot 18. */
  XLA_FFI_CustomOptions_Get* XLA_FFI_CustomOptions_Get;         /**< Slot 19. */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Api, XLA_FFI_CustomOptions_Get);

/** @brief The runtime's function table. In a guest: the guest's own table
 *  (the one the export `cyxla_api` returns), defined by the cyxla runtime
 *  (`guest-sdk/c/cyxla_runtime.c`). */
const XLA_FFI_Api* XLA_FFI_GetApi(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

/** @brief An XLA_FFI_TypeId meaning "unknown / assign one". */
#ifdef __cplusplus
#define XLA_FFI_UNKNOWN_TYPE_ID XLA_FFI_TypeId{0}
#else
#define XLA_FFI_UNKNOWN_TYPE_ID ((XLA_FFI_TypeId){0})
#endif

#endif /* XLA_FFI_API_C_API_H_ */
