//! Owned frames and a fake `XLA_FFI_Api` for unit tests (test builds only).
//!
//! In the owned structs, a field named with a leading `_` owns storage that
//! a raw struct points into and is never read: it only keeps that alive.

use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr;
use std::sync::Mutex;

use crate::ffi::xla_ffi::*;

/// What the fake runtime's `XLA_FFI_Error_Create` received; an error is
/// a leaked `Box<FakeError>`.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeError {
    pub message: String,
    pub code: i32,
    pub c_message: CString,
}

unsafe extern "C" fn error_create(args: *mut XLA_FFI_Error_Create_Args) -> *mut XLA_FFI_Error {
    // SAFETY: test code; args comes from ApiTable::create_error.
    let args = unsafe { &*args };
    assert_eq!(args.struct_size, XLA_FFI_Error_Create_Args_STRUCT_SIZE);
    // SAFETY: NUL-terminated by contract.
    let message = unsafe { CStr::from_ptr(args.message) };
    Box::into_raw(Box::new(FakeError {
        message: message.to_string_lossy().into_owned(),
        code: args.errc,
        c_message: message.to_owned(),
    }))
    .cast()
}

unsafe extern "C" fn error_get_message(args: *mut XLA_FFI_Error_GetMessage_Args) {
    // SAFETY: test code; the error is a leaked FakeError.
    unsafe {
        let e = &*(*args).error.cast::<FakeError>();
        (*args).message = e.c_message.as_ptr();
    }
}

pub static DESTROYED: Mutex<Vec<String>> = Mutex::new(Vec::new());

unsafe extern "C" fn error_destroy(args: *mut XLA_FFI_Error_Destroy_Args) {
    // SAFETY: test code; the error is a leaked FakeError.
    let e = unsafe { Box::from_raw((*args).error.cast::<FakeError>()) };
    DESTROYED.lock().unwrap().push(e.message);
}

unsafe extern "C" fn device_ordinal_get(
    args: *mut XLA_FFI_DeviceOrdinal_Get_Args,
) -> *mut XLA_FFI_Error {
    // SAFETY: test code.
    unsafe {
        if (*args).ctx.addr() == 0xbad {
            return fake_error("no device here", XLA_FFI_Error_Code_FAILED_PRECONDITION);
        }
        (*args).device_ordinal = 7;
    }
    ptr::null_mut()
}

unsafe extern "C" fn run_id_get(args: *mut XLA_FFI_RunId_Get_Args) -> *mut XLA_FFI_Error {
    // SAFETY: test code.
    unsafe { (*args).run_id = 42 };
    ptr::null_mut()
}

/// Takes back an error made by the fake runtime.
///
/// # Safety
/// `e` must come from the fake `XLA_FFI_Error_Create`.
pub unsafe fn take_error(e: *mut XLA_FFI_Error) -> FakeError {
    assert!(!e.is_null(), "expected an error, got NULL (success)");
    // SAFETY: caller contract.
    *unsafe { Box::from_raw(e.cast::<FakeError>()) }
}

pub fn fake_error(message: &str, code: i32) -> *mut XLA_FFI_Error {
    let c_message = CString::new(message).unwrap();
    Box::into_raw(Box::new(FakeError {
        message: message.into(),
        code,
        c_message,
    }))
    .cast()
}

/// A fake runtime API of the given version.
pub fn fake_api(major: i32, minor: i32) -> Box<XLA_FFI_Api> {
    Box::new(XLA_FFI_Api {
        struct_size: XLA_FFI_Api_STRUCT_SIZE,
        extension_start: ptr::null_mut(),
        api_version: XLA_FFI_Api_Version {
            struct_size: XLA_FFI_Api_Version_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            major_version: major,
            minor_version: minor,
        },
        internal_api: ptr::null(),
        XLA_FFI_Error_Create: Some(error_create),
        XLA_FFI_Error_GetMessage: Some(error_get_message),
        XLA_FFI_Error_Destroy: Some(error_destroy),
        XLA_FFI_Handler_Register: None,
        XLA_FFI_Stream_Get: None,
        XLA_FFI_Type_Register: None,
        XLA_FFI_ExecutionContext_Get: None,
        XLA_FFI_State_Set: None,
        XLA_FFI_State_Get: None,
        XLA_FFI_DeviceMemory_Allocate: None,
        XLA_FFI_DeviceMemory_Free: None,
        XLA_FFI_ThreadPool_Schedule: None,
        XLA_FFI_ThreadPool_NumThreads: None,
        XLA_FFI_Future_Create: None,
        XLA_FFI_Future_SetAvailable: None,
        XLA_FFI_Future_SetError: None,
        XLA_FFI_RunId_Get: Some(run_id_get),
        XLA_FFI_DeviceOrdinal_Get: Some(device_ordinal_get),
    })
}

