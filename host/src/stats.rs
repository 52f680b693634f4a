//! Per-target statistics: calls, errors by kind, time in the guest, time
//! copying, bytes in and out, instances created.
//!
//! Counters are relaxed atomics, one set per registered target (shared by
//! the target's handler slot across hot reloads). The counters every call
//! adds to are sharded by thread: a thread adds to a shard of its own with
//! a plain load and store, so the per-call path has no locked instruction
//! and device threads share no cache line (a snapshot sums the shards). Times need clock reads,
//! so they are only taken while timing is on: for every call
//! ([`enable_timing`], which `cyxla-host run --stats` and the plugin's
//! `CYXLA_STATS` turn on), or for one call in [`SAMPLE`] on each thread
//! ([`enable_sampled_timing`], for the metrics' histogram of call times,
//! which must cost next to nothing per call). The counts are always kept.
//!
//! Besides the targets' counters, the process counts what happens outside
//! calls ([`Events`]): compile-cache hits and misses, guests loaded and
//! reloaded, and targets a client asked for that are not registered.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use plugin_glue::ErrorCode;
use serde::{Deserialize, Serialize};

/// [`TIMING`]: no call is timed.
const OFF: u8 = 0;
/// [`TIMING`]: one call in [`SAMPLE`] on each thread is timed.
const SAMPLED: u8 = 1;
/// [`TIMING`]: every call is timed.
const EVERY: u8 = 2;

static TIMING: AtomicU8 = AtomicU8::new(OFF);

/// With sampled timing, one call in this many on each thread is timed.
pub const SAMPLE: u32 = 64;

thread_local! {
    /// Calls this thread made while timing was sampled.
    static SAMPLE_CLOCK: Cell<u32> = const { Cell::new(0) };
}

/// Every target's counters, in registration order.
static ALL: Mutex<Vec<(String, Arc<TargetStats>)>> = Mutex::new(Vec::new());

/// Turns the time counters on for every call of every target.
pub fn enable_timing() {
    TIMING.fetch_max(EVERY, Ordering::Relaxed);
}

/// Times one call in [`SAMPLE`] on each thread, unless every call is timed
/// already: what the call-time histogram needs, at the cost of a
/// thread-local count per call.
pub fn enable_sampled_timing() {
    TIMING.fetch_max(SAMPLED, Ordering::Relaxed);
}

/// Sets timing to sampled (`true`) or off (`false`), whatever it was: for
/// the dispatch bench, to measure what the metrics' sampling costs a call
/// side by side with calls without it.
#[cfg(feature = "bench")]
#[doc(hidden)]
pub fn set_sampled_timing(on: bool) {
    TIMING.store(if on { SAMPLED } else { OFF }, Ordering::Relaxed);
}

/// Whether every call is timed (the time sums are then whole).
pub fn every_call_timed() -> bool {
    TIMING.load(Ordering::Relaxed) == EVERY
}

/// Whether this call is timed.
#[inline]
pub(crate) fn timing() -> bool {
    match TIMING.load(Ordering::Relaxed) {
        OFF => false,
        SAMPLED => SAMPLE_CLOCK
            .try_with(|n| {
                let now = n.get();
                n.set(now.wrapping_add(1));
                now % SAMPLE == 0
            })
            .unwrap_or(false),
        _ => true,
    }
}

/// Upper bounds of the call-time histogram's buckets, in seconds (a last
/// bucket holds the longer calls).
pub const BUCKETS: [f64; 15] = [
    1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 0.1, 0.5, 1.0, 5.0, 10.0,
];

/// The bucket of a call that took `ns` nanoseconds.
fn bucket(ns: u64) -> usize {
    BUCKETS
        .iter()
        .position(|&bound| ns <= (bound * 1e9).round() as u64)
        .unwrap_or(BUCKETS.len())
}

