// A bytecode cache for worker children, for interpreters whose packages ship without it.
//
// The H200 host's torch environment is read-only and installed without .pyc files, so every
// fresh child compiled torch's Python sources on `import torch` (4.5–6.9 s there, against
// ~1–2 s with bytecode). When the interpreter's torch has no bytecode of its own, kz keeps one
// under CACHE_DIR/pycache: one trusted process (`python -m kz_worker.warm_bytecode`: imports
// torch, triton and kz_worker, runs no task or candidate code) fills it in the background,
// once per interpreter and torch; children started after it finished get
// PYTHONPYCACHEPREFIX pointing at it and still never write bytecode themselves
// (PYTHONDONTWRITEBYTECODE stays 1). Python checks each .pyc against its source's mtime and
// size, so a stale entry is recompiled in memory, never trusted. KZ_BYTECODE=off disables it.
#pragma once
#include <string>

#include "worker/worker_client.h"

namespace kz::worker {

// Where the cache of `config` lives and whether it is wanted: sets config->bytecode_dir and
// config->bytecode_marker when torch has no bytecode beside its sources, and starts the
// warm process (detached, at most one per marker at a time) when the marker is missing.
// Cheap after the first call per interpreter (memoised). Does nothing when KZ_BYTECODE=off.
void PrepareBytecode(WorkerConfig* config, const std::string& cache_dir);

// True when children of `config` should get PYTHONPYCACHEPREFIX now (the warm finished).
bool BytecodeReady(const WorkerConfig& config);

}  // namespace kz::worker
