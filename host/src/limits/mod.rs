//! Resource limits for guests: every resource a guest can consume has one.
//!
//! The defaults are listed on [`Limits::default`]. An operator overrides
//! them for every guest with `--limit NAME=VALUE` ([`Limits::set`]), and for
//! one guest with a side file next to its module: `x.limits.toml` for
//! `x.wasm` ([`LimitOverrides`], [`side_file`]). The side file wins over the
//! flags, which win over the defaults. The side file lives in the operator's
//! guests folder, next to the module the operator chose to install, so it is
//! operator input like the module itself; it is parsed strictly (unknown
//! names and out-of-range values reject the guest).
//!
//! ```toml
//! # guests/rms_norm.limits.toml
//! memory = "64 MiB"
//! call_timeout = "2s"
//! instances = 4
//! ```

mod interrupt;
mod side_file;
mod units;

pub use interrupt::{Interrupt, SIGNAL_REMOVED};
pub use side_file::side_file;
pub use units::{ByteSize, Count, Flag, Time, bytes_display, parse_bytes, parse_count, parse_time};

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What one guest may consume.
///
/// Limits apply per module before compilation (module size, function count,
/// function size, targets), per instance (memory, tables, stack), per guest
/// (instances) or per call (wall time, captured output).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest linear memory of one instance, in bytes. A `memory.grow` past
    /// it returns -1 to the guest (and a later failure of the call says so).
    pub memory: u64,
    /// Largest number of elements of any table of one instance.
    pub table_elements: usize,
    /// Most instances of one guest alive at once (calls beyond that wait).
    pub instances: usize,
    /// Wall time of one call (including instantiation when a call needs a
    /// new instance). Exceeded by at most one [`Limits::tick`].
    pub call_timeout: Duration,
    /// Wall time of one instantiation: the start function, `_initialize`
    /// and the ABI checks.
    pub instantiate_timeout: Duration,
    /// How long a call waits for a busy guest's instance to come back
    /// before it fails with RESOURCE_EXHAUSTED.
    pub instance_wait: Duration,
    /// Largest `.wasm` file accepted, in bytes.
    pub module_size: u64,
    /// Most functions a module may define (checked before compiling).
    pub functions: u64,
    /// Largest body of one function, in bytes (checked before compiling).
    pub function_size: u64,
    /// Locals one function may declare (checked before compiling: the
    /// compiler's time and memory grow faster than the number of locals).
    pub locals: u64,
    /// Control structures (`block`, `loop`, `if`) one function may contain
    /// (checked before compiling: Cranelift's time grows with the square of
    /// a chain of them, 15 s for 40 000 in a 480 KB function).
    pub blocks: u64,
    /// Most targets one module may declare (checked before compiling).
    pub targets: u64,
    /// Most wasm stack one call may use, in bytes. Engine-wide in wasmtime:
    /// a guest whose side file sets another value gets an engine of its own.
    pub stack: usize,
    /// Bytes of a guest's stdout and stderr kept per call (each); the rest is
    /// dropped and counted.
    pub log_bytes: usize,
    /// Longest error message a guest can create, in bytes (longer ones are
    /// cut).
    pub error_message: usize,
    /// Most error handles one instance can hold at once.
    pub error_handles: usize,
    /// Period of the deadline timer (engine-wide: a flag, not a side-file
    /// setting).
    pub tick: Duration,
    /// Linear memory of every guest instance in the process together
    /// (process-wide: a flag or the tenant's policy, not a side-file
    /// setting). A growth past it is refused as one past `memory` is.
    pub memory_budget: u64,
    /// How guest code past its deadline is stopped (engine-wide).
    pub interrupt: Interrupt,
    /// Threads that compile and check guests, all at once (engine-wide: a
    /// flag, not a side-file setting). Compiling one module takes memory in
    /// proportion to its largest functions, so this bounds the memory of
    /// loading a folder; wasmtime's own parallel compilation of one module's
    /// functions runs on the same threads.
    pub compile_threads: usize,
    /// Threads that copy one large buffer (8 MiB or more) in or out of
    /// guest memory, the calling thread included (engine-wide: a flag, not
    /// a side-file setting). One core's `memcpy` moves well below what the
    /// memory system can; the helpers are shared by the whole process, and
    /// a caller never waits for one that is busy.
    pub copy_threads: usize,
    /// Give every call a fresh instance: nothing a guest keeps in its
    /// memory (heap, statics) survives from one call to the next, so no call
    /// sees data of an earlier call, whoever made it. Off by default: an
    /// instance serves many calls, and only what the host wrote into it
    /// (frames, operands) is overwritten or zeroed before the next call
    /// runs.
    pub fresh_instances: bool,
    /// Check for result elements a guest never wrote: before each call the
    /// host fills each result region with [`UNWRITTEN_POISON`], and after a
    /// successful call reports the elements that still hold it (counts and
    /// first indices), as an error or a warning in the log. Off by default
    /// (then it costs nothing). Results aliased with an operand are not
    /// checked: they hold the operand's bytes when the guest starts.
    pub unwritten: Unwritten,
}

