// fake_cupti.cc - a host-only stand-in for libcupti.so.13, for testing the trace's
// control flow and record conversion without a GPU (ctest native_trace_fake*, and
// the Python tests through KZ_TEST_FAKE_CUPTI). Records are scripted by the test
// through kz_fake_cupti_push and delivered, as the real CUPTI 13 structs, by the
// next cuptiActivityFlushAll when their kind is enabled.
//   KZ_FAKE_CUPTI_VERSION=N   cuptiGetVersion reports N (default 130001)
//   KZ_FAKE_CUPTI_FAIL_ENABLE=1  cuptiActivityEnable fails (CUPTI_ERROR_NOT_INITIALIZED)
//   KZ_FAKE_CUPTI_DROPPED=N   each flush reports N dropped records
//   KZ_FAKE_CUPTI_NO_DEPS=1   enabling CUDA_EVENT fails (CUPTI_ERROR_NOT_COMPATIBLE): the
//                             dependency kinds are unavailable, the others work
// Dependency records (CUDA_EVENT, SYNCHRONIZATION, STREAM) are scripted through
// kz_fake_cupti_push_dep. Every record gets the next correlation id, in push order.
#include <cupti_activity.h>
#include <cupti_version.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Scripted {
  CUpti_ActivityKind kind;
  const char* name;  // kernels (leaked copy, valid for the process)
  uint32_t stream, graph, value;
  uint64_t start, end, bytes;
  uint32_t event_id = 0, detail = 0;  // dependency records
  uint64_t sync_id = 0;
};

CUpti_BuffersCallbackRequestFunc g_request = nullptr;
CUpti_BuffersCallbackCompleteFunc g_complete = nullptr;
std::vector<Scripted> g_queue;
bool g_enabled[64] = {};
uint32_t g_correlation = 0;

size_t record_size(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_STREAM: return sizeof(CUpti_ActivityStream);
    default: return 0;
  }
}

// Event records, synchronisations and stream creations (CUDA 13 structs).
void write_dependency(const Scripted& s, uint8_t* at) {
  if (s.kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT) {
    CUpti_ActivityCudaEvent2 e{};
    e.kind = s.kind; e.streamId = s.stream; e.eventId = s.event_id;
    e.cudaEventSyncId = s.sync_id; e.contextId = 1; e.correlationId = ++g_correlation;
    std::memcpy(at, &e, sizeof e);
  } else if (s.kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) {
    CUpti_ActivitySynchronization2 y{};
    y.kind = s.kind; y.type = static_cast<CUpti_ActivitySynchronizationType>(s.detail);
    y.streamId = s.stream; y.cudaEventId = s.event_id; y.cudaEventSyncId = s.sync_id;
    y.start = s.start; y.end = s.end; y.contextId = 1; y.correlationId = ++g_correlation;
    std::memcpy(at, &y, sizeof y);
  } else {
    CUpti_ActivityStream t{};
    t.kind = s.kind; t.streamId = s.stream;
    t.flag = static_cast<CUpti_ActivityStreamFlag>(s.detail);
    t.contextId = 1; t.correlationId = ++g_correlation;
    std::memcpy(at, &t, sizeof t);
  }
}

void write_record(const Scripted& s, uint8_t* at) {
  if (s.kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT || s.kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ||
      s.kind == CUPTI_ACTIVITY_KIND_STREAM) {
    write_dependency(s, at);
  } else if (s.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
    CUpti_ActivityKernel10 k{};
    k.kind = s.kind; k.start = s.start; k.end = s.end; k.streamId = s.stream;
    k.graphId = s.graph; k.name = s.name; k.correlationId = ++g_correlation;
    std::memcpy(at, &k, sizeof k);
  } else if (s.kind == CUPTI_ACTIVITY_KIND_MEMSET) {
    CUpti_ActivityMemset4 m{};
    m.kind = s.kind; m.start = s.start; m.end = s.end; m.streamId = s.stream;
    m.value = s.value; m.bytes = s.bytes; m.correlationId = ++g_correlation;
    std::memcpy(at, &m, sizeof m);
  } else {
    CUpti_ActivityMemcpy6 m{};
    m.kind = s.kind; m.start = s.start; m.end = s.end; m.streamId = s.stream;
    m.bytes = s.bytes; m.copyKind = static_cast<uint8_t>(s.value);
    m.correlationId = ++g_correlation;
    std::memcpy(at, &m, sizeof m);
  }
}

}  // namespace

