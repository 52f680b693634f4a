//! plugin-glue's error types: [`Error`], whose every variant names what
//! failed (the plugin path, the PJRT function, the target, the struct,
//! expected versus got), and [`HandlerError`], what a handler returns
//! (defined once for both sides of the sandbox, in `cyxla-xla-types`).

use std::fmt;
use std::path::PathBuf;

pub use cyxla_xla_types::ErrorCode;

/// Errors from loading a plugin, registering handlers and driving PJRT.
#[derive(Debug)]
#[non_exhaustive]
#[expect(
    missing_docs,
    reason = "fields are named for what they hold; each variant's doc says what failed"
)]
pub enum Error {
    /// The shared library could not be opened.
    LoadLibrary {
        path: PathBuf,
        source: libloading::Error,
    },
    /// The library has no `GetPjrtApi` (it is not a PJRT plugin).
    NotAPlugin {
        path: PathBuf,
        source: libloading::Error,
    },
    /// `GetPjrtApi` returned NULL.
    NullApi { path: PathBuf },
    /// The plugin's PJRT API major version is not one we speak.
    UnsupportedApiVersion {
        path: PathBuf,
        major: i32,
        minor: i32,
    },
    /// The plugin's `PJRT_Api` table is too short to hold this function.
    FunctionNotAvailable {
        function: &'static str,
        major: i32,
        minor: i32,
    },
    /// The plugin's table holds NULL for this function.
    NullFunction { function: &'static str },
    /// A PJRT call returned an error.
    Pjrt {
        function: &'static str,
        code: ErrorCode,
        message: String,
    },
    /// The plugin has no extension of this kind.
    MissingExtension { extension: &'static str },
    /// A struct the plugin handed us has an unexpected size.
    StructSize {
        name: &'static str,
        expected: usize,
        got: usize,
    },
    /// XLA dropped a handler registration (its metadata probe failed).
    RegistrationDropped { target: String, reason: String },
    /// A target was registered twice with different handlers. XLA keeps
    /// one handler per target name, so the first registration stays.
    DuplicateTarget {
        target: String,
        /// Where the registered handler comes from (e.g. `native
        /// ./libx.so:Handler`): it keeps serving the target.
        first: String,
        /// Where the refused handler comes from (e.g. `guest x.wasm`).
        second: String,
    },
    /// No room for more trampolines.
    TooManyTargets { limit: usize },
    /// Generating a trampoline failed.
    Trampoline { target: String, message: String },
    /// A symbol could not be found in a native handler library.
    MissingSymbol {
        library: PathBuf,
        symbol: String,
        source: libloading::Error,
    },
    /// An input did not match what it must be.
    InvalidInput(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::LoadLibrary { path, source } => {
                write!(f, "cannot load {}: {source}", path.display())
            }
            Error::NotAPlugin { path, source } => write!(
                f,
                "{} is not a PJRT plugin (no GetPjrtApi symbol): {source}",
                path.display()
            ),
            Error::NullApi { path } => {
                write!(f, "GetPjrtApi of {} returned NULL", path.display())
            }
            Error::UnsupportedApiVersion { path, major, minor } => write!(
                f,
                "{} speaks PJRT API {major}.{minor}; only major version 0 is supported",
                path.display()
            ),
            Error::FunctionNotAvailable {
                function,
                major,
                minor,
            } => write!(
                f,
                "{function} is not available in plugin PJRT API version {major}.{minor}"
            ),
            Error::NullFunction { function } => {
                write!(f, "the plugin's {function} is NULL (not implemented)")
            }
            Error::Pjrt {
                function,
                code,
                message,
            } => write!(f, "{function} failed: {code}: {message}"),
            Error::MissingExtension { extension } => {
                write!(f, "the plugin has no {extension} extension")
            }
            Error::StructSize {
                name,
                expected,
                got,
            } => write!(
                f,
                "{name} has struct_size {got}, expected at least {expected}"
            ),
            Error::RegistrationDropped { target, reason } => write!(
                f,
                "XLA dropped the registration of target `{target}`: {reason}"
            ),
            Error::DuplicateTarget {
                target,
                first,
                second,
            } => write!(
                f,
                "target `{target}` is already registered by {first}, which keeps serving it \
                 (XLA keeps the first handler of a name); {second} cannot serve it too"
            ),
            Error::TooManyTargets { limit } => {
                write!(f, "too many targets: at most {limit} can be registered")
            }
            Error::Trampoline { target, message } => {
                write!(
                    f,
                    "cannot build the entry point of target `{target}`: {message}"
                )
            }
            Error::MissingSymbol {
                library,
                symbol,
                source,
            } => write!(
                f,
                "symbol `{symbol}` not found in {}: {source}",
                library.display()
            ),
            Error::InvalidInput(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::LoadLibrary { source, .. }
            | Error::NotAPlugin { source, .. }
            | Error::MissingSymbol { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// plugin-glue's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The error a handler returns: it reaches the PJRT client verbatim. The
/// same type as the guest SDK's `Error` (`cyxla_xla_types::Error`): an
/// error code and a message.
pub use cyxla_xla_types::Error as HandlerError;
