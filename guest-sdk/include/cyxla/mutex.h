/*
 * std::mutex and friends for single-threaded guests.
 *
 * libc++ for wasm32 is built without threads, so its <mutex> and
 * <shared_mutex> leave out std::mutex, std::recursive_mutex,
 * std::unique_lock, std::scoped_lock, std::shared_mutex, std::shared_lock,
 * std::lock and std::try_lock (std::lock_guard, std::once_flag and
 * std::call_once are there). XLA FFI handlers commonly guard statics with
 * them. A cyxla guest instance runs one call at a time on one thread, so
 * these single-threaded versions keep such handlers compiling and behaving
 * as they do natively: a lock always succeeds at once, except that locking
 * a non-recursive mutex the same thread already holds (a deadlock natively)
 * traps with a message the host reports.
 *
 * Included by guest-sdk/include/mutex and guest-sdk/include/shared_mutex,
 * which `-Iguest-sdk/include` (the build command, guests/cpp/build.sh and
 * the CMake toolchain) puts before libc++'s own headers: `#include <mutex>`
 * in a handler is enough. It defines nothing in native builds or with a
 * libc++ that has threads.
 *
 * Statics are per instance: when a guest's pool holds several instances
 * (limit `instances`, default 8), each has its own copy of every static,
 * so a counter counts the calls of one instance. Set `instances = 1` in the
 * guest's `x.limits.toml` for one copy per process.
 */
#ifndef CYXLA_MUTEX_H_
#define CYXLA_MUTEX_H_

/** @file
 *  @brief Single-threaded std::mutex, std::unique_lock, std::scoped_lock,
 *  std::shared_mutex, ... for wasm32 guests (libc++ without threads). */

#if defined(__cplusplus) && defined(__wasm32__) && defined(_LIBCPP_HAS_NO_THREADS) && \
    !defined(CYXLA_NO_SINGLE_THREAD_MUTEX)

#include <__mutex/tag_types.h>
#include <cstddef>
#include <tuple>
#include <utility>

#include "cyxla/runtime.h"

_LIBCPP_BEGIN_NAMESPACE_STD

/** @brief std::mutex for one thread: locking it twice traps (a deadlock). */
class mutex {
 public:
  constexpr mutex() noexcept = default;
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;
  /** @brief Locks; traps if already locked (natively: a deadlock). */
  void lock() {
    if (locked_) {
      ::cyxla_panic(
          "std::mutex::lock: the mutex is already locked by this thread (a "
          "deadlock; a cyxla guest runs on one thread)");
    }
    locked_ = true;
  }
  /** @brief Locks if unlocked. */
  bool try_lock() noexcept {
    if (locked_) return false;
    locked_ = true;
    return true;
  }
  /** @brief Unlocks. */
  void unlock() noexcept { locked_ = false; }

 private:
  bool locked_ = false;
};

/** @brief std::recursive_mutex for one thread. */
class recursive_mutex {
 public:
  constexpr recursive_mutex() noexcept = default;
  recursive_mutex(const recursive_mutex&) = delete;
  recursive_mutex& operator=(const recursive_mutex&) = delete;
  /** @brief Locks (again). */
  void lock() noexcept { ++depth_; }
  /** @brief Locks (again); always succeeds. */
  bool try_lock() noexcept {
    ++depth_;
    return true;
  }
  /** @brief Undoes one lock. */
  void unlock() noexcept {
    if (depth_ > 0) --depth_;
  }

 private:
  unsigned long depth_ = 0;
};

/** @brief std::shared_mutex for one thread: shared locks are counted; an
 *  exclusive lock while any lock is held traps (a deadlock). */
class shared_mutex {
 public:
  constexpr shared_mutex() noexcept = default;
  shared_mutex(const shared_mutex&) = delete;
  shared_mutex& operator=(const shared_mutex&) = delete;
  /** @brief Locks exclusively; traps if any lock is held. */
  void lock() {
    if (!try_lock()) {
      ::cyxla_panic(
          "std::shared_mutex::lock: the mutex is already locked by this "
          "thread (a deadlock; a cyxla guest runs on one thread)");
    }
  }
  /** @brief Locks exclusively if no lock is held. */
  bool try_lock() noexcept {
    if (exclusive_ || shared_ > 0) return false;
    exclusive_ = true;
    return true;
  }
  /** @brief Releases the exclusive lock. */
  void unlock() noexcept { exclusive_ = false; }
  /** @brief Locks shared; traps if locked exclusively. */
  void lock_shared() {
    if (!try_lock_shared()) {
      ::cyxla_panic(
          "std::shared_mutex::lock_shared: the mutex is locked exclusively "
          "by this thread (a deadlock; a cyxla guest runs on one thread)");
    }
  }
  /** @brief Locks shared unless locked exclusively. */
  bool try_lock_shared() noexcept {
    if (exclusive_) return false;
    ++shared_;
    return true;
  }
  /** @brief Releases one shared lock. */
  void unlock_shared() noexcept {
    if (shared_ > 0) --shared_;
  }

