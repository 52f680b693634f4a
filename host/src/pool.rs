//! A bounded pool of ready instances per guest.
//!
//! XLA enters handlers concurrently, so each call takes an instance of its
//! own: an idle one if there is one, else a new one while fewer than
//! [`crate::Limits::instances`] are alive, else it waits up to
//! [`crate::Limits::instance_wait`] for one to come back. A [`Lease`]
//! returns its instance when dropped, or discards it if the call trapped
//! (or the thread is panicking), or if the guest runs with
//! [`crate::Limits::fresh_instances`].
//!
//! Taking and returning an idle instance takes no lock, so calls on
//! different device threads do not serialise on the pool. Each instance
//! has a slot of its own, its home: taking an idle instance is one atomic
//! swap of a home, and returning it one plain store into its home, which
//! nothing else writes while the instance is out. Only a caller that finds
//! every instance busy takes the lock, to wait; it pays for the returns'
//! plain stores with a `membarrier` ([`Pool::take_slow`]).

use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use plugin_glue::{ErrorCode, HandlerError};

use crate::deadline::{heavy_barrier, light_barrier};
use crate::guest::Guest;
use crate::instance::Instance;

/// How long a waiter sleeps between looks when `membarrier` failed it:
/// returns may then not see it waiting, and not wake it.
const UNSURE_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// The instances of one guest.
pub(crate) struct Pool {
    guest: Arc<Guest>,
    /// Instances ready for a call: slot `i` holds the instance whose home
    /// is `i` while it is idle (a leaked `Box<Instance>`, owned by the
    /// slot), and is null otherwise. There are as many slots as instances
    /// may be alive. Boxed: a call moves a pointer in and out, not the
    /// whole instance.
    idle: Box<[AtomicPtr<Instance>]>,
    /// Whether home `i` belongs to an instance alive (idle, leased, or
    /// being made): the instances alive are the homes taken.
    homes: Box<[AtomicBool]>,
    /// Callers waiting for an instance to come back. Returning one wakes a
    /// waiter only if there is one: `Condvar::notify_one` is a system call
    /// even when nobody waits, and this is every call's path.
    waiting: AtomicUsize,
    /// Held by a waiter while it registers and looks again, and by a
    /// returner before it wakes one, so that no wake-up is lost.
    waiters: Mutex<()>,
    returned: Condvar,
}

// The slots own their instances, which move between the threads that take
// them: an instance must be `Send` (`AtomicPtr` would not ask).
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Instance>();
};

impl Pool {
    /// An empty pool for `guest`.
    pub(crate) fn new(guest: Arc<Guest>) -> Pool {
        // A cold path: a fault handler installed since the last check goes
        // behind cyxla's before this guest runs (see `crate::faults`).
        crate::faults::check();
        let max = guest.limits().instances.max(1);
        Pool {
            guest,
            idle: (0..max).map(|_| AtomicPtr::new(ptr::null_mut())).collect(),
            homes: (0..max).map(|_| AtomicBool::new(false)).collect(),
            waiting: AtomicUsize::new(0),
            waiters: Mutex::new(()),
            returned: Condvar::new(),
        }
    }

    /// The guest.
    pub(crate) fn guest(&self) -> &Arc<Guest> {
        &self.guest
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        // The lock guards no data, so a poisoned one is still usable.
        match self.waiters.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// An idle instance and its home, if a slot holds one.
    #[inline]
    fn pop(&self) -> Option<(Box<Instance>, usize)> {
        for (home, slot) in self.idle.iter().enumerate() {
            // A load skips empty slots without a locked instruction (on
            // x86, a sequentially consistent load is a plain one).
            if slot.load(Ordering::SeqCst).is_null() {
                continue;
            }
            let instance = slot.swap(ptr::null_mut(), Ordering::SeqCst);
            if !instance.is_null() {
                // SAFETY: a non-null slot holds a pointer from
                // `Box::into_raw` in `put`, and the swap gave it to this
                // caller alone (the slot is null again).
                return Some((unsafe { Box::from_raw(instance) }, home));
            }
        }
        None
    }

    /// A home for one more live instance, if fewer than the limit are
    /// alive.
    fn reserve(&self) -> Option<usize> {
        self.homes.iter().position(|taken| {
            !taken.load(Ordering::SeqCst)
                && taken
                    .compare_exchange(false, true, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
        })
    }

    /// A lease of `instance`, whose home is `home`.
    fn lease(&self, instance: Box<Instance>, home: usize, fresh: bool) -> Lease<'_> {
        Lease {
            pool: self,
            instance: Some(instance),
            home,
            discard: false,
            fresh,
        }
    }

    /// A new instance for `home`, taken by [`Pool::reserve`] already.
    fn make(&self, home: usize) -> Result<Lease<'_>, HandlerError> {
        match Instance::new(self.guest.linked()) {
            Ok(instance) => Ok(self.lease(Box::new(instance), home, true)),
            Err(error) => {
                self.forget(home);
                Err(HandlerError::internal(format!(
                    "cannot instantiate the guest: {}",
                    error.message()
                )))
            }
        }
    }

