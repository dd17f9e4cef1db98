#include "verify/roofline.h"

#include <cmath>

#include "util/fs.h"
#include "util/hash.h"
#include "util/json_fields.h"

namespace kz::verify {
using json = nlohmann::json;

namespace {
constexpr const char* kCacheVersion = "v1";

bool Positive(const json& j, const char* key, double* out) {
  if (!j.contains(key) || !j[key].is_number()) return false;
  *out = j[key].get<double>();
  return std::isfinite(*out) && *out > 0;
}

bool NonNegative(const json& j, const char* key, double* out) {
  if (!j.contains(key) || !j[key].is_number()) return false;
  *out = j[key].get<double>();
  return std::isfinite(*out) && *out >= 0;
}

std::string Fact(const json& device, const char* key) {
  return device.is_object() && device.contains(key) && device[key].is_string() ? device[key].get<std::string>() : "";
}
}  // namespace

std::optional<Ceilings> CeilingsFromJson(const json& j, std::string* err) {
  Ceilings c;
  if (!j.is_object() || !Positive(j, "copy_gbps", &c.copy_gbps) || !Positive(j, "fp32_tflops", &c.fp32_tflops) ||
      !Positive(j, "bf16_tflops", &c.bf16_tflops)) {
    *err = "ceilings: copy_gbps, fp32_tflops and bf16_tflops must be positive finite numbers";
    return std::nullopt;
  }
  c.device = j.value("device", json::object());
  return c;
}

std::optional<TaskCost> CostFromFootprint(const json& fp) {
  TaskCost t;
  double in = 0, out = 0, params = 0;
  if (!fp.is_object() || !fp.value("complete", false) || !NonNegative(fp, "inputs_bytes", &in) ||
      !NonNegative(fp, "outputs_bytes", &out) || !NonNegative(fp, "params_bytes", &params) ||
      !NonNegative(fp, "flops", &t.flops))
    return std::nullopt;
  t.bytes = in + out + params;
  if (t.bytes <= 0) return std::nullopt;
  const json& dtypes = util::JsonAt(fp, {"dtypes"});
  if (dtypes.is_array())
    for (const auto& d : dtypes)
      if (d == "bfloat16" || d == "float16") t.low_precision = true;
  return t;
}

std::optional<Roofline> Attain(const TaskCost& cost, const Ceilings& c, double median_us) {
  if (!std::isfinite(median_us) || median_us <= 0 || cost.bytes <= 0) return std::nullopt;
  Roofline r;
  double seconds = median_us * 1e-6;
  r.gbps = cost.bytes / seconds / 1e9;
  r.tflops = cost.flops / seconds / 1e12;
  r.intensity = cost.flops / cost.bytes;
  r.peak_tflops = cost.low_precision ? c.bf16_tflops : c.fp32_tflops;
  r.ridge = r.peak_tflops * 1e12 / (c.copy_gbps * 1e9);
  r.bound = r.intensity < r.ridge ? "memory" : "compute";
  r.fraction = r.bound == "memory" ? r.gbps / c.copy_gbps : r.tflops / r.peak_tflops;
  return r;
}

json RooflineJson(const Roofline& r, const Ceilings& c) {
  return {{"bound", r.bound},
          {"attained_gbps", r.gbps},
          {"attained_tflops", r.tflops},
          {"fraction_of_ceiling", r.fraction},
          {"intensity_flop_per_byte", r.intensity},
          {"ridge_flop_per_byte", r.ridge},
          {"ceiling_gbps", c.copy_gbps},
          {"ceiling_tflops", r.peak_tflops},
          {"ceilings", "measured on this GPU (op calibrate); FLOPs: matmul-class only"}};
}

bool AnnotateRoofline(json* verdict, const Ceilings& ceilings) {
  if (!verdict->is_object() || !verdict->contains("stages") || !(*verdict)["stages"].is_object()) return false;
  json& stages = (*verdict)["stages"];
  if (!stages.contains("timing") || !stages["timing"].is_object()) return false;
  json& timing = stages["timing"];
  if (timing.value("status", "") != "ok") return false;
  auto cost = CostFromFootprint(verdict->value("footprint", json()));
  if (!cost) return false;
  const json& cand = util::JsonAt(timing, {"candidate"});
  auto r = Attain(*cost, ceilings, util::JsonNumber(cand, "median_us"));
  if (!r) return false;
  timing["roofline"] = RooflineJson(*r, ceilings);
  return true;
}

std::string CeilingsKey(const json& device) {
  std::string name = Fact(device, "name");
  if (name.empty()) return "";
  util::LabelledHasher h;
  h.Add("format", kCacheVersion)
      .Add("name", name)
      .Add("capability", Fact(device, "capability"))
      .Add("torch", Fact(device, "torch"))
      .Add("cuda", Fact(device, "cuda"));
  return h.HexDigest();
}

std::optional<Ceilings> LoadCeilings(const std::string& dir, const std::string& key) {
  std::string text, err;
  if (key.empty() || !util::ReadFile(dir + "/" + kCacheVersion + "/" + key + ".json", &text, &err)) return std::nullopt;
  json j = json::parse(text, nullptr, false);
  return CeilingsFromJson(j, &err);
}

bool StoreCeilings(const std::string& dir, const std::string& key, const json& ceilings, std::string* err) {
  std::string sub = dir + "/" + kCacheVersion;
  return util::MakeDirs(sub, err) && util::WriteFileAtomic(sub + "/" + key + ".json", ceilings.dump(2) + "\n", err);
}

}  // namespace kz::verify
