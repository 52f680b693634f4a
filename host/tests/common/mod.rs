//! Shared by the host's test binaries: hand-written WAT guests implementing
//! guest ABI v1, limits for tests, and small helpers.
#![allow(dead_code, reason = "each test binary uses a part of these helpers")]

pub mod e2e;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cyxla_sandbox::limits::Interrupt;
use cyxla_sandbox::{
    AllowList, Engine, Guest, GuestHandler, HostBuffer, HostCall, Limits, Sandbox,
};
use plugin_glue::{DType, ErrorCode, HandlerError};

// ---------------------------------------------------------------------------
// A WAT guest skeleton implementing the ABI by hand
// ---------------------------------------------------------------------------

/// Frame field addresses (wasm32 layout) used by the handlers below:
/// `args.args` at frame+44, `rets.rets` at frame+68, `attrs` at frame+72
/// (`size` +80, `types` +88, `names` +92, `attrs` +96); buffer `data` +12,
/// `rank` +16, `dims` +24.
pub const PRELUDE: &str = r#"
  (import "cyxla" "error_create" (func $error_create (param i32) (result i32)))
  (import "cyxla" "stream_get" (func $stream_get (param i32) (result i32)))
  (import "cyxla" "device_ordinal_get" (func $device_ordinal_get (param i32) (result i32)))
  (memory (export "memory") 2)
  (global $bump (mut i32) (i32.const 8192))
  (func (export "cyxla_abi_version") (result i32) (i32.const 1))
  ;; A zeroed 100-byte XLA_FFI_Api at 1024 (the host never reads it).
  (func (export "cyxla_api") (result i32) (i32.const 1024))
  ;; Bump allocator that grows memory when needed; 0 on failure.
  (func $alloc (export "cyxla_alloc") (param $size i32) (param $align i32) (result i32)
    (local $p i32) (local $end i32) (local $have i32)
    (local.set $p
      (i32.and
        (i32.add (global.get $bump) (i32.sub (local.get $align) (i32.const 1)))
        (i32.xor (i32.sub (local.get $align) (i32.const 1)) (i32.const -1))))
    (local.set $end (i32.add (local.get $p) (local.get $size)))
    (local.set $have (i32.shl (memory.size) (i32.const 16)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow
                (i32.shr_u (i32.add (i32.sub (local.get $end) (local.get $have)) (i32.const 65535))
                           (i32.const 16)))
              (i32.const -1))
          (then (return (i32.const 0))))))
    (global.set $bump (local.get $end))
    (local.get $p))
  ;; The data pointer and element count (dims[0]) of arg 0 and the data
  ;; pointer of ret 0.
  (func $in (param $f i32) (result i32)
    (i32.load offset=12 (i32.load (i32.load offset=44 (local.get $f)))))
  (func $n (param $f i32) (result i32)
    (i32.wrap_i64 (i64.load (i32.load offset=24 (i32.load (i32.load offset=44 (local.get $f)))))))
  (func $out (param $f i32) (result i32)
    (i32.load offset=12 (i32.load (i32.load offset=68 (local.get $f)))))
  ;; A new error through XLA_FFI_Error_Create, its args at 2048: struct_size
  ;; 16, no extension, the message at guest address $message, code $errc.
  (func $error (param $message i32) (param $errc i32) (result i32)
    (i32.store (i32.const 2048) (i32.const 16))
    (i32.store (i32.const 2052) (i32.const 0))
    (i32.store (i32.const 2056) (local.get $message))
    (i32.store (i32.const 2060) (local.get $errc))
    (call $error_create (i32.const 2048)))
  ;; out[i] = in[i] * k for the first $count elements of f32 vectors (none
  ;; if $count <= 0).
  (func $scale_first (param $f i32) (param $k f32) (param $count i32)
    (local $i i32) (local $in i32) (local $out i32)
    (local.set $in (call $in (local.get $f)))
    (local.set $out (call $out (local.get $f)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_s (local.get $i) (local.get $count)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (f32.mul (f32.load (i32.add (local.get $in) (i32.shl (local.get $i) (i32.const 2))))
                   (local.get $k)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))
  ;; out[i] = in[i] * k for f32 vectors.
  (func $scale (param $f i32) (param $k f32)
    (call $scale_first (local.get $f) (local.get $k) (call $n (local.get $f))))
  (data (i32.const 2100) "bad input from guest\00")
"#;

/// What follows `prefix` on the first line of `text` that starts with it,
/// trimmed (`value` of a line `prefix value`).
pub fn line_after<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(str::trim)
}

/// The value of `field` in `/proc/self/status` (what follows `field:`,
/// trimmed).
pub fn proc_status(field: &str) -> String {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    line_after(&status, &format!("{field}:"))
        .unwrap_or_else(|| panic!("no {field} line in /proc/self/status"))
        .to_owned()
}

/// WAT: writes `len` bytes from guest address `buf` to the WASI file `fd`,
/// `times` times (an i32 expression), through the iovec at `iov` (the
/// count written goes to `iov + 8`). Needs `(local $i i32)` in the function
/// and the import `$fd_write`.
pub fn write_loop(fd: u32, (buf, len): (u32, u32), iov: u32, times: &str) -> String {
    let (iov_len, written) = (iov + 4, iov + 8);
    format!(
        r#"
    (i32.store (i32.const {iov}) (i32.const {buf}))
    (i32.store (i32.const {iov_len}) (i32.const {len}))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) {times}))
        (drop (call $fd_write (i32.const {fd}) (i32.const {iov}) (i32.const 1) (i32.const {written})))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))"#
    )
}