/// The counters of one target.
#[derive(Debug)]
pub struct TargetStats {
    /// What every call adds to: a shard per thread (see [`ShardIndex`]),
    /// and a last one shared, with locked adds, by threads beyond
    /// [`SHARDS`].
    shards: Box<[Shard]>,
    guest_errors: AtomicU64,
    bad_inputs: AtomicU64,
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
            bad_inputs: AtomicU64::default(),
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
pub(crate) const SHARDS: usize = 32;

/// This thread's index among the threads that have one (below [`SHARDS`];
/// no other living thread has it), or `None` (more threads than that, or
/// the thread is ending). Other per-thread tables of the host use it too
/// (the dispatcher's marks, `dispatch.rs`).
#[inline]
pub(crate) fn thread_index() -> Option<usize> {
    SHARD.try_with(|s| s.0).ok().flatten()
}

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
    /// Calls that were timed.
    timed: AtomicU64,
    /// Timed calls by their time in the sandbox (guest and copies), one
    /// count per [`BUCKETS`] bound and one for the longer ones.
    durations: [AtomicU64; BUCKETS.len() + 1],
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
    /// The call's input was refused as invalid (INVALID_ARGUMENT), by the
    /// guest or by the host (a frame it cannot lay out).
    BadInput,
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
    /// Its name, as the audit log and the metrics write it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Ending::Ok => "ok",
            Ending::GuestError => "guest_error",
            Ending::BadInput => "bad_input",
            Ending::Trap => "trap",
            Ending::Limit => "limit",
            Ending::Deadline => "deadline",
            Ending::Other => "other",
        }
    }

    /// The ending of a failed call with `code`; `from_guest` if the guest
    /// returned the error itself, `trapped` if its instance trapped.
    pub(crate) fn of_failure(code: ErrorCode, from_guest: bool, trapped: bool) -> Ending {
        match code {
            ErrorCode::InvalidArgument => Ending::BadInput,
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
    /// Whether the call was timed (`guest` and `copy` are then its times;
    /// they are zero otherwise, and [`TargetStats::record`] reads them only
    /// then).
    pub(crate) timed: bool,
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
            Ending::BadInput => Some(&self.bad_inputs),
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
        let own = thread_index();
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
        add(&shard.bytes_in, measure.bytes_in);
        add(&shard.bytes_out, measure.bytes_out);
        // An untimed call's times are zero: nothing to add (and no
        // conversion of two durations on every call).
        if measure.timed {
            let (guest, copy) = (nanos(measure.guest), nanos(measure.copy));
            add(&shard.guest_ns, guest);
            add(&shard.copy_ns, copy);
            add(&shard.timed, 1);
            add(&shard.durations[bucket(guest.saturating_add(copy))], 1);
        }
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
            bad_inputs: get(&self.bad_inputs),
            traps: get(&self.traps),
            limits: get(&self.limits),
            deadlines: get(&self.deadlines),
            other_errors: get(&self.other_errors),
            guest_ns: sum(|s| &s.guest_ns),
            copy_ns: sum(|s| &s.copy_ns),
            bytes_in: sum(|s| &s.bytes_in),
            bytes_out: sum(|s| &s.bytes_out),
            instances: get(&self.instances),
            timed_calls: sum(|s| &s.timed),
            durations: (0..=BUCKETS.len())
                .map(|i| {
                    self.shards
                        .iter()
                        .fold(0u64, |total, s| total.wrapping_add(get(&s.durations[i])))
                })
                .collect(),
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The target.
    pub target: String,
    /// Calls, successful or not.
    pub calls: u64,
    /// Calls the guest failed with its own error (not INVALID_ARGUMENT).
    pub guest_errors: u64,
    /// Calls refused for their input (INVALID_ARGUMENT, from the guest or
    /// the host).
    #[serde(default)]
    pub bad_inputs: u64,
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
    /// Calls that were timed: every call while timing is on, one in
    /// [`SAMPLE`] per thread while it is sampled.
    #[serde(default)]
    pub timed_calls: u64,
    /// The timed calls by their time in the sandbox: a count per
    /// [`BUCKETS`] bound (calls over the one before it, up to it), and last
    /// the longer calls.
    #[serde(default)]
    pub durations: Vec<u64>,
}

/// Adds each listed counter of `$other` to the same counter of `$self`.
macro_rules! add_counters {
    ($self:ident += $other:ident: $($field:ident),* $(,)?) => {
        $($self.$field += $other.$field;)*
    };
}

impl Snapshot {
    /// Adds `other`'s counts to these (the same target elsewhere: another
    /// plugin, another process).
    pub fn add(&mut self, other: &Snapshot) {
        add_counters! { self += other:
            calls, guest_errors, bad_inputs, traps, limits, deadlines, other_errors,
            guest_ns, copy_ns, bytes_in, bytes_out, instances, timed_calls
        }
        if self.durations.len() < other.durations.len() {
            self.durations.resize(other.durations.len(), 0);
        }
        for (sum, n) in self.durations.iter_mut().zip(&other.durations) {
            *sum += n;
        }
    }
}

/// Every registered target's counters, sorted by target (a target
/// registered in several plugins is summed).
pub fn snapshot() -> Vec<Snapshot> {
    let all = ALL.lock().unwrap_or_else(PoisonError::into_inner);
    let mut out: Vec<Snapshot> = Vec::new();
    for (target, s) in all.iter() {
        let one = s.snapshot(target);
        match out.iter_mut().find(|o| o.target == one.target) {
            Some(o) => o.add(&one),
            None => out.push(one),
        }
    }
    out.sort_by(|a, b| a.target.cmp(&b.target));
    out
}

/// The snapshot as a table, one target a line (times as `-` while timing
/// is off).
pub fn table(rows: &[Snapshot]) -> String {
    let timed = every_call_timed();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<20} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6} {:>11} {:>11} {:>10} {:>10} {:>5} {:>5}",
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
        "inst",
        "bad"
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
            "{:<20} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6} {:>11} {:>11} {:>10} {:>10} {:>5} {:>5}",
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
            r.instances,
            r.bad_inputs
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