/// The byte the unwritten-results check ([`Limits::unwritten`]) fills result
/// regions with: an element whose every byte still holds it was not
/// written (or was written with exactly these bytes: `0xA5A5A5A5` is the
/// f32 -2.9e-16 and the i32 -1515870811, rare values; for 1-byte elements
/// (u8 165, s8 -91) the check can mistake a written value for an unwritten
/// one, so read its warnings on such results with care).
pub const UNWRITTEN_POISON: u8 = 0xA5;

/// What the unwritten-results check ([`Limits::unwritten`]) does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unwritten {
    /// No check (the default): nothing is filled or read.
    #[default]
    Off,
    /// A call that left result elements unwritten succeeds, with a warning
    /// in the log naming them.
    Warn,
    /// A call that left result elements unwritten fails with an error
    /// naming them.
    Error,
}

/// Largest wasm stack a guest may be given: 4 MiB. Guest code runs on the
/// native stack of the thread that calls it (XLA's threads, 8 MiB by
/// default on Linux), and the wasm stack limit must leave room below it:
/// a call on a thread without that room is refused (see `crate::stack`).
pub const MAX_STACK_BYTES: u64 = 4 << 20;

/// Default linear memory limit: 256 MiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 256 << 20;

impl Default for Limits {
    /// The defaults (the names are those of `--limit NAME=VALUE` and of the
    /// side file):
    ///
    /// | name | default |
    /// |---|---|
    /// | `memory` | 256 MiB |
    /// | `memory_budget` | 4 GiB (all instances of all guests in the process) |
    /// | `table_elements` | 100 000 |
    /// | `stack` | 512 KiB |
    /// | `instances` | 8 |
    /// | `call_timeout` | 10 s |
    /// | `instantiate_timeout` | 5 s |
    /// | `instance_wait` | 10 s |
    /// | `module_size` | 64 MiB |
    /// | `functions` | 100 000 |
    /// | `function_size` | 1 MiB |
    /// | `locals` | 10 000 |
    /// | `blocks` | 10 000 |
    /// | `targets` | 1000 |
    /// | `log_bytes` | 64 KiB |
    /// | `error_message` | 64 KiB |
    /// | `error_handles` | 1024 |
    /// | `tick` | 10 ms |
    /// | `interrupt` | `auto`: `epoch` |
    /// | `compile_threads` | the number of CPUs, at most 4 |
    /// | `copy_threads` | the number of CPUs, at most 4 |
    /// | `fresh_instances` | `false` |
    /// | `unwritten` | `off` (`warn`, `error`) |
    fn default() -> Limits {
        Limits {
            memory: DEFAULT_MEMORY_BYTES,
            memory_budget: 4 << 30,
            table_elements: 100_000,
            instances: 8,
            call_timeout: Duration::from_secs(10),
            instantiate_timeout: Duration::from_secs(5),
            instance_wait: Duration::from_secs(10),
            module_size: 64 << 20,
            functions: 100_000,
            function_size: 1 << 20,
            locals: 10_000,
            blocks: 10_000,
            targets: 1000,
            stack: 512 << 10,
            log_bytes: 64 << 10,
            error_message: 64 << 10,
            error_handles: 1024,
            tick: Duration::from_millis(10),
            interrupt: Interrupt::Auto,
            compile_threads: default_compile_threads(),
            copy_threads: default_copy_threads(),
            fresh_instances: false,
            unwritten: Unwritten::Off,
        }
    }
}