/// WAT: the handler `name`, which writes 64 KiB of guest memory (from
/// address 0) to the WASI file `fd` 64 times (4 MiB), then doubles its
/// input. Needs the import `$fd_write`.
pub fn flood_handler(name: &str, fd: u32) -> String {
    let write = write_loop(fd, (0, 65536), 3600, "(i32.const 64)");
    format!(
        r#"
  (func (export "{name}") (param $f i32) (result i32)
    (local $i i32){write}
    (call $scale (local.get $f) (f32.const 2))
    (i32.const 0))"#
    )
}

/// [`test_limits`] for a guest that writes 4 MiB a call, as
/// [`assert_flood_is_bounded`] has it: the subject is the log's bound, not
/// the deadline. Under qemu's emulation of aarch64 on a busy machine
/// (scripts/aarch64.sh), such a call once took more than `test_limits`'
/// 300 ms.
pub fn flood_limits() -> Limits {
    let mut limits = test_limits();
    limits.call_timeout = Duration::from_secs(10);
    limits
}

/// Calls `h`, a [`flood_handler`] in a sandbox with [`flood_limits`], three
/// times: each call must log the limit's bytes and count the rest of its
/// 4 MiB as dropped, and work.
pub fn assert_flood_is_bounded(h: &GuestHandler) {
    let logs = captured_logs(|| {
        for _ in 0..3 {
            run_double(h);
        }
    });
    let limit = test_limits().log_bytes;
    let dropped = format!("({} bytes dropped)", (4 << 20) - limit);
    assert_eq!(
        logs.matches(&dropped).count(),
        3,
        "{}",
        &logs[..logs.len().min(400)]
    );
    assert!(
        logs.len() < 3 * (limit * 3 + 1024),
        "{} bytes of log for 12 MiB of output",
        logs.len()
    );
}

/// WAT: `$big`, which grows the memory to `pages` pages if it is smaller
/// (and traps if that is refused).
pub fn grow_to(pages: u64) -> String {
    format!(
        r#"
  (func $big
    (if (i32.lt_u (memory.size) (i32.const {pages}))
      (then (if (i32.eq (memory.grow (i32.sub (i32.const {pages}) (memory.size))) (i32.const -1))
              (then (unreachable))))))
"#
    )
}

