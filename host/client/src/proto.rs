//! Just enough protobuf for the client, as prost messages holding only the
//! fields it reads or writes: encoding `xla.CompileOptionsProto` and reading
//! parameter shapes out of the optimized program (other fields are skipped).
//!
//! Field numbers (checked against openxla/xla `xla/pjrt/proto/compile_options.proto`
//! as docs/abi.md, "Client call sequence", gives them, and `xla/xla.proto`,
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

use prost::Message;

use plugin_glue::DType;

/// `PrimitiveType::TUPLE`.
const PRIMITIVE_TYPE_TUPLE: i32 = 13;

/// A protobuf decoding failure, with what was being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProtoError {
    pub(crate) message: String,
    source: Option<prost::DecodeError>,
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ProtoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

type Result<T> = std::result::Result<T, ProtoError>;

/// `(element type, dimensions)` per parameter.
type Shapes = Vec<(DType, Vec<i64>)>;

fn fail<T>(message: impl Into<String>) -> Result<T> {
    Err(ProtoError {
        message: message.into(),
        source: None,
    })
}

fn decode<M: Message + Default>(what: &str, bytes: &[u8]) -> Result<M> {
    M::decode(bytes).map_err(|e| ProtoError {
        message: format!("cannot decode the {what}"),
        source: Some(e),
    })
}

// ---------------------------------------------------------------------------
// Messages (the fields of the table above; the rest are skipped)
// ---------------------------------------------------------------------------

#[derive(Clone, PartialEq, Message)]
struct CompileOptionsProto {
    #[prost(message, optional, tag = "3")]
    executable_build_options: Option<ExecutableBuildOptionsProto>,
}

#[derive(Clone, PartialEq, Message)]
struct ExecutableBuildOptionsProto {
    #[prost(int64, tag = "4")]
    num_replicas: i64,
    #[prost(int64, tag = "5")]
    num_partitions: i64,
}

#[derive(Clone, PartialEq, Message)]
struct HloModuleProtoWithConfig {
    #[prost(message, optional, tag = "1")]
    hlo_module: Option<HloModuleProto>,
    #[prost(message, optional, tag = "2")]
    config: Option<HloModuleConfigProto>,
}

#[derive(Clone, PartialEq, Message)]
struct HloModuleConfigProto {
    #[prost(message, optional, tag = "1")]
    entry_computation_layout: Option<ProgramShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct HloModuleProto {
    #[prost(message, repeated, tag = "3")]
    computations: Vec<HloComputationProto>,
    #[prost(message, optional, tag = "4")]
    host_program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "6")]
    entry_computation_id: i64,
}

#[derive(Clone, PartialEq, Message)]
struct HloComputationProto {
    #[prost(message, optional, tag = "4")]
    program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "5")]
    id: i64,
}

#[derive(Clone, PartialEq, Message)]
struct ProgramShapeProto {
    #[prost(message, repeated, tag = "1")]
    parameters: Vec<ShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct ShapeProto {
    #[prost(int32, tag = "2")]
    element_type: i32,
    #[prost(int64, repeated, tag = "3")]
    dimensions: Vec<i64>,
}

// ---------------------------------------------------------------------------
// Encoding and reading
// ---------------------------------------------------------------------------

/// A serialized `CompileOptionsProto { executable_build_options {
/// num_replicas, num_partitions } }`. Both must be ≥ 1: XLA aborts the
/// process otherwise (docs/abi.md, "Client call sequence"), so callers check first.
pub(crate) fn compile_options(num_replicas: u64, num_partitions: u64) -> Vec<u8> {
    debug_assert!(num_replicas >= 1 && num_partitions >= 1);
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    CompileOptionsProto {
        executable_build_options: Some(ExecutableBuildOptionsProto {
            num_replicas: count(num_replicas),
            num_partitions: count(num_partitions),
        }),
    }
    .encode_to_vec()
}

/// `(element_type, dimensions)` of one `ShapeProto`; tuples are rejected.
fn shape(proto: &ShapeProto, what: &str) -> Result<(DType, Vec<i64>)> {
    let element_type = proto.element_type;
    if element_type == PRIMITIVE_TYPE_TUPLE {
        return fail(format!("{what} is a tuple, which is not supported"));
    }
    let dtype = u32::try_from(element_type)
        .ok()
        .and_then(DType::from_xla)
        .ok_or_else(|| ProtoError {
            message: format!("{what} has unknown PrimitiveType {element_type}"),
            source: None,
        })?;
    Ok((dtype, proto.dimensions.clone()))
}

/// The parameters of a `ProgramShapeProto`.
fn program_shape_parameters(proto: &ProgramShapeProto) -> Result<Shapes> {
    proto
        .parameters
        .iter()
        .enumerate()
        .map(|(i, p)| shape(p, &format!("parameter {i}")))
        .collect()
}

/// The entry computation's parameters from an `HloModuleProto`:
/// `host_program_shape`, else the entry computation's `program_shape`.
/// `None` if the module has neither.
fn module_parameters(module: &HloModuleProto) -> Result<Option<Shapes>> {
    if let Some(shape) = &module.host_program_shape {
        return program_shape_parameters(shape).map(Some);
    }
    let entry = module
        .computations
        .iter()
        .filter(|c| c.id == module.entry_computation_id)
        .find_map(|c| c.program_shape.as_ref());
    entry.map(program_shape_parameters).transpose()
}

/// Parameter shapes of the optimized program returned by
/// `PJRT_Executable_OptimizedProgram` in `format` (`hlo_with_config`:
/// `HloModuleProtoWithConfig`; `hlo`: `HloModuleProto`).
pub(crate) fn optimized_program_parameters(format: &str, code: &[u8]) -> Result<Shapes> {
    match format {
        "hlo" => {
            let module: HloModuleProto = decode("HloModuleProto", code)?;
            match module_parameters(&module)? {
                Some(parameters) => Ok(parameters),
                None => fail("the HloModuleProto has no entry program shape"),
            }
        }
        "hlo_with_config" => {
            let proto: HloModuleProtoWithConfig = decode("HloModuleProtoWithConfig", code)?;
            if let Some(module) = &proto.hlo_module
                && let Some(parameters) = module_parameters(module)?
            {
                return Ok(parameters);
            }
            match proto.config.and_then(|c| c.entry_computation_layout) {
                Some(layout) => program_shape_parameters(&layout),
                None => fail("the HloModuleProtoWithConfig has no entry program shape"),
            }
        }
        other => fail(format!("unsupported optimized program format `{other}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hand-rolled encoders, so the tests build messages independently of
    // the prost definitions they check.
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
        assert!(err.message.contains("parameter 0 is a tuple"), "{err}");
        let err = optimized_program_parameters("mlir", &[]).unwrap_err();
        assert!(err.message.contains("`mlir`"), "{err}");
        assert!(optimized_program_parameters("hlo", &[]).is_err());
    }

    #[test]
    fn negative_int64_dimensions_decode() {
        let mut body = Vec::new();
        put_varint(&mut body, (-1i64) as u64);
        let mut s = Vec::new();
        put_varint_field(&mut s, 2, 5);
        put_bytes_field(&mut s, 3, &body);
        let s: ShapeProto = decode("ShapeProto", &s).unwrap();
        assert_eq!(shape(&s, "p").unwrap(), (DType::S64, vec![-1]));
    }
}
