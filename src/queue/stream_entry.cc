#include "queue/stream_entry.h"

namespace kz::queue {

std::vector<StreamEntry> ParseEntryList(const RedisReply& list) {
  std::vector<StreamEntry> out;
  for (const auto& e : list.elements) {
    if (!e.IsArray() || e.elements.size() < 2) continue;
    StreamEntry s;
    s.id = e.elements[0].AsString();
    const RedisReply& kv = e.elements[1];
    s.deleted = !kv.IsArray();
    for (size_t i = 0; s.deleted == false && i + 1 < kv.elements.size(); i += 2)
      s.fields[kv.elements[i].AsString()] = kv.elements[i + 1].AsString();
    if (!s.id.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::vector<StreamEntry> ParseReadGroup(const RedisReply& reply) {
  if (!reply.IsArray() || reply.elements.empty()) return {};
  const RedisReply& stream = reply.elements[0];
  if (!stream.IsArray() || stream.elements.size() < 2) return {};
  return ParseEntryList(stream.elements[1]);
}

std::vector<StreamEntry> ParseAutoClaim(const RedisReply& reply, std::string* cursor) {
  if (!reply.IsArray() || reply.elements.size() < 2) return {};
  *cursor = reply.elements[0].AsString();
  auto out = ParseEntryList(reply.elements[1]);
  if (reply.elements.size() >= 3)  // Redis 7: entries deleted while pending, now dropped
    for (const auto& id : reply.elements[2].elements) out.push_back({id.AsString(), {}, true});
  return out;
}

}  // namespace kz::queue
