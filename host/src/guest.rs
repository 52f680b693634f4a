//! A guest: one `.wasm` file, read, hashed, checked against the guest ABI
//! and compiled once.
//!
//! Checks, in order (the first failure rejects the file and names it):
//! the limits side file (`x.limits.toml`, [`crate::limits`]); size limit;
//! core-module magic; function count, function size, locals and blocks limits (read from
//! the sections, before compiling); the `cyxla.targets` custom section (at
//! least one valid record); wasmtime's validation and compilation; imports
//! (only module `cyxla`, with the ABI's names and exact types, and
//! `wasi_snapshot_preview1`); exports (`memory`, `cyxla_abi_version`,
//! `cyxla_api`, `cyxla_alloc`, one `(i32) -> i32` export per declared target,
//! with exact types); then one trial instantiation, which runs the start
//! function and `_initialize` under the call deadline and checks that
//! `cyxla_abi_version()` returns the host's ABI version and that
//! `cyxla_api()` points inside guest memory.
//!
//! A guest loaded for an allow-list none of whose targets it allows stops
//! after wasmtime's validation: it is [`Idle`], validated and not compiled
//! (see [`crate::Guests::load_dir_allowed`]).

use std::fmt;
use std::path::{Path, PathBuf};

use cyxla_guest_abi as abi;
use sha2::{Digest, Sha256};
use wasmtime::{ExternType, FuncType, Module, ValType};

use crate::deadline::CodeRanges;
use crate::engine::Engine;
use crate::error::{Error, Result, WasmError};
use crate::instance::{Instance, Linked, NewError};
use crate::limits::{Limits, bytes_display};

/// One target a guest declares: the custom-call target name and the export
/// that handles it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Custom-call target name (`stablehlo.custom_call @name`).
    pub name: String,
    /// Name of the guest export with signature `(frame: i32) -> i32`.
    pub export: String,
}

/// A loaded, verified and compiled guest module.
///
/// Loading checks, in order (the first failure rejects the file and names
/// it): the limits side file; the size limit; the core-module magic; the
/// function count, size, locals and blocks limits; the `cyxla.targets` custom
/// section (at least one valid record); wasmtime's validation and
/// compilation; imports (only module `cyxla`, with the ABI's names and exact
/// types, and `wasi_snapshot_preview1`); exports (`memory`,
/// `cyxla_abi_version`, `cyxla_api`, `cyxla_alloc`, one `(i32) -> i32`
/// export per declared target); then one trial instantiation (start
/// function and `_initialize` under the call deadline, `cyxla_abi_version()`
/// equal to the host's, `cyxla_api()` inside guest memory).
///
/// # Thread safety
///
/// `Guest` is `Send + Sync`; instances are made from it on any thread.
pub struct Guest {
    path: PathBuf,
    sha256: [u8; 32],
    size: u64,
    targets: Vec<Target>,
    /// Target name -> index in `targets`.
    target_index: std::collections::HashMap<String, usize>,
    imports: Vec<(String, String)>,
    /// What making an instance of it takes (its engine and limits too).
    linked: Linked,
    limits_file: Option<PathBuf>,
}

/// A guest none of whose targets the allow-list it was loaded for allows:
/// it passed the checks before compiling and wasmtime's validation, and was
/// not compiled (the import and export checks and the trial instantiation
/// run when a policy allows one of its targets and it is loaded again).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Idle {
    /// The file.
    pub path: PathBuf,
    /// The targets its `cyxla.targets` section declares.
    pub targets: Vec<String>,
}

/// What loading a file for an allow-list gave.
pub(crate) enum Loaded {
    Guest(Box<Guest>),
    Idle(Idle),
}

impl Loaded {
    /// The guest of a load that wanted every target (`wanted: None`),
    /// which is never idle.
    pub(crate) fn compiled(self) -> Guest {
        match self {
            Loaded::Guest(guest) => *guest,
            Loaded::Idle(idle) => unreachable!(
                "{} left idle by a load that wanted every target",
                idle.path.display()
            ),
        }
    }
}

