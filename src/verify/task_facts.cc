#include "verify/task_facts.h"

#include <cmath>

namespace kz::verify {
using nlohmann::json;

namespace {
// Reads fields of one object; the first malformed one is remembered, later reads give
// defaults (so a parse reads straight through and checks ok() once).
class Reader {
 public:
  Reader(const json& o, std::string where, std::string* error) : o_(o), where_(std::move(where)), error_(error) {}

  bool ok() const { return error_->empty(); }
  const json& Get(const char* key) const {
    static const json kNull;
    auto it = o_.is_object() ? o_.find(key) : o_.end();
    return o_.is_object() && it != o_.end() ? *it : kNull;
  }
  uint64_t Count(const char* key) {
    const json& j = Get(key);
    if (j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0)) return j.get<uint64_t>();
    return Fail(key, "a non-negative integer"), 0;
  }
  std::optional<uint64_t> OptionalCount(const char* key) {
    if (Get(key).is_null()) return std::nullopt;
    return Count(key);
  }
  double Seconds(const char* key) {
    const json& j = Get(key);
    if (j.is_number() && std::isfinite(j.get<double>()) && j.get<double>() >= 0) return j.get<double>();
    return Fail(key, "a non-negative number"), 0;
  }
  std::optional<double> OptionalNumber(const char* key) {
    const json& j = Get(key);
    if (j.is_null()) return std::nullopt;
    if (j.is_number()) return j.get<double>();
    return Fail(key, "a number or null"), std::nullopt;
  }
  bool Bool(const char* key) {
    const json& j = Get(key);
    if (j.is_boolean()) return j.get<bool>();
    return Fail(key, "true or false"), false;
  }
  std::optional<bool> OptionalBool(const char* key) {
    if (Get(key).is_null()) return std::nullopt;
    return Bool(key);
  }
  std::string String(const char* key) {
    const json& j = Get(key);
    if (j.is_string()) return j.get<std::string>();
    return Fail(key, "a string"), "";
  }
  // A string, or `none` for null.
  std::string OptionalString(const char* key, const std::string& none = "") {
    return Get(key).is_null() ? none : String(key);
  }
  // One of `allowed` (null allowed when `none` is given).
  std::string OneOf(const char* key, std::initializer_list<const char*> allowed, const char* none = nullptr) {
    const json& j = Get(key);
    if (none && j.is_null()) return none;
    for (const char* a : allowed)
      if (j == a) return a;
    std::string list;
    for (const char* a : allowed) list += std::string(list.empty() ? "" : " | ") + a;
    return Fail(key, "one of " + list + (none ? " or null" : "")), "";
  }
  SizeGroup Group(const char* key) {
    Reader r(Get(key), where_ + "." + key, error_);
    if (!Get(key).is_object()) return Fail(key, "an object"), SizeGroup{};
    return {r.Count("count"), r.Count("bytes")};
  }
  void Fail(const std::string& key, const std::string& expected) {
    if (ok()) *error_ = where_ + (key.empty() ? "" : "." + key) + ": expected " + expected;
  }

