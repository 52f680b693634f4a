//! The total memory of all instances of a guest (`instances` × `memory`) and
//! of all guests of a process (`memory_budget`), measured as the peak RSS of
//! a child process in which many threads call memory-hungry guests at once
//! (issue 16, item 9). Each test runs itself again as that child (this
//! binary, the same test, with [`CHILD_ENV`] naming the case) and reads the
//! child's peak RSS from `wait4` when it exits.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{guest_wat, handler, line_after, sandbox_with, test_limits, vector_call, wasm};
use cyxla_sandbox::Limits;
use plugin_glue::ErrorCode;

/// Set in the child: which case it runs.
const CHILD_ENV: &str = "CYXLA_TOTAL_MEMORY_CHILD";

/// Linear memory of one instance in these tests.
const MEMORY: u64 = 32 << 20;

/// Threads calling at once, and calls per thread.
const THREADS: usize = 16;
const CALLS: usize = 6;

/// `hog`: grows its memory to 32 MiB (traps if the growth is refused),
/// writes every page after the first (so that all of it is resident), then
/// computes for a while (tens of milliseconds) so that calls overlap.
const HOG: &str = r#"
  (func (export "hog") (param $f i32) (result i32)
    (local $i i32)
    (if (i32.lt_u (memory.size) (i32.const 512))
      (then
        (if (i32.eq (memory.grow (i32.sub (i32.const 512) (memory.size))) (i32.const -1))
          (then (unreachable)))))
    (memory.fill (i32.const 65536) (i32.const 7) (i32.const 33488896))
    (loop $l
      (br_if $l (i32.ne (local.tee $i (i32.add (local.get $i) (i32.const 1)))
                        (i32.const 30000000))))
    (i32.const 0))
"#;

fn hog(target: &str) -> Vec<u8> {
    wasm(&guest_wat(HOG, &[(target, "hog")]))
}

fn limits(instances: usize, budget: u64) -> Limits {
    let mut limits = test_limits();
    limits.memory = MEMORY;
    limits.instances = instances;
    limits.memory_budget = budget;
    limits.call_timeout = Duration::from_secs(20);
    limits.instance_wait = Duration::from_secs(120);
    limits
}

/// This process's resident memory now, in bytes.
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// In the child: loads `guests`, then `THREADS` threads each call every
/// target `CALLS` times. Prints the resident memory before the calls and
/// how the calls ended.
fn child(guests: &[(&str, &str)], limits: Limits) {
    let files: Vec<(String, Vec<u8>)> = guests
        .iter()
        .map(|(file, target)| (file.to_string(), hog(target)))
        .collect();
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(f, b)| (f.as_str(), b.clone())).collect();
    let (_dir, sandbox) = sandbox_with(&files, limits);
    let handlers: Vec<_> = guests.iter().map(|(_, t)| handler(&sandbox, t)).collect();
    // A line of its own: libtest has printed the test's name without one.
    println!("\nbaseline={}", resident_bytes());
    let results: Vec<Vec<Result<(), plugin_glue::HandlerError>>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let handlers = &handlers;
                scope.spawn(move || {
                    let mut results = Vec::new();
                    for _ in 0..CALLS {
                        for h in handlers {
                            results.push(h.call_host(&vector_call(&[1.0])));
                        }
                    }
                    results
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let (mut ok, mut budget, mut other) = (0, 0, Vec::new());
    for result in results.into_iter().flatten() {
        match result {
            Ok(()) => ok += 1,
            Err(e)
                if e.code == ErrorCode::ResourceExhausted
                    && e.message.contains("memory_budget") =>
            {
                budget += 1
            }
            Err(e) => other.push(format!("{:?}: {}", e.code, e.message)),
        }
    }
    println!("ok={ok}");
    println!("refused_by_budget={budget}");
    for o in other {
        println!("other={o}");
    }
}

/// What the child reported, and its peak RSS.
struct Child {
    baseline: u64,
    peak: u64,
    ok: usize,
    refused_by_budget: usize,
    other: Vec<String>,
}

impl Child {
    /// How far the peak RSS rose over the baseline.
    fn grown(&self) -> u64 {
        self.peak.saturating_sub(self.baseline)
    }

    /// The peak RSS and what the calls added to it, for the test's log.
    fn rss(&self) -> String {
        format!(
            "peak RSS {} MiB, {} MiB over the {} MiB before the calls",
            mib(self.peak),
            mib(self.grown()),
            mib(self.baseline)
        )
    }
}

/// Runs the test `name` of this binary again as a child with [`CHILD_ENV`]
/// set to `name`; returns its report and its peak RSS (from `wait4`).
#[expect(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, which also gives its peak RSS"
)]
fn run_child(name: &str) -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            common::test_name(module_path!(), name).as_str(),
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, name)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for (`child.wait` is never
    // called), and both pointers are to live locals of the right types.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the child failed (status {status:#x}); its output:\n{out}"
    );
    let field = |key: &str| -> u64 {
        line_after(&out, &format!("{key}="))
            .unwrap_or_else(|| panic!("no {key} in the child's output:\n{out}"))
            .parse()
            .unwrap()
    };
    Child {
        baseline: field("baseline"),
        // ru_maxrss is in KiB on Linux.
        peak: u64::try_from(usage.ru_maxrss).unwrap() * 1024,
        ok: field("ok") as usize,
        refused_by_budget: field("refused_by_budget") as usize,
        other: out
            .lines()
            .filter_map(|l| l.strip_prefix("other="))
            .map(str::to_owned)
            .collect(),
    }
}

