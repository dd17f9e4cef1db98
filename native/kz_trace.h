/* kz_trace.h - KernelZero launch trace (C ABI), part of libkz_runtime.so.
 *
 * Records which GPU work a stretch of host code caused, with the CUPTI Activity
 * API: kernels (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which does not serialise
 * kernels), memsets and memcpys; and, when this CUPTI allows it, the dependency
 * records that say which stream waited for which (CUDA_EVENT: event records;
 * SYNCHRONIZATION: stream waits and host synchronisations; STREAM: creation flags).
 * libcupti is dlopen()ed like libcuda: nothing CUDA is linked, and without CUPTI
 * kz_tr_init fails with a message, never a crash.
 *
 * Use (one thread; nothing here is re-entrant):
 *   kz_tr_init(paths, n)     load CUPTI, register the buffer callbacks (once)
 *   kz_tr_enable()           enable the activity kinds (e.g. before CUDA graphs are
 *                            instantiated); records outside a window are discarded
 *   kz_tr_start()            (enables if needed) open a window: earlier records dropped
 *     ... host code that launches GPU work ...
 *   kz_tr_mark(stream)       enqueue the marker (a 4-byte memset of a per-process
 *                            random value) on `stream`: reported as KZ_TR_MARKER
 *     ... synchronise the device (the caller's job) ...
 *   kz_tr_stop(&n, &dropped) flush, close the window, keep its n records
 *   kz_tr_dependencies()     "" if the dependency records were collected, else why not
 *   kz_tr_read(out, cap, &k) copy the kept records
 *   kz_tr_disable()          disable the activity kinds (before timing)
 *   kz_tr_shutdown()         disable, free the marker buffer, forget records
 * The library is never dlclose()d and cuptiFinalize is never called (CUPTI stays
 * attached, idle, until the process exits).
 *
 * Errors: int functions return 0 (KZ_RT_OK) or a negative code; kz_tr_last_error()
 * (the same thread-local text as kz_rt_last_error) says why.
 */
#ifndef KZ_TRACE_H
#define KZ_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KZ_TR_NO_CUPTI (-8)     /* no usable libcupti (missing, too old, symbols) */
#define KZ_TR_CUPTI_ERROR (-9)  /* a CUPTI call failed; the message has its text */

#define KZ_TR_KERNEL 1
#define KZ_TR_MEMSET 2
#define KZ_TR_MEMCPY 3
#define KZ_TR_MARKER 4 /* the memset enqueued by kz_tr_mark */
/* Dependency records (only while kz_tr_dependencies() is ""): */
#define KZ_TR_EVENT_RECORD 5 /* cu/cudaEventRecord: stream_id, event_id, event_sync_id */
#define KZ_TR_SYNC 6         /* a synchronisation API call; detail: its type
                                (CUpti_ActivitySynchronizationType: 1 event synchronize,
                                2 stream wait event, 3 stream synchronize, 4 context
                                synchronize); stream_id: the waiting / synchronised
                                stream, event_id: the event (KZ_TR_NO_ID if none) */
#define KZ_TR_STREAM 7       /* a stream created since kz_tr_enable; detail: its
                                CUpti_ActivityStreamFlag (1 blocking, 2 non-blocking).
                                kz_tr_stop appends every stream known so far to each
                                window, whenever it was created */
#define KZ_TR_NO_ID 0xFFFFFFFFu /* CUPTI_SYNCHRONIZATION_INVALID_VALUE */

#define KZ_TR_NAME_LEN 512
#define KZ_TR_MIN_CUPTI_VERSION 130000u /* record layouts of the CUDA 13 headers */
#define KZ_TR_RECORD_VERSION 2 /* 2: event_id, detail, event_sync_id added (64-byte head) */