/// A guest that failed to load, with the targets it declared if its
/// `cyxla.targets` section could be read (for hints).
#[derive(Debug)]
pub struct Rejected {
    /// The file.
    pub path: PathBuf,
    /// Why it was rejected.
    pub error: Error,
    /// Targets its `cyxla.targets` section declares (empty if it has none or
    /// could not be read).
    pub declared: Vec<String>,
}

impl Guest {
    /// Reads, checks and compiles the guest at `path`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the file cannot be read, otherwise the first check
    /// that fails (see [`Guest`] for the list).
    pub fn load(engine: &Engine, path: &Path) -> Result<Guest> {
        Guest::load_or_reject(engine, path).map_err(|rejected| rejected.error)
    }

    /// [`Guest::load`], keeping the declared targets of a rejected file.
    /// [`Guest::load`], with what a rejection knows besides its error
    /// (the targets the file declares, for hints).
    ///
    /// # Errors
    ///
    /// As [`Guest::load`], as a [`Rejected`].
    pub fn load_or_reject(
        engine: &Engine,
        path: &Path,
    ) -> std::result::Result<Guest, Box<Rejected>> {
        Guest::load_detailed(engine, path, None).map(Loaded::compiled)
    }

    /// Loads `path`; with `wanted`, a guest declaring no target `wanted`
    /// accepts is validated, not compiled ([`Loaded::Idle`]).
    pub(crate) fn load_detailed(
        engine: &Engine,
        path: &Path,
        wanted: Option<&(dyn Fn(&str) -> bool + Sync)>,
    ) -> std::result::Result<Loaded, Box<Rejected>> {
        let reject = |error| {
            Box::new(Rejected {
                path: path.to_owned(),
                error,
                declared: Vec::new(),
            })
        };
        let io = |source| {
            reject(Error::Io {
                path: path.to_owned(),
                source,
            })
        };
        let (limits, limits_file) = engine.limits().for_guest(path).map_err(|e| {
            reject(Error::LimitsFile {
                path: path.to_owned(),
                file: e.source.clone().unwrap_or_default(),
                message: e.message,
                source: e.cause,
            })
        })?;
        let engine = &engine.for_limits(&limits).map_err(reject)?;
        let size = std::fs::metadata(path).map_err(io)?.len();
        let limit = limits.module_size;
        if size > limit {
            return Err(reject(Error::ModuleTooLarge {
                path: path.to_owned(),
                size,
                limit,
            }));
        }
        let bytes = std::fs::read(path).map_err(io)?;
        Guest::from_bytes_detailed(engine, path, &bytes, limits, limits_file, wanted)
    }

    /// Checks and compiles a guest from its bytes, under the engine's
    /// limits (no side file is read); `path` names it in messages.
    ///
    /// # Errors
    ///
    /// The first check that fails (see [`Guest`] for the list).
    pub fn from_bytes(engine: &Engine, path: &Path, bytes: &[u8]) -> Result<Guest> {
        let limits = engine.limits().clone();
        if bytes.len() as u64 > limits.module_size {
            return Err(Error::ModuleTooLarge {
                path: path.to_owned(),
                size: bytes.len() as u64,
                limit: limits.module_size,
            });
        }
        Guest::from_bytes_detailed(engine, path, bytes, limits, None, None)
            .map(Loaded::compiled)
            .map_err(|rejected| rejected.error)
    }

    fn from_bytes_detailed(
        engine: &Engine,
        path: &Path,
        bytes: &[u8],
        limits: Limits,
        limits_file: Option<PathBuf>,
        wanted: Option<&(dyn Fn(&str) -> bool + Sync)>,
    ) -> std::result::Result<Loaded, Box<Rejected>> {
        let mut declared = Vec::new();
        let max = limits.error_message;
        let result = check_and_compile(
            engine,
            path,
            bytes,
            &mut declared,
            limits,
            limits_file,
            wanted,
        );
        // Reasons quote the module (import names, wasmtime's messages, trap
        // backtraces): bounded like any guest-made message.
        result.map_err(|error| {
            Box::new(Rejected {
                path: path.to_owned(),
                error: error.bounded(max),
                declared,
            })
        })
    }

    /// The file the guest was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file name (`rms_norm.wasm`), as messages show it.
    pub fn file_name(&self) -> &str {
        &self.linked.file_name
    }

