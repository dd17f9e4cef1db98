// The roofline of a timed verdict (docs/optimize.md, "Roofline"): what a candidate attains
// against ceilings MEASURED on this GPU (worker op `calibrate`: copy bandwidth, fp32 and bf16
// matmul rate), from the task's cost in its footprint (the bytes of its inputs, parameters and
// outputs, each moved at least once; the forward's matmul-class FLOPs). Pure functions, plus a
// small file cache of ceilings per device.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::verify {

struct Ceilings {
  double copy_gbps = 0;    // bytes read + written per second / 1e9
  double fp32_tflops = 0;  // n^3 matmul, TF32 off
  double bf16_tflops = 0;
  nlohmann::json device;  // the op's device facts (name, capability, torch, cuda)
};
// The op's `ceilings` object; nullopt (and *err) unless every rate is finite and positive.
std::optional<Ceilings> CeilingsFromJson(const nlohmann::json& j, std::string* err);

struct TaskCost {
  double bytes = 0;            // inputs + params + outputs (a lower bound of the traffic)
  double flops = 0;            // matmul-class FLOPs of one forward (elementwise work is 0)
  bool low_precision = false;  // an input or parameter in bf16/fp16: the bf16 ceiling applies
};
// From the verdict's `footprint` object (FootprintSummary); nullopt when its bytes are
// incomplete or it carries no FLOP count (a footprint of version 1).
std::optional<TaskCost> CostFromFootprint(const nlohmann::json& footprint);

struct Roofline {
  double gbps = 0, tflops = 0;  // attained: cost / candidate median
  double intensity = 0;         // FLOPs per byte
  double ridge = 0;             // peak FLOP/s over copy bandwidth, FLOPs per byte
  double peak_tflops = 0;       // the compute ceiling that applies (fp32 or bf16)
  std::string bound;            // "memory" (intensity below the ridge) or "compute"
  double fraction = 0;          // attained share of the bound's ceiling
};
// nullopt when median_us is not positive and finite.
std::optional<Roofline> Attain(const TaskCost& cost, const Ceilings& ceilings, double median_us);
nlohmann::json RooflineJson(const Roofline& r, const Ceilings& c);

// Sets stages.timing.roofline of a verdict whose timing stage is ok and whose footprint has a
// cost; returns whether it did. Leaves every other field alone.
bool AnnotateRoofline(nlohmann::json* verdict, const Ceilings& ceilings);

// The cache key of a device's ceilings: LabelledHasher over the op's device facts and the
// format version. "" when the facts name no device.
std::string CeilingsKey(const nlohmann::json& device);
// <dir>/v1/<key>.json; nullopt when absent or unreadable (then measure again).
std::optional<Ceilings> LoadCeilings(const std::string& dir, const std::string& key);
bool StoreCeilings(const std::string& dir, const std::string& key, const nlohmann::json& ceilings, std::string* err);

}  // namespace kz::verify
