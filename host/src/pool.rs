//! A bounded pool of ready instances per guest.
//!
//! XLA enters handlers concurrently, so each call takes an instance of its
//! own: an idle one if there is one (a pop under a short lock, no global
//! lock), else a new one while fewer than [`crate::Limits::instances_per_guest`]
//! are alive, else it waits up to [`crate::Limits::instance_wait`] for one to
//! come back. A [`Lease`] returns its instance when dropped, or discards it
//! if the call trapped (or the thread is panicking), or if the guest runs
//! with [`crate::Limits::fresh_instances`].

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use plugin_glue::{ErrorCode, HandlerError};

use crate::guest::Guest;
use crate::instance::Instance;

struct State {
    /// Instances ready for a call, boxed: a call moves a pointer in and out,
    /// not the whole instance.
    #[expect(
        clippy::vec_box,
        reason = "an instance is hundreds of bytes; taking and returning one is every call's path"
    )]
    idle: Vec<Box<Instance>>,
    /// Instances alive: idle, leased, or being made.
    live: usize,
    /// Callers waiting for an instance to come back. Returning one wakes a
    /// waiter only if there is one: `Condvar::notify_one` is a system call
    /// even when nobody waits, and this is every call's path.
    waiting: usize,
}

/// The instances of one guest.
pub(crate) struct Pool {
    guest: Arc<Guest>,
    state: Mutex<State>,
    returned: Condvar,
    max: usize,
}

impl Pool {
    /// An empty pool for `guest`.
    pub(crate) fn new(guest: Arc<Guest>) -> Pool {
        let max = guest.limits().instances_per_guest.max(1);
        Pool {
            guest,
            state: Mutex::new(State {
                idle: Vec::with_capacity(max),
                live: 0,
                waiting: 0,
            }),
            returned: Condvar::new(),
            max,
        }
    }

    /// The guest.
    pub(crate) fn guest(&self) -> &Arc<Guest> {
        &self.guest
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the state
        // inconsistent (each critical section is a push, pop or counter
        // update), so a poisoned lock is still usable.
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Takes an instance for one call.
    ///
    /// # Errors
    ///
    /// RESOURCE_EXHAUSTED if every instance stays busy for the wait limit;
    /// the instantiation error if a new instance cannot be made.
    pub(crate) fn take(&self) -> Result<Lease<'_>, HandlerError> {
        let mut state = self.lock();
        let mut deadline = None;
        loop {
            if let Some(instance) = state.idle.pop() {
                return Ok(Lease {
                    pool: self,
                    instance: Some(instance),
                    discard: false,
                    fresh: false,
                });
            }
            if state.live < self.max {
                state.live += 1;
                drop(state);
                return match Instance::new(self.guest.linked()) {
                    Ok(instance) => Ok(Lease {
                        pool: self,
                        instance: Some(Box::new(instance)),
                        discard: false,
                        fresh: true,
                    }),
                    Err(error) => {
                        self.forget_one();
                        Err(HandlerError::internal(format!(
                            "cannot instantiate the guest: {}",
                            error.message()
                        )))
                    }
                };
            }
            let wait = self.guest.limits().instance_wait;
            let now = Instant::now();
            let until = *deadline.get_or_insert_with(|| {
                now.checked_add(wait)
                    .unwrap_or_else(|| now + std::time::Duration::from_secs(86_400))
            });
            if now >= until {
                return Err(HandlerError::new(
                    ErrorCode::ResourceExhausted,
                    format!(
                        "all {} instances of the guest stayed busy for {wait:?}",
                        self.max
                    ),
                ));
            }
            state.waiting += 1;
            state = match self.returned.wait_timeout(state, until - now) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
            state.waiting -= 1;
        }
    }

    fn put(&self, instance: Box<Instance>) {
        let mut state = self.lock();
        state.idle.push(instance);
        // A waiter counts itself under the lock before it waits, so none
        // is missed.
        let wake = state.waiting > 0;
        drop(state);
        if wake {
            self.returned.notify_one();
        }
    }

    fn forget_one(&self) {
        let mut state = self.lock();
        state.live = state.live.saturating_sub(1);
        let wake = state.waiting > 0;
        drop(state);
        if wake {
            self.returned.notify_one();
        }
    }

    /// Instances alive now (idle or leased).
    pub(crate) fn live(&self) -> usize {
        self.lock().live
    }
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
