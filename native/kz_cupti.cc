// kz_cupti.cc - CUPTI loading and record conversion for the trace (kz_cupti.h).
// C-style on purpose: std::string and friends would pull in the C++ exception
// runtime, whose static unwinder needs GLIBC_2.35 symbols.
#include "kz_cupti.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kz_driver.h"
#include "kz_runtime.h"

// As in kz_driver.cc: bind the dl* functions to their oldest x86-64 versions so the
// library does not require GLIBC_2.34.
#if defined(__x86_64__) && defined(__GLIBC__)
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlerror,dlerror@GLIBC_2.2.5");
__asm__(".symver dladdr,dladdr@GLIBC_2.2.5");
#endif

namespace kz {

Cupti g_cupti;

namespace {

// What load_cupti tried, for its failure message.
struct Tried {
  char text[1800] = {0};
  void add(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    size_t used = std::strlen(text);
    if (used + 1 >= sizeof text) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + used, sizeof text - used, fmt, ap);
    va_end(ap);
  }
};

// Binds every KZ_CUPTI_FNS symbol of h into *c; on a missing one returns its name.
const char* bind_symbols(void* h, Cupti* c) {
#define KZ_CUPTI_BIND(f)                                     \
  c->f = reinterpret_cast<decltype(c->f)>(dlsym(h, #f));     \
  if (!c->f) return #f;
  KZ_CUPTI_FNS(KZ_CUPTI_BIND)
#undef KZ_CUPTI_BIND
  return nullptr;
}

// Takes handle h (opened as `how`) if its symbols and version fit; else notes why
// not in *tried and returns false. The handle is never dlclose()d.
bool adopt(void* h, const char* how, Tried* tried) {
  Cupti c;
  if (const char* missing = bind_symbols(h, &c)) {
    tried->add("%s: lacks %s; ", how, missing);
    return false;
  }
  uint32_t version = 0;
  if (c.cuptiGetVersion(&version) != CUPTI_SUCCESS || version < KZ_TR_MIN_CUPTI_VERSION) {
    tried->add("%s: CUPTI API version %u, need >= %u (CUDA 13); ", how, version,
               KZ_TR_MIN_CUPTI_VERSION);
    return false;
  }
  Dl_info info{};
  const bool found = dladdr(reinterpret_cast<void*>(c.cuptiGetVersion), &info) && info.dli_fname;
  snprintf(c.path, sizeof c.path, "%s", found ? info.dli_fname : how);
  c.handle = h;
  c.version = version;
  g_cupti = c;
  return true;
}

bool try_open(const char* name, Tried* tried) {
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    tried->add("%s: %s; ", name, why ? why : "?");
    return false;
  }
  return adopt(h, name, tried);
}

int fail(Tried* tried) {
  size_t n = std::strlen(tried->text);
  if (n >= 2) tried->text[n - 2] = '\0';  // the last "; "
  set_error("no CUPTI: %s", tried->text);
  return KZ_TR_NO_CUPTI;
}

// Copies the demangled form of `name` (as is if it is not an Itanium C++ name, e.g.
// a Triton kernel) into r->name, cut to fit.
void set_name(kz_tr_record* r, const char* name) {
  char* d = nullptr;
  if (std::strncmp(name, "_Z", 2) == 0) {
    int status = 0;
    d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status != 0) d = nullptr;
  }
  snprintf(r->name, sizeof r->name, "%s", d ? d : name);
  std::free(d);
}

const char* copy_kind(uint8_t k) {
  static const char* const names[] = {"memcpy", "memcpy HtoD", "memcpy DtoH", "memcpy HtoA",
                                      "memcpy AtoH", "memcpy AtoA", "memcpy AtoD",
                                      "memcpy DtoA", "memcpy DtoD", "memcpy HtoH",
                                      "memcpy PtoP"};
  return k < sizeof names / sizeof names[0] ? names[k] : "memcpy";
}

}  // namespace

