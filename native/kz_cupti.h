// kz_cupti.h - internal to libkz_runtime: the dlopen()ed CUPTI library and the
// conversion of its activity records to kz_tr_record. Not part of the public ABI
// (see kz_trace.h).
#pragma once

#include <cupti_activity.h>
#include <cupti_version.h>

#include <limits.h>

#include <cstdint>

#include "kz_trace.h"

namespace kz {

// Every CUPTI function the trace calls (member name == dlsym name).
#define KZ_CUPTI_FNS(X)                                                          \
  X(cuptiGetVersion) X(cuptiGetResultString) X(cuptiActivityRegisterCallbacks)   \
  X(cuptiActivityEnable) X(cuptiActivityDisable) X(cuptiActivityFlushAll)        \
  X(cuptiActivityGetNextRecord) X(cuptiActivityGetNumDroppedRecords)             \
  X(cuptiGetStreamIdEx)

struct Cupti {
  void* handle = nullptr;
  char path[PATH_MAX] = {0};  // the file the handle came from
  uint32_t version = 0;
#define KZ_CUPTI_FIELD(f) decltype(&::f) f = nullptr;
  KZ_CUPTI_FNS(KZ_CUPTI_FIELD)
#undef KZ_CUPTI_FIELD
};

// All members are set once load_cupti() has returned 0.
extern Cupti g_cupti;

// Loads CUPTI in the order of kz_tr_init (kz_trace.h), once per process.
// Returns 0 or KZ_TR_NO_CUPTI with a "no CUPTI: ..." message.
int load_cupti(const char* const* paths, int n_paths);

// "CUPTI_ERROR_... (code)" text of r; thread-local, valid until the next call.
const char* cupti_text(CUptiResult r);

// Fills *out from a kernel, memset or memcpy record (a memset of 4 bytes of
// marker_value becomes KZ_TR_MARKER), or from a dependency record (CUDA_EVENT ->
// KZ_TR_EVENT_RECORD, SYNCHRONIZATION -> KZ_TR_SYNC, STREAM -> KZ_TR_STREAM; the CUDA 13
// structs CUpti_ActivityCudaEvent2, CUpti_ActivitySynchronization2,
// CUpti_ActivityStream). Returns false for any other kind.
// Plain C-style code throughout (no exceptions, no std containers): the library must
// not need a newer glibc than its build host's oldest targets (see CMakeLists.txt).
bool convert_record(const CUpti_Activity* a, uint32_t marker_value, kz_tr_record* out);

}  // namespace kz