/// What the process counts outside calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A guest module was found in the compile cache.
    CacheHit,
    /// A guest module was compiled (the cache had no usable entry, or it
    /// is off).
    CacheMiss,
    /// A guest module was loaded (checked and compiled, or read from the
    /// cache), at start or by a reload.
    GuestLoaded,
    /// A changed guest module was loaded and serves its targets now.
    GuestReloaded,
    /// A changed guest module was rejected; its previous version serves.
    ReloadRejected,
}

const EVENTS: usize = 5;

static EVENT_COUNTS: [AtomicU64; EVENTS] = [const { AtomicU64::new(0) }; EVENTS];

/// Targets clients asked for that were not registered, with how often.
static REFUSED: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

/// Counts one `event`.
pub fn count(event: Event) {
    EVENT_COUNTS[event as usize].fetch_add(1, Ordering::Relaxed);
}

/// Counts a program that called `target`, which is not registered (not
/// allowed, or served by no guest): its compile failed.
pub fn refused(target: &str) {
    *REFUSED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(target.to_owned())
        .or_default() += 1;
}

/// The process's counts outside calls, at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Events {
    /// Guest modules found in the compile cache.
    pub cache_hits: u64,
    /// Guest modules compiled.
    pub cache_misses: u64,
    /// Guest modules loaded.
    pub guests_loaded: u64,
    /// Changed guest modules that serve now.
    pub guests_reloaded: u64,
    /// Changed guest modules rejected.
    pub reloads_rejected: u64,
    /// Targets asked for and not registered, with how often.
    pub refused: BTreeMap<String, u64>,
}

impl Events {
    /// Adds `other`'s counts to these (another process's).
    pub fn add(&mut self, other: &Events) {
        add_counters! { self += other:
            cache_hits, cache_misses, guests_loaded, guests_reloaded, reloads_rejected
        }
        for (target, n) in &other.refused {
            *self.refused.entry(target.clone()).or_default() += n;
        }
    }
}

