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
//!
//! # Adding a limit
//!
//! Every limit is one line of the `limits!` table below: its name (the
//! field, and the key users write everywhere: `--limit`, `CYXLA_LIMITS`,
//! side files, the `[limits]` tables of the configuration file and of the
//! tenant policy), its type, its default (and how the docs show it), its
//! [`Scope`] (`Engine` and `Process` ones are refused in side files), the
//! type its value is read as and the checker of its range. From the table
//! come the [`Limits`] field, `Default`, [`LimitOverrides`] (so the side
//! file, the flags, the configuration file and the policy all accept it),
//! [`Limits::apply`], [`Limits::NAMES`] and [`Limits::scope`]. Nothing in
//! `cyxla-setup` or `cyxla-host` names a limit: they hold a [`Limits`] or a
//! [`LimitOverrides`].
//!
//! So a new limit touches two files: this one, and the code that enforces
//! it. A limit on the globals a module declares, say:
//!
//! ```text
//! // host/src/limits/mod.rs, in the table:
//!     /// Most globals one module may declare (checked before compiling).
//!     globals: u64 = 1000, "1000", Module,
//!         Count => number_in(1, 100_000);
//!
//! // host/src/guest.rs, where the module's sections are checked:
//!     Payload::GlobalSection(s) if u64::from(s.count()) > limits.globals => {
//!         return Err(/* names `globals`, the count and the limit */);
//!     }
//! ```
//!
//! (docs/reference-limits.md documents the limits for users: give the new
//! one a row there too; `host/app/tests/reference.rs` fails until it has
//! one, with the default this table shows.)

#[macro_use]
mod define;
mod interrupt;
mod side_file;
mod units;

pub use interrupt::{EPOCH_REPLACED, Interrupt, SIGNAL_REMOVED};
pub use side_file::side_file;
pub use units::{ByteSize, Count, Flag, Time, bytes_display, parse_bytes, parse_count, parse_time};

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

