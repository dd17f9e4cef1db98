// kz_driver.cc - driver loading and error text for libkz_runtime (kz_driver.h).
#include "kz_driver.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kz_runtime.h"

// Bind dlopen/dlsym/dlerror to their original x86-64 version: glibc >= 2.34 keeps
// it as a compat alias in libc.so.6, older glibc has it in libdl.so.2 (NEEDED, see
// CMakeLists.txt). Without this the library would require GLIBC_2.34.
#if defined(__x86_64__) && defined(__GLIBC__)
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlerror,dlerror@GLIBC_2.2.5");
#endif

namespace kz {

Driver g_drv;

namespace {

constexpr const char* kDriverLib = "libcuda.so.1";
thread_local char g_err[2048];

// dlsym; drivers older than 12.8 only have the unversioned cuEventElapsedTime.
void* lookup(void* h, const char* name) {
  void* p = dlsym(h, name);
  if (!p && std::strcmp(name, "cuEventElapsedTime_v2") == 0)
    p = dlsym(h, "cuEventElapsedTime");
  return p;
}

// dlopen + dlsym once per process. Returns 0 or KZ_RT_NO_DRIVER.
int load_driver() {
  if (g_drv.handle) return KZ_RT_OK;
  void* h = dlopen(kDriverLib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    set_error("no CUDA driver: dlopen(%s) failed: %s", kDriverLib, why ? why : "?");
    return KZ_RT_NO_DRIVER;
  }
  Driver d;
  d.handle = h;
#define KZ_LOAD(f)                                                    \
  d.f = reinterpret_cast<decltype(d.f)>(lookup(h, KZ_STR(f)));        \
  if (!d.f) {                                                         \
    set_error("no CUDA driver: %s lacks symbol %s (driver too old?)", \
              kDriverLib, KZ_STR(f));                                 \
    return KZ_RT_NO_DRIVER;                                           \
  }
  KZ_DRIVER_FNS(KZ_LOAD)
#undef KZ_LOAD
  g_drv = d;  // the handle is deliberately never dlclose()d
  return KZ_RT_OK;
}

}  // namespace

void set_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof g_err, fmt, ap);
  va_end(ap);
}

void clear_error() { g_err[0] = '\0'; }

const char* last_error() { return g_err; }

// "text (NAME, code)"; works even when the driver cannot describe the code.
const char* cuda_text(CUresult r) {
  thread_local char buf[512];
  const char* text = nullptr;
  const char* name = nullptr;
  if (g_drv.cuGetErrorString && g_drv.cuGetErrorString(r, &text) != CUDA_SUCCESS)
    text = nullptr;
  if (g_drv.cuGetErrorName && g_drv.cuGetErrorName(r, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (!name) {  // e.g. the stub library cannot name its own codes
    if (r == CUDA_ERROR_STUB_LIBRARY) name = "CUDA_ERROR_STUB_LIBRARY";
    if (r == CUDA_ERROR_NO_DEVICE) name = "CUDA_ERROR_NO_DEVICE";
  }
  snprintf(buf, sizeof buf, "%s (%s, %d)", text ? text : "unknown CUDA error",
           name ? name : "?", static_cast<int>(r));
  return buf;
}

// Driver loaded, cuInit done, >= 1 device. Classifies failures for callers.
int driver_ready(int* count) {
  if (int rc = load_driver()) return rc;
  const char* cvd = getenv("CUDA_VISIBLE_DEVICES");
  CUresult r = g_drv.cuInit(0);
  if (r == CUDA_ERROR_STUB_LIBRARY) {
    set_error("no CUDA driver: %s is the CUDA toolkit stub, not a real driver (cuInit: %s)",
              kDriverLib, cuda_text(r));
    return KZ_RT_NO_DRIVER;
  }
  if (r == CUDA_ERROR_NO_DEVICE) {
    set_error("no CUDA device: cuInit found none (CUDA_VISIBLE_DEVICES=%s): %s",
              cvd ? cvd : "<unset>", cuda_text(r));
    return KZ_RT_NO_DEVICE;
  }
  if (r != CUDA_SUCCESS) {
    set_error("no CUDA driver: cuInit failed: %s", cuda_text(r));
    return KZ_RT_NO_DRIVER;
  }
  int n = 0;
  r = g_drv.cuDeviceGetCount(&n);
  if (r != CUDA_SUCCESS || n <= 0) {
    set_error("no CUDA device: cuDeviceGetCount gave %d (CUDA_VISIBLE_DEVICES=%s)%s%s", n,
              cvd ? cvd : "<unset>", r ? ": " : "", r ? cuda_text(r) : "");
    return KZ_RT_NO_DEVICE;
  }
  if (count) *count = n;
  return KZ_RT_OK;
}

}  // namespace kz