    /// SHA-256 of the module bytes.
    pub fn sha256(&self) -> &[u8; 32] {
        &self.sha256
    }

    /// SHA-256 of the module bytes, in hex.
    pub fn sha256_hex(&self) -> String {
        hex::encode(self.sha256)
    }

    /// Size of the module in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The targets it declares, in section order.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// The index of `target` in [`Guest::targets`], if it declares it.
    pub fn target_index(&self, target: &str) -> Option<usize> {
        self.target_index.get(target).copied()
    }

    /// Its imports, as `(module, name)`.
    pub fn imports(&self) -> &[(String, String)] {
        &self.imports
    }

    /// Whether it imports anything from WASI.
    pub fn uses_wasi(&self) -> bool {
        self.imports.iter().any(|(m, _)| m == abi::WASI_MODULE)
    }

    /// The engine it was compiled with.
    pub fn engine(&self) -> &Engine {
        &self.linked.engine
    }

    /// The limits it runs under: the engine's, with its side file applied.
    pub fn limits(&self) -> &Limits {
        &self.linked.limits
    }

    /// What making an instance of it takes.
    pub(crate) fn linked(&self) -> &Linked {
        &self.linked
    }

    /// Its limits side file (`x.limits.toml`), if it has one.
    pub fn limits_file(&self) -> Option<&Path> {
        self.limits_file.as_deref()
    }
}

impl fmt::Debug for Guest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guest")
            .field("path", &self.path)
            .field("sha256", &self.sha256_hex())
            .field("targets", &self.targets)
            .finish_non_exhaustive()
    }
}

fn abi_error(path: &Path, reason: impl Into<String>) -> Error {
    Error::Abi {
        path: path.to_owned(),
        reason: WasmError::msg(reason.into()),
    }
}

/// `(i32, i32) -> i32`, `() -> ()`, as messages show a function type.
fn signature(ty: &FuncType) -> String {
    fn list(types: impl ExactSizeIterator<Item = ValType>) -> String {
        let names: Vec<String> = types.map(|t| t.to_string()).collect();
        names.join(", ")
    }
    let results: Vec<ValType> = ty.results().collect();
    let results = match results.len() {
        0 => "()".to_owned(),
        1 => results[0].to_string(),
        _ => format!("({})", list(results.into_iter())),
    };
    format!("({}) -> {results}", list(ty.params()))
}

fn is_i32s(types: impl ExactSizeIterator<Item = ValType>, n: usize) -> bool {
    types.len() == n && types.into_iter().all(|t| matches!(t, ValType::I32))
}

/// Whether `ty` is `(i32 × params) -> (i32 × results)`.
fn is_signature(ty: &FuncType, params: usize, results: usize) -> bool {
    is_i32s(ty.params(), params) && is_i32s(ty.results(), results)
}

fn extern_kind(ty: &ExternType) -> &'static str {
    match ty {
        ExternType::Func(_) => "a function",
        ExternType::Global(_) => "a global",
        ExternType::Table(_) => "a table",
        ExternType::Memory(_) => "a memory",
        ExternType::Tag(_) => "a tag",
    }
}

