//! Copies of large buffers in and out of guest memory, shared with helper
//! threads.
//!
//! A call's operands are copied into guest memory before the guest runs and
//! its results out after it. For a buffer of megabytes one thread's
//! `memcpy` is bound by what one core can move, well below what the memory
//! system can (measurements: docs/performance.md, "Copies"). A copy of at
//! least [`PARALLEL_BYTES`] (8 MiB) is cut into chunks
//! of [`CHUNK_BYTES`]; the calling thread and up to `threads - 1` helpers
//! ([`Limits::copy_threads`]) claim them one at a time.
//!
//! The caller never waits for a helper to start: it copies every chunk no
//! helper has claimed, then waits only for the chunks helpers claimed to
//! be done (one each at most). On a machine whose cores are all busy a
//! large copy costs what it did on one thread, plus the offer. Helpers are
//! threads of the process, started on first need, at most [`MAX_HELPERS`],
//! idle on a condition variable between copies; every engine shares them.
//!
//! [`Limits::copy_threads`]: crate::Limits::copy_threads

use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, Thread};

/// Copies of at least this many bytes are shared with helpers. Below it,
/// sharing loses: the calling thread's core holds much of such a buffer in
/// its own cache, and the guest then reads what a helper wrote from the
/// other core's. Through XLA, sharing first won clearly at 8 MiB
/// (docs/performance.md, "Copies").
pub(crate) const PARALLEL_BYTES: usize = 8 << 20;

/// The unit a thread claims.
const CHUNK_BYTES: usize = 256 << 10;

/// Most helper threads the process starts, and so most threads, less one,
/// that share a copy (`copy_threads` is at most 8). The default asks for at
/// most 3 helpers (`copy_threads` 4): past a few threads a copy is bound by
/// memory bandwidth, not by cores.
pub(crate) const MAX_HELPERS: usize = 7;

/// How a call copies its buffers: alone, or with up to `helpers` helper
/// threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Copier {
    helpers: usize,
}

impl Copier {
    /// A copier that uses `threads` threads, the caller's included (0 and 1
    /// both copy on the calling thread alone).
    pub(crate) fn new(threads: usize) -> Copier {
        Copier {
            helpers: threads.saturating_sub(1).min(MAX_HELPERS),
        }
    }

