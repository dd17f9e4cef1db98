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
//
// Stream S is joined up to correlation `after` when a host synchronisation after `after`
// covers it, or a stream T that is itself joined up to the wait's correlation waited for an
// event recorded on S after `after` (chains of any length). Joined(S, a) is monotone: it holds
// exactly for a < Reach(S), the largest such bound, which the constructor computes for every
// stream at once (a worklist over the waits, each taken once: O(n log n) for n records, no
// recursion, whatever chains or cycles a child's records form).
class Joins {
 public:
  Joins(const TraceWindow& w, uint64_t caller, uint64_t limit) : caller_(caller), legacy_(w.legacy_stream) {
    std::vector<const TraceRecord*> events, waits, syncs;
    for (const auto& r : w.records) {
      if (r.kind == TraceKind::kEventRecord)
        events.push_back(&r);
      else if (r.kind == TraceKind::kStreamWait && r.correlation < limit)
        waits.push_back(&r);
      else if ((r.kind == TraceKind::kEventSync || r.kind == TraceKind::kStreamSync ||
                r.kind == TraceKind::kContextSync) &&
               r.correlation < limit)
        syncs.push_back(&r);
      else if (r.kind == TraceKind::kStream)
        flags_[r.stream] = r.flags & 0xFFFF;
    }
    IndexEvents(std::move(events));
    for (const TraceRecord* s : syncs) AddHostSync(*s);
    for (const TraceRecord* wait : waits) AddWait(*wait);
    Propagate();
  }

  // Whether what was enqueued on `stream` up to correlation `after` is finished before the
  // caller stream's next operation (the marker).
  bool Joined(uint64_t stream, uint64_t after) const { return Free(stream) || after < Reach(stream); }

 private:
  struct Wait {
    uint64_t correlation;  // of the wait, on the waiting stream
    uint64_t stream;       // where the event it waited for was recorded
    uint64_t recorded;     // that record's correlation
  };

  void IndexEvents(std::vector<const TraceRecord*> events) {
    std::stable_sort(events.begin(), events.end(),
                     [](const TraceRecord* a, const TraceRecord* b) { return a->correlation < b->correlation; });
    for (const TraceRecord* r : events) {
      if (HasSyncId(r->sync_id)) by_sync_id_[r->sync_id] = r;
      by_event_[r->event].push_back(r);
    }
  }

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

  // A host synchronisation at correlation c joins: every stream up to c (the context's), the
  // synchronised stream up to c, the event's stream up to min(c, the event record's).
  void AddHostSync(const TraceRecord& s) {
    if (s.kind == TraceKind::kContextSync) {
      context_ = std::max(context_, s.correlation);
    } else if (s.kind == TraceKind::kStreamSync) {
      Raise(s.stream, s.correlation);
    } else if (const TraceRecord* rec = Recorded(s)) {
      Raise(rec->stream, std::min(s.correlation, rec->correlation));
    }
  }

  void AddWait(const TraceRecord& wait) {
    const TraceRecord* rec = Recorded(wait);
    if (rec && rec->stream != wait.stream)
      waits_by_waiter_[wait.stream].push_back({wait.correlation, rec->stream, rec->correlation});
  }

  // Raises Reach of the recorded streams of every wait whose waiting stream is joined up to
  // it, until nothing changes. Each wait is taken once (waits sorted by correlation per
  // waiting stream; a stream's Reach only grows, so its next waits are taken when it does).
  void Propagate() {
    std::vector<uint64_t> todo;
    for (auto& [stream, list] : waits_by_waiter_) {
      std::sort(list.begin(), list.end(), [](const Wait& a, const Wait& b) { return a.correlation < b.correlation; });
      todo.push_back(stream);
    }
    std::map<uint64_t, size_t> taken;  // per waiting stream: how many of its waits
    while (!todo.empty()) {
      uint64_t stream = todo.back();
      todo.pop_back();
      const auto& list = waits_by_waiter_[stream];
      size_t& i = taken[stream];
      for (; i < list.size() && Joined(stream, list[i].correlation); ++i)
        if (Raise(list[i].stream, list[i].recorded) && waits_by_waiter_.count(list[i].stream))
          todo.push_back(list[i].stream);
    }
  }

  // Reach(stream) = max(Reach(stream), bound); whether it grew.
  bool Raise(uint64_t stream, uint64_t bound) {
    if (bound <= Reach(stream)) return false;
    reach_[stream] = bound;
    return true;
  }

  uint64_t Reach(uint64_t stream) const {
    auto it = reach_.find(stream);
    return std::max(context_, it == reach_.end() ? 0 : it->second);
  }

  // Needs no join: the caller's stream, and streams the legacy default stream orders with it.
  bool Free(uint64_t stream) const { return stream == caller_ || Implicit(stream); }

  // Ordered by the legacy default stream: a blocking stream and the legacy one.
  bool Implicit(uint64_t stream) const {
    auto blocking = [&](uint64_t s) {
      auto it = flags_.find(s);
      return it != flags_.end() && it->second == kBlockingStream;
    };
    return legacy_ && ((caller_ == *legacy_ && blocking(stream)) || (stream == *legacy_ && blocking(caller_)));
  }

  uint64_t caller_;
  std::optional<uint64_t> legacy_;
  std::map<uint64_t, uint64_t> flags_;
  std::map<uint64_t, const TraceRecord*> by_sync_id_;
  std::map<uint64_t, std::vector<const TraceRecord*>> by_event_;  // in API order
  uint64_t context_ = 0;                                          // every stream is joined below this
  std::map<uint64_t, uint64_t> reach_;                            // per stream, above context_
  std::map<uint64_t, std::vector<Wait>> waits_by_waiter_;
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