 private:
  bool exclusive_ = false;
  unsigned long shared_ = 0;
};

namespace __cyxla {

/** @brief What std::unique_lock and std::shared_lock share: a movable
 *  owner of one mutex, locked exclusively or (`Shared`) shared. */
template <class Mutex, bool Shared>
class lock_owner {
 public:
  using mutex_type = Mutex;
  lock_owner() noexcept = default;
  explicit lock_owner(mutex_type& m) : m_(&m), owns_(false) {
    lock_mutex(m);
    owns_ = true;
  }
  lock_owner(mutex_type& m, defer_lock_t) noexcept : m_(&m), owns_(false) {}
  lock_owner(mutex_type& m, try_to_lock_t) : m_(&m), owns_(try_lock_mutex(m)) {}
  lock_owner(mutex_type& m, adopt_lock_t) noexcept : m_(&m), owns_(true) {}
  lock_owner(const lock_owner&) = delete;
  lock_owner& operator=(const lock_owner&) = delete;
  lock_owner(lock_owner&& other) noexcept : m_(other.m_), owns_(other.owns_) {
    other.m_ = nullptr;
    other.owns_ = false;
  }
  lock_owner& operator=(lock_owner&& other) noexcept {
    if (owns_) unlock_mutex(*m_);
    m_ = other.m_;
    owns_ = other.owns_;
    other.m_ = nullptr;
    other.owns_ = false;
    return *this;
  }
  ~lock_owner() {
    if (owns_) unlock_mutex(*m_);
  }
  /** @brief Locks the mutex (shared, for a shared lock). */
  void lock() {
    check_lockable(false);
    lock_mutex(*m_);
    owns_ = true;
  }
  /** @brief Tries to lock the mutex (shared, for a shared lock). */
  bool try_lock() {
    check_lockable(true);
    owns_ = try_lock_mutex(*m_);
    return owns_;
  }
  /** @brief Releases the lock. */
  void unlock() {
    if (!owns_) {
      ::cyxla_panic(Shared ? "std::shared_lock::unlock: does not own the lock"
                           : "std::unique_lock::unlock: does not own the lock");
    }
    unlock_mutex(*m_);
    owns_ = false;
  }
  /** @brief Forgets the mutex without unlocking it. */
  mutex_type* release() noexcept {
    mutex_type* m = m_;
    m_ = nullptr;
    owns_ = false;
    return m;
  }
  /** @brief Whether this lock owns its mutex. */
  bool owns_lock() const noexcept { return owns_; }
  /** @brief Same as owns_lock(). */
  explicit operator bool() const noexcept { return owns_; }
  /** @brief The mutex, or null. */
  mutex_type* mutex() const noexcept { return m_; }

 protected:
  static void lock_mutex(mutex_type& m) {
    if constexpr (Shared) {
      m.lock_shared();
    } else {
      m.lock();
    }
  }
  static bool try_lock_mutex(mutex_type& m) {
    if constexpr (Shared) {
      return m.try_lock_shared();
    } else {
      return m.try_lock();
    }
  }
  static void unlock_mutex(mutex_type& m) {
    if constexpr (Shared) {
      m.unlock_shared();
    } else {
      m.unlock();
    }
  }

  mutex_type* m_ = nullptr;
  bool owns_ = false;

 private:
  /** @brief Traps unless there is a mutex, not yet owned, for lock() or
   *  (`trying`) try_lock(). */
  void check_lockable(bool trying) const {
    if constexpr (Shared) {
      if (m_ == nullptr || owns_) {
        ::cyxla_panic(trying ? "std::shared_lock::try_lock: no mutex, or already owned"
                             : "std::shared_lock::lock: no mutex, or already owned");
      }
    } else {
      if (m_ == nullptr) {
        ::cyxla_panic(trying ? "std::unique_lock::try_lock: no mutex"
                             : "std::unique_lock::lock: no mutex");
      }
      if (owns_) {
        ::cyxla_panic(trying ? "std::unique_lock::try_lock: already owns the lock"
                             : "std::unique_lock::lock: already owns the lock");
      }
    }
  }
};

}  // namespace __cyxla

