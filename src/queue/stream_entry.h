// Internal to src/queue: stream entries out of XREADGROUP / XAUTOCLAIM replies.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "queue/redis_client.h"

namespace kz::queue {

struct StreamEntry {
  std::string id;
  std::map<std::string, std::string> fields;
  bool deleted = false;  // pending, but the entry itself was XDELed (fields nil)

  std::string Field(const std::string& name) const {
    auto it = fields.find(name);
    return it == fields.end() ? std::string() : it->second;
  }
  bool Has(const std::string& name) const { return fields.count(name) > 0; }
};

// A list of [id, [field, value, ...] | nil] pairs.
std::vector<StreamEntry> ParseEntryList(const RedisReply& list);
// XREADGROUP's reply for one stream: nil (timed out) or [[stream, entries]].
std::vector<StreamEntry> ParseReadGroup(const RedisReply& reply);
// XAUTOCLAIM's reply: [cursor, entries, deleted ids (Redis >= 7)]. Sets *cursor.
std::vector<StreamEntry> ParseAutoClaim(const RedisReply& reply, std::string* cursor);

}  // namespace kz::queue
