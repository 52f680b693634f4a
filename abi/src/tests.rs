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

/// The reference layout of `$module`, the C struct `$c_name`, whose fields
/// are given as `"name" = OFFSET_CONSTANT` or `"name" = OFFSET_CONSTANT: size`
/// (4 bytes where no size is given), after what `$kind` says it starts with:
/// `header`, `struct_size` and `extension_start` (4 bytes each) and a
/// `STRUCT_SIZE`; `struct_size`, the `struct_size` field and a `STRUCT_SIZE`;
/// `sized`, no field but a `STRUCT_SIZE`; `plain`, neither.
macro_rules! layout {
    (@size) => { 4 };
    (@size $size:expr) => { $size };
    ($kind:ident $c_name:literal, $module:ident; $($field:literal = $offset:ident $(: $size:expr)?),* $(,)?) => {
        layout!(@row $kind, $c_name, $module, [$(($field, $module::$offset, layout!(@size $($size)?)),)*])
    };
    (@row header, $c_name:literal, $module:ident, [$($fields:tt)*]) => {
        layout!(@row sized, $c_name, $module, [
            ("struct_size", $module::STRUCT_SIZE_OFFSET, 4),
            ("extension_start", $module::EXTENSION_START, 4),
            $($fields)*
        ])
    };
    (@row struct_size, $c_name:literal, $module:ident, [$($fields:tt)*]) => {
        layout!(@row sized, $c_name, $module, [
            ("struct_size", $module::STRUCT_SIZE_OFFSET, 4),
            $($fields)*
        ])
    };
    (@row sized, $c_name:literal, $module:ident, [$($fields:tt)*]) => {
        ($c_name, $module::SIZE, $module::ALIGN, Some($module::STRUCT_SIZE), &[$($fields)*])
    };
    (@row plain, $c_name:literal, $module:ident, [$($fields:tt)*]) => {
        ($c_name, $module::SIZE, $module::ALIGN, None, &[$($fields)*])
    };
}

