#include "verify/calibrate.h"

#include <cstdio>

namespace kz::verify {
using json = nlohmann::json;

std::optional<CeilingsFound> EnsureCeilings(const worker::WorkerConfig& config, const std::string& cache_dir,
                                            const json& device, int gpu, std::string* err) {
  std::string key = CeilingsKey(device);
  if (key.empty() || device.value("kind", "") != "cuda") {
    *err = "no GPU named in the verdict's device facts: no roofline";
    return std::nullopt;
  }
  std::string dir = cache_dir + "/ceilings";
  if (auto c = LoadCeilings(dir, key)) return CeilingsFound{*c, true, 0};
  worker::WorkerCall call;
  call.request = {{"op", "calibrate"}, {"device", "cuda"}};
  call.env = {{"CUDA_VISIBLE_DEVICES", std::to_string(gpu)}};
  call.wall_limit_s = 120;
  call.devices = worker::GpuDevices(gpu);
  worker::WorkerReply reply = worker::RunWorker(config, call);
  if (!reply.result || !reply.result->value("ok", false) || !(*reply.result)["ceilings"].is_object()) {
    *err = "the calibration failed: " +
           (reply.result ? reply.result->value("error", json::object()).dump() : worker::DescribeEnd(reply.process));
    return std::nullopt;
  }
  json measured = (*reply.result)["ceilings"];
  auto c = CeilingsFromJson(measured, err);
  if (!c) return std::nullopt;
  // The op's own device facts key the entry only when they match the verdict's GPU model.
  if (CeilingsKey(measured.value("device", json::object())) != key) {
    *err = "the calibration ran on another device than the verdict's (" + measured.value("device", json()).dump() + ")";
    return std::nullopt;
  }
  std::string store_err;
  if (!StoreCeilings(dir, key, measured, &store_err)) *err = "ceilings not cached: " + store_err;  // still usable
  return CeilingsFound{*c, false, measured.value("seconds", 0.0)};
}

void RooflineAnnotator::Annotate(json* verdict) {
  if (!tried_ && verdict->is_object() && verdict->contains("device") && (*verdict)["device"].is_object() &&
      (*verdict)["device"].value("kind", "") == "cuda") {
    tried_ = true;
    std::string err;
    auto found = EnsureCeilings(config_, cache_dir_, (*verdict)["device"], gpu_, &err);
    if (found) {
      char line[256];
      std::snprintf(line, sizeof line, "roofline ceilings (%s): copy %.0f GB/s, fp32 %.1f TFLOP/s, bf16 %.1f TFLOP/s",
                    found->cached ? "cached" : "measured now", found->ceilings.copy_gbps, found->ceilings.fp32_tflops,
                    found->ceilings.bf16_tflops);
      ceilings_ = found->ceilings;
      if (say_) say_(line);
    }
    if (!err.empty() && say_) say_("roofline: " + err);
  }
  if (ceilings_) AnnotateRoofline(verdict, *ceilings_);
}

}  // namespace kz::verify
