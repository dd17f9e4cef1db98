// OptimizeConfig as run.json (kz.optimize.run/1).
#include "optimize/optimize_loop.h"

namespace kz::optimize {
using json = nlohmann::json;

json OptimizeConfig::ToJson() const {
  json b = json::object();
  for (size_t i = 0; i < kResources; ++i) b[ResourceName(Resource(i))] = budget.v[i];
  return {{"format", "kz.optimize.run/1"}, {"task", task_path}, {"backend", backend}, {"model", model},
          {"initial", initial}, {"experience", experience}, {"endpoint", endpoint}, {"cpu", cpu},
          {"timing_ci", timing_ci}, {"sandbox", sandbox}, {"islands", islands}, {"capacity", capacity}, {"iterations", iterations},
          {"migrate_every", migrate_every}, {"seed", seed}, {"temperature", temperature},
          {"max_tokens", max_tokens}, {"request_deadline_s", request_deadline_s},
          {"verify_timeout_s", verify_timeout_s}, {"compile_timeout_s", compile_timeout_s},
          {"min_verify_s", min_verify_s}, {"near_duplicate", near_duplicate}, {"ncu", ncu}, {"ncu_timeout_s", ncu_timeout_s},
          {"budget", b}};
}

std::optional<OptimizeConfig> OptimizeConfig::FromJson(const json& j, std::string* err) {
  try {
    if (j.value("format", "") != "kz.optimize.run/1") throw std::runtime_error("not a kz.optimize.run/1 object");
    OptimizeConfig c;
    c.task_path = j.at("task").get<std::string>();
    c.backend = j.at("backend").get<std::string>();
    c.model = j.at("model").get<std::string>();
    c.initial = j.at("initial").get<std::string>();
    c.experience = j.value("experience", "");
    c.endpoint = j.value("endpoint", "");
    c.cpu = j.value("cpu", false);
    c.timing_ci = j.value("timing_ci", 0.02);
    c.sandbox = j.value("sandbox", "best-effort");
    c.islands = j.at("islands").get<int>();
    c.capacity = j.at("capacity").get<int>();
    c.iterations = j.at("iterations").get<int>();
    c.migrate_every = j.at("migrate_every").get<int>();
    c.seed = j.at("seed").get<uint64_t>();
    c.temperature = j.at("temperature").get<double>();
    c.max_tokens = j.at("max_tokens").get<int>();
    c.request_deadline_s = j.at("request_deadline_s").get<double>();
    c.verify_timeout_s = j.at("verify_timeout_s").get<double>();
    c.compile_timeout_s = j.at("compile_timeout_s").get<double>();
    c.min_verify_s = j.at("min_verify_s").get<double>();
    c.near_duplicate = j.at("near_duplicate").get<double>();
    c.ncu = j.value("ncu", false);  // absent in runs made before issue 21's counters
    c.ncu_timeout_s = j.value("ncu_timeout_s", 120.0);
    if (c.islands < 1 || c.islands > 64 || c.capacity < 1 || c.iterations < 1 || (c.backend != "cuda" && c.backend != "triton"))
      throw std::runtime_error("islands, capacity, iterations or backend out of range");
    for (size_t i = 0; i < kResources; ++i) c.budget.v[i] = j.at("budget").at(ResourceName(Resource(i))).get<double>();
    return c;
  } catch (const std::exception& e) {
    *err = std::string("run.json: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace kz::optimize