int load_cupti(const char* const* paths, int n_paths) {
  if (g_cupti.handle) return KZ_RT_OK;
  Tried tried;
  // A CUPTI already in the process (PyTorch links libcupti.so.13) must be the one
  // used, or none: a second copy would attach to the driver a second time.
  static const char* const kSonames[] = {"libcupti.so.13", "libcupti.so"};
  for (const char* name : kSonames) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      char how[64];
      snprintf(how, sizeof how, "%s (already loaded)", name);
      return adopt(h, how, &tried) ? KZ_RT_OK : fail(&tried);
    }
  }
  for (int i = 0; i < n_paths; ++i)
    if (paths && paths[i] && *paths[i] && try_open(paths[i], &tried)) return KZ_RT_OK;
  for (const char* name : kSonames)
    if (try_open(name, &tried)) return KZ_RT_OK;
  return fail(&tried);
}

const char* cupti_text(CUptiResult r) {
  thread_local char buf[256];
  const char* text = nullptr;
  if (!g_cupti.cuptiGetResultString || g_cupti.cuptiGetResultString(r, &text) != CUPTI_SUCCESS)
    text = nullptr;
  snprintf(buf, sizeof buf, "%s (%d)", text ? text : "unknown CUPTI error",
           static_cast<int>(r));
  return buf;
}

namespace {

// The fields every record has; the rest stay 0 (name "").
kz_tr_record head(int32_t kind, uint32_t stream, uint64_t start, uint64_t end,
                  uint32_t correlation, uint32_t device, uint32_t context) {
  kz_tr_record r{};
  r.kind = kind;
  r.stream_id = stream;
  r.start_ns = start;
  r.end_ns = end;
  r.correlation_id = correlation;
  r.device_id = device;
  r.context_id = context;
  return r;
}

const char* sync_name(uint32_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "event synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "stream synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "context synchronize";
    default: return "sync";
  }
}

// The dependency kinds: event records, synchronisations, stream creations.
bool convert_dependency(const CUpti_Activity* a, kz_tr_record* out) {
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
      const auto* e = reinterpret_cast<const CUpti_ActivityCudaEvent2*>(a);
      *out = head(KZ_TR_EVENT_RECORD, e->streamId, 0, 0, e->correlationId, e->deviceId,
                  e->contextId);
      out->event_id = e->eventId;
      out->event_sync_id = e->cudaEventSyncId;
      set_name(out, "event record");
      return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(a);
      *out = head(KZ_TR_SYNC, s->streamId, s->start, s->end, s->correlationId, 0, s->contextId);
      out->event_id = s->cudaEventId;
      out->event_sync_id = s->cudaEventSyncId;
      out->detail = static_cast<uint32_t>(s->type);
      set_name(out, sync_name(out->detail));
      return true;
    }
    case CUPTI_ACTIVITY_KIND_STREAM: {
      const auto* s = reinterpret_cast<const CUpti_ActivityStream*>(a);
      *out = head(KZ_TR_STREAM, s->streamId, 0, 0, s->correlationId, 0, s->contextId);
      out->detail = static_cast<uint32_t>(s->flag);
      set_name(out, "stream");
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

bool convert_record(const CUpti_Activity* a, uint32_t marker_value, kz_tr_record* out) {
  *out = kz_tr_record{};
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
      *out = head(KZ_TR_KERNEL, k->streamId, k->start, k->end, k->correlationId, k->deviceId,
                  k->contextId);
      out->graph_id = k->graphId;
      set_name(out, k->name ? k->name : "?");
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
      const bool marker = m->value == marker_value && m->bytes == 4;
      *out = head(marker ? KZ_TR_MARKER : KZ_TR_MEMSET, m->streamId, m->start, m->end,
                  m->correlationId, m->deviceId, m->contextId);
      out->bytes = m->bytes;
      out->graph_id = m->graphId;
      set_name(out, marker ? "kz marker" : "memset");
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(a);
      *out = head(KZ_TR_MEMCPY, m->streamId, m->start, m->end, m->correlationId, m->deviceId,
                  m->contextId);
      out->bytes = m->bytes;
      out->graph_id = m->graphId;
      set_name(out, copy_kind(m->copyKind));
      return true;
    }
    default:
      return convert_dependency(a, out);
  }
}

}  // namespace kz