/** @brief std::unique_lock: a movable lock owner. */
template <class Mutex>
class unique_lock : public __cyxla::lock_owner<Mutex, false> {
 public:
  using __cyxla::lock_owner<Mutex, false>::lock_owner;
  unique_lock() noexcept = default;
  /** @brief Swaps with `other`. */
  void swap(unique_lock& other) noexcept {
    Mutex* m = this->m_;
    bool owns = this->owns_;
    this->m_ = other.m_;
    this->owns_ = other.owns_;
    other.m_ = m;
    other.owns_ = owns;
  }
};

template <class Mutex>
void swap(unique_lock<Mutex>& a, unique_lock<Mutex>& b) noexcept {
  a.swap(b);
}

/** @brief std::shared_lock: a movable shared-lock owner. */
template <class Mutex>
class shared_lock : public __cyxla::lock_owner<Mutex, true> {
 public:
  using __cyxla::lock_owner<Mutex, true>::lock_owner;
  shared_lock() noexcept = default;
};

/* Inherited constructors take no part in class template argument deduction
 * before C++23: these guides keep `std::unique_lock lock(m);` and
 * `std::shared_lock lock(m, std::defer_lock);` compiling. */
template <class Mutex>
unique_lock(Mutex&) -> unique_lock<Mutex>;
template <class Mutex, class Tag>
unique_lock(Mutex&, Tag) -> unique_lock<Mutex>;
template <class Mutex>
shared_lock(Mutex&) -> shared_lock<Mutex>;
template <class Mutex, class Tag>
shared_lock(Mutex&, Tag) -> shared_lock<Mutex>;

/** @brief std::try_lock: locks every lockable or none; returns -1 on
 *  success, else the index of the one that failed. */
template <class L0, class L1, class... Ls>
int try_lock(L0& l0, L1& l1, Ls&... ls) {
  if (!l0.try_lock()) return 0;
  int failed = -1;
  if constexpr (sizeof...(Ls) == 0) {
    failed = l1.try_lock() ? -1 : 0;
  } else {
    failed = ::std::try_lock(l1, ls...);
  }
  if (failed != -1) {
    l0.unlock();
    return failed + 1;
  }
  return -1;
}

/** @brief std::lock: locks every lockable (one thread: in order). */
template <class L0, class L1, class... Ls>
void lock(L0& l0, L1& l1, Ls&... ls) {
  l0.lock();
  l1.lock();
  (ls.lock(), ...);
}

/** @brief std::scoped_lock: locks every mutex for its scope. */
template <class... Mutexes>
class scoped_lock {
 public:
  explicit scoped_lock(Mutexes&... ms) : ms_(ms...) { (ms.lock(), ...); }
  explicit scoped_lock(adopt_lock_t, Mutexes&... ms) : ms_(ms...) {}
  ~scoped_lock() {
    unlock_all(std::make_index_sequence<sizeof...(Mutexes)>());
  }
  scoped_lock(const scoped_lock&) = delete;
  scoped_lock& operator=(const scoped_lock&) = delete;

 private:
  template <std::size_t... I>
  void unlock_all(std::index_sequence<I...>) {
    (std::get<I>(ms_).unlock(), ...);
  }
  std::tuple<Mutexes&...> ms_;
};

template <class Mutex>
class scoped_lock<Mutex> {
 public:
  using mutex_type = Mutex;
  explicit scoped_lock(mutex_type& m) : m_(m) { m_.lock(); }
  explicit scoped_lock(adopt_lock_t, mutex_type& m) : m_(m) {}
  ~scoped_lock() { m_.unlock(); }
  scoped_lock(const scoped_lock&) = delete;
  scoped_lock& operator=(const scoped_lock&) = delete;

 private:
  mutex_type& m_;
};

template <>
class scoped_lock<> {
 public:
  explicit scoped_lock() {}
  explicit scoped_lock(adopt_lock_t) {}
  scoped_lock(const scoped_lock&) = delete;
  scoped_lock& operator=(const scoped_lock&) = delete;
};

_LIBCPP_END_NAMESPACE_STD

#endif /* C++, wasm32, libc++ without threads */

#endif /* CYXLA_MUTEX_H_ */