 private:
  const json& o_;
  std::string where_;
  std::string* error_;
};

std::optional<TaskStop> Stop(const json& j, std::string* error) {
  if (j.is_null()) return std::nullopt;
  Reader r(j, "stop", error);
  if (!j.is_object()) return r.Fail("", "an object or null"), std::nullopt;
  TaskStop s;
  std::string at = r.OneOf("at", {"load", "fits", "reference"});
  s.at = at == "load" ? TaskStop::At::kLoad : at == "fits" ? TaskStop::At::kFits : TaskStop::At::kReference;
  if (s.at == TaskStop::At::kFits) return s;  // the rules write its detail
  s.reason = r.String("reason");
  s.error = r.Get("error");
  if (!s.error.is_null() && !s.error.is_object()) r.Fail("error", "an object or null");
  if (s.at == TaskStop::At::kReference) s.out_of_memory = r.Bool("out_of_memory");
  return s;
}

FootprintFacts Footprint(const json& j, std::string* error) {
  Reader r(j, "footprint", error);
  FootprintFacts f;
  f.method = r.OneOf("method", {"meta", "fake", "unknown"});
  if (!r.ok()) return f;
  if (f.method == "unknown") {
    f.reason = r.String("reason");
    if (r.Get("params").is_object()) f.params.bytes = Reader(r.Get("params"), "footprint.params", error).Count("bytes");
    return f;
  }
  f.inputs = r.Group("inputs"), f.params = r.Group("params"), f.outputs = r.Group("outputs");
  return f;
}

BudgetFacts Budget(const json& j, std::string* error) {
  Reader r(j, "budget", error);
  return {r.Count("need_bytes"), r.OptionalCount("available_bytes"), r.Bool("complete"), r.OptionalBool("fits")};
}

DeviceFacts Device(const json& j, std::string* error) {
  Reader r(j, "device", error);
  if (!j.is_object()) return r.Fail("", "an object"), DeviceFacts{};
  std::string name = r.OptionalString("name");
  return {name.empty() ? r.OptionalString("kind", "None") : name, r.OptionalString("available_source", "None")};
}

ReferenceFacts Reference(const json& j, std::string* error) {
  Reader r(j, "reference", error);
  ReferenceFacts f;
  if (!j.is_object()) return r.Fail("", "an object"), f;
  f.seconds = r.Seconds("seconds"), f.first_call_s = r.Seconds("first_call_s");
  f.peak_bytes = r.Count("peak_bytes");
  f.inputs_generated = r.String("inputs_generated");
  f.inputs_fallback_reason = r.OptionalString("inputs_fallback_reason");
  f.inputs = r.Group("inputs"), f.outputs = r.Group("outputs");
  f.inputs_reproducible = r.Bool("inputs_reproducible");
  f.repeat = r.OneOf("repeat", {"equal", "close", "differ"});
  f.max_abs_diff = r.OptionalNumber("max_abs_diff");
  f.reseeded = r.OneOf("reseeded", {"equal", "close", "differ"}, "");
  f.inputs_vary = r.Bool("inputs_vary"), f.input_sensitive = r.Bool("input_sensitive");
  f.sensitivity_max_abs_diff = r.OptionalNumber("sensitivity_max_abs_diff");
  f.finite = r.Bool("finite");
  f.weak_task = r.OptionalString("weak_task");
  if (f.repeat == "close" && !f.max_abs_diff) r.Fail("max_abs_diff", "a number when repeat is close");
  return f;
}

// The stop must agree with the budget: the child stops at `fits` exactly when the up-front
// rule says the task does not fit; a finished child without a stop has run the reference.
bool Consistent(const TaskFacts& f, bool finished, std::string* error) {
  bool at_fits = f.stop && f.stop->at == TaskStop::At::kFits;
  if (f.budget && at_fits != (f.budget->fits == false))
    *error = at_fits ? "stop: at fits, but budget.fits is not false" : "budget.fits is false, but the child went on";
  else if (finished && !f.stop && !f.reference)
    *error = "reference: expected an object when the child did not stop";
  else if (f.reference && f.footprint) {  // the measured rule's sum must fit 64 bits
    uint64_t io = 0, need = 0;
    if (__builtin_add_overflow(f.reference->inputs.bytes, f.reference->outputs.bytes, &io) ||
        __builtin_add_overflow(io, io, &io) || __builtin_add_overflow(io, f.reference->peak_bytes, &need) ||
        __builtin_add_overflow(need, f.footprint->params.bytes, &need))
      *error = "reference: sizes too large (the measured need overflows 64 bits)";
  }
  return error->empty();
}
}  // namespace

std::optional<TaskFacts> ParseTaskFacts(const json& facts, bool finished, std::string* error) {
  error->clear();
  if (!facts.is_object()) return *error = "task facts: expected an object", std::nullopt;
  Reader r(facts, "task facts", error);
  if (finished && r.Get("version") != kTaskFactsVersion)
    return *error = "task facts: unknown version " + r.Get("version").dump(), std::nullopt;
  TaskFacts f;
  if (finished) f.stop = Stop(r.Get("stop"), error), f.seconds = r.Seconds("seconds");
  if (f.stop && f.stop->at == TaskStop::At::kLoad) return error->empty() ? std::optional(f) : std::nullopt;
  f.raw_footprint = r.Get("footprint"), f.raw_budget = r.Get("budget"), f.raw_device = r.Get("device");
  if (error->empty()) f.footprint = Footprint(f.raw_footprint, error);
  if (error->empty()) f.budget = Budget(f.raw_budget, error);
  if (error->empty()) f.device = Device(f.raw_device, error);
  f.raw_reference = r.Get("reference");
  if (error->empty() && finished && !f.stop && !f.raw_reference.is_null())
    f.reference = Reference(f.raw_reference, error);
  if (!error->empty() || !Consistent(f, finished, error)) return std::nullopt;
  return f;
}

}  // namespace kz::verify