/// Handlers: `double`, `scale_attr` (by its first attribute, an f32
/// scalar), `fail` (INVALID_ARGUMENT from the guest), `trap`, `spin`,
/// `recurse`, `grow` (100 pages, traps if refused), `oob`, `forged`,
/// `bad_pointer`, `stream`, `ordinal`, `echo_rank`.
pub const HANDLERS: &str = r#"
  (func (export "double") (param $f i32) (result i32)
    (call $scale (local.get $f) (f32.const 2))
    (i32.const 0))
  (func (export "scale_attr") (param $f i32) (result i32)
    ;; attrs.attrs[0] -> XLA_FFI_Scalar { dtype, value* }
    (call $scale (local.get $f)
      (f32.load (i32.load offset=4 (i32.load (i32.load offset=96 (local.get $f))))))
    (i32.const 0))
  (func (export "fail") (param i32) (result i32)
    (call $error (i32.const 2100) (i32.const 3)))
  (func (export "trap") (param i32) (result i32) (unreachable))
  (func (export "spin") (param i32) (result i32) (loop $l (br $l)) (i32.const 0))
  (func $recurse (export "recurse") (param $x i32) (result i32)
    (i32.add (call $recurse (i32.add (local.get $x) (i32.const 1))) (i32.const 1)))
  (func (export "grow") (param i32) (result i32)
    (if (i32.eq (memory.grow (i32.const 100)) (i32.const -1)) (then (unreachable)))
    (i32.const 0))
  (func (export "oob") (param i32) (result i32) (i32.load (i32.const -16)))
  (func (export "forged") (param i32) (result i32) (i32.const 12345))
  (func (export "bad_pointer") (param i32) (result i32) (call $error_create (i32.const -8)))
  (func (export "stream") (param i32) (result i32)
    (i32.store (i32.const 2048) (i32.const 16))
    (call $stream_get (i32.const 2048)))
  (func (export "ordinal") (param $f i32) (result i32)
    (local $e i32)
    (i32.store (i32.const 2048) (i32.const 16))
    (local.set $e (call $device_ordinal_get (i32.const 2048)))
    (if (local.get $e) (then (return (local.get $e))))
    (i32.store (call $out (local.get $f)) (i32.load (i32.const 2060)))
    (i32.const 0))
"#;

/// A guest module: the prelude, `funcs`, and a `cyxla.targets` section
/// mapping each `(target, export)`.
pub fn guest_wat(funcs: &str, targets: &[(&str, &str)]) -> String {
    let records: String = targets
        .iter()
        .map(|(t, e)| format!("cyxla-target v1 {t} {e}\\0a"))
        .collect();
    format!("(module {PRELUDE} {funcs} (@custom \"cyxla.targets\" \"{records}\"))")
}

/// [`guest_wat`] serving each of `exports` under the target
/// `<prefix><export>`.
pub fn prefixed_guest_wat(funcs: &str, prefix: &str, exports: &[&str]) -> String {
    let names: Vec<String> = exports.iter().map(|e| format!("{prefix}{e}")).collect();
    let targets: Vec<(&str, &str)> = names
        .iter()
        .map(String::as_str)
        .zip(exports.iter().copied())
        .collect();
    guest_wat(funcs, &targets)
}

pub fn wasm(wat: &str) -> Vec<u8> {
    wat::parse_str(wat).unwrap_or_else(|e| panic!("bad test WAT: {e}\n{wat}"))
}

/// Every handler above under the target `<prefix><export>`.
pub fn full_guest(prefix: &str) -> Vec<u8> {
    let exports = [
        "double",
        "scale_attr",
        "fail",
        "trap",
        "spin",
        "recurse",
        "grow",
        "oob",
        "forged",
        "bad_pointer",
        "stream",
        "ordinal",
    ];
    wasm(&prefixed_guest_wat(HANDLERS, prefix, &exports))
}

/// Whether the tests run emulated: scripts/aarch64.sh runs them under
/// qemu-aarch64 and sets `CYXLA_TEST_RUNNER` (the command that runs a child
/// of the test binary there). Times measured there say nothing of the
/// code's: qemu translates every block, on a machine busy with other work.
pub fn emulated() -> bool {
    std::env::var_os("CYXLA_TEST_RUNNER").is_some()
}

