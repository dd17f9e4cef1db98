// The facts a `task_check` child reports (docs/worker-protocol.md, op `task_check`, facts
// version 2): the task's footprint, the device, the up-front budget, the reference's runs,
// and where the child stopped and why. The child runs the task's code, so its facts are
// untrusted: ParseTaskFacts checks every type, sign and the consistency of the stop with the
// budget, and says what is malformed instead of letting it reach the rules (task_rules.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::verify {

inline constexpr int kTaskFactsVersion = 2;

struct SizeGroup {
  uint64_t count = 0, bytes = 0;
};

// Where the child stopped before the end: the task did not load, the up-front rule refused it
// (the one rule the child applies itself, before allocating), or the reference's build or runs
// failed (reason and error are the child's; out_of_memory: the failure was an allocation's).
struct TaskStop {
  enum class At { kLoad, kFits, kReference } at = At::kLoad;
  std::string reason;
  nlohmann::json error;  // null or the protocol's error object
  bool out_of_memory = false;
};

struct FootprintFacts {
  std::string method;                 // meta | fake | unknown
  std::string reason;                 // why unknown ("" otherwise)
  SizeGroup inputs, params, outputs;  // unknown: only params may be known (else bytes 0)
};

struct BudgetFacts {
  uint64_t need_bytes = 0;                  // the up-front rule's need (a lower bound if incomplete)
  std::optional<uint64_t> available_bytes;  // none: unknown
  bool complete = false;
  std::optional<bool> fits;  // none: cannot tell
};

struct DeviceFacts {
  std::string label;             // name, else kind, else "None" (as Python printed it)
  std::string available_source;  // "None" when null
};

struct ReferenceFacts {
  double seconds = 0, first_call_s = 0;
  uint64_t peak_bytes = 0;
  std::string inputs_generated, inputs_fallback_reason;  // reason "" when none
  SizeGroup inputs, outputs;
  bool inputs_reproducible = true, inputs_vary = true, input_sensitive = true, finite = true;
  std::string repeat, reseeded;  // equal | close | differ; reseeded "" when not run
  std::optional<double> max_abs_diff, sensitivity_max_abs_diff;
  std::string weak_task;  // "" when not weak
};

// The parsed facts, and the child's objects as sent (passed through to the result).
struct TaskFacts {
  std::optional<TaskStop> stop;
  std::optional<FootprintFacts> footprint;  // present unless stopped at load
  std::optional<BudgetFacts> budget;        // present unless stopped at load
  DeviceFacts device;
  std::optional<ReferenceFacts> reference;  // present when the child ran to its end
  nlohmann::json raw_footprint, raw_budget, raw_device, raw_reference;
  double seconds = 0;  // the check's wall time in the child
};

// Parses the `task_facts` object of a result frame; nullopt with *error when malformed.
// `finished` false: the facts of a `footprint` event (no stop, no reference yet).
std::optional<TaskFacts> ParseTaskFacts(const nlohmann::json& facts, bool finished, std::string* error);

}  // namespace kz::verify
