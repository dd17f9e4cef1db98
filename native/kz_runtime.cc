// kz_runtime.cc - implementation of kz_runtime.h (see the header for contracts).
//
// Only <cuda.h>'s types and prototypes are used: every driver entry point comes
// from the dlopen()ed libcuda.so.1 through kz::g_drv (kz_driver.h).
#include "kz_runtime.h"

#include <time.h>

#include <cstdio>
#include <thread>

#include "kz_driver.h"

using kz::cuda_text;
using kz::driver_ready;
using kz::g_drv;
using kz::set_error;

namespace {

struct State {
  bool ready = false;
  int ordinal = -1;
  size_t flush_bytes = 0;
  std::thread::id owner;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUdeviceptr flush = 0;
  CUevent start = nullptr;
  CUevent end = nullptr;
  bool busy = false;  // inside kz_rt_time_calls (re-entrancy guard)
};

constexpr size_t kDefaultFlushBytes = size_t{256} << 20;
const CUstream kStream0 = CU_STREAM_LEGACY;  // == stream 0, PyTorch's default

State g_st;

int fail_cuda(CUresult r, const char* what) {
  set_error("%s failed: %s", what, cuda_text(r));
  return KZ_RT_CUDA_ERROR;
}

// Frees whatever g_st holds; used by shutdown and by a failed init.
void release_state() {
  if (g_st.start) g_drv.cuEventDestroy(g_st.start);
  if (g_st.end) g_drv.cuEventDestroy(g_st.end);
  if (g_st.flush) g_drv.cuMemFree(g_st.flush);
  if (g_st.ctx) g_drv.cuDevicePrimaryCtxRelease(g_st.dev);
  g_st = State{};
}

// Acquires context, buffer and events into g_st (not yet marked ready).
int acquire_state(int ordinal, size_t flush_bytes) {
  int count = 0;
  CUresult r = g_drv.cuDeviceGet(&g_st.dev, ordinal);
  if (r != CUDA_SUCCESS) {
    g_drv.cuDeviceGetCount(&count);
    set_error("no CUDA device: ordinal %d not available (%d visible): %s", ordinal,
              count, cuda_text(r));
    return KZ_RT_NO_DEVICE;
  }
  if ((r = g_drv.cuDevicePrimaryCtxRetain(&g_st.ctx, g_st.dev)) != CUDA_SUCCESS) {
    g_st.ctx = nullptr;
    return fail_cuda(r, "cuDevicePrimaryCtxRetain");
  }
  if ((r = g_drv.cuCtxSetCurrent(g_st.ctx))) return fail_cuda(r, "cuCtxSetCurrent");
  if ((r = g_drv.cuMemAlloc(&g_st.flush, flush_bytes))) {
    g_st.flush = 0;
    set_error("cuMemAlloc of the %zu-byte L2 flush buffer failed: %s", flush_bytes,
              cuda_text(r));
    return KZ_RT_CUDA_ERROR;
  }
  if ((r = g_drv.cuEventCreate(&g_st.start, CU_EVENT_DEFAULT))) {
    g_st.start = nullptr;
    return fail_cuda(r, "cuEventCreate(start)");
  }
  if ((r = g_drv.cuEventCreate(&g_st.end, CU_EVENT_DEFAULT))) {
    g_st.end = nullptr;
    return fail_cuda(r, "cuEventCreate(end)");
  }
  return KZ_RT_OK;
}

// 0 if the runtime is initialised and this is the init thread.
int check_owner(const char* fn) {
  if (!g_st.ready) {
    set_error("%s: runtime not initialised (call kz_rt_init first)", fn);
    return KZ_RT_NOT_INITIALIZED;
  }
  if (std::this_thread::get_id() != g_st.owner) {
    set_error("%s: called from a thread other than the one that called kz_rt_init", fn);
    return KZ_RT_WRONG_THREAD;
  }
  return KZ_RT_OK;
}

double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

#define KZ_TRY(expr, what)                                                   \
  do {                                                                       \
    CUresult r_ = (expr);                                                    \
    if (r_ != CUDA_SUCCESS) {                                                \
      set_error("%s failed at call %d: %s", what, i, cuda_text(r_));         \
      return KZ_RT_CUDA_ERROR;                                               \
    }                                                                        \
  } while (0)

// One timed call i (see kz_rt_time_calls in the header for the sequence).
int time_one(kz_rt_callback cb, void* user, int i, int flush_l2, float* ms, float* host) {
  KZ_TRY(g_drv.cuCtxSynchronize(), "cuCtxSynchronize (before call)");
  if (flush_l2)
    KZ_TRY(g_drv.cuMemsetD32Async(g_st.flush, static_cast<unsigned>(i),
                                  g_st.flush_bytes / 4, kStream0),
           "cuMemsetD32Async (L2 flush)");
  const double t0 = now_ms();
  KZ_TRY(g_drv.cuEventRecord(g_st.start, kStream0), "cuEventRecord(start)");
  if (cb(user) != 0) {
    (void)g_drv.cuCtxSynchronize();  // best effort: leave the device idle
    set_error("callback returned nonzero at call %d", i);
    return KZ_RT_CALLBACK_FAILED;
  }
  KZ_TRY(g_drv.cuEventRecord(g_st.end, kStream0), "cuEventRecord(end)");
  KZ_TRY(g_drv.cuCtxSynchronize(), "cuCtxSynchronize (after call)");
  const double t1 = now_ms();
  KZ_TRY(g_drv.cuEventElapsedTime(ms, g_st.start, g_st.end), "cuEventElapsedTime");
  if (host) *host = static_cast<float>(t1 - t0);
  return KZ_RT_OK;
}

}  // namespace

