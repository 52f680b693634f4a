//! Tests of the ABI constants against the tables of docs/abi.md and of the
//! targets-section parser.

use super::*;
use alloc::vec;
use alloc::vec::Vec;

/// (name, sizeof, align, STRUCT_SIZE or None, [(field, offset, size)])
type Layout = (
    &'static str,
    u32,
    u32,
    Option<u32>,
    &'static [(&'static str, u32, u32)],
);

/// The reference layout of `$module`, the C struct `$c_name` with
/// `struct_size` at 0 and `extension_start` at 4 (4 bytes each), then the
/// fields given as `"name" = OFFSET_CONSTANT: size`.
macro_rules! args_layout {
    ($c_name:literal, $module:ident, $($field:literal = $offset:ident: $size:expr,)*) => {
        (
            $c_name,
            $module::SIZE,
            $module::ALIGN,
            Some($module::STRUCT_SIZE),
            &[
                ("struct_size", 0, 4),
                ("extension_start", 4, 4),
                $(($field, $module::$offset, $size),)*
            ],
        )
    };
}

/// The wasm32 columns of the layout tables in docs/abi.md ("Frame-side structs",
/// "Service-call argument structs", "XLA_FFI_Api"), copied by hand: offsets
/// and sizes of every field.
fn reference_layouts() -> Vec<Layout> {
    vec![
        (
            "XLA_FFI_CallFrame",
            call_frame::SIZE,
            call_frame::ALIGN,
            Some(call_frame::STRUCT_SIZE),
            &[
                ("struct_size", call_frame::STRUCT_SIZE_OFFSET, 4),
                ("extension_start", call_frame::EXTENSION_START, 4),
                ("api", call_frame::API, 4),
                ("ctx", call_frame::CTX, 4),
                ("stage", call_frame::STAGE, 4),
                ("args", call_frame::ARGS, args::SIZE),
                ("rets", call_frame::RETS, rets::SIZE),
                ("attrs", call_frame::ATTRS, attrs::SIZE),
                ("future", call_frame::FUTURE, 4),
            ],
        ),
        (
            "XLA_FFI_Args",
            args::SIZE,
            args::ALIGN,
            Some(args::STRUCT_SIZE),
            &[
                ("struct_size", args::STRUCT_SIZE_OFFSET, 4),
                ("extension_start", args::EXTENSION_START, 4),
                ("size", args::SIZE_FIELD, 8),
                ("types", args::TYPES, 4),
                ("args", args::ARGS, 4),
            ],
        ),
        (
            "XLA_FFI_Rets",
            rets::SIZE,
            rets::ALIGN,
            Some(rets::STRUCT_SIZE),
            &[
                ("struct_size", rets::STRUCT_SIZE_OFFSET, 4),
                ("extension_start", rets::EXTENSION_START, 4),
                ("size", rets::SIZE_FIELD, 8),
                ("types", rets::TYPES, 4),
                ("rets", rets::RETS, 4),
            ],
        ),
        (
            "XLA_FFI_Attrs",
            attrs::SIZE,
            attrs::ALIGN,
            Some(attrs::STRUCT_SIZE),
            &[
                ("struct_size", attrs::STRUCT_SIZE_OFFSET, 4),
                ("extension_start", attrs::EXTENSION_START, 4),
                ("size", attrs::SIZE_FIELD, 8),
                ("types", attrs::TYPES, 4),
                ("names", attrs::NAMES, 4),
                ("attrs", attrs::ATTRS, 4),
            ],
        ),
        (
            "XLA_FFI_Buffer",
            buffer::SIZE,
            buffer::ALIGN,
            Some(buffer::STRUCT_SIZE),
            &[
                ("struct_size", buffer::STRUCT_SIZE_OFFSET, 4),
                ("extension_start", buffer::EXTENSION_START, 4),
                ("dtype", buffer::DTYPE, 4),
                ("data", buffer::DATA, 4),
                ("rank", buffer::RANK, 8),
                ("dims", buffer::DIMS, 4),
            ],
        ),
        (
            "XLA_FFI_ByteSpan",
            byte_span::SIZE,
            byte_span::ALIGN,
            None,
            &[("ptr", byte_span::PTR, 4), ("len", byte_span::LEN, 4)],
        ),
        (
            "XLA_FFI_Scalar",
            scalar::SIZE,
            scalar::ALIGN,
            None,
            &[("dtype", scalar::DTYPE, 4), ("value", scalar::VALUE, 4)],
        ),
        (
            "XLA_FFI_Array",
            array::SIZE,
            array::ALIGN,
            None,
            &[
                ("dtype", array::DTYPE, 4),
                ("size", array::SIZE_FIELD, 4),
                ("data", array::DATA, 4),
            ],
        ),
        (
            "XLA_FFI_Extension_Base",
            extension_base::SIZE,
            extension_base::ALIGN,
            Some(extension_base::STRUCT_SIZE),
            &[
                ("struct_size", extension_base::STRUCT_SIZE_OFFSET, 4),
                ("type", extension_base::TYPE, 4),
                ("next", extension_base::NEXT, 4),
            ],
        ),
        (
            "XLA_FFI_Metadata_Extension",
            metadata_extension::SIZE,
            metadata_extension::ALIGN,
            Some(metadata_extension::STRUCT_SIZE),
            &[
                (
                    "extension_base",
                    metadata_extension::EXTENSION_BASE,
                    extension_base::SIZE,
                ),
                ("metadata", metadata_extension::METADATA, 4),
            ],
        ),
        (
            "XLA_FFI_Metadata",
            metadata::SIZE,
            metadata::ALIGN,
            Some(metadata::STRUCT_SIZE),
            &[
                ("struct_size", metadata::STRUCT_SIZE_OFFSET, 4),
                ("api_version", metadata::API_VERSION, api_version::SIZE),
                ("traits", metadata::TRAITS, 4),
                ("state_type_id", metadata::STATE_TYPE_ID, 8),
            ],
        ),
        (
            "XLA_FFI_Api_Version",
            api_version::SIZE,
            api_version::ALIGN,
            Some(api_version::STRUCT_SIZE),
            &[
                ("struct_size", api_version::STRUCT_SIZE_OFFSET, 4),
                ("extension_start", api_version::EXTENSION_START, 4),
                ("major_version", api_version::MAJOR_VERSION, 4),
                ("minor_version", api_version::MINOR_VERSION, 4),
            ],
        ),
        (
            "XLA_FFI_TypeId",
            type_id::SIZE,
            type_id::ALIGN,
            None,
            &[("type_id", type_id::TYPE_ID, 8)],
        ),
        args_layout!("XLA_FFI_Error_Create_Args", error_create_args,
            "message" = MESSAGE: 4,
            "errc" = ERRC: 4,
        ),
        args_layout!("XLA_FFI_Error_GetDetails_Args", error_get_details_args,
            "error" = ERROR: 4,
            "message" = MESSAGE: 4,
            "errc" = ERRC: 4,
        ),
        args_layout!("XLA_FFI_Error_GetMessage_Args", error_get_message_args,
            "error" = ERROR: 4,
            "message" = MESSAGE: 4,
        ),
        args_layout!("XLA_FFI_Error_Destroy_Args", error_destroy_args,
            "error" = ERROR: 4,
        ),
        args_layout!("XLA_FFI_TypeInfo", type_info,
            "deleter" = DELETER: 4,
        ),
        args_layout!("XLA_FFI_Future_Create_Args", future_create_args,
            "future" = FUTURE: 4,
        ),
        args_layout!("XLA_FFI_Future_SetAvailable_Args", future_set_available_args,
            "future" = FUTURE: 4,
        ),
        args_layout!("XLA_FFI_Future_SetError_Args", future_set_error_args,
            "future" = FUTURE: 4,
            "error" = ERROR: 4,
        ),
        (
            "XLA_FFI_Handler_Bundle",
            handler_bundle::SIZE,
            handler_bundle::ALIGN,
            None,
            &[
                ("instantiate", handler_bundle::INSTANTIATE, 4),
                ("prepare", handler_bundle::PREPARE, 4),
                ("initialize", handler_bundle::INITIALIZE, 4),
                ("execute", handler_bundle::EXECUTE, 4),
                ("record", handler_bundle::RECORD, 4),
            ],
        ),
        args_layout!("XLA_FFI_Handler_Register_Args", handler_register_args,
            "name" = NAME: byte_span::SIZE,
            "platform" = PLATFORM: byte_span::SIZE,
            "bundle" = BUNDLE: handler_bundle::SIZE,
            "traits" = TRAITS: 4,
        ),
        args_layout!("XLA_FFI_Type_Register_Args", type_register_args,
            "name" = NAME: byte_span::SIZE,
            "type_id" = TYPE_ID: 4,
            "type_info" = TYPE_INFO: 4,
        ),
        args_layout!("XLA_FFI_InvokeContext_Get_Args", execution_context_get_args,
            "ctx" = CTX: 4,
            "type_id" = TYPE_ID: 4,
            "data" = DATA: 4,
        ),
        // Also XLA_FFI_State_Get_Args ("as State_Set"), state_get_args.
        args_layout!("XLA_FFI_State_Set_Args", state_set_args,
            "ctx" = CTX: 4,
            "stage" = STAGE: 4,
            "type_id" = TYPE_ID: 4,
            "state" = STATE: 4,
        ),
        args_layout!("XLA_FFI_Stream_Get_Args", stream_get_args,
            "ctx" = CTX: 4,
            "stream" = STREAM: 4,
        ),
        args_layout!("XLA_FFI_DeviceMemory_Allocate_Args", device_memory_allocate_args,
            "ctx" = CTX: 4,
            "size" = SIZE_FIELD: 4,
            "alignment" = ALIGNMENT: 4,
            "data" = DATA: 4,
        ),
        args_layout!("XLA_FFI_DeviceMemory_Free_Args", device_memory_free_args,
            "ctx" = CTX: 4,
            "size" = SIZE_FIELD: 4,
            "data" = DATA: 4,
        ),
        args_layout!("XLA_FFI_ThreadPool_Schedule_Args", thread_pool_schedule_args,
            "ctx" = CTX: 4,
            "task" = TASK: 4,
            "data" = DATA: 4,
        ),
        args_layout!("XLA_FFI_ThreadPool_NumThreads_Args", thread_pool_num_threads_args,
            "ctx" = CTX: 4,
            "num_threads" = NUM_THREADS: 4,
        ),
        args_layout!("XLA_FFI_RunId_Get_Args", run_id_get_args,
            "ctx" = CTX: 4,
            "run_id" = RUN_ID: 8,
        ),
        args_layout!("XLA_FFI_DeviceOrdinal_Get_Args", device_ordinal_get_args,
            "ctx" = CTX: 4,
            "device_ordinal" = DEVICE_ORDINAL: 4,
        ),
        args_layout!("XLA_FFI_InvokeContext_FindExtension_Args", invoke_context_find_extension_args,
            "ctx" = CTX: 4,
            "extension_type" = EXTENSION_TYPE: 8,
            "extension" = EXTENSION: 4,
        ),
        args_layout!("XLA_FFI_CustomOptions_Get_Args", custom_options_get_args,
            "ctx" = CTX: 4,
            "attrs" = ATTRS: 4,
        ),
        (
            "XLA_FFI_ExtensionId",
            extension_id::SIZE,
            extension_id::ALIGN,
            None,
            &[
                ("extension_type", extension_id::EXTENSION_TYPE, 8),
                ("major_version", extension_id::MAJOR_VERSION, 4),
                ("minor_version", extension_id::MINOR_VERSION, 4),
            ],
        ),
        (
            "XLA_FFI_Extension",
            extension::SIZE,
            extension::ALIGN,
            Some(extension::STRUCT_SIZE),
            &[
                ("struct_size", extension::STRUCT_SIZE_OFFSET, 4),
                ("id", extension::ID, extension_id::SIZE),
                ("next", extension::NEXT, 4),
            ],
        ),
    ]
}