/* One activity record. Timestamps are CUPTI's (ns, one clock for all records). */
typedef struct kz_tr_record {
  int32_t kind;            /* KZ_TR_KERNEL .. KZ_TR_STREAM */
  uint32_t stream_id;      /* CUPTI stream id (see kz_tr_stream_id) */
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t bytes;          /* memset/memcpy size; 0 for kernels */
  uint32_t graph_id;       /* nonzero when launched as part of a CUDA graph */
  uint32_t correlation_id; /* links the record to its launching API call */
  uint32_t device_id;
  uint32_t context_id;
  uint32_t event_id;       /* KZ_TR_EVENT_RECORD, KZ_TR_SYNC: CUPTI's id of the CUDA event
                              (the same for every record of one event); 0 otherwise */
  uint32_t detail;         /* KZ_TR_SYNC: the type; KZ_TR_STREAM: the flag; 0 otherwise */
  uint64_t event_sync_id;  /* KZ_TR_EVENT_RECORD, KZ_TR_SYNC: cudaEventSyncId, which links
                              a wait / event synchronize to the one event record it
                              waited for (KZ_TR_NO_ID or 0 when not applicable) */
  /* Kernels: the demangled name (abi::__cxa_demangle; the raw name if it does not
   * demangle, e.g. Triton kernels), cut to KZ_TR_NAME_LEN-1 bytes. Memsets: "memset";
   * memcpys: "memcpy HtoD" etc.; the marker: "kz marker"; dependency records: "event
   * record", "stream wait event", "event synchronize", "stream synchronize", "context
   * synchronize", "sync", "stream". Always NUL-terminated. */
  char name[KZ_TR_NAME_LEN];
} kz_tr_record;

/* Loads CUPTI: a libcupti already in the process (dlopen RTLD_NOLOAD of
 * libcupti.so.13 / libcupti.so, e.g. the one PyTorch links), else each of the n_paths
 * explicit paths in order, else dlopen("libcupti.so.13"), dlopen("libcupti.so").
 * Needs cuptiGetVersion >= KZ_TR_MIN_CUPTI_VERSION. paths may be NULL when n_paths
 * is 0. Fails with KZ_TR_NO_CUPTI and a message starting "no CUPTI: " that lists
 * what was tried. A second call after success is a no-op. */
int kz_tr_init(const char* const* paths, int n_paths);

/* The path of the loaded libcupti ("" before kz_tr_init succeeds). Never NULL. */
const char* kz_tr_library(void);

/* cuptiGetVersion of the loaded libcupti, 0 before kz_tr_init succeeds. */
uint32_t kz_tr_version(void);

/* Enables kernel, memset and memcpy activity (idempotent). On failure the kinds
 * enabled so far are disabled again. Then tries the dependency kinds (SYNCHRONIZATION,
 * CUDA_EVENT, STREAM) as a group: if one cannot be enabled, none is, and
 * kz_tr_dependencies() says why; that is not a failure of kz_tr_enable. */
int kz_tr_enable(void);

/* "" while the dependency kinds are enabled (kz_tr_enable succeeded with them), else why
 * not, e.g. "cuptiActivityEnable(SYNCHRONIZATION) failed: ..." or "not enabled". Never
 * NULL. */
const char* kz_tr_dependencies(void);

/* sizeof(kz_tr_record) of this library (bindings check it against their own copy). */
uint32_t kz_tr_record_size(void);

/* Enables if needed, allocates the marker buffer if it can (see kz_tr_mark),
 * flushes and drops every record so far, opens a window. */
int kz_tr_start(void);

/* Enqueues the marker memset on `stream` (a CUstream handle; 0 = the legacy
 * default stream). Its 4-byte buffer is allocated in the current CUDA context when a
 * window opens (kz_tr_start; the driver is loaded as kz_rt_probe does), or here if that
 * failed. Needs an open window. */
int kz_tr_mark(uintptr_t stream);

/* The 32-bit value kz_tr_mark writes (random per process; for tests). */
uint32_t kz_tr_marker_value(void);

/* Flushes (forced: the caller has synchronised), closes the window and keeps its
 * records, then one KZ_TR_STREAM record per stream created since kz_tr_enable (at most
 * 1024): *count gets their number, *dropped (may be NULL) the records CUPTI or the
 * runtime dropped in the window (no buffer, > 65536 records). */
int kz_tr_stop(int* count, uint64_t* dropped);

/* Copies up to `capacity` kept records into out; *copied gets how many. */
int kz_tr_read(kz_tr_record* out, int capacity, int* copied);

/* CUPTI's id of `stream` (cuptiGetStreamIdEx, context NULL, not per-thread). CUPTI refuses
 * the NULL (legacy) stream here (KZ_TR_CUPTI_ERROR on the H200): name it by a marker's
 * stream id instead. */
int kz_tr_stream_id(uintptr_t stream, uint32_t* id);

/* Disables the activity kinds after a flush; records are discarded. */
int kz_tr_disable(void);

/* kz_tr_disable, frees the marker buffer, forgets kept records. Safe anytime. */
void kz_tr_shutdown(void);

/* Message of the last failure on this thread ("" if none). Never NULL. */
const char* kz_tr_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* KZ_TRACE_H */
