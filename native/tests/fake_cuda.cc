// fake_cuda.cc - a host-only stand-in for libcuda.so.1, for testing the runtime's
// control flow on machines without a GPU (ctest native_runtime_gpu_fake, and the
// Python tests through KZ_TEST_FAKE_CUDA_DIR). Events are host timestamps taken
// at cuEventRecord; all work is synchronous. Defining the functions under
// cuda.h's names exports the same versioned symbols the real driver has.
// KZ_FAKE_CUDA_FAIL_RECORD=N makes the Nth cuEventRecord (1-based) fail with
// CUDA_ERROR_ILLEGAL_ADDRESS.
#include <cuda.h>
#include <time.h>

#include <cstdlib>
#include <cstring>

namespace {

struct FakeEvent {
  double ms = -1.0;
};

int g_records = 0;
int g_ctx_token = 0;

double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int* n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "KZ Fake GPU", static_cast<size_t>(len));
  name[len - 1] = '\0';
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(&g_ctx_token);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }
CUresult cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  *p = reinterpret_cast<CUdeviceptr>(std::malloc(bytes ? bytes : 1));
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFree(CUdeviceptr p) {
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream) {
  auto* words = reinterpret_cast<unsigned int*>(p);
  for (size_t i = 0; i < n; i += 4096) words[i] = v;  // touch, cheaply
  return CUDA_SUCCESS;
}
CUresult cuMemAllocHost(void** p, size_t bytes) {
  *p = std::malloc(bytes ? bytes : 1);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void* p) {
  std::free(p);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes, CUstream) {
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent* e, unsigned int) {
  *e = reinterpret_cast<CUevent>(new FakeEvent);
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) {
  delete reinterpret_cast<FakeEvent*>(e);
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream) {
  const char* fail = std::getenv("KZ_FAKE_CUDA_FAIL_RECORD");
  if (fail && ++g_records == std::atoi(fail)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  reinterpret_cast<FakeEvent*>(e)->ms = now_ms();
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  auto* s = reinterpret_cast<FakeEvent*>(start);
  auto* t = reinterpret_cast<FakeEvent*>(end);
  if (s->ms < 0 || t->ms < 0) return CUDA_ERROR_NOT_READY;
  *ms = static_cast<float>(t->ms - s->ms);
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered"
                                       : "fake CUDA error";
  return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}

}  // extern "C"
