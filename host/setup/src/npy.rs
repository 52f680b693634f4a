//! Arrays on the host side of `cyxla-host run`: `.npy` files in and out,
//! held as XLA element type + dims + little-endian bytes.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use anyhow::{Context, Result, bail};
use half::f16;
use npyz::WriterBuilder;
use num_complex::Complex;
use plugin_glue::DType;

/// A dense, row-major array: what a PJRT buffer holds, on the host.
#[derive(Clone, Debug, PartialEq)]
pub struct HostArray {
    /// Element type.
    pub dtype: DType,
    /// Dimensions, major to minor.
    pub dims: Vec<i64>,
    /// Elements in row-major order, little-endian, packed as XLA packs them.
    pub bytes: Vec<u8>,
}

impl HostArray {
    /// A copy of a host-owned buffer (its dtype, dims and bytes).
    pub fn of(buffer: &cyxla_sandbox::HostBuffer) -> HostArray {
        HostArray {
            dtype: buffer.dtype(),
            dims: buffer.dims().to_vec(),
            bytes: buffer.bytes(),
        }
    }

    /// Number of elements.
    pub fn element_count(&self) -> u64 {
        self.dims.iter().map(|&d| d.max(0) as u64).product()
    }
}

/// Runs `$body` with `$t` bound to the Rust type that stores `$dtype`, or
/// evaluates `$other` for types `.npy` cannot hold.
macro_rules! with_npy_type {
    ($dtype:expr, $t:ident => $body:expr, _ => $other:expr) => {
        match $dtype {
            DType::Pred => {
                type $t = bool;
                $body
            }
            DType::S8 => {
                type $t = i8;
                $body
            }
            DType::S16 => {
                type $t = i16;
                $body
            }
            DType::S32 => {
                type $t = i32;
                $body
            }
            DType::S64 => {
                type $t = i64;
                $body
            }
            DType::U8 => {
                type $t = u8;
                $body
            }
            DType::U16 => {
                type $t = u16;
                $body
            }
            DType::U32 => {
                type $t = u32;
                $body
            }
            DType::U64 => {
                type $t = u64;
                $body
            }
            DType::F16 => {
                type $t = f16;
                $body
            }
            DType::F32 => {
                type $t = f32;
                $body
            }
            DType::F64 => {
                type $t = f64;
                $body
            }
            DType::C64 => {
                type $t = Complex<f32>;
                $body
            }
            DType::C128 => {
                type $t = Complex<f64>;
                $body
            }
            _ => $other,
        }
    };
}

/// Plain-old-data element types that convert to and from little-endian bytes.
trait LeBytes: Sized + Copy {
    const SIZE: usize;
    fn from_le_slice(bytes: &[u8]) -> Self;
    fn put_le(self, out: &mut Vec<u8>);
    fn preview(self) -> String;
}

macro_rules! le_bytes_num {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            const SIZE: usize = size_of::<$t>();
            fn from_le_slice(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("caller passes SIZE bytes"))
            }
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn preview(self) -> String {
                format!("{self}")
            }
        }
    )*};
}
le_bytes_num!(i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64);

impl LeBytes for bool {
    const SIZE: usize = 1;
    fn from_le_slice(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
    fn preview(self) -> String {
        format!("{self}")
    }
}

impl<F: LeBytes + std::fmt::Display> LeBytes for Complex<F> {
    const SIZE: usize = 2 * F::SIZE;
    fn from_le_slice(bytes: &[u8]) -> Self {
        Complex::new(
            F::from_le_slice(&bytes[..F::SIZE]),
            F::from_le_slice(&bytes[F::SIZE..]),
        )
    }
    fn put_le(self, out: &mut Vec<u8>) {
        self.re.put_le(out);
        self.im.put_le(out);
    }
    fn preview(self) -> String {
        format!("{}{:+}j", self.re.preview(), ComplexIm(self.im.preview()))
    }
}

/// Helper so that the imaginary part prints with its sign.
struct ComplexIm(String);
impl std::fmt::Display for ComplexIm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.starts_with('-') || self.0.starts_with('+') {
            f.write_str(&self.0)
        } else {
            write!(f, "+{}", self.0)
        }
    }
}

fn npy_unsupported(dtype: DType) -> anyhow::Error {
    anyhow::anyhow!("element type {dtype} has no .npy representation")
}