/// The limits of most tests: deadlines of 300 ms, a 5 ms tick, 4 MiB of
/// memory, 3 instances. Emulated ([`emulated`]), instantiation has 10 s:
/// there, with the machine busy, instantiating well-behaved guests exceeded
/// 300 ms in several tests, which then failed on a rejection that was not
/// their subject. A test of the instantiation deadline sets its own (e.g.
/// in a side file).
pub fn test_limits() -> Limits {
    let mut limits = Limits::default();
    limits.call_timeout = Duration::from_millis(300);
    limits.instantiate_timeout = Duration::from_millis(if emulated() { 10_000 } else { 300 });
    limits.tick = Duration::from_millis(5);
    limits.memory = 4 << 20;
    limits.instances = 3;
    limits
}

/// The interrupt mechanisms to test: poll pages, the one there is (tests loop
/// over this list so that a second mechanism would be tested by each).
pub fn interrupt_mechanisms() -> Vec<Interrupt> {
    vec![Interrupt::Poll]
}

/// [`test_limits`] with each deadline mechanism in turn (as
/// [`interrupt_mechanisms`]): the mechanism and the limits.
pub fn limits_per_mechanism() -> impl Iterator<Item = (Interrupt, Limits)> {
    interrupt_mechanisms().into_iter().map(|interrupt| {
        let mut limits = test_limits();
        limits.interrupt = interrupt;
        (interrupt, limits)
    })
}

pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Writes a guest of the [`HANDLERS`] serving `targets` (`(target, export)`)
/// to `dir/name`.
pub fn write_guest(dir: &Path, name: &str, targets: &[(&str, &str)]) -> PathBuf {
    write(dir, name, &wasm(&guest_wat(HANDLERS, targets)))
}

/// A sandbox over a temp dir holding `files`, allowing everything.
pub fn sandbox_with(files: &[(&str, Vec<u8>)], limits: Limits) -> (tempfile::TempDir, Sandbox) {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        write(dir.path(), name, bytes);
    }
    let sandbox = Sandbox::new(dir.path(), AllowList::all(), limits).unwrap();
    (dir, sandbox)
}

pub fn handler(sandbox: &Sandbox, target: &str) -> GuestHandler {
    sandbox
        .handler(target)
        .unwrap_or_else(|| panic!("no handler for {target}: {:?}", sandbox.guests().rejected()))
}

pub fn vector_call(values: &[f32]) -> HostCall {
    let n = i64::try_from(values.len()).unwrap();
    HostCall::new()
        .arg(HostBuffer::f32(&[n], values))
        .ret(HostBuffer::zeros(DType::F32, &[n]))
}

pub fn run_double(handler: &GuestHandler) {
    let call = vector_call(&[1.0, 2.5, -3.0]);
    handler.call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f32(), [2.0, 5.0, -6.0]);
}

/// Runs `body(t)` on `threads` threads at once (`t` from 0), and waits for
/// them all.
///
/// # Panics
///
/// If `body` panics on any thread.
pub fn on_threads(threads: usize, body: impl Fn(usize) + Sync) {
    std::thread::scope(|scope| {
        for t in 0..threads {
            let body = &body;
            scope.spawn(move || body(t));
        }
    });
}

