// The production ProfileChild (verify/profiler.h): the candidate's run child again, under ncu.
#include <filesystem>
#include <utility>

#include "verify/profiler.h"
#include "verify/verifier.h"

namespace kz::verify {
using json = nlohmann::json;

ProfileChild VerifierProfileChild(worker::WorkerConfig worker, VerifyOptions options, std::vector<Gpu> gpus,
                                  Sample sample) {
  return [worker = std::move(worker), options = std::move(options), gpus = std::move(gpus), sample = std::move(sample)](
             const std::vector<std::string>& ncu_argv, const std::string& log_dir, double timeout_s) {
    VerifyOptions o = options;
    o.trials = 1;
    o.timing = false;
    o.integrity = false;
    o.footprint = false;
    o.timeout_s = timeout_s;
    o.run_wrapper.argv = ncu_argv;
    o.run_wrapper.writable = {log_dir};
    std::error_code ec;  // ncu's install tree (ncu is often a link into it): readable in the sandbox
    auto real = std::filesystem::canonical(ncu_argv.at(0), ec);
    if (!ec) o.run_wrapper.read_only = {real.parent_path().string()};
    Verifier verifier(worker, o, gpus);
    json v = verifier.VerifyAll({sample}).at(0);
    ProfiledRun run;
    run.ran = v.contains("child") && v["child"].is_object();
    if (run.ran) run.wall_s = v["child"].value("wall_s", 0.0);
    if (v.contains("output") && v["output"].is_object()) run.stderr_text = v["output"].value("stderr_tail", "");
    if (v.contains("error") && v["error"].is_object()) run.stderr_text += "\n" + v["error"].value("stderr_tail", "");
    if (!run.ran) run.error = v.value("status", "?") + ": " + v.value("reason", "");
    if (run.ran && v.value("status", "") == "timeout") run.end = v.value("reason", "timed out");
    return run;
  };
}

}  // namespace kz::verify