/// Reads a `.npy` file.
///
/// # Errors
///
/// A missing or unreadable file, a corrupt header or body, a Fortran-ordered
/// array, or an element type XLA has no equivalent for; each names the file.
pub fn read_npy(path: &Path) -> Result<HostArray> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let npy = npyz::NpyFile::new(BufReader::new(file))
        .with_context(|| format!("{} is not a valid .npy file", path.display()))?;
    if npy.order() == npyz::Order::Fortran {
        bail!(
            "{} holds a Fortran-ordered array; save it C-ordered (np.ascontiguousarray)",
            path.display()
        );
    }
    let dims = npy
        .shape()
        .iter()
        .map(|&d| i64::try_from(d))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{}: dimension too large", path.display()))?;
    let descr = npy.dtype().descr();
    let dtype = dtype_of_descr(&npy.dtype())
        .with_context(|| format!("{}: unsupported .npy dtype {descr}", path.display()))?;
    let bytes = with_npy_type!(dtype, T => {
        let values: Vec<T> = npy
            .into_vec()
            .with_context(|| format!("{}: corrupt or truncated data", path.display()))?;
        let mut bytes = Vec::with_capacity(values.len() * <T as LeBytes>::SIZE);
        for v in values {
            v.put_le(&mut bytes);
        }
        bytes
    }, _ => return Err(npy_unsupported(dtype)));
    Ok(HostArray { dtype, dims, bytes })
}

/// The element type whose Rust type npyz stores as `dtype` (same kind and
/// size, either byte order).
fn dtype_of_descr(dtype: &npyz::DType) -> Result<DType> {
    use npyz::AutoSerialize;
    let npyz::DType::Plain(ts) = dtype else {
        bail!("structured or array dtypes are not supported");
    };
    let stored_as = |candidate: DType| {
        with_npy_type!(candidate, T => match T::default_dtype() {
            npyz::DType::Plain(t) => {
                (t.type_char(), t.size_field()) == (ts.type_char(), ts.size_field())
            }
            _ => false,
        }, _ => false)
    };
    match DType::ALL.into_iter().find(|&d| stored_as(d)) {
        Some(t) => Ok(t),
        None => bail!("no XLA element type for {}", dtype.descr()),
    }
}

/// numpy's name of an element type (`float32`, `bool`, `complex64`, ...).
pub fn numpy_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Pred => "bool",
        DType::S8 => "int8",
        DType::S16 => "int16",
        DType::S32 => "int32",
        DType::S64 => "int64",
        DType::U8 => "uint8",
        DType::U16 => "uint16",
        DType::U32 => "uint32",
        DType::U64 => "uint64",
        DType::F16 => "float16",
        DType::F32 => "float32",
        DType::F64 => "float64",
        DType::C64 => "complex64",
        DType::C128 => "complex128",
        DType::Bf16 => "bfloat16",
        other => other.name(),
    }
}

/// Writes `array` as a `.npy` file.
///
/// # Errors
///
/// An element type `.npy` cannot hold (bf16, fp8, sub-byte types), or an I/O
/// error; each names the file.
pub fn write_npy(path: &Path, array: &HostArray) -> Result<()> {
    let shape: Vec<u64> = array.dims.iter().map(|&d| d.max(0) as u64).collect();
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::new(file);
    with_npy_type!(array.dtype, T => {
        check_len(array, <T as LeBytes>::SIZE)?;
        let mut writer = npyz::WriteOptions::<T>::new()
            .default_dtype()
            .shape(&shape)
            .writer(&mut out)
            .begin_nd()
            .with_context(|| format!("cannot write {}", path.display()))?;
        for chunk in array.bytes.chunks_exact(<T as LeBytes>::SIZE) {
            writer
                .push(&<T as LeBytes>::from_le_slice(chunk))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        writer
            .finish()
            .with_context(|| format!("cannot write {}", path.display()))?;
    }, _ => return Err(npy_unsupported(array.dtype)).with_context(|| format!("cannot write {}", path.display())));
    Ok(())
}

fn check_len(array: &HostArray, size: usize) -> Result<()> {
    let expected = array.element_count() as usize * size;
    if array.bytes.len() != expected {
        bail!(
            "array of {} {:?} holds {} bytes, expected {expected}",
            array.dtype,
            array.dims,
            array.bytes.len()
        );
    }
    Ok(())
}

/// The first `n` elements, formatted as numpy would print them.
pub fn preview(array: &HostArray, n: usize) -> String {
    let mut out = String::from("[");
    let count = array.element_count() as usize;
    with_npy_type!(array.dtype, T => {
        for (i, chunk) in array.bytes.chunks_exact(<T as LeBytes>::SIZE).take(n).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&<T as LeBytes>::from_le_slice(chunk).preview());
        }
    }, _ => {
        let _ = write!(out, "{} bytes", array.bytes.len());
    });
    if count > n {
        out.push_str(", ...");
    }
    out.push(']');
    out
}

