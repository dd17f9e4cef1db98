#include "verify/gpu_floor.h"

#include <cmath>

namespace kz::verify {
using nlohmann::json;

namespace {
struct Side {
  double median_s;
  double calls;
};

std::optional<Side> ReadSide(const json& timing, const char* key) {
  const json* side = timing.contains(key) ? &timing[key] : nullptr;
  if (!side || !side->is_object()) return std::nullopt;
  const json& median = side->value("median_us", json());
  const json& calls = side->value("calls", json());
  if (!median.is_number() || !calls.is_number_integer()) return std::nullopt;
  double m = median.get<double>(), c = double(calls.get<int64_t>());
  if (!std::isfinite(m) || m < 0 || c < 0) return std::nullopt;
  return Side{m * 1e-6, c};
}
}  // namespace

std::optional<double> GpuFloorSeconds(const json& verdict) {
  if (!verdict.is_object()) return std::nullopt;
  const json stages = verdict.value("stages", json::object());
  if (!stages.is_object()) return std::nullopt;
  const json timing = stages.value("timing", json());
  if (!timing.is_object() || timing.value("status", json()) != "ok") return std::nullopt;
  auto ref = ReadSide(timing, "reference"), cand = ReadSide(timing, "candidate");
  if (!ref || !cand) return std::nullopt;
  const json correctness = stages.value("correctness", json());
  double trials = 0;
  if (correctness.is_object() && correctness.contains("trials") && correctness["trials"].is_array())
    trials = double(correctness["trials"].size());
  return trials * (ref->median_s + cand->median_s) + ref->calls * ref->median_s + cand->calls * cand->median_s;
}

}  // namespace kz::verify