/// The wasm32 columns of the layout tables in docs/abi.md ("Frame-side structs",
/// "Service-call argument structs", "XLA_FFI_Api"), copied by hand: offsets
/// and sizes of every field.
#[rustfmt::skip]
fn reference_layouts() -> Vec<Layout> {
    vec![
        layout!(header "XLA_FFI_CallFrame", call_frame; "api" = API, "ctx" = CTX, "stage" = STAGE,
            "args" = ARGS: args::SIZE, "rets" = RETS: rets::SIZE, "attrs" = ATTRS: attrs::SIZE,
            "future" = FUTURE),
        layout!(header "XLA_FFI_Args", args; "size" = SIZE_FIELD: 8, "types" = TYPES, "args" = ARGS),
        layout!(header "XLA_FFI_Rets", rets; "size" = SIZE_FIELD: 8, "types" = TYPES, "rets" = RETS),
        layout!(header "XLA_FFI_Attrs", attrs; "size" = SIZE_FIELD: 8, "types" = TYPES,
            "names" = NAMES, "attrs" = ATTRS),
        layout!(header "XLA_FFI_Buffer", buffer; "dtype" = DTYPE, "data" = DATA, "rank" = RANK: 8,
            "dims" = DIMS),
        layout!(plain "XLA_FFI_ByteSpan", byte_span; "ptr" = PTR, "len" = LEN),
        layout!(plain "XLA_FFI_Scalar", scalar; "dtype" = DTYPE, "value" = VALUE),
        layout!(plain "XLA_FFI_Array", array; "dtype" = DTYPE, "size" = SIZE_FIELD, "data" = DATA),
        layout!(struct_size "XLA_FFI_Extension_Base", extension_base; "type" = TYPE, "next" = NEXT),
        layout!(sized "XLA_FFI_Metadata_Extension", metadata_extension;
            "extension_base" = EXTENSION_BASE: extension_base::SIZE, "metadata" = METADATA),
        layout!(struct_size "XLA_FFI_Metadata", metadata;
            "api_version" = API_VERSION: api_version::SIZE, "traits" = TRAITS,
            "state_type_id" = STATE_TYPE_ID: 8),
        layout!(header "XLA_FFI_Api_Version", api_version; "major_version" = MAJOR_VERSION,
            "minor_version" = MINOR_VERSION),
        layout!(plain "XLA_FFI_TypeId", type_id; "type_id" = TYPE_ID: 8),
        layout!(header "XLA_FFI_Error_Create_Args", error_create_args; "message" = MESSAGE,
            "errc" = ERRC),
        layout!(header "XLA_FFI_Error_GetDetails_Args", error_get_details_args; "error" = ERROR,
            "message" = MESSAGE, "errc" = ERRC),
        layout!(header "XLA_FFI_Error_GetMessage_Args", error_get_message_args; "error" = ERROR,
            "message" = MESSAGE),
        layout!(header "XLA_FFI_Error_Destroy_Args", error_destroy_args; "error" = ERROR),
        layout!(header "XLA_FFI_TypeInfo", type_info; "deleter" = DELETER),
        layout!(header "XLA_FFI_Future_Create_Args", future_create_args; "future" = FUTURE),
        layout!(header "XLA_FFI_Future_SetAvailable_Args", future_set_available_args;
            "future" = FUTURE),
        layout!(header "XLA_FFI_Future_SetError_Args", future_set_error_args; "future" = FUTURE,
            "error" = ERROR),
        layout!(plain "XLA_FFI_Handler_Bundle", handler_bundle; "instantiate" = INSTANTIATE,
            "prepare" = PREPARE, "initialize" = INITIALIZE, "execute" = EXECUTE,
            "record" = RECORD),
        layout!(header "XLA_FFI_Handler_Register_Args", handler_register_args;
            "name" = NAME: byte_span::SIZE, "platform" = PLATFORM: byte_span::SIZE,
            "bundle" = BUNDLE: handler_bundle::SIZE, "traits" = TRAITS),
        layout!(header "XLA_FFI_Type_Register_Args", type_register_args;
            "name" = NAME: byte_span::SIZE, "type_id" = TYPE_ID, "type_info" = TYPE_INFO),
        layout!(header "XLA_FFI_InvokeContext_Get_Args", execution_context_get_args;
            "ctx" = CTX, "type_id" = TYPE_ID, "data" = DATA),
        // Also XLA_FFI_State_Get_Args ("as State_Set"), state_get_args.
        layout!(header "XLA_FFI_State_Set_Args", state_set_args; "ctx" = CTX, "stage" = STAGE,
            "type_id" = TYPE_ID, "state" = STATE),
        layout!(header "XLA_FFI_Stream_Get_Args", stream_get_args; "ctx" = CTX, "stream" = STREAM),
        layout!(header "XLA_FFI_DeviceMemory_Allocate_Args", device_memory_allocate_args;
            "ctx" = CTX, "size" = SIZE_FIELD, "alignment" = ALIGNMENT, "data" = DATA),
        layout!(header "XLA_FFI_DeviceMemory_Free_Args", device_memory_free_args;
            "ctx" = CTX, "size" = SIZE_FIELD, "data" = DATA),
        layout!(header "XLA_FFI_ThreadPool_Schedule_Args", thread_pool_schedule_args;
            "ctx" = CTX, "task" = TASK, "data" = DATA),
        layout!(header "XLA_FFI_ThreadPool_NumThreads_Args", thread_pool_num_threads_args;
            "ctx" = CTX, "num_threads" = NUM_THREADS),
        layout!(header "XLA_FFI_RunId_Get_Args", run_id_get_args; "ctx" = CTX,
            "run_id" = RUN_ID: 8),
        layout!(header "XLA_FFI_DeviceOrdinal_Get_Args", device_ordinal_get_args; "ctx" = CTX,
            "device_ordinal" = DEVICE_ORDINAL),
        layout!(header "XLA_FFI_InvokeContext_FindExtension_Args",
            invoke_context_find_extension_args; "ctx" = CTX,
            "extension_type" = EXTENSION_TYPE: 8, "extension" = EXTENSION),
        layout!(header "XLA_FFI_CustomOptions_Get_Args", custom_options_get_args; "ctx" = CTX,
            "attrs" = ATTRS),
        layout!(plain "XLA_FFI_ExtensionId", extension_id; "extension_type" = EXTENSION_TYPE: 8,
            "major_version" = MAJOR_VERSION, "minor_version" = MINOR_VERSION),
        layout!(struct_size "XLA_FFI_Extension", extension; "id" = ID: extension_id::SIZE,
            "next" = NEXT),
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
            match field {
                "struct_size" => assert_eq!(off, 0, "{name}.struct_size"),
                "extension_start" => assert_eq!(off, 4, "{name}.extension_start"),
                _ => {}
            }
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
    /// Checks each `module: SIZE, STRUCT_SIZE` row.
    macro_rules! sizes {
        ($($module:ident: $size:literal, $struct_size:literal;)*) => {$(
            assert_eq!(
                ($module::SIZE, $module::STRUCT_SIZE),
                ($size, $struct_size),
                stringify!($module)
            );
        )*};
    }
    sizes! {
        call_frame: 112, 104;
        args: 24, 24;
        rets: 24, 24;
        attrs: 32, 28;
        buffer: 32, 28;
        metadata_extension: 16, 16;
        metadata: 32, 24;
        api_version: 16, 16;
        type_register_args: 24, 20;
        future_create_args: 12, 8;
        error_create_args: 16, 16;
        handler_register_args: 48, 48;
        error_get_details_args: 20, 20;
        invoke_context_find_extension_args: 32, 28;
        custom_options_get_args: 16, 16;
        extension: 32, 28;
        device_ordinal_get_args: 16, 16;
    }
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
    use TargetsError::*;
    let bad_name = |field| BadName { offset: 0, field };
    let long = alloc::format!("cyxla-target v1 {} e\n", "t".repeat(256));
    #[rustfmt::skip]
    let cases: [(&[u8], TargetsError); 13] = [
        (b"hello", BadPrefix { offset: 0 }),
        (b"cyxla-target v1 a e\njunk\n", BadPrefix { offset: 20 }),
        (b"cyxla-target v2 a e\n", UnsupportedVersion { offset: 0 }),
        (b"cyxla-target v1 a e", MissingNewline { offset: 0 }),
        (b"cyxla-target v1 a e\0\n", MissingNewline { offset: 0 }),
        (b"cyxla-target v1 a\n", BadFieldCount { offset: 0 }),
        (b"cyxla-target v1 a b c\n", BadFieldCount { offset: 0 }),
        (b"cyxla-target v1 a  b\n", BadFieldCount { offset: 0 }),
        (b"cyxla-target v1 a b\r\n", bad_name("export")),
        (b"cyxla-target v1  b\n", bad_name("target")),
        (b"cyxla-target v1 a/b c\n", bad_name("target")),
        (b"cyxla-target v1 a \xff\n", bad_name("export")),
        (long.as_bytes(), bad_name("target")),
    ];
    for (input, expected) in cases {
        assert_eq!(err(input), expected, "{}", input.escape_ascii());
    }
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
