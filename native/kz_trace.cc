// kz_trace.cc - implementation of kz_trace.h (see the header for contracts).
//
// CUPTI hands records over in buffers (buffer_requested / buffer_completed), on
// the flushing thread or on CUPTI's own thread; records are kept only while a
// window is open. g_rec_mu guards what the callbacks touch; the API itself is
// single-threaded (and never holds g_rec_mu while calling into CUPTI, whose flush
// calls the callbacks synchronously). C-style like kz_cupti.cc (no exceptions, no
// std containers or std::mutex: see there why).
#include "kz_trace.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>

#include "kz_cupti.h"
#include "kz_driver.h"
#include "kz_runtime.h"

using kz::g_cupti;
using kz::g_drv;
using kz::set_error;

namespace {

constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kMaxRecords = size_t{1} << 16;  // per window; more are dropped
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_MEMCPY};

// A growable array of records (malloc/realloc; capacity bounded by kMaxRecords).
struct Records {
  kz_tr_record* data = nullptr;
  size_t size = 0, cap = 0;
  bool push(const kz_tr_record& r) {
    if (size == cap) {
      size_t n = cap ? cap * 2 : 256;
      auto* p = static_cast<kz_tr_record*>(std::realloc(data, n * sizeof *data));
      if (!p) return false;
      data = p;
      cap = n;
    }
    data[size++] = r;
    return true;
  }
};

pthread_mutex_t g_rec_mu = PTHREAD_MUTEX_INITIALIZER;
bool g_collecting = false;  // a window is open (guarded by g_rec_mu)
Records g_window;           // records of the open window (g_rec_mu)
uint64_t g_dropped = 0;     // dropped in the open window (g_rec_mu)
uint32_t g_marker_value = 0;  // set once by kz_tr_init

bool g_ready = false;    // kz_tr_init succeeded
bool g_enabled = false;  // the activity kinds are enabled
Records g_kept;          // records of the last closed window
CUdeviceptr g_marker = 0;   // 8 bytes: [0] the memset marker, [4] the copy marker
void* g_marker_host = nullptr;  // 4 pinned bytes, source of the copy marker
CUevent g_done_event = nullptr;  // kz_tr_caller_done's event (no timing)

struct Lock {
  Lock() { pthread_mutex_lock(&g_rec_mu); }
  ~Lock() { pthread_mutex_unlock(&g_rec_mu); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid) {
  Lock lock;
  CUpti_Activity* a = nullptr;
  while (g_collecting && buffer &&
         g_cupti.cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) {
    kz_tr_record r;
    if (!kz::convert_record(a, g_marker_value, &r)) continue;
    if (g_window.size >= kMaxRecords || !g_window.push(r)) ++g_dropped;
  }
  size_t dropped = 0;
  if (g_collecting && g_cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) ==
                          CUPTI_SUCCESS)
    g_dropped += dropped;
  std::free(buffer);
}

int fail_cupti(CUptiResult r, const char* what) {
  set_error("%s failed: %s", what, kz::cupti_text(r));
  return KZ_TR_CUPTI_ERROR;
}

int need_ready(const char* fn) {
  if (g_ready) return KZ_RT_OK;
  set_error("%s: trace not initialised (call kz_tr_init first)", fn);
  return KZ_RT_NOT_INITIALIZED;
}

// Delivers every completed record to buffer_completed (forced: the caller synced).
int flush(const char* what) {
  CUptiResult r = g_cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  return r == CUPTI_SUCCESS ? KZ_RT_OK : fail_cupti(r, what);
}

void set_collecting(bool on) {
  Lock lock;
  g_collecting = on;
  if (on) {
    g_window.size = 0;
    g_dropped = 0;
  }
}

// Allocates the marker's 4-byte buffer in the current context (once). Done when a
// window opens, not at the mark: an allocation may synchronise, which would let
// unjoined work finish before the marker is enqueued.
int ensure_marker_buffer() {
  if (g_marker) return KZ_RT_OK;
  if (int rc = kz::driver_ready(nullptr)) return rc;
  if (CUresult r = g_drv.cuMemAlloc(&g_marker, 8); r != CUDA_SUCCESS) {
    g_marker = 0;
    set_error("kz_tr_mark: cuMemAlloc(8) failed (no current context?): %s", kz::cuda_text(r));
    return KZ_RT_CUDA_ERROR;
  }
  if (CUresult r = g_drv.cuMemAllocHost(&g_marker_host, 4); r != CUDA_SUCCESS) {
    g_marker_host = nullptr;
    set_error("kz_tr_mark: cuMemAllocHost(4) failed: %s", kz::cuda_text(r));
    return KZ_RT_CUDA_ERROR;
  }
  return KZ_RT_OK;
}

