// Clang's thread-safety annotations (leveldb/abseil style) and a mutex that carries them, so
// that a clang build with -Wthread-safety (ctest `thread_safety`, scripts/thread_safety.sh)
// proves every GUARDED_BY member is touched only under its lock. Under GCC the macros are
// empty and util::Mutex is a std::mutex.
#pragma once
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

// std::lock_guard for util::Mutex, visible to the analysis.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace kz::util