/// Every struct's fields are in increasing, non-overlapping, naturally
/// aligned order (fields of 8 bytes at 8-aligned offsets); the struct's
/// size is the end of its last field rounded up to its alignment; and
/// STRUCT_SIZE lies between the end of a declared field and the size.
#[test]
fn layouts_are_consistent() {
    for (name, size, align, struct_size, fields) in reference_layouts() {
        let mut end = 0;
        let mut max_align = 1;
        for &(field, off, fsize) in fields {
            assert!(
                off >= end,
                "{name}.{field} at {off} overlaps the previous field ending at {end}"
            );
            let falign = match (field, fsize) {
                ("args" | "rets" | "attrs", s) if s > 4 => 8,
                (
                    "size" | "rank" | "run_id" | "state_type_id" | "type_id" | "extension_type",
                    8,
                ) => 8,
                ("id", 16) => 8,
                _ => 4,
            };
            assert_eq!(
                off % falign,
                0,
                "{name}.{field} at {off} is not {falign}-aligned"
            );
            max_align = max_align.max(falign);
            // Padding before an 8-aligned field is at most 4 bytes in these structs.
            assert!(off - end < 8, "{name}.{field}: unexpected gap {end}..{off}");
            end = off + fsize;
        }
        assert_eq!(align, max_align, "{name}: alignment");
        assert_eq!(
            size,
            end.div_ceil(align) * align,
            "{name}: sizeof vs end of last field {end}"
        );
        if let Some(ss) = struct_size {
            assert!(ss <= size, "{name}: STRUCT_SIZE {ss} > sizeof {size}");
            let field_ends: Vec<u32> = fields.iter().map(|&(_, o, s)| o + s).collect();
            assert!(
                field_ends.contains(&ss),
                "{name}: STRUCT_SIZE {ss} is not the end of a field"
            );
        }
    }
}

