//! `cyxla-host run PROGRAM`: compile a StableHLO program (text or the
//! bytecode `jax.export` writes) on the plugin, feed it `.npy` inputs, and
//! print or save its outputs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use cyxla_pjrt_client::{Buffer, Client};
use plugin_glue::DType;
use plugin_glue::error::Error as GlueError;
use plugin_glue::plugin::Plugin;

use crate::npy::{self, HostArray};
use crate::process;

/// What went wrong, sorted by who has to act: the exit code follows.
#[derive(Debug)]
pub enum Failure {
    /// Usage or set-up: bad arguments, a missing plugin or input file, inputs
    /// that do not match the program. Exit code 2.
    Setup(anyhow::Error),
    /// The program or a handler failed: compile errors, handler errors,
    /// traps. Exit code 1.
    Program(anyhow::Error),
}

impl Failure {
    /// The documented exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Setup(_) => 2,
            Failure::Program(_) => 1,
        }
    }

    /// The error chain.
    pub fn error(&self) -> &anyhow::Error {
        match self {
            Failure::Setup(e) | Failure::Program(e) => e,
        }
    }
}

/// Arguments of `run`.
#[derive(Clone, Debug, Default)]
pub struct RunArgs {
    /// StableHLO program: MLIR text or bytecode.
    pub program: PathBuf,
    /// One `.npy` per program parameter, in order.
    pub inputs: Vec<PathBuf>,
    /// Where to write `out<k>.npy`; nothing is written without it.
    pub output_dir: Option<PathBuf>,
    /// Print one JSON document instead of one line per output.
    pub json: bool,
    /// Run replicated on this many devices (the same inputs on each).
    pub devices: usize,
}

/// One output of one device.
#[derive(Clone, Debug)]
pub struct Output {
    /// `out<k>`.
    pub name: String,
    /// Device index.
    pub device: usize,
    /// The values.
    pub array: HostArray,
}