/// `bytes` copied into 8-aligned storage (at least one word, zero-padded).
fn words(bytes: &[u8]) -> Vec<u64> {
    let mut data = vec![0u64; bytes.len().div_ceil(8).max(1)];
    // SAFETY: data has room for bytes.len() bytes.
    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data.as_mut_ptr().cast(), bytes.len()) };
    data
}

/// One owned buffer.
pub struct OwnedBuffer {
    pub raw: Box<XLA_FFI_Buffer>,
    pub _dims: Vec<i64>,
    pub data: Vec<u64>,
}

impl OwnedBuffer {
    pub fn new(dtype: u32, dims: &[i64], bytes: &[u8]) -> OwnedBuffer {
        let mut dims = dims.to_vec();
        let mut data = words(bytes);
        let raw = Box::new(XLA_FFI_Buffer {
            struct_size: XLA_FFI_Buffer_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            dtype,
            data: data.as_mut_ptr().cast(),
            rank: dims.len() as i64,
            dims: dims.as_mut_ptr(),
        });
        OwnedBuffer {
            raw,
            _dims: dims,
            data,
        }
    }

    pub fn bytes(&self, n: usize) -> &[u8] {
        // SAFETY: data holds at least n bytes in tests that call this.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast(), n) }
    }
}

/// An owned attribute value.
#[expect(
    dead_code,
    reason = "fields own the storage that the raw structs point into"
)]
pub enum OwnedAttr {
    Scalar(Box<XLA_FFI_Scalar>, Box<[u8; 8]>),
    Array(Box<XLA_FFI_Array>, Vec<u64>),
    String(Box<XLA_FFI_ByteSpan>, Vec<u8>),
    Dict(Box<OwnedAttrs>),
}

impl OwnedAttr {
    pub fn scalar(dtype: u32, bytes: &[u8]) -> OwnedAttr {
        let mut v = Box::new([0u8; 8]);
        v[..bytes.len()].copy_from_slice(bytes);
        let s = Box::new(XLA_FFI_Scalar {
            dtype,
            value: v.as_mut_ptr().cast(),
        });
        OwnedAttr::Scalar(s, v)
    }

    pub fn array(dtype: u32, len: usize, bytes: &[u8]) -> OwnedAttr {
        let mut data = words(bytes);
        let a = Box::new(XLA_FFI_Array {
            dtype,
            size: len,
            data: data.as_mut_ptr().cast(),
        });
        OwnedAttr::Array(a, data)
    }

    pub fn string(s: &str) -> OwnedAttr {
        let bytes = s.as_bytes().to_vec();
        let span = Box::new(XLA_FFI_ByteSpan {
            ptr: bytes.as_ptr().cast(),
            len: bytes.len(),
        });
        OwnedAttr::String(span, bytes)
    }

    fn type_and_ptr(&mut self) -> (u32, *mut c_void) {
        match self {
            OwnedAttr::Scalar(s, _) => (
                XLA_FFI_AttrType_SCALAR,
                (&mut **s as *mut XLA_FFI_Scalar).cast(),
            ),
            OwnedAttr::Array(a, _) => (
                XLA_FFI_AttrType_ARRAY,
                (&mut **a as *mut XLA_FFI_Array).cast(),
            ),
            OwnedAttr::String(s, _) => (
                XLA_FFI_AttrType_STRING,
                (&mut **s as *mut XLA_FFI_ByteSpan).cast(),
            ),
            OwnedAttr::Dict(d) => (
                XLA_FFI_AttrType_DICTIONARY,
                (&mut *d.raw as *mut XLA_FFI_Attrs).cast(),
            ),
        }
    }
}