/// Reads the module's sections without compiling anything: returns the
/// `cyxla.targets` section's bytes (all sections of that name, in order)
/// and checks the compile-time limits (function count, function size)
/// against compile bombs.
fn scan_sections(path: &Path, bytes: &[u8], limits: &Limits) -> Result<Vec<u8>> {
    let mut section = Vec::new();
    let over = |message: String| Error::OverLimit {
        path: path.to_owned(),
        message,
    };
    let mut function = 0u64;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| Error::InvalidModule {
            path: path.to_owned(),
            message: e.into(),
        })?;
        match payload {
            wasmparser::Payload::CustomSection(reader) if reader.name() == abi::TARGETS_SECTION => {
                section.extend_from_slice(reader.data());
            }
            wasmparser::Payload::FunctionSection(reader)
                if u64::from(reader.count()) > limits.functions =>
            {
                return Err(over(format!(
                    "it defines {} functions, over the limit of {} (functions)",
                    reader.count(),
                    limits.functions
                )));
            }
            wasmparser::Payload::CodeSectionEntry(body) => {
                let size = body.range().len() as u64;
                if size > limits.function_size {
                    return Err(over(format!(
                        "its function number {function} (among those it defines) has a body of {size} bytes, over the limit of {} (function_size)",
                        bytes_display(limits.function_size)
                    )));
                }
                let mut locals: u64 = 0;
                let reader = body.get_locals_reader().map_err(|e| Error::InvalidModule {
                    path: path.to_owned(),
                    message: e.into(),
                })?;
                for group in reader {
                    let (count, _) = group.map_err(|e| Error::InvalidModule {
                        path: path.to_owned(),
                        message: e.into(),
                    })?;
                    locals = locals.saturating_add(u64::from(count));
                    if locals > limits.locals {
                        return Err(over(format!(
                            "its function number {function} (among those it defines) declares more than {} locals, over the limit (locals): compiling it could take unbounded time and memory",
                            limits.locals
                        )));
                    }
                }
                let mut blocks: u64 = 0;
                let mut operators =
                    body.get_operators_reader()
                        .map_err(|e| Error::InvalidModule {
                            path: path.to_owned(),
                            message: e.into(),
                        })?;
                while !operators.eof() {
                    let operator = operators.read().map_err(|e| Error::InvalidModule {
                        path: path.to_owned(),
                        message: e.into(),
                    })?;
                    if matches!(
                        operator,
                        wasmparser::Operator::Block { .. }
                            | wasmparser::Operator::Loop { .. }
                            | wasmparser::Operator::If { .. }
                    ) {
                        blocks += 1;
                        if blocks > limits.blocks {
                            return Err(over(format!(
                                "its function number {function} (among those it defines) has more than {} blocks, loops and ifs, over the limit (blocks): compiling it could take unbounded time",
                                limits.blocks
                            )));
                        }
                    }
                }
                function += 1;
            }
            _ => {}
        }
    }
    Ok(section)
}

fn check_magic(path: &Path, bytes: &[u8]) -> Result<()> {
    let not_wasm = |reason: &str| Error::NotWasm {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(not_wasm("it does not start with the `\\0asm` magic bytes"));
    }
    match bytes[4..8] {
        [1, 0, 0, 0] => Ok(()),
        [_, _, 1, 0] => Err(not_wasm(
            "it is a WebAssembly component; guests must be core wasm32 modules",
        )),
        _ => Err(not_wasm("it has an unknown WebAssembly binary version")),
    }
}

