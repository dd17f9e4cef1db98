#include <map>
#include <mutex>

#include "sandbox/sandbox.h"
#include "sandbox/seccomp.h"

namespace kz::sandbox {

bool ParseMode(const std::string& text, Mode* mode) {
  if (text == "require") *mode = Mode::kRequire;
  else if (text == "best-effort") *mode = Mode::kBestEffort;
  else if (text == "off") *mode = Mode::kOff;
  else return false;
  return true;
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kRequire: return "require";
    case Mode::kBestEffort: return "best-effort";
    case Mode::kOff: return "off";
  }
  return "?";
}

std::vector<std::string> Missing(const Features& f) {
  std::vector<std::string> out;
  if (!f.namespaces) out.push_back("user+mount namespaces");
  if (!f.pid) out.push_back("pid namespace");
  if (!f.net) out.push_back("network namespace");
  if (!f.seccomp) out.push_back("seccomp");
  return out;
}

namespace {
// Starts `true` in a jail with `f`; "" when it ran, else what the child or spawn said.
std::string Try(const std::string& stage_base, const Features& f) {
  Policy p;
  p.stage_base = stage_base;
  p.features = f;
  auto jail = Jail::Create(p);
  util::ProcessSpec spec;
  spec.argv = {"true"};
  spec.wall_limit_s = 20;
  spec.jail = jail;
  util::ProcessResult r = util::RunProcess(spec);
  if (r.end == util::ProcessEnd::kExited && r.exit_code == 0) return "";
  if (r.end == util::ProcessEnd::kSpawnFailed) return r.spawn_error;
  std::string why = r.stderr_tail.empty() ? "exit " + std::to_string(r.exit_code) : r.stderr_tail;
  while (!why.empty() && why.back() == '\n') why.pop_back();
  return why;
}

HostSupport ProbeNow(const std::string& stage_base) {
  HostSupport h;
  if ((h.detail = Try(stage_base, Features{})).empty()) return h;
  Features base{true, false, false, false};
  std::string e = Try(stage_base, base);
  if (!e.empty()) {
    h.features = {false, false, false, false};
    h.features.seccomp = Try(stage_base, h.features = Features{false, false, false, true}).empty();
    return h;
  }
  h.features = base;
  h.features.pid = Try(stage_base, Features{true, true, false, false}).empty();
  h.features.net = Try(stage_base, Features{true, false, true, false}).empty();
  h.features.seccomp = Try(stage_base, Features{true, false, false, true}).empty();
  return h;
}
}  // namespace

HostSupport Probe(const std::string& stage_base) {
  static std::mutex mu;
  static std::map<std::string, HostSupport> memo;
  std::lock_guard lock(mu);
  auto it = memo.find(stage_base);
  if (it == memo.end()) it = memo.emplace(stage_base, ProbeNow(stage_base)).first;
  return it->second;
}

bool Check(Mode mode, const std::string& stage_base, Features* features, std::string* err) {
  if (mode == Mode::kOff) {
    *features = {false, false, false, false};
    return true;
  }
  HostSupport h = Probe(stage_base);
  *features = h.features;
  if (mode == Mode::kBestEffort || h.complete()) return true;
  std::string missing;
  for (const auto& m : Missing(h.features)) missing += (missing.empty() ? "" : ", ") + m;
  *err = "--sandbox=require: this host lacks " + missing + " (" + h.detail +
         "); see docs/sandbox.md (unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1, "
         "user.max_user_namespaces > 0), or run with --sandbox=best-effort";
  return false;
}

nlohmann::json Describe(Mode mode, const Features& f, const Limits& limits) {
  nlohmann::json ns = nlohmann::json::array();
  if (f.namespaces) ns = {"user", "mount", "ipc", "uts"};
  if (f.namespaces && f.pid) ns.push_back("pid");
  if (f.namespaces && f.net) ns.push_back("net");
  bool all = f == Features{};
  bool none = !f.namespaces && !f.seccomp && mode == Mode::kOff;
  nlohmann::json j = {{"mode", ModeName(mode)},
                      {"status", mode == Mode::kOff ? "off" : all ? "applied" : "partial"},
                      {"namespaces", ns},
                      {"seccomp", f.seccomp},
                      {"missing", mode == Mode::kOff ? nlohmann::json::array() : nlohmann::json(Missing(f))}};
  if (!none)
    j["limits"] = {{"processes", limits.nproc}, {"open_files", limits.nofile},
                   {"file_size_bytes", limits.fsize_bytes}, {"scratch_bytes", limits.scratch_bytes},
                   {"shm_bytes", limits.shm_bytes}};
  return j;
}

}  // namespace kz::sandbox
