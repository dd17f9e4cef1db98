#include "verify/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#include "util/fs.h"
#include "util/subprocess.h"

namespace kz::verify {
using json = nlohmann::json;

namespace {

bool Executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

// $KZ_NCU, else `ncu` on PATH, else CUDA's default install; "" when none is executable.
std::string FindNcu(const std::string& given) {
  if (!given.empty()) return Executable(given) ? given : "";
  if (const char* e = std::getenv("KZ_NCU"); e && *e) return Executable(e) ? e : "";
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty() && Executable(dir + "/ncu")) return dir + "/ncu";
  }
  return Executable("/usr/local/cuda/bin/ncu") ? "/usr/local/cuda/bin/ncu" : "";
}

// The line of `ncu --version` that names the version ("Version 2025.3.0.0 (build ...)").
std::string VersionLine(const std::string& out) {
  std::istringstream in(out);
  std::string line, found;
  while (std::getline(in, line))
    if (line.find("Version") != std::string::npos || line.find("version") != std::string::npos) found = line;
  return found;
}

}  // namespace

json ProfileResult::ToJson() const {
  json ks = json::array();
  for (const auto& k : kernels) ks.push_back(CountersToJson(k));
  return {{"available", available}, {"reason", reason}, {"version", version}, {"seconds", seconds}, {"kernels", ks}};
}

ProfileResult ProfileFromJson(const json& j) {
  ProfileResult r;
  if (!j.is_object()) return r;
  r.available = j.value("available", false);
  if (j.contains("reason") && j["reason"].is_string()) r.reason = j["reason"];
  if (j.contains("version") && j["version"].is_string()) r.version = j["version"];
  if (j.contains("seconds") && j["seconds"].is_number()) r.seconds = j["seconds"];
  if (j.contains("kernels") && j["kernels"].is_array())
    for (const auto& k : j["kernels"]) r.kernels.push_back(CountersFromJson(k));
  return r;
}

const Profiler::Availability& Profiler::Probe() {
  if (avail_) return *avail_;
  Availability a;
  a.ncu = FindNcu(o_.ncu);
  if (a.ncu.empty()) {
    a.reason = "ncu: not installed";
  } else {
    util::ProcessSpec spec;
    spec.argv = {a.ncu, "--version"};
    spec.wall_limit_s = 30;
    util::ProcessResult p = util::RunProcess(spec);
    a.version = VersionLine(p.stdout_tail + "\n" + p.stderr_tail);
    if (p.end != util::ProcessEnd::kExited || p.exit_code != 0)
      a.reason = NcuFailureReason(p.stderr_tail + "\n" + p.stdout_tail + "\n" + p.spawn_error);
    else if (!o_.have_gpu)
      a.reason = "ncu: no GPU";
  }
  a.ok = a.reason.empty();
  avail_ = a;
  return *avail_;
}

ProfileResult Profiler::Profile(const std::vector<std::string>& kernel_names, int launches, const ProfileChild& child,
                                double timeout_s) {
  ProfileResult r;
  const Availability& a = Probe();
  r.version = a.version;
  if (!a.ok) return r.reason = a.reason, r;
  if (kernel_names.empty()) return r.reason = "ncu: skipped (no candidate kernel in the launch trace)", r;
  std::string err, parent = o_.scratch_dir.empty() ? std::filesystem::temp_directory_path().string() : o_.scratch_dir;
  std::string dir = util::MakeTempDir(parent, "ncu-", &err);
  if (dir.empty()) return r.reason = "ncu: failed (" + err + ")", r;
  std::string log = dir + "/ncu.csv";
  int count = std::clamp(launches, 1, std::max(1, o_.max_launches));
  ProfiledRun run = child(NcuArgs(a.ncu, kernel_names, count, log), dir, timeout_s > 0 ? timeout_s : o_.timeout_s);
  r.seconds = run.wall_s;
  std::string text;
  util::ReadFile(log, &text, &err);  // absent: ncu never started; the child's stderr says why
  util::RemoveAll(dir);
  if (!run.ran) return r.reason = "ncu: failed (" + run.error + ")", r;
  NcuParse parsed = ParseNcuOutput(text, run.stderr_text);
  if (parsed.outcome == NcuOutcome::kFailed && text.empty() && !run.end.empty())
    parsed.reason = "ncu: failed (" + run.end + ")";
  if (parsed.outcome == NcuOutcome::kNoPermission) avail_ = Availability{false, parsed.reason, a.ncu, a.version};
  r.reason = parsed.reason;
  r.kernels = std::move(parsed.kernels);
  r.available = parsed.outcome == NcuOutcome::kCounters;
  return r;
}

std::vector<std::string> CandidateKernelNames(const json& verdict, int* launches) {
  std::vector<std::string> names;
  *launches = 0;
  const json* calls = nullptr;
  if (verdict.contains("stages") && verdict["stages"].is_object() && verdict["stages"].contains("trace") &&
      verdict["stages"]["trace"].is_object() && verdict["stages"]["trace"].contains("calls"))
    calls = &verdict["stages"]["trace"]["calls"];
  if (!calls || !calls->is_array() || calls->empty() || !(*calls)[0].is_object()) return names;
  const json& first = (*calls)[0];
  static const std::regex kIdent("[A-Za-z_][A-Za-z0-9_]*");  // also keeps ncu's regex literal
  if (first.contains("kernels") && first["kernels"].is_array())
    for (const auto& k : first["kernels"]) {
      if (!k.is_object() || k.value("class", "") != "candidate" || !k.contains("name") || !k["name"].is_string())
        continue;
      std::string fn = KernelShortName(k["name"].get<std::string>());
      if (std::regex_match(fn, kIdent) && std::find(names.begin(), names.end(), fn) == names.end()) names.push_back(fn);
      if (k.contains("count") && k["count"].is_number_integer()) *launches += std::max(0, k["count"].get<int>());
    }
  return names;
}

}  // namespace kz::verify
