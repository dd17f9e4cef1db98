#include "verify/footprint.h"

#include <algorithm>
#include <cstdio>

namespace kz::verify {
using nlohmann::json;

namespace {
uint64_t GroupBytes(const json& fp, const char* group) {
  if (!fp.contains(group) || !fp[group].is_object()) return 0;
  const json& b = fp[group].value("bytes", json());
  return b.is_number_unsigned() ? b.get<uint64_t>() : 0;
}

std::string Gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(1ull << 30));
  return buf;
}
}  // namespace

json FootprintSummary(const json* r, const std::string& failure) {
  if (!r || !r->is_object() || !r->value("ok", false) || !r->contains("footprint") || !(*r)["footprint"].is_object()) {
    std::string why = failure;
    if (r && r->is_object() && r->contains("error") && (*r)["error"].is_object())
      why = (*r)["error"].value("message", why);
    return {{"method", "unknown"}, {"complete", false}, {"reason", why.empty() ? "footprint op failed" : why}};
  }
  const json& fp = (*r)["footprint"];
  const json budget = r->value("budget", json::object());
  json out = {{"method", fp.value("method", "unknown")},
              {"inputs_bytes", GroupBytes(fp, "inputs")},
              {"outputs_bytes", GroupBytes(fp, "outputs")},
              {"params_bytes", GroupBytes(fp, "params")},
              {"need_bytes", budget.value("need_bytes", json(nullptr))},
              {"complete", budget.value("complete", false)},
              {"seconds", fp.value("seconds", json(nullptr))}};
  if (fp.contains("reason") && fp["reason"].is_string()) out["reason"] = fp["reason"];
  if (fp.contains("flops") && fp["flops"].is_number()) out["flops"] = fp["flops"];
  json dtypes = json::array();
  for (const char* g : {"inputs", "params"})
    if (fp.contains(g) && fp[g].is_object() && fp[g].contains("dtypes") && fp[g]["dtypes"].is_object())
      for (const auto& [name, bytes] : fp[g]["dtypes"].items())
        if (std::find(dtypes.begin(), dtypes.end(), name) == dtypes.end()) dtypes.push_back(name);
  out["dtypes"] = dtypes;
  return out;
}

std::optional<std::string> FootprintRefusal(const json& s, uint64_t limit_bytes, const std::string& where) {
  if (limit_bytes == 0 || !s.value("complete", false) || !s.value("need_bytes", json()).is_number_unsigned())
    return std::nullopt;
  uint64_t need = s["need_bytes"].get<uint64_t>();
  if (need <= limit_bytes) return std::nullopt;
  return "task: needs " + Gib(need) + " to verify (3 × (inputs " + Gib(s.value("inputs_bytes", 0ull)) + " + outputs " +
         Gib(s.value("outputs_bytes", 0ull)) + ") + 2 × params " + Gib(s.value("params_bytes", 0ull)) +
         ", from its meta-device footprint); " + where + " has " + Gib(limit_bytes);
}

std::optional<json> FootprintCache::Find(const std::string& task_xxh) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_task_.find(task_xxh);
  if (it == by_task_.end()) return std::nullopt;
  return it->second;
}

void FootprintCache::Put(const std::string& task_xxh, const json& summary) {
  std::lock_guard<std::mutex> lock(mu_);
  by_task_[task_xxh] = summary;
}

FootprintCache& ProcessFootprints() {
  static FootprintCache cache;
  return cache;
}

}  // namespace kz::verify
