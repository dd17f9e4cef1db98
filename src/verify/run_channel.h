// Waiting for a run child while answering its requests (docs/worker-protocol.md): GPU gate
// frames through a GateHub (docs/throughput.md) and `judge` frames through RunJudges
// (docs/decisions.md, "Judges in the supervisor"). The child must be started with
// stream_channel.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "util/subprocess.h"
#include "verify/gate_hub.h"
#include "verify/run_judges.h"
#include "worker/call_set.h"

namespace kz::verify {

// Waits for call `id` of `set` (started with CallMode::stream), answering the frames that carry `token`: `gate` frames
// through `hub` (null: the child has no gate; its gate frames are ignored) and `judge`
// frames through `judges` (null: none expected; answered "invalid"). The result holds every
// channel byte, for worker::ParseWorkerReply, up to `max_channel_bytes`: a child that writes
// more is killed (`set` must be its own: KillAll) and its result has channel_truncated set
// and a line saying so at the end of stderr_tail. `cancelled` (may be empty) is polled: once
// true the child is killed. Time the gate holds the child is added to its wall limit and
// returned in *held_s (may be null).
inline constexpr size_t kMaxRunChannelBytes = size_t(64) << 20;  // as util::ProcessSpec's cap on one read
util::ProcessResult WaitRunChild(worker::CallSet& set, worker::CallSet::Id id, const std::string& token, GateHub* hub,
                                 RunJudges* judges, const std::function<bool()>& cancelled, double* held_s = nullptr,
                                 size_t max_channel_bytes = kMaxRunChannelBytes);

}  // namespace kz::verify
