//! Work split over short-lived threads of our own, for single large LAPACK
//! calls whose steps OpenBLAS's own threads share poorly (`syevd::split`,
//! `gesdd::split`).
//!
//! Two things on the 2-core development VM decide whether such a split
//! pays (module docs of [`crate::library`]): OpenBLAS's idle
//! workers must not spin on the cores the threads need
//! ([`Exclusive::end_openblas_workers`](crate::library::Exclusive::end_openblas_workers)),
//! and a new thread must actually run beside its creator: it was often
//! queued behind its busy creator and ran only once the creator had
//! finished its own part, so [`run_together`] moves each new thread off
//! the creator's CPU and waits until all have started.

use std::sync::{Condvar, Mutex};

/// A job for [`run_together`].
pub(crate) type Job<'a> = Box<dyn FnOnce() + Send + 'a>;

/// Runs `jobs` at once, the first on the calling thread and each other on
/// a thread of its own, and returns when all are done. Each new thread
/// first moves off the caller's CPU, and the caller starts its own job only
/// once every new thread runs (module docs). A job whose thread cannot be
/// spawned runs on the caller after its own. A panicking job panics the
/// caller once all are done.
pub(crate) fn run_together<'a>(jobs: Vec<Job<'a>>) {
    let mut jobs = jobs.into_iter();
    let Some(first) = jobs.next() else {
        return;
    };
    let rest: Vec<Mutex<Option<Job<'a>>>> = jobs.map(|job| Mutex::new(Some(job))).collect();
    if rest.is_empty() {
        first();
        return;
    }
    let (running, started) = (Mutex::new(0usize), Condvar::new());
    // SAFETY: `sched_getcpu` has no preconditions (−1 on failure).
    let caller_cpu = unsafe { libc::sched_getcpu() };
    std::thread::scope(|s| {
        let mut spawned = 0;
        for slot in &rest {
            let (running, started) = (&running, &started);
            let thread = std::thread::Builder::new().spawn_scoped(s, move || {
                leave_cpu(caller_cpu);
                let job = take(slot);
                *running.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                started.notify_one();
                if let Some(job) = job {
                    job();
                }
            });
            spawned += usize::from(thread.is_ok());
        }
        let mut count = running.lock().unwrap_or_else(|e| e.into_inner());
        while *count < spawned {
            count = started.wait(count).unwrap_or_else(|e| e.into_inner());
        }
        drop(count);
        first();
        // What is left had no thread.
        rest.iter().filter_map(take).for_each(|job| job());
    });
}

/// The job in `slot`, if nobody has taken it yet.
fn take<'a>(slot: &Mutex<Option<Job<'a>>>) -> Option<Job<'a>> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Takes CPU `cpu` out of the calling thread's allowed set, if that leaves
/// one (best effort: a failing call changes nothing). Only the short-lived
/// threads of [`run_together`] call it.
fn leave_cpu(cpu: i32) {
    let Ok(cpu) = usize::try_from(cpu) else {
        return;
    };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `cpu_set_t` is plain bits, valid all-zero; with pid 0 both
    // calls act on the calling thread and access only `set`, of `size`
    // bytes; `CPU_*` index inside the set (`cpu` is checked against
    // `CPU_SETSIZE`).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= libc::CPU_SETSIZE as usize
            || libc::sched_getaffinity(0, size, &mut set) != 0
            || !libc::CPU_ISSET(cpu, &set)
        {
            return;
        }
        libc::CPU_CLR(cpu, &mut set);
        if libc::CPU_COUNT(&set) > 0 {
            libc::sched_setaffinity(0, size, &set);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::{Job, run_together};

    #[test]
    fn every_job_runs_once_the_first_on_the_caller_the_others_beside_it() {
        for count in [1, 2, 3] {
            let ran = Mutex::new(Vec::new());
            let jobs = (0..count)
                .map(|i| {
                    let ran = &ran;
                    Box::new(move || ran.lock().unwrap().push((i, std::thread::current().id())))
                        as Job<'_>
                })
                .collect();
            run_together(jobs);
            let mut ran = ran.into_inner().unwrap();
            ran.sort_by_key(|r| r.0);
            assert_eq!(
                ran.iter().map(|r| r.0).collect::<Vec<_>>(),
                (0..count).collect::<Vec<_>>()
            );
            let caller = std::thread::current().id();
            assert_eq!(ran[0].1, caller, "the first job runs on the caller");
            assert!(
                ran[1..].iter().all(|r| r.1 != caller),
                "the others on threads of their own"
            );
        }
    }
}