fn mib(bytes: u64) -> u64 {
    bytes >> 20
}

/// Room for what is not guest linear memory: the threads' stacks, wasmtime's
/// per-instance data, allocator slack.
const SLACK: u64 = 48 << 20;

#[test]
fn the_instances_of_one_guest_hold_at_most_instances_times_memory() {
    const NAME: &str = "the_instances_of_one_guest_hold_at_most_instances_times_memory";
    if std::env::var_os(CHILD_ENV).is_some_and(|v| v == NAME) {
        return child(&[("hog.wasm", "hog")], limits(4, 4 << 30));
    }
    let c = run_child(NAME);
    let grown = c.grown();
    eprintln!(
        "{THREADS} threads x {CALLS} calls of a 32 MiB guest, 4 instances: {} (bound 4 x 32 MiB = 128 MiB; unbounded {} MiB)",
        c.rss(),
        mib(THREADS as u64 * MEMORY)
    );
    assert!(c.other.is_empty(), "{:?}", c.other);
    assert_eq!(c.ok, THREADS * CALLS, "every call waits for an instance");
    assert!(grown <= 4 * MEMORY + SLACK, "{} MiB", mib(grown));
    // The calls did hold several instances' memory at once.
    assert!(grown >= 2 * MEMORY, "{} MiB", mib(grown));
}

#[test]
fn all_guests_of_a_process_hold_at_most_the_memory_budget() {
    const NAME: &str = "all_guests_of_a_process_hold_at_most_the_memory_budget";
    const BUDGET: u64 = 80 << 20;
    if std::env::var_os(CHILD_ENV).is_some_and(|v| v == NAME) {
        return child(
            &[("a.wasm", "a_hog"), ("b.wasm", "b_hog")],
            limits(4, BUDGET),
        );
    }
    let c = run_child(NAME);
    let grown = c.grown();
    eprintln!(
        "{THREADS} threads x {CALLS} calls of two 32 MiB guests of 4 instances each, memory_budget 80 MiB: {} ({} calls ran, {} refused by the budget; unbounded 256 MiB)",
        c.rss(),
        c.ok,
        c.refused_by_budget
    );
    assert!(c.other.is_empty(), "{:?}", c.other);
    assert_eq!(c.ok + c.refused_by_budget, THREADS * CALLS * 2);
    assert!(
        c.ok > 0 && c.refused_by_budget > 0,
        "{} {}",
        c.ok,
        c.refused_by_budget
    );
    assert!(grown <= BUDGET + SLACK, "{} MiB", mib(grown));
    assert!(grown >= MEMORY, "{} MiB", mib(grown));
}
