//! The sandbox's error type. Every variant names what failed: the guest
//! file, the target, the export or import, the limit, expected versus got.

use std::fmt;
use std::io;
use std::path::PathBuf;

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
    /// The `.wasm` file is larger than [`crate::Limits::module_bytes`].
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
        /// wasmtime's message.
        message: String,
    },
    /// The module does not follow the guest ABI: a missing or mistyped
    /// export, a foreign import, a bad `cyxla.targets` section, a wrong ABI
    /// version.
    Abi {
        /// The guest file.
        path: PathBuf,
        /// What is wrong, in a sentence that names the export, import or
        /// record.
        reason: String,
    },
    /// Instantiating the module failed (its start function or
    /// `_initialize` trapped, its memory is over the limit, ...).
    Instantiate {
        /// The guest file.
        path: PathBuf,
        /// What happened.
        message: String,
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
        /// wasmtime's message.
        message: String,
    },
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
            Error::OverLimit { path, message } => write!(
                f,
                "guest {} is rejected before compiling: {message}",
                path.display()
            ),
            Error::LimitsFile { path, message, .. } => {
                write!(f, "guest {} is rejected: {message}", path.display())
            }
            Error::NotWasm { path, reason } => {
                write!(
                    f,
                    "{} is not a WebAssembly module: {reason}",
                    path.display()
                )
            }
            Error::InvalidModule { path, message } => {
                write!(
                    f,
                    "guest {} is not valid WebAssembly: {message}",
                    path.display()
                )
            }
            Error::Abi { path, reason } => {
                write!(f, "guest {} is rejected: {reason}", path.display())
            }
            Error::Instantiate { path, message } => {
                write!(
                    f,
                    "guest {} cannot be instantiated: {message}",
                    path.display()
                )
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
            // The OS error is part of the message (rejection lists print
            // `{}` alone); not a source too, or `{:#}` would print it twice.
            Error::Io { .. } => None,
            Error::Register { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

/// The sandbox's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A wasmtime error with its whole chain, on one line.
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
            Error::OverLimit { message: text, .. }
            | Error::NotWasm { reason: text, .. }
            | Error::InvalidModule { message: text, .. }
            | Error::Abi { reason: text, .. }
            | Error::Instantiate { message: text, .. } => {
                *text = bounded(std::mem::take(text), max);
            }
            _ => {}
        }
        self
    }
}

pub(crate) fn wasmtime_message(error: &wasmtime::Error) -> String {
    format!("{error:#}")
}