/// All elements as JSON values (numbers, booleans, `[re, im]` pairs).
pub fn to_json(array: &HostArray) -> serde_json::Value {
    use serde_json::{Value, json};
    fn num<T: LeBytes + Into<f64>>(c: &[u8]) -> Value {
        json!(T::from_le_slice(c).into())
    }
    let size = match array.dtype.bits() {
        0 => return Value::Null,
        b => (b as usize).div_ceil(8),
    };
    let values: Vec<Value> = array
        .bytes
        .chunks_exact(size)
        .map(|c| match array.dtype {
            DType::Pred => json!(c[0] != 0),
            DType::S8 => json!(i8::from_le_slice(c)),
            DType::S16 => json!(i16::from_le_slice(c)),
            DType::S32 => json!(i32::from_le_slice(c)),
            DType::S64 => json!(i64::from_le_slice(c)),
            DType::U8 => json!(u8::from_le_slice(c)),
            DType::U16 => json!(u16::from_le_slice(c)),
            DType::U32 => json!(u32::from_le_slice(c)),
            DType::U64 => json!(u64::from_le_slice(c)),
            DType::F16 => json!(f16::from_le_slice(c).to_f64()),
            DType::F32 => num::<f32>(c),
            DType::F64 => num::<f64>(c),
            DType::C64 => {
                let z = Complex::<f32>::from_le_slice(c);
                json!([z.re, z.im])
            }
            DType::C128 => {
                let z = Complex::<f64>::from_le_slice(c);
                json!([z.re, z.im])
            }
            _ => Value::Null,
        })
        .collect();
    Value::Array(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_npy_dtype() {
        let dir = tempfile::tempdir().unwrap();
        let types = [
            DType::Pred,
            DType::S8,
            DType::S16,
            DType::S32,
            DType::S64,
            DType::U8,
            DType::U16,
            DType::U32,
            DType::U64,
            DType::F16,
            DType::F32,
            DType::F64,
            DType::C64,
            DType::C128,
        ];
        for dtype in types {
            let n = 6u64;
            let size = dtype.byte_size(n).unwrap() as usize;
            let bytes: Vec<u8> = (0..size)
                .map(|i| {
                    if dtype == DType::Pred {
                        (i % 2) as u8
                    } else {
                        (i * 7 % 61) as u8
                    }
                })
                .collect();
            let a = HostArray {
                dtype,
                dims: vec![2, 3],
                bytes,
            };
            let path = dir.path().join(format!("{dtype}.npy"));
            write_npy(&path, &a).unwrap();
            assert_eq!(read_npy(&path).unwrap(), a, "{dtype}");
        }
    }

    #[test]
    fn corrupt_and_missing_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.npy");
        std::fs::write(&path, b"not numpy").unwrap();
        let err = format!("{:#}", read_npy(&path).unwrap_err());
        assert!(
            err.contains("bad.npy") && err.contains("not a valid .npy"),
            "{err}"
        );
        let err = format!("{:#}", read_npy(&dir.path().join("nope.npy")).unwrap_err());
        assert!(err.contains("nope.npy"), "{err}");
    }

    #[test]
    fn bf16_cannot_be_written() {
        let dir = tempfile::tempdir().unwrap();
        let a = HostArray {
            dtype: DType::Bf16,
            dims: vec![1],
            bytes: vec![0, 0],
        };
        let err = format!(
            "{:#}",
            write_npy(&dir.path().join("x.npy"), &a).unwrap_err()
        );
        assert!(err.contains("bf16"), "{err}");
    }

    #[test]
    fn preview_formats() {
        let a = HostArray {
            dtype: DType::F32,
            dims: vec![3],
            bytes: [1.5f32, -2.0, 3.25]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        };
        assert_eq!(preview(&a, 2), "[1.5, -2, ...]");
    }
}
