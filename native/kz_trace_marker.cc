// kz_trace_marker.cc - the marker (kz_tr_mark) of kz_trace.h:
// GPU work the tracer itself enqueues on the caller's stream right after forward
// returns, whose records anchor the timing side of trace.side_stream.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "kz_cupti.h"
#include "kz_driver.h"
#include "kz_runtime.h"
#include "kz_trace.h"
#include "kz_trace_state.h"

using kz::g_cupti;
using kz::g_drv;
using kz::set_error;

namespace kz::tr {

uint32_t g_marker_value = 0;

namespace {
CUdeviceptr g_marker = 0;        // 8 bytes: [0] the memset marker, [4] the copy marker
void* g_marker_host = nullptr;   // 4 pinned bytes, source of the copy marker
}  // namespace

// Allocates the marker's buffers in the current context (once). Done when a window
// opens, not at the mark: an allocation may synchronise, which would let unjoined work
// finish before the marker is enqueued.
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

void free_markers() {
  if (g_marker && g_drv.cuMemFree) g_drv.cuMemFree(g_marker);
  if (g_marker_host && g_drv.cuMemFreeHost) g_drv.cuMemFreeHost(g_marker_host);
  g_marker = 0;
  g_marker_host = nullptr;
}

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

}  // namespace kz::tr

using namespace kz::tr;

extern "C" {

uint32_t kz_tr_marker_value(void) { return g_marker_value; }

int kz_tr_mark(uintptr_t stream) {
  kz::clear_error();
  if (int rc = need_ready("kz_tr_mark")) return rc;
  if (!window_open()) {
    set_error("kz_tr_mark: no open window (call kz_tr_start first)");
    return KZ_RT_BAD_ARGUMENT;
  }
  if (int rc = ensure_marker_buffer()) return rc;
  // First a 4-byte copy from pinned memory: a copy engine runs it, not an SM, so it
  // starts as soon as the stream is free even while another stream's kernel holds
  // every SM; its start, on the GPU clock of the records, says when the caller's
  // stream was done. Then the memset, whose value identifies the marker's stream.
  // (Both can still be queued behind another stream's work on a shared hardware queue:
  // the dependency records, not these times, decide joins where CUPTI has them.)
  const auto s = reinterpret_cast<CUstream>(stream);
  CUresult r = g_drv.cuMemcpyHtoDAsync(g_marker + 4, g_marker_host, 4, s);
  if (r == CUDA_SUCCESS) r = g_drv.cuMemsetD32Async(g_marker, g_marker_value, 1, s);
  if (r != CUDA_SUCCESS) {
    set_error("kz_tr_mark: cuMemsetD32Async failed: %s", kz::cuda_text(r));
    return KZ_RT_CUDA_ERROR;
  }
  return KZ_RT_OK;
}

}  // extern "C"
