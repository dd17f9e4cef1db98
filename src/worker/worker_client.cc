#include "worker/worker_client.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>

#include "util/frame.h"
#include "util/fs.h"
#include "worker/bytecode.h"

namespace kz::worker {
namespace fs = std::filesystem;

WorkerConfig LocateWorker(const std::string& exe) {
  WorkerConfig c;
  fs::path exe_dir = fs::path(util::AbsolutePath(exe)).parent_path();
  // build/bin/kz -> the repository is two levels up.
  std::vector<fs::path> roots = {exe_dir.parent_path().parent_path(), fs::path(KZ_SOURCE_DIR)};
  for (const auto& r : roots) {
    if (fs::exists(r / "python" / "kz_worker" / "__main__.py")) {
      c.package_dir = (r / "python").string();
      if (fs::exists(r / ".venv" / "bin" / "python")) c.python = (r / ".venv/bin/python").string();
      break;
    }
  }
  if (const char* p = std::getenv("KZ_PYTHON"); p && *p) c.python = p;
  if (c.python.empty()) c.python = "python3";
  if (const char* p = std::getenv("KZ_WORKER_PATH"); p && *p) c.package_dir = p;
  fs::path lib = exe_dir.parent_path() / "lib" / "libkz_runtime.so";
  if (fs::exists(lib)) c.runtime_lib = lib.string();
  if (const char* p = std::getenv("KZ_RUNTIME_LIB"); p && *p) c.runtime_lib = p;
  return c;
}

util::ProcessSpec MakeWorkerSpec(const WorkerConfig& config, const WorkerCall& call) {
  util::ProcessSpec spec;
  spec.argv = call.argv_prefix;
  spec.argv.insert(spec.argv.end(), {config.python, "-m", "kz_worker"});
  std::string pythonpath = config.package_dir;
  if (const char* p = std::getenv("PYTHONPATH"); p && *p) pythonpath += std::string(":") + p;
  spec.env = {{"PYTHONPATH", pythonpath}, {"PYTHONUNBUFFERED", "1"},
              {"PYTHONDONTWRITEBYTECODE", "1"}};
  if (!config.runtime_lib.empty()) spec.env.emplace_back("KZ_RUNTIME_LIB", config.runtime_lib);
  if (BytecodeReady(config)) spec.env.emplace_back("PYTHONPYCACHEPREFIX", config.bytecode_dir);
  nlohmann::json req = call.request;
  if (call.sandboxed && config.sandbox.active()) {
    std::shared_ptr<sandbox::Jail> jail = call.jail ? call.jail : NewJail(config, call);
    spec.jail = jail;
    StageInputs(*jail, call.inputs, &req);
    const std::string& s = jail->scratch();
    for (auto kv : std::vector<std::pair<std::string, std::string>>{
             {"TMPDIR", s + "/tmp"}, {"HOME", s + "/home"}, {"XDG_CACHE_HOME", s + "/home/.cache"},
             {"TORCH_EXTENSIONS_DIR", s + "/torch_extensions"}, {"TRITON_CACHE_DIR", s + "/triton"},
             {"USER", "kz-sandbox"}, {"LOGNAME", "kz-sandbox"}})
      spec.env.push_back(kv);
  }
  for (const auto& kv : call.env) spec.env.push_back(kv);
  spec.channel = true;
  req["protocol"] = kProtocolVersion;
  req["token"] = call.token;
  spec.channel_input = util::EncodeFrame(req.dump());
  spec.wall_limit_s = call.wall_limit_s;
  spec.max_rss_bytes = call.max_rss_bytes;
  spec.nice = config.nice;
  spec.idle_class = config.idle_class;
  return spec;
}

std::string NewSessionToken() {
  std::random_device rd;
  char out[33];
  std::snprintf(out, sizeof out, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return out;
}

nlohmann::json ParseFrameJson(const std::string& payload) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < payload.size(); ++i) {  // brackets outside strings: exact for valid JSON
    char c = payload[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxFrameDepth) return nlohmann::json(nlohmann::json::value_t::discarded);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return nlohmann::json::parse(payload, nullptr, false);
}

WorkerReply ParseWorkerReply(util::ProcessResult process, const std::string& token) {
  WorkerReply reply;
  util::FrameDecoder decoder;
  decoder.Feed(process.channel_data.data(), process.channel_data.size());
  std::string payload;
  while (decoder.Pop(&payload)) {
    auto j = ParseFrameJson(payload);
    if (j.is_discarded() || !j.is_object()) {
      reply.protocol_error = "worker sent a frame that is not a JSON object (of at most " +
                             std::to_string(kMaxFrameDepth) + " levels)";
      break;
    }
    if (!j.contains("token") || !j["token"].is_string() || j["token"].get<std::string>() != token) {
      reply.protocol_error = "dropped a frame without this call's session token (forged by candidate code?)";
      continue;
    }
    j.erase("token");
    if (j.value("type", "") == "event") reply.events.push_back(std::move(j));
    else if (j.value("type", "") == "result") reply.result = std::move(j);
  }
  if (decoder.failed()) reply.protocol_error = decoder.error();
  else if (decoder.pending_bytes() && !reply.result) reply.protocol_error = "truncated frame";
  process.channel_data.clear();
  reply.process = std::move(process);
  return reply;
}

WorkerReply RunWorker(const WorkerConfig& config, const WorkerCall& call) {
  return ParseWorkerReply(util::RunProcess(MakeWorkerSpec(config, call)), call.token);
}

namespace {
// One probe per interpreter and package, kept while torch's version.py is unchanged.
struct ProbeMemo {
  nlohmann::json env;
  std::string version_file;
  struct timespec mtime {};
  off_t size = 0;
};

bool SameFile(const ProbeMemo& m) {
  struct stat st {};
  if (m.version_file.empty() || ::stat(m.version_file.c_str(), &st) != 0) return false;
  return st.st_size == m.size && st.st_mtim.tv_sec == m.mtime.tv_sec && st.st_mtim.tv_nsec == m.mtime.tv_nsec;
}

std::optional<ProbeMemo> RunProbe(const WorkerConfig& config) {
  util::ProcessSpec spec;
  spec.argv = {config.python, "-m", "kz_worker.probe"};
  spec.env = {{"PYTHONPATH", config.package_dir}, {"PYTHONDONTWRITEBYTECODE", "1"}};
  spec.wall_limit_s = 30;
  auto r = util::RunProcess(spec);
  if (r.end != util::ProcessEnd::kExited || r.exit_code != 0) return std::nullopt;
  auto j = nlohmann::json::parse(r.stdout_tail, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.value("torch", nlohmann::json()).is_string())
    return std::nullopt;
  ProbeMemo m;
  m.version_file = j.value("version_file", "");
  j.erase("version_file");
  m.env = std::move(j);
  struct stat st {};
  if (!m.version_file.empty() && ::stat(m.version_file.c_str(), &st) == 0) {
    m.mtime = st.st_mtim;
    m.size = st.st_size;
  } else {
    m.version_file.clear();  // never reused
  }
  return m;
}

std::optional<ProbeMemo> Probe(const WorkerConfig& config) {
  static std::mutex mu;
  static std::map<std::string, ProbeMemo> memo;
  std::string key = config.python + '\n' + config.package_dir;
  {
    std::lock_guard lock(mu);
    if (auto it = memo.find(key); it != memo.end() && SameFile(it->second)) return it->second;
  }
  auto m = RunProbe(config);
  if (!m) return std::nullopt;
  std::lock_guard lock(mu);
  memo[key] = *m;
  return m;
}
}  // namespace

std::optional<nlohmann::json> ProbeEnvironment(const WorkerConfig& config) {
  if (auto m = Probe(config)) return m->env;
  return std::nullopt;
}

std::string TorchVersionFile(const WorkerConfig& config) {
  if (auto m = Probe(config)) return m->version_file;
  return "";
}

std::string DescribeEnd(const util::ProcessResult& p) {
  switch (p.end) {
    case util::ProcessEnd::kExited:
      if (p.exit_code == util::kSandboxExit && p.stderr_tail.find("kz-sandbox:") != std::string::npos) {
        std::string line = p.stderr_tail.substr(p.stderr_tail.find("kz-sandbox:"));
        return "could not enter its sandbox (" + line.substr(0, line.find('\n')) + ")";
      }
      return "exited with code " + std::to_string(p.exit_code);
    case util::ProcessEnd::kSignaled: return "killed by " + util::SignalName(p.signal);
    case util::ProcessEnd::kTimedOut:
      return "exceeded its wall-time limit after " + std::to_string(static_cast<int>(p.wall_s)) +
             " s; its process group was killed";
    case util::ProcessEnd::kMemoryExceeded:
      return "exceeded its host-memory limit (" + std::to_string(p.peak_rss_bytes >> 20) +
             " MiB resident); its process group was killed";
    case util::ProcessEnd::kSpawnFailed: return "could not be started: " + p.spawn_error;
  }
  return "ended";
}

}  // namespace kz::worker
