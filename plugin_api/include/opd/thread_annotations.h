#pragma once

// Locking rules the compiler checks. Clang's -Wthread-safety reads these attributes (the CI's
// thread-safety stage builds the core and the plugins with clang-16 and -Werror); other
// compilers ignore them. As LevelDB's port/thread_annotations.h:
//
//   Mutex mutex_;
//   std::vector<int> items_ OPD_GUARDED_BY(mutex_);
//   void add_locked(int x) OPD_REQUIRES(mutex_);
//   void add(int x) OPD_EXCLUDES(mutex_) { MutexLock lock(mutex_); add_locked(x); }

#include <mutex>

#if defined(__clang__)
#define OPD_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define OPD_THREAD_ANNOTATION(x)
#endif

#define OPD_CAPABILITY(x) OPD_THREAD_ANNOTATION(capability(x))
#define OPD_SCOPED_CAPABILITY OPD_THREAD_ANNOTATION(scoped_lockable)
#define OPD_GUARDED_BY(x) OPD_THREAD_ANNOTATION(guarded_by(x))
#define OPD_PT_GUARDED_BY(x) OPD_THREAD_ANNOTATION(pt_guarded_by(x))
#define OPD_REQUIRES(...) OPD_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define OPD_EXCLUDES(...) OPD_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define OPD_ACQUIRE(...) OPD_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define OPD_RELEASE(...) OPD_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define OPD_TRY_ACQUIRE(...) OPD_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define OPD_ASSERT_CAPABILITY(x) OPD_THREAD_ANNOTATION(assert_capability(x))
#define OPD_RETURN_CAPABILITY(x) OPD_THREAD_ANNOTATION(lock_returned(x))
#define OPD_NO_THREAD_SAFETY_ANALYSIS OPD_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace opd {

// std::mutex as a capability the analysis knows (libstdc++'s own is not annotated).
// Meets Lockable, so std::condition_variable_any waits on it.
class OPD_CAPABILITY("mutex") Mutex {
 public:
  constexpr Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() OPD_ACQUIRE() { m_.lock(); }
  void unlock() OPD_RELEASE() { m_.unlock(); }
  bool try_lock() OPD_TRY_ACQUIRE(true) { return m_.try_lock(); }
  // Tells the analysis the caller holds it, where that is known but not visible (callbacks
  // invoked under the lock).
  void assert_held() const OPD_ASSERT_CAPABILITY(this) {}

 private:
  std::mutex m_;
};

// Holds a Mutex for a scope.
class OPD_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) OPD_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~MutexLock() OPD_RELEASE() { m_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& m_;
};

}  // namespace opd
