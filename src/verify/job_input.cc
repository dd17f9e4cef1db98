#include "verify/job_input.h"

#include <optional>

#include "util/fs.h"

namespace kz::verify {
using nlohmann::json;

namespace {
bool NonNegative(const json& v, const std::string& k, std::optional<double>* out, std::string* err) {
  if (!v.is_number() || v.get<double>() < 0) return *err = "option '" + k + "' must be a number >= 0", false;
  *out = v.get<double>();
  return true;
}
}  // namespace

bool ApplyJobOptions(const json& options, verify::VerifyOptions* o, std::string* err) {
  for (const auto& [k, v] : options.items()) {
    if (k == "trials") {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1000)
        return *err = "option 'trials' must be an integer in 1..1000", false;
      o->trials = v.get<int>();
    } else if (k == "seed") {
      if (!v.is_number_unsigned()) return *err = "option 'seed' must be an integer >= 0", false;
      o->seed = v.get<uint64_t>();
    } else if (k == "timing") {
      if (!v.is_boolean()) return *err = "option 'timing' must be a boolean", false;
      o->timing = v.get<bool>();
    } else if (k == "atol" || k == "rtol" || k == "rel_l2") {
      auto* slot = k == "atol" ? &o->atol : k == "rtol" ? &o->rtol : &o->rel_l2;
      if (!NonNegative(v, k, slot, err)) return false;
    } else if (k == "policy") {
      if (v != "strict" && v != "kernelbench") return *err = "option 'policy' must be strict or kernelbench", false;
      o->policy = v.get<std::string>();
    } else if (k == "timing_ci") {
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 0.5)
        return *err = "option 'timing_ci' must be a number in 0..0.5 (0: the fixed timing rule)", false;
      o->timing_ci_rel = v.get<double>();
    } else if (k == "self_check") {  // a property of the sample: PrepareJob reads it
      if (!v.is_boolean()) return *err = "option 'self_check' must be a boolean", false;
    } else if (k == "min_candidate_share") {
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1)
        return *err = "option 'min_candidate_share' must be a number in 0..1", false;
      o->min_candidate_share = v.get<double>();
    } else {
      return *err = "unknown option '" + k + "'", false;
    }
  }
  return true;
}

bool PrepareJob(const JobSources& job, const VerifyOptions& base, const std::string& dir, JobInput* out,
                std::string* err) {
  if (!job.backend.empty() && job.backend != "cuda" && job.backend != "triton")
    return *err = "unknown backend \"" + job.backend + "\" (cuda or triton)", false;
  json options = json::parse(job.options_json, nullptr, false);
  if (options.is_discarded() || !options.is_object()) return *err = "the job's options are not a JSON object", false;
  out->options = base;
  if (!ApplyJobOptions(options, &out->options, err)) return false;
  if (!util::MakeDirs(dir, err) || !util::WriteFileAtomic(dir + "/task.py", job.task, err) ||
      !util::WriteFileAtomic(dir + "/candidate.py", job.candidate, err))
    return false;
  out->samples = {{dir + "/task.py", dir + "/candidate.py", job.backend, std::nullopt, job.id}};
  if (options.value("self_check", false)) {  // the task against itself: the candidate must be it
    if (job.candidate != job.task)
      return *err = "option 'self_check' verifies the task against itself: the candidate must be the task's source",
             false;
    out->samples[0].self_check = true;
  }
  return true;
}

}  // namespace kz::verify