/// The numbers of docs/abi.md, "STRUCT_SIZE values", for the frame-side structs.
#[test]
fn struct_sizes_match_reference() {
    assert_eq!((call_frame::SIZE, call_frame::STRUCT_SIZE), (112, 104));
    assert_eq!((args::SIZE, args::STRUCT_SIZE), (24, 24));
    assert_eq!((rets::SIZE, rets::STRUCT_SIZE), (24, 24));
    assert_eq!((attrs::SIZE, attrs::STRUCT_SIZE), (32, 28));
    assert_eq!((buffer::SIZE, buffer::STRUCT_SIZE), (32, 28));
    assert_eq!(
        (metadata_extension::SIZE, metadata_extension::STRUCT_SIZE),
        (16, 16)
    );
    assert_eq!((metadata::SIZE, metadata::STRUCT_SIZE), (32, 24));
    assert_eq!((api_version::SIZE, api_version::STRUCT_SIZE), (16, 16));
    assert_eq!(
        (type_register_args::SIZE, type_register_args::STRUCT_SIZE),
        (24, 20)
    );
    assert_eq!(
        (future_create_args::SIZE, future_create_args::STRUCT_SIZE),
        (12, 8)
    );
    assert_eq!(
        (error_create_args::SIZE, error_create_args::STRUCT_SIZE),
        (16, 16)
    );
    assert_eq!(
        (
            handler_register_args::SIZE,
            handler_register_args::STRUCT_SIZE
        ),
        (48, 48)
    );
    assert_eq!(
        (
            error_get_details_args::SIZE,
            error_get_details_args::STRUCT_SIZE
        ),
        (20, 20)
    );
    assert_eq!(
        (
            invoke_context_find_extension_args::SIZE,
            invoke_context_find_extension_args::STRUCT_SIZE
        ),
        (32, 28)
    );
    assert_eq!(
        (
            custom_options_get_args::SIZE,
            custom_options_get_args::STRUCT_SIZE
        ),
        (16, 16)
    );
    assert_eq!((extension::SIZE, extension::STRUCT_SIZE), (32, 28));
    assert_eq!(
        (
            device_ordinal_get_args::SIZE,
            device_ordinal_get_args::STRUCT_SIZE
        ),
        (16, 16)
    );
    assert_eq!((byte_span::SIZE, scalar::SIZE, array::SIZE), (8, 8, 12));
    assert_eq!(call_frame::ARGS + args::SIZE, call_frame::RETS);
    assert_eq!(call_frame::RETS + rets::SIZE, call_frame::ATTRS);
    assert_eq!(call_frame::ATTRS + attrs::SIZE, call_frame::STRUCT_SIZE);
}