/// The default of [`Limits::compile_threads`]: the CPUs this process may
/// use, at most 4 (a large machine loading a folder of hostile modules
/// would otherwise hold as many worst-case compilations in memory as it has
/// cores).
fn default_compile_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// The default of [`Limits::copy_threads`]: the CPUs this process may use,
/// at most 4 (more threads than that do not copy faster: memory bandwidth
/// binds first).
fn default_copy_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// Ticks for a wall-time limit: rounded up to whole ticks, plus one because
/// the first tick may come at once.
fn ticks(limit: Duration, tick: Duration) -> u64 {
    let tick = tick.as_nanos().max(1);
    let ticks = limit.as_nanos().div_ceil(tick);
    u64::try_from(ticks)
        .unwrap_or(u64::MAX - 1)
        .saturating_add(1)
}

impl Limits {
    /// Number of deadline ticks for one call.
    pub fn deadline_ticks(&self) -> u64 {
        ticks(self.call_timeout, self.tick)
    }

    /// Number of deadline ticks for one instantiation.
    pub fn instantiate_ticks(&self) -> u64 {
        ticks(self.instantiate_timeout, self.tick)
    }

    /// Human-readable memory limit (`256 MiB`).
    pub fn memory_display(&self) -> String {
        bytes_display(self.memory)
    }

    /// Sets the limit `name` from its text form, as `--limit NAME=VALUE`
    /// gives it: sizes as `64MiB`, `512 KiB` or a number of bytes, times as
    /// `250ms` or `2s`, counts as numbers.
    ///
    /// # Errors
    ///
    /// An unknown name (the message lists the known ones), a value that does
    /// not parse, or one out of range.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), LimitError> {
        let fail = |message: String| LimitError {
            source: None,
            message: format!("--limit {name}={value}: {message}"),
            cause: None,
        };
        // A table of one string, read as a side file is: flags and side
        // files share one deserializer (and its messages).
        let mut table = toml::Table::new();
        table.insert(name.to_owned(), toml::Value::String(value.to_owned()));
        let overrides = LimitOverrides::deserialize(toml::Value::Table(table))
            .map_err(|e| fail(e.message().trim_end().to_owned()))?;
        self.apply(&overrides).map_err(|message| LimitError {
            source: None,
            message: format!("--limit {name}={value}: {message}"),
            cause: None,
        })
    }

    /// Applies every setting of `overrides`.
    ///
    /// # Errors
    ///
    /// A value out of range (the message names the setting, the value and
    /// the range); nothing is changed then.
    pub fn apply(&mut self, overrides: &LimitOverrides) -> Result<(), String> {
        let mut next = self.clone();
        let o = overrides;
        if let Some(v) = o.memory {
            next.memory = in_range("memory", v.0, 64 << 10, 4 << 30, bytes_display)?;
        }
        if let Some(v) = o.memory_budget {
            next.memory_budget = in_range("memory_budget", v.0, 64 << 10, 1 << 40, bytes_display)?;
        }
        if let Some(v) = o.table_elements {
            next.table_elements = count("table_elements", v.0, 0, 10_000_000)?;
        }
        if let Some(v) = o.stack {
            next.stack = size("stack", v.0, 16 << 10, MAX_STACK_BYTES)?;
        }
        if let Some(v) = o.instances {
            next.instances = count("instances", v.0, 1, 1024)?;
        }
        if let Some(v) = o.call_timeout {
            next.call_timeout = time("call_timeout", v.0)?;
        }
        if let Some(v) = o.instantiate_timeout {
            next.instantiate_timeout = time("instantiate_timeout", v.0)?;
        }
        if let Some(v) = o.instance_wait {
            next.instance_wait = time("instance_wait", v.0)?;
        }
        if let Some(v) = o.module_size {
            next.module_size = in_range("module_size", v.0, 8, 1 << 30, bytes_display)?;
        }
        if let Some(v) = o.functions {
            next.functions = in_range("functions", v.0, 1, 1_000_000, |n| n.to_string())?;
        }
        if let Some(v) = o.function_size {
            next.function_size = in_range("function_size", v.0, 1, 64 << 20, bytes_display)?;
        }
        if let Some(v) = o.locals {
            next.locals = in_range("locals", v.0, 1, 1_000_000, |n| n.to_string())?;
        }
        if let Some(v) = o.blocks {
            next.blocks = in_range("blocks", v.0, 1, 1_000_000, |n| n.to_string())?;
        }
        if let Some(v) = o.targets {
            next.targets = in_range("targets", v.0, 1, 100_000, |n| n.to_string())?;
        }
        if let Some(v) = o.log_bytes {
            next.log_bytes = size("log_bytes", v.0, 0, 64 << 20)?;
        }
        if let Some(v) = o.error_message {
            next.error_message = size("error_message", v.0, 16, 16 << 20)?;
        }
        if let Some(v) = o.error_handles {
            next.error_handles = count("error_handles", v.0, 1, 1 << 20)?;
        }
        if let Some(v) = o.tick {
            let (lo, hi) = (Duration::from_micros(100), Duration::from_secs(1));
            if v.0 < lo || v.0 > hi {
                return Err(format!("tick {:?} is out of range ({lo:?} to {hi:?})", v.0));
            }
            next.tick = v.0;
        }
        if let Some(v) = o.interrupt {
            next.interrupt = v;
        }
        if let Some(v) = o.compile_threads {
            next.compile_threads = count("compile_threads", v.0, 1, 256)?;
        }
        if let Some(v) = o.copy_threads {
            next.copy_threads = count("copy_threads", v.0, 1, crate::copy::MAX_HELPERS as u64 + 1)?;
        }
        if let Some(v) = o.fresh_instances {
            next.fresh_instances = v.0;
        }
        if let Some(v) = o.unwritten {
            next.unwritten = v;
        }
        *self = next;
        Ok(())
    }
}