    /// Copies `src` into `dst`, as `dst.copy_from_slice(src)` does.
    ///
    /// # Panics
    ///
    /// If the lengths differ, as `copy_from_slice` does.
    #[inline]
    pub(crate) fn copy(self, dst: &mut [u8], src: &[u8]) {
        // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, and
        // `copy_uninit` only writes initialised bytes through the view, so
        // `dst` stays initialised.
        let dst = unsafe { &mut *(dst as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.copy_uninit(dst, src);
    }

    /// Copies `src` into `dst`, as `dst.write_copy_of_slice(src)` does.
    ///
    /// # Panics
    ///
    /// If the lengths differ.
    #[inline]
    pub(crate) fn copy_uninit(self, dst: &mut [MaybeUninit<u8>], src: &[u8]) {
        if src.len() < PARALLEL_BYTES || self.helpers == 0 {
            dst.write_copy_of_slice(src);
        } else {
            assert_eq!(
                dst.len(),
                src.len(),
                "copy between buffers of different lengths"
            );
            // SAFETY: `dst` is valid for writes and `src` for reads of
            // `src.len()` bytes, and they do not overlap (one is borrowed
            // mutably, the other shared), for as long as this call runs,
            // which is as long as `shared` uses them; `MaybeUninit<u8>` has
            // the layout of `u8`, and writing bytes to it is always allowed.
            unsafe {
                shared(
                    dst.as_mut_ptr().cast(),
                    src.as_ptr(),
                    src.len(),
                    self.helpers,
                )
            };
        }
    }
}

/// One copy, shared by its caller and the helpers that take it up.
struct Job {
    dst: *mut u8,
    src: *const u8,
    len: usize,
    chunks: usize,
    /// The next chunk to claim; at or past `chunks`, none is left.
    next: AtomicUsize,
    /// Chunks copied.
    done: AtomicUsize,
    /// The caller, to wake when a helper copies the last chunk.
    owner: Thread,
}

// SAFETY: the pointers are only dereferenced for a claimed chunk, and the
// caller of `shared` keeps both buffers alive and otherwise untouched until
// every chunk is copied; claiming and counting are atomic. A `Job` that
// outlives its copy (a helper that takes it up late) claims nothing.
unsafe impl Send for Job {}
// SAFETY: as for `Send`: every field is read-only or atomic.
unsafe impl Sync for Job {}

impl Job {
    /// Copies chunks until none is left to claim; says whether this thread
    /// copied the chunk that completed the job.
    fn work(&self) -> bool {
        let mut completed = false;
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.chunks {
                return completed;
            }
            let start = i * CHUNK_BYTES;
            let len = CHUNK_BYTES.min(self.len - start);
            // SAFETY: chunk `i` is in bounds (`i < chunks`, so `start <
            // len`) and claimed by this thread alone; the buffers are alive
            // because the job is not done (`done < chunks` until this chunk
            // is counted below), and `shared` does not return before it is.
            unsafe { std::ptr::copy_nonoverlapping(self.src.add(start), self.dst.add(start), len) };
            // Release: the caller's acquire load of `done` sees this
            // chunk's bytes.
            completed = self.done.fetch_add(1, Ordering::Release) + 1 == self.chunks;
        }
    }
}

/// Copies `len` bytes from `src` to `dst` with up to `helpers` helpers.
///
/// # Safety
///
/// `dst` must be valid for writes and `src` for reads of `len` bytes, the
/// two must not overlap, and nothing else may access `dst` during the call.
unsafe fn shared(dst: *mut u8, src: *const u8, len: usize, helpers: usize) {
    let chunks = len.div_ceil(CHUNK_BYTES);
    let job = Arc::new(Job {
        dst,
        src,
        len,
        chunks,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        owner: thread::current(),
    });
    let offered = HELPERS.offer(&job, helpers.min(chunks - 1));
    job.work();
    // Only chunks a helper claimed and has not finished are left: at most
    // one per helper. Acquire: their bytes are written once they count.
    while job.done.load(Ordering::Acquire) < chunks {
        thread::park();
    }
    if offered && Arc::strong_count(&job) > 1 {
        // Offers no helper took up yet would only wake one for nothing.
        HELPERS.withdraw(&job);
    }
}

/// The helper threads and the copies offered to them.
struct Helpers {
    /// Copies offered, one entry per helper wanted.
    queue: Mutex<VecDeque<Arc<Job>>>,
    /// Signalled for each entry queued.
    offered: Condvar,
    /// Helper threads started.
    started: AtomicUsize,
    /// Serialises starting helpers.
    starting: Mutex<()>,
    /// Set when a helper could not be started: no more are tried.
    spawn_failed: AtomicBool,
}

static HELPERS: Helpers = Helpers {
    queue: Mutex::new(VecDeque::new()),
    offered: Condvar::new(),
    started: AtomicUsize::new(0),
    starting: Mutex::new(()),
    spawn_failed: AtomicBool::new(false),
};

/// Locks `mutex`; nothing panics while one of these is held, and the data
/// is consistent whenever it is released, so a poisoned lock is used as is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Helpers {
    /// Offers `job` to up to `wanted` helpers (starting them if need be);
    /// says whether it was offered to any.
    fn offer(&'static self, job: &Arc<Job>, wanted: usize) -> bool {
        let helpers = self.start(wanted).min(wanted);
        if helpers == 0 {
            return false;
        }
        let mut queue = lock(&self.queue);
        for _ in 0..helpers {
            queue.push_back(Arc::clone(job));
        }
        drop(queue);
        for _ in 0..helpers {
            self.offered.notify_one();
        }
        true
    }

