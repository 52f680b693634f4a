//! Records of failed guest calls, for `cyxla-host replay`.
//!
//! With recording on (`CYXLA_RECORD=DIR`, `cyxla-host --record DIR`, or the
//! tenant policy's `record`), each guest call that fails (the guest's error,
//! a trap, a limit, a deadline) is written to its own folder in DIR:
//!
//! ```text
//! DIR/20261203T101502Z-4242-1-rms_norm/
//!     call.toml        target, guest, its sha256, attributes, result shapes, limits, error
//!     operand-0.npy    each operand, as numpy reads it
//! ```
//!
//! Records hold user data: DIR is created with mode 0700 and each record is
//! written by this process's user. They are bounded: at most
//! [`MAX_RECORDS`] records in DIR (later failures are not recorded, with
//! one warning) and at most [`MAX_RECORD_BYTES`] of operands per record.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use cyxla_sandbox::failed_call::{self, FailedCall};
use cyxla_sandbox::{HostAttr, HostBuffer, Scalar};
use plugin_glue::{DType, ErrorCode, HandlerError};
use serde::{Deserialize, Serialize};

use crate::npy::{self, HostArray};

/// Most records kept in a recording folder.
pub const MAX_RECORDS: usize = 100;
/// Most bytes of operands in one record (a larger call is not recorded).
pub const MAX_RECORD_BYTES: u64 = 64 << 20;
/// The file in a record folder that describes the call.
pub const CALL_FILE: &str = "call.toml";

/// Writes every failing guest call of this process into `dir` (created if
/// missing); `None`: nothing is recorded.
pub fn start(dir: Option<PathBuf>) {
    let Some(dir) = dir else {
        return;
    };
    let recorder = Recorder {
        dir,
        lock: Mutex::new(()),
        full: AtomicBool::new(false),
        seq: AtomicU64::new(0),
    };
    failed_call::record_failures(Some(Arc::new(move |call: &FailedCall| {
        if let Err(e) = recorder.write(call) {
            tracing::warn!(
                target = %call.target,
                "the failed call was not recorded: {e:#}"
            );
        }
    })));
}

struct Recorder {
    dir: PathBuf,
    /// One writer at a time: the count of records is checked, then added to.
    lock: Mutex<()>,
    /// The folder is full (warned once).
    full: AtomicBool,
    seq: AtomicU64,
}

impl Recorder {
    fn write(&self, call: &FailedCall) -> Result<()> {
        let bytes: u64 = call.operands.iter().map(|o| o.bytes().len() as u64).sum();
        if bytes > MAX_RECORD_BYTES {
            bail!("its operands hold {bytes} bytes, more than a record keeps ({MAX_RECORD_BYTES})");
        }
        let _one = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        create_private_dir(&self.dir)?;
        let count = fs::read_dir(&self.dir)
            .with_context(|| format!("cannot read {}", self.dir.display()))?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join(CALL_FILE).is_file())
            .count();
        if count >= MAX_RECORDS {
            if !self.full.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "{} holds {count} records, the most kept: later failed calls are not \
                     recorded (remove records to record more)",
                    self.dir.display()
                );
            }
            return Ok(());
        }
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let name = format!(
            "{}-{}-{seq}-{}",
            utc_stamp(SystemTime::now()),
            std::process::id(),
            file_safe(&call.target)
        );
        let partial = self.dir.join(format!(".{name}.partial"));
        create_private_dir(&partial)?;
        let mut operands = Vec::new();
        for (i, operand) in call.operands.iter().enumerate() {
            let file = format!("operand-{i}.npy");
            npy::write_npy(&partial.join(&file), &HostArray::of(operand))?;
            operands.push(file);
        }
        let text = CallFile::of(call, operands).to_toml()?;
        fs::write(partial.join(CALL_FILE), text)
            .with_context(|| format!("cannot write {}", partial.join(CALL_FILE).display()))?;
        let done = self.dir.join(&name);
        fs::rename(&partial, &done).with_context(|| {
            format!("cannot rename {} to {}", partial.display(), done.display())
        })?;
        tracing::warn!(
            target = %call.target,
            "failed call recorded in {} (replay it: cyxla-host replay {})",
            done.display(),
            done.display()
        );
        Ok(())
    }
}

/// Creates `dir` (and its parents) for this user alone (0700).
fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create the recording folder {}", dir.display()))
}

