//! Per-target statistics: calls, errors by kind, time in the guest, time
//! copying, bytes in and out, instances created.
//!
//! Counters are relaxed atomics, one set per registered target (shared by
//! the target's handler slot across hot reloads). The counters every call
//! adds to are sharded by thread: a thread adds to a shard of its own with
//! a plain load and store, so the per-call path has no locked instruction
//! and device threads share no cache line (a snapshot sums the shards). Times need clock reads,
//! so they are only taken while timing is on ([`enable_timing`], which
//! `cyxla-host run --stats` and the plugin's `CYXLA_STATS` turn on); the
//! counts are always kept.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use plugin_glue::ErrorCode;
use serde::Serialize;

static TIMING: AtomicBool = AtomicBool::new(false);

/// Every target's counters, in registration order.
static ALL: Mutex<Vec<(String, Arc<TargetStats>)>> = Mutex::new(Vec::new());

/// Turns the time counters on for every target.
pub fn enable_timing() {
    TIMING.store(true, Ordering::Relaxed);
}

/// Whether calls are timed.
#[inline]
pub(crate) fn timing() -> bool {
    TIMING.load(Ordering::Relaxed)
}

/// The counters of one target.
#[derive(Debug)]
pub struct TargetStats {
    /// What every call adds to: a shard per thread (see [`ShardIndex`]),
    /// and a last one shared, with locked adds, by threads beyond
    /// [`SHARDS`].
    shards: Box<[Shard]>,
    guest_errors: AtomicU64,
    traps: AtomicU64,
    limits: AtomicU64,
    deadlines: AtomicU64,
    other_errors: AtomicU64,
    instances: AtomicU64,
}

impl Default for TargetStats {
    fn default() -> TargetStats {
        TargetStats {
            shards: (0..=SHARDS).map(|_| Shard::default()).collect(),
            guest_errors: AtomicU64::default(),
            traps: AtomicU64::default(),
            limits: AtomicU64::default(),
            deadlines: AtomicU64::default(),
            other_errors: AtomicU64::default(),
            instances: AtomicU64::default(),
        }
    }
}

/// Threads with a shard of their own (at once; a thread's shard goes to
/// the next thread when it ends).
const SHARDS: usize = 32;

/// The per-call counters of one target, as one thread adds to them. A
/// cache line of its own.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Shard {
    calls: AtomicU64,
    guest_ns: AtomicU64,
    copy_ns: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
}

/// Which shard this thread writes: `Some(i)` is its own (no other thread
/// writes shard `i` while it lives), `None` the shared one.
struct ShardIndex(Option<usize>);

/// The shard indices not held by a living thread.
struct FreeShards {
    /// Indices of threads that ended, to give out again.
    returned: Vec<usize>,
    /// Indices given out so far: `given..SHARDS` were never held.
    given: usize,
}

static FREE_SHARDS: Mutex<FreeShards> = Mutex::new(FreeShards {
    returned: Vec::new(),
    given: 0,
});

impl ShardIndex {
    fn claim() -> ShardIndex {
        let mut free = FREE_SHARDS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = free.returned.pop() {
            return ShardIndex(Some(i));
        }
        if free.given < SHARDS {
            free.given += 1;
            return ShardIndex(Some(free.given - 1));
        }
        ShardIndex(None)
    }
}

impl Drop for ShardIndex {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            // The lock orders this thread's last adds before the next
            // owner's first.
            FREE_SHARDS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .returned
                .push(i);
        }
    }
}

thread_local! {
    static SHARD: ShardIndex = ShardIndex::claim();
}

/// How a call ended, for the error counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Success.
    Ok,
    /// The guest returned an error.
    GuestError,
    /// The guest trapped (or panicked).
    Trap,
    /// A limit (RESOURCE_EXHAUSTED): memory, instances, stack, ...
    Limit,
    /// The deadline (DEADLINE_EXCEEDED).
    Deadline,
    /// Anything else (a bad frame, an instance that could not be made).
    Other,
}

impl Ending {
    /// The ending of a failed call with `code`; `from_guest` if the guest
    /// returned the error itself, `trapped` if its instance trapped.
    pub(crate) fn of_failure(code: ErrorCode, from_guest: bool, trapped: bool) -> Ending {
        match code {
            _ if from_guest => Ending::GuestError,
            ErrorCode::DeadlineExceeded => Ending::Deadline,
            ErrorCode::ResourceExhausted => Ending::Limit,
            _ if trapped => Ending::Trap,
            _ => Ending::Other,
        }
    }
}

/// What one call measured (times only while timing is on).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CallMeasure {
    pub(crate) guest: Duration,
    pub(crate) copy: Duration,
    pub(crate) bytes_in: u64,
    pub(crate) bytes_out: u64,
}

impl TargetStats {
    /// New counters for `target`, listed by [`snapshot`].
    pub(crate) fn register(target: &str) -> Arc<TargetStats> {
        let stats = Arc::new(TargetStats::default());
        ALL.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((target.to_owned(), Arc::clone(&stats)));
        stats
    }

