#include "service/picker.h"

#include <algorithm>

namespace kz::service {

std::optional<size_t> PickNext(const std::vector<QueuedJob>& queue, const ServiceRecord& served) {
  if (queue.empty()) return std::nullopt;
  int64_t top = queue.front().priority;
  for (const auto& q : queue) top = std::max(top, q.priority);
  // Per client at the top priority: its oldest job.
  std::map<std::string, size_t> oldest;
  for (size_t i = 0; i < queue.size(); ++i) {
    if (queue[i].priority != top) continue;
    auto [it, fresh] = oldest.emplace(queue[i].client, i);
    if (!fresh && queue[i].seq < queue[it->second].seq) it->second = i;
  }
  auto last = [&](const std::string& client) -> std::optional<uint64_t> {
    auto it = served.find(client);
    return it == served.end() ? std::nullopt : std::optional<uint64_t>(it->second);
  };
  std::optional<size_t> best;
  for (const auto& [client, i] : oldest) {
    if (!best) {
      best = i;
      continue;
    }
    auto a = last(client), b = last(queue[*best].client);
    // nullopt (never served) sorts before any tick.
    bool earlier = a != b ? (!a || (b && *a < *b)) : queue[i].seq < queue[*best].seq;
    if (earlier) best = i;
  }
  return best;
}

}  // namespace kz::service
