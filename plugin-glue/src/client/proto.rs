//! Just enough protobuf for the client: encoding `xla.CompileOptionsProto`
//! and reading parameter shapes out of the optimized program.
//!
//! Field numbers (checked against openxla/xla `xla/pjrt/proto/compile_options.proto`
//! as measured in the ABI reference §4.6, and `xla/xla.proto`,
//! `xla/service/hlo.proto`, `xla/xla_data.proto`):
//!
//! ```text
//! CompileOptionsProto        executable_build_options = 3
//! ExecutableBuildOptionsProto num_replicas = 4, num_partitions = 5
//! HloModuleProtoWithConfig   hlo_module = 1, config = 2
//! HloModuleConfigProto       entry_computation_layout = 1 (ProgramShapeProto)
//! HloModuleProto             computations = 3, host_program_shape = 4, entry_computation_id = 6
//! HloComputationProto        program_shape = 4, id = 5
//! ProgramShapeProto          parameters = 1 (repeated ShapeProto), result = 2
//! ShapeProto                 element_type = 2 (PrimitiveType), dimensions = 3 (repeated int64),
//!                            tuple_shapes = 4
//! ```

use std::fmt;

use crate::dtype::DType;

/// `PrimitiveType::TUPLE`.
const PRIMITIVE_TYPE_TUPLE: u64 = 13;

/// A protobuf decoding failure, with what was being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProtoError(pub(crate) String);

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

type Result<T> = std::result::Result<T, ProtoError>;

/// `(element type, dimensions)` per parameter.
type Shapes = Vec<(DType, Vec<i64>)>;

fn fail<T>(message: impl Into<String>) -> Result<T> {
    Err(ProtoError(message.into()))
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn put_varint_field(out: &mut Vec<u8>, field: u32, value: u64) {
    put_varint(out, u64::from(field) << 3);
    put_varint(out, value);
}

fn put_bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_varint(out, (u64::from(field) << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A serialized `CompileOptionsProto { executable_build_options {
/// num_replicas, num_partitions } }`. Both must be ≥ 1: XLA aborts the
/// process otherwise (ABI reference §4.6), so callers check first.
pub(crate) fn compile_options(num_replicas: u64, num_partitions: u64) -> Vec<u8> {
    debug_assert!(num_replicas >= 1 && num_partitions >= 1);
    let mut build = Vec::new();
    put_varint_field(&mut build, 4, num_replicas);
    put_varint_field(&mut build, 5, num_partitions);
    let mut options = Vec::new();
    put_bytes_field(&mut options, 3, &build);
    options
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/// One field's value on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// Iterates over the fields of one message.
struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Fields<'a> {
    fn new(buf: &'a [u8]) -> Fields<'a> {
        Fields {
            buf,
            pos: 0,
            failed: false,
        }
    }

    fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.buf.get(self.pos) else {
                return fail(format!("varint truncated at byte {}", self.pos));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        fail(format!("varint longer than 10 bytes at byte {}", self.pos))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|end| *end <= self.buf.len())
            .ok_or_else(|| {
                ProtoError(format!(
                    "field of {len} bytes at byte {} runs past the end ({} bytes)",
                    self.pos,
                    self.buf.len()
                ))
            })?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn next_field(&mut self) -> Result<(u64, Value<'a>)> {
        let key = self.varint()?;
        let field = key >> 3;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                let b = self.take(8)?;
                Value::Fixed64(u64::from_le_bytes(b.try_into().map_err(|_| {
                    ProtoError("fixed64 field shorter than 8 bytes".into())
                })?))
            }
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len)
                    .map_err(|_| ProtoError(format!("length {len} does not fit in memory")))?;
                Value::Bytes(self.take(len)?)
            }
            5 => {
                let b = self.take(4)?;
                Value::Fixed32(u32::from_le_bytes(b.try_into().map_err(|_| {
                    ProtoError("fixed32 field shorter than 4 bytes".into())
                })?))
            }
            wire => return fail(format!("field {field} has unsupported wire type {wire}")),
        };
        Ok((field, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let item = self.next_field();
        self.failed = item.is_err();
        Some(item)
    }
}

fn expect_bytes<'a>(what: &str, value: Value<'a>) -> Result<&'a [u8]> {
    match value {
        Value::Bytes(b) => Ok(b),
        other => fail(format!(
            "{what}: expected a length-delimited field, got {other:?}"
        )),
    }
}

fn expect_varint(what: &str, value: Value<'_>) -> Result<u64> {
    match value {
        Value::Varint(v) => Ok(v),
        other => fail(format!("{what}: expected a varint, got {other:?}")),
    }
}