/// The imports of the version-0.3 `XLA_FFI_Api` (docs/abi.md, "XLA_FFI_Api"),
/// copied by hand: (slot offset, import, C function in 0.5, returns an
/// error). Guests already built rely on their names and signatures; a new
/// import can only come after them.
#[rustfmt::skip]
const API_0_3: [(u32, &str, &str, bool); 18] = [
    (28, "error_create",            "XLA_FFI_Error_Create",           true),
    (32, "error_get_message",       "XLA_FFI_Error_GetDetails",       false),
    (36, "error_destroy",           "XLA_FFI_Error_Destroy",          false),
    (40, "handler_register",        "XLA_FFI_Handler_Register",       true),
    (44, "stream_get",              "XLA_FFI_Stream_Get",             true),
    (48, "type_register",           "XLA_FFI_Type_Register",          true),
    (52, "execution_context_get",   "XLA_FFI_InvokeContext_Get",      true),
    (56, "state_set",               "XLA_FFI_State_Set",              true),
    (60, "state_get",               "XLA_FFI_State_Get",              true),
    (64, "device_memory_allocate",  "XLA_FFI_DeviceMemory_Allocate",  true),
    (68, "device_memory_free",      "XLA_FFI_DeviceMemory_Free",      true),
    (72, "thread_pool_schedule",    "XLA_FFI_ThreadPool_Schedule",    true),
    (76, "thread_pool_num_threads", "XLA_FFI_ThreadPool_NumThreads",  true),
    (80, "future_create",           "XLA_FFI_Future_Create",          true),
    (84, "future_set_available",    "XLA_FFI_Future_SetAvailable",    true),
    (88, "future_set_error",        "XLA_FFI_Future_SetError",        true),
    (92, "run_id_get",              "XLA_FFI_RunId_Get",              true),
    (96, "device_ordinal_get",      "XLA_FFI_DeviceOrdinal_Get",      true),
];

