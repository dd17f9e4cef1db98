// Short-term memory of a `kz optimize` run (docs/optimize.md, "Memory"): per lineage (the
// parent a child was made from), the change mechanisms that already failed there, so the
// loop refuses a child that repeats one before spending the GPU on it, and the prompt tells
// the model what not to try again. A mechanism is what a child adds to its parent: the
// sorted set of normalised tokens present in the child and absent from the parent (a new
// block size, a new intrinsic, an added kernel), hashed. Rebuilt from the run's candidate
// records on resume, so it needs no file of its own.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kz::optimize {

struct Change {
  std::string signature;  // XXH3-128 hex of the added tokens ("" when nothing was added)
  std::string summary;    // the first added tokens, space-separated, for prompts and logs
};
Change ChangeOf(const std::string& parent_source, const std::string& child_source);

class ShortTermMemory {
 public:
  // A child of `lineage` with this change failed (incorrect, compile error, slower, ...).
  void RecordFailure(const std::string& lineage, const Change& change, const std::string& outcome);
  // True when a child of `lineage` with the same non-empty signature already failed.
  bool Failed(const std::string& lineage, const Change& change) const;
  // What failed on `lineage`, oldest first, at most `max` (the most recent ones).
  std::vector<std::string> Failures(const std::string& lineage, size_t max) const;

 private:
  std::map<std::string, std::set<std::string>> signatures_;
  std::map<std::string, std::vector<std::string>> notes_;
};

}  // namespace kz::optimize