fn in_range(
    name: &str,
    value: u64,
    lo: u64,
    hi: u64,
    show: impl Fn(u64) -> String,
) -> Result<u64, String> {
    if value < lo || value > hi {
        return Err(format!(
            "{name} {} is out of range ({} to {})",
            show(value),
            show(lo),
            show(hi)
        ));
    }
    Ok(value)
}

fn size(name: &str, value: u64, lo: u64, hi: u64) -> Result<usize, String> {
    let v = in_range(name, value, lo, hi, bytes_display)?;
    usize::try_from(v).map_err(|_| format!("{name} {v} does not fit this machine"))
}

fn count(name: &str, value: u64, lo: u64, hi: u64) -> Result<usize, String> {
    let v = in_range(name, value, lo, hi, |n| n.to_string())?;
    usize::try_from(v).map_err(|_| format!("{name} {v} does not fit this machine"))
}

fn time(name: &str, value: Duration) -> Result<Duration, String> {
    let (lo, hi) = (Duration::from_millis(1), Duration::from_secs(86_400));
    if value < lo || value > hi {
        return Err(format!(
            "{name} {value:?} is out of range ({lo:?} to {hi:?})"
        ));
    }
    Ok(value)
}

/// A limit setting that cannot be applied: a bad `--limit` flag or side
/// file.
#[derive(Clone, Debug)]
pub struct LimitError {
    /// The side file, if the setting came from one.
    pub source: Option<PathBuf>,
    /// What is wrong, naming the setting and the file or flag.
    pub message: String,
    /// The error behind it, if any (the side file could not be read: the
    /// OS error). [`std::error::Error::source`] returns it.
    pub cause: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LimitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let cause: &(dyn std::error::Error + 'static) = self.cause.as_deref()?;
        Some(cause)
    }
}