limits! {
    /// What one guest may consume: one field per limit, named as users
    /// write it (`--limit NAME=VALUE`, side files, `[limits]` tables).
    ///
    /// Limits apply per module before compilation (module size, function
    /// count, function size, targets), per instance (memory, tables, stack),
    /// per guest (instances), per call (wall time, captured output), or to
    /// the whole engine or process ([`Scope`]). Each is defined once, by a
    /// line of the table below; see "Adding a limit" in the module's docs.
    pub struct Limits;

    /// Largest linear memory of one instance, in bytes. A `memory.grow` past
    /// it returns -1 to the guest (and a later failure of the call says so).
    memory: u64 = DEFAULT_MEMORY_BYTES, "256 MiB", Instance,
        ByteSize => bytes_in(64 << 10, 4 << 30);
    /// Linear memory of every guest instance in the process together
    /// (process-wide: a flag or the tenant's policy, not a side-file
    /// setting). A growth past it is refused as one past `memory` is.
    memory_budget: u64 = 4 << 30, "4 GiB (all instances of all guests in the process)", Process,
        ByteSize => bytes_in(64 << 10, 1 << 40);
    /// Largest number of elements of any table of one instance.
    table_elements: usize = 100_000, "100 000", Instance,
        Count => count_in(0, 10_000_000);
    /// Most wasm stack one call may use, in bytes. Engine-wide in wasmtime:
    /// a guest whose side file sets another value gets an engine of its own.
    stack: usize = 512 << 10, "512 KiB", Instance,
        ByteSize => size_in(16 << 10, MAX_STACK_BYTES);
    /// Most instances of one guest alive at once (calls beyond that wait).
    instances: usize = 8, "8", Guest,
        Count => count_in(1, 1024);
    /// Wall time of one call (including instantiation when a call needs a
    /// new instance). Exceeded by at most two [`Limits::tick`]s while the
    /// timer thread runs on time, and by its lateness on a loaded machine;
    /// never cut short.
    call_timeout: Duration = Duration::from_secs(10), "10 s", Call,
        Time => timeout();
    /// Wall time of one instantiation: the start function, `_initialize`
    /// and the ABI checks.
    instantiate_timeout: Duration = Duration::from_secs(5), "5 s", Instance,
        Time => timeout();
    /// How long a call waits for a busy guest's instance to come back
    /// before it fails with RESOURCE_EXHAUSTED.
    instance_wait: Duration = Duration::from_secs(10), "10 s", Call,
        Time => timeout();
    /// Largest `.wasm` file accepted, in bytes.
    module_size: u64 = 64 << 20, "64 MiB", Module,
        ByteSize => bytes_in(8, 1 << 30);
    /// Most functions a module may define (checked before compiling).
    functions: u64 = 100_000, "100 000", Module,
        Count => number_in(1, 1_000_000);
    /// Largest body of one function, in bytes (checked before compiling).
    function_size: u64 = 1 << 20, "1 MiB", Module,
        ByteSize => bytes_in(1, 64 << 20);
    /// Locals one function may declare (checked before compiling: the
    /// compiler's time and memory grow faster than the number of locals).
    locals: u64 = 10_000, "10 000", Module,
        Count => number_in(1, 1_000_000);
    /// Control structures (`block`, `loop`, `if`) one function may contain
    /// (checked before compiling: Cranelift's time grows with the square of
    /// a chain of them, 15 s for 40 000 in a 480 KB function).
    blocks: u64 = 10_000, "10 000", Module,
        Count => number_in(1, 1_000_000);
    /// Most targets one module may declare (checked before compiling).
    targets: u64 = 1000, "1000", Module,
        Count => number_in(1, 100_000);
    /// Bytes of a guest's stdout and stderr kept per call (each); the rest is
    /// dropped and counted.
    log_bytes: usize = 64 << 10, "64 KiB", Call,
        ByteSize => size_in(0, 64 << 20);
    /// Longest error message a guest can create, in bytes (longer ones are
    /// cut).
    error_message: usize = 64 << 10, "64 KiB", Call,
        ByteSize => size_in(16, 16 << 20);
    /// Most error handles one instance can hold at once.
    error_handles: usize = 1024, "1024", Instance,
        Count => count_in(1, 1 << 20);
    /// Period of the deadline timer (engine-wide: a flag, not a side-file
    /// setting).
    tick: Duration = Duration::from_millis(10), "10 ms", Engine,
        Time => time_in(Duration::from_micros(100), Duration::from_secs(1));
    /// How guest code past its deadline is stopped (engine-wide).
    interrupt: Interrupt = Interrupt::Auto, "`auto`: `poll`", Engine,
        Interrupt => any;
    /// Threads that compile and check guests, all at once (engine-wide: a
    /// flag, not a side-file setting). Compiling one module takes memory in
    /// proportion to its largest functions, so this bounds the memory of
    /// loading a folder; wasmtime's own parallel compilation of one module's
    /// functions runs on the same threads.
    compile_threads: usize = default_compile_threads(), "the number of CPUs, at most 4", Engine,
        Count => count_in(1, 256);
    /// Threads that copy one large buffer (8 MiB or more) in or out of
    /// guest memory, the calling thread included (engine-wide: a flag, not
    /// a side-file setting). One core's `memcpy` moves well below what the
    /// memory system can; the helpers are shared by the whole process, and
    /// a caller never waits for one that is busy.
    copy_threads: usize = default_copy_threads(), "the number of CPUs, at most 4", Engine,
        Count => count_in(1, crate::copy::MAX_HELPERS as u64 + 1);
    /// Give every call a fresh instance: nothing a guest keeps in its
    /// memory (heap, statics) survives from one call to the next, so no call
    /// sees data of an earlier call, whoever made it. Off by default: an
    /// instance serves many calls, and only what the host wrote into it
    /// (frames, operands) is overwritten or zeroed before the next call
    /// runs.
    fresh_instances: bool = false, "`false`", Guest,
        Flag => flag;
    /// Check for result elements a guest never wrote: before each call the
    /// host fills each result region with [`UNWRITTEN_POISON`], and after a
    /// successful call reports the elements that still hold it (counts and
    /// first indices), as an error or a warning in the log. Off by default
    /// (then it costs nothing). Results aliased with an operand are not
    /// checked: they hold the operand's bytes when the guest starts.
    unwritten: Unwritten = Unwritten::Off, "`off` (`warn`, `error`)", Call,
        Unwritten => any;
}

/// Where a limit applies: the table's scope column. `Engine` and `Process`
/// limits hold for every guest of an engine or of the process, so they are
/// set with `--limit` (or a configuration or policy), never in a side file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Checked on a module before it is compiled.
    Module,
    /// Each instance of a guest.
    Instance,
    /// Each guest (all its instances together).
    Guest,
    /// Each call.
    Call,
    /// The whole wasm engine (every guest that shares it).
    Engine,
    /// The whole process (every guest of every engine).
    Process,
}

impl Scope {
    /// Why a side file may not set a limit of this scope (`engine-wide`,
    /// `process-wide`), or `None` if it may.
    pub fn wide(self) -> Option<&'static str> {
        match self {
            Scope::Engine => Some("engine-wide"),
            Scope::Process => Some("process-wide"),
            Scope::Module | Scope::Instance | Scope::Guest | Scope::Call => None,
        }
    }
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

/// Ticks for a wall-time limit: rounded up to whole ticks, plus two: the
/// first tick may come at once, and the second less than a tick after it
/// when the first came late (see the deadline timer).
pub(crate) fn ticks(limit: Duration, tick: Duration) -> u64 {
    let tick = tick.as_nanos().max(1);
    let ticks = limit.as_nanos().div_ceil(tick);
    u64::try_from(ticks)
        .unwrap_or(u64::MAX - 2)
        .saturating_add(2)
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
}

