// Clang's thread-safety annotations (leveldb/abseil style) and a mutex that carries them, so
// that a clang build with -Wthread-safety (ctest `thread_safety`, scripts/thread_safety.sh)
// proves every GUARDED_BY member is touched only under its lock. Under GCC the macros are
// empty and util::Mutex is a std::mutex.
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define KZ_TSA(x) __attribute__((x))
#else
#define KZ_TSA(x)
#endif

#define CAPABILITY(x) KZ_TSA(capability(x))
#define SCOPED_CAPABILITY KZ_TSA(scoped_lockable)
#define GUARDED_BY(x) KZ_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) KZ_TSA(pt_guarded_by(x))
#define REQUIRES(...) KZ_TSA(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) KZ_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) KZ_TSA(release_capability(__VA_ARGS__))
#define EXCLUDES(...) KZ_TSA(locks_excluded(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS KZ_TSA(no_thread_safety_analysis)

namespace kz::util {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

// std::unique_lock for util::Mutex, visible to the analysis: held from construction to the
// end of the scope, except between Unlock() and Lock().
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.unlock();
  }
  void Unlock() RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_.lock();
    held_ = true;
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
  bool held_ = true;
};

// A condition variable over util::Mutex. Wait with the predicate written as a loop in the
// caller, so the analysis sees the guarded reads under the lock:
//   while (!ready_) cv_.Wait(mu_);
class CondVar {
 public:
  // Releases `mu` while waiting; holds it again on return (spurious wakeups possible).
  void Wait(Mutex& mu) REQUIRES(mu) { WaitImpl(mu); }
  // As Wait, at most until `deadline`; false when it passed.
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline) REQUIRES(mu) {
    return WaitUntilImpl(mu, deadline);
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  void WaitImpl(Mutex& mu) NO_THREAD_SAFETY_ANALYSIS { cv_.wait(mu); }
  template <typename Clock, typename Duration>
  bool WaitUntilImpl(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline) NO_THREAD_SAFETY_ANALYSIS {
    return cv_.wait_until(mu, deadline) == std::cv_status::no_timeout;
  }
  std::condition_variable_any cv_;
};

}  // namespace kz::util
