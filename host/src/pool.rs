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
//! Taking and returning an idle instance takes no lock: each is one atomic
//! swap on a slot of its own, so calls on different device threads do not
//! serialise on the pool. Only a caller that finds every instance busy
//! takes the lock, to wait.

use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use plugin_glue::{ErrorCode, HandlerError};

use crate::guest::Guest;
use crate::instance::Instance;

/// The instances of one guest.
pub(crate) struct Pool {
    guest: Arc<Guest>,
    /// Instances ready for a call: a slot holds one (a leaked
    /// `Box<Instance>`, owned by the slot) or is null. There are as many
    /// slots as instances may be alive, so a returned instance always finds
    /// a free one. Boxed: a call moves a pointer in and out, not the whole
    /// instance.
    idle: Box<[AtomicPtr<Instance>]>,
    /// Instances alive: idle, leased, or being made (at most `idle.len()`).
    live: AtomicUsize,
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
            live: AtomicUsize::new(0),
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

    /// An idle instance, if a slot holds one.
    #[inline]
    fn pop(&self) -> Option<Box<Instance>> {
        for slot in &self.idle {
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
                return Some(unsafe { Box::from_raw(instance) });
            }
        }
        None
    }

    /// Counts one more live instance, if fewer than the limit are alive.
    fn reserve(&self) -> bool {
        self.live
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |live| {
                (live < self.idle.len()).then_some(live + 1)
            })
            .is_ok()
    }

    /// A lease of `instance`.
    fn lease(&self, instance: Box<Instance>, fresh: bool) -> Lease<'_> {
        Lease {
            pool: self,
            instance: Some(instance),
            discard: false,
            fresh,
        }
    }

    /// A new instance, counted by [`Pool::reserve`] already.
    fn make(&self) -> Result<Lease<'_>, HandlerError> {
        match Instance::new(self.guest.linked()) {
            Ok(instance) => Ok(self.lease(Box::new(instance), true)),
            Err(error) => {
                self.forget_one();
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
            Some(instance) => Ok(self.lease(instance, false)),
            None => self.take_slow(),
        }
    }

    /// [`Pool::take`] when no instance is idle: a new one, or a wait.
    #[cold]
    #[inline(never)]
    fn take_slow(&self) -> Result<Lease<'_>, HandlerError> {
        if self.reserve() {
            return self.make();
        }
        // Every instance is busy: wait for one to come back. Registered as
        // waiting before looking again, so that an instance returned after
        // that look sees the waiter and wakes it.
        let mut guard = self.lock();
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let wait = self.guest.limits().instance_wait;
        let mut deadline = None;
        let outcome = loop {
            if let Some(instance) = self.pop() {
                break Waited::Idle(self.lease(instance, false));
            }
            if self.reserve() {
                break Waited::Room;
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
            guard = match self.returned.wait_timeout(guard, until - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
        match outcome {
            Waited::Idle(lease) => Ok(lease),
            // Made without the lock, which other waiters need.
            Waited::Room => self.make(),
            Waited::Busy(error) => Err(error),
        }
    }

    /// Puts `instance` back for the next call.
    fn put(&self, instance: Box<Instance>) {
        let instance = Box::into_raw(instance);
        // Fewer instances are idle than are alive, and no more are alive
        // than there are slots: a slot is free. A scan can miss it while
        // other callers take and return instances, so it scans again.
        'placed: loop {
            for slot in &self.idle {
                if slot
                    .compare_exchange(
                        ptr::null_mut(),
                        instance,
                        Ordering::SeqCst,
                        Ordering::Relaxed,
                    )
                    .is_ok()
                {
                    break 'placed;
                }
            }
            std::hint::spin_loop();
        }
        self.wake();
    }

    /// One instance fewer is alive.
    fn forget_one(&self) {
        // Saturating, as a count that wrapped would refuse every instance.
        let _ = self
            .live
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |live| {
                Some(live.saturating_sub(1))
            });
        self.wake();
    }

    /// Wakes a waiter, if there is one, after an instance came back or a
    /// slot for a new one opened. (Both are sequentially consistent: a
    /// waiter registered after this load sees the change when it looks.)
    fn wake(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            // Taking the lock waits for a waiter that registered to be in
            // `wait_timeout`, so the notification reaches it.
            drop(self.lock());
            self.returned.notify_one();
        }
    }

    /// Instances alive now (idle or leased).
    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
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
    /// Room for a new one (an instance was discarded).
    Room,
    /// Every instance stayed busy for the wait limit.
    Busy(HandlerError),
}

/// An instance taken from a [`Pool`] for one call.
pub(crate) struct Lease<'p> {
    pool: &'p Pool,
    instance: Option<Box<Instance>>,
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
            self.pool.forget_one();
        } else {
            self.pool.put(instance);
        }
    }
}