/// Compiles and runs `args.program` on `plugin`, whose handlers are already
/// registered. `hint` adds a line for targets that have no handler.
///
/// # Errors
///
/// See [`Failure`].
pub fn run(
    plugin: &Plugin,
    args: &RunArgs,
    hint: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Output>, Failure> {
    let devices = args.devices.max(1);
    let inputs = args
        .inputs
        .iter()
        .map(|p| npy::read_npy(p))
        .collect::<anyhow::Result<Vec<_>>>()
        .map_err(Failure::Setup)?;
    let code = std::fs::read(&args.program)
        .with_context(|| format!("cannot read program {}", args.program.display()))
        .map_err(Failure::Setup)?;
    let client = Client::new(plugin, Some(devices))
        .context("cannot create the PJRT client")
        .map_err(Failure::Setup)?;
    let available = client
        .addressable_device_count()
        .map_err(|e| Failure::Setup(e.into()))?;
    if available < devices {
        return Err(Failure::Setup(anyhow!(
            "--devices {devices} asked, but the plugin offers {available}"
        )));
    }
    let exe = client
        .compile(&code, devices)
        .map_err(|e| Failure::Program(compile_error(&args.program, e, hint)))?;
    let params = exe
        .parameter_shapes()
        .context("cannot read the program's parameters")
        .map_err(Failure::Program)?;
    check_inputs(&args.program, &params, &args.inputs, &inputs).map_err(Failure::Setup)?;

    let mut buffers: Vec<Vec<Buffer>> = Vec::with_capacity(devices);
    for device in 0..devices {
        let per_device = inputs
            .iter()
            .zip(&args.inputs)
            .map(|(a, path)| {
                client
                    .buffer_from_host(&a.bytes, a.dtype, &a.dims, device)
                    .with_context(|| format!("cannot copy {} to device {device}", path.display()))
            })
            .collect::<anyhow::Result<Vec<_>>>()
            .map_err(Failure::Setup)?;
        buffers.push(per_device);
    }
    let arg_lists: Vec<Vec<&Buffer>> = buffers.iter().map(|b| b.iter().collect()).collect();
    let results = exe
        .execute(&arg_lists)
        .with_context(|| format!("{} failed", args.program.display()))
        .map_err(Failure::Program)?;

    let mut outputs = Vec::new();
    for (device, per_device) in results.iter().enumerate() {
        for (k, buffer) in per_device.iter().enumerate() {
            let array = HostArray {
                dtype: buffer.dtype().map_err(|e| Failure::Program(e.into()))?,
                dims: buffer.dims().map_err(|e| Failure::Program(e.into()))?,
                bytes: buffer
                    .to_host()
                    .with_context(|| format!("{} failed", args.program.display()))
                    .map_err(Failure::Program)?,
            };
            outputs.push(Output {
                name: format!("out{k}"),
                device,
                array,
            });
        }
    }
    if let Some(dir) = &args.output_dir {
        write_outputs(dir, &outputs).map_err(Failure::Setup)?;
    }
    Ok(outputs)
}

fn compile_error(
    program: &Path,
    error: GlueError,
    hint: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Error {
    let message = error.to_string();
    let mut text = format!("cannot compile {}: {message}", program.display());
    if let Some(target) = process::unregistered_target(&message) {
        let _ = write!(
            text,
            "\n{}",
            process::unregistered_hint(target, hint(target))
        );
    }
    anyhow!(text)
}

fn check_inputs(
    program: &Path,
    params: &[(DType, Vec<i64>)],
    paths: &[PathBuf],
    inputs: &[HostArray],
) -> anyhow::Result<()> {
    if params.len() != inputs.len() {
        let signature: Vec<String> = params.iter().map(|(t, d)| shape_str(*t, d)).collect();
        anyhow::bail!(
            "{} takes {} input(s) ({}), got {}",
            program.display(),
            params.len(),
            signature.join(", "),
            inputs.len()
        );
    }
    for (k, ((dtype, dims), (array, path))) in
        params.iter().zip(inputs.iter().zip(paths)).enumerate()
    {
        if array.dtype != *dtype || array.dims != *dims {
            anyhow::bail!(
                "input {k} ({}): expected {}, got {}",
                path.display(),
                shape_str(*dtype, dims),
                shape_str(array.dtype, &array.dims)
            );
        }
    }
    Ok(())
}

/// `f32[2,3]`.
pub fn shape_str(dtype: DType, dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("{dtype}[{}]", dims.join(","))
}

fn file_name(output: &Output) -> String {
    if output.device == 0 {
        format!("{}.npy", output.name)
    } else {
        format!("{}.dev{}.npy", output.name, output.device)
    }
}

fn write_outputs(dir: &Path, outputs: &[Output]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create output directory {}", dir.display()))?;
    for output in outputs {
        npy::write_npy(&dir.join(file_name(output)), &output.array)?;
    }
    Ok(())
}

/// One line per output: name, shape and dtype, the first values.
pub fn format_lines(outputs: &[Output], devices: usize) -> String {
    let mut text = String::new();
    for o in outputs {
        let name = if devices > 1 {
            format!("{}@dev{}", o.name, o.device)
        } else {
            o.name.clone()
        };
        let _ = writeln!(
            text,
            "{name}: {} {}",
            shape_str(o.array.dtype, &o.array.dims),
            npy::preview(&o.array, 8)
        );
    }
    text
}

/// One JSON document with every output.
pub fn format_json(program: &Path, outputs: &[Output]) -> String {
    let outputs: Vec<serde_json::Value> = outputs
        .iter()
        .map(|o| {
            serde_json::json!({
                "name": o.name,
                "device": o.device,
                "dtype": npy::numpy_name(o.array.dtype),
                "shape": o.array.dims,
                "values": npy::to_json(&o.array),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "program": program.display().to_string(),
        "outputs": outputs,
    });
    format!("{doc:#}\n")
}