/// Owned attributes; entries are given sorted by the caller.
pub struct OwnedAttrs {
    pub raw: Box<XLA_FFI_Attrs>,
    pub _types: Vec<u32>,
    pub _names: Vec<XLA_FFI_ByteSpan>,
    pub _name_ptrs: Vec<*mut XLA_FFI_ByteSpan>,
    pub _name_bytes: Vec<Vec<u8>>,
    pub values: Vec<OwnedAttr>,
    pub _value_ptrs: Vec<*mut c_void>,
}

impl OwnedAttrs {
    pub fn new(entries: Vec<(&str, OwnedAttr)>) -> OwnedAttrs {
        let mut types = Vec::new();
        let mut names = Vec::new();
        let mut name_ptrs = Vec::new();
        let mut name_bytes = Vec::new();
        let mut values = Vec::new();
        let mut value_ptrs = Vec::new();
        for (name, mut value) in entries {
            let bytes = name.as_bytes().to_vec();
            names.push(XLA_FFI_ByteSpan {
                ptr: bytes.as_ptr().cast::<c_char>(),
                len: bytes.len(),
            });
            name_bytes.push(bytes);
            let (t, p) = value.type_and_ptr();
            types.push(t);
            value_ptrs.push(p);
            values.push(value);
        }
        // Pointers into `names` are taken once it no longer grows.
        name_ptrs.extend(names.iter_mut().map(|n| n as *mut XLA_FFI_ByteSpan));
        let raw = Box::new(XLA_FFI_Attrs {
            struct_size: XLA_FFI_Attrs_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            size: types.len() as i64,
            types: types.as_mut_ptr(),
            names: name_ptrs.as_mut_ptr(),
            attrs: value_ptrs.as_mut_ptr(),
        });
        OwnedAttrs {
            raw,
            _types: types,
            _names: names,
            _name_ptrs: name_ptrs,
            _name_bytes: name_bytes,
            values,
            _value_ptrs: value_ptrs,
        }
    }
}

/// An execute-stage call frame over `api` and `ctx`, from
/// `extension_start`: the arguments and results as (count, types,
/// pointers), a copy of `attrs` (none: NULL and 0, as in XLA's probe).
fn call_frame(
    api: &XLA_FFI_Api,
    ctx: *mut XLA_FFI_ExecutionContext,
    extension_start: *mut XLA_FFI_Extension_Base,
    (args_size, arg_types, args): (i64, *mut XLA_FFI_ArgType, *mut *mut c_void),
    (rets_size, ret_types, rets): (i64, *mut XLA_FFI_RetType, *mut *mut c_void),
    attrs: Option<&XLA_FFI_Attrs>,
) -> Box<XLA_FFI_CallFrame> {
    let attrs = match attrs {
        Some(a) => XLA_FFI_Attrs {
            struct_size: a.struct_size,
            extension_start: ptr::null_mut(),
            size: a.size,
            types: a.types,
            names: a.names,
            attrs: a.attrs,
        },
        None => XLA_FFI_Attrs {
            struct_size: XLA_FFI_Attrs_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            size: 0,
            types: ptr::null_mut(),
            names: ptr::null_mut(),
            attrs: ptr::null_mut(),
        },
    };
    Box::new(XLA_FFI_CallFrame {
        struct_size: XLA_FFI_CallFrame_STRUCT_SIZE,
        extension_start,
        api,
        ctx,
        stage: XLA_FFI_ExecutionStage_EXECUTE,
        args: XLA_FFI_Args {
            struct_size: XLA_FFI_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            size: args_size,
            types: arg_types,
            args,
        },
        rets: XLA_FFI_Rets {
            struct_size: XLA_FFI_Rets_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            size: rets_size,
            types: ret_types,
            rets,
        },
        attrs,
        future: ptr::null_mut(),
    })
}