/// The contents of `buffer` as little-endian `i32` words.
pub fn i32_words(buffer: &HostBuffer) -> Vec<i32> {
    buffer
        .bytes()
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn expect_error(handler: &GuestHandler, call: &HostCall) -> HandlerError {
    match handler.call_host(call) {
        Ok(()) => panic!("target `{}` succeeded, expected an error", handler.target()),
        Err(error) => error,
    }
}

/// The error `call` ends with (as [`expect_error`]) and how long the call
/// took.
pub fn timed_error(handler: &GuestHandler, call: &HostCall) -> (HandlerError, Duration) {
    let started = Instant::now();
    let error = expect_error(handler, call);
    (error, started.elapsed())
}

/// Fails unless `error` has `code`, showing its message.
#[track_caller]
pub fn assert_code(error: &HandlerError, code: ErrorCode) {
    assert_eq!(error.code, code, "{}", error.message);
}

/// Fails unless `error`'s message says that `target` (in the guest file
/// `guest`) exceeded its deadline `deadline` (`"300ms"`).
#[track_caller]
pub fn assert_deadline_message(error: &HandlerError, target: &str, guest: &str, deadline: &str) {
    let start = format!("target `{target}` (guest {guest}): exceeded its deadline ({deadline})");
    assert_message(error, |m| m.starts_with(&start));
}

/// Calls `target` (of the guest file `guest`) in `sandbox` on `[1.0]`: its
/// error, which must say it exceeded its deadline `deadline`, and how long
/// the call took.
#[track_caller]
pub fn deadline_error(
    sandbox: &Sandbox,
    target: &str,
    guest: &str,
    deadline: &str,
) -> (HandlerError, Duration) {
    let (error, took) = timed_error(&handler(sandbox, target), &vector_call(&[1.0]));
    assert_deadline_message(&error, target, guest, deadline);
    (error, took)
}

/// Fails unless `error` is RESOURCE_EXHAUSTED for a refused memory growth,
/// naming the memory limit `limit` (`"4 MiB"`).
#[track_caller]
pub fn assert_growth_refused(error: &HandlerError, limit: &str) {
    assert_code(error, ErrorCode::ResourceExhausted);
    assert_message(error, |m| {
        m.contains("after its memory was refused growth to")
            && m.contains(&format!("(limit {limit})"))
    });
}

/// Fails unless `check` holds of `error`'s message, showing the message.
#[track_caller]
pub fn assert_message(error: &HandlerError, check: impl FnOnce(&str) -> bool) {
    assert!(check(&error.message), "{}", error.message);
}

/// Fails unless `error`'s message contains `needle`, showing the message.
#[track_caller]
pub fn assert_message_contains(error: &HandlerError, needle: &str) {
    assert!(
        error.message.contains(needle),
        "expected `{needle}` in: {}",
        error.message
    );
}

pub fn load_error(bytes: &[u8]) -> String {
    let engine = Engine::new(&test_limits()).unwrap();
    match Guest::from_bytes(&engine, Path::new("bad.wasm"), bytes) {
        Ok(guest) => panic!("{guest:?} was accepted"),
        Err(error) => error.to_string(),
    }
}

/// `guests/out`, after running `guests/build.sh`.
pub fn bundled_guests() -> PathBuf {
    cyxla_tests::bundled_guests().to_owned()
}

/// The name libtest gives test `name` of the module whose `module_path!()`
/// is `module`: that path without the crate's name, then `name` (`x::name`
/// in `tests/suite`, `name` in a test binary of its own). For `--exact`,
/// when a test runs one test of this binary again in a child process.
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{name}"),
        None => name.to_owned(),
    }
}

/// Captures what `tracing` logs at INFO and above while `f` runs on this
/// thread.
pub fn captured_logs(f: impl FnOnce()) -> String {
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let bytes = sink.0.lock().unwrap().clone();
    String::from_utf8_lossy(&bytes).into_owned()
}

// ---------------------------------------------------------------------------
// Runs of the cyxla-host binary
// ---------------------------------------------------------------------------

/// A process's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Fails unless `out` exited with `code`, showing its stdout and stderr.
#[track_caller]
pub fn assert_exit(out: &std::process::Output, code: i32, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: expected exit {code}\nstdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Fails unless `out` exited with 2 (a usage or set-up error) and its
/// stderr contains `needle`, showing its output.
#[track_caller]
pub fn assert_usage_error(out: &std::process::Output, what: &str, needle: &str) {
    assert_exit(out, 2, what);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(needle),
        "{what}: expected `{needle}` in stderr:\n{stderr}"
    );
}

/// A module declaring `n` targets `t<i>`, each handled by export `e<i>`
/// (all the same function).
pub fn many_targets(n: usize) -> Vec<u8> {
    let exports: String = (0..n)
        .map(|i| format!("(export \"e{i}\" (func $d))"))
        .collect();
    let records: String = (0..n)
        .map(|i| format!("cyxla-target v1 t{i} e{i}\\0a"))
        .collect();
    let wat = format!(
        "(module {PRELUDE} (func $d (param i32) (result i32) (i32.const 0)) {exports} (@custom \"cyxla.targets\" \"{records}\"))"
    );
    wasm(&wat)
}