    /// Counts one call.
    pub(crate) fn record(&self, ending: Ending, measure: &CallMeasure) {
        let failed = match ending {
            Ending::Ok => None,
            Ending::GuestError => Some(&self.guest_errors),
            Ending::Trap => Some(&self.traps),
            Ending::Limit => Some(&self.limits),
            Ending::Deadline => Some(&self.deadlines),
            Ending::Other => Some(&self.other_errors),
        };
        if let Some(counter) = failed {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        // Threads beyond SHARDS, and a thread that is ending (its shard
        // index gone), use the shared shard.
        let own = SHARD.try_with(|s| s.0).ok().flatten();
        let (shard, exclusive) = match own {
            Some(i) => (&self.shards[i], true),
            None => (&self.shards[SHARDS], false),
        };
        let add = |counter: &AtomicU64, n: u64| {
            if n == 0 {
                return;
            }
            if exclusive {
                // This thread is the shard's only writer: readers see the
                // old count or the new one, never a lost add.
                counter.store(
                    counter.load(Ordering::Relaxed).wrapping_add(n),
                    Ordering::Relaxed,
                );
            } else {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        };
        add(&shard.calls, 1);
        add(&shard.guest_ns, nanos(measure.guest));
        add(&shard.copy_ns, nanos(measure.copy));
        add(&shard.bytes_in, measure.bytes_in);
        add(&shard.bytes_out, measure.bytes_out);
    }

    /// These counters now, for `target`.
    pub fn snapshot(&self, target: &str) -> Snapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let sum = |c: fn(&Shard) -> &AtomicU64| {
            self.shards
                .iter()
                .fold(0u64, |total, s| total.wrapping_add(get(c(s))))
        };
        Snapshot {
            target: target.to_owned(),
            calls: sum(|s| &s.calls),
            guest_errors: get(&self.guest_errors),
            traps: get(&self.traps),
            limits: get(&self.limits),
            deadlines: get(&self.deadlines),
            other_errors: get(&self.other_errors),
            guest_ns: sum(|s| &s.guest_ns),
            copy_ns: sum(|s| &s.copy_ns),
            bytes_in: sum(|s| &s.bytes_in),
            bytes_out: sum(|s| &s.bytes_out),
            instances: get(&self.instances),
        }
    }

    /// Counts `n` instances created.
    pub(crate) fn instances_created(&self, n: u64) {
        self.instances.fetch_add(n, Ordering::Relaxed);
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One target's counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// The target.
    pub target: String,
    /// Calls, successful or not.
    pub calls: u64,
    /// Calls the guest failed with its own error.
    pub guest_errors: u64,
    /// Calls whose guest trapped or panicked.
    pub traps: u64,
    /// Calls over a limit (memory, instances, stack, ...).
    pub limits: u64,
    /// Calls past their deadline.
    pub deadlines: u64,
    /// Other failed calls.
    pub other_errors: u64,
    /// Nanoseconds in guest code (while timing is on).
    pub guest_ns: u64,
    /// Nanoseconds copying frames and buffers in and out (while timing is on).
    pub copy_ns: u64,
    /// Bytes of operands copied in.
    pub bytes_in: u64,
    /// Bytes of results copied out.
    pub bytes_out: u64,
    /// Instances created for the target's calls.
    pub instances: u64,
}

/// Every registered target's counters, sorted by target (a target
/// registered in several plugins is summed).
pub fn snapshot() -> Vec<Snapshot> {
    let all = ALL.lock().unwrap_or_else(PoisonError::into_inner);
    let mut out: Vec<Snapshot> = Vec::new();
    for (target, s) in all.iter() {
        let one = s.snapshot(target);
        match out.iter_mut().find(|o| o.target == one.target) {
            Some(o) => {
                o.calls += one.calls;
                o.guest_errors += one.guest_errors;
                o.traps += one.traps;
                o.limits += one.limits;
                o.deadlines += one.deadlines;
                o.other_errors += one.other_errors;
                o.guest_ns += one.guest_ns;
                o.copy_ns += one.copy_ns;
                o.bytes_in += one.bytes_in;
                o.bytes_out += one.bytes_out;
                o.instances += one.instances;
            }
            None => out.push(one),
        }
    }
    out.sort_by(|a, b| a.target.cmp(&b.target));
    out
}

/// The snapshot as a table, one target a line (times as `-` while timing
/// is off).
pub fn table(rows: &[Snapshot]) -> String {
    let timed = timing();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<20} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6} {:>11} {:>11} {:>10} {:>10} {:>5}",
        "target",
        "calls",
        "g.err",
        "traps",
        "limit",
        "dline",
        "other",
        "guest ms",
        "copy ms",
        "bytes in",
        "bytes out",
        "inst"
    );
    for r in rows {
        let ms = |ns: u64| {
            if timed {
                format!("{:.3}", ns as f64 / 1e6)
            } else {
                "-".to_owned()
            }
        };
        let _ = writeln!(
            text,
            "{:<20} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6} {:>11} {:>11} {:>10} {:>10} {:>5}",
            r.target,
            r.calls,
            r.guest_errors,
            r.traps,
            r.limits,
            r.deadlines,
            r.other_errors,
            ms(r.guest_ns),
            ms(r.copy_ns),
            r.bytes_in,
            r.bytes_out,
            r.instances
        );
    }
    text
}

/// The snapshot as a JSON document: `{"targets": [...]}`.
pub fn json(rows: &[Snapshot]) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        targets: &'a [Snapshot],
    }
    serde_json::to_string_pretty(&Doc { targets: rows }).unwrap_or_else(|_| "{}".to_owned())
}
