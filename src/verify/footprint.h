// A task's footprint before its sample gets a GPU slot (docs/memory.md, "Footprint"): the
// worker op `footprint` measures the task on the meta device (no tensor of it is
// allocated) in a CPU-only child; the verifier keeps one result per task file content
// (XXH3-128), records it in the verdict and refuses, before any run, a task whose need
// exceeds the device (or, in CPU mode, the run child's host-memory limit).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::verify {

// The verdict's `footprint` object from the op's result (null or malformed: method
// "unknown" with the reason): method, inputs/outputs/params bytes, need_bytes (the op's
// rule: 3 × (inputs + outputs) + 2 × params), complete, reason.
nlohmann::json FootprintSummary(const nlohmann::json* op_result, const std::string& failure);

// Why the task cannot be verified within `limit_bytes` (0 = no limit), or nullopt. Only a
// complete footprint refuses; `where` names the limit ("the GPU", "the host-memory limit").
std::optional<std::string> FootprintRefusal(const nlohmann::json& summary, uint64_t limit_bytes,
                                            const std::string& where);

// Footprints by task XXH3-128, shared by the threads that stage samples.
class FootprintCache {
 public:
  std::optional<nlohmann::json> Find(const std::string& task_xxh) const;
  void Put(const std::string& task_xxh, const nlohmann::json& summary);

 private:
  mutable std::mutex mu_;
  std::map<std::string, nlohmann::json> by_task_;  // guarded by mu_
};

// The process's cache (footprints depend on the task's content and torch's version only).
FootprintCache& ProcessFootprints();

}  // namespace kz::verify
