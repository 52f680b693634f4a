//! `cyxla-host replay RECORD`: runs a recorded failed call again (see
//! [`crate::record`]), on the guest that failed or on a new build of it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use cyxla_sandbox::{AllowList, HostAttr, HostBuffer, HostCall, Limits, Sandbox};

use crate::cli::run::Failure;
use crate::npy::{self, HostArray};
use crate::record::Record;

/// Arguments of `replay`.
#[derive(Clone, Debug, Default)]
pub struct ReplayArgs {
    /// The record's folder (or its `call.toml`).
    pub record: PathBuf,
    /// A guests folder to take the target from instead of the recorded
    /// module's (e.g. a fixed build).
    pub guests: Option<PathBuf>,
    /// Print a summary of each operand first.
    pub show: bool,
    /// Write each result as `out<k>.npy` here after a successful replay.
    pub output_dir: Option<PathBuf>,
}

/// Replays the call; returns what to print. A call that fails again is a
/// [`Failure::Program`] whose message is the new error (and whether it is
/// the recorded one).
///
/// # Errors
///
/// A record that cannot be read or a guest that cannot be loaded (exit 2);
/// the call failing again (exit 1).
pub fn replay(args: &ReplayArgs) -> Result<String, Failure> {
    let record = Record::read(&args.record).map_err(Failure::Setup)?;
    let call = &record.call;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "record {}: target `{}`, {} operand(s), {} result(s); it failed with {}: {}",
        record.dir.display(),
        call.target,
        call.operands.len(),
        call.results.len(),
        call.error.code,
        call.error.message
    );
    if args.show {
        for (i, operand) in call.operands.iter().enumerate() {
            let array = HostArray::of(operand);
            let _ = writeln!(out, "operand {i}: {}", summary(&array));
        }
        for (name, value) in &call.attrs {
            let _ = writeln!(out, "attribute {name}: {}", attr_text(value));
        }
    }
    let dir = match &args.guests {
        Some(dir) => dir.clone(),
        None => call
            .guest
            .parent()
            .map(Path::to_owned)
            .ok_or_else(|| Failure::Setup(anyhow!("the record names no guest folder")))?,
    };
    let mut limits = Limits::default();
    limits.memory = call.memory_bytes;
    limits.call_timeout = call.call_timeout;
    let policy = AllowList::from_rules([call.target.as_str()])
        .map_err(|e| Failure::Setup(anyhow!("the record's target `{}`: {e}", call.target)))?;
    let sandbox = Sandbox::new(&dir, policy, limits).map_err(|e| Failure::Setup(e.into()))?;
    let handler = sandbox.handler(&call.target).ok_or_else(|| {
        let why = sandbox
            .hint_for_unregistered(&call.target)
            .unwrap_or_else(|| format!("no guest in {} serves it", dir.display()));
        Failure::Setup(anyhow!("cannot replay target `{}`: {why}", call.target))
    })?;
    if let Some(guest) = handler.guest() {
        let sha = guest.sha256_hex();
        if sha == call.guest_sha256 {
            let _ = writeln!(out, "guest {}: the recorded module", guest.path().display());
        } else {
            let _ = writeln!(
                out,
                "guest {}: another build than the recorded one (sha256 {}…, recorded {}…)",
                guest.path().display(),
                &sha[..12],
                &call.guest_sha256[..call.guest_sha256.len().min(12)]
            );
        }
    }
    let mut host_call = HostCall::new();
    for operand in &call.operands {
        host_call = host_call.arg(operand.clone());
    }
    for (dtype, dims) in &call.results {
        host_call = host_call.ret(HostBuffer::zeros(*dtype, dims));
    }
    for (name, value) in &call.attrs {
        host_call = host_call.attr(name, value.clone());
    }
    match handler.call_host(&host_call) {
        Err(error) => {
            let same =
                error.code == call.error.code && error.message.ends_with(&call.error.message);
            print!("{out}");
            Err(Failure::Program(anyhow!(
                "{} ({})",
                error.message,
                if same {
                    "the recorded error".to_owned()
                } else {
                    format!("recorded: {}: {}", call.error.code, call.error.message)
                }
            )))
        }
        Ok(()) => {
            let _ = writeln!(out, "the call succeeds now");
            for i in 0..call.results.len() {
                let array = HostArray::of(host_call.result(i));
                let _ = writeln!(out, "out{i}: {}", summary(&array));
                if let Some(dir) = &args.output_dir {
                    std::fs::create_dir_all(dir).map_err(|e| {
                        Failure::Setup(anyhow!("cannot create {}: {e}", dir.display()))
                    })?;
                    npy::write_npy(&dir.join(format!("out{i}.npy")), &array)
                        .map_err(Failure::Setup)?;
                }
            }
            Ok(out)
        }
    }
}

/// `f32[4,4] [0. 1. 2. ...]`.
fn summary(array: &HostArray) -> String {
    let dims: Vec<String> = array.dims.iter().map(i64::to_string).collect();
    format!(
        "{}[{}] {}",
        array.dtype.name(),
        dims.join(","),
        npy::preview(array, 8)
    )
}

/// `f32 3`, `i64[3] [1, 2, 3]`, `"text"`, `{a: f32 1, b: "x"}`.
fn attr_text(value: &HostAttr) -> String {
    match value {
        HostAttr::Scalar(scalar) => {
            let (bytes, len) = scalar.to_le_bytes();
            let array = HostArray {
                dtype: scalar.dtype(),
                dims: vec![1],
                bytes: bytes[..len].to_vec(),
            };
            let one = npy::preview(&array, 1);
            format!("{} {}", scalar.dtype().name(), one.trim_matches(['[', ']']))
        }
        HostAttr::Array(dtype, len, bytes) => summary(&HostArray {
            dtype: *dtype,
            dims: vec![i64::try_from(*len).unwrap_or(i64::MAX)],
            bytes: bytes.clone(),
        }),
        HostAttr::String(bytes) => format!("{:?}", String::from_utf8_lossy(bytes)),
        HostAttr::Dictionary(entries) => {
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k}: {}", attr_text(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}