/// `YYYYMMDDTHHMMSSZ`.
fn utc_stamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// `target` with anything but `[A-Za-z0-9_.-]` as `_`, for a folder name.
fn file_safe(target: &str) -> String {
    target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `call.toml`.
#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct CallFile {
    target: String,
    guest: PathBuf,
    guest_sha256: String,
    error_code: String,
    error: String,
    memory_bytes: u64,
    call_timeout_ms: u64,
    operands: Vec<String>,
    results: Vec<ResultShape>,
    #[serde(default)]
    attrs: BTreeMap<String, Attr>,
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ResultShape {
    dtype: String,
    dims: Vec<i64>,
}

/// An attribute: `kind` and, for numbers, the element type and the
/// little-endian bytes in hex (exact, whatever the type).
#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Attr {
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dtype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    len: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    entries: Option<BTreeMap<String, Attr>>,
}

impl Attr {
    fn of(value: &HostAttr) -> Attr {
        let empty = Attr {
            kind: String::new(),
            dtype: None,
            len: None,
            hex: None,
            text: None,
            entries: None,
        };
        match value {
            HostAttr::Scalar(scalar) => {
                let (bytes, len) = scalar.to_le_bytes();
                Attr {
                    kind: "scalar".into(),
                    dtype: Some(scalar.dtype().name().into()),
                    hex: Some(hex::encode(&bytes[..len])),
                    ..empty
                }
            }
            HostAttr::Array(d, len, bytes) => Attr {
                kind: "array".into(),
                dtype: Some(d.name().into()),
                len: Some(*len),
                hex: Some(hex::encode(bytes)),
                ..empty
            },
            HostAttr::String(bytes) => Attr {
                kind: "string".into(),
                text: Some(String::from_utf8_lossy(bytes).into_owned()),
                ..empty
            },
            HostAttr::Dictionary(entries) => Attr {
                kind: "dictionary".into(),
                entries: Some(
                    entries
                        .iter()
                        .map(|(k, v)| (k.clone(), Attr::of(v)))
                        .collect(),
                ),
                ..empty
            },
        }
    }

    fn to_host(&self, name: &str) -> Result<HostAttr> {
        let what = || format!("attribute `{name}`");
        let dtype = || -> Result<DType> {
            let d = self
                .dtype
                .as_deref()
                .ok_or_else(|| anyhow!("{} has no dtype", what()))?;
            dtype_named(d).ok_or_else(|| anyhow!("{}: unknown dtype `{d}`", what()))
        };
        let bytes = || -> Result<Vec<u8>> {
            let h = self
                .hex
                .as_deref()
                .ok_or_else(|| anyhow!("{} has no hex", what()))?;
            hex::decode(h).map_err(|e| anyhow!("{}: `{h}` is not hex: {e}", what()))
        };
        Ok(match self.kind.as_str() {
            "scalar" => {
                let (dtype, bytes) = (dtype()?, bytes()?);
                let want = dtype.byte_len(1).unwrap_or(0);
                if bytes.len() != want {
                    bail!(
                        "{}: a {dtype} scalar takes {want} bytes, the hex gives {}",
                        what(),
                        bytes.len()
                    );
                }
                HostAttr::Scalar(Scalar::from_le_bytes(dtype, &bytes).ok_or_else(|| {
                    anyhow!(
                        "{}: {dtype} is not a scalar dtype (XLA delivers pred, s8-s64, \
                         u8-u64, f32 and f64 scalars)",
                        what()
                    )
                })?)
            }
            "array" => HostAttr::Array(
                dtype()?,
                self.len.ok_or_else(|| anyhow!("{} has no len", what()))?,
                bytes()?,
            ),
            "string" => HostAttr::String(self.text.clone().unwrap_or_default().into_bytes()),
            "dictionary" => HostAttr::Dictionary(
                self.entries
                    .iter()
                    .flatten()
                    .map(|(k, v)| Ok((k.clone(), v.to_host(k)?)))
                    .collect::<Result<_>>()?,
            ),
            other => bail!(
                "{}: kind `{other}`, expected scalar, array, string or dictionary",
                what()
            ),
        })
    }
}

impl CallFile {
    fn of(call: &FailedCall, operands: Vec<String>) -> CallFile {
        CallFile {
            target: call.target.clone(),
            guest: call.guest.clone(),
            guest_sha256: call.guest_sha256.clone(),
            error_code: call.error.code.name().to_owned(),
            error: call.error.message.clone(),
            memory_bytes: call.memory_bytes,
            call_timeout_ms: u64::try_from(call.call_timeout.as_millis()).unwrap_or(u64::MAX),
            operands,
            results: call
                .results
                .iter()
                .map(|(d, dims)| ResultShape {
                    dtype: d.name().to_owned(),
                    dims: dims.clone(),
                })
                .collect(),
            attrs: call
                .attrs
                .iter()
                .map(|(k, v)| (k.clone(), Attr::of(v)))
                .collect(),
        }
    }

    fn to_toml(&self) -> Result<String> {
        let body = toml::to_string(self).context("cannot write the record as TOML")?;
        Ok(format!(
            "# A failed call, recorded by cyxla: replay it with `cyxla-host replay <this folder>`.\n\
             # It holds the call's operands (operand-*.npy): user data.\n{body}"
        ))
    }
}

