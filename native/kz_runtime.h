/* kz_runtime.h - KernelZero native timing runtime (C ABI).
 *
 * libkz_runtime.so times zero-argument callbacks with CUDA events on the legacy
 * default stream (stream 0, PyTorch's default stream). It does not link against
 * libcuda or libcudart: kz_rt_probe/kz_rt_init dlopen("libcuda.so.1") and use only
 * the CUDA driver API, so the library loads on hosts without a GPU.
 *
 * Contracts
 * - Threads: kz_rt_init binds the runtime to the calling thread (it makes the
 *   device's primary context current there). kz_rt_time_calls, kz_rt_device_info
 *   and kz_rt_shutdown must be called from that same thread; other threads get
 *   KZ_RT_WRONG_THREAD. kz_rt_probe and kz_rt_last_error may be called from any
 *   thread. Nothing here is re-entrant: a callback must not call into the runtime.
 * - Context: the runtime retains the device's PRIMARY context, the one PyTorch and
 *   the CUDA runtime use, so work the callback launches through PyTorch lands on
 *   the same context and stream 0 orders with it.
 * - Ownership: the runtime owns the L2-flush buffer and its two events (created
 *   by kz_rt_init, freed by kz_rt_shutdown). All pointers passed in stay owned by
 *   the caller and are only used for the duration of the call.
 * - Errors: every int function returns 0 on success or a negative KZ_RT_* code;
 *   kz_rt_last_error() then describes the failure. Its pointer is thread-local and
 *   stays valid until the next runtime call on the same thread.
 * - The driver library is never dlclose()d (other users, e.g. PyTorch, share it).
 */
#ifndef KZ_RUNTIME_H
#define KZ_RUNTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KZ_RT_OK 0
#define KZ_RT_BAD_ARGUMENT (-1)    /* invalid argument or call sequence */
#define KZ_RT_CALLBACK_FAILED (-2) /* a callback returned nonzero; loop stopped */
#define KZ_RT_CUDA_ERROR (-3)      /* a driver call failed; message has the text */
#define KZ_RT_NO_DRIVER (-4)       /* libcuda.so.1 missing, a stub, or unusable */
#define KZ_RT_NO_DEVICE (-5)       /* driver present but no (such) CUDA device */
#define KZ_RT_NOT_INITIALIZED (-6) /* kz_rt_init has not succeeded */
#define KZ_RT_WRONG_THREAD (-7)    /* called from a thread other than init's */

/* Called once per timed call. `user` is passed through unchanged. Return 0, or
 * nonzero to abort the timing loop (kz_rt_time_calls then returns
 * KZ_RT_CALLBACK_FAILED). Must not call back into this runtime. */
typedef int (*kz_rt_callback)(void* user);

/* Checks for a usable driver and device without creating or retaining a context:
 * dlopen libcuda.so.1, cuInit(0), cuDeviceGetCount. On success stores the count
 * in *device_count (may be NULL). Fails with KZ_RT_NO_DRIVER or KZ_RT_NO_DEVICE;
 * the message then starts with "no CUDA driver" or "no CUDA device". */
int kz_rt_probe(int* device_count);

/* Loads the driver (as kz_rt_probe), retains the primary context of device
 * `device_ordinal` (an ordinal as seen under CUDA_VISIBLE_DEVICES, the same as
 * torch's), makes it current on the calling thread, allocates the L2-flush buffer
 * of `flush_bytes` (0 -> 256 MiB; rounded down to a multiple of 4) and two timing
 * events. Calling it again on the same thread with the same arguments is a no-op
 * returning 0; different arguments need kz_rt_shutdown first. */
int kz_rt_init(int device_ordinal, size_t flush_bytes);

/* Times n calls of cb(user). For each call i:
 *   cuCtxSynchronize; if flush_l2: cuMemsetD32Async(flush buffer, i, .., stream 0);
 *   [host clock starts] record start event on stream 0; cb(user);
 *   record end event on stream 0; cuCtxSynchronize [host clock stops];
 *   out_ms[i] = elapsed(start, end); out_host_ms[i] = host clock (CLOCK_MONOTONIC).
 * The flush is queued before the start event so the host-side launch overlaps it;
 * hence with flush_l2 the host time also covers whatever of the flush is still
 * running at the start (up to its whole duration). "Stream 0" is the legacy default
 * stream (CU_STREAM_LEGACY); work on other streams is only seen by the final sync,
 * i.e. by the host time, not by the events.
 * out_ms (n floats) is required; out_host_ms (n floats) may be NULL. On failure the
 * entries before the failing call are filled. A nonzero callback return stops the
 * loop (best-effort sync, result ignored) -> KZ_RT_CALLBACK_FAILED; a driver error
 * -> KZ_RT_CUDA_ERROR with the call index and cuGetErrorString text. n == 0 is a
 * no-op. */
int kz_rt_time_calls(kz_rt_callback cb, void* user, int n, int flush_l2,
                     float* out_ms, float* out_host_ms);

/* Describes the initialised device. Each output may be NULL. `name` receives a
 * NUL-terminated string truncated to name_len bytes. l2_bytes and sm_count come
 * from cuDeviceGetAttribute (L2_CACHE_SIZE, MULTIPROCESSOR_COUNT). */
int kz_rt_device_info(char* name, int name_len, int* cc_major, int* cc_minor,
                      int* l2_bytes, int* sm_count);

/* Size in bytes of the flush buffer in use, or 0 if not initialised. */
size_t kz_rt_flush_bytes(void);

/* Message of the last failure on this thread ("" if none). Never NULL. */
const char* kz_rt_last_error(void);

/* Frees the flush buffer and events and releases the primary context. Safe to
 * call when not initialised. kz_rt_init may be called again afterwards. */
void kz_rt_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* KZ_RUNTIME_H */