/// `(element_type, dimensions)` of one `ShapeProto`; tuples are rejected.
fn shape(bytes: &[u8], what: &str) -> Result<(DType, Vec<i64>)> {
    let mut element_type = 0u64;
    let mut dims = Vec::new();
    for field in Fields::new(bytes) {
        match field? {
            (2, v) => element_type = expect_varint(what, v)?,
            (3, Value::Varint(v)) => dims.push(v as i64),
            (3, Value::Bytes(packed)) => {
                let mut packed = Fields::new(packed);
                while packed.pos < packed.buf.len() {
                    // Two's complement in a 64-bit varint, as protobuf int64.
                    dims.push(packed.varint()? as i64);
                }
            }
            (3, other) => return fail(format!("{what}: bad dimensions field {other:?}")),
            _ => {}
        }
    }
    if element_type == PRIMITIVE_TYPE_TUPLE {
        return fail(format!("{what} is a tuple, which is not supported"));
    }
    let dtype = u32::try_from(element_type)
        .ok()
        .and_then(DType::from_xla)
        .ok_or_else(|| ProtoError(format!("{what} has unknown PrimitiveType {element_type}")))?;
    Ok((dtype, dims))
}

/// The parameters of a `ProgramShapeProto`.
fn program_shape_parameters(bytes: &[u8]) -> Result<Shapes> {
    let mut parameters = Vec::new();
    for field in Fields::new(bytes) {
        if let (1, v) = field? {
            let what = format!("parameter {}", parameters.len());
            parameters.push(shape(expect_bytes(&what, v)?, &what)?);
        }
    }
    Ok(parameters)
}

/// The entry computation's parameters from a serialized `HloModuleProto`:
/// `host_program_shape`, else the entry computation's `program_shape`.
/// `None` if the module has neither.
fn module_parameters(module: &[u8]) -> Result<Option<Shapes>> {
    let mut host_program_shape = None;
    let mut entry_id = None;
    let mut computations = Vec::new();
    for field in Fields::new(module) {
        match field? {
            (3, v) => computations.push(expect_bytes("HloModuleProto.computations", v)?),
            (4, v) => {
                host_program_shape = Some(expect_bytes("HloModuleProto.host_program_shape", v)?)
            }
            (6, v) => entry_id = Some(expect_varint("HloModuleProto.entry_computation_id", v)?),
            _ => {}
        }
    }
    if let Some(shape) = host_program_shape {
        return program_shape_parameters(shape).map(Some);
    }
    let entry_id = entry_id.unwrap_or(0);
    for computation in computations {
        let mut id = 0;
        let mut program_shape = None;
        for field in Fields::new(computation) {
            match field? {
                (4, v) => {
                    program_shape = Some(expect_bytes("HloComputationProto.program_shape", v)?)
                }
                (5, v) => id = expect_varint("HloComputationProto.id", v)?,
                _ => {}
            }
        }
        if id == entry_id
            && let Some(shape) = program_shape
        {
            return program_shape_parameters(shape).map(Some);
        }
    }
    Ok(None)
}