extern "C" {

// Test hook: queue one record. kind: 1 kernel, 2 memset, 3 memcpy (as KZ_TR_*);
// value: the memset value or the memcpy CUpti_ActivityMemcpyKind.
void kz_fake_cupti_push(int kind, const char* name, uint32_t stream, uint64_t start,
                        uint64_t end, uint32_t value, uint64_t bytes, uint32_t graph) {
  const CUpti_ActivityKind k = kind == 1   ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                               : kind == 2 ? CUPTI_ACTIVITY_KIND_MEMSET
                                           : CUPTI_ACTIVITY_KIND_MEMCPY;
  g_queue.push_back({k, name ? strdup(name) : nullptr, stream, graph, value, start, end, bytes});
}

// Test hook: queue one dependency record. kind: 5 event record (CUDA_EVENT), 6
// synchronisation (detail: its CUpti_ActivitySynchronizationType), 7 stream creation
// (detail: its CUpti_ActivityStreamFlag), as KZ_TR_*.
void kz_fake_cupti_push_dep(int kind, uint32_t stream, uint32_t event_id, uint32_t detail,
                            uint64_t sync_id) {
  const CUpti_ActivityKind k = kind == 5   ? CUPTI_ACTIVITY_KIND_CUDA_EVENT
                               : kind == 6 ? CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
                                           : CUPTI_ACTIVITY_KIND_STREAM;
  Scripted s{k, nullptr, stream, 0, 0, 0, 0, 0};
  s.event_id = event_id;
  s.detail = detail;
  s.sync_id = sync_id;
  g_queue.push_back(s);
}

// Test hook: 1 if activity kind `kind` (a CUpti_ActivityKind) is enabled.
int kz_fake_cupti_enabled(int kind) { return kind >= 0 && kind < 64 && g_enabled[kind]; }

CUptiResult cuptiGetVersion(uint32_t* version) {
  const char* v = std::getenv("KZ_FAKE_CUPTI_VERSION");
  *version = v ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : 130001u;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char** str) {
  *str = r == CUPTI_ERROR_NOT_INITIALIZED  ? "CUPTI_ERROR_NOT_INITIALIZED (fake)"
         : r == CUPTI_ERROR_NOT_COMPATIBLE ? "CUPTI_ERROR_NOT_COMPATIBLE (fake)"
                                           : "fake error";
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete) {
  g_request = request;
  g_complete = complete;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (std::getenv("KZ_FAKE_CUPTI_FAIL_ENABLE") && kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
    return CUPTI_ERROR_NOT_INITIALIZED;  // fail on the second kind: tests the rollback
  if (std::getenv("KZ_FAKE_CUPTI_NO_DEPS") && kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT)
    return CUPTI_ERROR_NOT_COMPATIBLE;  // the second dependency kind: tests the rollback
  g_enabled[kind] = true;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  g_enabled[kind] = false;
  return CUPTI_SUCCESS;
}

// Delivers the queued records of enabled kinds in one buffer; drops the others.
CUptiResult cuptiActivityFlushAll(uint32_t) {
  if (!g_request || !g_complete) return CUPTI_ERROR_INVALID_OPERATION;
  if (g_queue.empty()) return CUPTI_SUCCESS;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0, used = 0;
  g_request(&buffer, &size, &max_records);
  for (const Scripted& s : g_queue) {
    const size_t n = record_size(s.kind);
    if (!g_enabled[s.kind] || !buffer || used + n > size) continue;
    write_record(s, buffer + used);
    used += n;
  }
  g_queue.clear();
  g_complete(nullptr, 0, buffer, size, used);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  if (!buffer) return CUPTI_ERROR_INVALID_PARAMETER;
  uint8_t* next = *record ? reinterpret_cast<uint8_t*>(*record) + record_size((*record)->kind)
                          : buffer;
  if (next >= buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  const char* d = std::getenv("KZ_FAKE_CUPTI_DROPPED");
  *dropped = d ? std::strtoul(d, nullptr, 10) : 0;
  return CUPTI_SUCCESS;
}

// The legacy stream (handle 0) is id 7; any other handle h is 100 + (h & 0xffff).
CUptiResult cuptiGetStreamIdEx(CUcontext, CUstream stream, uint8_t, uint32_t* id) {
  const auto h = reinterpret_cast<uintptr_t>(stream);
  *id = h == 0 ? 7u : 100u + static_cast<uint32_t>(h & 0xffff);
  return CUPTI_SUCCESS;
}

}  // extern "C"