// 32 random bits from /dev/urandom (clock and pid if it cannot be read), never 0.
uint32_t random_marker() {
  uint32_t v = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read(fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    v = static_cast<uint32_t>(ts.tv_nsec) * 2654435761u ^ static_cast<uint32_t>(getpid());
  }
  if (fd >= 0) close(fd);
  return v ? v : 0x4b5a5452u;  // "KZTR"
}

}  // namespace

extern "C" {

int kz_tr_init(const char* const* paths, int n_paths) {
  kz::clear_error();
  if (g_ready) return KZ_RT_OK;
  if (n_paths < 0 || (n_paths > 0 && !paths)) {
    set_error("kz_tr_init: bad argument (n_paths %d, paths %p)", n_paths,
              static_cast<const void*>(paths));
    return KZ_RT_BAD_ARGUMENT;
  }
  if (int rc = kz::load_cupti(paths, n_paths)) return rc;
  CUptiResult r = g_cupti.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) return fail_cupti(r, "cuptiActivityRegisterCallbacks");
  g_marker_value = random_marker();
  g_ready = true;
  return KZ_RT_OK;
}

const char* kz_tr_library(void) { return g_ready ? g_cupti.path : ""; }

uint32_t kz_tr_version(void) { return g_ready ? g_cupti.version : 0; }

uint32_t kz_tr_marker_value(void) { return g_marker_value; }

int kz_tr_enable(void) {
  kz::clear_error();
  if (int rc = need_ready("kz_tr_enable")) return rc;
  if (g_enabled) return KZ_RT_OK;
  for (size_t i = 0; i < sizeof kKinds / sizeof kKinds[0]; ++i) {
    CUptiResult r = g_cupti.cuptiActivityEnable(kKinds[i]);
    if (r != CUPTI_SUCCESS) {
      while (i-- > 0) g_cupti.cuptiActivityDisable(kKinds[i]);
      return fail_cupti(r, "cuptiActivityEnable");
    }
  }
  g_enabled = true;
  return KZ_RT_OK;
}

int kz_tr_start(void) {
  if (int rc = kz_tr_enable()) return rc;
  (void)ensure_marker_buffer();  // a failure is reported by kz_tr_mark
  kz::clear_error();
  set_collecting(false);
  if (int rc = flush("cuptiActivityFlushAll (start)")) return rc;
  set_collecting(true);
  return KZ_RT_OK;
}

int kz_tr_mark(uintptr_t stream) {
  kz::clear_error();
  if (int rc = need_ready("kz_tr_mark")) return rc;
  if (!g_collecting) {
    set_error("kz_tr_mark: no open window (call kz_tr_start first)");
    return KZ_RT_BAD_ARGUMENT;
  }
  if (int rc = ensure_marker_buffer()) return rc;
  // First a 4-byte copy from pinned memory: a copy engine runs it, not an SM, so it
  // starts as soon as the stream is free even while another stream's kernel holds
  // every SM; its start, on the GPU clock of the records, says when the caller's
  // stream was done. Then the memset, whose value identifies the marker's stream.
  CUresult r = g_drv.cuMemcpyHtoDAsync(g_marker + 4, g_marker_host, 4, reinterpret_cast<CUstream>(stream));
  if (r == CUDA_SUCCESS)
    r = g_drv.cuMemsetD32Async(g_marker, g_marker_value, 1, reinterpret_cast<CUstream>(stream));
  if (r != CUDA_SUCCESS) {
    set_error("kz_tr_mark: cuMemsetD32Async failed: %s", kz::cuda_text(r));
    return KZ_RT_CUDA_ERROR;
  }
  return KZ_RT_OK;
}