// The checkers of the table's lines: each takes the limit's name and the
// value read, and returns the field's value or an error naming the limit,
// the value and the range.

fn out_of_range<T: fmt::Debug>(name: &str, value: T, lo: T, hi: T) -> String {
    format!("{name} {value:?} is out of range ({lo:?} to {hi:?})")
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

fn fits(name: &str, v: u64) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("{name} {v} does not fit this machine"))
}

/// A size in bytes from `lo` to `hi`.
fn bytes_in(lo: u64, hi: u64) -> impl Fn(&str, ByteSize) -> Result<u64, String> {
    move |name, v| in_range(name, v.0, lo, hi, bytes_display)
}

/// [`bytes_in`], as a `usize`.
fn size_in(lo: u64, hi: u64) -> impl Fn(&str, ByteSize) -> Result<usize, String> {
    move |name, v| fits(name, in_range(name, v.0, lo, hi, bytes_display)?)
}

/// A count from `lo` to `hi`.
fn number_in(lo: u64, hi: u64) -> impl Fn(&str, Count) -> Result<u64, String> {
    move |name, v| in_range(name, v.0, lo, hi, |n| n.to_string())
}

/// [`number_in`], as a `usize`.
fn count_in(lo: u64, hi: u64) -> impl Fn(&str, Count) -> Result<usize, String> {
    move |name, v| fits(name, in_range(name, v.0, lo, hi, |n| n.to_string())?)
}

/// A wall time from `lo` to `hi`.
fn time_in(lo: Duration, hi: Duration) -> impl Fn(&str, Time) -> Result<Duration, String> {
    move |name, v| {
        if v.0 < lo || v.0 > hi {
            return Err(out_of_range(name, v.0, lo, hi));
        }
        Ok(v.0)
    }
}

/// A timeout: 1 ms to a day.
fn timeout() -> impl Fn(&str, Time) -> Result<Duration, String> {
    time_in(Duration::from_millis(1), Duration::from_secs(86_400))
}

/// Yes or no.
fn flag(_: &str, v: Flag) -> Result<bool, String> {
    Ok(v.0)
}

/// Any value the setting's type reads (an enum's variants).
fn any<T>(_: &str, v: T) -> Result<T, String> {
    Ok(v)
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
        assert_eq!(limits.deadline_ticks(), 1002);
        assert_eq!(limits.instantiate_ticks(), 502);
        limits.call_timeout = Duration::from_millis(15);
        assert_eq!(limits.deadline_ticks(), 4);
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
        limits.set("interrupt", "poll").unwrap();
        assert_eq!(limits.interrupt, Interrupt::Poll);
        // No setting turns deadlines off (the benches' `Unchecked` is not
        // a setting).
        let e = limits
            .set("interrupt", "unchecked")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--limit interrupt=unchecked: unknown variant `unchecked`, expected `auto` or `poll`"
        );
        let e = limits.set("interrupt", "fuel").unwrap_err().to_string();
        assert_eq!(
            e,
            "--limit interrupt=fuel: unknown variant `fuel`, expected `auto` or `poll`"
        );
        // The signal mechanism was removed: asking for it is an error that
        // says so, and changes nothing.
        let before = limits.clone();
        let e = limits.set("interrupt", "signal").unwrap_err().to_string();
        assert_eq!(e, format!("--limit interrupt=signal: {SIGNAL_REMOVED}"));
        assert_eq!(limits, before);
        let e = LimitOverrides::parse("interrupt = \"signal\"").unwrap_err();
        assert!(e.contains(SIGNAL_REMOVED), "{e}");
        // Poll pages replaced epoch checks: asking for epochs says so.
        let e = limits.set("interrupt", "epoch").unwrap_err().to_string();
        assert_eq!(e, format!("--limit interrupt=epoch: {EPOCH_REPLACED}"));
        assert_eq!(limits, before);
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
    fn the_table_names_every_limit_once() {
        let mut names = Limits::NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Limits::NAMES.len());
        for name in Limits::NAMES {
            assert!(Limits::scope(name).is_some(), "{name}");
            // Every name is a key of side files and `[limits]` tables.
            let e = LimitOverrides::parse(&format!("{name} = \"?\"")).unwrap_err();
            assert!(!e.contains("unknown field"), "{name}: {e}");
        }
        assert_eq!(Limits::scope("fuel"), None);
        let wide = |name| Limits::scope(name).and_then(Scope::wide);
        assert_eq!(wide("tick"), Some("engine-wide"));
        assert_eq!(wide("memory_budget"), Some("process-wide"));
        assert_eq!(wide("memory"), None);
        let o = LimitOverrides::parse("tick = \"1ms\"\nmemory = 65536\n").unwrap();
        assert_eq!(o.names(), ["memory", "tick"]);
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