/// The imports version 0.5 adds after them.
#[rustfmt::skip]
const API_0_5: [(u32, &str, &str, bool); 2] = [
    (100, "invoke_context_find_extension", "XLA_FFI_InvokeContext_FindExtension", true),
    (104, "custom_options_get",            "XLA_FFI_CustomOptions_Get",           true),
];

/// docs/abi.md, "XLA_FFI_Api": the version-0.3 slots keep their place,
/// name and signature; the table is the header and one 4-byte slot per
/// import (100 bytes for version 0.3).
#[test]
fn api_table_slots() {
    assert_eq!(API_FN_SLOTS, API_0_3.len() + API_0_5.len());
    for (imp, (offset, name, c_name, returns_error)) in
        IMPORT_TABLE.iter().zip(API_0_3.into_iter().chain(API_0_5))
    {
        let found = (
            api::slot_offset(imp.slot),
            imp.name,
            imp.c_name,
            imp.returns_error,
        );
        assert_eq!(found, (offset, name, c_name, returns_error));
    }
    assert_eq!(api::slot_offset(API_FN_SLOTS), api::SIZE);
    assert_eq!(api::STRUCT_SIZE, api::SIZE);
    assert_eq!(api::slot_offset(API_0_3.len()), 100);
    assert_eq!(api::SIZE_0_3, 100);
    assert_eq!(api::SIZE, 108);
    assert_eq!(api::API_VERSION + api_version::SIZE + 4, api::FIRST_SLOT);
    assert_eq!(api::INTERNAL_API, api::API_VERSION + api_version::SIZE);
}

#[test]
fn import_table_matches_imports() {
    for (i, imp) in IMPORT_TABLE.iter().enumerate() {
        assert_eq!(imp.slot, i);
        assert_eq!(imp.name, IMPORTS[i]);
        assert!(is_valid_name(imp.name));
        assert_eq!(find_import(imp.name), Some(imp));
    }
    let mut names: Vec<&str> = IMPORTS.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), API_FN_SLOTS, "import names are unique");
    assert_eq!(find_import("fd_write"), None);
}