    /// Takes back what is still queued of `job`.
    fn withdraw(&self, job: &Arc<Job>) {
        lock(&self.queue).retain(|queued| !Arc::ptr_eq(queued, job));
    }

    /// Starts helpers until `wanted` run (or one fails to start); returns
    /// how many run.
    fn start(&'static self, wanted: usize) -> usize {
        let started = self.started.load(Ordering::Acquire);
        if started >= wanted || self.spawn_failed.load(Ordering::Relaxed) {
            return started;
        }
        let _starting = lock(&self.starting);
        let mut started = self.started.load(Ordering::Acquire);
        while started < wanted.min(MAX_HELPERS) {
            let spawned = thread::Builder::new()
                .name(format!("cyxla-copy-{started}"))
                .stack_size(64 << 10)
                .spawn(move || self.serve());
            if let Err(error) = spawned {
                tracing::warn!(
                    "cannot start a copy helper thread ({error}); large copies use {} helper threads",
                    started
                );
                self.spawn_failed.store(true, Ordering::Relaxed);
                break;
            }
            started += 1;
            self.started.store(started, Ordering::Release);
        }
        started
    }

    /// A helper's life: take up each copy offered.
    fn serve(&self) -> ! {
        loop {
            let job = {
                let mut queue = lock(&self.queue);
                loop {
                    if let Some(job) = queue.pop_front() {
                        break job;
                    }
                    queue = self
                        .offered
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            if job.work() {
                job.owner.unpark();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 12) as u8)
            .collect()
    }

    #[test]
    fn shared_copies_are_exact_at_every_size_and_thread_count() {
        let sizes = [
            0,
            1,
            PARALLEL_BYTES - 1,
            PARALLEL_BYTES,
            PARALLEL_BYTES + 1,
            PARALLEL_BYTES + CHUNK_BYTES - 1,
            PARALLEL_BYTES + 5 * CHUNK_BYTES + 17,
        ];
        for (k, &len) in sizes.iter().enumerate() {
            let src = pattern(len, k as u8);
            for threads in [0, 1, 2, 3, 8, 100] {
                let mut dst = vec![0xA5; len];
                Copier::new(threads).copy(&mut dst, &src);
                assert!(dst == src, "{len} bytes on {threads} threads");
                let mut uninit = vec![MaybeUninit::new(0x5A); len];
                Copier::new(threads).copy_uninit(&mut uninit, &src);
                // SAFETY: every byte was initialised (by `vec!`, then the copy).
                let same = uninit
                    .iter()
                    .zip(&src)
                    .all(|(b, s)| unsafe { b.assume_init() } == *s);
                assert!(same, "{len} bytes on {threads} threads, into uninit");
            }
        }
    }

    #[test]
    fn many_threads_share_the_helpers_at_once() {
        let len = PARALLEL_BYTES + 3 * CHUNK_BYTES + 5;
        let handles: Vec<_> = (0..8u8)
            .map(|t| {
                thread::spawn(move || {
                    let src = pattern(len + usize::from(t), t);
                    for round in 0..8 {
                        let mut dst = vec![round; src.len()];
                        Copier::new(4).copy(&mut dst, &src);
                        assert!(dst == src, "thread {t}, round {round}");
                        // What a finished copy left offered, it withdrew.
                        let me = thread::current().id();
                        assert!(
                            lock(&HELPERS.queue).iter().all(|job| job.owner.id() != me),
                            "thread {t}, round {round}: a finished copy is still offered"
                        );
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert!(HELPERS.started.load(Ordering::Relaxed) <= MAX_HELPERS);
    }

    #[test]
    #[should_panic(expected = "different lengths")]
    fn lengths_must_match_for_large_copies_too() {
        let src = vec![1; PARALLEL_BYTES];
        let mut dst = vec![0; PARALLEL_BYTES + 1];
        Copier::new(2).copy(&mut dst, &src);
    }
}