fn dtype_named(name: &str) -> Option<DType> {
    DType::ALL.into_iter().find(|d| d.name() == name)
}

/// A record read back: the call, ready to run again.
#[derive(Debug)]
pub struct Record {
    /// The record's folder.
    pub dir: PathBuf,
    /// The call as it failed.
    pub call: FailedCall,
}

impl Record {
    /// Reads the record in `path` (its folder, or its `call.toml`).
    ///
    /// # Errors
    ///
    /// A missing or malformed file, named with what was wrong.
    pub fn read(path: &Path) -> Result<Record> {
        let dir = if path.is_dir() {
            path.to_owned()
        } else {
            path.parent().unwrap_or(Path::new(".")).to_owned()
        };
        let file = dir.join(CALL_FILE);
        let text = fs::read_to_string(&file).with_context(|| {
            format!(
                "cannot read {} (a record is a folder that cyxla recording wrote, holding {CALL_FILE})",
                file.display()
            )
        })?;
        let parsed: CallFile = toml::from_str(&text).map_err(|e| {
            anyhow!(
                "{}",
                cyxla_sandbox::toml_error::toml_error(&file, &text, &e)
            )
        })?;
        let mut operands = Vec::new();
        for name in &parsed.operands {
            let array = npy::read_npy(&dir.join(name))?;
            operands.push(HostBuffer::new(array.dtype, &array.dims, array.bytes));
        }
        let results = parsed
            .results
            .iter()
            .map(|r| {
                dtype_named(&r.dtype)
                    .map(|d| (d, r.dims.clone()))
                    .ok_or_else(|| {
                        anyhow!("{}: unknown result dtype `{}`", file.display(), r.dtype)
                    })
            })
            .collect::<Result<_>>()?;
        let attrs = parsed
            .attrs
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.to_host(k)?)))
            .collect::<Result<_>>()
            .with_context(|| format!("in {}", file.display()))?;
        let code = (1..=16)
            .map(ErrorCode::from_c)
            .find(|c| c.name() == parsed.error_code)
            .unwrap_or(ErrorCode::Unknown);
        Ok(Record {
            dir,
            call: FailedCall {
                target: parsed.target,
                guest: parsed.guest,
                guest_sha256: parsed.guest_sha256,
                operands,
                attrs,
                results,
                memory_bytes: parsed.memory_bytes,
                call_timeout: Duration::from_millis(parsed.call_timeout_ms),
                error: HandlerError::new(code, parsed.error),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An attribute as `call.toml` holds it.
    fn parse(text: &str) -> Attr {
        toml::from_str(text).expect("an attribute table")
    }

    #[test]
    fn attributes_go_through_the_file_unchanged() {
        let values = [
            HostAttr::Scalar(Scalar::Pred(true)),
            HostAttr::Scalar(Scalar::S8(-3)),
            HostAttr::Scalar(Scalar::U64(u64::MAX)),
            HostAttr::Scalar(Scalar::F32(1e-5)),
            HostAttr::Scalar(Scalar::F64(-2.5)),
            HostAttr::Array(
                DType::S64,
                2,
                [4i64, -1].iter().flat_map(|v| v.to_le_bytes()).collect(),
            ),
            HostAttr::String(b"fast".to_vec()),
            HostAttr::Dictionary(vec![("x".into(), HostAttr::Scalar(Scalar::S32(7)))]),
        ];
        for value in values {
            let text = toml::to_string(&Attr::of(&value)).unwrap();
            assert_eq!(parse(&text).to_host("a").unwrap(), value, "{text}");
        }
        let text = toml::to_string(&Attr::of(&HostAttr::Scalar(Scalar::F32(1.5)))).unwrap();
        assert!(
            text.contains("dtype = \"f32\"") && text.contains("hex = \"0000c03f\""),
            "{text}"
        );
    }

    #[test]
    fn a_scalar_of_the_wrong_size_or_dtype_is_an_error_naming_it() {
        let err = |text: &str| format!("{:#}", parse(text).to_host("eps").unwrap_err());
        assert_eq!(
            err("kind = \"scalar\"\ndtype = \"f32\"\nhex = \"0000c03f00\""),
            "attribute `eps`: a f32 scalar takes 4 bytes, the hex gives 5"
        );
        assert_eq!(
            err("kind = \"scalar\"\ndtype = \"f16\"\nhex = \"003c\""),
            "attribute `eps`: f16 is not a scalar dtype (XLA delivers pred, s8-s64, \
             u8-u64, f32 and f64 scalars)"
        );
        assert_eq!(
            err("kind = \"scalar\"\ndtype = \"f99\"\nhex = \"00\""),
            "attribute `eps`: unknown dtype `f99`"
        );
    }
}