#[test]
fn names() {
    assert!(is_valid_name("rms_norm"));
    assert!(is_valid_name("a.b$c-D_9"));
    assert!(is_valid_name(&"x".repeat(MAX_NAME_LEN)));
    assert!(!is_valid_name(&"x".repeat(MAX_NAME_LEN + 1)));
    assert!(!is_valid_name(""));
    assert!(!is_valid_name("with space"));
    assert!(!is_valid_name("new\nline"));
    assert!(!is_valid_name("héllo"));
    assert!(!is_valid_name("a/b"));
}

#[test]
fn parse_valid_sections() {
    assert_eq!(parse_targets(b""), Ok(vec![]));
    assert_eq!(parse_targets(b"\0\0\0"), Ok(vec![]));
    let s = b"cyxla-target v1 rms_norm rms_norm\n\0\0cyxla-target v1 rms_norm_fwd fwd_export\n\0";
    assert_eq!(
        parse_targets(s),
        Ok(vec![
            ("rms_norm", "rms_norm"),
            ("rms_norm_fwd", "fwd_export")
        ])
    );
    // Exact duplicates (the same record from two objects) collapse.
    let s = b"cyxla-target v1 a e\ncyxla-target v1 b f\ncyxla-target v1 a e\n";
    assert_eq!(parse_targets(s), Ok(vec![("a", "e"), ("b", "f")]));
    let records: Vec<_> = target_records(s).collect::<Result<_, _>>().unwrap();
    assert_eq!(records.len(), 3);
    assert_eq!(
        records[1],
        TargetRecord {
            target: "b",
            export: "f",
            offset: 20
        }
    );
}

#[test]
fn parse_invalid_sections() {
    let err = |s: &[u8]| parse_targets(s).unwrap_err();
    assert_eq!(err(b"hello"), TargetsError::BadPrefix { offset: 0 });
    assert_eq!(
        err(b"cyxla-target v1 a e\njunk\n"),
        TargetsError::BadPrefix { offset: 20 }
    );
    assert_eq!(
        err(b"cyxla-target v2 a e\n"),
        TargetsError::UnsupportedVersion { offset: 0 }
    );
    assert_eq!(
        err(b"cyxla-target v1 a e"),
        TargetsError::MissingNewline { offset: 0 }
    );
    assert_eq!(
        err(b"cyxla-target v1 a e\0\n"),
        TargetsError::MissingNewline { offset: 0 }
    );
    assert_eq!(
        err(b"cyxla-target v1 a\n"),
        TargetsError::BadFieldCount { offset: 0 }
    );
    assert_eq!(
        err(b"cyxla-target v1 a b c\n"),
        TargetsError::BadFieldCount { offset: 0 }
    );
    assert_eq!(
        err(b"cyxla-target v1 a  b\n"),
        TargetsError::BadFieldCount { offset: 0 }
    );
    assert_eq!(
        err(b"cyxla-target v1 a b\r\n"),
        TargetsError::BadName {
            offset: 0,
            field: "export"
        }
    );
    assert_eq!(
        err(b"cyxla-target v1  b\n"),
        TargetsError::BadName {
            offset: 0,
            field: "target"
        }
    );
    assert_eq!(
        err(b"cyxla-target v1 a/b c\n"),
        TargetsError::BadName {
            offset: 0,
            field: "target"
        }
    );
    assert_eq!(
        err(b"cyxla-target v1 a \xff\n"),
        TargetsError::BadName {
            offset: 0,
            field: "export"
        }
    );
    let long = alloc::format!("cyxla-target v1 {} e\n", "t".repeat(256));
    assert_eq!(
        err(long.as_bytes()),
        TargetsError::BadName {
            offset: 0,
            field: "target"
        }
    );
    let e = err(b"cyxla-target v1 a e\ncyxla-target v1 a f\n");
    assert_eq!(e.offset(), 20);
    assert_eq!(
        alloc::string::ToString::to_string(&e),
        "custom section `cyxla.targets`: record at byte 20 lists target `a` again with a different export"
    );
    // The iterator stops after the first error.
    let mut it = target_records(b"cyxla-target v1 a e\nbad\ncyxla-target v1 b f\n");
    assert!(it.next().unwrap().is_ok());
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
}