extern "C" {

int kz_rt_probe(int* device_count) {
  kz::clear_error();
  return driver_ready(device_count);
}

int kz_rt_init(int device_ordinal, size_t flush_bytes) {
  kz::clear_error();
  if (flush_bytes == 0) flush_bytes = kDefaultFlushBytes;
  flush_bytes &= ~size_t{3};
  if (device_ordinal < 0 || flush_bytes == 0) {
    set_error("kz_rt_init: bad argument (device %d, flush_bytes %zu)", device_ordinal,
              flush_bytes);
    return KZ_RT_BAD_ARGUMENT;
  }
  if (g_st.ready) {
    if (g_st.ordinal == device_ordinal && g_st.flush_bytes == flush_bytes &&
        g_st.owner == std::this_thread::get_id())
      return KZ_RT_OK;
    set_error("kz_rt_init: already initialised (device %d, %zu bytes, maybe another "
              "thread); call kz_rt_shutdown first", g_st.ordinal, g_st.flush_bytes);
    return KZ_RT_BAD_ARGUMENT;
  }
  if (int rc = driver_ready(nullptr)) return rc;
  if (int rc = acquire_state(device_ordinal, flush_bytes)) {
    release_state();
    return rc;
  }
  g_st.ready = true;
  g_st.ordinal = device_ordinal;
  g_st.flush_bytes = flush_bytes;
  g_st.owner = std::this_thread::get_id();
  return KZ_RT_OK;
}

int kz_rt_time_calls(kz_rt_callback cb, void* user, int n, int flush_l2, float* out_ms,
                     float* out_host_ms) {
  kz::clear_error();
  if (int rc = check_owner("kz_rt_time_calls")) return rc;
  if (g_st.busy) {
    set_error("kz_rt_time_calls: re-entered from a callback");
    return KZ_RT_BAD_ARGUMENT;
  }
  if (n < 0 || (n > 0 && (!cb || !out_ms))) {
    set_error("kz_rt_time_calls: bad argument (n %d, cb %p, out_ms %p)", n,
              reinterpret_cast<void*>(cb), static_cast<void*>(out_ms));
    return KZ_RT_BAD_ARGUMENT;
  }
  if (CUresult r = g_drv.cuCtxSetCurrent(g_st.ctx)) return fail_cuda(r, "cuCtxSetCurrent");
  g_st.busy = true;
  int rc = KZ_RT_OK;
  for (int i = 0; i < n && rc == KZ_RT_OK; ++i)
    rc = time_one(cb, user, i, flush_l2, &out_ms[i], out_host_ms ? &out_host_ms[i] : nullptr);
  g_st.busy = false;
  return rc;
}

int kz_rt_device_info(char* name, int name_len, int* cc_major, int* cc_minor,
                      int* l2_bytes, int* sm_count) {
  kz::clear_error();
  if (int rc = check_owner("kz_rt_device_info")) return rc;
  if (name && name_len <= 0) {
    set_error("kz_rt_device_info: name_len must be > 0");
    return KZ_RT_BAD_ARGUMENT;
  }
  CUresult r = CUDA_SUCCESS;
  if (name && (r = g_drv.cuDeviceGetName(name, name_len, g_st.dev)))
    return fail_cuda(r, "cuDeviceGetName");
  const struct { int* out; CUdevice_attribute attr; const char* what; } attrs[] = {
      {cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability major"},
      {cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability minor"},
      {l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 cache size"},
      {sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count"}};
  for (const auto& a : attrs) {
    if (a.out && (r = g_drv.cuDeviceGetAttribute(a.out, a.attr, g_st.dev))) {
      set_error("cuDeviceGetAttribute(%s) failed: %s", a.what, cuda_text(r));
      return KZ_RT_CUDA_ERROR;
    }
  }
  return KZ_RT_OK;
}

size_t kz_rt_flush_bytes(void) { return g_st.ready ? g_st.flush_bytes : 0; }

const char* kz_rt_last_error(void) { return kz::last_error(); }

void kz_rt_shutdown(void) {
  kz::clear_error();
  if (!g_st.ready) return;
  if (check_owner("kz_rt_shutdown")) return;  // wrong thread: message set, no-op
  if (g_st.busy) {
    set_error("kz_rt_shutdown: called from a callback; ignored");
    return;
  }
  release_state();
}

}  // extern "C"