/// The process's counts outside calls now.
pub fn events() -> Events {
    let get = |e: Event| EVENT_COUNTS[e as usize].load(Ordering::Relaxed);
    Events {
        cache_hits: get(Event::CacheHit),
        cache_misses: get(Event::CacheMiss),
        guests_loaded: get(Event::GuestLoaded),
        guests_reloaded: get(Event::GuestReloaded),
        reloads_rejected: get(Event::ReloadRejected),
        refused: REFUSED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone(),
    }
}

/// One process's figures, as it writes them to the metrics folder and
/// `cyxla-host metrics` reads them: the process says what tenant it asked
/// to be; who it is, the reader takes from the file's owner.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessFigures {
    /// The process id.
    pub pid: u32,
    /// The tenant the process runs as, if a policy governs it.
    pub tenant: Option<String>,
    /// Per-target counters.
    pub targets: Vec<Snapshot>,
    /// Counts outside calls.
    pub events: Events,
}

impl ProcessFigures {
    /// This process's figures now, as `tenant`.
    pub fn now(tenant: Option<String>) -> ProcessFigures {
        ProcessFigures {
            pid: std::process::id(),
            tenant,
            targets: snapshot(),
            events: events(),
        }
    }

    /// As one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }

    /// Reads figures from their JSON.
    ///
    /// # Errors
    ///
    /// Not such a document (serde's message).
    pub fn from_json(text: &str) -> Result<ProcessFigures, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_counted_by_its_kind() {
        use ErrorCode::*;
        for (code, from_guest, trapped, want) in [
            (InvalidArgument, true, false, Ending::BadInput),
            (InvalidArgument, false, false, Ending::BadInput),
            (Internal, true, false, Ending::GuestError),
            (DeadlineExceeded, false, true, Ending::Deadline),
            (ResourceExhausted, false, false, Ending::Limit),
            (Internal, false, true, Ending::Trap),
            (Unavailable, false, false, Ending::Other),
        ] {
            assert_eq!(
                Ending::of_failure(code, from_guest, trapped),
                want,
                "{code:?}"
            );
        }
    }

    #[test]
    fn a_call_lands_in_the_bucket_of_its_time() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1_000), 0, "1µs is the first bound");
        assert_eq!(bucket(1_001), 1);
        assert_eq!(bucket(2_000_000), 7, "2ms: over 1ms, up to 5ms");
        assert_eq!(bucket(10_000_000_000), BUCKETS.len() - 1);
        assert_eq!(bucket(10_000_000_001), BUCKETS.len(), "past the last bound");
    }

    #[test]
    fn timed_calls_fill_the_histogram_and_untimed_ones_do_not() {
        let stats = TargetStats::default();
        let timed = |us: u64| CallMeasure {
            timed: true,
            guest: Duration::from_micros(us),
            copy: Duration::from_micros(1),
            ..CallMeasure::default()
        };
        stats.record(Ending::Ok, &timed(2));
        stats.record(Ending::Trap, &timed(200));
        stats.record(Ending::Ok, &CallMeasure::default());
        let s = stats.snapshot("t");
        assert_eq!((s.calls, s.traps, s.timed_calls), (3, 1, 2));
        let mut want = vec![0; BUCKETS.len() + 1];
        want[1] = 1; // 3µs
        want[5] = 1; // 201µs
        assert_eq!(s.durations, want);
    }

    #[test]
    fn sampled_timing_times_one_call_in_sample_on_a_thread() {
        // A thread of its own: the count is per thread.
        std::thread::spawn(|| {
            enable_sampled_timing();
            let timed = (0..SAMPLE * 4).filter(|_| timing()).count();
            if every_call_timed() {
                // Another test of this binary turned every call on.
                assert_eq!(timed, (SAMPLE * 4) as usize);
            } else {
                assert_eq!(timed, 4);
            }
        })
        .join()
        .unwrap();
    }
}