/// Parameter shapes of the optimized program returned by
/// `PJRT_Executable_OptimizedProgram` in `format` (`hlo_with_config`:
/// `HloModuleProtoWithConfig`; `hlo`: `HloModuleProto`).
pub(crate) fn optimized_program_parameters(format: &str, code: &[u8]) -> Result<Shapes> {
    match format {
        "hlo" => module_parameters(code)?
            .ok_or_else(|| ProtoError("the HloModuleProto has no entry program shape".into())),
        "hlo_with_config" => {
            let mut module = None;
            let mut layout = None;
            for field in Fields::new(code) {
                match field? {
                    (1, v) => {
                        module = Some(expect_bytes("HloModuleProtoWithConfig.hlo_module", v)?)
                    }
                    (2, v) => {
                        let config = expect_bytes("HloModuleProtoWithConfig.config", v)?;
                        for field in Fields::new(config) {
                            if let (1, v) = field? {
                                layout = Some(expect_bytes(
                                    "HloModuleConfigProto.entry_computation_layout",
                                    v,
                                )?);
                            }
                        }
                    }
                    _ => {}
                }
            }
            if let Some(module) = module
                && let Some(parameters) = module_parameters(module)?
            {
                return Ok(parameters);
            }
            match layout {
                Some(layout) => program_shape_parameters(layout),
                None => fail("the HloModuleProtoWithConfig has no entry program shape"),
            }
        }
        other => fail(format!("unsupported optimized program format `{other}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_proto(element_type: u64, dims: &[i64], packed: bool) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint_field(&mut out, 2, element_type);
        if packed {
            let mut body = Vec::new();
            for d in dims {
                put_varint(&mut body, *d as u64);
            }
            put_bytes_field(&mut out, 3, &body);
        } else {
            for d in dims {
                put_varint_field(&mut out, 3, *d as u64);
            }
        }
        out
    }

    fn program_shape(params: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in params {
            put_bytes_field(&mut out, 1, p);
        }
        put_bytes_field(&mut out, 2, &shape_proto(11, &[], true));
        out
    }

    #[test]
    fn compile_options_for_one_replica_is_the_measured_value() {
        assert_eq!(compile_options(1, 1), [0x1a, 0x04, 0x20, 0x01, 0x28, 0x01]);
        assert_eq!(compile_options(4, 1), [0x1a, 0x04, 0x20, 0x04, 0x28, 0x01]);
        assert_eq!(
            compile_options(300, 1),
            [0x1a, 0x05, 0x20, 0xac, 0x02, 0x28, 0x01]
        );
    }

    #[test]
    fn reads_host_program_shape_packed_and_unpacked() {
        let ps = program_shape(&[shape_proto(11, &[2, 3], true), shape_proto(1, &[4], false)]);
        let mut module = Vec::new();
        put_bytes_field(&mut module, 1, b"m");
        put_bytes_field(&mut module, 4, &ps);
        let got = optimized_program_parameters("hlo", &module).unwrap();
        assert_eq!(got, vec![(DType::F32, vec![2, 3]), (DType::Pred, vec![4])]);

        let mut with_config = Vec::new();
        put_bytes_field(&mut with_config, 1, &module);
        let got = optimized_program_parameters("hlo_with_config", &with_config).unwrap();
        assert_eq!(got, vec![(DType::F32, vec![2, 3]), (DType::Pred, vec![4])]);
    }

    #[test]
    fn falls_back_to_entry_computation_then_config_layout() {
        let ps = program_shape(&[shape_proto(16, &[], true)]);
        let mut other = Vec::new();
        put_varint_field(&mut other, 5, 1);
        put_bytes_field(&mut other, 4, &program_shape(&[]));
        let mut entry = Vec::new();
        put_bytes_field(&mut entry, 4, &ps);
        put_varint_field(&mut entry, 5, 7);
        let mut module = Vec::new();
        put_bytes_field(&mut module, 3, &other);
        put_bytes_field(&mut module, 3, &entry);
        put_varint_field(&mut module, 6, 7);
        assert_eq!(
            optimized_program_parameters("hlo", &module).unwrap(),
            vec![(DType::Bf16, vec![])]
        );

        let mut config = Vec::new();
        put_bytes_field(
            &mut config,
            1,
            &program_shape(&[shape_proto(18, &[5], true)]),
        );
        let mut with_config = Vec::new();
        put_bytes_field(&mut with_config, 1, b"");
        put_bytes_field(&mut with_config, 2, &config);
        assert_eq!(
            optimized_program_parameters("hlo_with_config", &with_config).unwrap(),
            vec![(DType::C128, vec![5])]
        );
    }

    #[test]
    fn rejects_garbage_tuples_and_unknown_formats() {
        assert!(optimized_program_parameters("hlo", &[0x22, 0x05, 0x01]).is_err());
        assert!(optimized_program_parameters("hlo", &[0x0b]).is_err()); // group wire type
        assert!(optimized_program_parameters("hlo", &[0xff; 11]).is_err());
        let mut module = Vec::new();
        put_bytes_field(
            &mut module,
            4,
            &program_shape(&[shape_proto(13, &[], true)]),
        );
        let err = optimized_program_parameters("hlo", &module).unwrap_err();
        assert!(err.0.contains("parameter 0 is a tuple"), "{err}");
        let err = optimized_program_parameters("mlir", &[]).unwrap_err();
        assert!(err.0.contains("`mlir`"), "{err}");
        assert!(optimized_program_parameters("hlo", &[]).is_err());
    }

    #[test]
    fn negative_int64_dimensions_decode() {
        let mut body = Vec::new();
        put_varint(&mut body, (-1i64) as u64);
        let mut s = Vec::new();
        put_varint_field(&mut s, 2, 5);
        put_bytes_field(&mut s, 3, &body);
        assert_eq!(shape(&s, "p").unwrap(), (DType::S64, vec![-1]));
    }
}