int kz_tr_caller_done(uintptr_t stream, uint64_t* done_ns) {
  kz::clear_error();
  if (int rc = need_ready("kz_tr_caller_done")) return rc;
  if (!done_ns || !g_collecting) {
    set_error("kz_tr_caller_done: %s", !done_ns ? "done_ns must not be NULL" : "no open window");
    return KZ_RT_BAD_ARGUMENT;
  }
  // An event, not a kernel or memset: the stream's front end completes it without an SM,
  // as soon as everything the stream waits for (joined streams, and on the legacy default
  // stream the blocking streams) is done.
  CUresult r0 = g_done_event ? CUDA_SUCCESS : g_drv.cuEventCreate(&g_done_event, CU_EVENT_DISABLE_TIMING);
  if (r0 == CUDA_SUCCESS) r0 = g_drv.cuEventRecord(g_done_event, reinterpret_cast<CUstream>(stream));
  if (r0 == CUDA_SUCCESS) r0 = g_drv.cuEventSynchronize(g_done_event);
  if (r0 != CUDA_SUCCESS) {
    set_error("kz_tr_caller_done: event record/synchronize failed: %s", kz::cuda_text(r0));
    return KZ_RT_CUDA_ERROR;
  }
  CUptiResult r = g_cupti.cuptiGetTimestamp(done_ns);
  return r == CUPTI_SUCCESS ? KZ_RT_OK : fail_cupti(r, "cuptiGetTimestamp");
}

int kz_tr_stop(int* count, uint64_t* dropped) {
  kz::clear_error();
  if (int rc = need_ready("kz_tr_stop")) return rc;
  if (!count) {
    set_error("kz_tr_stop: count must not be NULL");
    return KZ_RT_BAD_ARGUMENT;
  }
  if (!g_collecting) {
    set_error("kz_tr_stop: no open window (call kz_tr_start first)");
    return KZ_RT_BAD_ARGUMENT;
  }
  const int rc = flush("cuptiActivityFlushAll (stop)");
  Lock lock;
  g_collecting = false;
  const Records kept = g_kept;
  g_kept = g_window;
  g_window = kept;
  g_window.size = 0;
  *count = static_cast<int>(g_kept.size);
  if (dropped) *dropped = g_dropped;
  return rc;
}

int kz_tr_read(kz_tr_record* out, int capacity, int* copied) {
  kz::clear_error();
  if (capacity < 0 || (capacity > 0 && !out) || !copied) {
    set_error("kz_tr_read: bad argument (capacity %d, out %p, copied %p)", capacity,
              static_cast<void*>(out), static_cast<void*>(copied));
    return KZ_RT_BAD_ARGUMENT;
  }
  size_t n = g_kept.size < static_cast<size_t>(capacity) ? g_kept.size
                                                         : static_cast<size_t>(capacity);
  for (size_t i = 0; i < n; ++i) out[i] = g_kept.data[i];
  *copied = static_cast<int>(n);
  return KZ_RT_OK;
}

int kz_tr_stream_id(uintptr_t stream, uint32_t* id) {
  kz::clear_error();
  if (int rc = need_ready("kz_tr_stream_id")) return rc;
  if (!id) {
    set_error("kz_tr_stream_id: id must not be NULL");
    return KZ_RT_BAD_ARGUMENT;
  }
  CUptiResult r = g_cupti.cuptiGetStreamIdEx(nullptr, reinterpret_cast<CUstream>(stream), 0, id);
  return r == CUPTI_SUCCESS ? KZ_RT_OK : fail_cupti(r, "cuptiGetStreamIdEx");
}

int kz_tr_disable(void) {
  kz::clear_error();
  if (!g_ready || !g_enabled) return KZ_RT_OK;
  set_collecting(false);
  int rc = flush("cuptiActivityFlushAll (disable)");
  for (CUpti_ActivityKind k : kKinds) {
    CUptiResult r = g_cupti.cuptiActivityDisable(k);
    if (r != CUPTI_SUCCESS && rc == KZ_RT_OK) rc = fail_cupti(r, "cuptiActivityDisable");
  }
  g_enabled = false;
  return rc;
}

void kz_tr_shutdown(void) {
  (void)kz_tr_disable();
  if (g_marker && g_drv.cuMemFree) g_drv.cuMemFree(g_marker);
  if (g_marker_host && g_drv.cuMemFreeHost) g_drv.cuMemFreeHost(g_marker_host);
  g_marker_host = nullptr;
  if (g_done_event && g_drv.cuEventDestroy) g_drv.cuEventDestroy(g_done_event);
  g_done_event = nullptr;
  g_marker = 0;
  g_kept.size = 0;
}

const char* kz_tr_last_error(void) { return kz::last_error(); }

}  // extern "C"
