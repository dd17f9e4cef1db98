// kz_driver.h - internal to libkz_runtime: the dlopen()ed CUDA driver and the
// thread-local error message. Not part of the public ABI (see kz_runtime.h).
#pragma once

#include <cuda.h>

// The per-thread default stream would turn stream 0 and the dlsym names into the
// _ptsz variants; the runtime must time on the legacy default stream.
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "kz_runtime must use the legacy default stream; do not build it per-thread"
#endif

namespace kz {

// Every driver function the runtime calls. The X-macro keeps the member type,
// the member name and the dlsym name in one place; KZ_STR expands cuda.h's
// version macros first (cuMemAlloc -> "cuMemAlloc_v2").
#define KZ_STR2(x) #x
#define KZ_STR(x) KZ_STR2(x)
#define KZ_DRIVER_FNS(X)                                                      \
  X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)             \
  X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain)                         \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize)         \
  X(cuMemAlloc) X(cuMemAllocHost) X(cuMemFreeHost) X(cuMemcpyHtoDAsync) X(cuMemFree) X(cuMemsetD32Async) X(cuEventCreate)             \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventElapsedTime) X(cuGetErrorString) \
  X(cuGetErrorName)

struct Driver {
  void* handle = nullptr;
#define KZ_FIELD(f) decltype(&::f) f = nullptr;
  KZ_DRIVER_FNS(KZ_FIELD)
#undef KZ_FIELD
};

// All members are non-null once driver_ready() has returned 0.
extern Driver g_drv;

// Loads libcuda.so.1 (once per process), runs cuInit and counts devices.
// Returns 0 (count stored if non-null), KZ_RT_NO_DRIVER or KZ_RT_NO_DEVICE with a
// message starting "no CUDA driver" / "no CUDA device".
int driver_ready(int* count);

// "text (NAME, code)" for r; the pointer is thread-local, valid until next call.
const char* cuda_text(CUresult r);

// The thread-local message behind kz_rt_last_error().
void set_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void clear_error();
const char* last_error();

}  // namespace kz