fn check_and_compile(
    engine: &Engine,
    path: &Path,
    bytes: &[u8],
    declared: &mut Vec<String>,
    limits: Limits,
    limits_file: Option<PathBuf>,
    wanted: Option<&(dyn Fn(&str) -> bool + Sync)>,
) -> Result<Loaded> {
    check_magic(path, bytes)?;

    // Targets first: without them the file is not a guest at all.
    let section = scan_sections(path, bytes, &limits)?;
    let records = abi::parse_targets(&section).map_err(|e| abi_error(path, e.to_string()))?;
    if records.is_empty() {
        return Err(abi_error(
            path,
            format!(
                "it declares no targets (no `{}` records in a `{}` custom section); declare \
                 each with `CYXLA_TARGET(target, Handler);` (C/C++, from `cyxla/target.h`, \
                 included by `xla/ffi/api/ffi.h`) or `target!(\"target\", export, handler);` \
                 (Rust, `cyxla_guest_sdk::target!`)",
                abi::RECORD_PREFIX.trim_end(),
                abi::TARGETS_SECTION
            ),
        ));
    }
    if u64::try_from(records.len()).unwrap_or(u64::MAX) > limits.targets {
        return Err(Error::OverLimit {
            path: path.to_owned(),
            message: format!(
                "it declares {} targets, over the limit of {} (targets)",
                records.len(),
                limits.targets
            ),
        });
    }
    let targets: Vec<Target> = records
        .iter()
        .map(|(target, export)| Target {
            name: (*target).to_owned(),
            export: (*export).to_owned(),
        })
        .collect();
    declared.extend(targets.iter().map(|t| t.name.clone()));
    if let Some(wanted) = wanted
        && !targets.iter().any(|t| wanted(&t.name))
    {
        Module::validate(engine.wasm(), bytes).map_err(|e| Error::InvalidModule {
            path: path.to_owned(),
            message: WasmError::new(e),
        })?;
        return Ok(Loaded::Idle(Idle {
            path: path.to_owned(),
            targets: declared.clone(),
        }));
    }

    let module = engine.compile(bytes).map_err(|e| Error::InvalidModule {
        path: path.to_owned(),
        message: WasmError::new(e),
    })?;
    let imports = check_imports(path, &module)?;
    let (has_initialize, has_last_panic) = check_exports(path, &module, &targets)?;
    let pre = engine.linker().instantiate_pre(&module).map_err(|e| {
        abi_error(
            path,
            format!("its imports do not match what the sandbox offers: {e:#}"),
        )
    })?;

    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let linked = Linked {
        pre,
        has_initialize,
        has_last_panic,
        engine: engine.clone(),
        code: std::sync::Arc::new(CodeRanges::of(&module)),
        limits,
        exports: targets.iter().map(|t| t.export.clone()).collect(),
        file_name,
    };
    // One trial instantiation: runs the start function and `_initialize`,
    // and checks the ABI version and the API table address.
    Instance::new(&linked).map_err(|e| match e {
        NewError::Abi(reason) => Error::Abi {
            path: path.to_owned(),
            reason,
        },
        NewError::Failed(message) => Error::Instantiate {
            path: path.to_owned(),
            message,
        },
    })?;
    let guest = Guest {
        path: path.to_owned(),
        sha256: Sha256::digest(bytes).into(),
        size: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
        target_index: targets
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect(),
        targets,
        imports,
        linked,
        limits_file,
    };
    crate::stats::count(crate::stats::Event::GuestLoaded);
    Ok(Loaded::Guest(Box::new(guest)))
}

fn check_imports(path: &Path, module: &Module) -> Result<Vec<(String, String)>> {
    let mut imports = Vec::new();
    for import in module.imports() {
        let (m, name, ty) = (import.module(), import.name(), import.ty());
        let offered = m == abi::IMPORT_MODULE || m == abi::WASI_MODULE;
        if !offered {
            return Err(abi_error(
                path,
                format!(
                    "it imports `{m}`.`{name}`, which the sandbox does not offer (guests may import only from `{}` and `{}`)",
                    abi::IMPORT_MODULE,
                    abi::WASI_MODULE
                ),
            ));
        }
        let ExternType::Func(func) = &ty else {
            return Err(abi_error(
                path,
                format!(
                    "it imports {} `{m}`.`{name}`; the sandbox offers only functions",
                    extern_kind(&ty)
                ),
            ));
        };
        if m == abi::IMPORT_MODULE {
            let Some(expected) = abi::find_import(name) else {
                return Err(abi_error(
                    path,
                    format!(
                        "it imports `{m}`.`{name}`, which the sandbox does not offer (not a guest ABI v{} host function)",
                        abi::ABI_VERSION
                    ),
                ));
            };
            let results = usize::from(expected.returns_error);
            if !is_signature(func, 1, results) {
                return Err(abi_error(
                    path,
                    format!(
                        "it imports `{m}`.`{name}` with type {}, expected {}",
                        signature(func),
                        if expected.returns_error {
                            "(i32) -> i32"
                        } else {
                            "(i32) -> ()"
                        }
                    ),
                ));
            }
        }
        imports.push((m.to_owned(), name.to_owned()));
    }
    Ok(imports)
}

