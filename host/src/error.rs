//! The sandbox's error type. Every variant names what failed: the guest
//! file, the target, the export or import, the limit, expected versus got.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Errors from loading guests, checking them and registering their targets.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory could not be read.
    Io {
        /// What was being read.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The `.wasm` file is larger than [`crate::Limits::module_size`].
    ModuleTooLarge {
        /// The guest file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The module is over a limit checked before compiling (function
    /// count, function size): a compile bomb is refused without compiling.
    OverLimit {
        /// The guest file.
        path: PathBuf,
        /// Which limit, its value and the module's, in a sentence naming the
        /// setting (`functions`, `function_size`).
        message: String,
    },
    /// The guest's limits side file (`x.limits.toml`) cannot be read or is
    /// invalid; the guest is not loaded.
    LimitsFile {
        /// The guest file.
        path: PathBuf,
        /// The side file.
        file: PathBuf,
        /// What is wrong (names the file, the line and the setting).
        message: String,
        /// The error behind it, if any (the OS error when the side file
        /// cannot be read).
        source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
    },
    /// The file is not a core WebAssembly module.
    NotWasm {
        /// The guest file.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// wasmtime refused the module (invalid wasm, unsupported feature).
    InvalidModule {
        /// The guest file.
        path: PathBuf,
        /// wasmtime's (or the wasm parser's) error.
        message: WasmError,
    },
    /// The module does not follow the guest ABI: a missing or mistyped
    /// export, a foreign import, a bad `cyxla.targets` section, a wrong ABI
    /// version.
    Abi {
        /// The guest file.
        path: PathBuf,
        /// What is wrong, in a sentence that names the export, import or
        /// record (with wasmtime's error behind it where there is one).
        reason: WasmError,
    },
    /// Instantiating the module failed (its start function or
    /// `_initialize` trapped, its memory is over the limit, ...).
    Instantiate {
        /// The guest file.
        path: PathBuf,
        /// What happened, with wasmtime's error (a [`wasmtime::Trap`] when
        /// the guest trapped).
        message: WasmError,
    },
    /// Two or more guests declare the same target; none of them serves it.
    DuplicateTarget {
        /// The target.
        target: String,
        /// Every guest file that declares it.
        files: Vec<PathBuf>,
    },
    /// Registering a target with the plugin failed.
    Register {
        /// The target.
        target: String,
        /// The guest file that serves it.
        guest: PathBuf,
        /// plugin-glue's error (boxed: it is large and rare).
        source: Box<plugin_glue::Error>,
    },
    /// The wasmtime engine could not be built.
    Engine {
        /// wasmtime's error (or the timer thread's, as a wasmtime error).
        message: WasmError,
    },
}

/// A wasmtime error with its text bounded: what [`Error`] carries where
/// wasmtime (or the wasm parser, or the OS on wasmtime's behalf) failed.
///
/// `Display` prints the text, which is cut to the sandbox's message limit
/// when the error comes from a guest, and the chain ends here
/// (`source()` is `None`): a chain printer such as anyhow's `{:#}` cannot
/// reach wasmtime's unbounded text. [`WasmError::wasmtime`] gives the
/// original error, to downcast (to [`wasmtime::Trap`], for example).
#[derive(Debug)]
pub struct WasmError {
    error: wasmtime::Error,
    text: String,
}

impl WasmError {
    /// `error`, described by its whole chain on one line (`{error:#}`).
    pub(crate) fn new(error: wasmtime::Error) -> WasmError {
        let text = format!("{error:#}");
        WasmError { error, text }
    }

    /// `error`, described by `text`.
    pub(crate) fn described(error: wasmtime::Error, text: String) -> WasmError {
        WasmError { error, text }
    }

    /// A failure with no error behind it but `text` itself.
    pub(crate) fn msg(text: String) -> WasmError {
        WasmError {
            error: wasmtime::Error::msg(text.clone()),
            text,
        }
    }

    /// The original error, whole (its text is not bounded).
    pub fn wasmtime(&self) -> &wasmtime::Error {
        &self.error
    }

    /// The original error, whole (its text is not bounded).
    pub fn into_wasmtime(self) -> wasmtime::Error {
        self.error
    }

    /// The text `Display` prints.
    pub fn message(&self) -> &str {
        &self.text
    }

    /// Cuts its text to `max` bytes ([`bounded`]).
    fn bound(&mut self, max: usize) {
        self.text = bounded(std::mem::take(&mut self.text), max);
    }
}

impl From<wasmparser::BinaryReaderError> for WasmError {
    fn from(error: wasmparser::BinaryReaderError) -> WasmError {
        WasmError::new(wasmtime::Error::new(error))
    }
}

impl fmt::Display for WasmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for WasmError {}

/// Writes `guest {path} {what}: {detail}`, the form of most of [`Error`]'s
/// messages.
fn guest(
    f: &mut fmt::Formatter<'_>,
    path: &Path,
    what: &str,
    detail: impl fmt::Display,
) -> fmt::Result {
    write!(f, "guest {} {what}: {detail}", path.display())
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            Error::ModuleTooLarge { path, size, limit } => write!(
                f,
                "guest {} is {size} bytes, over the limit of {limit} bytes",
                path.display()
            ),
            Error::OverLimit { path, message } => {
                guest(f, path, "is rejected before compiling", message)
            }
            Error::LimitsFile { path, message, .. } => guest(f, path, "is rejected", message),
            Error::NotWasm { path, reason } => {
                write!(
                    f,
                    "{} is not a WebAssembly module: {reason}",
                    path.display()
                )
            }
            Error::InvalidModule { path, message } => {
                guest(f, path, "is not valid WebAssembly", message)
            }
            Error::Abi { path, reason } => guest(f, path, "is rejected", reason),
            Error::Instantiate { path, message } => {
                guest(f, path, "cannot be instantiated", message)
            }
            Error::DuplicateTarget { target, files } => {
                write!(f, "target `{target}` is declared by more than one guest (")?;
                for (i, file) in files.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", file.display())?;
                }
                f.write_str("); none of them serves it")
            }
            // The cause is `source()`, not repeated here.
            Error::Register { target, guest, .. } => write!(
                f,
                "cannot register target `{target}` (guest {})",
                guest.display()
            ),
            Error::Engine { message } => write!(f, "cannot build the wasm engine: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Each message also says its cause (rejection lists print `{}`
            // alone), so a chain printer (`{:#}`) says it twice.
            Error::Io { source, .. } => Some(source),
            Error::InvalidModule { message, .. }
            | Error::Instantiate { message, .. }
            | Error::Abi {
                reason: message, ..
            }
            | Error::Engine { message } => Some(message),
            Error::LimitsFile { source, .. } => {
                let source: &(dyn std::error::Error + 'static) = source.as_deref()?;
                Some(source)
            }
            Error::Register { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

/// The sandbox's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `text` cut to at most `max` bytes (on a character boundary), ending
/// with how much was cut: everything derived from guest bytes that reaches
/// a log or an error goes through here.
pub(crate) fn bounded(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let cut = text.len();
    let mut end = max.saturating_sub(40).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!("… ({} bytes cut)", cut - end));
    text
}

impl Error {
    /// This error with every message it carries cut to `max` bytes
    /// ([`bounded`]).
    pub(crate) fn bounded(mut self, max: usize) -> Error {
        match &mut self {
            Error::OverLimit { message: text, .. } | Error::NotWasm { reason: text, .. } => {
                *text = bounded(std::mem::take(text), max);
            }
            Error::InvalidModule { message, .. }
            | Error::Instantiate { message, .. }
            | Error::Abi {
                reason: message, ..
            } => {
                message.bound(max);
            }
            _ => {}
        }
        self
    }
}

/// `error` and its causes in one line, as `{:#}` prints a chain (`outer:
/// cause: cause`), leaving out each cause whose text is already in the
/// line. The host's errors name their cause in their own message and also
/// return it from [`std::error::Error::source`]; a plain chain printer would
/// say it twice (`cannot read dir: No such file or directory (os error 2):
/// No such file or directory (os error 2)`).
pub fn report(error: &(dyn std::error::Error + 'static)) -> String {
    let mut line = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let text = next.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = next.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `error` and its causes, each on one line, as anyhow's `{:#}` prints
    /// them.
    fn chain(error: &dyn std::error::Error) -> String {
        let mut text = error.to_string();
        let mut next = error.source();
        while let Some(cause) = next {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            next = cause.source();
        }
        text
    }

    fn invalid_module() -> wasmtime::Error {
        let engine = wasmtime::Engine::default();
        // The magic and version, then a section id that does not exist.
        wasmtime::Module::new(&engine, b"\0asm\x01\0\0\0\x7f\x01\0").unwrap_err()
    }

    #[test]
    fn invalid_module_keeps_wasmtime_error() {
        let original = format!("{:#}", invalid_module());
        let error = Error::InvalidModule {
            path: "bad.wasm".into(),
            message: WasmError::new(invalid_module()),
        };
        assert_eq!(
            error.to_string(),
            format!("guest bad.wasm is not valid WebAssembly: {original}")
        );
        let Error::InvalidModule { message, .. } = &error else {
            unreachable!()
        };
        assert_eq!(format!("{:#}", message.wasmtime()), original);
        let source = std::error::Error::source(&error).expect("a source");
        assert!(source.downcast_ref::<WasmError>().is_some());
        assert!(source.source().is_none());
    }

    #[test]
    fn instantiate_keeps_the_trap() {
        let error = Error::Instantiate {
            path: "t.wasm".into(),
            message: WasmError::described(
                wasmtime::Error::new(wasmtime::Trap::UnreachableCodeReached),
                "instantiation trapped: unreachable".into(),
            ),
        };
        assert_eq!(
            error.to_string(),
            "guest t.wasm cannot be instantiated: instantiation trapped: unreachable"
        );
        let Error::Instantiate { message, .. } = &error else {
            unreachable!()
        };
        assert_eq!(
            message.wasmtime().downcast_ref::<wasmtime::Trap>(),
            Some(&wasmtime::Trap::UnreachableCodeReached)
        );
    }

    #[test]
    fn bounded_error_stays_bounded_through_its_chain() {
        let huge = "x".repeat(100_000);
        let max = 200;
        let wasmtime_error = wasmtime::Error::msg(huge.clone()).context(huge.clone());
        let short = format!("{:#}", invalid_module()).len();
        for (error, original) in [
            (
                Error::InvalidModule {
                    path: "bad.wasm".into(),
                    message: WasmError::new(wasmtime_error),
                },
                2 * huge.len(),
            ),
            (
                Error::Instantiate {
                    path: "bad.wasm".into(),
                    message: WasmError::described(invalid_module(), huge.clone()),
                },
                short,
            ),
            (
                Error::Abi {
                    path: "bad.wasm".into(),
                    reason: WasmError::described(invalid_module(), huge.clone()),
                },
                short,
            ),
        ] {
            let error = error.bounded(max);
            let prefix = "guest bad.wasm cannot be instantiated: ".len();
            assert!(error.to_string().len() <= prefix + max, "{error}");
            // The message once in the error, once as its source, and no
            // deeper: wasmtime's unbounded text is out of the chain.
            assert!(chain(&error).len() <= prefix + 2 + 2 * max);
            let (Error::InvalidModule { message, .. }
            | Error::Instantiate { message, .. }
            | Error::Abi {
                reason: message, ..
            }) = &error
            else {
                unreachable!()
            };
            assert!(message.to_string().ends_with(" bytes cut)"));
            // The original stays whole.
            assert!(format!("{:#}", message.wasmtime()).len() >= original);
        }
    }

    #[test]
    fn io_error_is_the_source() {
        let error = Error::Io {
            path: "guests".into(),
            source: io::Error::new(io::ErrorKind::NotFound, "no such directory"),
        };
        assert_eq!(error.to_string(), "cannot read guests: no such directory");
        let source = std::error::Error::source(&error).expect("a source");
        let io = source.downcast_ref::<io::Error>().expect("an io::Error");
        assert_eq!(io.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn limits_file_keeps_the_os_error() {
        let error = Error::LimitsFile {
            path: "g.wasm".into(),
            file: "g.limits.toml".into(),
            message: "cannot read limits file g.limits.toml: denied".into(),
            source: Some(std::sync::Arc::new(io::Error::from(
                io::ErrorKind::PermissionDenied,
            ))),
        };
        let source = std::error::Error::source(&error).expect("a source");
        assert!(source.downcast_ref::<io::Error>().is_some());
    }

    #[test]
    fn parser_error_reads_as_before() {
        let parser = wasmparser::Parser::new(0)
            // A type section of 5 bytes, cut off after its id and size.
            .parse_all(b"\0asm\x01\0\0\0\x01\x05")
            .find_map(Result::err)
            .expect("a parse error");
        let text = parser.to_string();
        let error = WasmError::from(parser);
        assert_eq!(error.to_string(), text);
        assert!(
            error
                .wasmtime()
                .downcast_ref::<wasmparser::BinaryReaderError>()
                .is_some()
        );
    }

    #[test]
    fn report_names_each_cause_once() {
        let io = io::Error::new(io::ErrorKind::NotFound, "no such file");
        let error = Error::Io {
            path: "/nowhere".into(),
            source: io,
        };
        let line = report(&error);
        assert_eq!(line.matches("no such file").count(), 1, "{line}");
        assert!(line.starts_with(&error.to_string()), "{line}");
        // A cause the message does not hold is added, as `{:#}` would.
        #[derive(Debug)]
        struct Outer(io::Error);
        impl fmt::Display for Outer {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("outer")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let outer = Outer(io::Error::other("inner"));
        assert_eq!(report(&outer), "outer: inner");
    }
}
