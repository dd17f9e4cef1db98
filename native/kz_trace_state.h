// kz_trace_state.h - internal to libkz_runtime: what kz_trace.cc (windows, records,
// activity kinds) and kz_trace_marker.cc (the marker) share. Not
// part of the public ABI (see kz_trace.h).
#pragma once

#include <cupti_activity.h>

#include <cstdint>

namespace kz::tr {

// The 32-bit marker value, set once by kz_tr_init (random per process).
extern uint32_t g_marker_value;

// A window is open (between kz_tr_start and kz_tr_stop).
bool window_open();

// KZ_RT_OK after kz_tr_init succeeded; else KZ_RT_NOT_INITIALIZED with a message.
int need_ready(const char* fn);

// Sets "<what> failed: <CUPTI text>" and returns KZ_TR_CUPTI_ERROR.
int fail_cupti(CUptiResult r, const char* what);

// Allocates the marker buffers in the current context (once; see kz_trace_marker.cc).
int ensure_marker_buffer();

// Frees the marker buffers (kz_tr_shutdown).
void free_markers();

// 32 random bits from /dev/urandom (clock and pid if it cannot be read), never 0.
uint32_t random_marker();

}  // namespace kz::tr