/// A `NAME=VALUE` limit setting, as the `--limit` flag takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitSetting {
    /// The limit's name (see [`Limits::default`]).
    pub name: String,
    /// Its value, as text.
    pub value: String,
}

impl std::str::FromStr for LimitSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<LimitSetting, String> {
        let (name, value) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}` is not NAME=VALUE (e.g. memory=64MiB)"))?;
        let setting = LimitSetting {
            name: name.trim().to_owned(),
            value: value.trim().to_owned(),
        };
        // Parse now so that clap reports a bad value as a usage error.
        Limits::default().set(&setting.name, &setting.value)?;
        Ok(setting)
    }
}

impl From<LimitError> for String {
    fn from(e: LimitError) -> String {
        e.message
    }
}

/// Settings that override [`Limits`]: the contents of a side file (TOML),
/// or of `--limit` flags. Every field is optional; an absent one keeps the
/// limit it would override. Unknown names are errors.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LimitOverrides {
    /// [`Limits::memory`].
    pub memory: Option<ByteSize>,
    /// [`Limits::memory_budget`] (flags and policy only: process-wide).
    pub memory_budget: Option<ByteSize>,
    /// [`Limits::table_elements`].
    pub table_elements: Option<Count>,
    /// [`Limits::stack`].
    pub stack: Option<ByteSize>,
    /// [`Limits::instances`].
    pub instances: Option<Count>,
    /// [`Limits::call_timeout`].
    pub call_timeout: Option<Time>,
    /// [`Limits::instantiate_timeout`].
    pub instantiate_timeout: Option<Time>,
    /// [`Limits::instance_wait`].
    pub instance_wait: Option<Time>,
    /// [`Limits::module_size`].
    pub module_size: Option<ByteSize>,
    /// [`Limits::functions`].
    pub functions: Option<Count>,
    /// [`Limits::function_size`].
    pub function_size: Option<ByteSize>,
    /// [`Limits::locals`].
    pub locals: Option<Count>,
    /// [`Limits::blocks`].
    pub blocks: Option<Count>,
    /// [`Limits::targets`].
    pub targets: Option<Count>,
    /// [`Limits::log_bytes`].
    pub log_bytes: Option<ByteSize>,
    /// [`Limits::error_message`].
    pub error_message: Option<ByteSize>,
    /// [`Limits::error_handles`].
    pub error_handles: Option<Count>,
    /// [`Limits::tick`] (flags only: engine-wide).
    pub tick: Option<Time>,
    /// [`Limits::interrupt`] (flags only: engine-wide).
    pub interrupt: Option<Interrupt>,
    /// [`Limits::compile_threads`] (flags only: engine-wide).
    pub compile_threads: Option<Count>,
    /// [`Limits::copy_threads`] (flags only: engine-wide).
    pub copy_threads: Option<Count>,
    /// [`Limits::fresh_instances`].
    pub fresh_instances: Option<Flag>,
    /// [`Limits::unwritten`].
    pub unwritten: Option<Unwritten>,
}

impl LimitOverrides {
    /// Parses a side file's TOML text.
    ///
    /// # Errors
    ///
    /// The TOML parser's message (line, column, the unknown key or bad
    /// value), on one line.
    pub fn parse(text: &str) -> Result<LimitOverrides, String> {
        toml::from_str(text).map_err(|e| {
            let message = e.message().trim_end().to_owned();
            match e.span() {
                Some(span) => {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}: {message}")
                }
                None => message,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_ticks_round_up() {
        let mut limits = Limits::default();
        assert_eq!(limits.deadline_ticks(), 1001);
        assert_eq!(limits.instantiate_ticks(), 501);
        limits.call_timeout = Duration::from_millis(15);
        assert_eq!(limits.deadline_ticks(), 3);
        limits.call_timeout = Duration::from_secs(u64::MAX);
        limits.tick = Duration::from_nanos(1);
        assert_eq!(limits.deadline_ticks(), u64::MAX);
    }

    #[test]
    fn flags_set_limits_by_name() {
        let mut limits = Limits::default();
        limits.set("memory", "64MiB").unwrap();
        limits.set("call_timeout", "250ms").unwrap();
        limits.set("instances", "4").unwrap();
        limits.set("stack", "1 MiB").unwrap();
        limits.set("functions", "1_000").unwrap();
        limits.set("tick", "1ms").unwrap();
        assert_eq!(limits.memory, 64 << 20);
        assert_eq!(limits.call_timeout, Duration::from_millis(250));
        assert_eq!(limits.instances, 4);
        assert_eq!(limits.stack, 1 << 20);
        assert_eq!(limits.functions, 1000);
        assert_eq!(limits.tick, Duration::from_millis(1));

        let e = limits.set("memroy", "1MiB").unwrap_err().to_string();
        assert!(
            e.starts_with("--limit memroy=1MiB: unknown field `memroy`, expected one of"),
            "{e}"
        );
        let e = limits.set("memory", "8 GiB").unwrap_err().to_string();
        assert_eq!(
            e,
            "--limit memory=8 GiB: memory 8 GiB is out of range (64 KiB to 4 GiB)"
        );
        limits.set("interrupt", "epoch").unwrap();
        assert_eq!(limits.interrupt, Interrupt::Epoch);
        // No setting turns deadlines off (the benches' `Unchecked` is not
        // a setting).
        let e = limits
            .set("interrupt", "unchecked")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--limit interrupt=unchecked: unknown variant `unchecked`, expected `auto` or `epoch`"
        );
        let e = limits.set("interrupt", "fuel").unwrap_err().to_string();
        assert_eq!(
            e,
            "--limit interrupt=fuel: unknown variant `fuel`, expected `auto` or `epoch`"
        );
        // The signal mechanism was removed: asking for it is an error that
        // says so, and changes nothing.
        let before = limits.clone();
        let e = limits.set("interrupt", "signal").unwrap_err().to_string();
        assert_eq!(e, format!("--limit interrupt=signal: {SIGNAL_REMOVED}"));
        assert_eq!(limits, before);
        let e = LimitOverrides::parse("interrupt = \"signal\"").unwrap_err();
        assert!(e.contains(SIGNAL_REMOVED), "{e}");
        let e = limits.set("call_timeout", "5").unwrap_err().to_string();
        assert!(e.contains("`5` is not a time"), "{e}");
        // Values and names are data, never TOML text: nothing in them can
        // set a second limit.
        let e = limits
            .set("memory", "1MiB'\ninstances = '1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a size"), "{e}");
        let e = limits.set("memory = 1\nstack", "1MiB").unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
        assert_eq!(limits.memory, 64 << 20, "a failed setting changes nothing");
        assert!("memory".parse::<LimitSetting>().is_err());
        let s: LimitSetting = "memory = 1 MiB".parse().unwrap();
        assert_eq!((s.name.as_str(), s.value.as_str()), ("memory", "1 MiB"));
    }

    #[test]
    fn side_files_parse_strictly() {
        let o = LimitOverrides::parse(
            "memory = \"64 MiB\"\ncall_timeout = \"2s\"\ninstances = 4\nstack = 1048576\n",
        )
        .unwrap();
        assert_eq!(o.memory, Some(ByteSize(64 << 20)));
        assert_eq!(o.call_timeout, Some(Time(Duration::from_secs(2))));
        assert_eq!(o.instances, Some(Count(4)));
        assert_eq!(o.stack, Some(ByteSize(1 << 20)));
        let e = LimitOverrides::parse("memory = \"1 MiB\"\nfuel = 3\n").unwrap_err();
        assert!(e.starts_with("line 2: unknown field `fuel`"), "{e}");
        let e = LimitOverrides::parse("call_timeout = 2\n").unwrap_err();
        assert!(e.contains("2 has no unit"), "{e}");
        let e = LimitOverrides::parse("memory = \"lots\"\n").unwrap_err();
        assert!(e.contains("`lots` is not a size"), "{e}");
        let e = LimitOverrides::parse("instances = -1\n").unwrap_err();
        assert!(e.contains("-1 is negative"), "{e}");
        assert_eq!(
            LimitOverrides::parse("").unwrap(),
            LimitOverrides::default()
        );
    }
}