/// Pointers to the raw `XLA_FFI_Buffer`s of `buffers`, as a frame lists them.
fn raw_ptrs(buffers: &mut [OwnedBuffer]) -> Vec<*mut c_void> {
    buffers
        .iter_mut()
        .map(|b| (&mut *b.raw as *mut XLA_FFI_Buffer).cast())
        .collect()
}

/// An owned frame.
pub struct OwnedFrame {
    pub raw: Box<XLA_FFI_CallFrame>,
    pub api: Box<XLA_FFI_Api>,
    pub args: Vec<OwnedBuffer>,
    pub rets: Vec<OwnedBuffer>,
    pub arg_types: Vec<u32>,
    pub _ret_types: Vec<u32>,
    pub _arg_ptrs: Vec<*mut c_void>,
    pub _ret_ptrs: Vec<*mut c_void>,
    pub _attrs: OwnedAttrs,
}

impl OwnedFrame {
    pub fn new(args: Vec<OwnedBuffer>, rets: Vec<OwnedBuffer>, attrs: OwnedAttrs) -> OwnedFrame {
        let mut args = args;
        let mut rets = rets;
        let mut arg_types = vec![XLA_FFI_ArgType_BUFFER; args.len()];
        let mut ret_types = vec![XLA_FFI_RetType_BUFFER; rets.len()];
        let mut arg_ptrs = raw_ptrs(&mut args);
        let mut ret_ptrs = raw_ptrs(&mut rets);
        let api = fake_api(0, 3);
        let raw = call_frame(
            &api,
            ptr::without_provenance_mut(0x1000),
            ptr::null_mut(),
            (
                args.len() as i64,
                arg_types.as_mut_ptr(),
                arg_ptrs.as_mut_ptr(),
            ),
            (
                rets.len() as i64,
                ret_types.as_mut_ptr(),
                ret_ptrs.as_mut_ptr(),
            ),
            Some(&attrs.raw),
        );
        OwnedFrame {
            raw,
            api,
            args,
            rets,
            arg_types,
            _ret_types: ret_types,
            _arg_ptrs: arg_ptrs,
            _ret_ptrs: ret_ptrs,
            _attrs: attrs,
        }
    }

    pub fn ptr(&mut self) -> *mut XLA_FFI_CallFrame {
        &mut *self.raw
    }
}

/// A metadata probe frame as XLA builds it (docs/abi.md, "Metadata probe").
pub struct ProbeFrame {
    pub raw: Box<XLA_FFI_CallFrame>,
    pub ext: Box<XLA_FFI_Metadata_Extension>,
    pub metadata: Box<XLA_FFI_Metadata>,
    pub _api: Box<XLA_FFI_Api>,
}

impl ProbeFrame {
    pub fn new(major: i32, minor: i32) -> ProbeFrame {
        let api = fake_api(major, minor);
        let mut metadata = Box::new(XLA_FFI_Metadata {
            struct_size: XLA_FFI_Metadata_STRUCT_SIZE,
            api_version: XLA_FFI_Api_Version {
                struct_size: 0,
                extension_start: ptr::null_mut(),
                major_version: 0,
                minor_version: 0,
            },
            traits: 0,
            state_type_id: XLA_FFI_TypeId { type_id: 0 },
        });
        let mut ext = Box::new(XLA_FFI_Metadata_Extension {
            extension_base: XLA_FFI_Extension_Base {
                struct_size: XLA_FFI_Metadata_Extension_STRUCT_SIZE,
                type_: XLA_FFI_Extension_Metadata,
                next: ptr::null_mut(),
            },
            metadata: &mut *metadata,
        });
        let none = (0, ptr::null_mut(), ptr::null_mut());
        let raw = call_frame(
            &api,
            ptr::null_mut(),
            &mut ext.extension_base,
            none,
            none,
            None,
        );
        ProbeFrame {
            raw,
            ext,
            metadata,
            _api: api,
        }
    }

    pub fn ptr(&mut self) -> *mut XLA_FFI_CallFrame {
        &mut *self.raw
    }

    pub fn answer(&self) -> (i32, i32) {
        (
            self.metadata.api_version.major_version,
            self.metadata.api_version.minor_version,
        )
    }
}
