// trace.side_stream's join signal (docs/trace.md): which streams that ran GPU work in a
// window were joined to the caller's stream before the tracer's markers, judged from CUPTI's
// dependency records (event records, stream waits, host synchronisations, stream flags).
#pragma once
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "verify/trace_facts.h"

namespace kz::verify {

// Streams other than `caller` whose work (kernels, memsets, memcpys issued by an API call,
// i.e. correlation id != 0; not the records at `anchors`, the tracer's markers) was not
// joined to it before the first anchor: [{"stream", "name" (its last kernel, else its last
// record), "launches"}], streams in the order of their ids as text. Work of a CUDA graph that
// also ran on the caller's stream needs no join.
nlohmann::json UnjoinedStreams(const TraceWindow& window, uint64_t caller, std::optional<size_t> marker,
                               std::optional<size_t> copy);

}  // namespace kz::verify