/// Checks the exports; returns whether `_initialize` and `cyxla_last_panic`
/// are present.
fn check_exports(path: &Path, module: &Module, targets: &[Target]) -> Result<(bool, bool)> {
    let export = |name: &str| module.get_export(name);
    let func = |name: &str, params: usize, results: usize, required: bool| -> Result<bool> {
        let wanted = format!(
            "({}) -> {}",
            vec!["i32"; params].join(", "),
            if results == 1 { "i32" } else { "()" }
        );
        match export(name) {
            None if required => Err(abi_error(
                path,
                format!("it does not export `{name}` (a function {wanted})"),
            )),
            None => Ok(false),
            Some(ExternType::Func(f)) if is_signature(&f, params, results) => Ok(true),
            Some(ExternType::Func(f)) => Err(abi_error(
                path,
                format!(
                    "it exports `{name}` with type {}, expected {wanted}",
                    signature(&f)
                ),
            )),
            Some(other) => Err(abi_error(
                path,
                format!(
                    "it exports `{name}` as {}, expected a function {wanted}",
                    extern_kind(&other)
                ),
            )),
        }
    };
    match export(abi::EXPORT_MEMORY) {
        Some(ExternType::Memory(memory)) => {
            if memory.is_64() {
                return Err(abi_error(
                    path,
                    format!(
                        "its `{}` is a 64-bit memory; guests are wasm32",
                        abi::EXPORT_MEMORY
                    ),
                ));
            }
            if memory.is_shared() {
                return Err(abi_error(
                    path,
                    format!(
                        "its `{}` is a shared memory, which the sandbox does not offer",
                        abi::EXPORT_MEMORY
                    ),
                ));
            }
        }
        Some(other) => {
            return Err(abi_error(
                path,
                format!(
                    "it exports `{}` as {}, expected a memory",
                    abi::EXPORT_MEMORY,
                    extern_kind(&other)
                ),
            ));
        }
        None => {
            return Err(abi_error(
                path,
                format!(
                    "it does not export `{}` (its linear memory)",
                    abi::EXPORT_MEMORY
                ),
            ));
        }
    }
    func(abi::EXPORT_ABI_VERSION, 0, 1, true)?;
    func(abi::EXPORT_API, 0, 1, true)?;
    func(abi::EXPORT_ALLOC, 2, 1, true)?;
    for target in targets {
        match export(&target.export) {
            None => {
                return Err(abi_error(
                    path,
                    format!(
                        "it declares target `{}` with export `{}`, but exports no such function",
                        target.name, target.export
                    ),
                ));
            }
            Some(_) => {
                func(&target.export, 1, 1, true).map_err(|e| match e {
                    Error::Abi { path, reason } => {
                        let text = format!("{reason} (the handler of target `{}`)", target.name);
                        Error::Abi {
                            path,
                            reason: WasmError::described(reason.into_wasmtime(), text),
                        }
                    }
                    other => other,
                })?;
            }
        }
    }
    let has_initialize = match export(abi::EXPORT_INITIALIZE) {
        None => false,
        Some(ExternType::Func(f)) if is_signature(&f, 0, 0) => true,
        Some(other) => {
            let got = match &other {
                ExternType::Func(f) => signature(f),
                other => extern_kind(other).to_owned(),
            };
            return Err(abi_error(
                path,
                format!(
                    "it exports `{}` as {got}, expected a function () -> ()",
                    abi::EXPORT_INITIALIZE
                ),
            ));
        }
    };
    let has_last_panic = func(abi::EXPORT_LAST_PANIC, 0, 1, false)?;
    Ok((has_initialize, has_last_panic))
}

/// The sha256 of a module's bytes, as lowercase hex (what
/// [`Guest::sha256_hex`] says of a loaded guest).
pub fn sha256_hex_of(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_and_version_are_checked() {
        let path = Path::new("x.wasm");
        assert!(check_magic(path, b"\0asm\x01\0\0\0").is_ok());
        let err = check_magic(path, b"hello world").unwrap_err().to_string();
        assert!(err.contains("magic"), "{err}");
        let err = check_magic(path, b"\0asm\x0d\0\x01\0")
            .unwrap_err()
            .to_string();
        assert!(err.contains("component"), "{err}");
    }

    #[test]
    fn signatures_read_like_wasm() {
        let engine = wasmtime::Engine::default();
        let ty = FuncType::new(&engine, [ValType::I32, ValType::I64], [ValType::I32]);
        assert_eq!(signature(&ty), "(i32, i64) -> i32");
        assert!(!is_signature(&ty, 2, 1));
        let ty = FuncType::new(&engine, [], []);
        assert_eq!(signature(&ty), "() -> ()");
        assert!(is_signature(&ty, 0, 0));
    }
}
