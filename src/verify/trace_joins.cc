#include "verify/trace_joins.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kz::verify {
using nlohmann::json;

namespace {
constexpr uint64_t kLast = uint64_t(1) << 62;  // a correlation id after every real one
constexpr uint64_t kBlockingStream = 1;        // CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT

bool HasSyncId(uint64_t id) { return id != 0 && id != 0xFFFFFFFFull && id != ~uint64_t(0); }

// Which streams the caller's stream waited for before the marker (correlation `limit`), from
// one window's dependency records. A wait is matched to the event record it waited for by
// cudaEventSyncId when set, else by CUDA's rule: the event's last record issued before it.
class Joins {
 public:
  Joins(const TraceWindow& w, uint64_t caller, uint64_t limit) : caller_(caller), legacy_(w.legacy_stream) {
    for (const auto& r : w.records) {
      if (r.kind == TraceKind::kEventRecord)
        events_.push_back(&r);
      else if (r.kind == TraceKind::kStreamWait && r.correlation < limit)
        waits_.push_back(&r);
      else if ((r.kind == TraceKind::kEventSync || r.kind == TraceKind::kStreamSync ||
                r.kind == TraceKind::kContextSync) &&
               r.correlation < limit)
        syncs_.push_back(&r);
      else if (r.kind == TraceKind::kStream)
        flags_[r.stream] = r.flags & 0xFFFF;
    }
    std::stable_sort(events_.begin(), events_.end(),
                     [](const TraceRecord* a, const TraceRecord* b) { return a->correlation < b->correlation; });
    for (const TraceRecord* r : events_) {
      if (HasSyncId(r->sync_id)) by_sync_id_[r->sync_id] = r;
      by_event_[r->event].push_back(r);
    }
  }

  // Whether what was enqueued on `stream` up to correlation `after` is finished before the
  // caller stream's next operation (the marker).
  bool Joined(uint64_t stream, uint64_t after) {
    if (stream == caller_ || Implicit(stream)) return true;
    auto key = std::make_pair(stream, after);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    memo_[key] = false;  // guard; correlations grow along a chain anyway
    bool joined = HostSynced(stream, after) || Waited(stream, after);
    memo_[key] = joined;
    return joined;
  }

 private:
  // The event record a wait / event synchronise waited for, or null.
  const TraceRecord* Recorded(const TraceRecord& op) const {
    if (HasSyncId(op.sync_id))
      if (auto it = by_sync_id_.find(op.sync_id); it != by_sync_id_.end()) return it->second;
    auto it = by_event_.find(op.event);
    if (it == by_event_.end()) return nullptr;
    const auto& recs = it->second;
    auto k = std::lower_bound(recs.begin(), recs.end(), op.correlation,
                              [](const TraceRecord* r, uint64_t c) { return r->correlation < c; });
    return k == recs.begin() ? nullptr : *(k - 1);
  }

  // Ordered by the legacy default stream: a blocking stream and the legacy one.
  bool Implicit(uint64_t stream) const {
    auto blocking = [&](uint64_t s) {
      auto it = flags_.find(s);
      return it != flags_.end() && it->second == kBlockingStream;
    };
    return legacy_ && ((caller_ == *legacy_ && blocking(stream)) || (stream == *legacy_ && blocking(caller_)));
  }

  bool HostSynced(uint64_t stream, uint64_t after) const {
    for (const TraceRecord* s : syncs_) {
      if (s->correlation <= after) continue;
      if (s->kind == TraceKind::kContextSync || (s->kind == TraceKind::kStreamSync && s->stream == stream)) return true;
      const TraceRecord* rec = s->kind == TraceKind::kEventSync ? Recorded(*s) : nullptr;
      if (rec && rec->stream == stream && rec->correlation > after) return true;
    }
    return false;
  }

  bool Waited(uint64_t stream, uint64_t after) {
    for (const TraceRecord* w : waits_) {
      const TraceRecord* rec = Recorded(*w);
      if (!rec || rec->stream != stream || rec->correlation <= after) continue;
      if (w->stream != stream && Joined(w->stream, w->correlation)) return true;
    }
    return false;
  }

  uint64_t caller_;
  std::optional<uint64_t> legacy_;
  std::vector<const TraceRecord*> events_, waits_, syncs_;
  std::map<uint64_t, uint64_t> flags_;
  std::map<uint64_t, const TraceRecord*> by_sync_id_;
  std::map<uint64_t, std::vector<const TraceRecord*>> by_event_;  // in API order
  std::map<std::pair<uint64_t, uint64_t>, bool> memo_;
};

// The record with the largest correlation id among `idx` (the first of equals).
size_t Latest(const TraceWindow& w, const std::vector<size_t>& idx) {
  size_t best = idx.front();
  for (size_t i : idx)
    if (w.records[i].correlation > w.records[best].correlation) best = i;
  return best;
}
}  // namespace

json UnjoinedStreams(const TraceWindow& w, uint64_t caller, std::optional<size_t> marker, std::optional<size_t> copy) {
  uint64_t limit = kLast;
  for (auto a : {marker, copy})
    if (a) limit = std::min(limit, w.records[*a].correlation);
  std::vector<size_t> work;
  std::set<uint64_t> caller_graphs;
  for (size_t i = 0; i < w.records.size(); ++i) {
    const TraceRecord& r = w.records[i];
    if (!IsWorkKind(r.kind) || r.correlation == 0 || i == marker || i == copy) continue;  // 0: driver-internal
    work.push_back(i);
    if (r.graph && r.stream == caller) caller_graphs.insert(r.graph);
  }
  std::map<std::string, std::pair<uint64_t, std::vector<size_t>>> by_stream;  // ordered as Python's str(stream)
  for (size_t i : work) {
    const TraceRecord& r = w.records[i];
    if (r.stream == caller || (r.graph && caller_graphs.count(r.graph))) continue;
    auto& entry = by_stream[std::to_string(r.stream)];
    entry.first = r.stream;
    entry.second.push_back(i);
  }
  Joins joins(w, caller, limit);
  json out = json::array();
  for (const auto& [key, entry] : by_stream) {
    const auto& [stream, recs] = entry;
    size_t last = Latest(w, recs);
    if (joins.Joined(stream, w.records[last].correlation)) continue;
    std::vector<size_t> kernels;
    for (size_t i : recs)
      if (w.records[i].kind == TraceKind::kKernel) kernels.push_back(i);
    size_t named = kernels.empty() ? last : Latest(w, kernels);
    out.push_back(
        {{"stream", stream}, {"name", Utf8Prefix(w.NameOf(w.records[named]), 300)}, {"launches", recs.size()}});
  }
  return out;
}

}  // namespace kz::verify