    /// Takes an instance for one call.
    ///
    /// # Errors
    ///
    /// RESOURCE_EXHAUSTED if every instance stays busy for the wait limit;
    /// the instantiation error if a new instance cannot be made.
    #[inline]
    pub(crate) fn take(&self) -> Result<Lease<'_>, HandlerError> {
        // Inlined into the caller with `pop`, so that the lease goes to it
        // in registers, not through memory.
        match self.pop() {
            Some((instance, home)) => Ok(self.lease(instance, home, false)),
            None => self.take_slow(),
        }
    }

    /// [`Pool::take`] when no instance is idle: a new one, or a wait.
    #[cold]
    #[inline(never)]
    fn take_slow(&self) -> Result<Lease<'_>, HandlerError> {
        if let Some(home) = self.reserve() {
            return self.make(home);
        }
        // Every instance is busy: wait for one to come back. Registered as
        // waiting before looking again, so that an instance returned after
        // that look sees the waiter and wakes it. A return is a plain store
        // and then a plain load of `waiting` ([`Pool::put`]), which the CPU
        // may reorder; the heavy barrier orders them against this
        // registration: a return whose load came before the barrier has
        // its store seen by the looks after it, and one whose load came
        // after sees the waiter. Without the barrier (`membarrier`
        // refused), the waiter looks again every `UNSURE_WAIT`.
        let mut guard = self.lock();
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let sure = heavy_barrier();
        let wait = self.guest.limits().instance_wait;
        let mut deadline = None;
        let outcome = loop {
            if let Some((instance, home)) = self.pop() {
                break Waited::Idle(self.lease(instance, home, false));
            }
            if let Some(home) = self.reserve() {
                break Waited::Room(home);
            }
            let now = Instant::now();
            let until = *deadline.get_or_insert_with(|| {
                now.checked_add(wait)
                    .unwrap_or_else(|| now + std::time::Duration::from_secs(86_400))
            });
            if now >= until {
                break Waited::Busy(HandlerError::new(
                    ErrorCode::ResourceExhausted,
                    format!(
                        "all {} instances of the guest stayed busy for {wait:?}",
                        self.idle.len()
                    ),
                ));
            }
            let nap = if sure {
                until - now
            } else {
                (until - now).min(UNSURE_WAIT)
            };
            guard = match self.returned.wait_timeout(guard, nap) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
        match outcome {
            Waited::Idle(lease) => Ok(lease),
            // Made without the lock, which other waiters need.
            Waited::Room(home) => self.make(home),
            Waited::Busy(error) => Err(error),
        }
    }

    /// Puts `instance`, whose home is `home`, back for the next call.
    fn put(&self, instance: Box<Instance>, home: usize) {
        // The home is null while its instance is out, and only that
        // instance's lease stores into it: a plain store, no locked
        // instruction. (Release: the instance's state before the store is
        // seen by whoever swaps it out.)
        self.idle[home].store(Box::into_raw(instance), Ordering::Release);
        // Orders the store before the load of `waiting` against a waiter's
        // heavy barrier (`take_slow`).
        light_barrier();
        self.wake();
    }

    /// The instance of `home` is gone: one instance fewer is alive.
    fn forget(&self, home: usize) {
        self.homes[home].store(false, Ordering::SeqCst);
        self.wake();
    }

    /// Wakes a waiter, if there is one, after an instance came back or a
    /// home for a new one opened (`put`, `forget`: a waiter registered
    /// after this load sees the change when it looks).
    fn wake(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            // Taking the lock waits for a waiter that registered to be in
            // `wait_timeout`, so the notification reaches it.
            drop(self.lock());
            self.returned.notify_one();
        }
    }

    /// Instances alive now (idle, leased or being made): the homes taken.
    pub(crate) fn live(&self) -> usize {
        self.homes
            .iter()
            .filter(|taken| taken.load(Ordering::SeqCst))
            .count()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for slot in &mut self.idle {
            let instance = std::mem::replace(slot.get_mut(), ptr::null_mut());
            if !instance.is_null() {
                // SAFETY: as in `pop`; `&mut self` means no other caller.
                drop(unsafe { Box::from_raw(instance) });
            }
        }
    }
}

/// What a caller that waited for an instance found.
enum Waited<'p> {
    /// An idle instance.
    Idle(Lease<'p>),
    /// Room for a new one (an instance was discarded), in this home.
    Room(usize),
    /// Every instance stayed busy for the wait limit.
    Busy(HandlerError),
}

/// An instance taken from a [`Pool`] for one call.
pub(crate) struct Lease<'p> {
    pool: &'p Pool,
    instance: Option<Box<Instance>>,
    /// The instance's slot in the pool.
    home: usize,
    discard: bool,
    /// The instance was made for this call.
    fresh: bool,
}

impl Lease<'_> {
    /// Whether the instance was made for this call.
    pub(crate) fn fresh(&self) -> bool {
        self.fresh
    }

    /// The instance.
    pub(crate) fn instance(&mut self) -> &mut Instance {
        // Only `Drop` takes the instance out.
        self.instance
            .as_mut()
            .unwrap_or_else(|| unreachable!("a lease holds its instance until dropped"))
    }

    /// Drops the instance instead of returning it to the pool.
    pub(crate) fn discard(&mut self) {
        self.discard = true;
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let Some(instance) = self.instance.take() else {
            return;
        };
        if self.discard || std::thread::panicking() || self.pool.guest.limits().fresh_instances {
            drop(instance);
            self.pool.forget(self.home);
        } else {
            self.pool.put(instance, self.home);
        }
    }
}
