// kz_trace.cc - implementation of kz_trace.h (see the header for contracts).
//
// CUPTI hands records over in buffers (buffer_requested / buffer_completed), on
// the flushing thread or on CUPTI's own thread; records are kept only while a
// window is open. g_rec_mu guards what the callbacks touch; the API itself is
// single-threaded (and never holds g_rec_mu while calling into CUPTI, whose flush
// calls the callbacks synchronously). C-style like kz_cupti.cc (no exceptions, no
// std containers or std::mutex: see there why). The marker lives in
// kz_trace_marker.cc.
#include "kz_trace.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>

#include "kz_cupti.h"
#include "kz_driver.h"
#include "kz_runtime.h"
#include "kz_trace_state.h"

using kz::g_cupti;
using kz::set_error;
using kz::tr::g_marker_value;

static_assert(sizeof(kz_tr_record) == 64 + KZ_TR_NAME_LEN,
              "kz_tr_record layout (version KZ_TR_RECORD_VERSION) is mirrored by kz_worker/trace/stage.py");

namespace {

constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kMaxRecords = size_t{1} << 16;  // per window; more are dropped
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_MEMCPY};
// Optional, as a group (kz_tr_dependencies): which stream waited for which.
constexpr CUpti_ActivityKind kDepKinds[] = {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                            CUPTI_ACTIVITY_KIND_CUDA_EVENT,
                                            CUPTI_ACTIVITY_KIND_STREAM};
constexpr const char* kDepNames[] = {"SYNCHRONIZATION", "CUDA_EVENT", "STREAM"};
constexpr size_t kMaxStreams = 1024;  // creation flags remembered (oldest overwritten)

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
kz_tr_record g_streams[kMaxStreams];  // KZ_TR_STREAM records seen since enable (g_rec_mu)
size_t g_n_streams = 0;               // how many were seen (g_rec_mu)

bool g_ready = false;    // kz_tr_init succeeded
bool g_enabled = false;  // the activity kinds are enabled
bool g_deps = false;     // ... and the dependency kinds too
char g_deps_why[512] = "not enabled (kz_tr_enable not called)";
Records g_kept;          // records of the last closed window

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

// Stream records are kept whenever they come (a stream is usually created before
// the window that uses it); the others only while a window is open.
void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid) {
  Lock lock;
  CUpti_Activity* a = nullptr;
  while (buffer && g_cupti.cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) {
    kz_tr_record r;
    if (a->kind == CUPTI_ACTIVITY_KIND_STREAM && kz::convert_record(a, g_marker_value, &r)) {
      g_streams[g_n_streams++ % kMaxStreams] = r;
      continue;
    }
    if (!g_collecting) continue;
    if (!kz::convert_record(a, g_marker_value, &r)) continue;
    if (g_window.size >= kMaxRecords || !g_window.push(r)) ++g_dropped;
  }
  size_t dropped = 0;
  if (g_collecting && g_cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) ==
                          CUPTI_SUCCESS)
    g_dropped += dropped;
  std::free(buffer);
}

// Delivers every completed record to buffer_completed (forced: the caller synced).
int flush(const char* what) {
  CUptiResult r = g_cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  return r == CUPTI_SUCCESS ? KZ_RT_OK : kz::tr::fail_cupti(r, what);
}

void set_collecting(bool on) {
  Lock lock;
  g_collecting = on;
  if (on) {
    g_window.size = 0;
    g_dropped = 0;
  }
}

// Enables the dependency kinds, all or none; g_deps_why says why not.
void enable_dependencies() {
  const size_t n = sizeof kDepKinds / sizeof kDepKinds[0];
  for (size_t i = 0; i < n; ++i) {
    CUptiResult r = g_cupti.cuptiActivityEnable(kDepKinds[i]);
    if (r != CUPTI_SUCCESS) {
      snprintf(g_deps_why, sizeof g_deps_why, "cuptiActivityEnable(%s) failed: %s",
               kDepNames[i], kz::cupti_text(r));
      while (i-- > 0) g_cupti.cuptiActivityDisable(kDepKinds[i]);
      g_deps = false;
      return;
    }
  }
  g_deps = true;
  g_deps_why[0] = '\0';
}

// Appends every stream record seen so far to the kept window (under g_rec_mu).
void append_streams() {
  const size_t n = g_n_streams < kMaxStreams ? g_n_streams : kMaxStreams;
  for (size_t i = 0; i < n; ++i)
    if (!g_kept.push(g_streams[i])) break;
}

}  // namespace

namespace kz::tr {

bool window_open() {
  Lock lock;
  return g_collecting;
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

}  // namespace kz::tr

using kz::tr::fail_cupti;
using kz::tr::need_ready;

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
  g_marker_value = kz::tr::random_marker();
  g_ready = true;
  return KZ_RT_OK;
}

const char* kz_tr_library(void) { return g_ready ? g_cupti.path : ""; }

uint32_t kz_tr_version(void) { return g_ready ? g_cupti.version : 0; }

const char* kz_tr_dependencies(void) { return g_enabled && g_deps ? "" : g_deps_why; }

uint32_t kz_tr_record_size(void) { return static_cast<uint32_t>(sizeof(kz_tr_record)); }

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
  enable_dependencies();
  g_enabled = true;
  return KZ_RT_OK;
}

int kz_tr_start(void) {
  if (int rc = kz_tr_enable()) return rc;
  (void)kz::tr::ensure_marker_buffer();  // a failure is reported by kz_tr_mark
  kz::clear_error();
  set_collecting(false);
  if (int rc = flush("cuptiActivityFlushAll (start)")) return rc;
  set_collecting(true);
  return KZ_RT_OK;
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
  append_streams();
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
  for (CUpti_ActivityKind k : kDepKinds)
    if (g_deps) (void)g_cupti.cuptiActivityDisable(k);
  g_deps = false;
  snprintf(g_deps_why, sizeof g_deps_why, "not enabled (disabled after the trace)");
  g_enabled = false;
  return rc;
}

void kz_tr_shutdown(void) {
  (void)kz_tr_disable();
  kz::tr::free_markers();
  Lock lock;
  g_kept.size = 0;
  g_n_streams = 0;
}

const char* kz_tr_last_error(void) { return kz::last_error(); }

}  // extern "C"
